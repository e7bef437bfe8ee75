//! Dominator trees: Cooper, Harvey and Kennedy, "A Simple, Fast Dominance Algorithm" (2001).
//!
//! Node `a` *dominates* `b` if every path from the root to `b` passes through `a` (so every node dominates
//! itself). The algorithm numbers the nodes reachable from the root in reverse postorder, then iterates
//! `idom(b) = ⋂ idom-chains of b's processed predecessors` over that order until nothing changes, with
//! the intersection walking up the two chains by reverse-postorder number. Everything is a dense array
//! indexed by node.
//!
//! After the fixpoint the tree is numbered by an iterative depth-first walk (pre- and post-order), so
//! [`DomTree::dominates`] is two comparisons. [`DomTree::compute`] is generic over [`Graph`] and a root:
//! the post-dominator tree is this same code on the reversed graph rooted at the virtual exit.

use crate::graph::{reverse_postorder, Graph};

const NONE: u32 = u32::MAX;

/// The dominator tree of a graph from one root.
///
/// Nodes not reachable from the root are in no tree: they have no immediate dominator, dominate nothing
/// and are dominated by nothing.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct DomTree {
    root: u32,
    /// Immediate dominator; the root's is itself; `NONE` if unreachable.
    idom: Vec<u32>,
    /// Reachable nodes in reverse postorder (root first).
    rpo: Vec<u32>,
    /// Position of each node in `rpo`; `NONE` if unreachable.
    rpo_number: Vec<u32>,
    /// Children in the tree, in increasing node order.
    children: Vec<Vec<u32>>,
    /// Preorder number in the tree; `NONE` if unreachable.
    pre: Vec<u32>,
    /// Postorder number in the tree; `NONE` if unreachable.
    post: Vec<u32>,
    /// Depth in the tree (root 0); `NONE` if unreachable.
    depth: Vec<u32>,
}

