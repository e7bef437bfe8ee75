//! Per-thread timing state of a resident CTA.
//!
//! Threads can move between issue groups (DWF, TBC, CAPRI regroup them), so every "not before" time is
//! kept per CTA thread slot: the scoreboard of each register, when a thread may issue again, how long
//! the mechanism or a fence holds it. Each row also keeps bounds of every static warp's slots, fast paths:
//! a whole static warp that is ready by its maximum needs no per-lane look, nor does one whose slots all
//! hold one value (its bounds meet: a converged warp).

use reconverge_program::{lanes, LaneMask};
use std::ops::Range;

/// Rows of per-thread-slot cycle values, with per-static-warp bounds.
#[derive(Clone, Debug)]
pub(crate) struct Times {
    w: usize,
    rows: usize,
    nwarps: usize,
    slot: Vec<u64>,
    /// Per (row, warp): an upper bound of its slots' values.
    warp: Vec<u64>,
    /// Per (row, warp): a lower bound of its slots' values; equal to `warp` only when every slot of the
    /// warp holds that value (a converged warp: its questions are answered without a per-lane look).
    low: Vec<u64>,
    /// Every lane of a warp.
    full: LaneMask,
}

impl Times {
    /// `rows` rows for a CTA of `nwarps` warps of `w` threads, all zero.
    pub(super) fn new(rows: usize, nwarps: usize, w: usize) -> Times {
        let full = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
        let n = rows * nwarps;
        Times { w, rows, nwarps, slot: vec![0; n * w], warp: vec![0; n], low: vec![0; n], full }
    }

    /// The latest value over the lanes `hold` of the parts, or `None` when none exceeds `now` (the
    /// thread slots are ready at `now`).
    #[inline]
    pub(super) fn pending(&self, row: usize, parts: &[(u32, LaneMask)], hold: LaneMask, now: u64) -> Option<u64> {
        let mut worst: Option<u64> = None;
        for &(wi, m) in parts {
            let h = m & hold;
            let wr = row * self.nwarps + wi as usize;
            let high = self.warp[wr];
            if h == 0 || high <= now {
                continue;
            }
            // Every lane holds `high` when the bounds meet; else the largest of the lanes (it exceeds
            // `now` exactly when some lane's value does).
            let most = if self.low[wr] == high && h & !self.full == 0 {
                high
            } else {
                let base = wr * self.w;
                lanes(h).map(|l| self.slot[base + l]).max().unwrap_or(0)
            };
            if most > now {
                worst = Some(worst.map_or(most, |x: u64| x.max(most)));
            }
        }
        worst
    }

    /// Sets the value of the lanes `mask` of the parts (it may lower a value: the warp maximum then stays
    /// an upper bound until [`Times::refresh`]).
    #[inline]
    pub(super) fn set(&mut self, row: usize, parts: &[(u32, LaneMask)], mask: LaneMask, value: u64) {
        for &(wi, m) in parts {
            let e = m & mask;
            if e == 0 {
                continue;
            }
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            if e & self.full == self.full {
                // Every lane: the bounds are exact.
                self.slot[base..base + self.w].fill(value);
                for l in lanes(e & !self.full) {
                    self.slot[base + l] = value;
                }
                self.warp[wr] = value;
                self.low[wr] = value;
                continue;
            }
            for l in lanes(e) {
                self.slot[base + l] = value;
            }
            self.warp[wr] = self.warp[wr].max(value);
            self.low[wr] = self.low[wr].min(value);
        }
    }

    /// Raises the value of the lanes `mask` of the parts to at least `value`.
    #[inline]
    pub(super) fn raise(&mut self, row: usize, parts: &[(u32, LaneMask)], mask: LaneMask, value: u64) {
        for &(wi, m) in parts {
            let e = m & mask;
            if e == 0 {
                continue;
            }
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            if e & self.full == self.full && e & !self.full == 0 {
                let (low, high) = (self.low[wr], self.warp[wr]);
                if low == high {
                    // A converged warp stays converged.
                    let v = high.max(value);
                    if v != high {
                        self.slot[base..base + self.w].fill(v);
                    }
                } else {
                    for s in &mut self.slot[base..base + self.w] {
                        *s = (*s).max(value);
                    }
                }
                self.low[wr] = low.max(value);
            } else {
                for l in lanes(e) {
                    let s = &mut self.slot[base + l];
                    *s = (*s).max(value);
                }
            }
            self.warp[wr] = self.warp[wr].max(value);
        }
    }

