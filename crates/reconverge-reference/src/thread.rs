//! One thread of the reference machine and the interpretation of one IR instruction for it.
//!
//! A thread is a stack of [`Frame`]s (function, position, its own registers, its local-memory base and its
//! parameter area) plus its local memory. [`run_slice`] executes instructions of one thread until it exits,
//! stops at a barrier or a warp-synchronous instruction, or uses up its time slice. Values are raw bit
//! patterns in `u64`s; every ALU result comes from `reconverge_semantics`.

use crate::error::{MemoryFaultKind, RefError, ThreadFault};
use crate::memory::{flat_read, flat_write, read_le, write_le, GlobalMem, Region};
use crate::prep::{imm_bits, FuncCode, GlobalPlace, Prepared, VarPlace};
use reconverge_ir::{
    AddrBase, Address, EntityRef, FuncId, FuncKind, Function, Inst, KnownModifier as K, Modifier, Opcode, Operand,
    RegId, ScalarType, SpecialReg, SpecialRegKind, StateSpace, Symbol,
};
use reconverge_program::layout::{
    align_up, CONST_WINDOW, FUNC_ADDR_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE,
};
use reconverge_semantics::cvt::{CvtMode, CvtRounding};
use reconverge_semantics::float::{MinMaxMode, TestpOp};
use reconverge_semantics::int::{ClampWrap, PrmtMode};
use reconverge_semantics::{cmp, cvt, float, int, select, BoolOp, CmpOp, FloatMode, FloatTy, IntTy, NumTy, Rounding};

/// One activation of a function.
pub(crate) struct Frame {
    /// The function.
    pub func: FuncId,
    /// Flat position of the next instruction (a call stays here until the callee returns).
    pub pc: usize,
    /// Registers, by register index.
    pub regs: Vec<u64>,
    /// Offset of this frame's `.local` variables in the thread's local memory.
    pub local_base: u64,
    /// Parameter area: the function's parameters, return values and call staging variables.
    pub params: Vec<u8>,
}

/// What a thread is doing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum State {
    /// Can run.
    Ready,
    /// Waiting at a CTA barrier.
    Barrier(u32),
    /// Waiting at a warp-synchronous instruction with this member mask.
    Collective(u64),
    /// Waiting at `activemask`.
    Activemask,
    /// Done.
    Exited,
}

/// One simulated thread.
pub(crate) struct Thread {
    /// `%tid`.
    pub tid: [u32; 3],
    /// Warp index in the CTA.
    pub warp: u32,
    /// Lane in the warp.
    pub lane: u32,
    /// Call stack (the kernel at the bottom).
    pub frames: Vec<Frame>,
    /// Local memory (all frames' `.local` variables).
    pub local: Vec<u8>,
    /// The carry flag of `.cc` instructions.
    pub carry: bool,
    /// Scheduling state.
    pub state: State,
    /// Instructions executed.
    pub executed: u64,
    /// Whether the last time slice ended because it ran out (the thread may be spinning).
    pub preempted: bool,
}

impl Thread {
    /// Moves the thread past the instruction it waits at.
    pub(crate) fn pass(&mut self) {
        if let Some(f) = self.frames.last_mut() {
            f.pc += 1;
        }
    }
}

/// The reduction of a `bar.red`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RedKind {
    /// `.popc.u32`
    Popc,
    /// `.and.pred`
    And,
    /// `.or.pred`
    Or,
}

/// A barrier arrival.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    /// Barrier id.
    pub id: u32,
    /// Expected thread count, if given.
    pub count: Option<u32>,
    /// Whether the thread waits (`bar.sync`, `bar.red`) or just arrives (`bar.arrive`).
    pub waits: bool,
    /// For `bar.red`: the reduction, this thread's input, and the destination register.
    pub red: Option<(RedKind, bool, RegId)>,
}

/// Why a time slice ended.
pub(crate) enum Stop {
    /// The thread exited.
    Exited,
    /// The thread arrived at a barrier (its pc is still on it).
    Barrier(Arrival),
    /// The thread waits at a warp-synchronous instruction (its pc is still on it).
    Collective(u64),
    /// The thread waits at `activemask` (its pc is still on it).
    Activemask,
    /// The slice ran out.
    Preempted,
}

/// Everything outside the thread that an instruction can touch.
pub(crate) struct Env<'a, 'm> {
    /// The prepared module.
    pub prep: &'a Prepared<'m>,
    /// Device memory.
    pub global: &'a mut GlobalMem,
    /// The CTA's shared memory.
    pub shared: &'a mut Vec<u8>,
    /// The kernel parameter buffer.
    pub kparams: &'a [u8],
    /// The constant bank.
    pub consts: &'a [u8],
    /// The CTA index.
    pub cta: [u32; 3],
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// CTA dimensions.
    pub block: [u32; 3],
    /// Threads per warp.
    pub warp_size: u32,
    /// Warps in the CTA.
    pub nwarps: u32,
    /// Dynamic shared memory bytes.
    pub dynamic_shared: u32,
    /// Local memory limit per thread.
    pub local_limit: u64,
    /// Instruction budget per thread.
    pub max_instructions: u64,
}

/// The lanes of a warp of `w` threads as a mask (32-bit member masks name lanes 0..31).
pub(crate) fn warp_lanes(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

fn mask_bits(bits: u32) -> u64 {
    reconverge_semantics::width_mask(bits)
}

fn sext(v: u64, from: u32) -> u64 {
    if from == 0 || from >= 64 {
        return v;
    }
    let sh = 64 - from;
    (((v << sh) as i64) >> sh) as u64
}

fn ity(t: ScalarType) -> Result<IntTy, ThreadFault> {
    IntTy::try_from(t).map_err(|e| ThreadFault::Unsupported(e.to_string()))
}

fn fty(t: ScalarType) -> Result<FloatTy, ThreadFault> {
    FloatTy::try_from(t).map_err(|e| ThreadFault::Unsupported(e.to_string()))
}

fn nty(t: ScalarType) -> Result<NumTy, ThreadFault> {
    NumTy::try_from(t).map_err(|e| ThreadFault::Unsupported(e.to_string()))
}

/// The lane type of a packed float type.
fn packed(t: ScalarType) -> Option<FloatTy> {
    match t {
        ScalarType::F16x2 => Some(FloatTy::F16),
        ScalarType::Bf16x2 => Some(FloatTy::Bf16),
        _ => None,
    }
}

fn known(inst: &Inst) -> impl Iterator<Item = K> + '_ {
    inst.mods.iter().filter_map(|m| match m {
        Modifier::Known(k) => Some(*k),
        Modifier::Other(_) => None,
    })
}

fn fmode(inst: &Inst) -> FloatMode {
    let rnd = known(inst).find_map(|k| Rounding::try_from(k).ok()).unwrap_or(Rounding::Rn);
    FloatMode { rnd, ftz: inst.has(K::Ftz), sat: inst.has(K::Sat) }
}

fn minmax_mode(inst: &Inst) -> MinMaxMode {
    MinMaxMode { ftz: inst.has(K::Ftz), nan: inst.has(K::NaN), abs: inst.has(K::Abs), xorsign: inst.has(K::Xorsign) }
}

fn clampwrap(inst: &Inst) -> ClampWrap {
    if inst.has(K::Clamp) {
        ClampWrap::Clamp
    } else {
        ClampWrap::Wrap
    }
}

/// Resolves a generic address to a region and an offset in it.
pub(crate) fn resolve_generic(a: u64) -> (Region, u64) {
    let inside = |w: u64| (w..w + WINDOW_SIZE).contains(&a);
    if inside(SHARED_WINDOW) {
        (Region::Shared, a - SHARED_WINDOW)
    } else if inside(LOCAL_WINDOW) {
        (Region::Local, a - LOCAL_WINDOW)
    } else if inside(CONST_WINDOW) {
        (Region::Const, a - CONST_WINDOW)
    } else if inside(PARAM_WINDOW) {
        (Region::KernelParam, a - PARAM_WINDOW)
    } else {
        (Region::Global, a)
    }
}

fn window(space: StateSpace) -> Result<u64, ThreadFault> {
    match space {
        StateSpace::Global => Ok(0),
        StateSpace::Shared => Ok(SHARED_WINDOW),
        StateSpace::Local => Ok(LOCAL_WINDOW),
        StateSpace::Const => Ok(CONST_WINDOW),
        StateSpace::Param => Ok(PARAM_WINDOW),
        s => Err(ThreadFault::Invalid(format!("no generic window for .{s}"))),
    }
}

/// The instruction-level view of one thread: the thread, the machine, and the instruction it is on.
struct X<'t, 'e, 'a, 'm> {
    th: &'t mut Thread,
    env: &'e mut Env<'a, 'm>,
    f: &'m Function,
    code: &'a FuncCode,
    func: FuncId,
    inst: &'m Inst,
    /// The carry flag written by the instruction being executed, if it writes one.
    carry_set: std::cell::Cell<Option<bool>>,
}

