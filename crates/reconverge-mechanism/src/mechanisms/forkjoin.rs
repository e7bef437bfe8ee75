//! Depth-first traversal with stack-depth minimisation (seed 003 §2.2, AMD GCN fork/join), mechanism
//! `forkjoin`.
//!
//! The compiler delimits single-entry single-exit regions: every potentially divergent branch is a
//! *fork* (the kernel's own branch, like GCN's `s_cbranch_fork`) and the region pass puts a `join` at the
//! first instruction of its reconvergence block. At run time:
//! - a fork that splits the active path pushes the path taken by the **majority** and continues on the
//!   **minority** (ties: the taken side runs first, as in GCN's pseudo-code); the first fork of a region
//!   records the region: its join, the stack depth to return to (GCN's saved CSP), and its lanes (GCN's
//!   saved EXEC); a fork nested in an open region with the same join reuses it;
//! - a path reaching the region's `join` while the stack is deeper than the saved depth is dropped and
//!   the top entry runs (no partial convergence before the join: block D of Figure 1c runs twice);
//!   when the stack is back at the saved depth the region closes and its lanes, minus those that exited,
//!   continue after the join.
//!
//! An indirect branch to several targets forks one target at a time, as GCN's waterfall loop does: the
//! smallest target group runs and the other lanes execute the branch again later.
//!
//! Running the smaller side first at least halves the active lanes at each push, so the stack never
//! holds more than log2(W) saved paths (a property test). A `join` of a region that never forked (its
//! branch was uniform) does nothing. Paths whose lanes all exit are dropped and the top entry runs.

use crate::paths::{first_ready, issued, successors, Path};
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// An open fork/join region.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Region {
    /// The pc of its `join`.
    pub join: Pc,
    /// The call depth it was opened at.
    pub depth: u32,
    /// Saved paths below it (the stack depth to return to).
    pub saved: usize,
    /// The lanes that entered it.
    pub lanes: LaneMask,
}

/// The stack and the open regions of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ForkJoinState {
    /// Saved paths, bottom first, then the active path last.
    pub stack: Vec<Path>,
    /// Open regions, outermost first.
    pub regions: Vec<Region>,
}

/// The fork/join traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForkJoin;

const FORKS: usize = 0;
const JOIN_SWITCHES: usize = 1;
const REGIONS: usize = 2;

impl ForkJoinState {
    fn fork(&mut self, pc: Pc, mask: LaneMask, mut next: smallvec::SmallVec<[Path; 4]>, ctx: &mut WarpCtx<'_>) {
        let depth = next[0].depth;
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
        let open = self.regions.iter().any(|g| g.join == r && g.depth == depth && g.lanes & mask == mask);
        if !is_pseudo(r) && !open {
            let saved = self.stack.len();
            self.regions.push(Region { join: r, depth, saved, lanes: mask });
            ctx.count(REGIONS, 1);
        }
        // Majority pushed (deepest), minority runs; ties: the later (taken) side runs.
        next.sort_by_key(|p| std::cmp::Reverse(p.mask.count_ones()));
        self.stack.extend(next);
        ctx.count(FORKS, 1);
    }

    fn join(&mut self, active: Path, ctx: &mut WarpCtx<'_>) {
        let at = self.regions.iter().rposition(|g| g.join == active.pc && g.depth == active.depth);
        let Some(k) = at else {
            // No open region here: the join does nothing.
            self.stack.push(Path { pc: active.pc + 1, ..active });
            return;
        };
        let region = self.regions[k];
        if self.stack.len() > region.saved {
            // Other paths of the region are saved: this one waits (GCN: pop the next path).
            ctx.count(JOIN_SWITCHES, 1);
            return;
        }
        self.regions.truncate(k);
        let lanes = region.lanes & ctx.live;
        if lanes != 0 {
            self.stack.push(Path { pc: active.pc + 1, mask: lanes, depth: active.depth });
        }
    }
}

impl WarpTracker for ForkJoin {
    type State = ForkJoinState;

    const STRUCTURE: Structure = Structure::Stack;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = &[
        Counter::sum("forks", "divergent branches that pushed the majority path and ran the minority"),
        Counter::sum(
            "join_switches",
            "paths that reached their region's join while others were saved (the next one ran)",
        ),
        Counter::sum("regions", "fork/join regions opened"),
    ];

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> ForkJoinState {
        ForkJoinState { stack: vec![Path { pc: entry, mask: live, depth: 0 }], regions: Vec::new() }
    }

    #[inline]
    fn select(&self, st: &ForkJoinState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.stack.iter().rev(), live, blocked)
    }

    fn update(
        &self,
        st: &mut ForkJoinState,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        let i = issued(&st.stack, pc, mask)?;
        let path = st.stack.remove(i);
        let rest = path.mask & !mask & ctx.live;
        if rest != 0 {
            st.stack.insert(i, Path { mask: rest, ..path });
        }
        let active = Path { mask, ..path };
        if let Flow::Join = flow {
            st.join(active, ctx);
        } else {
            let mut next = successors(&active, mask, flow, ctx.live)?;
            if next.len() > 2 {
                // An indirect branch to several targets: like GCN's waterfall loop, the smallest target
                // group runs and the rest executes the branch again later (one binary fork per target).
                let k = (0..next.len()).min_by_key(|&k| next[k].mask.count_ones()).expect("paths");
                let small = next[k];
                let rest = next.iter().filter(|p| p.pc != small.pc).fold(0, |m, p| m | p.mask);
                next = smallvec::smallvec![Path { pc, mask: rest, depth: active.depth }, small];
            }
            match next.len() {
                0 => {}
                1 => st.stack.push(next[0]),
                _ => st.fork(pc, mask, next, ctx),
            }
        }
        st.stack.retain_mut(|p| {
            p.mask &= ctx.live;
            p.mask != 0
        });
        // A region none of whose paths is left (the last ones exited before reaching the join) closes:
        // the lanes waiting at its join go on.
        while let Some(g) = st.regions.last().copied() {
            if st.stack.len() > g.saved {
                break;
            }
            st.regions.pop();
            let lanes = g.lanes & ctx.live;
            if lanes != 0 {
                st.stack.push(Path { pc: g.join + 1, mask: lanes, depth: g.depth });
            }
        }
        Ok(())
    }

    fn depth(&self, st: &ForkJoinState) -> usize {
        // Saved paths: the stack without the active path.
        st.stack.len().saturating_sub(1)
    }

    fn entries(&self, st: &ForkJoinState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .regions
            .iter()
            .map(|g| {
                let mut e = EntryView::warp(EntryKind::Join, g.lanes, g.join, g.join);
                e.note = format!("csp={}", g.saved);
                e
            })
            .collect();
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

/// The registry's facts of `forkjoin`.
pub const INFO: crate::Info = crate::Info::new(
    "forkjoin",
    crate::Scope::Warp,
    "depth-first with stack-depth minimisation: compiler fork/join regions, minority path first (AMD GCN)",
)
.pass(crate::Pass::Region(reconverge_transform::RegionPass::Join));
