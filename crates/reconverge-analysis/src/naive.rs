//! Slow, obviously-correct reference algorithms, kept public as **test oracles** for the fast analyses
//! (like cranelift's `dominator_tree/simple.rs`). Quadratic or worse: not for production use.
//!
//! - [`dominator_sets`]: iterative set-based dataflow, `Dom(root) = {root}`,
//!   `Dom(n) = {n} ∪ ⋂ Dom(p)` over the reachable predecessors `p`, until nothing changes.
//! - [`post_dominator_sets`]: the same on the reversed augmented graph (see [`augmented_graph`]).
//! - [`control_dependence`]: straight from the definition in Lee et al. §3.1 (see [`crate::cdep`]), by path
//!   search.
//! - [`transitive_closure`], [`is_reducible`] (T1/T2 interval reduction), [`reaches`].

use crate::bitset::BitSet;
use crate::graph::{reachable_from, DiGraph, Graph, Reversed};
use std::collections::BTreeSet;

/// Dominator sets: `Some(Dom(n))` for every node reachable from `root`, `None` for the others.
pub fn dominator_sets<G: Graph>(g: &G, root: u32) -> Vec<Option<BitSet>> {
    let n = g.num_nodes();
    if root as usize >= n {
        return vec![None; n];
    }
    let reach = reachable_from(g, root);
    let mut dom: Vec<Option<BitSet>> = (0..n as u32).map(|v| reach.contains(v).then(|| BitSet::full(n))).collect();
    dom[root as usize] = Some(BitSet::from_items(n, [root]));
    let mut changed = true;
    while changed {
        changed = false;
        for v in 0..n as u32 {
            if v == root || !reach.contains(v) {
                continue;
            }
            let mut new = BitSet::full(n);
            for &p in g.preds(v) {
                if let Some(d) = &dom[p as usize] {
                    new.intersect_with(d);
                }
            }
            new.insert(v);
            if dom[v as usize].as_ref() != Some(&new) {
                dom[v as usize] = Some(new);
                changed = true;
            }
        }
    }
    dom
}

/// Immediate dominators from dominator sets: the strict dominator with the largest set (the closest
/// one). `None` for the root and for unreachable nodes.
pub fn idoms_from_sets(sets: &[Option<BitSet>]) -> Vec<Option<u32>> {
    sets.iter()
        .enumerate()
        .map(|(v, s)| {
            let s = s.as_ref()?;
            s.iter().filter(|&d| d != v as u32).max_by_key(|&d| sets[d as usize].as_ref().map_or(0, BitSet::count))
        })
        .collect()
}

/// The graph `g` plus a virtual exit (node `num_nodes`), with an edge to it from every node in `exits`
/// and every node in `fake_exit_edges`.
pub fn augmented_graph<G: Graph>(g: &G, exits: &[u32], fake_exit_edges: &[u32]) -> DiGraph {
    let n = g.num_nodes();
    let mut a = DiGraph::new(n + 1);
    for v in 0..n as u32 {
        for &w in g.succs(v) {
            a.add_edge(v, w);
        }
    }
    for &e in exits.iter().chain(fake_exit_edges) {
        a.add_edge(e, n as u32);
    }
    a
}

/// Post-dominator sets on the augmented graph (index `num_nodes` is the virtual exit): `Some(PDom(n))`
/// for every node that reaches the exit there.
pub fn post_dominator_sets<G: Graph>(g: &G, exits: &[u32], fake_exit_edges: &[u32]) -> Vec<Option<BitSet>> {
    let a = augmented_graph(g, exits, fake_exit_edges);
    dominator_sets(&Reversed(&a), g.num_nodes() as u32)
}

