//! The PTX syntax tree: what the parser produces and the lowering consumes.
//!
//! The tree is close to the text: names are borrowed `&str` slices of the source and are not resolved,
//! nested `{ }` scopes are kept, and an instruction is a generic record (guard, opcode, dot-words in source
//! order, operands) whatever its opcode, so modifier order never matters to the parser. Every node carries
//! the byte [`Span`] it was parsed from.
//!
//! Instruction operands and dot-words live in per-function pools ([`Body::operands`], [`Body::words`])
//! and instructions refer to them by [`Pool`] ranges. That keeps the tree compact (an instruction is about a
//! hundred bytes and operands are `Copy`), which matters for parse speed: the tree of a large module would
//! otherwise be ten times the size of its text.

use reconverge_ir::{Imm, Linkage, Opcode, PerfDirective, PtrAttr, ScalarType, Span, StateSpace};
use smallvec::SmallVec;

/// A name with its span (identifiers, labels, registers; dot-words without their dot).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ident<'s> {
    /// The text as written.
    pub text: &'s str,
    /// Where.
    pub span: Span,
}

/// A whole PTX file.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module<'s> {
    /// Module-level directives in source order.
    pub directives: Vec<Directive<'s>>,
}

/// A module-level directive.
#[derive(Clone, PartialEq, Debug)]
pub enum Directive<'s> {
    /// `.version major.minor`
    Version {
        /// Major version.
        major: u32,
        /// Minor version.
        minor: u32,
        /// The directive.
        span: Span,
    },
    /// `.target sm_80, texmode_independent`
    Target {
        /// The words.
        targets: Vec<Ident<'s>>,
        /// The directive.
        span: Span,
    },
    /// `.address_size 64`
    AddressSize {
        /// 32 or 64.
        size: u32,
        /// The directive.
        span: Span,
    },
    /// `.file 1 "path", timestamp, size`
    File {
        /// The index used by `.loc`.
        index: u32,
        /// The path, without the quotes, escapes kept verbatim.
        path: &'s str,
        /// Optional numbers after the path.
        extra: Vec<u64>,
        /// The directive.
        span: Span,
    },
    /// A module-level variable.
    Var(VarDecl<'s>),
    /// A function declaration or definition.
    Func(Box<FuncDecl<'s>>),
}

/// A variable declaration (module variable, parameter, or body-local variable).
#[derive(Clone, PartialEq, Debug)]
pub struct VarDecl<'s> {
    /// `.visible`, `.extern`, `.weak`, `.common`.
    pub linkage: Option<Linkage>,
    /// The state space.
    pub space: StateSpace,
    /// `.align N` of the variable.
    pub align: Option<u32>,
    /// `.v2`/`.v4`/`.v8`.
    pub vector: Option<u8>,
    /// The element type.
    pub ty: ScalarType,
    /// `.ptr` attributes of a kernel parameter.
    pub ptr: Option<PtrAttr>,
    /// The name (`_` in call prototypes).
    pub name: Ident<'s>,
    /// Array dimensions (`None` for `[]`).
    pub dims: SmallVec<[Option<u64>; 1]>,
    /// `= initializer`
    pub init: Option<Init<'s>>,
    /// The whole declaration.
    pub span: Span,
}

/// An initializer.
#[derive(Clone, PartialEq, Debug)]
pub enum Init<'s> {
    /// One value.
    Value(InitValue<'s>),
    /// `{ a, b, ... }`
    List(Vec<Init<'s>>, Span),
}

/// One initializer value.
#[derive(Clone, PartialEq, Debug)]
pub enum InitValue<'s> {
    /// A constant.
    Imm(Imm, Span),
    /// `name`, `name+4`, `generic(name)`, `generic(name)+4`.
    Addr {
        /// The variable or function named.
        name: Ident<'s>,
        /// Written as `generic(name)`.
        generic: bool,
        /// Byte offset.
        offset: i64,
        /// The whole value.
        span: Span,
    },
}

