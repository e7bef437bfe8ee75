//! Dynamic warp subdivision (Meng, Tarjan & Skadron, ISCA'10), mechanism `dws`, branch subdivision.
//!
//! A warp runs as one or more *warp-splits*, each an issue context of the warp with its own scoreboard,
//! scheduled independently (the scheduler interleaves them to hide latency). Each split keeps a PDOM
//! reconvergence stack and follows `pdom`'s rules (`adapters/pdom_rules.rs`, reused, not copied), except at a divergent
//! branch that *subdivides*: the PDOM rule is applied (the split's top entry waits at the branch's
//! immediate post-dominator R, one entry is pushed per side), then each pushed entry becomes a split of
//! its own and what remains of the stack (whose top waits at R) is parked in a *join*. A split whose stack
//! empties (its entry reached R, or its lanes exited) has arrived; when every split of a join arrived the
//! parked stack becomes a split again and resumes at R with every lane. Splits nest (a split subdivides
//! again: its stack goes into a new join inside the first).
//!
//! Which branches subdivide: those whose post-dominator R is a real pc of the function (not its exit),
//! that do not leave a loop holding them (`Program::leaves_loop`), and that send lanes to at least two
//! places other than R; every other divergent branch pushes PDOM entries inside the split. Lanes of a
//! split that cannot issue with the rest (waiting at a barrier) are split off the same way at the split's
//! top entry.
//!
//! Memory-divergence subdivision (the paper's "threads that hit run ahead"): in a timed run, when the
//! lanes of a load partly miss in the L1 ([`crate::Tracker::SPLITS_ON_MISS`]), the split's top entry is
//! divided the same way into a split of the lanes that hit and one of the lanes that miss, both at the
//! instruction after the load, and the rest of the stack is parked in a join waiting at the end of the
//! straight-line run from there (the next branch, barrier, warp-synchronous instruction, exit or block
//! leader): the hit lanes run ahead only until the next branch, where they wait for the missing ones
//! ("branch-limited re-convergence", the authors' ISCA'10 talk; the paper's text is not reachable, see
//! `docs/mechanism-reference.md`). A load followed at once by such an instruction is not split: the hit
//! lanes would have nothing to run. Functional runs model no cache and never split on memory.

use crate::adapters::parallel::advance_ends;
use crate::adapters::pdom_rules::{self, PdomEntry};
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{Counter, EntryView, Flow, MechError, SlotTracker, WarpCtx};

/// A warp-split: its own PDOM stack, and the join it reconverges at.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WarpSplit {
    /// Its reconvergence stack (bottom first).
    pub stack: Vec<PdomEntry>,
    /// The join it belongs to (`None` for the warp's outermost split).
    pub join: Option<u32>,
}

/// Where the splits of one subdivision meet again: the parent's stack, parked.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SplitJoin {
    /// The parent split's stack; its top entry waits at the post-dominator.
    pub parent: Vec<PdomEntry>,
    /// The join the parent belongs to.
    pub outer: Option<u32>,
    /// Splits of this subdivision not arrived yet.
    pub pending: u32,
}

/// The warp-splits and joins of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct DwsState {
    /// Split slots (an issue context each).
    pub splits: Vec<Option<WarpSplit>>,
    /// Join slots.
    pub joins: Vec<Option<SplitJoin>>,
}

/// Dynamic warp subdivision.
#[derive(Clone, Copy, Debug, Default)]
pub struct Dws;

counters! {
    /// Counter indices.
    pub(crate) enum DwsCounter {
        Subdivisions = sum(
            "branch_subdivisions",
            "divergent branches that subdivided a warp-split into independent splits",
        ),
        Reunions = sum("reunions", "subdivisions whose splits all arrived at the post-dominator and reunited"),
        MaxSplits = max("max_splits", "the most warp-splits one warp had at once"),
        BarrierSplits = sum(
            "barrier_splits",
            "splits whose lanes waiting at a barrier were separated from the lanes that issued",
        ),
        MemSplits = timed(
            "mem_splits",
            "loads whose lanes partly missed in the L1 and were split so that the lanes that hit run ahead (timed runs only)",
        ),
    }
}

