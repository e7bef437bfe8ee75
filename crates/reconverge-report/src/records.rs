//! Tidy results for scripts: one flat record per run (kernel × mechanism × warp size × configuration) or
//! per branch, numbers as numbers, `null` (an empty CSV cell) where a value does not apply. The text
//! tables of `suite` and `compare` are rendered from the same records, with human formatting.
//!
//! The column names are part of the command-line contract (the README lists them).

use crate::run::{branches_by_pc, BranchEntry};
use crate::table::Table;
use reconverge_mechanism::Mechanism;
use reconverge_sim::RunResult;
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
    /// The mechanism's own counters and ratios (CSV columns `mechanism_counters_NAME`; empty for
    /// mechanisms without any).
    pub mechanism_counters: serde_json::Map<String, serde_json::Value>,
    /// Seed 004's scalarization metrics (`compare --scalarize`; CSV columns `scalarization_...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalarization: Option<crate::scalarization::ScalarizationJson>,
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
        r.mechanism_counters = crate::run::mechanism_counters(s);
        r.branches = Some(s.branches);
        r.divergent_branches = Some(s.divergent_branches);
        r.barriers = Some(s.barriers);
        r.scalarization = s.scalarization.as_ref().map(|z| crate::scalarization::scalarization_json(z, warp_size));
        if let Some(t) = timing {
            r.cycles = Some(t.cycles);
            r.ipc = Some(t.ipc());
            r.issue_slots = Some(t.issue_slots);
            r.latency_hiding_issues = Some(t.latency_hiding_issues);
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
    let base: Vec<(String, Option<String>, u32, u64)> = records
        .iter()
        .filter(|r| r.mechanism == baseline.name() && r.completed())
        .filter_map(|r| Some((r.kernel.clone(), r.config.clone(), r.warp_size, r.cycles?)))
        .collect();
    for r in records.iter_mut() {
        r.speedup_over_pdom = None;
        if !r.completed() {
            continue;
        }
        let Some(c) = r.cycles.filter(|&c| c > 0) else { continue };
        if let Some((.., p)) = base.iter().find(|(k, cf, w, _)| *k == r.kernel && *cf == r.config && *w == r.warp_size)
        {
            r.speedup_over_pdom = Some(*p as f64 / c as f64);
        }
    }
}

/// The geometric mean of `speedup_over_pdom` per (configuration, warp size, mechanism), over the kernels
/// where both the mechanism and pdom completed: (config, warp size, mechanism, mean, kernels).
pub fn geomean_speedups(records: &[RunRecord]) -> Vec<(Option<String>, u32, String, f64, usize)> {
    let mut keys: Vec<(Option<String>, u32, String)> = Vec::new();
    for r in records {
        let k = (r.config.clone(), r.warp_size, r.mechanism.clone());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .filter_map(|(cf, w, m)| {
            let logs: Vec<f64> = records
                .iter()
                .filter(|r| r.config == cf && r.warp_size == w && r.mechanism == m)
                .filter_map(|r| r.speedup_over_pdom)
                .map(f64::ln)
                .collect();
            (!logs.is_empty()).then(|| {
                let g = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
                (cf, w, m, g, logs.len())
            })
        })
        .collect()
}

/// One branch of one run, flat (`--branches` tables).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BranchRecord {
    /// The kernel.
    pub kernel: String,
    /// The GPU configuration (`None` in functional mode).
    pub config: Option<String>,
    /// Threads per warp.
    pub warp_size: u32,
    /// The mechanism.
    pub mechanism: String,
    /// Whether the run's statistics are partial.
    pub partial: bool,
    /// The branch's pc.
    pub pc: u32,
    /// Its PTX line.
    pub ptx_line: u32,
    /// Its CUDA file, if known.
    pub cuda_file: Option<String>,
    /// Its CUDA line, if known.
    pub cuda_line: Option<u32>,
    /// The function containing it.
    pub function: String,
    /// Warp-level executions.
    pub executions: u64,
    /// Executions that split.
    pub divergent: u64,
    /// Mean active lanes per execution.
    pub mean_active_lanes: Option<f64>,
    /// Where its paths reconverge (`None`: function exit).
    pub reconvergence_pc: Option<u32>,
    /// The mechanism's own per-branch counters (CSV columns `mechanism_counters_NAME`).
    pub mechanism_counters: serde_json::Map<String, serde_json::Value>,
}

/// The branch records of one run.
pub fn branch_records(
    kernel: &str,
    config: Option<&str>,
    warp_size: u32,
    mechanism: &str,
    result: &RunResult,
) -> Vec<BranchRecord> {
    branches_by_pc(result)
        .into_iter()
        .map(|b: BranchEntry| BranchRecord {
            kernel: kernel.to_string(),
            config: config.map(str::to_string),
            warp_size,
            mechanism: mechanism.to_string(),
            partial: result.partial(),
            pc: b.pc,
            ptx_line: b.ptx_line,
            cuda_file: b.cuda_file,
            cuda_line: b.cuda_line,
            function: b.function,
            executions: b.executions,
            divergent: b.divergent,
            mean_active_lanes: b.mean_active_lanes,
            reconvergence_pc: b.reconvergence_pc,
            mechanism_counters: b.mechanism,
        })
        .collect()
}

