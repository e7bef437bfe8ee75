//! Path lists (seed 003): the generic per-warp path list [`PathList`] whose [`Order`] decides where
//! paths go (`minpc`, `sorted:*`, `thread-frontiers`), and the list rules several traversals share: the
//! sorted orders ([`Priority`], [`step`]; `sorted`, `maven`, `simty`, `arbiter`), the depth-first rules
//! ([`place`]; `minpc`, `hybrid`), and the breadth-first queue with its synchronisation points
//! ([`BreadthState`]; `breadth`, `hybrid`).

use crate::adapters::paths::{clear_run, first_ready, retain_live, skip, start, take, Path, Taken};
use crate::adapters::per_warp::{advance_ends, WarpCtx, WarpTracker};
use crate::interface::Done;
use crate::interface::{counters, splits, BarrierMode, Counter, EntryKind, EntryView, Flow, MechError, Structure};
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use std::cmp::Ordering;
use std::fmt;

/// Where a [`PathList`]'s paths go: the part of a list traversal that differs from one order to another.
pub trait Order: Copy + fmt::Debug + Sync {
    /// Counters the order keeps.
    const COUNTERS: &'static [Counter];
    /// Whether the running path is the list's last (the top of a stack) rather than its first.
    const RUNS_LAST: bool;
    /// How a trace labels the running path and the others.
    const KINDS: [EntryKind; 2];

    /// The name used on the command line and in statistics.
    fn name(&self) -> &'static str;

    /// Updates the list after the path (`pc`, `mask`) issued with outcome `flow`.
    fn update(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done;
}

/// A per-warp list of paths kept in the order `O`: one path runs, the others wait in the list.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathList<O>(pub O);

impl<O: Order> WarpTracker for PathList<O> {
    /// The paths in the order; the running path first (or last, [`Order::RUNS_LAST`]).
    type State = Vec<Path>;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = O::COUNTERS;

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Vec<Path> {
        start(entry, live)
    }

    #[inline]
    fn select(&self, st: &Vec<Path>, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        if O::RUNS_LAST {
            first_ready(st.iter().rev(), live, blocked)
        } else {
            first_ready(st.iter(), live, blocked)
        }
    }

    #[inline]
    fn straight_run(&self, st: &Vec<Path>, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Up to the next pc another path holds: until then the path keeps its rank in every order (pc,
        // depth, block rank and thread count compare the same) and merges with none.
        clear_run(st.iter(), pc, mask, max)
    }

    fn advance(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(st, pc + 1, mask, pc + n - 1))
    }

    fn update(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        self.0.update(st, pc, mask, flow, ctx)
    }

    fn depth(&self, st: &Vec<Path>) -> usize {
        st.len()
    }

    fn entries(&self, st: &Vec<Path>) -> Vec<EntryView> {
        // Bottom first: the running path is shown last, like a stack's top.
        let [running, other] = O::KINDS;
        let n = st.len();
        let view = |(k, p): (usize, &Path)| p.view(if k == 0 { running } else { other });
        if O::RUNS_LAST {
            st.iter().enumerate().map(|(k, p)| view((n - 1 - k, p))).collect()
        } else {
            st.iter().enumerate().rev().map(view).collect()
        }
    }
}

/// A priority order of a sorted path list.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Priority {
    /// Minimum pc first.
    MinPc,
    /// Maximum call depth, then minimum pc (Simty).
    Depth,
    /// Most threads first.
    Majority,
    /// Fewest threads first.
    Minority,
}

impl Priority {
    /// Every order.
    pub const ALL: [Priority; 4] = [Priority::MinPc, Priority::Depth, Priority::Majority, Priority::Minority];

    /// How `a` compares with `b`: `Less` runs first.
    #[inline]
    pub fn cmp(self, a: &Path, b: &Path) -> Ordering {
        let by_pc = a.pc.cmp(&b.pc);
        match self {
            Priority::MinPc => by_pc,
            Priority::Depth => b.depth.cmp(&a.depth).then(by_pc),
            Priority::Majority => b.mask.count_ones().cmp(&a.mask.count_ones()).then(by_pc),
            Priority::Minority => a.mask.count_ones().cmp(&b.mask.count_ones()).then(by_pc),
        }
    }

