//! Self-contained HTML reports (`reconverge report`, `compare --html`): inline SVG and CSS, no network,
//! no JavaScript. Every mechanism appears by its name; nothing here knows any mechanism.

pub mod cfg_svg;
pub mod chart;

use crate::cfg::FunctionReport;
use crate::records::RunRecord;
use crate::timeline::TimelineRecorder;
use chart::{Series, Spec};
use reconverge_program::Program;
use reconverge_sim::RunResult;
use std::fmt::Write;

/// Line and bar colours, one per mechanism in the order given (Tableau 10: distinguishable, and with the
/// dash patterns of [`chart`] readable in print).
pub const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/// Escapes text for HTML and SVG.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

const STYLE: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #222; margin: 0 auto; max-width: 1240px; padding: 24px 32px 64px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 36px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.meta { color: #555; margin: 0 0 16px; } p.note { color: #555; font-size: 13px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 8px 0; }
th, td { border-bottom: 1px solid #e3e3e3; padding: 4px 10px; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
figure.plot { margin: 12px 0; } figure.plot svg { width: 100%; height: auto; }
svg .title { font-size: 16px; font-weight: 600; fill: #222; } svg .axis { font-size: 13px; fill: #333; }
svg .tick { font-size: 12px; fill: #555; } svg .legend { font-size: 13px; fill: #222; }
svg .grid { stroke: #e8e8e8; } svg .frame { stroke: #888; } svg .reference { stroke: #222; stroke-dasharray: 5 4; }
td.t { text-align: left; }
.small-multiples { display: grid; grid-template-columns: 1fr 1fr; gap: 4px 24px; }
.source { max-height: 640px; overflow: auto; border: 1px solid #ddd; }
.source table { margin: 0; width: 100%; } .source td { border: 0; padding: 0 8px; white-space: pre; font: 12px/1.5 ui-monospace, Menlo, Consolas, monospace; }
.source td.code { text-align: left; } .source td.n { color: #999; } .source th { position: sticky; top: 0; }
.cfg svg { max-width: 100%; height: auto; } details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
.legend-scale span { display: inline-block; padding: 1px 8px; margin-right: 4px; font-size: 12px; }
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
    /// What happened over time and per pc.
    pub timeline: &'a TimelineRecorder,
    /// The timed run's statistics and record (`None` in functional mode).
    pub timed: Option<&'a RunRecord>,
    /// The timed run's Chrome trace file, relative to the report (`None` in functional mode).
    pub trace_file: Option<&'a str>,
}

/// The source shown in the heat map.
pub struct SourceView<'a> {
    /// What it is (`kernel.cu` or `kernel.ptx`).
    pub name: &'a str,
    /// Its text.
    pub text: &'a str,
    /// CUDA lines (from `.loc`, file `file`) rather than PTX lines.
    pub cuda_file: Option<u32>,
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
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "–".into())
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
    summary_table(&mut b, r);
    b.push_str("<h2>SIMD efficiency over the run</h2>");
    b.push_str(&chart::lines(
        &Spec {
            title: "SIMD efficiency of the kernel's instructions",
            x_label: "progress through the run (% of its issued warp instructions; the table gives the totals)",
            y_label: "active lanes / warp size (%)",
            percent: true,
            y_max: Some(1.0),
            reference: None,
            narrow: false,
            first_color: 0,
            x_percent: true,
        },
        &series(r, |bk, w| (bk.issues > 0).then(|| bk.lanes as f64 / (bk.issues * w) as f64)),
    ));
    b.push_str(&chart::lines(
        &Spec {
            title: "Reconvergence structure size (stack entries, paths or pool warps, as the statistics count it)",
            x_label: "progress through the run (% of its issued warp instructions; the table gives the totals)",
            y_label: "entries (mean per issue)",
            percent: false,
            y_max: None,
            reference: None,
            narrow: false,
            first_color: 0,
            x_percent: true,
        },
        &series(r, |bk, _| (bk.all_issues() > 0).then(|| bk.structure_sum as f64 / bk.all_issues() as f64)),
    ));
    b.push_str("<h2>Active lanes per issued instruction</h2><div class=\"small-multiples\">");
    for (i, m) in r.runs.iter().enumerate() {
        let h = &m.result.stats.lane_histogram;
        let total: u64 = h.iter().sum();
        let cats: Vec<String> = (1..=h.len()).map(|k| k.to_string()).collect();
        let vals: Vec<Option<f64>> =
            h.iter().map(|&c| Some(if total > 0 { c as f64 / total as f64 } else { 0.0 })).collect();
        let title = format!("{}: active-lane histogram", m.mechanism);
        b.push_str(&chart::bars(
            &Spec {
                title: &title,
                x_label: "active lanes",
                y_label: "share of issues (%)",
                percent: true,
                y_max: None,
                reference: None,
                narrow: true,
                first_color: i,
                x_percent: false,
            },
            &cats,
            &[(m.mechanism.to_string(), vals)],
        ));
    }
    b.push_str("</div>");
    stall_section(&mut b, r);
    heat_section(&mut b, r);
    cfg_section(&mut b, r);
    page(&format!("{} — reconverge report", r.kernel), &b)
}

/// One line per mechanism over its buckets (at most 300 points), x in issued instructions.
fn series(r: &RunReport<'_>, y: impl Fn(&crate::timeline::Bucket, u64) -> Option<f64>) -> Vec<Series> {
    r.runs
        .iter()
        .map(|m| {
            let (width, buckets) = m.timeline.coarse(150);
            let total = (m.result.stats.warp_instructions.max(1)) as f64;
            // x: the share of the run's issued instructions done at the end of the bucket.
            let points = buckets
                .iter()
                .enumerate()
                .filter_map(|(i, bk)| {
                    let done = (i as u64 * width + bk.all_issues()) as f64 / total;
                    y(bk, u64::from(r.warp_size)).map(|v| (done.min(1.0), v))
                })
                .collect();
            Series { name: m.mechanism.to_string(), points }
        })
        .collect()
}

fn summary_table(b: &mut String, r: &RunReport<'_>) {
    b.push_str("<table><tr><th>mechanism</th><th>outcome</th><th>cycles</th><th>vs first</th><th>SIMD efficiency</th><th>IPC</th><th>warp instructions</th><th>mechanism instructions</th><th>largest structure</th><th>divergent branches</th><th>timeline</th></tr>");
    let base = r.runs.first().and_then(|m| m.timed).and_then(|t| t.cycles);
    for m in &r.runs {
        let s = &m.result.stats;
        let cycles = m.timed.and_then(|t| t.cycles);
        let speed = match (base, cycles) {
            (Some(a), Some(c)) if c > 0 => format!("{:.2}×", a as f64 / c as f64),
            _ => "–".into(),
        };
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td>{speed}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} of {}</td><td class=\"t\">{}</td></tr>",
            esc(m.mechanism),
            esc(m.result.outcome()),
            cycles.map(|c| c.to_string()).unwrap_or_else(|| "–".into()),
            pct(Some(s.simd_efficiency(r.warp_size))),
            m.timed.and_then(|t| t.ipc).map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into()),
            s.warp_instructions,
            s.mechanism_instructions,
            s.max_structure,
            s.divergent_branches,
            s.branches,
            m.trace_file.map(|f| format!("<a href=\"{0}\">{0}</a>", esc(f))).unwrap_or_else(|| "–".into())
        );
    }
    b.push_str("</table><p class=\"note\">SIMD efficiency counts the kernel's own instructions; mechanism instructions are counted apart. “vs first”: the first mechanism's cycles / this one's. Timelines are Chrome trace-event files: open them in the Perfetto UI (ui.perfetto.dev) or chrome://tracing.</p>");
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
    b.push_str("<h2>Where the issue slots went</h2>");
    b.push_str(&chart::stacked(
        &Spec {
            title: "Scheduler issue slots by outcome",
            x_label: "share of issue slots while SMs had work (%)",
            y_label: "",
            percent: true,
            y_max: None,
            reference: None,
            narrow: false,
            first_color: 0,
            x_percent: false,
        },
        &rows,
        &["issued", "memory", "register dependency", "busy unit or branch", "barrier", "mechanism", "no warp"],
    ));
}

