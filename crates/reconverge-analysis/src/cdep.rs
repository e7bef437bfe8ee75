//! Control dependence (Ferrante, Ottenstein and Warren, 1987) and iterated control dependence.
//!
//! **Definition** (as quoted by Lee et al., CGO 2013, §3.1): `Y` is *control dependent* on `X` iff
//! 1. there is a directed path `P` from `X` to `Y` with every `Z` in `P` (excluding `X` and `Y`)
//!    post-dominated by `Y`, and
//! 2. `X` is not post-dominated by `Y`.
//!
//! Post-domination in condition 2 follows Ferrante et al.: "every path from `X` to the exit, `X` itself
//! not included, contains `Y`". For `Y ≠ X` that is ordinary post-dominance; for `Y = X` it never holds (a
//! node reaching the exit has a path out that does not return to it), so a node is control dependent on
//! itself exactly when it lies on a cycle whose other nodes it post-dominates: a loop latch that decides
//! whether the loop runs again.
//!
//! **Algorithm.** For every edge `A → B` where `B` does not strictly post-dominate `A`, walk from `B` up the
//! post-dominator tree to `ipdom(A)`, exclusive, marking each node control dependent on `A`; a walk stops
//! early at a node already marked for `A` (the rest of its path is marked too). The successors through
//! which a node depends on `A` (the *labels*) are those of `A`'s successors that the node post-dominates,
//! asked on demand ([`ControlDependence::labels`]).
//!
//! **The graph.** Both are evaluated on the *augmented* graph of a [`PostDomTree`]: the real edges, the
//! exit edges and the **fake exit edges** added for infinite loops all count as edges. An edge into the
//! virtual exit never makes anything dependent (the exit post-dominates everything), but fake edges change
//! post-dominance: a block in an infinite loop with a fake exit edge behaves like a branch that may leave,
//! so the blocks of its loop become control dependent on it even when it has a single real successor.
//! The virtual exit itself is never dependent and never a parent.
//!
//! **Cost.** Time and space are linear in the number of edges plus the number of (branch, node) pairs of
//! the relation. The labelled relation can be quadratic (a `brx.idx` whose thousands of targets fall
//! through into one another: the last target depends on the branch through every one of them), so it is
//! not stored: [`ControlDependence::labels`] and [`ControlDependence::dependences`] compute it from the
//! post-dominator tree when asked.

use crate::bitset::BitSet;
use crate::graph::Graph;
use crate::postdom::PostDomTree;

/// One control dependence: `node` is control dependent on `branch` through its successor `successor`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ControlDep {
    /// The block whose outcome decides whether `node` runs (`X` in the definition).
    pub branch: u32,
    /// The successor of `branch` on the edge that leads to `node`.
    pub successor: u32,
    /// The dependent block (`Y` in the definition).
    pub node: u32,
}

/// The control-dependence relation of a graph.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ControlDependence {
    parents: Vec<Vec<u32>>,
    children: Vec<Vec<u32>>,
    /// The successors of each node in the augmented graph (the candidate labels).
    succs: Vec<Vec<u32>>,
    /// The post-dominator tree (labels are the successors a node post-dominates).
    tree: crate::dom::DomTree,
}

impl ControlDependence {
    /// Computes control dependence on the augmented graph of `postdom`.
    pub fn compute(postdom: &PostDomTree) -> ControlDependence {
        let n = postdom.num_nodes();
        let exit = postdom.exit_node();
        let g = postdom.augmented_graph();
        let tree = postdom.tree();
        let mut parents = vec![Vec::new(); n];
        let mut children = vec![Vec::new(); n];
        // `marked[y] == a + 1`: y is already known to depend on a (its path up to ipdom(a) too).
        let mut marked = vec![0u32; n + 1];
        for a in 0..n as u32 {
            let stop = tree.idom(a).expect("every node reaches the virtual exit");
            for &b in g.succs(a) {
                if b == exit || postdom.strictly_post_dominates(b, a) {
                    continue;
                }
                let mut y = b;
                while y != stop && marked[y as usize] != a + 1 {
                    marked[y as usize] = a + 1;
                    parents[y as usize].push(a);
                    children[a as usize].push(y);
                    y = tree.idom(y).expect("ipdom(a) post-dominates every successor of a");
                }
            }
        }
        for v in parents.iter_mut().chain(children.iter_mut()) {
            v.sort_unstable();
        }
        let succs = (0..n as u32).map(|a| g.succs(a).to_vec()).collect();
        ControlDependence { parents, children, succs, tree: tree.clone() }
    }

