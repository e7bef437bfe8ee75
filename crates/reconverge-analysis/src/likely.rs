//! Likely-convergence points (Fung & Aamodt, HPCA'11, the thread block compaction paper's extension).
//!
//! A branch inside a loop whose IPDOM lies outside the loop (one side can leave the loop early: a `break`,
//! an early `return`) reconverges only when every lane has left the loop, although the lanes that stay in
//! the loop usually meet much earlier, before the loop's back edge. The paper marks such an earlier point,
//! the *likely-convergence point* (LPC): lanes reaching it wait there to be merged (and, under TBC,
//! compacted) with the other lanes that reach it, instead of each path iterating on its own.
//!
//! The paper finds LPCs by profiling or by hand; reconverge derives them from the CFG: the LPC of such a
//! branch is its immediate post-dominator in the innermost loop that holds it but not its IPDOM, with the
//! loop's back edges and exits removed and its latches as the exits. That is the first block every
//! path that *stays in the loop for another iteration* must pass. A branch without such a block (the
//! back-edge branch itself, whose in-loop paths are the back edge) has no LPC, and neither has a branch
//! whose only in-loop target is the LPC itself (its in-loop threads are already together there).

use crate::analysis::FunctionAnalysis;
use crate::graph::{DiGraph, Graph};
use crate::postdom::PostDomTree;

/// The likely-convergence block of the conditional branch ending `block`, if it has one (see the
/// module documentation).
pub fn likely_convergence(fa: &FunctionAnalysis, block: u32) -> Option<u32> {
    let info = fa.reconvergence.for_block(block)?;
    let r = info.reconvergence.block();
    // The innermost loop holding the branch but not its reconvergence point.
    let l = fa
        .loops
        .loops()
        .iter()
        .filter(|l| l.contains(block) && r.is_none_or(|r| !l.contains(r)))
        .max_by_key(|l| l.depth)?;
    let local = |b: u32| l.blocks.binary_search(&b).ok().map(|i| i as u32);
    let mut g = DiGraph::new(l.blocks.len());
    for &b in &l.blocks {
        for &s in fa.cfg.graph().succs(b) {
            if s == l.header && l.latches.binary_search(&b).is_ok() {
                continue; // the back edge
            }
            if let (Some(x), Some(y)) = (local(b), local(s)) {
                g.add_edge(x, y);
            }
        }
    }
    let exits: Vec<u32> = l.latches.iter().filter_map(|&b| local(b)).collect();
    let pd = PostDomTree::compute(&g, &exits);
    let lpc = l.blocks[pd.ipdom(local(block)?).block()? as usize];
    let in_loop: Vec<u32> = fa.cfg.graph().succs(block).iter().copied().filter(|&s| l.contains(s)).collect();
    if in_loop.iter().all(|&s| s == lpc) {
        return None;
    }
    Some(lpc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;

    /// A CFG from `(block, successors)`; the blocks listed as exits leave the function.
    fn analysis(n: usize, edges: &[(u32, u32)], exits: &[u32]) -> FunctionAnalysis {
        FunctionAnalysis::from_cfg(Cfg::from_graph(DiGraph::from_edges(n, edges.iter().copied()), 0, exits))
    }

    #[test]
    fn a_nested_break_converges_at_the_latch() {
        // 0 -> 1 (header); 1: if (x) -> 2 else -> 4; 2: if (y) break -> 5 else -> 4... via 3
        // 0:entry 1:header 2:then(A) 3:A-continue 4:latch 5:exit
        let fa = analysis(6, &[(0, 1), (1, 2), (1, 4), (2, 5), (2, 3), (3, 4), (4, 1), (4, 5)], &[5]);
        assert_eq!(fa.reconvergence.for_block(1).unwrap().reconvergence.block(), Some(5));
        assert_eq!(likely_convergence(&fa, 1), Some(4), "the lanes that stay in the loop meet at the latch");
        // The break itself: its only in-loop target, 3, is where its in-loop lanes already are.
        assert_eq!(likely_convergence(&fa, 2), None);
    }

    #[test]
    fn the_back_edge_branch_and_a_loop_free_branch_have_none() {
        let fa = analysis(6, &[(0, 1), (1, 2), (1, 4), (2, 5), (2, 3), (3, 4), (4, 1), (4, 5)], &[5]);
        assert_eq!(likely_convergence(&fa, 4), None, "the latch's branch: its in-loop side is the back edge");
        // An if/else outside any loop.
        let fa = analysis(4, &[(0, 1), (0, 2), (1, 3), (2, 3)], &[3]);
        assert_eq!(likely_convergence(&fa, 0), None);
    }

    #[test]
    fn a_branch_that_reconverges_inside_its_loop_has_none() {
        // 1: if -> 2 / 3, both -> 4 (latch) -> 1 | 5.
        let fa = analysis(6, &[(0, 1), (1, 2), (1, 3), (2, 4), (3, 4), (4, 1), (4, 5)], &[5]);
        assert_eq!(likely_convergence(&fa, 1), None);
    }
}
