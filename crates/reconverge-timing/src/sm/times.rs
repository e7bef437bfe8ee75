//! Per-thread timing state of a resident CTA.
//!
//! Threads can move between issue groups (DWF, TBC, CAPRI regroup them), so every "not before" time is
//! kept per CTA thread slot: the scoreboard of each register, when a thread may issue again, how long
//! the mechanism or a fence holds it. Each row also keeps the maximum over every static warp's slots, a
//! fast path: a whole static warp that is ready by its maximum needs no per-lane look.

use reconverge_program::{lanes, LaneMask};
use std::ops::Range;

/// Rows of per-thread-slot cycle values, with per-static-warp maxima.
#[derive(Clone, Debug)]
pub(crate) struct Times {
    w: usize,
    rows: usize,
    nwarps: usize,
    slot: Vec<u64>,
    warp: Vec<u64>,
}

impl Times {
    /// `rows` rows for a CTA of `nwarps` warps of `w` threads, all zero.
    pub fn new(rows: usize, nwarps: usize, w: usize) -> Times {
        Times { w, rows, nwarps, slot: vec![0; rows * nwarps * w], warp: vec![0; rows * nwarps] }
    }

    /// The latest value over the lanes `hold` of the parts, or `None` when none exceeds `now` (the
    /// thread slots are ready at `now`).
    #[inline]
    pub fn pending(&self, row: usize, parts: &[(u32, LaneMask)], hold: LaneMask, now: u64) -> Option<u64> {
        let mut worst: Option<u64> = None;
        for &(wi, m) in parts {
            let h = m & hold;
            if h == 0 || self.warp[row * self.nwarps + wi as usize] <= now {
                continue;
            }
            let base = (row * self.nwarps + wi as usize) * self.w;
            for l in lanes(h) {
                let v = self.slot[base + l];
                if v > now {
                    worst = Some(worst.map_or(v, |x: u64| x.max(v)));
                }
            }
        }
        worst
    }

    /// Sets the value of the lanes `mask` of the parts (it may lower a value: the warp maximum then stays
    /// an upper bound until [`Times::refresh`]).
    #[inline]
    pub fn set(&mut self, row: usize, parts: &[(u32, LaneMask)], mask: LaneMask, value: u64) {
        for &(wi, m) in parts {
            let e = m & mask;
            if e == 0 {
                continue;
            }
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            for l in lanes(e) {
                self.slot[base + l] = value;
            }
            self.warp[wr] = self.warp[wr].max(value);
        }
    }

    /// Raises the value of the lanes `mask` of the parts to at least `value`.
    #[inline]
    pub fn raise(&mut self, row: usize, parts: &[(u32, LaneMask)], mask: LaneMask, value: u64) {
        for &(wi, m) in parts {
            let e = m & mask;
            if e == 0 {
                continue;
            }
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            for l in lanes(e) {
                let s = &mut self.slot[base + l];
                *s = (*s).max(value);
            }
            self.warp[wr] = self.warp[wr].max(value);
        }
    }

    /// Recomputes the warp maxima of the parts' warps in `row` (after values were lowered).
    pub fn refresh(&mut self, row: usize, parts: &[(u32, LaneMask)]) {
        for &(wi, _) in parts {
            let wr = row * self.nwarps + wi as usize;
            let base = wr * self.w;
            self.warp[wr] = self.slot[base..base + self.w].iter().copied().max().unwrap_or(0);
        }
    }

    /// The largest value of `row` over the warps `warps` (a CTA's).
    pub fn max_row(&self, row: usize, warps: Range<usize>) -> u64 {
        let r = row * self.nwarps;
        self.warp[r + warps.start..r + warps.end].iter().copied().max().unwrap_or(0)
    }

    /// Raises every thread of the warps `warps` (a CTA's) in `row` to at least `value`.
    pub fn raise_all(&mut self, row: usize, warps: Range<usize>, value: u64) {
        let r = row * self.nwarps;
        for s in &mut self.slot[(r + warps.start) * self.w..(r + warps.end) * self.w] {
            *s = (*s).max(value);
        }
        for x in &mut self.warp[r + warps.start..r + warps.end] {
            *x = (*x).max(value);
        }
    }

    /// Makes room for `nwarps` warps per row, zeroing the warps `fresh` (a CTA launched into their slot).
    pub fn cover(&mut self, nwarps: usize, fresh: Range<usize>) {
        if nwarps > self.nwarps {
            let rows = self.rows;
            let mut grown = Times::new(rows, nwarps, self.w);
            for row in 0..rows {
                let (old, new) = (row * self.nwarps, row * nwarps);
                grown.warp[new..new + self.nwarps].copy_from_slice(&self.warp[old..old + self.nwarps]);
                grown.slot[new * self.w..(new + self.nwarps) * self.w]
                    .copy_from_slice(&self.slot[old * self.w..(old + self.nwarps) * self.w]);
            }
            *self = grown;
        }
        for row in 0..self.rows {
            let r = row * self.nwarps;
            self.warp[r + fresh.start..r + fresh.end].fill(0);
            self.slot[(r + fresh.start) * self.w..(r + fresh.end) * self.w].fill(0);
        }
    }
}

/// Rows of [`Times`] a thread has besides its registers.
pub(crate) mod row {
    /// When the thread may issue again (pipeline: issue, branch and barrier latencies).
    pub const READY: usize = 0;
    /// Until when the divergence mechanism holds it.
    pub const MECH: usize = 1;
    /// Until when a fence or a barrier release holds it (its global writes performed).
    pub const FENCE: usize = 2;
    /// When its global writes logged so far are performed.
    pub const WRITES: usize = 3;
    /// Rows in all.
    pub const COUNT: usize = 4;
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
    pub fn new(nwarps: usize, w: usize, nregs: usize, npreds: usize) -> CtaTimes {
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
    pub fn nwarps(&self) -> usize {
        self.nwarps
    }

    /// Makes room for `nwarps` warps, zeroing the warps `fresh` (a CTA launched into their slot).
    pub fn cover(&mut self, nwarps: usize, fresh: Range<usize>) {
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
    pub fn pred(&self, p: u32, parts: &[(u32, LaneMask)]) -> u64 {
        parts.iter().map(|&(w, _)| self.preds[p as usize * self.nwarps + w as usize]).max().unwrap_or(0)
    }

    /// Sets predicate `p`'s scoreboard time for the parts' warps.
    #[inline]
    pub fn set_pred(&mut self, p: u32, parts: &[(u32, LaneMask)], value: u64) {
        for &(w, _) in parts {
            self.preds[p as usize * self.nwarps + w as usize] = value;
        }
    }

    /// Whether any thread of `hold` has an outstanding load miss.
    #[inline]
    pub fn missing(&self, parts: &[(u32, LaneMask)], hold: LaneMask) -> bool {
        parts.iter().any(|&(wi, m)| {
            self.misses_warp[wi as usize] > 0 && lanes(m & hold).any(|l| self.misses[wi as usize * self.w + l] > 0)
        })
    }

    /// Adds `delta` (±1) outstanding misses to the lanes `mask` of the parts.
    pub fn add_misses(&mut self, parts: &[(u32, LaneMask)], mask: LaneMask, up: bool) {
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
    use super::{row, CtaTimes};

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
