//! One flat record per run (kernel × mechanism × warp size × configuration), the suite's verdict of a
//! run, and speedups over the baseline mechanism. Numbers are numbers and `None` (`null`, an empty CSV
//! cell) marks a value that does not apply; the column names are part of the command-line contract.

use crate::scalarization::{scalarization_json, ScalarizationJson};
use reconverge_mechanism::Mechanism;
use reconverge_sim::{RunResult, Stats};
use reconverge_timing::TimingStats;
use serde::Serialize;

/// One run, flat. Every count is `None` when the run could not start (a broken suite entry).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunRecord {
    /// The kernel.
    pub kernel: String,
    /// The GPU configuration (`None` in functional mode).
    pub config: Option<String>,
    /// Threads per warp.
    pub warp_size: u32,
    /// The mechanism.
    pub mechanism: String,
    /// `completed`, `deadlock`, `limit`, `error`, or `broken` (the kernel could not be loaded or launched).
    pub outcome: String,
    /// Whether the statistics cover only part of the run.
    pub partial: bool,
    /// The suite's verdict: `ok`, `wrong_outcome`, `mismatch`, `broken`; `None` when nothing was checked.
    pub check: Option<String>,
    /// Simulated cycles (timed runs).
    pub cycles: Option<u64>,
    /// pdom's cycles / this run's cycles for the same kernel, warp size and configuration (both completed).
    pub speedup_over_pdom: Option<f64>,
    /// All issued warp instructions.
    pub warp_instructions: Option<u64>,
    /// All active lanes issued.
    pub thread_instructions: Option<u64>,
    /// The kernel's own warp instructions.
    pub kernel_instructions: Option<u64>,
    /// The kernel's own thread instructions.
    pub kernel_thread_instructions: Option<u64>,
    /// Mechanism-inserted warp instructions.
    pub mechanism_instructions: Option<u64>,
    /// Mechanism-inserted thread instructions.
    pub mechanism_thread_instructions: Option<u64>,
    /// SIMD efficiency of the kernel's own instructions (0..1).
    pub simd_efficiency: Option<f64>,
    /// SIMD efficiency of everything issued (0..1).
    pub simd_efficiency_all: Option<f64>,
    /// Warp instructions per cycle.
    pub ipc: Option<f64>,
    /// The largest stack (stack mechanisms).
    pub max_stack_depth: Option<u64>,
    /// The largest path list or group set (list mechanisms).
    pub max_paths: Option<u64>,
    /// The most warps in one SM's warp pool (DWF).
    pub max_pool_warps: Option<u64>,
    /// The kernel's conditional branches issued.
    pub branches: Option<u64>,
    /// Those that split.
    pub divergent_branches: Option<u64>,
    /// Barriers issued.
    pub barriers: Option<u64>,
    /// Scheduler issue slots while SMs had work.
    pub issue_slots: Option<u64>,
    /// Issues from one path while another path of the same warp waited on latency (timed).
    pub latency_hiding_issues: Option<u64>,
    /// Issues in the same cycle as the scheduler's first, from another warp (SWI, the MIMD bound; timed).
    pub warp_co_issues: Option<u64>,
    /// Idle scheduler-cycles waiting for memory.
    pub stall_memory: Option<u64>,
    /// Idle scheduler-cycles waiting for a register.
    pub stall_scoreboard: Option<u64>,
    /// Idle scheduler-cycles with a busy unit or branch.
    pub stall_pipeline: Option<u64>,
    /// Idle scheduler-cycles at barriers.
    pub stall_barrier: Option<u64>,
    /// Idle scheduler-cycles stalled by the mechanism.
    pub stall_mechanism: Option<u64>,
    /// Idle scheduler-cycles with no warp.
    pub stall_no_ready_warp: Option<u64>,
    /// L1 hit rate (0..1).
    pub l1_hit_rate: Option<f64>,
    /// L2 hit rate (0..1).
    pub l2_hit_rate: Option<f64>,
    /// DRAM transactions (sectors read and written).
    pub dram_transactions: Option<u64>,
    /// Energy of the run, joules (timed runs of a configuration with `[energy]`).
    pub energy_j: Option<f64>,
    /// Average power, watts.
    pub avg_power_w: Option<f64>,
    /// Energy-delay product, joule-seconds.
    pub edp: Option<f64>,
    /// The baseline's energy over this run's (above 1: this mechanism uses less), for the same kernel,
    /// configuration and warp size, as [`RunRecord::speedup_over_pdom`] is for cycles.
    pub energy_speedup_over_pdom: Option<f64>,
    /// The baseline's energy-delay product over this run's.
    pub edp_speedup_over_pdom: Option<f64>,
    /// The mechanism's own counters and ratios (CSV columns `mechanism_counters_NAME`; empty for
    /// mechanisms without any).
    pub mechanism_counters: serde_json::Map<String, serde_json::Value>,
    /// Seed 004's scalarization metrics (`compare --scalarize`; CSV columns `scalarization_...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalarization: Option<ScalarizationJson>,
}

