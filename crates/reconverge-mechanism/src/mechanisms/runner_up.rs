//! The runner-up execution position (seed 003 §2.4; US patent 9,436,473, Holm & Mansell, ARM,
//! "Scheduling program instructions with a runner-up execution position"), mechanism `runner-up`.
//!
//! The seed: "a hardware implementation for a list of two paths sorted by PC". Every thread keeps its own
//! pc and call depth (`arbiter`'s table, [`ThreadPcs`]); two registers remember two places of the list
//! sorted by pc:
//! - the **current execution position**: the place whose threads issue (all the warp's threads there);
//! - the **runner-up**: the smallest place among the threads not at the current position.
//!
//! A *place* is a pc and a call depth, ordered by pc (the patent orders by pc only), then deeper first:
//! threads at one pc but different call depths (recursion) are different groups, as `arbiter` keeps them,
//! and the deeper one runs first. Convergence is implicit: threads at one place issue together.
//!
//! After an update, the branch unit's outcome (the places the issued threads went to) is compared with the
//! runner-up:
//! - if the smallest new place comes before the runner-up, it is the new current position and the
//!   runner-up becomes the smaller of the old runner-up and the other new place, if the group diverged
//!   (`runner_up_replacements` when that changes it): no scan;
//! - otherwise (the group's new pc passed or reached the runner-up, or the group exited) the runner-up is
//!   **promoted** to the current position (`runner_up_promotions`; `runner_up_merges` when the group
//!   arrived exactly there) and a new runner-up must be found by **scanning** the thread pcs: a comparator
//!   tree over the W pcs, ⌈log2 W⌉ levels, so the warp waits ⌈log2 W⌉ cycles before it issues again
//!   (`runner_up_scans`, charged in timed runs).
//!
//! A group that waits at a barrier cannot issue: the runner-up's threads issue instead, and if they wait
//! too, the smallest place with threads that can issue (found by a scan, counted at the update that
//! follows, which rebuilds both registers).
//!
//! Ordering by pc alone means threads in different functions are ordered by where the functions are laid
//! out: the kernel comes first, so after a call that only some threads take, the threads that stay in the
//! kernel run on (their pcs are lower) until they exit or wait at a barrier, and the callers run the
//! callee afterwards: the two groups meet again only if the callers catch up in the kernel. The seed makes
//! the point: the minimum pc "is unable to arbitrate between threads running different functions".

use crate::adapters::paths::{clear_lanes, successors, Path, ThreadPcs};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{lanes, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, Delay, EntryView, Flow, MechError, WarpCtx, WarpTracker};
use smallvec::SmallVec;
use std::cmp::Reverse;

/// A place of the path list: a pc and a call depth.
pub type Place = (Pc, u32);

/// The order of places: lower pc first, then deeper call depth.
#[inline]
fn key(p: Place) -> (Pc, Reverse<u32>) {
    (p.0, Reverse(p.1))
}

/// The per-thread pcs and the two registers of a warp.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RunnerUpState {
    /// Every thread's pc and call depth.
    pub threads: ThreadPcs,
    /// The current execution position (`None` once every thread exited).
    pub current: Option<Place>,
    /// The runner-up: the smallest place among the threads not at the current position (`None` when
    /// every live thread is there).
    pub runner_up: Option<Place>,
}

/// The runner-up execution position.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunnerUp;

counters! {
    /// Counter indices.
    pub(crate) enum RunnerUpCounter {
        Scans = sum("runner_up_scans", "scans of the thread pcs for a new runner-up (ceil(log2 W) cycles each)"),
        Promotions = sum("runner_up_promotions", "times the runner-up became the current execution position"),
        Merges = sum("runner_up_merges", "promotions where the current group arrived at the runner-up: they merged"),
        Replacements = sum(
            "runner_up_replacements",
            "divergences that put one of their paths in the runner-up register",
        ),
    }
}

/// The cycles of one scan: a comparator tree over `w` pcs has ⌈log2 w⌉ levels.
#[inline]
pub(crate) fn scan_cycles(w: u32) -> u32 {
    w.max(1).next_power_of_two().trailing_zeros()
}

