//! Per-thread pc arbitration (seed 003 §3.1), mechanism `arbiter`.
//!
//! Every thread has its own pc and call depth, kept in a table indexed by warp. Each issue, a reduction
//! tree of comparators and multiplexers over the warp's W threads selects the maximum call depth, then
//! the minimum pc among the threads at that depth, and the threads at that (pc, depth) form the issuing
//! mask. Convergence is implicit: threads at equal pc and depth issue together. This is the order of
//! `sorted:depth` (and Simty's sorted list): the same group issues at every step, which a test checks.
//!
//! Cost statistics: one selection per issued instruction; each costs `W - 1` comparisons in the tree
//! (one per node: depth, then pc) plus `W` equality comparisons that form the mask (`comparisons`).

use crate::adapters::paths::{clear_lanes, successors, Path, ThreadPcs};
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{lanes, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, MechError, Ratio, WarpCtx, WarpTracker};

/// Per-thread pc arbitration.
#[derive(Clone, Copy, Debug, Default)]
pub struct Arbiter;

counters! {
    /// Counter indices.
    pub(crate) enum ArbiterCounter {
        Selections = sum("selections", "arbitrations: one per issued instruction"),
        Comparisons = sum(
            "comparisons",
            "comparator operations: W - 1 tree nodes plus W mask equalities per selection",
        ),
    }
}

impl WarpTracker for Arbiter {
    type State = ThreadPcs;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = ArbiterCounter::COUNTERS;
    const RATIOS: &'static [Ratio] = &[Ratio {
        name: "comparisons_per_selection",
        num: "comparisons",
        den: "selections",
        doc: "comparator operations per arbitration (2W - 1)",
    }];

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> ThreadPcs {
        ThreadPcs { pc: vec![entry; 64], depth: vec![0; 64], live }
    }

    #[inline]
    fn select(&self, st: &ThreadPcs, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let cand = live & !blocked;
        let mut best: Option<(u32, Pc)> = None;
        for l in lanes(cand) {
            let (d, pc) = (st.depth[l], st.pc[l]);
            best = match best {
                Some((bd, bpc)) if bd > d || (bd == d && bpc <= pc) => Some((bd, bpc)),
                _ => Some((d, pc)),
            };
        }
        let (d, pc) = best?;
        let mask = lanes(cand).filter(|&l| st.pc[l] == pc && st.depth[l] == d).fold(0, |m, l| m | 1 << l);
        Some((pc, mask))
    }

    #[inline]
    fn straight_run(&self, st: &ThreadPcs, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // The tree picks the same lanes at the next pcs until they reach a pc where another live lane at
        // their depth waits (lanes deeper than them or at a lower pc would have been picked instead).
        clear_lanes(&st.pc, &st.depth, st.live, pc, mask, max)
    }

    fn advance(&self, st: &mut ThreadPcs, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        if mask == 0 {
            return Err(MechError::EmptyGroup);
        }
        for l in lanes(mask & ctx.live) {
            st.pc[l] = pc + n;
        }
        st.live = ctx.live;
        let (n, w) = (u64::from(n), u64::from(ctx.w));
        ctx.count(ArbiterCounter::Selections, n);
        ctx.count(ArbiterCounter::Comparisons, n * (2 * w - 1));
        Ok(())
    }

    fn update(&self, st: &mut ThreadPcs, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let Some(l0) = lanes(mask).next() else {
            return Err(MechError::EmptyGroup);
        };
        let path = Path { pc, mask, depth: st.depth[l0] };
        for p in successors(&path, mask, flow, ctx.live)? {
            for l in lanes(p.mask) {
                st.pc[l] = p.pc;
                st.depth[l] = p.depth;
            }
        }
        st.live = ctx.live;
        let w = u64::from(ctx.w);
        ctx.count(ArbiterCounter::Selections, 1);
        ctx.count(ArbiterCounter::Comparisons, 2 * w - 1);
        Ok(())
    }

    fn depth(&self, st: &ThreadPcs) -> usize {
        // Distinct (pc, depth) places of live threads: the paths the table implicitly holds.
        st.path_count(st.live)
    }

    fn entries(&self, st: &ThreadPcs) -> Vec<EntryView> {
        st.paths(st.live).iter().rev().map(|p| p.view(EntryKind::Threads)).collect()
    }
}

/// The registry's facts of `arbiter`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "arbiter",
    crate::Scope::Warp,
    "a pc per thread and a reduction tree choosing maximum depth, then minimum pc (seed 003, section 3.1)",
)
.outside_defaults()
.exports_paths()
.storage(STORAGE);

/// What `arbiter` stores (seed 003 §3.1; `reconverge cost`'s arbiter unit counts these bits): a pc and a
/// call depth per thread, the issuing warp's W entries read at once by the reduction tree every cycle.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Size};
    &[common::thread_pcs(Size::Sum(&[Size::Const(1), Size::Pc, Size::Depth]), "{valid, pc, depth}")]
};

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&Arbiter, &program(DIAMOND), 0b1111, 0b0001, 64);
        // Per-thread pcs, the minimum issues: the fall-through lanes first, then the taken lane catches
        // up, and every lane at the join issues together.
        assert_lower_pc_first_then_meet(&t);
    }
}
