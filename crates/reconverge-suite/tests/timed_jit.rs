//! Compiled segments in timed mode: every suite kernel under every mechanism gives the same cycles, timing
//! statistics, functional statistics, memory, `printf` output and outcome whether its pure lane
//! instructions are deferred and compiled at once (`JitPolicy::Always`) or each executes in the
//! interpreter when it issues (`JitPolicy::Off`, `--no-jit`): on `gtx480` at warp size 32 on one host
//! thread, and on `volta` at warp size 8 on two (parallel epochs), the longest launches left out there.

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_program::{HostOptions, JitPolicy};
use reconverge_suite::{prepare_entry, run_prepared, Mode, PreparedEntry};
use reconverge_timing::GpuConfig;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `p` timed on `gpu` under `jit`.
fn timed(p: &PreparedEntry, gpu: &GpuConfig, threads: usize, jit: JitPolicy) -> String {
    let mut p = p.clone();
    p.cfg.host = HostOptions { jit, ..p.cfg.host.clone() };
    let (r, timing) = run_prepared(&p, Mode::Timed { gpu, threads });
    // Everything a run reports, in one comparable text (the types compare field by field through it).
    format!("{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}", r.error, r.stats, r.buffers, r.printf, r.globals, timing)
}

/// Every (kernel, mechanism) that runs at `warp_size`, but the kernels `skip`, compared on `gpu` with `threads`
/// host threads per run. The runs spread over plain threads, one run each at a time: a timing model on
/// two threads inside a rayon worker would let that worker take up other runs while it waits, each on top
/// of the last one's stack.
fn check(gpu: &GpuConfig, warp_size: u32, threads: usize, skip: &[&str]) {
    let suite = common::Suite::load();
    let load = |p: &str| suite.read(p);
    let mut jobs = Vec::new();
    for e in &suite.manifest.kernels {
        if e.supports_warp_size(warp_size) && !skip.contains(&e.name.as_str()) {
            jobs.extend(Mechanism::ALL.into_iter().map(|m| (e, m)));
        }
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).div_ceil(threads);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                while let Some(&(e, m)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let p = prepare_entry(e, m, warp_size, &load, 20_000_000).expect("the suite's kernels load");
                    if timed(&p, gpu, threads, JitPolicy::Always) != timed(&p, gpu, threads, JitPolicy::Off) {
                        let msg = format!("{} / {m}: compiled segments change the timed run", e.name);
                        failures.lock().expect("no worker panics").push(msg);
                    }
                }
            });
        }
    });
    assert!(jobs.len() > 100, "the suite and the registry give {} runs", jobs.len());
    let failures = failures.into_inner().expect("no worker panics");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn compiled_segments_change_no_timed_result_on_gtx480() {
    check(&GpuConfig::gtx480(), 32, 1, &[]);
}

#[test]
fn compiled_segments_change_no_timed_result_on_volta_at_warp_size_8() {
    // The three longest launches are left to the test above.
    check(&GpuConfig::volta(), 8, 2, &["bfs_large", "nested_loops", "mandelbrot"]);
}
