//! The HTML page of a whole program's launches (`reconverge exec --html`): per-kernel totals, cycles and
//! SIMD efficiency launch by launch, each kernel's lines and CFG with their executions summed over its
//! launches, and the launches in a table. The page is bounded: every launch counts in the totals, but only
//! the first [`MAX_PAGE_LAUNCHES`] are kept one by one ([`ExecLaunches`]) and the lines of the first
//! [`MAX_PAGE_KERNELS`] kernels ([`reconverge_records::per_pc::ProgramPcs`]), and the page says how many
//! it leaves out and where to find them all (`--stats`).

use crate::cfg::FunctionReport;
use crate::html::chart::{self, Series, Size, Spec};
use crate::html::{cfg_svg, esc, page, per_line, SourceView};
use crate::records::pct;
use reconverge_records::aggregate::KernelTotal;
use reconverge_records::per_pc::KernelPcs;
use reconverge_records::sampling::SampledCycles;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The most launches the page shows one by one (plots and table).
pub const MAX_PAGE_LAUNCHES: usize = 1000;

/// The most kernels whose lines and CFG the page shows (the first launched).
pub const MAX_PAGE_KERNELS: usize = 16;

/// One kernel's lines and CFG with its executions summed over its launches, as the page shows them.
pub struct KernelLines<'a> {
    /// The kernel's map and summed counts.
    pub pcs: &'a KernelPcs,
    /// The source of its heat map: its module's PTX, or the CUDA file its `.loc` lines name.
    pub source: SourceView<'a>,
    /// Its CFG (the module's PTX as written, before any mechanism's pass), when it was found.
    pub cfg: Option<&'a FunctionReport>,
}

/// The kernels whose lines the page shows, and what it leaves out.
pub struct ExecLines<'a> {
    /// The kernels, in order of first launch.
    pub kernels: Vec<KernelLines<'a>>,
    /// Kernels launched beyond [`MAX_PAGE_KERNELS`].
    pub kernels_left_out: u64,
    /// Launches whose executions are in no kernel shown.
    pub launches_left_out: u64,
}

/// One launch as the page shows it: a few numbers, not the launch's whole statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchRow {
    /// The launch's number (from 1).
    pub launch: Option<u64>,
    /// The kernel (PTX name).
    pub kernel: String,
    /// Grid dimensions.
    pub grid: String,
    /// Block dimensions.
    pub block: String,
    /// Cycles: measured, or under `exec --sample` the launch's sampled cycles (`None` in functional mode).
    pub cycles: Option<u64>,
    /// The 95% half-width of an estimated launch's cycles (`exec --sample`; `None` when measured).
    pub cycles_error: Option<u64>,
    /// Warp instructions.
    pub warp_instructions: Option<u64>,
    /// SIMD efficiency (0..1).
    pub simd_efficiency: Option<f64>,
    /// Divergent branches.
    pub divergent_branches: Option<u64>,
    /// How the launch ended.
    pub outcome: String,
}

impl LaunchRow {
    /// The row of a launch line (the shim's statistics of one launch).
    pub fn of(l: &Map<String, Value>) -> LaunchRow {
        let n = |k: &str| l.get(k).and_then(Value::as_u64);
        let text = |k: &str| l.get(k).and_then(Value::as_str).unwrap_or("–").to_string();
        let sampled = SampledCycles::of(l);
        LaunchRow {
            launch: n("launch"),
            kernel: text("kernel"),
            grid: dims(l.get("grid")),
            block: dims(l.get("block")),
            cycles: sampled.map(|s| s.cycles).or(n("cycles")),
            cycles_error: sampled.filter(|s| s.estimated > 0).map(|s| s.error),
            warp_instructions: n("warp_instructions"),
            simd_efficiency: l.get("simd_efficiency").and_then(Value::as_f64),
            divergent_branches: n("divergent_branches"),
            outcome: text("outcome"),
        }
    }
}

/// A program's launches as the page needs them, in memory bounded however many launches there are: what
/// the first launch ran under, the count of all launches, and the first [`MAX_PAGE_LAUNCHES`] rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExecLaunches {
    /// The mechanism (the first launch's).
    pub mechanism: Option<String>,
    /// The warp size (the first launch's).
    pub warp_size: Option<u64>,
    /// The GPU configuration's name (`None` in functional mode).
    pub config: Option<String>,
    /// Launches seen.
    pub total: u64,
    /// The first [`MAX_PAGE_LAUNCHES`] launches.
    pub rows: Vec<LaunchRow>,
}