    /// Recomputes the warp bounds of the parts' warps in `row` (after values were lowered).
    pub(super) fn refresh(&mut self, row: usize, parts: &[(u32, LaneMask)]) {
        for &(wi, _) in parts {
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            let values = &self.slot[base..base + self.w];
            let (low, high) = values.iter().fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            self.warp[wr] = high;
            self.low[wr] = if values.is_empty() { 0 } else { low };
        }
    }

    /// The largest value of `row` over the warps `warps` (a CTA's).
    pub(super) fn max_row(&self, row: usize, warps: Range<usize>) -> u64 {
        let r = row * self.nwarps;
        self.warp[r + warps.start..r + warps.end].iter().copied().max().unwrap_or(0)
    }

    /// Raises every thread of the warps `warps` (a CTA's) in `row` to at least `value`.
    pub(super) fn raise_all(&mut self, row: usize, warps: Range<usize>, value: u64) {
        let r = row * self.nwarps;
        for s in &mut self.slot[(r + warps.start) * self.w..(r + warps.end) * self.w] {
            *s = (*s).max(value);
        }
        for x in &mut self.warp[r + warps.start..r + warps.end] {
            *x = (*x).max(value);
        }
        for x in &mut self.low[r + warps.start..r + warps.end] {
            *x = (*x).max(value);
        }
    }

    /// Makes room for `nwarps` warps per row, zeroing the warps `fresh` (a CTA launched into their slot).
    pub(super) fn cover(&mut self, nwarps: usize, fresh: Range<usize>) {
        if nwarps > self.nwarps {
            let rows = self.rows;
            let mut grown = Times::new(rows, nwarps, self.w);
            for row in 0..rows {
                let (old, new) = (row * self.nwarps, row * nwarps);
                grown.warp[new..new + self.nwarps].copy_from_slice(&self.warp[old..old + self.nwarps]);
                grown.low[new..new + self.nwarps].copy_from_slice(&self.low[old..old + self.nwarps]);
                grown.slot[new * self.w..(new + self.nwarps) * self.w]
                    .copy_from_slice(&self.slot[old * self.w..(old + self.nwarps) * self.w]);
            }
            *self = grown;
        }
        for row in 0..self.rows {
            let r = row * self.nwarps;
            self.warp[r + fresh.start..r + fresh.end].fill(0);
            self.low[r + fresh.start..r + fresh.end].fill(0);
            self.slot[(r + fresh.start) * self.w..(r + fresh.end) * self.w].fill(0);
        }
    }
}

/// Rows of [`Times`] a thread has besides its registers.
pub(crate) mod row {
    /// When the thread may issue again (pipeline: issue, branch and barrier latencies).
    pub(crate) const READY: usize = 0;
    /// Until when the divergence mechanism holds it.
    pub(crate) const MECH: usize = 1;
    /// Until when a fence or a barrier release holds it (its global writes performed).
    pub(crate) const FENCE: usize = 2;
    /// When its global writes logged so far are performed.
    pub(crate) const WRITES: usize = 3;
    /// Rows in all.
    pub(crate) const COUNT: usize = 4;
}

/// The timing state of one resident CTA, or of every CTA of an SM whose mechanism regroups threads
/// across CTAs (its warps are then the SM warps: CTA slot × static warps per CTA + static warp).
#[derive(Clone, Debug)]
pub(crate) struct CtaTimes {
    /// [`row`] values.
    pub threads: Times,
    /// Register scoreboard: row = register.
    pub regs: Times,
    /// Predicate scoreboard per (predicate, static warp).
    pub preds: Vec<u64>,
    /// Outstanding load misses per thread slot, and per static warp.
    pub misses: Vec<u16>,
    /// Outstanding load misses per static warp.
    pub misses_warp: Vec<u32>,
    nwarps: usize,
    npreds: usize,
    w: usize,
}

