//! How the executor addresses the threads of an issue group.
//!
//! Lane `l` of a group holds the thread in CTA slot `warp * W + l` (a thread never leaves its home lane),
//! so a group is a set of `(static warp, lanes)` parts. Registers are stored per thread slot and
//! predicates, carries and liveness per static warp (one lane mask each), so the executor reaches them
//! through [`Lanes`]: [`Whole`] for a group whose lanes all come from one static warp (the contiguous fast
//! path every static-warp mechanism uses) and [`Mixed`] for a regrouped one. The executor is generic over
//! it, so the choice costs one branch per instruction, not a dynamic call per lane.

use crate::types::{lanes, LaneMask};

/// Thread addressing of one issue group.
pub(crate) trait Lanes: Copy {
    /// The CTA thread slot of lane `l`.
    fn slot(self, l: usize) -> usize;
    /// `Some(base)` when every lane `l` is slot `base + l` (a whole static warp).
    fn base(self) -> Option<usize>;
    /// The static warp of lane `l`.
    fn warp(self, l: usize) -> u32;
    /// A per-warp mask row gathered for the group: `rows[row * nwarps + w]` holds warp `w`'s lanes.
    fn gather(self, rows: &[LaneMask], row: usize, nwarps: usize) -> LaneMask;
    /// Writes `value` into the lanes `eff` of a per-warp mask row; returns whether anything changed.
    fn scatter(self, rows: &mut [LaneMask], row: usize, nwarps: usize, eff: LaneMask, value: LaneMask) -> bool;
}

/// A group whose lanes are one static warp's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Whole {
    /// The static warp.
    pub warp: u32,
    /// Its first thread slot (`warp * W`).
    pub base: usize,
}

impl Lanes for Whole {
    #[inline(always)]
    fn slot(self, l: usize) -> usize {
        self.base + l
    }
    #[inline(always)]
    fn base(self) -> Option<usize> {
        Some(self.base)
    }
    #[inline(always)]
    fn warp(self, _: usize) -> u32 {
        self.warp
    }
    #[inline(always)]
    fn gather(self, rows: &[LaneMask], row: usize, nwarps: usize) -> LaneMask {
        rows[row * nwarps + self.warp as usize]
    }
    #[inline(always)]
    fn scatter(self, rows: &mut [LaneMask], row: usize, nwarps: usize, eff: LaneMask, value: LaneMask) -> bool {
        let slot = &mut rows[row * nwarps + self.warp as usize];
        let new = (*slot & !eff) | (value & eff);
        let changed = new != *slot;
        *slot = new;
        changed
    }
}

/// A regrouped group: lanes from several static warps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mixed<'a> {
    /// `(static warp, lanes)` parts, disjoint.
    pub parts: &'a [(u32, LaneMask)],
    /// The thread slot of each lane (lanes outside the parts hold an unused value).
    pub slots: &'a [u32; 64],
    /// Threads per warp.
    pub w: usize,
}

impl<'a> Mixed<'a> {
    /// The slot table of `parts` at warp size `w`.
    pub(super) fn slot_table(parts: &[(u32, LaneMask)], w: usize) -> [u32; 64] {
        let mut slots = [0u32; 64];
        for &(warp, m) in parts {
            for l in lanes(m) {
                slots[l] = (warp as usize * w + l) as u32;
            }
        }
        slots
    }
}

impl Lanes for Mixed<'_> {
    #[inline(always)]
    fn slot(self, l: usize) -> usize {
        self.slots[l] as usize
    }
    #[inline(always)]
    fn base(self) -> Option<usize> {
        None
    }
    #[inline(always)]
    fn warp(self, l: usize) -> u32 {
        (self.slots[l] as usize / self.w) as u32
    }
    fn gather(self, rows: &[LaneMask], row: usize, nwarps: usize) -> LaneMask {
        self.parts.iter().fold(0, |acc, &(w, m)| acc | (rows[row * nwarps + w as usize] & m))
    }
    fn scatter(self, rows: &mut [LaneMask], row: usize, nwarps: usize, eff: LaneMask, value: LaneMask) -> bool {
        let mut changed = false;
        for &(w, m) in self.parts {
            let e = eff & m;
            if e == 0 {
                continue;
            }
            let slot = &mut rows[row * nwarps + w as usize];
            let new = (*slot & !e) | (value & e);
            changed |= new != *slot;
            *slot = new;
        }
        changed
    }
}
