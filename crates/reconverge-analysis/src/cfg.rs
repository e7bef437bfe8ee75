//! The control-flow graph of a function.
//!
//! Nodes are blocks, numbered by [`BlockId::index`] (every block of the function, reachable or not).
//! Leaving the function is an edge to the *virtual exit*, which is not a node of [`Cfg::graph`]: it is an
//! [`EdgeTarget::VirtualExit`] in [`Cfg::edges`], and the blocks that have one are [`Cfg::exit_blocks`].
//! [`Cfg::build`] documents how a block's last instruction gives its successors.

use crate::bitset::BitSet;
use crate::graph::{reverse_postorder, DiGraph, Graph};
use reconverge_ir::{BlockId, EntityRef, Function, InstId, KnownModifier, Opcode, Operand, Symbol};

/// Where a CFG edge goes: a block or the virtual exit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum EdgeTarget {
    /// A block (node index).
    Block(u32),
    /// Leaving the function.
    VirtualExit,
}

impl EdgeTarget {
    /// The block, if the edge does not leave the function.
    pub fn block(self) -> Option<u32> {
        match self {
            EdgeTarget::Block(b) => Some(b),
            EdgeTarget::VirtualExit => None,
        }
    }
}

/// Why a CFG edge exists.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum EdgeKind {
    /// The target of an unguarded `bra`, or an edge given to [`Cfg::from_graph`].
    Jump,
    /// The taken side of a guarded `@p bra`.
    Taken,
    /// To the next block in layout: after a block without terminator, or the not-taken side of a guarded
    /// terminator. Falling off the last block goes to the virtual exit with this kind.
    FallThrough,
    /// One entry of the `.branchtargets` list of a `brx.idx`.
    Indexed,
    /// Leaving the function through `ret`, `exit` or `trap` (or an exit given to [`Cfg::from_graph`]).
    Exit,
}

/// One outgoing CFG edge of a block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CfgEdge {
    /// Where it goes.
    pub to: EdgeTarget,
    /// Why it exists. When two rules give the same target (a guarded `bra` to the next block), the edge is
    /// kept once, with the kind of the first rule (the taken side).
    pub kind: EdgeKind,
}

/// The control-transfer instruction that ends a block.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TermKind {
    /// No terminator: the block is empty or ends in a straight-line instruction (calls included).
    None,
    /// `bra`
    Bra,
    /// `brx.idx`
    Brx,
    /// `ret`
    Ret,
    /// `exit`
    Exit,
    /// `trap`
    Trap,
    /// Any other instruction the IR counts as a terminator (reconverge's own reconvergence-stack
    /// instructions, which later passes insert): modelled as straight-line, falling through.
    Other,
}

#[derive(Clone, PartialEq, Eq, Debug)]
struct BlockInfo {
    term: Option<InstId>,
    kind: TermKind,
    guarded: bool,
    uniform: bool,
    conditional: bool,
    edges: Vec<CfgEdge>,
}

/// The control-flow graph of a function: successors and predecessors of every block, edge kinds, exit
/// blocks, conditional branches.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Cfg {
    graph: DiGraph,
    entry: u32,
    exits: Vec<u32>,
    blocks: Vec<BlockInfo>,
    fallthrough: Vec<Option<u32>>,
    rpo: Vec<u32>,
    reachable: BitSet,
    unreachable: Vec<u32>,
}

