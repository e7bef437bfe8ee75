//! Post-dominator trees below a virtual exit, infinite loops included.
//!
//! Node `a` *post-dominates* `b` if every path from `b` to the exit passes through `a`. A function may have
//! several exit blocks and blocks that never reach one (infinite loops), so the tree is built on an
//! *augmented graph* with one extra node, the **virtual exit** `EXIT` (index `num_nodes`):
//!
//! 1. every exit block supplied by the caller gets an edge to `EXIT` (for a [`crate::Cfg`]: blocks ending in
//!    `ret`, `exit` or `trap`, guarded or not, and a last block that falls off the end);
//! 2. a depth-first walk backwards from `EXIT` marks every node that reaches it;
//! 3. **infinite loops, LLVM's rule** (`FindRoots` in LLVM's `GenericDomTreeConstruction.h`): for each node
//!    `i`, in increasing index order, still unmarked, run a forward depth-first walk from `i` over unmarked
//!    nodes (successors taken in increasing index order, a node numbered when it is popped off the walk's
//!    stack) and pick the node numbered last, the one "furthest away"; make it a candidate, and mark every
//!    node that reaches it by a backward walk. Then drop each candidate from which another remaining
//!    candidate can be reached (LLVM's `RemoveRedundantRoots`; here by one SCC pass, which gives the same
//!    set). What is left is one node in every sink strongly connected component that cannot reach an exit;
//! 4. each remaining candidate gets a **fake exit edge** to `EXIT` ([`PostDomTree::fake_exit_edges`]).
//!
//! Now every node reaches `EXIT`, and the tree is the [`DomTree`] of the reversed augmented graph rooted at
//! `EXIT`: every node has an immediate post-dominator, a node or [`PostDom::VirtualExit`]. Unlike LLVM, we
//! keep `EXIT` as an explicit node, and unlike dominators, post-dominators ignore reachability from the
//! entry: blocks unreachable from the entry are in the tree too.

use crate::bitset::BitSet;
use crate::dom::DomTree;
use crate::graph::{DiGraph, Graph, Reversed};

/// A node of the post-dominator tree: a block, or the virtual exit above every block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum PostDom {
    /// A block (node index).
    Block(u32),
    /// The virtual exit that every exit block, and every fake exit edge, leads to.
    VirtualExit,
}

impl PostDom {
    /// The block, if this is not the virtual exit.
    pub fn block(self) -> Option<u32> {
        match self {
            PostDom::Block(b) => Some(b),
            PostDom::VirtualExit => None,
        }
    }

    /// Whether this is the virtual exit.
    pub fn is_virtual_exit(self) -> bool {
        self == PostDom::VirtualExit
    }
}

/// The post-dominator tree of a graph with a set of exit nodes, rooted at the virtual exit.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PostDomTree {
    num_nodes: usize,
    exits: Vec<u32>,
    fake_exit_edges: Vec<u32>,
    /// The input graph plus `EXIT` (node `num_nodes`), exit edges and fake exit edges.
    augmented: DiGraph,
    /// Dominator tree of the reversed augmented graph, rooted at `EXIT`.
    tree: DomTree,
}

impl PostDomTree {
    /// Computes the post-dominator tree of `g`, whose nodes in `exits` leave the function.
    ///
    /// Duplicates in `exits` are ignored.
    ///
    /// # Panics
    /// If an exit is not a node of `g`.
    pub fn compute<G: Graph>(g: &G, exits: &[u32]) -> PostDomTree {
        let n = g.num_nodes();
        let exit = n as u32;
        let mut augmented = DiGraph::new(n + 1);
        for v in 0..n as u32 {
            for &w in g.succs(v) {
                augmented.add_edge(v, w);
            }
        }
        let mut exit_list: Vec<u32> = exits.to_vec();
        exit_list.sort_unstable();
        exit_list.dedup();
        for &e in &exit_list {
            assert!((e as usize) < n, "exit {e} is not a node of a graph of {n} nodes");
            augmented.add_edge(e, exit);
        }

        let mut fake = find_fake_exit_sources(&augmented, exit);
        fake.sort_unstable();
        for &f in &fake {
            augmented.add_edge(f, exit);
        }

        let tree = DomTree::compute(&Reversed(&augmented), exit);
        debug_assert_eq!(tree.rpo().len(), n + 1, "every node reaches the virtual exit");
        PostDomTree { num_nodes: n, exits: exit_list, fake_exit_edges: fake, augmented, tree }
    }

    /// The number of real nodes (the virtual exit not counted).
    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// The index of the virtual exit in [`PostDomTree::augmented_graph`] and [`PostDomTree::tree`]: `num_nodes`.
    pub fn exit_node(&self) -> u32 {
        self.num_nodes as u32
    }

    /// The exit nodes supplied by the caller, sorted and without duplicates.
    pub fn exits(&self) -> &[u32] {
        &self.exits
    }

    /// The sources of the fake edges to the virtual exit added for infinite loops, in increasing order.
    pub fn fake_exit_edges(&self) -> &[u32] {
        &self.fake_exit_edges
    }