/// Puts `x` in the lowest free slot of `v`; returns the slot.
fn put<T>(v: &mut Vec<Option<T>>, x: T) -> usize {
    match v.iter().position(Option::is_none) {
        Some(k) => {
            v[k] = Some(x);
            k
        }
        None => {
            v.push(Some(x));
            v.len() - 1
        }
    }
}

impl DwsState {
    /// Parks `parent` in a new join and makes each of `children` a split of it; returns the first
    /// child's slot.
    fn subdivide(&mut self, parent: Vec<PdomEntry>, outer: Option<u32>, children: Vec<PdomEntry>) -> usize {
        let j = put(&mut self.joins, SplitJoin { parent, outer, pending: children.len() as u32 }) as u32;
        let mut first = usize::MAX;
        for c in children {
            first = first.min(put(&mut self.splits, WarpSplit { stack: vec![c], join: Some(j) }));
        }
        first
    }

    /// Normalizes split `k`; if its stack emptied it arrives at its join, which may release its parent
    /// (and so on outwards).
    fn settle(&mut self, k: usize, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        let Some(s) = self.splits.get_mut(k).and_then(Option::as_mut) else { return };
        pdom_rules::normalize(&mut s.stack, &live);
        if !s.stack.is_empty() {
            return;
        }
        let mut join = s.join;
        self.splits[k] = None;
        while let Some(j) = join {
            let Some(e) = self.joins.get_mut(j as usize).and_then(Option::as_mut) else { return };
            e.pending -= 1;
            if e.pending > 0 {
                return;
            }
            let Some(mut e) = self.joins[j as usize].take() else { return };
            ctx.count(DwsCounter::Reunions, 1);
            pdom_rules::normalize(&mut e.parent, &live);
            if !e.parent.is_empty() {
                put(&mut self.splits, WarpSplit { stack: e.parent, join: e.outer });
                return;
            }
            join = e.outer;
        }
    }
}

/// Where the lanes of a load split at `next` (the instruction after it) meet again: the end of the
/// straight-line run from `next` ([`crate::program::Program::straight`]), when the run is not empty.
fn run_ahead_limit(prog: &crate::program::Program, next: Pc) -> Option<Pc> {
    let n = *prog.straight.get(next as usize)?;
    (n > 0).then_some(next + Pc::from(n))
}

/// Whether the divergent branch at `pc` reconverging at `r` subdivides its split.
fn subdivides(prog: &crate::program::Program, pc: Pc, r: Pc) -> bool {
    !is_pseudo(r) && !prog.leaves_loop(pc)
}

impl SlotTracker for Dws {
    type State = DwsState;

    const STRUCTURE: Structure = Structure::Stack;
    const COUNTERS: &'static [Counter] = DwsCounter::COUNTERS;
    const SPLITS_ON_MISS: bool = true;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn slots(&self, w: u32) -> u32 {
        w
    }

    fn init(&self, entry: Pc, live: LaneMask, _w: u32) -> DwsState {
        DwsState {
            splits: vec![Some(WarpSplit { stack: pdom_rules::init(entry, live), join: None })],
            joins: Vec::new(),
        }
    }

    fn slot(&self, st: &DwsState, k: u32) -> Option<(Pc, LaneMask)> {
        let top = st.splits.get(k as usize)?.as_ref()?.stack.last()?;
        Some((top.pc, top.mask))
    }

    /// The split's PDOM run (`pdom_rules::straight_run`) when every lane of its top entry issues: until
    /// the last instruction each update only moves the top entry's pc (the last one's update, which may
    /// reach the reconvergence point and let the split arrive, runs as usual).
    #[inline]
    fn straight_run(&self, st: &DwsState, k: u32, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        match st.splits.get(k as usize).and_then(Option::as_ref) {
            Some(s) if s.stack.last().is_some_and(|top| top.pc == pc && top.mask == mask) => {
                pdom_rules::straight_run(&s.stack, pc, max)
            }
            _ => 1,
        }
    }

