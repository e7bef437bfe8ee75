//! The summary of one run: readable text and the stable JSON statistics of architecture.md §4.

use reconverge_sim::{RunResult, Stats};
use serde::Serialize;
use std::fmt::Write;

/// The JSON statistics object (stable keys).
#[derive(Clone, Debug, Serialize)]
pub struct RunJson<'a> {
    /// `completed`, `deadlock`, `limit` or `error`.
    pub outcome: &'a str,
    /// The mechanism's name.
    pub mechanism: &'a str,
    /// Threads per warp.
    pub warp_size: u32,
    /// Simulated cycles (`null` without the timing model).
    pub cycles: Option<u64>,
    /// Issued issue groups.
    pub warp_instructions: u64,
    /// Active lanes summed over issued instructions.
    pub thread_instructions: u64,
    /// thread_instructions / (warp_instructions × warp_size).
    pub simd_efficiency: f64,
    /// warp_instructions / cycles (`null` without the timing model).
    pub ipc: Option<f64>,
    /// The largest reconvergence structure any warp held, in entries.
    pub max_stack_depth: usize,
    /// Conditional branches issued.
    pub branches: u64,
    /// Branches whose lanes split.
    pub divergent_branches: u64,
    /// Explicit stack instructions issued.
    pub stack_instructions: u64,
    /// Barriers issued.
    pub barriers: u64,
    /// Issues by active-lane count (index k: k+1 lanes).
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
}

/// Builds the JSON statistics of a run.
pub fn run_json<'a>(kernel: &'a str, mechanism: &'a str, warp_size: u32, r: &'a RunResult) -> RunJson<'a> {
    let s: &Stats = &r.stats;
    RunJson {
        outcome: r.outcome(),
        mechanism,
        warp_size,
        cycles: None,
        warp_instructions: s.warp_instructions,
        thread_instructions: s.thread_instructions,
        simd_efficiency: s.simd_efficiency(warp_size),
        ipc: None,
        max_stack_depth: s.max_stack_depth,
        branches: s.branches,
        divergent_branches: s.divergent_branches,
        stack_instructions: s.stack_instructions,
        barriers: s.barriers,
        lane_histogram: &s.lane_histogram,
        by_class: &s.by_class,
        ctas: s.ctas,
        threads: s.threads,
        kernel,
        error: r.error.as_ref().map(|e| e.to_string()),
    }
}

/// The readable summary of a run.
pub fn run_text(kernel: &str, mechanism: &str, warp_size: u32, r: &RunResult) -> String {
    let s = &r.stats;
    let mut out = String::new();
    let _ = writeln!(out, "kernel {kernel} under {mechanism}, warp size {warp_size}: {}", r.outcome());
    let rows: [(&str, String); 9] = [
        ("warp instructions", s.warp_instructions.to_string()),
        ("thread instructions", s.thread_instructions.to_string()),
        ("SIMD efficiency", format!("{:.1}%", 100.0 * s.simd_efficiency(warp_size))),
        ("max stack depth", s.max_stack_depth.to_string()),
        ("branches (divergent)", format!("{} ({})", s.branches, s.divergent_branches)),
        ("stack instructions", s.stack_instructions.to_string()),
        ("barriers", s.barriers.to_string()),
        ("CTAs / threads", format!("{} / {}", s.ctas, s.threads)),
        (
            "by class",
            format!(
                "int {} float {} double {} sfu {} mem {} control {} sync {} stack {}",
                s.by_class.int,
                s.by_class.float,
                s.by_class.double,
                s.by_class.sfu,
                s.by_class.mem,
                s.by_class.control,
                s.by_class.sync,
                s.by_class.stack
            ),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    out
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
        obj.insert("ipc".into(), t.ipc().into());
        obj.insert("issue_utilization".into(), t.issue_utilization().into());
        obj.insert("stall_cycles".into(), serde_json::to_value(&t.stalls).unwrap_or_default());
        obj.insert("l1_hit_rate".into(), t.l1_hit_rate().into());
        obj.insert("l2_hit_rate".into(), t.l2_hit_rate().into());
        obj.insert("dram_transactions".into(), (t.memory.dram_reads + t.memory.dram_writes).into());
        obj.insert("memory".into(), serde_json::to_value(&t.memory).unwrap_or_default());
        obj.insert("sm_cycles".into(), serde_json::to_value(&t.sm_cycles).unwrap_or_default());
        obj.insert("epochs".into(), t.epochs.into());
        obj.insert("epoch_cycles".into(), t.epoch_cycles.into());
    }
    if let (Some(g), Some(obj)) = (gpu, v.as_object_mut()) {
        obj.insert("config".into(), serde_json::to_value(g).unwrap_or_default());
    }
    v
}

/// The readable summary of the timing statistics.
pub fn timing_text(t: &reconverge_timing::TimingStats, g: &reconverge_timing::GpuConfig) -> String {
    let mut out = String::new();
    let slots = t.issue_slots.max(1) as f64;
    let pct = |x: u64| format!("{:.1}%", 100.0 * x as f64 / slots);
    let s = &t.stalls;
    let m = &t.memory;
    let rows: Vec<(&str, String)> = vec![
        ("GPU", format!("{} ({} SMs, {} schedulers/SM)", g.name, g.num_sms, g.sm.schedulers)),
        ("cycles", t.cycles.to_string()),
        ("IPC", format!("{:.3}", t.ipc())),
        ("issue slot use", format!("{:.1}%", 100.0 * t.issue_utilization())),
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
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    out
}
