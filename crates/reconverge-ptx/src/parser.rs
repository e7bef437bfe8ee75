//! A hand-written recursive-descent parser from tokens to the [`ast`](crate::ast).
//!
//! The parser stops at the first syntax error. It never indexes past the token vector (the last token is
//! always [`TokenKind::Eof`], and the cursor never moves past it), every loop consumes at least one token
//! per iteration, and nesting (`{ }` scopes, initializer lists, vector operands) is bounded by
//! [`MAX_DEPTH`], so it terminates on every input without overflowing the stack.

use crate::ast::*;
use crate::diag::{codes, Diagnostic};
use crate::fxhash::FxHashMap;
use crate::lexer::{Token, TokenKind};
use reconverge_ir::{FuncKind, Imm, Linkage, Opcode, PerfDirective, PtrAttr, ScalarType, Span, StateSpace};
use smallvec::SmallVec;

/// The deepest nesting of scopes, initializer lists or vector operands the parser accepts.
pub const MAX_DEPTH: u32 = 64;

/// Errors are boxed: results are returned through memory on every call, and errors are rare.
type PResult<T> = Result<T, Box<Diagnostic>>;

fn err<T>(d: Diagnostic) -> PResult<T> {
    Err(Box::new(d))
}

/// Parses a token vector (as produced by [`lex`](crate::lexer::lex)) of `src` into a module.
pub fn parse_tokens<'s>(src: &'s str, tokens: &[Token]) -> Result<Module<'s>, Diagnostic> {
    let mut m = Module::default();
    parse_directives(src, tokens, &mut |d| m.directives.push(d))?;
    Ok(m)
}

/// Parses a token vector of `src`, handing each module-level directive to `sink` as soon as it is
/// complete (so that a caller can lower a function while its tree is still in cache, then drop it).
pub fn parse_directives<'s>(
    src: &'s str,
    tokens: &[Token],
    sink: &mut dyn FnMut(Directive<'s>),
) -> Result<(), Diagnostic> {
    let mut p = Parser {
        src,
        tokens,
        pos: 0,
        eof: Token { kind: TokenKind::Eof, span: Span::new(src.len(), src.len()) },
        opcodes: FxHashMap::default(),
        operands: Vec::new(),
        words: Vec::new(),
    };
    p.module(sink).map_err(|d| *d)
}

struct Parser<'s, 't> {
    src: &'s str,
    tokens: &'t [Token],
    pos: usize,
    eof: Token,
    /// Decoded opcode words (decoding is a long string match; a module uses few distinct opcodes).
    opcodes: FxHashMap<&'s str, Opcode>,
    /// The operand pool of the function body being parsed.
    operands: Vec<OperandAst<'s>>,
    /// The dot-word pool of the function body being parsed.
    words: Vec<Ident<'s>>,
}

/// The attributes of a variable declaration, before its name.
struct VarHead {
    space: StateSpace,
    align: Option<u32>,
    vector: Option<u8>,
    ty: ScalarType,
    ptr: Option<PtrAttr>,
}

/// Performance directives accepted between a function's signature and its body.
const PERF_DIRECTIVES: &[&str] = &[
    "maxntid",
    "reqntid",
    "minnctapersm",
    "maxnctapersm",
    "maxnreg",
    "maxclusterrank",
    "reqnctapercluster",
    "explicitcluster",
    "blocksareclusters",
];

fn linkage_word(w: &str) -> Option<Linkage> {
    match w {
        ".visible" => Some(Linkage::Visible),
        ".extern" => Some(Linkage::Extern),
        ".weak" => Some(Linkage::Weak),
        ".common" => Some(Linkage::Common),
        _ => None,
    }
}

/// The state space of a variable-declaration keyword (`.reg` excluded: it has its own syntax).
fn var_space(w: &str) -> Option<StateSpace> {
    match w {
        ".global" => Some(StateSpace::Global),
        ".shared" => Some(StateSpace::Shared),
        ".local" => Some(StateSpace::Local),
        ".const" => Some(StateSpace::Const),
        ".param" => Some(StateSpace::Param),
        ".tex" => Some(StateSpace::Tex),
        _ => None,
    }
}

/// Parses the text of an integer token (no sign) into its value.
pub fn parse_int(text: &str) -> Option<u64> {
    let t = text.strip_suffix('U').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()
    } else if let Some(b) = t.strip_prefix("0b").or_else(|| t.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).ok()
    } else if t.len() > 1 && t.starts_with('0') {
        u64::from_str_radix(&t[1..], 8).ok()
    } else {
        t.parse::<u64>().ok()
    }
}

