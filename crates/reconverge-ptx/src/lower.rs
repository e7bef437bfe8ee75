//! Lowering: the syntax tree to a [`reconverge_ir::Module`], resolving every name.
//!
//! Per function, lowering runs in two passes over the body:
//! 1. A pre-pass assigns block ids to labels (so branches may jump forward) and ids to `.branchtargets` and
//!    `.callprototype` declarations, reporting duplicate labels.
//! 2. The main pass flattens nested `{ }` scopes into the function, declares registers and variables,
//!    builds basic blocks, and lowers instructions with their operands resolved.
//!
//! Both passes split blocks with the same `BlockCursor`: a block starts at every label, and at the first
//! instruction after a terminator (`bra`, `brx`, `ret`, `exit`, `trap`, guarded or not) when no label
//! follows. So block ids are in layout order.
//!
//! # Names and scopes
//! A name is looked up innermost scope first, then special registers, the function's parameters, labels,
//! module variables and functions. A register or variable whose name is already taken in the function
//! (by a declaration in another scope, a parameter, a label, or a module variable or function declared
//! before) is renamed `name$N`, with `N` counting 1, 2, ... per name (skipping taken names); a second
//! declaration in the same scope is an error. Renamed names are unique in the function, so printing the flattened function at top level
//! and parsing it again gives the same IR.
//!
//! All errors of all functions are collected; lowering does not stop at the first.

use crate::ast::{self, AddrBaseAst, Init, InitValue as AstInitValue, OperandAst, Stmt};
use crate::diag::{codes, Diagnostic, Diagnostics, ParseErrors};
use crate::fxhash::{FxHashMap, FxHashSet};
use reconverge_ir::{
    AddrBase, Address, Block, BlockId, BranchTargets, CallPrototype, Dim, EntityRef, FileEntry, FuncId, FuncKind,
    Function, GlobalId, Guard, InitValue, Initializer, Inst, InstSpans, Item, LocalId, Modifier, Module, Opcode,
    Operand, ProtoId, RegDecl, RegId, ScalarType, SecondaryMap, Span, SpecialReg, SpecialRegKind, SrcLoc, Symbol,
    TargetsId, Variable,
};
use smallvec::SmallVec;
use std::borrow::Cow;

/// The most registers one function may declare (bounds memory on hostile input).
pub const MAX_REGS: usize = 1 << 20;

/// Lowers a parsed module to IR, or returns every error found.
pub fn lower_module(ast: &ast::Module<'_>) -> Result<Module, ParseErrors> {
    let mut l = Lowerer::new();
    for d in &ast.directives {
        l.directive(d);
    }
    l.finish()
}

impl<'s> Lowerer<'s> {
    /// A lowerer for an empty module.
    pub fn new() -> Self {
        Lowerer {
            m: Module { address_size: 64, ..Module::default() },
            globals: FxHashMap::default(),
            funcs: FxHashMap::default(),
            sigs: FxHashMap::default(),
            percent_names: false,
            words: FxHashMap::default(),
            diags: Diagnostics::default(),
        }
    }

    /// The module, or the errors found.
    pub fn finish(self) -> Result<Module, ParseErrors> {
        if self.diags.is_empty() {
            Ok(self.m)
        } else {
            Err(self.diags.into_errors())
        }
    }
}

impl Default for Lowerer<'_> {
    fn default() -> Self {
        Self::new()
    }
}

/// Splits a function body into basic blocks; shared by both passes so that they agree on block ids.
#[derive(Default)]
struct BlockCursor {
    /// Whether the last block can still take instructions (no terminator since it started).
    open: bool,
    /// Blocks created so far.
    count: usize,
}

impl BlockCursor {
    /// A label starts a new block; returns its index.
    fn label(&mut self) -> usize {
        self.open = true;
        self.count += 1;
        self.count - 1
    }

    /// An instruction: returns the index of a new unlabelled block if it needs one.
    fn inst(&mut self, terminator: bool) -> Option<usize> {
        let new = if self.open {
            None
        } else {
            self.count += 1;
            self.open = true;
            Some(self.count - 1)
        };
        if terminator {
            self.open = false;
        }
        new
    }
}

/// Lowers a module directive by directive (see [`crate::parser::parse_directives`]): module variables and
/// functions are visible to the directives after them, as PTX requires.
pub struct Lowerer<'s> {
    m: Module,
    globals: FxHashMap<&'s str, (GlobalId, Span)>,
    funcs: FxHashMap<&'s str, (FuncId, Span)>,
    /// (parameters, return values) of every declared function, for checking calls.
    sigs: FxHashMap<FuncId, (usize, usize)>,
    /// Whether any module variable or function name starts with `%` (register names can clash with them).
    percent_names: bool,
    /// Decoded modifiers and types by mnemonic (`ld.global.nc.v4.f32`): decoding is a long string match
    /// per word, and a module uses few distinct mnemonics.
    words: FxHashMap<&'s str, Decoded>,
    diags: Diagnostics,
}

/// The decoded dot-words of a mnemonic.
struct Decoded {
    mods: SmallVec<[Modifier; 4]>,
    types: SmallVec<[ScalarType; 2]>,
}

fn duplicate_symbol(name: &str, span: Span, first: Span) -> Diagnostic {
    Diagnostic::new(codes::DUPLICATE_SYMBOL, format!("`{name}` is declared more than once"), span)
        .with_label(first, "first declared here")
}

fn variable(v: &ast::VarDecl<'_>, name: String, init: Option<Initializer>) -> Variable {
    Variable {
        name,
        space: v.space,
        linkage: v.linkage,
        align: v.align,
        ty: v.ty,
        vector: v.vector,
        dims: v.dims.clone(),
        ptr: v.ptr,
        init,
    }
}

