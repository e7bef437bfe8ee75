//! `reconverge analyze`: seed 004's convergence, variance and affine analyses and the scalarization plan
//! of every function, as text, JSON (a stable contract, `docs/scalarization.md`) or Graphviz dot.

use crate::lines::LineIndex;
use reconverge_analysis::{FunctionAnalysis, Variance, VarianceAnalysis};
use reconverge_ir::{EntityRef, FuncId, Module};
use serde::Serialize;
use std::fmt::Write;

/// Warp sizes of the registers-per-warp summary (seed 004 Figure 5(b)).
pub const WARP_SIZES: [u64; 4] = [4, 8, 16, 32];

/// One block's convergence under the three analyses.
#[derive(Clone, Debug, Serialize)]
pub struct BlockMarks {
    /// The label (`B<n>` for an unlabelled block).
    pub label: String,
    /// Convergent under simple convergence analysis (no control-dependence predecessor).
    pub convergent_ca: bool,
    /// Convergent under combined convergence and variance analysis (Figure 3).
    pub convergent_va: bool,
    /// Convergent with the exit rule as well (§3.4).
    pub convergent_exit: bool,
    /// Successor labels (for dot; not part of the JSON contract).
    #[serde(skip)]
    pub succs: Vec<String>,
}

/// One instruction's marks.
#[derive(Clone, Debug, Serialize)]
pub struct InstMarks {
    /// Its position in the function (layout order, from 0).
    pub pc: u32,
    /// 1-based PTX line (0 if unknown).
    pub ptx_line: u32,
    /// CUDA line from `.loc` (0 if none).
    pub cuda_line: u32,
    /// The PTX text.
    pub text: String,
    /// `invariant`, `affine` or `variant`.
    pub variance: Variance,
    /// A scalar instruction (invariant, in a convergent block).
    pub scalar: bool,
    /// A warp-sequential load or store.
    pub warp_sequential: bool,
}

/// Registers per warp before and after scalarization at one warp size.
#[derive(Clone, Debug, Serialize)]
pub struct RegistersPerWarp {
    /// Threads per warp.
    pub warp_size: u64,
    /// Every register once per thread.
    pub before: u64,
    /// Private registers once per thread, scalar registers once per warp.
    pub after: u64,
}

/// The static summary of a function (seed 004 Figure 5).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Instructions.
    pub instructions: usize,
    /// Scalar instructions.
    pub scalar_instructions: usize,
    /// Warp-sequential loads and stores (each needs its base address computed once per warp: the paper's
    /// 2% extra static instructions).
    pub warp_sequential: usize,
    /// Scalar base-address instructions the compiler adds for them (`VarianceAnalysis::base_address`:
    /// one per warp-sequential access unless an earlier one of the same block reads the same address
    /// value); `instructions` does not include them.
    pub base_instructions: usize,
    /// Registers used.
    pub registers: usize,
    /// Of which per-warp scalars.
    pub scalar_registers: usize,
    /// Registers per warp before and after, at W = 4, 8, 16, 32.
    pub registers_per_warp: Vec<RegistersPerWarp>,
}

/// One function's report.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionMarks {
    /// The function's name.
    pub name: String,
    /// Per block, in layout order.
    pub blocks: Vec<BlockMarks>,
    /// Per instruction, in layout order.
    pub instructions: Vec<InstMarks>,
    /// The static summary.
    pub summary: Summary,
}

/// The report of a module.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyzeReport {
    /// Per function with a body.
    pub functions: Vec<FunctionMarks>,
}

