//! The report of `reconverge cfg`: blocks, instructions, successors, dominators, post-dominators,
//! control dependence, loops, and the reconvergence point of every conditional branch.

use crate::lines::LineIndex;
use reconverge_analysis::{EdgeKind, FunctionAnalysis, PostDom};
use reconverge_ir::{BlockId, EntityRef, FuncId, FuncKind, Function, Module, SrcLoc};
use reconverge_transform::ssy_pass::SsyFunctionReport;
use serde::Serialize;
use std::fmt::Write;

/// A CUDA source location.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Loc {
    /// `.file` index.
    pub file: u32,
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
}

impl From<SrcLoc> for Loc {
    fn from(l: SrcLoc) -> Loc {
        Loc { file: l.file, line: l.line, col: l.col }
    }
}

/// One instruction.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstReport {
    /// PTX line (0 for instructions a pass inserted).
    pub ptx_line: u32,
    /// The instruction as PTX text.
    pub text: String,
    /// CUDA location.
    pub loc: Option<Loc>,
    /// Seed 004's marks: `invariant`, `affine` or `variant` (CA+VA with the exit rule).
    pub variance: reconverge_analysis::Variance,
    /// A scalar instruction.
    pub scalar: bool,
    /// A warp-sequential load or store.
    pub warp_sequential: bool,
}

/// One outgoing edge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdgeReport {
    /// Target block index, or `None` for the virtual exit.
    pub to: Option<u32>,
    /// `jump`, `taken`, `fallthrough`, `indexed` or `exit`.
    pub kind: &'static str,
}

/// One basic block.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockReport {
    /// Block index.
    pub index: u32,
    /// Label, if any.
    pub label: Option<String>,
    /// Display name (`B3 $L__BB0_2`).
    pub name: String,
    /// PTX line of the label or first instruction.
    pub ptx_line: u32,
    /// CUDA location of the first instruction.
    pub loc: Option<Loc>,
    /// Whether the entry reaches the block.
    pub reachable: bool,
    /// Successors.
    pub succs: Vec<EdgeReport>,
    /// Predecessors.
    pub preds: Vec<u32>,
    /// Immediate dominator.
    pub idom: Option<u32>,
    /// Immediate post-dominator (`None` = the virtual exit).
    pub ipdom: Option<u32>,
    /// Blocks whose branch this block is control dependent on.
    pub control_dependent_on: Vec<u32>,
    /// Convergent under seed 004's simple convergence analysis, CA+VA, and CA+VA with the exit rule.
    pub convergent: [bool; 3],
    /// Instructions.
    pub insts: Vec<InstReport>,
}

/// Where a branch reconverges.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ReconvergenceReport {
    /// At a block.
    Block {
        /// Block index.
        block: u32,
        /// Its label.
        label: Option<String>,
        /// Its PTX line.
        ptx_line: u32,
        /// Its CUDA location.
        loc: Option<Loc>,
    },
    /// Only at function exit (the string `"exit"`).
    Exit(&'static str),
}

/// One conditional branch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BranchReport {
    /// The block the branch ends.
    pub block: u32,
    /// PTX line of the branch.
    pub ptx_line: u32,
    /// CUDA location of the branch.
    pub loc: Option<Loc>,
    /// Target block indices (`None` = exit).
    pub targets: Vec<Option<u32>>,
    /// `.uni`: asserted non-divergent.
    pub uniform: bool,
    /// Whether the condition is the same in every thread of a warp (seed 004's variance analysis).
    pub thread_invariant: bool,
    /// Whether lanes can actually go different ways (not `.uni`, more than one distinct target, and a
    /// thread-variant condition).
    pub may_diverge: bool,
    /// The reconvergence point (immediate post-dominator).
    pub reconvergence: ReconvergenceReport,
}

/// A natural loop.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopReport {
    /// Header block.
    pub header: u32,
    /// Blocks.
    pub blocks: Vec<u32>,
    /// Latches.
    pub latches: Vec<u32>,
    /// Exit edges.
    pub exits: Vec<(u32, u32)>,
    /// Nesting depth.
    pub depth: u32,
}

/// An irreducible region.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IrreducibleReport {
    /// Blocks.
    pub blocks: Vec<u32>,
    /// Entry blocks.
    pub entries: Vec<u32>,
}

