//! Priority-ordered path lists (seed 003 §2.4): mechanisms `sorted:minpc`, `sorted:depth`,
//! `sorted:majority` and `sorted:minority`.
//!
//! The warp's paths are kept sorted by a priority; the head runs. After an instruction the head's
//! successor paths are inserted at their place in the order (after paths of equal priority), and
//! convergence is detected **against the list head only**, as the seed explains: while the first two
//! paths are at the same pc and call depth they merge (and the merged path is re-inserted where its new
//! priority puts it). For the pc orders, equal places are adjacent, so this finds every convergence; for
//! the thread-count orders it finds only those that reach the head together.
//!
//! Priorities (ties are broken by lower pc, then by insertion order):
//! - `minpc`: lower pc first (Maven's 1-stack);
//! - `depth`: deeper call depth first, then lower pc (Simty's order; the `simty` and `arbiter`
//!   mechanisms implement this order in hardware);
//! - `majority` / `minority`: more / fewer live threads first (DWF's heuristics applied to one warp).

use crate::paths::{clear_run, first_ready, retain_live, skip, start, take, Path, Taken};
use crate::per_warp::advance_ends;
use crate::types::{LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError, WarpCtx, WarpTracker};
use std::cmp::Ordering;

/// A priority order of a sorted path list.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Priority {
    /// Minimum pc first.
    MinPc,
    /// Maximum call depth, then minimum pc (Simty).
    Depth,
    /// Most threads first.
    Majority,
    /// Fewest threads first.
    Minority,
}

impl Priority {
    /// Every order.
    pub const ALL: [Priority; 4] = [Priority::MinPc, Priority::Depth, Priority::Majority, Priority::Minority];

    /// The registry's facts of the path list sorted by this priority.
    pub fn info(self) -> &'static crate::Info {
        match self {
            Priority::MinPc => &MIN_PC,
            Priority::Depth => &DEPTH,
            Priority::Majority => &MAJORITY,
            Priority::Minority => &MINORITY,
        }
    }

    /// How `a` compares with `b`: `Less` runs first.
    #[inline]
    pub fn cmp(self, a: &Path, b: &Path) -> Ordering {
        let by_pc = a.pc.cmp(&b.pc);
        match self {
            Priority::MinPc => by_pc,
            Priority::Depth => b.depth.cmp(&a.depth).then(by_pc),
            Priority::Majority => b.mask.count_ones().cmp(&a.mask.count_ones()).then(by_pc),
            Priority::Minority => a.mask.count_ones().cmp(&b.mask.count_ones()).then(by_pc),
        }
    }

    /// Inserts `p` into the sorted list `list` after every path that does not come after it; returns its
    /// index (the number of paths ahead of it).
    pub fn insert(self, list: &mut Vec<Path>, p: Path) -> usize {
        let at = list.partition_point(|q| self.cmp(q, &p) != Ordering::Greater);
        list.insert(at, p);
        at
    }

    /// Merges the head with the next path while they are at the same place; returns the merges.
    pub fn converge_at_head(self, list: &mut Vec<Path>) -> u64 {
        let mut merges = 0;
        while list.len() >= 2 && list[0].same_place(&list[1]) {
            let a = list.remove(0);
            let b = list.remove(0);
            self.insert(list, Path { mask: a.mask | b.mask, ..a });
            merges += 1;
        }
        merges
    }
}

/// What [`step`] did to a sorted list, for the hardware models built on it (Maven's shift register).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Stepped {
    /// Merges at the head.
    pub merges: u64,
    /// Paths inserted: the successors, and the lanes of the issued path that did not issue.
    pub inserted: u32,
    /// The paths ahead of each inserted path when it went in, summed: how far paths entering at the head
    /// moved down the list.
    pub passed: u64,
}

impl Stepped {
    /// Inserts `p` into the sorted list `list` and records the insertion.
    pub(crate) fn insert(&mut self, order: Priority, list: &mut Vec<Path>, p: Path) {
        self.passed += order.insert(list, p) as u64;
        self.inserted += 1;
    }
}

/// Replaces the path that issued (`pc`, `mask`) in the sorted list `list` by its successors after `flow`
/// and merges at the head.
pub(crate) fn step(
    order: Priority,
    list: &mut Vec<Path>,
    pc: Pc,
    mask: LaneMask,
    flow: &Flow,
    live: LaneMask,
) -> Result<Stepped, MechError> {
    let Taken { rest, next, .. } = take(list, pc, mask, flow, live)?;
    let by_count = matches!(order, Priority::Majority | Priority::Minority);
    if by_count && list.iter().any(|p| p.mask & !live != 0) {
        // Exits change thread counts: drop the exited lanes and restore the order (stable).
        retain_live(list, live);
        list.sort_by(|a, b| order.cmp(a, b));
    } else {
        retain_live(list, live);
    }
    let mut s = Stepped::default();
    if let Some(r) = rest {
        s.insert(order, list, r);
    }
    for p in next {
        s.insert(order, list, p);
    }
    s.merges = order.converge_at_head(list);
    Ok(s)
}

