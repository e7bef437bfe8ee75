//! Depth-first traversal with stack-depth minimisation (seed 003 §2.2, AMD GCN fork/join), mechanism
//! `forkjoin`.
//!
//! The compiler delimits single-entry single-exit regions: every potentially divergent branch is a
//! *fork* (the kernel's own branch, like GCN's `s_cbranch_fork`) and the region pass puts a `join` at the
//! first instruction of its reconvergence block. At run time:
//! - a fork that splits the active path pushes the path taken by the **majority** and continues on the
//!   **minority** (ties: the taken side runs first, as in GCN's pseudo-code); the first fork of a region
//!   records the region: its join, the stack depth to return to (GCN's saved CSP), and its lanes (GCN's
//!   saved EXEC); a fork nested in an open region with the same join reuses it;
//! - a path reaching the region's `join` while the stack is deeper than the saved depth is dropped and
//!   the top entry runs (no partial convergence before the join: block D of Figure 1c runs twice);
//!   when the stack is back at the saved depth the region closes and its lanes, minus those that exited,
//!   continue after the join.
//!
//! An indirect branch to several targets forks one target at a time, as GCN's waterfall loop does: the
//! smallest target group runs and the other lanes execute the branch again later.
//!
//! Running the smaller side first at least halves the active lanes at each push, so the stack never
//! holds more than log2(W) saved paths (a property test). A `join` of a region that never forked (its
//! branch was uniform) does nothing. Paths whose lanes all exit are dropped and the top entry runs.

use crate::adapters::paths::{first_ready, issued, skip, successors, Path};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, WarpCtx, WarpTracker};

/// An open fork/join region.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Region {
    /// The pc of its `join`.
    pub join: Pc,
    /// The call depth it was opened at.
    pub depth: u32,
    /// Saved paths below it (the stack depth to return to).
    pub saved: usize,
    /// The lanes that entered it.
    pub lanes: LaneMask,
}

/// The stack and the open regions of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ForkJoinState {
    /// Saved paths, bottom first, then the active path last.
    pub stack: Vec<Path>,
    /// Open regions, outermost first.
    pub regions: Vec<Region>,
}

/// The fork/join traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForkJoin;

counters! {
    /// Counter indices.
    pub(crate) enum ForkJoinCounter {
        Forks = sum("forks", "divergent branches that pushed the majority path and ran the minority"),
        JoinSwitches = sum(
            "join_switches",
            "paths that reached their region's join while others were saved (the next one ran)",
        ),
        Regions = sum("regions", "fork/join regions opened"),
    }
}

impl ForkJoinState {
    fn fork(&mut self, pc: Pc, mask: LaneMask, mut next: smallvec::SmallVec<[Path; 4]>, ctx: &mut WarpCtx<'_>) {
        let depth = next[0].depth;
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
        let open = self.regions.iter().any(|g| g.join == r && g.depth == depth && g.lanes & mask == mask);
        if !is_pseudo(r) && !open {
            let saved = self.stack.len();
            self.regions.push(Region { join: r, depth, saved, lanes: mask });
            ctx.count(ForkJoinCounter::Regions, 1);
        }
        // Majority pushed (deepest), minority runs; ties: the later (taken) side runs.
        next.sort_by_key(|p| std::cmp::Reverse(p.mask.count_ones()));
        self.stack.extend(next);
        ctx.count(ForkJoinCounter::Forks, 1);
    }

    fn join(&mut self, active: Path, ctx: &mut WarpCtx<'_>) {
        let at = self.regions.iter().rposition(|g| g.join == active.pc && g.depth == active.depth);
        let Some(k) = at else {
            // No open region here: the join does nothing.
            self.stack.push(Path { pc: active.pc + 1, ..active });
            return;
        };
        let region = self.regions[k];
        if self.stack.len() > region.saved {
            // Other paths of the region are saved: this one waits (GCN: pop the next path).
            ctx.count(ForkJoinCounter::JoinSwitches, 1);
            return;
        }
        self.regions.truncate(k);
        let lanes = region.lanes & ctx.live;
        if lanes != 0 {
            self.stack.push(Path { pc: active.pc + 1, mask: lanes, depth: active.depth });
        }
    }
}

