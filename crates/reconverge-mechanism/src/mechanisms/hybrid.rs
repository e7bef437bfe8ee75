//! Hybrid path traversal (seed 003 §2.3), mechanism `hybrid`: structured control flow depth-first,
//! unstructured control flow breadth-first.
//!
//! The seed: "A patent application, which might describe the implementation of the NVIDIA Volta
//! architecture, proposes a hybrid traversal order. It traverses structured control-flow paths
//! depth-first, then unstructured paths breadth-first." Which branches are structured is decided once,
//! at decode time ([`Program::structured`](reconverge_program::Program::structured)): a branch is
//! structured when its region (the blocks reachable from it before its IPDOM) has a single entry, no
//! irreducible loop, and only structured branches inside (`reconverge_analysis::structured`).
//!
//! A warp keeps two structures, the two traversals it combines:
//! - a depth-first **stack** (`minpc`'s, bottom first, the last path active): a divergence at a
//!   structured branch pushes its paths there and `minpc`'s rules run them, minimum pc first, merging
//!   paths that meet at an equal pc and call depth; when the nest has converged to one path, that path
//!   goes back to its place in the queue;
//! - a breadth-first **queue** with its synchronisation points (`breadth`'s structure and rules): an
//!   unstructured branch that some lanes take sends the issued path's successors to the tail (merging
//!   with a queued path at the same place), and a divergence there opens a synchronisation point at its
//!   IPDOM unless it leaves a loop.
//!
//! The stack's top runs while the stack holds paths; otherwise the queue's front runs. Straight-line
//! code, jumps, calls and returns are depth-first steps (a path keeps its place). Lanes that reach an
//! open synchronisation point park there wherever their path is.

use crate::adapters::path_list::{clear_of_syncs, enqueue, park, place, BreadthState, QueueCounter};
use crate::adapters::paths::{clear_run, first_ready, issued, retain_live, skip, successors, Path};
use crate::adapters::per_warp::{advance_ends, WarpCtx, WarpTracker};
use crate::interface::counters;
use crate::interface::Done;
use crate::interface::{splits, BarrierMode, Counter, EntryKind, EntryView, Flow, MechError, Structure};
use crate::types::{LaneMask, Pc};

/// The depth-first stack and the breadth-first queue of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct HybridState {
    /// The paths of the structured divergences being traversed, bottom first; the last one is the active
    /// path. Empty, or at least two paths: a lone path goes back to the queue.
    pub stack: Vec<Path>,
    /// The queue of paths (front first) and the open synchronisation points, as `breadth` keeps them.
    pub breadth: BreadthState,
}

/// The hybrid traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hybrid;

counters! {
    /// Counter indices: the first four are the queue rules' ([`QueueCounter`]), which count them.
    pub(crate) enum HybridCounter {
        Rotations = sum("path_rotations", "paths that took an unstructured branch and went to the tail of the queue"),
        Merges = sum("path_merges", "paths merged at an equal pc and depth: on the stack or in the queue"),
        SyncWaits = sum(
            "sync_waits",
            "paths that stopped at a synchronisation point to wait for the rest of their divergence",
        ),
        MaxSyncs = max("max_sync_points", "the most synchronisation points open at once in one warp"),
        Swaps = sum("uniform_swaps", "uniform forward branches past the stack's top that swapped the active path"),
        Structured = sum("structured_divergences", "divergences at structured branches: paths pushed depth-first"),
        Unstructured = sum(
            "unstructured_divergences",
            "divergences at unstructured branches: paths queued breadth-first",
        ),
    }
}

// The queue rules count into the same indices.
const _: () = assert!(
    HybridCounter::Rotations as usize == QueueCounter::Rotations as usize
        && HybridCounter::Merges as usize == QueueCounter::Merges as usize
        && HybridCounter::SyncWaits as usize == QueueCounter::SyncWaits as usize
        && HybridCounter::MaxSyncs as usize == QueueCounter::MaxSyncs as usize
);