    fn advance(&self, st: &mut DwsState, k: u32, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (k, pc, mask, n), ctx, |st, _| {
            let top = st.splits.get_mut(k as usize).and_then(Option::as_mut).and_then(|s| s.stack.last_mut());
            top.ok_or(MechError::InvalidSlot("warp-split"))?.pc = pc + n - 1;
            Ok(())
        })
    }

    fn update(&self, st: &mut DwsState, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let k = k as usize;
        let s = st.splits.get_mut(k).and_then(Option::as_mut).ok_or(MechError::InvalidSlot("warp-split"))?;
        let top = *s.stack.last().ok_or(MechError::Underflow("dws"))?;
        let rest = top.mask & !mask & ctx.live;
        if rest != 0 {
            // Lanes of the entry that did not issue (at a barrier) stay behind as a split of their own.
            ctx.count(DwsCounter::BarrierSplits, 1);
            let mut parent = std::mem::take(&mut s.stack);
            parent.pop();
            let outer = s.join;
            st.splits[k] = None;
            let children = vec![PdomEntry { mask, ..top }, PdomEntry { mask: rest, ..top }];
            let issued = st.subdivide(parent, outer, children);
            return self.update(st, issued as u32, pc, mask, flow, ctx);
        }
        let branch = matches!(flow, Flow::Branch { .. } | Flow::Multi(_));
        let mut groups = pdom_rules::successors(pc, mask, flow);
        groups.retain(|(_, m)| *m & ctx.live != 0);
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
        let sides = groups.iter().filter(|(g, _)| *g != r).count();
        if branch && groups.len() > 1 && sides > 1 && subdivides(ctx.prog, pc, r) {
            ctx.count(DwsCounter::Subdivisions, 1);
            let mut stack = std::mem::take(&mut s.stack);
            let base = stack.len() - usize::from(pdom_rules::diverge(&mut stack, r, groups));
            let children = stack.split_off(base);
            let outer = s.join;
            st.splits[k] = None;
            let _ = st.subdivide(stack, outer, children);
        } else {
            pdom_rules::update(&mut s.stack, pc, mask, flow, ctx)?;
            st.settle(k, ctx.live, ctx);
        }
        ctx.max(DwsCounter::MaxSplits, st.splits.iter().flatten().count() as u64);
        Ok(())
    }

    fn split_on_miss(
        &self,
        st: &mut DwsState,
        pc: Pc,
        issued: LaneMask,
        missed: LaneMask,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<bool, MechError> {
        let (issued, missed, next) = (issued & ctx.live, missed & ctx.live, pc + 1);
        if missed == 0 || issued & !missed == 0 {
            return Ok(false);
        }
        let Some(limit) = run_ahead_limit(ctx.prog, next) else { return Ok(false) };
        // The split whose top entry holds the load's lanes at the next instruction.
        let holds = |s: &Option<WarpSplit>| {
            s.as_ref().and_then(|s| s.stack.last()).is_some_and(|t| t.pc == next && t.mask & issued == issued)
        };
        let Some(k) = st.splits.iter().position(holds) else { return Ok(false) };
        let Some(split) = st.splits[k].take() else { return Ok(false) };
        let mut parent = split.stack;
        let top = parent.last_mut().ok_or(MechError::Underflow("dws"))?;
        let child = |mask| PdomEntry { pc: next, rpc: limit, mask, call: false };
        let children = vec![child(top.mask & !missed), child(missed)];
        top.pc = limit;
        let _ = st.subdivide(parent, split.join, children);
        ctx.count(DwsCounter::MemSplits, 1);
        ctx.max(DwsCounter::MaxSplits, st.splits.iter().flatten().count() as u64);
        Ok(true)
    }

    fn depth(&self, st: &DwsState) -> usize {
        let parked: usize = st.joins.iter().flatten().map(|j| j.parent.len()).sum();
        parked + st.splits.iter().flatten().map(|s| s.stack.len()).sum::<usize>()
    }

    fn entries(&self, st: &DwsState) -> Vec<EntryView> {
        let mut v = Vec::new();
        for (j, e) in st.joins.iter().enumerate() {
            if let Some(top) = e.as_ref().and_then(|e| e.parent.last()) {
                let mut x = EntryView::warp(EntryKind::Join, top.mask, top.pc, top.rpc);
                x.note = format!("join {j}");
                v.push(x);
            }
        }
        for (k, s) in st.splits.iter().enumerate() {
            for e in s.iter().flat_map(|s| s.stack.iter()) {
                let kind = if e.call { EntryKind::Call } else { EntryKind::Split };
                let mut x = EntryView::warp(kind, e.mask, e.pc, e.rpc);
                x.note = format!("split {k}");
                v.push(x);
            }
        }
        v
    }
}

