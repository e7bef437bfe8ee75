//! The decoded program: a flat array of pre-resolved instructions the executor runs.
//!
//! Decoding resolves everything that would otherwise cost time on the hot path: registers become dense
//! indices into the warp's register file, labels become pcs, symbols become addresses or frame offsets,
//! modifiers become enum fields. Cold per-instruction data (source location, text, IR ids) lives in
//! [`InstInfo`], beside the hot [`DInst`] array.

use crate::error::{LaunchError, VariableUse};
use crate::types::Pc;
use reconverge_ir::{FuncId, InstId, KnownModifier, ScalarType, SrcLoc};
use smallvec::SmallVec;

/// A register of the warp register file (global index over all functions of the program).
pub type Reg = u32;
/// A predicate register (global index).
pub type Pred = u32;

/// Special registers whose value depends on the lane, warp or machine.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sreg {
    /// `%tid.x/.y/.z`
    Tid(u8),
    /// `%ntid.x/.y/.z`
    Ntid(u8),
    /// `%ctaid.x/.y/.z`
    Ctaid(u8),
    /// `%nctaid.x/.y/.z`
    Nctaid(u8),
    /// `%laneid`
    Laneid,
    /// `%warpid`
    Warpid,
    /// `%nwarpid`
    Nwarpid,
    /// `%smid`
    Smid,
    /// `%nsmid`
    Nsmid,
    /// `%gridid`
    Gridid,
    /// `%clock`
    Clock,
    /// `%clock_hi`
    ClockHi,
    /// `%clock64`
    Clock64,
    /// `%globaltimer`
    Globaltimer,
    /// `%lanemask_eq`
    LanemaskEq,
    /// `%lanemask_le`
    LanemaskLe,
    /// `%lanemask_lt`
    LanemaskLt,
    /// `%lanemask_ge`
    LanemaskGe,
    /// `%lanemask_gt`
    LanemaskGt,
    /// `%dynamic_smem_size`
    DynamicSmemSize,
    /// `%total_smem_size`
    TotalSmemSize,
    /// `WARP_SZ`
    WarpSize,
}

/// A value source operand.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Src {
    /// A register.
    Reg(Reg),
    /// A constant (already converted to the instruction's type).
    Imm(u64),
    /// A special register.
    Sreg(Sreg),
    /// A predicate used as a value (0 or 1).
    Pred(Pred),
    /// The local-space address of a frame variable: frame base of the lane + offset.
    LocalAddr(u32),
}

/// A predicate source operand, possibly negated.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PredSrc {
    /// A predicate register, negated when the flag is set.
    Reg(Pred, bool),
    /// A constant predicate.
    Const(bool),
}

/// Where an address points before the space is applied.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AddrBase {
    /// A 64-bit register holding an address in the instruction's space.
    Reg(Reg),
    /// A 32-bit register holding an address (shared, local, const or param windows): the base plus the
    /// offset wraps modulo 2^32, as PTX's 32-bit addresses do (`[%r4+68]` with `%r4` below zero, which
    /// compilers emit for `&s[tid - k]`).
    Reg32(Reg),
    /// A constant address in the instruction's space (symbols, absolute addresses).
    Const(u64),
    /// The lane's current frame (local memory, `.param` staging and device-function parameters).
    Frame,
}

/// An address operand: base + constant offset.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Addr {
    /// The base.
    pub base: AddrBase,
    /// Byte offset.
    pub offset: i64,
}

/// The state space of a memory access.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Space {
    /// Device memory (allocations and module `.global` variables).
    Global,
    /// Per-CTA shared memory.
    Shared,
    /// Per-thread local memory (frames).
    Local,
    /// The constant bank.
    Const,
    /// Kernel parameters (read-only buffer shared by the launch).
    KernelParam,
    /// A generic address, resolved through the windows.
    Generic,
}

/// Integer/bit operations with one source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntUnOp {
    /// `abs`
    Abs,
    /// `neg`
    Neg,
    /// `not`
    Not,
    /// `cnot`
    Cnot,
    /// `popc` (result u32)
    Popc,
    /// `clz` (result u32)
    Clz,
    /// `brev`
    Brev,
    /// `bfind`
    Bfind,
    /// `bfind.shiftamt`
    BfindShiftAmt,
}

/// Integer/bit operations with two sources.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntBinOp {
    /// `add`
    Add,
    /// `add.sat`
    AddSat,
    /// `sub`
    Sub,
    /// `sub.sat`
    SubSat,
    /// `mul.lo`
    MulLo,
    /// `mul.hi`
    MulHi,
    /// `mul.wide` (result twice as wide)
    MulWide,
    /// `mul24.lo`
    Mul24Lo,
    /// `mul24.hi`
    Mul24Hi,
    /// `div`
    Div,
    /// `rem`
    Rem,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `shl`
    Shl,
    /// `shr`
    Shr,
    /// `bmsk.clamp`
    BmskClamp,
    /// `bmsk.wrap`
    BmskWrap,
    /// `copysign` is float; `szext.clamp`
    SzextClamp,
    /// `szext.wrap`
    SzextWrap,
}

