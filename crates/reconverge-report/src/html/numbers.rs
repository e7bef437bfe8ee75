//! The numbers behind a report's plots, mechanism by mechanism and side by side: the timing model's
//! statistics (what `run` prints of a timed run: issue slots, idle slots by cause, caches, DRAM,
//! coalescing), each mechanism's own counters (as `run --json` and `suite --counters` name them, from the
//! counters the mechanism declares), its branches (as `run --branches` prints them) and the GPU
//! configuration the timed runs used.

use super::{esc, RunReport};
use crate::records::{branch_records, branch_table};
use crate::run::{counter_value, mechanism_counters, timing_rows};
use reconverge_sim::Stats;
use reconverge_timing::GpuConfig;
use std::fmt::Write;

/// The GPU configuration, collapsed: its name and main parameters, the whole of it as TOML inside.
pub fn config_details(b: &mut String, g: &GpuConfig) {
    let units = if g.sm.units.is_empty() { String::new() } else { format!(", unit pools {:?}", g.sm.units) };
    let _ = write!(
        b,
        "<details><summary>GPU configuration {}: {} SMs at {} MHz, {} schedulers per SM ({:?}), at most {} CTAs, {} threads and {} warps per SM; L1 {} KiB (hit {} cycles), L2 {} KiB (hit {} cycles), DRAM {} cycles and {} bytes per cycle{units}</summary><pre class=\"config\">{}</pre></details>",
        esc(&g.name),
        g.num_sms,
        g.clock_mhz,
        g.sm.schedulers,
        g.sm.scheduler,
        g.sm.max_ctas,
        g.sm.max_threads,
        g.sm.max_warps,
        g.l1.size / 1024,
        g.l1.hit_latency,
        g.l2.size / 1024,
        g.l2.hit_latency,
        g.dram.latency,
        g.dram.bytes_per_cycle,
        esc(&g.to_toml())
    );
}

/// The timing model's statistics of every timed run, a row per statistic and a column per mechanism
/// (the rows `run` prints for a timed run, and the co-issue and lane-operation counts).
pub fn timing_table(b: &mut String, r: &RunReport<'_>) {
    let (Some(g), true) = (r.gpu, r.runs.iter().any(|m| m.timing.is_some())) else { return };
    let columns: Vec<(&str, Vec<(&str, String)>)> = r
        .runs
        .iter()
        .filter_map(|m| {
            let t = m.timing?;
            let mut rows = timing_rows(t, g);
            rows.retain(|(k, _)| *k != "GPU");
            rows.push(("co-issued from another warp", t.warp_co_issues.to_string()));
            rows.push(("lane operations", t.lane_ops.to_string()));
            Some((m.mechanism, rows))
        })
        .collect();
    let mut labels: Vec<&str> = Vec::new();
    for (_, rows) in &columns {
        for (k, _) in rows {
            if !labels.contains(k) {
                labels.push(k);
            }
        }
    }
    b.push_str("<h3>The timing model's statistics</h3><div class=\"wide\"><table><tr><th>statistic</th>");
    for (name, _) in &columns {
        let _ = write!(b, "<th>{}</th>", esc(name));
    }
    b.push_str("</tr>");
    for label in labels {
        let _ = write!(b, "<tr><td>{}</td>", esc(label));
        for (_, rows) in &columns {
            let v = rows.iter().find(|(k, _)| *k == label).map_or("–", |(_, v)| v.as_str());
            let _ = write!(b, "<td class=\"t\">{}</td>", esc(v));
        }
        b.push_str("</tr>");
    }
    b.push_str("</table></div><p class=\"note\">Idle slots are shares of the issue slots (scheduler-cycles while an SM had work); L1 accesses count lines of global and local loads; transactions are the coalescer's line requests; DRAM reads and writes count sectors.</p>");
}

/// What `name`, a counter or ratio `s`'s mechanism declares, counts (its declaration's doc).
fn counter_doc(s: &Stats, name: &str) -> &'static str {
    let counter = s.mechanism_counter_defs.iter().find(|d| d.name == name).map(|d| d.doc);
    counter.or_else(|| s.mechanism_ratio_defs.iter().find(|d| d.name == name).map(|d| d.doc)).unwrap_or("")
}

/// Each mechanism's own counters and ratios, a card per mechanism (its timed run's in a timed report:
/// counters of cycles are kept only there), each name explained on hover.
pub fn counters_section(b: &mut String, r: &RunReport<'_>) {
    b.push_str("<h3>Each mechanism's own counters</h3><p class=\"note\">What each mechanism counts of its own work, as <code>run --json</code> reports it under <code>mechanism_counters</code> (hover a name for its definition; docs/mechanism-reference.md defines them all). Ratios are percentages.</p><div class=\"cards\">");
    for m in &r.runs {
        let stats = &m.timed_result.unwrap_or(m.result).stats;
        let counters = mechanism_counters(stats);
        let _ = write!(b, "<table class=\"card\"><tr><th colspan=\"2\">{}</th></tr>", esc(m.mechanism));
        if counters.is_empty() {
            b.push_str("<tr><td class=\"t\" colspan=\"2\">no counters of its own</td></tr>");
        }
        for (k, v) in &counters {
            let _ = write!(
                b,
                "<tr><td title=\"{}\">{}</td><td>{}</td></tr>",
                esc(counter_doc(stats, k)),
                esc(k),
                esc(&counter_value(v))
            );
        }
        b.push_str("</table>");
    }
    b.push_str("</div>");
}

/// Each mechanism's branches as `run --branches` prints them, one collapsed table per mechanism (the
/// first open).
pub fn branches_section(b: &mut String, r: &RunReport<'_>) {
    b.push_str("<h2>Branches</h2><p class=\"note\">The kernel's conditional and indirect branches as <code>run --branches</code> prints them, per mechanism (its timed run's in a timed report): executions, divergent executions, mean active lanes, where the paths reconverge and the mechanism's per-branch counters. Pcs differ between mechanisms that insert instructions; the PTX line names a branch under every mechanism.</p>");
    let config = r.gpu.map(|g| g.name.as_str());
    for (i, m) in r.runs.iter().enumerate() {
        let run = m.timed_result.unwrap_or(m.result);
        let rows = branch_records(r.kernel, config, r.warp_size, m.mechanism, run);
        let table = branch_table(&rows).without(&["kernel", "config", "warp", "mechanism"]);
        let _ = write!(
            b,
            "<details{}><summary>{} ({} branch{})</summary><div class=\"scroll\">{}</div></details>",
            if i == 0 { " open" } else { "" },
            esc(m.mechanism),
            rows.len(),
            if rows.len() == 1 { "" } else { "es" },
            if rows.is_empty() { "<p class=\"note\">No branch.</p>".to_string() } else { table.render_html() }
        );
    }
}