/// The registry's facts of `dws`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "dws",
    crate::Scope::Warp,
    "dynamic warp subdivision (Meng, Tarjan and Skadron, ISCA 2010): divergent branches split a warp into independently scheduled warp-splits that reconverge at the post-dominator",
)
.storage(STORAGE);

/// What `dws` stores per warp: the PDOM stack entries of every warp-split and parked join (together never
/// more than `pdom`'s worst case, 2W), a join pointer per split, and the split table's issue state.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        Part::new(
            "split stacks",
            Per::Warp,
            Cells::Sram,
            common::STACK_ENTRIES,
            common::MASK_TWO_PCS,
            "{mask, pc, rpc}",
        ),
        Part::new(
            "split table",
            Per::Warp,
            Cells::FlipFlops,
            Size::Reached(Reach::Counter(DwsCounter::MaxSplits.counter()), &Size::W),
            Size::Sum(&[Size::CountBits(&common::STACK_WORST), Size::IndexBits(&Size::W)]),
            "{stack top, join}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};

    const ALL: LaneMask = 0b1111;

    #[test]
    fn a_divergent_branch_makes_two_splits_that_reunite_at_the_post_dominator() {
        let r = run_slots(&Dws, &program(DIAMOND), ALL, &taking(0b0001), Pick::RoundRobin, 64);
        // The fall-through split takes the freed slot 0, the taken split slot 1; the round-robin scheduler
        // turns to slot 1 after the branch.
        let order = [(1, 4, 0b0001), (0, 2, 0b1110), (0, 3, 0b1110), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[2..], order);
        let join = EntryView { note: "join 0".into(), ..EntryView::warp(EntryKind::Join, ALL, 5, PC_NONE) };
        let split =
            |k: usize, m, pc| EntryView { note: format!("split {k}"), ..EntryView::warp(EntryKind::Split, m, pc, 5) };
        assert_eq!(r.entries[1], [join.clone(), split(0, 0b1110, 2), split(1, 0b0001, 4)]);
        assert_eq!(r.entries[2], [join, split(0, 0b1110, 2)], "the taken split arrived");
        assert_eq!(
            r.counters,
            [("branch_subdivisions", 1), ("reunions", 1), ("max_splits", 2), ("barrier_splits", 0), ("mem_splits", 0)]
        );
    }

    #[test]
    fn splits_subdivide_again_and_every_split_issues() {
        let r = run_slots(&Dws, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        let p = r.pcs();
        // The outer else split (pcs 3-4) issues between the inner splits, as under multi-path.
        let pos = |g| p.iter().position(|&x| x == g).expect("issued");
        assert!(pos((6, 0b0010)) < pos((4, 0b1100)) && pos((4, 0b1100)) < pos((7, 0b0010)), "{p:?}");
        assert_eq!((at(&p, 9), at(&p, 10)), (vec![0b0011], vec![ALL]));
        assert_eq!(
            r.counters,
            [("branch_subdivisions", 2), ("reunions", 2), ("max_splits", 3), ("barrier_splits", 0), ("mem_splits", 0)]
        );
    }

    #[test]
    fn a_loop_exit_does_not_subdivide() {
        let r = run_slots(&Dws, &program(LOOP), ALL, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        assert_eq!(r.counter("branch_subdivisions"), 0);
        assert_eq!(r.counter("max_splits"), 1);
    }

    #[test]
    fn lanes_waiting_at_a_barrier_stay_behind_as_a_split() {
        let mut st = Dws.init(0, 0b1111, 4);
        let prog = program(DIAMOND);
        let mut counters = [0u64; 4];
        let mut ctx = WarpCtx { prog: &prog, live: 0b1111, w: 4, counters: &mut counters, cycle: None, delay: None };
        Dws.update(&mut st, 0, 0, 0b0011, &Flow::Next, &mut ctx).expect("updates");
        let tops: Vec<_> = (0..4).filter_map(|k| Dws.slot(&st, k)).collect();
        // The issued lanes (slot 0) moved on; the waiting ones stay at pc 0 in slot 1.
        assert_eq!(tops, [(1, 0b0011), (0, 0b1100)]);
        assert_eq!(counters[DwsCounter::BarrierSplits as usize], 1);
    }

    /// Straight-line code after a "load" at pc 0: the run from pc 1 ends at the exit (pc 3).
    const STRAIGHT: &str = r#"
{
    .reg .b32 %r<4>;
    mov.u32 %r1, 1;
    add.u32 %r2, %r1, 1;
    add.u32 %r3, %r2, 1;
    exit;
}
"#;

    /// A warp of 4 lanes that issued the "load" at pc 0 of [`STRAIGHT`] in a timed run.
    fn loaded<'a>(prog: &'a crate::program::Program, counters: &'a mut [u64]) -> (DwsState, WarpCtx<'a>) {
        let mut st = Dws.init(0, ALL, 4);
        let mut ctx = WarpCtx { prog, live: ALL, w: 4, counters, cycle: Some(9), delay: None };
        Dws.update(&mut st, 0, 0, ALL, &Flow::Next, &mut ctx).expect("updates");
        (st, ctx)
    }

    #[test]
    fn lanes_that_hit_run_ahead_to_the_end_of_the_straight_run_and_wait_there() {
        let prog = program(STRAIGHT);
        let mut counters = [0u64; 5];
        let (mut st, mut ctx) = loaded(&prog, &mut counters);
        // Lanes 0-1 missed: the hit lanes (2-3) and the missing ones become two splits at pc 1.
        assert!(Dws.split_on_miss(&mut st, 0, ALL, 0b0011, &mut ctx).expect("splits"));
        let tops = |st: &DwsState| (0..4).filter_map(|k| Dws.slot(st, k)).collect::<Vec<_>>();
        assert_eq!(tops(&st), [(1, 0b1100), (1, 0b0011)]);
        // The hit split runs to pc 3 and arrives; the other one has not moved.
        Dws.update(&mut st, 0, 1, 0b1100, &Flow::Next, &mut ctx).expect("updates");
        Dws.update(&mut st, 0, 2, 0b1100, &Flow::Next, &mut ctx).expect("updates");
        assert_eq!(tops(&st), [(1, 0b0011)]);
        Dws.update(&mut st, 1, 1, 0b0011, &Flow::Next, &mut ctx).expect("updates");
        Dws.update(&mut st, 1, 2, 0b0011, &Flow::Next, &mut ctx).expect("updates");
        assert_eq!(tops(&st), [(3, ALL)], "the splits reunited at the exit");
        // A load just before the exit has nothing to run ahead to: no split.
        assert!(!Dws.split_on_miss(&mut st, 2, ALL, 0b0011, &mut ctx).expect("answers"));
        let named: Vec<_> = DwsCounter::COUNTERS.iter().map(|c| c.name).zip(ctx.counters.iter().copied()).collect();
        assert_eq!(
            named,
            [("branch_subdivisions", 0), ("reunions", 1), ("max_splits", 2), ("barrier_splits", 0), ("mem_splits", 1)]
        );
    }

    #[test]
    fn a_split_whose_lanes_all_missed_or_all_hit_is_not_divided() {
        let prog = program(STRAIGHT);
        let mut counters = [0u64; 5];
        let (mut st, mut ctx) = loaded(&prog, &mut counters);
        assert!(!Dws.split_on_miss(&mut st, 0, ALL, ALL, &mut ctx).expect("answers"));
        assert!(!Dws.split_on_miss(&mut st, 0, ALL, 0, &mut ctx).expect("answers"));
        assert_eq!(Dws.slot(&st, 0), Some((1, ALL)));
        assert_eq!(ctx.counters[DwsCounter::MemSplits as usize], 0);
    }
}
