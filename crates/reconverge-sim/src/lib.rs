//! The functional SIMT simulator of reconverge.
//!
//! A [`Program`] is decoded once from the IR ([`decode()`]): a flat array of pre-resolved instructions,
//! pc = index. [`run`] executes a launch on one [`core::SmCore`]: CTAs are made resident, the divergence
//! [`Mechanism`] says which issue group (a pc, active lanes, and the CTA threads they hold) each issue
//! context holds, the whole-warp executor runs the instruction for those lanes and reports a [`Flow`](reconverge_mechanism::Flow),
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
pub mod device;
pub mod error;
mod machine;
pub mod memory;
pub mod printf;
pub mod scalarize;
pub mod stats;

// The stages below the simulator, by the names its modules use (`crate::program::...`).
use reconverge_mechanism as mechanism;
use reconverge_program::{decode, launch, layout, program, types};

pub use core::{IssueEvent, NoObserver, Observer};
pub use device::{DeviceState, Outputs};
pub use error::{DeadlockReport, LiveThreads, Location, RunLimit, SimError, WaitingGroup};
pub use machine::{run, run_ctas_functional, run_resident, RunResult};
pub use stats::Stats;

use reconverge_ir::{Function, Module};
use reconverge_mechanism::Mechanism;
use reconverge_program::{function_points, select_kernel, DecodeError, DecodeOptions, Program};

/// A decoded kernel together with the mechanism it was prepared for: the choice of mechanism travels
/// once, from [`load`] to [`run`] (and the timing model's runs), so a program is never run under a
/// mechanism whose compiler pass or reconvergence points it was not decoded with.
#[derive(Clone, Debug)]
pub struct Loaded {
    program: Program,
    mechanism: Mechanism,
}

impl Loaded {
    /// The decoded kernel (with the mechanism's pass applied and its reconvergence points).
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The mechanism it runs under.
    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// The decoded kernel, taken out.
    pub fn into_program(self) -> Program {
        self.program
    }

    /// The same kernel with the registers per thread NVIDIA's assembler allocated for it, which the
    /// timing model charges rather than its estimate.
    /// `allocation` is `(registers per thread, architecture, ptxas release)`, as
    /// `reconverge_nvrtc::ptxas::kernel_registers` gives it; `None` keeps the kernel as it is.
    pub fn with_allocated_registers(mut self, allocation: Option<(u32, u32, String)>) -> Loaded {
        if let Some((per_thread, arch, release)) = allocation {
            self.program.allocated_registers =
                Some(reconverge_program::program::RegisterAllocation { per_thread, arch, release });
        }
        self
    }

    /// The same kernel under the same mechanism with DWF's look-up table `lut` (a parameter of the
    /// mechanism that changes neither the compiler pass nor the reconvergence points; other mechanisms
    /// ignore it, as [`Mechanism::with_lut`] does).
    pub fn with_lut(self, lut: reconverge_mechanism::LutGeometry) -> Loaded {
        Loaded { mechanism: self.mechanism.with_lut(lut), ..self }
    }
}

/// Prepares `module` for `mechanism` (the SSY pass for `ssy`) and decodes `kernel` into a program.
pub fn load(
    module: &Module,
    kernel: Option<&str>,
    mechanism: Mechanism,
    opts: &DecodeOptions,
) -> Result<Loaded, DecodeError> {
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
    Ok(Loaded { program: prog, mechanism })
}
