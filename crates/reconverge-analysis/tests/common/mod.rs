//! Builds small IR functions by hand for the analysis tests (no PTX parser needed).

#![allow(dead_code)]

use reconverge_ir::{
    BlockId, BranchTargets, FuncId, FuncKind, Function, Guard, Imm, Inst, InstId, KnownModifier, Modifier, Opcode,
    Operand, RegDecl, ScalarType, Symbol,
};

/// How a test block ends.
#[derive(Clone, Copy, Debug)]
pub(crate) enum End<'a> {
    /// A straight-line instruction: falls through.
    Fall,
    /// No instruction at all: falls through.
    Empty,
    /// A `call` (straight-line): falls through.
    Call,
    /// `bra L`
    Bra(&'a str),
    /// `bra.uni L`
    BraUni(&'a str),
    /// `@%p bra L`
    BraIf(&'a str),
    /// `@%p bra.uni L`
    BraIfUni(&'a str),
    /// `brx.idx %r, targets`
    Brx(&'a [&'a str]),
    /// `@%p brx.idx %r, targets`
    BrxIf(&'a [&'a str]),
    /// `ret`
    Ret,
    /// `@%p ret`
    RetIf,
    /// `exit`
    Exit,
    /// `@%p exit`
    ExitIf,
    /// `trap`
    Trap,
    /// `@!%p trap`
    TrapIfNot,
}

fn inst(opcode: Opcode, guard: Option<Guard>) -> Inst {
    Inst { guard, opcode, mods: Default::default(), types: Default::default(), operands: Default::default(), loc: None }
}

/// A kernel with the given blocks, in layout order (block `i` is `BlockId(i)`). Every non-empty block
/// starts with a `mov`, then its ending instruction.
pub(crate) fn func(blocks: &[(&str, End<'_>)]) -> Function {
    let mut f = Function::new("k", FuncKind::Entry);
    f.has_body = true;
    let p = f.regs.push(RegDecl { name: "%p".into(), ty: ScalarType::Pred, vector: None });
    let r = f.regs.push(RegDecl { name: "%r".into(), ty: ScalarType::U32, vector: None });
    for (label, _) in blocks {
        let b = f.blocks.push(Default::default());
        f.blocks[b].label = Some((*label).to_string());
        f.layout.push(b);
    }
    let id = |f: &Function, l: &str| f.block_by_label(l).unwrap_or_else(|| panic!("no block {l}"));
    let guard = Some(Guard { reg: p, negated: false });
    for (i, (_, end)) in blocks.iter().enumerate() {
        let b = BlockId::from_u32(i as u32);
        if matches!(end, End::Empty) {
            continue;
        }
        let mut mov = inst(Opcode::Mov, None);
        mov.types.push(ScalarType::U32);
        mov.operands.push(Operand::Reg(r));
        mov.operands.push(Operand::Imm(Imm::Int(i as i64)));
        let m = f.insts.push(mov);
        f.blocks[b].insts.push(m);
        let last = match *end {
            End::Fall | End::Empty => None,
            End::Call => {
                let mut c = inst(Opcode::Call, None);
                c.operands.push(Operand::Sym(Symbol::Func(FuncId::from_u32(0))));
                Some(c)
            }
            End::Bra(l) | End::BraUni(l) | End::BraIf(l) | End::BraIfUni(l) => {
                let g = if matches!(end, End::BraIf(_) | End::BraIfUni(_)) { guard } else { None };
                let mut c = inst(Opcode::Bra, g);
                if matches!(end, End::BraUni(_) | End::BraIfUni(_)) {
                    c.mods.push(Modifier::Known(KnownModifier::Uni));
                }
                c.operands.push(Operand::Sym(Symbol::Label(id(&f, l))));
                Some(c)
            }
            End::Brx(ls) | End::BrxIf(ls) => {
                let targets = ls.iter().map(|l| id(&f, l)).collect();
                let t = f.targets.push(BranchTargets { name: format!("$targets{i}"), targets });
                let g = if matches!(end, End::BrxIf(_)) { guard } else { None };
                let mut c = inst(Opcode::Brx, g);
                c.mods.push(Modifier::Known(KnownModifier::Idx));
                c.operands.push(Operand::Reg(r));
                c.operands.push(Operand::Sym(Symbol::Targets(t)));
                Some(c)
            }
            End::Ret => Some(inst(Opcode::Ret, None)),
            End::RetIf => Some(inst(Opcode::Ret, guard)),
            End::Exit => Some(inst(Opcode::Exit, None)),
            End::ExitIf => Some(inst(Opcode::Exit, guard)),
            End::Trap => Some(inst(Opcode::Trap, None)),
            End::TrapIfNot => Some(inst(Opcode::Trap, Some(Guard { reg: p, negated: true }))),
        };
        if let Some(c) = last {
            let t = f.insts.push(c);
            f.blocks[b].insts.push(t);
        }
    }
    f
}

/// The node of the block labelled `l`.
pub(crate) fn node(f: &Function, l: &str) -> u32 {
    f.block_by_label(l).unwrap_or_else(|| panic!("no block {l}")).as_u32()
}

/// The last instruction of the block labelled `l`.
pub(crate) fn last_inst(f: &Function, l: &str) -> InstId {
    f.last_inst(f.block_by_label(l).expect("block exists")).expect("block is not empty")
}
