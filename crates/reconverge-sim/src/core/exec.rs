//! The whole-warp executor: runs one decoded instruction for an issue group and reports its [`Flow`].
//!
//! Values are computed for every lane of the group at once: sources are fetched as lane slices (a
//! register's lanes are contiguous), results are computed into a scratch lane array and written back under
//! the group's mask. An instruction with few active lanes (see [`Scratch`]) fetches, computes and writes
//! only those instead. Memory operations and warp-collectives walk the active lanes in ascending order,
//! which makes atomics deterministic.

use super::cta::{CallFrame, Cta};
use super::lanes::Lanes;
use crate::access::{resolve, AccessKind, AccessLog, AtomicRequest, GlobalMemory};
use crate::alu;
use crate::error::{DeadlockReport, Location, SimError};
use crate::layout::{CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
use crate::mechanism::Flow;
use crate::memory::{flat_read, flat_write, write_le, FaultKind, MemFault};
use crate::printf::{PrintfLog, PrintfRecord, PrintfSource, MAX_STRING};
use crate::program::*;
use crate::types::{full_mask, lanes, LaneMask, Pc};
use smallvec::SmallVec;

/// Everything outside the CTA an instruction can touch.
pub(crate) struct Env<'a, G: GlobalMemory> {
    /// The program.
    pub prog: &'a Program,
    /// Device memory.
    pub mem: &'a mut G,
    /// The constant bank.
    pub consts: &'a [u8],
    /// The kernel parameter buffer.
    pub params: &'a [u8],
    /// What stays the same for every instruction of the launch on this SM.
    pub fixed: &'a Fixed,
    /// The value `%clock` reads.
    pub clock: u64,
    /// Whether to detect value changes of registers (livelock detection).
    pub track: bool,
    /// Set when memory changed, or (while `track`) a register or predicate changed value.
    pub changed: bool,
    /// The memory accesses of the last instruction (recorded when `access.enabled`).
    pub access: &'a mut AccessLog,
    /// The SM's slot of the CTA being executed (atomics name it with the thread).
    pub cta_slot: u32,
    /// The mechanism brings missing member lanes of a warp-synchronous instruction to the group
    /// ([`crate::mechanism::Tracker::AWAITS_MEMBERS`]): report them as [`Flow::Await`] instead of a
    /// deadlock.
    pub await_members: bool,
    /// The output of `printf` calls ([`Op::Printf`]).
    pub printf: &'a mut PrintfLog,
}

/// The launch's constants as the executor needs them (one per SM core).
#[derive(Clone, Debug)]
pub(crate) struct Fixed {
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// The SM running the CTA.
    pub sm: u32,
    /// Number of SMs.
    pub nsm: u32,
    /// Local memory limit per thread.
    pub local_limit: u32,
    /// Dynamic shared memory size.
    pub dynamic_shared: u32,
}

/// Scratch lane arrays, reused across instructions, and when an instruction iterates only its active
/// lanes.
pub struct Scratch {
    a: [u64; 64],
    b: [u64; 64],
    c: [u64; 64],
    e: [u64; 64],
    out: [u64; 64],
    /// An instruction of a whole static warp whose active lanes are at most this many 32nds of the warp
    /// fetches, computes and writes only them; more take the whole-warp path.
    sparse_whole: u32,
    /// The same for a regrouped group ([`super::lanes::Mixed`]), whose lanes are gathered one by one.
    sparse_mixed: u32,
    /// Whether loads and stores whose lanes all hit one buffer take the whole-warp path ([`load_warp`],
    /// [`store_warp`]); off only to test that it matches the lane-by-lane one.
    warp_memory: bool,
}

/// [`Scratch::sparse_whole`] by default, in 32nds of the warp: a quarter of it (a first choice, not yet tuned).
const SPARSE_WHOLE: u32 = 8;
/// [`Scratch::sparse_mixed`] by default, in 32nds of the warp (gathering lanes one by one costs as much).
const SPARSE_MIXED: u32 = 24;

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            a: [0; 64],
            b: [0; 64],
            c: [0; 64],
            e: [0; 64],
            out: [0; 64],
            sparse_whole: SPARSE_WHOLE,
            sparse_mixed: SPARSE_MIXED,
            warp_memory: true,
        }
    }
}

impl Scratch {
    /// The active lanes to iterate alone (`Some(eff)`), or `None` for the whole-warp path, for an
    /// instruction whose guard holds in the lanes `eff` of a group of `w` lanes (whole static warp or not).
    #[inline(always)]
    fn only(&self, whole: bool, eff: LaneMask, w: usize) -> Option<LaneMask> {
        let limit = if whole { self.sparse_whole } else { self.sparse_mixed };
        (eff.count_ones() * 32 <= w as u32 * limit).then_some(eff)
    }
}

/// A barrier arrival the machine must account for.
#[derive(Clone, Debug, PartialEq)]
pub struct BarrierArrival {
    /// Barrier id (0..16).
    pub id: u32,
    /// Thread count, if given.
    pub count: Option<u32>,
    /// The flavour.
    pub kind: BarKind,
    /// Arriving lanes.
    pub lanes: LaneMask,
    /// For `bar.red`: the reduction input of each arriving lane (as a mask), and the destination.
    pub red: Option<(LaneMask, u32, bool)>,
}

/// What an instruction did.
pub struct Effects {
    /// Control flow for the mechanism.
    pub flow: Flow,
    /// A barrier arrival, if the instruction was a barrier (boxed: rare, and every outcome is moved).
    pub barrier: Option<Box<BarrierArrival>>,
}

impl Effects {
    fn next() -> Effects {
        Effects { flow: Flow::Next, barrier: None }
    }
}

/// Builds the location of `pc` for the thread in CTA slot `slot` (or the group, when `None`).
pub(crate) fn location(prog: &Program, cta: &Cta, pc: Pc, slot: Option<usize>) -> Location {
    let info = prog.info.get(pc as usize);
    Location {
        kernel: prog.kernel_name().to_string(),
        block: cta.id,
        thread: slot.map(|t| cta.tid[t]),
        pc,
        inst: info.map(|i| i.text.clone()).unwrap_or_default(),
        file: prog.file.clone(),
        ptx_line: info.map(|i| i.ptx_line).unwrap_or(0),
        source: info.and_then(|i| i.loc).map(|l| {
            let f = prog.src_files.iter().find(|(n, _)| *n == l.file).map(|(_, f)| f.as_str()).unwrap_or("?");
            format!("{}:{}", f, l.line)
        }),
    }
}

#[inline]
fn pred_mask<L: Lanes>(cta: &Cta, g: L, p: Pred) -> u64 {
    g.gather(&cta.preds, p as usize, cta.nwarps as usize)
}

#[inline]
fn pred_src_mask<L: Lanes>(cta: &Cta, g: L, p: PredSrc) -> u64 {
    match p {
        PredSrc::Reg(r, neg) => {
            let m = pred_mask(cta, g, r);
            if neg {
                !m
            } else {
                m
            }
        }
        PredSrc::Const(true) => u64::MAX,
        PredSrc::Const(false) => 0,
    }
}

#[inline]
fn write_pred<G: GlobalMemory, L: Lanes>(
    cta: &mut Cta,
    env: &mut Env<G>,
    g: L,
    p: Pred,
    eff: LaneMask,
    value: LaneMask,
) {
    let nw = cta.nwarps as usize;
    if g.scatter(&mut cta.preds, p as usize, nw, eff, value) && env.track {
        env.changed = true;
    }
}

fn sreg_value<G: GlobalMemory, L: Lanes>(cta: &Cta, env: &Env<G>, g: L, lane: usize, s: Sreg) -> u64 {
    let t = g.slot(lane);
    match s {
        Sreg::Tid(d) => cta.tid[t][d as usize] as u64,
        Sreg::Ntid(d) => env.fixed.block[d as usize] as u64,
        Sreg::Ctaid(d) => cta.id[d as usize] as u64,
        Sreg::Nctaid(d) => env.fixed.grid[d as usize] as u64,
        Sreg::Laneid => lane as u64,
        Sreg::Warpid => g.warp(lane) as u64,
        Sreg::Nwarpid => cta.nwarps as u64,
        Sreg::Smid => env.fixed.sm as u64,
        Sreg::Nsmid => env.fixed.nsm as u64,
        Sreg::Gridid => 1,
        Sreg::Clock => env.clock & 0xFFFF_FFFF,
        Sreg::ClockHi => env.clock >> 32,
        Sreg::Clock64 | Sreg::Globaltimer => env.clock,
        Sreg::LanemaskEq => 1u64 << lane,
        Sreg::LanemaskLe => full_mask(lane as u32 + 1),
        Sreg::LanemaskLt => full_mask(lane as u32),
        Sreg::LanemaskGe => !full_mask(lane as u32) & 0xFFFF_FFFF,
        Sreg::LanemaskGt => !full_mask(lane as u32 + 1) & 0xFFFF_FFFF,
        Sreg::DynamicSmemSize => env.fixed.dynamic_shared as u64,
        Sreg::TotalSmemSize => cta.shared.len() as u64,
        Sreg::WarpSize => cta.w as u64,
    }
}

/// The value of source `src` in lane `l` of group `g`.
#[inline(always)]
fn lane_value<G: GlobalMemory, L: Lanes>(cta: &Cta, env: &Env<G>, g: L, src: Src, l: usize) -> u64 {
    match src {
        Src::Reg(r) => cta.regs[r as usize * cta.padded + g.slot(l)],
        Src::Imm(v) => v,
        Src::Pred(p) => cta.preds[p as usize * cta.nwarps as usize + g.warp(l) as usize] >> l & 1,
        Src::LocalAddr(off) => cta.frame_base[g.slot(l)] as u64 + off as u64,
        Src::Sreg(s) => sreg_value(cta, env, g, l, s),
    }
}

/// The lanes of a source operand (a register of a whole static warp is a slice of the register file; a
/// regrouped group's lanes are gathered). With `only`, just those lanes hold the operand (the others
/// hold stale values) unless it is a whole warp's register or an immediate.
#[inline]
fn fetch<'x, G: GlobalMemory, L: Lanes>(
    cta: &'x Cta,
    env: &Env<G>,
    g: L,
    src: Src,
    buf: &'x mut [u64; 64],
    only: Option<LaneMask>,
) -> &'x [u64] {
    let w = cta.w;
    match (src, g.base()) {
        (Src::Reg(r), Some(base)) => {
            let row = r as usize * cta.padded + base;
            &cta.regs[row..row + w]
        }
        (Src::Imm(v), _) => {
            buf[..w].fill(v);
            &buf[..w]
        }
        _ => {
            match only {
                Some(m) => lanes(m).for_each(|l| buf[l] = lane_value(cta, env, g, src, l)),
                None => (0..w).for_each(|l| buf[l] = lane_value(cta, env, g, src, l)),
            }
            &buf[..w]
        }
    }
}

