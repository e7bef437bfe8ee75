//! Dual-path execution (Rhu & Erez, HPCA'13), mechanism `dual-path`.
//!
//! The PDOM stack's entries hold two paths: `{rpc, A{pc, mask}, B{pc, mask}}`. Only the top entry's two
//! paths can issue, and both can: they are two issue contexts of the warp, with their own scoreboard
//! (the timing model waits only for a path's own lanes), so the warp scheduler interleaves them to hide
//! latency. Reconvergence is PDOM's:
//! - a divergent branch on path p of the top entry sets p's pc to the branch's IPDOM R (p now waits
//!   there holding all its lanes) and pushes `{rpc = R, A = taken, B = not-taken}`; more than two
//!   targets push one entry per pair;
//! - a uniform branch moves p's pc; a path reaching the top entry's rpc is invalidated (its lanes wait
//!   in the parent's path at R);
//! - when both paths of the top entry are invalid it is popped and the parent's path at R resumes;
//! - a call leaves the caller's path waiting at the return pc and pushes a call entry for the callee
//!   (popped when every lane returned); exited lanes leave every entry.
//!
//! A divergence of a path whose entry already reconverges at R (a loop branch in later iterations)
//! with the other path of the entry invalid reuses the entry instead of pushing.

use crate::adapters::parallel::advance_ends;
use crate::adapters::paths::Path;
use crate::adapters::pdom_rules::run_before;
use crate::adapters::pdom_rules::{reconvergence_point, successors};
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{LaneMask, Pc, PC_NONE, PC_RET};
use crate::EntryKind;
use crate::Structure;
use crate::{Counter, EntryView, Flow, MechError, SlotTracker, WarpCtx};

/// One entry: a reconvergence pc and up to two paths.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct DualEntry {
    /// Reconvergence pc.
    pub rpc: Pc,
    /// Paths A and B (`None` = invalid).
    pub paths: [Option<Path>; 2],
    /// A call entry.
    pub call: bool,
}

/// Dual-path execution.
#[derive(Clone, Copy, Debug, Default)]
pub struct DualPath;

counters! {
    /// Counter indices.
    pub(crate) enum DualPathCounter {
        Pushes = sum("pushes", "entries pushed at divergent branches and calls"),
        Dual = sum("dual_pushes", "entries pushed with two valid paths (both eligible to issue)"),
    }
}

fn pair(rpc: Pc, a: Option<Path>, b: Option<Path>, call: bool) -> DualEntry {
    DualEntry { rpc, paths: [a, b], call }
}

/// Invalidates paths that reached their entry's reconvergence pc or lost every lane, and pops entries
/// whose two paths are both invalid.
fn normalize(st: &mut Vec<DualEntry>, live: LaneMask) {
    for e in st.iter_mut() {
        let rpc = e.rpc;
        for p in e.paths.iter_mut() {
            if let Some(q) = p {
                q.mask &= live;
                if q.mask == 0 || q.pc == rpc {
                    *p = None;
                }
            }
        }
    }
    while st.len() > 1 && st.last().is_some_and(|e| e.paths.iter().all(Option::is_none)) {
        st.pop();
    }
}

impl SlotTracker for DualPath {
    type State = Vec<DualEntry>;

    const STRUCTURE: Structure = Structure::Stack;
    const COUNTERS: &'static [Counter] = DualPathCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn slots(&self, _w: u32) -> u32 {
        2
    }

    fn init(&self, entry: Pc, live: LaneMask, _w: u32) -> Vec<DualEntry> {
        vec![pair(PC_NONE, Some(Path { pc: entry, mask: live, depth: 0 }), None, false)]
    }

    fn slot(&self, st: &Vec<DualEntry>, k: u32) -> Option<(Pc, LaneMask)> {
        let e = st.last()?;
        let p = e.paths.get(k as usize).copied().flatten()?;
        (p.pc != e.rpc).then_some((p.pc, p.mask))
    }

    fn update(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let k = k as usize;
        let top = st.last_mut().ok_or(MechError::Underflow("dual-path"))?;
        let Some(p) = top.paths[k] else { return Err(MechError::InvalidSlot("path")) };
        let rpc = top.rpc;
        if let Flow::Call { target, callers } = flow {
            top.paths[k] = Some(Path { pc: pc + 1, ..p });
            st.push(pair(PC_RET, Some(Path { pc: *target, mask: mask & callers, depth: p.depth + 1 }), None, true));
            ctx.count(DualPathCounter::Pushes, 1);
            normalize(st, ctx.live);
            return Ok(());
        }
        let mut groups = successors(pc, mask, flow);
        let rest = p.mask & !mask;
        if rest != 0 {
            groups.push((pc, rest));
        }
        groups.retain(|(_, m)| *m & ctx.live != 0);
        match groups.len() {
            0 => top.paths[k] = None,
            1 if groups[0].0 == rpc => top.paths[k] = None,
            1 => top.paths[k] = Some(Path { pc: groups[0].0, mask: groups[0].1, ..p }),
            _ => {
                let r = reconvergence_point(ctx.prog, pc)?;
                let parts: Vec<Path> = groups
                    .iter()
                    .filter(|(g, _)| *g != r)
                    .map(|&(g, m)| Path { pc: g, mask: m, depth: p.depth })
                    .collect();
                let other = top.paths[1 - k];
                if r == rpc && !top.call && other.is_none() && parts.len() <= 2 {
                    // A loop branch diverging again: the entry already reconverges at R.
                    top.paths = [parts.first().copied(), parts.get(1).copied()];
                } else {
                    top.paths[k] = Some(Path { pc: r, ..p });
                    // Taken side as A (runs first when both are ready), not-taken as B.
                    for two in parts.rchunks(2) {
                        let (a, b) = if two.len() == 2 { (Some(two[1]), Some(two[0])) } else { (Some(two[0]), None) };
                        ctx.count(DualPathCounter::Pushes, 1);
                        if b.is_some() {
                            ctx.count(DualPathCounter::Dual, 1);
                        }
                        st.push(pair(r, a, b, false));
                    }
                }
            }
        }
        normalize(st, ctx.live);
        Ok(())
    }

    /// Up to the top entry's reconvergence pc: until then each update only moves the path's pc (the last
    /// instruction's update, which may reach it, runs as usual).
    #[inline]
    fn straight_run(&self, st: &Self::State, k: u32, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        match st.last().and_then(|top| Some((top.rpc, top.paths.get(k as usize).copied().flatten()?))) {
            Some((rpc, p)) if p.pc == pc && p.mask == mask => run_before(rpc, pc, max),
            _ => 1,
        }
    }

    fn advance(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (k, pc, mask, n), ctx, |st, _| {
            let p = st.last_mut().and_then(|top| top.paths.get_mut(k as usize)).and_then(Option::as_mut);
            p.ok_or(MechError::InvalidSlot("path"))?.pc = pc + n - 1;
            Ok(())
        })
    }

    fn depth(&self, st: &Vec<DualEntry>) -> usize {
        st.len()
    }

    fn entries(&self, st: &Vec<DualEntry>) -> Vec<EntryView> {
        let mut v = Vec::new();
        for e in st {
            for (k, p) in e.paths.iter().enumerate() {
                if let Some(p) = p {
                    let mut x =
                        EntryView::warp(if k == 0 { EntryKind::SlotA } else { EntryKind::SlotB }, p.mask, p.pc, e.rpc);
                    if e.call {
                        x.note = "call".into();
                    }
                    v.push(x);
                }
            }
        }
        v
    }
}

