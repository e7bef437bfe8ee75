//! [`FunctionAnalysis`]: every control-flow analysis of one function, computed once, in a fixed order.

use crate::cdep::ControlDependence;
use crate::cfg::Cfg;
use crate::dom::DomTree;
use crate::loops::LoopInfo;
use crate::postdom::PostDomTree;
use crate::reconvergence::Reconvergence;
use reconverge_ir::Function;

/// The control-flow analyses of one function. Plain data: later stages read the fields.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FunctionAnalysis {
    /// The control-flow graph.
    pub cfg: Cfg,
    /// Dominators from the entry block.
    pub dom: DomTree,
    /// Post-dominators below the virtual exit (fake exit edges for infinite loops).
    pub postdom: PostDomTree,
    /// Control dependence on the post-dominators' augmented graph.
    pub cdep: ControlDependence,
    /// Natural loops, irreducible regions.
    pub loops: LoopInfo,
    /// The IPDOM reconvergence point of every conditional branch.
    pub reconvergence: Reconvergence,
}

impl FunctionAnalysis {
    /// Builds the CFG of `f` and runs every analysis on it.
    pub fn compute(f: &Function) -> FunctionAnalysis {
        FunctionAnalysis::from_cfg(Cfg::build(f))
    }

    /// Runs every analysis on an existing CFG: dominators, post-dominators, control dependence, loops,
    /// reconvergence.
    pub fn from_cfg(cfg: Cfg) -> FunctionAnalysis {
        let dom = DomTree::compute(cfg.graph(), cfg.entry());
        let postdom = PostDomTree::compute(cfg.graph(), cfg.exit_blocks());
        let cdep = ControlDependence::compute(&postdom);
        let loops = LoopInfo::compute(cfg.graph(), &dom);
        let reconvergence = Reconvergence::compute(&cfg, &postdom);
        FunctionAnalysis { cfg, dom, postdom, cdep, loops, reconvergence }
    }
}
