//! Diagnostics: errors with byte spans, line/column lookup, and rendering (plain text and `miette`).
//!
//! Every error the front end reports is a [`Diagnostic`]: a message, a primary span, optional secondary
//! labels and help, and a stable code (see [`codes`]). [`parse`](crate::parse) returns them all in a
//! [`ParseErrors`]. For the command line, [`SourceError`] pairs them with the file name and text, renders
//! them rustc-style without terminal features ([`SourceError::render_plain`]), and implements
//! [`miette::Diagnostic`] for graphical output.

use reconverge_ir::Span;
use std::fmt::{self, Write};

/// Stable diagnostic codes.
pub mod codes {
    /// A character that starts no token.
    pub const BAD_CHAR: &str = "E0001";
    /// An unterminated string literal or block comment.
    pub const UNTERMINATED: &str = "E0002";
    /// The source is too large to index with 32-bit spans.
    pub const TOO_LARGE: &str = "E0003";
    /// The input ended in the middle of a construct.
    pub const UNEXPECTED_EOF: &str = "E0100";
    /// A token that does not fit the grammar at this point.
    pub const UNEXPECTED_TOKEN: &str = "E0101";
    /// A directive (`.foo`) the front end does not know at this point.
    pub const UNKNOWN_DIRECTIVE: &str = "E0102";
    /// A numeric literal out of range or malformed.
    pub const BAD_NUMBER: &str = "E0103";
    /// A declaration that is malformed (missing type, bad vector width, too many registers...).
    pub const BAD_DECL: &str = "E0104";
    /// Scopes or lists nested too deeply.
    pub const TOO_DEEP: &str = "E0105";
    /// A known opcode with the wrong number of operands.
    pub const OPERAND_COUNT: &str = "E0200";
    /// A branch target that names no label.
    pub const UNDEFINED_LABEL: &str = "E0201";
    /// A register that was not declared (or not in scope).
    pub const UNDECLARED_REGISTER: &str = "E0202";
    /// A name that is no variable, parameter or other symbol.
    pub const UNDEFINED_SYMBOL: &str = "E0203";
    /// A call to a function that was not declared before.
    pub const UNDEFINED_FUNCTION: &str = "E0204";
    /// A label defined twice in one function.
    pub const DUPLICATE_LABEL: &str = "E0205";
    /// A register declared twice in one scope.
    pub const DUPLICATE_REGISTER: &str = "E0206";
    /// A variable, parameter or function declared twice.
    pub const DUPLICATE_SYMBOL: &str = "E0207";
    /// A guard `@%r` whose register is not a `.pred`.
    pub const BAD_GUARD: &str = "E0208";
    /// A special register with a wrong or missing `.x/.y/.z` component.
    pub const SPECIAL_COMPONENT: &str = "E0209";
    /// An operand of the wrong kind at this position (e.g. a function as an address base).
    pub const BAD_OPERAND: &str = "E0210";
}

/// One error, with the source span it is about.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    /// What is wrong, one line.
    pub message: String,
    /// Where (byte range of the source).
    pub span: Span,
    /// Secondary locations with a note each (e.g. "first defined here").
    pub labels: Vec<(Span, String)>,
    /// How to fix it, if there is a useful hint.
    pub help: Option<String>,
    /// A stable code such as `E0200` (see [`codes`]).
    pub code: &'static str,
}

impl Diagnostic {
    /// A diagnostic with no labels and no help.
    pub fn new(code: &'static str, message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic { message: message.into(), span, labels: Vec::new(), help: None, code }
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.labels.push((span, label.into()));
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

fn source_span(span: Span) -> miette::SourceSpan {
    miette::SourceSpan::new((span.start as usize).into(), span.len())
}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let primary = miette::LabeledSpan::new_primary_with_span(None, source_span(self.span));
        let rest =
            self.labels.iter().map(|(s, l)| miette::LabeledSpan::new_with_span(Some(l.clone()), source_span(*s)));
        Some(Box::new(std::iter::once(primary).chain(rest)))
    }
}

