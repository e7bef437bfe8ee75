//! Stackless SIMT with compiler reconvergence (seed 004 §5.2), mechanisms `stackless` and
//! `stackless-dcp`.
//!
//! Every thread has its own pc and there is no divergence stack. The compiler (the region pass) puts a
//! `syncwarp` at every block seed 004's analysis proves convergent (CA+VA with the exit rule) that has a
//! divergent predecessor (node N5 of Figure 2): a barrier for the warp's live threads. Threads reconverge
//! only there: the warp waits until every live thread arrived and continues as one group.
//! - `stackless`: once in a block the analysis cannot prove convergent, threads run as independent
//!   MIMD threads (one group per thread), as on a stackless temporal-SIMT machine;
//! - `stackless-dcp`: with *dynamic convergence preservation*, threads that branch the same way stay
//!   together: groups split only where their lanes actually go different ways.
//!
//! Groups take turns (round-robin, so a spinning thread cannot starve a lock holder). Barriers count
//! threads. A warp-synchronous instruction (`shfl.sync`, `vote.sync`, ...) whose member lanes are in
//! other groups waits for them, and the group that brings the last ones executes it with all of them.

use crate::adapters::paths::{skip, successors, Path};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::program::Program;
use crate::types::{lanes, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// The groups of a warp and the threads waiting at a `syncwarp`.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct StacklessState {
    /// The groups, in turn order.
    pub groups: Vec<Path>,
    /// The group that issued last.
    pub current: usize,
    /// Lanes waiting at a `syncwarp`, per place they continue at (the instruction after it).
    pub waiting: Vec<Path>,
    /// Lanes of groups waiting at a warp-synchronous instruction for their other member lanes.
    pub awaiting: LaneMask,
}

/// Stackless SIMT, with or without dynamic convergence preservation.
#[derive(Clone, Copy, Debug)]
pub struct Stackless {
    /// Threads that branch the same way stay together.
    pub dcp: bool,
}

counters! {
    /// Counter indices.
    pub(crate) enum StacklessCounter {
        Syncs = sum("warp_syncs", "syncwarp reconvergences (every live thread of the warp arrived)"),
        Splits = sum("thread_splits", "groups split into independent threads in blocks not proven convergent"),
    }
}

impl StacklessState {
    /// Every live lane waits at one `syncwarp`: the warp continues as one group.
    fn release(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        for w in self.waiting.iter_mut() {
            w.mask &= live;
        }
        self.waiting.retain(|w| w.mask != 0);
        if let [w] = self.waiting.as_slice() {
            if live & !w.mask == 0 {
                self.groups = vec![Path { mask: live, ..*w }];
                self.current = 0;
                self.waiting.clear();
                ctx.count(StacklessCounter::Syncs, 1);
            }
        }
    }
}

impl Stackless {
    /// The common step, in place: a whole group that no other group joined issued an instruction that
    /// neither branches nor arrives at a `syncwarp`, and stays one group at the next pc (it holds one
    /// thread, or the block is proven convergent, or `dcp` keeps it together). It keeps its place in the
    /// list and the turn passes on from it: what [`WarpTracker::update`]'s general steps would do.
    /// Returns false, changing nothing, when the step is not that.
    #[inline]
    fn moves_on(&self, st: &mut StacklessState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> bool {
        if !matches!(flow, Flow::Next) || st.awaiting != 0 || mask & !ctx.live != 0 {
            return false;
        }
        let splits =
            !self.dcp && mask.count_ones() > 1 && ctx.prog.divergent.get(pc as usize).copied().unwrap_or(false);
        if splits || st.groups.iter().any(|g| g.mask & !ctx.live != 0) {
            return false;
        }
        let n = st.groups.len();
        let guess = (st.current + 1) % n.max(1);
        let holds = |g: &Path| g.pc == pc && g.mask == mask;
        let Some(i) =
            st.groups.get(guess).filter(|g| holds(g)).map(|_| guess).or_else(|| st.groups.iter().position(holds))
        else {
            return false;
        };
        st.groups[i].pc = pc + 1;
        st.current = i;
        st.release(ctx.live, ctx);
        true
    }
}

impl WarpTracker for Stackless {
    type State = StacklessState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const AWAITS_MEMBERS: bool = true;
    const ROUNDS: bool = true;
    const COUNTERS: &'static [Counter] = StacklessCounter::COUNTERS;

