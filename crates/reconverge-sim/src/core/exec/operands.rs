//! Operands: predicate masks, special registers, source lanes fetched as slices, results written back
//! under the group's mask, and the lane maps of the sparse and direct paths.

use super::*;

#[inline]
pub(super) fn pred_mask<L: Lanes>(cta: &Cta, g: L, p: Pred) -> u64 {
    g.gather(&cta.preds, p as usize, cta.nwarps as usize)
}

#[inline]
pub(super) fn pred_src_mask<L: Lanes>(cta: &Cta, g: L, p: PredSrc) -> u64 {
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
pub(super) fn write_pred<G: GlobalMemory, L: Lanes>(
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

pub(super) fn sreg_value<G: GlobalMemory, L: Lanes>(cta: &Cta, env: &Env<G>, g: L, lane: usize, s: Sreg) -> u64 {
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
pub(super) fn lane_value<G: GlobalMemory, L: Lanes>(cta: &Cta, env: &Env<G>, g: L, src: Src, l: usize) -> u64 {
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
pub(super) fn fetch<'x, G: GlobalMemory, L: Lanes>(
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
pub(super) fn write_reg<G: GlobalMemory, L: Lanes>(
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
pub(super) fn write_lane<G: GlobalMemory, L: Lanes>(
    cta: &mut Cta,
    env: &mut Env<G>,
    g: L,
    d: Reg,
    lane: usize,
    v: u64,
) {
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
pub(super) fn map1(w: usize, only: Option<LaneMask>, a: &[u64], out: &mut [u64; 64], f: impl Fn(u64) -> u64) {
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
pub(super) fn map2(
    w: usize,
    only: Option<LaneMask>,
    a: &[u64],
    b: &[u64],
    out: &mut [u64; 64],
    f: impl Fn(u64, u64) -> u64,
) {
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
pub(super) fn map3(
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
pub(super) fn row_of(cta: &Cta, base: usize, s: Src) -> Option<usize> {
    match s {
        Src::Reg(r) => Some(r as usize * cta.padded + base),
        _ => None,
    }
}

/// `d = f(a)` over a whole warp, computed in the register file; `false` (nothing done) unless the source
/// is a register.
#[inline(always)]
pub(super) fn direct1(cta: &mut Cta, base: usize, d: Reg, a: Src, f: impl Fn(u64) -> u64) -> bool {
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
pub(super) fn direct2(cta: &mut Cta, base: usize, d: Reg, a: Src, b: Src, f: impl Fn(u64, u64) -> u64) -> bool {
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
pub(super) fn mask2(
    eff: LaneMask,
    (w, sparse): (usize, bool),
    a: &[u64],
    b: &[u64],
    f: impl Fn(u64, u64) -> bool,
) -> LaneMask {
    if sparse {
        return lanes(eff).fold(0u64, |m, l| m | (f(a[l], b[l]) as u64) << l);
    }
    let mut m = 0u64;
    for (l, (&x, &y)) in a[..w].iter().zip(&b[..w]).enumerate() {
        m |= (f(x, y) as u64) << l;
    }
    m & eff
}