    /// The number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.parents.len()
    }

    /// Every dependence with its label, sorted by branch, then successor, then node. Computed when asked
    /// (it may be quadratic in the number of blocks, see the module's cost note).
    pub fn dependences(&self) -> Vec<ControlDep> {
        let mut deps: Vec<ControlDep> = (0..self.num_nodes() as u32)
            .flat_map(|branch| {
                self.children(branch).iter().flat_map(move |&node| {
                    self.labels(branch, node).into_iter().map(move |successor| ControlDep { branch, successor, node })
                })
            })
            .collect();
        deps.sort_unstable();
        deps
    }

    /// The nodes `n` is control dependent on (its control-dependence predecessors), in increasing order.
    pub fn parents(&self, n: u32) -> &[u32] {
        &self.parents[n as usize]
    }

    /// The nodes control dependent on `n` (its control-dependence successors), in increasing order.
    pub fn children(&self, n: u32) -> &[u32] {
        &self.children[n as usize]
    }

    /// Whether `node` is control dependent on `branch`.
    pub fn depends_on(&self, node: u32, branch: u32) -> bool {
        self.parents[node as usize].binary_search(&branch).is_ok()
    }

    /// The successors of `branch` through which `node` depends on it, in increasing order: those `node`
    /// post-dominates (it lies on their walk up to `ipdom(branch)`).
    pub fn labels(&self, branch: u32, node: u32) -> Vec<u32> {
        if !self.depends_on(node, branch) {
            return Vec::new();
        }
        let mut l: Vec<u32> =
            self.succs[branch as usize].iter().copied().filter(|&b| self.tree.dominates(node, b)).collect();
        l.sort_unstable();
        l.dedup();
        l
    }

    /// Whether `a` and `b` are control equivalent: the same control-dependence predecessors.
    pub fn control_equivalent(&self, a: u32, b: u32) -> bool {
        self.parents[a as usize] == self.parents[b as usize]
    }

    /// Iterated control dependence of `n` (Lee et al.'s `IteratedControlDependenceSucc`): every node
    /// reachable from `n` by one or more control-dependence edges, in increasing order. `n` itself is in
    /// it only if it is (transitively) control dependent on itself.
    pub fn iterated(&self, n: u32) -> Vec<u32> {
        self.iterated_set(n).to_vec()
    }

    /// [`ControlDependence::iterated`] as a bit set.
    pub fn iterated_set(&self, n: u32) -> BitSet {
        self.iterated_of([n])
    }

    /// The union of [`ControlDependence::iterated`] over `branches` (worklist closure).
    pub fn iterated_of(&self, branches: impl IntoIterator<Item = u32>) -> BitSet {
        let mut set = BitSet::new(self.num_nodes());
        let mut work: Vec<u32> = Vec::new();
        for b in branches {
            for &c in &self.children[b as usize] {
                if set.insert(c) {
                    work.push(c);
                }
            }
        }
        while let Some(v) = work.pop() {
            for &c in &self.children[v as usize] {
                if set.insert(c) {
                    work.push(c);
                }
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::DiGraph;

    #[test]
    fn if_then_else() {
        // 0 -> {1, 2} -> 3 -> exit
        let g = DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        let cd = ControlDependence::compute(&PostDomTree::compute(&g, &[3]));
        assert_eq!(cd.parents(1), &[0]);
        assert_eq!(cd.parents(2), &[0]);
        assert!(cd.parents(3).is_empty());
        assert_eq!(cd.children(0), &[1, 2]);
        assert_eq!(cd.labels(0, 1), vec![1]);
        assert!(cd.control_equivalent(0, 3));
        assert_eq!(cd.iterated(0), vec![1, 2]);
    }

    #[test]
    fn self_loop_is_self_dependent() {
        // 0 -> 1 -> 1, 1 -> 2 -> exit
        let g = DiGraph::from_edges(3, [(0, 1), (1, 1), (1, 2)]);
        let cd = ControlDependence::compute(&PostDomTree::compute(&g, &[2]));
        assert_eq!(cd.parents(1), &[1]);
        assert_eq!(cd.iterated(1), vec![1]);
        assert!(cd.depends_on(1, 1));
        assert_eq!(cd.dependences(), &[ControlDep { branch: 1, successor: 1, node: 1 }]);
    }

    #[test]
    fn infinite_loop_node_with_fake_edge_is_a_parent() {
        // 0 -> 1 -> 2 -> 1: no exit. Fake edge from 2; 1 depends on 2 (edge 2 -> 1), and so does 2.
        let g = DiGraph::from_edges(3, [(0, 1), (1, 2), (2, 1)]);
        let pd = PostDomTree::compute(&g, &[]);
        assert_eq!(pd.fake_exit_edges(), &[2]);
        let cd = ControlDependence::compute(&pd);
        assert_eq!(cd.parents(1), &[2]);
        assert_eq!(cd.parents(2), &[2]);
        assert!(cd.parents(0).is_empty());
    }
}

#[cfg(test)]
mod chain_tests {
    use super::*;
    use crate::graph::DiGraph;

    #[test]
    fn a_switch_chain_keeps_one_pair_per_dependence_and_labels_on_demand() {
        // 0 = brx with targets 1..=t, each falling through into the next; t + 1 = the exit block.
        let t = 3000u32;
        let mut g = DiGraph::new(t as usize + 2);
        for i in 1..=t {
            g.add_edge(0, i);
            g.add_edge(i, i + 1);
        }
        let pd = PostDomTree::compute(&g, &[t + 1]);
        let cd = ControlDependence::compute(&pd);
        // The last target post-dominates the brx; every other depends on it once.
        assert_eq!(cd.children(0).len(), t as usize - 1, "one pair per dependent target");
        assert_eq!(cd.parents(t - 1), &[0]);
        assert!(cd.parents(t).is_empty());
        // The one before the last depends through every target but the last; the first through itself.
        assert_eq!(cd.labels(0, t - 1).len(), t as usize - 1);
        assert_eq!(cd.labels(0, 1), vec![1]);
        assert!(cd.labels(0, t).is_empty());
        assert_eq!(cd.dependences().len(), (t as usize - 1) * t as usize / 2);
    }
}
