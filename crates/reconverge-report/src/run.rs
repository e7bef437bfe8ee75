//! The summary of one run: readable text and the stable JSON statistics (`run --json`).

use reconverge_sim::{RunResult, Stats};
use serde::Serialize;
use std::fmt::Write;

/// The JSON statistics object of one run (stable keys, documented in the README).
#[derive(Clone, Debug, Serialize)]
pub struct RunJson<'a> {
    /// `completed`, `deadlock`, `limit` or `error`.
    pub outcome: &'a str,
    /// Whether the statistics cover only part of the run (it stopped early).
    pub partial: bool,
    /// The mechanism's name.
    pub mechanism: &'a str,
    /// Threads per warp.
    pub warp_size: u32,
    /// Simulated cycles (`null` without the timing model).
    pub cycles: Option<u64>,
    /// Issued issue groups: the kernel's own instructions plus mechanism-inserted ones.
    pub warp_instructions: u64,
    /// Active lanes summed over all issued instructions.
    pub thread_instructions: u64,
    /// The kernel's own issued instructions.
    pub kernel_instructions: u64,
    /// Active lanes summed over the kernel's own instructions.
    pub kernel_thread_instructions: u64,
    /// Issued instructions a mechanism inserted (`ssy`, `sync`, `pbk`, `brk`, ...).
    pub mechanism_instructions: u64,
    /// Active lanes summed over the mechanism-inserted instructions.
    pub mechanism_thread_instructions: u64,
    /// kernel_thread_instructions / (kernel_instructions × warp_size).
    pub simd_efficiency: f64,
    /// thread_instructions / (warp_instructions × warp_size), mechanism instructions included.
    pub simd_efficiency_all: f64,
    /// warp_instructions / cycles (`null` without the timing model).
    pub ipc: Option<f64>,
    /// The largest reconvergence stack (`null` for mechanisms that keep no stack).
    pub max_stack_depth: Option<usize>,
    /// The largest path list or group set (`null` for other mechanisms).
    pub max_paths: Option<usize>,
    /// The most warps in one SM's warp pool (`null` for mechanisms without a pool).
    pub max_pool_warps: Option<usize>,
    /// The kernel's conditional and indirect branches issued.
    pub branches: u64,
    /// Those whose active lanes split.
    pub divergent_branches: u64,
    /// Barriers issued.
    pub barriers: u64,
    /// The kernel's own issues by active-lane count (index k: k+1 lanes).
    pub lane_histogram: &'a [u64],
    /// Warp instructions by class.
    pub by_class: &'a reconverge_sim::stats::ClassCounts,
    /// CTAs run.
    pub ctas: u64,
    /// Threads run.
    pub threads: u64,
    /// The kernel.
    pub kernel: &'a str,
    /// Why the run stopped early.
    pub error: Option<String>,
    /// The mechanism's own counters and ratios (empty for mechanisms without any; cycle counters only
    /// in timed runs).
    pub mechanism_counters: serde_json::Map<String, serde_json::Value>,
    /// One entry per conditional or indirect branch of the kernel, in pc order.
    pub branches_by_pc: Vec<BranchEntry>,
    /// Seed 004's dynamic scalarization metrics (only with `--scalarize`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scalarization: Option<crate::scalarization::ScalarizationJson>,
}

/// The statistics of one of the kernel's branches (`branches_by_pc` entries).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BranchEntry {
    /// Its pc in the decoded program (pcs differ between mechanisms that insert instructions; match
    /// branches across mechanisms by `ptx_line`).
    pub pc: u32,
    /// Its PTX line.
    pub ptx_line: u32,
    /// The CUDA source file (from `.loc`), or `null`.
    pub cuda_file: Option<String>,
    /// The CUDA source line (from `.loc`), or `null`.
    pub cuda_line: Option<u32>,
    /// The function containing it.
    pub function: String,
    /// Warp-level executions.
    pub executions: u64,
    /// Executions whose active lanes split.
    pub divergent: u64,
    /// Mean active lanes per execution (`null` if never executed).
    pub mean_active_lanes: Option<f64>,
    /// The pc where its paths reconverge (immediate post-dominator); `null` when only at function exit.
    pub reconvergence_pc: Option<u32>,
    /// Counters the mechanism keeps per branch (empty for mechanisms without any).
    pub mechanism: serde_json::Map<String, serde_json::Value>,
}

