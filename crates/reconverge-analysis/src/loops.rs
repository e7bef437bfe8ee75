//! Loops: back edges, natural loops and their nesting, irreducible regions, retreating edges.
//!
//! Everything here is about the nodes reachable from the root of a [`DomTree`]; edges from unreachable
//! nodes are ignored.
//!
//! - A **back edge** is an edge `u → h` where `h` dominates `u`; `h` is a loop *header*, `u` a *latch*.
//! - The **natural loop** of a header is the header plus every node that reaches one of its latches
//!   without passing through the header. Natural loops with different headers are disjoint or nested.
//! - A **retreating edge** goes to an ancestor in a depth-first spanning tree from the root (self-loops
//!   included). Every back edge is retreating; a graph is *reducible* iff every retreating edge is a back
//!   edge, whatever the depth-first order.
//! - An **irreducible region** is a cycle with more than one entry (a node with a predecessor outside
//!   it, or the root). Regions are found by a nested strongly-connected-component decomposition (Tarjan's
//!   algorithm, iterative): a non-trivial SCC with one entry is a reducible loop, an SCC with several
//!   entries is reported as irreducible; either way the edges from inside the SCC into its entries are
//!   removed and the decomposition goes on inside it, so irreducible regions nested in loops (and loops
//!   nested in irreducible regions) are found too. The graph has an irreducible region iff it is not
//!   reducible.

use crate::bitset::BitSet;
use crate::dom::DomTree;
use crate::graph::{Graph, SccFinder};

/// A natural loop.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Loop {
    /// The header: dominates every block of the loop.
    pub header: u32,
    /// Every block of the loop, header and nested loops included, in increasing order.
    pub blocks: Vec<u32>,
    /// The sources of the back edges to the header, in increasing order.
    pub latches: Vec<u32>,
    /// The edges `(inside, outside)` that leave the loop, in increasing order. Leaving the function
    /// (an edge to the virtual exit) is not listed: check the exiting block with [`crate::Cfg::leaves_function`].
    pub exits: Vec<(u32, u32)>,
    /// Nesting depth: 1 for an outermost loop.
    pub depth: u32,
    /// The index (in [`LoopInfo::loops`]) of the innermost loop containing this one.
    pub parent: Option<usize>,
}

impl Loop {
    /// Whether `block` is in the loop.
    pub fn contains(&self, block: u32) -> bool {
        self.blocks.binary_search(&block).is_ok()
    }
}

/// A strongly connected region with more than one entry block.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IrreducibleRegion {
    /// The blocks of the region, in increasing order.
    pub blocks: Vec<u32>,
    /// The entry blocks (a predecessor outside the region, or the root), in increasing order; at least two.
    pub entries: Vec<u32>,
}

/// Loop structure of a graph.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct LoopInfo {
    loops: Vec<Loop>,
    back_edges: Vec<(u32, u32)>,
    retreating: Vec<(u32, u32)>,
    retreating_non_back: Vec<(u32, u32)>,
    irreducible: Vec<IrreducibleRegion>,
    innermost: Vec<Option<usize>>,
}

