//! IPDOM reconvergence points of conditional branches.
//!
//! A SIMT warp whose lanes split at a conditional branch runs each side with part of its lanes and
//! reconverges at the branch's immediate post-dominator: the first block every lane must reach. For each
//! conditional block of a [`Cfg`] (guarded `bra`, `brx.idx` with several targets, guarded `ret`, `exit`,
//! `trap`) this table records the targets and that point. When it is [`PostDom::VirtualExit`] the lanes
//! only meet again when the function ends ([`BranchInfo::reconverges_only_at_exit`]): the two sides
//! leave the function by different exits, or one side leaves it.
//!
//! Inside an infinite loop the IPDOM is computed on the graph with fake exit edges (see
//! [`crate::postdom`]), so it is a well-defined block, but the lanes may never actually get there.

use crate::cfg::{Cfg, EdgeTarget};
use crate::postdom::{PostDom, PostDomTree};
use reconverge_ir::InstId;

/// One conditional branch and its reconvergence point.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BranchInfo {
    /// The block ending in the branch.
    pub block: u32,
    /// The branch instruction (`None` for CFGs made by [`Cfg::from_graph`]).
    pub inst: Option<InstId>,
    /// The distinct targets, as in [`Cfg::edges`] (taken side first, fall-through last).
    pub targets: Vec<EdgeTarget>,
    /// The immediate post-dominator of the block: where diverged lanes reconverge.
    pub reconvergence: PostDom,
    /// Whether the branch carries `.uni` (asserted non-divergent by the program).
    pub uniform: bool,
    /// Whether every outcome goes to the same place (a guarded `bra` to the next block).
    pub trivial: bool,
}

impl BranchInfo {
    /// Whether the lanes only meet again at function exit (the reconvergence point is the virtual exit).
    pub fn reconverges_only_at_exit(&self) -> bool {
        self.reconvergence.is_virtual_exit()
    }
}

/// The reconvergence point of every conditional branch of a function.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Reconvergence {
    branches: Vec<BranchInfo>,
    /// Index into `branches` per block.
    by_block: Vec<Option<usize>>,
}

impl Reconvergence {
    /// Finds the conditional branches of `cfg` and their IPDOM in `postdom` (which must be the
    /// post-dominator tree of `cfg.graph()` with `cfg.exit_blocks()`).
    pub fn compute(cfg: &Cfg, postdom: &PostDomTree) -> Reconvergence {
        let n = cfg.num_blocks();
        let mut branches = Vec::new();
        let mut by_block = vec![None; n];
        for b in 0..n as u32 {
            if !cfg.is_conditional(b) {
                continue;
            }
            by_block[b as usize] = Some(branches.len());
            branches.push(BranchInfo {
                block: b,
                inst: cfg.terminator(b),
                targets: cfg.edges(b).iter().map(|e| e.to).collect(),
                reconvergence: postdom.ipdom(b),
                uniform: cfg.is_uniform(b),
                trivial: cfg.is_trivial(b),
            });
        }
        Reconvergence { branches, by_block }
    }

    /// Every conditional branch, in increasing block order.
    pub fn branches(&self) -> &[BranchInfo] {
        &self.branches
    }

    /// The conditional branch ending `block`, if it ends in one.
    pub fn for_block(&self, block: u32) -> Option<&BranchInfo> {
        self.by_block.get(block as usize).copied().flatten().map(|i| &self.branches[i])
    }

    /// The conditional branch whose instruction is `inst`, if any.
    pub fn for_inst(&self, inst: InstId) -> Option<&BranchInfo> {
        self.branches.iter().find(|b| b.inst == Some(inst))
    }
}
