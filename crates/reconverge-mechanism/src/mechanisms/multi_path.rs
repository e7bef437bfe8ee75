//! Multi-path IPDOM execution (ElTantawy, Ma, O'Connor & Aamodt, HPCA'14), mechanism `multi-path`.
//!
//! The stack is replaced by a **split table** (ST: the warp's paths, every one of them eligible to issue,
//! each an issue context with its own scoreboard) and a **reconvergence table** (RT: one entry per
//! pending reconvergence point, `{pc, rpc, outer, mask, pending}`), as AWARE's `simt_splits_table` /
//! `simt_reconvergence_table` implement them:
//! - after a split issues, its lanes are partitioned by next pc; lanes whose next pc is the split's
//!   reconvergence pc *arrive*: they leave the split and the RT entry's pending mask;
//! - a divergent split whose IPDOM R differs from its own reconvergence pc inserts an RT entry
//!   `{pc = R, rpc = split.rpc, outer = split.rt, mask = pending = split's lanes}` and one split per
//!   target (lanes already at R arrive at once); when R equals its reconvergence pc the new splits share
//!   its RT entry; a divergence that reconverges only at the function's exit reconverges at the enclosing
//!   point instead;
//! - when an RT entry's pending mask empties, it is freed and its lanes become one split at its pc (which
//!   may arrive at the outer entry at once);
//! - a call moves the caller into an RT entry at the return pc and runs the callee as a split that
//!   reconverges there; returning lanes arrive;
//! - a split at `bar.sync` waits (threads are counted); exited lanes leave every split and RT entry.
//!
//! Any number of splits interleave; reconvergence is the immediate post-dominator's.

use crate::adapters::parallel::{advance_ends, held};
use crate::adapters::pdom_rules::run_before;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{next_groups, Counter, EntryView, Flow, MechError, SlotTracker, WarpCtx};

/// A split-table entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Split {
    /// Next pc.
    pub pc: Pc,
    /// Reconvergence pc.
    pub rpc: Pc,
    /// Its reconvergence-table entry.
    pub rt: Option<u32>,
    /// Lanes.
    pub mask: LaneMask,
}

/// A reconvergence-table entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct RtEntry {
    /// Where the lanes reconverge.
    pub pc: Pc,
    /// The reconvergence pc of the split they form afterwards.
    pub rpc: Pc,
    /// The enclosing entry.
    pub outer: Option<u32>,
    /// Every lane of the region.
    pub mask: LaneMask,
    /// Lanes not arrived yet.
    pub pending: LaneMask,
}

/// The split and reconvergence tables of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct MultiPathState {
    /// Split slots (an issue context each).
    pub splits: Vec<Option<Split>>,
    /// Reconvergence-table slots.
    pub rt: Vec<Option<RtEntry>>,
}

/// Multi-path IPDOM execution.
#[derive(Clone, Copy, Debug, Default)]
pub struct MultiPath;

counters! {
    /// Counter indices.
    pub(crate) enum MultiPathCounter {
        Arrivals = sum(
            "rt_arrivals",
            "groups of lanes that reached their split's reconvergence pc and waited in the reconvergence table",
        ),
        RtMax = max("max_rt_entries", "the most reconvergence-table entries one warp held"),
        Rotations = sum("split_rotations", "splits that took a branch (rotated to the tail of the split table's FIFO)"),
    }
}

impl MultiPathState {
    fn add_split(&mut self, s: Split) {
        match self.splits.iter().position(Option::is_none) {
            Some(k) => self.splits[k] = Some(s),
            None => self.splits.push(Some(s)),
        }
    }

    fn add_rt(&mut self, e: RtEntry, ctx: &mut WarpCtx<'_>) -> u32 {
        let k = match self.rt.iter().position(Option::is_none) {
            Some(k) => {
                self.rt[k] = Some(e);
                k
            }
            None => {
                self.rt.push(Some(e));
                self.rt.len() - 1
            }
        };
        ctx.max(MultiPathCounter::RtMax, self.rt.iter().flatten().count() as u64);
        k as u32
    }

    /// Lanes `m` arrive at RT entry `rt`.
    fn arrive(&mut self, rt: Option<u32>, m: LaneMask, ctx: &mut WarpCtx<'_>) {
        if let Some(e) = rt.and_then(|r| self.rt.get_mut(r as usize)).and_then(Option::as_mut) {
            e.pending &= !m;
            ctx.count(MultiPathCounter::Arrivals, 1);
        }
    }

