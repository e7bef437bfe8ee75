//! Speedups over the baseline, summarised over **one** kernel set per (configuration, warp size): the
//! kernels every listed mechanism completed (and the baseline with it). A kernel some mechanism did not
//! complete (a deadlock, a limit, a broken entry, a warp size the kernel does not support) is left out
//! of every mechanism's mean and listed with the reason, so each line of a summary compares the same
//! work. Each mechanism gets the geometric mean and the median of its speedups beside the extremes.

use crate::run::RunRecord;
use serde::Serialize;

/// The summary of one (configuration, warp size) group of runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpeedupSummary {
    /// The GPU configuration (`None` in functional mode).
    pub config: Option<String>,
    /// Threads per warp.
    pub warp_size: u32,
    /// The kernels every mechanism of the group (and the baseline) completed, sorted: the set every mean
    /// of [`mechanisms`](Self::mechanisms) is taken over.
    pub kernels: Vec<String>,
    /// The kernels left out, with why.
    pub excluded: Vec<Excluded>,
    /// One line per mechanism, in the order the runs list them.
    pub mechanisms: Vec<MechanismSpeedup>,
}

/// A kernel left out of a summary, and the runs that put it out.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Excluded {
    /// The kernel.
    pub kernel: String,
    /// `(mechanism, outcome)` of each run without a speedup: the outcome (`deadlock`, `limit`, `error`,
    /// `broken`), or `not run` when the kernel has no run under that mechanism (e.g. a warp size it does
    /// not support), or `no baseline` for a completed run whose baseline run did not complete.
    pub reasons: Vec<(String, String)>,
}

/// One mechanism's speedups over the common kernel set.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MechanismSpeedup {
    /// The mechanism.
    pub mechanism: String,
    /// The geometric mean of its speedups (`None` when the common set is empty).
    pub geomean: Option<f64>,
    /// Their median (the mean of the two middle values for an even count).
    pub median: Option<f64>,
    /// The smallest.
    pub min: Option<f64>,
    /// The largest.
    pub max: Option<f64>,
    /// The geometric mean of its energy speedups (the baseline's energy over its own) over the same
    /// kernels (`None` when a run of the set has no energy).
    pub energy_geomean: Option<f64>,
    /// The geometric mean of its energy-delay-product speedups over the same kernels.
    pub edp_geomean: Option<f64>,
}

