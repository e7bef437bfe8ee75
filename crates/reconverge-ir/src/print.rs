//! A PTX printer. Its output parses back to the same IR (see the round-trip tests in `reconverge-ptx`).

use crate::entity::{BlockId, FuncId, InstId};
use crate::inst::{AddrBase, Imm, Inst, Operand, Symbol};
use crate::module::{FuncKind, Function, InitValue, Initializer, Item, Module, RegDecl, SrcLoc, Variable};
use cranelift_entity::{EntityRef, SecondaryMap};
use std::fmt::Write;

/// Prints a whole module as PTX text.
pub fn print_module(m: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(out, ".version {}.{}", m.version.0, m.version.1);
    if !m.target.is_empty() {
        let _ = writeln!(out, ".target {}", m.target.join(", "));
    }
    let _ = writeln!(out, ".address_size {}", m.address_size);
    if !m.files.is_empty() {
        out.push('\n');
        for f in &m.files {
            let _ = write!(out, ".file {} \"{}\"", f.index, f.path);
            for x in &f.extra {
                let _ = write!(out, ", {x}");
            }
            out.push('\n');
        }
    }
    for item in &m.items {
        out.push('\n');
        match *item {
            Item::Global(g) => {
                let _ = writeln!(out, "{};", variable_decl(m, None, &m.globals[g]));
            }
            Item::FuncDecl(f) => {
                out.push_str(&function_header(m, f));
                out.push_str(";\n");
            }
            Item::FuncDef(f) => out.push_str(&print_function(m, f)),
        }
    }
    out
}

fn function_header(m: &Module, id: FuncId) -> String {
    let f = &m.functions[id];
    let mut s = String::new();
    if let Some(l) = f.linkage {
        let _ = write!(s, ".{} ", l.as_str());
    }
    s.push_str(match f.kind {
        FuncKind::Entry => ".entry ",
        FuncKind::Func => ".func ",
    });
    if !f.rets.is_empty() {
        s.push('(');
        for (i, r) in f.rets.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&variable_decl(m, None, r));
        }
        s.push_str(") ");
    }
    s.push_str(&f.name);
    if f.kind == FuncKind::Entry || !f.params.is_empty() {
        s.push('(');
        for (i, p) in f.params.iter().enumerate() {
            s.push_str(if i > 0 { ",\n\t" } else { "\n\t" });
            s.push_str(&variable_decl(m, None, p));
        }
        if !f.params.is_empty() {
            s.push('\n');
        }
        s.push(')');
    }
    if f.noreturn {
        s.push_str(" .noreturn");
    }
    for d in &f.directives {
        let _ = write!(s, "\n.{}", d.name);
        if let Some(t) = &d.text {
            let _ = write!(s, " \"{t}\"");
        }
        for (i, a) in d.args.iter().enumerate() {
            let _ = write!(s, "{}{a}", if i == 0 { " " } else { ", " });
        }
        if d.text.is_some() {
            s.push(';');
        }
    }
    s
}

/// Prints a variable declaration without the trailing semicolon.
fn variable_decl(m: &Module, f: Option<&Function>, v: &Variable) -> String {
    let mut s = String::new();
    if let Some(l) = v.linkage {
        let _ = write!(s, ".{} ", l.as_str());
    }
    let _ = write!(s, ".{}", v.space.as_str());
    // `.space [.align A] [.vN] .type [.ptr [.space] [.align P]] name`: the variable's own alignment comes
    // before the type, a kernel pointer parameter's pointee attributes after it.
    if let Some(a) = v.align {
        let _ = write!(s, " .align {a}");
    }
    if let Some(n) = v.vector {
        let _ = write!(s, " .v{n}");
    }
    let _ = write!(s, " .{}", v.ty.as_str());
    if let Some(p) = v.ptr {
        s.push_str(" .ptr");
        if let Some(sp) = p.space {
            let _ = write!(s, " .{}", sp.as_str());
        }
        if let Some(a) = p.align {
            let _ = write!(s, " .align {a}");
        }
    }
    let _ = write!(s, " {}", v.name);
    for d in &v.dims {
        match d {
            Some(n) => {
                let _ = write!(s, "[{n}]");
            }
            None => s.push_str("[]"),
        }
    }
    if let Some(init) = &v.init {
        s.push_str(" = ");
        write_init(&mut s, m, f, init);
    }
    s
}

fn write_init(s: &mut String, m: &Module, f: Option<&Function>, init: &Initializer) {
    match init {
        Initializer::Value(InitValue::Imm(i)) => write_imm(s, *i),
        Initializer::Value(InitValue::Addr { sym, generic, offset }) => {
            let name = symbol_name(m, f, *sym);
            if *generic {
                let _ = write!(s, "generic({name})");
            } else {
                s.push_str(&name);
            }
            if *offset != 0 {
                let _ = write!(s, "+{offset}");
            }
        }
        Initializer::List(items) => {
            s.push('{');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_init(s, m, f, it);
            }
            s.push('}');
        }
    }
}