impl Cfg {
    /// Builds the CFG of `f`. The entry is the first block in layout.
    ///
    /// The successors of a block follow from its last instruction; "the next block" is the next one in
    /// [`Function::layout`] (none for the last block, or for a block not in the layout, whose fall-through
    /// goes to the virtual exit instead):
    ///
    /// | last instruction | successors | conditional |
    /// | --- | --- | --- |
    /// | `bra L` | `L` | no |
    /// | `@p bra L` | `L` (taken), next block (fall-through) | yes |
    /// | `brx.idx` | each distinct `.branchtargets` entry, in list order | if more than one distinct target |
    /// | `@p brx.idx` | the targets, then the next block | yes |
    /// | `ret`, `exit`, `trap` | virtual exit | no |
    /// | `@p ret`, `@p exit`, `@p trap` | virtual exit, next block | yes |
    /// | anything else, or an empty block | next block | no |
    ///
    /// Terminators beyond those five (reconverge's own reconvergence-stack instructions, inserted by later
    /// passes) are [`TermKind::Other`] and fall through like straight-line code.
    ///
    /// Equal successors are kept once: a guarded `bra` to the next block is conditional but *trivial*
    /// ([`Cfg::is_trivial`]), with one successor. Calls are straight-line. A `bra` whose label or a
    /// `brx.idx` whose target list does not resolve (the IR verifier rejects both) contributes no edge.
    pub fn build(f: &Function) -> Cfg {
        let n = f.blocks.len();
        let mut fallthrough = vec![None; n];
        for w in f.layout.windows(2) {
            fallthrough[w[0].index()] = Some(w[1].index() as u32);
        }
        let entry = f.layout.first().map_or(0, |b| b.index() as u32);

        let mut blocks = Vec::with_capacity(n);
        for (bid, block) in f.blocks.iter() {
            let next = match fallthrough[bid.index()] {
                Some(b) => EdgeTarget::Block(b),
                None => EdgeTarget::VirtualExit,
            };
            let mut info = BlockInfo {
                term: None,
                kind: TermKind::None,
                guarded: false,
                uniform: false,
                conditional: false,
                edges: Vec::new(),
            };
            let last = block.insts.last().copied().filter(|&i| f.insts[i].is_terminator());
            let Some(t) = last else {
                push_edge(&mut info.edges, next, EdgeKind::FallThrough);
                blocks.push(info);
                continue;
            };
            let inst = &f.insts[t];
            info.term = Some(t);
            info.guarded = inst.guard.is_some();
            let valid_block = |b: BlockId| b.index() < n;
            match inst.opcode {
                Opcode::Bra => {
                    info.kind = TermKind::Bra;
                    info.uniform = inst.has(KnownModifier::Uni);
                    if let Some(l) = inst.branch_target().filter(|&b| valid_block(b)) {
                        let kind = if info.guarded { EdgeKind::Taken } else { EdgeKind::Jump };
                        push_edge(&mut info.edges, EdgeTarget::Block(l.index() as u32), kind);
                    }
                }
                Opcode::Brx => {
                    info.kind = TermKind::Brx;
                    info.uniform = inst.has(KnownModifier::Uni);
                    if let Some(list) = inst.branch_targets().and_then(|t| f.targets.get(t)) {
                        // Each distinct target once, in list order (a set, so thousands of targets stay
                        // linear).
                        let mut seen = std::collections::HashSet::new();
                        for &b in list.targets.iter().filter(|&&b| valid_block(b) && seen.insert(b)) {
                            info.edges
                                .push(CfgEdge { to: EdgeTarget::Block(b.index() as u32), kind: EdgeKind::Indexed });
                        }
                    }
                    info.conditional = info.edges.len() > 1;
                }
                Opcode::Ret | Opcode::Exit | Opcode::Trap => {
                    info.kind = match inst.opcode {
                        Opcode::Ret => TermKind::Ret,
                        Opcode::Exit => TermKind::Exit,
                        _ => TermKind::Trap,
                    };
                    push_edge(&mut info.edges, EdgeTarget::VirtualExit, EdgeKind::Exit);
                }
                Opcode::Sync | Opcode::Brk if matches!(inst.operands.first(), Some(Operand::Sym(Symbol::Label(_)))) => {
                    // reconverge's explicit-stack instructions, as the SSY pass writes them: `sync L` /
                    // `brk L` name where the threads continue once the stack pops (the reconvergence
                    // point or the loop exit). A guarded `brk` also falls through: it is a conditional
                    // branch whose lanes may split like a guarded `bra`.
                    info.kind = TermKind::Other;
                    info.uniform = !info.guarded;
                    if let Some(Operand::Sym(Symbol::Label(l))) = inst.operands.first() {
                        if valid_block(*l) {
                            let kind = if info.guarded { EdgeKind::Taken } else { EdgeKind::Jump };
                            push_edge(&mut info.edges, EdgeTarget::Block(l.index() as u32), kind);
                        }
                    }
                }
                _ => {
                    // A terminator this table does not model (reconverge's explicit-stack instructions
                    // without a continuation label): straight-line here.
                    info.kind = TermKind::Other;
                    info.guarded = false;
                    push_edge(&mut info.edges, next, EdgeKind::FallThrough);
                }
            }
            if info.guarded {
                info.conditional = true;
                push_edge(&mut info.edges, next, EdgeKind::FallThrough);
            }
            blocks.push(info);
        }
        Cfg::finish(n, entry, blocks, fallthrough)
    }

    /// A CFG straight from a graph (for tests and synthetic inputs): every edge is a [`EdgeKind::Jump`],
    /// each node in `exits` also has an [`EdgeKind::Exit`] edge to the virtual exit, and a block is
    /// conditional if it has more than one distinct successor (the virtual exit counted). No block has a
    /// terminator instruction or a fall-through.
    ///
    /// # Panics
    /// If `entry` (for a non-empty graph) or an exit is not a node.
    pub fn from_graph(graph: DiGraph, entry: u32, exits: &[u32]) -> Cfg {
        let n = graph.num_nodes();
        assert!(n == 0 || (entry as usize) < n, "entry {entry} is not a node");
        let mut blocks: Vec<BlockInfo> = (0..n as u32)
            .map(|v| BlockInfo {
                term: None,
                kind: TermKind::None,
                guarded: false,
                uniform: false,
                conditional: false,
                edges: graph
                    .succs(v)
                    .iter()
                    .map(|&w| CfgEdge { to: EdgeTarget::Block(w), kind: EdgeKind::Jump })
                    .collect(),
            })
            .collect();
        for &e in exits {
            assert!((e as usize) < n, "exit {e} is not a node");
            push_edge(&mut blocks[e as usize].edges, EdgeTarget::VirtualExit, EdgeKind::Exit);
        }
        for b in &mut blocks {
            b.conditional = b.edges.len() > 1;
        }
        Cfg::finish(n, entry, blocks, vec![None; n])
    }

