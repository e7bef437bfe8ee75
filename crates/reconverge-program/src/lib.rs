//! The decoded program and the description of a launch: what every later stage (mechanisms, the
//! simulator, the timing model) and the reference interpreter read, and nothing that runs.
//!
//! - [`types`]: program counters, lane masks, and their pseudo values;
//! - [`layout`]: the simulated address space (global, shared, constant, parameter windows);
//! - [`program`] and [`decode()`]: a kernel decoded once from the IR into a flat array of pre-resolved
//!   instructions (pc = index), with every conditional branch's reconvergence point
//!   ([`function_points`]);
//! - [`facts`]: what every operation reads, writes and is, declared once;
//! - [`scalar_plan`]: seed 004's per-pc scalarization plan;
//! - [`launch`]: geometry, arguments, buffers, module-variable settings and limits of a launch, with its
//!   typed [`LaunchError`]s;
//! - [`struct_arg`]: structs passed by value, built from typed fields and buffer addresses.
#![deny(missing_docs)]

pub mod decode;
pub mod error;
pub mod facts;
pub mod launch;
pub mod layout;
pub mod program;
pub mod scalar_plan;
pub mod struct_arg;
pub mod types;

pub use decode::{decode, select_kernel, BranchPoint, DecodeError, DecodeOptions, FunctionPoints, Unsupported};
pub use error::{quote, ArgShapeError, LaunchError, OutOfMemory, ValueError, VariableUse};
pub use launch::{
    parse_scalar, Arg, Buffer, Dtype, GlobalInit, HostOptions, JitPolicy, LaunchArgs, LaunchConfig, RunLimits,
};
pub use program::Program;
pub use scalar_plan::ScalarPlan;
pub use struct_arg::{check_arg, struct_layout, FieldBuffer, StructArg, StructField, StructLayout, StructPointer};
pub use types::*;

use reconverge_analysis::FunctionAnalysis;
use reconverge_ir::{BlockId, EntityRef, Function};

/// The reconvergence point of every conditional branch of `f` and its thread-frontier block order, from
/// the control-flow analyses (without seed 004's divergent blocks: see [`function_points`]).
pub fn reconvergence_points(f: &Function) -> FunctionPoints {
    function_points(f, false)
}

/// [`reconvergence_points`], plus the blocks seed 004's analysis cannot prove convergent when
/// `divergence` is set (only the mechanisms that read them pay for the analysis).
pub fn function_points(f: &Function, divergence: bool) -> FunctionPoints {
    let fa = FunctionAnalysis::compute(f);
    let structured = reconverge_analysis::structured_branches(&fa);
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
            let likely = reconverge_analysis::likely_convergence(&fa, b.block).map(|x| BlockId::new(x as usize));
            let reconvergence = r.map(|x| BlockId::new(x as usize));
            Some(BranchPoint { inst, reconvergence, leaves_loop, likely, structured: structured[b.block as usize] })
        })
        .collect();
    let frontier_order =
        reconverge_analysis::frontier_order(&fa).into_iter().map(|b| BlockId::new(b as usize)).collect();
    let divergent_blocks = if divergence {
        let va = reconverge_analysis::VarianceAnalysis::compute(f, &fa);
        f.layout.iter().copied().filter(|b| !va.convergent_va[b.index()]).collect()
    } else {
        Vec::new()
    };
    FunctionPoints { branches, frontier_order, divergent_blocks }
}