impl ExecLaunches {
    /// Counts one launch line, keeping its row while fewer than [`MAX_PAGE_LAUNCHES`] are kept.
    pub fn push(&mut self, l: &Map<String, Value>) {
        if self.total == 0 {
            self.mechanism = l.get("mechanism").and_then(Value::as_str).map(str::to_string);
            self.warp_size = l.get("warp_size").and_then(Value::as_u64);
            self.config = l.get("config").and_then(|c| c.get("name")).and_then(Value::as_str).map(str::to_string);
        }
        self.total += 1;
        if self.rows.len() < MAX_PAGE_LAUNCHES {
            self.rows.push(LaunchRow::of(l));
        }
    }

    /// Launches counted but not kept one by one.
    pub fn left_out(&self) -> u64 {
        self.total.saturating_sub(self.rows.len() as u64)
    }
}

/// A count, or `–`.
fn count(v: Option<u64>) -> String {
    v.map_or("–".into(), |v| v.to_string())
}

/// A total's count `key`, or `–`.
fn total(s: &Map<String, Value>, key: &str) -> String {
    count(s.get(key).and_then(Value::as_u64))
}

/// The largest structure a run held, whichever kind the mechanism has.
fn structure(s: &Map<String, Value>) -> String {
    ["max_stack_depth", "max_paths", "max_pool_warps"]
        .iter()
        .find_map(|k| s.get(*k).and_then(Value::as_u64).map(|v| v.to_string()))
        .unwrap_or_else(|| "–".into())
}

/// Text of a dimension array (`[4, 1, 1]` as `4×1×1`).
fn dims(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        Some(a) => a.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("×"),
        None => "–".into(),
    }
}

/// Plural `s` of `n` things (`es` after `launch`).
fn plural(n: u64, es: bool) -> &'static str {
    match (n == 1, es) {
        (true, _) => "",
        (false, true) => "es",
        (false, false) => "s",
    }
}

/// The page: `program` is the command line, `launches` the program's launches, `kernels` the per-kernel
/// totals (in order of first launch) over all of them, `lines` the kernels' executions per line (`None`:
/// the runtime sent none).
pub fn exec_html(
    program: &str,
    launches: &ExecLaunches,
    kernels: &[KernelTotal],
    lines: Option<&ExecLines<'_>>,
) -> String {
    let mut body = String::new();
    let n = launches.total;
    let _ = write!(
        body,
        "<h1>{}</h1><p class=\"meta\">{n} launch{} of {} kernel{} under <b>{}</b>, warp size {}, {}</p>",
        esc(program),
        plural(n, true),
        kernels.len(),
        plural(kernels.len() as u64, false),
        esc(launches.mechanism.as_deref().unwrap_or("–")),
        count(launches.warp_size),
        launches
            .config
            .as_ref()
            .map_or("functional simulation (no cycles)".to_string(), |c| format!("configuration {}", esc(c)))
    );
    body.push_str("<h2>Per kernel</h2><table><tr><th>kernel</th><th>launches</th><th>cycles</th><th>warp instructions</th><th>SIMD efficiency</th><th>divergent branches</th><th>max structure</th><th>energy</th><th>outcome</th></tr>");
    let mut estimated = false;
    for KernelTotal { kernel: name, stats: s } in kernels {
        let sampled = SampledCycles::of(s);
        let some_estimated = sampled.is_some_and(|c| c.estimated > 0);
        estimated |= some_estimated;
        // Energy is measured for timed launches only: with estimated ones the total would leave them out.
        let energy = s.get("energy").and_then(|e| e.get("total_j")).and_then(Value::as_f64).filter(|_| !some_estimated);
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&reconverge_ir::names::short_name(name)),
            total(s, "launches"),
            sampled.map_or_else(|| total(s, "cycles"), |c| c.text()),
            total(s, "warp_instructions"),
            pct(s.get("simd_efficiency").and_then(Value::as_f64)),
            total(s, "divergent_branches"),
            structure(s),
            energy.map_or_else(|| "–".into(), crate::run::joules),
            esc(s.get("outcome").and_then(Value::as_str).unwrap_or("–"))
        );
    }
    body.push_str("</table><p class=\"note\">Totals combine every launch by kind: counts are summed, structure sizes are maxima, ratios are recomputed from the summed parts.</p>");
    if estimated {
        body.push_str(
            "<p class=\"note\">Sampled (<code>--sample</code>): cycles are the timed launches' measured cycles \
             and the others' estimates, ± the sum of the estimates' 95% half-widths; energy, measured for timed \
             launches only, is left out where launches were estimated.</p>",
        );
    }
    if launches.left_out() > 0 {
        let _ = write!(
            body,
            "<p class=\"note\">Launch by launch, this page shows the first {} of the {n} launches and leaves out \
             the other {}; <code>reconverge exec --stats FILE</code> writes every launch, one JSON line each.</p>",
            launches.rows.len(),
            launches.left_out()
        );
    }
    body.push_str(&plots(&launches.rows, kernels));
    if let Some(l) = lines {
        lines_section(&mut body, l, launches.mechanism.as_deref().unwrap_or("–"));
    }
    body.push_str(&launch_table(launches));
    page(&format!("reconverge exec {program}"), &body)
}