/// All errors of a failed [`parse`](crate::parse); never empty.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseErrors {
    /// The errors, in source order of discovery (at most [`MAX_KEPT`]).
    pub diagnostics: Vec<Diagnostic>,
    /// Errors found beyond the first [`MAX_KEPT`], counted but not kept.
    pub omitted: usize,
}

/// Errors kept per parse: a file full of errors (a binary file, a corrupt one) must not hold or print an
/// unbounded amount of diagnostics.
pub const MAX_KEPT: usize = 100;

/// Errors rendered by [`SourceError::render_plain`]; the rest are summarized in one line.
pub const MAX_RENDERED: usize = 20;

/// Source lines longer than this (in characters) are cut to a window around the error in excerpts.
pub const MAX_EXCERPT: usize = 160;

impl ParseErrors {
    /// Errors from a list (beyond [`MAX_KEPT`] only counted).
    pub fn new(mut diagnostics: Vec<Diagnostic>) -> ParseErrors {
        let omitted = diagnostics.len().saturating_sub(MAX_KEPT);
        diagnostics.truncate(MAX_KEPT);
        ParseErrors { diagnostics, omitted }
    }

    /// All errors found, kept or not.
    pub fn total(&self) -> usize {
        self.diagnostics.len() + self.omitted
    }
}

/// A bounded collection of diagnostics: the first [`MAX_KEPT`] are kept, the rest counted.
#[derive(Clone, Debug, Default)]
pub struct Diagnostics {
    kept: Vec<Diagnostic>,
    omitted: usize,
}

impl Diagnostics {
    /// Records a diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        if self.kept.len() < MAX_KEPT {
            self.kept.push(d);
        } else {
            self.omitted += 1;
        }
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The errors.
    pub fn into_errors(self) -> ParseErrors {
        ParseErrors { diagnostics: self.kept, omitted: self.omitted }
    }
}

impl fmt::Display for ParseErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.diagnostics.first() {
            None => f.write_str("invalid PTX"),
            Some(d) if self.total() == 1 => write!(f, "{d}"),
            Some(d) => {
                let more = self.total() - 1;
                write!(f, "{d} (and {more} more error{})", if more == 1 { "" } else { "s" })
            }
        }
    }
}

impl std::error::Error for ParseErrors {}

/// Maps byte offsets to 1-based line and column numbers.
#[derive(Clone, Debug)]
pub struct LineIndex {
    src: String,
    /// Byte offset of the start of every line.
    starts: Vec<u32>,
}

impl LineIndex {
    /// Indexes the lines of `src`.
    pub fn new(src: &str) -> Self {
        let mut starts = vec![0u32];
        starts.extend(src.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| (i + 1) as u32));
        LineIndex { src: src.to_owned(), starts }
    }

    /// The 1-based line and 1-based column (counted in characters) of `byte_offset`. Offsets past the end
    /// map to the end; offsets inside a multi-byte character count as that character.
    pub fn line_col(&self, byte_offset: u32) -> (u32, u32) {
        let mut off = (byte_offset as usize).min(self.src.len());
        while !self.src.is_char_boundary(off) {
            off -= 1;
        }
        let line = self.starts.partition_point(|&s| s as usize <= off).max(1) - 1;
        let start = self.starts.get(line).map_or(0, |&s| s as usize);
        let col = self.src.get(start..off).map_or(0, |t| t.chars().count());
        (line as u32 + 1, col as u32 + 1)
    }

    /// The text of 0-based line `line` without its line terminator.
    fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.starts.get(line) else { return "" };
        let end = self.starts.get(line + 1).map_or(self.src.len(), |&e| e as usize);
        self.src.get(start as usize..end).unwrap_or("").trim_end_matches(['\n', '\r'])
    }

    fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// A report of all errors of one source file, for the command line.
///
/// Implements [`miette::Diagnostic`] with every error as a related diagnostic (labels point into the
/// named source), and renders to plain text with [`SourceError::render_plain`].
#[derive(Debug)]
pub struct SourceError {
    file_name: String,
    source: miette::NamedSource<String>,
    index: LineIndex,
    errors: ParseErrors,
}