/// One function.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionReport {
    /// Name.
    pub name: String,
    /// `entry` or `func`.
    pub kind: &'static str,
    /// Blocks in layout order.
    pub blocks: Vec<BlockReport>,
    /// Conditional branches.
    pub branches: Vec<BranchReport>,
    /// Natural loops.
    pub loops: Vec<LoopReport>,
    /// Irreducible regions.
    pub irreducible: Vec<IrreducibleReport>,
    /// What the SSY pass did, when the report shows the `ssy` program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssy: Option<SsyFunctionReport>,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CfgReport {
    /// The PTX file.
    pub file: String,
    /// Functions with a body (or the chosen one).
    pub functions: Vec<FunctionReport>,
    /// `.file` index → CUDA file name.
    #[serde(skip)]
    pub src_files: Vec<(u32, String)>,
}

fn edge_kind(k: EdgeKind) -> &'static str {
    match k {
        EdgeKind::Jump => "jump",
        EdgeKind::Taken => "taken",
        EdgeKind::FallThrough => "fallthrough",
        EdgeKind::Indexed => "indexed",
        EdgeKind::Exit => "exit",
    }
}

fn block_display(f: &Function, b: u32) -> String {
    match &f.blocks[BlockId::new(b as usize)].label {
        Some(l) => format!("B{b} {l}"),
        None => format!("B{b}"),
    }
}

/// Builds the report for every function with a body of `module` (or only `only`). `src` is the PTX text
/// the module was parsed from (for line numbers); `ssy` attaches the SSY pass's report per function.
pub fn cfg_report(
    module: &Module,
    file: &str,
    src: &str,
    only: Option<FuncId>,
    ssy: Option<&[SsyFunctionReport]>,
) -> CfgReport {
    let lines = LineIndex::new(src);
    let line_of = |span: reconverge_ir::Span| if span.is_empty() { 0 } else { lines.line(span.start) };
    let mut functions = Vec::new();
    for (fid, f) in module.functions.iter() {
        if !f.has_body || only.is_some_and(|o| o != fid) {
            continue;
        }
        let fa = FunctionAnalysis::compute(f);
        let va = reconverge_analysis::VarianceAnalysis::compute(f, &fa);
        let printer = reconverge_ir::InstPrinter::new(module, f);
        let mut blocks = Vec::new();
        for &b in &f.layout {
            let bi = b.index() as u32;
            let insts: Vec<InstReport> = f.blocks[b]
                .insts
                .iter()
                .map(|&i| InstReport {
                    ptx_line: f.spans.insts.get(i).map(|s| line_of(s.whole)).unwrap_or(0),
                    text: printer.inst(i).replace(" \t", " "),
                    loc: f.insts[i].loc.map(Loc::from),
                    variance: va.variance[i.index()],
                    scalar: va.scalar[i.index()],
                    warp_sequential: va.warp_sequential[i.index()],
                })
                .collect();
            let label_line = f.spans.blocks.get(b).map(|s| line_of(*s)).unwrap_or(0);
            blocks.push(BlockReport {
                index: bi,
                label: f.blocks[b].label.clone(),
                name: block_display(f, bi),
                ptx_line: if label_line > 0 { label_line } else { insts.first().map(|i| i.ptx_line).unwrap_or(0) },
                loc: insts.first().and_then(|i| i.loc.clone()),
                reachable: fa.cfg.is_reachable(bi),
                succs: fa
                    .cfg
                    .edges(bi)
                    .iter()
                    .map(|e| EdgeReport { to: e.to.block(), kind: edge_kind(e.kind) })
                    .collect(),
                preds: fa.cfg.preds(bi).to_vec(),
                idom: fa.dom.idom(bi),
                ipdom: fa.postdom.ipdom(bi).block(),
                control_dependent_on: fa.cdep.parents(bi).to_vec(),
                convergent: [
                    va.convergent_ca[bi as usize],
                    va.convergent_va[bi as usize],
                    va.convergent_exit[bi as usize],
                ],
                insts,
            });
        }
        let mut by_index: Vec<Option<usize>> = vec![None; f.blocks.len()];
        for (k, x) in blocks.iter().enumerate() {
            if let Some(slot) = by_index.get_mut(x.index as usize) {
                *slot = Some(k);
            }
        }
        let block_of = |b: u32| by_index.get(b as usize).copied().flatten().map(|k| &blocks[k]);
        let block_line = |b: u32| block_of(b).map(|x| x.ptx_line).unwrap_or(0);
        let block_loc = |b: u32| block_of(b).and_then(|x| x.loc.clone());
        let branches = fa
            .reconvergence
            .branches()
            .iter()
            .map(|br| {
                let (ptx_line, loc) = match br.inst {
                    Some(i) => {
                        (f.spans.insts.get(i).map(|s| line_of(s.whole)).unwrap_or(0), f.insts[i].loc.map(Loc::from))
                    }
                    None => (0, None),
                };
                let invariant =
                    br.inst.is_some_and(|i| va.variance[i.index()] == reconverge_analysis::Variance::Invariant);
                BranchReport {
                    block: br.block,
                    ptx_line,
                    loc,
                    targets: br.targets.iter().map(|t| t.block()).collect(),
                    uniform: br.uniform,
                    thread_invariant: invariant,
                    may_diverge: !br.uniform && !br.trivial && !invariant,
                    reconvergence: match br.reconvergence {
                        PostDom::Block(r) => ReconvergenceReport::Block {
                            block: r,
                            label: f.blocks[BlockId::new(r as usize)].label.clone(),
                            ptx_line: block_line(r),
                            loc: block_loc(r),
                        },
                        PostDom::VirtualExit => ReconvergenceReport::Exit("exit"),
                    },
                }
            })
            .collect();
        let loops = fa
            .loops
            .loops()
            .iter()
            .map(|l| LoopReport {
                header: l.header,
                blocks: l.blocks.clone(),
                latches: l.latches.clone(),
                exits: l.exits.clone(),
                depth: l.depth,
            })
            .collect();
        let irreducible = fa
            .loops
            .irreducible_regions()
            .iter()
            .map(|r| IrreducibleReport { blocks: r.blocks.clone(), entries: r.entries.clone() })
            .collect();
        functions.push(FunctionReport {
            name: f.name.clone(),
            kind: if f.kind == FuncKind::Entry { "entry" } else { "func" },
            blocks,
            branches,
            loops,
            irreducible,
            ssy: ssy.and_then(|s| s.iter().find(|r| r.function == f.name).cloned()),
        });
    }
    CfgReport {
        file: file.to_string(),
        functions,
        src_files: module.files.iter().map(|f| (f.index, f.path.clone())).collect(),
    }
}

