//! Seed 004's dynamic scalarization metrics as people and scripts read them: the `scalarization` object
//! of `run --scalarize --json`, its text form, and the reproduce table that sets our kernels beside the
//! paper's averages.

pub use reconverge_records::scalarization::{scalarization_json, ConvergentShare, Reduction, ScalarizationJson};
use reconverge_sim::scalarize::ScalarizeStats;
use std::fmt::Write;

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", 100.0 * v)).unwrap_or_else(|| "-".into())
}

/// The readable form (appended to `run`'s summary).
pub fn scalarization_text(s: &ScalarizeStats, warp_size: u32) -> String {
    let j = scalarization_json(s, warp_size);
    let c = &j.convergent_share;
    let i = &j.issued;
    let (b, z, r) = (&j.baseline, &j.scalarized, &j.reduction);
    let mut out = String::new();
    let _ = writeln!(out, "scalarization (seed 004, warp size {warp_size}):");
    let mut exact = match j.oracle_exact {
        Some(e) if e < 1.0 => {
            format!(" (oracle exact for {:.1}% of the divergent part, a lower bound elsewhere)", 100.0 * e)
        }
        _ => String::new(),
    };
    if j.oracle_over_budget > 0 {
        let _ = write!(
            exact,
            "\n  note: the oracle's work budget ran out; {} divergent regions count a lower bound (the better of a greedy schedule and the mechanism's own)",
            j.oracle_over_budget
        );
    }
    let rows: Vec<(&str, String)> = vec![
        (
            "convergent share",
            format!(
                "CA {} / +VA {} / +exit {} / +dcp {} / oracle {}{exact}",
                pct(Some(c.ca)),
                pct(Some(c.ca_va)),
                pct(Some(c.exit)),
                pct(Some(c.dcp)),
                pct(Some(c.oracle))
            ),
        ),
        (
            "issued",
            format!(
                "{} scalar, {} converged, {} dcp, {} diverged; +{} base-address",
                i.scalar, i.converged, i.dcp, i.diverged, i.base
            ),
        ),
        ("operations", format!("{} -> {} ({})", b.operations, z.operations, pct(r.operations.map(|x| -x)))),
        (
            "register reads",
            format!("{} -> {} ({})", b.register_reads, z.register_reads, pct(r.register_reads.map(|x| -x))),
        ),
        (
            "register writes",
            format!("{} -> {} ({})", b.register_writes, z.register_writes, pct(r.register_writes.map(|x| -x))),
        ),
        (
            "memory addresses",
            format!("{} -> {} ({})", b.address_counts, z.address_counts, pct(r.address_counts.map(|x| -x))),
        ),
        ("memory data", format!("{} -> {} ({})", b.data_accesses, z.data_accesses, pct(r.data_accesses.map(|x| -x)))),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "  {k:<22} {v}");
    }
    out
}

/// Seed 004's averages over its 23 benchmarks (§4): convergent shares at warp size 4 (Figure 4) and the
/// reductions at warp sizes 4 and 32 (Figure 6; the text gives no averages for 8 and 16).
pub struct PaperAverages {
    /// Warp size.
    pub warp_size: u32,
    /// CA, +VA, +exit, +dcp, oracle (fractions), where given.
    pub convergent: Option<[f64; 5]>,
    /// Operations, register reads and writes, address counts, data accesses (reductions), where given.
    pub reduction: Option<[f64; 4]>,
}

/// The paper's averages, by warp size.
pub const PAPER: [PaperAverages; 4] = [
    PaperAverages {
        warp_size: 4,
        convergent: Some([0.32, 0.57, 0.66, 0.97, 0.97]),
        reduction: Some([0.23, 0.24, 0.37, 0.30]),
    },
    PaperAverages { warp_size: 8, convergent: None, reduction: None },
    PaperAverages { warp_size: 16, convergent: None, reduction: None },
    PaperAverages { warp_size: 32, convergent: None, reduction: Some([0.29, 0.31, 0.47, 0.38]) },
];

