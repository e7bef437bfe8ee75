//! The PTX lexer: source text to a vector of [`Token`]s with byte spans.
//!
//! Built on `logos`. Whitespace and comments (`//`, `/* */`) are skipped. Every token keeps its byte span;
//! the parser reads a token's text back from the source (`&src[span]`) when it needs it, so tokens are two
//! words wide and lexing allocates only the output vector.
//!
//! Characters that start no token are reported as diagnostics (`E0001`), as are unterminated strings and
//! block comments (`E0002`); the lexer always makes progress, so it terminates on every input.

use crate::diag::{codes, Diagnostic};
use logos::Logos;
use reconverge_ir::Span;

/// The kind of a token.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[logos(skip r"[ \t\r\n\f]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
pub enum TokenKind {
    /// An identifier: `foo`, `%r1`, `$L__BB0_2`, `__local_depot0`.
    #[regex(r"[a-zA-Z][a-zA-Z0-9_$]*")]
    #[regex(r"[_$%][a-zA-Z0-9_$]+")]
    Ident,
    /// A dot-word: `.reg`, `.u32`, `.L1::evict_last`, `.shared::cta`.
    #[regex(r"\.[A-Za-z_][A-Za-z0-9_$]*(::[A-Za-z0-9_]+)*")]
    #[regex(r"\.[123]d(ms)?")]
    DotWord,
    /// An integer literal: decimal, `0x` hex, `0b` binary, leading-zero octal, optional `U` suffix.
    #[regex(r"[0-9]+U?")]
    #[regex(r"0[xX][0-9a-fA-F]+U?")]
    #[regex(r"0[bB][01]+U?")]
    Int,
    /// A decimal floating-point literal: `1.5`, `1e-3`, `2.5E+10`.
    #[regex(r"[0-9]+\.[0-9]+([eE][+-]?[0-9]+)?")]
    #[regex(r"[0-9]+[eE][+-]?[0-9]+")]
    Float,
    /// A single-precision literal given by its bits: `0f3F800000`.
    #[regex(r"0[fF][0-9a-fA-F]{8}")]
    HexF32,
    /// A double-precision literal given by its bits: `0d3FF0000000000000`.
    #[regex(r"0[dD][0-9a-fA-F]{16}")]
    HexF64,
    /// A string literal `"..."` (backslash escapes allowed, no newlines).
    #[token("\"", lex_string)]
    Str,
    /// `,`
    #[token(",")]
    Comma,
    /// `;`
    #[token(";")]
    Semi,
    /// `:`
    #[token(":")]
    Colon,
    /// `{`
    #[token("{")]
    LBrace,
    /// `}`
    #[token("}")]
    RBrace,
    /// `[`
    #[token("[")]
    LBracket,
    /// `]`
    #[token("]")]
    RBracket,
    /// `(`
    #[token("(")]
    LParen,
    /// `)`
    #[token(")")]
    RParen,
    /// `+`
    #[token("+")]
    Plus,
    /// `-`
    #[token("-")]
    Minus,
    /// `!`
    #[token("!")]
    Bang,
    /// `@`
    #[token("@")]
    At,
    /// `|`
    #[token("|")]
    Pipe,
    /// `<`
    #[token("<")]
    Lt,
    /// `>`
    #[token(">")]
    Gt,
    /// `=`
    #[token("=")]
    Eq,
    /// The sink `_`.
    #[token("_")]
    Underscore,
    /// A block comment `/* ... */` (dropped by [`lex`]).
    #[token("/*", lex_block_comment)]
    BlockComment,
    /// End of input (always the last token of [`lex`]'s output; its span is empty, at the end).
    Eof,
}

/// Scans the rest of a string literal after the opening quote. `false` (an error) if it is unterminated.
fn lex_string(lex: &mut logos::Lexer<'_, TokenKind>) -> bool {
    let rest = lex.remainder().as_bytes();
    let mut i = 0;
    while i < rest.len() {
        match rest[i] {
            b'"' => {
                lex.bump(i + 1);
                return true;
            }
            b'\\' if i + 1 < rest.len() && rest[i + 1] != b'\n' => i += 2,
            b'\n' => break,
            _ => i += 1,
        }
    }
    false
}

