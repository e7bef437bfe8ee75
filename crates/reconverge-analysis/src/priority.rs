//! Block priorities for thread frontiers (Diamos et al., MICRO'11): an order of the blocks in which
//! every block comes after the blocks that reach it without a loop back edge, and a loop's blocks come
//! before the blocks after the loop. Executing the highest-priority (earliest) path first then makes
//! paths meet at the first block where their threads can meet (the thread frontier), before the
//! immediate post-dominator on unstructured code.
//!
//! The order is a topological sort of the CFG with back edges (edges to a dominating block) removed;
//! among the blocks ready at a step, the one in the deepest loop comes first (so the loop's blocks
//! precede its exits), then the earlier in reverse postorder. Irreducible cycles have no back edge to
//! remove: their retreating edges (to a block earlier in reverse postorder) are removed instead.

use crate::analysis::FunctionAnalysis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The thread-frontier priority order of the reachable blocks of `fa`'s function, highest priority
/// first. Unreachable blocks are not listed.
pub fn frontier_order(fa: &FunctionAnalysis) -> Vec<u32> {
    let cfg = &fa.cfg;
    let n = cfg.num_blocks();
    let rpo = cfg.reverse_postorder();
    let mut rpo_pos = vec![u32::MAX; n];
    for (i, &b) in rpo.iter().enumerate() {
        rpo_pos[b as usize] = i as u32;
    }
    // Forward edges: every reachable edge except those going back in reverse postorder (back edges of
    // natural loops and the retreating edges of irreducible cycles).
    let forward = |u: u32, v: u32| rpo_pos[v as usize] > rpo_pos[u as usize];
    let mut indeg = vec![0u32; n];
    for &u in rpo {
        for &v in cfg.succs(u) {
            if cfg.is_reachable(v) && forward(u, v) {
                indeg[v as usize] += 1;
            }
        }
    }
    let depth = |b: u32| fa.loops.innermost_loop(b).map(|l| fa.loops.loops()[l].depth).unwrap_or(0);
    let mut ready: BinaryHeap<(u32, Reverse<u32>, u32)> = BinaryHeap::new();
    let entry = cfg.entry();
    if cfg.is_reachable(entry) {
        ready.push((depth(entry), Reverse(rpo_pos[entry as usize]), entry));
    }
    let mut order = Vec::with_capacity(rpo.len());
    while let Some((_, _, u)) = ready.pop() {
        order.push(u);
        for &v in cfg.succs(u) {
            if cfg.is_reachable(v) && forward(u, v) {
                indeg[v as usize] -= 1;
                if indeg[v as usize] == 0 {
                    ready.push((depth(v), Reverse(rpo_pos[v as usize]), v));
                }
            }
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;
    use crate::graph::DiGraph;

    fn order(n: usize, edges: &[(u32, u32)], exits: &[u32]) -> Vec<u32> {
        let g = DiGraph::from_edges(n, edges.iter().copied());
        let fa = FunctionAnalysis::from_cfg(Cfg::from_graph(g, 0, exits));
        frontier_order(&fa)
    }

    #[test]
    fn every_block_follows_its_forward_predecessors() {
        // Figure 1: A -> {B, D}, B -> {C, D}, C -> E, D -> E.
        let o = order(5, &[(0, 1), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4)], &[4]);
        let pos = |b: u32| o.iter().position(|&x| x == b).unwrap();
        assert_eq!(o.len(), 5);
        assert!(pos(0) < pos(1) && pos(1) < pos(3) && pos(1) < pos(2) && pos(3) < pos(4) && pos(2) < pos(4));
    }

    #[test]
    fn a_loop_body_comes_before_the_loop_exit() {
        // 0 -> 1 (header) -> {2 (body), 3 (exit)}, 2 -> 1.
        assert_eq!(order(4, &[(0, 1), (1, 3), (1, 2), (2, 1)], &[3]), vec![0, 1, 2, 3]);
    }
}
