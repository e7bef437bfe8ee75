//! The `scalarization` object of seed 004's dynamic scalarization metrics (`run --scalarize --json`, the
//! `scalarization_...` CSV columns): stable keys, documented in `docs/scalarization.md`.

use reconverge_sim::scalarize::{Activity, IssuedSplit, ScalarizeStats};
use serde::Serialize;

/// Shares of the kernel's dynamic thread instructions proven or found convergent (0..1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ConvergentShare {
    /// Simple convergence analysis (§3.1).
    pub ca: f64,
    /// Convergence + variance analysis (§3.2).
    pub ca_va: f64,
    /// With the exit rule (§3.4).
    pub exit: f64,
    /// With the whole live warp issued together (dynamic convergence preservation under stackless-dcp).
    pub dcp: f64,
    /// The best schedule of every dynamic divergent region.
    pub oracle: f64,
}

/// 1 − scalarized / baseline for each activity count (`null` where the baseline is 0).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Reduction {
    /// Thread operations executed.
    pub operations: Option<f64>,
    /// Register reads.
    pub register_reads: Option<f64>,
    /// Register writes.
    pub register_writes: Option<f64>,
    /// Register reads and writes together.
    pub register_accesses: Option<f64>,
    /// Memory address counts.
    pub address_counts: Option<f64>,
    /// Memory data accesses.
    pub data_accesses: Option<f64>,
}

/// The `scalarization` object of `run --scalarize --json` (stable keys, documented in
/// `docs/scalarization.md`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScalarizationJson {
    /// Threads per warp the counts are for.
    pub warp_size: u32,
    /// The kernel's own dynamic thread instructions (the denominator of `convergent_share`).
    pub thread_instructions: u64,
    /// Convergent shares.
    pub convergent_share: ConvergentShare,
    /// Share of the thread instructions in divergent regions for which the oracle is exact (`null`
    /// when there are none).
    pub oracle_exact: Option<f64>,
    /// Divergent regions left to the greedy lower bound because the oracle's work budget (a fixed number
    /// of steps per SM and launch, `ORACLE_BUDGET`) was spent.
    pub oracle_over_budget: u64,
    /// Issued groups by kind.
    pub issued: IssuedSplit,
    /// Activity without scalarization.
    pub baseline: Activity,
    /// Activity with scalarization.
    pub scalarized: Activity,
    /// Savings.
    pub reduction: Reduction,
}

fn share(n: u64, d: u64) -> f64 {
    if d == 0 {
        0.0
    } else {
        n as f64 / d as f64
    }
}

fn saving(scalarized: u64, baseline: u64) -> Option<f64> {
    (baseline > 0).then(|| 1.0 - scalarized as f64 / baseline as f64)
}

/// The JSON object of `s` at warp size `warp_size`.
pub fn scalarization_json(s: &ScalarizeStats, warp_size: u32) -> ScalarizationJson {
    let t = s.thread_instructions;
    let c = &s.convergent;
    let (b, z) = (&s.baseline, &s.scalarized);
    ScalarizationJson {
        warp_size,
        thread_instructions: t,
        convergent_share: ConvergentShare {
            ca: share(c.ca, t),
            ca_va: share(c.ca_va, t),
            exit: share(c.exit, t),
            dcp: share(c.dcp, t),
            oracle: share(c.oracle, t),
        },
        oracle_exact: (s.divergent > 0).then(|| share(s.oracle_exact, s.divergent)),
        oracle_over_budget: s.oracle_over_budget,
        issued: s.issued,
        baseline: *b,
        scalarized: *z,
        reduction: Reduction {
            operations: saving(z.operations, b.operations),
            register_reads: saving(z.register_reads, b.register_reads),
            register_writes: saving(z.register_writes, b.register_writes),
            register_accesses: saving(z.register_reads + z.register_writes, b.register_reads + b.register_writes),
            address_counts: saving(z.address_counts, b.address_counts),
            data_accesses: saving(z.data_accesses, b.data_accesses),
        },
    }
}