/// Cycles (or warp instructions in functional mode) and SIMD efficiency per launch, a line per kernel.
fn plots(rows: &[LaunchRow], kernels: &[KernelTotal]) -> String {
    let timed = rows.iter().any(|r| r.cycles.is_some());
    let label = if timed { "cycles" } else { "warp instructions" };
    let names: Vec<String> = kernels.iter().map(|k| reconverge_ir::names::short_name(&k.kernel)).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let styles = chart::styles(&refs);
    let series = |stat: &dyn Fn(&LaunchRow) -> Option<f64>| -> Vec<Series> {
        kernels
            .iter()
            .zip(&names)
            .zip(&styles)
            .map(|((k, name), style)| Series {
                name: name.clone(),
                points: rows
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.kernel == k.kernel)
                    .filter_map(|(i, r)| Some((r.launch.unwrap_or(i as u64 + 1) as f64, stat(r)?)))
                    .collect(),
                style: *style,
            })
            .collect()
    };
    let spec = |title, y_label, percent| Spec {
        title,
        x_label: "launch",
        y_label,
        percent,
        y_max: if percent { Some(1.0) } else { None },
        x_max: None,
        reference: None,
        size: Size::Wide,
    };
    let title = format!("{label} per launch");
    let work = |r: &LaunchRow| if timed { r.cycles } else { r.warp_instructions }.map(|v| v as f64);
    let mut out = String::from("<h2>Launch by launch</h2>");
    out.push_str(&chart::lines(&spec(&title, label, false), &series(&work)));
    out.push_str(&chart::lines(
        &spec("SIMD efficiency per launch", "SIMD efficiency", true),
        &series(&|r: &LaunchRow| r.simd_efficiency),
    ));
    out
}

/// Each kernel's heat map of divergent executions per line and its CFG, summed over its launches (the
/// report's heat map and CFG).
fn lines_section(out: &mut String, l: &ExecLines<'_>, mechanism: &str) {
    let _ = write!(
        out,
        "<h2>Lines and control flow per kernel</h2><p class=\"note\">Each kernel's own instructions summed over all its launches under {}: per source line, divergent / all executions of the line's instructions, coloured by the divergent share (a divergent execution is an issue whose group did not hold every live thread of its warp), and the CFG of its PTX coloured the same way (green: converged, red: divergent, grey: not executed; a thick border and ◆ mark reconvergence points; dashed edges go back).</p>",
        esc(mechanism)
    );
    if l.kernels_left_out > 0 || l.launches_left_out > 0 {
        let _ = write!(
            out,
            "<p class=\"note\">This page shows the lines of the first {MAX_PAGE_KERNELS} kernels launched; it leaves out {} more kernel{} and the executions of {} launch{} (of kernels left out, or that could not be placed).</p>",
            l.kernels_left_out,
            plural(l.kernels_left_out, false),
            l.launches_left_out,
            plural(l.launches_left_out, true)
        );
    }
    for k in &l.kernels {
        let _ = write!(
            out,
            "<h3>{} ({} launch{}, lines of {})</h3>",
            esc(&reconverge_ir::names::short_name(&k.pcs.map.kernel)),
            k.pcs.launches,
            plural(k.pcs.launches, true),
            esc(k.source.name)
        );
        let executions = per_line::line_executions(&k.pcs.map.sites, &k.pcs.counts, k.source.cuda_file);
        per_line::heat_table(out, &k.source, &[("all launches", executions)]);
        if let Some(f) = k.cfg {
            let counts = per_line::block_counts(f, &k.pcs.map.sites, &k.pcs.counts);
            let _ = write!(
                out,
                "<details><summary>CFG of {}</summary><div class=\"cfg\">{}</div></details>",
                esc(&reconverge_ir::names::short_name(&k.pcs.map.kernel)),
                cfg_svg::cfg_svg(f, &counts)
            );
        }
    }
}

