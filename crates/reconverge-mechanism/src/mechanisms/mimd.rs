//! The MIMD upper bound (Fung, Sham, Yuan & Aamodt, MICRO 2007; GPGPU-Sim 2.x's `shader_fetch_mimd`),
//! mechanism `mimd`: not a reconvergence mechanism but the ideal a mechanism is measured against.
//!
//! Every thread has its own pc and call depth and runs on its own: there is no reconvergence structure,
//! and no thread ever waits for another except at `bar.sync` and at a warp-synchronous instruction whose
//! member lanes are elsewhere. The threads of a warp that happen to be at one *place* (pc and call depth)
//! form a *group*, the unit that issues; every group is an issue context of its warp (one of up to
//! [`GROUPS_PER_WARP`] slots), issuable by itself with its own scoreboard (a group waits only for its own
//! lanes). The per-thread pc table is kept grouped by place (a thread's pc is its group's pc), so a group's
//! lanes are at hand without a scan of the warp:
//! - after a group issues, its lanes go where the instruction sends them ([`successors`]); lanes reaching a
//!   place another group of the warp holds join it (`merges`), so threads that meet issue together again;
//!   the first new place keeps the issuing slot (its instruction buffer holds the fall-through), other
//!   places take free slots;
//! - `bar.sync` counts threads: lanes at a barrier wait by themselves, the warp's other groups issue on;
//! - a warp-synchronous instruction (`shfl.sync`, `vote.sync`, ...) whose live member lanes are elsewhere
//!   holds its group until they reach its place (and join the group), which then executes it with them;
//! - fairness: every group is an issue context, so the drivers' turn taking (round robin over contexts in
//!   functional mode, the scheduler's policy in the timing model) gives every group its turns, and a
//!   spinning group cannot starve a lock holder of its own warp.
//!
//! **In the timing model** `mimd` declares [`Tracker::LANE_PACKED`]: a scheduler issues, in one cycle,
//! several ready groups (of any of its warps, in its policy's order after the last issued) while their
//! active lanes sum to at most the warp size W and they go to one functional unit, which they occupy once
//! as one warp instruction would (GPGPU-Sim 2.x's idealisation: the same issue width, any pcs). Everything
//! else (latencies, caches, the memory system, the front end) is the simulated GPU's. `packed_issues`
//! counts the groups that issued in the same cycle as an earlier group of their warp.

use crate::adapters::paths::{successors, Path};
use crate::interface::counters;
use crate::interface::Done;
use crate::program::Program;
use crate::tracker::{Blocked, Counter, CtaView, Group, LaneMap, Peek, Position, PositionState, Tracker, UpdateCtx};
use crate::types::{LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError};

/// Issue contexts per static warp: at most one group per thread of the largest warp.
pub const GROUPS_PER_WARP: u32 = 64;

/// The groups of one warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct MimdWarp {
    /// Group slots (issue contexts): each live lane is in exactly one group, and no two groups are at one
    /// place.
    pub groups: Vec<Option<Path>>,
    /// Lanes waiting at a warp-synchronous instruction for their other member lanes.
    pub awaiting: LaneMask,
    /// The timing model's cycle of the warp's last issue (for `packed_issues`).
    pub last_issue: Option<u64>,
}

/// The groups of every static warp of a CTA.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct MimdCta {
    /// Per static warp.
    pub warps: Vec<MimdWarp>,
}

/// The MIMD bound: a pc per thread, every group of a warp issuable.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mimd;

counters! {
    /// Counter indices.
    pub(crate) enum MimdCounter {
        MaxGroups = max("max_groups", "the most groups (distinct pc and call depth) one warp held at once"),
        Merges = sum("merges", "groups of lanes that reached a place another group of their warp held and joined it"),
        Packed = cycles(
            "packed_issues",
            "groups issued in the same cycle as an earlier group of their warp (lane-packed issue, timed runs)",
        ),
    }
}

impl MimdWarp {
    /// A warp whose `live` lanes start at `entry`.
    fn new(entry: Pc, live: LaneMask) -> MimdWarp {
        let mut groups = Vec::with_capacity(8);
        if live != 0 {
            groups.push(Some(Path { pc: entry, mask: live, depth: 0 }));
        }
        MimdWarp { groups, awaiting: 0, last_issue: None }
    }

    /// Groups held.
    fn count(&self) -> usize {
        self.groups.iter().flatten().count()
    }