/// Removes the path at `i` of `list` that issued the lanes `mask`; its other `live` lanes (waiting at a
/// barrier) stay there. Returns the path and how many paths stayed (0 or 1).
fn remove(list: &mut Vec<Path>, i: usize, mask: LaneMask, live: LaneMask) -> (Path, usize) {
    let path = list.remove(i);
    let rest = path.mask & !mask & live;
    if rest != 0 {
        list.insert(i, Path { mask: rest, ..path });
    }
    (path, usize::from(rest != 0))
}

/// Whether the instruction at `pc` is a conditional branch whose region is unstructured.
#[inline]
fn unstructured(ctx: &WarpCtx<'_>, pc: Pc) -> bool {
    ctx.prog.is_conditional_branch(pc) && !ctx.prog.is_structured(pc)
}

impl HybridState {
    /// Takes the path that issued (`pc`, `mask`) out of the stack or the queue; its lanes that did not issue
    /// (waiting at a barrier) stay where it was. Returns it and, if it was queued, the queue index after
    /// those lanes (where the path goes back if it stays alone).
    fn take(&mut self, pc: Pc, mask: LaneMask, live: LaneMask) -> Result<(Path, Option<usize>), MechError> {
        if let Ok(i) = issued(&self.stack, pc, mask) {
            return Ok((remove(&mut self.stack, i, mask, live).0, None));
        }
        let i = issued(&self.breadth.queue, pc, mask)?;
        let (path, kept) = remove(&mut self.breadth.queue, i, mask, live);
        Ok((path, Some(i + kept)))
    }

    /// A lone path left on the stack goes back to the queue at `at` (its place, or the front), merging
    /// with a queued path at the same place.
    fn unstack(&mut self, at: Option<usize>, ctx: &mut WarpCtx<'_>) {
        if self.stack.len() != 1 {
            return;
        }
        let Some(p) = self.stack.pop() else { return };
        let q = &mut self.breadth.queue;
        match q.iter_mut().find(|x| x.same_place(&p)) {
            Some(x) => {
                x.mask |= p.mask;
                ctx.count(HybridCounter::Merges, 1);
            }
            None => q.insert(at.unwrap_or(0).min(q.len()), p),
        }
    }
}

impl WarpTracker for Hybrid {
    type State = HybridState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = HybridCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> HybridState {
        let breadth = BreadthState { queue: vec![Path { pc: entry, mask: live, depth: 0 }], syncs: Vec::new() };
        HybridState { stack: Vec::new(), breadth }
    }

    #[inline]
    fn select(&self, st: &HybridState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.stack.iter().rev().chain(st.breadth.queue.iter()), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &HybridState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Straight-line code is a depth-first step: after the first one the path is the stack's top, or
        // (the stack empty) back at its place in the queue; it stays there up to the next pc where another
        // path or an open synchronisation point is.
        let paths = st.stack.iter().chain(st.breadth.queue.iter());
        clear_of_syncs(&st.breadth.syncs, pc, clear_run(paths, pc, mask, max))
    }