fn write_imm(s: &mut String, i: Imm) {
    let _ = match i {
        Imm::Int(v) => write!(s, "{v}"),
        Imm::F32(b) => write!(s, "0f{b:08X}"),
        Imm::F64(b) => write!(s, "0d{b:016X}"),
    };
}

/// Names used when printing a function's labels: real labels, or synthesized ones for unlabelled
/// blocks that something branches to.
fn block_labels(f: &Function) -> SecondaryMap<BlockId, Option<String>> {
    let mut labels: SecondaryMap<BlockId, Option<String>> = SecondaryMap::new();
    for (b, block) in f.blocks.iter() {
        labels[b] = block.label.clone();
    }
    let need = |b: BlockId, labels: &mut SecondaryMap<BlockId, Option<String>>| {
        if labels[b].is_none() {
            labels[b] = Some(format!("$__rc_block{}", b.index()));
        }
    };
    for (_, inst) in f.insts.iter() {
        for op in &inst.operands {
            if let Operand::Sym(Symbol::Label(b)) = op {
                need(*b, &mut labels);
            }
        }
    }
    for (_, t) in f.targets.iter() {
        for &b in &t.targets {
            need(b, &mut labels);
        }
    }
    labels
}

/// Prints one function definition (header and body).
pub fn print_function(m: &Module, id: FuncId) -> String {
    let f = &m.functions[id];
    let labels = block_labels(f);
    let mut s = function_header(m, id);
    s.push_str("\n{\n");
    write_reg_decls(&mut s, f);
    for (_, v) in f.locals.iter() {
        let _ = writeln!(s, "\t{};", variable_decl(m, Some(f), v));
    }
    for (_, t) in f.targets.iter() {
        let names: Vec<String> = t.targets.iter().map(|b| labels[*b].clone().unwrap_or_default()).collect();
        let _ = writeln!(s, "\t{}: .branchtargets {};", t.name, names.join(", "));
    }
    for (_, p) in f.protos.iter() {
        let _ = write!(s, "\t{}: .callprototype ", p.name);
        if !p.rets.is_empty() {
            let rets: Vec<String> = p.rets.iter().map(|v| variable_decl(m, Some(f), v)).collect();
            let _ = write!(s, "({}) ", rets.join(", "));
        }
        let params: Vec<String> = p.params.iter().map(|v| variable_decl(m, Some(f), v)).collect();
        let _ = write!(s, "_ ({})", params.join(", "));
        if p.noreturn {
            s.push_str(" .noreturn");
        }
        s.push_str(";\n");
    }
    s.push('\n');
    let mut last_loc: Option<SrcLoc> = None;
    let mut pragma_idx = 0;
    for &b in &f.layout {
        if let Some(l) = &labels[b] {
            let _ = writeln!(s, "{l}:");
        }
        for &i in &f.blocks[b].insts {
            while pragma_idx < f.pragmas.len() && f.pragmas[pragma_idx].0 == i {
                let _ = writeln!(s, "\t.pragma \"{}\";", f.pragmas[pragma_idx].1);
                pragma_idx += 1;
            }
            let inst = &f.insts[i];
            if inst.loc.is_some() && inst.loc != last_loc {
                let l = inst.loc.unwrap_or(SrcLoc { file: 0, line: 0, col: 0 });
                let _ = writeln!(s, "\t.loc\t{} {} {}", l.file, l.line, l.col);
                last_loc = inst.loc;
            }
            s.push('\t');
            s.push_str(&print_inst_with_labels(m, f, &labels, i));
            s.push('\n');
        }
    }
    s.push_str("}\n");
    s
}

fn write_reg_decls(s: &mut String, f: &Function) {
    // Group runs `%p0, %p1, ... %p(n-1)` of one type into `%p<n>`.
    let regs: Vec<&RegDecl> = f.regs.values().collect();
    let mut i = 0;
    while i < regs.len() {
        let r = regs[i];
        let vec = r.vector.map(|n| format!(".v{n} ")).unwrap_or_default();
        if let Some(prefix) =
            r.name.strip_suffix('0').filter(|p| !p.ends_with(|c: char| c.is_ascii_digit()) && is_ident(p))
        {
            let mut n = 1;
            while i + n < regs.len()
                && regs[i + n].ty == r.ty
                && regs[i + n].vector == r.vector
                && regs[i + n].name.strip_prefix(prefix) == Some(n.to_string().as_str())
            {
                n += 1;
            }
            let _ = writeln!(s, "\t.reg {vec}.{} \t{prefix}<{n}>;", r.ty.as_str());
            i += n;
        } else {
            let _ = writeln!(s, "\t.reg {vec}.{} \t{};", r.ty.as_str(), r.name);
            i += 1;
        }
    }
}

/// Whether `s` lexes as one PTX identifier (`[a-zA-Z][a-zA-Z0-9_$]*` or `[_$%][a-zA-Z0-9_$]+`), so that
/// `s<N>` declares registers `s0`..`s{N-1}`.
fn is_ident(s: &str) -> bool {
    let rest = |t: &str| t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    match s.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => rest(&s[1..]),
        Some('_' | '$' | '%') => s.len() > 1 && rest(&s[1..]),
        _ => false,
    }
}

