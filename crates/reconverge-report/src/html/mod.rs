//! Self-contained HTML reports (`reconverge report`, `compare --html`): inline SVG and CSS, no network,
//! no JavaScript. Every mechanism appears by its name; nothing here knows any mechanism. Each mechanism
//! keeps one colour and pattern ([`chart::styles`]) in every plot of a page, and pages with many
//! mechanisms draw plots over time as small multiples.

pub mod cfg_svg;
pub mod chart;
pub mod numbers;
pub mod per_line;

use crate::cfg::FunctionReport;
use crate::records::RunRecord;
use crate::timeline::{Bucket, CycleBuckets, TimelineRecorder};
use chart::{BarSeries, Layer, Series, Size, Spec, Style};
use reconverge_program::Program;
use reconverge_sim::RunResult;
use reconverge_timing::per_pc::PcSite;
use reconverge_timing::stats::StallCounts;
use reconverge_timing::{GpuConfig, TimingStats};
use std::fmt::Write;

/// Ten colours (Tableau 10) for plots whose series are not mechanisms (the hardware-cost plot); the
/// series of mechanisms take [`chart::styles`].
pub const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// Above this many mechanisms, plots over the run are small multiples (one panel per mechanism, shared
/// axes) rather than one plot of overlaid lines.
pub const MAX_OVERLAID: usize = 6;

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0 auto; max-width: 1240px; padding: 24px 32px 64px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 36px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.meta { color: #555; margin: 0 0 16px; } p.note { color: #555; font-size: 13px; } p.warn { color: #8a4b00; font-size: 13px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 8px 0; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 10px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; white-space: nowrap; }
figure.plot { margin: 12px 0; } figure.plot svg { width: 100%; height: auto; }
svg .title { font-size: 16px; font-weight: 600; fill: #222; } svg .axis { font-size: 13px; fill: #333; }
svg .tick { font-size: 12px; fill: #555; } svg .legend { font-size: 13px; fill: #222; }
svg .grid { stroke: #e8e8e8; } svg .frame { stroke: #888; } svg .reference { stroke: #222; stroke-dasharray: 5 4; }
td.t { text-align: left; }
.small-multiples { display: grid; grid-template-columns: 1fr 1fr; gap: 4px 24px; }
.panels { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 0 18px; } .panels figure.plot { margin: 4px 0; }
.source { max-height: 640px; overflow: auto; border: 1px solid #ddd; }
.source table { margin: 0; } .source td { border: 0; padding: 0 8px; white-space: pre; font: 12px/1.5 ui-monospace, Menlo, Consolas, monospace; }
.source td.code { text-align: left; min-width: 30ch; } .source td.n { color: #999; } .source th { position: sticky; top: 0; }
.cfg svg { max-width: 100%; height: auto; } details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
.legend-scale span { display: inline-block; padding: 1px 8px; margin-right: 4px; font-size: 12px; }
.source td.sb { font-size: 11px; line-height: 1.2; padding: 1px 8px; } .sbar { display: flex; width: 140px; height: 6px; margin-top: 1px; background: #f2f2f2; } .sbar i { display: block; height: 100%; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(270px, 1fr)); gap: 8px 18px; align-items: start; } table.card { width: 100%; margin: 4px 0; } table.card th { text-align: left; }
.wide { overflow-x: auto; } .wide th { text-align: left; } .wide td.t { min-width: 16ch; } .scroll { max-height: 420px; overflow: auto; border: 1px solid #ddd; } .scroll table { margin: 0; }
pre.config { max-height: 360px; overflow: auto; background: #f8f8f8; border: 1px solid #ddd; padding: 8px; font: 12px/1.4 ui-monospace, Menlo, Consolas, monospace; }
@media print { body { max-width: none; padding: 0; } .source { max-height: none; overflow: visible; } details { display: block; } }
"#;

/// A whole page.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{}</title><style>{STYLE}</style></head><body>{body}</body></html>\n",
        esc(title)
    )
}

/// One mechanism's runs of the launch, for [`run_report`].
pub struct MechanismRun<'a> {
    /// The mechanism's name.
    pub mechanism: &'a str,
    /// Its program (pcs differ between mechanisms that insert instructions).
    pub prog: &'a Program,
    /// The functional run that fed `timeline`.
    pub result: &'a RunResult,
    /// What happened over issued instructions and per pc.
    pub timeline: &'a TimelineRecorder,
    /// The timed run's issues by cycle (`None` in functional mode).
    pub by_cycle: Option<&'a CycleBuckets>,
    /// The timed run's statistics and record (`None` in functional mode).
    pub timed: Option<&'a RunRecord>,
    /// The timed run itself (`None` in functional mode): the summary table takes every number of a
    /// timed report from it, since mechanisms that regroup threads by timing (DWF, TBC) form other warps
    /// in a timed run than in a functional one.
    pub timed_result: Option<&'a RunResult>,
    /// The timed run's Chrome trace file, relative to the report (`None` unless asked for).
    pub trace_file: Option<&'a str>,
    /// The timed run's timing statistics (`None` in functional mode).
    pub timing: Option<&'a TimingStats>,
    /// The timed run's idle scheduler-cycles charged per pc by cause (`None` in functional mode;
    /// [`reconverge_timing::per_pc::PcStalls`] defines the charge).
    pub pc_stalls: Option<&'a [StallCounts]>,
}

/// The source shown in the heat map.
pub struct SourceView<'a> {
    /// What it is (`kernel.cu` or `kernel.ptx`).
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
    /// CUDA lines (from `.loc`, file `file`) rather than PTX lines.
    pub cuda_file: Option<u32>,
    /// Why the heat map shows PTX lines when it does (the CUDA file was not found, or the kernel has no
    /// line information), in a sentence for the page.
    pub fallback: Option<&'a str>,
}

/// What `reconverge report` shows.
pub struct RunReport<'a> {
    /// The kernel.
    pub kernel: &'a str,
    /// The launch, in words (grid, block, warp size, configuration).
    pub launch: &'a str,
    /// Threads per warp.
    pub warp_size: u32,
    /// Per mechanism.
    pub runs: Vec<MechanismRun<'a>>,
    /// The source for the heat map.
    pub source: SourceView<'a>,
    /// The kernel's CFG (analysis report of the original module).
    pub cfg: Option<&'a FunctionReport>,
    /// The GPU configuration of the timed runs (`None` in functional mode).
    pub gpu: Option<&'a GpuConfig>,
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "–".into())
}

/// The kernel's own thread instructions (active lanes issued, mechanism-inserted instructions excluded)
/// per cycle of a timed run: the same work under every mechanism, so it ranks mechanisms as cycles do.
pub fn thread_ipc(r: &RunRecord) -> Option<f64> {
    match (r.kernel_thread_instructions, r.cycles) {
        (Some(t), Some(c)) if c > 0 => Some(t as f64 / c as f64),
        _ => None,
    }
}

/// The HTML of `reconverge report`.
pub fn run_report(r: &RunReport<'_>) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>{}</h1><p class=\"meta\">{} · mechanisms: {}</p>",
        esc(r.kernel),
        esc(r.launch),
        esc(&r.runs.iter().map(|m| m.mechanism).collect::<Vec<_>>().join(", "))
    );
    let names: Vec<&str> = r.runs.iter().map(|m| m.mechanism).collect();
    let styles = chart::styles(&names);
    if let Some(g) = r.gpu {
        numbers::config_details(&mut b, g);
    }
    summary_table(&mut b, r);
    over_run_section(&mut b, r, &styles);
    lanes_section(&mut b, r);
    histogram_section(&mut b, r, &styles);
    stall_section(&mut b, r);
    energy_section(&mut b, r);
    numbers::timing_table(&mut b, r);
    numbers::counters_section(&mut b, r);
    heat_section(&mut b, r);
    per_line::stall_lines_section(&mut b, r);
    numbers::branches_section(&mut b, r);
    cfg_section(&mut b, r);
    page(&format!("{} — reconverge report", r.kernel), &b)
}

/// A plot over the run: a y value per bucket of a mechanism's run.
type PerBucket = fn(&Bucket, u64) -> Option<f64>;

/// SIMD efficiency and structure size over the run: over cycles in a timed report, else over issued
/// warp instructions (never each line stretched to its own length); one plot of overlaid lines for a few
/// mechanisms, small multiples with shared axes for many.
fn over_run_section(b: &mut String, r: &RunReport<'_>, styles: &[Style]) {
    let by_cycle = r.runs.iter().all(|m| m.by_cycle.is_some());
    b.push_str("<h2>SIMD efficiency over the run</h2><p class=\"note\">");
    b.push_str(if by_cycle {
        "x: simulated cycles of the timed run, every SM together, so a mechanism that takes longer draws a longer line. "
    } else {
        "x: issued warp instructions (the kernel's and the mechanism's) in the functional run's issue order: a functional run has no cycles. "
    });
    if r.runs.len() > MAX_OVERLAID {
        b.push_str("One panel per mechanism; the panels share their axes. ");
    }
    let short: Vec<String> = r
        .runs
        .iter()
        .filter_map(|m| m.by_cycle.filter(|c| c.covered < c.cycles).map(|c| (m.mechanism, c)))
        .map(|(name, c)| format!("{} (cycles 0–{} of {})", esc(name), c.covered, c.cycles))
        .collect();
    if !short.is_empty() && by_cycle {
        let _ = write!(
            b,
            "The timed runs keep a timeline of a bounded number of events, so these lines stop where theirs ran out: {}.",
            short.join(", ")
        );
    }
    b.push_str("</p>");
    let x_label = if by_cycle { "cycle" } else { "issued warp instructions" };
    let plots: [(&str, &str, &str, bool, PerBucket); 2] = [
        (
            "SIMD efficiency of the kernel's instructions",
            "active lanes / warp size (%)",
            "SIMD efficiency (%)",
            true,
            |bk, w| (bk.issues > 0).then(|| bk.lanes as f64 / (bk.issues * w) as f64),
        ),
        (
            "Reconvergence structure size (stack entries, paths or pool warps, as the statistics count it)",
            "entries (mean per issue)",
            "entries (mean per issue)",
            false,
            |bk, _| (bk.all_issues() > 0).then(|| bk.structure_sum as f64 / bk.all_issues() as f64),
        ),
    ];
    for (title, y_label, short_y, percent, y) in plots {
        let series = series(r, styles, by_cycle, y);
        let x_max = series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).fold(0.0, f64::max);
        let y_max =
            if percent { 1.0 } else { series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max) };
        let spec = Spec { title, x_label, y_label, percent, y_max: Some(y_max), x_max: Some(x_max), ..Spec::default() };
        if series.len() <= MAX_OVERLAID {
            b.push_str(&chart::lines(&spec, &series));
            continue;
        }
        let _ = write!(b, "<h3>{}</h3><div class=\"panels\">", esc(title));
        for s in series {
            let name = s.name.clone();
            let panel = Spec { title: &name, y_label: short_y, size: Size::Panel, ..spec };
            b.push_str(&chart::lines(&panel, &[s]));
        }
        b.push_str("</div>");
    }
}