    /// Adds a split, or lets its lanes arrive when it is already at its reconvergence pc.
    fn place(&mut self, s: Split, ctx: &mut WarpCtx<'_>) {
        if s.pc == s.rpc {
            self.arrive(s.rt, s.mask, ctx);
        } else {
            self.add_split(s);
        }
    }

    /// Drops dead lanes and frees every RT entry whose lanes all arrived (their split may arrive in turn).
    fn settle(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        for s in self.splits.iter_mut() {
            if let Some(x) = s {
                x.mask &= live;
                if x.mask == 0 {
                    *s = None;
                }
            }
        }
        loop {
            let mut freed = None;
            for (k, e) in self.rt.iter_mut().enumerate() {
                if let Some(x) = e {
                    x.pending &= live;
                    x.mask &= live;
                    if x.pending == 0 {
                        freed = Some((k, *x));
                        *e = None;
                        break;
                    }
                }
            }
            let Some((_, e)) = freed else { return };
            if e.mask != 0 {
                self.place(Split { pc: e.pc, rpc: e.rpc, rt: e.outer, mask: e.mask }, ctx);
            }
        }
    }
}

impl SlotTracker for MultiPath {
    type State = MultiPathState;

    const STRUCTURE: Structure = Structure::Paths;
    const COUNTERS: &'static [Counter] = MultiPathCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn slots(&self, w: u32) -> u32 {
        w
    }

    fn init(&self, entry: Pc, live: LaneMask, _w: u32) -> MultiPathState {
        MultiPathState { splits: vec![Some(Split { pc: entry, rpc: PC_NONE, rt: None, mask: live })], rt: Vec::new() }
    }

    fn slot(&self, st: &MultiPathState, k: u32) -> Option<(Pc, LaneMask)> {
        st.splits.get(k as usize).copied().flatten().map(|s| (s.pc, s.mask))
    }

    /// Up to the split's reconvergence pc, when every lower slot is taken (an update puts a moved split in
    /// the lowest free slot): until then each update only moves the split's pc (the last instruction's
    /// update, which may reach it, runs as usual).
    #[inline]
    fn straight_run(&self, st: &Self::State, k: u32, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        let k = k as usize;
        match st.splits.get(k).copied().flatten() {
            Some(s) if s.pc == pc && s.mask == mask && st.splits[..k].iter().all(Option::is_some) => {
                run_before(s.rpc, pc, max)
            }
            _ => 1,
        }
    }

    fn advance(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (k, pc, mask, n), ctx, |st, _| {
            let s = st.splits.get_mut(k as usize).and_then(Option::as_mut);
            s.ok_or(MechError::InvalidSlot("split"))?.pc = pc + n - 1;
            Ok(())
        })
    }

    fn update(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let k = k as usize;
        let s = held(&st.splits, k as u32, "split")?;
        st.splits[k] = None;
        let rest = s.mask & !mask & ctx.live;
        if rest != 0 {
            st.add_split(Split { mask: rest, ..s });
        }
        if let Flow::Call { target, callers } = flow {
            let r = st.add_rt(RtEntry { pc: pc + 1, rpc: s.rpc, outer: s.rt, mask, pending: mask }, ctx);
            st.arrive(Some(r), mask & !callers, ctx);
            st.add_split(Split { pc: *target, rpc: pc + 1, rt: Some(r), mask: mask & callers });
            st.settle(ctx.live, ctx);
            return Ok(());
        }
        let mut groups = next_groups(pc, mask, flow);
        groups.retain(|(_, m)| *m & ctx.live != 0);
        if groups.len() > 1 {
            let mut r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
            if is_pseudo(r) {
                r = s.rpc;
            }
            let (rpc, rt) = if r != s.rpc {
                let e = RtEntry { pc: r, rpc: s.rpc, outer: s.rt, mask, pending: mask };
                (r, Some(st.add_rt(e, ctx)))
            } else {
                (s.rpc, s.rt)
            };
            for (g, m) in groups {
                st.place(Split { pc: g, rpc, rt, mask: m }, ctx);
            }
        } else if let Some(&(g, m)) = groups.first() {
            if g != pc + 1 {
                ctx.count(MultiPathCounter::Rotations, 1);
            }
            st.place(Split { pc: g, mask: m, ..s }, ctx);
        }
        st.settle(ctx.live, ctx);
        Ok(())
    }

    fn depth(&self, st: &MultiPathState) -> usize {
        st.splits.iter().flatten().count()
    }

    fn entries(&self, st: &MultiPathState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .rt
            .iter()
            .flatten()
            .map(|e| {
                let mut x = EntryView::warp(EntryKind::Rt, e.mask & !e.pending, e.pc, e.rpc);
                x.note = format!("pending {:#x}", e.pending);
                x
            })
            .collect();
        v.extend(st.splits.iter().flatten().map(|s| EntryView::warp(EntryKind::Split, s.mask, s.pc, s.rpc)));
        v
    }
}