/// Writes `vals` to register `d` for the lanes in `eff` (lane by lane when `sparse`, else blended over
/// the whole warp).
#[inline]
fn write_reg<G: GlobalMemory, L: Lanes>(
    cta: &mut Cta,
    env: &mut Env<G>,
    g: L,
    d: Reg,
    eff: LaneMask,
    vals: &[u64],
    sparse: bool,
) {
    let w = cta.w;
    let row = d as usize * cta.padded;
    let Some(base) = g.base() else {
        for l in crate::types::lanes(eff) {
            let dst = &mut cta.regs[row + g.slot(l)];
            if env.track && *dst != vals[l] {
                env.changed = true;
            }
            *dst = vals[l];
        }
        return;
    };
    let dst = &mut cta.regs[row + base..row + base + w];
    if env.track || sparse {
        for l in crate::types::lanes(eff) {
            if env.track && dst[l] != vals[l] {
                env.changed = true;
            }
            dst[l] = vals[l];
        }
    } else if eff == full_mask(w as u32) {
        dst.copy_from_slice(&vals[..w]);
    } else {
        for (l, (d, &v)) in dst.iter_mut().zip(&vals[..w]).enumerate() {
            *d = if eff >> l & 1 == 1 { v } else { *d };
        }
    }
}

#[inline]
fn write_lane<G: GlobalMemory, L: Lanes>(cta: &mut Cta, env: &mut Env<G>, g: L, d: Reg, lane: usize, v: u64) {
    let i = d as usize * cta.padded + g.slot(lane);
    if env.track && cta.regs[i] != v {
        env.changed = true;
    }
    cta.regs[i] = v;
}

// Without `only`, values are computed for every lane of the group, active or not (the semantics are
// total functions of bit patterns), so the loops have no per-lane branch and vectorize; `write_reg` blends
// them in under the mask. With `only` (few active lanes), just those lanes are computed and written.

#[inline(always)]
fn map1(w: usize, only: Option<LaneMask>, a: &[u64], out: &mut [u64; 64], f: impl Fn(u64) -> u64) {
    match only {
        Some(m) => lanes(m).for_each(|l| out[l] = f(a[l])),
        None => {
            for (o, &x) in out[..w].iter_mut().zip(a) {
                *o = f(x);
            }
        }
    }
}

#[inline(always)]
fn map2(w: usize, only: Option<LaneMask>, a: &[u64], b: &[u64], out: &mut [u64; 64], f: impl Fn(u64, u64) -> u64) {
    match only {
        Some(m) => lanes(m).for_each(|l| out[l] = f(a[l], b[l])),
        None => {
            for ((o, &x), &y) in out[..w].iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
    }
}

#[inline(always)]
fn map3(
    w: usize,
    only: Option<LaneMask>,
    (a, b, c): (&[u64], &[u64], &[u64]),
    out: &mut [u64; 64],
    f: impl Fn(u64, u64, u64) -> u64,
) {
    match only {
        Some(m) => lanes(m).for_each(|l| out[l] = f(a[l], b[l], c[l])),
        None => {
            for (((o, &x), &y), &z) in out[..w].iter_mut().zip(a).zip(b).zip(c) {
                *o = f(x, y, z);
            }
        }
    }
}

/// The register-file offset of a register source's lanes in a whole warp starting at slot `base`.
#[inline(always)]
fn row_of(cta: &Cta, base: usize, s: Src) -> Option<usize> {
    match s {
        Src::Reg(r) => Some(r as usize * cta.padded + base),
        _ => None,
    }
}

/// `d = f(a)` over a whole warp, computed in the register file; `false` (nothing done) unless the source
/// is a register.
#[inline(always)]
fn direct1(cta: &mut Cta, base: usize, d: Reg, a: Src, f: impl Fn(u64) -> u64) -> bool {
    let (w, od) = (cta.w, d as usize * cta.padded + base);
    let Some(oa) = row_of(cta, base, a) else { return false };
    let regs = &mut cta.regs[..];
    if od.max(oa) + w > regs.len() {
        return false;
    }
    let p = regs.as_mut_ptr();
    // SAFETY: every offset below is in bounds (checked), and lane `l` of the destination is written
    // only after lane `l` of the source was read, so a source aliasing the destination is fine.
    unsafe {
        for l in 0..w {
            *p.add(od + l) = f(*p.add(oa + l));
        }
    }
    true
}

/// `d = f(a, b)` over a whole warp, computed in the register file; `false` (nothing done) unless the
/// sources are registers or one is a constant.
#[inline(always)]
fn direct2(cta: &mut Cta, base: usize, d: Reg, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) -> bool {
    let (w, od) = (cta.w, d as usize * cta.padded + base);
    let (ra, rb) = (row_of(cta, base, a), row_of(cta, base, b));
    let regs = &mut cta.regs[..];
    let end = od.max(ra.unwrap_or(0)).max(rb.unwrap_or(0)) + w;
    if end > regs.len() {
        return false;
    }
    let p = regs.as_mut_ptr();
    // SAFETY: as in `direct1`.
    unsafe {
        match (ra, rb, a, b) {
            (Some(oa), Some(ob), _, _) => {
                for l in 0..w {
                    *p.add(od + l) = f(*p.add(oa + l), *p.add(ob + l));
                }
            }
            (Some(oa), None, _, Src::Imm(y)) => {
                for l in 0..w {
                    *p.add(od + l) = f(*p.add(oa + l), y);
                }
            }
            (None, Some(ob), Src::Imm(x), _) => {
                for l in 0..w {
                    *p.add(od + l) = f(x, *p.add(ob + l));
                }
            }
            _ => return false,
        }
    }
    true
}

/// The lanes of `eff` for which `f` holds, computed over every lane (only those of `eff` when `sparse`).
#[inline(always)]
fn mask2(eff: LaneMask, (w, sparse): (usize, bool), a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> bool) -> LaneMask {
    if sparse {
        return lanes(eff).fold(0u64, |m, l| m | (f(a[l], b[l]) as u64) << l);
    }
    let mut m = 0u64;
    for (l, (&x, &y)) in a[..w].iter().zip(&b[..w]).enumerate() {
        m |= (f(x, y) as u64) << l;
    }
    m & eff
}

fn mem_err<G: GlobalMemory>(env: &Env<G>, cta: &Cta, pc: Pc, slot: usize, fault: MemFault) -> SimError {
    let near = if matches!(fault.space, crate::program::Space::Global | crate::program::Space::Generic) {
        env.mem
            .allocations()
            .iter()
            .min_by_key(|a| {
                let end = a.base + a.data.len() as u64;
                if fault.addr < a.base {
                    a.base - fault.addr
                } else if fault.addr >= end {
                    fault.addr - end + 1
                } else {
                    0
                }
            })
            .map(|a| format!("nearest allocation: `{}` at {:#x}..{:#x}", a.name, a.base, a.base + a.data.len() as u64))
    } else {
        None
    };
    SimError::Memory { fault, at: Box::new(location(env.prog, cta, pc, Some(slot))), near }
}

/// The address lane `lane` of group `g` accesses.
fn lane_addr<L: Lanes>(cta: &Cta, g: L, lane: usize, a: &Addr) -> u64 {
    let base = match a.base {
        AddrBase::Reg(r) | AddrBase::Reg32(r) => cta.regs[r as usize * cta.padded + g.slot(lane)],
        AddrBase::Const(c) => c,
        AddrBase::Frame => cta.frame_base[g.slot(lane)] as u64,
    };
    offset_addr(a, base)
}

/// `a`'s offset applied to the value `base` of its base (modulo 2^32 for a 32-bit register).
#[inline(always)]
fn offset_addr(a: &Addr, base: u64) -> u64 {
    match a.base {
        AddrBase::Reg32(_) => u64::from((base as u32).wrapping_add(a.offset as u32)),
        _ => base.wrapping_add(a.offset as u64),
    }
}

/// Writes the address of every lane of `eff` into `out` (a whole static warp's register base is read as
/// one slice, its other lanes' entries computed but meaningless).
#[inline]
fn warp_addrs<L: Lanes>(cta: &Cta, g: L, eff: LaneMask, a: &Addr, out: &mut [u64; 64]) {
    match (a.base, g.base()) {
        (AddrBase::Reg(r) | AddrBase::Reg32(r), Some(base)) => {
            let row = r as usize * cta.padded + base;
            for (o, &x) in out.iter_mut().zip(&cta.regs[row..row + cta.w]) {
                *o = offset_addr(a, x);
            }
        }
        _ => lanes(eff).for_each(|l| out[l] = lane_addr(cta, g, l, a)),
    }
}

/// The bytes a whole warp's access touches, when they lie in one run of one concrete space
/// ([`warp_span`]).
#[derive(Clone, Copy, Debug)]
struct WarpSpan {
    /// The space every active lane's address resolves to.
    space: Space,
    /// The lowest active lane's address, as computed (before resolving).
    lo: u64,
    /// `lo` resolved: the first byte of the run within `space`.
    start: u64,
    /// The run's length: from `lo` to the end of the highest lane's last element.
    len: u64,
}

impl WarpSpan {
    /// The offset in the run of element `k` (of `size` bytes) of the lane whose address is `addr`.
    #[inline(always)]
    fn offset(&self, addr: u64, k: usize, size: u32) -> usize {
        (addr - self.lo) as usize + k * size as usize
    }

    /// The run as a range of indices into its space's bytes (when they are a flat memory).
    #[inline]
    fn range(&self) -> Option<std::ops::Range<usize>> {
        Some(usize::try_from(self.start).ok()?..usize::try_from(self.start + self.len).ok()?)
    }
}

/// Where an access of `elems` elements of `size` bytes per lane goes for the lanes `eff`, whose
/// addresses `addrs` holds, when the accesses could not fault lane by lane: every lane aligned and
/// resolving to one concrete space, and the whole run of bytes at most this long (the caller checks it
/// lies in one buffer). `None` sends the access lane by lane, which reports faults.
fn warp_span(space: Space, eff: LaneMask, addrs: &[u64; 64], size: u32, elems: usize) -> Option<WarpSpan> {
    if eff == 0 || !size.is_power_of_two() || size > 8 || elems > VECTOR_BUFFERS {
        return None;
    }
    let (mut lo, mut hi, mut bits) = (u64::MAX, 0u64, 0u64);
    for l in lanes(eff) {
        let a = addrs[l];
        (lo, hi, bits) = (lo.min(a), hi.max(a), bits | a);
    }
    // The windows of the generic space start at multiples of 2^32, so resolving keeps the alignment.
    if bits % u64::from(size) != 0 {
        return None;
    }
    let (sp, start) = resolve(space, lo);
    if space == Space::Generic && lanes(eff).any(|l| resolve(space, addrs[l]).0 != sp) {
        return None;
    }
    let len = (hi - lo).checked_add(u64::from(size) * elems as u64)?;
    start.checked_add(len)?;
    Some(WarpSpan { space: sp, lo, start, len })
}

/// The vector elements a whole-warp load or store can hold at once ([`Scratch`] buffers).
const VECTOR_BUFFERS: usize = 4;

/// Loads element `k` (of `size` bytes, sign-extended to `ext` bits when signed) of every lane of `eff`
/// from `bytes`, the run `span` covers, into `out`.
#[inline]
fn gather(
    (bytes, span): (&[u8], &WarpSpan),
    addrs: &[u64; 64],
    eff: LaneMask,
    (k, size, ext): (usize, u32, Option<u32>),
    out: &mut [u64; 64],
) {
    let n = size as usize;
    for l in lanes(eff) {
        let off = span.offset(addrs[l], k, size);
        let v = crate::memory::read_le(&bytes[off..off + n]);
        out[l] = ext.map_or(v, |to| sign_extend(v, size * 8, to));
    }
}

/// A load by a whole warp whose lanes all read one buffer, without faults ([`warp_span`]): every lane's
/// elements are read from it directly and written to the registers `d` as lane by lane. Returns
/// `false`, having changed nothing, when the load must go lane by lane.
fn load_warp<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    g: L,
    eff: LaneMask,
    only: Option<LaneMask>,
    (space, ty, d, addr, dst_bits): (Space, reconverge_ir::ScalarType, &VecRegs, &Addr, u32),
) -> bool {
    if space == Space::Local {
        return false; // every lane its own frame
    }
    let size = ty.bytes();
    warp_addrs(cta, g, eff, addr, &mut sc.e);
    let Some(span) = warp_span(space, eff, &sc.e, size, d.len()) else { return false };
    let bytes = match span.space {
        Space::Global => env.mem.span(span.start, span.len),
        Space::Shared => span.range().and_then(|r| cta.shared.get(r)),
        Space::Const => span.range().and_then(|r| env.consts.get(r)),
        Space::KernelParam => span.range().and_then(|r| env.params.get(r)),
        Space::Local | Space::Generic => None,
    };
    let Some(bytes) = bytes else { return false };
    let ext = ty.is_signed().then_some(dst_bits);
    let Scratch { a, b, c, e, out, .. } = sc;
    let mut bufs = [out, a, b, c];
    for (k, buf) in bufs.iter_mut().enumerate().take(d.len()) {
        gather((bytes, &span), e, eff, (k, size, ext), buf);
    }
    for l in lanes(eff) {
        env.access.record(l, space, e[l]);
    }
    for (dr, buf) in d.iter().zip(&bufs) {
        if let Some(r) = dr {
            write_reg(cta, env, g, *r, eff, &buf[..], only.is_some());
        }
    }
    true
}

