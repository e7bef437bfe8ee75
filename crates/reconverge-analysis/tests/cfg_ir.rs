//! CFG construction from hand-built IR functions and the analyses on top of it: the shapes a SIMT
//! reconvergence simulator must get right.

mod common;

use common::{func, last_inst, node, End::*};
use reconverge_analysis::{
    Cfg, CfgEdge, EdgeKind, EdgeTarget, FunctionAnalysis, PostDom, PostDomTree, Reconvergence, TermKind,
};
use reconverge_ir::{FuncKind, Function};

fn blk(b: u32) -> EdgeTarget {
    EdgeTarget::Block(b)
}

fn edge(to: EdgeTarget, kind: EdgeKind) -> CfgEdge {
    CfgEdge { to, kind }
}

#[test]
fn diamond_if_else() {
    let f = func(&[("entry", BraIf("else")), ("then", Bra("join")), ("else", Fall), ("join", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let (e, t, el, j) = (node(&f, "entry"), node(&f, "then"), node(&f, "else"), node(&f, "join"));
    assert_eq!(a.cfg.edges(e), &[edge(blk(el), EdgeKind::Taken), edge(blk(t), EdgeKind::FallThrough)]);
    assert_eq!(a.cfg.edges(t), &[edge(blk(j), EdgeKind::Jump)]);
    assert_eq!(a.cfg.edges(el), &[edge(blk(j), EdgeKind::FallThrough)]);
    assert_eq!(a.cfg.edges(j), &[edge(EdgeTarget::VirtualExit, EdgeKind::Exit)]);
    assert_eq!(a.cfg.exit_blocks(), &[j]);
    assert!(a.cfg.is_conditional(e));
    assert!(!a.cfg.is_conditional(t));
    assert_eq!(a.cfg.terminator(e), Some(last_inst(&f, "entry")));
    assert_eq!(a.cfg.terminator(el), None);
    assert_eq!(a.cfg.terminator_kind(e), TermKind::Bra);
    assert_eq!(a.cfg.fallthrough(e), Some(t));
    assert_eq!(a.cfg.fallthrough(j), None);
    assert_eq!(a.cfg.preds(j), &[t, el]);

    assert_eq!(a.dom.idom(j), Some(e));
    assert_eq!(a.postdom.ipdom(e), PostDom::Block(j));
    assert_eq!(a.cdep.parents(t), &[e]);
    assert_eq!(a.cdep.parents(el), &[e]);
    assert!(a.cdep.parents(j).is_empty());
    assert_eq!(a.cdep.labels(e, el), vec![el]);

    let br = a.reconvergence.for_block(e).expect("entry branches");
    assert_eq!(br.reconvergence, PostDom::Block(j));
    assert_eq!(br.targets, vec![blk(el), blk(t)]);
    assert!(!br.uniform && !br.trivial && !br.reconverges_only_at_exit());
    assert_eq!(a.reconvergence.branches().len(), 1);
    assert_eq!(a.reconvergence.for_inst(last_inst(&f, "entry")), Some(br));
    assert!(a.loops.loops().is_empty());
}

#[test]
fn if_then() {
    let f = func(&[("entry", BraIf("join")), ("then", Fall), ("join", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let (e, t, j) = (node(&f, "entry"), node(&f, "then"), node(&f, "join"));
    assert_eq!(a.postdom.ipdom(e), PostDom::Block(j));
    assert_eq!(a.cdep.parents(t), &[e]);
    assert_eq!(a.cdep.labels(e, t), vec![t]);
    assert!(a.cdep.parents(j).is_empty());
    assert_eq!(a.reconvergence.for_block(e).unwrap().reconvergence, PostDom::Block(j));
}

#[test]
fn nested_ifs() {
    // if (p) { if (q) { A } B } C
    let f = func(&[("entry", BraIf("c")), ("outer", BraIf("b")), ("a", Fall), ("b", Fall), ("c", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, o, ia, b, c] = ["entry", "outer", "a", "b", "c"].map(|l| node(&f, l));
    assert_eq!(a.postdom.ipdom(e), PostDom::Block(c));
    assert_eq!(a.postdom.ipdom(o), PostDom::Block(b));
    assert_eq!(a.cdep.parents(o), &[e]);
    assert_eq!(a.cdep.parents(ia), &[o]);
    assert_eq!(a.cdep.parents(b), &[e]);
    assert!(a.cdep.control_equivalent(o, b));
    assert_eq!(a.cdep.iterated(e), vec![o, ia, b]);
    assert_eq!(a.reconvergence.for_block(o).unwrap().reconvergence, PostDom::Block(b));
    assert_eq!(a.dom.idom(ia), Some(o));
}

#[test]
fn loop_with_break_and_continue() {
    // while (c) { if (p) continue; if (q) break; S; }
    let f = func(&[
        ("entry", Fall),
        ("head", BraIf("done")),  // loop condition: leave
        ("body", BraIf("latch")), // continue
        ("body2", BraIf("done")), // break
        ("s", Fall),
        ("latch", Bra("head")),
        ("done", Ret),
    ]);
    let a = FunctionAnalysis::compute(&f);
    let [en, h, b, b2, s, l, d] = ["entry", "head", "body", "body2", "s", "latch", "done"].map(|x| node(&f, x));
    assert_eq!(a.loops.back_edges(), &[(l, h)]);
    let lp = &a.loops.loops()[0];
    assert_eq!(lp.header, h);
    assert_eq!(lp.latches, vec![l]);
    assert_eq!(lp.blocks, vec![h, b, b2, s, l]);
    assert_eq!(lp.exits, vec![(h, d), (b2, d)]);
    assert_eq!(lp.depth, 1);
    assert!(a.loops.is_reducible());
    assert_eq!(a.loops.loop_depth(s), 1);
    assert_eq!(a.loops.loop_depth(en), 0);

    assert_eq!(a.postdom.ipdom(h), PostDom::Block(d));
    // `continue` rejoins at the latch only if `break` is not taken: the IPDOM of `body` is `done`.
    assert_eq!(a.postdom.ipdom(b), PostDom::Block(d));
    assert_eq!(a.postdom.ipdom(b2), PostDom::Block(d));
    assert_eq!(a.postdom.ipdom(s), PostDom::Block(l));
    // Control dependence: running the header again depends on `continue` and on not breaking; the body
    // depends on the loop test.
    assert_eq!(a.cdep.parents(h), &[b, b2]);
    assert_eq!(a.cdep.parents(b), &[h]);
    assert_eq!(a.cdep.parents(b2), &[b]);
    assert_eq!(a.cdep.parents(s), &[b2]);
    assert_eq!(a.cdep.parents(l), &[b, b2]);
    assert!(a.cdep.parents(d).is_empty());
    assert_eq!(a.cdep.iterated(b2), vec![h, b, b2, s, l]);
}

#[test]
fn two_exits_reconverge_only_at_function_exit() {
    let f = func(&[("entry", BraIf("r2")), ("r1", Ret), ("r2", Exit)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, r1, r2] = ["entry", "r1", "r2"].map(|x| node(&f, x));
    assert_eq!(a.cfg.exit_blocks(), &[r1, r2]);
    assert_eq!(a.cfg.terminator_kind(r2), TermKind::Exit);
    assert_eq!(a.postdom.ipdom(e), PostDom::VirtualExit);
    let br = a.reconvergence.for_block(e).unwrap();
    assert!(br.reconverges_only_at_exit());
    assert!(a.postdom.fake_exit_edges().is_empty());
    assert_eq!(a.cdep.parents(r1), &[e]);
    assert_eq!(a.cdep.parents(r2), &[e]);
}

#[test]
fn infinite_loop_gets_a_post_dominator() {
    // while (1) { if (p) A else B }
    let f = func(&[("entry", Fall), ("loop", BraIf("a")), ("b", Bra("loop")), ("a", Bra("loop"))]);
    let a = FunctionAnalysis::compute(&f);
    let [en, lp, b, ia] = ["entry", "loop", "b", "a"].map(|x| node(&f, x));
    assert!(a.cfg.exit_blocks().is_empty());
    // LLVM's rule: the forward walk from `entry` pops entry, loop, a, b; `b` is furthest away.
    assert_eq!(a.postdom.fake_exit_edges(), &[b]);
    assert_eq!(a.postdom.ipdom(b), PostDom::VirtualExit);
    assert_eq!(a.postdom.ipdom(lp), PostDom::Block(b));
    assert_eq!(a.postdom.ipdom(ia), PostDom::Block(lp));
    assert_eq!(a.postdom.ipdom(en), PostDom::Block(lp));
    for v in 0..4 {
        assert!(a.postdom.post_dominates_node(PostDom::VirtualExit, PostDom::Block(v)));
    }
    // With the fake edge, `b` may leave: it controls the loop; `a` depends on the branch in `loop`.
    assert_eq!(a.cdep.parents(ia), &[lp]);
    assert_eq!(a.cdep.parents(lp), &[lp, b]);
    assert_eq!(a.cdep.parents(b), &[b]);
    assert!(a.cdep.parents(en).is_empty());
    assert_eq!(a.reconvergence.for_block(lp).unwrap().reconvergence, PostDom::Block(b));
    assert_eq!(a.loops.loops().len(), 1);
    assert_eq!(a.loops.loops()[0].latches, vec![b, ia]);
}

#[test]
fn irreducible_goto_loop() {
    // if (p) goto L2; L1: ...; L2: if (q) goto L1; done
    let f = func(&[("entry", BraIf("l2")), ("l1", Fall), ("l2", BraIf("l1")), ("done", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, l1, l2, d] = ["entry", "l1", "l2", "done"].map(|x| node(&f, x));
    assert!(!a.loops.is_reducible());
    let r = &a.loops.irreducible_regions()[0];
    assert_eq!(r.blocks, vec![l1, l2]);
    assert_eq!(r.entries, vec![l1, l2]);
    assert!(a.loops.back_edges().is_empty());
    assert!(!a.loops.retreating_non_back_edges().is_empty());
    assert_eq!(a.postdom.ipdom(e), PostDom::Block(l2));
    assert_eq!(a.postdom.ipdom(l2), PostDom::Block(d));
    assert_eq!(a.cdep.parents(l1), &[e, l2]);
    assert_eq!(a.cdep.parents(l2), &[l2]);
}

#[test]
fn brx_idx_with_three_targets() {
    let f = func(&[
        ("entry", Brx(&["t1", "t2", "t3", "t1"])),
        ("t1", Bra("join")),
        ("t2", Bra("join")),
        ("t3", Fall),
        ("join", Ret),
    ]);
    let a = FunctionAnalysis::compute(&f);
    let [e, t1, t2, t3, j] = ["entry", "t1", "t2", "t3", "join"].map(|x| node(&f, x));
    assert_eq!(
        a.cfg.edges(e),
        &[edge(blk(t1), EdgeKind::Indexed), edge(blk(t2), EdgeKind::Indexed), edge(blk(t3), EdgeKind::Indexed)]
    );
    assert_eq!(a.cfg.terminator_kind(e), TermKind::Brx);
    assert!(a.cfg.is_conditional(e));
    assert_eq!(a.postdom.ipdom(e), PostDom::Block(j));
    for t in [t1, t2, t3] {
        assert_eq!(a.cdep.parents(t), &[e]);
        assert_eq!(a.cdep.labels(e, t), vec![t]);
    }
    let br = a.reconvergence.for_block(e).unwrap();
    assert_eq!(br.targets, vec![blk(t1), blk(t2), blk(t3)]);
    assert_eq!(br.reconvergence, PostDom::Block(j));

    // One distinct target: an unconditional jump.
    let f = func(&[("entry", Brx(&["t", "t"])), ("x", Ret), ("t", Ret)]);
    let cfg = Cfg::build(&f);
    assert!(!cfg.is_conditional(0));
    assert_eq!(cfg.succs(0), &[2]);
    // Guarded: the targets, then the fall-through.
    let f = func(&[("entry", BrxIf(&["t"])), ("x", Ret), ("t", Ret)]);
    let cfg = Cfg::build(&f);
    assert!(cfg.is_conditional(0));
    assert_eq!(cfg.edges(0), &[edge(blk(2), EdgeKind::Indexed), edge(blk(1), EdgeKind::FallThrough)]);
}

#[test]
fn guarded_ret_is_an_early_exit() {
    // if (tid > 3) return; S1; ret  (seed 004 §3.4)
    let f = func(&[("entry", RetIf), ("s1", Fall), ("end", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, s1, end] = ["entry", "s1", "end"].map(|x| node(&f, x));
    assert_eq!(a.cfg.edges(e), &[edge(EdgeTarget::VirtualExit, EdgeKind::Exit), edge(blk(s1), EdgeKind::FallThrough)]);
    assert!(a.cfg.is_conditional(e));
    assert_eq!(a.cfg.terminator_kind(e), TermKind::Ret);
    assert_eq!(a.cfg.exit_blocks(), &[e, end]);
    assert_eq!(a.postdom.ipdom(e), PostDom::VirtualExit);
    let br = a.reconvergence.for_block(e).unwrap();
    assert!(br.reconverges_only_at_exit());
    assert_eq!(br.targets, vec![EdgeTarget::VirtualExit, blk(s1)]);
    assert_eq!(a.cdep.parents(s1), &[e]);
    assert_eq!(a.cdep.parents(end), &[e]);

    // Guarded exit and guarded trap work the same; at the end of the layout both sides leave.
    let f = func(&[("entry", ExitIf), ("mid", TrapIfNot), ("last", ExitIf)]);
    let cfg = Cfg::build(&f);
    assert!(cfg.is_conditional(0) && cfg.is_conditional(1));
    assert_eq!(cfg.terminator_kind(1), TermKind::Trap);
    assert_eq!(cfg.edges(1), &[edge(EdgeTarget::VirtualExit, EdgeKind::Exit), edge(blk(2), EdgeKind::FallThrough)]);
    assert!(cfg.is_trivial(2));
    assert_eq!(cfg.edges(2), &[edge(EdgeTarget::VirtualExit, EdgeKind::Exit)]);
    assert_eq!(cfg.exit_blocks(), &[0, 1, 2]);
}

#[test]
fn trivial_and_uniform_branches() {
    let f = func(&[("entry", BraIf("next")), ("next", BraIfUni("end")), ("mid", BraUni("end")), ("end", Ret)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, n, m, end] = ["entry", "next", "mid", "end"].map(|x| node(&f, x));
    assert!(a.cfg.is_conditional(e) && a.cfg.is_trivial(e));
    assert_eq!(a.cfg.edges(e), &[edge(blk(n), EdgeKind::Taken)]);
    let br = a.reconvergence.for_block(e).unwrap();
    assert!(br.trivial);
    assert_eq!(br.reconvergence, PostDom::Block(n));
    assert!(a.cdep.children(e).is_empty());
    let un = a.reconvergence.for_block(n).unwrap();
    assert!(un.uniform && !un.trivial);
    assert_eq!(un.reconvergence, PostDom::Block(end));
    assert!(a.cfg.is_uniform(m) && !a.cfg.is_conditional(m));
    assert!(a.reconvergence.for_block(m).is_none());
}

#[test]
fn straight_line_empty_blocks_calls_and_unreachable() {
    let f = func(&[("entry", Call), ("empty", Empty), ("j", Bra("end")), ("dead", Fall), ("end", Fall)]);
    let a = FunctionAnalysis::compute(&f);
    let [e, em, j, dead, end] = ["entry", "empty", "j", "dead", "end"].map(|x| node(&f, x));
    assert_eq!(a.cfg.succs(e), &[em]);
    assert_eq!(a.cfg.terminator(e), None);
    assert_eq!(a.cfg.terminator_kind(em), TermKind::None);
    assert_eq!(a.cfg.succs(em), &[j]);
    // The last block falls off the end: it leaves the function.
    assert_eq!(a.cfg.edges(end), &[edge(EdgeTarget::VirtualExit, EdgeKind::FallThrough)]);
    assert_eq!(a.cfg.exit_blocks(), &[end]);
    assert_eq!(a.cfg.unreachable_blocks(), &[dead]);
    assert!(!a.cfg.is_reachable(dead));
    assert_eq!(a.cfg.reverse_postorder(), &[e, em, j, end]);
    assert!(!a.dom.is_reachable(dead));
    assert_eq!(a.dom.idom(dead), None);
    // Post-dominators ignore reachability from the entry.
    assert_eq!(a.postdom.ipdom(dead), PostDom::Block(end));
    assert!(a.reconvergence.branches().is_empty());
}

#[test]
fn layout_order_not_id_order() {
    // Blocks created as 0: entry, 1: b, 2: a, but laid out entry, a, b: fall-through follows layout.
    let mut f = func(&[("entry", Fall), ("b", Ret), ("a", Fall)]);
    f.layout = vec![0, 2, 1].into_iter().map(Cfg::block_id).collect();
    let cfg = Cfg::build(&f);
    assert_eq!(cfg.succs(0), &[2]);
    assert_eq!(cfg.succs(2), &[1]);
    assert_eq!(cfg.exit_blocks(), &[1]);
    assert_eq!(cfg.fallthrough(0), Some(2));
    assert_eq!(Cfg::node(Cfg::block_id(2)), 2);
    // A block outside the layout has no fall-through and leaves the function.
    f.layout = vec![0, 1].into_iter().map(Cfg::block_id).collect();
    let cfg = Cfg::build(&f);
    assert_eq!(cfg.fallthrough(2), None);
    assert!(cfg.leaves_function(2));
}

#[test]
fn function_without_blocks() {
    let f = Function::new("decl", FuncKind::Func);
    let a = FunctionAnalysis::compute(&f);
    assert_eq!(a.cfg.num_blocks(), 0);
    assert!(a.cfg.reverse_postorder().is_empty());
    assert_eq!(a.postdom.num_nodes(), 0);
    assert!(a.reconvergence.branches().is_empty());
    assert!(a.loops.is_reducible());
}

#[test]
fn from_graph_cfg_matches_graph() {
    let g = reconverge_analysis::DiGraph::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3), (1, 1)]);
    let cfg = Cfg::from_graph(g.clone(), 0, &[3, 1]);
    assert_eq!(cfg.graph(), &g);
    assert_eq!(cfg.exit_blocks(), &[1, 3]);
    assert!(cfg.is_conditional(0));
    assert!(cfg.is_conditional(1)); // 1 -> 3, 1 -> 1, 1 -> exit
    assert!(!cfg.is_conditional(3));
    let pd = PostDomTree::compute(cfg.graph(), cfg.exit_blocks());
    let r = Reconvergence::compute(&cfg, &pd);
    assert_eq!(r.branches().iter().map(|b| b.block).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(r.for_block(0).unwrap().reconvergence, PostDom::VirtualExit);
    assert_eq!(r.for_block(1).unwrap().inst, None);
}
