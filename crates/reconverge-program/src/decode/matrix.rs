//! Instruction family: the warp-wide matrix instructions of the tensor cores (`mma`, `ldmatrix`,
//! `stmatrix`, `movmatrix`, `wmma.load/store/mma`).

use super::*;
use reconverge_semantics::mma::{Elem, Operand as Which, Shape};

/// Whether the instruction carries the modifier word `w` (known or not).
fn word(inst: &reconverge_ir::Inst, w: &str) -> bool {
    inst.mods.iter().any(|m| m.as_str() == w)
}

/// A PTX type as a matrix element type.
fn elem(t: ScalarType) -> DResult<Elem> {
    Ok(match t {
        ScalarType::F16 | ScalarType::F16x2 => Elem::F16,
        ScalarType::Bf16 | ScalarType::Bf16x2 => Elem::Bf16,
        ScalarType::Tf32 => Elem::Tf32,
        ScalarType::F32 => Elem::F32,
        ScalarType::F64 => Elem::F64,
        ScalarType::S8 => Elem::S8,
        ScalarType::U8 => Elem::U8,
        ScalarType::S32 => Elem::S32,
        _ => return Err(Unsupported::Form("a matrix element type other than f16, bf16, tf32, f32, f64, s8, u8, s32")),
    })
}

/// The rounding modifier of `.f64` matrix instructions.
fn rounding(inst: &reconverge_ir::Inst) -> reconverge_semantics::Rounding {
    use reconverge_semantics::Rounding;
    if inst.has(K::Rz) {
        Rounding::Rz
    } else if inst.has(K::Rm) {
        Rounding::Rm
    } else if inst.has(K::Rp) {
        Rounding::Rp
    } else {
        Rounding::Rn
    }
}

/// The `mma` shape modifier.
fn mma_shape(inst: &reconverge_ir::Inst) -> DResult<Shape> {
    Shape::ALL
        .into_iter()
        .find(|s| word(inst, s.name()))
        .ok_or(Unsupported::Form("an mma shape reconverge does not have (m8n8k4 .f64, m16n8k4/k8/k16/k32, m8n8k16)"))
}

/// The `wmma` shape modifier.
fn wmma_shape(inst: &reconverge_ir::Inst) -> DResult<WmmaShape> {
    [WmmaShape::M16N16K16, WmmaShape::M32N8K16, WmmaShape::M8N32K16, WmmaShape::M16N16K8, WmmaShape::M8N8K4]
        .into_iter()
        .find(|s| word(inst, s.name()))
        .ok_or(Unsupported::Form("a wmma shape reconverge does not have"))
}

impl<'m> Decoder<'m> {
    /// The registers of a vector operand (or a single register) as sources.
    fn srcs(&self, at: &At<'_>, op: &Operand) -> DResult<Box<[Src]>> {
        match op {
            Operand::Vector(items) => items.iter().map(|o| self.src(at.fi, at.f, o, None)).collect(),
            o => Ok(Box::new([self.src(at.fi, at.f, o, None)?])),
        }
    }

    /// The registers of a vector destination (or a single register); none may be `_`.
    fn dests(&self, at: &At<'_>, op: &Operand) -> DResult<Box<[Reg]>> {
        let regs = self.vec_regs(at.fi, op)?;
        regs.into_iter()
            .map(|r| r.ok_or(Unsupported::Form("a matrix instruction's destination cannot be `_`")))
            .collect()
    }

    fn decode_mma(&self, at: &At<'_>) -> DResult<Op> {
        let inst = at.inst;
        at.need(4)?;
        if !word(inst, "row") || !word(inst, "col") {
            return Err("mma needs .row.col (the only layouts of its shapes)".into());
        }
        let t: SmallVec<[Elem; 4]> = inst.types.iter().map(|t| elem(*t)).collect::<DResult<_>>()?;
        let [d, a, b, c] = t[..] else { return Err("mma needs .dtype.atype.btype.ctype".into()) };
        let kind = MmaKind {
            satfinite: word(inst, "satfinite"),
            rnd: rounding(inst),
            ..MmaKind::new(mma_shape(inst)?, a, b, c, d)
        };
        if !kind.is_valid() {
            return Err("an mma type combination reconverge does not have".into());
        }
        let ops = &inst.operands;
        let op = Op::Mma {
            kind,
            d: self.dests(at, &ops[0])?,
            a: self.srcs(at, &ops[1])?,
            b: self.srcs(at, &ops[2])?,
            c: self.srcs(at, &ops[3])?,
        };
        let [na, nb, nc, nd] = kind.regs();
        match &op {
            Op::Mma { d, a, b, c, .. } if (d.len(), a.len(), b.len(), c.len()) == (nd, na, nb, nc) => Ok(op),
            _ => Err("mma operands do not have the shape's register counts".into()),
        }
    }