fn symbol_name(m: &Module, f: Option<&Function>, sym: Symbol) -> String {
    match (sym, f) {
        (Symbol::Global(g), _) => m.globals[g].name.clone(),
        (Symbol::Func(id), _) => m.functions[id].name.clone(),
        (Symbol::Local(l), Some(f)) => f.locals[l].name.clone(),
        (Symbol::Param(n), Some(f)) => f.params[n as usize].name.clone(),
        (Symbol::Ret(n), Some(f)) => f.rets[n as usize].name.clone(),
        (Symbol::Label(b), Some(f)) => f.block_name(b),
        (Symbol::Targets(t), Some(f)) => f.targets[t].name.clone(),
        (Symbol::Proto(p), Some(f)) => f.protos[p].name.clone(),
        (other, None) => format!("{other:?}"),
    }
}

/// Prints one instruction (without indentation or newline).
///
/// This computes the function's label names each time; to print many instructions of one function, use
/// an [`InstPrinter`] (linear instead of quadratic in the function's size).
pub fn print_inst(m: &Module, f: &Function, id: InstId) -> String {
    print_inst_with_labels(m, f, &block_labels(f), id)
}

/// Prints instructions of one function, with its label names computed once.
pub struct InstPrinter<'a> {
    m: &'a Module,
    f: &'a Function,
    labels: SecondaryMap<BlockId, Option<String>>,
}

impl<'a> InstPrinter<'a> {
    /// A printer for the instructions of `f` (a function of `m`).
    pub fn new(m: &'a Module, f: &'a Function) -> InstPrinter<'a> {
        InstPrinter { m, f, labels: block_labels(f) }
    }

    /// Prints one instruction, as [`print_inst`] does.
    pub fn inst(&self, id: InstId) -> String {
        print_inst_with_labels(self.m, self.f, &self.labels, id)
    }
}

fn print_inst_with_labels(
    m: &Module,
    f: &Function,
    labels: &SecondaryMap<BlockId, Option<String>>,
    id: InstId,
) -> String {
    let inst: &Inst = &f.insts[id];
    let mut s = String::new();
    if let Some(g) = inst.guard {
        let _ = write!(s, "@{}{} ", if g.negated { "!" } else { "" }, f.regs[g.reg].name);
    }
    s.push_str(inst.opcode.as_str());
    for md in &inst.mods {
        let _ = write!(s, ".{md}");
    }
    for t in &inst.types {
        let _ = write!(s, ".{t}");
    }
    for (i, op) in inst.operands.iter().enumerate() {
        s.push_str(if i == 0 { " \t" } else { ", " });
        write_operand(&mut s, m, f, labels, op);
    }
    s.push(';');
    s
}

/// Prints one operand.
pub fn print_operand(m: &Module, f: &Function, op: &Operand) -> String {
    let mut s = String::new();
    write_operand(&mut s, m, f, &block_labels(f), op);
    s
}

fn write_operand(
    s: &mut String,
    m: &Module,
    f: &Function,
    labels: &SecondaryMap<BlockId, Option<String>>,
    op: &Operand,
) {
    match op {
        Operand::Reg(r) => s.push_str(&f.regs[*r].name),
        Operand::NotReg(r) => {
            s.push('!');
            s.push_str(&f.regs[*r].name);
        }
        Operand::Special(sr) => {
            s.push_str(sr.kind.as_str());
            if let Some(d) = sr.dim {
                let _ = write!(s, ".{d}");
            }
        }
        Operand::Imm(i) => write_imm(s, *i),
        Operand::Sym(Symbol::Label(b)) => s.push_str(labels[*b].as_deref().unwrap_or("?")),
        Operand::Sym(sym) => s.push_str(&symbol_name(m, Some(f), *sym)),
        Operand::Addr(a) => {
            s.push('[');
            match a.base {
                AddrBase::Reg(r) => s.push_str(&f.regs[r].name),
                AddrBase::Sym(sym) => s.push_str(&symbol_name(m, Some(f), sym)),
                AddrBase::Abs => {
                    let _ = write!(s, "{}", a.offset);
                }
            }
            if a.base != AddrBase::Abs && a.offset != 0 {
                let _ = write!(s, "+{}", a.offset);
            }
            s.push(']');
        }
        Operand::Vector(items) => {
            s.push('{');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_operand(s, m, f, labels, it);
            }
            s.push('}');
        }
        Operand::Pair(regs) => {
            for (i, r) in regs.iter().enumerate() {
                if i > 0 {
                    s.push('|');
                }
                match r {
                    Some(r) => s.push_str(&f.regs[*r].name),
                    None => s.push('_'),
                }
            }
        }
        Operand::Sink => s.push('_'),
        Operand::List(items) => {
            s.push('(');
            for (i, it) in items.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_operand(s, m, f, labels, it);
            }
            s.push(')');
        }
        Operand::Image { handle, coords } => {
            s.push('[');
            write_operand(s, m, f, labels, handle);
            s.push_str(", {");
            for (i, it) in coords.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                write_operand(s, m, f, labels, it);
            }
            s.push_str("}]");
        }
    }
}