/// Sorts branch records by divergent executions (most first), then executions, kernel, mechanism, pc.
pub fn sort_branches(rows: &mut [BranchRecord]) {
    rows.sort_by(|a, b| {
        b.divergent
            .cmp(&a.divergent)
            .then(b.executions.cmp(&a.executions))
            .then(a.kernel.cmp(&b.kernel))
            .then(a.mechanism.cmp(&b.mechanism))
            .then(a.pc.cmp(&b.pc))
    });
}

/// The text table of branch records (with a column of the mechanism's per-branch counters when a row has
/// any).
pub fn branch_table(rows: &[BranchRecord]) -> Table {
    let with_counters = rows.iter().any(|r| !r.mechanism_counters.is_empty());
    let mut columns = vec![
        "kernel",
        "config",
        "warp",
        "mechanism",
        "pc",
        "ptx line",
        "cuda line",
        "function",
        "executions",
        "divergent",
        "div %",
        "mean lanes",
        "reconverges at",
    ];
    if with_counters {
        columns.push("mechanism counters");
    }
    let mut t = Table::new(&columns);
    for b in rows {
        let r = b;
        let star = if r.partial { "*" } else { "" };
        let mut cells = vec![
            r.kernel.clone(),
            r.config.clone().unwrap_or_else(|| "-".into()),
            r.warp_size.to_string(),
            r.mechanism.clone(),
            b.pc.to_string(),
            b.ptx_line.to_string(),
            b.cuda_line.map(|l| l.to_string()).unwrap_or_else(|| "-".into()),
            b.function.clone(),
            format!("{}{star}", b.executions),
            format!("{}{star}", b.divergent),
            if b.executions == 0 {
                "-".into()
            } else {
                format!("{:.1}%", 100.0 * b.divergent as f64 / b.executions as f64)
            },
            b.mean_active_lanes.map(|m| format!("{m:.1}")).unwrap_or_else(|| "-".into()),
            b.reconvergence_pc.map(|p| format!("pc {p}")).unwrap_or_else(|| "exit".into()),
        ];
        if with_counters {
            cells.push(crate::run::counter_cells(&b.mechanism_counters).join(", "));
        }
        t.row(cells);
    }
    t
}

/// The mechanism counters of the runs that have any, one block per run (`None` when none has).
pub fn counters_text(runs: &[RunRecord]) -> Option<String> {
    let mut out = String::new();
    for r in runs.iter().filter(|r| !r.mechanism_counters.is_empty()) {
        let config = r.config.as_deref().map(|c| format!(" / {c}")).unwrap_or_default();
        let star = if r.partial { " (partial)" } else { "" };
        let title = format!("{} / {}{config} / warp {}{star}", r.kernel, r.mechanism, r.warp_size);
        crate::run::wrapped_row(&mut out, &title, &crate::run::counter_cells(&r.mechanism_counters));
    }
    (!out.is_empty()).then_some(out)
}

/// Serializes records as CSV: one column per field (nested objects flattened with `_`), numbers as
/// numbers, `null` as an empty cell.
pub fn to_csv<T: Serialize>(rows: &[T]) -> String {
    let values: Vec<serde_json::Value> = rows.iter().map(|r| serde_json::to_value(r).unwrap_or_default()).collect();
    let flat: Vec<Vec<(String, String)>> = values
        .iter()
        .map(|v| {
            let mut cells = Vec::new();
            flatten("", v, &mut cells);
            cells
        })
        .collect();
    let mut header: Vec<String> = Vec::new();
    for row in &flat {
        for (k, _) in row {
            if !header.contains(k) {
                header.push(k.clone());
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(&header);
    for row in &flat {
        let cells: Vec<&str> =
            header.iter().map(|h| row.iter().find(|(k, _)| k == h).map(|(_, v)| v.as_str()).unwrap_or("")).collect();
        let _ = w.write_record(&cells);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}_{k}") };
                flatten(&key, x, out);
            }
        }
        serde_json::Value::Null => out.push((prefix.to_string(), String::new())),
        serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// Serializes records as one JSON array.
pub fn to_json<T: Serialize>(rows: &[T]) -> String {
    serde_json::to_string_pretty(rows).unwrap_or_default()
}

/// A percentage for text tables (`52.3%`), `-` for none.
pub fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "-".into())
}

/// A count for text tables, `-` for none, with `*` when the run is partial.
pub fn count(x: Option<u64>, partial: bool) -> String {
    match x {
        Some(v) if partial => format!("{v}*"),
        Some(v) => v.to_string(),
        None => "-".into(),
    }
}

/// The structure-size cell: `stack 3`, `paths 5`, `-`.
pub fn structure(r: &RunRecord) -> String {
    match (r.max_stack_depth, r.max_paths, r.max_pool_warps) {
        (Some(d), _, _) => format!("stack {d}"),
        (_, Some(p), _) => format!("paths {p}"),
        (_, _, Some(p)) => format!("pool {p}"),
        _ => "-".into(),
    }
}

/// The footnote of text tables holding partial runs.
pub const PARTIAL_NOTE: &str =
    "* partial: the run stopped early (deadlock or limit); the numbers cover what ran until then";