/// One row of the per-run scalarization table.
pub struct ScalarizationRow<'a> {
    /// The kernel.
    pub kernel: &'a str,
    /// The mechanism.
    pub mechanism: &'a str,
    /// Whether the run completed (averages use completed runs only).
    pub completed: bool,
    /// The metrics.
    pub metrics: &'a ScalarizationJson,
}

fn cells(j: &ScalarizationJson) -> Vec<String> {
    let c = &j.convergent_share;
    let r = &j.reduction;
    let neg = |x: Option<f64>| pct(x.map(|v| -v));
    vec![
        pct(Some(c.ca)),
        pct(Some(c.ca_va)),
        pct(Some(c.exit)),
        pct(Some(c.dcp)),
        pct(Some(c.oracle)),
        neg(r.operations),
        neg(r.register_accesses),
        neg(r.address_counts),
        neg(r.data_accesses),
    ]
}

const HEADER: [&str; 9] = ["CA", "+VA", "+exit", "+dcp", "oracle", "ops", "regs", "addr", "data"];

/// The per-run table: convergent shares and reductions of every run.
pub fn runs_table(rows: &[ScalarizationRow<'_>]) -> crate::table::Table {
    let mut head = vec!["kernel", "warp", "mechanism"];
    head.extend(HEADER);
    let mut t = crate::table::Table::new(&head);
    for r in rows {
        let mut v = vec![r.kernel.to_string(), r.metrics.warp_size.to_string(), r.mechanism.to_string()];
        if r.completed {
            v.extend(cells(r.metrics));
        } else {
            v.extend(HEADER.iter().map(|_| "partial".to_string()));
        }
        t.row(v);
    }
    t
}

/// The reproduce table: per mechanism and warp size, the arithmetic mean over the completed runs (as the
/// paper averages its benchmarks), each followed by the paper's average where it gives one.
pub fn reproduce_table(rows: &[ScalarizationRow<'_>]) -> crate::table::Table {
    let mut head = vec!["warp", "mechanism", "kernels"];
    head.extend(HEADER);
    let mut t = crate::table::Table::new(&head);
    let mut keys: Vec<(u32, &str)> = rows.iter().map(|r| (r.metrics.warp_size, r.mechanism)).collect();
    keys.sort();
    keys.dedup();
    for (w, m) in keys {
        let done: Vec<&ScalarizationJson> = rows
            .iter()
            .filter(|r| r.completed && r.metrics.warp_size == w && r.mechanism == m)
            .map(|r| r.metrics)
            .collect();
        let n = done.len() as f64;
        let mean = |f: &dyn Fn(&ScalarizationJson) -> Option<f64>| {
            let v: Vec<f64> = done.iter().filter_map(|j| f(j)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let c = |f: fn(&ConvergentShare) -> f64| mean(&|j: &ScalarizationJson| Some(f(&j.convergent_share)));
        let neg = |x: Option<f64>| pct(x.map(|v| -v));
        let mut v = vec![w.to_string(), m.to_string(), format!("{n}")];
        v.extend([
            pct(c(|x| x.ca)),
            pct(c(|x| x.ca_va)),
            pct(c(|x| x.exit)),
            pct(c(|x| x.dcp)),
            pct(c(|x| x.oracle)),
            neg(mean(&|j| j.reduction.operations)),
            neg(mean(&|j| j.reduction.register_accesses)),
            neg(mean(&|j| j.reduction.address_counts)),
            neg(mean(&|j| j.reduction.data_accesses)),
        ]);
        t.row(v);
        let next_is_other_w = rows.iter().all(|r| r.metrics.warp_size != w || r.mechanism <= m);
        if next_is_other_w {
            if let Some(p) =
                PAPER.iter().find(|p| p.warp_size == w && (p.convergent.is_some() || p.reduction.is_some()))
            {
                let mut v = vec![w.to_string(), "seed 004 (paper)".to_string(), "23".to_string()];
                match p.convergent {
                    Some(c) => v.extend(c.iter().map(|x| pct(Some(*x)))),
                    None => v.extend((0..5).map(|_| "-".to_string())),
                }
                match p.reduction {
                    Some(r) => v.extend(r.iter().map(|x| pct(Some(-x)))),
                    None => v.extend((0..4).map(|_| "-".to_string())),
                }
                t.row(v);
            }
        }
    }
    t
}