/// A store by a whole warp whose lanes all write one global or shared buffer, without faults
/// ([`warp_span`]): the values are written to it directly, in the order lane by lane would (element by
/// element, lanes ascending), and a changed byte marks memory changed as [`mem_write`] does. Returns
/// `false`, having changed nothing, when the store must go lane by lane.
fn store_warp<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    g: L,
    eff: LaneMask,
    only: Option<LaneMask>,
    (space, size, s, addr): (Space, u32, &[Src], &Addr),
) -> bool {
    if !matches!(space, Space::Global | Space::Shared | Space::Generic) {
        return false;
    }
    let w = cta.w;
    warp_addrs(cta, g, eff, addr, &mut sc.e);
    let Some(span) = warp_span(space, eff, &sc.e, size, s.len()) else { return false };
    if !matches!(span.space, Space::Global | Space::Shared) {
        return false;
    }
    let Scratch { a, b, c, e, out, .. } = sc;
    let mut bufs = [out, a, b, c];
    for (src, buf) in s.iter().zip(bufs.iter_mut()) {
        let mut tmp = [0u64; 64];
        let vals = fetch(cta, env, g, *src, &mut tmp, only);
        buf[..w].copy_from_slice(vals);
    }
    let bytes = match span.space {
        Space::Global => env.mem.span_mut(span.start, span.len),
        _ => span.range().and_then(|r| cta.shared.get_mut(r)),
    };
    let Some(bytes) = bytes else { return false };
    let n = size as usize;
    let mut changed = false;
    for (k, buf) in bufs.iter().enumerate().take(s.len()) {
        for l in lanes(eff) {
            let off = span.offset(e[l], k, size);
            let dst = &mut bytes[off..off + n];
            let v = buf[l] & full_mask(size * 8);
            if crate::memory::read_le(dst) != v {
                changed = true;
                write_le(dst, v);
            }
        }
    }
    env.changed |= changed;
    for l in lanes(eff) {
        env.access.record(l, space, e[l]);
    }
    true
}

fn mem_read<G: GlobalMemory>(
    env: &Env<G>,
    cta: &Cta,
    t: usize,
    space: Space,
    addr: u64,
    size: u32,
) -> Result<u64, MemFault> {
    let (sp, a) = resolve(space, addr);
    let r = match sp {
        Space::Global => env.mem.read(a, size),
        Space::Shared => flat_read(&cta.shared, a, size, Space::Shared),
        Space::Local => flat_read(cta.local(t), a, size, Space::Local),
        Space::Const => flat_read(env.consts, a, size, Space::Const),
        Space::KernelParam => flat_read(env.params, a, size, Space::KernelParam),
        Space::Generic => unreachable!("resolved"),
    };
    r.map_err(|mut f| {
        f.addr = addr;
        f
    })
}

fn mem_write<G: GlobalMemory>(
    env: &mut Env<G>,
    cta: &mut Cta,
    t: usize,
    space: Space,
    addr: u64,
    size: u32,
    v: u64,
) -> Result<(), MemFault> {
    let (sp, a) = resolve(space, addr);
    let fault = |kind| MemFault { kind, addr, size, space: sp };
    let r = match sp {
        Space::Global => env.mem.write(a, size, v).map(|changed| env.changed |= changed),
        Space::Shared => {
            if flat_read(&cta.shared, a, size, Space::Shared).ok() != Some(v & full_mask(size * 8)) {
                env.changed = true;
            }
            flat_write(&mut cta.shared, a, size, v, Space::Shared)
        }
        Space::Local => {
            if env.track && flat_read(cta.local(t), a, size, Space::Local).ok() != Some(v & full_mask(size * 8)) {
                env.changed = true;
            }
            flat_write(cta.local_mut(t), a, size, v, Space::Local)
        }
        Space::Const | Space::KernelParam => return Err(fault(FaultKind::ReadOnly)),
        Space::Generic => unreachable!("resolved"),
    };
    r.map_err(|mut f| {
        f.addr = addr;
        f
    })
}

fn sign_extend(v: u64, from_bits: u32, to_bits: u32) -> u64 {
    if from_bits >= 64 {
        return v;
    }
    let sh = 64 - from_bits;
    let s = (((v << sh) as i64) >> sh) as u64;
    s & full_mask(to_bits)
}

/// A member set of a warp-synchronous instruction: its member mask, the lanes of it in the issue group,
/// and its live member lanes that are not.
struct MemberSet {
    members: u64,
    present: LaneMask,
    missing: LaneMask,
}

/// The outcome of a member set whose live member lanes `missing` are not in the group: a wait for them
/// when the mechanism gathers members (and the group is one static warp's), else a SIMT deadlock.
fn members_missing<G: GlobalMemory>(
    env: &Env<G>,
    cta: &Cta,
    pc: Pc,
    sw: u32,
    MemberSet { members, present, missing }: MemberSet,
    whole: bool,
) -> Result<Option<Effects>, SimError> {
    if env.await_members && whole {
        return Ok(Some(Effects { flow: Flow::Await { lanes: missing }, barrier: None }));
    }
    let at = Box::new(location(env.prog, cta, pc, None));
    let report = Box::new(DeadlockReport::MembersMissing { warp: sw, missing, members, present, at });
    Err(SimError::Deadlock { report })
}

/// Warp-synchronous instructions execute per *member set*: the active lanes that come from the same
/// static warp and name the same member mask run together (PTX: every thread of the member mask executes
/// the same instruction with the same mask before any proceeds). When the group holds several sets,
/// each is executed by itself and `Some` is returned. A set whose live member lanes are not all in the
/// group waits for them ([`Flow::Await`], when the mechanism gathers them) or is a SIMT deadlock.
fn split_by_members<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, mask, eff, .. }: At<L>,
    member: Src,
) -> Result<Option<Effects>, SimError> {
    let w = cta.w;
    let values = fetch(cta, env, g, member, &mut sc.e, None);
    let fm = full_mask(w as u32);
    // The common case: one static warp, one member mask.
    let first = values[eff.trailing_zeros() as usize] & fm;
    if g.base().is_some() && lanes(eff).all(|l| values[l] & fm == first) {
        let sw = g.warp(eff.trailing_zeros() as usize);
        let missing = first & cta.live[sw as usize] & !mask;
        if missing == 0 {
            return Ok(None);
        }
        return members_missing(
            env,
            cta,
            pc,
            sw,
            MemberSet { members: first, present: mask, missing },
            g.base().is_some(),
        );
    }
    let mut sets: SmallVec<[(u32, u64, LaneMask); 2]> = SmallVec::new();
    for l in lanes(eff) {
        let key = (g.warp(l), values[l] & fm);
        match sets.iter_mut().find(|s| (s.0, s.1) == key) {
            Some(s) => s.2 |= 1 << l,
            None => sets.push((key.0, key.1, 1 << l)),
        }
    }
    // Lanes of the group holding threads of each static warp.
    let present = |sw: u32| lanes(mask).filter(|&l| g.warp(l) == sw).fold(0u64, |a, l| a | 1 << l);
    for &(sw, members, _) in &sets {
        let missing = members & cta.live[sw as usize] & !present(sw);
        if missing == 0 {
            continue;
        }
        let set = MemberSet { members, present: present(sw), missing };
        return members_missing(env, cta, pc, sw, set, g.base().is_some());
    }
    if sets.len() <= 1 {
        return Ok(None);
    }
    for &(_, _, set) in &sets {
        execute(env, sc, cta, g, pc, set)?;
    }
    Ok(Some(Effects::next()))
}

