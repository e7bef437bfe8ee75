//! What every operation is, stated once: its class, the registers and predicates it reads and writes,
//! whether the JIT may compile it, whether it ends a straight-line run, and its row in a per-opcode
//! latency table.
//!
//! [`facts`] is one exhaustive `match` over [`Op`] without a wildcard arm: a new operation does not compile
//! until its facts are declared here. Everything else derives from it: the decoder's
//! [`reads_writes`](crate::decode::reads_writes), [`pred_reads_writes`](crate::decode::pred_reads_writes)
//! and [`classify`](crate::decode::classify) (hence the scoreboard's dependencies and the statistics'
//! classes), [`Program::straight`](crate::Program::straight), the JIT's choice of instructions and the
//! timing model's units and opcode rows. It runs once per pc when a program is decoded or prepared, never
//! per executed instruction.

use crate::program::{
    Addr, AddrBase, FloatBinOp, FloatUnOp, InstClass, IntBinOp, IntTerOp, Op, Pred, PredSrc, Reg, Src,
};
use reconverge_ir::ScalarType;
use smallvec::SmallVec;

/// The arithmetic row of an operation in a per-opcode latency table (GPGPU-Sim 4.0's classification of
/// PTX opcodes: `add`/`sub`, `min`/`max`, `mul`, `mad`, `div`, the special functions, `shfl`, and
/// everything else).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimingSlot {
    /// Additions and subtractions (with carry too).
    Add,
    /// `min` and `max`.
    Max,
    /// Multiplications.
    Mul,
    /// Multiply-adds (`mad`; `fma` is [`TimingSlot::Other`], as GPGPU-Sim does not list it).
    Mad,
    /// Divisions.
    Div,
    /// Special functions (`sqrt`, `rcp`, `rsqrt`, `sin`, `cos`, `ex2`, `lg2`, `tanh`).
    Sfu,
    /// `shfl`.
    Shfl,
    /// The tensor cores' matrix multiply-accumulates (`mma`, `wmma.mma`).
    Tensor,
    /// Everything else.
    Other,
}

/// The facts of one operation ([`facts`]).
#[derive(Clone, PartialEq, Debug)]
pub struct OpFacts {
    /// Its class (the decoder makes the instructions a mechanism's pass inserted
    /// [`InstClass::Mechanism`] whatever this says).
    pub class: InstClass,
    /// Value registers read, in operand order (an address's base register first).
    pub reads: SmallVec<[Reg; 4]>,
    /// Value registers written.
    pub writes: SmallVec<[Reg; 2]>,
    /// Predicates read (without the guard), in operand order.
    pub pred_reads: SmallVec<[Pred; 2]>,
    /// Predicates written.
    pub pred_writes: SmallVec<[Pred; 2]>,
    /// The value source operands, in operand order (addresses, predicate sources and destinations
    /// excluded): what the JIT checks are plain registers, constants or predicates.
    pub srcs: SmallVec<[Src; 4]>,
    /// Whether it is a pure lane operation the JIT may compile (when its [`OpFacts::srcs`] are plain).
    pub lane: bool,
    /// Whether it ends a straight-line run ([`crate::Program::straight`]): control transfers, barriers,
    /// warp-synchronous instructions, fences, mechanism instructions and unsupported ones do.
    pub ends_run: bool,
    /// Its row in a per-opcode latency table.
    pub slot: TimingSlot,
    /// The type that picks the table (integer, single or double) for `slot`, if any.
    pub slot_ty: Option<ScalarType>,
}

impl OpFacts {
    /// An operation of `class` that reads and writes nothing; it ends a straight-line run unless it
    /// computes or accesses memory.
    fn new(class: InstClass) -> OpFacts {
        let ends_run = match class {
            InstClass::Int | InstClass::Float | InstClass::Double | InstClass::Sfu | InstClass::Mem => false,
            InstClass::Control | InstClass::Sync | InstClass::Mechanism | InstClass::Nop => true,
        };
        OpFacts {
            class,
            reads: SmallVec::new(),
            writes: SmallVec::new(),
            pred_reads: SmallVec::new(),
            pred_writes: SmallVec::new(),
            srcs: SmallVec::new(),
            lane: false,
            ends_run,
            slot: TimingSlot::Other,
            slot_ty: None,
        }
    }

    /// A pure lane operation.
    fn lane(mut self) -> Self {
        self.lane = true;
        self
    }

