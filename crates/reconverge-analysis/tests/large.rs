//! Big graphs: no recursion overflows, and the analyses stay fast (the whole file runs in well under a
//! second in the test profile).

use reconverge_analysis::{Cfg, DiGraph, FunctionAnalysis, PostDom};

fn analyse(n: usize, edges: impl IntoIterator<Item = (u32, u32)>, exits: &[u32]) -> FunctionAnalysis {
    FunctionAnalysis::from_cfg(Cfg::from_graph(DiGraph::from_edges(n, edges), 0, exits))
}

#[test]
fn long_chain_of_diamonds() {
    // 30_000 if/else diamonds in a row: 0 -> {1, 2} -> 3 -> {4, 5} -> 6 ...
    let k = 30_000u32;
    let n = (3 * k + 1) as usize;
    let edges = (0..k).flat_map(|i| {
        let h = 3 * i;
        [(h, h + 1), (h, h + 2), (h + 1, h + 3), (h + 2, h + 3)]
    });
    let a = analyse(n, edges, &[3 * k]);
    assert_eq!(a.reconvergence.branches().len(), k as usize);
    assert_eq!(a.postdom.ipdom(3 * (k - 1)), PostDom::Block(3 * k));
    assert_eq!(a.dom.idom(3 * k), Some(3 * (k - 1)));
    assert_eq!(a.dom.depth(3 * k), Some(k));
    assert_eq!(a.cdep.parents(3 * k - 1), &[3 * (k - 1)]);
    assert!(a.loops.loops().is_empty());
}

#[test]
fn deeply_nested_loops() {
    // Header i -> header i+1 ... -> innermost -> latch ... ; latch i -> header i and -> latch i-1.
    let d = 400u32;
    let n = (2 * d + 1) as usize; // headers 0..d, latches d..2d, exit block 2d
    let header = |i: u32| i;
    let latch = |i: u32| 2 * d - 1 - i;
    let mut edges = Vec::new();
    for i in 0..d {
        edges.push((header(i), if i + 1 < d { header(i + 1) } else { latch(d - 1) }));
        edges.push((latch(i), header(i)));
        edges.push((latch(i), if i > 0 { latch(i - 1) } else { 2 * d }));
    }
    let a = analyse(n, edges, &[2 * d]);
    assert_eq!(a.loops.loops().len(), d as usize);
    assert_eq!(a.loops.loop_depth(header(d - 1)), d);
    assert_eq!(a.loops.loops()[d as usize - 1].parent, Some(d as usize - 2));
    assert!(a.loops.is_reducible());
    assert_eq!(a.cdep.parents(header(d - 1)).len(), d as usize);
    assert_eq!(a.postdom.ipdom(latch(0)), PostDom::Block(2 * d));
}

#[test]
fn many_infinite_loops() {
    // A chain 0 -> 1 -> ... -> k, every node also entering its own self-looping sink; k exits.
    let k = 20_000u32;
    let n = (2 * k + 1) as usize;
    let mut edges: Vec<(u32, u32)> = (0..k).map(|i| (i, i + 1)).collect();
    edges.extend((0..k).flat_map(|i| [(i, k + 1 + i), (k + 1 + i, k + 1 + i)]));
    let a = analyse(n, edges, &[k]);
    assert_eq!(a.postdom.fake_exit_edges().len(), k as usize);
    assert_eq!(a.postdom.ipdom(0), PostDom::VirtualExit);
    assert_eq!(a.cdep.parents(k + 1), &[0, k + 1]);
    assert_eq!(a.loops.loops().len(), k as usize);
}

#[test]
fn big_irreducible_ring() {
    // A ring of 5_000 nodes entered from the entry at every tenth node. (Control dependence is stored
    // explicitly and is quadratic here: every ring node depends on the entry through most entries.)
    let r = 5_000u32;
    let n = (r + 2) as usize;
    let mut edges: Vec<(u32, u32)> = (0..r).map(|i| (1 + i, 1 + (i + 1) % r)).collect();
    edges.extend((0..r).step_by(10).map(|i| (0, 1 + i)));
    edges.push((r, r + 1));
    let a = analyse(n, edges, &[r + 1]);
    assert!(!a.loops.is_reducible());
    let region = &a.loops.irreducible_regions()[0];
    assert_eq!(region.blocks.len(), r as usize);
    assert_eq!(region.entries.len(), (r / 10) as usize);
}