/// Comparisons of `setp`, specialized per operator and type: integers by signedness and width, `f32` and
/// `f64` natively (the semantics crate's rules: ordered comparisons are false and unordered ones true when
/// an operand is NaN). `None` for other types (half precision), which take the generic path.
#[inline]
fn fast_compare(
    cmp: Cmp,
    ty: reconverge_ir::ScalarType,
    eff: LaneMask,
    w: (usize, bool),
    a: &[u64],
    b: &[u64],
) -> Option<LaneMask> {
    use reconverge_ir::ScalarType as T;
    macro_rules! float_cmp {
        ($conv:expr) => {{
            let conv = $conv;
            macro_rules! f {
                ($e:expr) => {
                    mask2(eff, w, a, b, |x, y| {
                        let (x, y) = (conv(x), conv(y));
                        $e(x, y)
                    })
                };
            }
            match cmp {
                Cmp::Eq => f!(|x, y| x == y),
                Cmp::Ne => f!(|x: f64, y: f64| !(x.is_nan() || y.is_nan()) && x != y),
                Cmp::Lt | Cmp::Lo => f!(|x, y| x < y),
                Cmp::Le | Cmp::Ls => f!(|x, y| x <= y),
                Cmp::Gt | Cmp::Hi => f!(|x, y| x > y),
                Cmp::Ge | Cmp::Hs => f!(|x, y| x >= y),
                Cmp::Equ => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x == y),
                Cmp::Neu => f!(|x, y| x != y),
                Cmp::Ltu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x < y),
                Cmp::Leu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x <= y),
                Cmp::Gtu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x > y),
                Cmp::Geu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x >= y),
                Cmp::Num => f!(|x: f64, y: f64| !(x.is_nan() || y.is_nan())),
                Cmp::Nan => f!(|x: f64, y: f64| x.is_nan() || y.is_nan()),
            }
        }};
    }
    match ty {
        T::F32 => return Some(float_cmp!(|v: u64| f64::from(f32::from_bits(v as u32)))),
        T::F64 => return Some(float_cmp!(f64::from_bits)),
        _ => {}
    }
    if !(ty.is_integer() || ty.is_bits()) || ty.bits() > 64 {
        return None;
    }
    let sh = 64 - ty.bits();
    let s = move |x: u64| ((x << sh) as i64) >> sh;
    let u = move |x: u64| x << sh;
    macro_rules! int_cmp {
        ($conv:expr, $op:tt) => {{
            let conv = $conv;
            mask2(eff, w, a, b, |x, y| conv(x) $op conv(y))
        }};
    }
    Some(match (cmp, ty.is_signed()) {
        (Cmp::Eq | Cmp::Equ, _) => int_cmp!(u, ==),
        (Cmp::Ne | Cmp::Neu, _) => int_cmp!(u, !=),
        (Cmp::Lt | Cmp::Ltu, true) => int_cmp!(s, <),
        (Cmp::Le | Cmp::Leu, true) => int_cmp!(s, <=),
        (Cmp::Gt | Cmp::Gtu, true) => int_cmp!(s, >),
        (Cmp::Ge | Cmp::Geu, true) => int_cmp!(s, >=),
        (Cmp::Lt | Cmp::Ltu | Cmp::Lo, _) => int_cmp!(u, <),
        (Cmp::Le | Cmp::Leu | Cmp::Ls, _) => int_cmp!(u, <=),
        (Cmp::Gt | Cmp::Gtu | Cmp::Hi, _) => int_cmp!(u, >),
        (Cmp::Ge | Cmp::Geu | Cmp::Hs, _) => int_cmp!(u, >=),
        (Cmp::Num, _) => eff,
        (Cmp::Nan, _) => 0,
    })
}