impl RunnerUpState {
    /// The live lanes at place `p`.
    #[inline]
    fn at(&self, p: Place) -> LaneMask {
        lanes(self.threads.live)
            .filter(|&l| self.threads.pc[l] == p.0 && self.threads.depth[l] == p.1)
            .fold(0, |m, l| m | 1 << l)
    }

    /// The smallest place of the lanes `mask` other than `not`, if any (one pass of the comparator tree).
    #[inline]
    fn smallest(&self, mask: LaneMask, not: Option<Place>) -> Option<Place> {
        lanes(mask)
            .map(|l| (self.threads.pc[l], self.threads.depth[l]))
            .filter(|&p| Some(p) != not)
            .min_by_key(|&p| key(p))
    }

    /// Rebuilds both registers from the thread pcs.
    fn scan(&mut self) {
        self.current = self.smallest(self.threads.live, None);
        self.runner_up = self.smallest(self.threads.live, self.current);
    }

    /// How many distinct places the live threads are at ([`RunnerUpState::places`]'s length, without
    /// sorting: threads are usually at a few places).
    #[inline]
    fn place_count(&self) -> usize {
        self.threads.path_count(self.threads.live)
    }

    /// The distinct places of the live threads, in order.
    fn places(&self) -> SmallVec<[Place; 32]> {
        let mut v: SmallVec<[Place; 32]> =
            lanes(self.threads.live).map(|l| (self.threads.pc[l], self.threads.depth[l])).collect();
        v.sort_unstable_by_key(|&p| key(p));
        v.dedup();
        v
    }
}

impl WarpTracker for RunnerUp {
    type State = RunnerUpState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = RunnerUpCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> RunnerUpState {
        let threads = ThreadPcs { pc: vec![entry; 64], depth: vec![0; 64], live };
        RunnerUpState { threads, current: (live != 0).then_some((entry, 0)), runner_up: None }
    }

    #[inline]
    fn select(&self, st: &RunnerUpState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let ready = live & !blocked;
        for p in [st.current, st.runner_up].into_iter().flatten() {
            let m = st.at(p) & ready;
            if m != 0 {
                return Some((p.0, m));
            }
        }
        // Both registers' threads wait at a barrier: the smallest place with threads that can issue.
        let p = st.smallest(ready, None)?;
        Some((p.0, st.at(p) & ready))
    }

    #[inline]
    fn straight_run(&self, st: &RunnerUpState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // The current position's threads, all of them, move on without a scan while their new place comes
        // before the runner-up: up to the runner-up's pc (where they may merge on the run's last
        // instruction), and before any other live thread at their depth.
        let Some(l0) = lanes(mask).next() else { return 1 };
        let here = (pc, st.threads.depth[l0]);
        if st.current != Some(here) {
            return 1;
        }
        let max = match st.runner_up {
            Some((r, _)) if r > pc => max.min(r - pc),
            Some(_) => return 1,
            None => max,
        };
        clear_lanes(&st.threads.pc, &st.threads.depth, st.threads.live, pc, mask, max)
    }