    /// An operation of a class that ends runs which does not ([`Op::Nop`]).
    fn continues_run(mut self) -> Self {
        self.ends_run = false;
        self
    }

    /// Value sources: a register among them is a read (a predicate named as a value is not counted as a
    /// predicate read: see [`OpFacts::src_or_pred`]).
    fn src<'a>(mut self, ss: impl IntoIterator<Item = &'a Src>) -> Self {
        for s in ss {
            self.srcs.push(*s);
            if let Src::Reg(r) = s {
                self.reads.push(*r);
            }
        }
        self
    }

    /// Value sources whose predicates (a predicate used as a value) count as predicate reads.
    fn src_or_pred<'a>(mut self, ss: impl IntoIterator<Item = &'a Src>) -> Self {
        for s in ss {
            if let Src::Pred(p) = s {
                self.pred_reads.push(*p);
            }
            self = self.src([s]);
        }
        self
    }

    /// An address operand: its base register is read.
    fn addr(mut self, a: &Addr) -> Self {
        if let AddrBase::Reg(r) | AddrBase::Reg32(r) = a.base {
            self.reads.push(r);
        }
        self
    }

    /// Value registers written.
    fn write(mut self, ds: impl IntoIterator<Item = Reg>) -> Self {
        self.writes.extend(ds);
        self
    }

    /// Predicate sources.
    fn pred<'a>(mut self, ps: impl IntoIterator<Item = &'a PredSrc>) -> Self {
        for p in ps {
            if let PredSrc::Reg(r, _) = p {
                self.pred_reads.push(*r);
            }
        }
        self
    }

    /// Predicates written.
    fn pred_write(mut self, ps: impl IntoIterator<Item = Pred>) -> Self {
        self.pred_writes.extend(ps);
        self
    }

    /// A destination named as a [`Src`] (`vote`'s, a register or a predicate).
    fn dest_src(self, d: &Src) -> Self {
        match d {
            Src::Reg(r) => self.write([*r]),
            Src::Pred(p) => self.pred_write([*p]),
            Src::Imm(_) | Src::Sreg(_) | Src::LocalAddr(_) => self,
        }
    }

    /// Its row in a per-opcode latency table.
    fn slot(mut self, slot: TimingSlot, ty: ScalarType) -> Self {
        self.slot = slot;
        self.slot_ty = Some(ty);
        self
    }
}