/// Analyses every function with a body of `module` (or only `only`); `src` is the PTX text (for lines).
pub fn analyze_report(module: &Module, src: &str, only: Option<FuncId>) -> AnalyzeReport {
    let lines = LineIndex::new(src);
    let mut functions = Vec::new();
    for (fid, f) in module.functions.iter() {
        if !f.has_body || only.is_some_and(|o| o != fid) {
            continue;
        }
        let fa = FunctionAnalysis::compute(f);
        let va = VarianceAnalysis::compute(f, &fa);
        let printer = reconverge_ir::InstPrinter::new(module, f);
        let mut blocks = Vec::new();
        let mut instructions = Vec::new();
        let label =
            |x: usize| f.blocks[reconverge_ir::BlockId::new(x)].label.clone().unwrap_or_else(|| format!("B{x}"));
        for &b in &f.layout {
            let bi = b.index();
            blocks.push(BlockMarks {
                label: label(bi),
                succs: fa
                    .cfg
                    .succs(bi as u32)
                    .iter()
                    .filter(|&&x| (x as usize) < f.blocks.len())
                    .map(|&x| label(x as usize))
                    .collect(),
                convergent_ca: va.convergent_ca[bi],
                convergent_va: va.convergent_va[bi],
                convergent_exit: va.convergent_exit[bi],
            });
            for &i in &f.blocks[b].insts {
                let span = f.spans.insts.get(i).map(|s| s.whole).unwrap_or_default();
                instructions.push(InstMarks {
                    pc: instructions.len() as u32,
                    ptx_line: if span.is_empty() { 0 } else { lines.line(span.start) },
                    cuda_line: f.insts[i].loc.map(|l| l.line).unwrap_or(0),
                    text: printer.inst(i).replace(" \t", " "),
                    variance: va.variance[i.index()],
                    scalar: va.scalar[i.index()],
                    warp_sequential: va.warp_sequential[i.index()],
                });
            }
        }
        let summary = Summary {
            instructions: instructions.len(),
            scalar_instructions: instructions.iter().filter(|i| i.scalar).count(),
            warp_sequential: instructions.iter().filter(|i| i.warp_sequential).count(),
            base_instructions: va.base_address.iter().filter(|&&b| b).count(),
            registers: va.used_reg.iter().filter(|&&u| u).count(),
            scalar_registers: va.scalar_reg.iter().filter(|&&s| s).count(),
            registers_per_warp: WARP_SIZES
                .iter()
                .map(|&w| {
                    let (before, after) = va.registers_per_warp(w);
                    RegistersPerWarp { warp_size: w, before, after }
                })
                .collect(),
        };
        functions.push(FunctionMarks { name: f.name.clone(), blocks, instructions, summary });
    }
    AnalyzeReport { functions }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn pct(a: usize, b: usize) -> f64 {
    100.0 * a as f64 / b.max(1) as f64
}

impl AnalyzeReport {
    /// The readable text: per block its convergence, per instruction its marks, then the summary.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for f in &self.functions {
            let _ = writeln!(s, "function {}", f.name);
            let _ = writeln!(s, "  blocks (convergent under CA / CA+VA / +exit):");
            for b in &f.blocks {
                let _ = writeln!(
                    s,
                    "    {:<16} {:<3} / {:<3} / {}",
                    b.label,
                    yes(b.convergent_ca),
                    yes(b.convergent_va),
                    yes(b.convergent_exit)
                );
            }
            let _ = writeln!(s, "  instructions (I invariant, A affine, V variant; S scalar; W warp-sequential):");
            for i in &f.instructions {
                let v = match i.variance {
                    Variance::Invariant => 'I',
                    Variance::Affine => 'A',
                    Variance::Variant => 'V',
                };
                let marks =
                    format!("{v}{}{}", if i.scalar { 'S' } else { ' ' }, if i.warp_sequential { 'W' } else { ' ' });
                let line = if i.ptx_line > 0 { i.ptx_line.to_string() } else { "+".into() };
                let _ = writeln!(s, "    {marks} {line:>5}  {}", i.text);
            }
            let m = &f.summary;
            let _ = writeln!(
                s,
                "  summary: {} of {} instructions scalar ({:.1}%), {} warp-sequential (+{} base-address instructions, \
                 +{:.1}% static); {} of {} registers scalar",
                m.scalar_instructions,
                m.instructions,
                pct(m.scalar_instructions, m.instructions),
                m.warp_sequential,
                m.base_instructions,
                pct(m.base_instructions, m.instructions),
                m.scalar_registers,
                m.registers
            );
            let per: Vec<String> = m
                .registers_per_warp
                .iter()
                .map(|r| {
                    format!("W={}: {} -> {} ({:+.1}%)", r.warp_size, r.before, r.after, pct_change(r.before, r.after))
                })
                .collect();
            let _ = writeln!(s, "  registers per warp: {}", per.join(", "));
            s.push('\n');
        }
        s
    }

    /// Graphviz dot: blocks coloured by convergence (+exit), with their instruction marks.
    pub fn dot(&self) -> String {
        let mut s = String::from("digraph analyze {\n  node [shape=box, fontname=\"monospace\"];\n");
        for (k, f) in self.functions.iter().enumerate() {
            let _ = writeln!(s, "  subgraph cluster_{k} {{\n    label=\"{}\";", f.name.replace('"', "\\\""));
            for b in &f.blocks {
                let colour = if b.convergent_exit { "palegreen" } else { "lightsalmon" };
                let _ = writeln!(
                    s,
                    "    \"{k}:{}\" [style=filled, fillcolor={colour}, label=\"{} (CA {}, VA {}, exit {})\"];",
                    b.label,
                    b.label,
                    yes(b.convergent_ca),
                    yes(b.convergent_va),
                    yes(b.convergent_exit)
                );
            }
            for b in &f.blocks {
                for t in &b.succs {
                    let _ = writeln!(s, "    \"{k}:{}\" -> \"{k}:{t}\";", b.label);
                }
            }
            s.push_str("  }\n");
        }
        s.push_str("}\n");
        s
    }
}

fn pct_change(before: u64, after: u64) -> f64 {
    if before == 0 {
        0.0
    } else {
        100.0 * (after as f64 - before as f64) / before as f64
    }
}
