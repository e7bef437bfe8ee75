//! Independent thread scheduling (NVIDIA Volta and later), mechanism `its`.
//!
//! Every thread has its own pc and call depth. The compiler's convergence barriers (the region pass puts
//! `bssy R` before each potentially divergent branch and `bsync R` at its reconvergence block R, where
//! `ptxas` puts `BSSY`/`BSYNC`) bring threads back together:
//! - `bssy R`: the issuing threads become *participants* of barrier R (a nested region with the same R
//!   adds its threads to the same barrier);
//! - `bsync R`: a participant becomes *blocked* at R; the barrier is *synchronised* when every live
//!   participant is blocked or *yielded*, and then cleared: the blocked threads continue together;
//!   a thread that is not a participant (or finds no active barrier R) passes;
//! - **yield** (the convergence-barrier patent's forward-progress rule): a group that has issued
//!   [`YIELD_AFTER`] instructions in a row yields: its threads count as arrived at every barrier they
//!   take part in, and the scheduler prefers another ready group of the warp next;
//! - a barrier that released while some participants had only yielded has *counted them early*: each such
//!   thread still owes that instance its `bsync`. Until it gets there it belongs to the old instance, so a
//!   `bssy R` it issues does not make it a participant of a newer instance of R that other threads opened
//!   (they looped around and reached the `bssy` first), and at its `bsync R` it passes. Without this a
//!   thread still in the last iteration of an inner loop joined the next outer iteration's barrier, blocked
//!   at its `bsync`, and waited for threads that waited for it at a `bar.sync` (the CUDA samples'
//!   `bitonicSortShared`).
//!
//! The scheduler issues one group per step: it stays on the current group (the threads that issued last,
//! lowest pc first) until its threads block (a convergence barrier, `bar.sync`, a warp-synchronous
//! instruction waiting for its members) or yield; then it picks the ready group with the deepest call
//! depth and lowest pc (after a yield: the next group in pc order, round-robin). A group's mask is every
//! ready thread at that pc and depth, so threads that meet issue together, and `activemask` returns them.
//!
//! Warp-synchronous instructions (`bar.warp.sync`, `shfl.sync`, `vote.sync`, `match.sync`, `redux.sync`)
//! wait until every named lane arrives: the executor reports missing members, the arrived threads wait
//! at the instruction, and the group that brings the last members executes it with all of them.
//! `bar.sync` counts threads.

use crate::adapters::paths::{clear_lanes, place_count, successors, Path};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{lanes, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// Instructions a group issues in a row before it yields.
pub const YIELD_AFTER: u32 = 64;

/// A convergence barrier of a warp.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ConvergenceBarrier {
    /// The reconvergence pc naming it (the `bsync`'s block).
    pub target: Pc,
    /// The call depth of its region.
    pub depth: u32,
    /// Participating threads.
    pub participants: LaneMask,
    /// Participants blocked at its `bsync`.
    pub blocked: LaneMask,
}

/// Per-thread pcs and the convergence barriers of a warp.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ItsState {
    /// The pc of each lane.
    pub pc: Vec<Pc>,
    /// The call depth of each lane.
    pub depth: Vec<u32>,
    /// Live lanes as of the last update.
    pub live: LaneMask,
    /// Lanes blocked at a convergence barrier.
    pub blocked: LaneMask,
    /// Lanes waiting at a warp-synchronous instruction for its other members.
    pub awaiting: LaneMask,
    /// Lanes that yielded (count as arrived at their barriers until those release).
    pub yielded: LaneMask,
    /// Active convergence barriers.
    pub barriers: Vec<ConvergenceBarrier>,
    /// Threads that a released barrier counted as arrived before they reached its `bsync` (they had
    /// yielded): per barrier (target and depth in `target`/`depth`, the threads in `participants`).
    pub early: Vec<ConvergenceBarrier>,
    /// The current group's lanes.
    pub current: LaneMask,
    /// Instructions the current group issued in a row.
    pub run: u32,
    /// Member waits not yet counted (counted at the next update).
    pub uncounted_awaits: u64,
}

/// Independent thread scheduling with convergence barriers.
#[derive(Clone, Copy, Debug, Default)]
pub struct Its;

counters! {
    /// Counter indices.
    pub(crate) enum ItsCounter {
        Yields = sum("yields", "groups that issued 64 instructions in a row and yielded to another group"),
        Syncs = sum("barrier_syncs", "convergence barriers synchronised (every participant blocked or yielded)"),
        BarrierWaits = sum("barrier_waits", "groups that blocked at a bsync to wait for other participants"),
        Awaits = sum("member_waits", "groups that waited at a warp-synchronous instruction for their member lanes"),
        MaxBarriers = max("max_barriers", "the most convergence barriers active at once in one warp"),
    }
}