/// A semantic error found where no thread position is at hand (the message names none).
fn unplaced(what: impl Into<String>) -> RefError {
    RefError::Fault(ThreadFault::Invalid(what.into()))
}

/// Where a thread stands, for messages.
pub(crate) fn describe(prep: &Prepared<'_>, th: &Thread, cta: [u32; 3]) -> String {
    let mut s =
        format!("thread ({},{},{}) of block ({},{},{})", th.tid[0], th.tid[1], th.tid[2], cta[0], cta[1], cta[2]);
    if let Some(fr) = th.frames.last() {
        let f = &prep.module.functions[fr.func];
        match prep.code(fr.func).and_then(|c| c.insts.get(fr.pc)) {
            Some(&iid) => {
                let text = reconverge_ir::print_inst(prep.module, f, iid);
                s.push_str(&format!(" in `{}` at instruction {} `{}`", f.name, fr.pc, text.trim()));
                if let Some(loc) = f.insts[iid].loc {
                    s.push_str(&format!(" (line {})", loc.line));
                }
            }
            None => s.push_str(&format!(" in `{}` at instruction {} (past the end)", f.name, fr.pc)),
        }
    }
    s
}

impl<'t, 'e, 'a, 'm> X<'t, 'e, 'a, 'm> {
    /// The view of `th` at its current instruction; `Err` if it has none.
    fn new(th: &'t mut Thread, env: &'e mut Env<'a, 'm>) -> Result<X<'t, 'e, 'a, 'm>, RefError> {
        let prep: &'a Prepared<'m> = env.prep;
        let fr = th.frames.last().ok_or_else(|| unplaced("thread has no frame"))?;
        let func = fr.func;
        let f: &'m Function = &prep.module.functions[func];
        let code = prep.code(func).ok_or_else(|| unplaced(format!("function `{}` has no body", f.name)))?;
        let Some(&iid) = code.insts.get(fr.pc) else {
            return Err(RefError::Thread {
                at: describe(prep, th, env.cta),
                fault: ThreadFault::Invalid(format!("control ran past the last instruction of `{}`", f.name)),
            });
        };
        Ok(X { th, env, f, code, func, inst: &f.insts[iid], carry_set: std::cell::Cell::new(None) })
    }

    /// `fault` at the thread's current instruction.
    fn fail(&self, fault: ThreadFault) -> RefError {
        RefError::Thread { at: describe(self.env.prep, self.th, self.env.cta), fault }
    }

    /// A semantic error of the program at the thread's current instruction.
    fn invalid(&self, what: impl std::fmt::Display) -> RefError {
        self.fail(ThreadFault::Invalid(what.to_string()))
    }

    /// Something the reference does not implement, at the thread's current instruction.
    fn unsupported(&self, what: impl std::fmt::Display) -> RefError {
        self.fail(ThreadFault::Unsupported(what.to_string()))
    }

    fn frame(&self) -> &Frame {
        // `new` checked that a frame exists and it is never popped while `self` lives, except by `ret`,
        // which returns right after.
        &self.th.frames[self.th.frames.len() - 1]
    }

    fn frame_mut(&mut self) -> &mut Frame {
        let n = self.th.frames.len() - 1;
        &mut self.th.frames[n]
    }

    fn advance(&mut self) {
        self.frame_mut().pc += 1;
    }

    fn is_kernel(&self) -> bool {
        self.f.kind == FuncKind::Entry
    }

    fn ty(&self) -> Result<ScalarType, RefError> {
        self.inst.ty().ok_or_else(|| self.invalid("instruction has no data type"))
    }

