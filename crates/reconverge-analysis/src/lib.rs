//! Control-flow analyses of reconverge.
//!
//! Every analysis is a pure function of its input with its own result type, computed once with
//! `X::compute(..) -> X` (cranelift style); no analysis mutates the IR. They all work on dense `u32` node
//! indices: for a [`reconverge_ir::Function`] the node of a block is its `BlockId::index()`,
//! so every block, reachable or not, is a node.
//!
//! | module | result | what it answers |
//! | --- | --- | --- |
//! | [`graph`] | [`Graph`], [`DiGraph`], [`Reversed`] | the successor/predecessor view every analysis reads |
//! | [`mod@cfg`] | [`Cfg`] | blocks, edges and their kinds, exit blocks, conditional branches, fall-through |
//! | [`dom`] | [`DomTree`] | dominators (Cooper–Harvey–Kennedy), O(1) `dominates` |
//! | [`postdom`] | [`PostDomTree`] | post-dominators below a virtual exit, infinite loops included |
//! | [`cdep`] | [`ControlDependence`] | control dependence (Ferrante–Ottenstein–Warren) and its iteration |
//! | [`loops`] | [`LoopInfo`] | back edges, natural loops, irreducible regions, retreating edges |
//! | [`reconvergence`] | [`Reconvergence`] | the IPDOM reconvergence point of every conditional branch |
//! | [`likely`] | [`likely_convergence`] | the likely-convergence point of a branch that can leave its loop (TBC's LPC) |
//! | [`structured`] | [`structured_branches`] | whether each branch's region is a properly nested single-entry single-exit region (`hybrid`) |
//! | [`naive`] | free functions | slow textbook algorithms, kept public as test oracles |
//! | [`analysis`] | [`FunctionAnalysis`] | all of the above for one function, computed once |
//!
//! # The CFG model
//!
//! A block's successors follow from its last instruction ([`Cfg::build`] lists the rules): `bra`, `brx.idx`,
//! `ret`, `exit` and `trap` end a block, a guard (`@p`) makes any of them conditional with the next block in
//! layout as the not-taken side, and anything else falls through. Leaving the function (`ret`, `exit`,
//! `trap`, or falling off the last block) is an edge to a *virtual exit* that is not a block of the
//! [`DiGraph`]; the exit blocks are listed beside it.
//!
//! # Post-dominators, the virtual exit and infinite loops
//!
//! SIMT hardware reconverges a divergent warp at the immediate post-dominator (IPDOM) of the branch. The
//! post-dominator tree is rooted at the virtual exit (node index `num_nodes`), which every exit block
//! reaches. Blocks that cannot reach an exit (infinite loops) get *fake exit edges* chosen by LLVM's rule
//! (see [`postdom`]), so that every block has an immediate post-dominator, either a block or
//! [`PostDom::VirtualExit`]. Control dependence is defined on that same augmented graph.
//!
//! # Invariants
//! - Analyses never mutate their input, and know nothing about simulation.
//! - Results are deterministic: they depend only on node numbering and successor order, never on hashing.
//! - No recursion on graph size: depth-first searches use explicit stacks, so large CFGs cannot overflow.
#![deny(missing_docs)]

pub mod analysis;
pub mod bitset;
pub mod cdep;
pub mod cfg;
pub mod defuse;
pub mod dom;
pub mod graph;
pub mod likely;
pub mod loops;
pub mod naive;
pub mod postdom;
pub mod priority;
pub mod reconvergence;
pub mod structured;
pub mod variance;

pub use analysis::FunctionAnalysis;
pub use bitset::BitSet;
pub use cdep::{ControlDep, ControlDependence};
pub use cfg::{Cfg, CfgEdge, EdgeKind, EdgeTarget, TermKind};
pub use defuse::DefUse;
pub use dom::DomTree;
pub use graph::{DiGraph, Graph, Reversed};
pub use likely::likely_convergence;
pub use loops::{IrreducibleRegion, Loop, LoopInfo};
pub use postdom::{PostDom, PostDomTree};
pub use priority::frontier_order;
pub use reconvergence::{BranchInfo, Reconvergence};
pub use structured::structured_branches;
pub use variance::{Variance, VarianceAnalysis};