/// The suite's verdict of a run, as the `check` column spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Outcome and buffers as expected.
    Ok,
    /// The outcome differs from the expected one.
    WrongOutcome,
    /// A buffer differs.
    Mismatch,
    /// The kernel could not be loaded or launched.
    Broken,
}

impl Check {
    /// The column value.
    pub fn name(self) -> &'static str {
        match self {
            Check::Ok => "ok",
            Check::WrongOutcome => "wrong_outcome",
            Check::Mismatch => "mismatch",
            Check::Broken => "broken",
        }
    }
}

impl RunRecord {
    /// The record of one run. `result` is `None` for a run that could not start.
    pub fn new(
        kernel: &str,
        config: Option<&str>,
        warp_size: u32,
        mechanism: &str,
        check: Option<Check>,
        result: Option<&RunResult>,
        timing: Option<&TimingStats>,
    ) -> RunRecord {
        let mut r = RunRecord {
            kernel: kernel.to_string(),
            config: config.map(str::to_string),
            warp_size,
            mechanism: mechanism.to_string(),
            outcome: "broken".into(),
            check: check.map(|c| c.name().to_string()),
            ..RunRecord::default()
        };
        let Some(res) = result else { return r };
        let s = &res.stats;
        r.outcome = res.outcome().to_string();
        r.partial = res.partial();
        r.warp_instructions = Some(s.warp_instructions);
        r.thread_instructions = Some(s.thread_instructions);
        r.kernel_instructions = Some(s.kernel_instructions());
        r.kernel_thread_instructions = Some(s.kernel_thread_instructions());
        r.mechanism_instructions = Some(s.mechanism_instructions);
        r.mechanism_thread_instructions = Some(s.mechanism_thread_instructions);
        r.simd_efficiency = Some(s.simd_efficiency(warp_size));
        r.simd_efficiency_all = Some(s.simd_efficiency_all(warp_size));
        r.max_stack_depth = s.max_stack_depth().map(|x| x as u64);
        r.max_paths = s.max_paths().map(|x| x as u64);
        r.max_pool_warps = s.max_pool_warps().map(|x| x as u64);
        r.mechanism_counters = mechanism_counters(s);
        r.branches = Some(s.branches);
        r.divergent_branches = Some(s.divergent_branches);
        r.barriers = Some(s.barriers);
        r.scalarization = s.scalarization.as_ref().map(|z| scalarization_json(z, warp_size));
        if let Some(t) = timing {
            r.cycles = Some(t.cycles);
            r.ipc = Some(t.ipc());
            r.issue_slots = Some(t.issue_slots);
            r.latency_hiding_issues = Some(t.latency_hiding_issues);
            r.warp_co_issues = Some(t.warp_co_issues);
            r.stall_memory = Some(t.stalls.memory);
            r.stall_scoreboard = Some(t.stalls.scoreboard);
            r.stall_pipeline = Some(t.stalls.pipeline);
            r.stall_barrier = Some(t.stalls.barrier);
            r.stall_mechanism = Some(t.stalls.mechanism);
            r.stall_no_ready_warp = Some(t.stalls.no_ready_warp);
            r.l1_hit_rate = Some(t.l1_hit_rate());
            r.l2_hit_rate = Some(t.l2_hit_rate());
            r.dram_transactions = Some(t.memory.dram_reads + t.memory.dram_writes);
        }
        r
    }

