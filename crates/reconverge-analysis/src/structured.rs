//! Structured branches: whether the region a conditional branch opens is a properly nested
//! single-entry, single-exit region (the test the `hybrid` path-list traversal makes to choose between
//! depth-first and breadth-first order, seed 003 §2.3).
//!
//! Definitions, for a conditional branch ending block `B` whose reconvergence point is `R = IPDOM(B)` (a
//! block or the virtual exit):
//! - the **region** of `B` is every block reachable from `B` (`B` included) along CFG edges without
//!   entering `R`. Every edge that leaves the region therefore goes to `R` (or leaves the function when
//!   `R` is the virtual exit): the region has a single exit by construction;
//! - an **entry** of the region is one of its blocks that is the function's entry or has a reachable
//!   predecessor outside the region;
//! - `B` is **structured** when its region has exactly one entry (`B` itself, or, when the region wraps
//!   around a loop's back edge — a latch, a `break` — the loop's header), no block of the region lies in
//!   an irreducible region, and every other conditional branch of the region is structured.
//!
//! The last rule makes structure a property of the whole nest: `if (A && B) C; else D;` is unstructured
//! at both branches — `B`'s region {B, C, D} is also entered at `D` from `A`, and `A`'s region holds `B`.
//! It is a greatest fixed point (a branch is structured unless a reason above says otherwise), so the
//! branches of a loop, whose regions hold one another, are structured together.
//!
//! What this makes structured: if/else nests, `switch`es whose cases do not fall into one another, loops
//! entered only at their header whose exits all lead to one block (`break`s and early `return`s
//! included, as long as their targets meet at the branch's IPDOM without another way in), and
//! everything nested in those. Unstructured: short-circuit conditions, `goto`s into a region, loop
//! exits that join code reached from outside the loop, irreducible loops.

use crate::analysis::FunctionAnalysis;
use crate::bitset::BitSet;
use crate::graph::Graph;

/// Whether the conditional branch ending each block is structured (see the module documentation),
/// indexed by block; `false` for blocks that do not end in a conditional branch and for unreachable ones.
pub fn structured_branches(fa: &FunctionAnalysis) -> Vec<bool> {
    let n = fa.cfg.num_blocks();
    let mut irreducible = BitSet::new(n);
    for g in fa.loops.irreducible_regions() {
        g.blocks.iter().for_each(|&b| {
            irreducible.insert(b);
        });
    }
    let mut ok = vec![false; n];
    // Per branch: the other conditional branches its region holds.
    let mut nested: Vec<(u32, Vec<u32>)> = Vec::new();
    for info in fa.reconvergence.branches() {
        let b = info.block;
        if !fa.cfg.is_reachable(b) {
            continue;
        }
        let region = region(fa, b, info.reconvergence.block());
        let entries = region.iter().filter(|&x| is_entry(fa, &region, x)).count();
        ok[b as usize] = entries == 1 && region.iter().all(|x| !irreducible.contains(x));
        let inner = region.iter().filter(|&x| x != b && fa.reconvergence.for_block(x).is_some()).collect();
        nested.push((b, inner));
    }
    // The greatest fixed point: a branch whose region holds an unstructured branch is unstructured.
    let mut changed = true;
    while changed {
        changed = false;
        for (b, inner) in &nested {
            if ok[*b as usize] && inner.iter().any(|&x| !ok[x as usize]) {
                ok[*b as usize] = false;
                changed = true;
            }
        }
    }
    ok
}

/// The blocks reachable from `b` without entering `r` (`b` included).
fn region(fa: &FunctionAnalysis, b: u32, r: Option<u32>) -> BitSet {
    let g = fa.cfg.graph();
    let mut seen = BitSet::new(fa.cfg.num_blocks());
    let mut stack = vec![b];
    seen.insert(b);
    while let Some(x) = stack.pop() {
        for &s in g.succs(x) {
            if Some(s) != r && seen.insert(s) {
                stack.push(s);
            }
        }
    }
    seen
}