/// Integer operations with three sources.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntTerOp {
    /// `mad.lo`
    MadLo,
    /// `mad.hi`
    MadHi,
    /// `mad.hi.sat` (s32)
    MadHiSat,
    /// `mad.wide`
    MadWide,
    /// `mad24.lo`
    Mad24Lo,
    /// `mad24.hi`
    Mad24Hi,
    /// `bfe`
    Bfe,
    /// `sad`
    Sad,
    /// `dp4a` (types: a, b)
    Dp4a(bool, bool),
    /// `dp2a.lo` / `.hi` (a signed, b signed, hi)
    Dp2a(bool, bool, bool),
}

/// Carry-chain integer operations (`.cc` writes the warp's carry flags, `addc`/`subc`/`madc` read them).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CarryOp {
    /// `add.cc` / `addc` / `addc.cc`
    Add,
    /// `sub.cc` / `subc` / `subc.cc`
    Sub,
    /// `mad.lo.cc` / `madc.lo` / `madc.lo.cc`
    MadLo,
    /// `mad.hi.cc` / `madc.hi` / `madc.hi.cc`
    MadHi,
}

/// Float operations with one source.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FloatUnOp {
    /// `abs`
    Abs,
    /// `neg`
    Neg,
    /// `sqrt` (rounded per mode, or `.approx`)
    Sqrt,
    /// `rcp`
    Rcp,
    /// `rsqrt.approx`
    Rsqrt,
    /// `sin.approx`
    Sin,
    /// `cos.approx`
    Cos,
    /// `ex2.approx`
    Ex2,
    /// `lg2.approx`
    Lg2,
    /// `tanh.approx`
    Tanh,
}

/// Float operations with two sources.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FloatBinOp {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `mul`
    Mul,
    /// `div`
    Div,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `copysign`
    Copysign,
}

/// The rounding/approximation variant of a float instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FRound {
    /// `.rn` (also the default)
    Rn,
    /// `.rz`
    Rz,
    /// `.rm`
    Rm,
    /// `.rp`
    Rp,
    /// `.approx`
    Approx,
    /// `.full` (div.full.f32)
    Full,
}

/// Modifiers of a float instruction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct FMode {
    /// Rounding.
    pub rnd: FRound,
    /// `.ftz`
    pub ftz: bool,
    /// `.sat`
    pub sat: bool,
    /// `.NaN` (min/max propagate NaN)
    pub nan: bool,
}

pub use reconverge_semantics::texture::{Geometry, OutOfRange, Query, ResultType};
/// Comparison operators of `setp`/`set` (the semantics crate's).
pub use reconverge_semantics::CmpOp as Cmp;

pub use reconverge_semantics::mma::{Elem as MmaElem, MmaKind, Operand as MmaOperand, WmmaKind, WmmaShape};

/// A `wmma` fragment: its shape, matrix and element type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct WmmaFragment {
    /// The shape.
    pub shape: WmmaShape,
    /// A, B or C (C also for D).
    pub which: MmaOperand,
    /// The element type.
    pub elem: MmaElem,
}

/// What an `mbarrier` instruction does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MbarrierOp {
    /// `mbarrier.init [a], count`
    Init,
    /// `mbarrier.inval [a]`
    Inval,
    /// `mbarrier.arrive{.expect_tx}` / `arrive_drop` `state, [a]{, count or txCount}`: `count` is the
    /// operand when there is one and not `expect_tx` (which arrives once after adding `a` transactions).
    Arrive {
        /// `arrive_drop`: also lowers the expected count.
        drop: bool,
        /// `.expect_tx`: `a` is a transaction count.
        expect_tx: bool,
    },
    /// `mbarrier.expect_tx [a], txCount`
    ExpectTx,
    /// `mbarrier.complete_tx [a], txCount`
    CompleteTx,
    /// `mbarrier.test_wait` / `try_wait` `p, [a], state` (or `.parity`: `a` the parity).
    TestWait {
        /// `.parity`
        parity: bool,
    },
    /// `mbarrier.pending_count d, state`
    PendingCount,
}

/// What a `tex` or `tld4` instruction fetches.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TexFetch {
    /// The geometry (`.1d` ... `.a2d`).
    pub geom: Geometry,
    /// The result type (`.f32`, `.s32`, `.u32`).
    pub ty: ResultType,
    /// `.s32` coordinates (texel indices) instead of `.f32`.
    pub int_coords: bool,
    /// `tld4`'s channel (0 r, 1 g, 2 b, 3 a); `None` for `tex`.
    pub gather: Option<u8>,
}

/// Predicate combiners.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BoolOp {
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
}

/// Atomic operations.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AtomOp {
    /// `add`
    Add,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `inc` (wrapping increment: `old >= b ? 0 : old+1`)
    Inc,
    /// `dec` (`old == 0 || old > b ? b : old-1`)
    Dec,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `exch`
    Exch,
    /// `cas`
    Cas,
}