/// A mechanism's panel of [`lanes_section`]: its bucket width (cycles, or issued instructions) and a
/// layer per key (`(name, fill)`: the active-lane classes, then the mechanism's instructions), in
/// instructions per cycle over cycles (`by_cycle`) or as shares of each bucket's issues.
fn lane_layers(m: &MechanismRun<'_>, by_cycle: bool, keys: &[(String, String)]) -> (f64, Vec<Layer>) {
    let (width, buckets) = match m.by_cycle.filter(|_| by_cycle) {
        Some(c) => (c.width, c.buckets.clone()),
        None => m.timeline.coarse(150),
    };
    let classes = keys.len().saturating_sub(1);
    let value = |bk: &Bucket, k: usize| {
        let v = bk.by_lanes.get(k).copied().filter(|_| k < classes).unwrap_or(bk.mechanism_issues) as f64;
        if by_cycle {
            v / width.max(1) as f64
        } else {
            v / bk.all_issues().max(1) as f64
        }
    };
    let layers = keys
        .iter()
        .enumerate()
        .map(|(k, (name, fill))| Layer {
            name: name.clone(),
            fill: fill.clone(),
            values: buckets.iter().map(|bk| value(bk, k)).collect(),
        })
        .collect();
    (width as f64, layers)
}

/// One line per mechanism over its buckets (at most 150 points): x in cycles (`by_cycle`) or in issued
/// warp instructions.
fn series(r: &RunReport<'_>, styles: &[Style], by_cycle: bool, y: PerBucket) -> Vec<Series> {
    let w = u64::from(r.warp_size);
    r.runs
        .iter()
        .zip(styles)
        .map(|(m, &style)| {
            let points = match m.by_cycle.filter(|_| by_cycle) {
                // x: the middle of the bucket's cycles.
                Some(c) => c
                    .buckets
                    .iter()
                    .enumerate()
                    .filter_map(|(i, bk)| y(bk, w).map(|v| ((i as f64 + 0.5) * c.width as f64, v)))
                    .collect(),
                None => {
                    // x: the instructions issued by the end of the bucket.
                    let (width, buckets) = m.timeline.coarse(150);
                    buckets
                        .iter()
                        .enumerate()
                        .filter_map(|(i, bk)| y(bk, w).map(|v| ((i as u64 * width + bk.all_issues()) as f64, v)))
                        .collect()
                }
            };
            Series { name: m.mechanism.to_string(), points, style }
        })
        .collect()
}