impl SourceError {
    /// Pairs `errors` with the file they came from.
    pub fn new(file_name: impl Into<String>, src: impl Into<String>, errors: ParseErrors) -> Self {
        let file_name = file_name.into();
        let src = src.into();
        let index = LineIndex::new(&src);
        SourceError { source: miette::NamedSource::new(file_name.clone(), src), file_name, index, errors }
    }

    /// The errors.
    pub fn errors(&self) -> &ParseErrors {
        &self.errors
    }

    /// Renders every diagnostic as plain text, rustc style:
    ///
    /// ```text
    /// error[E0200]: `add` expects 3 operands, found 2
    ///   --> k.ptx:12:2
    ///    |
    /// 12 |     add.s32 %r1, %r2;
    ///    |     ^^^^^^^^^^^^^^^^^
    ///    = help: ...
    /// ```
    ///
    /// Tabs in excerpts are expanded to four spaces so that carets line up; columns count characters.
    pub fn render_plain(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.errors.diagnostics.iter().take(MAX_RENDERED).enumerate() {
            if i > 0 {
                out.push('\n');
            }
            self.render_one(&mut out, d);
        }
        let rest = self.errors.total().saturating_sub(MAX_RENDERED);
        if rest > 0 {
            let _ = writeln!(
                out,
                "\n... and {rest} more error{} (the first {MAX_RENDERED} are shown)",
                if rest == 1 { "" } else { "s" }
            );
        }
        out
    }

    fn render_one(&self, out: &mut String, d: &Diagnostic) {
        let (line, col) = self.index.line_col(d.span.start);
        let mut lines_shown: Vec<u32> = vec![line];
        for (s, _) in &d.labels {
            lines_shown.push(self.index.line_col(s.start).0);
        }
        let (end_line, _) = self.index.line_col(d.span.end.max(d.span.start));
        let last_line = end_line.min(line + 2);
        let max_line = lines_shown.iter().copied().chain([last_line]).max().unwrap_or(line);
        let gutter = max_line.to_string().len();
        let pad = " ".repeat(gutter);
        let _ = writeln!(out, "error[{}]: {}", d.code, d.message);
        let _ = writeln!(out, "{pad}--> {}:{}:{}", self.file_name, line, col);
        let _ = writeln!(out, "{pad} |");
        for l in line..=last_line {
            self.excerpt_line(out, gutter, l, d.span, '^', None);
        }
        for (s, label) in &d.labels {
            let (l, c) = self.index.line_col(s.start);
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{pad}::: {}:{}:{}", self.file_name, l, c);
            self.excerpt_line(out, gutter, l, *s, '-', Some(label));
        }
        if let Some(h) = &d.help {
            let _ = writeln!(out, "{pad} = help: {h}");
        }
    }

    /// Writes 1-based line `l` and a marker line under the part of `span` that lies on it.
    fn excerpt_line(&self, out: &mut String, gutter: usize, l: u32, span: Span, mark: char, label: Option<&str>) {
        let idx = l.saturating_sub(1) as usize;
        if idx >= self.index.line_count() {
            return;
        }
        let full = self.index.line_text(idx);
        let full_start = self.index.starts.get(idx).copied().unwrap_or(0);
        let (text, line_start, cut_left, cut_right) = excerpt_window(full, full_start, span.start);
        let mut shown = String::new();
        let mut lead = 0usize; // display columns before the marked part
        let mut width = 0usize; // display columns of the marked part
        for (i, ch) in text.char_indices() {
            let at = line_start + i as u32;
            let w = if ch == '\t' { 4 } else { 1 };
            if ch == '\t' {
                shown.push_str("    ");
            } else {
                shown.push(ch);
            }
            if at < span.start {
                lead += w;
            } else if at < span.end {
                width += w;
            }
        }
        let line_end = line_start + text.len() as u32;
        if span.start > line_end {
            lead = shown.chars().count();
        }
        // Empty spans, and spans that only cover the line break, get one marker.
        let width = width.max(1);
        if cut_left {
            shown.insert_str(0, "...");
            lead += 3;
        }
        if cut_right {
            shown.push_str("...");
        }
        let width = width.min(MAX_EXCERPT);
        let _ = writeln!(out, "{l:>gutter$} | {shown}");
        let mut marker = format!("{:gutter$} | {}{}", "", " ".repeat(lead), mark.to_string().repeat(width));
        if let Some(label) = label {
            marker.push(' ');
            marker.push_str(label);
        }
        let _ = writeln!(out, "{}", marker.trim_end());
    }
}