/// The registry's facts of `dual-path`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "dual-path",
    crate::Scope::Warp,
    "dual-path execution (Rhu and Erez, HPCA 2013): the stack's top entry holds two paths that both issue",
)
.storage(STORAGE);

/// What `dual-path` stores: a stack per warp whose entries hold two paths (never deeper than `pdom`'s
/// stack, which pushes two entries where this pushes one) and its pointer.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[
        Part::new(
            "stack",
            Per::Warp,
            Cells::Sram,
            common::STACK_ENTRIES,
            Size::Sum(&[Size::Pc, Size::Product(&[Size::Const(2), Size::Sum(&[Size::Const(1), Size::Pc, Size::W])])]),
            "{rpc, A{valid, pc, mask}, B{valid, pc, mask}}",
        ),
        common::STACK_POINTER_PART,
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};

    const ALL: LaneMask = 0b1111;

    #[test]
    fn a_divergent_branch_pushes_both_paths_and_they_meet_at_the_post_dominator() {
        let r = run_slots(&DualPath, &program(DIAMOND), ALL, &taking(0b0001), Pick::Lowest, 64);
        // Path A (context 0, the taken side) runs while the scheduler prefers it, then path B (context 1);
        // the parent's path resumes at the join with every lane.
        let order = [(0, 1, ALL), (0, 4, 0b0001), (1, 2, 0b1110), (1, 3, 0b1110), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[1..], order);
        let paths = [EntryView::warp(EntryKind::SlotA, 0b0001, 4, 5), EntryView::warp(EntryKind::SlotB, 0b1110, 2, 5)];
        assert_eq!(r.entries[1][1..], paths, "above the parent's path, waiting at pc 5");
        assert_eq!(r.counters, [("pushes", 1), ("dual_pushes", 1)]);
    }

    #[test]
    fn the_two_paths_interleave() {
        let r = run_slots(&DualPath, &program(DIAMOND), ALL, &taking(0b0001), Pick::RoundRobin, 64);
        let order = [(0, 1, ALL), (1, 2, 0b1110), (0, 4, 0b0001), (1, 3, 0b1110), (0, 5, ALL)];
        assert_eq!(r.ctx_pcs()[1..6], order);
    }

    #[test]
    fn only_the_top_entrys_paths_issue() {
        // Once the inner branch (pc 5) pushed its entry, the outer else path (pcs 3-4) waits for the inner
        // join (pc 9).
        let r = run_slots(&DualPath, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        let p = r.pcs();
        let pos = |g| p.iter().position(|&x| x == g).expect("issued");
        assert!(pos((3, 0b1100)) < pos((5, 0b0011)), "{p:?}");
        assert!(pos((4, 0b1100)) > pos((9, 0b0011)), "{p:?}");
        assert_eq!((at(&p, 9), at(&p, 10)), (vec![0b0011], vec![ALL]));
        assert_eq!(r.counters, [("pushes", 2), ("dual_pushes", 2)]);
    }

    #[test]
    fn a_loop_branch_diverging_again_reuses_its_entry() {
        let r = run_slots(&DualPath, &program(LOOP), ALL, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        assert_eq!(r.counters, [("pushes", 1), ("dual_pushes", 0)]);
        assert_eq!(r.sizes.iter().max(), Some(&2));
    }
}