impl WarpTracker for ForkJoin {
    type State = ForkJoinState;

    const STRUCTURE: Structure = Structure::Stack;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = ForkJoinCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> ForkJoinState {
        ForkJoinState { stack: vec![Path { pc: entry, mask: live, depth: 0 }], regions: Vec::new() }
    }

    #[inline]
    fn select(&self, st: &ForkJoinState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.stack.iter().rev(), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &ForkJoinState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Paths meet only at joins (never straight-line code): a path whose lanes all issue goes to the top
        // of the stack after its first instruction and stays there, the stack's length unchanged.
        match issued(&st.stack, pc, mask) {
            Ok(i) if st.stack[i].mask == mask => max,
            _ => 1,
        }
    }

    fn advance(&self, st: &mut ForkJoinState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(&mut st.stack, pc + 1, mask, pc + n - 1))
    }

    fn update(&self, st: &mut ForkJoinState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let i = issued(&st.stack, pc, mask)?;
        let path = st.stack.remove(i);
        let rest = path.mask & !mask & ctx.live;
        if rest != 0 {
            st.stack.insert(i, Path { mask: rest, ..path });
        }
        let active = Path { mask, ..path };
        if let Flow::Join = flow {
            st.join(active, ctx);
        } else {
            let mut next = successors(&active, mask, flow, ctx.live)?;
            if next.len() > 2 {
                // An indirect branch to several targets: like GCN's waterfall loop, the smallest target
                // group runs and the rest executes the branch again later (one binary fork per target).
                let k = (0..next.len()).min_by_key(|&k| next[k].mask.count_ones()).expect("paths");
                let small = next[k];
                let rest = next.iter().filter(|p| p.pc != small.pc).fold(0, |m, p| m | p.mask);
                next = smallvec::smallvec![Path { pc, mask: rest, depth: active.depth }, small];
            }
            match next.len() {
                0 => {}
                1 => st.stack.push(next[0]),
                _ => st.fork(pc, mask, next, ctx),
            }
        }
        st.stack.retain_mut(|p| {
            p.mask &= ctx.live;
            p.mask != 0
        });
        // A region none of whose paths is left (the last ones exited before reaching the join) closes:
        // the lanes waiting at its join go on.
        while let Some(g) = st.regions.last().copied() {
            if st.stack.len() > g.saved {
                break;
            }
            st.regions.pop();
            let lanes = g.lanes & ctx.live;
            if lanes != 0 {
                st.stack.push(Path { pc: g.join + 1, mask: lanes, depth: g.depth });
            }
        }
        Ok(())
    }

    fn depth(&self, st: &ForkJoinState) -> usize {
        // Saved paths: the stack without the active path.
        st.stack.len().saturating_sub(1)
    }

    fn entries(&self, st: &ForkJoinState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .regions
            .iter()
            .map(|g| {
                let mut e = EntryView::warp(EntryKind::Join, g.lanes, g.join, g.join);
                e.note = format!("csp={}", g.saved);
                e
            })
            .collect();
        let n = st.stack.len();
        v.extend(
            st.stack
                .iter()
                .enumerate()
                .map(|(k, p)| p.view(if k + 1 == n { EntryKind::Active } else { EntryKind::Saved })),
        );
        v
    }
}

/// The registry's facts of `forkjoin`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "forkjoin",
    crate::Scope::Warp,
    "depth-first with stack-depth minimisation: compiler fork/join regions, minority path first (AMD GCN)",
)
.pass(crate::Pass::Region(reconverge_transform::RegionPass::Join))
.storage(STORAGE);