    /// Inserts `p` into the sorted list `list` after every path that does not come after it; returns its
    /// index (the number of paths ahead of it).
    pub fn insert(self, list: &mut Vec<Path>, p: Path) -> usize {
        let at = list.partition_point(|q| self.cmp(q, &p) != Ordering::Greater);
        list.insert(at, p);
        at
    }

    /// Merges the head with the next path while they are at the same place; returns the merges.
    pub fn converge_at_head(self, list: &mut Vec<Path>) -> u64 {
        let mut merges = 0;
        while list.len() >= 2 && list[0].same_place(&list[1]) {
            let a = list.remove(0);
            let b = list.remove(0);
            self.insert(list, Path { mask: a.mask | b.mask, ..a });
            merges += 1;
        }
        merges
    }
}

/// What [`step`] did to a sorted list, for the hardware models built on it (Maven's shift register).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub(crate) struct Stepped {
    /// Merges at the head.
    pub merges: u64,
    /// Paths inserted: the successors, and the lanes of the issued path that did not issue.
    pub inserted: u32,
    /// The paths ahead of each inserted path when it went in, summed: how far paths entering at the head
    /// moved down the list.
    pub passed: u64,
}

impl Stepped {
    /// Inserts `p` into the sorted list `list` and records the insertion.
    pub(crate) fn insert(&mut self, order: Priority, list: &mut Vec<Path>, p: Path) {
        self.passed += order.insert(list, p) as u64;
        self.inserted += 1;
    }
}

/// Replaces the path that issued (`pc`, `mask`) in the sorted list `list` by its successors after `flow`
/// and merges at the head.
pub(crate) fn step(
    order: Priority,
    list: &mut Vec<Path>,
    pc: Pc,
    mask: LaneMask,
    flow: &Flow,
    live: LaneMask,
) -> Result<Stepped, MechError> {
    let Taken { rest, next, .. } = take(list, pc, mask, flow, live)?;
    let by_count = matches!(order, Priority::Majority | Priority::Minority);
    if by_count && list.iter().any(|p| p.mask & !live != 0) {
        // Exits change thread counts: drop the exited lanes and restore the order (stable).
        retain_live(list, live);
        list.sort_by(|a, b| order.cmp(a, b));
    } else {
        retain_live(list, live);
    }
    let mut s = Stepped::default();
    if let Some(r) = rest {
        s.insert(order, list, r);
    }
    for p in next {
        s.insert(order, list, p);
    }
    s.merges = order.converge_at_head(list);
    Ok(s)
}

/// What [`place`] did.
#[derive(Clone, Copy, Default, Debug)]
pub(crate) struct Placed {
    /// Uniform forward branches past the top entry that swapped the active path with it.
    pub swaps: u64,
    /// Paths merged (convergence events).
    pub merges: u64,
}

/// Pushes `p` on the stack, merging it into the top entry when that one is at the same place (two saved
/// paths converging, the case of block D in the seed's Figure 1b).
fn push(st: &mut Vec<Path>, p: Path, placed: &mut Placed) {
    match st.last_mut() {
        Some(top) if top.same_place(&p) => {
            top.mask |= p.mask;
            placed.merges += 1;
        }
        _ => st.push(p),
    }
}