/// Whether block `x` of `region` is entered from outside it: the function's entry, or a block with a
/// reachable predecessor outside the region.
fn is_entry(fa: &FunctionAnalysis, region: &BitSet, x: u32) -> bool {
    x == fa.cfg.entry() || fa.cfg.graph().preds(x).iter().any(|&p| fa.cfg.is_reachable(p) && !region.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfg::Cfg;
    use crate::graph::DiGraph;

    /// A CFG from its edges; the blocks listed as exits leave the function.
    fn analysis(n: usize, edges: &[(u32, u32)], exits: &[u32]) -> FunctionAnalysis {
        FunctionAnalysis::from_cfg(Cfg::from_graph(DiGraph::from_edges(n, edges.iter().copied()), 0, exits))
    }

    /// The blocks whose branch is structured.
    fn structured(fa: &FunctionAnalysis) -> Vec<u32> {
        structured_branches(fa).iter().enumerate().filter(|(_, &s)| s).map(|(b, _)| b as u32).collect()
    }

    #[test]
    fn nested_if_else_is_structured() {
        // 0: if -> 1 | 4; 1: if -> 2 | 3; 2, 3 -> 5 (inner join) -> 6; 4 -> 6 (outer join); 6 exits.
        let fa = analysis(7, &[(0, 1), (0, 4), (1, 2), (1, 3), (2, 5), (3, 5), (5, 6), (4, 6)], &[6]);
        assert_eq!(structured(&fa), vec![0, 1]);
    }

    #[test]
    fn a_short_circuit_condition_is_unstructured_at_both_branches() {
        // Seed 003's Figure 1, laid out as NVRTC does: A = 0: -> 3 (D) | 1 (B); B = 1: -> 3 | 2;
        // 2 -> 4 (C); 3 -> 5 (E); 4 -> 5. D is entered from A and from B.
        let fa = analysis(6, &[(0, 3), (0, 1), (1, 3), (1, 2), (2, 4), (3, 5), (4, 5)], &[5]);
        assert!(structured(&fa).is_empty(), "{:?}", structured(&fa));
        // Without the short circuit (`if (A) { if (B) C; else D1; } else D2;`) both are structured.
        let fa = analysis(7, &[(0, 6), (0, 1), (1, 3), (1, 2), (2, 4), (3, 5), (4, 5), (6, 5)], &[5]);
        assert_eq!(structured(&fa), vec![0, 1]);
    }

    #[test]
    fn loops_entered_at_their_header_are_structured() {
        // do { 1: if -> 2 | 3; 2 -> 3; 3: latch -> 1 | 4 } while; 0 -> 1; 4 exits. The latch's region
        // wraps around the back edge: its entry is the header.
        let fa = analysis(5, &[(0, 1), (1, 2), (1, 3), (2, 3), (3, 1), (3, 4)], &[4]);
        assert_eq!(structured(&fa), vec![1, 3]);
        // A break to the loop's exit block: still one way in, one way out.
        let fa = analysis(5, &[(0, 1), (1, 4), (1, 3), (3, 1), (3, 4)], &[4]);
        assert_eq!(structured(&fa), vec![1, 3]);
        // A one-block spin loop.
        let fa = analysis(3, &[(0, 1), (1, 1), (1, 2)], &[2]);
        assert_eq!(structured(&fa), vec![1]);
    }

    #[test]
    fn a_loop_exit_into_code_reached_from_outside_the_loop_is_unstructured() {
        // 0: if -> 1 | 4; loop 1 -> 2; 2: if (break) -> 4 | 3; 3: latch -> 1 | 5; 4 -> 5; 5 exits. Block 4
        // is entered from 0 and from the loop: the loop's branches and the enclosing one are unstructured.
        let fa = analysis(6, &[(0, 1), (0, 4), (1, 2), (2, 4), (2, 3), (3, 1), (3, 5), (4, 5)], &[5]);
        assert!(structured(&fa).is_empty(), "{:?}", structured(&fa));
    }

    #[test]
    fn branches_in_an_irreducible_loop_are_unstructured() {
        // 0: if -> 1 | 2; 1 <-> 2 (entered at both); 1: if -> 2 | 3; 2: if -> 1 | 3; 3 exits.
        let fa = analysis(4, &[(0, 1), (0, 2), (1, 2), (1, 3), (2, 1), (2, 3)], &[3]);
        assert!(!fa.loops.is_reducible());
        assert!(structured(&fa).is_empty(), "{:?}", structured(&fa));
    }
}