/// A sorted path list.
#[derive(Clone, Copy, Debug)]
pub struct Sorted(pub Priority);

impl WarpTracker for Sorted {
    /// The paths in priority order; the head runs.
    type State = Vec<Path>;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [crate::Counter] =
        &[crate::Counter::sum("path_merges", "paths merged with the list head at an equal pc (convergence events)")];

    fn name(&self) -> &'static str {
        self.0.info().name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Vec<Path> {
        start(entry, live)
    }

    #[inline]
    fn select(&self, st: &Vec<Path>, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.iter(), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &Vec<Path>, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Up to the next pc another path holds: until then the path keeps its rank in every order
        // (pc, depth and thread count compare the same) and meets no path at the head.
        clear_run(st.iter(), pc, mask, max)
    }

    fn advance(
        &self,
        st: &mut Vec<Path>,
        pc: Pc,
        mask: LaneMask,
        n: u32,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(st, pc + 1, mask, pc + n - 1))
    }

    fn update(
        &self,
        st: &mut Vec<Path>,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        let s = step(self.0, st, pc, mask, flow, ctx.live)?;
        ctx.count(0, s.merges);
        Ok(())
    }

    fn depth(&self, st: &Vec<Path>) -> usize {
        st.len()
    }

    fn entries(&self, st: &Vec<Path>) -> Vec<EntryView> {
        // Bottom first: the head (the running path) is shown last, like a stack's top.
        st.iter()
            .enumerate()
            .rev()
            .map(|(k, p)| p.view(if k == 0 { EntryKind::Head } else { EntryKind::Path }))
            .collect()
    }
}

/// The registry's facts of `sorted:minpc`.
pub const MIN_PC: crate::Info = crate::Info::new(
    "sorted:minpc",
    crate::Scope::Warp,
    "a path list sorted by minimum pc, convergence at the head (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:depth`.
pub const DEPTH: crate::Info = crate::Info::new(
    "sorted:depth",
    crate::Scope::Warp,
    "a path list sorted by call depth, then minimum pc (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:majority` (the priority, a thread count, is the mask's population:
/// no field).
pub const MAJORITY: crate::Info = crate::Info::new(
    "sorted:majority",
    crate::Scope::Warp,
    "a path list sorted by the most threads first (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:minority`.
pub const MINORITY: crate::Info = crate::Info::new(
    "sorted:minority",
    crate::Scope::Warp,
    "a path list sorted by the fewest threads first (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pc: Pc, mask: LaneMask, depth: u32) -> Path {
        Path { pc, mask, depth }
    }

    #[test]
    fn orders() {
        let a = p(5, 0b0001, 0);
        let b = p(3, 0b0110, 1);
        assert_eq!(Priority::MinPc.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Depth.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Majority.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Minority.cmp(&a, &b), Ordering::Less);
    }

    #[test]
    fn head_convergence_merges_equal_places_and_resorts() {
        let mut l = vec![p(4, 0b0001, 0), p(4, 0b0010, 0), p(6, 0b1100, 0)];
        assert_eq!(Priority::MinPc.converge_at_head(&mut l), 1);
        assert_eq!(l, vec![p(4, 0b0011, 0), p(6, 0b1100, 0)]);
        // Under minority order the merged path (2 threads) goes behind a 1-thread path.
        let mut l = vec![p(4, 0b0001, 0), p(4, 0b0010, 0), p(9, 0b0100, 0)];
        Priority::Minority.converge_at_head(&mut l);
        assert_eq!(l, vec![p(9, 0b0100, 0), p(4, 0b0011, 0)]);
    }
}

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, at_join, issues, program, DIAMOND};

    #[test]
    fn the_order_decides_which_side_runs_first_and_whether_they_meet() {
        let p = program(DIAMOND);
        // By pc (and by depth, all equal here): the fall-through side first; both meet at the join.
        for order in [Priority::MinPc, Priority::Depth] {
            let t = issues(&Sorted(order), &p, 0b1111, 0b0001, 64);
            assert_lower_pc_first_then_meet(&t);
        }
        // By thread count: the larger (majority) or smaller (minority) side runs to the exit first, and
        // the sides never meet (they reach the join at different times).
        let t = issues(&Sorted(Priority::Majority), &p, 0b1111, 0b0001, 64);
        assert_eq!(at_join(&t), vec![0b1110, 0b0001]);
        let t = issues(&Sorted(Priority::Minority), &p, 0b1111, 0b0001, 64);
        assert_eq!(at_join(&t), vec![0b0001, 0b1110]);
    }
}
