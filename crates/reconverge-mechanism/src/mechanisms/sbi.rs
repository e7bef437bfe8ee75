//! Simultaneous Branch Interweaving with constraints (Brunie, Collange & Diamos, ISCA'12), mechanism `sbi`.
//!
//! Each warp keeps a list of paths sorted by call depth (deepest first), then pc (lowest first), the
//! thread-frontier order of seed 003 §2.4; paths at the same pc and depth merge. Two paths issue: the
//! *primary* (the first path in the order that can issue) and the *secondary* (the next one), each an
//! issue context of the warp with its own scoreboard. In the timing model the two co-issue: the mechanism
//! declares [`crate::Tracker::CO_ISSUE_PATHS`], so after one path issues the scheduler may issue the other
//! in the same cycle on its disjoint lanes (same functional unit, not a memory instruction), and the
//! front end fetches two instructions a cycle, SBI's second fetch/decode path (`dual_issues` counts the
//! second of each pair; see `docs/mechanism-reference.md`).
//!
//! Convergence is bounded by an *interval of addresses* set by a convergence instruction. The compiler's
//! instruction is modelled from the program's reconvergence points, without rewriting the program: a
//! divergent branch at pc `b` whose reconvergence pc is `r` opens the interval `[b, r)` for the lanes that
//! diverged (a stack of intervals per warp, innermost on top; a divergence reconverging at the innermost
//! interval's end at the same depth widens that interval instead of opening another, as a loop branch
//! diverging again does):
//! - only a path inside the innermost interval (same call depth, `start <= pc < end`) may take the
//!   secondary slot;
//! - a path at an interval's end whose lanes are not all there waits (neither slot takes it) until every
//!   live lane of the interval arrived; the paths then have merged (equal pc and depth) and the interval
//!   is popped;
//! - if every path that could issue waits, the primary takes the first of them anyway (thread-frontier
//!   order always progresses; its lanes leave the interval).
//!
//! Calls deepen a path (callee paths sort first and lie in no interval of the caller); returns merge at
//! the return pc; exited lanes leave every path and interval. A divergence that reconverges only at the
//! function's exit opens no interval.

use crate::adapters::parallel::advance_ends;
use crate::adapters::paths::{self, Path};
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{is_pseudo, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{Counter, EntryView, Flow, SlotTracker, WarpCtx};
use std::cmp::Ordering;

/// A convergence interval: the lanes of a divergence may run side by side while inside `[start, end)`
/// and wait for each other at `end`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Interval {
    /// The lowest pc of the interval (the divergent branch).
    pub start: Pc,
    /// Its end: the branch's reconvergence pc, where its lanes wait for each other.
    pub end: Pc,
    /// The call depth of the divergent branch.
    pub depth: u32,
    /// The lanes that diverged in it (live ones; lanes that passed its end early leave it).
    pub mask: LaneMask,
}

/// The paths and convergence intervals of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct SbiState {
    /// Paths sorted by (depth descending, pc ascending), disjoint, never two at one place.
    pub paths: Vec<Path>,
    /// Active convergence intervals, innermost last.
    pub intervals: Vec<Interval>,
    /// The timing model's cycle of the warp's last issue (for `dual_issues`; `None` in functional runs).
    pub last_issue: Option<u64>,
}

/// Simultaneous branch interweaving with interval constraints; with `SWI`, also simultaneous warp
/// interweaving (`sbi:swi`): the timing model may pair a path with a group of another warp
/// ([`crate::Tracker::CO_ISSUE_WARPS`]). The two differ only in what the timing model may co-issue.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sbi<const SWI: bool>;

counters! {
    /// Counter indices.
    pub(crate) enum SbiCounter {
        CoIssue = sum(
            "co_issue_opportunities",
            "issues made while both the primary and the secondary slot held a path (each could have co-issued)",
        ),
        Secondary = sum("secondary_issues", "issues from the secondary slot"),
        DualIssues = cycles(
            "dual_issues",
            "issues made in the same cycle as the warp's other path (the two co-issued on disjoint lanes; timed runs)",
        ),
        Merges = sum("merges", "paths that merged with another path at the same pc and call depth"),
        MaxIntervals = max("max_intervals", "the most convergence intervals one warp held at once"),
    }
}

/// The list order: deeper calls first, then lower pcs.
fn order(a: &Path, b: &Path) -> Ordering {
    b.depth.cmp(&a.depth).then(a.pc.cmp(&b.pc))
}