/// Per source line: executions and divergent executions per mechanism, coloured by the divergent share.
fn heat_section(b: &mut String, r: &RunReport<'_>) {
    let lines: Vec<&str> = r.source.text.lines().collect();
    // (line -> (executions, divergent)) per mechanism.
    let per: Vec<std::collections::BTreeMap<u32, (u64, u64)>> = r
        .runs
        .iter()
        .map(|m| {
            let mut map = std::collections::BTreeMap::new();
            for (pc, c) in m.timeline.per_pc.iter().enumerate() {
                let info = &m.prog.info[pc];
                let line = match r.source.cuda_file {
                    Some(f) => match info.loc {
                        Some(l) if l.file == f => l.line,
                        _ => continue,
                    },
                    None => info.ptx_line,
                };
                if line == 0 || c.executions == 0 {
                    continue;
                }
                let e: &mut (u64, u64) = map.entry(line).or_default();
                e.0 += c.executions;
                e.1 += c.divergent;
            }
            map
        })
        .collect();
    let first = per.iter().filter_map(|m| m.keys().next().copied()).min().unwrap_or(1);
    let last = per.iter().filter_map(|m| m.keys().next_back().copied()).max().unwrap_or(0).min(lines.len() as u32);
    let _ = write!(
        b,
        "<h2>Divergent executions per line of {}</h2><p class=\"note\">A divergent execution is an issue whose group did not hold every live thread of its warp. Cells: divergent / all executions of the line's instructions; colour: the divergent share.</p><p class=\"legend-scale\">",
        esc(r.source.name)
    );
    for s in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(b, "<span style=\"background:#{:06x}\">{:.0}%</span>", cfg_svg::heat(Some(s)) >> 8, 100.0 * s);
    }
    b.push_str("</p><div class=\"source\"><table><tr><th>line</th>");
    for m in &r.runs {
        let _ = write!(b, "<th>{}</th>", esc(m.mechanism));
    }
    b.push_str("<th style=\"text-align:left\">source</th></tr>");
    for line in first..=last {
        let text = lines.get(line as usize - 1).copied().unwrap_or("");
        let _ = write!(b, "<tr><td class=\"n\">{line}</td>");
        for m in &per {
            match m.get(&line) {
                Some(&(e, d)) => {
                    let _ = write!(
                        b,
                        "<td style=\"background:#{:06x}\" title=\"{d} of {e} executions divergent\">{d}/{e}</td>",
                        cfg_svg::heat(Some(d as f64 / e as f64)) >> 8
                    );
                }
                None => b.push_str("<td></td>"),
            }
        }
        let _ = write!(b, "<td class=\"code\">{}</td></tr>", esc(text));
    }
    b.push_str("</table></div>");
}

