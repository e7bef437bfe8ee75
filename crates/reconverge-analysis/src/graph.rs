//! Directed graphs over dense `u32` node indices: the [`Graph`] trait every analysis reads, an
//! adjacency-list [`DiGraph`], a [`Reversed`] view, iterative depth-first orders and strongly connected
//! components.

use crate::bitset::BitSet;

/// A directed graph whose nodes are `0..num_nodes()`.
///
/// Successor and predecessor lists hold each neighbour once; their order is the graph's own and every
/// traversal in this crate follows it, so results are deterministic.
pub trait Graph {
    /// The number of nodes.
    fn num_nodes(&self) -> usize;
    /// The successors of `n`.
    fn succs(&self, n: u32) -> &[u32];
    /// The predecessors of `n`.
    fn preds(&self, n: u32) -> &[u32];
}

impl<G: Graph + ?Sized> Graph for &G {
    fn num_nodes(&self) -> usize {
        (**self).num_nodes()
    }
    fn succs(&self, n: u32) -> &[u32] {
        (**self).succs(n)
    }
    fn preds(&self, n: u32) -> &[u32] {
        (**self).preds(n)
    }
}

/// An adjacency-list directed graph without parallel edges (self-loops are allowed).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct DiGraph {
    /// Successors per node, in insertion order.
    succs: Vec<Vec<u32>>,
    /// Predecessors per node, in insertion order.
    preds: Vec<Vec<u32>>,
    num_edges: usize,
}

impl DiGraph {
    /// A graph with `n` nodes and no edges.
    pub fn new(n: usize) -> DiGraph {
        DiGraph { succs: vec![Vec::new(); n], preds: vec![Vec::new(); n], num_edges: 0 }
    }

    /// A graph with `n` nodes and the given edges, in order; repeated edges are kept once.
    ///
    /// # Panics
    /// If an endpoint is not below `n`.
    pub fn from_edges(n: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> DiGraph {
        let mut g = DiGraph::new(n);
        for (a, b) in edges {
            g.add_edge(a, b);
        }
        g
    }

    /// Adds a node without edges and returns its index.
    pub fn add_node(&mut self) -> u32 {
        self.succs.push(Vec::new());
        self.preds.push(Vec::new());
        (self.succs.len() - 1) as u32
    }

    /// Adds the edge `from → to`; returns `false` (and changes nothing) if it already exists.
    ///
    /// # Panics
    /// If an endpoint is not a node.
    pub fn add_edge(&mut self, from: u32, to: u32) -> bool {
        let n = self.succs.len();
        assert!((from as usize) < n && (to as usize) < n, "edge {from}->{to} outside a graph of {n} nodes");
        if self.has_edge(from, to) {
            return false;
        }
        self.succs[from as usize].push(to);
        self.preds[to as usize].push(from);
        self.num_edges += 1;
        true
    }

    /// Whether the edge `from → to` exists.
    pub fn has_edge(&self, from: u32, to: u32) -> bool {
        // Search the shorter of the two lists (a `brx.idx` block has thousands of successors, each with
        // a predecessor or two), so building a graph stays linear.
        match (self.succs.get(from as usize), self.preds.get(to as usize)) {
            (Some(s), Some(p)) if p.len() < s.len() => p.contains(&from),
            (Some(s), _) => s.contains(&to),
            _ => false,
        }
    }

    /// The number of edges.
    pub fn num_edges(&self) -> usize {
        self.num_edges
    }

    /// Every edge `(from, to)`, by source node and then successor order.
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.succs.iter().enumerate().flat_map(|(a, s)| s.iter().map(move |&b| (a as u32, b)))
    }

    /// A view of this graph with every edge reversed.
    pub fn reversed(&self) -> Reversed<&DiGraph> {
        Reversed(self)
    }
}