    /// Sets the run's energy, average power and energy-delay product.
    pub fn set_energy(&mut self, e: &reconverge_energy::Energy) {
        self.energy_j = Some(e.total());
        self.avg_power_w = Some(e.average_power());
        self.edp = Some(e.edp());
    }

    /// Whether this run completed (its numbers are whole-run figures).
    pub fn completed(&self) -> bool {
        self.outcome == "completed"
    }
}

/// The mechanism speedups are measured against: the per-warp post-dominator stack every paper of the
/// seeds compares with (the `speedup_over_pdom` column).
pub const BASELINE: Mechanism = Mechanism::Pdom;

/// Fills `speedup_over_pdom` of every completed timed record from the completed record of `baseline` for
/// the same kernel, configuration and warp size (the command line and the Python package pass
/// [`BASELINE`]; the column is named after it).
pub fn fill_speedups(records: &mut [RunRecord], baseline: Mechanism) {
    type Base = (String, Option<String>, u32, u64, Option<f64>, Option<f64>);
    let base: Vec<Base> = records
        .iter()
        .filter(|r| r.mechanism == baseline.name() && r.completed())
        .filter_map(|r| Some((r.kernel.clone(), r.config.clone(), r.warp_size, r.cycles?, r.energy_j, r.edp)))
        .collect();
    let over = |b: Option<f64>, x: Option<f64>| match (b, x) {
        (Some(b), Some(x)) if x > 0.0 => Some(b / x),
        _ => None,
    };
    for r in records.iter_mut() {
        r.speedup_over_pdom = None;
        r.energy_speedup_over_pdom = None;
        r.edp_speedup_over_pdom = None;
        if !r.completed() {
            continue;
        }
        let Some(c) = r.cycles.filter(|&c| c > 0) else { continue };
        let found = base.iter().find(|(k, cf, w, ..)| *k == r.kernel && *cf == r.config && *w == r.warp_size);
        if let Some((.., p, energy, edp)) = found {
            r.speedup_over_pdom = Some(*p as f64 / c as f64);
            r.energy_speedup_over_pdom = over(*energy, r.energy_j);
            r.edp_speedup_over_pdom = over(*edp, r.edp);
        }
    }
}

/// The mechanism's own counters and ratios of a run, as a JSON object (ratios `null` when undefined).
pub fn mechanism_counters(s: &Stats) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    for (k, v) in s.mechanism_counters() {
        m.insert(k.to_string(), v.into());
    }
    for (k, v) in s.mechanism_ratios() {
        m.insert(k.to_string(), v.map_or(serde_json::Value::Null, Into::into));
    }
    m
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A completed-or-not timed record on gtx480 at warp 32, for the tests of this crate.
    pub(crate) fn timed(kernel: &str, mechanism: &str, outcome: &str, cycles: u64) -> RunRecord {
        RunRecord {
            kernel: kernel.into(),
            config: Some("gtx480".into()),
            warp_size: 32,
            mechanism: mechanism.into(),
            outcome: outcome.into(),
            cycles: Some(cycles),
            ..RunRecord::default()
        }
    }

    #[test]
    fn speedups_are_over_the_baseline_of_the_same_kernel_and_only_between_completed_runs() {
        let mut r = vec![
            timed("a", "pdom", "completed", 200),
            timed("a", "tbc", "completed", 100),
            timed("b", "pdom", "completed", 300),
            timed("b", "tbc", "deadlock", 100),
            timed("c", "pdom", "limit", 300),
            timed("c", "tbc", "completed", 100),
        ];
        fill_speedups(&mut r, BASELINE);
        let got: Vec<Option<f64>> = r.iter().map(|x| x.speedup_over_pdom).collect();
        assert_eq!(got, [Some(1.0), Some(2.0), Some(1.0), None, None, None]);
    }
}