/// The part of a source line shown in an excerpt: the whole line when it is short, else a window of
/// [`MAX_EXCERPT`] characters around `at` (a byte offset in the file). Returns the text, its byte offset in
/// the file, and whether it was cut on the left and on the right.
fn excerpt_window(line: &str, line_start: u32, at: u32) -> (&str, u32, bool, bool) {
    if line.chars().count() <= MAX_EXCERPT {
        return (line, line_start, false, false);
    }
    let rel = (at.saturating_sub(line_start) as usize).min(line.len());
    let boundary = |mut i: usize| {
        while i < line.len() && !line.is_char_boundary(i) {
            i += 1;
        }
        i.min(line.len())
    };
    let start = boundary(rel.saturating_sub(MAX_EXCERPT / 3));
    let end = boundary(start + MAX_EXCERPT);
    (&line[start..end], line_start + start as u32, start > 0, end < line.len())
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.errors.total();
        write!(f, "{}: {n} error{} in PTX", self.file_name, if n == 1 { "" } else { "s" })
    }
}

impl std::error::Error for SourceError {}

impl miette::Diagnostic for SourceError {
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        Some(Box::new(self.errors.diagnostics.iter().map(|d| d as &dyn miette::Diagnostic)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col() {
        let idx = LineIndex::new("ab\ncdé\n\nx");
        assert_eq!(idx.line_col(0), (1, 1));
        assert_eq!(idx.line_col(2), (1, 3));
        assert_eq!(idx.line_col(3), (2, 1));
        assert_eq!(idx.line_col(5), (2, 3));
        assert_eq!(idx.line_col(7), (2, 4)); // the newline after the two-byte `é`
        assert_eq!(idx.line_col(8), (3, 1));
        assert_eq!(idx.line_col(9), (4, 1));
        assert_eq!(idx.line_col(10), (4, 2));
        assert_eq!(idx.line_col(1000), (4, 2));
    }

    #[test]
    fn render() {
        let src = ".version 8.0\n\tadd.s32 %r1, %r2;\n";
        let d = Diagnostic::new("E0200", "`add` expects 3 operands, found 2", Span::new(14, 31))
            .with_help("write `add.s32 d, a, b;`");
        let e = SourceError::new("k.ptx", src, ParseErrors::new(vec![d]));
        assert_eq!(
            e.render_plain(),
            "error[E0200]: `add` expects 3 operands, found 2\n --> k.ptx:2:2\n  |\n2 |     add.s32 %r1, %r2;\n  |     ^^^^^^^^^^^^^^^^^\n  = help: write `add.s32 d, a, b;`\n"
        );
    }

    #[test]
    fn render_eof_and_labels() {
        let src = "a:\nb:\na:";
        let d = Diagnostic::new("E0205", "duplicate label `a`", Span::new(6, 7))
            .with_label(Span::new(0, 1), "first defined here");
        let eof = Diagnostic::new("E0100", "unexpected end of input", Span::new(8, 8));
        let e = SourceError::new("k.ptx", src, ParseErrors::new(vec![d, eof]));
        let r = e.render_plain();
        assert!(r.contains(" --> k.ptx:3:1\n"), "{r}");
        assert!(r.contains("::: k.ptx:1:1\n"), "{r}");
        assert!(r.contains("  | - first defined here\n"), "{r}");
        assert!(r.contains(" --> k.ptx:3:3\n  |\n3 | a:\n  |   ^\n"), "{r}");
    }
}