    fn name(&self) -> &'static str {
        if self.dcp {
            DCP.name
        } else {
            INFO.name
        }
    }

    fn init(&self, entry: Pc, live: LaneMask) -> StacklessState {
        StacklessState {
            groups: vec![Path { pc: entry, mask: live, depth: 0 }],
            current: 0,
            waiting: Vec::new(),
            awaiting: 0,
        }
    }

    fn select(&self, st: &StacklessState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let n = st.groups.len();
        let g =
            (1..=n).map(|k| st.groups[(st.current + k) % n]).find(|g| g.mask & live & !blocked & !st.awaiting != 0)?;
        if st.awaiting == 0 {
            // No group waits for members: the group issues alone (groups' lanes are disjoint).
            return Some((g.pc, g.mask & live & !blocked));
        }
        // Threads waiting at this warp-synchronous instruction for their members join the group.
        let mask = st
            .groups
            .iter()
            .filter(|h| h.same_place(&g) && (h.mask & st.awaiting != 0 || h.mask == g.mask))
            .fold(0, |m, h| m | h.mask)
            & live
            & !blocked;
        Some((g.pc, mask))
    }

    fn update(&self, st: &mut StacklessState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        if self.moves_on(st, pc, mask, flow, ctx) {
            return Ok(());
        }
        let i =
            st.groups.iter().position(|g| g.pc == pc && g.mask & mask != 0).ok_or(MechError::NotHeld("the list"))?;
        let depth = st.groups[i].depth;
        // The issued lanes may come from several groups at this place (members gathered at a
        // warp-synchronous instruction).
        let mut all = 0;
        st.groups.retain(|g| {
            let take = g.pc == pc && g.depth == depth && g.mask & mask != 0;
            if take {
                all |= g.mask;
            }
            !take
        });
        let i = i.min(st.groups.len());
        st.awaiting &= !mask;
        let path = Path { pc, mask: all, depth };
        let mut new: smallvec::SmallVec<[Path; 4]> = smallvec::SmallVec::new();
        let rest = path.mask & !mask & ctx.live;
        if rest != 0 {
            new.push(Path { mask: rest, ..path });
        }
        if let Flow::SyncWarp = flow {
            let at = Path { pc: pc + 1, mask, depth };
            match st.waiting.iter_mut().find(|w| w.same_place(&at)) {
                Some(w) => w.mask |= mask,
                None => st.waiting.push(at),
            }
        } else {
            let next = successors(&path, mask, flow, ctx.live)?;
            let independent = !self.dcp && ctx.prog.divergent.get(pc as usize).copied().unwrap_or(false);
            for p in next {
                if independent && p.mask.count_ones() > 1 {
                    ctx.count(StacklessCounter::Splits, 1);
                    new.extend(lanes(p.mask).map(|l| Path { mask: 1 << l, ..p }));
                } else {
                    new.push(p);
                }
            }
        }
        let added = new.len();
        st.groups.splice(i..i, new);
        st.groups.retain_mut(|g| {
            g.mask &= ctx.live;
            g.mask != 0
        });
        // The turn passes to the group after the ones just inserted at `i` (wrapping to the head of the
        // list): `select` looks from one past `current`.
        let n = st.groups.len();
        let next = if i + added >= n { 0 } else { i + added };
        st.current = (next + n.saturating_sub(1)) % n.max(1);
        st.release(ctx.live, ctx);
        Ok(())
    }

    fn straight_run(&self, st: &StacklessState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // A lone group that holds exactly the issuing lanes runs on (turns pass only between groups), unless
        // it would split: without dcp a group of several threads splits in a block not proven convergent,
        // which this check cannot see, so only a single thread's group runs then.
        match st.groups.as_slice() {
            [g] if g.pc == pc && g.mask == mask && (self.dcp || mask.count_ones() == 1) => max,
            _ => 1,
        }
    }