impl SpeedupSummary {
    /// The text of the excluded kernels, `kernel (mech: outcome, ...); ...`, or `None` when none.
    pub fn excluded_text(&self) -> Option<String> {
        (!self.excluded.is_empty()).then(|| {
            self.excluded
                .iter()
                .map(|e| {
                    let why: Vec<String> = e.reasons.iter().map(|(m, o)| format!("{m}: {o}")).collect();
                    format!("{} ({})", e.kernel, why.join(", "))
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    }
}

/// The summaries of `records` (after [`fill_speedups`](crate::fill_speedups)), one per (configuration,
/// warp size) in the order the records first list them. Groups without a single speedup (no baseline run,
/// functional runs) are left out.
pub fn speedup_summaries(records: &[RunRecord]) -> Vec<SpeedupSummary> {
    let mut groups: Vec<(Option<String>, u32)> = Vec::new();
    for r in records {
        let g = (r.config.clone(), r.warp_size);
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
        .into_iter()
        .filter_map(|(config, warp_size)| {
            let runs: Vec<&RunRecord> =
                records.iter().filter(|r| r.config == config && r.warp_size == warp_size).collect();
            runs.iter().any(|r| r.speedup_over_pdom.is_some()).then(|| summarise(config, warp_size, &runs))
        })
        .collect()
}

fn ordered_unique<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

fn summarise(config: Option<String>, warp_size: u32, runs: &[&RunRecord]) -> SpeedupSummary {
    let mechs = ordered_unique(runs.iter().map(|r| r.mechanism.as_str()));
    let mut kernel_names = ordered_unique(runs.iter().map(|r| r.kernel.as_str()));
    kernel_names.sort_unstable();
    let find = |k: &str, m: &str| runs.iter().find(|r| r.kernel == k && r.mechanism == m);
    let mut kernels = Vec::new();
    let mut excluded = Vec::new();
    for k in kernel_names {
        let reasons: Vec<(String, String)> = mechs
            .iter()
            .filter_map(|m| match find(k, m) {
                None => Some((m.to_string(), "not run".to_string())),
                Some(r) if r.speedup_over_pdom.is_some() => None,
                Some(r) if r.completed() => Some((m.to_string(), "no baseline".to_string())),
                Some(r) => Some((m.to_string(), r.outcome.clone())),
            })
            .collect();
        if reasons.is_empty() {
            kernels.push(k.to_string());
        } else {
            excluded.push(Excluded { kernel: k.to_string(), reasons });
        }
    }
    let mechanisms = mechs
        .iter()
        .map(|m| {
            let s: Vec<f64> = kernels.iter().filter_map(|k| find(k, m).and_then(|r| r.speedup_over_pdom)).collect();
            let of = |f: fn(&RunRecord) -> Option<f64>| -> Option<Vec<f64>> {
                kernels.iter().map(|k| find(k, m).and_then(|r| f(r))).collect()
            };
            let mut line = speedup_stats(m, s);
            line.energy_geomean = of(|r| r.energy_speedup_over_pdom).and_then(|v| geomean(&v));
            line.edp_geomean = of(|r| r.edp_speedup_over_pdom).and_then(|v| geomean(&v));
            line
        })
        .collect();
    SpeedupSummary { config, warp_size, kernels, excluded, mechanisms }
}

/// The geometric mean (`None` of nothing).
fn geomean(s: &[f64]) -> Option<f64> {
    let n = s.len();
    (n > 0).then(|| (s.iter().map(|x| x.ln()).sum::<f64>() / n as f64).exp())
}

fn speedup_stats(mechanism: &str, mut s: Vec<f64>) -> MechanismSpeedup {
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let geomean = geomean(&s);
    let median = (n > 0).then(|| if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 });
    MechanismSpeedup {
        mechanism: mechanism.to_string(),
        geomean,
        median,
        min: s.first().copied(),
        max: s.last().copied(),
        energy_geomean: None,
        edp_geomean: None,
    }
}

/// One CSV/JSON row per (configuration, warp size, mechanism) of a summary: the tidy form of
/// `compare --summary`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    /// The GPU configuration.
    pub config: Option<String>,
    /// Threads per warp.
    pub warp_size: u32,
    /// The mechanism.
    pub mechanism: String,
    /// The geometric mean of its speedups over the common kernel set.
    pub geomean_speedup: Option<f64>,
    /// Their median.
    pub median_speedup: Option<f64>,
    /// The smallest.
    pub min_speedup: Option<f64>,
    /// The largest.
    pub max_speedup: Option<f64>,
    /// The geometric mean of its energy speedups over the same kernels.
    pub geomean_energy_speedup: Option<f64>,
    /// The geometric mean of its energy-delay-product speedups over the same kernels.
    pub geomean_edp_speedup: Option<f64>,
    /// How many kernels the common set holds (the same for every mechanism of the group).
    pub kernels: usize,
    /// The kernels left out of the group's means, with why (`kernel (mech: outcome, ...); ...`).
    pub excluded: String,
}

/// The summaries as tidy rows.
pub fn summary_rows(summaries: &[SpeedupSummary]) -> Vec<SummaryRow> {
    summaries
        .iter()
        .flat_map(|s| {
            let excluded = s.excluded_text().unwrap_or_default();
            s.mechanisms.iter().map(move |m| SummaryRow {
                config: s.config.clone(),
                warp_size: s.warp_size,
                mechanism: m.mechanism.clone(),
                geomean_speedup: m.geomean,
                median_speedup: m.median,
                min_speedup: m.min,
                max_speedup: m.max,
                geomean_energy_speedup: m.energy_geomean,
                geomean_edp_speedup: m.edp_geomean,
                kernels: s.kernels.len(),
                excluded: excluded.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::timed;
    use crate::run::{fill_speedups, BASELINE};

    #[test]
    fn every_mean_is_over_the_kernels_every_mechanism_completed() {
        let mut r = vec![
            timed("a", "pdom", "completed", 400),
            timed("a", "tbc", "completed", 100),
            timed("a", "none", "completed", 800),
            timed("b", "pdom", "completed", 100),
            timed("b", "tbc", "completed", 100),
            timed("b", "none", "completed", 100),
            timed("c", "pdom", "completed", 100),
            timed("c", "tbc", "completed", 20),
            timed("c", "none", "deadlock", 100),
            timed("d", "pdom", "limit", 100),
            timed("d", "tbc", "completed", 20),
        ];
        fill_speedups(&mut r, BASELINE);
        let s = speedup_summaries(&r);
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.kernels, ["a", "b"], "c (none deadlocked) and d (pdom hit the limit) are out");
        let tbc = s.mechanisms.iter().find(|m| m.mechanism == "tbc").expect("tbc");
        assert!((tbc.geomean.unwrap() - 2.0).abs() < 1e-12, "sqrt(4 × 1), not including c's 5x");
        assert_eq!(tbc.median, Some(2.5));
        assert_eq!((tbc.min, tbc.max), (Some(1.0), Some(4.0)));
        let none = s.mechanisms.iter().find(|m| m.mechanism == "none").expect("none");
        assert!((none.geomean.unwrap() - 0.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(
            s.excluded,
            [
                Excluded { kernel: "c".into(), reasons: vec![("none".into(), "deadlock".into())] },
                Excluded {
                    kernel: "d".into(),
                    reasons: vec![
                        ("pdom".into(), "limit".into()),
                        ("tbc".into(), "no baseline".into()),
                        ("none".into(), "not run".into())
                    ]
                },
            ]
        );
        assert_eq!(
            s.excluded_text().as_deref(),
            Some("c (none: deadlock); d (pdom: limit, tbc: no baseline, none: not run)")
        );
        let rows = summary_rows(std::slice::from_ref(s));
        assert_eq!(rows.len(), 3);
        assert!(rows.iter().all(|x| x.kernels == 2));
    }

    #[test]
    fn groups_are_per_configuration_and_warp_size_and_need_a_baseline() {
        let mut r = vec![timed("a", "pdom", "completed", 100), timed("a", "tbc", "completed", 50)];
        let mut other = timed("a", "tbc", "completed", 50);
        other.warp_size = 16;
        r.push(other);
        fill_speedups(&mut r, BASELINE);
        let s = speedup_summaries(&r);
        assert_eq!(s.len(), 1, "warp 16 has no pdom run, so no speedups and no summary");
        assert_eq!(s[0].warp_size, 32);
        assert_eq!(s[0].mechanisms[1].median, Some(2.0));
    }
}