    /// Puts path `p` where it belongs: into the group already at its place, else into slot `home` when it
    /// is free, else into the first free slot. Returns whether it merged.
    fn place(&mut self, p: Path, home: usize) -> bool {
        if let Some(g) = self.groups.iter_mut().flatten().find(|g| g.same_place(&p)) {
            g.mask |= p.mask;
            return true;
        }
        let free = if self.groups.get(home).is_some_and(Option::is_none) {
            Some(home)
        } else {
            self.groups.iter().position(Option::is_none)
        };
        match free {
            Some(k) => self.groups[k] = Some(p),
            None => self.groups.push(Some(p)),
        }
        false
    }

    /// Drops the lanes not in `live` and the groups left empty.
    fn retain_live(&mut self, live: LaneMask) {
        for s in self.groups.iter_mut() {
            if let Some(g) = s {
                g.mask &= live;
                if g.mask == 0 {
                    *s = None;
                }
            }
        }
        while self.groups.last().is_some_and(Option::is_none) {
            self.groups.pop();
        }
        self.awaiting &= live;
    }
}

/// The static warp and group slot of issue context `ctx`.
#[inline]
fn split(ctx: u32) -> (usize, usize) {
    ((ctx / GROUPS_PER_WARP) as usize, (ctx % GROUPS_PER_WARP) as usize)
}

impl Tracker for Mimd {
    type Sm = ();
    type Cta = MimdCta;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const AWAITS_MEMBERS: bool = true;
    const LANE_PACKED: bool = true;
    const COUNTERS: &'static [Counter] = MimdCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn new_sm(&self, _prog: &Program, _launch: &crate::launch::LaunchConfig) {}

    fn contexts(&self, nwarps: u32, _nthreads: u32) -> u32 {
        nwarps * GROUPS_PER_WARP
    }

    fn occupied(&self, _sm: &(), st: &MimdCta, _contexts: u32, out: &mut Vec<u32>) {
        for (w, warp) in st.warps.iter().enumerate() {
            let base = w as u32 * GROUPS_PER_WARP;
            out.extend(warp.groups.iter().enumerate().filter(|g| g.1.is_some()).map(|(k, _)| base + k as u32));
        }
    }

    fn launch(&self, _sm: &mut (), _cta: u32, view: &CtaView<'_>, entry: Pc) -> MimdCta {
        MimdCta { warps: view.live.iter().map(|&m| MimdWarp::new(entry, m)).collect() }
    }

    fn hw_warp(&self, _st: &MimdCta, ctx: u32) -> u32 {
        ctx / GROUPS_PER_WARP
    }

    fn peek(&self, _sm: &(), st: &MimdCta, view: &CtaView<'_>, ctx: u32) -> Peek {
        let (w, k) = split(ctx);
        let Some(warp) = st.warps.get(w) else { return Peek::Empty };
        let Some(g) = warp.groups.get(k).copied().flatten() else { return Peek::Empty };
        let (live, blocked) = (view.live[w], view.blocked[w]);
        let lanes = g.mask & live;
        let mask = lanes & !blocked;
        if mask & !warp.awaiting != 0 {
            // Lanes waiting here for their members issue with the ones that brought them.
            Peek::Ready(Group { ctx, pc: g.pc, mask, lanes: LaneMap::warp(w as u32, view.w), hold: lanes, prio: 0 })
        } else if lanes & blocked != 0 {
            Peek::Blocked(Blocked::Barrier)
        } else if mask != 0 {
            Peek::Blocked(Blocked::Mechanism)
        } else {
            Peek::Empty
        }
    }

    fn update(&self, _sm: &mut (), st: &mut MimdCta, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let (w, k) = split(group.ctx);
        let warp = st.warps.get_mut(w).ok_or(MechError::EmptyContext("warp", group.ctx))?;
        let g = warp.groups.get(k).copied().flatten().ok_or(MechError::InvalidSlot("group"))?;
        if g.pc != group.pc || group.mask & !g.mask != 0 || group.mask == 0 {
            return Err(MechError::NotHeld("the warp's groups"));
        }
        let live = u.view.live[w];
        warp.groups[k] = None;
        warp.awaiting &= !group.mask;
        let rest = g.mask & !group.mask & live;
        if rest != 0 {
            warp.groups[k] = Some(Path { mask: rest, ..g });
        }
        let mut merges = 0;
        for p in successors(&g, group.mask, flow, live)? {
            merges += u64::from(warp.place(p, k));
        }
        warp.retain_live(live);
        if let Some(c) = u.cycle {
            if warp.last_issue == Some(c) {
                u.count(MimdCounter::Packed, 1);
            }
            warp.last_issue = Some(c);
        }
        let n = warp.count();
        u.count(MimdCounter::Merges, merges);
        u.max(MimdCounter::MaxGroups, n as u64);
        u.size = n;
        Ok(())
    }