pub use reconverge_records::mechanism_counters;

/// The per-branch entries of a run, in pc order.
pub fn branches_by_pc(r: &RunResult) -> Vec<BranchEntry> {
    r.branch_sites
        .iter()
        .zip(&r.stats.branch_counts)
        .enumerate()
        .map(|(b, (site, c))| BranchEntry {
            pc: site.pc,
            ptx_line: site.ptx_line,
            cuda_file: site.cuda_file.clone(),
            cuda_line: site.cuda_line,
            function: site.function.clone(),
            executions: c.executions,
            divergent: c.divergent,
            mean_active_lanes: (c.executions > 0).then(|| c.active_lanes as f64 / c.executions as f64),
            reconvergence_pc: site.reconvergence_pc,
            mechanism: r.stats.branch_mechanism_counters(b).map(|(k, v)| (k.to_string(), v.into())).collect(),
        })
        .collect()
}

/// Builds the JSON statistics of a run.
pub fn run_json<'a>(kernel: &'a str, mechanism: &'a str, warp_size: u32, r: &'a RunResult) -> RunJson<'a> {
    let s: &Stats = &r.stats;
    RunJson {
        outcome: r.outcome(),
        partial: r.partial(),
        mechanism,
        warp_size,
        cycles: None,
        warp_instructions: s.warp_instructions,
        thread_instructions: s.thread_instructions,
        kernel_instructions: s.kernel_instructions(),
        kernel_thread_instructions: s.kernel_thread_instructions(),
        mechanism_instructions: s.mechanism_instructions,
        mechanism_thread_instructions: s.mechanism_thread_instructions,
        simd_efficiency: s.simd_efficiency(warp_size),
        simd_efficiency_all: s.simd_efficiency_all(warp_size),
        ipc: None,
        max_stack_depth: s.max_stack_depth(),
        max_paths: s.max_paths(),
        max_pool_warps: s.max_pool_warps(),
        branches: s.branches,
        divergent_branches: s.divergent_branches,
        barriers: s.barriers,
        lane_histogram: &s.lane_histogram,
        by_class: &s.by_class,
        ctas: s.ctas,
        threads: s.threads,
        kernel,
        error: r.error.as_ref().map(|e| e.to_string()),
        mechanism_counters: mechanism_counters(s),
        branches_by_pc: branches_by_pc(r),
        scalarization: s.scalarization.as_ref().map(|z| crate::scalarization::scalarization_json(z, warp_size)),
    }
}

