//! Instruction families: barriers, warp-synchronous collectives, and the instructions of the divergence
//! mechanisms.

use super::*;

impl<'m> Decoder<'m> {
    /// Barriers and warp-level collectives (`shfl`, `vote`, `match`, `redux`).
    pub(super) fn decode_sync_and_warp(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, ty, fi, f) = (at.inst, &at.inst.operands, at.ty, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Bar | Opcode::Barrier if inst.has(K::Warp) => {
                at.need(1)?;
                Op::WarpSync { mask: self.src(fi, f, &ops[0], Some(ScalarType::U32))? }
            }
            Opcode::Bar | Opcode::Barrier => {
                let u32t = Some(ScalarType::U32);
                if inst.has(K::Red) {
                    at.need(3)?;
                    let kind = if inst.has(K::Popc) {
                        BarKind::RedPopc
                    } else if inst.has(K::And) {
                        BarKind::RedAnd
                    } else {
                        BarKind::RedOr
                    };
                    let (d, p) = if kind == BarKind::RedPopc {
                        (Some(self.dreg(at, 0)?), None)
                    } else {
                        (None, Some(self.pred(fi, &ops[0])?))
                    };
                    let count = if ops.len() >= 4 { Some(self.src(fi, f, &ops[2], u32t)?) } else { None };
                    Op::Bar {
                        kind,
                        id: self.src(fi, f, &ops[1], u32t)?,
                        count,
                        d,
                        p,
                        c: self.pred_src(fi, &ops[ops.len() - 1])?,
                    }
                } else {
                    let kind = if inst.has(K::Arrive) { BarKind::Arrive } else { BarKind::Sync };
                    let id = match ops.first() {
                        Some(o) => self.src(fi, f, o, u32t)?,
                        None => Src::Imm(0),
                    };
                    let count = ops.get(1).map(|o| self.src(fi, f, o, u32t)).transpose()?;
                    Op::Bar { kind, id, count, d: None, p: None, c: PredSrc::Const(true) }
                }
            }
            Opcode::Shfl => {
                at.need(4)?;
                let mode = if inst.has(K::Up) {
                    ShflMode::Up
                } else if inst.has(K::Down) {
                    ShflMode::Down
                } else if inst.has(K::Bfly) {
                    ShflMode::Bfly
                } else {
                    ShflMode::Idx
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.reg(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.reg(fi, o)?), None),
                };
                let u32t = Some(ScalarType::U32);
                let mask = match ops.get(4) {
                    Some(o) => self.src(fi, f, o, u32t)?,
                    None => Src::Imm(u64::MAX),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.s(at, 1)?,
                    b: self.src(fi, f, &ops[2], u32t)?,
                    c: self.src(fi, f, &ops[3], u32t)?,
                    mask,
                }
            }
            Opcode::Vote => {
                at.need(2)?;
                let mode = if inst.has(K::All) {
                    VoteMode::All
                } else if inst.has(K::Any) {
                    VoteMode::Any
                } else if inst.has(K::Uni) {
                    VoteMode::Uni
                } else if inst.has(K::Ballot) {
                    VoteMode::Ballot
                } else {
                    return Err("vote needs a mode".into());
                };
                let d = if mode == VoteMode::Ballot {
                    Src::Reg(self.dreg(at, 0)?)
                } else {
                    Src::Pred(self.pred(fi, &ops[0])?)
                };
                let mask = ops.get(2).map(|o| self.src(fi, f, o, Some(ScalarType::U32))).transpose()?;
                Op::Vote { mode, d, a: self.pred_src(fi, &ops[1])?, mask }
            }
            Opcode::Activemask => {
                at.need(1)?;
                Op::Activemask { d: self.dreg(at, 0)? }
            }
            Opcode::Match => {
                at.need(3)?;
                let (d, p) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.reg(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.reg(fi, o)?), None),
                };
                Op::Match {
                    all: inst.has(K::All),
                    ty: at.t()?,
                    d,
                    p,
                    a: self.s(at, 1)?,
                    mask: self.src(fi, f, &ops[2], Some(ScalarType::U32))?,
                }
            }
            Opcode::Redux => {
                at.need(3)?;
                let op = inst
                    .mods
                    .iter()
                    .find_map(|m| match m {
                        Modifier::Known(K::Add) => Some(ReduxOp::Add),
                        Modifier::Known(K::Min) => Some(ReduxOp::Min),
                        Modifier::Known(K::Max) => Some(ReduxOp::Max),
                        Modifier::Known(K::And) => Some(ReduxOp::And),
                        Modifier::Known(K::Or) => Some(ReduxOp::Or),
                        Modifier::Known(K::Xor) => Some(ReduxOp::Xor),
                        _ => None,
                    })
                    .ok_or("redux needs an operation")?;
                if ty.map(|t| t.is_float()).unwrap_or(false) {
                    return Err("float redux is not supported".into());
                }
                Op::Redux {
                    op,
                    ty: at.t()?,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    mask: self.src(fi, f, &ops[2], Some(ScalarType::U32))?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// The instructions a mechanism's compiler pass inserts; anything else is unsupported.
    pub(super) fn decode_mechanism(&self, at: &At<'_>) -> DResult<Op> {
        let (inst, ops, fi) = (at.inst, &at.inst.operands, at.fi);
        Ok(match &at.inst.opcode {
            Opcode::Ssy | Opcode::Pbk => {
                let target = match ops.first() {
                    Some(Operand::Sym(Symbol::Label(b))) => self.ctxs[fi].block_pc[b.index()],
                    _ => return Err("ssy/pbk need a label".into()),
                };
                if inst.opcode == Opcode::Ssy {
                    Op::Ssy { target }
                } else {
                    Op::Pbk { target }
                }
            }
            Opcode::Sync => Op::Sync,
            Opcode::Brk => Op::Brk,
            Opcode::Join => Op::Join,
            Opcode::Yield => Op::Yield,
            Opcode::Syncwarp => Op::Syncwarp,
            Opcode::Bssy | Opcode::Bsync => {
                let target = match ops.first() {
                    Some(Operand::Sym(Symbol::Label(b))) => self.ctxs[fi].block_pc[b.index()],
                    _ => return Err("bssy/bsync need a label".into()),
                };
                if inst.opcode == Opcode::Bssy {
                    Op::Bssy { target }
                } else {
                    Op::Bsync { target }
                }
            }
            Opcode::Unknown(name) => return Err(Unsupported::UnknownOpcode(name.to_string())),
            other => return Err(Unsupported::Modifiers(other.to_string())),
        })
    }
}
