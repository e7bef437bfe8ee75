//! Tidy results for scripts: one flat record per run (kernel × mechanism × warp size × configuration) or
//! per branch, numbers as numbers, `null` (an empty CSV cell) where a value does not apply. The text
//! tables of `suite` and `compare` are rendered from the same records, with human formatting.
//!
//! The column names are part of the command-line contract (the README lists them).

use crate::run::{branches_by_pc, BranchEntry};
use crate::table::Table;
use reconverge_sim::RunResult;
use serde::Serialize;

pub use reconverge_records::run::{fill_speedups, Check, RunRecord, BASELINE};
pub use reconverge_records::summary::{speedup_summaries, summary_rows, SpeedupSummary, SummaryRow};
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