/// Lowers an initializer, resolving names with `resolve`.
fn lower_init<'s>(
    init: &Init<'s>,
    resolve: &mut dyn FnMut(ast::Ident<'s>) -> Result<Symbol, Diagnostic>,
) -> Result<Initializer, Diagnostic> {
    Ok(match init {
        Init::List(items, _) => {
            Initializer::List(items.iter().map(|i| lower_init(i, resolve)).collect::<Result<_, _>>()?)
        }
        Init::Value(AstInitValue::Imm(imm, _)) => Initializer::Value(InitValue::Imm(*imm)),
        Init::Value(AstInitValue::Addr { name, generic, offset, .. }) => {
            Initializer::Value(InitValue::Addr { sym: resolve(*name)?, generic: *generic, offset: *offset })
        }
    })
}

fn undefined_symbol(name: ast::Ident<'_>) -> Diagnostic {
    Diagnostic::new(codes::UNDEFINED_SYMBOL, format!("undefined symbol `{}`", name.text), name.span)
}

impl<'s> Lowerer<'s> {
    /// Lowers the next directive of the module.
    pub fn directive(&mut self, d: &ast::Directive<'s>) {
        match d {
            ast::Directive::Version { major, minor, .. } => self.m.version = (*major, *minor),
            ast::Directive::Target { targets, .. } => {
                self.m.target = targets.iter().map(|t| t.text.to_string()).collect();
            }
            ast::Directive::AddressSize { size, .. } => self.m.address_size = *size,
            ast::Directive::File { index, path, extra, .. } => {
                self.m.files.push(FileEntry { index: *index, path: path.to_string(), extra: extra.clone() });
            }
            ast::Directive::Var(v) => self.global(v),
            ast::Directive::Func(f) => self.function(f),
        }
    }

    fn first_decl(&self, name: &str) -> Option<Span> {
        self.globals.get(name).map(|g| g.1).or_else(|| self.funcs.get(name).map(|f| f.1))
    }

    fn global(&mut self, v: &ast::VarDecl<'s>) {
        if let Some(first) = self.first_decl(v.name.text) {
            self.diags.push(duplicate_symbol(v.name.text, v.name.span, first));
            return;
        }
        let init = match &v.init {
            None => None,
            Some(i) => {
                let (globals, funcs) = (&self.globals, &self.funcs);
                let mut resolve = |n: ast::Ident<'s>| {
                    globals
                        .get(n.text)
                        .map(|g| Symbol::Global(g.0))
                        .or_else(|| funcs.get(n.text).map(|f| Symbol::Func(f.0)))
                        .ok_or_else(|| undefined_symbol(n))
                };
                match lower_init(i, &mut resolve) {
                    Ok(i) => Some(i),
                    Err(d) => {
                        self.diags.push(d);
                        None
                    }
                }
            }
        };
        let id = self.m.globals.push(variable(v, v.name.text.to_string(), init));
        self.m.spans.globals[id] = v.span;
        self.m.items.push(Item::Global(id));
        self.globals.insert(v.name.text, (id, v.name.span));
        self.percent_names |= v.name.text.starts_with('%');
    }

    fn params(&mut self, ps: &[ast::VarDecl<'s>]) -> Vec<Variable> {
        ps.iter().map(|p| variable(p, p.name.text.to_string(), None)).collect()
    }

    fn function(&mut self, fd: &ast::FuncDecl<'s>) {
        let name = fd.name.text;
        if let Some(g) = self.globals.get(name) {
            self.diags.push(duplicate_symbol(name, fd.name.span, g.1));
            return;
        }
        let rets = self.params(&fd.rets);
        let params = self.params(&fd.params);
        let id = match self.funcs.get(name).copied() {
            Some((id, first)) => {
                if fd.body.is_none() {
                    // A repeated prototype: the first one stands.
                    return;
                }
                if self.m.functions[id].has_body {
                    self.diags.push(
                        Diagnostic::new(
                            codes::DUPLICATE_SYMBOL,
                            format!("function `{name}` is defined more than once"),
                            fd.name.span,
                        )
                        .with_label(first, "first defined here"),
                    );
                    return;
                }
                id
            }
            None => {
                let id = self.m.functions.push(Function::new(name, fd.kind));
                self.funcs.insert(name, (id, fd.name.span));
                self.percent_names |= name.starts_with('%');
                id
            }
        };
        {
            let f = &mut self.m.functions[id];
            f.kind = fd.kind;
            f.linkage = fd.linkage;
            f.noreturn = fd.noreturn;
            self.sigs.insert(id, (params.len(), rets.len()));
            f.rets = rets;
            f.params = params;
            f.directives = fd.directives.clone();
            f.spans.header = fd.header_span;
        }
        self.m.spans.functions[id] = fd.header_span;
        let Some(body) = &fd.body else {
            self.m.items.push(Item::FuncDecl(id));
            return;
        };
        self.m.items.push(Item::FuncDef(id));
        let mut f = std::mem::replace(&mut self.m.functions[id], Function::new("", FuncKind::Func));
        f.has_body = true;
        let mut cx = FuncLowerer {
            globals: &self.globals,
            funcs: &self.funcs,
            sigs: &self.sigs,
            f,
            scopes: Vec::new(),
            used: FxHashSet::default(),
            suffixes: FxHashMap::default(),
            ranges: Vec::new(),
            params: FxHashMap::default(),
            labels: FxHashMap::default(),
            outer_percent: self.percent_names,
            words: &mut self.words,
            body,
            cursor: BlockCursor::default(),
            loc: None,
            pending_pragmas: Vec::new(),
            n_targets: 0,
            n_protos: 0,
            n_insts: 0,
            n_regs: 0,
            block_sizes: Vec::new(),
            diags: &mut self.diags,
        };
        cx.lower(fd, &body.scope);
        self.m.functions[id] = cx.f;
    }
}