/// The active-lane histogram of each mechanism, all on one y scale.
fn histogram_section(b: &mut String, r: &RunReport<'_>, styles: &[Style]) {
    let shares: Vec<Vec<Option<f64>>> = r
        .runs
        .iter()
        .map(|m| {
            let h = &m.result.stats.lane_histogram;
            let total: u64 = h.iter().sum();
            h.iter().map(|&c| Some(if total > 0 { c as f64 / total as f64 } else { 0.0 })).collect()
        })
        .collect();
    let top = shares.iter().flatten().flatten().copied().fold(0.0, f64::max);
    let many = r.runs.len() > MAX_OVERLAID;
    let _ = write!(
        b,
        "<h2>Active lanes per issued instruction</h2><p class=\"note\">The share of each mechanism's issued instructions (the kernel's own) by active lanes; every histogram has the same y scale.</p><div class=\"{}\">",
        if many { "panels" } else { "small-multiples" }
    );
    for ((m, vals), &style) in r.runs.iter().zip(shares).zip(styles) {
        let cats: Vec<String> = (1..=vals.len()).map(|k| k.to_string()).collect();
        let title = if many { m.mechanism.to_string() } else { format!("{}: active-lane histogram", m.mechanism) };
        let spec = Spec {
            title: &title,
            x_label: "active lanes",
            y_label: "share of issues (%)",
            percent: true,
            y_max: Some(top),
            size: if many { Size::Panel } else { Size::Half },
            ..Spec::default()
        };
        b.push_str(&chart::bars(&spec, &cats, &[BarSeries { name: m.mechanism.to_string(), values: vals, style }]));
    }
    b.push_str("</div>");
}

