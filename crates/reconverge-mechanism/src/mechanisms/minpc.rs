//! Depth-first path traversal with minimum-pc priority (seed 003 §2.1), mechanism `minpc`.
//!
//! The warp runs one *active* path; the other paths are saved on a stack (a list of future
//! directions, not a global state as in PDOM). The seed's rules, applied after each instruction:
//! - a divergent **forward** branch pushes the target path and continues on the fall-through;
//! - a divergent **backward** branch pushes the fall-through path and continues at the target;
//! - a **uniform forward** branch whose target is greater than the top entry's pc swaps the active path
//!   with the top (the active path is saved, the top runs);
//! - when the active pc equals the top's pc (and call depth) the top is popped and merged into the active
//!   path: convergence. Likewise a saved path pushed onto an entry at the same place merges with it
//!   (the seed: convergence merges "the active path with a path of the list, or two paths of the
//!   list"), which is how block D of Figure 1b runs once.
//!
//! Every rule gives the smaller pc priority, so convergence happens where the paths meet again in code
//! layout. Beyond the seed: an indirect branch or a partial call saves its other paths by decreasing pc
//! and runs the smallest; a path whose lanes all exit is replaced by the top entry; when the active path
//! waits at a barrier (threads arrive one by one) the topmost path that can issue is swapped in.

use crate::paths::{clear_run, first_ready, retain_live, skip, start, take, Path, Taken};
use crate::per_warp::advance_ends;
use crate::types::{LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// The depth-first minimum-pc traversal.
#[derive(Clone, Copy, Debug, Default)]
pub struct MinPc;

/// Counter indices.
const SWAPS: usize = 0;
const MERGES: usize = 1;

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

impl WarpTracker for MinPc {
    /// The stack, bottom first; the last path is the active one.
    type State = Vec<Path>;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [crate::Counter] = &[
        crate::Counter::sum(
            "uniform_swaps",
            "uniform forward branches past the top entry that swapped the active path with it",
        ),
        crate::Counter::sum("path_merges", "paths merged into the active path at an equal pc (convergence events)"),
    ];

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Vec<Path> {
        start(entry, live)
    }

    #[inline]
    fn select(&self, st: &Vec<Path>, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        first_ready(st.iter().rev(), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &Vec<Path>, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // Up to the next pc another path holds: until then the path stays the active one (the first
        // update may bring it to the top) and merges with nothing.
        clear_run(st.iter(), pc, mask, max)
    }

    fn advance(
        &self,
        st: &mut Vec<Path>,
        pc: Pc,
        mask: LaneMask,
        n: u32,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| skip(st, pc + 1, mask, pc + n - 1))
    }

    fn update(
        &self,
        st: &mut Vec<Path>,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        let Taken { index, rest, next, .. } = take(st, pc, mask, flow, ctx.live)?;
        if let Some(r) = rest {
            // Lanes of the path that did not issue (waiting at a barrier) stay saved where they were.
            st.insert(index, r);
        }
        retain_live(st, ctx.live);
        let placed = place(st, pc, mask, flow, &next);
        ctx.count(SWAPS, placed.swaps);
        ctx.count(MERGES, placed.merges);
        Ok(())
    }

    fn depth(&self, st: &Vec<Path>) -> usize {
        st.len()
    }

    fn entries(&self, st: &Vec<Path>) -> Vec<EntryView> {
        let n = st.len();
        st.iter()
            .enumerate()
            .map(|(k, p)| p.view(if k + 1 == n { EntryKind::Active } else { EntryKind::Saved }))
            .collect()
    }
}

/// The registry's facts of `minpc`.
pub const INFO: crate::Info = crate::Info::new(
    "minpc",
    crate::Scope::Warp,
    "depth-first path traversal, minimum pc first (seed 003, section 2.1)",
)
.storage(crate::storage::common::PATH_LIST);

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&MinPc, &program(DIAMOND), 0b1111, 0b0001, 64);
        // The lowest pc first: the fall-through side (pcs 2-3) before the taken side (pc 4); the paths
        // meet at the join, whose pc is higher than both.
        assert_lower_pc_first_then_meet(&t);
    }
}