#[derive(Clone, Copy)]
enum Binding {
    Reg(RegId),
    Local(LocalId),
}

#[derive(Clone, Copy)]
enum Resolved {
    Reg(RegId),
    Special(SpecialRegKind),
    Sym(Symbol),
}

/// How an undefined name at this operand position is reported.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Plain,
    Label,
    Callee,
}

/// A name split as `prefix` + canonical decimal `index` (`%rd12` is `("%rd", 12)`): how register ranges
/// are looked up. `None` when the name does not end in digits, or the digits have a leading zero.
#[derive(Clone, Copy)]
struct Split<'n> {
    prefix: &'n str,
    key: u64,
    index: u32,
}

/// Packs the first 7 bytes of `prefix` and its length into a `u64`: a one-compare equality pre-check.
fn prefix_key(prefix: &str) -> u64 {
    let b = prefix.as_bytes();
    let mut k = [0u8; 8];
    let n = b.len().min(7);
    k[..n].copy_from_slice(&b[..n]);
    k[7] = b.len().min(255) as u8;
    u64::from_le_bytes(k)
}

fn split_name(name: &str) -> Option<Split<'_>> {
    let b = name.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 9 || digits == b.len() {
        return None;
    }
    let d = &b[b.len() - digits..];
    if digits > 1 && d[0] == b'0' {
        return None;
    }
    let index = d.iter().fold(0u32, |acc, c| acc * 10 + u32::from(c - b'0'));
    let prefix = name.get(..b.len() - digits)?;
    Some(Split { prefix, key: prefix_key(prefix), index })
}

/// Appends the decimal digits of `n`.
fn push_decimal(s: &mut String, mut n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &c in &buf[i..] {
        s.push(c as char);
    }
}

/// Registers `prefix0` .. `prefix{count-1}` declared together by `.reg .t prefix<count>;` and not renamed;
/// the prefix never ends in a digit (such ranges are declared name by name).
///
/// Kept as one entry instead of `count` map entries: NVRTC declares about one register per instruction.
#[derive(Clone, Copy)]
struct RegRange<'s> {
    prefix: &'s str,
    /// [`prefix_key`] of the prefix.
    key: u64,
    first: u32,
    count: u32,
    span: Span,
}

impl RegRange<'_> {
    /// The index of the name split as `split` in the range: it is `prefix` followed by a canonical decimal
    /// number below `count`. (Range prefixes never end in a digit, so the split is unambiguous.)
    fn index_of(&self, split: Option<Split<'_>>) -> Option<u32> {
        let s = split?;
        (s.key == self.key && s.prefix == self.prefix && s.index < self.count).then_some(s.index)
    }
}

/// The names declared in one `{ }` scope.
#[derive(Default)]
struct ScopeNames<'s> {
    /// Source name to binding and declaration span.
    singles: FxHashMap<Cow<'s, str>, (Binding, Span)>,
    /// Register ranges.
    ranges: Vec<RegRange<'s>>,
}

impl ScopeNames<'_> {
    fn get(&self, name: &str, split: Option<Split<'_>>) -> Option<(Binding, Span)> {
        // Ranges first: most operands are range registers, and a scope's ranges and singles are disjoint.
        if split.is_some() {
            for r in &self.ranges {
                if let Some(i) = r.index_of(split) {
                    return Some((Binding::Reg(RegId::new((r.first + i) as usize)), r.span));
                }
            }
        }
        if self.singles.is_empty() {
            return None;
        }
        self.singles.get(name).copied()
    }
}

struct FuncLowerer<'a, 's> {
    globals: &'a FxHashMap<&'s str, (GlobalId, Span)>,
    funcs: &'a FxHashMap<&'s str, (FuncId, Span)>,
    sigs: &'a FxHashMap<FuncId, (usize, usize)>,
    f: Function,
    /// The open scopes, innermost last.
    scopes: Vec<ScopeNames<'s>>,
    /// IR names of the registers and variables declared one by one (not in a [`RegRange`]).
    used: FxHashSet<Cow<'s, str>>,
    /// The last `$N` suffix given to each renamed name.
    suffixes: FxHashMap<Cow<'s, str>, u32>,
    /// Every register range of the function (also of closed scopes): their names are taken too.
    ranges: Vec<RegRange<'s>>,
    params: FxHashMap<&'s str, (Symbol, Span)>,
    labels: FxHashMap<&'s str, (Symbol, Span)>,
    /// Whether a parameter, label, module variable or function name starts with `%`.
    outer_percent: bool,
    words: &'a mut FxHashMap<&'s str, Decoded>,
    /// The pools of the body being lowered.
    body: &'a ast::Body<'s>,
    cursor: BlockCursor,
    loc: Option<SrcLoc>,
    pending_pragmas: Vec<String>,
    n_targets: usize,
    n_protos: usize,
    /// Instructions counted by the pre-pass.
    n_insts: usize,
    /// Registers counted by the pre-pass.
    n_regs: usize,
    /// Instructions per block, counted by the pre-pass (to size the blocks' vectors).
    block_sizes: Vec<u32>,
    diags: &'a mut Diagnostics,
}