    fn advance(&self, st: &mut HybridState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| {
            let list = if st.stack.is_empty() { &mut st.breadth.queue } else { &mut st.stack };
            skip(list, pc + 1, mask, pc + n - 1)
        })
    }

    fn update(&self, st: &mut HybridState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let live = ctx.live;
        let (path, at) = st.take(pc, mask, live)?;
        let next = successors(&path, mask, flow, live)?;
        let unstructured = unstructured(ctx, pc);
        if splits(mask, flow) {
            ctx.count(if unstructured { HybridCounter::Unstructured } else { HybridCounter::Structured }, 1);
        }
        if unstructured {
            st.breadth.open(pc, mask, path.depth, flow, ctx);
        }
        retain_live(&mut st.stack, live);
        retain_live(&mut st.breadth.queue, live);
        let rotates = unstructured
            && match flow {
                Flow::Branch { taken, .. } => taken & mask != 0,
                Flow::Multi(_) => true,
                _ => false,
            };
        if rotates {
            // Breadth-first: the successors go to the tail.
            ctx.count(HybridCounter::Rotations, 1);
            for p in next {
                if enqueue(&mut st.breadth.queue, p) {
                    ctx.count(HybridCounter::Merges, 1);
                }
            }
        } else {
            // Depth-first: `minpc`'s rules on the stack.
            let placed = place(&mut st.stack, pc, mask, flow, &next);
            ctx.count(HybridCounter::Swaps, placed.swaps);
            ctx.count(HybridCounter::Merges, placed.merges);
        }
        // A path parks at one synchronisation point per call; several open points at its place may each
        // expect some of its lanes (the same branch, diverging again on other paths), so it parks until
        // none takes a lane. Lanes that walked on past a point expecting them would leave it waiting forever.
        while park(&mut st.breadth.syncs, &mut st.stack, ctx) {}
        st.unstack(at, ctx);
        st.breadth.synchronize(live, ctx);
        Ok(())
    }

    fn depth(&self, st: &HybridState) -> usize {
        st.stack.len() + st.breadth.queue.len() + st.breadth.syncs.len()
    }

    fn entries(&self, st: &HybridState) -> Vec<EntryView> {
        // Synchronisation points, then the queue tail first, then the stack bottom first: the running path
        // (the stack's top, or the queue's front when the stack is empty) comes last.
        let mut v: Vec<EntryView> = st.breadth.entries();
        if !st.stack.is_empty() {
            if let Some(front) = v.last_mut().filter(|e| e.kind == EntryKind::Front) {
                front.kind = EntryKind::Queued;
            }
        }
        let n = st.stack.len();
        v.extend(
            st.stack
                .iter()
                .enumerate()
                .map(|(k, p)| p.view(if k + 1 == n { EntryKind::Active } else { EntryKind::Saved })),
        );
        v
    }
}

/// The registry's facts of `hybrid`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "hybrid",
    crate::Scope::Warp,
    "structured control flow depth-first, unstructured breadth-first (seed 003, section 2.3)",
)
.storage(STORAGE);