    fn op(&self, i: usize) -> Result<&'m Operand, RefError> {
        self.inst.operands.get(i).ok_or_else(|| self.invalid(format!("missing operand {i}")))
    }

    // ---- operands ------------------------------------------------------------------------------------

    fn reg(&self, r: RegId) -> u64 {
        self.frame().regs.get(r.index()).copied().unwrap_or(0)
    }

    fn sreg(&self, s: SpecialReg) -> u64 {
        let d = s.dim.map(|d| d.index()).unwrap_or(0);
        let lane = self.th.lane;
        let e = &self.env;
        match s.kind {
            SpecialRegKind::Tid => self.th.tid[d] as u64,
            SpecialRegKind::Ntid => e.block[d] as u64,
            SpecialRegKind::Ctaid => e.cta[d] as u64,
            SpecialRegKind::Nctaid => e.grid[d] as u64,
            SpecialRegKind::Laneid => lane as u64,
            SpecialRegKind::Warpid => self.th.warp as u64,
            SpecialRegKind::Nwarpid => e.nwarps as u64,
            SpecialRegKind::Smid | SpecialRegKind::Gridid => 0,
            SpecialRegKind::Nsmid => 1,
            SpecialRegKind::Clock => self.th.executed & 0xFFFF_FFFF,
            SpecialRegKind::ClockHi => self.th.executed >> 32,
            SpecialRegKind::Clock64 | SpecialRegKind::Globaltimer => self.th.executed,
            SpecialRegKind::LanemaskEq => 1u64 << lane,
            SpecialRegKind::LanemaskLe => mask_bits(lane + 1),
            SpecialRegKind::LanemaskLt => mask_bits(lane),
            SpecialRegKind::LanemaskGe => !mask_bits(lane) & 0xFFFF_FFFF,
            SpecialRegKind::LanemaskGt => !mask_bits(lane + 1) & 0xFFFF_FFFF,
            SpecialRegKind::DynamicSmemSize => e.dynamic_shared as u64,
            SpecialRegKind::TotalSmemSize => e.shared.len() as u64,
            SpecialRegKind::WarpSize => e.warp_size as u64,
        }
    }

    /// The address of a symbol in its own state space.
    fn sym_addr(&self, s: Symbol) -> Result<(Region, u64), RefError> {
        let prep = self.env.prep;
        match s {
            Symbol::Global(g) => match prep.global(g) {
                GlobalPlace::Global(a) => Ok((Region::Global, a)),
                GlobalPlace::Shared(o) => Ok((Region::Shared, o)),
                GlobalPlace::Const(o) => Ok((Region::Const, o)),
                GlobalPlace::None => Err(self.invalid(format!("`{}` has no address", prep.module.globals[g].name))),
            },
            Symbol::Local(l) => match prep.var(self.func, l) {
                VarPlace::Local(o) => Ok((Region::Local, self.frame().local_base + o)),
                VarPlace::FrameParam(o) => Ok((Region::FrameParam, o)),
                VarPlace::Shared(o) => Ok((Region::Shared, o)),
                VarPlace::Const(o) => Ok((Region::Const, o)),
                VarPlace::None => Err(self.invalid(format!("`{}` has no address", self.f.locals[l].name))),
            },
            Symbol::Param(i) if self.is_kernel() => prep
                .params
                .get(i as usize)
                .map(|p| (Region::KernelParam, p.offset))
                .ok_or_else(|| self.invalid(format!("no kernel parameter {i}"))),
            Symbol::Param(i) => self
                .code
                .param_off
                .get(i as usize)
                .map(|&o| (Region::FrameParam, o))
                .ok_or_else(|| self.invalid(format!("no parameter {i}"))),
            Symbol::Ret(i) => self
                .code
                .ret_off
                .get(i as usize)
                .map(|&o| (Region::FrameParam, o))
                .ok_or_else(|| self.invalid(format!("no return parameter {i}"))),
            Symbol::Func(f) => Ok((Region::Global, FUNC_ADDR_BASE + f.index() as u64)),
            other => Err(self.invalid(format!("{other:?} is not a value"))),
        }
    }

    /// The generic address of a region offset.
    fn generic(&self, region: Region, off: u64) -> Result<u64, RefError> {
        Ok(match region {
            Region::Global => off,
            Region::Shared => SHARED_WINDOW + off,
            Region::Local => LOCAL_WINDOW + off,
            Region::Const => CONST_WINDOW + off,
            Region::KernelParam => PARAM_WINDOW + off,
            Region::FrameParam => return Err(self.invalid("device-function parameters have no generic address")),
        })
    }

    /// A source operand as the bits of an operand of type `ty`.
    fn src(&self, op: &Operand, ty: ScalarType) -> Result<u64, RefError> {
        match op {
            Operand::Reg(r) => Ok(self.reg(*r)),
            Operand::NotReg(r) => Ok((self.reg(*r) & 1) ^ 1),
            Operand::Special(s) => Ok(self.sreg(*s)),
            Operand::Imm(i) => Ok(imm_bits(*i, ty)),
            Operand::Sym(s) => Ok(self.sym_addr(*s)?.1),
            Operand::Vector(items) if !items.is_empty() => {
                let eb = ty.bits() / items.len() as u32;
                let mut v = 0u64;
                for (k, it) in items.iter().enumerate() {
                    let x = self.src(it, ScalarType::B64)? & mask_bits(eb);
                    v |= x.checked_shl(k as u32 * eb).unwrap_or(0);
                }
                Ok(v)
            }
            other => Err(self.unsupported(format!("unsupported source operand {other:?}"))),
        }
    }

    /// A predicate source: a predicate register, its negation, or an integer immediate.
    fn pred(&self, op: &Operand) -> Result<bool, RefError> {
        match op {
            Operand::Reg(r) => Ok(self.reg(*r) & 1 == 1),
            Operand::NotReg(r) => Ok(self.reg(*r) & 1 == 0),
            Operand::Imm(i) => Ok(imm_bits(*i, ScalarType::U32) != 0),
            other => Err(self.unsupported(format!("unsupported predicate operand {other:?}"))),
        }
    }

    /// Writes `v`, a value of type `ty`, to register `r`: wider registers receive it sign-extended for
    /// signed types and zero-extended otherwise (PTX "operand size exceeding instruction-type size").
    fn set_reg(&mut self, r: RegId, v: u64, ty: ScalarType) {
        let rb = self.code.reg_bits.get(r.index()).copied().unwrap_or(64);
        let tb = if ty == ScalarType::Pred { 1 } else { ty.bits().min(64) };
        let mut x = v & mask_bits(tb);
        if rb > tb && ty.is_signed() {
            x = sext(x, tb);
        }
        let x = x & mask_bits(rb);
        if let Some(slot) = self.frame_mut().regs.get_mut(r.index()) {
            *slot = x;
        }
    }

    fn set_pred(&mut self, r: RegId, b: bool) {
        if let Some(slot) = self.frame_mut().regs.get_mut(r.index()) {
            *slot = b as u64;
        }
    }

    /// Writes a destination operand.
    fn dst(&mut self, op: &Operand, v: u64, ty: ScalarType) -> Result<(), RefError> {
        match op {
            Operand::Reg(r) => {
                self.set_reg(*r, v, ty);
                Ok(())
            }
            Operand::Sink => Ok(()),
            Operand::Vector(items) if !items.is_empty() => {
                let eb = ty.bits() / items.len() as u32;
                let et = int_type(eb, false);
                for (k, it) in items.iter().enumerate() {
                    let x = v.checked_shr(k as u32 * eb).unwrap_or(0) & mask_bits(eb);
                    self.dst(it, x, et)?;
                }
                Ok(())
            }
            Operand::Pair([Some(r), _]) => {
                self.set_reg(*r, v, ty);
                Ok(())
            }
            other => Err(self.unsupported(format!("unsupported destination operand {other:?}"))),
        }
    }

    // ---- memory --------------------------------------------------------------------------------------

    /// The region and offset an address operand reaches for an access in `space` (`None`: generic).
    fn address(&self, op: &Operand, space: Option<StateSpace>) -> Result<(Region, u64), RefError> {
        let Operand::Addr(Address { base, offset }) = op else {
            return Err(self.invalid(format!("expected an address operand, found {op:?}")));
        };
        let off = *offset as u64;
        let base_reg = if let AddrBase::Reg(r) = base { Some(*r) } else { None };
        let (sym_region, base) = match base {
            AddrBase::Reg(r) => (None, self.reg(*r)),
            AddrBase::Abs => (None, 0),
            AddrBase::Sym(s) => {
                let (reg, a) = self.sym_addr(*s)?;
                (Some(reg), a)
            }
        };
        // A 32-bit register's address wraps modulo 2^32, as PTX's 32-bit addresses do.
        let a = match base_reg {
            Some(r) if self.f.regs[r].ty.bits() <= 32 => u64::from((base as u32).wrapping_add(off as u32)),
            _ => base.wrapping_add(off),
        };
        Ok(match space {
            None => match sym_region {
                Some(reg) => resolve_generic(self.generic(reg, base)?.wrapping_add(off)),
                None => resolve_generic(a),
            },
            Some(StateSpace::Global) => (Region::Global, a),
            Some(StateSpace::Shared) => (Region::Shared, a),
            Some(StateSpace::Local) => (Region::Local, a),
            Some(StateSpace::Const) => (Region::Const, a),
            Some(StateSpace::Param) => match sym_region {
                Some(r @ (Region::FrameParam | Region::KernelParam)) => (r, a),
                Some(_) => return Err(self.invalid("a non-parameter symbol in a .param access")),
                None if self.is_kernel() => (Region::KernelParam, a),
                None => (Region::FrameParam, a),
            },
            Some(s) => return Err(self.unsupported(format!("accesses to .{s} are not supported"))),
        })
    }

    fn fault(&self, kind: MemoryFaultKind, region: Region, a: u64, size: u64) -> RefError {
        let nearest = if region == Region::Global { self.env.global.nearest(a) } else { None };
        self.fail(ThreadFault::Memory { kind, region, addr: a, size, nearest })
    }

    fn load(&self, region: Region, a: u64, size: u64) -> Result<u64, RefError> {
        if !a.is_multiple_of(size) {
            return Err(self.fault(MemoryFaultKind::Misaligned, region, a, size));
        }
        let v = match region {
            Region::Global => self.env.global.read(a, size),
            Region::Shared => flat_read(self.env.shared, a, size),
            Region::Local => flat_read(&self.th.local, a, size),
            Region::Const => flat_read(self.env.consts, a, size),
            Region::KernelParam => flat_read(self.env.kparams, a, size),
            Region::FrameParam => flat_read(&self.frame().params, a, size),
        };
        v.ok_or_else(|| self.fault(MemoryFaultKind::OutOfBounds, region, a, size))
    }

    fn store(&mut self, region: Region, a: u64, size: u64, v: u64) -> Result<(), RefError> {
        if !a.is_multiple_of(size) {
            return Err(self.fault(MemoryFaultKind::Misaligned, region, a, size));
        }
        let ok = match region {
            Region::Global => self.env.global.write(a, size, v),
            Region::Shared => flat_write(self.env.shared, a, size, v),
            Region::Local => flat_write(&mut self.th.local, a, size, v),
            Region::FrameParam => flat_write(&mut self.frame_mut().params, a, size, v),
            Region::Const | Region::KernelParam => {
                return Err(self.fault(MemoryFaultKind::ReadOnly, region, a, size));
            }
        };
        ok.ok_or_else(|| self.fault(MemoryFaultKind::OutOfBounds, region, a, size))
    }

    // ---- execution -------------------------------------------------------------------------------------

    fn guard_passes(&self) -> bool {
        match self.inst.guard {
            None => true,
            Some(g) => (self.reg(g.reg) & 1 == 1) != g.negated,
        }
    }

    /// Executes the current instruction (whose guard passed).
    fn exec(&mut self) -> Result<Option<Stop>, RefError> {
        let inst = self.inst;
        match &inst.opcode {
            Opcode::Bra => {
                let target = inst.branch_target().ok_or_else(|| self.invalid("branch without a label"))?;
                let pc = self.env.prep.block_pc(self.func, target).ok_or_else(|| self.invalid("branch to no block"))?;
                self.frame_mut().pc = pc;
                return Ok(None);
            }
            Opcode::Brx => {
                let idx = self.src(self.op(0)?, ScalarType::U32)? & 0xFFFF_FFFF;
                let t = inst.branch_targets().ok_or_else(|| self.invalid("brx.idx without a target list"))?;
                let list = &self.f.targets[t].targets;
                let b = *list.get(idx as usize).ok_or_else(|| {
                    self.invalid(format!("brx.idx index {idx} outside its {}-entry list", list.len()))
                })?;
                let pc = self.env.prep.block_pc(self.func, b).ok_or_else(|| self.invalid("branch to no block"))?;
                self.frame_mut().pc = pc;
                return Ok(None);
            }
            Opcode::Call => return self.call().map(|_| None),
            Opcode::Ret => return self.ret(),
            Opcode::Exit => return Ok(Some(Stop::Exited)),
            Opcode::Trap | Opcode::Brkpt => return Err(self.fail(ThreadFault::Trap)),
            Opcode::Bar | Opcode::Barrier if !inst.has(K::Warp) => {
                // The pc stays on the barrier until the thread passes it (see `Thread::pass`).
                return Ok(Some(Stop::Barrier(self.barrier()?)));
            }
            Opcode::Membar | Opcode::Fence | Opcode::Prefetch | Opcode::Prefetchu | Opcode::Nanosleep => {}
            Opcode::Pmevent => {}
            Opcode::Ld | Opcode::Ldu => self.ld()?,
            Opcode::St => self.st()?,
            Opcode::Atom | Opcode::Red => self.atom()?,
            _ => {
                self.alu()?;
                if let Some(c) = self.carry_set.get() {
                    self.th.carry = c;
                }
            }
        }
        self.advance();
        Ok(None)
    }

    fn barrier(&self) -> Result<Arrival, RefError> {
        let inst = self.inst;
        let n = inst.operands.len();
        let u = ScalarType::U32;
        if inst.has(K::Red) {
            let kind = if inst.has(K::Popc) {
                RedKind::Popc
            } else if inst.has(K::And) {
                RedKind::And
            } else if inst.has(K::Or) {
                RedKind::Or
            } else {
                return Err(self.invalid("bar.red needs .popc, .and or .or"));
            };
            if n < 3 {
                return Err(self.invalid("bar.red needs a destination, a barrier and a predicate"));
            }
            let Operand::Reg(d) = self.op(0)? else {
                return Err(self.invalid("bar.red destination must be a register"));
            };
            let id = self.src(self.op(1)?, u)? as u32;
            let count = if n == 4 { Some(self.src(self.op(2)?, u)? as u32) } else { None };
            let c = self.pred(self.op(n - 1)?)?;
            return Ok(Arrival { id, count, waits: true, red: Some((kind, c, *d)) });
        }
        let id = if n >= 1 { self.src(self.op(0)?, u)? as u32 } else { 0 };
        let count = if n >= 2 { Some(self.src(self.op(1)?, u)? as u32) } else { None };
        if id >= 16 {
            return Err(self.fail(ThreadFault::BarrierId(id)));
        }
        Ok(Arrival { id, count, waits: !inst.has(K::Arrive), red: None })
    }

    fn call(&mut self) -> Result<(), RefError> {
        let ops = &self.inst.operands;
        let ci = ops
            .iter()
            .position(|o| !matches!(o, Operand::List(_)))
            .ok_or_else(|| self.invalid("call without a callee"))?;
        let empty = Vec::new();
        let args = match ops.get(ci + 1) {
            Some(Operand::List(l)) => l,
            _ => &empty,
        };
        let callee = match &ops[ci] {
            Operand::Sym(Symbol::Func(f)) => *f,
            Operand::Reg(r) => {
                let v = self.reg(*r).wrapping_sub(FUNC_ADDR_BASE);
                if v >= self.env.prep.module.functions.len() as u64 {
                    return Err(self.invalid(format!("indirect call to {:#x}, which is not a function", self.reg(*r))));
                }
                FuncId::new(v as usize)
            }
            other => return Err(self.unsupported(format!("unsupported call target {other:?}"))),
        };
        let prep = self.env.prep;
        let cf = &prep.module.functions[callee];
        let code =
            prep.code(callee).ok_or_else(|| self.invalid(format!("call to `{}`, which has no body", cf.name)))?;
        if cf.kind == FuncKind::Entry {
            return Err(self.invalid(format!("call to kernel `{}`", cf.name)));
        }
        if args.len() < cf.params.len() {
            return Err(self.invalid(format!(
                "`{}` takes {} arguments, {} given",
                cf.name,
                cf.params.len(),
                args.len()
            )));
        }
        let mut params = vec![0u8; code.param_area as usize];
        for (i, p) in cf.params.iter().enumerate() {
            let size = p.size_bytes() as usize;
            let off = code.param_off[i] as usize;
            let dst = &mut params[off..off + size];
            match &args[i] {
                Operand::Sym(s) => {
                    let (region, a) = self.sym_addr(*s)?;
                    if region != Region::FrameParam {
                        return Err(self.invalid("call arguments must be .param variables or registers"));
                    }
                    let src = self.frame().params.get(a as usize..a as usize + size).ok_or_else(|| {
                        self.invalid(format!("argument {i} is smaller than parameter `{}` ({size} bytes)", p.name))
                    })?;
                    dst.copy_from_slice(src);
                }
                other => {
                    let v = self.src(other, p.ty)?;
                    write_le(dst, v);
                }
            }
        }
        let base = align_up(self.th.local.len() as u64, 16);
        let top = base + code.local_size;
        if top > self.env.local_limit {
            return Err(self.fail(ThreadFault::StackOverflow {
                callee: cf.name.clone(),
                depth: self.th.frames.len(),
                limit: self.env.local_limit,
            }));
        }
        self.th.local.resize(top as usize, 0);
        self.th.frames.push(Frame {
            func: callee,
            pc: 0,
            regs: vec![0; code.reg_bits.len()],
            local_base: base,
            params,
        });
        Ok(())
    }

    fn ret(&mut self) -> Result<Option<Stop>, RefError> {
        if self.th.frames.len() <= 1 {
            return Ok(Some(Stop::Exited));
        }
        let callee_code = self.code;
        let callee_f = self.f;
        let Some(done) = self.th.frames.pop() else { return Err(self.invalid("ret without a frame")) };
        self.th.local.truncate(done.local_base as usize);
        // The caller is on its call instruction: deliver the return values to its return list.
        let prep = self.env.prep;
        let caller = self.th.frames.len() - 1;
        let cfun = self.th.frames[caller].func;
        let cf = &prep.module.functions[cfun];
        let ccode = prep.code(cfun).ok_or_else(|| unplaced("caller has no body"))?;
        let call = ccode
            .insts
            .get(self.th.frames[caller].pc)
            .map(|&i| &cf.insts[i])
            .ok_or_else(|| unplaced("caller lost its call"))?;
        if let Some(Operand::List(rets)) = call.operands.first() {
            for (i, r) in callee_f.rets.iter().enumerate() {
                let Some(dest) = rets.get(i) else { break };
                let size = r.size_bytes() as usize;
                let off = callee_code.ret_off[i] as usize;
                let bytes = &done.params[off..off + size];
                let fr = &mut self.th.frames[caller];
                match dest {
                    Operand::Sym(Symbol::Local(l)) => match prep.var(cfun, *l) {
                        VarPlace::FrameParam(o) => {
                            let o = o as usize;
                            let dst =
                                fr.params.get_mut(o..o + size).ok_or_else(|| unplaced("return variable too small"))?;
                            dst.copy_from_slice(bytes);
                        }
                        _ => return Err(unplaced("return values must go to .param variables or registers")),
                    },
                    Operand::Reg(reg) => {
                        let rb = ccode.reg_bits.get(reg.index()).copied().unwrap_or(64);
                        if let Some(slot) = fr.regs.get_mut(reg.index()) {
                            *slot = read_le(bytes) & mask_bits(rb);
                        }
                    }
                    Operand::Sink => {}
                    other => {
                        let what = format!("unsupported return destination {other:?}");
                        return Err(RefError::Fault(ThreadFault::Unsupported(what)));
                    }
                }
            }
        }
        self.th.frames[caller].pc += 1;
        Ok(None)
    }

    fn vec_width(&self, data: &Operand) -> usize {
        if self.inst.has(K::V4) {
            4
        } else if self.inst.has(K::V2) {
            2
        } else if self.inst.has(K::V8) {
            8
        } else if let Operand::Vector(v) = data {
            v.len()
        } else {
            1
        }
    }

    fn ld(&mut self) -> Result<(), RefError> {
        let ty = self.ty()?;
        let d = self.op(0)?;
        let (region, a) = self.address(self.op(1)?, self.inst.space())?;
        let n = self.vec_width(d);
        let size = ty.bytes() as u64;
        if size > 8 {
            return Err(self.unsupported(format!("loads of .{ty} are not supported")));
        }
        if a % (size * n as u64) != 0 {
            return Err(self.fault(MemoryFaultKind::Misaligned, region, a, size * n as u64));
        }
        let items: Vec<&Operand> = match d {
            Operand::Vector(v) => v.iter().collect(),
            other => vec![other],
        };
        if items.len() != n {
            return Err(self.invalid("vector width and operand count differ"));
        }
        for (k, it) in items.into_iter().enumerate() {
            let v = self.load(region, a.wrapping_add(k as u64 * size), size)?;
            self.dst(it, v, ty)?;
        }
        Ok(())
    }

    fn st(&mut self) -> Result<(), RefError> {
        let ty = self.ty()?;
        let s = self.op(1)?;
        let (region, a) = self.address(self.op(0)?, self.inst.space())?;
        let n = self.vec_width(s);
        let size = ty.bytes() as u64;
        if size > 8 {
            return Err(self.unsupported(format!("stores of .{ty} are not supported")));
        }
        if a % (size * n as u64) != 0 {
            return Err(self.fault(MemoryFaultKind::Misaligned, region, a, size * n as u64));
        }
        let items: Vec<&Operand> = match s {
            Operand::Vector(v) => v.iter().collect(),
            other => vec![other],
        };
        for (k, it) in items.into_iter().enumerate() {
            let v = self.src(it, ty)?;
            self.store(region, a.wrapping_add(k as u64 * size), size, v)?;
        }
        Ok(())
    }

    fn atom(&mut self) -> Result<(), RefError> {
        let inst = self.inst;
        let ty = self.ty()?;
        let is_red = inst.opcode == Opcode::Red;
        let (ai, bi) = if is_red { (0, 1) } else { (1, 2) };
        let (region, a) = self.address(self.op(ai)?, inst.space())?;
        if !matches!(region, Region::Global | Region::Shared) {
            return Err(self.invalid(format!("atomic on {} memory", region.name())));
        }
        let size = ty.bytes() as u64;
        if size > 8 {
            return Err(self.unsupported(format!("atomics on .{ty} are not supported")));
        }
        let b = self.src(self.op(bi)?, ty)?;
        let c = match inst.operands.get(bi + 1) {
            Some(o) => self.src(o, ty)?,
            None => 0,
        };
        let old = self.load(region, a, size)?;
        let m = mask_bits(ty.bits());
        let op = known(inst)
            .find(|k| {
                matches!(k, K::Add | K::Min | K::Max | K::Inc | K::Dec | K::And | K::Or | K::Xor | K::Exch | K::Cas)
            })
            .ok_or_else(|| self.invalid("atomic without an operation"))?;
        let new = if ty.is_float() {
            let t = fty(ty).map_err(|e| self.fail(e))?;
            let mm = MinMaxMode::default();
            match op {
                K::Add => float::add(t, FloatMode::RN, old, b),
                K::Min => float::min(t, mm, old, b),
                K::Max => float::max(t, mm, old, b),
                K::Exch => b & m,
                K::Cas if old == b & m => c & m,
                K::Cas => old,
                other => return Err(self.invalid(format!("atomic .{other} on .{ty}"))),
            }
        } else {
            let t = ity(ty).map_err(|e| self.fail(e))?;
            let bits = ty.bits();
            match op {
                K::Add => int::add(t, old, b),
                K::Min => int::min(t, old, b),
                K::Max => int::max(t, old, b),
                K::Inc if old >= b & m => 0,
                K::Inc => (old + 1) & m,
                K::Dec if old == 0 || old > b & m => b & m,
                K::Dec => (old - 1) & m,
                K::And => int::and(bits, old, b),
                K::Or => int::or(bits, old, b),
                K::Xor => int::xor(bits, old, b),
                K::Exch => b & m,
                K::Cas if old == b & m => c & m,
                K::Cas => old,
                other => return Err(self.invalid(format!("atomic .{other}"))),
            }
        };
        self.store(region, a, size, new)?;
        if !is_red {
            self.dst(self.op(0)?, old, ty)?;
        }
        Ok(())
    }

    /// Arithmetic, logic, comparisons, conversions and moves.
    fn alu(&mut self) -> Result<(), RefError> {
        let inst = self.inst;
        let ops = &inst.operands;
        match &inst.opcode {
            Opcode::Mov => {
                let ty = self.ty()?;
                let v = self.src(self.op(1)?, ty)?;
                return self.dst(self.op(0)?, v, ty);
            }
            Opcode::Setp => return self.setp(),
            Opcode::Set => {
                let (dt, st) = (self.ty()?, *inst.types.get(1).ok_or_else(|| self.invalid("set needs two types"))?);
                let t = self.compare(st, self.op(1)?, self.op(2)?)?;
                let r = match ops.get(3) {
                    Some(c) => cmp::bool_op(self.boolop()?, t, self.pred(c)?),
                    None => t,
                };
                let v = cmp::set_value(nty(dt).map_err(|e| self.fail(e))?, r);
                return self.dst(self.op(0)?, v, dt);
            }
            Opcode::Selp => {
                let ty = self.ty()?;
                let c = self.pred(self.op(3)?)?;
                let v = select::selp(c, self.src(self.op(1)?, ty)?, self.src(self.op(2)?, ty)?);
                return self.dst(self.op(0)?, v, ty);
            }
            Opcode::Slct => {
                let dt = self.ty()?;
                let ct = *inst.types.get(1).ok_or_else(|| self.invalid("slct needs two types"))?;
                let (a, b) = (self.src(self.op(1)?, dt)?, self.src(self.op(2)?, dt)?);
                let c = self.src(self.op(3)?, ct)?;
                let v = if ct == ScalarType::F32 {
                    select::slct_f32(inst.has(K::Ftz), a, b, c)
                } else {
                    select::slct_s32(a, b, c)
                };
                return self.dst(self.op(0)?, v, dt);
            }
            Opcode::Cvt => return self.cvt(),
            Opcode::Cvta => {
                let ty = self.ty()?;
                let space = inst.space().ok_or_else(|| self.invalid("cvta without a state space"))?;
                let w = window(space).map_err(|e| self.fail(e))?;
                let a = self.src(self.op(1)?, ty)?;
                let v = if inst.has(K::To) { a.wrapping_sub(w) } else { a.wrapping_add(w) };
                return self.dst(self.op(0)?, v, ty);
            }
            Opcode::Isspacep => {
                let space = inst.space().ok_or_else(|| self.invalid("isspacep without a state space"))?;
                let a = self.src(self.op(1)?, ScalarType::U64)?;
                let (region, _) = resolve_generic(a);
                let r = matches!(
                    (space, region),
                    (StateSpace::Global, Region::Global)
                        | (StateSpace::Shared, Region::Shared)
                        | (StateSpace::Local, Region::Local)
                        | (StateSpace::Const, Region::Const)
                        | (StateSpace::Param, Region::KernelParam)
                );
                let Operand::Reg(p) = self.op(0)? else { return Err(self.invalid("isspacep needs a predicate")) };
                self.set_pred(*p, r);
                return Ok(());
            }
            Opcode::Testp => {
                let ty = self.ty()?;
                let t = fty(ty).map_err(|e| self.fail(e))?;
                let op = inst
                    .mods
                    .iter()
                    .find_map(|m| match m.as_str() {
                        "finite" => Some(TestpOp::Finite),
                        "infinite" => Some(TestpOp::Infinite),
                        "number" => Some(TestpOp::Number),
                        "notanumber" => Some(TestpOp::NotANumber),
                        "normal" => Some(TestpOp::Normal),
                        "subnormal" => Some(TestpOp::Subnormal),
                        _ => None,
                    })
                    .ok_or_else(|| self.invalid("testp without a test"))?;
                let r = float::testp(op, t, self.src(self.op(1)?, ty)?);
                let Operand::Reg(p) = self.op(0)? else { return Err(self.invalid("testp needs a predicate")) };
                self.set_pred(*p, r);
                return Ok(());
            }
            _ => {}
        }
        let ty = self.ty()?;
        if ty == ScalarType::Pred {
            return self.pred_logic();
        }
        let nsrc = ops.len().saturating_sub(1);
        let mut s = [0u64; 5];
        // Source types: shift amounts and bit-field positions are .u32; everything else is the type.
        for (k, slot) in s.iter_mut().enumerate().take(nsrc) {
            let st = match (&inst.opcode, k) {
                (Opcode::Shl | Opcode::Shr, 1) | (Opcode::Bfe, 1 | 2) | (Opcode::Bfi, 2 | 3) => ScalarType::U32,
                (Opcode::Mul | Opcode::Mad, 2) if inst.has(K::Wide) => wide(ty),
                (Opcode::Dp4a | Opcode::Dp2a, 1) => inst.types.get(1).copied().unwrap_or(ty),
                (Opcode::Dp4a | Opcode::Dp2a, 2) => ScalarType::U32,
                _ => ty,
            };
            *slot = self.src(&ops[k + 1], st)?;
        }
        let [a, b, c, d, _] = s;
        let (v, out_ty) =
            if ty.is_float() { self.float_op(ty, nsrc, a, b, c)? } else { self.int_op(ty, nsrc, a, b, c, d)? };
        self.dst(self.op(0)?, v, out_ty)
    }

    fn pred_logic(&mut self) -> Result<(), RefError> {
        let inst = self.inst;
        let Operand::Reg(d) = self.op(0)? else { return Err(self.invalid("predicate destination expected")) };
        let a = self.pred(self.op(1)?)?;
        let r = match inst.opcode {
            Opcode::And => a & self.pred(self.op(2)?)?,
            Opcode::Or => a | self.pred(self.op(2)?)?,
            Opcode::Xor => a ^ self.pred(self.op(2)?)?,
            Opcode::Not => !a,
            Opcode::Mov => a,
            ref other => return Err(self.unsupported(format!("`{other}` on predicates is not supported"))),
        };
        self.set_pred(*d, r);
        Ok(())
    }

    fn boolop(&self) -> Result<BoolOp, RefError> {
        known(self.inst).find_map(|k| BoolOp::try_from(k).ok()).ok_or_else(|| self.invalid("missing .and/.or/.xor"))
    }

    fn cmpop(&self) -> Result<CmpOp, RefError> {
        known(self.inst).find_map(|k| CmpOp::try_from(k).ok()).ok_or_else(|| self.invalid("missing comparison"))
    }

    fn compare(&self, st: ScalarType, a: &Operand, b: &Operand) -> Result<bool, RefError> {
        let op = self.cmpop()?;
        let t = nty(st).map_err(|e| self.fail(e))?;
        let (a, b) = (self.src(a, st)?, self.src(b, st)?);
        Ok(if self.inst.has(K::Ftz) { cmp::compare_ftz(op, t, a, b) } else { cmp::compare(op, t, a, b) })
    }

    fn setp(&mut self) -> Result<(), RefError> {
        let inst = self.inst;
        let st = self.ty()?;
        let (p, q) = match self.op(0)? {
            Operand::Reg(r) => (Some(*r), None),
            Operand::Pair([p, q]) => (*p, *q),
            other => return Err(self.invalid(format!("setp destination {other:?}"))),
        };
        let c = match inst.operands.get(3) {
            Some(c) => Some((self.boolop()?, self.pred(c)?)),
            None => None,
        };
        let (pv, qv) = if let Some(lt) = packed(st) {
            let (a, b) = (self.src(self.op(1)?, st)?, self.src(self.op(2)?, st)?);
            let [lo, hi] = cmp::compare_x2(self.cmpop()?, lt, inst.has(K::Ftz), a, b);
            match c {
                Some((op, c)) => (cmp::bool_op(op, lo, c), cmp::bool_op(op, hi, c)),
                None => (lo, hi),
            }
        } else {
            let t = self.compare(st, self.op(1)?, self.op(2)?)?;
            match c {
                Some((op, c)) => cmp::setp_pair(op, t, c),
                None => (t, !t),
            }
        };
        if let Some(p) = p {
            self.set_pred(p, pv);
        }
        if let Some(q) = q {
            self.set_pred(q, qv);
        }
        Ok(())
    }

    fn cvt(&mut self) -> Result<(), RefError> {
        let inst = self.inst;
        let dt = self.ty()?;
        let st = *inst.types.get(1).ok_or_else(|| self.invalid("cvt needs two types"))?;
        let mut rnd = CvtRounding::Default;
        for k in known(inst) {
            if let Ok(r) = Rounding::try_from(k) {
                rnd = CvtRounding::Float(r);
            } else if let Ok(r) = reconverge_semantics::IntRounding::try_from(k) {
                rnd = CvtRounding::Int(r);
            }
        }
        let a = self.src(self.op(1)?, st)?;
        let v = if let Some(lt) = packed(dt) {
            // cvt.rn{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a goes to the upper half.
            let b = self.src(self.op(2)?, st)?;
            let r = match rnd {
                CvtRounding::Float(r) => r,
                _ => Rounding::Rn,
            };
            cvt::f32_pair_to_x2(
                if lt == FloatTy::F16 { FloatTy::F16 } else { FloatTy::Bf16 },
                r,
                inst.has(K::Relu),
                inst.has(K::Satfinite),
                a,
                b,
            )
        } else if dt == ScalarType::Tf32 {
            let r = if inst.has(K::Rna) {
                reconverge_semantics::cvt::Tf32Rounding::Rna
            } else if inst.has(K::Rz) {
                reconverge_semantics::cvt::Tf32Rounding::Rz
            } else {
                reconverge_semantics::cvt::Tf32Rounding::Rn
            };
            cvt::f32_to_tf32(r, inst.has(K::Satfinite), inst.has(K::Relu), a)
        } else {
            let (d, s) = (nty(dt).map_err(|e| self.fail(e))?, nty(st).map_err(|e| self.fail(e))?);
            cvt::cvt(d, s, CvtMode { rnd, ftz: inst.has(K::Ftz), sat: inst.has(K::Sat) }, a)
        };
        self.dst(self.op(0)?, v, dt)
    }

    fn float_op(&self, ty: ScalarType, nsrc: usize, a: u64, b: u64, c: u64) -> Result<(u64, ScalarType), RefError> {
        let inst = self.inst;
        let m = fmode(inst);
        let ftz = m.ftz;
        if let Some(lt) = packed(ty) {
            let v = match inst.opcode {
                Opcode::Add => float::add_x2(lt, m, a, b),
                Opcode::Sub => float::sub_x2(lt, m, a, b),
                Opcode::Mul => float::mul_x2(lt, m, a, b),
                Opcode::Fma | Opcode::Mad => float::fma_x2(lt, m, a, b, c),
                Opcode::Min => float::min_x2(lt, minmax_mode(inst), a, b),
                Opcode::Max => float::max_x2(lt, minmax_mode(inst), a, b),
                Opcode::Neg => float::neg_x2(lt, ftz, a),
                Opcode::Abs => float::abs_x2(lt, ftz, a),
                Opcode::Ex2 => float::lanes2(lt, a, 0, 0, |x, _, _| float::ex2_approx_half(lt, ftz, x)),
                Opcode::Tanh => float::lanes2(lt, a, 0, 0, |x, _, _| float::tanh_approx_half(lt, x)),
                Opcode::Mov | Opcode::And | Opcode::Or | Opcode::Xor => {
                    return self.int_op(ScalarType::B32, nsrc, a, b, c, 0)
                }
                ref other => return Err(self.unsupported(format!("`{other}.{ty}` is not supported"))),
            };
            return Ok((v, ty));
        }
        let t = fty(ty).map_err(|e| self.fail(e))?;
        let f32_only = |what: &str| -> Result<(), RefError> {
            if t == FloatTy::F32 {
                Ok(())
            } else {
                Err(self.unsupported(format!("`{what}.{ty}` is not supported")))
            }
        };
        let v = match inst.opcode {
            Opcode::Add => float::add(t, m, a, b),
            Opcode::Sub => float::sub(t, m, a, b),
            Opcode::Mul => float::mul(t, m, a, b),
            Opcode::Fma | Opcode::Mad => float::fma(t, m, a, b, c),
            Opcode::Div if inst.has(K::Approx) => {
                f32_only("div.approx")?;
                float::div_approx_f32(ftz, a, b)
            }
            Opcode::Div if inst.has(K::Full) => {
                f32_only("div.full")?;
                float::div_full_f32(ftz, a, b)
            }
            Opcode::Div => float::div(t, m, a, b),
            Opcode::Rcp if inst.has(K::Approx) => match t {
                FloatTy::F32 => float::rcp_approx_f32(ftz, a),
                FloatTy::F64 => float::rcp_approx_ftz_f64(a),
                _ => return Err(self.unsupported(format!("rcp.approx.{ty} is not supported"))),
            },
            Opcode::Rcp => float::rcp(t, m, a),
            Opcode::Sqrt if inst.has(K::Approx) => {
                f32_only("sqrt.approx")?;
                float::sqrt_approx_f32(ftz, a)
            }
            Opcode::Sqrt => float::sqrt(t, m, a),
            Opcode::Rsqrt => match t {
                FloatTy::F32 => float::rsqrt_approx_f32(ftz, a),
                FloatTy::F64 if ftz => float::rsqrt_approx_ftz_f64(a),
                FloatTy::F64 => float::rsqrt_approx_f64(a),
                _ => return Err(self.unsupported(format!("rsqrt.{ty} is not supported"))),
            },
            Opcode::Ex2 => match t {
                FloatTy::F32 => float::ex2_approx_f32(ftz, a),
                FloatTy::F16 | FloatTy::Bf16 => float::ex2_approx_half(t, ftz, a),
                _ => return Err(self.unsupported(format!("ex2.{ty} is not supported"))),
            },
            Opcode::Lg2 => {
                f32_only("lg2")?;
                float::lg2_approx_f32(ftz, a)
            }
            Opcode::Sin => {
                f32_only("sin")?;
                float::sin_approx_f32(ftz, a)
            }
            Opcode::Cos => {
                f32_only("cos")?;
                float::cos_approx_f32(ftz, a)
            }
            Opcode::Tanh => match t {
                FloatTy::F32 => float::tanh_approx_f32(a),
                _ => float::tanh_approx_half(t, a),
            },
            Opcode::Abs => float::abs(t, ftz, a),
            Opcode::Neg => float::neg(t, ftz, a),
            Opcode::Copysign => float::copysign(t, a, b),
            Opcode::Min if nsrc == 3 => float::min3(t, minmax_mode(inst), a, b, c),
            Opcode::Max if nsrc == 3 => float::max3(t, minmax_mode(inst), a, b, c),
            Opcode::Min => float::min(t, minmax_mode(inst), a, b),
            Opcode::Max => float::max(t, minmax_mode(inst), a, b),
            ref other => return Err(self.unsupported(format!("`{other}.{ty}` is not supported"))),
        };
        Ok((v, ty))
    }

    fn int_op(
        &self,
        ty: ScalarType,
        nsrc: usize,
        a: u64,
        b: u64,
        c: u64,
        d: u64,
    ) -> Result<(u64, ScalarType), RefError> {
        let inst = self.inst;
        let bits = ty.bits();
        let it = || ity(ty).map_err(|e| self.fail(e));
        let hi = inst.has(K::Hi);
        let v = match inst.opcode {
            Opcode::Add if inst.has(K::Cc) => self.carry_out(int::add_cc(it()?, a, b, false)),
            Opcode::Sub if inst.has(K::Cc) => self.carry_out(int::sub_cc(it()?, a, b, false)),
            Opcode::Add if inst.has(K::Sat) => int::add_sat(it()?, a, b),
            Opcode::Sub if inst.has(K::Sat) => int::sub_sat(it()?, a, b),
            Opcode::Add => int::add(it()?, a, b),
            Opcode::Sub => int::sub(it()?, a, b),
            Opcode::Addc => self.carry_out(int::add_cc(it()?, a, b, self.th.carry)),
            Opcode::Subc => self.carry_out(int::sub_cc(it()?, a, b, self.th.carry)),
            Opcode::Mul if inst.has(K::Wide) => return Ok((int::mul_wide(it()?, a, b), wide(ty))),
            Opcode::Mul if hi => int::mul_hi(it()?, a, b),
            Opcode::Mul => int::mul_lo(it()?, a, b),
            Opcode::Mad if inst.has(K::Wide) => return Ok((int::mad_wide(it()?, a, b, c), wide(ty))),
            Opcode::Mad if inst.has(K::Cc) => self.carry_out(int::mad_cc(it()?, hi, a, b, c, false)),
            Opcode::Madc => self.carry_out(int::mad_cc(it()?, hi, a, b, c, self.th.carry)),
            Opcode::Mad if hi && inst.has(K::Sat) => int::mad_hi_sat_s32(a, b, c),
            Opcode::Mad if hi => int::mad_hi(it()?, a, b, c),
            Opcode::Mad => int::mad_lo(it()?, a, b, c),
            Opcode::Mul24 if hi => int::mul24_hi(it()?, a, b),
            Opcode::Mul24 => int::mul24_lo(it()?, a, b),
            Opcode::Mad24 if hi && inst.has(K::Sat) => int::mad24_hi_sat_s32(a, b, c),
            Opcode::Mad24 if hi => int::mad24_hi(it()?, a, b, c),
            Opcode::Mad24 => int::mad24_lo(it()?, a, b, c),
            Opcode::Sad => int::sad(it()?, a, b, c),
            Opcode::Div => int::div(it()?, a, b),
            Opcode::Rem => int::rem(it()?, a, b),
            Opcode::Abs => int::abs(it()?, a),
            Opcode::Neg => int::neg(it()?, a),
            Opcode::Min if nsrc == 3 => int::min(it()?, int::min(it()?, a, b), c),
            Opcode::Max if nsrc == 3 => int::max(it()?, int::max(it()?, a, b), c),
            Opcode::Min if inst.has(K::Relu) => int::min_relu(it()?, a, b),
            Opcode::Max if inst.has(K::Relu) => int::max_relu(it()?, a, b),
            Opcode::Min => int::min(it()?, a, b),
            Opcode::Max => int::max(it()?, a, b),
            Opcode::Popc => return Ok((int::popc(bits, a), ScalarType::U32)),
            Opcode::Clz => return Ok((int::clz(bits, a), ScalarType::U32)),
            Opcode::Brev => int::brev(bits, a),
            Opcode::Bfind => return Ok((int::bfind(it()?, inst.has(K::Shiftamt), a), ScalarType::U32)),
            Opcode::Bfe => int::bfe(it()?, a, b, c),
            Opcode::Bfi => int::bfi(bits, a, b, c, d),
            Opcode::And => int::and(bits, a, b),
            Opcode::Or => int::or(bits, a, b),
            Opcode::Xor => int::xor(bits, a, b),
            Opcode::Not => int::not(bits, a),
            Opcode::Cnot => int::cnot(bits, a),
            Opcode::Lop3 => {
                let lut = match inst.operands.get(4) {
                    Some(o) => self.src(o, ScalarType::U32)? as u8,
                    None => return Err(self.invalid("lop3 needs a lookup table")),
                };
                int::lop3(bits, a, b, c, lut)
            }
            Opcode::Shl => int::shl(bits, a, b),
            Opcode::Shr => int::shr(it()?, a, b),
            Opcode::Shf if inst.has(K::L) => int::shf_l(clampwrap(inst), a, b, c),
            Opcode::Shf => int::shf_r(clampwrap(inst), a, b, c),
            Opcode::Prmt => {
                let mode = known(inst)
                    .find_map(|k| match k {
                        K::F4e => Some(PrmtMode::F4e),
                        K::B4e => Some(PrmtMode::B4e),
                        K::Rc8 => Some(PrmtMode::Rc8),
                        K::Ecl => Some(PrmtMode::Ecl),
                        K::Ecr => Some(PrmtMode::Ecr),
                        K::Rc16 => Some(PrmtMode::Rc16),
                        _ => None,
                    })
                    .unwrap_or(PrmtMode::Default);
                int::prmt(mode, a, b, c)
            }
            Opcode::Szext => int::szext(clampwrap(inst), ty.is_signed(), a, b),
            Opcode::Bmsk => int::bmsk(clampwrap(inst), a, b),
            Opcode::Dp4a => {
                let bt = inst.types.get(1).copied().unwrap_or(ty);
                return Ok((int::dp4a(ty.is_signed(), bt.is_signed(), a, b, c), ScalarType::U32));
            }
            Opcode::Dp2a => {
                let bt = inst.types.get(1).copied().unwrap_or(ty);
                return Ok((int::dp2a(hi, ty.is_signed(), bt.is_signed(), a, b, c), ScalarType::U32));
            }
            Opcode::Fns => int::fns(a, b, c),
            ref other => return Err(self.unsupported(format!("`{other}` is not supported"))),
        };
        Ok((v, ty))
    }

    /// Stores the carry of a `.cc` result (when the instruction writes CC) and returns the value.
    fn carry_out(&self, (v, c): (u64, bool)) -> u64 {
        if self.inst.has(K::Cc) {
            self.carry_set.set(Some(c));
        }
        v
    }
}