impl CtaTimes {
    /// Zeroed state for a CTA of `nwarps` warps of `w` threads and a program of `nregs` registers and
    /// `npreds` predicates.
    pub(super) fn new(nwarps: usize, w: usize, nregs: usize, npreds: usize) -> CtaTimes {
        CtaTimes {
            threads: Times::new(row::COUNT, nwarps, w),
            regs: Times::new(nregs.max(1), nwarps, w),
            preds: vec![0; npreds.max(1) * nwarps],
            misses: vec![0; nwarps * w],
            misses_warp: vec![0; nwarps],
            nwarps,
            npreds: npreds.max(1),
            w,
        }
    }

    /// Its warps.
    pub(super) fn nwarps(&self) -> usize {
        self.nwarps
    }

    /// Makes room for `nwarps` warps, zeroing the warps `fresh` (a CTA launched into their slot).
    pub(super) fn cover(&mut self, nwarps: usize, fresh: Range<usize>) {
        let nwarps = nwarps.max(self.nwarps);
        self.threads.cover(nwarps, fresh.clone());
        self.regs.cover(nwarps, fresh.clone());
        if nwarps > self.nwarps {
            let npreds = self.npreds;
            let mut preds = vec![0; npreds * nwarps];
            for p in 0..npreds {
                if self.nwarps > 0 {
                    preds[p * nwarps..p * nwarps + self.nwarps]
                        .copy_from_slice(&self.preds[p * self.nwarps..(p + 1) * self.nwarps]);
                }
            }
            self.preds = preds;
            self.misses.resize(nwarps * self.w, 0);
            self.misses_warp.resize(nwarps, 0);
            self.nwarps = nwarps;
        }
        for p in 0..self.npreds {
            self.preds[p * self.nwarps + fresh.start..p * self.nwarps + fresh.end].fill(0);
        }
        self.misses[fresh.start * self.w..fresh.end * self.w].fill(0);
        self.misses_warp[fresh.clone()].fill(0);
    }

    /// The latest predicate-scoreboard time of `p` over the parts' warps.
    #[inline]
    pub(super) fn pred(&self, p: u32, parts: &[(u32, LaneMask)]) -> u64 {
        parts.iter().map(|&(w, _)| self.preds[p as usize * self.nwarps + w as usize]).max().unwrap_or(0)
    }

    /// Sets predicate `p`'s scoreboard time for the parts' warps.
    #[inline]
    pub(super) fn set_pred(&mut self, p: u32, parts: &[(u32, LaneMask)], value: u64) {
        for &(w, _) in parts {
            self.preds[p as usize * self.nwarps + w as usize] = value;
        }
    }

    /// Whether any thread of `hold` has an outstanding load miss.
    #[inline]
    pub(super) fn missing(&self, parts: &[(u32, LaneMask)], hold: LaneMask) -> bool {
        parts.iter().any(|&(wi, m)| {
            self.misses_warp[wi as usize] > 0 && lanes(m & hold).any(|l| self.misses[wi as usize * self.w + l] > 0)
        })
    }

