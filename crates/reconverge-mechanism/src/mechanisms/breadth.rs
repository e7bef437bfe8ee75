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

use crate::paths::{clear_run, first_ready, issued, retain_live, skip, successors, Path};
use crate::per_warp::advance_ends;
use crate::types::{is_pseudo, LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{splits, BarrierMode, Counter, EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// A synchronisation point: lanes of a divergence waiting for the rest of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SyncPoint {
    /// Where they wait (the reconvergence pc).
    pub pc: Pc,
    /// The call depth of the divergence.
    pub depth: u32,
    /// The lanes of the divergence still expected (exited lanes removed).
    pub expected: LaneMask,
    /// The lanes that arrived.
    pub arrived: LaneMask,
}

/// The queue and the open synchronisation points of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct BreadthState {
    /// The paths, front first.
    pub queue: Vec<Path>,
    /// Open synchronisation points, oldest first.
    pub syncs: Vec<SyncPoint>,
}

/// The breadth-first traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Breadth;

// Counter indices; `hybrid` keeps the same four first, so the helpers below count for it too.
pub(crate) const ROTATIONS: usize = 0;
pub(crate) const MERGES: usize = 1;
pub(crate) const SYNC_WAITS: usize = 2;
pub(crate) const MAX_SYNCS: usize = 3;

/// Appends `p` to the tail, or merges it into a queued path at the same place. Returns whether it merged.
pub(crate) fn enqueue(queue: &mut Vec<Path>, p: Path) -> bool {
    match queue.iter_mut().find(|q| q.same_place(&p)) {
        Some(q) => {
            q.mask |= p.mask;
            true
        }
        None => {
            queue.push(p);
            false
        }
    }
}

/// [`clear_run`] capped before the next open synchronisation point ahead of `pc` (any call depth), where
/// the path's lanes might park.
pub(crate) fn clear_of_syncs(syncs: &[SyncPoint], pc: Pc, run: u32) -> u32 {
    syncs.iter().filter(|s| s.pc > pc).fold(run, |n, s| n.min(s.pc - pc)).max(1)
}

/// Parks the lanes of `paths` that reached an open synchronisation point of `syncs` (the innermost one at
/// the path's place expecting them) and drops the paths left empty. Returns whether any lane parked.
pub(crate) fn park(syncs: &mut [SyncPoint], paths: &mut Vec<Path>, ctx: &mut WarpCtx<'_>) -> bool {
    let mut parked = false;
    for q in paths.iter_mut() {
        if let Some(s) = syncs.iter_mut().rev().find(|s| s.pc == q.pc && s.depth == q.depth && s.expected & q.mask != 0)
        {
            let m = s.expected & q.mask;
            s.arrived |= m;
            q.mask &= !m;
            ctx.count(SYNC_WAITS, 1);
            parked = true;
        }
    }
    paths.retain(|q| q.mask != 0);
    parked
}

impl BreadthState {
    /// After the path at call depth `depth` issued the branch at `pc` with the lanes `mask` and outcome
    /// `flow`: if the branch split them and its reconvergence point is a safe point (it does not leave a
    /// loop holding the branch), opens a synchronisation point there for those lanes, unless an open one
    /// at the same place already expects them all (a divergence nested in a region with the same safe point).
    pub(crate) fn open(&mut self, pc: Pc, mask: LaneMask, depth: u32, flow: &Flow, ctx: &mut WarpCtx<'_>) {
        if !splits(mask, flow) {
            return;
        }
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(crate::types::PC_NONE);
        if is_pseudo(r) || ctx.prog.leaves_loop(pc) {
            return;
        }
        let covered = self.syncs.iter().any(|s| s.pc == r && s.depth == depth && s.expected & mask == mask);
        if !covered {
            self.syncs.push(SyncPoint { pc: r, depth, expected: mask & ctx.live, arrived: 0 });
            ctx.max(MAX_SYNCS, self.syncs.len() as u64);
        }
    }

    /// Parks lanes that reached an open synchronisation point and releases the points every expected lane
    /// reached; repeats until nothing changes.
    pub(crate) fn synchronize(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        loop {
            let mut changed = park(&mut self.syncs, &mut self.queue, ctx);
            let mut k = 0;
            while k < self.syncs.len() {
                let s = &mut self.syncs[k];
                s.expected &= live;
                s.arrived &= live;
                if s.arrived == s.expected {
                    let s = self.syncs.remove(k);
                    if s.arrived != 0 {
                        let p = Path { pc: s.pc, mask: s.arrived, depth: s.depth };
                        if enqueue(&mut self.queue, p) {
                            ctx.count(MERGES, 1);
                        }
                        changed = true;
                    }
                } else {
                    k += 1;
                }
            }
            if !changed {
                return;
            }
        }
    }
}

impl WarpTracker for Breadth {
    type State = BreadthState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = &[
        Counter::sum("path_rotations", "paths that took a branch and went to the tail of the queue"),
        Counter::sum("path_merges", "paths merged with a queued path at the same pc (convergence events)"),
        Counter::sum(
            "sync_waits",
            "paths that stopped at a synchronisation point to wait for the rest of their divergence",
        ),
        Counter::max("max_sync_points", "the most synchronisation points open at once in one warp"),
    ];

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

    fn advance(
        &self,
        st: &mut BreadthState,
        pc: Pc,
        mask: LaneMask,
        n: u32,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(&mut st.queue, pc + 1, mask, pc + n - 1))
    }

    fn update(
        &self,
        st: &mut BreadthState,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
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
            ctx.count(ROTATIONS, 1);
            for p in next {
                if enqueue(&mut st.queue, p) {
                    ctx.count(MERGES, 1);
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
                        ctx.count(MERGES, 1);
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
        let mut v: Vec<EntryView> = st
            .syncs
            .iter()
            .map(|s| {
                let mut e = EntryView::warp(EntryKind::Sync, s.arrived, s.pc, s.pc);
                e.note = format!("waits for {:#x}", s.expected & !s.arrived);
                e
            })
            .collect();
        // The tail first, the front (running) path last, like a stack's top.
        v.extend(
            st.queue
                .iter()
                .enumerate()
                .rev()
                .map(|(k, p)| p.view(if k == 0 { EntryKind::Front } else { EntryKind::Queued })),
        );
        v
    }
}

/// The registry's facts of `breadth`.
pub const INFO: crate::Info = crate::Info::new(
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