impl SbiState {
    /// Inserts `p` in order, merging it with a path at the same place; `true` when it merged.
    fn insert(&mut self, p: Path) -> bool {
        let i = self.paths.partition_point(|q| order(q, &p) == Ordering::Less);
        match self.paths.get_mut(i) {
            Some(q) if q.same_place(&p) => {
                q.mask |= p.mask;
                true
            }
            _ => {
                self.paths.insert(i, p);
                false
            }
        }
    }

    /// Whether `p` waits at the end of an interval for lanes that have not arrived.
    fn waits(&self, p: &Path, live: LaneMask) -> bool {
        self.intervals.iter().any(|iv| iv.end == p.pc && iv.depth == p.depth && iv.mask & live & !p.mask != 0)
    }

    /// Whether `p` lies inside the innermost interval, below its end.
    fn inside(&self, p: &Path) -> bool {
        self.intervals.last().is_some_and(|iv| iv.depth == p.depth && iv.start <= p.pc && p.pc < iv.end)
    }

    /// The indices of the primary and secondary paths for the warp's `live` and `blocked` lanes.
    fn pick(&self, live: LaneMask, blocked: LaneMask) -> (Option<usize>, Option<usize>) {
        let ready = |p: &Path| p.mask & live & !blocked != 0;
        let free = |i: usize| ready(&self.paths[i]) && !self.waits(&self.paths[i], live);
        let n = self.paths.len();
        let primary = (0..n).find(|&i| free(i)).or_else(|| (0..n).find(|&i| ready(&self.paths[i])));
        let Some(p) = primary else { return (None, None) };
        let secondary = (0..n).find(|&i| i != p && free(i)).filter(|&i| self.inside(&self.paths[i]));
        (primary, secondary)
    }

    /// Drops dead lanes, and pops every interval whose live lanes all arrived at its end (or died).
    fn settle(&mut self, live: LaneMask) {
        paths::retain_live(&mut self.paths, live);
        let paths = &self.paths;
        self.intervals.retain_mut(|iv| {
            iv.mask &= live;
            let arrived = paths.iter().any(|p| p.pc == iv.end && p.depth == iv.depth && p.mask & iv.mask == iv.mask);
            iv.mask != 0 && !arrived
        });
    }

    /// The divergent branch at `pc` (depth `depth`, lanes `mask`) reconverging at `r` opens an interval,
    /// or widens the innermost one when it already ends at `r` at that depth.
    fn open(&mut self, pc: Pc, r: Pc, depth: u32, mask: LaneMask) {
        match self.intervals.last_mut() {
            Some(iv) if iv.end == r && iv.depth == depth => {
                iv.start = iv.start.min(pc);
                iv.mask |= mask;
            }
            _ => self.intervals.push(Interval { start: pc, end: r, depth, mask }),
        }
    }
}

impl<const SWI: bool> SlotTracker for Sbi<SWI> {
    type State = SbiState;

    const STRUCTURE: Structure = Structure::Paths;
    const COUNTERS: &'static [Counter] = SbiCounter::COUNTERS;
    const CO_ISSUE_PATHS: bool = true;
    const CO_ISSUE_WARPS: bool = SWI;