// The whole-warp arithmetic of the ALU families: `un!`, `bin!`, `ter!` apply `f` to the lanes `eff` of
// group `g` (straight into the destination row when `direct` says a whole warp issues) and write `d`;
// the first argument names the caller's context variables.
macro_rules! un {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $f:expr) => {{
        let f = $f;
        if let Some(base) = $direct {
            if direct1($cta, base, $d, $a, &f) {
                return Ok(Effects::next());
            }
        }
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        map1($w, $only, a, &mut $sc.out, &f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}
macro_rules! bin {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $b:expr, $f:expr) => {{
        let f = $f;
        if let Some(base) = $direct {
            if direct2($cta, base, $d, $a, $b, &f) {
                return Ok(Effects::next());
            }
        }
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        let b = fetch($cta, $env, $g, $b, &mut $sc.b, $only);
        map2($w, $only, a, b, &mut $sc.out, &f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}
macro_rules! ter {
    (($env:ident, $sc:ident, $cta:ident, $g:ident, $eff:ident, $w:ident, $direct:ident, $only:ident), $d:expr, $a:expr, $b:expr, $c:expr, $f:expr) => {{
        let a = fetch($cta, $env, $g, $a, &mut $sc.a, $only);
        let b = fetch($cta, $env, $g, $b, &mut $sc.b, $only);
        let c = fetch($cta, $env, $g, $c, &mut $sc.c, $only);
        map3($w, $only, (a, b, c), &mut $sc.out, $f);
        write_reg($cta, $env, $g, $d, $eff, &$sc.out, $only.is_some());
    }};
}
/// The issue an instruction family of [`execute`] runs: the group's threads, its pc, the lanes whose
/// guard holds, the base thread slot when a whole warp with every lane active computes directly
/// into its registers, and the active lanes when only they are computed.
#[derive(Clone, Copy)]
struct At<L> {
    g: L,
    pc: Pc,
    /// The lanes of the issue group.
    mask: LaneMask,
    /// Those whose guard holds.
    eff: LaneMask,
    direct: Option<usize>,
    /// `Some(eff)` when the instruction fetches, computes and writes only its active lanes (few of them:
    /// [`Scratch::only`]); `None` for the whole-warp path.
    only: Option<LaneMask>,
}

/// Executes the instruction at `pc` for the lanes `mask` of an issue group whose threads `lanes` names.
pub(crate) fn execute<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    g: L,
    pc: Pc,
    mask: LaneMask,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let inst = &prog.insts[pc as usize];
    let eff = match inst.guard {
        None => mask,
        Some((p, neg)) => {
            let m = pred_mask(cta, g, p);
            mask & if neg { !m } else { m }
        }
    };
    let w = cta.w;
    // A whole warp with every lane active, not watched for changes: computed straight into the
    // destination register's row.
    let direct = match g.base() {
        Some(base) if eff == full_mask(w as u32) && !env.track => Some(base),
        _ => None,
    };
    env.access.mask = 0;
    if eff == 0 && !matches!(inst.op, Op::Bra { .. } | Op::Brx { .. }) {
        return Ok(Effects::next());
    }
    let only = match direct {
        None => sc.only(g.base().is_some(), eff, w),
        Some(_) => None,
    };
    let at = At { g, pc, mask, eff, direct, only };
    if let Some(m) = inst.op.member_mask() {
        if let Some(fx) = split_by_members(env, sc, cta, at, m)? {
            return Ok(fx);
        }
    }
    match &inst.op {
        op @ (Op::IntUn { .. }
        | Op::IntBin { .. }
        | Op::IntTer { .. }
        | Op::Carry { .. }
        | Op::Bfi { .. }
        | Op::Prmt { .. }
        | Op::Lop3 { .. }
        | Op::Shf { .. }) => integer(env, sc, cta, at, op),
        op @ (Op::FloatUn { .. } | Op::FloatBin { .. } | Op::Fma { .. } | Op::Testp { .. } | Op::Cvt { .. }) => {
            float(env, sc, cta, at, op)
        }
        op @ (Op::Setp { .. }
        | Op::Set { .. }
        | Op::Selp { .. }
        | Op::Slct { .. }
        | Op::Mov { .. }
        | Op::PredOp { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }) => compare_move(env, sc, cta, at, op),
        op @ (Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } | Op::Cvta { .. } | Op::Isspacep { .. }) => {
            memory(env, sc, cta, at, op)
        }
        op @ (Op::Bra { .. } | Op::Brx { .. } | Op::Call { .. } | Op::Ret | Op::Exit | Op::FellOff | Op::Trap) => {
            control(env, sc, cta, at, op)
        }
        op @ (Op::Bar { .. }
        | Op::WarpSync { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Activemask { .. }
        | Op::Match { .. }
        | Op::Redux { .. }) => collective(env, sc, cta, at, op),
        Op::Ssy { target } => Ok(Effects { flow: Flow::Ssy { target: *target }, barrier: None }),
        Op::Pbk { target } => Ok(Effects { flow: Flow::Pbk { target: *target }, barrier: None }),
        Op::Sync => Ok(Effects { flow: Flow::Sync, barrier: None }),
        Op::Brk => Ok(Effects { flow: Flow::Brk { lanes: eff }, barrier: None }),
        Op::Join => Ok(Effects { flow: Flow::Join, barrier: None }),
        Op::Bssy { target } => Ok(Effects { flow: Flow::Bssy { target: *target }, barrier: None }),
        Op::Bsync { target } => Ok(Effects { flow: Flow::Bsync { target: *target }, barrier: None }),
        Op::Yield => Ok(Effects { flow: Flow::Yield, barrier: None }),
        Op::Syncwarp => Ok(Effects { flow: Flow::SyncWarp, barrier: None }),
        Op::Printf { format, args, ret } => printf(env, cta, at, (*format, *args, *ret)),
        Op::Nop | Op::Fence { .. } => Ok(Effects::next()),
        Op::Unsupported(what) => {
            Err(SimError::Unsupported { what: what.to_string(), at: Box::new(location(prog, cta, pc, None)) })
        }
    }
}

/// Integer arithmetic, carries, bit fields, permutations, `lop3`, funnel shifts.
#[inline(always)]
fn integer<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    let nw = cta.nwarps as usize;
    match op {
        Op::IntUn { op, ty, d, a } => {
            let f = alu::int_un(*op, *ty);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        Op::IntBin { op, ty, d, a, b } => match (op, ty) {
            // The hottest cases inline; the rest go through a function pointer.
            (
                IntBinOp::Add,
                reconverge_ir::ScalarType::S32 | reconverge_ir::ScalarType::U32 | reconverge_ir::ScalarType::B32,
            ) => {
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| (x as u32)
                    .wrapping_add(y as u32)
                    as u64)
            }
            (
                IntBinOp::Add,
                reconverge_ir::ScalarType::S64 | reconverge_ir::ScalarType::U64 | reconverge_ir::ScalarType::B64,
            ) => {
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| x.wrapping_add(y))
            }
            _ => {
                let f = alu::int_bin(*op, *ty);
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, f)
            }
        },
        Op::IntTer { op, ty, d, a, b, c } => {
            let f = alu::int_ter(*op, *ty);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Carry { op, ty, cin, cout, d, a, b, c } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let cv = fetch(cta, env, g, *c, &mut sc.c, only);
            let carry_in = g.gather(&cta.carry, 0, nw);
            let mut carry_out = 0u64;
            for l in lanes(eff) {
                let ci = *cin && (carry_in >> l & 1 == 1);
                let (v, co) = alu::carry(*op, *ty, av[l], bv[l], cv[l], ci);
                sc.out[l] = v;
                carry_out |= (co as u64) << l;
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
            if *cout {
                g.scatter(&mut cta.carry, 0, nw, eff, carry_out);
            }
        }
        Op::Bfi { ty, d, a, b, c, e } => {
            let bits = ty.bits();
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let cv = fetch(cta, env, g, *c, &mut sc.c, only);
            let ev = fetch(cta, env, g, *e, &mut sc.e, only);
            for l in lanes(eff) {
                sc.out[l] = alu::bfi(bits, av[l], bv[l], cv[l], ev[l]);
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Prmt { mode, d, a, b, c } => {
            let f = alu::prmt(*mode);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Lop3 { d, a, b, c, lut } => {
            let lut = *lut;
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, move |x, y, z| alu::lop3(x, y, z, lut))
        }
        Op::Shf { left, clamp, d, a, b, c } => {
            let f = alu::shf(*left, *clamp);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        _ => unreachable!("execute dispatches only these instructions to `integer`"),
    }
    Ok(Effects::next())
}

/// Floating-point arithmetic (the hottest `f32` operations natively), `testp`, conversions.
#[inline(always)]
fn float<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::FloatUn { op, ty, mode, d, a } => {
            let f = alu::float_un(*op, *ty, *mode);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        Op::FloatBin { op, ty: reconverge_ir::ScalarType::F32, mode, d, a, b }
            if mode.rnd == FRound::Rn
                && !mode.sat
                && matches!(op, FloatBinOp::Add | FloatBinOp::Sub | FloatBinOp::Mul) =>
        {
            // The hottest float operations natively (the semantics crate's f32 round-to-nearest path:
            // canonical NaN, `.ftz` flushing subnormal operands and results).
            macro_rules! f32_op {
                ($ftz:expr, $e:expr) => {{
                    let flush = move |x: u32| if $ftz && x & 0x7F80_0000 == 0 { x & 0x8000_0000 } else { x };
                    bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| {
                        let (x, y) = (f32::from_bits(flush(x as u32)), f32::from_bits(flush(y as u32)));
                        let r: f32 = $e(x, y);
                        if r.is_nan() {
                            0x7FFF_FFFF
                        } else {
                            u64::from(flush(r.to_bits()))
                        }
                    })
                }};
            }
            match (op, mode.ftz) {
                (FloatBinOp::Add, false) => f32_op!(false, |x, y| x + y),
                (FloatBinOp::Sub, false) => f32_op!(false, |x, y| x - y),
                (FloatBinOp::Mul, false) => f32_op!(false, |x, y| x * y),
                (FloatBinOp::Add, true) => f32_op!(true, |x, y| x + y),
                (FloatBinOp::Sub, true) => f32_op!(true, |x, y| x - y),
                _ => f32_op!(true, |x, y| x * y),
            }
        }
        Op::FloatBin { op, ty, mode, d, a, b } => {
            let f = alu::float_bin(*op, *ty, *mode);
            bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, f)
        }
        Op::Fma { ty, mode, d, a, b, c } => {
            let f = alu::fma(*ty, *mode);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Testp { test, ty, p, a, .. } => {
            let f = alu::testp(test.as_str(), *ty);
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let mut m = 0u64;
            for l in lanes(eff) {
                m |= (f(av[l]) as u64) << l;
            }
            write_pred(cta, env, g, *p, eff, m);
        }
        Op::Cvt { dty, sty, rnd, ftz, sat, dst_bits, d, a } => {
            let f = alu::cvt(*dty, *sty, *rnd, *ftz, *sat, *dst_bits);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        _ => unreachable!("execute dispatches only these instructions to `float`"),
    }
    Ok(Effects::next())
}

/// Comparisons, selections, moves, predicate logic, packing and unpacking.
#[inline(always)]
fn compare_move<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::Setp { cmp, ty, p, q, a, b, comb } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let m = match fast_compare(*cmp, *ty, eff, (w, only.is_some()), av, bv) {
                Some(m) => m,
                None => {
                    let f = alu::compare(*cmp, *ty);
                    let mut m = 0u64;
                    for l in lanes(eff) {
                        m |= (f(av[l], bv[l]) as u64) << l;
                    }
                    m
                }
            };
            let (pm, qm) = match comb {
                None => (m, !m),
                Some((op, c)) => {
                    let cm = pred_src_mask(cta, g, *c);
                    (alu::bool_mask(*op, m, cm), alu::bool_mask(*op, !m, cm))
                }
            };
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
            if let Some(q) = q {
                write_pred(cta, env, g, *q, eff, qm);
            }
        }
        Op::Set { cmp, dty, sty, d, a, b, comb } => {
            let f = alu::compare(*cmp, *sty);
            let cm = comb.map(|(op, c)| (op, pred_src_mask(cta, g, c)));
            let one = if dty.is_float() { 0x3F80_0000 } else { 0xFFFF_FFFF };
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            for l in lanes(eff) {
                let mut r = f(av[l], bv[l]);
                if let Some((op, c)) = cm {
                    r = alu::bool_mask(op, r as u64, c >> l & 1) & 1 == 1;
                }
                sc.out[l] = if r { one } else { 0 };
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Selp { d, a, b, c } => {
            let cm = pred_src_mask(cta, g, *c);
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            for l in lanes(eff) {
                sc.out[l] = if cm >> l & 1 == 1 { av[l] } else { bv[l] };
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Slct { sty, d, a, b, c } => {
            let f = alu::slct_cond(*sty);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, move |x, y, z| if f(z) { x } else { y })
        }
        Op::Mov { d, a, bits } => {
            let m = full_mask(*bits);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x & m)
        }
        Op::PredOp { op, not, d, a, b } => {
            let am = pred_src_mask(cta, g, *a);
            let bm = pred_src_mask(cta, g, *b);
            let r = match op {
                None => am,
                Some(o) => alu::bool_mask(*o, am, bm),
            };
            write_pred(cta, env, g, *d, eff, if *not { !r } else { r });
        }
        Op::Pack { d, parts, elem_bits } => {
            let em = full_mask(*elem_bits);
            sc.out[..w].fill(0);
            for (k, p) in parts.iter().enumerate() {
                let pv = fetch(cta, env, g, *p, &mut sc.a, only);
                for l in lanes(eff) {
                    sc.out[l] |= (pv[l] & em) << (k as u32 * elem_bits);
                }
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Unpack { parts, s, elem_bits } => {
            let em = full_mask(*elem_bits);
            let sv: SmallVec<[u64; 64]> = fetch(cta, env, g, *s, &mut sc.a, only).iter().copied().collect();
            for (k, p) in parts.iter().enumerate() {
                if let Some(r) = p {
                    for l in lanes(eff) {
                        sc.out[l] = (sv[l] >> (k as u32 * elem_bits)) & em;
                    }
                    write_reg(cta, env, g, *r, eff, &sc.out, only.is_some());
                }
            }
        }
        _ => unreachable!("execute dispatches only these instructions to `compare_move`"),
    }
    Ok(Effects::next())
}

/// Loads, stores, atomics and address-space conversions and queries.
#[inline(always)]
fn memory<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::Ld { space: space @ (Space::KernelParam | Space::Const), ty, d, addr, dst_bits, .. }
            if matches!(addr.base, AddrBase::Const(_)) && d.len() == 1 =>
        {
            // A load of one constant address (a kernel parameter, a constant): every lane reads the same
            // value, so it is read once (a fault is the first lane's, as lane by lane).
            let size = ty.bytes();
            env.access.begin(AccessKind::Load, size);
            let first = eff.trailing_zeros() as usize;
            let a = lane_addr(cta, g, first, addr);
            for l in lanes(eff) {
                env.access.record(l, *space, a);
            }
            let v = mem_read(env, cta, g.slot(first), *space, a, size)
                .map_err(|f| mem_err(env, cta, pc, g.slot(first), f))?;
            if let Some(r) = d[0] {
                let v = if ty.is_signed() { sign_extend(v, size * 8, *dst_bits) } else { v };
                sc.out[..w].fill(v);
                write_reg(cta, env, g, r, eff, &sc.out, only.is_some());
            }
        }
        Op::Ld { space, ty, d, addr, dst_bits, .. } => {
            let size = ty.bytes();
            let signed = ty.is_signed();
            env.access.begin(AccessKind::Load, size * d.len() as u32);
            if sc.warp_memory && load_warp(env, sc, cta, g, eff, only, (*space, *ty, d, addr, *dst_bits)) {
                return Ok(Effects::next());
            }
            for l in lanes(eff) {
                let a0 = lane_addr(cta, g, l, addr);
                env.access.record(l, *space, a0);
                for (k, dr) in d.iter().enumerate() {
                    let a = a0.wrapping_add(k as u64 * size as u64);
                    let v = mem_read(env, cta, g.slot(l), *space, a, size)
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                    if let Some(r) = dr {
                        let v = if signed { sign_extend(v, size * 8, *dst_bits) } else { v };
                        write_lane(cta, env, g, *r, l, v);
                    }
                }
            }
        }
        Op::St { space, ty, s, addr } => {
            let size = ty.bytes();
            env.access.begin(AccessKind::Store, size * s.len() as u32);
            if sc.warp_memory && store_warp(env, sc, cta, g, eff, only, (*space, size, s, addr)) {
                return Ok(Effects::next());
            }
            for (k, src) in s.iter().enumerate() {
                let vals = fetch(cta, env, g, *src, &mut sc.a, only);
                sc.out[..w].copy_from_slice(vals);
                for l in lanes(eff) {
                    let a0 = lane_addr(cta, g, l, addr);
                    if k == 0 {
                        env.access.record(l, *space, a0);
                    }
                    let a = a0.wrapping_add(k as u64 * size as u64);
                    mem_write(env, cta, g.slot(l), *space, a, size, sc.out[l])
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                }
            }
        }
        Op::Atom { space, op, ty, d, addr, b, c } => {
            let size = ty.bytes();
            env.access.begin(AccessKind::Atomic, size);
            let bv: SmallVec<[u64; 64]> = fetch(cta, env, g, *b, &mut sc.b, only).iter().copied().collect();
            let cv: SmallVec<[u64; 64]> = fetch(cta, env, g, *c, &mut sc.c, only).iter().copied().collect();
            for l in lanes(eff) {
                let a = lane_addr(cta, g, l, addr);
                env.access.record(l, *space, a);
                let (sp, ra) = resolve(*space, a);
                if sp == Space::Global {
                    if ra % size as u64 != 0 {
                        let f = MemFault { kind: FaultKind::Misaligned, addr: a, size, space: sp };
                        return Err(mem_err(env, cta, pc, g.slot(l), f));
                    }
                    let req = AtomicRequest {
                        addr: ra,
                        op: *op,
                        ty: *ty,
                        b: bv[l],
                        c: cv[l],
                        cta_slot: env.cta_slot,
                        thread: (g.slot(l)) as u32,
                        dst: *d,
                    };
                    let (old, changed) = env.mem.atomic(req).map_err(|mut f| {
                        f.addr = a;
                        mem_err(env, cta, pc, g.slot(l), f)
                    })?;
                    env.changed |= changed;
                    if let (Some(r), Some(old)) = (d, old) {
                        write_lane(cta, env, g, *r, l, old);
                    }
                    continue;
                }
                let old =
                    mem_read(env, cta, g.slot(l), *space, a, size).map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                let new = alu::atom(*op, *ty, old, bv[l], cv[l]);
                if new != old {
                    mem_write(env, cta, g.slot(l), *space, a, size, new)
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                }
                if let Some(r) = d {
                    write_lane(cta, env, g, *r, l, old);
                }
            }
        }
        Op::Cvta { to_generic, space, d, a } => {
            let window = match space {
                Space::Shared => SHARED_WINDOW,
                Space::Local => LOCAL_WINDOW,
                Space::Const => CONST_WINDOW,
                Space::KernelParam => PARAM_WINDOW,
                _ => 0,
            };
            if *to_generic {
                un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x.wrapping_add(window))
            } else {
                un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x.wrapping_sub(window))
            }
        }
        Op::Isspacep { space, p, a } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let mut m = 0u64;
            for l in lanes(eff) {
                let (sp, _) = resolve(Space::Generic, av[l]);
                m |= ((sp == *space) as u64) << l;
            }
            write_pred(cta, env, g, *p, eff, m);
        }
        _ => unreachable!("execute dispatches only these instructions to `memory`"),
    }
    Ok(Effects::next())
}