/// The registry's facts of `multi-path`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "multi-path",
    crate::Scope::Warp,
    "multi-path IPDOM (ElTantawy et al., HPCA 2014): every path of a split table issues",
)
.storage(STORAGE);

/// What `multi-path` stores per warp: the split table (at most W splits, disjoint; each names its
/// reconvergence-table entry) and the reconvergence table (entries nest with strictly smaller masks: at
/// most W), as AWARE's `simt_splits_table` and `simt_reconvergence_table`.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        Part::new(
            "split table",
            Per::Warp,
            Cells::Sram,
            common::PATHS_ENTRIES,
            Size::Sum(&[Size::Pc, Size::W, Size::IndexBits(&Size::W)]),
            "{pc, mask, rt entry}",
        ),
        Part::new(
            "reconvergence table",
            Per::Warp,
            Cells::Sram,
            Size::Reached(Reach::Counter(MultiPathCounter::RtMax.counter()), &Size::W),
            Size::Sum(&[
                Size::Product(&[Size::Const(2), Size::Pc]),
                Size::IndexBits(&Size::W),
                Size::Product(&[Size::Const(2), Size::W]),
            ]),
            "{pc, rpc, outer, mask, pending}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};

    const ALL: LaneMask = 0b1111;

    /// A reconvergence-table entry as a trace shows it: the lanes that arrived, and those pending.
    fn rt(arrived: LaneMask, pending: LaneMask, pc: Pc, rpc: Pc) -> EntryView {
        EntryView { note: format!("pending {pending:#x}"), ..EntryView::warp(EntryKind::Rt, arrived, pc, rpc) }
    }

    #[test]
    fn a_divergent_split_waits_in_the_reconvergence_table() {
        let r = run_slots(&MultiPath, &program(DIAMOND), ALL, &taking(0b0001), Pick::Lowest, 64);
        let order = [(0, 2, 0b1110), (0, 3, 0b1110), (1, 4, 0b0001), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[2..], order);
        let taken = EntryView::warp(EntryKind::Split, 0b0001, 4, 5);
        let fall = EntryView::warp(EntryKind::Split, 0b1110, 2, 5);
        assert_eq!(r.entries[1], [rt(0, ALL, 5, PC_NONE), fall, taken.clone()], "after the branch");
        assert_eq!(r.entries[3], [rt(0b1110, 0b0001, 5, PC_NONE), taken], "the fall-through lanes arrived");
        assert_eq!(r.counters, [("rt_arrivals", 2), ("max_rt_entries", 1), ("split_rotations", 1)]);
    }

    #[test]
    fn every_split_issues_so_nested_paths_interleave() {
        // Unlike dual-path, the outer else path (pcs 3-4) issues between the inner paths.
        let r = run_slots(&MultiPath, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        let order =
            [(5, 0b0011), (8, 0b0001), (3, 0b1100), (6, 0b0010), (4, 0b1100), (7, 0b0010), (9, 0b0011), (10, ALL)];
        assert_eq!(r.pcs()[3..11], order);
        assert_eq!((r.counter("max_rt_entries"), r.counter("rt_arrivals")), (2, 4));
    }

    #[test]
    fn loop_iterations_share_one_reconvergence_entry() {
        let r = run_slots(&MultiPath, &program(LOOP), ALL, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        assert_eq!(r.counters, [("rt_arrivals", 3), ("max_rt_entries", 1), ("split_rotations", 0)]);
    }
}