    fn advance(&self, st: &mut StacklessState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        // In between, the lone group only moves on: no split, no turn, no syncwarp arrival.
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(&mut st.groups, pc + 1, mask, pc + n - 1))
    }

    fn rotation(
        &self,
        st: &StacklessState,
        prog: &Program,
        (live, blocked): (LaneMask, LaneMask),
        out: &mut Vec<(Pc, LaneMask)>,
    ) -> bool {
        // Turns go round the list from the group after `current` when every group issues all its lanes
        // (`select` then takes each in turn and `update` moves it on in place, `moves_on`): none waits for
        // members or holds lanes that exited or wait at a barrier, and none splits at a pure instruction
        // (it holds one thread, or its block is proven convergent, or `dcp` keeps it whole). A pure
        // instruction is no `syncwarp`, so no group arrives at one.
        let n = st.groups.len();
        let ready = live & !blocked;
        let whole = |g: &Path| g.mask != 0 && g.mask & !ready == 0;
        let divergent = |pc: Pc| prog.divergent.get(pc as usize).copied().unwrap_or(true);
        let stays = |g: &Path| self.dcp || g.mask.count_ones() == 1 || !divergent(g.pc);
        if n < 2 || st.awaiting != 0 || !st.groups.iter().all(|g| whole(g) && stays(g)) {
            return false;
        }
        out.extend((1..=n).map(|k| st.groups[(st.current + k) % n]).map(|g| (g.pc, g.mask)));
        true
    }

    fn advance_rounds(&self, st: &mut StacklessState, rounds: u32, _ctx: &mut WarpCtx<'_>) -> Done {
        // Each group moved `rounds` pcs on in place; after whole rounds the turn is where it was.
        for g in st.groups.iter_mut() {
            g.pc += rounds;
        }
        Ok(())
    }

    fn await_members(&self, st: &mut StacklessState, _pc: Pc, mask: LaneMask, _missing: LaneMask) {
        st.awaiting |= mask;
    }

    fn depth(&self, st: &StacklessState) -> usize {
        st.groups.len() + st.waiting.len()
    }

    fn entries(&self, st: &StacklessState) -> Vec<EntryView> {
        let mut v = Vec::new();
        v.extend(st.waiting.iter().map(|w| EntryView::warp(EntryKind::Sync, w.mask, w.pc, w.pc)));
        v.extend(st.groups.iter().map(|g| g.view(EntryKind::ThreadGroup)));
        v
    }
}

/// The registry's facts of `stackless`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "stackless",
    crate::Scope::Warp,
    "stackless SIMT (seed 004, section 5.2): per-thread pcs, compiler syncwarp at convergent blocks",
)
.pass(crate::Pass::Region(reconverge_transform::RegionPass::SyncWarp))
.reads_divergence()
.storage(STORAGE);

/// The registry's facts of `stackless-dcp`.
pub(crate) const DCP: crate::Info = crate::Info::new(
    "stackless-dcp",
    crate::Scope::Warp,
    "stackless SIMT with dynamic convergence preservation: threads that branch alike stay together",
)
.pass(crate::Pass::Region(reconverge_transform::RegionPass::SyncWarp))
.reads_divergence()
.storage(STORAGE);