/// Shuffle modes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ShflMode {
    /// `up`
    Up,
    /// `down`
    Down,
    /// `bfly`
    Bfly,
    /// `idx`
    Idx,
}

/// Vote modes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VoteMode {
    /// `all`
    All,
    /// `any`
    Any,
    /// `uni`
    Uni,
    /// `ballot`
    Ballot,
}

/// Warp reduction operations of `redux.sync`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ReduxOp {
    /// `add`
    Add,
    /// `min`
    Min,
    /// `max`
    Max,
    /// `and`
    And,
    /// `or`
    Or,
    /// `xor`
    Xor,
}

/// Barrier flavours.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BarKind {
    /// `bar.sync` / `barrier.sync`: wait for the CTA.
    Sync,
    /// `bar.arrive`: arrive without waiting.
    Arrive,
    /// `bar.red.popc.u32`
    RedPopc,
    /// `bar.red.and.pred`
    RedAnd,
    /// `bar.red.or.pred`
    RedOr,
}

/// A byte copy between frame slots at a call (arguments in) or return (results out).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ParamCopy {
    /// Offset of the source in its frame.
    pub from: u32,
    /// Offset of the destination in its frame.
    pub to: u32,
    /// Bytes.
    pub size: u32,
}

/// What a vector element of `ld`/`st`/`mov` names.
pub type VecRegs = SmallVec<[Option<Reg>; 4]>;

