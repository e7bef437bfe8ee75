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

use crate::adapters::path_list::{step, Order, Priority};
use crate::adapters::paths::Path;
use crate::adapters::per_warp::WarpCtx;
use crate::interface::counters;
use crate::interface::Done;
use crate::interface::{Counter, EntryKind, Flow};
use crate::types::{LaneMask, Pc};

impl Priority {
    /// The registry's facts of the path list sorted by this priority.
    pub fn info(self) -> &'static crate::Info {
        match self {
            Priority::MinPc => &MIN_PC,
            Priority::Depth => &DEPTH,
            Priority::Majority => &MAJORITY,
            Priority::Minority => &MINORITY,
        }
    }
}

counters! {
    /// Counter indices.
    pub(crate) enum SortedCounter {
        Merges = sum("path_merges", "paths merged with the list head at an equal pc (convergence events)"),
    }
}

/// A sorted path list.
#[derive(Clone, Copy, Debug)]
pub struct Sorted(pub Priority);

impl Order for Sorted {
    const COUNTERS: &'static [Counter] = SortedCounter::COUNTERS;
    /// The paths in priority order; the head runs.
    const RUNS_LAST: bool = false;
    const KINDS: [EntryKind; 2] = [EntryKind::Head, EntryKind::Path];

    fn name(&self) -> &'static str {
        self.0.info().name
    }

    fn update(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let s = step(self.0, st, pc, mask, flow, ctx.live)?;
        ctx.count(SortedCounter::Merges, s.merges);
        Ok(())
    }
}

/// The registry's facts of `sorted:minpc`.
pub(crate) const MIN_PC: crate::Info = crate::Info::new(
    "sorted:minpc",
    crate::Scope::Warp,
    "a path list sorted by minimum pc, convergence at the head (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:depth`.
pub(crate) const DEPTH: crate::Info = crate::Info::new(
    "sorted:depth",
    crate::Scope::Warp,
    "a path list sorted by call depth, then minimum pc (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:majority` (the priority, a thread count, is the mask's population:
/// no field).
pub(crate) const MAJORITY: crate::Info = crate::Info::new(
    "sorted:majority",
    crate::Scope::Warp,
    "a path list sorted by the most threads first (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

/// The registry's facts of `sorted:minority`.
pub(crate) const MINORITY: crate::Info = crate::Info::new(
    "sorted:minority",
    crate::Scope::Warp,
    "a path list sorted by the fewest threads first (seed 003, section 2.4)",
)
.storage(crate::storage::common::PATH_LIST);

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::adapters::path_list::PathList;
    use crate::testing::{assert_lower_pc_first_then_meet, at_join, issues, program, DIAMOND};

    #[test]
    fn the_order_decides_which_side_runs_first_and_whether_they_meet() {
        let p = program(DIAMOND);
        // By pc (and by depth, all equal here): the fall-through side first; both meet at the join.
        for order in [Priority::MinPc, Priority::Depth] {
            let t = issues(&PathList(Sorted(order)), &p, 0b1111, 0b0001, 64);
            assert_lower_pc_first_then_meet(&t);
        }
        // By thread count: the larger (majority) or smaller (minority) side runs to the exit first, and
        // the sides never meet (they reach the join at different times).
        let t = issues(&PathList(Sorted(Priority::Majority)), &p, 0b1111, 0b0001, 64);
        assert_eq!(at_join(&t), vec![0b1110, 0b0001]);
        let t = issues(&PathList(Sorted(Priority::Minority)), &p, 0b1111, 0b0001, 64);
        assert_eq!(at_join(&t), vec![0b0001, 0b1110]);
    }
}