/// Control-dependence parents of every real node, from the definition, on the augmented graph:
/// `Y` depends on `X` iff some path `X → … → Y` of at least one edge has every intermediate node
/// post-dominated by `Y`, and `X` is not post-dominated by `Y` (never true for `X = Y`, see
/// [`crate::cdep`]). Every node must reach the exit in the augmented graph.
pub fn control_dependence<G: Graph>(g: &G, exits: &[u32], fake_exit_edges: &[u32]) -> Vec<Vec<u32>> {
    let n = g.num_nodes();
    let a = augmented_graph(g, exits, fake_exit_edges);
    let pdom = post_dominator_sets(g, exits, fake_exit_edges);
    let pdoms = |y: u32, x: u32| pdom[x as usize].as_ref().expect("every node reaches the exit").contains(y);
    let mut parents = vec![Vec::new(); n];
    for x in 0..n as u32 {
        for y in 0..n as u32 {
            if x != y && pdoms(y, x) {
                continue;
            }
            // Search paths from x whose intermediate nodes are post-dominated by y.
            let mut seen = BitSet::new(n + 1);
            let mut stack: Vec<u32> = a.succs(x).to_vec();
            let mut found = false;
            while let Some(z) = stack.pop() {
                if z == y {
                    found = true;
                    break;
                }
                if z as usize == n || !seen.insert(z) || !pdoms(y, z) {
                    continue;
                }
                stack.extend_from_slice(a.succs(z));
            }
            if found {
                parents[y as usize].push(x);
            }
        }
    }
    parents
}

/// For each node, the nodes reachable from it through one or more edges of `children`.
pub fn transitive_closure(children: &[Vec<u32>]) -> Vec<BitSet> {
    let n = children.len();
    (0..n)
        .map(|s| {
            let mut set = BitSet::new(n);
            let mut stack: Vec<u32> = children[s].clone();
            while let Some(v) = stack.pop() {
                if set.insert(v) {
                    stack.extend_from_slice(&children[v as usize]);
                }
            }
            set
        })
        .collect()
}

/// Whether `to` is reachable from `from` (reflexive).
pub fn reaches<G: Graph>(g: &G, from: u32, to: u32) -> bool {
    reachable_from(g, from).contains(to)
}

/// Whether the part of `g` reachable from `entry` is reducible, by T1/T2 interval reduction: repeatedly
/// remove self-loops (T1) and merge a non-entry node with a single predecessor into it (T2); the graph is
/// reducible iff one node remains.
pub fn is_reducible<G: Graph>(g: &G, entry: u32) -> bool {
    let n = g.num_nodes();
    if entry as usize >= n {
        return true;
    }
    let reach = reachable_from(g, entry);
    let mut succ: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n];
    let mut pred: Vec<BTreeSet<u32>> = vec![BTreeSet::new(); n];
    for v in reach.iter() {
        for &w in g.succs(v) {
            succ[v as usize].insert(w);
            pred[w as usize].insert(v);
        }
    }
    let mut alive = reach;
    loop {
        let mut changed = false;
        for v in alive.to_vec() {
            // T1
            if succ[v as usize].remove(&v) {
                pred[v as usize].remove(&v);
                changed = true;
            }
            // T2
            if v != entry && pred[v as usize].len() == 1 {
                let u = *pred[v as usize].iter().next().expect("one predecessor");
                let vs = std::mem::take(&mut succ[v as usize]);
                succ[u as usize].remove(&v);
                for w in vs {
                    pred[w as usize].remove(&v);
                    pred[w as usize].insert(u);
                    succ[u as usize].insert(w);
                }
                pred[v as usize].clear();
                alive.remove(v);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    alive.count() == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dom_sets_of_a_diamond() {
        let g = DiGraph::from_edges(5, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        let d = dominator_sets(&g, 0);
        assert_eq!(d[3].as_ref().unwrap().to_vec(), vec![0, 3]);
        assert!(d[4].is_none());
        assert_eq!(idoms_from_sets(&d), vec![None, Some(0), Some(0), Some(0), None]);
    }

    #[test]
    fn reducibility() {
        let loop_g = DiGraph::from_edges(3, [(0, 1), (1, 2), (2, 1)]);
        assert!(is_reducible(&loop_g, 0));
        let irr = DiGraph::from_edges(3, [(0, 1), (0, 2), (1, 2), (2, 1)]);
        assert!(!is_reducible(&irr, 0));
    }

    #[test]
    fn cd_of_a_diamond() {
        let g = DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]);
        let cd = control_dependence(&g, &[3], &[]);
        assert_eq!(cd, vec![vec![], vec![0], vec![0], vec![]]);
        let tc = transitive_closure(&[vec![1], vec![2], vec![1]]);
        assert_eq!(tc[0].to_vec(), vec![1, 2]);
        assert!(reaches(&g, 0, 3));
        assert!(!reaches(&g, 3, 0));
    }
}