    fn advance(&self, st: &mut RunnerUpState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        // The middle updates each move the group and the current position one pc on, and count nothing.
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| {
            for l in lanes(mask) {
                st.threads.pc[l] = pc + n - 1;
            }
            if let Some(c) = st.current.as_mut() {
                c.0 = pc + n - 1;
            }
            Ok(())
        })
    }

    fn update(&self, st: &mut RunnerUpState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let Some(l0) = lanes(mask).next() else {
            return Err(MechError::EmptyGroup);
        };
        let issued = (pc, st.threads.depth[l0]);
        let next = successors(&Path { pc, mask, depth: issued.1 }, mask, flow, ctx.live)?;
        for p in &next {
            for l in lanes(p.mask) {
                st.threads.pc[l] = p.pc;
                st.threads.depth[l] = p.depth;
            }
        }
        st.threads.live = ctx.live;
        // The places the issued group went to, and its place if some of its threads did not issue.
        let mut new: SmallVec<[Place; 4]> = next.iter().map(|p| (p.pc, p.depth)).collect();
        if st.at(issued) & !mask != 0 {
            new.push(issued);
        }
        new.sort_unstable_by_key(|&p| key(p));
        let r = st.runner_up;
        match new.first() {
            Some(&first) if st.current == Some(issued) && r.is_none_or(|r| key(first) < key(r)) => {
                // The branch unit's outcome beats the runner-up: no scan.
                st.current = Some(first);
                st.runner_up = new.get(1).copied().into_iter().chain(r).min_by_key(|&p| key(p));
                if st.runner_up != r {
                    ctx.count(RunnerUpCounter::Replacements, 1);
                }
            }
            _ if st.current == Some(issued) && r.is_none() => {
                // Every thread of the warp exited.
                st.current = None;
            }
            first => {
                if st.current == Some(issued) {
                    ctx.count(RunnerUpCounter::Promotions, 1);
                    if first.copied() == r {
                        ctx.count(RunnerUpCounter::Merges, 1);
                    }
                }
                st.scan();
                ctx.count(RunnerUpCounter::Scans, 1);
                let cycles = scan_cycles(ctx.w);
                if cycles > 0 {
                    ctx.delay = Some(Delay::Cycles { cycles });
                }
            }
        }
        Ok(())
    }

    fn depth(&self, st: &RunnerUpState) -> usize {
        st.place_count()
    }

    fn entries(&self, st: &RunnerUpState) -> Vec<EntryView> {
        // Bottom first: the other places (largest first), the runner-up, then the current position.
        let mut v: Vec<EntryView> = Vec::new();
        for &p in st.places().iter().rev().filter(|&&p| Some(p) != st.current) {
            let kind = if Some(p) == st.runner_up { EntryKind::RunnerUp } else { EntryKind::Threads };
            v.push(Path { pc: p.0, mask: st.at(p), depth: p.1 }.view(kind));
        }
        if let Some(p) = st.current {
            let m = st.at(p);
            if m != 0 {
                v.push(Path { pc: p.0, mask: m, depth: p.1 }.view(EntryKind::Current));
            }
        }
        v
    }
}

/// The registry's facts of `runner-up`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "runner-up",
    crate::Scope::Warp,
    "per-thread pcs with current and runner-up execution position registers (seed 003, section 2.4)",
)
.storage(STORAGE);