fn summary_table(b: &mut String, r: &RunReport<'_>) {
    let traces = r.runs.iter().any(|m| m.trace_file.is_some());
    b.push_str("<table><tr><th>mechanism</th><th>outcome</th><th>cycles</th><th>vs first</th><th>SIMD efficiency</th><th title=\"warp instructions per cycle\">IPC</th><th title=\"the kernel's thread instructions (active lanes) per cycle\">thread IPC</th><th>warp instructions</th><th>mechanism instructions</th><th>largest structure</th><th>divergent branches</th>");
    b.push_str(if traces { "<th>timeline</th></tr>" } else { "</tr>" });
    let base = r.runs.first().and_then(|m| m.timed).and_then(|t| t.cycles);
    let num = |x: Option<f64>| x.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into());
    for m in &r.runs {
        // One run per row: the timed one when there is one (its cycles and its warps), else the functional.
        let run = m.timed_result.unwrap_or(m.result);
        let s = &run.stats;
        let cycles = m.timed.and_then(|t| t.cycles);
        let speed = match (base, cycles) {
            (Some(a), Some(c)) if c > 0 => format!("{:.2}×", a as f64 / c as f64),
            _ => "–".into(),
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td>{speed}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {}</td>",
            esc(m.mechanism),
            esc(run.outcome()),
            cycles.map(|c| c.to_string()).unwrap_or_else(|| "–".into()),
            pct(Some(s.simd_efficiency(r.warp_size))),
            num(m.timed.and_then(|t| t.ipc)),
            num(m.timed.and_then(thread_ipc)),
            s.warp_instructions,
            s.mechanism_instructions,
            s.max_structure,
            s.divergent_branches,
            s.branches,
        );
        if traces {
            let link = m.trace_file.map(|f| format!("<a href=\"{0}\">{0}</a>", esc(f))).unwrap_or_else(|| "–".into());
            let _ = write!(b, "<td class=\"t\">{link}</td>");
        }
        b.push_str("</tr>");
    }
    let timed = r.runs.iter().any(|m| m.timed_result.is_some());
    b.push_str("</table><p class=\"note\">");
    if timed {
        b.push_str("Every number of a row comes from the mechanism's timed run; the histogram, the heat map and the plots over instructions come from its functional run, which can form other warps where the mechanism regroups threads by timing (DWF, TBC, CAPRI). ");
    }
    b.push_str("SIMD efficiency counts the kernel's own instructions; mechanism instructions are counted apart. “vs first”: the first mechanism's cycles / this one's. IPC counts warp instructions per cycle: a mechanism that splits warps into many small groups issues more of them and can show a high IPC while it finishes last; thread IPC (the kernel's own thread instructions, that is active lanes issued, without the mechanism's instructions, per cycle) counts the same work under every mechanism per cycle, so it ranks mechanisms as their cycles do.");
    b.push_str(if traces {
        " Timelines are Chrome trace-event files: open them in the Perfetto UI (ui.perfetto.dev) or chrome://tracing; one microsecond there is one simulated cycle.</p>"
    } else {
        "</p>"
    });
}

