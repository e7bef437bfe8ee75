//! Instruction family: comparisons, selects, conversions and moves.

use super::*;

impl<'m> Decoder<'m> {
    /// Conversions, comparisons, selections and moves.
    pub(super) fn decode_compare_and_move(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Cvt => {
                at.need(2)?;
                if ops.len() > 2 {
                    return Err("packed cvt with two sources is not supported".into());
                }
                let dty = at.t()?;
                let sty = *inst.types.get(1).ok_or("cvt needs a source type")?;
                let rnd = inst.mods.iter().find_map(|m| match m {
                    Modifier::Known(
                        k @ (K::Rn | K::Rz | K::Rm | K::Rp | K::Rni | K::Rzi | K::Rmi | K::Rpi | K::Rna),
                    ) => Some(*k),
                    _ => None,
                });
                let dst_bits = match &ops[0] {
                    Operand::Reg(r) => reg_bits(f.regs[*r].ty),
                    _ => dty.bits(),
                };
                Op::Cvt {
                    dty,
                    sty,
                    rnd,
                    ftz: inst.has(K::Ftz),
                    sat: inst.has(K::Sat),
                    dst_bits,
                    d: self.dreg(at, 0)?,
                    a: self.src(fi, f, &ops[1], Some(sty))?,
                }
            }
            Opcode::Setp => {
                at.need(3)?;
                let cmp = inst.mods.iter().find_map(cmp_of).ok_or("setp needs a comparison")?;
                let comb_op = inst.mods.iter().find_map(bool_of);
                let (p, q) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.pred(fi, o)?), None),
                };
                let comb = match (comb_op, ops.get(3)) {
                    (Some(b), Some(c)) => Some((b, self.pred_src(fi, c)?)),
                    (None, None) => None,
                    _ => return Err("setp combiner and fourth operand must go together".into()),
                };
                Op::Setp { cmp, ty: at.t()?, p, q, a: self.s(at, 1)?, b: self.s(at, 2)?, comb }
            }
            Opcode::Set => {
                at.need(3)?;
                let cmp = inst.mods.iter().find_map(cmp_of).ok_or("set needs a comparison")?;
                let dty = at.t()?;
                let sty = *inst.types.get(1).ok_or("set needs a source type")?;
                let comb = match (inst.mods.iter().find_map(bool_of), ops.get(3)) {
                    (Some(b), Some(c)) => Some((b, self.pred_src(fi, c)?)),
                    _ => None,
                };
                Op::Set {
                    cmp,
                    dty,
                    sty,
                    d: self.dreg(at, 0)?,
                    a: self.src(fi, f, &ops[1], Some(sty))?,
                    b: self.src(fi, f, &ops[2], Some(sty))?,
                    comb,
                }
            }
            Opcode::Selp => {
                at.need(4)?;
                Op::Selp { d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.pred_src(fi, &ops[3])? }
            }
            Opcode::Slct => {
                at.need(4)?;
                let sty = *inst.types.get(1).ok_or("slct needs a comparison type")?;
                Op::Slct {
                    sty,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(sty))?,
                }
            }
            Opcode::Mov if at.is_pred() => {
                at.need(2)?;
                Op::PredOp {
                    op: None,
                    not: false,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: PredSrc::Const(false),
                }
            }
            Opcode::Mov => {
                at.need(2)?;
                let ty = at.t()?;
                match (&ops[0], &ops[1]) {
                    (_, Operand::Vector(parts)) => {
                        let n = parts.len() as u32;
                        Op::Pack {
                            d: self.dreg(at, 0)?,
                            parts: parts.iter().map(|p| self.src(fi, f, p, None)).collect::<DResult<_>>()?,
                            elem_bits: ty.bits() / n.max(1),
                        }
                    }
                    (Operand::Vector(parts), _) => {
                        let n = parts.len() as u32;
                        Op::Unpack {
                            parts: parts.iter().map(|p| self.opt_reg(fi, p)).collect::<DResult<_>>()?,
                            s: self.s(at, 1)?,
                            elem_bits: ty.bits() / n.max(1),
                        }
                    }
                    _ => {
                        let d = self.dreg(at, 0)?;
                        let bits = match &ops[0] {
                            Operand::Reg(r) => reg_bits(f.regs[*r].ty).min(ty.bits().max(8)),
                            _ => 64,
                        };
                        Op::Mov { d, a: self.s(at, 1)?, bits: if bits >= 64 { 64 } else { bits } }
                    }
                }
            }
            _ => return Ok(None),
        }))
    }
}