impl ItsState {
    /// The lanes of `cand` at the place (pc, depth) of lane `l`.
    fn at_place(&self, cand: LaneMask, l: usize) -> LaneMask {
        lanes(cand).filter(|&k| self.pc[k] == self.pc[l] && self.depth[k] == self.depth[l]).fold(0, |m, k| m | 1 << k)
    }

    /// The lane of `cand` with the deepest call depth and lowest pc (lowest lane on ties).
    fn best(&self, cand: LaneMask) -> Option<usize> {
        lanes(cand).min_by_key(|&l| (std::cmp::Reverse(self.depth[l]), self.pc[l]))
    }

    /// Threads of `mask` that a released instance of barrier (`target`, `depth`) counted early.
    fn early_at(&self, target: Pc, depth: u32, mask: LaneMask) -> LaneMask {
        self.early.iter().filter(|e| e.target == target && e.depth == depth).fold(0, |m, e| m | e.participants) & mask
    }

    /// Releases every barrier whose live participants are all blocked or yielded.
    fn release(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        let yielded = self.yielded;
        let mut released = 0;
        let mut early = Vec::new();
        self.barriers.retain_mut(|b| {
            b.participants &= live;
            b.blocked &= live;
            if b.participants & !(b.blocked | yielded) == 0 {
                released |= b.blocked;
                let owed = b.participants & !b.blocked;
                if owed != 0 {
                    early.push(ConvergenceBarrier { participants: owed, blocked: 0, ..*b });
                }
                ctx.count(ItsCounter::Syncs, 1);
                false
            } else {
                true
            }
        });
        for e in early {
            match self.early.iter_mut().find(|x| x.target == e.target && x.depth == e.depth) {
                Some(x) => x.participants |= e.participants,
                None => self.early.push(e),
            }
        }
        self.early.retain_mut(|e| {
            e.participants &= live;
            e.participants != 0
        });
        self.blocked &= !released & live;
        if released != 0 {
            self.yielded &= !released;
        }
    }
}