/// The type of the double-width result of `.wide` instructions.
fn wide(t: ScalarType) -> ScalarType {
    match t {
        ScalarType::S16 => ScalarType::S32,
        ScalarType::U16 => ScalarType::U32,
        ScalarType::S32 => ScalarType::S64,
        ScalarType::U32 => ScalarType::U64,
        other => other,
    }
}

fn int_type(bits: u32, signed: bool) -> ScalarType {
    match (bits, signed) {
        (8, false) => ScalarType::B8,
        (16, false) => ScalarType::B16,
        (32, false) => ScalarType::B32,
        (8, true) => ScalarType::S8,
        (16, true) => ScalarType::S16,
        (32, true) => ScalarType::S32,
        (_, true) => ScalarType::S64,
        _ => ScalarType::B64,
    }
}

/// Whether `inst` is a warp-synchronous instruction, and if so the operand index of its member mask
/// (`None`: all lanes; `activemask` has its own rule and gives `Some(None)` too).
fn collective_mask_operand(inst: &Inst) -> Option<Option<usize>> {
    let n = inst.operands.len();
    match inst.opcode {
        Opcode::Shfl => Some((n == 5).then_some(4)),
        Opcode::Vote => Some((n == 3).then_some(2)),
        Opcode::Match | Opcode::Redux => Some(Some(2)),
        Opcode::Bar | Opcode::Barrier if inst.has(K::Warp) => Some((n >= 1).then_some(0)),
        Opcode::Activemask => Some(None),
        _ => None,
    }
}