/// The launches kept, in a collapsed table.
fn launch_table(launches: &ExecLaunches) -> String {
    let shown = launches.rows.len();
    let what = if launches.left_out() > 0 {
        format!("The first {shown} of {} launches", launches.total)
    } else {
        format!("All {shown} launch{}", plural(shown as u64, true))
    };
    let mut out = format!(
        "<details><summary>{what}</summary><table><tr><th>launch</th><th>kernel</th><th>grid</th><th>block</th><th>cycles</th><th>warp instructions</th><th>SIMD efficiency</th><th>divergent branches</th><th>outcome</th></tr>"
    );
    for r in &launches.rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            count(r.launch),
            esc(&reconverge_ir::names::short_name(&r.kernel)),
            r.grid,
            r.block,
            match (r.cycles, r.cycles_error) {
                (Some(c), Some(e)) => format!("≈ {c} ± {e}"),
                (c, _) => count(c),
            },
            count(r.warp_instructions),
            pct(r.simd_efficiency),
            count(r.divergent_branches),
            esc(&r.outcome)
        );
    }
    out.push_str("</table></details>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(n: u64, kernel: &str) -> Map<String, Value> {
        let v = json!({"launch": n, "kernel": kernel, "mechanism": "pdom", "warp_size": 32, "config": null,
            "grid": [2, 1, 1], "block": [32, 1, 1], "warp_instructions": 10, "simd_efficiency": 0.566,
            "divergent_branches": 1, "outcome": "completed", "cycles": null});
        v.as_object().cloned().expect("an object")
    }

    /// Issue 37: the page held every launch; it keeps at most MAX_PAGE_LAUNCHES and says how many it
    /// leaves out and where to find them.
    #[test]
    fn the_page_keeps_a_bounded_number_of_launches_and_says_so() {
        let mut all = ExecLaunches::default();
        let extra = 5;
        for n in 1..=(MAX_PAGE_LAUNCHES as u64 + extra) {
            all.push(&line(n, "_Z4tickPj"));
        }
        assert_eq!(all.rows.len(), MAX_PAGE_LAUNCHES);
        assert_eq!((all.total, all.left_out()), (MAX_PAGE_LAUNCHES as u64 + extra, extra));
        assert_eq!(all.mechanism.as_deref(), Some("pdom"));
        let total = KernelTotal { kernel: "_Z4tickPj".into(), stats: line(0, "_Z4tickPj") };
        let html = exec_html("./launches", &all, &[total], None);
        assert!(html.contains(&format!("leaves out the other {extra}")) && html.contains("--stats FILE"), "note");
        assert!(html.contains(&format!("The first {MAX_PAGE_LAUNCHES} of {} launches", all.total)));
        assert!(html.contains("56.6%") && !html.contains("0.566"), "SIMD efficiency as a percentage");
        let mut few = ExecLaunches::default();
        few.push(&line(1, "k"));
        let html = exec_html("./one", &few, &[], None);
        assert!(html.contains("All 1 launch<") && !html.contains("leaves out"), "nothing left out");
    }

    /// `exec --sample`: an estimated launch's row carries its sampled cycles and bound, the kernel's total
    /// its sampled cycles ± the summed bound, energy (timed launches only) is left out and a note says so.
    #[test]
    fn a_sampled_program_shows_estimates_with_their_bound() {
        let sampled = |n: u64, cycles: Option<u64>, s: Value| {
            let mut l = line(n, "k");
            l.insert("cycles".into(), json!(cycles));
            l.insert("sampled".into(), s);
            l
        };
        let timed = sampled(
            1,
            Some(100),
            json!({"cycles": 100, "cycles_error": 0, "timed_launches": 1, "estimated_launches": 0}),
        );
        let estimated =
            sampled(2, None, json!({"cycles": 98, "cycles_error": 4, "timed_launches": 0, "estimated_launches": 1}));
        let mut all = ExecLaunches::default();
        all.push(&timed);
        all.push(&estimated);
        assert_eq!((all.rows[0].cycles, all.rows[0].cycles_error), (Some(100), None));
        assert_eq!((all.rows[1].cycles, all.rows[1].cycles_error), (Some(98), Some(4)));
        let mut stats = line(0, "k");
        stats.insert(
            "sampled".into(),
            json!({"cycles": 198, "cycles_error": 4, "timed_launches": 1, "estimated_launches": 1}),
        );
        stats.insert("energy".into(), json!({"total_j": 1e-6}));
        let html = exec_html("./p", &all, &[KernelTotal { kernel: "k".into(), stats }], None);
        assert!(html.contains("<td>198 ± 4</td>") && html.contains("≈ 98 ± 4"), "{html}");
        assert!(html.contains("Sampled (<code>--sample</code>)") && !html.contains("µJ"), "energy left out");
    }

    /// A kernel's lines and CFG summed over its launches: the heat map counts every launch, the CFG is
    /// coloured by the same counts, and what the page leaves out is said.
    #[test]
    fn the_page_sums_each_kernels_lines_over_its_launches() {
        use reconverge_records::per_pc::{KernelMap, LaunchPcs, ProgramPcs};
        use reconverge_timing::per_pc::{PcCounter, PcSite};
        let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n.reg .pred %p<2>;\n.reg .b32 %r<3>;\nmov.u32 %r1, %tid.x;\nsetp.lt.u32 %p1, %r1, 5;\n@%p1 bra $L__BB0_2;\nmov.u32 %r2, 0;\n$L__BB0_2:\nret;\n}\n";
        let module = reconverge_ptx::parse(ptx).expect("parses");
        let opts = reconverge_program::DecodeOptions { source: Some(ptx.into()), ..Default::default() };
        let loaded = reconverge_sim::load(&module, None, reconverge_mechanism::Mechanism::Pdom, &opts).expect("loads");
        let prog = loaded.program();
        let launch = reconverge_program::LaunchConfig { block: [32, 1, 1], ..Default::default() };
        let map = KernelMap {
            kernel: "k".into(),
            module: "p:module0.ptx".into(),
            ptx: ptx.into(),
            sites: PcSite::of_program(prog),
            cuda_files: Vec::new(),
        };
        let mut pcs = ProgramPcs::default();
        pcs.map(map, MAX_PAGE_KERNELS);
        for n in 1..=3 {
            let mut c = PcCounter::new(prog);
            let r = reconverge_sim::run(&loaded, &launch, &[][..], &mut c);
            assert!(r.error.is_none());
            pcs.launch(&LaunchPcs {
                launch: n,
                kernel: "k".into(),
                module: "p:module0.ptx".into(),
                counts: c.executed(),
            });
        }
        pcs.launch(&LaunchPcs { launch: 4, kernel: "other".into(), module: "p:module0.ptx".into(), counts: vec![] });
        let report = crate::cfg_report(&module, "k.ptx", ptx, None, None);
        let k = &pcs.kernels[0];
        let lines = ExecLines {
            kernels: vec![KernelLines {
                pcs: k,
                source: SourceView { name: "k.ptx", text: ptx, cuda_file: None, fallback: None },
                cfg: report.functions.first(),
            }],
            kernels_left_out: 0,
            launches_left_out: pcs.launches_left_out,
        };
        let html = exec_html("./k", &ExecLaunches::default(), &[], Some(&lines));
        assert!(html.contains("<h3>k (3 launches, lines of k.ptx)</h3>"), "{html}");
        // The branch ran once per launch with the whole warp; line 11 only by the 27 lanes that fell through.
        assert!(html.contains("<td class=\"code\">@%p1 bra $L__BB0_2;</td><td style=\"background:#a6dba0\" title=\"0 of 3 executions divergent\">0/3</td>"), "{html}");
        assert!(html.contains("<td class=\"n\">11</td><td class=\"code\">mov.u32 %r2, 0;</td><td style=\"background:#f46d43\" title=\"3 of 3 executions divergent\">3/3</td>"), "{html}");
        assert!(
            html.contains("CFG of k") && html.contains("<svg") && html.contains("3 exec, 100% divergent"),
            "{html}"
        );
        assert!(html.contains("the executions of 1 launch "), "the other kernel's launch is left out: {html}");
    }
}