/// What `stackless` and `stackless-dcp` store: a pc, a call depth and a waiting bit (at a `syncwarp`)
/// per thread, read every cycle to form the next group; no divergence structure.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Size};
    &[common::thread_pcs(Size::Sum(&[Size::Pc, Size::Depth, Size::Const(1)]), "{pc, depth, waiting}")]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_rounds_are_turns, at, nested_preds, prepared, run_warp, taking, trips, Preds, Run};
    use crate::testing::{DIAMOND, LOOP, NESTED};
    use crate::Mechanism;

    const ALL: LaneMask = 0b1111;

    /// The run of one 4-lane warp on `src` after the syncwarp pass, with or without `dcp`.
    fn run(dcp: bool, src: &str, preds: Preds<'_>) -> Run {
        run_warp(&Stackless { dcp }, &prepared(src, Mechanism::Stackless), ALL, preds, 64)
    }

    #[test]
    fn rounds_go_round_the_groups_from_the_one_after_the_last_turn() {
        let prog = prepared(DIAMOND, Mechanism::Stackless);
        let g = |pc, mask| Path { pc, mask, depth: 0 };
        let groups = vec![g(2, 0b0001), g(3, 0b0010), g(3, 0b0100), g(4, 0b1000)];
        let st = StacklessState { groups, current: 1, waiting: Vec::new(), awaiting: 0 };
        for dcp in [false, true] {
            let mut out = Vec::new();
            assert!(Stackless { dcp }.rotation(&st, &prog, (ALL, 0), &mut out));
            assert_eq!(out, [(3, 0b0100), (4, 0b1000), (2, 0b0001), (3, 0b0010)]);
            assert_rounds_are_turns(&Stackless { dcp }, &prog, &st, ALL, 3);
        }
        // No rounds where a turn is not certain: a lane waits at a barrier, has exited, or waits for
        // members; a single group runs straight-line code on its own instead.
        let mut out = Vec::new();
        assert!(!Stackless { dcp: false }.rotation(&st, &prog, (ALL, 0b0100), &mut out));
        assert!(!Stackless { dcp: false }.rotation(&st, &prog, (0b0111, 0), &mut out));
        let awaiting = StacklessState { awaiting: 0b0001, ..st.clone() };
        assert!(!Stackless { dcp: false }.rotation(&awaiting, &prog, (ALL, 0), &mut out));
        let lone = StacklessState { groups: vec![g(2, ALL)], current: 0, waiting: Vec::new(), awaiting: 0 };
        assert!(!Stackless { dcp: true }.rotation(&lone, &prog, (ALL, 0), &mut out));
    }

    #[test]
    fn without_dcp_a_group_of_several_threads_in_a_divergent_block_has_no_rounds() {
        // It splits at its next instruction, whatever it is.
        let prog = prepared(DIAMOND, Mechanism::Stackless);
        assert!(prog.divergent[2], "the else side is not proven convergent");
        let g = |pc, mask| Path { pc, mask, depth: 0 };
        let st =
            StacklessState { groups: vec![g(2, 0b0110), g(4, 0b0001)], current: 0, waiting: Vec::new(), awaiting: 0 };
        let mut out = Vec::new();
        assert!(!Stackless { dcp: false }.rotation(&st, &prog, (0b0111, 0), &mut out));
        assert!(Stackless { dcp: true }.rotation(&st, &prog, (0b0111, 0), &mut out));
        assert_rounds_are_turns(&Stackless { dcp: true }, &prog, &st, 0b0111, 2);
    }

    #[test]
    fn groups_take_turns_and_meet_at_the_syncwarp() {
        // After the pass: @%p1 bra THEN (1), else 2-3, then 4, syncwarp (5), 6, exit 7.
        let r = run(true, DIAMOND, &taking(0b0001));
        let order = [(2, 0b1110), (4, 0b0001), (3, 0b1110), (5, 0b0001), (5, 0b1110), (6, ALL), (7, ALL)];
        assert_eq!(r.pcs()[2..], order);
        assert_eq!(r.counters, [("warp_syncs", 1), ("thread_splits", 0)]);
    }

    #[test]
    fn without_dcp_threads_of_a_divergent_block_run_alone() {
        let r = run(false, DIAMOND, &taking(0b0001));
        let p = r.pcs();
        // The else side splits into one group per thread after its first instruction.
        assert_eq!(p[2..7], [(2, 0b1110), (4, 0b0001), (3, 0b0010), (3, 0b0100), (3, 0b1000)]);
        // Each thread arrives at the syncwarp alone, in turn order, and the warp continues as one group.
        // (When the group at the head of the list leaves for the syncwarp, the group moving into its place
        // keeps its turn: a regression test for a turn once skipped there.)
        assert_eq!(at(&p, 5), [0b0001, 0b0010, 0b0100, 0b1000]);
        assert_eq!(at(&p, 6), [ALL]);
        assert_eq!(r.counters, [("warp_syncs", 1), ("thread_splits", 1)]);
    }

    #[test]
    fn lanes_that_leave_a_loop_wait_at_the_syncwarp_while_the_others_loop() {
        // After the pass: LOOP 1-2, @%p1 bra LOOP (3), syncwarp (4), 5, exit 6.
        let r = run(true, LOOP, &trips(&[1, 2, 3, 1]));
        assert_eq!(at(&r.pcs(), 4), [0b1001, 0b0010, 0b0100]);
        assert_eq!(at(&r.pcs(), 5), [ALL]);
    }

    #[test]
    fn threads_meet_only_at_a_syncwarp() {
        // After the pass: the inner join (9) lies in a block not proven convergent, so it gets no syncwarp;
        // the outer join does (10), then 11, exit 12.
        let r = run(true, NESTED, &nested_preds);
        assert_eq!(at(&r.pcs(), 9), [0b0001, 0b0010]);
        assert_eq!(at(&r.pcs(), 11), [ALL]);
    }
}
