//! Counts per source line and per CFG block, and the source listing they are shown beside: shared by
//! `report` (a column per mechanism: divergent executions, idle cycles by cause) and `exec --html` (a
//! kernel's launches summed). Pcs are placed by their [`PcSite`] (a decoded program's, or one that crossed
//! a process boundary), so both pages group counts the same way.

use super::{cfg_svg, chart, esc, RunReport, SourceView};
use crate::cfg::FunctionReport;
use reconverge_timing::per_pc::{PcCount, PcSite};
use reconverge_timing::stats::StallCounts;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::RangeInclusive;

/// A cause of idle scheduler-cycles as the page names it, and its count in a [`StallCounts`].
pub type Cause = (&'static str, fn(&StallCounts) -> u64);

/// Per source line: executions and divergent executions.
pub type LineExecutions = BTreeMap<u32, (u64, u64)>;

/// The causes of idle scheduler-cycles a pc can be charged ([`reconverge_timing::per_pc::PcStalls`]),
/// as the page names them, each with its count; `no_ready_warp` is charged to no pc.
pub const CAUSES: [Cause; 5] = [
    ("memory", |s| s.memory),
    ("register dependency", |s| s.scoreboard),
    ("busy unit or branch", |s| s.pipeline),
    ("barrier", |s| s.barrier),
    ("mechanism", |s| s.mechanism),
];

/// The colour of cause `k` of [`CAUSES`]: the one the issue-slot bars give it (after "issued").
pub fn cause_color(k: usize) -> &'static str {
    chart::COLORS[(k + 1) % chart::COLORS.len()]
}

/// Per source line ([`PcSite::line`]: CUDA lines of `.loc` file `cuda_file`, else PTX lines): the values
/// of the pcs on it added up by `add`; and the sum of the pcs on no line.
pub fn by_line<T, A: Default>(
    sites: &[PcSite],
    values: &[T],
    cuda_file: Option<u32>,
    add: impl Fn(&mut A, &T),
) -> (BTreeMap<u32, A>, A) {
    let mut map = BTreeMap::new();
    let mut none = A::default();
    for (site, v) in sites.iter().zip(values) {
        match site.line(cuda_file) {
            Some(l) => add(map.entry(l).or_default(), v),
            None => add(&mut none, v),
        }
    }
    (map, none)
}

/// Executions and divergent executions per line (lines never executed left out).
pub fn line_executions(sites: &[PcSite], counts: &[PcCount], cuda_file: Option<u32>) -> LineExecutions {
    let (mut map, _) = by_line(sites, counts, cuda_file, |a: &mut (u64, u64), c: &PcCount| {
        a.0 += c.executions;
        a.1 += c.divergent;
    });
    map.retain(|_, e| e.0 > 0);
    map
}

/// Executions and divergent executions per block of the kernel's CFG `f` (by index in `f.blocks`).
pub fn block_counts(f: &FunctionReport, sites: &[PcSite], counts: &[PcCount]) -> Vec<(u64, u64)> {
    let index: BTreeMap<u32, usize> = f.blocks.iter().enumerate().map(|(k, b)| (b.index, k)).collect();
    let mut out = vec![(0, 0); f.blocks.len()];
    for (s, c) in sites.iter().zip(counts) {
        if let Some(&k) = index.get(&s.block).filter(|_| s.func == 0) {
            out[k].0 += c.executions;
            out[k].1 += c.divergent;
        }
    }
    out
}

/// The lines from the first to the last any of `maps` holds (at most `nlines`).
pub fn span<'a, V: 'a>(maps: impl Iterator<Item = &'a BTreeMap<u32, V>> + Clone, nlines: usize) -> RangeInclusive<u32> {
    let first = maps.clone().filter_map(|m| m.keys().next().copied()).min().unwrap_or(1);
    let last = maps.filter_map(|m| m.keys().next_back().copied()).max().unwrap_or(0);
    first.max(1)..=last.min(nlines as u32)
}

