//! Instruction family: loads, stores, atomics, address conversions, branches, returns and fences.

use super::*;

/// The scope of a `membar`/`fence` instruction (`membar.cta`, `fence.acq_rel.gpu`, ...).
pub(super) fn fence_scope(inst: &reconverge_ir::Inst) -> FenceScope {
    if inst.has(K::Cta) {
        FenceScope::Cta
    } else if inst.has(K::Sys) {
        FenceScope::Sys
    } else {
        FenceScope::Gpu
    }
}

impl<'m> Decoder<'m> {
    /// Loads, stores, atomics, address-space queries, branches, calls, returns, fences.
    pub(super) fn decode_memory_and_control(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Ld | Opcode::Ldu => {
                at.need(2)?;
                let ty = at.t()?;
                let d = self.vec_regs(fi, &ops[0])?;
                let (space, addr) = self.addr(fi, f, &ops[1], inst.space())?;
                let dst_bits = match &ops[0] {
                    Operand::Reg(r) => reg_bits(f.regs[*r].ty),
                    Operand::Vector(items) => items
                        .iter()
                        .find_map(|o| if let Operand::Reg(r) = o { Some(reg_bits(f.regs[*r].ty)) } else { None })
                        .unwrap_or(ty.bits()),
                    _ => ty.bits(),
                };
                if ty.bits() > 64 {
                    return Err("128-bit loads are not supported".into());
                }
                Op::Ld { space, ty, d, addr, dst_bits, volatile: inst.has(K::Volatile) }
            }
            Opcode::St => {
                at.need(2)?;
                let ty = at.t()?;
                if ty.bits() > 64 {
                    return Err("128-bit stores are not supported".into());
                }
                let (space, addr) = self.addr(fi, f, &ops[0], inst.space())?;
                let srcs: SmallVec<[Src; 4]> = match &ops[1] {
                    Operand::Vector(items) => {
                        items.iter().map(|o| self.src(fi, f, o, Some(ty))).collect::<DResult<_>>()?
                    }
                    o => SmallVec::from_elem(self.src(fi, f, o, Some(ty))?, 1),
                };
                Op::St { space, ty, s: srcs, addr }
            }
            Opcode::Atom | Opcode::Red => {
                let ty = at.t()?;
                let op = inst
                    .mods
                    .iter()
                    .find_map(|m| match m {
                        Modifier::Known(K::Add) => Some(AtomOp::Add),
                        Modifier::Known(K::Min) => Some(AtomOp::Min),
                        Modifier::Known(K::Max) => Some(AtomOp::Max),
                        Modifier::Known(K::Inc) => Some(AtomOp::Inc),
                        Modifier::Known(K::Dec) => Some(AtomOp::Dec),
                        Modifier::Known(K::And) => Some(AtomOp::And),
                        Modifier::Known(K::Or) => Some(AtomOp::Or),
                        Modifier::Known(K::Xor) => Some(AtomOp::Xor),
                        Modifier::Known(K::Exch) => Some(AtomOp::Exch),
                        Modifier::Known(K::Cas) => Some(AtomOp::Cas),
                        _ => None,
                    })
                    .ok_or("atom needs an operation")?;
                if ty.bits() > 64 || (ty.is_float() && ty.bits() < 32) {
                    return Err(Unsupported::AtomType(ty.as_str()));
                }
                let (d, rest) = if inst.opcode == Opcode::Atom { (Some(self.dreg(at, 0)?), 1) } else { (None, 0) };
                at.need(rest + 2)?;
                let space = inst.space();
                let (space, addr) = self.addr(fi, f, &ops[rest], space)?;
                let b = self.s(at, rest + 1)?;
                let c = if op == AtomOp::Cas {
                    at.need(rest + 3)?;
                    self.s(at, rest + 2)?
                } else {
                    Src::Imm(0)
                };
                Op::Atom { space, op, ty, d, addr, b, c }
            }
            Opcode::Cvta => {
                at.need(2)?;
                let space = match inst.space() {
                    Some(StateSpace::Global) => Space::Global,
                    Some(StateSpace::Shared) => Space::Shared,
                    Some(StateSpace::Local) => Space::Local,
                    Some(StateSpace::Const) => Space::Const,
                    Some(StateSpace::Param) => Space::KernelParam,
                    _ => return Err("cvta needs a state space".into()),
                };
                Op::Cvta { to_generic: !inst.has(K::To), space, d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Isspacep => {
                at.need(2)?;
                let space = match inst.space() {
                    Some(StateSpace::Global) => Space::Global,
                    Some(StateSpace::Shared) => Space::Shared,
                    Some(StateSpace::Local) => Space::Local,
                    Some(StateSpace::Const) => Space::Const,
                    Some(StateSpace::Param) => Space::KernelParam,
                    _ => return Err("isspacep needs a state space".into()),
                };
                Op::Isspacep { space, p: self.pred(fi, &ops[0])?, a: self.src(fi, f, &ops[1], Some(ScalarType::U64))? }
            }
            Opcode::Bra => {
                let target = inst.branch_target().ok_or("bra needs a label")?;
                Op::Bra { target: self.ctxs[fi].block_pc[target.index()] }
            }
            Opcode::Brx => {
                at.need(2)?;
                let tid = inst.branch_targets().ok_or("brx.idx needs a .branchtargets list")?;
                let targets =
                    f.targets[tid].targets.iter().map(|b| self.ctxs[fi].block_pc[b.index()]).collect::<Vec<_>>();
                Op::Brx { index: self.src(fi, f, &ops[0], Some(ScalarType::U32))?, targets: targets.into() }
            }
            Opcode::Call => self.decode_call(fi, f, inst)?,
            Opcode::Ret => Op::Ret,
            Opcode::Exit => Op::Exit,
            Opcode::Trap => Op::Trap,
            Opcode::Membar | Opcode::Fence => Op::Fence { scope: fence_scope(inst) },
            Opcode::Brkpt | Opcode::Prefetch | Opcode::Prefetchu | Opcode::Nanosleep | Opcode::Pmevent => Op::Nop,
            _ => return Ok(None),
        }))
    }
}