/// What `runner-up` stores: a pc and a call depth per thread (flip-flops: the scan reads the warp's W
/// entries at once) and, per warp, the two position registers.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[
        common::thread_pcs(Size::Sum(&[Size::Const(1), Size::Pc, Size::Depth]), "{valid, pc, depth}"),
        Part::new(
            "position registers",
            Per::Warp,
            Cells::FlipFlops,
            Size::Const(2),
            Size::Sum(&[Size::Const(1), Size::Pc, Size::Depth]),
            "{valid, pc, depth}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, run_warp, taking, trips, DIAMOND, LOOP};
    use crate::{PathList, Priority, Sorted};

    #[test]
    fn a_straight_run_stops_at_the_runner_up() {
        let mut st = RunnerUp.init(10, 0b1111);
        assert_eq!(RunnerUp.straight_run(&st, 10, 0b1111, 50), 50, "no runner-up");
        st.threads.pc[3] = 16;
        st.runner_up = Some((16, 0));
        assert_eq!(RunnerUp.straight_run(&st, 10, 0b0111, 50), 6, "pcs 10 to 15, promoting at 16");
        assert_eq!(RunnerUp.straight_run(&st, 10, 0b0011, 50), 1, "lane 2 would stay behind");
        st.current = Some((16, 0));
        assert_eq!(RunnerUp.straight_run(&st, 10, 0b0111, 50), 1, "not the current position");
    }

    #[test]
    fn the_diamond_example() {
        let t = issues(&RunnerUp, &program(DIAMOND), 0b1111, 0b0001, 64);
        assert_lower_pc_first_then_meet(&t);
    }

    #[test]
    fn it_issues_in_minimum_pc_order_and_scans_only_when_the_runner_up_is_promoted() {
        // The diamond: the divergence puts the taken side (pc 4) in the runner-up register without a scan;
        // the fall-through side's jump to the join (pc 5) passes it: promotion and scan; the taken side
        // falls into the join, where the others wait: promotion, merge, scan.
        let r = run_warp(&RunnerUp, &program(DIAMOND), 0b1111, &taking(0b0001), 64);
        assert_eq!(r.counter("runner_up_replacements"), 1);
        assert_eq!(r.counter("runner_up_promotions"), 2);
        assert_eq!(r.counter("runner_up_merges"), 1);
        assert_eq!(r.counter("runner_up_scans"), 2);
        // A loop whose lanes leave in different iterations issues what a list sorted by pc issues.
        let p = program(LOOP);
        let n = [1, 3, 2, 5, 4, 4, 1, 2];
        let a = run_warp(&RunnerUp, &p, 0xff, &trips(&n), 500);
        assert_eq!(a.pcs(), run_warp(&PathList(Sorted(Priority::MinPc)), &p, 0xff, &trips(&n), 500).pcs());
        // Looping lanes stay ahead of the runner-up (the loop exit), and lanes that leave join its place,
        // with no scan; one scan when the last ones leave.
        assert_eq!(a.counter("runner_up_scans"), 1);
        assert_eq!(a.counter("runner_up_merges"), 1);
    }

    #[test]
    fn a_scan_costs_a_comparator_tree_s_depth() {
        assert_eq!([1, 2, 4, 8, 32, 64].map(scan_cycles), [0, 1, 2, 3, 5, 6]);
        assert_eq!(scan_cycles(3), 2);
        let p = program(DIAMOND);
        let mut st = RunnerUp.init(0, 0b11);
        let mut counters = [0u64; 4];
        let mut ctx = WarpCtx { prog: &p, live: 0b11, w: 32, counters: &mut counters, cycle: Some(1), delay: None };
        RunnerUp.update(&mut st, 0, 0b11, &Flow::Next, &mut ctx).expect("straight on");
        assert_eq!((ctx.delay, st.current, st.runner_up), (None, Some((1, 0)), None));
        // The group splits: the taken lane's place goes to the runner-up register, with no scan; then the
        // other lane exits: the runner-up is promoted and a scan finds nothing behind it.
        RunnerUp.update(&mut st, 1, 0b11, &Flow::Branch { target: 4, taken: 0b01 }, &mut ctx).expect("splits");
        assert_eq!((st.current, st.runner_up), (Some((2, 0)), Some((4, 0))));
        ctx.live = 0b01;
        RunnerUp.update(&mut st, 2, 0b10, &Flow::Exit { lanes: 0b10 }, &mut ctx).expect("exits");
        assert_eq!((st.current, st.runner_up), (Some((4, 0)), None));
        assert_eq!(ctx.delay, Some(Delay::Cycles { cycles: 5 }), "a scan of 32 pcs");
        assert_eq!(counters[RunnerUpCounter::Scans as usize], 1);
    }

    #[test]
    fn threads_at_one_pc_and_different_depths_are_different_groups() {
        let mut st = RunnerUp.init(0, 0b11);
        st.threads.depth[1] = 1;
        st.scan();
        // The deeper thread first.
        assert_eq!((st.current, st.runner_up), (Some((0, 1)), Some((0, 0))));
        assert_eq!(RunnerUp.select(&st, 0b11, 0), Some((0, 0b10)));
        assert_eq!(RunnerUp.select(&st, 0b11, 0b10), Some((0, 0b01)), "the deeper one waits at a barrier");
        assert_eq!(RunnerUp.depth(&st), 2);
        let kinds: Vec<EntryKind> = RunnerUp.entries(&st).iter().map(|e| e.kind).collect();
        assert_eq!(kinds, [EntryKind::RunnerUp, EntryKind::Current]);
    }
}