/// Branches, calls, returns, exits and traps: the instructions that change where threads go.
#[inline(always)]
fn control<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let nw = cta.nwarps as usize;
    match op {
        Op::Bra { target } => Ok(Effects { flow: Flow::Branch { target: *target, taken: eff }, barrier: None }),
        Op::Brx { index, targets } => {
            let iv = fetch(cta, env, g, *index, &mut sc.a, None);
            let mut groups: SmallVec<[(Pc, LaneMask); 4]> = SmallVec::new();
            for l in lanes(eff) {
                let i = iv[l] as u32 as usize;
                let Some(&t) = targets.get(i) else {
                    return Err(SimError::Trap {
                        what: format!("brx.idx index {i} is outside its {}-entry target list", targets.len()),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                };
                match groups.iter_mut().find(|(p, _)| *p == t) {
                    Some(g) => g.1 |= 1 << l,
                    None => groups.push((t, 1 << l)),
                }
            }
            Ok(Effects { flow: Flow::Multi(groups.into_vec().into_boxed_slice()), barrier: None })
        }
        Op::Call { callee, args, .. } => {
            let cf = &prog.functions[*callee as usize];
            let caller = &prog.functions[prog.info[pc as usize].func as usize];
            for l in lanes(eff) {
                let t = g.slot(l);
                let caller_base = cta.frame_base[t];
                let new_base = crate::layout::align_up(caller_base as u64 + caller.frame_size as u64, 16) as u32;
                let top = new_base as u64 + cf.frame_size as u64;
                if top > env.fixed.local_limit as u64 {
                    return Err(SimError::Trap {
                        what: format!(
                            "local memory stack overflow calling `{}` (call depth {}, {} bytes per thread; \
                             raise it with --local-bytes)",
                            cf.name,
                            cta.calls[t].len() + 1,
                            env.fixed.local_limit
                        ),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                }
                let local = cta.local_mut(t);
                if local.len() < top as usize {
                    local.resize(top as usize, 0);
                }
                for pcpy in args {
                    let from = (caller_base + pcpy.from) as usize;
                    let to = (new_base + pcpy.to) as usize;
                    let size = pcpy.size as usize;
                    local.copy_within(from..from + size, to);
                }
                let saved_regs = (0..cf.nregs).map(|r| cta.regs[(cf.reg_base + r) as usize * cta.padded + t]).collect();
                let saved_preds = (0..cf.npreds).map(|p| pred_mask(cta, g, cf.pred_base + p) >> l & 1 == 1).collect();
                cta.calls[t].push(CallFrame { ret_pc: pc + 1, call_pc: pc, caller_base, saved_regs, saved_preds });
                cta.frame_base[t] = new_base;
            }
            env.changed = true;
            Ok(Effects { flow: Flow::Call { target: cf.entry, callers: eff }, barrier: None })
        }
        Op::Ret if prog.info[pc as usize].func == 0 => {
            g.scatter(&mut cta.live, 0, nw, eff, 0);
            env.changed = true;
            Ok(Effects { flow: Flow::Exit { lanes: eff }, barrier: None })
        }
        Op::Ret => {
            let fi = prog.info[pc as usize].func as usize;
            let cf = &prog.functions[fi];
            let mut to: SmallVec<[(Pc, LaneMask); 2]> = SmallVec::new();
            for l in lanes(eff) {
                let t = g.slot(l);
                let Some(frame) = cta.calls[t].pop() else {
                    return Err(SimError::Trap {
                        what: "ret without a matching call".into(),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                };
                if let Op::Call { rets, .. } = &prog.insts[frame.call_pc as usize].op {
                    let callee_base = cta.frame_base[t];
                    for r in rets {
                        let from = (callee_base + r.from) as usize;
                        let dst = (frame.caller_base + r.to) as usize;
                        cta.local_mut(t).copy_within(from..from + r.size as usize, dst);
                    }
                }
                for (k, v) in frame.saved_regs.iter().enumerate() {
                    cta.regs[(cf.reg_base + k as u32) as usize * cta.padded + t] = *v;
                }
                for (k, b) in frame.saved_preds.iter().enumerate() {
                    let slot = &mut cta.preds[(cf.pred_base + k as u32) as usize * nw + g.warp(l) as usize];
                    *slot = (*slot & !(1 << l)) | ((*b as u64) << l);
                }
                cta.frame_base[t] = frame.caller_base;
                match to.iter_mut().find(|(p, _)| *p == frame.ret_pc) {
                    Some(g) => g.1 |= 1 << l,
                    None => to.push((frame.ret_pc, 1 << l)),
                }
            }
            env.changed = true;
            Ok(Effects { flow: Flow::Return { lanes: eff, to: to.into_vec().into_boxed_slice() }, barrier: None })
        }
        Op::Exit => {
            g.scatter(&mut cta.live, 0, nw, eff, 0);
            env.changed = true;
            Ok(Effects { flow: Flow::Exit { lanes: eff }, barrier: None })
        }
        Op::FellOff => {
            let name = &prog.functions[prog.info[pc as usize].func as usize].name;
            Err(SimError::Trap {
                what: format!("control fell off the end of `{name}` (its last instruction is not ret, exit or a jump)"),
                at: Box::new(location(prog, cta, pc, Some(g.slot(eff.trailing_zeros() as usize)))),
            })
        }
        Op::Trap => Err(SimError::Trap {
            what: "trap".into(),
            at: Box::new(location(prog, cta, pc, Some(g.slot(eff.trailing_zeros() as usize)))),
        }),
        _ => unreachable!("execute dispatches only these instructions to `control`"),
    }
}

/// Barriers and warp-level collectives.
#[inline(always)]
fn collective<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, mask, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let w = cta.w;
    match op {
        Op::Bar { kind, id, count, d, p, c } => {
            let idv = fetch(cta, env, g, *id, &mut sc.a, None)[eff.trailing_zeros() as usize] as u32;
            if idv >= 16 {
                return Err(SimError::Trap {
                    what: format!("barrier id {idv} is not in 0..16"),
                    at: Box::new(location(prog, cta, pc, None)),
                });
            }
            let cnt = match count {
                Some(cs) => Some(fetch(cta, env, g, *cs, &mut sc.b, None)[eff.trailing_zeros() as usize] as u32),
                None => None,
            };
            let red = match kind {
                BarKind::RedPopc => Some((pred_src_mask(cta, g, *c) & eff, d.unwrap_or(0), false)),
                BarKind::RedAnd | BarKind::RedOr => Some((pred_src_mask(cta, g, *c) & eff, p.unwrap_or(0), true)),
                _ => None,
            };
            return Ok(Effects {
                flow: Flow::Next,
                barrier: Some(Box::new(BarrierArrival { id: idv, count: cnt, kind: *kind, lanes: eff, red })),
            });
        }
        // The member check of `split_by_members` is all `bar.warp.sync` does.
        Op::WarpSync { .. } => {}
        Op::Shfl { mode, d, p, a, b, c, .. } => {
            let av: SmallVec<[u64; 64]> = fetch(cta, env, g, *a, &mut sc.a, None).iter().copied().collect();
            let bv = fetch(cta, env, g, *b, &mut sc.b, None);
            let cv = fetch(cta, env, g, *c, &mut sc.c, None);
            let mut pm = 0u64;
            let mut read_inactive = None;
            for l in lanes(eff) {
                let (src, valid) = alu::shfl_lane(*mode, l as u32, bv[l] as u32, cv[l] as u32, w as u32);
                let src = src as usize;
                if valid && eff >> src & 1 == 0 {
                    read_inactive = Some((l, src));
                }
                sc.out[l] = if valid { av[src] } else { av[l] };
                pm |= (valid as u64) << l;
            }
            if let Some((l, src)) = read_inactive {
                return Err(SimError::Trap {
                    what: format!("shfl.sync in lane {l} reads lane {src}, which is not executing it"),
                    at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                });
            }
            if let Some(d) = d {
                write_reg(cta, env, g, *d, eff, &sc.out, false);
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
        }
        Op::Vote { mode, d, a, .. } => {
            let am = pred_src_mask(cta, g, *a) & eff;
            match (mode, d) {
                (VoteMode::Ballot, Src::Reg(r)) => {
                    sc.out[..w].fill(am);
                    write_reg(cta, env, g, *r, eff, &sc.out, false);
                }
                (_, Src::Pred(p)) => {
                    let r = match mode {
                        VoteMode::All => am == eff,
                        VoteMode::Any => am != 0,
                        _ => am == 0 || am == eff,
                    };
                    write_pred(cta, env, g, *p, eff, if r { u64::MAX } else { 0 });
                }
                _ => unreachable!("decoder checks vote destinations"),
            }
        }
        Op::Activemask { d } => {
            // The lanes of the thread's own (static) warp executing with it: the whole group for a
            // static warp; in a regrouped group, those of its part.
            match g.base() {
                Some(_) => sc.out[..w].fill(mask),
                None => {
                    for l in lanes(eff) {
                        let me = g.warp(l);
                        sc.out[l] = lanes(mask).filter(|&k| g.warp(k) == me).fold(0, |a, k| a | 1 << k);
                    }
                }
            }
            write_reg(cta, env, g, *d, eff, &sc.out, false);
        }
        Op::Match { all, ty, d, p, a, mask: m } => {
            let mv = fetch(cta, env, g, *m, &mut sc.b, None)[eff.trailing_zeros() as usize] & full_mask(w as u32);
            let vm = full_mask(ty.bits());
            let av = fetch(cta, env, g, *a, &mut sc.a, None);
            let members = mv & eff;
            let mut pm = 0u64;
            for l in lanes(eff) {
                let same = lanes(members).filter(|&k| av[k] & vm == av[l] & vm).fold(0u64, |acc, k| acc | 1 << k);
                if *all {
                    let ok = same == members;
                    sc.out[l] = if ok { members } else { 0 };
                    pm |= (ok as u64) << l;
                } else {
                    sc.out[l] = same;
                }
            }
            if let Some(d) = d {
                write_reg(cta, env, g, *d, eff, &sc.out, false);
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
        }
        Op::Redux { op, ty, d, a, mask: m } => {
            let mv = fetch(cta, env, g, *m, &mut sc.b, None)[eff.trailing_zeros() as usize] & full_mask(w as u32);
            let av = fetch(cta, env, g, *a, &mut sc.a, None);
            let members = mv & eff;
            let r = alu::redux(*op, *ty, lanes(members).map(|k| av[k]));
            sc.out[..w].fill(r);
            write_reg(cta, env, g, *d, eff, &sc.out, false);
        }
        _ => unreachable!("execute dispatches only these instructions to `collective`"),
    }
    Ok(Effects::next())
}

/// `vprintf` (CUDA's device `printf`, [`Op::Printf`]): formats each active lane's call, in lane order,
/// into the SM's printf log, and writes the number of arguments it read to the call's result. The format
/// string, the argument buffer and `%s` strings are read like loads (a bad address is a memory fault of
/// the lane), but not recorded as accesses: the timing model times the call as a control instruction.
/// Unlike every other instruction it allocates (the texts it formats).
fn printf<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    (format, args, ret): (u32, u32, Option<u32>),
) -> Result<Effects, SimError> {
    for l in lanes(eff) {
        let t = g.slot(l);
        let frame = u64::from(cta.frame_base[t]);
        let slot = |env: &Env<G>, cta: &Cta, off: u32| {
            mem_read(env, cta, t, Space::Local, frame + u64::from(off), 8).map_err(|f| mem_err(env, cta, pc, t, f))
        };
        let fmt_addr = slot(env, cta, format)?;
        let buffer = slot(env, cta, args)?;
        let mut src = LaneSource { env, cta, t, pc, buffer };
        let mut fmt = Vec::new();
        src.string(fmt_addr, None, &mut fmt)?;
        let mut text = Vec::new();
        let n = crate::printf::format(&fmt, &mut src, &mut text)?;
        let text = String::from_utf8_lossy(&text).into_owned();
        // Output is progress for the livelock watchdog until the launch's output is full.
        env.changed |= env.printf.push(PrintfRecord { cta: cta.id, thread: cta.tid[t], text });
        if let Some(r) = ret {
            mem_write(env, cta, t, Space::Local, frame + u64::from(r), 4, u64::from(n))
                .map_err(|f| mem_err(env, cta, pc, t, f))?;
        }
    }
    Ok(Effects::next())
}

/// Where one lane's `printf` call reads its arguments and strings: simulated memory through generic
/// addresses.
struct LaneSource<'x, 'a, G: GlobalMemory> {
    env: &'x Env<'a, G>,
    cta: &'x Cta,
    /// The lane's thread slot.
    t: usize,
    pc: Pc,
    /// The generic address of the argument buffer.
    buffer: u64,
}

impl<G: GlobalMemory> LaneSource<'_, '_, G> {
    fn read(&self, addr: u64, size: u32) -> Result<u64, SimError> {
        mem_read(self.env, self.cta, self.t, Space::Generic, addr, size)
            .map_err(|f| mem_err(self.env, self.cta, self.pc, self.t, f))
    }
}

impl<G: GlobalMemory> PrintfSource for LaneSource<'_, '_, G> {
    type Error = SimError;

    fn arg(&mut self, offset: u64, size: u32) -> Result<u64, SimError> {
        self.read(self.buffer.wrapping_add(offset), size)
    }

    fn string(&mut self, addr: u64, max: Option<usize>, out: &mut Vec<u8>) -> Result<(), SimError> {
        for k in 0..max.unwrap_or(MAX_STRING) as u64 {
            match self.read(addr.wrapping_add(k), 1)? as u8 {
                0 => return Ok(()),
                b => out.push(b),
            }
        }
        if max.is_some() {
            return Ok(());
        }
        Err(SimError::Trap {
            what: format!("printf: the string at {addr:#x} has no terminating NUL within {MAX_STRING} bytes"),
            at: Box::new(location(self.env.prog, self.cta, self.pc, Some(self.t))),
        })
    }
}

#[cfg(test)]
mod tests {
    //! The sparse path (only the active lanes fetched, computed and written) against the whole-warp path.
    use super::super::lanes::{Mixed, Whole};
    use super::*;
    use crate::memory::DeviceMemory;
    use reconverge_program::DecodeOptions;

    /// Integer, carry, bit-field, float, compare, select, move and special-register instructions.
    const PTX: &str = r#"
.version 8.8
.target sm_80
.address_size 64
.visible .entry k()
{
    .reg .pred %p<5>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<6>;
    mul.hi.s32 %r3, %r1, %r2;
    rem.s32 %r4, %r1, %r2;
    add.s32 %r5, %r1, 7;
    mad.lo.s32 %r6, %r1, %r2, %r3;
    add.s64 %rd3, %rd1, %rd2;
    shl.b32 %r7, %r1, 3;
    add.cc.u32 %r8, %r1, %r2;
    addc.u32 %r9, %r3, %r4;
    bfi.b32 %r10, %r1, %r2, 8, 4;
    add.f32 %f3, %f1, %f2;
    div.rn.f32 %f4, %f1, %f2;
    fma.rn.f32 %f5, %f1, %f2, %f3;
    cvt.rn.f32.s32 %f1, %r1;
    setp.lt.s32 %p1, %r1, %r2;
    setp.gtu.f32 %p2, %f1, %f2;
    setp.ne.and.s32 %p3, %r3, %r4, %p1;
    selp.b32 %r11, %r1, %r2, %p2;
    selp.f32 %f2, %f3, 0f3F800000, %p3;
    mov.u32 %r2, %tid.x;
    mov.u32 %r1, %laneid;
    @%p1 add.s32 %r4, %r4, %r2;
    ret;
}
"#;

    fn program() -> Program {
        let m = reconverge_ptx::parse(PTX).expect("test PTX parses");
        let loaded = crate::load(&m, None, crate::mechanism::Mechanism::Pdom, &DecodeOptions::default())
            .expect("test PTX decodes");
        loaded.program().clone()
    }

    /// A CTA of two warps whose registers and predicates hold varied values (small, negative, zero,
    /// float bit patterns).
    fn cta(prog: &Program) -> Cta {
        let mut cta = Cta::new(prog, [0; 3], 0, [64, 1, 1], 32, 0);
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for (i, r) in cta.regs.iter_mut().enumerate() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *r = match i % 5 {
                0 => x % 9,
                1 => (x as i32 % 50) as u32 as u64,
                2 => 0,
                _ => x & 0xFFFF_FFFF,
            };
        }
        for (i, p) in cta.preds.iter_mut().enumerate() {
            *p = 0x5A5A_C3C3_0F0F_9669u64.rotate_left(i as u32 * 7);
        }
        cta
    }

    /// Runs every instruction of the program (but the last) for `lanes` and `mask` with the given
    /// sparse limits, from the same state each time; returns the state after each and `env.changed`.
    fn run_all<L: Lanes>(prog: &Program, g: L, mask: LaneMask, limits: u32, track: bool) -> Vec<(Cta, bool)> {
        let fixed = Fixed { grid: [1; 3], block: [64, 1, 1], sm: 0, nsm: 1, local_limit: 1024, dynamic_shared: 0 };
        let (mut mem, mut access, mut printf) = (DeviceMemory::new(), AccessLog::default(), PrintfLog::default());
        let mut sc = Scratch { sparse_whole: limits, sparse_mixed: limits, ..Scratch::default() };
        let mut out = Vec::new();
        for pc in 0..prog.insts.len() as Pc - 1 {
            let mut c = cta(prog);
            let mut env = test_env(prog, &mut mem, &fixed, (&mut access, &mut printf), track);
            let fx = execute(&mut env, &mut sc, &mut c, g, pc, mask).expect("executes");
            assert!(fx.barrier.is_none(), "no barriers in the test program");
            out.push((c, env.changed));
        }
        out
    }

    /// The sparse and the whole-warp path leave the same registers, predicates, carries and `changed`;
    /// registers change only in active lanes' thread slots, and some do.
    fn same_both_ways<L: Lanes>(prog: &Program, g: L, mask: LaneMask) {
        let before = cta(prog);
        for track in [false, true] {
            let dense = run_all(prog, g, mask, 0, track);
            let sparse = run_all(prog, g, mask, 32, track);
            let mut wrote = 0;
            for (pc, ((d, dc), (s, sc))) in dense.iter().zip(&sparse).enumerate() {
                let text = &prog.info[pc].text;
                assert_eq!(d.regs, s.regs, "registers after `{text}` (mask {mask:#x}, track {track})");
                assert_eq!(d.preds, s.preds, "predicates after `{text}`");
                assert_eq!(d.carry, s.carry, "carries after `{text}`");
                assert_eq!(dc, sc, "`changed` after `{text}`");
                for (i, (a, b)) in before.regs.iter().zip(&s.regs).enumerate() {
                    if a != b {
                        let slot = i % before.padded;
                        assert!(lanes(mask).any(|l| g.slot(l) == slot), "`{text}` wrote inactive slot {slot}");
                        wrote += 1;
                    }
                }
            }
            assert!(wrote > 0, "the instructions wrote registers");
        }
    }

    #[test]
    fn sparse_lanes_compute_what_whole_warps_do() {
        let prog = program();
        for (warp, mask) in [(0u32, 1u64), (1, 0x8000_0001), (0, 0x00F0_0F00), (1, 0x7FFF_FFFE), (0, u32::MAX as u64)] {
            same_both_ways(&prog, Whole { warp, base: warp as usize * 32 }, mask);
        }
    }

    #[test]
    fn sparse_lanes_of_regrouped_groups_compute_what_whole_warps_do() {
        let prog = program();
        for parts in [vec![(0u32, 0x0000_00FFu64), (1, 0x0F00_0000)], vec![(1, 0x1), (0, 0x8000_0000)]] {
            let slots = Mixed::slot_table(&parts, 32);
            let g = Mixed { parts: &parts, slots: &slots, w: 32 };
            same_both_ways(&prog, g, parts.iter().fold(0, |a, p| a | p.1));
        }
    }

    #[test]
    fn sparse_results_are_the_expected_values() {
        let prog = program();
        let pc_of = |s: &str| prog.info.iter().position(|i| i.text.starts_with(s)).expect("instruction") as Pc;
        let g = Whole { warp: 1, base: 32 };
        let mask = 0x8000_0004u64;
        let before = cta(&prog);
        let sparse = run_all(&prog, g, mask, 32, false);
        let reg = |c: &Cta, pc: Pc, l: usize| {
            let (Op::Selp { d, .. } | Op::IntBin { d, .. }) = prog.insts[pc as usize].op else { panic!("no dest") };
            c.regs[d as usize * c.padded + 32 + l]
        };
        let src = |pc: Pc, l: usize| {
            let (Op::Selp { a, b, .. } | Op::IntBin { a, b, .. }) = prog.insts[pc as usize].op else { panic!() };
            let v = |s: Src| match s {
                Src::Reg(r) => before.regs[r as usize * before.padded + 32 + l],
                Src::Imm(v) => v,
                _ => panic!("register or immediate"),
            };
            (v(a), v(b))
        };
        let add = pc_of("add.s32 %r5");
        let selp = pc_of("selp.b32");
        let Op::Selp { c: PredSrc::Reg(p, false), .. } = prog.insts[selp as usize].op else { panic!("selp") };
        for l in [2usize, 31] {
            let (x, y) = src(add, l);
            assert_eq!(reg(&sparse[add as usize].0, add, l), (x as u32).wrapping_add(y as u32) as u64);
            let (x, y) = src(selp, l);
            let pick = before.preds[p as usize * 2 + 1] >> l & 1 == 1;
            assert_eq!(reg(&sparse[selp as usize].0, selp, l), if pick { x } else { y });
        }
        let setp = pc_of("setp.lt.s32");
        let Op::Setp { p: Some(p), a, b, .. } = prog.insts[setp as usize].op else { panic!("setp") };
        let (Src::Reg(a), Src::Reg(b)) = (a, b) else { panic!("registers") };
        let after = sparse[setp as usize].0.preds[p as usize * 2 + 1];
        for l in 0..32 {
            let (x, y) = (before.regs[a as usize * 64 + 32 + l] as i32, before.regs[b as usize * 64 + 32 + l] as i32);
            let expect = if mask >> l & 1 == 1 { x < y } else { before.preds[p as usize * 2 + 1] >> l & 1 == 1 };
            assert_eq!(after >> l & 1 == 1, expect, "lane {l}");
        }
    }

    /// Loads and stores of every kind the whole-warp memory path takes (and some it leaves lane by lane).
    const MEM_PTX: &str = r#"
.version 8.8
.target sm_80
.address_size 64
.visible .entry m()
{
    .reg .b16 %h<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 8 .b8 sh[512];
    ld.global.u32 %r1, [%rd1];
    ld.global.s16 %r2, [%rd1+2];
    ld.global.s8 %rd3, [%rd1+1];
    ld.global.v2.u32 {%r3, %r4}, [%rd1+8];
    ld.global.v4.u16 {%h1, %h0, %h0, %h1}, [%rd1];
    ld.shared.u32 %r5, [%r6+4];
    ld.u32 %r1, [%rd2];
    ld.local.u32 %r4, [%rd1];
    st.global.u32 [%rd1], %r7;
    st.global.v2.u32 [%rd1+8], {%r7, %r6};
    st.global.u8 [%rd1+3], 5;
    st.shared.u16 [%r6+2], %r7;
    st.u32 [%rd2], 5;
    ret;
}
"#;

    /// Where lane `l` points in one test case: `(global address, shared offset)`; `a` and `b` are two
    /// 512-byte allocations.
    fn target(case: usize, l: usize, a: u64, b: u64) -> (u64, u64) {
        let l64 = l as u64;
        match (case, l) {
            (0, _) => (a + 16 * l64, 16 * l64),
            (1, _) => (a + 8 * (31 - l64), 8 * (31 - l64)),
            (2, _) => (a + 64, 64),
            (3, 7) => (a + 512, 512),
            (4, 5) => (a + 16 * l64 + 1, 16 * l64 + 1),
            (5, 9) => (b + 16, 16),
            (6, 3) => (0, u32::MAX as u64 - 1),
            (7, 30) => (a + 510, 510),
            (_, _) => (a + 16 * l64, 16 * l64),
        }
    }

    /// An environment over `mem` with no constants or parameters, at clock 0, in CTA slot 0.
    fn test_env<'e>(
        prog: &'e Program,
        mem: &'e mut DeviceMemory,
        fixed: &'e Fixed,
        (access, printf): (&'e mut AccessLog, &'e mut PrintfLog),
        track: bool,
    ) -> Env<'e, DeviceMemory> {
        Env {
            prog,
            mem,
            consts: &[],
            params: &[],
            fixed,
            clock: 0,
            track,
            changed: false,
            access,
            cta_slot: 0,
            await_members: false,
            printf,
        }
    }

    /// What a load or store left: the result, the registers, shared and device memory, `changed`, the
    /// access log and the bytes it logged.
    type MemOutcome = (Result<(), SimError>, Vec<u64>, Vec<u8>, Vec<Vec<u8>>, bool, Vec<(usize, Space, u64)>, u32);

    /// One load or store at `pc` for group `g`, `mask` in test case `case`, with the whole-warp memory
    /// path on or off: the result, the registers, shared and device memory, `changed` and the access log.
    fn run_mem<L: Lanes>(
        prog: &Program,
        pc: Pc,
        (g, mask): (L, LaneMask),
        case: usize,
        (track, warp_memory): (bool, bool),
    ) -> MemOutcome {
        let fixed = Fixed { grid: [1; 3], block: [64, 1, 1], sm: 0, nsm: 1, local_limit: 1024, dynamic_shared: 0 };
        let mut mem = DeviceMemory::new();
        let pattern = |n: usize, k: u64| (0..n).map(|i| (i as u64).wrapping_mul(k) as u8).collect::<Vec<_>>();
        let a = mem.alloc(pattern(512, 37), "a");
        let b = mem.alloc(pattern(512, 91), "b");
        let mut c = cta(prog);
        c.shared = pattern(512, 13);
        let (Op::Ld { space, addr, .. } | Op::St { space, addr, .. }) = &prog.insts[pc as usize].op else {
            panic!("a load or store")
        };
        for l in 0..32 {
            let (ga, so) = target(case, l, a, b);
            let want = match space {
                Space::Shared => so,
                Space::Generic if case % 2 == 1 => crate::layout::SHARED_WINDOW + so,
                _ => ga,
            };
            if let AddrBase::Reg(r) | AddrBase::Reg32(r) = addr.base {
                c.regs[r as usize * c.padded + g.slot(l)] = want.wrapping_sub(addr.offset as u64);
            }
        }
        let (mut access, mut printf) = (AccessLog { enabled: true, ..AccessLog::default() }, PrintfLog::default());
        let mut sc = Scratch { warp_memory, ..Scratch::default() };
        let mut env = test_env(prog, &mut mem, &fixed, (&mut access, &mut printf), track);
        let r = execute(&mut env, &mut sc, &mut c, g, pc, mask).map(|_| ());
        let changed = env.changed;
        let log = lanes(access.mask).map(|l| (l, access.space[l], access.addr[l])).collect();
        let data = mem.allocations().iter().map(|x| x.data.clone()).collect();
        (r, c.regs, c.shared, data, changed, log, access.bytes)
    }

    #[test]
    fn whole_warp_loads_and_stores_match_lane_by_lane() {
        let m = reconverge_ptx::parse(MEM_PTX).expect("test PTX parses");
        let loaded = crate::load(&m, None, crate::mechanism::Mechanism::Pdom, &DecodeOptions::default())
            .expect("test PTX decodes");
        let prog = loaded.program();
        let parts = [(1u32, 0x00FF_00FFu64), (0, 0xFF00_FF00)];
        let slots = Mixed::slot_table(&parts, 32);
        let mixed = Mixed { parts: &parts, slots: &slots, w: 32 };
        let (mut faults, mut fine) = (0, 0);
        let mut tested = 0;
        for pc in 0..prog.insts.len() as Pc {
            if !matches!(prog.insts[pc as usize].op, Op::Ld { .. } | Op::St { .. }) {
                continue;
            }
            tested += 1;
            for case in 0..9 {
                for track in [false, true] {
                    for mask in [u32::MAX as u64, 0x8000_0021, 0x00FF_FF80] {
                        let whole = Whole { warp: 1, base: 32 };
                        let fast = run_mem(prog, pc, (whole, mask), case, (track, true));
                        let slow = run_mem(prog, pc, (whole, mask), case, (track, false));
                        let text = &prog.info[pc as usize].text;
                        assert_eq!(fast, slow, "`{text}`, case {case}, mask {mask:#x}, track {track}");
                        if fast.0.is_err() {
                            faults += 1
                        } else {
                            fine += 1
                        }
                    }
                    let fast = run_mem(prog, pc, (mixed, u32::MAX as u64), case, (track, true));
                    let slow = run_mem(prog, pc, (mixed, u32::MAX as u64), case, (track, false));
                    assert_eq!(fast, slow, "`{}` regrouped, case {case}", prog.info[pc as usize].text);
                }
            }
        }
        assert_eq!(tested, 13, "every load and store of the test program");
        assert!(faults > 0 && fine > 0, "both faulting and clean accesses were tested");
    }

    #[test]
    fn warp_spans_cover_clean_accesses_only() {
        let mut addrs = [0u64; 64];
        for (l, a) in addrs.iter_mut().enumerate().take(32) {
            *a = 0x1_0000_0000 + 4 * (31 - l as u64);
        }
        let full = u32::MAX as u64;
        let s = warp_span(Space::Global, full, &addrs, 4, 2).expect("aligned, one space");
        assert_eq!((s.space, s.lo, s.start, s.len), (Space::Global, 0x1_0000_0000, 0x1_0000_0000, 31 * 4 + 8));
        assert_eq!(s.offset(addrs[0], 1, 4), 31 * 4 + 4);
        addrs[3] += 2;
        assert!(warp_span(Space::Global, full, &addrs, 4, 1).is_none(), "a misaligned lane");
        assert!(warp_span(Space::Global, full & !8, &addrs, 4, 1).is_some(), "the misaligned lane inactive");
        addrs[3] = crate::layout::SHARED_WINDOW;
        assert!(warp_span(Space::Generic, full, &addrs, 4, 1).is_none(), "shared and global lanes");
        addrs[..32].iter_mut().for_each(|a| *a = crate::layout::SHARED_WINDOW + 8);
        let s = warp_span(Space::Generic, full, &addrs, 8, 1).expect("all shared");
        assert_eq!((s.space, s.start, s.len), (Space::Shared, 8, 8));
        addrs[0] = u64::MAX - 3;
        assert!(warp_span(Space::Global, 1, &addrs, 4, 2).is_none(), "past the end of the address space");
    }
}