impl LoopInfo {
    /// Computes the loops of `g` from the dominator tree `dom` of `g` (whose root is the entry).
    pub fn compute<G: Graph>(g: &G, dom: &DomTree) -> LoopInfo {
        let n = g.num_nodes();
        let reachable = BitSet::from_items(n, dom.rpo().iter().copied());

        // Back edges (latch, header): edges to a dominator.
        let mut back_edges = Vec::new();
        for &u in dom.rpo() {
            for &h in g.succs(u) {
                if dom.dominates(h, u) {
                    back_edges.push((u, h));
                }
            }
        }
        back_edges.sort_unstable();

        let mut headers: Vec<u32> = back_edges.iter().map(|&(_, h)| h).collect();
        headers.sort_unstable_by_key(|&h| dom.rpo_number(h));
        headers.dedup();

        // Natural loop bodies: a backward walk from the latches that stops at the header. `stamp[v] == i + 1`
        // marks the blocks of loop `i` while it is built.
        let mut latches_of: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(u, h) in &back_edges {
            latches_of[h as usize].push(u);
        }
        let mut stamp = vec![0u32; n];
        let mut loops: Vec<Loop> = Vec::with_capacity(headers.len());
        for (i, &h) in headers.iter().enumerate() {
            let id = i as u32 + 1;
            let latches = std::mem::take(&mut latches_of[h as usize]);
            let mut blocks = vec![h];
            stamp[h as usize] = id;
            let mut stack: Vec<u32> = Vec::new();
            for &u in &latches {
                if stamp[u as usize] != id {
                    stamp[u as usize] = id;
                    blocks.push(u);
                    stack.push(u);
                }
            }
            while let Some(v) = stack.pop() {
                for &p in g.preds(v) {
                    if reachable.contains(p) && stamp[p as usize] != id {
                        stamp[p as usize] = id;
                        blocks.push(p);
                        stack.push(p);
                    }
                }
            }
            blocks.sort_unstable();
            let mut exits: Vec<(u32, u32)> = blocks
                .iter()
                .flat_map(|&b| g.succs(b).iter().filter(|&&s| stamp[s as usize] != id).map(move |&s| (b, s)))
                .collect();
            exits.sort_unstable();
            loops.push(Loop { header: h, blocks, latches, exits, depth: 1, parent: None });
        }
        // Nesting, from the largest loop down: a loop nested in another is strictly smaller, and loops of
        // equal size are disjoint, so when a loop comes up, `innermost[header]` is its parent.
        let mut by_size: Vec<usize> = (0..loops.len()).collect();
        by_size.sort_by_key(|&i| std::cmp::Reverse(loops[i].blocks.len()));
        let mut innermost: Vec<Option<usize>> = vec![None; n];
        for i in by_size {
            let parent = innermost[loops[i].header as usize];
            loops[i].parent = parent;
            loops[i].depth = parent.map_or(1, |p| loops[p].depth + 1);
            for &b in &loops[i].blocks {
                innermost[b as usize] = Some(i);
            }
        }

        let retreating = retreating_edges(g, dom.rpo().first().copied(), n);
        let retreating_non_back: Vec<(u32, u32)> =
            retreating.iter().copied().filter(|&(u, v)| !dom.dominates(v, u)).collect();

        let irreducible = irreducible_regions(g, &reachable, dom.rpo().first().copied());

        LoopInfo { loops, back_edges, retreating, retreating_non_back, irreducible, innermost }
    }

    /// The natural loops, outer loops before the loops they contain (headers in reverse postorder).
    pub fn loops(&self) -> &[Loop] {
        &self.loops
    }

    /// The back edges `(latch, header)`, in increasing order.
    pub fn back_edges(&self) -> &[(u32, u32)] {
        &self.back_edges
    }

    /// The retreating edges of a depth-first walk from the root (successors in graph order), in
    /// increasing order.
    pub fn retreating_edges(&self) -> &[(u32, u32)] {
        &self.retreating
    }

    /// The retreating edges that are not back edges, in increasing order: empty iff the graph is reducible.
    pub fn retreating_non_back_edges(&self) -> &[(u32, u32)] {
        &self.retreating_non_back
    }

    /// The irreducible regions, outer regions before the ones nested in them.
    pub fn irreducible_regions(&self) -> &[IrreducibleRegion] {
        &self.irreducible
    }

    /// Whether the graph (its part reachable from the root) is reducible.
    pub fn is_reducible(&self) -> bool {
        self.irreducible.is_empty()
    }

    /// The index of the innermost loop containing `block`.
    pub fn innermost_loop(&self, block: u32) -> Option<usize> {
        self.innermost.get(block as usize).copied().flatten()
    }

    /// How many loops contain `block` (0 outside loops).
    pub fn loop_depth(&self, block: u32) -> u32 {
        self.innermost_loop(block).map_or(0, |i| self.loops[i].depth)
    }

    /// Whether `block` is a loop header.
    pub fn is_header(&self, block: u32) -> bool {
        self.loops.iter().any(|l| l.header == block)
    }
}

/// Retreating edges of an iterative depth-first walk from `root`: edges to a node on the walk's stack.
fn retreating_edges<G: Graph>(g: &G, root: Option<u32>, n: usize) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let Some(root) = root else { return out };
    let mut seen = BitSet::new(n);
    let mut on_stack = BitSet::new(n);
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    seen.insert(root);
    on_stack.insert(root);
    while let Some(&(v, i)) = stack.last() {
        if let Some(&w) = g.succs(v).get(i) {
            stack.last_mut().expect("stack is not empty").1 += 1;
            if on_stack.contains(w) {
                out.push((v, w));
            } else if seen.insert(w) {
                on_stack.insert(w);
                stack.push((w, 0));
            }
        } else {
            on_stack.remove(v);
            stack.pop();
        }
    }
    out.sort_unstable();
    out
}

