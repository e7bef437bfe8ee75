//! Instruction family: asynchronous copies (`cp.async`), barrier objects (`mbarrier`) and `elect.sync`.

use super::*;

/// Whether the instruction carries the modifier word `w` (known or not).
fn word(inst: &reconverge_ir::Inst, w: &str) -> bool {
    inst.mods.iter().any(|m| m.as_str() == w)
}

/// The state space of an address operand, from the instruction's modifiers (`.shared::cta` is shared).
fn space_of(inst: &reconverge_ir::Inst, which: usize) -> Option<StateSpace> {
    inst.mods.iter().filter_map(Modifier::space).nth(which)
}

impl<'m> Decoder<'m> {
    /// The destination of `elect.sync` and the like: `d|p`, `_|p`, `d` alone.
    fn reg_pred(&self, fi: usize, op: &Operand) -> DResult<(Option<Reg>, Option<Pred>)> {
        Ok(match op {
            Operand::Pair([a, b]) => (
                a.map(|r| self.reg(fi, &Operand::Reg(r))).transpose()?,
                b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
            ),
            o => (self.opt_reg(fi, o)?, None),
        })
    }

    fn decode_cp(&self, at: &At<'_>) -> DResult<Op> {
        let (inst, ops) = (at.inst, &at.inst.operands);
        if !word(inst, "async") {
            return Err("only cp.async is supported among the cp instructions".into());
        }
        let group = self.async_group.ok_or("cp.async without its copy register")?;
        if word(inst, "commit_group") {
            return Ok(Op::CpAsyncWait { group, wait: false });
        }
        if word(inst, "wait_group") || word(inst, "wait_all") {
            return Ok(Op::CpAsyncWait { group, wait: true });
        }
        if word(inst, "bulk") || word(inst, "mbarrier") {
            return Err("cp.async.bulk and cp.async.mbarrier.arrive are not supported".into());
        }
        at.need(3)?;
        let (dst_space, dst) = self.addr(at.fi, at.f, &ops[0], space_of(inst, 0))?;
        let (src_space, src) = self.addr(at.fi, at.f, &ops[1], space_of(inst, 1))?;
        let size = match &ops[2] {
            Operand::Imm(reconverge_ir::Imm::Int(v)) if matches!(v, 4 | 8 | 16) => *v as u32,
            _ => return Err("cp.async copies 4, 8 or 16 bytes".into()),
        };
        let src_size = match ops.get(3) {
            Some(o) => Some(self.src(at.fi, at.f, o, Some(ScalarType::U32))?),
            None => None,
        };
        Ok(Op::CpAsync { dst_space, dst, src_space, src, size, src_size, group })
    }

    fn decode_mbarrier(&self, at: &At<'_>) -> DResult<Op> {
        let (inst, ops) = (at.inst, &at.inst.operands);
        let (fi, f) = (at.fi, at.f);
        let u64t = Some(ScalarType::U64);
        let addr = |k: usize| self.addr(fi, f, &ops[k], inst.space());
        let src_or = |k: usize, v: u64| ops.get(k).map_or(Ok(Src::Imm(v)), |o| self.src(fi, f, o, u64t));
        let op = if word(inst, "init") {
            MbarrierOp::Init
        } else if word(inst, "inval") {
            MbarrierOp::Inval
        } else if word(inst, "arrive") || word(inst, "arrive_drop") {
            MbarrierOp::Arrive { drop: word(inst, "arrive_drop"), expect_tx: word(inst, "expect_tx") }
        } else if word(inst, "expect_tx") {
            MbarrierOp::ExpectTx
        } else if word(inst, "complete_tx") {
            MbarrierOp::CompleteTx
        } else if word(inst, "test_wait") || word(inst, "try_wait") {
            MbarrierOp::TestWait { parity: word(inst, "parity") }
        } else if word(inst, "pending_count") {
            MbarrierOp::PendingCount
        } else {
            return Err("unknown mbarrier operation".into());
        };
        if word(inst, "noComplete") {
            return Err("mbarrier.arrive.noComplete is not supported".into());
        }
        at.need(if op == MbarrierOp::Inval { 1 } else { 2 })?;
        Ok(match op {
            MbarrierOp::Init | MbarrierOp::ExpectTx | MbarrierOp::CompleteTx | MbarrierOp::Inval => {
                let (space, a) = addr(0)?;
                Op::Mbarrier { op, space, addr: Some(a), d: None, p: None, a: src_or(1, 0)? }
            }
            MbarrierOp::Arrive { .. } => {
                let (space, a) = addr(1)?;
                Op::Mbarrier { op, space, addr: Some(a), d: self.opt_reg(fi, &ops[0])?, p: None, a: src_or(2, 1)? }
            }
            MbarrierOp::TestWait { .. } => {
                at.need(3)?;
                let (space, a) = addr(1)?;
                Op::Mbarrier { op, space, addr: Some(a), d: None, p: Some(self.pred(fi, &ops[0])?), a: src_or(2, 0)? }
            }
            MbarrierOp::PendingCount => {
                let a = self.src(fi, f, &ops[1], u64t)?;
                Op::Mbarrier { op, space: Space::Shared, addr: None, d: Some(self.reg(fi, &ops[0])?), p: None, a }
            }
        })
    }

    /// `cp.async`, `mbarrier`, `elect.sync`.
    pub(super) fn decode_asynchronous(&self, at: &At<'_>) -> DResult<Option<Op>> {
        Ok(Some(match at.inst.opcode {
            Opcode::Cp => self.decode_cp(at)?,
            Opcode::Mbarrier => self.decode_mbarrier(at)?,
            Opcode::Elect => {
                at.need(2)?;
                let (d, p) = self.reg_pred(at.fi, &at.inst.operands[0])?;
                let mask = self.src(at.fi, at.f, &at.inst.operands[1], Some(ScalarType::U32))?;
                Op::Elect { d, p, mask }
            }
            _ => return Ok(None),
        }))
    }
}