impl WarpTracker for Its {
    type State = ItsState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const AWAITS_MEMBERS: bool = true;
    const COUNTERS: &'static [Counter] = ItsCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> ItsState {
        ItsState {
            pc: vec![entry; 64],
            depth: vec![0; 64],
            live,
            blocked: 0,
            awaiting: 0,
            yielded: 0,
            barriers: Vec::new(),
            early: Vec::new(),
            current: live,
            run: 0,
            uncounted_awaits: 0,
        }
    }

    fn select(&self, st: &ItsState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let ready = live & !blocked & !st.blocked & !st.awaiting;
        let others = ready & !st.current;
        let lead = if st.run >= YIELD_AFTER && others != 0 {
            // After a yield: the next group in pc order after the current one, round-robin.
            let cur_pc = st.best(st.current & live).map(|l| st.pc[l]).unwrap_or(0);
            lanes(others).filter(|&l| st.pc[l] > cur_pc).min_by_key(|&l| st.pc[l]).or_else(|| st.best(others))?
        } else if st.current & ready != 0 {
            st.best(st.current & ready)?
        } else {
            st.best(ready)?
        };
        // Threads waiting at a warp-synchronous instruction join the group that reaches them.
        let mask = st.at_place(ready | (st.awaiting & live & !blocked), lead);
        Some((st.pc[lead], mask))
    }

    #[inline]
    fn straight_run(&self, st: &ItsState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // The scheduler stays on the current group up to the instruction that makes it yield (the run's
        // last), or, when another group may be ready, the one after which it may turn to that group; and,
        // like `arbiter`, before any pc where another live lane at its depth waits (it would join).
        let first = if mask & st.current == 0 { 1 } else { st.run.saturating_add(1) };
        let others = st.live & !mask & !st.blocked & !st.awaiting != 0;
        let stop = if others { YIELD_AFTER } else { first.next_multiple_of(YIELD_AFTER) };
        if first >= stop {
            return 1;
        }
        clear_lanes(&st.pc, &st.depth, st.live, pc, mask, max.min(stop + 1 - first))
    }

    fn advance(&self, st: &mut ItsState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        // Between the first and the last update the group only moves on: no yield, no barrier changes.
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| {
            for l in lanes(mask) {
                st.pc[l] = pc + n - 1;
            }
            st.run += n - 2;
            Ok(())
        })
    }

    fn update(&self, st: &mut ItsState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let Some(l0) = lanes(mask).next() else {
            return Err(MechError::EmptyGroup);
        };
        let depth = st.depth[l0];
        ctx.count(ItsCounter::Awaits, std::mem::take(&mut st.uncounted_awaits));
        st.awaiting &= !mask;
        st.yielded &= !mask;
        if mask & st.current == 0 {
            st.run = 0;
        }
        st.current = mask;
        st.run += 1;
        match flow {
            Flow::Bssy { target } => {
                // Threads an earlier instance counted early still belong to it: they do not join.
                let join = mask & !st.early_at(*target, depth, mask);
                match st.barriers.iter_mut().find(|b| b.target == *target && b.depth == depth) {
                    Some(b) => b.participants |= join,
                    None if join != 0 => {
                        st.barriers.push(ConvergenceBarrier { target: *target, depth, participants: join, blocked: 0 })
                    }
                    None => {}
                }
                ctx.max(ItsCounter::MaxBarriers, st.barriers.len() as u64);
                for l in lanes(mask) {
                    st.pc[l] = pc + 1;
                }
            }
            Flow::Bsync { target } => {
                for l in lanes(mask) {
                    st.pc[l] = pc + 1;
                }
                // Threads counted early by a released instance pass its bsync (and owe it nothing more).
                let owed = st.early_at(*target, depth, mask);
                if owed != 0 {
                    for e in st.early.iter_mut().filter(|e| e.target == *target && e.depth == depth) {
                        e.participants &= !owed;
                    }
                    st.early.retain(|e| e.participants != 0);
                }
                if let Some(b) = st.barriers.iter_mut().find(|b| b.target == *target && b.depth == depth) {
                    let wait = mask & !owed & b.participants;
                    b.blocked |= wait;
                    st.blocked |= wait;
                    if wait != 0 {
                        ctx.count(ItsCounter::BarrierWaits, 1);
                    }
                }
            }
            Flow::Yield => {
                st.yielded |= mask;
                st.run = YIELD_AFTER;
                for l in lanes(mask) {
                    st.pc[l] = pc + 1;
                }
            }
            _ => {
                let path = Path { pc, mask, depth };
                for p in successors(&path, mask, flow, ctx.live)? {
                    for l in lanes(p.mask) {
                        st.pc[l] = p.pc;
                        st.depth[l] = p.depth;
                    }
                }
            }
        }
        if st.run.is_multiple_of(YIELD_AFTER) {
            st.yielded |= st.current & ctx.live & !st.blocked;
            ctx.count(ItsCounter::Yields, 1);
        }
        st.live = ctx.live;
        st.current &= ctx.live;
        st.release(ctx.live, ctx);
        Ok(())
    }

    fn await_members(&self, st: &mut ItsState, _pc: Pc, mask: LaneMask, _missing: LaneMask) {
        // The group stays at the instruction until the missing members arrive.
        st.awaiting |= mask;
        st.current &= !mask;
        st.uncounted_awaits += 1;
    }

    fn depth(&self, st: &ItsState) -> usize {
        place_count(&st.pc, &st.depth, st.live)
    }

    fn entries(&self, st: &ItsState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .barriers
            .iter()
            .map(|b| {
                let mut e = EntryView::warp(EntryKind::Barrier, b.blocked, b.target, b.target);
                e.note = format!("participants {:#x}", b.participants);
                e
            })
            .collect();
        let mut done = 0;
        for l in lanes(st.live) {
            if done >> l & 1 == 0 {
                let m = st.at_place(st.live, l);
                done |= m;
                v.push(Path { pc: st.pc[l], mask: m, depth: st.depth[l] }.view(EntryKind::Threads));
            }
        }
        v
    }
}

/// The registry's facts of `its`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "its",
    crate::Scope::Warp,
    "independent thread scheduling (Volta and later): per-thread pcs, compiler convergence barriers, yield",
)
.pass(crate::Pass::Region(reconverge_transform::RegionPass::ConvergenceBarrier))
.storage(STORAGE);