/// Lookups by block index for one function's report (so rendering is linear in the function's size).
struct BlockIndex<'a> {
    names: Vec<Option<&'a str>>,
    branch: Vec<Option<&'a BranchReport>>,
    reconverges_here: Vec<bool>,
}

impl<'a> BlockIndex<'a> {
    fn new(f: &'a FunctionReport) -> BlockIndex<'a> {
        let n = f.blocks.iter().map(|b| b.index as usize + 1).max().unwrap_or(0);
        let mut names = vec![None; n];
        for b in &f.blocks {
            names[b.index as usize] = Some(b.name.as_str());
        }
        let mut branch = vec![None; n];
        let mut reconverges_here = vec![false; n];
        for br in &f.branches {
            if let Some(slot) = branch.get_mut(br.block as usize) {
                slot.get_or_insert(br);
            }
            if let (true, ReconvergenceReport::Block { block, .. }) = (br.may_diverge, &br.reconvergence) {
                if let Some(slot) = reconverges_here.get_mut(*block as usize) {
                    *slot = true;
                }
            }
        }
        BlockIndex { names, branch, reconverges_here }
    }

    fn name(&self, b: u32) -> String {
        match self.names.get(b as usize).copied().flatten() {
            Some(n) => n.to_string(),
            None => format!("B{b}"),
        }
    }

    fn branch(&self, b: u32) -> Option<&'a BranchReport> {
        self.branch.get(b as usize).copied().flatten()
    }

    fn is_reconvergence_point(&self, b: u32) -> bool {
        self.reconverges_here.get(b as usize).copied().unwrap_or(false)
    }
}