    /// The graph the tree was computed on: the input, the virtual exit (node `num_nodes`), an edge to it
    /// from every exit node, and the fake exit edges.
    pub fn augmented_graph(&self) -> &DiGraph {
        &self.augmented
    }

    /// The underlying dominator tree of the reversed augmented graph (root: the virtual exit).
    pub fn tree(&self) -> &DomTree {
        &self.tree
    }

    fn to_post_dom(&self, v: u32) -> PostDom {
        if v == self.exit_node() {
            PostDom::VirtualExit
        } else {
            PostDom::Block(v)
        }
    }

    fn index(&self, p: PostDom) -> u32 {
        match p {
            PostDom::Block(b) => b,
            PostDom::VirtualExit => self.exit_node(),
        }
    }

    /// The immediate post-dominator of node `n`; every node has one.
    ///
    /// # Panics
    /// If `n` is not a node.
    pub fn ipdom(&self, n: u32) -> PostDom {
        assert!((n as usize) < self.num_nodes, "node {n} outside a graph of {} nodes", self.num_nodes);
        self.to_post_dom(self.tree.idom(n).expect("every node reaches the virtual exit"))
    }

    /// Whether node `a` post-dominates node `b` (reflexive). O(1).
    pub fn post_dominates(&self, a: u32, b: u32) -> bool {
        (a as usize) < self.num_nodes && (b as usize) < self.num_nodes && self.tree.dominates(a, b)
    }

    /// Whether node `a` post-dominates node `b` and `a != b`.
    pub fn strictly_post_dominates(&self, a: u32, b: u32) -> bool {
        a != b && self.post_dominates(a, b)
    }

    /// Whether tree node `a` post-dominates tree node `b` (the virtual exit post-dominates everything).
    pub fn post_dominates_node(&self, a: PostDom, b: PostDom) -> bool {
        self.tree.dominates(self.index(a), self.index(b))
    }

    /// The nodes immediately post-dominated by `p`, in increasing order.
    pub fn children(&self, p: PostDom) -> &[u32] {
        self.tree.children(self.index(p))
    }

    /// The nearest common post-dominator of two nodes.
    pub fn nearest_common_post_dominator(&self, a: u32, b: u32) -> PostDom {
        let c = self.tree.nearest_common_dominator(a, b).expect("every node reaches the virtual exit");
        self.to_post_dom(c)
    }

    /// `n` and its post-dominators, innermost first, ending with the virtual exit.
    pub fn post_dominators(&self, n: u32) -> impl Iterator<Item = PostDom> + '_ {
        self.tree.dominators(n).map(|v| self.to_post_dom(v))
    }
}

/// LLVM's `FindRoots` + `RemoveRedundantRoots` on a graph whose node `exit` is the virtual exit: the nodes
/// that get a fake edge to `exit` so that every node reaches it.
fn find_fake_exit_sources(g: &DiGraph, exit: u32) -> Vec<u32> {
    let n = g.num_nodes();
    let mut visited = BitSet::new(n);
    mark_reaching(g, exit, &mut visited);
    if visited.count() == n {
        return Vec::new();
    }

    // Successors in increasing index order ("function order" in LLVM).
    let sorted_succs = |v: u32| {
        let mut s = g.succs(v).to_vec();
        s.sort_unstable();
        s
    };

    let mut roots: Vec<u32> = Vec::new();
    // `seen[v] == roots.len() + 1`: `v` was numbered by the current forward walk.
    let mut seen = vec![0u32; n];
    for i in 0..exit {
        if visited.contains(i) {
            continue;
        }
        // Forward walk from `i` over unvisited nodes; a node is numbered when popped; the last numbered
        // node is the furthest away.
        let walk = roots.len() as u32 + 1;
        let mut stack = vec![i];
        let mut furthest = i;
        while let Some(v) = stack.pop() {
            if visited.contains(v) || seen[v as usize] == walk {
                continue;
            }
            seen[v as usize] = walk;
            furthest = v;
            for w in sorted_succs(v) {
                if !visited.contains(w) && seen[w as usize] != walk {
                    stack.push(w);
                }
            }
        }
        roots.push(furthest);
        mark_reaching(g, furthest, &mut visited);
    }

    // LLVM then drops every candidate from which another remaining candidate can be reached. Each
    // candidate is in its own strongly connected component (the backward walk from a candidate marks its
    // whole component), every node reaches a candidate, and a candidate in a sink component reaches no
    // other one: so the candidates kept, in any removal order, are exactly those whose component is a
    // sink. One SCC pass finds them.
    let mut comp_of = vec![u32::MAX; n];
    for (c, comp) in crate::graph::strongly_connected_components(g).iter().enumerate() {
        for &v in comp {
            comp_of[v as usize] = c as u32;
        }
    }
    let mut non_sink = BitSet::new(n);
    for v in 0..n as u32 {
        if g.succs(v).iter().any(|&w| comp_of[w as usize] != comp_of[v as usize]) {
            non_sink.insert(comp_of[v as usize]);
        }
    }
    roots.retain(|&r| !non_sink.contains(comp_of[r as usize]));
    roots
}