/// The facts of `op`.
pub fn facts(op: &Op) -> OpFacts {
    use InstClass as C;
    use OpFacts as F;
    match op {
        Op::IntUn { op: _, ty: _, d, a } => F::new(C::Int).lane().src([a]).write([*d]),
        Op::IntBin { op, ty, d, a, b } => F::new(C::Int).lane().src([a, b]).write([*d]).slot(int_bin_slot(*op), *ty),
        Op::IntTer { op, ty, d, a, b, c } => {
            F::new(C::Int).lane().src([a, b, c]).write([*d]).slot(int_ter_slot(*op), *ty)
        }
        Op::Carry { ty, d, a, b, c, .. } => F::new(C::Int).src([a, b, c]).write([*d]).slot(TimingSlot::Add, *ty),
        Op::Bfi { d, a, b, c, e, .. } => F::new(C::Int).lane().src([a, b, c, e]).write([*d]),
        Op::Prmt { d, a, b, c, .. } | Op::Lop3 { d, a, b, c, .. } | Op::Shf { d, a, b, c, .. } => {
            F::new(C::Int).lane().src([a, b, c]).write([*d])
        }
        Op::FloatUn { op, ty, d, a, .. } => {
            let class = match op {
                FloatUnOp::Abs | FloatUnOp::Neg if *ty == ScalarType::F64 => C::Double,
                FloatUnOp::Abs | FloatUnOp::Neg => C::Float,
                FloatUnOp::Sqrt
                | FloatUnOp::Rcp
                | FloatUnOp::Rsqrt
                | FloatUnOp::Sin
                | FloatUnOp::Cos
                | FloatUnOp::Ex2
                | FloatUnOp::Lg2
                | FloatUnOp::Tanh => C::Sfu,
            };
            let slot = if class == C::Sfu { TimingSlot::Sfu } else { TimingSlot::Other };
            F::new(class).lane().src([a]).write([*d]).slot(slot, *ty)
        }
        Op::FloatBin { op, ty, d, a, b, .. } => {
            let class = if *op == FloatBinOp::Div {
                C::Sfu
            } else if *ty == ScalarType::F64 {
                C::Double
            } else {
                C::Float
            };
            F::new(class).lane().src([a, b]).write([*d]).slot(float_bin_slot(*op), *ty)
        }
        Op::Fma { ty, d, a, b, c, .. } => {
            let class = if *ty == ScalarType::F64 { C::Double } else { C::Float };
            F::new(class).lane().src([a, b, c]).write([*d])
        }
        Op::Testp { p, a, .. } => F::new(C::Int).src([a]).pred_write([*p]),
        Op::Cvt { dty, sty, d, a, .. } => {
            let class = if *dty == ScalarType::F64 || *sty == ScalarType::F64 {
                C::Double
            } else if !dty.is_float() && !sty.is_float() {
                // A conversion between integer types (`cvt.u64.u32`: a width change) is integer work; one to
                // or from a float is a float instruction.
                C::Int
            } else {
                C::Float
            };
            F::new(class).lane().src_or_pred([a]).write([*d])
        }
        Op::Setp { p, q, a, b, comb, .. } => {
            let comb = comb.as_ref().map(|(_, c)| c);
            F::new(C::Int).lane().src_or_pred([a, b]).pred(comb).pred_write(p.iter().chain(q).copied())
        }
        Op::Set { d, a, b, comb, .. } => F::new(C::Int).src([a, b]).write([*d]).pred(comb.as_ref().map(|(_, c)| c)),
        Op::Selp { d, a, b, c } => F::new(C::Int).lane().src([a, b]).write([*d]).pred([c]),
        Op::Slct { d, a, b, c, .. } => F::new(C::Int).lane().src([a, b, c]).write([*d]),
        Op::Mov { d, a, .. } => F::new(C::Int).lane().src_or_pred([a]).write([*d]),
        Op::PredOp { d, a, b, .. } => F::new(C::Int).lane().pred([a, b]).pred_write([*d]),
        Op::Pack { d, parts, .. } => F::new(C::Int).src(parts).write([*d]),
        Op::Unpack { parts, s, .. } => F::new(C::Int).src([s]).write(parts.iter().flatten().copied()),
        Op::Ld { d, addr, .. } => F::new(C::Mem).addr(addr).write(d.iter().flatten().copied()),
        Op::St { s, addr, .. } => F::new(C::Mem).addr(addr).src(s),
        Op::Atom { d, addr, b, c, .. } => F::new(C::Mem).addr(addr).src([b, c]).write(*d),
        Op::Tex { d, handle, coords, ignored, .. } => {
            F::new(C::Mem).src([handle].into_iter().chain(coords).chain(ignored)).write(d.iter().flatten().copied())
        }
        Op::Txq { d, handle, .. } => F::new(C::Mem).src([handle]).write([*d]),
        Op::Suld { d, handle, coords, .. } => {
            F::new(C::Mem).src([handle].into_iter().chain(coords)).write(d.iter().flatten().copied())
        }
        Op::Sust { s, handle, coords, .. } => F::new(C::Mem).src([handle].into_iter().chain(coords).chain(s)),
        Op::CpAsync { dst, src, src_size, group, .. } => {
            F::new(C::Mem).addr(dst).addr(src).src(src_size).write([*group])
        }
        // A wait reads the copies' register: the scoreboard holds it until they are done.
        Op::CpAsyncWait { group, wait: true } => F::new(C::Sync).src([&Src::Reg(*group)]),
        Op::CpAsyncWait { wait: false, .. } => F::new(C::Nop).continues_run(),
        Op::Mbarrier { addr, d, p, a, .. } => {
            let f = match addr {
                Some(addr) => F::new(C::Mem).addr(addr),
                None => F::new(C::Int),
            };
            f.src([a]).write(*d).pred_write(*p)
        }
        Op::Elect { d, p, mask } => F::new(C::Sync).src([mask]).write(*d).pred_write(*p),
        Op::Mma { d, a, b, c, .. } => {
            let f = F::new(C::Sync).src(a.iter().chain(b).chain(c)).write(d.iter().copied());
            OpFacts { slot: TimingSlot::Tensor, ..f }
        }
        Op::WmmaMma { d, a, b, c, .. } => {
            let f = F::new(C::Sync).src(a.iter().chain(b).chain(c)).write(d.iter().copied());
            OpFacts { slot: TimingSlot::Tensor, ..f }
        }
        Op::Ldmatrix { d, addr, .. } => F::new(C::Mem).addr(addr).write(d.iter().copied()),
        Op::Stmatrix { s, addr, .. } => F::new(C::Mem).addr(addr).src(s),
        Op::Movmatrix { d, a } => F::new(C::Sync).src([a]).write([*d]),
        Op::WmmaLoad { d, addr, stride, .. } => F::new(C::Mem).addr(addr).src([stride]).write(d.iter().copied()),
        Op::WmmaStore { s, addr, stride, .. } => F::new(C::Mem).addr(addr).src(s).src([stride]),
        Op::Cvta { d, a, .. } => F::new(C::Int).src([a]).write([*d]),
        Op::Isspacep { p, a, .. } => F::new(C::Int).src([a]).pred_write([*p]),
        Op::Brx { index, .. } => F::new(C::Control).src([index]),
        // `printf` stands in for the call it is: a control instruction with the latency of a branch.
        Op::Bra { .. } | Op::Call { .. } | Op::Printf { .. } | Op::Ret | Op::Exit | Op::Trap | Op::FellOff => {
            F::new(C::Control)
        }
        Op::Bar { id, count, d, p, c, .. } => {
            F::new(C::Sync).src([id].into_iter().chain(count)).write(*d).pred([c]).pred_write(*p)
        }
        Op::Shfl { d, p, a, b, c, mask, .. } => {
            let f = F::new(C::Sync).src([a, b, c, mask]).write(*d).pred_write(*p);
            OpFacts { slot: TimingSlot::Shfl, ..f }
        }
        Op::Vote { d, a, mask, .. } => F::new(C::Sync).src(mask).dest_src(d).pred([a]),
        Op::Activemask { d } => F::new(C::Sync).write([*d]),
        Op::Match { d, p, a, mask, .. } => F::new(C::Sync).src([a, mask]).write(*d).pred_write(*p),
        Op::Redux { d, a, mask, .. } => F::new(C::Sync).src([a, mask]).write([*d]),
        Op::WarpSync { mask } => F::new(C::Sync).src([mask]),
        Op::Fence { .. } => F::new(C::Sync),
        Op::Ssy { .. } | Op::Pbk { .. } | Op::Join | Op::Bssy { .. } | Op::Bsync { .. } | Op::Yield | Op::Syncwarp => {
            F::new(C::Mechanism)
        }
        // A `sync`/`brk` the SSY pass wrote over the kernel's own jump or branch stays the kernel's
        // instruction (the inserted ones are classed by `first_inserted`).
        Op::Sync | Op::Brk => F::new(C::Control),
        Op::Nop => F::new(C::Nop).continues_run(),
        Op::Unsupported(_) => F::new(C::Nop),
    }
}

