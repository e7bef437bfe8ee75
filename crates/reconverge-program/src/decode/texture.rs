//! Instruction family: texture and surface accesses (`tex`, `tld4`, `txq`, `suq`, `suld.b`, `sust.b`) on
//! texture and surface objects.

use super::*;

/// Whether the instruction carries the modifier word `w` (known or not).
fn word(inst: &reconverge_ir::Inst, w: &str) -> bool {
    inst.mods.iter().any(|m| m.as_str() == w)
}

/// The geometry modifier.
fn geometry(inst: &reconverge_ir::Inst) -> DResult<Geometry> {
    for m in &inst.mods {
        match m.as_str() {
            "1d" => return Ok(Geometry::D1),
            "2d" => return Ok(Geometry::D2),
            "3d" => return Ok(Geometry::D3),
            "a1d" => return Ok(Geometry::A1),
            "a2d" => return Ok(Geometry::A2),
            "cube" | "acube" => return Err("cube-map textures are not supported".into()),
            "2dms" | "a2dms" => return Err("multisample textures are not supported".into()),
            _ => {}
        }
    }
    Err("a texture or surface instruction needs a geometry (.1d, .2d, .3d, .a1d, .a2d)".into())
}

/// `tex`/`tld4`'s result type.
fn result_type(ty: Option<ScalarType>) -> DResult<ResultType> {
    match ty {
        Some(ScalarType::F32) => Ok(ResultType::F32),
        Some(ScalarType::S32) => Ok(ResultType::S32),
        Some(ScalarType::U32) => Ok(ResultType::U32),
        _ => Err("texture results other than .f32, .s32 and .u32 (e.g. .f16) are not supported".into()),
    }
}

/// The surface instruction's out-of-range mode (`.trap` when none is given, as the PTX ISA says).
fn out_of_range(inst: &reconverge_ir::Inst) -> OutOfRange {
    if inst.has(K::Clamp) {
        OutOfRange::Clamp
    } else if word(inst, "zero") {
        OutOfRange::Zero
    } else {
        OutOfRange::Trap
    }
}

/// `txq`/`suq`'s query.
fn query(inst: &reconverge_ir::Inst) -> DResult<Query> {
    for m in &inst.mods {
        let q = match m.as_str() {
            "width" => Query::Width,
            "height" => Query::Height,
            "depth" => Query::Depth,
            "array_size" => Query::ArraySize,
            "normalized_coords" => Query::NormalizedCoords,
            "filter_mode" => Query::FilterMode,
            "addr_mode_0" => Query::AddrMode(0),
            "addr_mode_1" => Query::AddrMode(1),
            "addr_mode_2" => Query::AddrMode(2),
            "num_mipmap_levels" => Query::MipmapLevels,
            "num_samples" => Query::Samples,
            "channel_data_type" | "channel_order" | "memory_layout" | "force_unnormalized_coords" => {
                return Err("this txq/suq query is not supported".into())
            }
            _ => continue,
        };
        return Ok(q);
    }
    Err("txq/suq needs a query (.width, .height, ...)".into())
}

impl<'m> Decoder<'m> {
    /// The object register of an image operand or of `txq`'s address.
    fn handle(&self, fi: usize, f: &Function, op: &Operand) -> DResult<Src> {
        let reg = match op {
            Operand::Reg(r) => *r,
            Operand::Addr(reconverge_ir::Address { base: IrBase::Reg(r), offset: 0 }) => *r,
            Operand::Sym(_) | Operand::Addr(_) => {
                return Err("texture and surface references (.texref, .surfref) are not supported: use texture \
                            objects (reconverge_compat.h maps texture<> references onto them)"
                    .into())
            }
            other => {
                return Err(Unsupported::Operand {
                    expected: "a texture or surface object",
                    found: format!("{other:?}"),
                })
            }
        };
        self.src(fi, f, &Operand::Reg(reg), Some(ScalarType::U64))
    }

