//! The functional SIMT simulator of reconverge.
//!
//! A [`Program`] is decoded once from the IR ([`decode()`]): a flat array of pre-resolved instructions,
//! pc = index. [`run`] executes a launch on one [`core::SmCore`]: CTAs are made resident, the divergence
//! [`Mechanism`] says which issue group (a pc, active lanes, and the CTA threads they hold) each issue
//! context holds, the whole-warp executor runs the instruction for those lanes and reports a [`Flow`],
//! and the mechanism updates its structure. The timing model drives the same core. Three layers stay
//! separate: the executor never chooses lanes, mechanisms never compute values, and the timing model only
//! decides *when*.
//!
//! Errors in the simulated program (out-of-bounds access, deadlock, limits) are [`SimError`] values
//! carried in the [`RunResult`], with the thread, pc and source line.
#![deny(missing_docs)]

pub mod access;
mod alu;
pub mod core;
pub mod decode;
pub mod device;
pub mod error;
pub mod launch;
pub mod layout;
mod machine;
pub mod mechanism;
pub mod memory;
pub mod program;
pub mod region_pass;
pub mod scalarize;
pub mod ssy_pass;
pub mod stats;
pub mod types;

pub use core::{IssueEvent, NoObserver, Observer};
pub use decode::{decode, select_kernel, BranchPoint, DecodeError, DecodeOptions, FunctionPoints};
pub use device::{DeviceState, GlobalInit, Outputs};
pub use error::{Location, SimError};
pub use launch::{parse_scalar, Arg, Buffer, Dtype, LaunchArgs, LaunchConfig, LutGeometry};
pub use machine::{run, RunResult};
pub use mechanism::{known_names, EntryView, Flow, Heuristic, Mechanism, Priority};
pub use program::Program;
pub use region_pass::{insert_regions, RegionPass, RegionReport};
pub use ssy_pass::{insert_ssy, SsyReport};
pub use stats::Stats;
pub use types::*;

use reconverge_analysis::FunctionAnalysis;
use reconverge_ir::{EntityRef, Function, Module};

/// The reconvergence point of every conditional branch of `f` and its thread-frontier block order, from
/// the control-flow analyses (without seed 004's divergent blocks: see [`function_points`]).
pub fn reconvergence_points(f: &Function) -> FunctionPoints {
    function_points(f, false)
}

/// [`reconvergence_points`], plus the blocks seed 004's analysis cannot prove convergent when
/// `divergence` is set (only the mechanisms that read them pay for the analysis).
pub fn function_points(f: &Function, divergence: bool) -> FunctionPoints {
    let fa = FunctionAnalysis::compute(f);
    let branches = fa
        .reconvergence
        .branches()
        .iter()
        .filter_map(|b| {
            let inst = b.inst?;
            let r = b.reconvergence.block();
            let leaves_loop = fa.loops.loops().iter().any(|l| l.contains(b.block) && r.is_some_and(|r| !l.contains(r)))
                || fa.loops.irreducible_regions().iter().any(|g| {
                    g.blocks.binary_search(&b.block).is_ok() && r.is_some_and(|r| g.blocks.binary_search(&r).is_err())
                });
            let likely =
                reconverge_analysis::likely_convergence(&fa, b.block).map(|x| reconverge_ir::BlockId::new(x as usize));
            Some(BranchPoint {
                inst,
                reconvergence: r.map(|x| reconverge_ir::BlockId::new(x as usize)),
                leaves_loop,
                likely,
            })
        })
        .collect();
    let frontier_order =
        reconverge_analysis::frontier_order(&fa).into_iter().map(|b| reconverge_ir::BlockId::new(b as usize)).collect();
    let divergent_blocks = if divergence {
        let va = reconverge_analysis::VarianceAnalysis::compute(f, &fa);
        f.layout.iter().copied().filter(|b| !va.convergent_va[b.index()]).collect()
    } else {
        Vec::new()
    };
    FunctionPoints { branches, frontier_order, divergent_blocks }
}

/// Prepares `module` for `mechanism` (the SSY pass for `ssy`) and decodes `kernel` into a program.
pub fn load(
    module: &Module,
    kernel: Option<&str>,
    mechanism: Mechanism,
    opts: &DecodeOptions,
) -> Result<Program, DecodeError> {
    let transformed;
    let mut opts = opts.clone();
    let m = if let Some(pass) = mechanism.pass() {
        transformed = pass.apply(module);
        // The pass appends its instructions, so everything past the original count is inserted.
        opts.first_inserted = module.functions.iter().map(|(id, f)| (id, f.insts.len())).collect();
        &transformed
    } else {
        module
    };
    let k = select_kernel(m, kernel)?;
    let divergence = mechanism.needs_divergence();
    let mut prog = decode(m, k, &|f: &Function| function_points(f, divergence), &opts)?;
    if opts.scalarize {
        prog.scalar = Some(scalarize::ScalarPlan::build(module, &prog));
    }
    Ok(prog)
}
