//! The derived columns of a table of runs, computed by the same Rust code as `reconverge compare`:
//! `speedup_over_pdom` (for `rc.sweep`, whose rows are gathered one run at a time) and the speedup summary
//! over the kernels every mechanism completed (`rc.summary`).

use pyo3::prelude::*;
use reconverge_report::records::{fill_speedups, speedup_summaries, summary_rows, RunRecord, BASELINE};

/// One run as `rc.sweep` knows it: (kernel label, configuration label, warp size, mechanism, outcome,
/// cycles). The labels identify the run's work: two launches of one kernel with different inputs have
/// different kernel labels, two configurations given differently have different configuration labels.
type RunKey = (String, String, u32, String, String, Option<u64>);

fn records(rows: Vec<RunKey>) -> Vec<RunRecord> {
    let mut runs: Vec<RunRecord> = rows
        .into_iter()
        .map(|(kernel, config, warp_size, mechanism, outcome, cycles)| RunRecord {
            kernel,
            config: Some(config),
            warp_size,
            mechanism,
            outcome,
            cycles,
            ..RunRecord::default()
        })
        .collect();
    fill_speedups(&mut runs, BASELINE);
    runs
}

/// `speedup_over_pdom` of each run, as `compare` fills it: pdom's cycles over the run's for the same
/// kernel label, configuration label and warp size, both completed; `None` otherwise.
#[pyfunction]
pub(crate) fn speedups_over_pdom(rows: Vec<RunKey>) -> Vec<Option<f64>> {
    records(rows).iter().map(|r| r.speedup_over_pdom).collect()
}

/// The speedup summary of the runs as CSV (`compare --csv --summary`): per (configuration, warp size,
/// mechanism) the geometric mean, median, min and max over the kernels every mechanism completed.
#[pyfunction]
pub(crate) fn speedup_summary(rows: Vec<RunKey>) -> String {
    reconverge_report::records::to_csv(&summary_rows(&speedup_summaries(&records(rows))))
}