/// What `hybrid` stores: one table per warp holding the stack's paths, the queue's paths (together at most
/// W: their lanes are disjoint) and the open synchronisation points (fewer than W), which `max_paths`
/// counts together; two kind bits tell them apart.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[Part::new(
        "stack and queue",
        Per::Warp,
        Cells::Sram,
        Size::Reached(Reach::Structure, &common::STACK_WORST),
        Size::Sum(&[Size::Const(2), common::PATH_BITS]),
        "{kind, pc, depth, mask}",
    )]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, run_warp, taking, DIAMOND, NESTED};
    use crate::{MinPc, PathList, Priority};

    /// seed 003's Figure 1 as the suite compiles it (`kernels/ptx/sm_80/short_circuit.ptx`).
    const SHORT_CIRCUIT: &str = include_str!("../../../../kernels/ptx/sm_80/short_circuit.ptx");

    /// Figure 1's predicates on 4 threads: `%p1` (`tid % 4 == 1`) sends thread 1 to D; `%p2`
    /// (`tid % 4 != 0`) sends threads 2 and 3 from B to D; thread 0 goes A B C E.
    fn figure1(p: u32, t: usize, _k: u32) -> bool {
        if p == 1 {
            t % 4 == 1
        } else {
            !t.is_multiple_of(4)
        }
    }

    #[test]
    fn the_queue_rules_count_hybrid_s_first_four_counters() {
        let names = |c: &[Counter]| c.iter().map(|c| c.name).collect::<Vec<_>>();
        assert_eq!(names(&HybridCounter::COUNTERS[..4]), names(QueueCounter::COUNTERS));
    }

    #[test]
    fn structured_code_runs_depth_first_like_minpc() {
        for src in [DIAMOND, NESTED] {
            let p = program(src);
            assert!(p.structured.iter().any(|&s| s));
            let t = issues(&Hybrid, &p, 0b1111, 0b0001, 64);
            assert_eq!(t, issues(&PathList(MinPc), &p, 0b1111, 0b0001, 64));
        }
        let r = run_warp(&Hybrid, &program(DIAMOND), 0b1111, &taking(0b0001), 64);
        assert_lower_pc_first_then_meet(&r.pcs());
        assert_eq!((r.counter("structured_divergences"), r.counter("unstructured_divergences")), (1, 0));
        assert_eq!(r.counter("path_rotations"), 0);
    }

    #[test]
    fn the_short_circuit_is_unstructured_and_runs_breadth_first() {
        let p = program(SHORT_CIRCUIT);
        let r = run_warp(&Hybrid, &p, 0b1111, &figure1, 64);
        assert_eq!(r.pcs(), run_warp(&crate::Breadth, &p, 0b1111, &figure1, 64).pcs());
        assert_eq!((r.counter("structured_divergences"), r.counter("unstructured_divergences")), (0, 2));
        // Both divergences share the synchronisation point at E, where every lane meets: D runs once.
        assert_eq!(r.counter("max_sync_points"), 1);
        assert!(r.counter("sync_waits") >= 2);
        let d = p.info.iter().position(|i| i.text.starts_with("mov.u32") && i.text.contains(", 13"));
        let d = d.expect("D's first instruction") as Pc;
        assert_eq!(r.pcs().iter().filter(|(pc, _)| *pc == d).count(), 1, "{:?}", r.pcs());
        // Sorted by pc, the same program reconverges differently (thread 0's C comes before D).
        assert_ne!(r.pcs(), run_warp(&crate::PathList(crate::Sorted(Priority::MinPc)), &p, 0b1111, &figure1, 64).pcs());
    }

    /// `if (tid < 3 && tid != 1) { if (tid == 0) C1 else C2 } else D; E`: a structured if/else inside
    /// an unstructured short circuit.
    const MIXED: &str = r#"
{
    .reg .pred %p<4>;
    .reg .b32 %r<4>;
    setp.ge.u32 %p1, %tid.x, 3;
    setp.eq.u32 %p2, %tid.x, 1;
    setp.eq.u32 %p3, %tid.x, 0;
    @%p1 bra D;
    @%p2 bra D;
    @%p3 bra C1;
    mov.u32 %r1, 2;
    bra.uni E;
C1:
    mov.u32 %r1, 1;
    bra.uni E;
D:
    mov.u32 %r1, 3;
E:
    add.u32 %r2, %r1, 1;
    exit;
}
"#;

    fn mixed(p: u32, t: usize, _k: u32) -> bool {
        match p {
            1 => t >= 3,
            2 => t == 1,
            _ => t == 0,
        }
    }

    #[test]
    fn a_structured_nest_inside_an_unstructured_region_runs_depth_first_then_waits_at_the_safe_point() {
        let p = program(MIXED);
        let (b3, b4, b5) = (3, 4, 5);
        assert!(!p.is_structured(b3) && !p.is_structured(b4) && p.is_structured(b5));
        let r = run_warp(&Hybrid, &p, 0b1111, &mixed, 64);
        assert_eq!((r.counter("structured_divergences"), r.counter("unstructured_divergences")), (1, 2));
        // The inner if/else: its two sides run back to back (lowest pc first) and both wait at E.
        let t = r.pcs();
        let inner = t.iter().position(|&(pc, _)| pc == b5).expect("the inner branch");
        assert_eq!(&t[inner + 1..inner + 5], &[(6, 0b0100), (7, 0b0100), (8, 0b0001), (9, 0b0001)], "{t:?}");
        // Every lane meets at E once.
        let e = p.info.iter().position(|i| i.text.starts_with("add.u32")).expect("E") as Pc;
        assert_eq!(t.iter().filter(|(pc, _)| *pc == e).collect::<Vec<_>>(), [&(e, 0b1111)], "{t:?}");
    }
}