fn cfg_section(b: &mut String, r: &RunReport<'_>) {
    let Some(f) = r.cfg else { return };
    b.push_str("<h2>Control-flow graph</h2><p class=\"note\">Blocks coloured by the share of their instructions' executions that were divergent (green: converged, red: divergent, grey: not executed); a thick border and ◆ mark reconvergence points (immediate post-dominators of branches that may diverge); dashed edges go back.</p>");
    for (i, m) in r.runs.iter().enumerate() {
        let mut counts = vec![(0u64, 0u64); f.blocks.len()];
        for (pc, c) in m.timeline.per_pc.iter().enumerate() {
            let info = &m.prog.info[pc];
            if info.func != 0 {
                continue;
            }
            if let Some(k) = f.blocks.iter().position(|x| x.index == info.block) {
                counts[k].0 += c.executions;
                counts[k].1 += c.divergent;
            }
        }
        let _ = write!(
            b,
            "<details{}><summary>{}</summary><div class=\"cfg\">{}</div></details>",
            if i == 0 { " open" } else { "" },
            esc(m.mechanism),
            cfg_svg::cfg_svg(f, &counts)
        );
    }
}

/// The HTML of `compare --html`: speedup over pdom per kernel with the geometric mean, SIMD efficiency and
/// IPC side by side, and the tidy table.
pub fn compare_report(runs: &[RunRecord], title: &str) -> String {
    let mut b = String::new();
    let _ = write!(b, "<h1>{}</h1>", esc(title));
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
        let mut cats = kernels.clone();
        cats.push("geomean".into());
        let speed: Vec<(String, Vec<Option<f64>>)> = mechs
            .iter()
            .map(|m| {
                let mut v: Vec<Option<f64>> = kernels.iter().map(|k| value(k, m, &|r| r.speedup_over_pdom)).collect();
                let logs: Vec<f64> = v.iter().flatten().map(|x| x.ln()).collect();
                v.push((!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp()));
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
                    x_label: "kernel (last group: geometric mean; dashed line: 1×, as fast as pdom)",
                    y_label: "pdom cycles / cycles (×)",
                    percent: false,
                    y_max: None,
                    reference: Some(1.0),
                    narrow: false,
                    first_color: 0,
                    x_percent: false,
                },
                &cats,
                &speed,
            ));
        }
        for (title, ylabel, percent, f) in [
            (
                "SIMD efficiency",
                "active lanes / warp size (%)",
                true,
                (|r: &RunRecord| r.simd_efficiency) as fn(&RunRecord) -> Option<f64>,
            ),
            ("IPC", "warp instructions per cycle", false, |r: &RunRecord| r.ipc),
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
                    reference: None,
                    narrow: false,
                    first_color: 0,
                    x_percent: false,
                },
                &kernels,
                &s,
            ));
        }
    }
    b.push_str("<h2>All runs</h2><p class=\"note\">Copy the table into a spreadsheet, or use <code>--csv</code>.</p><table><tr><th>kernel</th><th>config</th><th>warp</th><th>mechanism</th><th>outcome</th><th>check</th><th>cycles</th><th>vs pdom</th><th>SIMD eff</th><th>IPC</th><th>warp instructions</th><th>mechanism instructions</th></tr>");
    for r in runs {
        let _ = write!(
            b,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
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
            r.warp_instructions.map(|s| s.to_string()).unwrap_or_default(),
            r.mechanism_instructions.map(|s| s.to_string()).unwrap_or_default(),
        );
    }
    b.push_str("</table>");
    page(title, &b)
}
