//! Seed 004 (Lee et al., "Convergence and Scalarization for Data-Parallel Architectures", CGO 2013),
//! Figure 2: the example CFG and its control-dependence graph.
//!
//! # Reconstruction
//!
//! The figure itself is not in the seed text, so the CFG is rebuilt from what the text states:
//! 1. blocks N1, N2, N2', N3, N3', N4, N4', N5, N6, N7; "conditional branch points, loops, and merges";
//! 2. N1, N2, N2', N6 and N7 — and only they — have no control-dependence predecessor (§3.1);
//! 3. `IteratedControlDependenceSucc` of the branch in N4' is {N4', N4} (§3.3): N4' → N4 is a loop back
//!    edge, N4 the header and N4' the latch of a loop whose body is just N4 → N4';
//! 4. N5 is control independent of N4', all diverged threads pass through N5, and N5 is the block that
//!    needs a `syncwarp` because it has a divergent predecessor (N4') (§3.3, §6): N4' exits to N5.
//!
//! Reading `X'` as the block that closes the construct opened by `X` (as N4' closes N4's loop), the most
//! plausible graph is an LLVM-style *rotated* loop nest: N2 guards an outer loop (N3 header, N3' latch)
//! whose body holds the inner loop N4/N4' followed by N5, and N2' is where the guard and the outer
//! loop's exit merge; N6 and N7 follow. The paper's compiler is LLVM-based, and rotated loops behind a
//! guard are exactly what it emits. Edges, in a PTX-friendly layout (`@p bra` takes the first edge,
//! falls through to the next block on the second):
//!
//! ```text
//! N1  -> N2
//! N2  -> N2' (taken: skip the loops), N3 (fall-through)
//! N3  -> N4
//! N4  -> N4'
//! N4' -> N4  (taken: back edge),      N5 (fall-through)
//! N5  -> N3'
//! N3' -> N3  (taken: back edge),      N2' (fall-through)
//! N2' -> N6
//! N6  -> N7
//! N7  -> exit (ret)
//! ```
//!
//! Its control dependence (parents; the label is the successor the dependence goes through):
//!
//! ```text
//! N1, N2, N2', N6, N7 : none
//! N3, N3', N5         : N2 (via N3), N3' (via N3)
//! N4, N4'             : N2 (via N3), N3' (via N3), N4' (via N4)
//! ```
//!
//! A second test checks that the other natural reading (N2 and N3 as nested if-then merges at N2' and
//! N3', around the N4/N4' loop) satisfies every stated fact as well: the text does not pin the figure
//! down, so the facts are asserted on both.

use reconverge_analysis::{naive, Cfg, ControlDependence, DiGraph, FunctionAnalysis, PostDom, PostDomTree};

const NAMES: [&str; 10] = ["N1", "N2", "N3", "N4", "N4'", "N5", "N3'", "N2'", "N6", "N7"];
const N1: u32 = 0;
const N2: u32 = 1;
const N3: u32 = 2;
const N4: u32 = 3;
const N4P: u32 = 4;
const N5: u32 = 5;
const N3P: u32 = 6;
const N2P: u32 = 7;
const N6: u32 = 8;
const N7: u32 = 9;

fn figure2() -> Cfg {
    let g = DiGraph::from_edges(
        10,
        [
            (N1, N2),
            (N2, N2P),
            (N2, N3),
            (N3, N4),
            (N4, N4P),
            (N4P, N4),
            (N4P, N5),
            (N5, N3P),
            (N3P, N3),
            (N3P, N2P),
            (N2P, N6),
            (N6, N7),
        ],
    );
    Cfg::from_graph(g, N1, &[N7])
}

fn names(v: &[u32]) -> Vec<&'static str> {
    v.iter().map(|&n| NAMES[n as usize]).collect()
}

/// Facts the paper states, for any reconstruction.
fn check_stated_facts(cd: &ControlDependence) {
    let without: Vec<u32> = (0..10).filter(|&n| cd.parents(n).is_empty()).collect();
    assert_eq!(names(&without), vec!["N1", "N2", "N2'", "N6", "N7"]);
    assert_eq!(names(&cd.iterated(N4P)), vec!["N4", "N4'"]);
    assert!(!cd.depends_on(N5, N4P));
    assert!(!cd.iterated_set(N4P).contains(N5));
    // Divergence propagation (Figure 3) from a thread-variant branch in N4' marks exactly N4' and N4.
    let divergent = cd.iterated_of([N4P]);
    assert_eq!(names(&divergent.to_vec()), vec!["N4", "N4'"]);
}