    fn name(&self) -> &'static str {
        if SWI {
            SWI_INFO.name
        } else {
            INFO.name
        }
    }

    fn slots(&self, _w: u32) -> u32 {
        2
    }

    fn init(&self, entry: Pc, live: LaneMask, _w: u32) -> SbiState {
        SbiState { paths: paths::start(entry, live), intervals: Vec::new(), last_issue: None }
    }

    fn slot(&self, st: &SbiState, k: u32) -> Option<(Pc, LaneMask)> {
        let live = st.paths.iter().fold(0, |a, p| a | p.mask);
        self.slot_in(st, k, live, 0)
    }

    fn slot_in(&self, st: &SbiState, k: u32, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let (primary, secondary) = st.pick(live, blocked);
        let i = if k == 0 { primary } else { secondary }?;
        st.paths.get(i).map(|p| (p.pc, p.mask))
    }

    /// The path list's run (`paths::clear_run`: up to the nearest pc ahead another path holds), also
    /// stopping at the nearest start or end of an interval ahead: until the last instruction the path then
    /// keeps its place in the order, waits at no end and stays inside or outside the innermost interval,
    /// so the primary and the secondary stay the same paths and each update only moves its pc.
    #[inline]
    fn straight_run(&self, st: &SbiState, _k: u32, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        let bounds = st.intervals.iter().flat_map(|iv| [iv.start, iv.end]).filter(|&b| b > pc);
        let n = bounds.fold(max, |n, b| n.min(b - pc));
        paths::clear_run(&st.paths, pc, mask, n)
    }

    fn advance(&self, st: &mut SbiState, k: u32, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (k, pc, mask, n), ctx, |st, ctx| {
            // The middle updates count what the second would: the first may have changed the intervals.
            let middle = u64::from(n - 2);
            let all = st.paths.iter().fold(0, |a, p| a | p.mask);
            if let (Some(_), Some(_)) = st.pick(all, 0) {
                ctx.count(SbiCounter::CoIssue, middle);
            }
            if k == 1 {
                ctx.count(SbiCounter::Secondary, middle);
            }
            paths::skip(&mut st.paths, pc + 1, mask, pc + n - 1)
        })
    }

    fn update(&self, st: &mut SbiState, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let all = st.paths.iter().fold(0, |a, p| a | p.mask);
        if let (Some(_), Some(_)) = st.pick(all, 0) {
            ctx.count(SbiCounter::CoIssue, 1);
        }
        if k == 1 {
            ctx.count(SbiCounter::Secondary, 1);
        }
        if let Some(c) = ctx.cycle {
            if st.last_issue == Some(c) {
                ctx.count(SbiCounter::DualIssues, 1);
            }
            st.last_issue = Some(c);
        }
        let index = paths::issued(&st.paths, pc, mask)?;
        let path = st.paths[index];
        let taken = paths::take(&mut st.paths, pc, mask, flow, ctx.live)?;
        if let Some(rest) = taken.rest {
            st.insert(rest);
        }
        // Lanes that issue at an interval's end leave it (only when the primary had to go on).
        for iv in st.intervals.iter_mut().filter(|iv| iv.end == pc && iv.depth == path.depth) {
            iv.mask &= !mask;
        }
        let branch = matches!(flow, Flow::Branch { .. } | Flow::Multi(_));
        if branch && taken.next.len() > 1 {
            let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(crate::types::PC_NONE);
            if !is_pseudo(r) {
                st.open(pc, r, path.depth, mask & ctx.live);
            }
        }
        for p in taken.next {
            if st.insert(p) {
                ctx.count(SbiCounter::Merges, 1);
            }
        }
        st.settle(ctx.live);
        ctx.max(SbiCounter::MaxIntervals, st.intervals.len() as u64);
        Ok(())
    }

    fn depth(&self, st: &SbiState) -> usize {
        st.paths.len()
    }

    fn entries(&self, st: &SbiState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .intervals
            .iter()
            .map(|iv| {
                let arrived =
                    st.paths.iter().filter(|p| p.pc == iv.end && p.depth == iv.depth).fold(0, |a, p| a | p.mask);
                let mut e = EntryView::warp(EntryKind::Sync, arrived & iv.mask, iv.end, crate::types::PC_NONE);
                e.note = format!("interval {}..{} lanes {:#x}", iv.start, iv.end, iv.mask);
                e
            })
            .collect();
        let live = st.paths.iter().fold(0, |a, p| a | p.mask);
        let (primary, secondary) = st.pick(live, 0);
        v.extend(st.paths.iter().enumerate().map(|(i, p)| {
            let kind = if Some(i) == primary {
                EntryKind::SlotA
            } else if Some(i) == secondary {
                EntryKind::SlotB
            } else {
                EntryKind::Path
            };
            p.view(kind)
        }));
        v
    }
}

/// The registry's facts of `sbi`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "sbi",
    crate::Scope::Warp,
    "simultaneous branch interweaving with constraints (Brunie, Collange and Diamos, ISCA 2012): a sorted path list whose two first paths issue, convergence within address intervals",
)
.storage(STORAGE);

/// The registry's facts of `sbi:swi`.
pub(crate) const SWI_INFO: crate::Info = crate::Info::new(
    "sbi:swi",
    crate::Scope::Warp,
    "simultaneous branch and warp interweaving (Brunie, Collange and Diamos, ISCA 2012): sbi, and a second instruction may also come from another warp whose shuffled lanes are disjoint",
)
.outside_defaults()
.storage(STORAGE);