/// A source listing: `source`'s lines `lines`, numbered, with a column per name of `columns` whose cells
/// `cell(column, line)` writes (a whole `<td>`); `extra` holds rows to add before and after the listing.
pub fn source_table(
    b: &mut String,
    source: &SourceView<'_>,
    lines: RangeInclusive<u32>,
    columns: &[&str],
    cell: &dyn Fn(usize, u32) -> String,
    extra: [&str; 2],
) {
    let text: Vec<&str> = source.text.lines().collect();
    b.push_str("<div class=\"source\"><table><tr><th>line</th><th style=\"text-align:left\">source</th>");
    for c in columns {
        let _ = write!(b, "<th>{}</th>", esc(c));
    }
    b.push_str("</tr>");
    b.push_str(extra[0]);
    for line in lines {
        let code = (line as usize).checked_sub(1).and_then(|i| text.get(i)).copied().unwrap_or("");
        let _ = write!(b, "<tr><td class=\"n\">{line}</td><td class=\"code\">{}</td>", esc(code));
        for k in 0..columns.len() {
            b.push_str(&cell(k, line));
        }
        b.push_str("</tr>");
    }
    b.push_str(extra[1]);
    b.push_str("</table></div>");
}

/// The heat map of divergent executions per line: the source with a column per `columns` entry (its
/// name and its lines' executions and divergent executions), each cell coloured by its divergent share,
/// after a note that says why the lines are PTX lines (when they are) and the colour scale.
pub fn heat_table(b: &mut String, source: &SourceView<'_>, columns: &[(&str, LineExecutions)]) {
    if let Some(why) = source.fallback {
        let _ = write!(b, "<p class=\"warn\">{}</p>", esc(why));
    }
    let scale: Vec<(String, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|&s| (format!("{:.0}%", 100.0 * s), format!("#{:06x}", cfg_svg::heat(Some(s)) >> 8)))
        .collect();
    let scale: Vec<(&str, &str)> = scale.iter().map(|(a, c)| (a.as_str(), c.as_str())).collect();
    b.push_str(&chart::html_legend(&scale));
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    let lines = span(columns.iter().map(|c| &c.1), source.text.lines().count());
    let cell = |k: usize, line: u32| match columns[k].1.get(&line) {
        Some(&(e, d)) => format!(
            "<td style=\"background:#{:06x}\" title=\"{d} of {e} executions divergent\">{d}/{e}</td>",
            cfg_svg::heat(Some(d as f64 / e.max(1) as f64)) >> 8
        ),
        None => "<td></td>".into(),
    };
    source_table(b, source, lines, &names, &cell, ["", ""]);
}

/// The idle scheduler-cycles per line by cause, per mechanism of a timed report: the definition, the
/// colours of the causes, then the source with a cell per mechanism (the line's cycles and a bar split by
/// cause, all bars on one scale), a first row with each mechanism's total and a last with what no line
/// holds.
pub fn stall_lines_section(b: &mut String, r: &RunReport<'_>) {
    let runs: Vec<(&str, &[StallCounts], Vec<PcSite>)> =
        r.runs.iter().filter_map(|m| Some((m.mechanism, m.pc_stalls?, PcSite::of_program(m.prog)))).collect();
    if runs.is_empty() {
        return;
    }
    let cuda = r.source.cuda_file;
    let per: Vec<(BTreeMap<u32, StallCounts>, StallCounts)> = runs
        .iter()
        .map(|(_, stalls, sites)| by_line(sites, stalls, cuda, |a: &mut StallCounts, s: &StallCounts| a.merge(s)))
        .map(|(mut map, none)| {
            map.retain(|_, s| total(s) > 0);
            (map, none)
        })
        .collect();
    let kind = if cuda.is_some() { "CUDA" } else { "PTX" };
    let _ = write!(
        b,
        "<h2>Idle cycles per line of {}</h2><p class=\"note\">Lines are {kind} lines. Each scheduler-cycle in which a scheduler issued nothing while a warp waited is charged to the line of the instruction that warp waits to issue: of the scheduler's warps, the first in its order whose wait gave the cycle its cause (the cause in the issue-slot bars above). A warp without an instruction to issue (at a barrier, or held by its mechanism) is charged the instruction it issued last: the barrier it waits behind, the branch or reconvergence point where its mechanism holds it. Cycles in which the scheduler had no warp at all are charged to no line, so each column sums to the mechanism's idle slots but its “no warp” ones. Cells: idle scheduler-cycles; bars: split by cause, on one scale for the whole table; hover for the counts.</p>",
        esc(r.source.name)
    );
    let legend: Vec<(&str, &str)> = CAUSES.iter().enumerate().map(|(k, (name, _))| (*name, cause_color(k))).collect();
    b.push_str(&chart::html_legend(&legend));
    let scale = per.iter().flat_map(|(m, _)| m.values().map(total)).max().unwrap_or(0);
    let names: Vec<&str> = runs.iter().map(|r| r.0).collect();
    let row = |label: &str, cells: Vec<String>| {
        format!("<tr><td class=\"n\"></td><td class=\"code\">{label}</td>{}</tr>", cells.concat())
    };
    let all: Vec<String> = runs
        .iter()
        .map(|(_, stalls, _)| {
            let mut sum = StallCounts::default();
            stalls.iter().for_each(|s| sum.merge(s));
            stall_cell(&sum, 0)
        })
        .collect();
    let head = row("(total: every line, and no line)", all);
    let tail = if per.iter().any(|(_, none)| total(none) > 0) {
        row(
            "(no line: inserted by the mechanism, or without line information)",
            per.iter().map(|(_, n)| stall_cell(n, scale)).collect(),
        )
    } else {
        String::new()
    };
    let lines = span(per.iter().map(|p| &p.0), r.source.text.lines().count());
    let cell = |k: usize, line: u32| per[k].0.get(&line).map_or_else(|| "<td></td>".into(), |s| stall_cell(s, scale));
    source_table(b, &r.source, lines, &names, &cell, [&head, &tail]);
}