/// The readable summary of a run.
pub fn run_text(kernel: &str, mechanism: &str, warp_size: u32, r: &RunResult) -> String {
    let s = &r.stats;
    let mut out = String::new();
    let partial = if r.partial() { " (partial statistics: the run stopped early)" } else { "" };
    let _ = writeln!(out, "kernel {kernel} under {mechanism}, warp size {warp_size}: {}{partial}", r.outcome());
    let structure = match (s.max_stack_depth(), s.max_paths(), s.max_pool_warps()) {
        (Some(d), _, _) => ("max stack depth", d.to_string()),
        (_, Some(p), _) => ("max paths", p.to_string()),
        (_, _, Some(p)) => ("max pool warps", p.to_string()),
        _ => ("max structure", "-".to_string()),
    };
    let rows: [(&str, String); 9] = [
        (
            "warp instructions",
            format!(
                "{} ({} kernel, {} mechanism)",
                s.warp_instructions,
                s.kernel_instructions(),
                s.mechanism_instructions
            ),
        ),
        ("thread instructions", s.thread_instructions.to_string()),
        (
            "SIMD efficiency",
            format!(
                "{:.1}% of the kernel's instructions ({:.1}% with mechanism instructions)",
                100.0 * s.simd_efficiency(warp_size),
                100.0 * s.simd_efficiency_all(warp_size)
            ),
        ),
        structure,
        ("branches (divergent)", format!("{} ({})", s.branches, s.divergent_branches)),
        ("mechanism instructions", s.mechanism_instructions.to_string()),
        ("barriers", s.barriers.to_string()),
        ("CTAs / threads", format!("{} / {}", s.ctas, s.threads)),
        (
            "by class",
            format!(
                "int {} float {} double {} sfu {} mem {} control {} sync {} mechanism {} nop {}",
                s.by_class.int,
                s.by_class.float,
                s.by_class.double,
                s.by_class.sfu,
                s.by_class.mem,
                s.by_class.control,
                s.by_class.sync,
                s.by_class.mechanism,
                s.by_class.nop
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    let counters = mechanism_counters(s);
    if !counters.is_empty() {
        wrapped_row(&mut out, "mechanism counters", &counter_cells(&counters));
    }
    if let Some(z) = &s.scalarization {
        out.push_str(&crate::scalarization::scalarization_text(z, warp_size));
    }
    out
}

/// Mechanism counters as `name value` cells ([`counter_value`]).
pub fn counter_cells(counters: &serde_json::Map<String, serde_json::Value>) -> Vec<String> {
    counters.iter().map(|(k, v)| format!("{k} {}", counter_value(v))).collect()
}

/// A mechanism counter's value as text: a count as is, a ratio as a percentage, `-` when undefined.
pub fn counter_value(v: &serde_json::Value) -> String {
    match v.as_f64() {
        Some(x) if !v.is_u64() => format!("{:.1}%", 100.0 * x),
        _ if v.is_null() => "-".into(),
        _ => v.to_string(),
    }
}

/// Writes `cells` as one labelled row, continued on further rows past about 100 columns; a label longer
/// than the label column goes on a line of its own.
pub fn wrapped_row(out: &mut String, label: &str, cells: &[String]) {
    let mut line = String::new();
    let mut label = label;
    if label.len() > 22 {
        let _ = writeln!(out, "  {label}");
        label = "";
    }
    for c in cells {
        if !line.is_empty() && line.len() + c.len() + 2 > 76 {
            let _ = writeln!(out, "  {label:<22} {line}");
            label = "";
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(", ");
        }
        line.push_str(c);
    }
    let _ = writeln!(out, "  {label:<22} {line}");
}

/// The JSON statistics of a run with the timing model's keys (`cycles`, `ipc`, stalls, caches, the
/// effective configuration); without timing it equals [`run_json`].
pub fn run_json_timed(
    kernel: &str,
    mechanism: &str,
    warp_size: u32,
    r: &RunResult,
    timing: Option<&reconverge_timing::TimingStats>,
    gpu: Option<&reconverge_timing::GpuConfig>,
) -> serde_json::Value {
    let mut v = serde_json::to_value(run_json(kernel, mechanism, warp_size, r)).unwrap_or_default();
    if let (Some(t), Some(obj)) = (timing, v.as_object_mut()) {
        obj.insert("cycles".into(), t.cycles.into());
        if let Some(sample) = &t.sample {
            obj.insert("cta_sample".into(), serde_json::to_value(sample).unwrap_or_default());
        }
        obj.insert("ipc".into(), t.ipc().into());
        obj.insert("issue_utilization".into(), t.issue_utilization().into());
        obj.insert("latency_hiding_issues".into(), t.latency_hiding_issues.into());
        obj.insert("warp_co_issues".into(), t.warp_co_issues.into());
        obj.insert("lane_ops".into(), t.lane_ops.into());
        obj.insert("stall_cycles".into(), serde_json::to_value(&t.stalls).unwrap_or_default());
        obj.insert("l1_hit_rate".into(), t.l1_hit_rate().into());
        obj.insert("l2_hit_rate".into(), t.l2_hit_rate().into());
        obj.insert("dram_transactions".into(), (t.memory.dram_reads + t.memory.dram_writes).into());
        obj.insert("memory".into(), serde_json::to_value(&t.memory).unwrap_or_default());
        obj.insert("datapath".into(), serde_json::to_value(&t.datapath).unwrap_or_default());
        if let Some(e) = gpu.and_then(|g| reconverge_energy::energy(t, g)) {
            obj.insert("energy".into(), serde_json::to_value(&e).unwrap_or_default());
        }
        obj.insert("sm_cycles".into(), serde_json::to_value(&t.sm_cycles).unwrap_or_default());
        obj.insert("epochs".into(), t.epochs.into());
        obj.insert("epoch_cycles".into(), t.epoch_cycles.into());
        obj.insert("occupancy".into(), serde_json::to_value(&t.occupancy).unwrap_or_default());
    }
    if let (Some(g), Some(obj)) = (gpu, v.as_object_mut()) {
        obj.insert("config".into(), serde_json::to_value(g).unwrap_or_default());
    }
    v
}

/// The row of a launch sampled by CTAs: `5 stretches not timed, 55.3% of the warp instructions, at 21.86
/// warp instructions per cycle over 6 windows (their rates' spread ± 131 cycles); the counters below
/// cover the timed CTAs`.
fn cta_sample_text(s: &reconverge_timing::CtaSample) -> String {
    let all = (s.timed_warp_instructions + s.skipped_warp_instructions).max(1);
    format!(
        "{} stretches not timed, {:.1}% of the warp instructions, at {:.2} {} per cycle over {} windows (their \
         rates' spread ± {} cycles); the counters below cover the timed CTAs",
        s.skips,
        100.0 * s.skipped_warp_instructions as f64 / all as f64,
        s.rate(),
        s.work.name(),
        s.windows,
        s.spread_cycles
    )
}

/// `8 CTAs/SM, 20 registers/thread (ptxas 11.8 sm_35)`.
fn occupancy_text(o: &reconverge_timing::Occupancy) -> String {
    let from = match o.registers_from {
        reconverge_timing::RegisterSource::Ptxas => format!("ptxas {}", o.ptxas),
        reconverge_timing::RegisterSource::Estimate => "estimated from the PTX".into(),
        reconverge_timing::RegisterSource::Configuration => "fixed by the configuration".into(),
    };
    format!("{} CTAs/SM, {} registers/thread ({from})", o.resident_ctas, o.registers_per_thread)
}

/// Banked DRAM's row-buffer outcomes, commands and bus use, in one line.
fn dram_rows(d: &reconverge_timing::memsys::DramStats) -> String {
    format!(
        "{:.1}% row hits of {} requests ({} misses, {} conflicts), {} activates, {:.1}% data-bus use",
        100.0 * d.row_hit_rate(),
        d.requests(),
        d.row_misses,
        d.row_conflicts,
        d.activates,
        100.0 * d.bus_utilization()
    )
}

/// `123.4 µJ at 45.6 W average, EDP 1.23e-9 J·s`.
fn energy_text(e: &reconverge_energy::Energy) -> String {
    format!("{} at {:.1} W average, EDP {:.3e} J·s", joules(e.total()), e.average_power(), e.edp())
}

/// The components of at least 1% of the energy, largest first, as shares.
fn energy_parts(e: &reconverge_energy::Energy) -> String {
    let total = e.total();
    if total <= 0.0 {
        return "none".into();
    }
    let mut parts: Vec<_> = reconverge_energy::Component::ALL.iter().map(|&c| (c, e.of(c) / total)).collect();
    parts.sort_by(|a, b| b.1.total_cmp(&a.1));
    let shown: Vec<String> =
        parts.iter().filter(|(_, f)| *f >= 0.01).map(|(c, f)| format!("{} {:.0}%", c.name(), 100.0 * f)).collect();
    shown.join(", ")
}

/// Joules with a metric prefix (`12.3 µJ`).
pub fn joules(j: f64) -> String {
    let (v, unit) = match j.abs() {
        x if x >= 1.0 => (j, "J"),
        x if x >= 1e-3 => (j * 1e3, "mJ"),
        x if x >= 1e-6 => (j * 1e6, "µJ"),
        _ => (j * 1e9, "nJ"),
    };
    format!("{v:.1} {unit}")
}

/// The readable summary of the timing statistics.
pub fn timing_text(t: &reconverge_timing::TimingStats, g: &reconverge_timing::GpuConfig) -> String {
    let mut out = String::new();
    for (k, v) in timing_rows(t, g) {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    out
}

/// The timing statistics as labelled rows, as [`timing_text`] prints them (and the report's tables show
/// them): the GPU, cycles, IPC, occupancy, issue slots, idle slots by cause, caches, DRAM, coalescing,
/// shared memory, and the texture cache when used.
pub fn timing_rows(
    t: &reconverge_timing::TimingStats,
    g: &reconverge_timing::GpuConfig,
) -> Vec<(&'static str, String)> {
    let slots = t.issue_slots.max(1) as f64;
    let pct = |x: u64| format!("{:.1}%", 100.0 * x as f64 / slots);
    let s = &t.stalls;
    let m = &t.memory;
    let mut rows: Vec<(&'static str, String)> = vec![
        ("GPU", format!("{} ({} SMs, {} schedulers/SM)", g.name, g.num_sms, g.sm.schedulers)),
        ("cycles", t.cycles.to_string()),
        ("IPC", format!("{:.3}", t.ipc())),
        ("occupancy", occupancy_text(&t.occupancy)),
        ("issue slot use", format!("{:.1}%", 100.0 * t.issue_utilization())),
        (
            "issued while another path waited",
            format!(
                "{} ({:.1}% of issues)",
                t.latency_hiding_issues,
                100.0 * t.latency_hiding_issues as f64 / t.issued.max(1) as f64
            ),
        ),
        (
            "idle slots by cause",
            format!(
                "memory {} scoreboard {} pipeline {} barrier {} mechanism {} no warp {}",
                pct(s.memory),
                pct(s.scoreboard),
                pct(s.pipeline),
                pct(s.barrier),
                pct(s.mechanism),
                pct(s.no_ready_warp)
            ),
        ),
        ("L1 hit rate", format!("{:.1}% of {} line accesses", 100.0 * t.l1_hit_rate(), m.l1_accesses)),
        ("L2 hit rate", format!("{:.1}% of {} accesses", 100.0 * t.l2_hit_rate(), m.l2_accesses)),
        ("DRAM", format!("{} reads, {} writes, {} bytes", m.dram_reads, m.dram_writes, m.dram_bytes)),
        (
            "coalescing",
            format!(
                "{} global instructions, {} transactions, {} sectors",
                m.global_instructions, m.transactions, m.sectors
            ),
        ),
        ("shared memory", format!("{} instructions, {} wavefronts", m.shared_instructions, m.shared_wavefronts)),
    ];
    if let (Some(s), Some(at)) = (&t.sample, rows.iter().position(|(k, _)| *k == "cycles")) {
        rows[at].1 = format!("{} (estimated: {} of {} CTAs not timed)", t.cycles, s.skipped_ctas, s.ctas);
        rows.insert(at + 1, ("CTA sample", cta_sample_text(s)));
    }
    if m.dram.channel_cycles > 0 {
        rows.insert(
            rows.iter().position(|(k, _)| *k == "DRAM").map_or(rows.len(), |i| i + 1),
            ("DRAM rows", dram_rows(&m.dram)),
        );
    }
    if let Some(e) = reconverge_energy::energy(t, g) {
        rows.push(("energy", energy_text(&e)));
        rows.push(("energy by part", energy_parts(&e)));
    }
    if m.texture_instructions > 0 {
        let v = format!(
            "{} instructions, {:.1}% hits of {} line accesses",
            m.texture_instructions,
            100.0 * m.texture_hits as f64 / m.texture_accesses.max(1) as f64,
            m.texture_accesses,
        );
        rows.push(("texture cache", v));
    }
    rows
}