/// Scans the rest of a block comment after `/*`. `false` (an error) if it is unterminated.
fn lex_block_comment(lex: &mut logos::Lexer<'_, TokenKind>) -> bool {
    match lex.remainder().find("*/") {
        Some(end) => {
            lex.bump(end + 2);
            true
        }
        None => false,
    }
}

impl TokenKind {
    /// A short human description of the kind, for "expected X" messages.
    pub fn describe(self) -> &'static str {
        match self {
            TokenKind::Ident => "identifier",
            TokenKind::DotWord => "directive",
            TokenKind::Int => "integer",
            TokenKind::Float => "floating-point literal",
            TokenKind::HexF32 => "f32 literal",
            TokenKind::HexF64 => "f64 literal",
            TokenKind::Str => "string",
            TokenKind::Comma => "`,`",
            TokenKind::Semi => "`;`",
            TokenKind::Colon => "`:`",
            TokenKind::LBrace => "`{`",
            TokenKind::RBrace => "`}`",
            TokenKind::LBracket => "`[`",
            TokenKind::RBracket => "`]`",
            TokenKind::LParen => "`(`",
            TokenKind::RParen => "`)`",
            TokenKind::Plus => "`+`",
            TokenKind::Minus => "`-`",
            TokenKind::Bang => "`!`",
            TokenKind::At => "`@`",
            TokenKind::Pipe => "`|`",
            TokenKind::Lt => "`<`",
            TokenKind::Gt => "`>`",
            TokenKind::Eq => "`=`",
            TokenKind::Underscore => "`_`",
            TokenKind::BlockComment => "comment",
            TokenKind::Eof => "end of input",
        }
    }
}

/// One token: its kind and byte span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