    /// Adds `delta` (±1) outstanding misses to the lanes `mask` of the parts.
    pub(super) fn add_misses(&mut self, parts: &[(u32, LaneMask)], mask: LaneMask, up: bool) {
        for &(wi, m) in parts {
            for l in lanes(m & mask) {
                let s = &mut self.misses[wi as usize * self.w + l];
                let wsum = &mut self.misses_warp[wi as usize];
                if up {
                    *s += 1;
                    *wsum += 1;
                } else if *s > 0 {
                    *s -= 1;
                    *wsum -= 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{row, CtaTimes, Times};
    use reconverge_program::{lanes, LaneMask};

    /// The answer of [`Times::pending`] asked lane by lane of a plain copy of the values.
    fn naive(vals: &[u64], w: usize, parts: &[(u32, LaneMask)], hold: LaneMask, now: u64) -> Option<u64> {
        let mut worst = None;
        for &(wi, m) in parts {
            for l in lanes(m & hold) {
                let v = vals[wi as usize * w + l];
                if v > now {
                    worst = Some(worst.map_or(v, |x: u64| x.max(v)));
                }
            }
        }
        worst
    }

    #[test]
    fn the_warp_bounds_answer_as_every_lane_would() {
        // A deterministic mix of full and partial sets, raises and refreshes on 3 warps of 8 lanes, checked
        // after each step against a lane-by-lane copy.
        let (w, nwarps) = (8usize, 3usize);
        let full: LaneMask = 0xff;
        let mut t = Times::new(1, nwarps, w);
        let mut vals = vec![0u64; w * nwarps];
        let mut x = 12345u64;
        let mut converged_hits = 0;
        for step in 0..4000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let wi = (x % nwarps as u64) as u32;
            let mask = if x & 0x300 == 0 { (x >> 16) & full } else { full };
            let value = (x >> 24) % 64 + step / 40;
            let parts = [(wi, full)];
            match (x >> 10) % 4 {
                0 | 1 => {
                    t.set(0, &parts, mask, value);
                    lanes(mask).for_each(|l| vals[wi as usize * w + l] = value);
                }
                2 => {
                    t.raise(0, &parts, mask, value);
                    lanes(mask).for_each(|l| vals[wi as usize * w + l] = vals[wi as usize * w + l].max(value));
                }
                _ => t.refresh(0, &parts),
            }
            let wr = wi as usize;
            converged_hits += usize::from(t.low[wr] == t.warp[wr]);
            for now in [0, value.saturating_sub(3), value, value + 5] {
                for hold in [full, 0x0f, (x >> 32) & full] {
                    let all: Vec<(u32, LaneMask)> = (0..nwarps as u32).map(|k| (k, full)).collect();
                    assert_eq!(t.pending(0, &all, hold, now), naive(&vals, w, &all, hold, now), "step {step}");
                }
            }
        }
        assert!(converged_hits > 100, "the converged fast path was exercised ({converged_hits})");
    }

    #[test]
    fn covering_more_warps_keeps_the_old_values_and_zeroes_the_fresh_ones() {
        let mut t = CtaTimes::new(0, 4, 2, 2);
        t.cover(2, 0..2);
        t.threads.set(row::READY, &[(1, 0b0010)], u64::MAX, 40);
        t.regs.set(1, &[(0, 0b0001)], u64::MAX, 7);
        t.set_pred(1, &[(1, 0)], 9);
        t.add_misses(&[(1, 0b0100)], u64::MAX, true);
        t.cover(4, 2..4);
        assert_eq!(t.nwarps(), 4);
        assert_eq!(t.threads.pending(row::READY, &[(1, 0b1111)], u64::MAX, 0), Some(40));
        assert_eq!(t.regs.pending(1, &[(0, 0b1111)], u64::MAX, 0), Some(7));
        assert_eq!(t.pred(1, &[(1, 0)]), 9);
        assert!(t.missing(&[(1, 0b0100)], u64::MAX));
        t.set_pred(0, &[(3, 0)], 5);
        t.cover(4, 3..4);
        assert_eq!(t.pred(0, &[(3, 0)]), 0, "a CTA launched into warps 3.. starts from zero");
        assert_eq!(t.threads.pending(row::READY, &[(1, 0b1111)], u64::MAX, 0), Some(40));
        t.threads.raise(row::WRITES, &[(1, 1), (3, 1)], u64::MAX, 50);
        assert_eq!(t.threads.max_row(row::WRITES, 2..4), 50);
        t.threads.raise_all(row::FENCE, 0..2, 60);
        assert_eq!(t.threads.pending(row::FENCE, &[(3, 1)], u64::MAX, 0), None, "other CTAs untouched");
        assert_eq!(t.threads.pending(row::FENCE, &[(0, 1)], u64::MAX, 0), Some(60));
    }
}