impl Graph for DiGraph {
    fn num_nodes(&self) -> usize {
        self.succs.len()
    }
    fn succs(&self, n: u32) -> &[u32] {
        &self.succs[n as usize]
    }
    fn preds(&self, n: u32) -> &[u32] {
        &self.preds[n as usize]
    }
}

/// A graph seen with every edge reversed: successors are the inner graph's predecessors.
///
/// Post-dominators are dominators of the reversed graph (rooted at the virtual exit).
#[derive(Clone, Copy, Debug)]
pub struct Reversed<G>(pub G);

impl<G: Graph> Graph for Reversed<G> {
    fn num_nodes(&self) -> usize {
        self.0.num_nodes()
    }
    fn succs(&self, n: u32) -> &[u32] {
        self.0.preds(n)
    }
    fn preds(&self, n: u32) -> &[u32] {
        self.0.succs(n)
    }
}

/// The nodes reachable from `root` (`root` included), in depth-first postorder following successor
/// order. Empty if `root` is not a node. Iterative: no recursion on graph size.
pub fn postorder<G: Graph>(g: &G, root: u32) -> Vec<u32> {
    let n = g.num_nodes();
    let mut order = Vec::new();
    if root as usize >= n {
        return order;
    }
    let mut seen = BitSet::new(n);
    // (node, index of the next successor to look at)
    let mut stack: Vec<(u32, usize)> = vec![(root, 0)];
    seen.insert(root);
    while let Some(&(v, i)) = stack.last() {
        let succs = g.succs(v);
        if let Some(&w) = succs.get(i) {
            stack.last_mut().expect("stack is not empty").1 += 1;
            if seen.insert(w) {
                stack.push((w, 0));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    order
}

/// The nodes reachable from `root` in reverse postorder (`root` first).
pub fn reverse_postorder<G: Graph>(g: &G, root: u32) -> Vec<u32> {
    let mut o = postorder(g, root);
    o.reverse();
    o
}

/// The set of nodes reachable from `root` (`root` included; empty if `root` is not a node).
pub fn reachable_from<G: Graph>(g: &G, root: u32) -> BitSet {
    let n = g.num_nodes();
    let mut seen = BitSet::new(n);
    if root as usize >= n {
        return seen;
    }
    let mut stack = vec![root];
    seen.insert(root);
    while let Some(v) = stack.pop() {
        for &w in g.succs(v) {
            if seen.insert(w) {
                stack.push(w);
            }
        }
    }
    seen
}

/// The strongly connected components of `g` (Tarjan's algorithm, iterative), each sorted, in the order
/// Tarjan's algorithm completes them: a component comes before every component that reaches it (sinks
/// first). Every node is in exactly one component, trivial ones (one node, no self-loop) included.
pub fn strongly_connected_components<G: Graph>(g: &G) -> Vec<Vec<u32>> {
    let n = g.num_nodes();
    let nodes: Vec<u32> = (0..n as u32).collect();
    SccFinder::new(n).run(g, &nodes, |_| true, |_, _| true)
}

/// Reusable scratch space for Tarjan's algorithm on subgraphs: repeated runs on small node sets cost
/// time in the size of the node set, not of the graph.
pub(crate) struct SccFinder {
    index: Vec<u32>,
    low: Vec<u32>,
    on_stack: BitSet,
}

impl SccFinder {
    const NONE: u32 = u32::MAX;

    pub(crate) fn new(n: usize) -> SccFinder {
        SccFinder { index: vec![Self::NONE; n], low: vec![0; n], on_stack: BitSet::new(n) }
    }

    /// The SCCs of the subgraph induced by `nodes` (for which `member` must hold), using only the edges
    /// `u -> w` with `member(w) && edge(u, w)`. Components are sorted and come sinks first.
    pub(crate) fn run<G: Graph>(
        &mut self,
        g: &G,
        nodes: &[u32],
        member: impl Fn(u32) -> bool,
        edge: impl Fn(u32, u32) -> bool,
    ) -> Vec<Vec<u32>> {
        for &v in nodes {
            self.index[v as usize] = Self::NONE;
        }
        let mut counter = 0u32;
        let mut scc_stack: Vec<u32> = Vec::new();
        let mut call: Vec<(u32, usize)> = Vec::new();
        let mut out = Vec::new();
        for &start in nodes {
            if self.index[start as usize] != Self::NONE {
                continue;
            }
            self.visit(start, &mut counter, &mut scc_stack, &mut call);
            while let Some(&(v, i)) = call.last() {
                if let Some(&w) = g.succs(v).get(i) {
                    call.last_mut().expect("call stack is not empty").1 += 1;
                    if !member(w) || !edge(v, w) {
                        continue;
                    }
                    if self.index[w as usize] == Self::NONE {
                        self.visit(w, &mut counter, &mut scc_stack, &mut call);
                    } else if self.on_stack.contains(w) {
                        self.low[v as usize] = self.low[v as usize].min(self.index[w as usize]);
                    }
                } else {
                    call.pop();
                    if let Some(&(p, _)) = call.last() {
                        self.low[p as usize] = self.low[p as usize].min(self.low[v as usize]);
                    }
                    if self.low[v as usize] == self.index[v as usize] {
                        let mut comp = Vec::new();
                        loop {
                            let w = scc_stack.pop().expect("v is on the stack");
                            self.on_stack.remove(w);
                            comp.push(w);
                            if w == v {
                                break;
                            }
                        }
                        comp.sort_unstable();
                        out.push(comp);
                    }
                }
            }
        }
        out
    }

    fn visit(&mut self, v: u32, counter: &mut u32, scc_stack: &mut Vec<u32>, call: &mut Vec<(u32, usize)>) {
        self.index[v as usize] = *counter;
        self.low[v as usize] = *counter;
        *counter += 1;
        scc_stack.push(v);
        self.on_stack.insert(v);
        call.push((v, 0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_and_reverse() {
        let g = DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3), (0, 1), (3, 3)]);
        assert_eq!(g.num_nodes(), 4);
        assert_eq!(g.num_edges(), 5);
        assert_eq!(g.succs(0), &[1, 2]);
        assert_eq!(g.preds(3), &[1, 2, 3]);
        assert!(g.has_edge(3, 3));
        assert!(!g.has_edge(3, 0));
        let r = g.reversed();
        assert_eq!(r.succs(3), &[1, 2, 3]);
        assert_eq!(r.preds(0), &[1, 2]);
        assert_eq!(g.edges().collect::<Vec<_>>(), vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, 3)]);
    }

    #[test]
    fn orders() {
        let g = DiGraph::from_edges(5, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        assert_eq!(postorder(&g, 0), vec![3, 1, 2, 0]);
        assert_eq!(reverse_postorder(&g, 0), vec![0, 2, 1, 3]);
        assert_eq!(reachable_from(&g, 0).to_vec(), vec![0, 1, 2, 3]);
        assert_eq!(reachable_from(&g, 4).to_vec(), vec![4]);
        assert!(postorder(&g, 9).is_empty());
    }

    #[test]
    fn scc_basics() {
        let g = DiGraph::from_edges(5, [(0, 1), (1, 0), (1, 2), (3, 3)]);
        let s = strongly_connected_components(&g);
        // Sinks first: {2} completes before {0, 1}.
        assert_eq!(s, vec![vec![2], vec![0, 1], vec![3], vec![4]]);
    }

    #[test]
    fn deep_chain_does_not_overflow() {
        let n = 200_000u32;
        let g = DiGraph::from_edges(n as usize, (0..n - 1).map(|i| (i, i + 1)));
        let rpo = reverse_postorder(&g, 0);
        assert_eq!(rpo.len(), n as usize);
        assert_eq!(rpo[0], 0);
        assert_eq!(*rpo.last().unwrap(), n - 1);
    }
}
