//! Breadth-first path traversal (seed 003 §2.3), mechanism `breadth`.
//!
//! The path list is a queue. The path at its front runs until it takes a branch (taken, divergent,
//! a call or a return); then its successor paths go to the tail, so every path gets its turn
//! (fairness: a spinning path cannot starve the path that holds the lock). A path that joins the queue
//! at the same pc and call depth as a queued path merges with it (opportunistic convergence).
//!
//! Breadth-first order alone rarely brings paths back together, so it "still demands synchronization at
//! safe convergence points" (the seed). Our safe points: the reconvergence point (immediate
//! post-dominator) of a divergent branch **that does not leave a loop** holding it. The lanes of the
//! divergence that reach it wait there (shown in brackets in traces) until every lane of the
//! divergence has arrived or exited; then they continue as one path at the tail. Waiting at the exit of a
//! loop (a spin lock's) would make the finished lanes wait for lanes that may be waiting for them, so
//! loop exits are not safe points: lanes leaving a loop at different iterations meet only
//! opportunistically (or at an enclosing safe point). Divergences nested in a region with the same
//! safe point share its synchronisation point.

use crate::adapters::path_list::{clear_of_syncs, enqueue, BreadthState, QueueCounter};
use crate::adapters::paths::{clear_run, first_ready, issued, retain_live, skip, successors, Path};
use crate::adapters::per_warp::{advance_ends, WarpCtx, WarpTracker};
use crate::interface::Done;
use crate::interface::{BarrierMode, Counter, EntryView, Flow, Structure};
use crate::types::{LaneMask, Pc};

/// The breadth-first traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Breadth;

impl WarpTracker for Breadth {
    type State = BreadthState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = QueueCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> BreadthState {
        BreadthState { queue: vec![Path { pc: entry, mask: live, depth: 0 }], syncs: Vec::new() }
    }

    #[inline]
    fn select(&self, st: &BreadthState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.queue.iter(), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &BreadthState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Straight on, the path keeps its place in the queue: up to the next pc where another path or an
        // open synchronisation point is (a merge or a park, on the run's last instruction at the latest).
        clear_of_syncs(&st.syncs, pc, clear_run(st.queue.iter(), pc, mask, max))
    }

    fn advance(&self, st: &mut BreadthState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(&mut st.queue, pc + 1, mask, pc + n - 1))
    }

    fn update(&self, st: &mut BreadthState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let i = issued(&st.queue, pc, mask)?;
        let path = st.queue[i];
        let next = successors(&path, mask, flow, ctx.live)?;
        let rest = path.mask & !mask & ctx.live;
        let jumped = match flow {
            Flow::Next | Flow::Exit { .. } | Flow::Await { .. } => false,
            Flow::Branch { taken, .. } => taken & mask != 0,
            _ => true,
        };
        st.open(pc, mask, path.depth, flow, ctx);
        if jumped {
            st.queue.remove(i);
            if rest != 0 {
                st.queue.insert(i, Path { mask: rest, ..path });
            }
            ctx.count(QueueCounter::Rotations, 1);
            for p in next {
                if enqueue(&mut st.queue, p) {
                    ctx.count(QueueCounter::Merges, 1);
                }
            }
        } else {
            // Straight on: the path keeps its place.
            st.queue.remove(i);
            let mut at = i;
            if rest != 0 {
                st.queue.insert(at, Path { mask: rest, ..path });
                at += 1;
            }
            if let Some(&p) = next.first() {
                match st.queue.iter().position(|q| q.same_place(&p)) {
                    Some(k) => {
                        st.queue[k].mask |= p.mask;
                        ctx.count(QueueCounter::Merges, 1);
                    }
                    None => st.queue.insert(at, p),
                }
            }
        }
        retain_live(&mut st.queue, ctx.live);
        st.synchronize(ctx.live, ctx);
        Ok(())
    }

    fn depth(&self, st: &BreadthState) -> usize {
        st.queue.len() + st.syncs.len()
    }

    fn entries(&self, st: &BreadthState) -> Vec<EntryView> {
        st.entries()
    }
}

/// The registry's facts of `breadth`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "breadth",
    crate::Scope::Warp,
    "breadth-first path traversal with synchronisation at safe points (seed 003, section 2.3)",
)
.storage(STORAGE);

/// What `breadth` stores: one queue per warp holding its paths (at most W, disjoint) and its open
/// synchronisation points (fewer than W: nested divergences), which `max_paths` counts together; a kind
/// bit tells them apart.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[Part::new(
        "queue",
        Per::Warp,
        Cells::Sram,
        Size::Reached(Reach::Structure, &common::STACK_WORST),
        Size::Sum(&[Size::Const(1), common::PATH_BITS]),
        "{kind, pc, depth, mask}",
    )]
};

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{at_join, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&Breadth, &program(DIAMOND), 0b1111, 0b0001, 64);
        // Both paths are in the queue; the join is a synchronisation point both wait at.
        assert!(t.contains(&(2, 0b1110)) && t.contains(&(4, 0b0001)));
        assert_eq!(at_join(&t), vec![0b1111]);
    }
}