/// `.entry` or `.func`, with or without a body.
#[derive(Clone, PartialEq, Debug)]
pub struct FuncDecl<'s> {
    /// Linkage, if written.
    pub linkage: Option<Linkage>,
    /// `.entry` or `.func`.
    pub kind: reconverge_ir::FuncKind,
    /// Return parameters.
    pub rets: Vec<VarDecl<'s>>,
    /// The name.
    pub name: Ident<'s>,
    /// Input parameters.
    pub params: Vec<VarDecl<'s>>,
    /// `.noreturn`
    pub noreturn: bool,
    /// Performance directives (`.maxntid`, `.pragma`, ...).
    pub directives: Vec<PerfDirective>,
    /// The body, `None` for a prototype.
    pub body: Option<Body<'s>>,
    /// From the first keyword to the end of the directives.
    pub header_span: Span,
}

/// A function body: its outermost scope and the pools its instructions refer to.
#[derive(Clone, PartialEq, Debug)]
pub struct Body<'s> {
    /// The outermost `{ ... }`.
    pub scope: Scope<'s>,
    /// Operands of every instruction of the body, and elements of vector and list operands.
    pub operands: Vec<OperandAst<'s>>,
    /// Dot-words of every instruction of the body (without the dot).
    pub words: Vec<Ident<'s>>,
}

/// A range of a [`Body`] pool.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Pool {
    /// First index.
    pub start: u32,
    /// Number of elements.
    pub len: u32,
}

impl<'s> Body<'s> {
    /// The operands in `r` (empty if `r` is out of bounds).
    pub fn operands(&self, r: Pool) -> &[OperandAst<'s>] {
        self.operands.get(r.start as usize..(r.start as usize).saturating_add(r.len as usize)).unwrap_or(&[])
    }

    /// The dot-words in `r` (empty if `r` is out of bounds).
    pub fn words(&self, r: Pool) -> &[Ident<'s>] {
        self.words.get(r.start as usize..(r.start as usize).saturating_add(r.len as usize)).unwrap_or(&[])
    }
}

/// A `{ ... }` block of statements.
#[derive(Clone, PartialEq, Debug)]
pub struct Scope<'s> {
    /// The statements.
    pub stmts: Vec<Stmt<'s>>,
    /// From `{` to `}`.
    pub span: Span,
}