/// Nested SCC decomposition of the nodes in `reachable`; reports the components with several entries.
fn irreducible_regions<G: Graph>(g: &G, reachable: &BitSet, root: Option<u32>) -> Vec<IrreducibleRegion> {
    let n = g.num_nodes();
    let mut out = Vec::new();
    let mut scc = SccFinder::new(n);
    // `region[v]`: the work item `v` currently belongs to; `cut[v] == item`: edges into `v` are ignored
    // while decomposing `item` (v is an entry of the enclosing cycle).
    let mut region = vec![0u32; n];
    let mut cut = vec![0u32; n];
    let mut next_id = 1u32;
    let all: Vec<u32> = reachable.iter().collect();
    for &v in &all {
        region[v as usize] = next_id;
    }
    let mut work: Vec<(u32, Vec<u32>)> = vec![(next_id, all)];
    while let Some((id, nodes)) = work.pop() {
        let comps = scc.run(g, &nodes, |w| region[w as usize] == id, |_, w| cut[w as usize] != id);
        // Components come sinks first; handle sources first so outer regions are listed first.
        let mut children = Vec::new();
        for comp in comps.into_iter().rev() {
            let v0 = comp[0];
            let nontrivial = comp.len() > 1 || (cut[v0 as usize] != id && g.succs(v0).contains(&v0));
            if nontrivial {
                next_id += 1;
                for &v in &comp {
                    region[v as usize] = next_id;
                }
                children.push((next_id, comp));
            }
        }
        for (cid, comp) in children {
            let entries: Vec<u32> = comp
                .iter()
                .copied()
                .filter(|&v| {
                    Some(v) == root || g.preds(v).iter().any(|&p| reachable.contains(p) && region[p as usize] != cid)
                })
                .collect();
            for &e in &entries {
                cut[e as usize] = cid;
            }
            if entries.len() > 1 {
                out.push(IrreducibleRegion { blocks: comp.clone(), entries });
            }
            work.push((cid, comp));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::DiGraph;

    fn info(n: usize, edges: &[(u32, u32)]) -> LoopInfo {
        let g = DiGraph::from_edges(n, edges.iter().copied());
        LoopInfo::compute(&g, &DomTree::compute(&g, 0))
    }

    #[test]
    fn nested_loops() {
        // 0 -> 1 -> 2 -> 3 -> 2, 3 -> 4 -> 1, 4 -> 5
        let li = info(6, &[(0, 1), (1, 2), (2, 3), (3, 2), (3, 4), (4, 1), (4, 5)]);
        assert_eq!(li.back_edges(), &[(3, 2), (4, 1)]);
        let l = li.loops();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].header, 1);
        assert_eq!(l[0].blocks, vec![1, 2, 3, 4]);
        assert_eq!(l[0].exits, vec![(4, 5)]);
        assert_eq!(l[1].header, 2);
        assert_eq!(l[1].blocks, vec![2, 3]);
        assert_eq!(l[1].latches, vec![3]);
        assert_eq!(l[1].exits, vec![(3, 4)]);
        assert_eq!(l[1].parent, Some(0));
        assert_eq!(l[1].depth, 2);
        assert_eq!(li.loop_depth(3), 2);
        assert_eq!(li.loop_depth(4), 1);
        assert_eq!(li.loop_depth(5), 0);
        assert!(li.is_reducible());
        assert!(li.retreating_non_back_edges().is_empty());
    }

    #[test]
    fn two_entry_cycle_is_irreducible() {
        // 0 -> 1, 0 -> 2, 1 <-> 2
        let li = info(3, &[(0, 1), (0, 2), (1, 2), (2, 1)]);
        assert!(!li.is_reducible());
        assert_eq!(li.irreducible_regions(), &[IrreducibleRegion { blocks: vec![1, 2], entries: vec![1, 2] }]);
        assert!(li.back_edges().is_empty());
        assert_eq!(li.retreating_non_back_edges().len(), 1);
    }

    #[test]
    fn irreducible_region_inside_a_loop() {
        // 0 -> 1 (header); 1 -> 2, 1 -> 3; 2 <-> 3; 3 -> 1; 3 -> 4
        let li = info(5, &[(0, 1), (1, 2), (1, 3), (2, 3), (3, 2), (3, 1), (3, 4)]);
        assert_eq!(li.loops().len(), 1);
        assert_eq!(li.loops()[0].header, 1);
        assert_eq!(li.irreducible_regions(), &[IrreducibleRegion { blocks: vec![2, 3], entries: vec![2, 3] }]);
    }
}