impl<'s> Parser<'s, '_> {
    // ---- token cursor -------------------------------------------------------------------------------

    fn peek(&self) -> Token {
        self.tokens.get(self.pos).copied().unwrap_or(self.eof)
    }

    fn peek_at(&self, n: usize) -> Token {
        self.tokens.get(self.pos + n).copied().unwrap_or(self.eof)
    }

    fn bump(&mut self) -> Token {
        let t = self.peek();
        if t.kind != TokenKind::Eof {
            self.pos += 1;
        }
        t
    }

    fn text(&self, t: Token) -> &'s str {
        self.src.get(t.span.range()).unwrap_or("")
    }

    fn ident(&self, t: Token) -> Ident<'s> {
        Ident { text: self.text(t), span: t.span }
    }

    /// A dot-word as an [`Ident`] without its dot (the span keeps the dot).
    fn word(&self, t: Token) -> Ident<'s> {
        let text = self.text(t);
        Ident { text: text.strip_prefix('.').unwrap_or(text), span: t.span }
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek().kind == kind
    }

    fn at_word(&self, w: &str) -> bool {
        let t = self.peek();
        t.kind == TokenKind::DotWord && self.text(t) == w
    }

    fn eat(&mut self, kind: TokenKind) -> Option<Token> {
        if self.at(kind) {
            Some(self.bump())
        } else {
            None
        }
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> PResult<Token> {
        if self.at(kind) {
            Ok(self.bump())
        } else {
            err(self.expected(what))
        }
    }

    fn expect_ident(&mut self, what: &str) -> PResult<Ident<'s>> {
        let t = self.expect(TokenKind::Ident, what)?;
        Ok(self.ident(t))
    }

    /// The end of the previous token (for spans of constructs that end there).
    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.tokens.get(self.pos - 1).map_or(0, |t| t.span.end)
        }
    }

    fn span_from(&self, start: Span) -> Span {
        Span { start: start.start, end: self.prev_end().max(start.end) }
    }

    /// How the current token is described in messages.
    fn found(&self, t: Token) -> String {
        match t.kind {
            TokenKind::Eof => "end of input".to_string(),
            TokenKind::Str => "a string".to_string(),
            _ => {
                let text = self.text(t);
                let short: String = text.chars().take(40).collect();
                format!("`{short}`")
            }
        }
    }

    /// "expected X, found Y" at the current token; "unexpected end of input" at the end.
    fn expected(&self, what: &str) -> Diagnostic {
        let t = self.peek();
        if t.kind == TokenKind::Eof {
            Diagnostic::new(codes::UNEXPECTED_EOF, format!("unexpected end of input, expected {what}"), t.span)
                .with_help("the file is truncated or a construct is not closed")
        } else {
            Diagnostic::new(codes::UNEXPECTED_TOKEN, format!("expected {what}, found {}", self.found(t)), t.span)
        }
    }

    fn unknown_directive(&self, t: Token, context: &str) -> Diagnostic {
        Diagnostic::new(codes::UNKNOWN_DIRECTIVE, format!("unknown directive `{}` {context}", self.text(t)), t.span)
    }

    // ---- numbers ------------------------------------------------------------------------------------

    fn int_value(&self, t: Token) -> PResult<u64> {
        parse_int(self.text(t)).ok_or_else(|| {
            Box::new(
                Diagnostic::new(codes::BAD_NUMBER, format!("integer literal `{}` out of range", self.text(t)), t.span)
                    .with_help("integer literals must fit in 64 bits (octal literals use digits 0-7)"),
            )
        })
    }

    fn expect_int(&mut self, what: &str) -> PResult<(u64, Span)> {
        let t = self.expect(TokenKind::Int, what)?;
        Ok((self.int_value(t)?, t.span))
    }

    fn expect_u32(&mut self, what: &str) -> PResult<(u32, Span)> {
        let (v, span) = self.expect_int(what)?;
        let v = u32::try_from(v).map_err(|_| {
            Diagnostic::new(
                codes::BAD_NUMBER,
                format!("integer literal `{v}` out of range (at most {})", u32::MAX),
                span,
            )
        })?;
        Ok((v, span))
    }

    /// A numeric literal token as an immediate, optionally negated.
    fn number(&mut self, negate: bool, start: Span) -> PResult<(Imm, Span)> {
        let t = self.peek();
        let text = self.text(t);
        let imm = match t.kind {
            TokenKind::Int => {
                let v = self.int_value(t)?;
                if negate {
                    if v > 1u64 << 63 {
                        return err(Diagnostic::new(
                            codes::BAD_NUMBER,
                            format!("integer literal `-{text}` out of range"),
                            start.to(t.span),
                        ));
                    }
                    Imm::Int((v as i64).wrapping_neg())
                } else {
                    Imm::Int(v as i64)
                }
            }
            TokenKind::HexF32 => {
                let bits = u32::from_str_radix(text.get(2..).unwrap_or(""), 16).unwrap_or(0);
                Imm::F32(if negate { bits ^ (1 << 31) } else { bits })
            }
            TokenKind::HexF64 => {
                let bits = u64::from_str_radix(text.get(2..).unwrap_or(""), 16).unwrap_or(0);
                Imm::F64(if negate { bits ^ (1 << 63) } else { bits })
            }
            TokenKind::Float => {
                let v: f64 = text.parse().map_err(|_| {
                    Diagnostic::new(codes::BAD_NUMBER, format!("malformed floating-point literal `{text}`"), t.span)
                })?;
                Imm::F64(if negate { -v } else { v }.to_bits())
            }
            _ => return err(self.expected("a number")),
        };
        self.bump();
        Ok((imm, start.to(t.span)))
    }

    fn is_number(kind: TokenKind) -> bool {
        matches!(kind, TokenKind::Int | TokenKind::Float | TokenKind::HexF32 | TokenKind::HexF64)
    }

    /// An optional `+N`, `+-N` or `-N` after a name.
    fn offset(&mut self) -> PResult<i64> {
        let neg = if self.eat(TokenKind::Plus).is_some() {
            self.eat(TokenKind::Minus).is_some()
        } else if self.eat(TokenKind::Minus).is_some() {
            true
        } else {
            return Ok(0);
        };
        let (v, span) = self.expect_int("an offset")?;
        if neg {
            if v > 1u64 << 63 {
                return err(Diagnostic::new(codes::BAD_NUMBER, "offset out of range", span));
            }
            Ok((v as i64).wrapping_neg())
        } else {
            Ok(v as i64)
        }
    }

    // ---- module -------------------------------------------------------------------------------------

    fn module(&mut self, sink: &mut dyn FnMut(Directive<'s>)) -> PResult<()> {
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::Eof => return Ok(()),
                TokenKind::DotWord => {}
                _ => return err(self.expected("a directive")),
            }
            let w = self.text(t);
            match w {
                ".version" => {
                    self.bump();
                    let v = self.peek();
                    if !matches!(v.kind, TokenKind::Float | TokenKind::Int) {
                        return err(self.expected("a version number such as `8.0`"));
                    }
                    self.bump();
                    let text = self.text(v);
                    let (ma, mi) = text.split_once('.').unwrap_or((text, "0"));
                    let (Ok(major), Ok(minor)) = (ma.parse::<u32>(), mi.parse::<u32>()) else {
                        return err(Diagnostic::new(codes::BAD_NUMBER, format!("malformed version `{text}`"), v.span));
                    };
                    sink(Directive::Version { major, minor, span: t.span.to(v.span) });
                }
                ".target" => {
                    self.bump();
                    let mut targets = vec![self.expect_ident("a target such as `sm_80`")?];
                    while self.eat(TokenKind::Comma).is_some() {
                        targets.push(self.expect_ident("a target option")?);
                    }
                    sink(Directive::Target { targets, span: self.span_from(t.span) });
                }
                ".address_size" => {
                    self.bump();
                    let (size, _) = self.expect_u32("an address size (32 or 64)")?;
                    sink(Directive::AddressSize { size, span: self.span_from(t.span) });
                }
                ".file" => {
                    self.bump();
                    let (index, _) = self.expect_u32("a file index")?;
                    let s = self.expect(TokenKind::Str, "a file name string")?;
                    let path = self.string_body(s);
                    let mut extra = Vec::new();
                    while self.eat(TokenKind::Comma).is_some() {
                        extra.push(self.expect_int("a number")?.0);
                    }
                    sink(Directive::File { index, path, extra, span: self.span_from(t.span) });
                }
                ".section" => self.skip_section()?,
                ".loc" => {
                    self.loc()?;
                }
                ".pragma" => {
                    self.pragma()?;
                }
                ".entry" | ".func" => sink(Directive::Func(Box::new(self.func(None, t.span)?))),
                _ => {
                    if let Some(linkage) = linkage_word(w) {
                        self.bump();
                        let n = self.peek();
                        let nw = self.text(n);
                        if n.kind == TokenKind::DotWord && (nw == ".entry" || nw == ".func") {
                            sink(Directive::Func(Box::new(self.func(Some(linkage), t.span)?)));
                        } else if n.kind == TokenKind::DotWord && var_space(nw).is_some() {
                            for v in self.var_decls(Some(linkage), t.span, true)? {
                                sink(Directive::Var(v));
                            }
                        } else {
                            return err(self.expected("`.entry`, `.func` or a variable declaration"));
                        }
                    } else if var_space(w).is_some_and(|s| s != StateSpace::Param) {
                        for v in self.var_decls(None, t.span, true)? {
                            sink(Directive::Var(v));
                        }
                    } else {
                        return err(self.unknown_directive(t, "at module level").with_help(
                            "expected `.version`, `.target`, `.address_size`, `.file`, `.entry`, `.func` or a variable",
                        ));
                    }
                }
            }
        }
    }

    fn string_body(&self, t: Token) -> &'s str {
        let s = self.text(t);
        s.strip_prefix('"').and_then(|s| s.strip_suffix('"')).unwrap_or(s)
    }

    /// `.section name { ... }`, skipped by brace matching.
    fn skip_section(&mut self) -> PResult<()> {
        self.bump();
        // The section name and any attributes up to the opening brace.
        let mut n = 0;
        while !self.at(TokenKind::LBrace) {
            if self.at(TokenKind::Eof) || n > 16 {
                return err(self.expected("`{` opening the section"));
            }
            self.bump();
            n += 1;
        }
        let open = self.bump();
        let mut depth = 1u32;
        while depth > 0 {
            match self.bump().kind {
                TokenKind::LBrace => depth += 1,
                TokenKind::RBrace => depth -= 1,
                TokenKind::Eof => {
                    return err(self.expected("`}` closing the section").with_label(open.span, "section opened here"))
                }
                _ => {}
            }
        }
        Ok(())
    }

    // ---- declarations -------------------------------------------------------------------------------

    /// Parses the attributes of a variable declaration, from the state-space keyword up to the name.
    fn var_head(&mut self) -> PResult<VarHead> {
        let st = self.bump();
        let space = var_space(self.text(st)).unwrap_or(StateSpace::Global);
        let mut align = None;
        let mut vector = None;
        let mut ty = None;
        let mut ptr: Option<PtrAttr> = None;
        while self.at(TokenKind::DotWord) {
            let t = self.peek();
            let w = self.text(t);
            match w {
                ".align" => {
                    self.bump();
                    let (a, _) = self.expect_u32("an alignment")?;
                    match &mut ptr {
                        Some(p) => p.align = Some(a),
                        None => align = Some(a),
                    }
                }
                ".v2" | ".v4" | ".v8" => {
                    self.bump();
                    vector = w[2..].parse::<u8>().ok();
                }
                ".ptr" => {
                    self.bump();
                    ptr = Some(PtrAttr { space: None, align: None });
                }
                ".attribute" => {
                    // `.attribute(.managed)`: accepted and dropped.
                    self.bump();
                    self.expect(TokenKind::LParen, "`(`")?;
                    while !self.at(TokenKind::RParen) {
                        if !matches!(self.peek().kind, TokenKind::DotWord | TokenKind::Comma) {
                            return err(self.expected("an attribute or `)`"));
                        }
                        self.bump();
                    }
                    self.bump();
                }
                _ => {
                    let word = &w[1..];
                    if let (Some(p), Some(sp)) = (ptr.as_mut(), var_space(w)) {
                        p.space = Some(sp);
                        self.bump();
                    } else if let Some(t) = ScalarType::from_word(word) {
                        self.bump();
                        ty = Some(t);
                    } else {
                        return err(Diagnostic::new(
                            codes::BAD_DECL,
                            format!("unexpected `{w}` in a variable declaration"),
                            t.span,
                        ));
                    }
                }
            }
        }
        let Some(ty) = ty else {
            return err(self.expected("a type such as `.b32` in the declaration"));
        };
        Ok(VarHead { space, align, vector, ty, ptr })
    }

    fn var_name(&mut self) -> PResult<Ident<'s>> {
        let t = self.peek();
        match t.kind {
            TokenKind::Ident | TokenKind::Underscore => {
                self.bump();
                Ok(self.ident(t))
            }
            _ => err(self.expected("a variable name")),
        }
    }

    fn dims(&mut self) -> PResult<SmallVec<[Option<u64>; 1]>> {
        let mut dims = SmallVec::new();
        while self.eat(TokenKind::LBracket).is_some() {
            if self.eat(TokenKind::RBracket).is_some() {
                dims.push(None);
            } else {
                dims.push(Some(self.expect_int("an array size")?.0));
                self.expect(TokenKind::RBracket, "`]`")?;
            }
        }
        Ok(dims)
    }

    /// A declaration of one or more variables (`.global .u32 a, b = 1;`), through the semicolon.
    fn var_decls(&mut self, linkage: Option<Linkage>, start: Span, allow_init: bool) -> PResult<Vec<VarDecl<'s>>> {
        let VarHead { space, align, vector, ty, ptr } = self.var_head()?;
        let mut out = Vec::new();
        loop {
            let name = self.var_name()?;
            let dims = self.dims()?;
            let init = if allow_init && self.eat(TokenKind::Eq).is_some() { Some(self.init(0)?) } else { None };
            out.push(VarDecl { linkage, space, align, vector, ty, ptr, name, dims, init, span: self.span_from(start) });
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::Semi, "`;` after the declaration")?;
        Ok(out)
    }

    /// One parameter of a function or prototype (no semicolon).
    fn param(&mut self) -> PResult<VarDecl<'s>> {
        let t = self.peek();
        if !(t.kind == TokenKind::DotWord && matches!(self.text(t), ".param" | ".reg")) {
            return err(self.expected("a parameter (`.param .type name`)"));
        }
        let mut head = self.var_head()?;
        if self.text(t) == ".reg" {
            // `.reg .b32 x` parameters: same attribute syntax.
            head.space = StateSpace::Reg;
        }
        let VarHead { space, align, vector, ty, ptr } = head;
        let name = self.var_name()?;
        let dims = self.dims()?;
        Ok(VarDecl {
            linkage: None,
            space,
            align,
            vector,
            ty,
            ptr,
            name,
            dims,
            init: None,
            span: self.span_from(t.span),
        })
    }

    /// `( param, param )`
    fn param_list(&mut self) -> PResult<Vec<VarDecl<'s>>> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut out = Vec::new();
        if self.eat(TokenKind::RParen).is_some() {
            return Ok(out);
        }
        loop {
            out.push(self.param()?);
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::RParen, "`,` or `)` in the parameter list")?;
        Ok(out)
    }

    fn init(&mut self, depth: u32) -> PResult<Init<'s>> {
        if depth > MAX_DEPTH {
            return err(Diagnostic::new(codes::TOO_DEEP, "initializer nested too deeply", self.peek().span));
        }
        let t = self.peek();
        match t.kind {
            TokenKind::LBrace => {
                self.bump();
                let mut items = Vec::new();
                if self.eat(TokenKind::RBrace).is_none() {
                    loop {
                        items.push(self.init(depth + 1)?);
                        if self.eat(TokenKind::Comma).is_none() {
                            break;
                        }
                    }
                    self.expect(TokenKind::RBrace, "`,` or `}` in the initializer")?;
                }
                Ok(Init::List(items, self.span_from(t.span)))
            }
            TokenKind::Minus => {
                self.bump();
                let (imm, span) = self.number(true, t.span)?;
                Ok(Init::Value(InitValue::Imm(imm, span)))
            }
            k if Self::is_number(k) => {
                let (imm, span) = self.number(false, t.span)?;
                Ok(Init::Value(InitValue::Imm(imm, span)))
            }
            TokenKind::Ident => {
                self.bump();
                let (name, generic) = if self.text(t) == "generic" && self.at(TokenKind::LParen) {
                    self.bump();
                    let n = self.expect_ident("a variable or function name")?;
                    self.expect(TokenKind::RParen, "`)`")?;
                    (n, true)
                } else {
                    (self.ident(t), false)
                };
                let offset = self.offset()?;
                Ok(Init::Value(InitValue::Addr { name, generic, offset, span: self.span_from(t.span) }))
            }
            _ => err(self.expected("an initializer value")),
        }
    }

    // ---- functions ----------------------------------------------------------------------------------

    fn func(&mut self, linkage: Option<Linkage>, start: Span) -> PResult<FuncDecl<'s>> {
        let kw = self.bump();
        let kind = if self.text(kw) == ".entry" { FuncKind::Entry } else { FuncKind::Func };
        let rets = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        let name = self.expect_ident("a function name")?;
        let params = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
        let mut noreturn = false;
        let mut directives = Vec::new();
        while self.at(TokenKind::DotWord) {
            let t = self.bump();
            let w = self.word(t).text;
            if w == "noreturn" {
                noreturn = true;
            } else if w == "pragma" {
                let text = self.pragma_strings()?;
                self.expect(TokenKind::Semi, "`;` after `.pragma`")?;
                directives.push(PerfDirective { name: w.to_string(), args: Vec::new(), text: Some(text) });
            } else if PERF_DIRECTIVES.contains(&w) {
                let mut args = Vec::new();
                if self.at(TokenKind::Int) {
                    args.push(self.expect_int("a number")?.0);
                    while self.eat(TokenKind::Comma).is_some() {
                        args.push(self.expect_int("a number")?.0);
                    }
                }
                directives.push(PerfDirective { name: w.to_string(), args, text: None });
            } else {
                return err(self.unknown_directive(t, "in a function header"));
            }
        }
        let header_span = self.span_from(start);
        let body = if self.eat(TokenKind::Semi).is_some() {
            None
        } else if self.at(TokenKind::LBrace) {
            let scope = self.scope(0)?;
            // The body takes the pools; the next body starts with pools of the same capacity (the largest
            // so far), so that they rarely grow again.
            let (n_ops, n_words) = (self.operands.capacity(), self.words.capacity());
            let operands = std::mem::replace(&mut self.operands, Vec::with_capacity(n_ops));
            let words = std::mem::replace(&mut self.words, Vec::with_capacity(n_words));
            Some(Body { scope, operands, words })
        } else {
            return err(self.expected("`{` or `;` after the function header"));
        };
        Ok(FuncDecl { linkage, kind, rets, name, params, noreturn, directives, body, header_span })
    }

    /// `"a"` or `"a", "b"` (joined with `", "`).
    fn pragma_strings(&mut self) -> PResult<String> {
        let s = self.expect(TokenKind::Str, "a string")?;
        let mut text = self.string_body(s).to_string();
        while self.eat(TokenKind::Comma).is_some() {
            let s = self.expect(TokenKind::Str, "a string")?;
            text.push_str("\", \"");
            text.push_str(self.string_body(s));
        }
        Ok(text)
    }

    fn pragma(&mut self) -> PResult<Stmt<'s>> {
        let t = self.bump();
        let text = self.pragma_strings()?;
        self.expect(TokenKind::Semi, "`;` after `.pragma`")?;
        Ok(Stmt::Pragma { text, span: self.span_from(t.span) })
    }

    /// `.loc file line col [, function_name name[+off]] [, inlined_at file line col]`
    fn loc(&mut self) -> PResult<Stmt<'s>> {
        let t = self.bump();
        let (file, _) = self.expect_u32("a file index")?;
        let (line, _) = self.expect_u32("a line number")?;
        let (col, _) = self.expect_u32("a column number")?;
        while self.eat(TokenKind::Comma).is_some() {
            let k = self.expect(TokenKind::Ident, "`function_name` or `inlined_at`")?;
            match self.text(k) {
                "function_name" => {
                    self.expect(TokenKind::Ident, "a function-name label")?;
                    self.offset()?;
                }
                "inlined_at" => {
                    for what in ["a file index", "a line number", "a column number"] {
                        self.expect_int(what)?;
                    }
                }
                _ => {
                    return err(Diagnostic::new(
                        codes::UNEXPECTED_TOKEN,
                        format!("expected `function_name` or `inlined_at`, found `{}`", self.text(k)),
                        k.span,
                    ))
                }
            }
        }
        Ok(Stmt::Loc { file, line, col, span: self.span_from(t.span) })
    }

    // ---- bodies -------------------------------------------------------------------------------------

    fn scope(&mut self, depth: u32) -> PResult<Scope<'s>> {
        let open = self.expect(TokenKind::LBrace, "`{`")?;
        if depth > MAX_DEPTH {
            return err(Diagnostic::new(codes::TOO_DEEP, "scopes nested too deeply", open.span));
        }
        let mut stmts = Vec::new();
        loop {
            let t = self.peek();
            match t.kind {
                TokenKind::RBrace => {
                    self.bump();
                    break;
                }
                TokenKind::Eof => {
                    return err(self.expected("`}`").with_label(open.span, "this `{` is not closed"));
                }
                TokenKind::LBrace => stmts.push(Stmt::Scope(self.scope(depth + 1)?)),
                TokenKind::DotWord => {
                    let w = self.text(t);
                    match w {
                        ".reg" => stmts.push(Stmt::Reg(self.reg_decl()?)),
                        ".loc" => stmts.push(self.loc()?),
                        ".pragma" => stmts.push(self.pragma()?),
                        _ if var_space(w).is_some() => {
                            for v in self.var_decls(None, t.span, true)? {
                                stmts.push(Stmt::Var(Box::new(v)));
                            }
                        }
                        _ => {
                            return err(self.unknown_directive(t, "in a function body").with_help(
                                "statements are instructions, labels, `.reg`/`.local`/`.shared`/`.param` declarations, `.loc` or `.pragma`",
                            ))
                        }
                    }
                }
                TokenKind::Ident if self.peek_at(1).kind == TokenKind::Colon => stmts.push(self.labelled()?),
                TokenKind::Ident | TokenKind::At => stmts.push(Stmt::Inst(self.instruction()?)),
                _ => return err(self.expected("an instruction, a label or `}`")),
            }
        }
        Ok(Scope { stmts, span: self.span_from(open.span) })
    }

    /// `name:` followed by nothing (a label), `.branchtargets` or `.callprototype`.
    fn labelled(&mut self) -> PResult<Stmt<'s>> {
        let n = self.bump();
        self.bump(); // `:`
        let name = self.ident(n);
        if self.at_word(".branchtargets") {
            self.bump();
            let mut targets = vec![self.expect_ident("a label")?];
            while self.eat(TokenKind::Comma).is_some() {
                targets.push(self.expect_ident("a label")?);
            }
            self.expect(TokenKind::Semi, "`,` or `;` after the branch targets")?;
            return Ok(Stmt::BranchTargets { name, targets, span: self.span_from(n.span) });
        }
        if self.at_word(".callprototype") {
            self.bump();
            let rets = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
            self.expect(TokenKind::Underscore, "`_` (the prototype's function name)")?;
            let params = if self.at(TokenKind::LParen) { self.param_list()? } else { Vec::new() };
            let noreturn = if self.at_word(".noreturn") {
                self.bump();
                true
            } else {
                false
            };
            self.expect(TokenKind::Semi, "`;` after the call prototype")?;
            let proto = ProtoDecl { name, rets, params, noreturn, span: self.span_from(n.span) };
            return Ok(Stmt::CallPrototype(Box::new(proto)));
        }
        Ok(Stmt::Label(name))
    }

    /// `.reg [.vN] .type name[<N>], ...;`
    fn reg_decl(&mut self) -> PResult<RegDecl<'s>> {
        let start = self.bump();
        let mut vector = None;
        let mut ty = None;
        while self.at(TokenKind::DotWord) {
            let t = self.bump();
            let w = self.word(t).text;
            match w {
                "v2" | "v4" | "v8" => vector = w[1..].parse::<u8>().ok(),
                _ => match ScalarType::from_word(w) {
                    Some(s) => ty = Some(s),
                    None => {
                        return err(Diagnostic::new(
                            codes::BAD_DECL,
                            format!("unexpected `.{w}` in a `.reg` declaration"),
                            t.span,
                        ))
                    }
                },
            }
        }
        let Some(ty) = ty else {
            return err(self.expected("a register type such as `.b32`"));
        };
        let mut names = Vec::new();
        loop {
            let n = self.expect(TokenKind::Ident, "a register name")?;
            let count = if self.eat(TokenKind::Lt).is_some() {
                let (c, _) = self.expect_u32("a register count")?;
                self.expect(TokenKind::Gt, "`>`")?;
                Some(c)
            } else {
                None
            };
            names.push(RegName { name: self.ident(n), count, span: self.span_from(n.span) });
            if self.eat(TokenKind::Comma).is_none() {
                break;
            }
        }
        self.expect(TokenKind::Semi, "`,` or `;` after the register names")?;
        Ok(RegDecl { ty, vector, names, span: self.span_from(start.span) })
    }

    fn instruction(&mut self) -> PResult<Instruction<'s>> {
        let start = self.peek().span;
        let guard = if let Some(at) = self.eat(TokenKind::At) {
            let negated = self.eat(TokenKind::Bang).is_some();
            let reg = self.expect_ident("a predicate register after `@`")?;
            Some(GuardAst { reg, negated, span: at.span.to(reg.span) })
        } else {
            None
        };
        let t = self.peek();
        if t.kind != TokenKind::Ident {
            return err(self.expected("an instruction"));
        }
        let text = self.text(t);
        if text.starts_with(['%', '$']) {
            return err(Diagnostic::new(
                codes::UNEXPECTED_TOKEN,
                format!("expected an instruction, found `{text}`"),
                t.span,
            ));
        }
        self.bump();
        let opcode = self.ident(t);
        let op = match self.opcodes.get(opcode.text) {
            Some(op) => op.clone(),
            None => {
                let op = Opcode::from_word(opcode.text);
                self.opcodes.insert(opcode.text, op.clone());
                op
            }
        };
        let words_start = self.words.len();
        while self.at(TokenKind::DotWord) {
            let w = self.bump();
            let w = self.word(w);
            self.words.push(w);
        }
        let words = Pool { start: words_start as u32, len: (self.words.len() - words_start) as u32 };
        let opcode_span = self.span_from(t.span);
        let mnemonic = self.src.get(opcode_span.range()).unwrap_or("");
        let mut operands: SmallVec<[OperandAst<'s>; 6]> = SmallVec::new();
        if self.eat(TokenKind::Semi).is_none() {
            loop {
                operands.push(self.operand(0)?);
                if self.eat(TokenKind::Comma).is_none() {
                    break;
                }
            }
            self.expect(TokenKind::Semi, "`,` or `;` after the operand")?;
        }
        let operands = self.pool(&operands);
        Ok(Instruction { guard, opcode, op, words, operands, mnemonic, opcode_span, span: self.span_from(start) })
    }

    /// Appends `items` to the operand pool.
    fn pool(&mut self, items: &[OperandAst<'s>]) -> Pool {
        let start = self.operands.len();
        self.operands.extend_from_slice(items);
        Pool { start: start as u32, len: items.len() as u32 }
    }

    /// The rest of `[handle, {c0, c1}]` after the comma.
    fn image(&mut self, handle: Ident<'s>, open: Span, depth: u32) -> PResult<OperandAst<'s>> {
        let at = self.peek();
        let coords = match self.operand(depth + 1)? {
            OperandAst::Vector(items, _) => items,
            _ => return err(Diagnostic::new(codes::BAD_OPERAND, "expected a coordinate vector `{...}`", at.span)),
        };
        self.expect(TokenKind::RBracket, "`]`")?;
        Ok(OperandAst::Image { handle, coords, span: self.span_from(open) })
    }

    fn operand(&mut self, depth: u32) -> PResult<OperandAst<'s>> {
        let t = self.peek();
        if depth > MAX_DEPTH {
            return err(Diagnostic::new(codes::TOO_DEEP, "operand nested too deeply", t.span));
        }
        match t.kind {
            TokenKind::LParen | TokenKind::LBrace => {
                self.bump();
                let close = if t.kind == TokenKind::LParen { TokenKind::RParen } else { TokenKind::RBrace };
                let mut items: SmallVec<[OperandAst<'s>; 4]> = SmallVec::new();
                if self.eat(close).is_none() {
                    loop {
                        items.push(self.operand(depth + 1)?);
                        if self.eat(TokenKind::Comma).is_none() {
                            break;
                        }
                    }
                    let what = if close == TokenKind::RParen { "`,` or `)`" } else { "`,` or `}`" };
                    self.expect(close, what)?;
                }
                let span = self.span_from(t.span);
                let items = self.pool(&items);
                Ok(if t.kind == TokenKind::LParen {
                    OperandAst::List(items, span)
                } else {
                    OperandAst::Vector(items, span)
                })
            }
            TokenKind::LBracket => {
                self.bump();
                let b = self.peek();
                let (base, offset) = match b.kind {
                    TokenKind::Ident => {
                        self.bump();
                        let handle = self.ident(b);
                        if self.eat(TokenKind::Comma).is_some() {
                            return self.image(handle, t.span, depth);
                        }
                        (AddrBaseAst::Name(handle), self.offset()?)
                    }
                    TokenKind::Int => {
                        let (v, _) = self.expect_int("an address")?;
                        (AddrBaseAst::Abs, v as i64)
                    }
                    TokenKind::Minus => {
                        self.bump();
                        let (v, span) = self.expect_int("an address")?;
                        if v > 1u64 << 63 {
                            return err(Diagnostic::new(codes::BAD_NUMBER, "address out of range", span));
                        }
                        (AddrBaseAst::Abs, (v as i64).wrapping_neg())
                    }
                    _ => return err(self.expected("a register, variable or number in the address")),
                };
                self.expect(TokenKind::RBracket, "`]`")?;
                Ok(OperandAst::Addr { base, offset, span: self.span_from(t.span) })
            }
            TokenKind::Bang => {
                self.bump();
                let r = self.expect_ident("a predicate register after `!`")?;
                Ok(OperandAst::Not(r, t.span.to(r.span)))
            }
            TokenKind::Minus => {
                self.bump();
                let (imm, span) = self.number(true, t.span)?;
                Ok(OperandAst::Imm(imm, span))
            }
            k if Self::is_number(k) => {
                let (imm, span) = self.number(false, t.span)?;
                Ok(OperandAst::Imm(imm, span))
            }
            TokenKind::Underscore => {
                self.bump();
                if self.at(TokenKind::Pipe) {
                    self.pair(None, t.span)
                } else {
                    Ok(OperandAst::Sink(t.span))
                }
            }
            TokenKind::Ident => {
                self.bump();
                let name = self.ident(t);
                if self.at(TokenKind::Pipe) {
                    return self.pair(Some(name), t.span);
                }
                let c = self.peek();
                let component = if c.kind == TokenKind::DotWord && c.span.start == t.span.end {
                    self.bump();
                    Some(self.word(c))
                } else {
                    None
                };
                Ok(OperandAst::Name { name, component })
            }
            _ => err(self.expected("an operand")),
        }
    }

    /// The rest of `a|b` after `a`.
    fn pair(&mut self, first: Option<Ident<'s>>, start: Span) -> PResult<OperandAst<'s>> {
        self.bump(); // `|`
        let t = self.peek();
        let second = match t.kind {
            TokenKind::Ident => Some(self.ident(t)),
            TokenKind::Underscore => None,
            _ => return err(self.expected("a register or `_` after `|`")),
        };
        self.bump();
        Ok(OperandAst::Pair([first, second], self.span_from(start)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn parse(src: &str) -> Result<Module<'_>, Diagnostic> {
        let toks = lex(src).map_err(|mut e| e.remove(0))?;
        parse_tokens(src, &toks)
    }

    fn body(src: &str) -> Body<'_> {
        let m = parse(src).unwrap();
        match m.directives.into_iter().next() {
            Some(Directive::Func(f)) => f.body.unwrap(),
            other => panic!("{other:?}"),
        }
    }

    /// The instructions of a body with their operands.
    fn insts<'a, 's>(b: &'a Body<'s>) -> Vec<(&'a Instruction<'s>, &'a [OperandAst<'s>])> {
        b.scope
            .stmts
            .iter()
            .filter_map(|s| match s {
                Stmt::Inst(i) => Some((i, b.operands(i.operands))),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn ints() {
        assert_eq!(parse_int("0"), Some(0));
        assert_eq!(parse_int("017"), Some(15));
        assert_eq!(parse_int("0x1fU"), Some(31));
        assert_eq!(parse_int("0b101"), Some(5));
        assert_eq!(parse_int("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_int("18446744073709551616"), None);
        assert_eq!(parse_int("08"), None);
    }

    #[test]
    fn header() {
        let m = parse(".version 8.10\n.target sm_80, texmode_independent\n.address_size 64\n.file 1 \"a.cu\", 5, 6")
            .unwrap();
        assert!(matches!(m.directives[0], Directive::Version { major: 8, minor: 10, .. }));
        match &m.directives[1] {
            Directive::Target { targets, .. } => assert_eq!(targets.len(), 2),
            d => panic!("{d:?}"),
        }
        assert!(matches!(m.directives[2], Directive::AddressSize { size: 64, .. }));
        assert!(matches!(&m.directives[3], Directive::File { index: 1, path: "a.cu", extra, .. } if extra == &[5, 6]));
    }

    #[test]
    fn instruction_pieces() {
        let b = body(".entry k { @!%p1 ld.global.nc.v4.f32 {%f1, %f2, _, %f4}, [%rd1+-8]; }");
        let (i, ops) = insts(&b)[0];
        assert!(i.guard.is_some_and(|g| g.negated && g.reg.text == "%p1"));
        assert_eq!(i.op, Opcode::Ld);
        assert_eq!(b.words(i.words).iter().map(|w| w.text).collect::<Vec<_>>(), ["global", "nc", "v4", "f32"]);
        let OperandAst::Vector(v, _) = ops[0] else { panic!() };
        assert!(matches!(b.operands(v), [_, _, OperandAst::Sink(_), _]));
        assert!(matches!(ops[1], OperandAst::Addr { offset: -8, .. }));
    }

    #[test]
    fn operands() {
        let b = body(".entry k { shfl.sync.down.b32 %r1|%p2, %tid.x, -1, 0f3F800000; setp.eq.s32 _|%p, 1.5, -0x10, !%p; call.uni (r), f, (a, b); st.global.u32 [4096], 0; }");
        let is = insts(&b);
        let ops = is[0].1;
        assert!(matches!(ops[0], OperandAst::Pair([Some(_), Some(_)], _)));
        assert!(matches!(&ops[1], OperandAst::Name { component: Some(c), .. } if c.text == "x"));
        assert_eq!(ops[1].span(), Span::new(39, 45));
        assert!(matches!(ops[2], OperandAst::Imm(Imm::Int(-1), _)));
        assert!(matches!(ops[3], OperandAst::Imm(Imm::F32(0x3F80_0000), _)));
        let ops = is[1].1;
        assert!(matches!(ops[0], OperandAst::Pair([None, Some(_)], _)));
        assert!(matches!(ops[1], OperandAst::Imm(Imm::F64(b), _) if b == 1.5f64.to_bits()));
        assert!(matches!(ops[2], OperandAst::Imm(Imm::Int(-16), _)));
        assert!(matches!(ops[3], OperandAst::Not(..)));
        let ops = is[2].1;
        assert!(matches!(ops[0], OperandAst::List(v, _) if v.len == 1));
        assert!(matches!(ops[2], OperandAst::List(v, _) if v.len == 2));
        assert!(matches!(is[3].1[0], OperandAst::Addr { base: AddrBaseAst::Abs, offset: 4096, .. }));
    }

    #[test]
    fn declarations() {
        let m = parse(
            ".visible .entry k(.param .u64 .ptr .global .align 8 p, .param .align 8 .b8 s[16]) .maxntid 256, 1, 1 .minnctapersm 2 { .reg .b32 %r<10>, %x; .local .align 4 .b8 d[8]; L: .branchtargets L; P: .callprototype (.param .b32 _) _ (.param .b32 _); }",
        )
        .unwrap();
        let Directive::Func(f) = &m.directives[0] else { panic!() };
        assert_eq!(f.params.len(), 2);
        assert_eq!(f.params[0].ptr, Some(PtrAttr { space: Some(StateSpace::Global), align: Some(8) }));
        assert_eq!((f.params[1].align, f.params[1].dims.as_slice()), (Some(8), &[Some(16)][..]));
        assert_eq!(f.directives.len(), 2);
        assert_eq!(f.directives[0].args, vec![256, 1, 1]);
        let b = &f.body.as_ref().unwrap().scope.stmts;
        assert!(matches!(&b[0], Stmt::Reg(r) if r.names.len() == 2 && r.names[0].count == Some(10)));
        assert!(matches!(&b[1], Stmt::Var(v) if v.align == Some(4) && v.dims.as_slice() == [Some(8)]));
        assert!(matches!(&b[2], Stmt::BranchTargets { targets, .. } if targets.len() == 1));
        assert!(matches!(&b[3], Stmt::CallPrototype(p) if p.rets.len() == 1 && p.params.len() == 1));
    }

    #[test]
    fn initializers() {
        let m = parse(".global .u64 t[3] = {generic(a)+8, b, -1}; .const .f32 c = 0f3F800000;").unwrap();
        let Directive::Var(v) = &m.directives[0] else { panic!() };
        let Some(Init::List(items, _)) = &v.init else { panic!() };
        assert!(matches!(&items[0], Init::Value(InitValue::Addr { generic: true, offset: 8, .. })));
        assert!(matches!(&items[2], Init::Value(InitValue::Imm(Imm::Int(-1), _))));
    }

    #[test]
    fn errors() {
        let e = parse(".version 8.0 .target sm_80 .entry k { add.s32 %r1 %r2; }").unwrap_err();
        assert_eq!(e.code, codes::UNEXPECTED_TOKEN);
        assert_eq!(e.message, "expected `,` or `;` after the operand, found `%r2`");
        let e = parse(".entry k { ret;").unwrap_err();
        assert_eq!(e.code, codes::UNEXPECTED_EOF);
        let e = parse(".foo").unwrap_err();
        assert_eq!(e.code, codes::UNKNOWN_DIRECTIVE);
        let e = parse(".entry k { .bar; }").unwrap_err();
        assert_eq!((e.code, e.span), (codes::UNKNOWN_DIRECTIVE, Span::new(11, 15)));
        let e = parse(".entry k { mov.u32 %r1, 99999999999999999999; }").unwrap_err();
        assert_eq!(e.code, codes::BAD_NUMBER);
        let deep = format!(".entry k {}", "{".repeat(1000));
        assert_eq!(parse(&deep).unwrap_err().code, codes::TOO_DEEP);
    }
}
