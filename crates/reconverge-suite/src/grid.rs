//! A sweep over the suite: kernels × configurations × warp sizes × mechanisms, each run once (the
//! `compare` command and the Python package's `compare` both run it).

use crate::manifest::Manifest;
use crate::runner::{run_entry, EntryOutcome, Mode, Verdict};
use crate::Loader;
use reconverge_mechanism::Mechanism;
use reconverge_records::{Check, RunRecord};

/// One run of a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Index of the kernel in the manifest.
    pub entry: usize,
    /// Index of the GPU configuration (`None`: functional).
    pub config: Option<usize>,
    /// Threads per warp.
    pub warp: u32,
    /// The mechanism.
    pub mech: Mechanism,
}

/// The runs of a sweep in a fixed order (kernel, configuration, warp size, mechanism), skipping warp
/// sizes a kernel does not support. `only` empty: every kernel; `configs` 0: functional.
pub fn jobs(manifest: &Manifest, only: &[String], configs: usize, warps: &[u32], mechs: &[Mechanism]) -> Vec<Job> {
    let mut out = Vec::new();
    let cfgs: Vec<Option<usize>> = if configs == 0 { vec![None] } else { (0..configs).map(Some).collect() };
    for (entry, e) in manifest.kernels.iter().enumerate() {
        if !only.is_empty() && !only.contains(&e.name) {
            continue;
        }
        for &config in &cfgs {
            for &warp in warps {
                if !e.supports_warp_size(warp) {
                    continue;
                }
                out.extend(mechs.iter().map(|&mech| Job { entry, config, warp, mech }));
            }
        }
    }
    out
}

/// Runs one job (one host thread per timed run, so a sweep parallelises over runs).
pub fn run_job(
    manifest: &Manifest,
    job: &Job,
    configs: &[reconverge_timing::GpuConfig],
    load: &Loader<'_>,
    max_instructions: u64,
    scalarize: bool,
) -> EntryOutcome {
    let mode = match job.config {
        Some(c) => Mode::Timed { gpu: &configs[c], threads: 1 },
        None => Mode::Functional,
    };
    run_entry(&manifest.kernels[job.entry], job.mech, job.warp, load, max_instructions, mode, scalarize)
}

/// The suite's verdict as a `check` value, plus a description of the problem if any.
pub fn check_of(v: &Verdict) -> (Check, Option<String>) {
    match v {
        Verdict::Pass => (Check::Ok, None),
        Verdict::WrongOutcome { expected, got } => {
            (Check::WrongOutcome, Some(format!("expected {expected}, got {got}")))
        }
        Verdict::Mismatch(s) => (Check::Mismatch, Some(s.clone())),
        Verdict::Broken(s) => (Check::Broken, Some(s.clone())),
    }
}

/// The record of a suite run (`config` is the GPU configuration of timed runs; its energy model, if it
/// has one, prices the run).
pub fn record_of(o: &EntryOutcome, config: Option<&reconverge_timing::GpuConfig>) -> RunRecord {
    let (check, _) = check_of(&o.verdict);
    let mut r = RunRecord::new(
        &o.kernel,
        config.map(|g| g.name.as_str()),
        o.warp_size,
        o.mechanism.name(),
        Some(check),
        o.result.as_ref(),
        o.timing.as_ref(),
    );
    if let Some(e) = o.timing.as_ref().zip(config).and_then(|(t, g)| reconverge_energy::energy(t, g)) {
        r.set_energy(&e);
    }
    r
}