    fn finish(n: usize, entry: u32, blocks: Vec<BlockInfo>, fallthrough: Vec<Option<u32>>) -> Cfg {
        let mut graph = DiGraph::new(n);
        let mut exits = Vec::new();
        for (v, info) in blocks.iter().enumerate() {
            for e in &info.edges {
                match e.to {
                    EdgeTarget::Block(w) => {
                        graph.add_edge(v as u32, w);
                    }
                    EdgeTarget::VirtualExit => exits.push(v as u32),
                }
            }
        }
        let rpo = if n == 0 { Vec::new() } else { reverse_postorder(&graph, entry) };
        let reachable = BitSet::from_items(n, rpo.iter().copied());
        let unreachable = (0..n as u32).filter(|&v| !reachable.contains(v)).collect();
        Cfg { graph, entry, exits, blocks, fallthrough, rpo, reachable, unreachable }
    }

    /// The number of blocks (every block of the function, reachable or not).
    pub fn num_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// The graph of real blocks (edges to the virtual exit are not in it: see [`Cfg::exit_blocks`]).
    pub fn graph(&self) -> &DiGraph {
        &self.graph
    }

    /// The entry block (first in layout; 0 for a function without blocks).
    pub fn entry(&self) -> u32 {
        self.entry
    }

    /// The blocks with an edge to the virtual exit, in increasing order.
    pub fn exit_blocks(&self) -> &[u32] {
        &self.exits
    }

    /// Whether `block` has an edge to the virtual exit.
    pub fn leaves_function(&self, block: u32) -> bool {
        self.exits.binary_search(&block).is_ok()
    }

    /// The block successors of `block` (the virtual exit excluded).
    pub fn succs(&self, block: u32) -> &[u32] {
        self.graph.succs(block)
    }

    /// The block predecessors of `block`.
    pub fn preds(&self, block: u32) -> &[u32] {
        self.graph.preds(block)
    }

    /// The outgoing edges of `block`, virtual exit included, one per distinct target: for a guarded
    /// terminator the taken side first, then the fall-through.
    pub fn edges(&self, block: u32) -> &[CfgEdge] {
        &self.blocks[block as usize].edges
    }

    /// Whether the block ends in a conditional control transfer: a guarded `bra`, `brx.idx`, `ret`, `exit`
    /// or `trap`, or a `brx.idx` with more than one distinct target (for [`Cfg::from_graph`]: more than
    /// one distinct successor).
    pub fn is_conditional(&self, block: u32) -> bool {
        self.blocks[block as usize].conditional
    }

    /// Whether the block is conditional but all its outcomes go to the same place (`@p bra L` where `L` is
    /// the next block): lanes split there rejoin at once.
    pub fn is_trivial(&self, block: u32) -> bool {
        let b = &self.blocks[block as usize];
        b.conditional && b.edges.len() <= 1
    }

    /// Whether the block's terminator carries `.uni` (`bra.uni`, `brx.idx.uni`): the program asserts the
    /// branch is not divergent. An assertion, not evidence.
    pub fn is_uniform(&self, block: u32) -> bool {
        self.blocks[block as usize].uniform
    }

    /// Whether the block's terminator has a guard predicate.
    pub fn is_guarded(&self, block: u32) -> bool {
        self.blocks[block as usize].guarded
    }

    /// The terminator instruction ending `block`, if it ends in one.
    pub fn terminator(&self, block: u32) -> Option<InstId> {
        self.blocks[block as usize].term
    }

    /// What kind of terminator ends `block`.
    pub fn terminator_kind(&self, block: u32) -> TermKind {
        self.blocks[block as usize].kind
    }

    /// The next block in layout (`None` for the last block, blocks outside the layout, and CFGs made by
    /// [`Cfg::from_graph`]).
    pub fn fallthrough(&self, block: u32) -> Option<u32> {
        self.fallthrough[block as usize]
    }

    /// The blocks reachable from the entry, in reverse postorder (entry first).
    pub fn reverse_postorder(&self) -> &[u32] {
        &self.rpo
    }

    /// Whether `block` is reachable from the entry.
    pub fn is_reachable(&self, block: u32) -> bool {
        self.reachable.contains(block)
    }

    /// The blocks not reachable from the entry, in increasing order.
    pub fn unreachable_blocks(&self) -> &[u32] {
        &self.unreachable
    }

    /// The IR id of node `n`.
    pub fn block_id(n: u32) -> BlockId {
        BlockId::new(n as usize)
    }

    /// The node of an IR block.
    pub fn node(b: BlockId) -> u32 {
        b.index() as u32
    }
}

impl Graph for Cfg {
    fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }
    fn succs(&self, n: u32) -> &[u32] {
        self.graph.succs(n)
    }
    fn preds(&self, n: u32) -> &[u32] {
        self.graph.preds(n)
    }
}

fn push_edge(edges: &mut Vec<CfgEdge>, to: EdgeTarget, kind: EdgeKind) {
    if !edges.iter().any(|e| e.to == to) {
        edges.push(CfgEdge { to, kind });
    }
}