fn int_bin_slot(op: IntBinOp) -> TimingSlot {
    match op {
        IntBinOp::Add | IntBinOp::AddSat | IntBinOp::Sub | IntBinOp::SubSat => TimingSlot::Add,
        IntBinOp::Min | IntBinOp::Max => TimingSlot::Max,
        IntBinOp::MulLo | IntBinOp::MulHi | IntBinOp::MulWide => TimingSlot::Mul,
        IntBinOp::Div => TimingSlot::Div,
        IntBinOp::Mul24Lo
        | IntBinOp::Mul24Hi
        | IntBinOp::Rem
        | IntBinOp::And
        | IntBinOp::Or
        | IntBinOp::Xor
        | IntBinOp::Shl
        | IntBinOp::Shr
        | IntBinOp::BmskClamp
        | IntBinOp::BmskWrap
        | IntBinOp::SzextClamp
        | IntBinOp::SzextWrap => TimingSlot::Other,
    }
}

fn int_ter_slot(op: IntTerOp) -> TimingSlot {
    match op {
        IntTerOp::MadLo | IntTerOp::MadHi | IntTerOp::MadHiSat | IntTerOp::MadWide => TimingSlot::Mad,
        IntTerOp::Mad24Lo
        | IntTerOp::Mad24Hi
        | IntTerOp::Bfe
        | IntTerOp::Sad
        | IntTerOp::Dp4a(..)
        | IntTerOp::Dp2a(..) => TimingSlot::Other,
    }
}

fn float_bin_slot(op: FloatBinOp) -> TimingSlot {
    match op {
        FloatBinOp::Add | FloatBinOp::Sub => TimingSlot::Add,
        FloatBinOp::Min | FloatBinOp::Max => TimingSlot::Max,
        FloatBinOp::Mul => TimingSlot::Mul,
        FloatBinOp::Div => TimingSlot::Div,
        FloatBinOp::Copysign => TimingSlot::Other,
    }
}
