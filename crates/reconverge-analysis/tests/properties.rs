//! Property tests: the fast analyses against the naive oracles of `reconverge_analysis::naive` and
//! against petgraph's `simple_fast`, on random digraphs of 1..=40 nodes (irreducible loops, several
//! exits, infinite loops and unreachable nodes all occur).

use petgraph::algo::dominators::simple_fast;
use petgraph::graph::NodeIndex;
use proptest::prelude::*;
use reconverge_analysis::graph::strongly_connected_components;
use reconverge_analysis::{
    naive, BitSet, Cfg, ControlDependence, DiGraph, DomTree, FunctionAnalysis, Graph, LoopInfo, PostDom, PostDomTree,
};

/// A random graph: node count, edges (repeats allowed), exit nodes (maybe none). Entry is node 0.
#[derive(Clone, Debug)]
struct Case {
    n: usize,
    edges: Vec<(u32, u32)>,
    exits: Vec<u32>,
}

impl Case {
    fn graph(&self) -> DiGraph {
        DiGraph::from_edges(self.n, self.edges.iter().copied())
    }
}

/// Three shapes, equally likely: fully random edges; a CFG-like "spine" `i -> i+1` (every node reachable
/// and reaching the last node, an exit) plus random jumps; and a spine with random gaps (unreachable
/// nodes, infinite loops) plus random jumps.
fn arb_case() -> impl Strategy<Value = Case> {
    (1usize..=40, 0u32..=3, 0u8..3).prop_flat_map(|(n, density, shape)| {
        let max_edges = n * density as usize + 1;
        (
            Just(n),
            Just(shape),
            any::<u64>(),
            prop::collection::vec((0..n as u32, 0..n as u32), 0..=max_edges),
            prop::collection::vec(0..n as u32, 0..=3),
        )
            .prop_map(|(n, shape, gaps, random, mut exits)| {
                let mut edges = Vec::new();
                if shape > 0 {
                    for i in 0..n as u32 - 1 {
                        // Shape 2 drops about one spine edge in eight.
                        if shape == 1 || (gaps >> i) & 7 != 0 || (gaps >> (i + 20)) & 1 != 0 {
                            edges.push((i, i + 1));
                        }
                    }
                }
                if shape == 1 {
                    exits.push(n as u32 - 1);
                }
                edges.extend(random);
                Case { n, edges, exits }
            })
    })
}

fn petgraph_of(g: &DiGraph) -> petgraph::graph::DiGraph<(), ()> {
    let mut p = petgraph::graph::DiGraph::new();
    for _ in 0..g.num_nodes() {
        p.add_node(());
    }
    for (a, b) in g.edges() {
        p.add_edge(NodeIndex::new(a as usize), NodeIndex::new(b as usize), ());
    }
    p
}

fn check_dominators(g: &DiGraph) {
    let n = g.num_nodes();
    let fast = DomTree::compute(g, 0);
    let sets = naive::dominator_sets(g, 0);
    let idoms = naive::idoms_from_sets(&sets);
    let pg = petgraph_of(g);
    let pdoms = simple_fast(&pg, NodeIndex::new(0));
    for b in 0..n as u32 {
        assert_eq!(fast.is_reachable(b), sets[b as usize].is_some(), "reachability of {b}");
        assert_eq!(fast.idom(b), idoms[b as usize], "idom of {b}");
        let pg_idom = pdoms.immediate_dominator(NodeIndex::new(b as usize)).map(|x| x.index() as u32);
        assert_eq!(fast.idom(b), pg_idom, "idom of {b} vs petgraph");
        for a in 0..n as u32 {
            let naive_dom = sets[b as usize].as_ref().is_some_and(|s| s.contains(a));
            assert_eq!(fast.dominates(a, b), naive_dom, "{a} dom {b}");
        }
    }
    // rpo: a permutation of the reachable nodes, root first, each node after its idom.
    let reach = fast.rpo().len();
    assert_eq!(reach, sets.iter().filter(|s| s.is_some()).count());
    for &v in fast.rpo() {
        if let Some(d) = fast.idom(v) {
            assert!(fast.rpo_number(d) < fast.rpo_number(v));
            assert!(fast.children(d).contains(&v));
        }
    }
}