/// A decoded operation with its resolved operands.
///
/// Field names follow the PTX operand order: `d` (and `p`, `q` for predicates) are destinations, `a`, `b`,
/// `c`, `e` sources, `ty` the instruction's data type, `mode` its float modifiers.
#[allow(missing_docs)]
#[derive(Clone, PartialEq, Debug)]
pub enum Op {
    /// Integer op with one source: `d = op(a)`.
    IntUn { op: IntUnOp, ty: ScalarType, d: Reg, a: Src },
    /// Integer op with two sources.
    IntBin { op: IntBinOp, ty: ScalarType, d: Reg, a: Src, b: Src },
    /// Integer op with three sources.
    IntTer { op: IntTerOp, ty: ScalarType, d: Reg, a: Src, b: Src, c: Src },
    /// Carry-chain op; `cin` reads the carry flags, `cout` writes them.
    Carry { op: CarryOp, ty: ScalarType, cin: bool, cout: bool, d: Reg, a: Src, b: Src, c: Src },
    /// `bfi d, a, b, c, e`
    Bfi { ty: ScalarType, d: Reg, a: Src, b: Src, c: Src, e: Src },
    /// `prmt.b32{.mode} d, a, b, c`
    Prmt { mode: Option<KnownModifier>, d: Reg, a: Src, b: Src, c: Src },
    /// `lop3.b32 d, a, b, c, lut`
    Lop3 { d: Reg, a: Src, b: Src, c: Src, lut: u8 },
    /// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c`
    Shf { left: bool, clamp: bool, d: Reg, a: Src, b: Src, c: Src },
    /// Float op with one source.
    FloatUn { op: FloatUnOp, ty: ScalarType, mode: FMode, d: Reg, a: Src },
    /// Float op with two sources.
    FloatBin { op: FloatBinOp, ty: ScalarType, mode: FMode, d: Reg, a: Src, b: Src },
    /// `fma`/`mad` (fused): `d = a*b + c`.
    Fma { ty: ScalarType, mode: FMode, d: Reg, a: Src, b: Src, c: Src },
    /// `testp.op.type p, a`
    Testp { op: KnownModifier, test: reconverge_ir::Modifier, ty: ScalarType, p: Pred, a: Src },
    /// `cvt.dty.sty d, a` with rounding/saturation modifiers; `dst_bits` is the width of `d`'s register, which
    /// receives a signed integer result sign-extended.
    Cvt {
        dty: ScalarType,
        sty: ScalarType,
        rnd: Option<KnownModifier>,
        ftz: bool,
        sat: bool,
        dst_bits: u32,
        d: Reg,
        a: Src,
    },
    /// `setp.cmp[.bool].ty p[|q], a, b[, {!}c]`
    Setp { cmp: Cmp, ty: ScalarType, p: Option<Pred>, q: Option<Pred>, a: Src, b: Src, comb: Option<(BoolOp, PredSrc)> },
    /// `set.cmp[.bool].dty.sty d, a, b[, {!}c]`
    Set { cmp: Cmp, dty: ScalarType, sty: ScalarType, d: Reg, a: Src, b: Src, comb: Option<(BoolOp, PredSrc)> },
    /// `selp.ty d, a, b, c` (c is a predicate)
    Selp { d: Reg, a: Src, b: Src, c: PredSrc },
    /// `slct.dty.sty d, a, b, c` (`c >= 0 ? a : b`)
    Slct { sty: ScalarType, d: Reg, a: Src, b: Src, c: Src },
    /// A value move, masked to `bits` (the destination width).
    Mov { d: Reg, a: Src, bits: u32 },
    /// A predicate move or combination: `d = op(a, b)`.
    PredOp { op: Option<BoolOp>, not: bool, d: Pred, a: PredSrc, b: PredSrc },
    /// `mov.bN d, {a, b, ...}` (pack lanes of `elem_bits`).
    Pack { d: Reg, parts: SmallVec<[Src; 4]>, elem_bits: u32 },
    /// `mov.bN {a, b, ...}, s` (unpack).
    Unpack { parts: VecRegs, s: Src, elem_bits: u32 },
    /// `ld` (and `ldu`): `elems` destinations of `ty`, sign-extended to `dst_bits` when signed.
    Ld { space: Space, ty: ScalarType, d: VecRegs, addr: Addr, dst_bits: u32, volatile: bool },
    /// `st`
    St { space: Space, ty: ScalarType, s: SmallVec<[Src; 4]>, addr: Addr },
    /// `atom` (with `d`) and `red` (without).
    Atom { space: Space, op: AtomOp, ty: ScalarType, d: Option<Reg>, addr: Addr, b: Src, c: Src },
    /// `tex.geom.v4.dty.cty d, [h, {c}]` and `tld4.comp.2d.v4.dty.f32` (texture objects; semantics in
    /// [`reconverge_semantics::texture`]). `coords` are as written: for layered geometries the first is the
    /// layer. `tex.level`'s level and `tex.grad`'s gradients are in `ignored` (read, for the scoreboard,
    /// but objects have no mipmap levels here, so every fetch reads level 0).
    Tex { fetch: TexFetch, d: [Option<Reg>; 4], handle: Src, coords: Box<[Src]>, ignored: Box<[Src]> },
    /// `txq.query.b32 d, [h]` and `suq.query.b32 d, [h]`.
    Txq { query: Query, d: Reg, handle: Src },
    /// `suld.b.geom{.vec}.btype.oob d, [h, {c}]`: `size` bytes per element (x in bytes).
    Suld { geom: Geometry, size: u32, oob: OutOfRange, d: VecRegs, handle: Src, coords: Box<[Src]> },
    /// `sust.b.geom{.vec}.btype.oob [h, {c}], s`.
    Sust { geom: Geometry, size: u32, oob: OutOfRange, s: Box<[Src]>, handle: Src, coords: Box<[Src]> },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], size{, src_size}`: copies `size` bytes (4, 8 or 16)
    /// from global to shared memory, the bytes from `src_size` on zero. The functional machine copies at
    /// issue; `group` is the thread's asynchronous-copy register, which the copy writes (so the timing
    /// model holds it until the global read completes) and `cp.async.wait_*` reads.
    CpAsync { dst_space: Space, dst: Addr, src_space: Space, src: Addr, size: u32, src_size: Option<Src>, group: Reg },
    /// `cp.async.wait_group n` and `cp.async.wait_all` (and `cp.async.commit_group`, with `wait: false`):
    /// waits until the thread's earlier asynchronous copies are done. Groups are not told apart: a wait for
    /// all but the `n` most recent groups waits for all of them (never less than PTX asks).
    CpAsyncWait { group: Reg, wait: bool },
    /// `mbarrier.*` on the 64-bit barrier object at `addr` ([`reconverge_semantics::mbarrier`]): `d`
    /// receives the state token (`arrive`) or the pending count (`pending_count`, whose `addr` is `None`
    /// and `a` the token), `p` whether the phase completed (`test_wait`, `try_wait`); `a` is the count,
    /// transaction count, token or parity operand.
    Mbarrier { op: MbarrierOp, space: Space, addr: Option<Addr>, d: Option<Reg>, p: Option<Pred>, a: Src },
    /// `elect.sync d|p, membermask`: the lowest active member lane is the leader (`p` true in it); `d`
    /// receives its lane number in every member lane.
    Elect { d: Option<Reg>, p: Option<Pred>, mask: Src },
    /// `mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c`: a warp-wide matrix
    /// multiply-accumulate over the 32 lanes' fragments ([`reconverge_semantics::mma::mma`]).
    Mma { kind: MmaKind, d: Box<[Reg]>, a: Box<[Src]>, b: Box<[Src]>, c: Box<[Src]> },
    /// `ldmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 d, [a]`: `num` 8x8 matrices of `.b16` whose rows
    /// the lanes address ([`reconverge_semantics::mma::ldmatrix_source`]).
    Ldmatrix { num: u8, trans: bool, d: Box<[Reg]>, space: Space, addr: Addr },
    /// `stmatrix.sync.aligned.m8n8.xN{.trans}.shared.b16 [a], s`: the inverse of `ldmatrix`.
    Stmatrix { num: u8, trans: bool, s: Box<[Src]>, space: Space, addr: Addr },
    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: transposes an 8x8 fragment across the warp.
    Movmatrix { d: Reg, a: Src },
    /// `wmma.load.{a,b,c}.sync.aligned.{row,col}.shape{.space}.type d, [a]{, stride}`: a fragment from the
    /// matrix at `addr` (the first active lane's) with `stride` elements between rows (`row_major`) or
    /// columns.
    WmmaLoad { frag: WmmaFragment, row_major: bool, d: Box<[Reg]>, space: Space, addr: Addr, stride: Src },
    /// `wmma.store.d.sync.aligned.{row,col}.shape{.space}.type [a], s{, stride}`.
    WmmaStore { frag: WmmaFragment, row_major: bool, s: Box<[Src]>, space: Space, addr: Addr, stride: Src },
    /// `wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype d, a, b, c`.
    WmmaMma { kind: WmmaKind, d: Box<[Reg]>, a: Box<[Src]>, b: Box<[Src]>, c: Box<[Src]> },
    /// `cvta.space` (to generic) / `cvta.to.space` (from generic).
    Cvta { to_generic: bool, space: Space, d: Reg, a: Src },
    /// `isspacep.space p, a`
    Isspacep { space: Space, p: Pred, a: Src },
    /// `bra target`
    Bra { target: Pc },
    /// `brx.idx index, targets`
    Brx { index: Src, targets: Box<[Pc]> },
    /// A direct call: `args` copy caller staging slots into the callee frame; `rets` copy back.
    Call { callee: u32, args: SmallVec<[ParamCopy; 4]>, rets: SmallVec<[ParamCopy; 1]> },
    /// `call (retval), vprintf, (format, args)`: CUDA's device `printf`, the one external function the
    /// simulator implements. NVCC and NVRTC compile `printf("...", x, y)` into this call: `format` holds
    /// the generic address of the NUL-terminated format string, `args` the generic address of a buffer
    /// holding the arguments, each aligned to its size (0 when there are none), and the function returns
    /// a 32-bit count. The operands are offsets in the caller's frame of the `.param` variables passed
    /// (8 bytes each) and of the one receiving the result (4 bytes; `None` when the call discards it).
    Printf { format: u32, args: u32, ret: Option<u32> },
    /// `ret`
    Ret,
    /// `exit`
    Exit,
    /// `trap`
    Trap,
    /// `bar.*` / `barrier.*`
    Bar { kind: BarKind, id: Src, count: Option<Src>, d: Option<Reg>, p: Option<Pred>, c: PredSrc },
    /// `shfl.sync.mode.b32 d[|p], a, b, c, membermask`
    Shfl { mode: ShflMode, d: Option<Reg>, p: Option<Pred>, a: Src, b: Src, c: Src, mask: Src },
    /// `vote[.sync].mode d, {!}a[, membermask]` — `d` is a predicate for all/any/uni, a register for ballot.
    Vote { mode: VoteMode, d: Src, a: PredSrc, mask: Option<Src> },
    /// `activemask.b32 d`
    Activemask { d: Reg },
    /// `match.{any,all}.sync.ty d[|p], a, membermask`
    Match { all: bool, ty: ScalarType, d: Option<Reg>, p: Option<Pred>, a: Src, mask: Src },
    /// `redux.sync.op.ty d, a, membermask`
    Redux { op: ReduxOp, ty: ScalarType, d: Reg, a: Src, mask: Src },
    /// `bar.warp.sync membermask`
    WarpSync { mask: Src },
    /// `ssy target` (explicit reconvergence stack, seed 001).
    Ssy { target: Pc },
    /// `sync`
    Sync,
    /// `pbk target`
    Pbk { target: Pc },
    /// `brk`
    Brk,
    /// `join` (end of a fork/join region).
    Join,
    /// `bssy target`: join the convergence barrier of the region reconverging at `target`.
    Bssy { target: Pc },
    /// `bsync target`: wait at the convergence barrier of the region reconverging at `target`.
    Bsync { target: Pc },
    /// `yield`: let the scheduler run another group.
    Yield,
    /// `syncwarp`: wait until every live thread of the warp arrives (stackless SIMT).
    Syncwarp,
    /// `membar.level` / `fence.sem.scope`: orders the thread's earlier memory accesses before its later
    /// ones. No functional effect (the functional machine is sequentially consistent); the timing model
    /// makes the thread wait until its earlier global writes are performed.
    Fence {
        /// The scope the fence orders memory for.
        scope: FenceScope,
    },
    /// An instruction without architectural effect here (`prefetch`, `nanosleep`, `pmevent`...).
    Nop,
    /// The pc after the last instruction of a function: reaching it means control fell off the end of the
    /// body without `ret` or `exit` (malformed PTX), which is an error rather than a jump into the next
    /// function.
    FellOff,
    /// Something the simulator cannot execute; running it is an error naming the instruction.
    Unsupported(Box<str>),
}

impl Op {
    /// The member-mask operand of a warp-synchronous instruction (`shfl.sync`, `vote.sync`,
    /// `match.sync`, `redux.sync`, `bar.warp.sync`): the lanes that must execute it together.
    #[inline]
    pub fn member_mask(&self) -> Option<Src> {
        match self {
            Op::Shfl { mask, .. } | Op::Match { mask, .. } | Op::Redux { mask, .. } | Op::WarpSync { mask } => {
                Some(*mask)
            }
            Op::Vote { mask, .. } => *mask,
            Op::Elect { mask, .. } => Some(*mask),
            // The `.aligned` matrix instructions: every lane of the warp.
            Op::Mma { .. }
            | Op::Ldmatrix { .. }
            | Op::Stmatrix { .. }
            | Op::Movmatrix { .. }
            | Op::WmmaLoad { .. }
            | Op::WmmaStore { .. }
            | Op::WmmaMma { .. } => Some(Src::Imm(u64::from(u32::MAX))),
            Op::IntUn { .. }
            | Op::IntBin { .. }
            | Op::IntTer { .. }
            | Op::Carry { .. }
            | Op::Bfi { .. }
            | Op::Prmt { .. }
            | Op::Lop3 { .. }
            | Op::Shf { .. }
            | Op::FloatUn { .. }
            | Op::FloatBin { .. }
            | Op::Fma { .. }
            | Op::Testp { .. }
            | Op::Cvt { .. }
            | Op::Setp { .. }
            | Op::Set { .. }
            | Op::Selp { .. }
            | Op::Slct { .. }
            | Op::Mov { .. }
            | Op::PredOp { .. }
            | Op::Pack { .. }
            | Op::Unpack { .. }
            | Op::Ld { .. }
            | Op::St { .. }
            | Op::Atom { .. }
            | Op::Cvta { .. }
            | Op::Isspacep { .. }
            | Op::Tex { .. }
            | Op::CpAsync { .. }
            | Op::CpAsyncWait { .. }
            | Op::Mbarrier { .. }
            | Op::Txq { .. }
            | Op::Suld { .. }
            | Op::Sust { .. }
            | Op::Bra { .. }
            | Op::Brx { .. }
            | Op::Call { .. }
            | Op::Printf { .. }
            | Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::Bar { .. }
            | Op::Activemask { .. }
            | Op::Ssy { .. }
            | Op::Sync
            | Op::Pbk { .. }
            | Op::Brk
            | Op::Join
            | Op::Bssy { .. }
            | Op::Bsync { .. }
            | Op::Yield
            | Op::Syncwarp
            | Op::Fence { .. }
            | Op::Nop
            | Op::FellOff
            | Op::Unsupported(_) => None,
        }
    }
}

/// The scope of a memory fence.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FenceScope {
    /// `membar.cta`, `fence.*.cta`: the threads of the CTA.
    Cta,
    /// `membar.gl`, `fence.*.gpu` (and `.cluster`): the whole GPU.
    Gpu,
    /// `membar.sys`, `fence.*.sys`: the GPU and the host.
    Sys,
}

/// Broad instruction classes for statistics and the timing model's latencies.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum InstClass {
    /// Integer and logic, including conversions between integer types (`cvt.u64.u32`).
    Int,
    /// Float (FMA pipe), including conversions to or from a single- or half-precision float.
    Float,
    /// Double precision.
    Double,
    /// Special function unit (transcendentals, rcp, sqrt, div).
    Sfu,
    /// Loads, stores, atomics.
    Mem,
    /// Branches, calls, returns, exits.
    Control,
    /// Barriers, memory fences and warp-collectives.
    Sync,
    /// Instructions a divergence mechanism's compiler pass inserted (`ssy`, `sync`, `pbk`, `brk`, and the
    /// jumps the pass adds): counted apart from the kernel's own instructions.
    Mechanism,
    /// No-ops.
    Nop,
}

/// One decoded instruction.
#[derive(Clone, PartialEq, Debug)]
pub struct DInst {
    /// Guard predicate `@p` / `@!p`.
    pub guard: Option<(Pred, bool)>,
    /// The operation.
    pub op: Op,
}

/// Cold per-instruction information.
#[derive(Clone, PartialEq, Debug)]
pub struct InstInfo {
    /// The function (index into [`Program::functions`]).
    pub func: u32,
    /// The IR function and instruction.
    pub ir_func: FuncId,
    /// The IR instruction id (`None` for instructions inserted by a pass).
    pub ir_inst: Option<InstId>,
    /// The block (IR id index) the instruction belongs to.
    pub block: u32,
    /// The PTX text of the instruction.
    pub text: String,
    /// Byte span in the PTX source (0..0 for inserted instructions).
    pub span: reconverge_ir::Span,
    /// 1-based line of the instruction in the PTX file (0 if unknown).
    pub ptx_line: u32,
    /// The CUDA source location from `.loc`.
    pub loc: Option<SrcLoc>,
    /// The instruction's class ([`InstClass::Mechanism`] exactly for the instructions a mechanism's pass
    /// inserted).
    pub class: InstClass,
    /// For the kernel's own conditional and indirect branches (guarded `bra` or `brk`, `brx.idx`): their
    /// index in [`Program::branches`].
    pub branch: Option<u32>,
    /// Registers read (value registers then predicates are kept separately).
    pub reads: SmallVec<[Reg; 4]>,
    /// Registers written.
    pub writes: SmallVec<[Reg; 2]>,
    /// Predicates read (the guard included).
    pub pred_reads: SmallVec<[Pred; 2]>,
    /// Predicates written.
    pub pred_writes: SmallVec<[Pred; 2]>,
}

/// Per-function layout.
#[derive(Clone, PartialEq, Debug)]
pub struct FuncInfo {
    /// The function's name.
    pub name: String,
    /// The IR function.
    pub ir: FuncId,
    /// First pc.
    pub entry: Pc,
    /// One past the last pc.
    pub end: Pc,
    /// First register of the function's window in the register file.
    pub reg_base: Reg,
    /// Number of value registers.
    pub nregs: u32,
    /// 32-bit register words the function's value registers occupy (64-bit registers count twice).
    pub reg_words: u32,
    /// First predicate of the function's window.
    pub pred_base: Pred,
    /// Number of predicates.
    pub npreds: u32,
    /// Frame size in bytes (locals, staging parameters, own parameters and return values).
    pub frame_size: u32,
    /// Offsets of the function's own parameters in its frame (device functions).
    pub param_offsets: Vec<u32>,
    /// Offsets of the function's return values in its frame.
    pub ret_offsets: Vec<u32>,
    /// Whether this is a kernel.
    pub is_kernel: bool,
}

/// Layout of a kernel parameter in the parameter buffer.
#[derive(Clone, PartialEq, Debug)]
pub struct KernelParam {
    /// Its name.
    pub name: String,
    /// Its PTX type.
    pub ty: ScalarType,
    /// Size in bytes.
    pub size: u32,
    /// Offset in the parameter buffer.
    pub offset: u32,
    /// Its alignment in bytes (`.align N`, or its type's size).
    pub align: u32,
    /// Whether it is declared as a pointer (`.ptr`) or is a 64-bit integer (a likely pointer).
    pub is_pointer_like: bool,
}

/// A module variable placed in memory.
#[derive(Clone, PartialEq, Debug)]
pub struct PlacedVar {
    /// Its name.
    pub name: String,
    /// Address in its space (global: device address; shared/const: space offset).
    pub addr: u64,
    /// Size in bytes.
    pub size: u64,
    /// Initial contents (zero-filled when there is no initializer).
    pub init: Vec<u8>,
    /// The element type.
    pub ty: ScalarType,
    /// Whether it is a scalar (no array dimensions, no vector): a 64-bit scalar `.global`/`.const` is
    /// taken to be a pointer by `--global NAME=@FILE.npy`.
    pub scalar: bool,
    /// Its alignment in bytes (`.align N`, or its element's size).
    pub align: u64,
}

/// A decoded, ready-to-run kernel and everything it can call.
#[derive(Clone, Debug)]
pub struct Program {
    /// The instructions.
    pub insts: Vec<DInst>,
    /// Cold data, one per instruction.
    pub info: Vec<InstInfo>,
    /// Functions (index 0 is the kernel).
    pub functions: Vec<FuncInfo>,
    /// Reconvergence pc of each conditional branch (indexed by pc; [`crate::PC_NONE`] elsewhere).
    pub reconv: Vec<Pc>,
    /// The conditional branches whose reconvergence point lies outside a loop holding them
    /// ([`crate::decode::BranchPoint::leaves_loop`]), in pc order.
    pub leaves_loop: Vec<Pc>,
    /// `(branch pc, likely-convergence pc)` of the conditional branches that can leave their loop and
    /// have a likely-convergence point ([`crate::decode::BranchPoint::likely`]), in pc order.
    pub likely: Vec<(Pc, Pc)>,
    /// Per pc: its block is not proven convergent by seed 004's analysis (CA+VA).
    pub divergent: Vec<bool>,
    /// Per pc: the conditional branch there opens a *structured* region, a properly nested single-entry
    /// single-exit one ([`crate::decode::BranchPoint::structured`]); `false` at every other pc. The
    /// `hybrid` path-list traversal runs the paths of a structured divergence depth-first and those of an
    /// unstructured one breadth-first.
    pub structured: Vec<bool>,
    /// Per pc: how many instructions from it, within its basic block, run straight through
    /// (computation and memory classes, [`InstClass`]: no control transfer, barrier, warp-synchronous or
    /// mechanism instruction): 0 when the instruction itself does not. The functional
    /// machine issues such a run at once when the mechanism allows it
    /// (a mechanism's `straight_run`).
    pub straight: Vec<u16>,
    /// Seed 004's scalarization plan, when the run counts the scalarization metrics or the timing model
    /// dispatches scalar instructions once ([`crate::DecodeOptions::scalarize`]).
    pub scalar: Option<crate::scalar_plan::ScalarPlan>,
    /// Per pc, its rank in the thread-frontier priority order (lower runs first): within each function
    /// a permutation of the function's pcs ordered by [`reconverge_analysis::frontier_order`] of the
    /// blocks (the layout a thread-frontier compiler would choose).
    pub frontier_rank: Vec<Pc>,
    /// The pc of each of the kernel's own conditional or indirect branches, in pc order (per-branch
    /// statistics are indexed like this).
    pub branches: Vec<Pc>,
    /// Total value registers per thread.
    pub nregs: u32,
    /// Total predicates per thread.
    pub npreds: u32,
    /// Kernel parameters.
    pub params: Vec<KernelParam>,
    /// Size of the kernel parameter buffer.
    pub param_size: u32,
    /// Module `.global` variables (placed at device addresses).
    pub globals: Vec<PlacedVar>,
    /// `.const` variables (offsets in the constant bank).
    pub consts: Vec<PlacedVar>,
    /// Size of the constant bank.
    pub const_size: u64,
    /// Static shared variables (offsets in the CTA's shared memory).
    pub shared: Vec<PlacedVar>,
    /// Static shared memory per CTA, in bytes (dynamic shared memory starts here, 16-aligned).
    pub static_shared: u32,
    /// Whether the kernel declares `extern .shared` (dynamic) memory.
    pub uses_dynamic_shared: bool,
    /// The PTX file name for messages.
    pub file: String,
    /// `.file` index → CUDA file name.
    pub src_files: Vec<(u32, String)>,
    /// The registers per thread NVIDIA's assembler allocated for the kernel, when a front end asked it
    /// (`reconverge_nvrtc::ptxas`); the timing model charges these rather than its estimate from the
    /// PTX's register declarations.
    pub allocated_registers: Option<RegisterAllocation>,
}

/// The registers per thread `ptxas -v` reported for a kernel, and for what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterAllocation {
    /// Registers per thread.
    pub per_thread: u32,
    /// The architecture assembled for (`sm_N`'s N).
    pub arch: u32,
    /// The ptxas release (`11.8`).
    pub release: String,
}

impl Program {
    /// The kernel's name.
    pub fn kernel_name(&self) -> &str {
        &self.functions[0].name
    }

    /// Whether the conditional branch at `pc` reconverges outside a loop that holds it.
    #[inline]
    pub fn leaves_loop(&self, pc: Pc) -> bool {
        self.leaves_loop.binary_search(&pc).is_ok()
    }

    /// Whether `pc` is a conditional branch (guarded `bra`, `brx.idx`, guarded `ret` or `exit`) of the
    /// program: one with a reconvergence point.
    #[inline]
    pub fn is_conditional_branch(&self, pc: Pc) -> bool {
        self.reconv.get(pc as usize).is_some_and(|&r| r != crate::types::PC_NONE)
    }

    /// Whether `pc` is a conditional branch whose region is structured ([`Program::structured`]).
    #[inline]
    pub fn is_structured(&self, pc: Pc) -> bool {
        self.structured.get(pc as usize).copied().unwrap_or(false)
    }

    /// The likely-convergence pc of the conditional branch at `pc`, if it has one.
    #[inline]
    pub fn likely_convergence(&self, pc: Pc) -> Option<Pc> {
        self.likely.binary_search_by_key(&pc, |&(b, _)| b).ok().map(|i| self.likely[i].1)
    }

    /// A human description of `pc` for messages: `pc 12 (kern, line 40: "add.s32 ...")`.
    pub fn describe_pc(&self, pc: Pc) -> String {
        match self.info.get(pc as usize) {
            Some(i) => {
                let mut s = format!("pc {pc} in {} `{}`", self.functions[i.func as usize].name, i.text);
                if let Some(l) = i.loc {
                    let file = self.src_files.iter().find(|(n, _)| *n == l.file).map(|(_, f)| f.as_str());
                    s.push_str(&format!(" ({}:{})", file.unwrap_or("?"), l.line));
                }
                s
            }
            None => crate::types::pc_string(pc),
        }
    }
}

impl Program {
    /// Finds the module variable `name` among the `.global` and `.const` variables, by its PTX name or,
    /// failing that, its demangled name: (is const, variable).
    pub fn find_variable(&self, name: &str, purpose: VariableUse) -> Result<(bool, &PlacedVar), LaunchError> {
        let all = || self.globals.iter().map(|v| (false, v)).chain(self.consts.iter().map(|v| (true, v)));
        let mut found: Vec<(bool, &PlacedVar)> = all().filter(|(_, v)| v.name == name).collect();
        if found.is_empty() {
            found = all().filter(|(_, v)| reconverge_ir::names::matches(name, &v.name)).collect();
        }
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(LaunchError::UnknownVariable {
                name: name.to_string(),
                purpose,
                known: all().map(|(_, v)| reconverge_ir::names::display_name(&v.name)).collect(),
            }),
            _ => Err(LaunchError::AmbiguousVariable { name: name.to_string(), purpose }),
        }
    }
}

#[cfg(test)]
mod size_tests {
    /// The decoded program is an array of instructions the executor reads every cycle: an operation stays
    /// as small as it was before the texture, asynchronous and matrix instructions came (104 bytes; those
    /// rare ones keep their operand lists boxed).
    #[test]
    fn an_operation_stays_small() {
        let size = std::mem::size_of::<super::Op>();
        assert!(size <= 104, "Op is {size} bytes");
    }
}