#[test]
fn figure2_control_dependence() {
    let a = FunctionAnalysis::from_cfg(figure2());
    let cd = &a.cdep;
    let parents: Vec<Vec<&str>> = (0..10).map(|n| names(cd.parents(n))).collect();
    assert_eq!(
        parents,
        vec![
            vec![],                   // N1
            vec![],                   // N2
            vec!["N2", "N3'"],        // N3
            vec!["N2", "N4'", "N3'"], // N4
            vec!["N2", "N4'", "N3'"], // N4'
            vec!["N2", "N3'"],        // N5
            vec!["N2", "N3'"],        // N3'
            vec![],                   // N2'
            vec![],                   // N6
            vec![],                   // N7
        ]
    );
    assert_eq!(cd.labels(N2, N5), vec![N3]);
    assert_eq!(cd.labels(N3P, N4), vec![N3]);
    assert_eq!(cd.labels(N4P, N4), vec![N4]);
    assert_eq!(names(cd.children(N4P)), vec!["N4", "N4'"]);
    assert_eq!(names(&cd.iterated(N2)), vec!["N3", "N4", "N4'", "N5", "N3'"]);
    check_stated_facts(cd);

    // Control-equivalent regions (§3.1): {N1, N2, N2', N6, N7} with the entry; {N3, N3', N5}; {N4, N4'}.
    assert!(cd.control_equivalent(N1, N6));
    assert!(cd.control_equivalent(N3, N5));
    assert!(cd.control_equivalent(N4, N4P));
    assert!(!cd.control_equivalent(N5, N4));

    // The same relation from the definition, by path search.
    let naive = naive::control_dependence(a.cfg.graph(), a.cfg.exit_blocks(), a.postdom.fake_exit_edges());
    assert_eq!((0..10).map(|n| cd.parents(n).to_vec()).collect::<Vec<_>>(), naive);
}

#[test]
fn figure2_loops_and_reconvergence() {
    let a = FunctionAnalysis::from_cfg(figure2());
    assert_eq!(a.loops.back_edges(), &[(N4P, N4), (N3P, N3)]);
    let loops = a.loops.loops();
    assert_eq!(loops.len(), 2);
    assert_eq!((loops[0].header, loops[0].latches.clone(), loops[0].depth), (N3, vec![N3P], 1));
    assert_eq!(names(&loops[0].blocks), vec!["N3", "N4", "N4'", "N5", "N3'"]);
    assert_eq!((loops[1].header, loops[1].latches.clone(), loops[1].depth), (N4, vec![N4P], 2));
    assert_eq!(loops[1].parent, Some(0));
    assert_eq!(loops[1].exits, vec![(N4P, N5)]);
    assert!(a.loops.is_reducible());

    assert_eq!(a.postdom.ipdom(N2), PostDom::Block(N2P));
    assert_eq!(a.postdom.ipdom(N3P), PostDom::Block(N2P));
    assert_eq!(a.postdom.ipdom(N4P), PostDom::Block(N5));
    let conditional: Vec<u32> = a.reconvergence.branches().iter().map(|b| b.block).collect();
    assert_eq!(names(&conditional), vec!["N2", "N4'", "N3'"]);
    // Lanes that diverge at N4' meet again at N5, the block that needs a syncwarp.
    assert_eq!(a.reconvergence.for_block(N4P).unwrap().reconvergence, PostDom::Block(N5));
    assert_eq!(a.dom.idom(N5), Some(N4P));
    assert!(a.postdom.fake_exit_edges().is_empty());
}

#[test]
fn alternative_reading_satisfies_the_stated_facts_too() {
    // N2: if (..) { N3: if (..) { N4 <-> N4' loop; N5 } N3' } N2'; N6; N7
    let g = DiGraph::from_edges(
        10,
        [
            (N1, N2),
            (N2, N2P),
            (N2, N3),
            (N3, N3P),
            (N3, N4),
            (N4, N4P),
            (N4P, N4),
            (N4P, N5),
            (N5, N3P),
            (N3P, N2P),
            (N2P, N6),
            (N6, N7),
        ],
    );
    let pd = PostDomTree::compute(&g, &[N7]);
    let cd = ControlDependence::compute(&pd);
    check_stated_facts(&cd);
    assert_eq!(names(cd.parents(N3P)), vec!["N2"]);
    assert_eq!(names(cd.parents(N5)), vec!["N3"]);
    assert_eq!(names(cd.parents(N4)), vec!["N3", "N4'"]);
}
