//! Seed 004's dynamic scalarization metrics (Figures 4 and 6), counted while a kernel runs under any
//! mechanism.
//!
//! [`ScalarPlan`] says, per pc, what the compiler analyses prove; [`ScalarCounter`] (one per SM core)
//! counts every issued group of the kernel's own instructions twice: as the machine ran it without
//! scalarization (`baseline`) and as a scalarizing machine would run it (`scalarized`: scalar
//! instructions execute once per warp, scalar registers are read once per warp, warp-sequential accesses
//! present one address per warp). It also measures how much of the execution is convergent under each
//! analysis, under the mechanism's own dynamic convergence, and under the oracle ([`oracle`]).
//!
//! Definitions (also in `docs/scalarization.md`):
//! - a *thread instruction* is one active lane of one issued kernel instruction;
//! - `convergent.{ca, ca_va, exit}`: thread instructions in blocks the analysis proves convergent;
//! - `convergent.dcp`: those, plus thread instructions issued by a group holding every live (not exited)
//!   thread of its warp: under `stackless-dcp` this is seed 004's dynamic convergence preservation;
//! - `convergent.oracle`: the `exit` ones plus, per dynamic divergent region (what a warp runs between
//!   two visits to blocks proven convergent), the best schedule's convergent thread instructions,
//!   computed from the threads' own block sequences, so the same under every mechanism for a race-free
//!   kernel (a greedy lower bound where a region is too large to solve exactly: see `oracle_exact`);
//! - `issued`: each issued group once, as `scalar` (a scalar instruction), `converged` (in a block proven
//!   convergent), `dcp` (in a divergent block, 2 or more threads together) or `diverged` (one thread);
//!   `issued.base` counts, apart, the base-address instructions of warp-sequential accesses (once per
//!   static warp per execution of the access).

mod counter;
pub mod oracle;

pub use counter::{Part, ScalarCounter};
pub use reconverge_program::scalar_plan::{PcPlan, ScalarPlan};

use serde::Serialize;

/// Counts of work: what the register file and memory system see.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Activity {
    /// Thread operations executed (a scalar instruction is one operation per warp).
    pub operations: u64,
    /// Register reads (distinct registers per instruction; a scalar register is read once per warp).
    pub register_reads: u64,
    /// Register writes.
    pub register_writes: u64,
    /// Addresses presented to the memory system: one per thread per access, one per warp for scalar and
    /// warp-sequential accesses.
    pub address_counts: u64,
    /// Data elements accessed: one per thread per element (`.v4` moves 4), once per warp for scalar
    /// accesses.
    pub data_accesses: u64,
}

impl Activity {
    fn add(&mut self, o: &Activity) {
        self.operations += o.operations;
        self.register_reads += o.register_reads;
        self.register_writes += o.register_writes;
        self.address_counts += o.address_counts;
        self.data_accesses += o.data_accesses;
    }
}

/// Issued groups of the kernel's own instructions, by what made them one issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IssuedSplit {
    /// Scalar instructions.
    pub scalar: u64,
    /// Warp instructions in blocks the analysis (CA+VA+exit) proves convergent.
    pub converged: u64,
    /// Warp instructions of 2 or more threads in divergent blocks (dynamically converged).
    pub dcp: u64,
    /// Single-thread instructions in divergent blocks.
    pub diverged: u64,
    /// Base-address instructions a scalarizing compiler adds for warp-sequential accesses
    /// ([`PcPlan::base_instructions`]): scalar instructions issued once per static warp each time such an
    /// access issues. Not part of the four kinds above (they split the kernel's own issued groups) nor
    /// of the `scalarized` activity (which counts the kernel's own instructions only).
    pub base: u64,
}

/// Thread instructions proven or found convergent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ConvergentCounts {
    /// In blocks convergent under simple convergence analysis.
    pub ca: u64,
    /// Under convergence + variance analysis.
    pub ca_va: u64,
    /// Under CA+VA with the exit rule.
    pub exit: u64,
    /// `exit`, plus those issued with the whole live warp together.
    pub dcp: u64,
    /// `exit`, plus the best schedule of every divergent region.
    pub oracle: u64,
}

/// Seed 004's dynamic metrics of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ScalarizeStats {
    /// The kernel's own thread instructions.
    pub thread_instructions: u64,
    /// Convergent thread instructions by analysis.
    pub convergent: ConvergentCounts,
    /// Thread instructions outside blocks proven convergent (in dynamic divergent regions).
    pub divergent: u64,
    /// Of them, those in regions the oracle solved exactly.
    pub oracle_exact: u64,
    /// Divergent regions the oracle did not solve exactly because the launch's oracle work budget
    /// ([`oracle::ORACLE_BUDGET`] per SM) was spent: they count the greedy lower bound.
    pub oracle_over_budget: u64,
    /// Issued groups by kind.
    pub issued: IssuedSplit,
    /// Without scalarization.
    pub baseline: Activity,
    /// With scalarization.
    pub scalarized: Activity,
}

impl ScalarizeStats {
    /// Adds another SM's counts.
    pub fn merge(&mut self, o: &ScalarizeStats) {
        self.thread_instructions += o.thread_instructions;
        let (a, b) = (&mut self.convergent, &o.convergent);
        a.ca += b.ca;
        a.ca_va += b.ca_va;
        a.exit += b.exit;
        a.dcp += b.dcp;
        a.oracle += b.oracle;
        self.divergent += o.divergent;
        self.oracle_exact += o.oracle_exact;
        self.oracle_over_budget += o.oracle_over_budget;
        let (a, b) = (&mut self.issued, &o.issued);
        a.scalar += b.scalar;
        a.converged += b.converged;
        a.dcp += b.dcp;
        a.diverged += b.diverged;
        a.base += b.base;
        self.baseline.add(&o.baseline);
        self.scalarized.add(&o.scalarized);
    }
}