/// Lexes `src` into tokens ending with one [`TokenKind::Eof`], or the lexical errors found.
///
/// Adjacent unlexable characters are reported as one diagnostic. Sources longer than `u32::MAX` bytes
/// are rejected (spans are 32-bit).
pub fn lex(src: &str) -> Result<Vec<Token>, Vec<Diagnostic>> {
    if src.len() >= u32::MAX as usize {
        return Err(vec![Diagnostic::new(codes::TOO_LARGE, "source is larger than 4 GiB", Span::new(0, 0))]);
    }
    // PTX averages about four bytes per token; over-allocating beats copying the vector when it grows.
    let mut tokens = Vec::with_capacity(src.len() / 3 + 16);
    let mut errors: Vec<Diagnostic> = Vec::new();
    let mut lexer = TokenKind::lexer(src);
    while let Some(res) = lexer.next() {
        let r = lexer.span();
        let span = Span::new(r.start, r.end);
        match res {
            Ok(TokenKind::BlockComment) => {}
            Ok(kind) => tokens.push(Token { kind, span }),
            Err(()) => {
                let text = src.get(r.clone()).unwrap_or("");
                if text.starts_with('"') {
                    let end = src[r.start..].find('\n').map_or(src.len(), |n| r.start + n);
                    errors.push(
                        Diagnostic::new(codes::UNTERMINATED, "unterminated string literal", Span::new(r.start, end))
                            .with_help("close the string with `\"` before the end of the line"),
                    );
                    // Resume after the line: the rest of it is inside the broken string.
                    lexer.bump(end.saturating_sub(r.end));
                } else if text.starts_with("/*") {
                    errors.push(
                        Diagnostic::new(codes::UNTERMINATED, "unterminated block comment", Span::new(r.start, r.end))
                            .with_help("close the comment with `*/`"),
                    );
                    lexer.bump(src.len() - r.end);
                } else if let Some(last) =
                    errors.last_mut().filter(|d| d.code == codes::BAD_CHAR && d.span.end == span.start)
                {
                    last.span.end = span.end;
                    last.message = format!("unexpected characters `{}`", src.get(last.span.range()).unwrap_or("?"));
                } else {
                    errors.push(Diagnostic::new(codes::BAD_CHAR, format!("unexpected character `{text}`"), span));
                }
                if errors.len() >= 100 {
                    break;
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    tokens.push(Token { kind: TokenKind::Eof, span: Span::new(src.len(), src.len()) });
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use TokenKind::*;

    fn kinds(src: &str) -> Vec<(TokenKind, &str)> {
        lex(src).unwrap().into_iter().filter(|t| t.kind != Eof).map(|t| (t.kind, &src[t.span.range()])).collect()
    }

    #[test]
    fn identifiers() {
        assert_eq!(
            kinds("%r1 %SP $L__BB0_2 __local_depot0 _Z3fibi mov $str$1 WARP_SZ _"),
            vec![
                (Ident, "%r1"),
                (Ident, "%SP"),
                (Ident, "$L__BB0_2"),
                (Ident, "__local_depot0"),
                (Ident, "_Z3fibi"),
                (Ident, "mov"),
                (Ident, "$str$1"),
                (Ident, "WARP_SZ"),
                (Underscore, "_"),
            ]
        );
    }

    #[test]
    fn dot_words() {
        assert_eq!(
            kinds("ld.global.L1::evict_last.v4.f32 .shared::cta %tid.x"),
            vec![
                (Ident, "ld"),
                (DotWord, ".global"),
                (DotWord, ".L1::evict_last"),
                (DotWord, ".v4"),
                (DotWord, ".f32"),
                (DotWord, ".shared::cta"),
                (Ident, "%tid"),
                (DotWord, ".x"),
            ]
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("0 42 0x1F 0XffU 0b101 017 7U 1.5 1e-3 2.5E+10 8.8"),
            vec![
                (Int, "0"),
                (Int, "42"),
                (Int, "0x1F"),
                (Int, "0XffU"),
                (Int, "0b101"),
                (Int, "017"),
                (Int, "7U"),
                (Float, "1.5"),
                (Float, "1e-3"),
                (Float, "2.5E+10"),
                (Float, "8.8"),
            ]
        );
    }

    #[test]
    fn hex_floats() {
        assert_eq!(
            kinds("0f3F800000 0d3FF0000000000000 0fBF800000 0F7FC00000"),
            vec![
                (HexF32, "0f3F800000"),
                (HexF64, "0d3FF0000000000000"),
                (HexF32, "0fBF800000"),
                (HexF32, "0F7FC00000")
            ]
        );
    }

    #[test]
    fn punctuation_strings_comments() {
        assert_eq!(
            kinds("@!%p1 bra $L; // comment\n{ } [ ] ( ) + - | < > = : /* block\n */ \"a \\\"b\\\" c\""),
            vec![
                (At, "@"),
                (Bang, "!"),
                (Ident, "%p1"),
                (Ident, "bra"),
                (Ident, "$L"),
                (Semi, ";"),
                (LBrace, "{"),
                (RBrace, "}"),
                (LBracket, "["),
                (RBracket, "]"),
                (LParen, "("),
                (RParen, ")"),
                (Plus, "+"),
                (Minus, "-"),
                (Pipe, "|"),
                (Lt, "<"),
                (Gt, ">"),
                (Eq, "="),
                (Colon, ":"),
                (Str, "\"a \\\"b\\\" c\""),
            ]
        );
    }

    #[test]
    fn eof_token_at_end() {
        let t = lex("ret;  ").unwrap();
        assert_eq!(t.last().map(|t| (t.kind, t.span)), Some((Eof, Span::new(6, 6))));
    }

    #[test]
    fn errors() {
        let e = lex("mov ## x").unwrap_err();
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].code, codes::BAD_CHAR);
        assert_eq!(e[0].span, Span::new(4, 6));
        let e = lex("x \"abc\ny").unwrap_err();
        assert_eq!((e[0].code, e[0].span), (codes::UNTERMINATED, Span::new(2, 6)));
        let e = lex("x /* abc").unwrap_err();
        assert_eq!(e[0].code, codes::UNTERMINATED);
        assert_eq!(e[0].span.start, 2);
        let e = lex("é").unwrap_err();
        assert_eq!(e[0].span, Span::new(0, 2));
    }
}