fn stall_section(b: &mut String, r: &RunReport<'_>) {
    let rows: Vec<(String, Vec<f64>)> = r
        .runs
        .iter()
        .filter_map(|m| {
            let t = m.timed?;
            let v = [
                t.stall_memory,
                t.stall_scoreboard,
                t.stall_pipeline,
                t.stall_barrier,
                t.stall_mechanism,
                t.stall_no_ready_warp,
            ];
            let slots = t.issue_slots? as f64;
            let idle: f64 = v.iter().flatten().sum::<u64>() as f64;
            let issued = (slots - idle).max(0.0);
            let mut vals = vec![issued];
            vals.extend(v.iter().map(|x| x.unwrap_or(0) as f64));
            Some((m.mechanism.to_string(), vals))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    b.push_str("<h2>Where the issue slots went</h2><p class=\"note\">Every scheduler-cycle while an SM had work either issued or idled for the most telling reason among its warps. The tables below give the timing model's other numbers (caches, DRAM, coalescing) and each mechanism's own counters side by side; the idle cycles per source line come after the heat map.</p>");
    let mut parts = vec!["issued"];
    parts.extend(per_line::CAUSES.iter().map(|(name, _)| *name));
    parts.push("no warp");
    let spec = Spec {
        title: "Scheduler issue slots by outcome",
        x_label: "share of issue slots while SMs had work (%)",
        percent: true,
        ..Spec::default()
    };
    b.push_str(&chart::stacked(&spec, &rows, &parts));
}

/// Each mechanism's energy by component as stacked bars on one scale (the configuration's `[energy]`
/// model; absent in functional mode or without one).
fn energy_section(b: &mut String, r: &RunReport<'_>) {
    let Some(gpu) = r.gpu else { return };
    let energies: Vec<(String, reconverge_energy::Energy)> = r
        .runs
        .iter()
        .filter_map(|m| Some((m.mechanism.to_string(), reconverge_energy::energy(m.timing?, gpu)?)))
        .collect();
    if energies.is_empty() {
        return;
    }
    let parts: Vec<reconverge_energy::Component> = reconverge_energy::Component::ALL
        .into_iter()
        .filter(|&c| energies.iter().any(|(_, e)| e.of(c) > 0.0))
        .collect();
    let names: Vec<&str> = parts.iter().map(|c| c.name()).collect();
    let rows: Vec<(String, Vec<f64>)> =
        energies.iter().map(|(m, e)| (m.clone(), parts.iter().map(|&c| e.of(c) * 1e6).collect())).collect();
    let _ = write!(
        b,
        "<h2>Energy</h2><p class=\"note\">Each mechanism's energy by component (µJ), priced by the configuration's \
         per-event energies ({}; docs/energy.md). The events are the timing model's counts; idle SMs and the \
         constant part grow with the run's time.</p>",
        esc(gpu.energy.as_ref().map_or("", |k| k.source.as_str()))
    );
    let spec = Spec { title: "Energy by component", x_label: "energy (µJ)", percent: false, ..Spec::default() };
    b.push_str(&chart::stacked(&spec, &rows, &names));
    b.push_str("<table><tr><th>mechanism</th><th>energy</th><th>average power</th><th>EDP (J·s)</th></tr>");
    for (m, e) in &energies {
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{:.1} W</td><td>{:.3e}</td></tr>",
            esc(m),
            crate::run::joules(e.total()),
            e.average_power(),
            e.edp()
        );
    }
    b.push_str("</table>");
}

/// Issued warp instructions by active-lane class over the run (AerialVision's warp-divergence
/// breakdown), a panel per mechanism: over cycles in a timed report (instructions per cycle, so the
/// stack's height is the kernel's issue rate), else over issued instructions (shares of each stretch's
/// issues). Mechanism-inserted instructions are a layer of their own.
fn lanes_section(b: &mut String, r: &RunReport<'_>) {
    let by_cycle = r.runs.iter().all(|m| m.by_cycle.is_some());
    let classes = crate::timeline::lane_classes(r.warp_size);
    let n = classes.len();
    let mut names: Vec<String> =
        classes.iter().map(|&(a, z)| if a == z { format!("W{a}") } else { format!("W{a}–{z}") }).collect();
    let mut fills: Vec<String> =
        (0..n).map(|k| format!("#{:06x}", cfg_svg::heat(Some(1.0 - k as f64 / (n - 1).max(1) as f64)) >> 8)).collect();
    names.push("mechanism instructions".into());
    fills.push("#8c8c8c".into());
    let keys: Vec<(String, String)> = names.iter().cloned().zip(fills.iter().cloned()).collect();
    let panels: Vec<(f64, Vec<Layer>)> = r.runs.iter().map(|m| lane_layers(m, by_cycle, &keys)).collect();
    let column_max = |(_, layers): &(f64, Vec<Layer>)| {
        let cols = layers.iter().map(|l| l.values.len()).max().unwrap_or(0);
        (0..cols).map(|i| layers.iter().filter_map(|l| l.values.get(i)).sum::<f64>()).fold(0.0, f64::max)
    };
    let y_max = if by_cycle { panels.iter().map(column_max).fold(0.0, f64::max) } else { 1.0 };
    let x_max = panels.iter().map(|(w, l)| w * l.first().map_or(0, |l| l.values.len()) as f64).fold(0.0, f64::max);
    let many = r.runs.len() > MAX_OVERLAID;
    let (a, z) = classes.first().copied().unwrap_or((1, 1));
    let class = format!("{} meaning {a} to {z} active lanes (AerialVision's warp-divergence breakdown)", names[0]);
    let _ = write!(
        b,
        "<h2>Issued instructions by active lanes over the run</h2><p class=\"note\">{}",
        if by_cycle {
            format!("The kernel's issued warp instructions per cycle (every SM together) split by how many lanes were active, {class}, and the mechanism's own instructions on top: the stack's height is the issue rate, its colours where the lanes went. x: simulated cycles of the timed run. The panels share their axes; a panel stops where its timed run's timeline ran out, as the SIMD efficiency above does.</p>")
        } else {
            format!("The share of each stretch of issued warp instructions by how many lanes were active, {class}, and the mechanism's own instructions on top. x: issued warp instructions of the functional run, which issues a warp's instructions in runs, so neighbouring stretches may hold different warps. The panels share their axes.</p>")
        }
    );
    let legend: Vec<(&str, &str)> = names.iter().zip(&fills).map(|(a, c)| (a.as_str(), c.as_str())).collect();
    b.push_str(&chart::html_legend(&legend));
    let _ = write!(b, "<div class=\"{}\">", if many { "panels" } else { "small-multiples" });
    for (m, (width, layers)) in r.runs.iter().zip(&panels) {
        let spec = Spec {
            title: m.mechanism,
            x_label: if by_cycle { "cycle" } else { "issued warp instructions" },
            y_label: if by_cycle { "warp instructions per cycle" } else { "share of issues (%)" },
            percent: !by_cycle,
            y_max: Some(y_max),
            x_max: Some(x_max),
            size: if many { Size::Panel } else { Size::Half },
            ..Spec::default()
        };
        b.push_str(&chart::stacked_areas(&spec, *width, layers));
    }
    b.push_str("</div>");
}

/// The source as a heat map: the line number and its text first, then a cell per mechanism (divergent /
/// all executions of the line's instructions, coloured by the divergent share).
fn heat_section(b: &mut String, r: &RunReport<'_>) {
    let columns: Vec<(&str, per_line::LineExecutions)> = r
        .runs
        .iter()
        .map(|m| {
            let sites = PcSite::of_program(m.prog);
            (m.mechanism, per_line::line_executions(&sites, &m.timeline.pcs.per_pc, r.source.cuda_file))
        })
        .collect();
    let kind = if r.source.cuda_file.is_some() { "CUDA" } else { "PTX" };
    let _ = write!(
        b,
        "<h2>Divergent executions per line of {}</h2><p class=\"note\">Lines are {kind} lines. A divergent execution is an issue whose group did not hold every live thread of its warp. Cells: divergent / all executions of the line's instructions; colour: the divergent share. Threads that have exited no longer count as live, which matters most under its (independent thread scheduling), whose paths need not reconverge before they exit: once the warp's other threads have exited, a path runs “converged”, and its idle lanes show only in SIMD efficiency.</p>",
        esc(r.source.name)
    );
    per_line::heat_table(b, &r.source, &columns);
}

fn cfg_section(b: &mut String, r: &RunReport<'_>) {
    let Some(f) = r.cfg else { return };
    let heat = if r.source.cuda_file.is_some() {
        format!(" (the heat map above numbers the CUDA lines of {})", esc(r.source.name))
    } else {
        String::new()
    };
    let _ = write!(
        b,
        "<h2>Control-flow graph</h2><p class=\"note\">Line numbers in the CFG are PTX lines: each block shows the PTX line of its label or first instruction and, where the kernel has line information, the CUDA line of its first instruction{heat}. Blocks coloured by the share of their instructions' executions that were divergent (green: converged, red: divergent, grey: not executed); a thick border and ◆ mark reconvergence points (immediate post-dominators of branches that may diverge); dashed edges go back.</p>"
    );
    for (i, m) in r.runs.iter().enumerate() {
        let counts = per_line::block_counts(f, &PcSite::of_program(m.prog), &m.timeline.pcs.per_pc);
        let _ = write!(
            b,
            "<details{}><summary>{}</summary><div class=\"cfg\">{}</div></details>",
            if i == 0 { " open" } else { "" },
            esc(m.mechanism),
            cfg_svg::cfg_svg(f, &counts)
        );
    }
}

/// The speedup summary of one (configuration, warp size): every mechanism over the same kernels, and the
/// kernels left out with why.
fn speedup_summary_table(b: &mut String, sm: &crate::records::SpeedupSummary) {
    let x = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.3}×"));
    let _ = write!(
        b,
        "<p class=\"note\">Speedup over pdom over the {} kernels every mechanism completed (the same kernels for every mechanism):</p><table><tr><th>mechanism</th><th>geometric mean</th><th>median</th><th>min</th><th>max</th></tr>",
        sm.kernels.len()
    );
    for m in &sm.mechanisms {
        let _ = write!(
            b,
            "<tr><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&m.mechanism),
            x(m.geomean),
            x(m.median),
            x(m.min),
            x(m.max)
        );
    }
    b.push_str("</table>");
    if let Some(e) = sm.excluded_text() {
        let _ = write!(b, "<p class=\"note\">Left out of every mean (a run without a speedup): {}</p>", esc(&e));
    }
}