impl DomTree {
    /// Computes the dominator tree of `g` from `root`.
    ///
    /// A `root` that is not a node of `g` gives a tree in which every node is unreachable.
    pub fn compute<G: Graph>(g: &G, root: u32) -> DomTree {
        let n = g.num_nodes();
        let rpo = reverse_postorder(g, root);
        let mut rpo_number = vec![NONE; n];
        for (i, &v) in rpo.iter().enumerate() {
            rpo_number[v as usize] = i as u32;
        }
        let mut idom = vec![NONE; n];
        if let Some(&r) = rpo.first() {
            idom[r as usize] = r;
        }
        let intersect = |idom: &[u32], mut a: u32, mut b: u32| -> u32 {
            while a != b {
                while rpo_number[a as usize] > rpo_number[b as usize] {
                    a = idom[a as usize];
                }
                while rpo_number[b as usize] > rpo_number[a as usize] {
                    b = idom[b as usize];
                }
            }
            a
        };
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new_idom = NONE;
                for &p in g.preds(b) {
                    // Skip predecessors not processed yet, and unreachable ones (never processed).
                    if idom[p as usize] == NONE {
                        continue;
                    }
                    new_idom = if new_idom == NONE { p } else { intersect(&idom, p, new_idom) };
                }
                debug_assert_ne!(new_idom, NONE, "a reachable node has a processed predecessor");
                if idom[b as usize] != new_idom {
                    idom[b as usize] = new_idom;
                    changed = true;
                }
            }
        }

        let mut children = vec![Vec::new(); n];
        for v in 0..n as u32 {
            let d = idom[v as usize];
            if d != NONE && d != v {
                children[d as usize].push(v);
            }
        }

        // Number the tree: iterative DFS, children in increasing order.
        let mut pre = vec![NONE; n];
        let mut post = vec![NONE; n];
        let mut depth = vec![NONE; n];
        if let Some(&r) = rpo.first() {
            let (mut pre_n, mut post_n) = (0u32, 0u32);
            let mut stack: Vec<(u32, usize)> = vec![(r, 0)];
            pre[r as usize] = pre_n;
            pre_n += 1;
            depth[r as usize] = 0;
            while let Some(&(v, i)) = stack.last() {
                if let Some(&c) = children[v as usize].get(i) {
                    stack.last_mut().expect("stack is not empty").1 += 1;
                    pre[c as usize] = pre_n;
                    pre_n += 1;
                    depth[c as usize] = depth[v as usize] + 1;
                    stack.push((c, 0));
                } else {
                    post[v as usize] = post_n;
                    post_n += 1;
                    stack.pop();
                }
            }
        }

        DomTree { root, idom, rpo, rpo_number, children, pre, post, depth }
    }

    /// The root the tree was computed from.
    pub fn root(&self) -> u32 {
        self.root
    }

    /// The number of nodes of the graph (reachable or not).
    pub fn num_nodes(&self) -> usize {
        self.idom.len()
    }

    /// Whether `n` is reachable from the root.
    pub fn is_reachable(&self, n: u32) -> bool {
        self.rpo_number.get(n as usize).is_some_and(|&r| r != NONE)
    }

    /// The immediate dominator of `n`: `None` for the root and for unreachable nodes.
    pub fn idom(&self, n: u32) -> Option<u32> {
        match self.idom.get(n as usize) {
            Some(&d) if d != NONE && d != n => Some(d),
            _ => None,
        }
    }

    /// Whether `a` dominates `b` (reflexive: every reachable node dominates itself). `false` if either is
    /// unreachable. O(1).
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return false;
        }
        let (a, b) = (a as usize, b as usize);
        self.pre[a] <= self.pre[b] && self.post[b] <= self.post[a]
    }

    /// Whether `a` dominates `b` and `a != b`.
    pub fn strictly_dominates(&self, a: u32, b: u32) -> bool {
        a != b && self.dominates(a, b)
    }

    /// The children of `n` in the tree (the nodes it immediately dominates), in increasing order.
    pub fn children(&self, n: u32) -> &[u32] {
        &self.children[n as usize]
    }

    /// The reachable nodes in reverse postorder of the graph (root first).
    pub fn rpo(&self) -> &[u32] {
        &self.rpo
    }

    /// The position of `n` in [`DomTree::rpo`], if reachable.
    pub fn rpo_number(&self, n: u32) -> Option<u32> {
        self.rpo_number.get(n as usize).copied().filter(|&r| r != NONE)
    }

    /// The depth of `n` in the tree (the root has depth 0), if reachable.
    pub fn depth(&self, n: u32) -> Option<u32> {
        self.depth.get(n as usize).copied().filter(|&d| d != NONE)
    }

    /// `n` and its dominators, innermost first, ending at the root (empty if `n` is unreachable).
    pub fn dominators(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        let mut cur = if self.is_reachable(n) { Some(n) } else { None };
        std::iter::from_fn(move || {
            let v = cur?;
            cur = self.idom(v);
            Some(v)
        })
    }

    /// The nearest node that dominates both `a` and `b`, if both are reachable.
    pub fn nearest_common_dominator(&self, a: u32, b: u32) -> Option<u32> {
        if !self.is_reachable(a) || !self.is_reachable(b) {
            return None;
        }
        let (mut a, mut b) = (a, b);
        while self.depth[a as usize] > self.depth[b as usize] {
            a = self.idom[a as usize];
        }
        while self.depth[b as usize] > self.depth[a as usize] {
            b = self.idom[b as usize];
        }
        while a != b {
            a = self.idom[a as usize];
            b = self.idom[b as usize];
        }
        Some(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::DiGraph;

    #[test]
    fn diamond() {
        // 0 -> 1, 2 -> 3
        let g = DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        let d = DomTree::compute(&g, 0);
        assert_eq!(d.idom(0), None);
        assert_eq!(d.idom(1), Some(0));
        assert_eq!(d.idom(2), Some(0));
        assert_eq!(d.idom(3), Some(0));
        assert_eq!(d.children(0), &[1, 2, 3]);
        assert!(d.dominates(0, 3));
        assert!(d.dominates(3, 3));
        assert!(!d.strictly_dominates(3, 3));
        assert!(!d.dominates(1, 3));
        assert_eq!(d.nearest_common_dominator(1, 2), Some(0));
        assert_eq!(d.dominators(3).collect::<Vec<_>>(), vec![3, 0]);
        assert_eq!(d.depth(3), Some(1));
    }

    #[test]
    fn unreachable_and_bad_root() {
        let g = DiGraph::from_edges(4, [(0, 1), (2, 1), (3, 2)]);
        let d = DomTree::compute(&g, 0);
        assert!(d.is_reachable(1));
        assert!(!d.is_reachable(2));
        assert_eq!(d.idom(1), Some(0));
        assert_eq!(d.idom(2), None);
        assert!(!d.dominates(2, 2));
        assert_eq!(d.rpo(), &[0, 1]);
        let e = DomTree::compute(&g, 7);
        assert!(e.rpo().is_empty());
        assert!(!e.is_reachable(0));
        let empty = DomTree::compute(&DiGraph::new(0), 0);
        assert_eq!(empty.num_nodes(), 0);
    }

    #[test]
    fn loop_with_two_latches() {
        // 0 -> 1 (header) -> 2 -> 1, 1 -> 3 -> 1, 3 -> 4
        let g = DiGraph::from_edges(5, [(0, 1), (1, 2), (2, 1), (1, 3), (3, 1), (3, 4)]);
        let d = DomTree::compute(&g, 0);
        assert_eq!(d.idom(2), Some(1));
        assert_eq!(d.idom(3), Some(1));
        assert_eq!(d.idom(4), Some(3));
        assert!(d.dominates(1, 4));
    }
}