fn check_post_dominators(g: &DiGraph, exits: &[u32]) -> PostDomTree {
    let n = g.num_nodes();
    let pd = PostDomTree::compute(g, exits);
    let fake = pd.fake_exit_edges().to_vec();
    let aug = naive::augmented_graph(g, exits, &fake);
    let sorted = |g: &DiGraph| {
        let mut e: Vec<(u32, u32)> = g.edges().collect();
        e.sort_unstable();
        e
    };
    assert_eq!(sorted(&aug), sorted(pd.augmented_graph()));
    // Every node reaches the virtual exit after augmentation, and has an ipdom.
    for v in 0..n as u32 {
        assert!(naive::reaches(&aug, v, n as u32), "{v} reaches the exit");
        let _: PostDom = pd.ipdom(v);
        assert!(pd.tree().idom(v).is_some());
    }
    // Fake edges: exactly one per sink SCC of the nodes that cannot reach an exit, from inside it.
    let orig = naive::augmented_graph(g, exits, &[]);
    let reaches_exit = BitSet::from_items(n, (0..n as u32).filter(|&v| naive::reaches(&orig, v, n as u32)));
    let sccs = strongly_connected_components(g);
    let mut sink_sccs = 0;
    for comp in &sccs {
        let set = BitSet::from_items(n, comp.iter().copied());
        let is_sink = comp.iter().all(|&v| g.succs(v).iter().all(|&w| set.contains(w)));
        if is_sink && !reaches_exit.contains(comp[0]) {
            sink_sccs += 1;
            assert_eq!(fake.iter().filter(|&&f| set.contains(f)).count(), 1, "one fake edge in {comp:?}");
        }
    }
    assert_eq!(fake.len(), sink_sccs);
    for &f in &fake {
        assert!(!reaches_exit.contains(f));
    }
    // Against the naive post-dominator sets on the same augmented graph.
    let sets = naive::post_dominator_sets(g, exits, &fake);
    let idoms = naive::idoms_from_sets(&sets);
    for b in 0..n as u32 {
        let expect = match idoms[b as usize] {
            Some(x) if x as usize == n => PostDom::VirtualExit,
            Some(x) => PostDom::Block(x),
            None => unreachable!("every node reaches the exit"),
        };
        assert_eq!(pd.ipdom(b), expect, "ipdom of {b}");
        for a in 0..n as u32 {
            let s = sets[b as usize].as_ref().expect("reaches the exit");
            assert_eq!(pd.post_dominates(a, b), s.contains(a), "{a} pdom {b}");
        }
    }
    // And against petgraph on the reversed augmented graph.
    let pg = petgraph_of(&aug);
    let pdoms = simple_fast(petgraph::visit::Reversed(&pg), NodeIndex::new(n));
    for b in 0..n as u32 {
        let x = pdoms.immediate_dominator(NodeIndex::new(b as usize)).expect("reaches the exit").index();
        let expect = if x == n { PostDom::VirtualExit } else { PostDom::Block(x as u32) };
        assert_eq!(pd.ipdom(b), expect, "ipdom of {b} vs petgraph");
    }
    pd
}

fn check_control_dependence(g: &DiGraph, exits: &[u32], pd: &PostDomTree) {
    let n = g.num_nodes();
    let cd = ControlDependence::compute(pd);
    let naive_cd = naive::control_dependence(g, exits, pd.fake_exit_edges());
    for v in 0..n as u32 {
        assert_eq!(cd.parents(v), naive_cd[v as usize].as_slice(), "CD parents of {v}");
    }
    let children: Vec<Vec<u32>> = (0..n as u32).map(|v| cd.children(v).to_vec()).collect();
    let closure = naive::transitive_closure(&children);
    for v in 0..n as u32 {
        assert_eq!(cd.iterated_set(v), closure[v as usize], "iterated CD of {v}");
        assert_eq!(cd.iterated(v), closure[v as usize].to_vec());
        for &c in cd.children(v) {
            assert!(cd.parents(c).contains(&v));
        }
    }
    // Every labelled dependence is through a real successor of the branch.
    for d in cd.dependences() {
        assert!(g.succs(d.branch).contains(&d.successor));
    }
}