/// Runs `th` until it exits, blocks, or has executed `quantum` instructions.
pub(crate) fn run_slice(th: &mut Thread, env: &mut Env<'_, '_>, quantum: u64) -> Result<Stop, RefError> {
    let mut n = 0u64;
    loop {
        if n >= quantum {
            return Ok(Stop::Preempted);
        }
        if th.executed >= env.max_instructions {
            return Err(RefError::Limit { at: describe(env.prep, th, env.cta), executed: th.executed });
        }
        let mut x = X::new(th, env)?;
        if !x.guard_passes() {
            x.advance();
            x.th.executed += 1;
            n += 1;
            continue;
        }
        if let Some(mask_op) = collective_mask_operand(x.inst) {
            if x.inst.opcode == Opcode::Activemask {
                return Ok(Stop::Activemask);
            }
            let lanes = warp_lanes(x.env.warp_size);
            let mask = match mask_op {
                Some(i) => x.src(x.op(i)?, ScalarType::B32)? & 0xFFFF_FFFF & lanes,
                None => lanes,
            };
            if mask >> x.th.lane & 1 == 0 {
                return Err(x.fail(ThreadFault::NotInMemberMask { lane: x.th.lane, mask }));
            }
            return Ok(Stop::Collective(mask));
        }
        let stop = x.exec()?;
        th.executed += 1;
        n += 1;
        if let Some(s) = stop {
            return Ok(s);
        }
    }
}

