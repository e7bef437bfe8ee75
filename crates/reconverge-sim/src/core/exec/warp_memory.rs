//! Whole-warp memory: per-lane addresses, the span one instruction's accesses cover, and loads and stores
//! of a whole warp at once or lane by lane.

use super::*;

pub(super) fn mem_err<G: GlobalMemory>(env: &Env<G>, cta: &Cta, pc: Pc, slot: usize, fault: MemFault) -> SimError {
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
pub(super) fn lane_addr<L: Lanes>(cta: &Cta, g: L, lane: usize, a: &Addr) -> u64 {
    let base = match a.base {
        AddrBase::Reg(r) | AddrBase::Reg32(r) => cta.regs[r as usize * cta.padded + g.slot(lane)],
        AddrBase::Const(c) => c,
        AddrBase::Frame => cta.frame_base[g.slot(lane)] as u64,
    };
    offset_addr(a, base)
}

/// `a`'s offset applied to the value `base` of its base (modulo 2^32 for a 32-bit register).
#[inline(always)]
pub(super) fn offset_addr(a: &Addr, base: u64) -> u64 {
    match a.base {
        AddrBase::Reg32(_) => u64::from((base as u32).wrapping_add(a.offset as u32)),
        _ => base.wrapping_add(a.offset as u64),
    }
}

/// Writes the address of every lane of `eff` into `out` (a whole static warp's register base is read as
/// one slice, its other lanes' entries computed but meaningless).
#[inline]
pub(super) fn warp_addrs<L: Lanes>(cta: &Cta, g: L, eff: LaneMask, a: &Addr, out: &mut [u64; 64]) {
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
pub(super) struct WarpSpan {
    /// The space every active lane's address resolves to.
    pub(super) space: Space,
    /// The lowest active lane's address, as computed (before resolving).
    pub(super) lo: u64,
    /// `lo` resolved: the first byte of the run within `space`.
    pub(super) start: u64,
    /// The run's length: from `lo` to the end of the highest lane's last element.
    pub(super) len: u64,
}

impl WarpSpan {
    /// The offset in the run of element `k` (of `size` bytes) of the lane whose address is `addr`.
    #[inline(always)]
    pub(super) fn offset(&self, addr: u64, k: usize, size: u32) -> usize {
        (addr - self.lo) as usize + k * size as usize
    }

    /// The run as a range of indices into its space's bytes (when they are a flat memory).
    #[inline]
    pub(super) fn range(&self) -> Option<std::ops::Range<usize>> {
        Some(usize::try_from(self.start).ok()?..usize::try_from(self.start + self.len).ok()?)
    }
}

/// Where an access of `elems` elements of `size` bytes per lane goes for the lanes `eff`, whose
/// addresses `addrs` holds, when the accesses could not fault lane by lane: every lane aligned and
/// resolving to one concrete space, and the whole run of bytes at most this long (the caller checks it
/// lies in one buffer). `None` sends the access lane by lane, which reports faults.
pub(super) fn warp_span(space: Space, eff: LaneMask, addrs: &[u64; 64], size: u32, elems: usize) -> Option<WarpSpan> {
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
pub(super) const VECTOR_BUFFERS: usize = 4;

/// Loads element `k` (of `size` bytes, sign-extended to `ext` bits when signed) of every lane of `eff`
/// from `bytes`, the run `span` covers, into `out`.
#[inline]
pub(super) fn gather(
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
pub(super) fn load_warp<G: GlobalMemory, L: Lanes>(
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
pub(super) fn store_warp<G: GlobalMemory, L: Lanes>(
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

pub(super) fn mem_read<G: GlobalMemory>(
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

pub(super) fn mem_write<G: GlobalMemory>(
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

pub(super) fn sign_extend(v: u64, from_bits: u32, to_bits: u32) -> u64 {
    if from_bits >= 64 {
        return v;
    }
    let sh = 64 - from_bits;
    let s = (((v << sh) as i64) >> sh) as u64;
    s & full_mask(to_bits)
}