/// What `its` stores: a pc, a call depth and two state bits (blocked, yielded) per thread, read every
/// cycle to form the next group; and the warp's convergence barriers, each a participation mask (Volta's
/// 16 barrier registers B0 to B15 per warp; sized by `max_barriers` at the depth reached).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        common::thread_pcs(Size::Sum(&[Size::Pc, Size::Depth, Size::Const(2)]), "{pc, depth, blocked, yielded}"),
        Part::new(
            "convergence barriers",
            Per::Warp,
            Cells::FlipFlops,
            Size::Reached(Reach::Counter(ItsCounter::MaxBarriers.counter()), &Size::Const(16)),
            Size::W,
            "{participants}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, prepared, run_warp, taking, trips, Preds, Run};
    use crate::testing::{DIAMOND, LOOP, NESTED};
    use crate::Mechanism;

    const ALL: LaneMask = 0b1111;

    #[test]
    fn a_straight_run_stops_where_the_group_would_yield_or_meet_other_lanes() {
        let mut st = Its.init(10, ALL);
        assert_eq!(Its.straight_run(&st, 10, ALL, 100), 64, "the 64th instruction yields");
        st.run = 64;
        assert_eq!(Its.straight_run(&st, 10, ALL, 100), 64, "alone, up to the next yield (128)");
        st.run = 127;
        assert_eq!(Its.straight_run(&st, 10, ALL, 100), 1, "its next instruction yields");
        // Lanes 2 and 3 wait at pc 14: the group may turn to them once it has run 64 in a row.
        st.pc[2] = 14;
        st.pc[3] = 14;
        st.current = 0b0011;
        st.run = 50;
        assert_eq!(Its.straight_run(&st, 10, 0b0011, 100), 4, "up to pc 14, where they meet");
        st.pc[2] = 90;
        st.pc[3] = 90;
        assert_eq!(Its.straight_run(&st, 10, 0b0011, 100), 14, "the 64th in a row yields");
        st.run = 64;
        assert_eq!(Its.straight_run(&st, 10, 0b0011, 100), 1, "another group may run next");
    }

    /// The run of one warp of `live` lanes on `src` after the convergence-barrier pass.
    fn run(src: &str, live: LaneMask, preds: Preds<'_>) -> Run {
        run_warp(&Its, &prepared(src, Mechanism::Its), live, preds, 400)
    }

    #[test]
    fn both_sides_run_lowest_pc_first_and_the_barrier_reconverges_them() {
        // After the pass: bssy JOIN (1), @%p1 bra THEN (2), else 3-4, then 5, bsync JOIN (6), 7, exit 8.
        let r = run(DIAMOND, ALL, &taking(0b0001));
        let order = [(2, ALL), (3, 0b1110), (4, 0b1110), (6, 0b1110), (5, 0b0001), (6, 0b0001), (7, ALL)];
        assert_eq!(r.pcs()[2..9], order);
        let barrier =
            EntryView { note: "participants 0xf".into(), ..EntryView::warp(EntryKind::Barrier, 0b1110, 6, 6) };
        assert_eq!(r.entries[5][0], barrier, "the else side blocked at the bsync");
        let counters = [("yields", 0), ("barrier_syncs", 1), ("barrier_waits", 2), ("member_waits", 0)];
        assert_eq!(r.counters[..4], counters);
    }

    #[test]
    fn the_scheduler_picks_the_lowest_pc_whichever_side_it_is() {
        // Lane 0 alone falls through (pc 3): it runs before the three taken lanes (pc 5).
        let r = run(DIAMOND, ALL, &taking(0b1110));
        assert_eq!(r.pcs()[3..6], [(3, 0b0001), (4, 0b0001), (6, 0b0001)]);
        assert_eq!(at(&r.pcs(), 7), [ALL]);
    }

    #[test]
    fn nested_barriers_release_inner_first() {
        // After the pass: bssy JOIN (2), outer branch (3), else 4-5, bssy INNER_JOIN (6), inner branch (7),
        // else 8-9, then 10, bsync INNER_JOIN (11), 12, bsync JOIN (13), 14, exit 15.
        let r = run(NESTED, ALL, &nested_preds);
        assert_eq!((at(&r.pcs(), 12), at(&r.pcs(), 14)), (vec![0b0011], vec![ALL]));
        assert_eq!((r.counter("barrier_syncs"), r.counter("max_barriers")), (2, 2));
    }

    #[test]
    fn lanes_that_leave_a_loop_early_wait_at_its_bsync() {
        // After the pass: LOOP 1-2, bssy (3), @%p1 bra LOOP (4), bsync (5), 6, exit 7. The loop's lower pcs
        // run first; the lanes that left wait at pc 5 and the last iteration's lanes join them there.
        let r = run(LOOP, ALL, &trips(&[1, 2, 3, 1]));
        assert_eq!((at(&r.pcs(), 5), at(&r.pcs(), 6)), (vec![ALL], vec![ALL]));
        assert_eq!(r.counter("barrier_syncs"), 1);
    }

    #[test]
    fn a_group_that_runs_too_long_yields_and_its_barrier_counts_it_as_arrived() {
        // Lane 1 runs 40 iterations; after 64 instructions in a row it yields, lane 0 (waiting at the
        // bsync, pc 5) runs, and the barrier releases it without lane 1: they never meet.
        let r = run(LOOP, 0b11, &trips(&[1, 40]));
        let p = r.pcs();
        assert_eq!(p.iter().position(|&g| g == (5, 0b01)), Some(YIELD_AFTER as usize));
        assert_eq!(at(&p, 6), [0b01, 0b10]);
        assert_eq!((r.counter("barrier_syncs"), r.counter("yields")), (1, 2));
    }
}