/// Marks in `visited` every node from which `target` is reachable (walking predecessors), skipping
/// nodes already marked.
fn mark_reaching(g: &DiGraph, target: u32, visited: &mut BitSet) {
    let mut stack = vec![target];
    while let Some(v) = stack.pop() {
        if !visited.insert(v) {
            continue;
        }
        for &p in g.preds(v) {
            if !visited.contains(p) {
                stack.push(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_single_exit() {
        let g = DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        let p = PostDomTree::compute(&g, &[3]);
        assert_eq!(p.ipdom(0), PostDom::Block(3));
        assert_eq!(p.ipdom(1), PostDom::Block(3));
        assert_eq!(p.ipdom(3), PostDom::VirtualExit);
        assert!(p.fake_exit_edges().is_empty());
        assert!(p.post_dominates(3, 0));
        assert!(!p.post_dominates(1, 0));
        assert!(p.post_dominates_node(PostDom::VirtualExit, PostDom::Block(2)));
        assert_eq!(p.children(PostDom::Block(3)), &[0, 1, 2]);
        assert_eq!(p.nearest_common_post_dominator(1, 2), PostDom::Block(3));
    }

    #[test]
    fn two_exits_reconverge_at_virtual_exit() {
        // 0 -> 1 (ret), 0 -> 2 (ret)
        let g = DiGraph::from_edges(3, [(0, 1), (0, 2)]);
        let p = PostDomTree::compute(&g, &[1, 2]);
        assert_eq!(p.ipdom(0), PostDom::VirtualExit);
        assert_eq!(p.ipdom(1), PostDom::VirtualExit);
        assert_eq!(p.post_dominators(1).collect::<Vec<_>>(), vec![PostDom::Block(1), PostDom::VirtualExit]);
    }

    #[test]
    fn infinite_loop_gets_fake_edge_from_furthest_node() {
        // 0 -> 1 -> 2 -> 3 -> 1; nothing exits.
        let g = DiGraph::from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 1)]);
        let p = PostDomTree::compute(&g, &[]);
        // Forward walk from 0: 0, 1, 2, 3 -> 3 is furthest away.
        assert_eq!(p.fake_exit_edges(), &[3]);
        assert_eq!(p.ipdom(3), PostDom::VirtualExit);
        assert_eq!(p.ipdom(2), PostDom::Block(3));
        assert_eq!(p.ipdom(1), PostDom::Block(2));
        assert_eq!(p.ipdom(0), PostDom::Block(1));
    }

    #[test]
    fn furthest_node_choice() {
        // 0 -> {1, 2}; 1 -> 1; 2 -> 0. Nothing exits. Walk from 0 pushes 1 then 2, pops 2, then 1:
        // the furthest node is 1, alone in the sink SCC {1}.
        let g = DiGraph::from_edges(3, [(0, 1), (0, 2), (1, 1), (2, 0)]);
        let p = PostDomTree::compute(&g, &[]);
        assert_eq!(p.fake_exit_edges(), &[1]);
        // 0 -> {1, 2}; 2 -> 2; 1 -> 0. Walk from 0 pops 0, 2, 1: candidate 1 (not in a sink SCC); the
        // backward walk from 1 marks {0, 1}; then 2 is a candidate. 1 reaches 2, so 1 is dropped.
        let g = DiGraph::from_edges(3, [(0, 1), (0, 2), (2, 2), (1, 0)]);
        let p = PostDomTree::compute(&g, &[]);
        assert_eq!(p.fake_exit_edges(), &[2]);
        // 0 <-> 1 -> 2 <-> 3. Walk from 0 pops 0, 1, 2, 3: candidate 3 in the sink {2, 3}; all marked.
        let g = DiGraph::from_edges(4, [(0, 1), (1, 0), (1, 2), (2, 3), (3, 2)]);
        let p = PostDomTree::compute(&g, &[]);
        assert_eq!(p.fake_exit_edges(), &[3]);
    }

    #[test]
    fn pruning_happens() {
        // 0 -> 1, 0 -> 3 ; 1 -> 2 ; 2 -> 1 ; 3 -> 0 ; 1 -> 4 ; 4 -> 4
        // Walk from 0 (successors pushed in increasing order, so the largest is popped first): pops 0, 3,
        // 1, 4, 2. The furthest node is 2, in the SCC {1, 2}, which is not a sink (1 -> 4). The backward
        // walk from 2 marks {0, 1, 2, 3}; node 4 is left: candidate 4. Pruning: 2 reaches 4, so 2 goes.
        let g = DiGraph::from_edges(5, [(0, 1), (0, 3), (1, 2), (2, 1), (3, 0), (1, 4), (4, 4)]);
        let p = PostDomTree::compute(&g, &[]);
        assert_eq!(p.fake_exit_edges(), &[4]);
        for v in 0..5 {
            assert!(p.post_dominates(4, v) || v == 4);
        }
    }
}
