//! Operands: registers, predicates, special registers, immediates, symbols, addresses and float modes.

use super::*;

pub(super) fn sreg(kind: SpecialRegKind, dim: Option<reconverge_ir::Dim>) -> Sreg {
    let d = dim.map(|d| d.index() as u8).unwrap_or(0);
    match kind {
        SpecialRegKind::Tid => Sreg::Tid(d),
        SpecialRegKind::Ntid => Sreg::Ntid(d),
        SpecialRegKind::Ctaid => Sreg::Ctaid(d),
        SpecialRegKind::Nctaid => Sreg::Nctaid(d),
        SpecialRegKind::Laneid => Sreg::Laneid,
        SpecialRegKind::Warpid => Sreg::Warpid,
        SpecialRegKind::Nwarpid => Sreg::Nwarpid,
        SpecialRegKind::Smid => Sreg::Smid,
        SpecialRegKind::Nsmid => Sreg::Nsmid,
        SpecialRegKind::Gridid => Sreg::Gridid,
        SpecialRegKind::Clock => Sreg::Clock,
        SpecialRegKind::ClockHi => Sreg::ClockHi,
        SpecialRegKind::Clock64 => Sreg::Clock64,
        SpecialRegKind::Globaltimer => Sreg::Globaltimer,
        SpecialRegKind::LanemaskEq => Sreg::LanemaskEq,
        SpecialRegKind::LanemaskLe => Sreg::LanemaskLe,
        SpecialRegKind::LanemaskLt => Sreg::LanemaskLt,
        SpecialRegKind::LanemaskGe => Sreg::LanemaskGe,
        SpecialRegKind::LanemaskGt => Sreg::LanemaskGt,
        SpecialRegKind::DynamicSmemSize => Sreg::DynamicSmemSize,
        SpecialRegKind::TotalSmemSize => Sreg::TotalSmemSize,
        SpecialRegKind::WarpSize => Sreg::WarpSize,
    }
}

pub(super) fn imm_for(imm: Imm, ty: Option<ScalarType>) -> u64 {
    match (imm, ty) {
        (Imm::Int(v), _) => v as u64,
        (Imm::F32(b), Some(ScalarType::F64)) => (f32::from_bits(b) as f64).to_bits(),
        (Imm::F32(b), _) => b as u64,
        (Imm::F64(b), Some(ScalarType::F32)) => (f64::from_bits(b) as f32).to_bits() as u64,
        (Imm::F64(b), _) => b,
    }
}

pub(super) fn reg_bits(ty: ScalarType) -> u32 {
    ty.bits().max(8)
}

pub(super) fn cmp_of(m: &Modifier) -> Option<Cmp> {
    let Modifier::Known(k) = m else { return None };
    Some(match k {
        K::Eq => Cmp::Eq,
        K::Ne => Cmp::Ne,
        K::Lt => Cmp::Lt,
        K::Le => Cmp::Le,
        K::Gt => Cmp::Gt,
        K::Ge => Cmp::Ge,
        K::Lo => Cmp::Lo,
        K::Ls => Cmp::Ls,
        K::Hi => Cmp::Hi,
        K::Hs => Cmp::Hs,
        K::Equ => Cmp::Equ,
        K::Neu => Cmp::Neu,
        K::Ltu => Cmp::Ltu,
        K::Leu => Cmp::Leu,
        K::Gtu => Cmp::Gtu,
        K::Geu => Cmp::Geu,
        K::Num => Cmp::Num,
        K::Nan => Cmp::Nan,
        _ => return None,
    })
}

pub(super) fn bool_of(m: &Modifier) -> Option<BoolOp> {
    match m {
        Modifier::Known(K::And) => Some(BoolOp::And),
        Modifier::Known(K::Or) => Some(BoolOp::Or),
        Modifier::Known(K::Xor) => Some(BoolOp::Xor),
        _ => None,
    }
}

impl At<'_> {
    /// The instruction's type, which it needs.
    pub(super) fn t(&self) -> DResult<ScalarType> {
        self.ty.ok_or_else(|| Unsupported::NeedsType(self.inst.opcode.to_string()))
    }

    /// At least `n` operands.
    pub(super) fn need(&self, n: usize) -> DResult<()> {
        if self.inst.operands.len() < n {
            Err(Unsupported::NeedsOperands { opcode: self.inst.opcode.to_string(), n })
        } else {
            Ok(())
        }
    }

    /// Whether the instruction is of a floating-point type.
    pub(super) fn is_float(&self) -> bool {
        self.ty.is_some_and(|t| t.is_float())
    }

    /// Whether the instruction is of the predicate type.
    pub(super) fn is_pred(&self) -> bool {
        self.ty == Some(ScalarType::Pred)
    }
}