    fn decode_wmma(&self, at: &At<'_>) -> DResult<Op> {
        let inst = at.inst;
        let ops = &inst.operands;
        let shape = wmma_shape(inst)?;
        if word(inst, "mma") {
            at.need(4)?;
            let t: SmallVec<[Elem; 4]> = inst.types.iter().map(|t| elem(*t)).collect::<DResult<_>>()?;
            let (d, a, b, c) = match t[..] {
                [d, c] => (d, Elem::F16, Elem::F16, c),
                [d, a, b, c] => (d, a, b, c),
                _ => return Err("wmma.mma needs .dtype.ctype or .dtype.atype.btype.ctype".into()),
            };
            let kind = WmmaKind {
                satfinite: word(inst, "satfinite"),
                rnd: rounding(inst),
                ..WmmaKind::new(shape, a, b, c, d)
            };
            if !kind.is_valid() {
                return Err("a wmma type combination reconverge does not have".into());
            }
            let op = Op::WmmaMma {
                kind,
                d: self.dests(at, &ops[0])?,
                a: self.srcs(at, &ops[1])?,
                b: self.srcs(at, &ops[2])?,
                c: self.srcs(at, &ops[3])?,
            };
            return Ok(op);
        }
        let store = word(inst, "store");
        if !store && !word(inst, "load") {
            return Err("wmma needs .load, .store or .mma".into());
        }
        let which = if store || word(inst, "c") || word(inst, "d") {
            Which::C
        } else if word(inst, "a") {
            Which::A
        } else {
            Which::B
        };
        let frag = WmmaFragment { shape, which, elem: elem(at.t()?)? };
        let regs = reconverge_semantics::mma::wmma_regs(shape, which, frag.elem);
        if regs == 0 {
            return Err("a wmma fragment reconverge does not have".into());
        }
        at.need(2)?;
        let row_major = !word(inst, "col");
        let (mem, data) = if store { (0, 1) } else { (1, 0) };
        let (space, addr) = self.addr(at.fi, at.f, &ops[mem], inst.space())?;
        let stride = match ops.get(2) {
            Some(o) => self.src(at.fi, at.f, o, Some(ScalarType::U32))?,
            // Without a stride, the matrix is packed: a row (or column) is the fragment's width (height).
            None => {
                let (m, n, k) = shape.mnk();
                let (rows, cols) = match which {
                    Which::A => (m, k),
                    Which::B => (k, n),
                    Which::C => (m, n),
                };
                Src::Imm(if row_major { cols } else { rows } as u64)
            }
        };
        Ok(if store {
            Op::WmmaStore { frag, row_major, s: self.srcs(at, &ops[data])?, space, addr, stride }
        } else {
            Op::WmmaLoad { frag, row_major, d: self.dests(at, &ops[data])?, space, addr, stride }
        })
        .and_then(|op| match &op {
            Op::WmmaStore { s, .. } if s.len() != regs => {
                Err("wmma.store's fragment has the wrong register count".into())
            }
            Op::WmmaLoad { d, .. } if d.len() != regs => {
                Err("wmma.load's fragment has the wrong register count".into())
            }
            _ => Ok(op),
        })
    }

    /// `ldmatrix`/`stmatrix`: `(num, trans)` and the operands.
    fn decode_ld_st_matrix(&self, at: &At<'_>) -> DResult<Op> {
        let inst = at.inst;
        at.need(2)?;
        if !word(inst, "m8n8") || at.ty != Some(ScalarType::B16) {
            return Err("ldmatrix/stmatrix are supported for .m8n8 .b16".into());
        }
        let num = [(1, "x1"), (2, "x2"), (4, "x4")].into_iter().find(|(_, w)| word(inst, w)).map(|(n, _)| n);
        let num = num.ok_or("ldmatrix/stmatrix needs .x1, .x2 or .x4")?;
        let trans = word(inst, "trans");
        let ops = &inst.operands;
        Ok(if inst.opcode == Opcode::Ldmatrix {
            let (space, addr) = self.addr(at.fi, at.f, &ops[1], inst.space())?;
            Op::Ldmatrix { num, trans, d: self.dests(at, &ops[0])?, space, addr }
        } else {
            let (space, addr) = self.addr(at.fi, at.f, &ops[0], inst.space())?;
            Op::Stmatrix { num, trans, s: self.srcs(at, &ops[1])?, space, addr }
        })
    }

    /// The tensor-core family.
    pub(super) fn decode_matrix(&self, at: &At<'_>) -> DResult<Option<Op>> {
        Ok(Some(match at.inst.opcode {
            Opcode::Mma => self.decode_mma(at)?,
            Opcode::Wmma => self.decode_wmma(at)?,
            Opcode::Ldmatrix | Opcode::Stmatrix => self.decode_ld_st_matrix(at)?,
            Opcode::Movmatrix => {
                at.need(2)?;
                if !word(at.inst, "trans") {
                    return Err("movmatrix needs .trans".into());
                }
                Op::Movmatrix { d: self.dreg(at, 0)?, a: self.src(at.fi, at.f, &at.inst.operands[1], None)? }
            }
            _ => return Ok(None),
        }))
    }
}