/// Writes the result of `bar.red` to a released thread.
pub(crate) fn write_red(
    th: &mut Thread,
    env: &mut Env<'_, '_>,
    dest: RegId,
    kind: RedKind,
    v: u64,
) -> Result<(), RefError> {
    let mut x = X::new(th, env)?;
    match kind {
        RedKind::Popc => x.set_reg(dest, v, ScalarType::U32),
        RedKind::And | RedKind::Or => x.set_pred(dest, v != 0),
    }
    Ok(())
}

/// Per-thread operand values of a collective, gathered before any result is written.
struct Gathered {
    lane: u32,
    a: u64,
    b: u64,
    c: u64,
    mask: u64,
}

/// Executes the warp-synchronous instruction all of `group` (threads of one warp, at the same
/// instruction) wait at, writes every result and moves them past it.
pub(crate) fn resolve_collective(
    threads: &mut [Thread],
    group: &[usize],
    env: &mut Env<'_, '_>,
) -> Result<(), RefError> {
    let present: u64 = group.iter().fold(0, |m, &t| m | 1u64 << threads[t].lane);
    let mut vals: Vec<Gathered> = Vec::with_capacity(group.len());
    for &t in group {
        let mask = match threads[t].state {
            State::Collective(m) => m,
            _ => present,
        };
        let x = X::new(&mut threads[t], env)?;
        let inst = x.inst;
        let ty = inst.ty().unwrap_or(ScalarType::B32);
        let get = |i: usize, t: ScalarType| -> Result<u64, RefError> {
            match inst.operands.get(i) {
                Some(o) => x.src(o, t),
                None => Ok(0),
            }
        };
        let (a, b, c) = match inst.opcode {
            Opcode::Shfl => (get(1, ty)?, get(2, ScalarType::U32)?, get(3, ScalarType::U32)?),
            Opcode::Vote => (x.pred(x.op(1)?)? as u64, 0, 0),
            Opcode::Match | Opcode::Redux => (get(1, ty)?, 0, 0),
            _ => (0, 0, 0),
        };
        vals.push(Gathered { lane: x.th.lane, a, b, c, mask });
    }
    let value_of = |lane: u32| vals.iter().find(|g| g.lane == lane).map(|g| g.a);
    let w = env.warp_size;
    for (k, &t) in group.iter().enumerate() {
        let g = &vals[k];
        let mut x = X::new(&mut threads[t], env)?;
        let inst = x.inst;
        let ty = inst.ty().unwrap_or(ScalarType::B32);
        let members = g.mask & present;
        match inst.opcode {
            Opcode::Shfl => {
                let (src, valid) = shfl_source(inst, g.lane, g.b as u32, g.c as u32, w)?;
                let v = if valid {
                    match value_of(src) {
                        Some(v) if members >> src & 1 == 1 => v,
                        _ => {
                            return Err(x.invalid(format!(
                                "shfl.sync in lane {} reads lane {src}, which does not execute it",
                                g.lane
                            )))
                        }
                    }
                } else {
                    g.a
                };
                match x.op(0)? {
                    Operand::Pair([d, p]) => {
                        if let Some(d) = d {
                            x.set_reg(*d, v, ty);
                        }
                        if let Some(p) = p {
                            x.set_pred(*p, valid);
                        }
                    }
                    other => x.dst(other, v, ty)?,
                }
            }
            Opcode::Vote => {
                let ballot: u64 =
                    vals.iter().filter(|o| members >> o.lane & 1 == 1 && o.a != 0).fold(0, |m, o| m | 1u64 << o.lane);
                if inst.has(K::Ballot) {
                    x.dst(x.op(0)?, ballot, ScalarType::B32)?;
                } else {
                    let r = if inst.has(K::All) {
                        ballot == members
                    } else if inst.has(K::Any) {
                        ballot != 0
                    } else {
                        ballot == 0 || ballot == members
                    };
                    let Operand::Reg(p) = x.op(0)? else { return Err(x.invalid("vote needs a predicate destination")) };
                    x.set_pred(*p, r);
                }
            }
            Opcode::Match => {
                let m = mask_bits(ty.bits());
                let same: u64 = vals
                    .iter()
                    .filter(|o| members >> o.lane & 1 == 1 && o.a & m == g.a & m)
                    .fold(0, |acc, o| acc | 1u64 << o.lane);
                let (d, p) = match x.op(0)? {
                    Operand::Pair([d, p]) => (*d, *p),
                    Operand::Reg(d) => (Some(*d), None),
                    _ => (None, None),
                };
                let (v, ok) = if inst.has(K::All) {
                    let ok = same == members;
                    (if ok { members } else { 0 }, ok)
                } else {
                    (same, true)
                };
                if let Some(d) = d {
                    x.set_reg(d, v, ScalarType::B32);
                }
                if let Some(p) = p {
                    x.set_pred(p, ok);
                }
            }
            Opcode::Redux => {
                let it = ity(ty).map_err(|e| x.fail(e))?;
                let mut acc: Option<u64> = None;
                for o in vals.iter().filter(|o| members >> o.lane & 1 == 1) {
                    let v = o.a & 0xFFFF_FFFF;
                    acc = Some(match acc {
                        None => v,
                        Some(s) if inst.has(K::Add) => int::add(it, s, v),
                        Some(s) if inst.has(K::Min) => int::min(it, s, v),
                        Some(s) if inst.has(K::Max) => int::max(it, s, v),
                        Some(s) if inst.has(K::And) => s & v,
                        Some(s) if inst.has(K::Or) => s | v,
                        Some(s) if inst.has(K::Xor) => s ^ v,
                        Some(_) => return Err(x.invalid("redux without an operation")),
                    });
                }
                x.dst(x.op(0)?, acc.unwrap_or(0), ty)?;
            }
            Opcode::Activemask => x.dst(x.op(0)?, present, ScalarType::B32)?,
            _ => {} // bar.warp.sync
        }
        x.advance();
        x.th.executed += 1;
        x.th.state = State::Ready;
        x.th.preempted = false;
    }
    Ok(())
}