/// What the marks before each instruction of the text rendering mean (seed 004's analyses).
const LEGEND: &str = "marks: I thread-invariant, A affine in the thread index, V variant (CA+VA+exit variance);
       S scalar (invariant in a convergent block: runs once per warp);
       W warp-sequential access (consecutive threads, consecutive elements)";

impl CfgReport {
    fn loc_str(&self, loc: &Option<Loc>) -> String {
        match loc {
            Some(l) if l.line > 0 => {
                let f = self.src_files.iter().find(|(i, _)| *i == l.file).map(|(_, p)| p.as_str()).unwrap_or("?");
                let base = f.rsplit('/').next().unwrap_or(f);
                format!("{base}:{}", l.line)
            }
            _ => String::new(),
        }
    }

    /// The text rendering (golden-tested).
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "file {}", self.file);
        let _ = writeln!(s, "{LEGEND}");
        for f in &self.functions {
            let index = BlockIndex::new(f);
            let name = |b: u32| index.name(b);
            let names = |v: &[u32]| {
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.iter().map(|&b| name(b)).collect::<Vec<_>>().join(", ")
                }
            };
            let nbr = f.branches.iter().filter(|b| b.may_diverge).count();
            let _ = writeln!(
                s,
                "\n{} {} ({} blocks, {} conditional branches, {} may diverge)",
                if f.kind == "entry" { "kernel" } else { "function" },
                f.name,
                f.blocks.len(),
                f.branches.len(),
                nbr
            );
            if f.loops.is_empty() {
                let _ = writeln!(s, "  loops: none");
            }
            for l in &f.loops {
                let exits: Vec<String> = l.exits.iter().map(|(a, b)| format!("{}->{}", name(*a), name(*b))).collect();
                let _ = writeln!(
                    s,
                    "  loop: header {}, depth {}, blocks {}, latches {}, exits {}",
                    name(l.header),
                    l.depth,
                    names(&l.blocks),
                    names(&l.latches),
                    if exits.is_empty() { "-".to_string() } else { exits.join(", ") }
                );
            }
            for r in &f.irreducible {
                let _ = writeln!(s, "  irreducible region: blocks {}, entries {}", names(&r.blocks), names(&r.entries));
            }
            if let Some(ssy) = &f.ssy {
                let _ = writeln!(
                    s,
                    "  ssy pass: {} ssy, {} sync, {} pbk, {} brk inserted",
                    ssy.ssy, ssy.sync, ssy.pbk, ssy.brk
                );
                for fb in &ssy.fallback {
                    let _ = writeln!(s, "    no ssy: {fb}");
                }
            }
            for b in &f.blocks {
                let _ = writeln!(
                    s,
                    "\n  {}{}{}",
                    b.name,
                    if b.index == f.blocks.first().map(|x| x.index).unwrap_or(0) { " (entry)" } else { "" },
                    if b.reachable { "" } else { " (unreachable)" }
                );
                let succs: Vec<String> = b
                    .succs
                    .iter()
                    .map(|e| format!("{} ({})", e.to.map(name).unwrap_or_else(|| "exit".into()), e.kind))
                    .collect();
                let _ = writeln!(s, "    succs: {}", if succs.is_empty() { "-".into() } else { succs.join(", ") });
                let _ = writeln!(s, "    preds: {}", names(&b.preds));
                let _ = writeln!(
                    s,
                    "    idom: {}  ipdom: {}  control dependent on: {}",
                    b.idom.map(name).unwrap_or_else(|| "-".into()),
                    b.ipdom.map(name).unwrap_or_else(|| "exit".into()),
                    names(&b.control_dependent_on)
                );
                let yn = |x: bool| if x { "yes" } else { "no" };
                let _ = writeln!(
                    s,
                    "    convergent: CA {}, CA+VA {}, +exit {}",
                    yn(b.convergent[0]),
                    yn(b.convergent[1]),
                    yn(b.convergent[2])
                );
                for i in &b.insts {
                    let line = if i.ptx_line > 0 { format!("{:5}", i.ptx_line) } else { "    +".to_string() };
                    let loc = self.loc_str(&i.loc);
                    let v = match i.variance {
                        reconverge_analysis::Variance::Invariant => 'I',
                        reconverge_analysis::Variance::Affine => 'A',
                        reconverge_analysis::Variance::Variant => 'V',
                    };
                    let marks =
                        format!("{v}{}{}", if i.scalar { 'S' } else { ' ' }, if i.warp_sequential { 'W' } else { ' ' });
                    if loc.is_empty() {
                        let _ = writeln!(s, "    {line} {marks} {}", i.text);
                    } else {
                        let _ = writeln!(s, "    {line} {marks} {:<48} {loc}", i.text);
                    }
                }
                if let Some(br) = index.branch(b.index) {
                    let what = if br.uniform {
                        "uniform (.uni)"
                    } else if br.thread_invariant && !br.may_diverge && br.targets.len() > 1 {
                        "uniform (thread-invariant condition)"
                    } else if !br.may_diverge {
                        "trivial"
                    } else {
                        "may diverge"
                    };
                    let at = match &br.reconvergence {
                        ReconvergenceReport::Block { block, ptx_line, loc, .. } => {
                            let l = self.loc_str(loc);
                            format!(
                                "reconverges at {} (line {}{})",
                                name(*block),
                                ptx_line,
                                if l.is_empty() { String::new() } else { format!(", {l}") }
                            )
                        }
                        ReconvergenceReport::Exit(_) => "reconverges only at function exit".to_string(),
                    };
                    let _ = writeln!(s, "    branch (line {}): {what}; {at}", br.ptx_line);
                }
            }
        }
        s
    }

    /// Graphviz rendering: branches that may diverge are red, dashed edges go to their reconvergence point.
    pub fn render_dot(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "digraph cfg {{");
        let _ = writeln!(s, "  node [shape=box, fontname=\"monospace\", fontsize=10];");
        for (fi, f) in self.functions.iter().enumerate() {
            let _ = writeln!(s, "  subgraph cluster_{fi} {{");
            let _ = writeln!(s, "    label=\"{} {}\";", f.kind, esc(&f.name));
            let id = |b: u32| format!("f{fi}b{b}");
            let index = BlockIndex::new(f);
            for b in &f.blocks {
                let mut label = esc(&b.name);
                label.push_str("\\l");
                let n = b.insts.len();
                for (k, i) in b.insts.iter().enumerate() {
                    if n > 8 && k == 3 {
                        label.push_str(&format!("... ({} more)\\l", n - 6));
                    }
                    if n > 8 && (3..n - 3).contains(&k) {
                        continue;
                    }
                    label.push_str(&esc(&i.text));
                    label.push_str("\\l");
                }
                let style = match index.branch(b.index) {
                    Some(x) if x.may_diverge => ", color=red, penwidth=2",
                    _ => "",
                };
                let fill =
                    if index.is_reconvergence_point(b.index) { ", style=filled, fillcolor=\"#d8f0d8\"" } else { "" };
                let _ = writeln!(s, "    {} [label=\"{label}\"{style}{fill}];", id(b.index));
            }
            let _ = writeln!(s, "    f{fi}exit [label=\"exit\", shape=oval];");
            for b in &f.blocks {
                for e in &b.succs {
                    let to = e.to.map(id).unwrap_or_else(|| format!("f{fi}exit"));
                    let lbl = match e.kind {
                        "taken" => " [label=\"T\"]",
                        "fallthrough" if b.succs.len() > 1 => " [label=\"F\"]",
                        _ => "",
                    };
                    let _ = writeln!(s, "    {} -> {to}{lbl};", id(b.index));
                }
            }
            for br in f.branches.iter().filter(|x| x.may_diverge) {
                let to = match &br.reconvergence {
                    ReconvergenceReport::Block { block, .. } => id(*block),
                    ReconvergenceReport::Exit(_) => format!("f{fi}exit"),
                };
                let _ = writeln!(
                    s,
                    "    {} -> {to} [style=dashed, color=darkgreen, constraint=false, label=\"reconverge\"];",
                    id(br.block)
                );
            }
            let _ = writeln!(s, "  }}");
        }
        let _ = writeln!(s, "}}");
        s
    }

    /// JSON rendering (for scripts such as `scripts/bssy_compare.py`).
    pub fn render_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