/// Every cause of `s` summed.
fn total(s: &StallCounts) -> u64 {
    CAUSES.iter().map(|(_, f)| f(s)).sum()
}

/// A cell of idle cycles: the total, and (with a `scale`, the largest cell's total) a bar split by cause;
/// the counts by cause on hover.
fn stall_cell(s: &StallCounts, scale: u64) -> String {
    let sum = total(s);
    if sum == 0 {
        return "<td class=\"sb\">0</td>".into();
    }
    let title: Vec<String> =
        CAUSES.iter().filter(|(_, f)| f(s) > 0).map(|(name, f)| format!("{name} {}", f(s))).collect();
    let mut bar = String::new();
    if scale > 0 {
        bar.push_str("<span class=\"sbar\">");
        for (k, (_, f)) in CAUSES.iter().enumerate().filter(|(_, (_, f))| f(s) > 0) {
            let _ = write!(
                bar,
                "<i style=\"width:{:.1}%;background:{}\"></i>",
                100.0 * f(s) as f64 / scale as f64,
                cause_color(k)
            );
        }
        bar.push_str("</span>");
    }
    format!("<td class=\"sb\" title=\"{}\">{sum}{bar}</td>", title.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(line: u32, block: u32) -> PcSite {
        PcSite { ptx_line: line, block, ..PcSite::default() }
    }

    #[test]
    fn counts_are_summed_by_line_and_what_has_no_line_is_kept_apart() {
        let sites = [site(3, 0), site(3, 0), site(0, 1), site(5, 1)];
        let stalls = [1u64, 2, 4, 8].map(|m| StallCounts { memory: m, ..StallCounts::default() });
        let (map, none) = by_line(&sites, &stalls, None, |a: &mut StallCounts, s: &StallCounts| a.merge(s));
        assert_eq!((map[&3].memory, map[&5].memory, none.memory), (3, 8, 4));
        let counts = [1u64, 0, 5, 0].map(|e| PcCount { executions: e, lanes: 0, divergent: e / 2 });
        let lines = line_executions(&sites, &counts, None);
        assert_eq!(
            lines.into_iter().collect::<Vec<_>>(),
            [(3, (1, 0))],
            "line 5 never ran, the pc on no line is left out"
        );
        assert_eq!(span([BTreeMap::from([(3, 0u8)]), BTreeMap::from([(9, 0)])].iter(), 6), 3..=6);
        let cell = stall_cell(&StallCounts { memory: 3, barrier: 1, ..StallCounts::default() }, 8);
        assert!(
            cell.contains(">4<") && cell.contains("width:37.5%") && cell.contains("title=\"memory 3 · barrier 1\""),
            "{cell}"
        );
    }
}