/// The source lane of `shfl.sync` for `lane` (PTX pseudo-code on 32 lanes; lanes at or beyond the warp
/// size do not exist and make the source invalid) and whether it is valid.
fn shfl_source(inst: &Inst, lane: u32, b: u32, c: u32, w: u32) -> Result<(u32, bool), RefError> {
    let clamp = c & 0x1F;
    let seg = (c >> 8) & 0x1F;
    let min_lane = lane & seg;
    let max_lane = min_lane | (clamp & !seg);
    let (j, ok) = if inst.has(K::Up) {
        let j = lane as i64 - b as i64;
        (j, j >= max_lane as i64)
    } else if inst.has(K::Down) {
        let j = lane as i64 + b as i64;
        (j, j <= max_lane as i64)
    } else if inst.has(K::Bfly) {
        let j = (lane ^ b) as i64;
        (j, j <= max_lane as i64)
    } else if inst.has(K::Idx) {
        let j = (min_lane | (b & !seg)) as i64;
        (j, j <= max_lane as i64)
    } else {
        return Err(unplaced("shfl without .up/.down/.bfly/.idx"));
    };
    if ok && j >= 0 && j < w.min(32) as i64 {
        Ok((j as u32, true))
    } else {
        Ok((lane, false))
    }
}

/// A new thread at the start of `kernel`.
pub(crate) fn new_thread(prep: &Prepared<'_>, tid: [u32; 3], linear: u32, warp_size: u32) -> Result<Thread, RefError> {
    let code = prep.code(prep.kernel).ok_or_else(|| unplaced("the kernel has no body"))?;
    Ok(Thread {
        tid,
        warp: linear / warp_size,
        lane: linear % warp_size,
        frames: vec![Frame {
            func: prep.kernel,
            pc: 0,
            regs: vec![0; code.reg_bits.len()],
            local_base: 0,
            params: vec![0; code.param_area as usize],
        }],
        local: vec![0; code.local_size as usize],
        carry: false,
        state: State::Ready,
        executed: 0,
        preempted: false,
    })
}

/// The instruction a waiting thread is on, as (function, position), for grouping collectives.
pub(crate) fn position(th: &Thread) -> (FuncId, usize) {
    th.frames.last().map(|f| (f.func, f.pc)).unwrap_or((FuncId::new(0), usize::MAX))
}