/// What `sbi` stores per warp: the sorted path list (at most one path per thread) and the stack of
/// convergence intervals (nested: at most W).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        Part::new("path list", Per::Warp, Cells::Sram, common::PATHS_ENTRIES, common::PATH_BITS, "{pc, depth, mask}"),
        Part::new(
            "interval stack",
            Per::Warp,
            Cells::Sram,
            Size::Reached(Reach::Counter(SbiCounter::MaxIntervals.counter()), &Size::W),
            Size::Sum(&[Size::Product(&[Size::Const(2), Size::Pc]), Size::Depth, Size::W]),
            "{start, end, depth, mask}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};

    const ALL: LaneMask = 0b1111;
    const SBI: Sbi<false> = Sbi;

    #[test]
    fn both_sides_of_a_diamond_issue_and_wait_for_each_other_at_the_end_of_the_interval() {
        let r = run_slots(&SBI, &program(DIAMOND), ALL, &taking(0b0001), Pick::RoundRobin, 64);
        // Primary: the fall-through side (lower pc); secondary: the taken side, inside [1, 5), which the
        // round-robin scheduler takes first after the branch.
        let order = [(1, 4, 0b0001), (0, 2, 0b1110), (0, 3, 0b1110), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[2..], order);
        // After pc 4 the taken lanes wait at the end (pc 5) while the primary finishes its side.
        let iv = |arrived| EntryView {
            note: "interval 1..5 lanes 0xf".into(),
            ..EntryView::warp(EntryKind::Sync, arrived, 5, crate::types::PC_NONE)
        };
        assert_eq!(r.entries[2][0], iv(0b0001));
        assert_eq!(r.entries[3].len(), 3, "the interval and two paths: {:?}", r.entries[3]);
        assert_eq!(r.entries[4].len(), 1, "merged and the interval popped: {:?}", r.entries[4]);
        let c = [
            ("co_issue_opportunities", 1),
            ("secondary_issues", 1),
            ("dual_issues", 0),
            ("merges", 1),
            ("max_intervals", 1),
        ];
        assert_eq!(r.counters, c);
    }

    #[test]
    fn of_three_paths_the_first_two_issue_and_each_waits_at_its_interval_end() {
        // NESTED: the outer branch (pc 2) opens [2, 10), the inner one (pc 5) [5, 9). The outer else path
        // (pcs 3-4, lowest) is the primary and the inner then path (pc 6) the secondary: the inner path
        // at pc 8 issues only once the else path waits at the outer end (pc 10).
        let r = run_slots(&SBI, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        let order =
            [(5, 0b0011), (3, 0b1100), (6, 0b0010), (4, 0b1100), (8, 0b0001), (7, 0b0010), (9, 0b0011), (10, ALL)];
        assert_eq!(r.pcs()[3..11], order);
        assert_eq!(r.counter("max_intervals"), 2);
    }

    #[test]
    fn only_a_path_inside_the_innermost_interval_takes_the_secondary_slot() {
        let path = |pc, mask| Path { pc, mask, depth: 0 };
        let interval = |start, end| Interval { start, end, depth: 0, mask: 0b1111 };
        let mut st = SbiState {
            paths: vec![path(3, 0b0011), path(12, 0b1100)],
            intervals: vec![interval(2, 20)],
            last_issue: None,
        };
        assert_eq!(SBI.slot_in(&st, 1, 0b1111, 0), Some((12, 0b1100)));
        st.intervals.push(interval(5, 9));
        assert_eq!(SBI.slot_in(&st, 1, 0b1111, 0), None, "pc 12 lies outside [5, 9)");
        st.intervals = vec![interval(2, 12)];
        assert_eq!(SBI.slot_in(&st, 1, 0b1111, 0), None, "at the end of [2, 12) its lanes wait");
        assert_eq!(SBI.slot_in(&st, 0, 0b1111, 0), Some((3, 0b0011)));
    }

    #[test]
    fn a_loop_branch_diverging_again_widens_its_interval() {
        let r = run_slots(&SBI, &program(LOOP), ALL, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        // The looping lanes (at pc 1) lie below the interval [3, 4): no secondary issue.
        assert_eq!(
            r.counters,
            [
                ("co_issue_opportunities", 0),
                ("secondary_issues", 0),
                ("dual_issues", 0),
                ("merges", 2),
                ("max_intervals", 1)
            ]
        );
    }

    #[test]
    fn a_path_waiting_at_a_barrier_does_not_hold_the_primary_slot() {
        let st = SbiState {
            paths: vec![Path { pc: 3, mask: 0b0011, depth: 0 }, Path { pc: 7, mask: 0b1100, depth: 0 }],
            intervals: Vec::new(),
            last_issue: None,
        };
        assert_eq!(SBI.slot_in(&st, 0, 0b1111, 0), Some((3, 0b0011)));
        assert_eq!(SBI.slot_in(&st, 0, 0b1111, 0b0011), Some((7, 0b1100)));
        assert_eq!(SBI.slot_in(&st, 1, 0b1111, 0), None, "no interval: no secondary");
    }
}
