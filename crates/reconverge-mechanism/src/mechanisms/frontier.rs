//! Thread frontiers (Diamos, Ashbaugh, Maiyuran, Kerr, Wu & Yalamanchili, MICRO'11), mechanism
//! `thread-frontiers`, in its sorted-stack form (GPU Ocelot's `tf-sorted-stack`).
//!
//! The compiler gives the blocks a priority (`reconverge_analysis::frontier_order`: every block after
//! the blocks that reach it without a back edge, a loop's blocks before its exits) and lays them out in
//! that order; we keep the kernel's layout and rank each pc by its block's priority instead
//! (`Program::frontier_rank`). Per warp, the paths form a map from (call depth, pc) to lanes, sorted by
//! deepest call, then rank. The highest-priority path always runs. After an instruction its successors
//! are inserted; a successor at a place that already holds a path merges with it wherever it is in the
//! map (a reconvergence event). Threads that branched away wait in the map: the *thread frontier* of the
//! running block. Because a block runs only after every higher-priority block holding threads, paths
//! meet at the first block where they can: before the immediate post-dominator on unstructured code
//! (short-circuit conditions), where PDOM reconverges later.

use crate::adapters::path_list::Order;
use crate::adapters::paths::{retain_live, take, Path, Taken};
use crate::adapters::per_warp::WarpCtx;
use crate::interface::counters;
use crate::interface::Done;
use crate::interface::{Counter, EntryKind, Flow};
use crate::program::Program;
use crate::types::{LaneMask, Pc};

/// The thread-frontier sorted stack.
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadFrontiers;

counters! {
    /// Counter indices.
    pub(crate) enum FrontierCounter {
        Merges = sum(
            "path_merges",
            "paths that reached a place already holding a path and merged (reconvergence events)",
        ),
    }
}

/// The priority key of a path: deeper calls first, then lower rank.
fn key(prog: &Program, p: &Path) -> (std::cmp::Reverse<u32>, Pc) {
    let rank = prog.frontier_rank.get(p.pc as usize).copied().unwrap_or(p.pc);
    (std::cmp::Reverse(p.depth), rank)
}

/// Inserts `p`, merging it into a path at the same place; returns whether it merged.
fn insert(prog: &Program, list: &mut Vec<Path>, p: Path) -> bool {
    if let Some(q) = list.iter_mut().find(|q| q.same_place(&p)) {
        q.mask |= p.mask;
        return true;
    }
    let k = key(prog, &p);
    let at = list.partition_point(|q| key(prog, q) <= k);
    list.insert(at, p);
    false
}

impl Order for ThreadFrontiers {
    const COUNTERS: &'static [Counter] = FrontierCounter::COUNTERS;
    /// The paths by priority; the first runs.
    const RUNS_LAST: bool = false;
    const KINDS: [EntryKind; 2] = [EntryKind::Running, EntryKind::Frontier];

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn update(&self, st: &mut Vec<Path>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let Taken { rest, next, .. } = take(st, pc, mask, flow, ctx.live)?;
        retain_live(st, ctx.live);
        if let Some(r) = rest {
            insert(ctx.prog, st, r);
        }
        for p in next {
            if insert(ctx.prog, st, p) {
                ctx.count(FrontierCounter::Merges, 1);
            }
        }
        Ok(())
    }
}

/// The registry's facts of `thread-frontiers`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "thread-frontiers",
    crate::Scope::Warp,
    "thread frontiers (Diamos et al., MICRO 2011): paths sorted by block priority, merging wherever they meet",
)
// The priority is the block's place in the compiler's layout, so a path needs no priority field.
.storage(crate::storage::common::PATH_LIST);

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::adapters::path_list::PathList;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&PathList(ThreadFrontiers), &program(DIAMOND), 0b1111, 0b0001, 64);
        // Blocks in thread-frontier priority (layout order here): the fall-through side, then the taken
        // side, whose frontier holds the join, where all lanes meet.
        assert_lower_pc_first_then_meet(&t);
    }
}