impl<'s> FuncLowerer<'_, 's> {
    /// Checks a direct call's argument and return-value counts against the callee's declaration.
    fn check_call(&mut self, operands: &[Operand], span: Span) {
        let Some(callee) = operands.iter().find_map(|o| match o {
            Operand::Sym(Symbol::Func(id)) => Some(*id),
            _ => None,
        }) else {
            return;
        };
        let Some(&(nparams, nrets)) = self.sigs.get(&callee) else { return };
        let pos = operands.iter().position(|o| matches!(o, Operand::Sym(Symbol::Func(_)))).unwrap_or(0);
        let count = |o: Option<&Operand>| match o {
            Some(Operand::List(items)) => items.len(),
            _ => 0,
        };
        let rets = if pos > 0 { count(operands.get(pos - 1)) } else { 0 };
        let args = count(operands.get(pos + 1));
        if args != nparams || rets != nrets {
            let name = self.funcs.iter().find(|(_, v)| v.0 == callee).map(|(k, _)| *k).unwrap_or("?");
            self.diags.push(Diagnostic::new(
                codes::OPERAND_COUNT,
                format!(
                    "call to `{name}` passes {args} argument{} and {rets} return value{}; `{name}` takes {nparams} and \
                     returns {nrets}",
                    if args == 1 { "" } else { "s" },
                    if rets == 1 { "" } else { "s" }
                ),
                span,
            ));
        }
    }

    fn lower(&mut self, fd: &ast::FuncDecl<'s>, body: &ast::Scope<'s>) {
        for (i, p) in fd.params.iter().enumerate() {
            self.param(p, Symbol::Param(i as u32));
        }
        for (i, p) in fd.rets.iter().enumerate() {
            self.param(p, Symbol::Ret(i as u32));
        }
        self.prepass(&body.stmts);
        let (insts, blocks) = (self.n_insts, self.cursor.count);
        self.f.insts.reserve(insts);
        self.f.spans.insts = SecondaryMap::with_capacity(insts);
        self.f.blocks.reserve(blocks);
        self.f.layout.reserve(blocks);
        // Sized up front, but not beyond what a normal function needs: a hostile `%r<1000000>` grows it.
        let regs = self.n_regs.min(1 << 16);
        self.f.regs.reserve(regs);
        self.f.spans.regs = SecondaryMap::with_capacity(regs);
        self.outer_percent |= self.params.keys().chain(self.labels.keys()).any(|n| n.starts_with('%'));
        self.cursor = BlockCursor::default();
        self.scope(&body.stmts);
    }

    fn param(&mut self, p: &ast::VarDecl<'s>, sym: Symbol) {
        if p.name.text == "_" {
            return;
        }
        if let Some(first) = self.params.get(p.name.text) {
            self.diags.push(duplicate_symbol(p.name.text, p.name.span, first.1));
        } else {
            self.params.insert(p.name.text, (sym, p.name.span));
        }
    }

    // ---- pass 1 -------------------------------------------------------------------------------------

    fn prepass(&mut self, stmts: &[Stmt<'s>]) {
        for s in stmts {
            let (name, sym) = match s {
                Stmt::Label(name) => {
                    self.block_sizes.push(0);
                    (*name, Symbol::Label(BlockId::new(self.cursor.label())))
                }
                Stmt::Reg(r) => {
                    for n in &r.names {
                        self.n_regs = self.n_regs.saturating_add(n.count.unwrap_or(1) as usize);
                    }
                    continue;
                }
                Stmt::BranchTargets { name, .. } => {
                    self.n_targets += 1;
                    (*name, Symbol::Targets(TargetsId::new(self.n_targets - 1)))
                }
                Stmt::CallPrototype(p) => {
                    self.n_protos += 1;
                    (p.name, Symbol::Proto(ProtoId::new(self.n_protos - 1)))
                }
                Stmt::Inst(i) => {
                    self.n_insts += 1;
                    if self.cursor.inst(i.op.is_terminator()).is_some() {
                        self.block_sizes.push(0);
                    }
                    if let Some(n) = self.block_sizes.last_mut() {
                        *n += 1;
                    }
                    continue;
                }
                Stmt::Scope(sc) => {
                    self.prepass(&sc.stmts);
                    continue;
                }
                _ => continue,
            };
            if SpecialRegKind::from_word(name.text).is_some() {
                // A label `%tid` would make `%tid` an operand that names a block in the printed module.
                self.diags.push(Diagnostic::new(
                    codes::BAD_DECL,
                    format!("`{}` is a special register and cannot be a label", name.text),
                    name.span,
                ));
            } else if let Some(first) = self.labels.get(name.text) {
                self.diags.push(
                    Diagnostic::new(
                        codes::DUPLICATE_LABEL,
                        format!("label `{}` is defined more than once", name.text),
                        name.span,
                    )
                    .with_label(first.1, "first defined here"),
                );
            } else {
                self.labels.insert(name.text, (sym, name.span));
            }
        }
    }

    // ---- pass 2 -------------------------------------------------------------------------------------

    fn scope(&mut self, stmts: &[Stmt<'s>]) {
        self.scopes.push(ScopeNames::default());
        for s in stmts {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt<'s>) {
        match s {
            Stmt::Reg(r) => self.reg_decl(r),
            Stmt::Var(v) => self.local(v),
            Stmt::Label(name) => {
                self.cursor.label();
                let insts = Vec::with_capacity(self.block_size(self.f.blocks.len()));
                let b = self.f.blocks.push(Block { label: Some(name.text.to_string()), insts });
                self.f.layout.push(b);
                self.f.spans.blocks[b] = name.span;
            }
            Stmt::BranchTargets { name, targets, .. } => {
                let mut blocks = Vec::with_capacity(targets.len());
                for t in targets {
                    match self.labels.get(t.text) {
                        Some((Symbol::Label(b), _)) => blocks.push(*b),
                        _ => self.diags.push(undefined_label(*t)),
                    }
                }
                self.f.targets.push(BranchTargets { name: name.text.to_string(), targets: blocks });
            }
            Stmt::CallPrototype(p) => {
                let vars =
                    |ps: &[ast::VarDecl<'s>]| ps.iter().map(|v| variable(v, v.name.text.to_string(), None)).collect();
                let proto = CallPrototype {
                    name: p.name.text.to_string(),
                    rets: vars(&p.rets),
                    params: vars(&p.params),
                    noreturn: p.noreturn,
                };
                self.f.protos.push(proto);
            }
            Stmt::Pragma { text, .. } => self.pending_pragmas.push(text.clone()),
            Stmt::Loc { file, line, col, .. } => self.loc = Some(SrcLoc { file: *file, line: *line, col: *col }),
            Stmt::Scope(sc) => self.scope(&sc.stmts),
            Stmt::Inst(i) => self.inst(i),
        }
    }

    /// The number of instructions of block `index`, as counted by the pre-pass.
    fn block_size(&self, index: usize) -> usize {
        self.block_sizes.get(index).map_or(0, |&n| n as usize)
    }

    /// Whether `name` is already used by anything a body declaration could clash with after flattening.
    fn taken(&self, name: &str) -> bool {
        self.used.contains(name)
            || {
                let split = split_name(name);
                self.ranges.iter().any(|r| r.index_of(split).is_some())
            }
            || ((self.outer_percent || !name.starts_with('%'))
                && (self.params.contains_key(name)
                    || self.labels.contains_key(name)
                    || self.globals.contains_key(name)
                    || self.funcs.contains_key(name)))
    }

    /// The declaration of `name` in the innermost scope, if there is one.
    fn in_scope(&self, name: &str) -> Option<Span> {
        self.scopes.last().and_then(|s| s.get(name, split_name(name))).map(|(_, span)| span)
    }

    fn duplicate(&mut self, name: &str, span: Span, first: Span, register: bool) {
        let (code, what) =
            if register { (codes::DUPLICATE_REGISTER, "register") } else { (codes::DUPLICATE_SYMBOL, "variable") };
        self.diags.push(
            Diagnostic::new(code, format!("{what} `{name}` is declared more than once in this scope"), span)
                .with_label(first, "first declared here"),
        );
    }

    /// Declares `name` in the innermost scope; returns the IR name (renamed on a clash), or `None` after
    /// reporting a duplicate in the same scope.
    fn declare(&mut self, name: Cow<'s, str>, span: Span, register: bool) -> Option<(Cow<'s, str>, Cow<'s, str>)> {
        if let Some(first) = self.in_scope(&name) {
            self.duplicate(&name, span, first, register);
            return None;
        }
        let ir_name = if self.taken(&name) {
            // Continue from the last suffix given to this name: renaming stays linear when many call
            // scopes declare `param0`.
            let mut n = self.suffixes.get(name.as_ref()).copied().unwrap_or(0);
            loop {
                n += 1;
                let cand = format!("{name}${n}");
                if !self.taken(&cand) {
                    self.suffixes.insert(name.clone(), n);
                    break Cow::Owned(cand);
                }
            }
        } else {
            name.clone()
        };
        self.used.insert(ir_name.clone());
        Some((name, ir_name))
    }

    fn bind(&mut self, name: Cow<'s, str>, b: Binding, span: Span) {
        if let Some(s) = self.scopes.last_mut() {
            s.singles.insert(name, (b, span));
        }
    }

    fn reg_decl(&mut self, r: &ast::RegDecl<'s>) {
        for n in &r.names {
            match n.count {
                None => self.declare_reg(Cow::Borrowed(n.name.text), r, n.span),
                Some(c) => {
                    if self.f.regs.len() + c as usize > MAX_REGS {
                        self.diags.push(Diagnostic::new(
                            codes::BAD_DECL,
                            format!("too many registers (a function may declare at most {MAX_REGS})"),
                            n.span,
                        ));
                        return;
                    }
                    self.reg_range(n.name.text, c, r, n.span);
                }
            }
        }
    }

    /// Declares one register.
    fn declare_reg(&mut self, name: Cow<'s, str>, r: &ast::RegDecl<'s>, span: Span) {
        if SpecialRegKind::from_word(&name).is_some() {
            // `%tid` declared as a register would shadow the special register in some scopes only, which
            // the flat IR cannot express (and ptxas rejects).
            self.diags.push(Diagnostic::new(
                codes::BAD_DECL,
                format!("`{name}` is a special register and cannot be declared as a register"),
                span,
            ));
            return;
        }
        let Some((src, ir)) = self.declare(name, span, true) else { return };
        let id = self.f.regs.push(RegDecl { name: ir.into_owned(), ty: r.ty, vector: r.vector });
        self.f.spans.regs[id] = span;
        self.bind(src, Binding::Reg(id), span);
    }

    /// Whether a range `prefix<count>` can be declared without checking each name: no declared name,
    /// range or outer name can be one of its names. Conservative: `false` sends the range to the
    /// one-by-one path, which decides exactly.
    fn range_is_fresh(&self, prefix: &str, key: u64, count: u32) -> bool {
        if prefix.is_empty() || prefix.ends_with(|c: char| c.is_ascii_digit()) {
            return false;
        }
        // Outer names (parameters, labels, module variables, functions) rarely start with `%`.
        if !prefix.starts_with('%') || self.outer_percent {
            return false;
        }
        let hits = |n: &str| split_name(n).is_some_and(|s| s.key == key && s.prefix == prefix && s.index < count);
        if self.used.iter().any(|n| hits(n)) {
            return false;
        }
        if self.scopes.last().is_some_and(|s| s.singles.keys().any(|n| hits(n))) {
            return false;
        }
        // Another range with the same prefix, or one whose prefix extends ours with digits.
        !self
            .ranges
            .iter()
            .any(|r| r.prefix.starts_with(prefix) && r.prefix[prefix.len()..].bytes().all(|c| c.is_ascii_digit()))
    }

    /// Declares `prefix0` .. `prefix{count-1}`: as one [`RegRange`] when no name clashes, else one by one.
    fn reg_range(&mut self, prefix: &'s str, count: u32, r: &ast::RegDecl<'s>, span: Span) {
        let key = prefix_key(prefix);
        if !self.range_is_fresh(prefix, key, count) {
            for i in 0..count {
                let mut name = String::with_capacity(prefix.len() + 4);
                name.push_str(prefix);
                push_decimal(&mut name, i);
                self.declare_reg(Cow::Owned(name), r, span);
            }
            return;
        }
        let range = RegRange { prefix, key, first: self.f.regs.len() as u32, count, span };
        for i in 0..count {
            let mut name = String::with_capacity(prefix.len() + 4);
            name.push_str(prefix);
            push_decimal(&mut name, i);
            let id = self.f.regs.push(RegDecl { name, ty: r.ty, vector: r.vector });
            self.f.spans.regs[id] = span;
        }
        self.ranges.push(range);
        if let Some(s) = self.scopes.last_mut() {
            s.ranges.push(range);
        }
    }

    fn local(&mut self, v: &ast::VarDecl<'s>) {
        let Some((src, ir)) = self.declare(Cow::Borrowed(v.name.text), v.name.span, false) else { return };
        let init = match &v.init {
            None => None,
            Some(i) => {
                let mut resolve = |n: ast::Ident<'s>| match self.resolve(n.text) {
                    Some(Resolved::Sym(s)) => Ok(s),
                    _ => Err(undefined_symbol(n)),
                };
                match lower_init(i, &mut resolve) {
                    Ok(i) => Some(i),
                    Err(d) => {
                        self.diags.push(d);
                        None
                    }
                }
            }
        };
        let id = self.f.locals.push(variable(v, ir.into_owned(), init));
        self.f.spans.locals[id] = v.span;
        self.bind(src, Binding::Local(id), v.name.span);
    }

    fn resolve(&self, name: &str) -> Option<Resolved> {
        let split = split_name(name);
        for s in self.scopes.iter().rev() {
            if let Some((b, _)) = s.get(name, split) {
                return Some(match b {
                    Binding::Reg(r) => Resolved::Reg(r),
                    Binding::Local(l) => Resolved::Sym(Symbol::Local(l)),
                });
            }
        }
        if name.starts_with('%') || name == "WARP_SZ" {
            if let Some(k) = SpecialRegKind::from_word(name) {
                return Some(Resolved::Special(k));
            }
        }
        if let Some((s, _)) = self.params.get(name).or_else(|| self.labels.get(name)) {
            return Some(Resolved::Sym(*s));
        }
        if let Some((g, _)) = self.globals.get(name) {
            return Some(Resolved::Sym(Symbol::Global(*g)));
        }
        self.funcs.get(name).map(|(f, _)| Resolved::Sym(Symbol::Func(*f)))
    }

    fn undefined(&self, name: ast::Ident<'_>, ctx: Ctx) -> Diagnostic {
        match ctx {
            Ctx::Label => undefined_label(name),
            Ctx::Callee => Diagnostic::new(codes::UNDEFINED_FUNCTION, format!("undefined function `{}`", name.text), name.span)
                .with_help("PTX requires a function to be declared before it is called; add a prototype such as `.func name(...);` above"),
            Ctx::Plain if name.text.starts_with('%') => {
                Diagnostic::new(codes::UNDECLARED_REGISTER, format!("undeclared register `{}`", name.text), name.span)
                    .with_help("declare it with `.reg` (for example `.reg .b32 %r<10>;`) in this scope or an enclosing one")
            }
            Ctx::Plain => undefined_symbol(name),
        }
    }

    /// A name that must be a register.
    fn reg(&self, name: ast::Ident<'_>, what: &str) -> Result<RegId, Diagnostic> {
        match self.resolve(name.text) {
            Some(Resolved::Reg(r)) => Ok(r),
            None => Err(self.undefined(name, Ctx::Plain)),
            Some(_) => Err(Diagnostic::new(
                codes::BAD_OPERAND,
                format!("{what} must be a register, found `{}`", name.text),
                name.span,
            )),
        }
    }

    fn operand(&self, o: &OperandAst<'s>, ctx: Ctx) -> Result<Operand, Diagnostic> {
        Ok(match o {
            OperandAst::Name { name, component } => {
                let span = o.span();
                let r = self.resolve(name.text).ok_or_else(|| self.undefined(*name, ctx))?;
                match (r, component) {
                    (Resolved::Special(kind), c) => Operand::Special(special(kind, *name, *c, span)?),
                    (_, Some(c)) => {
                        return Err(Diagnostic::new(
                            codes::BAD_OPERAND,
                            format!("unexpected component `.{}` on `{}`", c.text, name.text),
                            c.span,
                        )
                        .with_help(
                            "only the special registers %tid, %ntid, %ctaid and %nctaid have .x/.y/.z components",
                        ))
                    }
                    (Resolved::Reg(r), None) => Operand::Reg(r),
                    (Resolved::Sym(s), None) => Operand::Sym(s),
                }
            }
            OperandAst::Not(name, _) => Operand::NotReg(self.reg(*name, "the operand of `!`")?),
            OperandAst::Imm(i, _) => Operand::Imm(*i),
            OperandAst::Addr { base, offset, .. } => {
                let base = match base {
                    AddrBaseAst::Abs => AddrBase::Abs,
                    AddrBaseAst::Name(n) => match self.resolve(n.text) {
                        Some(Resolved::Reg(r)) => AddrBase::Reg(r),
                        Some(Resolved::Sym(
                            s @ (Symbol::Global(_)
                            | Symbol::Local(_)
                            | Symbol::Param(_)
                            | Symbol::Ret(_)
                            | Symbol::Func(_)),
                        )) => AddrBase::Sym(s),
                        None => return Err(self.undefined(*n, Ctx::Plain)),
                        Some(_) => {
                            return Err(Diagnostic::new(
                                codes::BAD_OPERAND,
                                format!("`{}` cannot be used as an address", n.text),
                                n.span,
                            ))
                        }
                    },
                };
                Operand::Addr(Address { base, offset: *offset })
            }
            OperandAst::Vector(items, _) => Operand::Vector(
                self.body.operands(*items).iter().map(|i| self.operand(i, Ctx::Plain)).collect::<Result<_, _>>()?,
            ),
            OperandAst::Image { handle, coords, .. } => {
                let handle = match self.resolve(handle.text) {
                    Some(Resolved::Reg(r)) => Operand::Reg(r),
                    Some(Resolved::Sym(s @ Symbol::Global(_))) => Operand::Sym(s),
                    None => return Err(self.undefined(*handle, Ctx::Plain)),
                    Some(_) => {
                        return Err(Diagnostic::new(
                            codes::BAD_OPERAND,
                            format!("`{}` cannot be a texture or surface", handle.text),
                            handle.span,
                        ))
                    }
                };
                let coords = self
                    .body
                    .operands(*coords)
                    .iter()
                    .map(|i| self.operand(i, Ctx::Plain))
                    .collect::<Result<_, _>>()?;
                Operand::Image { handle: Box::new(handle), coords }
            }
            OperandAst::List(items, _) => Operand::List(
                self.body.operands(*items).iter().map(|i| self.operand(i, Ctx::Plain)).collect::<Result<_, _>>()?,
            ),
            OperandAst::Pair(regs, _) => {
                let mut out = [None, None];
                for (o, r) in out.iter_mut().zip(regs) {
                    if let Some(r) = r {
                        *o = Some(self.reg(*r, "each half of `a|b`")?);
                    }
                }
                Operand::Pair(out)
            }
            OperandAst::Sink(_) => Operand::Sink,
        })
    }

    fn inst(&mut self, i: &ast::Instruction<'s>) {
        let guard = match &i.guard {
            None => None,
            Some(g) => match self.reg(g.reg, "a guard") {
                Ok(r) if self.f.regs[r].ty == ScalarType::Pred => Some(Guard { reg: r, negated: g.negated }),
                Ok(r) => {
                    let decl = &self.f.regs[r];
                    let d = Diagnostic::new(
                        codes::BAD_GUARD,
                        format!("guard `{}` is not a .pred register (it is .{})", g.reg.text, decl.ty),
                        g.reg.span,
                    )
                    .with_label(self.f.spans.regs[r], "declared here")
                    .with_help("guards take a predicate: `setp` one first, e.g. `setp.ne.b32 %p1, %r1, 0;`");
                    self.diags.push(d);
                    None
                }
                Err(d) => {
                    self.diags.push(d);
                    None
                }
            },
        };
        let body = self.body;
        let decoded = self.words.entry(i.mnemonic).or_insert_with(|| {
            let mut d = Decoded { mods: SmallVec::new(), types: SmallVec::new() };
            for w in body.words(i.words) {
                match ScalarType::from_word(w.text) {
                    Some(t) => d.types.push(t),
                    None => d.mods.push(Modifier::from_word(w.text)),
                }
            }
            d
        });
        let (mods, types) = (decoded.mods.clone(), decoded.types.clone());
        let callee = if i.op == Opcode::Call {
            body.operands(i.operands).iter().position(|o| matches!(o, OperandAst::Name { .. }))
        } else {
            None
        };
        let ops = body.operands(i.operands);
        let mut operands: SmallVec<[Operand; 4]> = SmallVec::with_capacity(ops.len());
        let mut op_spans: SmallVec<[Span; 4]> = SmallVec::with_capacity(ops.len());
        for (n, o) in ops.iter().enumerate() {
            let ctx = if Some(n) == callee {
                Ctx::Callee
            } else if (i.op == Opcode::Bra && n == 0) || (i.op == Opcode::Brx && n == 1) {
                Ctx::Label
            } else {
                Ctx::Plain
            };
            let lowered = self.operand(o, ctx).unwrap_or_else(|d| {
                self.diags.push(d);
                Operand::Sink
            });
            operands.push(lowered);
            op_spans.push(o.span());
        }
        if i.op == Opcode::Call {
            self.check_call(&operands, i.span);
        } else {
            if let Some(range) = i.op.operand_count() {
                let n = ops.len();
                if !range.contains(&n) {
                    let want = if range.start() == range.end() {
                        format!("{}", range.start())
                    } else {
                        format!("{} to {}", range.start(), range.end())
                    };
                    let plural = if *range.end() == 1 { "" } else { "s" };
                    self.diags.push(Diagnostic::new(
                        codes::OPERAND_COUNT,
                        format!("`{}` expects {want} operand{plural}, found {n}", i.opcode.text),
                        i.span,
                    ));
                }
            }
        }
        if let Some(_new) = self.cursor.inst(i.op.is_terminator()) {
            let insts = Vec::with_capacity(self.block_size(self.f.blocks.len()));
            let b = self.f.blocks.push(Block { label: None, insts });
            self.f.layout.push(b);
            self.f.spans.blocks[b] = i.span;
        }
        let id = self.f.insts.push(Inst { guard, opcode: i.op.clone(), mods, types, operands, loc: self.loc });
        self.f.spans.insts[id] = InstSpans { whole: i.span, opcode: i.opcode_span, operands: op_spans };
        if let Some(&b) = self.f.layout.last() {
            self.f.blocks[b].insts.push(id);
        }
        for p in self.pending_pragmas.drain(..) {
            self.f.pragmas.push((id, p));
        }
    }
}

fn undefined_label(name: ast::Ident<'_>) -> Diagnostic {
    Diagnostic::new(codes::UNDEFINED_LABEL, format!("undefined label `{}`", name.text), name.span)
        .with_help("labels must be defined in the same function")
}

/// Checks the `.x/.y/.z` component of a special register.
fn special(
    kind: SpecialRegKind,
    name: ast::Ident<'_>,
    component: Option<ast::Ident<'_>>,
    span: Span,
) -> Result<SpecialReg, Diagnostic> {
    match (kind.is_vector(), component) {
        (true, Some(c)) => match Dim::from_word(c.text) {
            Some(d) => Ok(SpecialReg { kind, dim: Some(d) }),
            None => Err(Diagnostic::new(
                codes::SPECIAL_COMPONENT,
                format!("`{}` has no component `.{}`", name.text, c.text),
                c.span,
            )
            .with_help("use .x, .y or .z")),
        },
        (true, None) => Err(Diagnostic::new(
            codes::SPECIAL_COMPONENT,
            format!("`{}` needs a component: `{0}.x`, `{0}.y` or `{0}.z`", name.text),
            span,
        )),
        (false, Some(c)) => Err(Diagnostic::new(
            codes::SPECIAL_COMPONENT,
            format!("`{}` is not a vector register and has no component `.{}`", name.text, c.text),
            c.span,
        )),
        (false, None) => Ok(SpecialReg { kind, dim: None }),
    }
}

#[cfg(test)]
mod tests {
    use reconverge_ir::{print_module, Function, Module, Operand};

    fn module(body: &str) -> Module {
        let src = format!(".version 8.0\n.target sm_80\n.entry k()\n{{\n{body}\n}}\n");
        match crate::parse(&src) {
            Ok(m) => m,
            Err(e) => panic!("{}", crate::SourceError::new("t.ptx", src, e).render_plain()),
        }
    }

    fn func(m: &Module) -> &Function {
        m.functions.values().next().unwrap_or_else(|| unreachable!())
    }

    /// The register names of each instruction's register operands, in order.
    fn reg_uses(f: &Function) -> Vec<Vec<&str>> {
        f.insts
            .values()
            .map(|i| {
                i.operands
                    .iter()
                    .filter_map(|o| match o {
                        Operand::Reg(r) => Some(f.regs[*r].name.as_str()),
                        _ => None,
                    })
                    .collect()
            })
            .collect()
    }

    fn round_trips(m: &Module) {
        let mut a = m.clone();
        let mut b = crate::parse(&print_module(m)).unwrap_or_else(|e| panic!("{e}\n{}", print_module(m)));
        a.strip_spans();
        b.strip_spans();
        assert!(a == b, "{}", print_module(m));
    }

    #[test]
    fn inner_single_shadows_outer_range() {
        let m = module(
            ".reg .pred %p<3>;\n.reg .b32 %r<2>;\n{ .reg .pred %p1; setp.ne.u32 %p1, %r1, 0; }\n@%p1 ret;\nret;",
        );
        let f = func(&m);
        assert_eq!(reg_uses(f)[0], ["%p1$1", "%r1"]);
        assert_eq!(f.regs[f.insts.values().nth(1).and_then(|i| i.guard).map(|g| g.reg).unwrap()].name, "%p1");
        round_trips(&m);
    }

    #[test]
    fn inner_range_shadows_outer_range() {
        let m = module(".reg .b32 %r<3>;\n{ .reg .b32 %r<2>; mov.u32 %r1, %r0; }\nmov.u32 %r1, %r2;");
        let f = func(&m);
        assert_eq!(reg_uses(f), [vec!["%r1$1", "%r0$1"], vec!["%r1", "%r2"]]);
        round_trips(&m);
    }

    #[test]
    fn range_after_nested_single_is_renamed_where_it_clashes() {
        let m = module("{ .reg .b32 %r5; mov.u32 %r5, 1; }\n.reg .b32 %r<10>;\nmov.u32 %r5, %r6;");
        let f = func(&m);
        assert_eq!(reg_uses(f), [vec!["%r5"], vec!["%r5$1", "%r6"]]);
        round_trips(&m);
    }

    #[test]
    fn digit_ending_prefixes_and_non_canonical_names() {
        let m = module(".reg .b32 %r1<3>;\n.reg .b32 %r<2>;\nmov.u32 %r12, %r1;");
        assert_eq!(reg_uses(func(&m)), [vec!["%r12", "%r1"]]);
        round_trips(&m);
        let src = ".version 8.0\n.target sm_80\n.entry k()\n{\n.reg .b32 %r<3>;\nmov.u32 %r01, 1;\n}\n";
        let e = crate::parse(src).unwrap_err();
        assert_eq!(e.diagnostics[0].code, crate::codes::UNDECLARED_REGISTER);
    }

    #[test]
    fn names_that_clash_with_module_symbols_are_renamed() {
        let src = ".version 8.0\n.target sm_80\n.global .u32 g;\n.entry k()\n{\n{ .param .b32 g; st.param.b32 [g], 1; }\nld.global.u32 %r, [g];\n.reg .b32 %r;\n}\n";
        // `%r` is used before its declaration: an error, the rest resolves.
        let e = crate::parse(src).unwrap_err();
        assert_eq!(e.diagnostics.len(), 1);
        let src = src.replace("ld.global.u32 %r, [g];\n.reg .b32 %r;", ".reg .b32 %r;\nld.global.u32 %r, [g];");
        let m = crate::parse(&src).unwrap();
        let f = func(&m);
        assert_eq!(f.locals.values().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["g$1"]);
        round_trips(&m);
    }
}