/// The depth-first rules: places `next`, the successors of the path that issued (`pc`, `mask`) with
/// outcome `flow` (already taken out of the stack `st`, bottom first), on the stack, then merges the active
/// path with the top entry while they are at the same place.
pub(crate) fn place(st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, next: &[Path]) -> Placed {
    let mut placed = Placed::default();
    match next {
        [] => {}
        [one] => {
            let forward_jump = matches!(flow, Flow::Branch { taken, .. } if *taken & mask != 0) && one.pc > pc;
            match st.last() {
                Some(top) if forward_jump && one.pc > top.pc => {
                    // Uniform forward branch past the top: swap the active path with the top.
                    let top = st.pop().expect("a top entry");
                    push(st, *one, &mut placed);
                    st.push(top);
                    placed.swaps += 1;
                }
                _ => st.push(*one),
            }
        }
        [fall, taken] if matches!(flow, Flow::Branch { .. }) => {
            // Forward: save the target, continue on the fall-through; backward: the reverse.
            let (saved, active) = if taken.pc > pc { (taken, fall) } else { (fall, taken) };
            push(st, *saved, &mut placed);
            st.push(*active);
        }
        many => {
            let mut v: smallvec::SmallVec<[Path; 4]> = many.iter().copied().collect();
            v.sort_by(|a, b| b.pc.cmp(&a.pc).then(b.depth.cmp(&a.depth)));
            let active = v.pop().expect("several paths");
            for p in v {
                push(st, p, &mut placed);
            }
            st.push(active);
        }
    }
    // Convergence: the active path meets the top entry.
    while st.len() >= 2 && st[st.len() - 1].same_place(&st[st.len() - 2]) {
        let a = st.pop().expect("active path");
        st.last_mut().expect("top entry").mask |= a.mask;
        placed.merges += 1;
    }
    placed
}

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

counters! {
    /// The counters of the breadth-first queue rules (`breadth`'s; `hybrid` keeps these four first).
    pub(crate) enum QueueCounter {
        Rotations = sum("path_rotations", "paths that took a branch and went to the tail of the queue"),
        Merges = sum("path_merges", "paths merged with a queued path at the same pc (convergence events)"),
        SyncWaits = sum(
            "sync_waits",
            "paths that stopped at a synchronisation point to wait for the rest of their divergence",
        ),
        MaxSyncs = max("max_sync_points", "the most synchronisation points open at once in one warp"),
    }
}

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
            ctx.count(QueueCounter::SyncWaits, 1);
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
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
        if is_pseudo(r) || ctx.prog.leaves_loop(pc) {
            return;
        }
        let covered = self.syncs.iter().any(|s| s.pc == r && s.depth == depth && s.expected & mask == mask);
        if !covered {
            self.syncs.push(SyncPoint { pc: r, depth, expected: mask & ctx.live, arrived: 0 });
            ctx.max(QueueCounter::MaxSyncs, self.syncs.len() as u64);
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
                            ctx.count(QueueCounter::Merges, 1);
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

    /// The synchronisation points, then the queue tail first, the front (running) path last, for traces.
    pub(crate) fn entries(&self) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = self
            .syncs
            .iter()
            .map(|s| {
                let mut e = EntryView::warp(EntryKind::Sync, s.arrived, s.pc, s.pc);
                e.note = format!("waits for {:#x}", s.expected & !s.arrived);
                e
            })
            .collect();
        v.extend(
            self.queue
                .iter()
                .enumerate()
                .rev()
                .map(|(k, p)| p.view(if k == 0 { EntryKind::Front } else { EntryKind::Queued })),
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pc: Pc, mask: LaneMask, depth: u32) -> Path {
        Path { pc, mask, depth }
    }

    #[test]
    fn orders() {
        let a = p(5, 0b0001, 0);
        let b = p(3, 0b0110, 1);
        assert_eq!(Priority::MinPc.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Depth.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Majority.cmp(&a, &b), Ordering::Greater);
        assert_eq!(Priority::Minority.cmp(&a, &b), Ordering::Less);
    }

    #[test]
    fn head_convergence_merges_equal_places_and_resorts() {
        let mut l = vec![p(4, 0b0001, 0), p(4, 0b0010, 0), p(6, 0b1100, 0)];
        assert_eq!(Priority::MinPc.converge_at_head(&mut l), 1);
        assert_eq!(l, vec![p(4, 0b0011, 0), p(6, 0b1100, 0)]);
        // Under minority order the merged path (2 threads) goes behind a 1-thread path.
        let mut l = vec![p(4, 0b0001, 0), p(4, 0b0010, 0), p(9, 0b0100, 0)];
        Priority::Minority.converge_at_head(&mut l);
        assert_eq!(l, vec![p(9, 0b0100, 0), p(4, 0b0011, 0)]);
    }
}