fn check_loops(g: &DiGraph) {
    let n = g.num_nodes();
    let dom = DomTree::compute(g, 0);
    let li = LoopInfo::compute(g, &dom);
    for &(latch, header) in li.back_edges() {
        assert!(dom.dominates(header, latch));
        assert!(g.succs(latch).contains(&header));
    }
    for (i, l) in li.loops().iter().enumerate() {
        assert!(l.blocks.contains(&l.header));
        for &b in &l.blocks {
            assert!(dom.dominates(l.header, b), "header {} dominates {b}", l.header);
        }
        for &latch in &l.latches {
            assert!(l.contains(latch));
            assert!(li.back_edges().contains(&(latch, l.header)));
        }
        for &(a, b) in &l.exits {
            assert!(l.contains(a) && !l.contains(b));
        }
        if let Some(p) = l.parent {
            assert!(p < i);
            let outer = &li.loops()[p];
            assert!(l.blocks.iter().all(|b| outer.contains(*b)));
            assert_eq!(l.depth, outer.depth + 1);
        } else {
            assert_eq!(l.depth, 1);
        }
    }
    let reducible = naive::is_reducible(g, 0);
    assert_eq!(li.is_reducible(), reducible, "reducibility");
    assert_eq!(li.retreating_non_back_edges().is_empty(), reducible, "retreating edges");
    for r in li.irreducible_regions() {
        assert!(r.entries.len() > 1);
        let set = BitSet::from_items(n, r.blocks.iter().copied());
        // Strongly connected within itself.
        let sub = DiGraph::from_edges(n, g.edges().filter(|&(a, b)| set.contains(a) && set.contains(b)));
        for &a in &r.blocks {
            let reach = reconverge_analysis::graph::reachable_from(&sub, a);
            assert!(set.is_subset(&reach));
        }
        for &e in &r.entries {
            assert!(e == 0 || g.preds(e).iter().any(|&p| dom.is_reachable(p) && !set.contains(p)));
        }
    }
    // A top-level SCC (of the reachable part) with several entries is reported.
    let reach = BitSet::from_items(n, dom.rpo().iter().copied());
    let sub = DiGraph::from_edges(n, g.edges().filter(|&(a, _)| reach.contains(a)));
    for comp in strongly_connected_components(&sub) {
        if !reach.contains(comp[0]) || (comp.len() == 1 && !g.succs(comp[0]).contains(&comp[0])) {
            continue;
        }
        let set = BitSet::from_items(n, comp.iter().copied());
        let entries = comp
            .iter()
            .filter(|&&v| v == 0 || g.preds(v).iter().any(|&p| reach.contains(p) && !set.contains(p)))
            .count();
        if entries > 1 {
            assert!(li.irreducible_regions().iter().any(|r| r.blocks == comp), "{comp:?} is irreducible");
        }
    }
}

fn check_bundle(case: &Case) {
    let g = case.graph();
    let a = FunctionAnalysis::from_cfg(Cfg::from_graph(g.clone(), 0, &case.exits));
    for b in 0..case.n as u32 {
        match a.reconvergence.for_block(b) {
            Some(br) => {
                assert!(a.cfg.is_conditional(b));
                assert_eq!(br.reconvergence, a.postdom.ipdom(b));
            }
            None => assert!(!a.cfg.is_conditional(b)),
        }
    }
    assert_eq!(a.cfg.unreachable_blocks().len() + a.cfg.reverse_postorder().len(), case.n);
}

fn config(cases: u32) -> ProptestConfig {
    // No regression files: failures print the minimal case, which belongs in a unit test.
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(2500))]

    #[test]
    fn analyses_agree_with_oracles(case in arb_case()) {
        let g = case.graph();
        check_dominators(&g);
        let pd = check_post_dominators(&g, &case.exits);
        check_control_dependence(&g, &case.exits, &pd);
        check_loops(&g);
        check_bundle(&case);
    }
}

/// Random graphs that are rarely generated above: many nodes with no exit at all (nested infinite loops)
/// and chains of small cycles.
fn arb_infinite() -> impl Strategy<Value = Case> {
    (2usize..=40).prop_flat_map(|n| {
        prop::collection::vec((0..n as u32, 0..n as u32), n..=2 * n).prop_map(move |extra| {
            // A path 0 -> 1 -> ... -> n-1 plus random edges, and no exits.
            let mut edges: Vec<(u32, u32)> = (0..n as u32 - 1).map(|i| (i, i + 1)).collect();
            edges.extend(extra);
            Case { n, edges, exits: Vec::new() }
        })
    })
}

proptest! {
    #![proptest_config(config(500))]

    #[test]
    fn no_exit_graphs(case in arb_infinite()) {
        let g = case.graph();
        check_dominators(&g);
        let pd = check_post_dominators(&g, &case.exits);
        prop_assert!(!pd.fake_exit_edges().is_empty());
        check_control_dependence(&g, &case.exits, &pd);
        check_loops(&g);
    }
}
