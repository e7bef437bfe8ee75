//! Depth-first path traversal with minimum-pc priority (seed 003 §2.1), mechanism `minpc`.
//!
//! The warp runs one *active* path; the other paths are saved on a stack (a list of future
//! directions, not a global state as in PDOM). The seed's rules, applied after each instruction:
//! - a divergent **forward** branch pushes the target path and continues on the fall-through;
//! - a divergent **backward** branch pushes the fall-through path and continues at the target;
//! - a **uniform forward** branch whose target is greater than the top entry's pc swaps the active path
//!   with the top (the active path is saved, the top runs);
//! - when the active pc equals the top's pc (and call depth) the top is popped and merged into the active
//!   path: convergence. Likewise a saved path pushed onto an entry at the same place merges with it
//!   (the seed: convergence merges "the active path with a path of the list, or two paths of the
//!   list"), which is how block D of Figure 1b runs once.
//!
//! Every rule gives the smaller pc priority, so convergence happens where the paths meet again in code
//! layout. Beyond the seed: an indirect branch or a partial call saves its other paths by decreasing pc
//! and runs the smallest; a path whose lanes all exit is replaced by the top entry; when the active path
//! waits at a barrier (threads arrive one by one) the topmost path that can issue is swapped in.

use crate::adapters::path_list::{place, Order};
use crate::adapters::paths::{retain_live, take, Path, Taken};
use crate::adapters::per_warp::WarpCtx;
use crate::interface::counters;
use crate::interface::Done;
use crate::interface::{Counter, EntryKind, Flow};
use crate::types::{LaneMask, Pc};

/// The depth-first minimum-pc traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinPc;

counters! {
    /// Counter indices.
    pub(crate) enum MinPcCounter {
        Swaps = sum(
            "uniform_swaps",
            "uniform forward branches past the top entry that swapped the active path with it",
        ),
        Merges = sum("path_merges", "paths merged into the active path at an equal pc (convergence events)"),
    }
}

impl Order for MinPc {
    const COUNTERS: &'static [Counter] = MinPcCounter::COUNTERS;
    /// The stack, bottom first; the last path is the active one.
    const RUNS_LAST: bool = true;
    const KINDS: [EntryKind; 2] = [EntryKind::Active, EntryKind::Saved];

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn update(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let Taken { index, rest, next, .. } = take(st, pc, mask, flow, ctx.live)?;
        if let Some(r) = rest {
            // Lanes of the path that did not issue (waiting at a barrier) stay saved where they were.
            st.insert(index, r);
        }
        retain_live(st, ctx.live);
        let placed = place(st, pc, mask, flow, &next);
        ctx.count(MinPcCounter::Swaps, placed.swaps);
        ctx.count(MinPcCounter::Merges, placed.merges);
        Ok(())
    }
}

/// The registry's facts of `minpc`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "minpc",
    crate::Scope::Warp,
    "depth-first path traversal, minimum pc first (seed 003, section 2.1)",
)
.storage(crate::storage::common::PATH_LIST);

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::adapters::path_list::PathList;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&PathList(MinPc), &program(DIAMOND), 0b1111, 0b0001, 64);
        // The lowest pc first: the fall-through side (pcs 2-3) before the taken side (pc 4); the paths
        // meet at the join, whose pc is higher than both.
        assert_lower_pc_first_then_meet(&t);
    }
}