    fn straight_run(&self, _sm: &(), st: &MimdCta, _view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        // Up to the next place another group of the warp holds (where the lanes would merge, on the run's
        // last instruction at the latest), and only when every lane of the group issues.
        let (w, k) = split(group.ctx);
        let Some(warp) = st.warps.get(w) else { return 1 };
        let Some(me) = warp.groups.get(k).copied().flatten() else { return 1 };
        if me.mask != group.mask || me.pc != group.pc {
            return 1;
        }
        let ahead = warp.groups.iter().flatten().filter(|g| g.depth == me.depth && g.pc > me.pc);
        ahead.fold(max, |n, g| n.min(g.pc - me.pc)).max(1)
    }

    fn await_members(&self, _sm: &mut (), st: &mut MimdCta, group: &Group, _lanes: LaneMask) {
        if let Some(warp) = st.warps.get_mut(split(group.ctx).0) {
            warp.awaiting |= group.mask;
        }
    }

    fn entries(&self, _sm: &(), st: &MimdCta, ctx: u32) -> Vec<EntryView> {
        let Some(warp) = st.warps.get(split(ctx).0) else { return Vec::new() };
        let mut v: Vec<EntryView> = warp.groups.iter().flatten().map(|g| g.view(EntryKind::Threads)).collect();
        v.sort_by_key(|e| e.pc);
        v
    }

    fn positions(&self, _sm: &(), st: &MimdCta, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for (w, warp) in st.warps.iter().enumerate() {
            let (live, blocked) = (view.live[w], view.blocked[w]);
            for g in warp.groups.iter().flatten() {
                let lanes = g.mask & live;
                if lanes == 0 {
                    continue;
                }
                let state = if lanes & blocked != 0 {
                    PositionState::AtBarrier
                } else if lanes & warp.awaiting != 0 {
                    PositionState::AwaitingMembers
                } else {
                    PositionState::Issuing
                };
                out.push(Position { warp: w as u32, lanes, pc: g.pc, state });
            }
        }
        out
    }
}

/// The registry's facts of `mimd`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "mimd",
    crate::Scope::Warp,
    "an upper bound, not a mechanism: every thread its own pc; a cycle fills W lanes from any pcs (Fung et al., MICRO 2007)",
)
.storage(STORAGE);

