//! Instruction families: unary and binary arithmetic, integer operations, fused multiply-adds and bit
//! manipulation.

use super::*;

impl<'m> Decoder<'m> {
    /// Unary and binary arithmetic: integer unary operations, floating-point binary operations, predicate logic.
    pub(super) fn decode_unary_binary(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi) = (at.inst, &at.inst.operands, at.fi);
        Ok(Some(match &at.inst.opcode {
            Opcode::Abs | Opcode::Neg if at.is_float() => {
                at.need(2)?;
                let op = if inst.opcode == Opcode::Abs { FloatUnOp::Abs } else { FloatUnOp::Neg };
                Op::FloatUn { op, ty: at.t()?, mode: Self::fmode(inst), d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Not | Opcode::Cnot if at.is_pred() => {
                at.need(2)?;
                Op::PredOp {
                    op: None,
                    not: true,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: PredSrc::Const(false),
                }
            }
            Opcode::Abs
            | Opcode::Neg
            | Opcode::Not
            | Opcode::Cnot
            | Opcode::Popc
            | Opcode::Clz
            | Opcode::Brev
            | Opcode::Bfind => {
                at.need(2)?;
                let op = match inst.opcode {
                    Opcode::Abs => IntUnOp::Abs,
                    Opcode::Neg => IntUnOp::Neg,
                    Opcode::Not => IntUnOp::Not,
                    Opcode::Cnot => IntUnOp::Cnot,
                    Opcode::Popc => IntUnOp::Popc,
                    Opcode::Clz => IntUnOp::Clz,
                    Opcode::Brev => IntUnOp::Brev,
                    _ if inst.has(K::Shiftamt) => IntUnOp::BfindShiftAmt,
                    _ => IntUnOp::Bfind,
                };
                Op::IntUn { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::Min | Opcode::Max | Opcode::Copysign
                if at.is_float() =>
            {
                at.need(3)?;
                let op = match inst.opcode {
                    Opcode::Add => FloatBinOp::Add,
                    Opcode::Sub => FloatBinOp::Sub,
                    Opcode::Mul => FloatBinOp::Mul,
                    Opcode::Div => FloatBinOp::Div,
                    Opcode::Min => FloatBinOp::Min,
                    Opcode::Max => FloatBinOp::Max,
                    _ => FloatBinOp::Copysign,
                };
                Op::FloatBin {
                    op,
                    ty: at.t()?,
                    mode: Self::fmode(inst),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                }
            }
            Opcode::And | Opcode::Or | Opcode::Xor if at.is_pred() => {
                at.need(3)?;
                let op = match inst.opcode {
                    Opcode::And => BoolOp::And,
                    Opcode::Or => BoolOp::Or,
                    _ => BoolOp::Xor,
                };
                Op::PredOp {
                    op: Some(op),
                    not: false,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: self.pred_src(fi, &ops[2])?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Integer arithmetic with carries and the integer binary operations.
    pub(super) fn decode_integer(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Add | Opcode::Sub if inst.has(K::Cc) => {
                at.need(3)?;
                let op = if inst.opcode == Opcode::Add { CarryOp::Add } else { CarryOp::Sub };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: false,
                    cout: true,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: Src::Imm(0),
                }
            }
            Opcode::Addc | Opcode::Subc => {
                at.need(3)?;
                let op = if inst.opcode == Opcode::Addc { CarryOp::Add } else { CarryOp::Sub };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: true,
                    cout: inst.has(K::Cc),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: Src::Imm(0),
                }
            }
            Opcode::Mad if inst.has(K::Cc) => {
                at.need(4)?;
                let op = if inst.has(K::Hi) { CarryOp::MadHi } else { CarryOp::MadLo };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: false,
                    cout: true,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Madc => {
                at.need(4)?;
                let op = if inst.has(K::Hi) { CarryOp::MadHi } else { CarryOp::MadLo };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: true,
                    cout: inst.has(K::Cc),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Mul24
            | Opcode::Div
            | Opcode::Rem
            | Opcode::Min
            | Opcode::Max
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Bmsk
            | Opcode::Szext => {
                at.need(3)?;
                let sat = inst.has(K::Sat);
                let op = match inst.opcode {
                    Opcode::Add if sat => IntBinOp::AddSat,
                    Opcode::Add => IntBinOp::Add,
                    Opcode::Sub if sat => IntBinOp::SubSat,
                    Opcode::Sub => IntBinOp::Sub,
                    Opcode::Mul if inst.has(K::Hi) => IntBinOp::MulHi,
                    Opcode::Mul if inst.has(K::Wide) => IntBinOp::MulWide,
                    Opcode::Mul => IntBinOp::MulLo,
                    Opcode::Mul24 if inst.has(K::Hi) => IntBinOp::Mul24Hi,
                    Opcode::Mul24 => IntBinOp::Mul24Lo,
                    Opcode::Div => IntBinOp::Div,
                    Opcode::Rem => IntBinOp::Rem,
                    Opcode::Min => IntBinOp::Min,
                    Opcode::Max => IntBinOp::Max,
                    Opcode::And => IntBinOp::And,
                    Opcode::Or => IntBinOp::Or,
                    Opcode::Xor => IntBinOp::Xor,
                    Opcode::Shl => IntBinOp::Shl,
                    Opcode::Shr => IntBinOp::Shr,
                    Opcode::Bmsk if inst.has(K::Wrap) => IntBinOp::BmskWrap,
                    Opcode::Bmsk => IntBinOp::BmskClamp,
                    Opcode::Szext if inst.has(K::Wrap) => IntBinOp::SzextWrap,
                    _ => IntBinOp::SzextClamp,
                };
                // Shift amounts are always .u32 operands.
                let b = if matches!(op, IntBinOp::Shl | IntBinOp::Shr) {
                    self.src(fi, f, &ops[2], Some(ScalarType::U32))?
                } else {
                    self.s(at, 2)?
                };
                Op::IntBin { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b }
            }
            _ => return Ok(None),
        }))
    }

    /// Fused multiply-adds, bit-field and permutation operations, special functions, `testp`.
    pub(super) fn decode_fused_and_bits(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Mad | Opcode::Fma if at.is_float() => {
                at.need(4)?;
                Op::Fma {
                    ty: at.t()?,
                    mode: Self::fmode(inst),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Mad | Opcode::Mad24 | Opcode::Bfe | Opcode::Sad | Opcode::Dp4a | Opcode::Dp2a => {
                at.need(4)?;
                let op = match inst.opcode {
                    Opcode::Mad if inst.has(K::Hi) && inst.has(K::Sat) => IntTerOp::MadHiSat,
                    Opcode::Mad if inst.has(K::Hi) => IntTerOp::MadHi,
                    Opcode::Mad if inst.has(K::Wide) => IntTerOp::MadWide,
                    Opcode::Mad => IntTerOp::MadLo,
                    Opcode::Mad24 if inst.has(K::Hi) => IntTerOp::Mad24Hi,
                    Opcode::Mad24 => IntTerOp::Mad24Lo,
                    Opcode::Bfe => IntTerOp::Bfe,
                    Opcode::Sad => IntTerOp::Sad,
                    Opcode::Dp4a => {
                        let a = inst.types.first().map(|t| t.is_signed()).unwrap_or(false);
                        let b = inst.types.get(1).map(|t| t.is_signed()).unwrap_or(false);
                        IntTerOp::Dp4a(a, b)
                    }
                    _ => {
                        let a = inst.types.first().map(|t| t.is_signed()).unwrap_or(false);
                        let b = inst.types.get(1).map(|t| t.is_signed()).unwrap_or(false);
                        IntTerOp::Dp2a(a, b, inst.has(K::Hi))
                    }
                };
                let (b, c) = if op == IntTerOp::Bfe {
                    (self.src(fi, f, &ops[2], Some(ScalarType::U32))?, self.src(fi, f, &ops[3], Some(ScalarType::U32))?)
                } else {
                    (self.s(at, 2)?, self.s(at, 3)?)
                };
                Op::IntTer { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b, c }
            }
            Opcode::Bfi => {
                at.need(5)?;
                Op::Bfi {
                    ty: at.t()?,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(ScalarType::U32))?,
                    e: self.src(fi, f, &ops[4], Some(ScalarType::U32))?,
                }
            }
            Opcode::Prmt => {
                at.need(4)?;
                let mode = inst.mods.iter().find_map(|m| match m {
                    Modifier::Known(k @ (K::F4e | K::B4e | K::Rc8 | K::Ecl | K::Ecr | K::Rc16)) => Some(*k),
                    _ => None,
                });
                Op::Prmt { mode, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.s(at, 3)? }
            }
            Opcode::Lop3 => {
                at.need(5)?;
                let lut = match &ops[4] {
                    Operand::Imm(Imm::Int(v)) => *v as u8,
                    _ => return Err("lop3 needs an immediate lookup table".into()),
                };
                Op::Lop3 { d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.s(at, 3)?, lut }
            }
            Opcode::Shf => {
                at.need(4)?;
                Op::Shf {
                    left: inst.has(K::L),
                    clamp: inst.has(K::Clamp),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(ScalarType::U32))?,
                }
            }
            Opcode::Sqrt
            | Opcode::Rcp
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Ex2
            | Opcode::Lg2
            | Opcode::Tanh => {
                at.need(2)?;
                let op = match inst.opcode {
                    Opcode::Sqrt => FloatUnOp::Sqrt,
                    Opcode::Rcp => FloatUnOp::Rcp,
                    Opcode::Rsqrt => FloatUnOp::Rsqrt,
                    Opcode::Sin => FloatUnOp::Sin,
                    Opcode::Cos => FloatUnOp::Cos,
                    Opcode::Ex2 => FloatUnOp::Ex2,
                    Opcode::Lg2 => FloatUnOp::Lg2,
                    _ => FloatUnOp::Tanh,
                };
                Op::FloatUn { op, ty: at.t()?, mode: Self::fmode(inst), d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Testp => {
                at.need(2)?;
                let test = inst
                    .mods
                    .iter()
                    .find(|m| {
                        matches!(m.as_str(), "finite" | "infinite" | "number" | "notanumber" | "normal" | "subnormal")
                    })
                    .cloned()
                    .ok_or("testp needs a test")?;
                Op::Testp { op: K::Abs, test, ty: at.t()?, p: self.pred(fi, &ops[0])?, a: self.s(at, 1)? }
            }
            _ => return Ok(None),
        }))
    }
}