/// What `forkjoin` stores per warp: the saved paths (GCN's PC and EXEC pairs; at most log2(W), since the
/// minority side runs first) and the open regions (each opened by a fork that saved a path, so no more
/// than the saved paths): the join pc, the stack depth to return to (GCN's CSP) and the region's lanes.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    const WORST: Size = Size::IndexBits(&Size::W);
    &[
        Part::new(
            "saved paths",
            Per::Warp,
            Cells::Sram,
            Size::Reached(Reach::Structure, &WORST),
            Size::Sum(&[Size::Pc, Size::W]),
            "{pc, exec mask}",
        ),
        Part::new(
            "open regions",
            Per::Warp,
            Cells::Sram,
            Size::Reached(Reach::Structure, &WORST),
            Size::Sum(&[Size::Pc, Size::CountBits(&WORST), Size::W]),
            "{join pc, saved depth, lanes}",
        ),
        Part::new("stack pointer", Per::Warp, Cells::FlipFlops, common::ONE, Size::CountBits(&WORST), "{top}"),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, prepared, run_warp, taking, trips, Preds, Run};
    use crate::testing::{DIAMOND, LOOP, NESTED};
    use crate::Mechanism;

    const ALL: LaneMask = 0b1111;

    /// The run of one 4-lane warp on `src` after the fork/join pass.
    fn run(src: &str, preds: Preds<'_>) -> Run {
        run_warp(&ForkJoin, &prepared(src, Mechanism::ForkJoin), ALL, preds, 64)
    }

    #[test]
    fn the_minority_runs_first_and_waits_at_the_join_for_the_majority() {
        // After the pass: @%p1 bra THEN (1), else 2-3, then 4, join (5), 6, exit 7.
        let r = run(DIAMOND, &taking(0b0001));
        let order = [(0, ALL), (1, ALL), (4, 0b0001), (5, 0b0001), (2, 0b1110), (3, 0b1110), (5, 0b1110), (6, ALL)];
        assert_eq!(r.pcs()[..8], order);
        let region = EntryView { note: "csp=0".into(), ..EntryView::warp(EntryKind::Join, ALL, 5, 5) };
        assert_eq!(r.entries[1][0], region, "the fork opened the region: its join, saved depth and lanes");
        assert_eq!(r.counters, [("forks", 1), ("join_switches", 1), ("regions", 1)]);
    }

    #[test]
    fn a_tie_runs_the_taken_side_and_a_taken_majority_is_saved() {
        let p = prepared(DIAMOND, Mechanism::ForkJoin);
        let first_after_fork = |taken| run_warp(&ForkJoin, &p, ALL, &taking(taken), 64).pcs()[2];
        assert_eq!(first_after_fork(0b0011), (4, 0b0011), "2 against 2: the taken side");
        assert_eq!(first_after_fork(0b0111), (2, 0b1000), "the fall-through lane is the minority");
    }

    #[test]
    fn nested_regions_close_innermost_first_and_paths_meet_only_at_joins() {
        // After the pass: outer branch 2 (else 3-4), inner branch 5 (else 6-7, then 8), inner join 9, 10,
        // outer join 11, 12, exit 13.
        let r = run(NESTED, &nested_preds);
        let p = r.pcs();
        // Each path reaches its join alone; the last one closes the region and every lane goes on.
        assert_eq!((at(&p, 9), at(&p, 10)), (vec![0b0001, 0b0010], vec![0b0011]));
        assert_eq!((at(&p, 11), at(&p, 12)), (vec![0b0011, 0b1100], vec![ALL]));
        assert_eq!(r.counters, [("forks", 2), ("join_switches", 2), ("regions", 2)]);
    }

    #[test]
    fn a_loop_exit_reuses_its_region_and_the_stack_stays_shallow() {
        // After the pass: LOOP 1-2, @%p1 bra LOOP (3), join (4), 5, exit 6.
        let r = run(LOOP, &trips(&[1, 2, 3, 1]));
        assert_eq!(at(&r.pcs(), 4), [0b0100, 0b0010, 0b1001], "the last lanes to leave arrive first");
        assert_eq!(at(&r.pcs(), 5), [ALL]);
        assert_eq!(r.counters, [("forks", 2), ("join_switches", 2), ("regions", 1)]);
        // Saved paths (the active one not counted): never more than log2(4).
        assert_eq!(r.sizes.iter().max(), Some(&2));
    }
}