/// What `mimd` stores, as an ideal bound: a pc and a call depth per thread (the issue contexts, one per
/// group, are the scheduler's and not counted).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Size};
    &[common::thread_pcs(Size::Sum(&[Size::Pc, Size::Depth]), "{pc, depth}")]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_cta, taking, trips, Pick, DIAMOND, LOOP, NESTED};

    const ALL: LaneMask = 0b1111;

    /// An update of warp 0's group `g` with `flow`, the warp's live lanes `live` after it; returns the
    /// counters.
    fn update(st: &mut MimdCta, g: &Group, flow: &Flow, live: LaneMask, cycle: Option<u64>, c: &mut [u64; 3]) {
        let prog = program(DIAMOND);
        let (lv, blocked) = ([live], [0]);
        let mut delayed = Vec::new();
        let mut u = UpdateCtx {
            prog: &prog,
            cta: 0,
            view: CtaView { live: &lv, blocked: &blocked, w: 4 },
            barrier: false,
            released: false,
            cycle,
            size: 0,
            delay: None,
            delayed: &mut delayed,
            counters: c,
            branches: &mut [],
            per_branch: 0,
            branch: None,
        };
        Mimd.update(&mut (), st, g, flow, &mut u).expect("mimd holds the group");
    }

    /// The ready group of context `ctx` of one 4-lane warp with `live` and `blocked` lanes.
    fn peek(st: &MimdCta, ctx: u32, live: LaneMask, blocked: LaneMask) -> Peek {
        Mimd.peek(&(), st, &CtaView { live: &[live], blocked: &[blocked], w: 4 }, ctx)
    }

    fn ready(p: Peek) -> Group {
        match p {
            Peek::Ready(g) => g,
            other => panic!("not ready: {other:?}"),
        }
    }

    fn start(pc: Pc) -> MimdCta {
        MimdCta { warps: vec![MimdWarp::new(pc, ALL)] }
    }

    #[test]
    fn a_divergent_branch_makes_two_groups_both_issuable_and_they_merge_at_one_pc() {
        let mut st = start(1);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Branch { target: 4, taken: 0b0001 }, ALL, None, &mut c);
        // Fall-through lanes keep slot 0, the taken lane gets slot 1: both are ready at once.
        let (a, b) = (ready(peek(&st, 0, ALL, 0)), ready(peek(&st, 1, ALL, 0)));
        assert_eq!((a.pc, a.mask, a.hold), (2, 0b1110, 0b1110));
        assert_eq!((b.pc, b.mask, b.hold), (4, 0b0001, 0b0001));
        assert_eq!(Mimd.hw_warp(&st, 1), 0, "both groups belong to warp 0's scheduler");
        let mut occ = Vec::new();
        Mimd.occupied(&(), &st, 64, &mut occ);
        assert_eq!(occ, [0, 1]);
        // The taken lane reaches pc 5 first and waits for nobody; the others join it when they get there.
        update(&mut st, &b, &Flow::Next, ALL, None, &mut c);
        assert_eq!(ready(peek(&st, 1, ALL, 0)).pc, 5);
        update(&mut st, &a, &Flow::Next, ALL, None, &mut c);
        let a = ready(peek(&st, 0, ALL, 0));
        update(&mut st, &a, &Flow::Branch { target: 5, taken: 0b1110 }, ALL, None, &mut c);
        assert_eq!(ready(peek(&st, 1, ALL, 0)).mask, ALL, "merged at pc 5");
        assert_eq!(peek(&st, 0, ALL, 0), Peek::Empty);
        assert_eq!(c, [2, 1, 0], "max_groups, merges, packed_issues");
    }

    #[test]
    fn nobody_waits_at_the_join() {
        // The lowest slot runs to its exit before the taken lane moves: the join runs twice.
        let r = run_cta(&Mimd, &program(DIAMOND), &[ALL], 4, &taking(0b0001), Pick::Lowest, 64);
        let order = [(0, 2, 0b1110), (0, 3, 0b1110), (0, 5, 0b1110), (0, 6, 0b1110), (1, 4, 1), (1, 5, 1), (1, 6, 1)];
        assert_eq!(r.ctx_pcs()[2..], order);
        // Round robin interleaves the two groups; they never reach the join together.
        let r = run_cta(&Mimd, &program(DIAMOND), &[ALL], 4, &taking(0b0001), Pick::RoundRobin, 64);
        let order = [(1, 4, 1), (0, 2, 0b1110), (1, 5, 1), (0, 3, 0b1110), (1, 6, 1), (0, 5, 0b1110), (0, 6, 0b1110)];
        assert_eq!(r.ctx_pcs()[2..], order);
        assert_eq!((r.counter("max_groups"), r.counter("merges")), (2, 0));
    }

    #[test]
    fn threads_that_happen_to_meet_issue_together() {
        // Nested diamonds, round robin: three groups; lanes 2-3 reach the outer join (pc 10) while lane 0
        // is there and join it; lane 1 arrives later and runs it alone.
        let r = run_cta(&Mimd, &program(NESTED), &[ALL], 4, &nested_preds, Pick::RoundRobin, 64);
        let order = [(1, 5, 0b0011), (2, 8, 0b0001), (0, 3, 0b1100), (1, 6, 0b0010), (2, 9, 0b0001)];
        assert_eq!(r.ctx_pcs()[3..8], order);
        assert_eq!(at(&r.pcs(), 10), [0b1101, 0b0010]);
        assert_eq!((r.counter("max_groups"), r.counter("merges")), (3, 1));
        // A loop: lanes 0 and 3 leave first and run to the exit; lane 1 leaves next and waits for no one;
        // lane 2, last out, lands on lane 1's place and joins it.
        let r = run_cta(&Mimd, &program(LOOP), &[ALL], 4, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [0b1001, 0b0110]);
        assert_eq!(at(&r.pcs(), 1), [ALL, 0b0110, 0b0100]);
        assert_eq!(r.counter("merges"), 1);
    }

    #[test]
    fn exited_lanes_leave_and_a_warp_with_no_live_lane_holds_nothing() {
        let mut st = start(6);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Exit { lanes: 0b0011 }, 0b1100, None, &mut c);
        let g = ready(peek(&st, 0, 0b1100, 0));
        assert_eq!((g.pc, g.mask), (7, 0b1100));
        update(&mut st, &g, &Flow::Exit { lanes: 0b1100 }, 0, None, &mut c);
        assert!(st.warps[0].groups.is_empty());
        assert!(Mimd.positions(&(), &st, &CtaView { live: &[0], blocked: &[0], w: 4 }).is_empty());
    }

    #[test]
    fn lanes_at_a_barrier_wait_by_themselves() {
        let mut st = start(1);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Branch { target: 4, taken: 0b0011 }, ALL, None, &mut c);
        // Lanes 2-3 (slot 0) wait at a barrier; lanes 0-1 (slot 1) issue on.
        assert_eq!(peek(&st, 0, ALL, 0b1100), Peek::Blocked(Blocked::Barrier));
        assert_eq!(ready(peek(&st, 1, ALL, 0b1100)).mask, 0b0011);
        let pos = Mimd.positions(&(), &st, &CtaView { live: &[ALL], blocked: &[0b1100], w: 4 });
        assert_eq!(pos.iter().map(|p| (p.pc, p.state)).collect::<Vec<_>>()[0], (2, PositionState::AtBarrier));
        // A group with some lanes at a barrier issues the others; the waiting ones stay in place.
        let mut st = start(3);
        let g = ready(peek(&st, 0, ALL, 0b0001));
        assert_eq!((g.mask, g.hold), (0b1110, ALL));
        update(&mut st, &g, &Flow::Next, ALL, None, &mut c);
        assert_eq!(st.warps[0].groups[0], Some(Path { pc: 3, mask: 0b0001, depth: 0 }));
        assert_eq!(st.warps[0].groups[1], Some(Path { pc: 4, mask: 0b1110, depth: 0 }));
    }

    #[test]
    fn a_warp_synchronous_group_waits_for_its_members_and_issues_with_them() {
        let mut st = start(1);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Branch { target: 3, taken: 0b0001 }, ALL, None, &mut c);
        // Lane 0 reaches the shuffle at pc 3 first; lanes 1-3 are at pc 2.
        let early = ready(peek(&st, 1, ALL, 0));
        Mimd.await_members(&mut (), &mut st, &early, 0b1110);
        assert_eq!(peek(&st, 1, ALL, 0), Peek::Blocked(Blocked::Mechanism));
        let late = ready(peek(&st, 0, ALL, 0));
        update(&mut st, &late, &Flow::Next, ALL, None, &mut c);
        let all = ready(peek(&st, 1, ALL, 0));
        assert_eq!((all.pc, all.mask), (3, ALL), "the members joined the waiting lane");
        update(&mut st, &all, &Flow::Next, ALL, None, &mut c);
        assert_eq!(st.warps[0].awaiting, 0);
    }

    #[test]
    fn calls_deepen_and_groups_merge_only_at_equal_depth() {
        let mut st = start(10);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Call { target: 11, callers: 0b0011 }, ALL, None, &mut c);
        // Lanes 2-3 skip the call to pc 11 (depth 0); lanes 0-1 enter the callee at pc 11 (depth 1): the
        // same pc, two places, two groups.
        let groups: Vec<Path> = st.warps[0].groups.iter().flatten().copied().collect();
        assert_eq!(groups, [Path { pc: 11, mask: 0b1100, depth: 0 }, Path { pc: 11, mask: 0b0011, depth: 1 }]);
        let callee = ready(peek(&st, 1, ALL, 0));
        let to: Box<[(Pc, LaneMask)]> = vec![(11, 0b0011)].into();
        update(&mut st, &callee, &Flow::Return { lanes: 0b0011, to }, ALL, None, &mut c);
        assert_eq!(ready(peek(&st, 0, ALL, 0)).mask, ALL, "back at depth 0 they merge");
        assert_eq!(c[MimdCounter::Merges as usize], 1);
    }

    #[test]
    fn a_straight_run_stops_where_another_group_waits() {
        let mut st = start(1);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Branch { target: 5, taken: 0b0001 }, ALL, None, &mut c);
        let a = ready(peek(&st, 0, ALL, 0));
        assert_eq!(
            Mimd.straight_run(&(), &st, &CtaView { live: &[ALL], blocked: &[0], w: 4 }, &a, 8),
            3,
            "pcs 2, 3 and 4, merging at pc 5"
        );
        let b = ready(peek(&st, 1, ALL, 0));
        assert_eq!(Mimd.straight_run(&(), &st, &CtaView { live: &[ALL], blocked: &[0], w: 4 }, &b, 8), 8);
    }

    #[test]
    fn two_issues_of_a_warp_in_one_cycle_count_as_packed() {
        let mut st = start(1);
        let g = ready(peek(&st, 0, ALL, 0));
        let mut c = [0; 3];
        update(&mut st, &g, &Flow::Branch { target: 4, taken: 0b0001 }, ALL, Some(10), &mut c);
        let (a, b) = (ready(peek(&st, 0, ALL, 0)), ready(peek(&st, 1, ALL, 0)));
        update(&mut st, &a, &Flow::Next, ALL, Some(11), &mut c);
        update(&mut st, &b, &Flow::Next, ALL, Some(11), &mut c);
        assert_eq!(c[MimdCounter::Packed as usize], 1);
    }
}
