//! Seed 004 Figure 2 as a PTX kernel (`kernels/handwritten/seed004_fig2.ptx`): control dependence from
//! the parsed program matches the figure's relations (Section 3.1) and the divergence example of
//! Section 3.3.

use reconverge_analysis::FunctionAnalysis;
use reconverge_ir::{EntityRef, Module};

fn load() -> Module {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels/handwritten/seed004_fig2.ptx");
    let src = std::fs::read_to_string(path).expect("seed004_fig2.ptx");
    reconverge_ptx::parse(&src).expect("parses")
}

#[test]
fn control_dependence_matches_figure_2() {
    let m = load();
    let f = &m.functions[m.function_by_name("fig2").expect("kernel fig2")];
    let fa = FunctionAnalysis::compute(f);
    let node = |label: &str| f.block_by_label(label).unwrap_or_else(|| panic!("block {label}")).index() as u32;
    let name = |n: u32| f.blocks[reconverge_ir::BlockId::new(n as usize)].label.clone().unwrap_or_default();
    let parents = |label: &str| {
        let mut v: Vec<String> = fa.cdep.parents(node(label)).iter().map(|&p| name(p)).collect();
        v.sort();
        v
    };
    // "blocks N1, N2, N2', N6, and N7 have no [control-dependence] predecessors and therefore must be convergent"
    for b in ["N1", "N2", "N2p", "N6", "N7"] {
        assert!(parents(b).is_empty(), "{b} has control-dependence parents {:?}", parents(b));
    }
    // The loop bodies depend on the guard and on the loop latches.
    for b in ["N3", "N3p", "N5"] {
        assert_eq!(parents(b), ["N2", "N3p"], "{b}");
    }
    for b in ["N4", "N4p"] {
        assert_eq!(parents(b), ["N2", "N3p", "N4p"], "{b}");
    }
    // "the IteratedControlDependenceSucc of instructions in N4' is {N4', N4}"
    let mut succ: Vec<String> = fa.cdep.iterated(node("N4p")).into_iter().map(name).collect();
    succ.sort();
    assert_eq!(succ, ["N4", "N4p"]);
    // "N5 is control independent of N4'": every diverged thread passes through N5.
    assert!(!fa.cdep.depends_on(node("N5"), node("N4p")));
    // The inner loop's divergent exit reconverges at N5.
    let br = fa.reconvergence.for_block(node("N4p")).expect("N4' ends in a conditional branch");
    assert_eq!(br.reconvergence.block(), Some(node("N5")));
}