    /// The object and coordinates of `[h, {c...}]`; coordinates of `ty` (a layer index is read as `.s32`).
    fn image(&self, at: &At<'_>, op: &Operand, geom: Geometry, ty: ScalarType) -> DResult<(Src, Box<[Src]>)> {
        let Operand::Image { handle, coords } = op else {
            return Err(Unsupported::Operand { expected: "`[object, {coordinates}]`", found: format!("{op:?}") });
        };
        let handle = self.handle(at.fi, at.f, handle)?;
        let needed = geom.dims() + usize::from(geom.layered());
        if coords.len() < needed {
            return Err("too few coordinates for the geometry".into());
        }
        let coords = coords
            .iter()
            .enumerate()
            .map(|(k, o)| {
                let t = if geom.layered() && k == 0 { ScalarType::S32 } else { ty };
                self.src(at.fi, at.f, o, Some(t))
            })
            .collect::<DResult<_>>()?;
        Ok((handle, coords))
    }

    /// The four destinations of `tex`/`tld4`.
    fn four(&self, at: &At<'_>) -> DResult<[Option<Reg>; 4]> {
        let regs = self.vec_regs(at.fi, &at.inst.operands[0])?;
        if regs.len() != 4 {
            return Err("texture fetches need a .v4 destination".into());
        }
        Ok([regs[0], regs[1], regs[2], regs[3]])
    }

    /// Texture and surface instructions.
    pub(super) fn decode_texture(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let inst = at.inst;
        let ops = &inst.operands;
        Ok(Some(match inst.opcode {
            Opcode::Tex | Opcode::Tld4 => {
                at.need(2)?;
                let geom = geometry(inst)?;
                let ty = result_type(inst.types.first().copied())?;
                let cty = inst.types.get(1).copied().ok_or("tex needs a coordinate type")?;
                let int_coords = match cty {
                    ScalarType::S32 => true,
                    ScalarType::F32 => false,
                    _ => return Err("texture coordinates must be .s32 or .f32".into()),
                };
                let gather = if inst.opcode == Opcode::Tld4 {
                    if geom != Geometry::D2 || int_coords {
                        return Err("tld4 is supported on .2d textures with .f32 coordinates".into());
                    }
                    Some(["r", "g", "b", "a"].iter().position(|c| word(inst, c)).ok_or("tld4 needs .r, .g, .b or .a")?
                        as u8)
                } else {
                    None
                };
                let (handle, coords) = self.image(at, &ops[1], geom, cty)?;
                let mut ignored = Vec::new();
                for o in &ops[2..] {
                    match o {
                        Operand::Vector(items) => {
                            for i in items {
                                ignored.push(self.src(at.fi, at.f, i, Some(ScalarType::F32))?);
                            }
                        }
                        o => ignored.push(self.src(at.fi, at.f, o, Some(ScalarType::F32))?),
                    }
                }
                let fetch = TexFetch { geom, ty, int_coords, gather };
                Op::Tex { fetch, d: self.four(at)?, handle, coords, ignored: ignored.into() }
            }
            Opcode::Txq | Opcode::Suq => {
                at.need(2)?;
                Op::Txq { query: query(inst)?, d: self.dreg(at, 0)?, handle: self.handle(at.fi, at.f, &ops[1])? }
            }
            Opcode::Suld | Opcode::Sust => {
                at.need(2)?;
                if !word(inst, "b") {
                    return Err("only unformatted surface accesses (suld.b, sust.b) are supported".into());
                }
                let geom = geometry(inst)?;
                let size = at.t()?.bytes();
                let oob = out_of_range(inst);
                if inst.opcode == Opcode::Suld {
                    let (handle, coords) = self.image(at, &ops[1], geom, ScalarType::S32)?;
                    Op::Suld { geom, size, oob, d: self.vec_regs(at.fi, &ops[0])?, handle, coords }
                } else {
                    let (handle, coords) = self.image(at, &ops[0], geom, ScalarType::S32)?;
                    let s: Box<[Src]> = match &ops[1] {
                        Operand::Vector(items) => {
                            items.iter().map(|o| self.src(at.fi, at.f, o, at.ty)).collect::<DResult<_>>()?
                        }
                        o => Box::new([self.src(at.fi, at.f, o, at.ty)?]),
                    };
                    Op::Sust { geom, size, oob, s, handle, coords }
                }
            }
            _ => return Ok(None),
        }))
    }
}