/// The HTML of `compare --html`: speedup over pdom per kernel with the geometric mean, SIMD efficiency,
/// IPC and thread IPC side by side, and the tidy table. Each mechanism keeps its colour and pattern
/// ([`chart::styles`]) in every plot.
pub fn compare_report(runs: &[RunRecord], title: &str) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>{}</h1>", esc(title));
    b.push_str("<p class=\"note\">IPC counts warp instructions per cycle: a mechanism that splits warps into many small groups issues more of them and can show a high IPC while it finishes last. Thread IPC counts the kernel's own thread instructions (active lanes issued, without the mechanism's instructions) per cycle: the same work under every mechanism, so it ranks mechanisms as their cycles do.</p>");
    let mut mechs: Vec<&str> = Vec::new();
    let mut keys: Vec<(Option<&str>, u32)> = Vec::new();
    for r in runs {
        if !mechs.contains(&r.mechanism.as_str()) {
            mechs.push(&r.mechanism);
        }
        if !keys.contains(&(r.config.as_deref(), r.warp_size)) {
            keys.push((r.config.as_deref(), r.warp_size));
        }
    }
    let summaries = crate::records::speedup_summaries(runs);
    let styles = chart::styles(&mechs);
    let with_styles = |s: Vec<(String, Vec<Option<f64>>)>| -> Vec<BarSeries> {
        s.into_iter().zip(&styles).map(|((name, values), &style)| BarSeries { name, values, style }).collect()
    };
    for (config, w) in keys {
        let these: Vec<&RunRecord> =
            runs.iter().filter(|r| r.config.as_deref() == config && r.warp_size == w).collect();
        let mut kernels: Vec<String> = Vec::new();
        for r in &these {
            if !kernels.contains(&r.kernel) {
                kernels.push(r.kernel.clone());
            }
        }
        let value = |k: &str, m: &str, f: &dyn Fn(&RunRecord) -> Option<f64>| {
            these.iter().find(|r| r.kernel == k && r.mechanism == m && r.completed()).and_then(|r| f(r))
        };
        let summary = summaries.iter().find(|x| x.config.as_deref() == config && x.warp_size == w);
        let mut cats = kernels.clone();
        if let Some(sm) = summary {
            cats.push(format!("geomean ({} kernels)", sm.kernels.len()));
            cats.push("median".into());
        }
        let speed: Vec<(String, Vec<Option<f64>>)> = mechs
            .iter()
            .map(|m| {
                let mut v: Vec<Option<f64>> = kernels.iter().map(|k| value(k, m, &|r| r.speedup_over_pdom)).collect();
                if let Some(sm) = summary {
                    let line = sm.mechanisms.iter().find(|x| x.mechanism == *m);
                    v.push(line.and_then(|x| x.geomean));
                    v.push(line.and_then(|x| x.median));
                }
                (m.to_string(), v)
            })
            .collect();
        let where_ = format!("{}, warp size {w}", config.unwrap_or("functional"));
        let _ = write!(b, "<h2>{}</h2>", esc(&where_));
        let t = format!("Speedup over pdom ({where_})");
        if speed.iter().any(|s| s.1.iter().any(Option::is_some)) {
            b.push_str(&chart::bars(
                &Spec {
                    title: &t,
                    x_label: "kernel (last groups: geometric mean and median over the kernels every mechanism completed; dashed line: 1×, as fast as pdom)",
                    y_label: "pdom cycles / cycles (×)",
                    reference: Some(1.0),
                    ..Spec::default()
                },
                &cats,
                &with_styles(speed),
            ));
        }
        if let Some(sm) = summary {
            speedup_summary_table(&mut b, sm);
        }
        for (title, ylabel, percent, f) in [
            (
                "SIMD efficiency",
                "active lanes / warp size (%)",
                true,
                (|r: &RunRecord| r.simd_efficiency) as fn(&RunRecord) -> Option<f64>,
            ),
            ("IPC", "warp instructions per cycle", false, |r: &RunRecord| r.ipc),
            ("Thread IPC", "kernel thread instructions (active lanes) per cycle", false, thread_ipc),
        ] {
            let s: Vec<(String, Vec<Option<f64>>)> =
                mechs.iter().map(|m| (m.to_string(), kernels.iter().map(|k| value(k, m, &f)).collect())).collect();
            if s.iter().all(|x| x.1.iter().all(Option::is_none)) {
                continue;
            }
            let t = format!("{title} ({where_})");
            b.push_str(&chart::bars(
                &Spec {
                    title: &t,
                    x_label: "kernel",
                    y_label: ylabel,
                    percent,
                    y_max: if percent { Some(1.0) } else { None },
                    ..Spec::default()
                },
                &kernels,
                &with_styles(s),
            ));
        }
    }
    b.push_str("<h2>All runs</h2><p class=\"note\">Copy the table into a spreadsheet, or use <code>--csv</code>.</p><table><tr><th>kernel</th><th>config</th><th>warp</th><th>mechanism</th><th>outcome</th><th>check</th><th>cycles</th><th>vs pdom</th><th>SIMD eff</th><th title=\"warp instructions per cycle\">IPC</th><th title=\"the kernel's thread instructions (active lanes) per cycle\">thread IPC</th><th>warp instructions</th><th>mechanism instructions</th></tr>");
    for r in runs {
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.kernel),
            esc(r.config.as_deref().unwrap_or("")),
            r.warp_size,
            esc(&r.mechanism),
            esc(&r.outcome),
            esc(r.check.as_deref().unwrap_or("")),
            r.cycles.map(|c| c.to_string()).unwrap_or_default(),
            r.speedup_over_pdom.map(|s| format!("{s:.3}")).unwrap_or_default(),
            r.simd_efficiency.map(|s| format!("{:.1}%", 100.0 * s)).unwrap_or_default(),
            r.ipc.map(|s| format!("{s:.3}")).unwrap_or_default(),
            thread_ipc(r).map(|s| format!("{s:.3}")).unwrap_or_default(),
            r.warp_instructions.map(|s| s.to_string()).unwrap_or_default(),
            r.mechanism_instructions.map(|s| s.to_string()).unwrap_or_default(),
        );
    }
    b.push_str("</table>");
    page(title, &b)
}
