//! Every kernel of `kernels/` under every mechanism at warp sizes 4, 32 and 64 matches its expected outputs.

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_suite::{judge, prepare_entry, run_entry, run_prepared, Mode, Verdict};

#[test]
fn every_kernel_every_mechanism_every_warp_size() {
    let suite = common::Suite::load();
    let manifest = &suite.manifest;
    assert!(manifest.kernels.len() >= 14, "the suite has the seed kernels and ten workloads");
    let load = |p: &str| suite.read(p);
    let mut failures = Vec::new();
    let mut runs = 0;
    for entry in &manifest.kernels {
        for mech in Mechanism::ALL {
            // The narrowest, the native and the widest warp. Warp sizes 8 and 16 are not repeated here:
            // reconverge-reference's tests/kernels.rs runs every kernel (and its other PTX variants) under
            // every mechanism at 4, 8, 16 and 32 against the reference interpreter, whose outputs are in
            // turn checked against these same expected outputs.
            for ws in [4, 32, 64] {
                if !entry.supports_warp_size(ws) {
                    continue;
                }
                let o = run_entry(entry, mech, ws, &load, 50_000_000, Mode::Functional, false);
                runs += 1;
                if !o.verdict.ok() {
                    failures.push(format!("{} / {} / warp {ws}: {:?}", entry.name, mech, o.verdict));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
}

/// The timing model never changes a result: under every preset, every kernel and mechanism gives the
/// same outcome and the same memory (every buffer, not only the checked ones) as functional mode. The
/// (kernel, mechanism) pairs run on every core, each timed run on one host thread (that results do not
/// depend on the host threads is reconverge-timing's `timing.rs` and this crate's `regrouping.rs`).
#[test]
fn every_kernel_every_mechanism_under_every_preset_matches_functional_mode() {
    let suite = common::Suite::load();
    let manifest = &suite.manifest;
    let load = |p: &str| suite.read(p);
    let jobs: Vec<_> =
        manifest.kernels.iter().flat_map(|entry| Mechanism::defaults().map(move |mech| (entry, mech))).collect();
    use rayon::prelude::*;
    let checked: Vec<Vec<String>> = jobs
        .par_iter()
        .map(|&(entry, mech)| {
            let p = prepare_entry(entry, mech, 32, &load, 50_000_000).expect("the suite entry loads");
            let (functional, _) = run_prepared(&p, Mode::Functional);
            let mut failures = Vec::new();
            for preset in reconverge_timing::PRESETS {
                let gpu = reconverge_timing::GpuConfig::preset(preset).expect("preset");
                let (timed, timing) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
                let what = format!("{preset} / {} / {mech}", entry.name);
                // A mechanism may starve a thread in one mode and not the other (the manifest accepts
                // both outcomes); where both complete, memory must agree.
                let both_ok = entry.expected_outcome(mech.name()).contains('|');
                if both_ok && functional.outcome() != timed.outcome() {
                } else if let Err(e) = same_result(&functional, &timed) {
                    failures.push(format!("{what}: {e}"));
                }
                let verdict = judge(entry, mech, &timed, &load);
                if !matches!(verdict, Verdict::Pass) {
                    failures.push(format!("{what}: {verdict:?}"));
                }
                if timed.error.is_none() && timing.map_or(0, |t| t.cycles) == 0 {
                    failures.push(format!("{what}: no cycles"));
                }
            }
            failures
        })
        .collect();
    let runs = jobs.len() * reconverge_timing::PRESETS.len();
    assert!(runs >= 360, "20 kernels x 6 mechanisms x 3 presets");
    let failures: Vec<String> = checked.into_iter().flatten().collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Same outcome and bit-identical buffers.
fn same_result(a: &reconverge_sim::RunResult, b: &reconverge_sim::RunResult) -> Result<(), String> {
    if a.outcome() != b.outcome() {
        return Err(format!("outcome {} in functional mode, {} timed", a.outcome(), b.outcome()));
    }
    if a.error.is_none() && a.buffers != b.buffers {
        let i = a.buffers.iter().zip(&b.buffers).position(|(x, y)| x != y).unwrap_or(0);
        return Err(format!("buffer {i} differs from functional mode"));
    }
    Ok(())
}

/// Long latencies are not deadlocks: with `int = 400` or `branch = 5000` every kernel still completes
/// with the functional result (both were declared deadlocked when the watchdog counted quiet epochs).
#[test]
fn long_latencies_are_not_deadlocks() {
    let suite = common::Suite::load();
    let manifest = &suite.manifest;
    let load = |p: &str| suite.read(p);
    let int400 = reconverge_timing::GpuConfig::from_toml("[latency]\nint = 400\n").expect("config");
    let branch5000 = reconverge_timing::GpuConfig::from_toml("[latency]\nbranch = 5000\n").expect("config");
    let mut failures = Vec::new();
    for name in ["kern", "bfs", "sssp", "fir", "nested_loops"] {
        let entry = manifest.kernels.iter().find(|e| e.name == name).expect("suite kernel");
        let p = prepare_entry(entry, Mechanism::Pdom, 32, &load, 50_000_000).expect("loads");
        let (functional, _) = run_prepared(&p, Mode::Functional);
        for (what, gpu) in [("int = 400", &int400), ("branch = 5000", &branch5000)] {
            let (timed, _) = run_prepared(&p, Mode::Timed { gpu, threads: 1 });
            if let Err(e) = same_result(&functional, &timed) {
                failures.push(format!("{name} with {what}: {e} ({:?})", timed.error.map(|e| e.to_string())));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