impl<'m> Decoder<'m> {
    // ----- operand helpers -----

    pub(super) fn reg(&self, fi: usize, op: &Operand) -> DResult<Reg> {
        match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (false, idx) => Ok(idx),
                (true, _) => Err("a predicate register where a value register is expected".into()),
            },
            other => Err(Unsupported::Operand { expected: "a register", found: format!("{other:?}") }),
        }
    }

    pub(super) fn opt_reg(&self, fi: usize, op: &Operand) -> DResult<Option<Reg>> {
        match op {
            Operand::Sink => Ok(None),
            _ => self.reg(fi, op).map(Some),
        }
    }

    pub(super) fn pred(&self, fi: usize, op: &Operand) -> DResult<Pred> {
        match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (true, idx) => Ok(idx),
                (false, _) => Err("a value register where a predicate is expected".into()),
            },
            other => Err(Unsupported::Operand { expected: "a predicate", found: format!("{other:?}") }),
        }
    }

    pub(super) fn pred_src(&self, fi: usize, op: &Operand) -> DResult<PredSrc> {
        match op {
            Operand::Reg(r) => Ok(PredSrc::Reg(self.pred(fi, &Operand::Reg(*r))?, false)),
            Operand::NotReg(r) => Ok(PredSrc::Reg(self.pred(fi, &Operand::Reg(*r))?, true)),
            Operand::Imm(Imm::Int(v)) => Ok(PredSrc::Const(*v != 0)),
            other => Err(Unsupported::Operand { expected: "a predicate operand", found: format!("{other:?}") }),
        }
    }

    pub(super) fn sym_value(&self, fi: usize, f: &Function, sym: Symbol) -> DResult<Src> {
        Ok(match sym {
            Symbol::Global(g) => match self.global_addr.get(&g) {
                Some((_, a)) => Src::Imm(*a),
                None => return Err("address of a variable in an unsupported state space".into()),
            },
            Symbol::Local(l) => match self.ctxs[fi].locals[l.index()] {
                LocalPlace::Frame(off) => Src::LocalAddr(off),
                LocalPlace::Shared(a) | LocalPlace::Const(a) => Src::Imm(a),
            },
            Symbol::Param(n) => {
                if f.kind == FuncKind::Entry {
                    Src::Imm(self.prog.params.get(n as usize).map(|p| p.offset).unwrap_or(0) as u64)
                } else {
                    Src::LocalAddr(self.prog.functions[fi].param_offsets[n as usize])
                }
            }
            Symbol::Ret(n) => Src::LocalAddr(self.prog.functions[fi].ret_offsets[n as usize]),
            Symbol::Func(id) => match self.func_index.get(&id) {
                Some(i) => Src::Imm(FUNC_ADDR_BASE + *i as u64),
                None => return Err(Unsupported::BodilessAddress(self.m.functions[id].name.clone())),
            },
            other => return Err(Unsupported::Symbol { symbol: format!("{other:?}"), role: "a value" }),
        })
    }

    pub(super) fn src(&self, fi: usize, f: &Function, op: &Operand, ty: Option<ScalarType>) -> DResult<Src> {
        Ok(match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (false, idx) => Src::Reg(idx),
                (true, idx) => Src::Pred(idx),
            },
            Operand::Imm(i) => Src::Imm(imm_for(*i, ty)),
            Operand::Special(s) => Src::Sreg(sreg(s.kind, s.dim)),
            Operand::Sym(sym) => self.sym_value(fi, f, *sym)?,
            other => return Err(Unsupported::Operand { expected: "a source operand", found: format!("{other:?}") }),
        })
    }

    /// Resolves an address operand and the access space.
    pub(super) fn addr(
        &self,
        fi: usize,
        f: &Function,
        op: &Operand,
        declared: Option<StateSpace>,
    ) -> DResult<(Space, Addr)> {
        let Operand::Addr(a) = op else {
            return Err(Unsupported::Operand { expected: "an address", found: format!("{op:?}") });
        };
        let is_kernel = f.kind == FuncKind::Entry;
        let space_of = |s: Option<StateSpace>| -> Space {
            match s {
                None => Space::Generic,
                Some(StateSpace::Global) => Space::Global,
                Some(StateSpace::Shared) => Space::Shared,
                Some(StateSpace::Local) => Space::Local,
                Some(StateSpace::Const) => Space::Const,
                Some(StateSpace::Param) => {
                    if is_kernel {
                        Space::KernelParam
                    } else {
                        Space::Local
                    }
                }
                Some(_) => Space::Generic,
            }
        };
        Ok(match a.base {
            IrBase::Reg(r) => {
                let reg = self.reg(fi, &Operand::Reg(r))?;
                let base = if reg_bits(f.regs[r].ty) <= 32 { AddrBase::Reg32(reg) } else { AddrBase::Reg(reg) };
                (space_of(declared), Addr { base, offset: a.offset })
            }
            IrBase::Abs => (space_of(declared), Addr { base: AddrBase::Const(a.offset as u64), offset: 0 }),
            IrBase::Sym(sym) => {
                let frame = |off: u32| (Space::Local, Addr { base: AddrBase::Frame, offset: off as i64 + a.offset });
                match sym {
                    Symbol::Global(g) => match self.global_addr.get(&g) {
                        Some((sp, addr)) => {
                            let space = match (declared, sp) {
                                (None, StateSpace::Shared) => {
                                    return Ok((
                                        Space::Generic,
                                        Addr { base: AddrBase::Const(SHARED_WINDOW + addr), offset: a.offset },
                                    ))
                                }
                                (None, StateSpace::Const) => {
                                    return Ok((
                                        Space::Generic,
                                        Addr { base: AddrBase::Const(CONST_WINDOW + addr), offset: a.offset },
                                    ))
                                }
                                (_, StateSpace::Global) => Space::Global,
                                (_, StateSpace::Shared) => Space::Shared,
                                (_, StateSpace::Const) => Space::Const,
                                _ => Space::Generic,
                            };
                            (space, Addr { base: AddrBase::Const(*addr), offset: a.offset })
                        }
                        None => return Err("address of a variable in an unsupported state space".into()),
                    },
                    Symbol::Local(l) => match self.ctxs[fi].locals[l.index()] {
                        LocalPlace::Frame(off) => match declared {
                            None => return Err("generic access to a frame variable by name is not supported".into()),
                            _ => frame(off),
                        },
                        LocalPlace::Shared(s) => (Space::Shared, Addr { base: AddrBase::Const(s), offset: a.offset }),
                        LocalPlace::Const(c) => (Space::Const, Addr { base: AddrBase::Const(c), offset: a.offset }),
                    },
                    Symbol::Param(n) if is_kernel => {
                        let off = self.prog.params.get(n as usize).map(|p| p.offset).unwrap_or(0);
                        if declared.is_none() {
                            (
                                Space::Generic,
                                Addr { base: AddrBase::Const(PARAM_WINDOW + off as u64), offset: a.offset },
                            )
                        } else {
                            (Space::KernelParam, Addr { base: AddrBase::Const(off as u64), offset: a.offset })
                        }
                    }
                    Symbol::Param(n) => frame(self.prog.functions[fi].param_offsets[n as usize]),
                    Symbol::Ret(n) => frame(self.prog.functions[fi].ret_offsets[n as usize]),
                    other => return Err(Unsupported::Symbol { symbol: format!("{other:?}"), role: "an address" }),
                }
            }
        })
    }

    pub(super) fn vec_regs(&self, fi: usize, op: &Operand) -> DResult<VecRegs> {
        match op {
            Operand::Vector(items) => items.iter().map(|o| self.opt_reg(fi, o)).collect(),
            other => Ok(SmallVec::from_elem(self.opt_reg(fi, other)?, 1)),
        }
    }

    pub(super) fn fmode(inst: &reconverge_ir::Inst) -> FMode {
        let rnd = if inst.has(K::Rz) {
            FRound::Rz
        } else if inst.has(K::Rm) {
            FRound::Rm
        } else if inst.has(K::Rp) {
            FRound::Rp
        } else if inst.has(K::Approx) {
            FRound::Approx
        } else if inst.has(K::Full) {
            FRound::Full
        } else {
            FRound::Rn
        };
        FMode { rnd, ftz: inst.has(K::Ftz), sat: inst.has(K::Sat), nan: inst.has(K::NaN) }
    }

    /// Operand `k` as a source of the instruction's type.
    pub(super) fn s(&self, at: &At<'_>, k: usize) -> DResult<Src> {
        self.src(at.fi, at.f, &at.inst.operands[k], at.ty)
    }

    /// Operand `k` as a destination value register.
    pub(super) fn dreg(&self, at: &At<'_>, k: usize) -> DResult<Reg> {
        self.reg(at.fi, &at.inst.operands[k])
    }
}