/// A statement of a function body.
#[derive(Clone, PartialEq, Debug)]
pub enum Stmt<'s> {
    /// `.reg .b32 %r<10>, %x;`
    Reg(RegDecl<'s>),
    /// `.local`, `.shared`, `.param`, `.const`, `.global` variable.
    Var(Box<VarDecl<'s>>),
    /// `name:`
    Label(Ident<'s>),
    /// `name: .branchtargets L1, L2;`
    BranchTargets {
        /// The list's name.
        name: Ident<'s>,
        /// The labels.
        targets: Vec<Ident<'s>>,
        /// The whole statement.
        span: Span,
    },
    /// `name: .callprototype (.param .b32 _) _ (.param .b32 _);`
    CallPrototype(Box<ProtoDecl<'s>>),
    /// `.pragma "text";`
    Pragma {
        /// The text without quotes (several strings are joined with `", "`).
        text: String,
        /// The whole statement.
        span: Span,
    },
    /// `.loc file line col` (extensions such as `inlined_at` are parsed and dropped).
    Loc {
        /// File index.
        file: u32,
        /// Line.
        line: u32,
        /// Column.
        col: u32,
        /// The directive.
        span: Span,
    },
    /// A nested `{ ... }` scope.
    Scope(Scope<'s>),
    /// An instruction.
    Inst(Instruction<'s>),
}

/// A `.reg` declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct RegDecl<'s> {
    /// The register type.
    pub ty: ScalarType,
    /// `.v2`/`.v4` registers.
    pub vector: Option<u8>,
    /// The names, each possibly a range `%r<N>`.
    pub names: Vec<RegName<'s>>,
    /// The whole statement.
    pub span: Span,
}

/// One name of a `.reg` declaration.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RegName<'s> {
    /// The name or the prefix of a range.
    pub name: Ident<'s>,
    /// `Some(n)` for `%r<n>` (declares `%r0` .. `%r{n-1}`).
    pub count: Option<u32>,
    /// The name, including `<n>`.
    pub span: Span,
}

/// A `.callprototype` declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct ProtoDecl<'s> {
    /// The prototype's label.
    pub name: Ident<'s>,
    /// Return parameters.
    pub rets: Vec<VarDecl<'s>>,
    /// Input parameters.
    pub params: Vec<VarDecl<'s>>,
    /// `.noreturn`
    pub noreturn: bool,
    /// The whole statement.
    pub span: Span,
}

/// An instruction: `@!%p opcode.mod.type a, b, c;`.
#[derive(Clone, PartialEq, Debug)]
pub struct Instruction<'s> {
    /// `@%p` or `@!%p`.
    pub guard: Option<GuardAst<'s>>,
    /// The opcode word.
    pub opcode: Ident<'s>,
    /// The opcode decoded ([`Opcode::Unknown`] for words the IR does not know).
    pub op: Opcode,
    /// The dot-words after the opcode, in source order, without the dot (in [`Body::words`]).
    pub words: Pool,
    /// The operands (in [`Body::operands`]).
    pub operands: Pool,
    /// The opcode and its dot-words as written (`ld.global.nc.v4.f32`): the source text of `opcode_span`.
    pub mnemonic: &'s str,
    /// The opcode and its dot-words.
    pub opcode_span: Span,
    /// Guard to semicolon.
    pub span: Span,
}

/// A guard predicate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct GuardAst<'s> {
    /// The predicate register.
    pub reg: Ident<'s>,
    /// `@!`
    pub negated: bool,
    /// `@` to the register.
    pub span: Span,
}

/// The base of an address.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AddrBaseAst<'s> {
    /// A register or a symbol.
    Name(Ident<'s>),
    /// No base: `[4096]`.
    Abs,
}

/// An operand. Vector and list elements are in [`Body::operands`].
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum OperandAst<'s> {
    /// A register, special register or symbol, with an optional `.x`-style component (`%tid.x`).
    Name {
        /// The name.
        name: Ident<'s>,
        /// The component word (without the dot), if one follows the name directly.
        component: Option<Ident<'s>>,
    },
    /// `!%p`
    Not(Ident<'s>, Span),
    /// A constant.
    Imm(Imm, Span),
    /// `[base+offset]`
    Addr {
        /// The base.
        base: AddrBaseAst<'s>,
        /// The offset.
        offset: i64,
        /// `[` to `]`.
        span: Span,
    },
    /// `{a, b, _, 0}`
    Vector(Pool, Span),
    /// `%p|%q`, `%r|%p`, `_|%p`.
    Pair([Option<Ident<'s>>; 2], Span),
    /// `_`
    Sink(Span),
    /// `(a, b)` in `call`.
    List(Pool, Span),
    /// `[handle, {c0, c1}]`: a texture or surface access (`tex`, `tld4`, `suld`, `sust`).
    Image {
        /// The object.
        handle: Ident<'s>,
        /// The coordinate vector's items.
        coords: Pool,
        /// `[` to `]`.
        span: Span,
    },
}

impl OperandAst<'_> {
    /// The operand's span.
    pub fn span(&self) -> Span {
        match self {
            OperandAst::Name { name, component } => component.map_or(name.span, |c| name.span.to(c.span)),
            OperandAst::Not(_, span)
            | OperandAst::Imm(_, span)
            | OperandAst::Addr { span, .. }
            | OperandAst::Image { span, .. }
            | OperandAst::Vector(_, span)
            | OperandAst::Pair(_, span)
            | OperandAst::Sink(span)
            | OperandAst::List(_, span) => *span,
        }
    }
}
