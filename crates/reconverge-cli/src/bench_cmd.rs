//! `reconverge bench`: simulation speed on the suite kernels, in simulated instructions per second (a
//! whole program under `exec`: [`crate::bench_exec`]).

use crate::launch_args::mechanism;
use crate::suite_cmd::{check_kernel_names, check_warp_sizes, default_kernels_dir, load_manifest};
use crate::{out, outln, Failure};
use clap::Args;
use reconverge_mechanism::Mechanism;
use reconverge_program::{HostOptions, JitPolicy, LaunchConfig, RunLimits};
use reconverge_report::records;
use reconverge_report::table::Table;
use reconverge_sim::{run, NoObserver};
use reconverge_timing::TimedOptions;
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Arguments of `reconverge bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// The kernel directory (holding manifest.toml).
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable).
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// The mechanism.
    #[arg(long, default_value = "pdom", value_parser = crate::launch_args::mechanism_values())]
    pub mechanism: String,
    /// Warp size.
    #[arg(long, default_value_t = 32)]
    pub warp_size: u32,
    /// Minimum measuring time per kernel and mode, in milliseconds.
    #[arg(long, default_value_t = 300)]
    pub min_ms: u64,
    /// GPU configuration for the timed measurement.
    #[arg(long, default_value = "gtx480")]
    pub config: String,
    /// Host threads for the timed measurement (SMs in parallel; at most 1024).
    #[arg(long, default_value_t = 1, value_parser = crate::launch_args::host_threads)]
    pub threads: usize,
    /// Functional simulation only.
    #[arg(long)]
    pub functional: bool,
    /// Interpret every instruction: do not compile hot straight-line segments to native code in the
    /// functional and timed runs (to measure what compiling gains).
    #[arg(long)]
    pub no_jit: bool,
    /// Side by side with native code: the suite's CUDA C compiled as C++ by the system compiler ($CXX or
    /// c++) and run one thread after another, beside the functional and timed simulation of the same
    /// launch (median times and ratios; kernels whose threads must run together are listed as skipped),
    /// plus the escape-time fractal at 960 x 64, 256 and 1024 pixels.
    #[arg(long)]
    pub native: bool,
    /// With --native: the rows of the scaled fractal runs (960 pixels wide; empty: none).
    #[arg(long, value_delimiter = ',', default_values_t = [64, 256, 1024], requires = "native")]
    pub fractal_rows: Vec<u32>,
    /// With --native: seconds the C++ compiler, and then each native run, may take before it is stopped
    /// (exit 2 with what it printed).
    #[arg(long, default_value_t = 120, requires = "native")]
    pub native_timeout: u64,
    /// Print CSV (one row per kernel, then the total as kernel `ALL`).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print JSON (one array of rows).
    #[arg(long)]
    pub json: bool,
    /// A CUDA program and its arguments (after `--`), measured under `exec` instead of the suite: the median
    /// wall time of a whole functional and timed `exec` of it (process start, host code, every launch) and
    /// the warp instructions and cycles it simulated, per second.
    #[arg(last = true, value_name = "PROGRAM [ARGS]...", conflicts_with_all = ["native", "no_jit", "only", "kernels"])]
    pub program: Vec<String>,
}

/// One row of `bench` output (the `--csv`/`--json` columns).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct BenchRecord {
    /// The kernel (`ALL` for the total).
    pub kernel: String,
    /// The mechanism.
    pub mechanism: String,
    /// Threads per warp.
    pub warp_size: u32,
    /// The GPU configuration of the timed measurement (`null` with --functional).
    pub config: Option<String>,
    /// Host threads of the timed measurement.
    pub threads: usize,
    /// SIMD efficiency of the kernel's own instructions (0..1; `null` for the total).
    pub simd_efficiency: Option<f64>,
    /// Simulated thread instructions per second, functional.
    pub functional_thread_instructions_per_s: f64,
    /// Simulated warp instructions per second, functional.
    pub functional_warp_instructions_per_s: f64,
    /// Simulated thread instructions per second, timed.
    pub timed_thread_instructions_per_s: Option<f64>,
    /// Simulated warp instructions per second, timed.
    pub timed_warp_instructions_per_s: Option<f64>,
    /// Simulated cycles per second, timed.
    pub simulated_cycles_per_s: Option<f64>,
}

/// Runs `reconverge bench`.
pub(crate) fn run_bench(a: BenchArgs) -> Result<(), Failure> {
    if !a.program.is_empty() {
        check_warp_sizes(&[a.warp_size])?;
        if !a.functional {
            crate::launch_args::gpu_config(&a.config)?;
        }
        return crate::bench_exec::run(&a, mechanism(&a.mechanism)?);
    }
    let dir = a
        .kernels
        .clone()
        .or_else(default_kernels_dir)
        .ok_or_else(|| Failure::input("cannot find kernels/; pass --kernels DIR"))?;
    let manifest = load_manifest(&dir)?;
    check_kernel_names(&manifest, &a.only)?;
    check_warp_sizes(&[a.warp_size])?;
    let mech: Mechanism = mechanism(&a.mechanism)?;
    let load = |p: &str| std::fs::read(dir.join(p));
    let gpu = if a.functional { None } else { Some(crate::launch_args::gpu_config(&a.config)?) };
    let mut rows: Vec<BenchRecord> = Vec::new();
    let base = BenchRecord {
        mechanism: mech.name().to_string(),
        warp_size: a.warp_size,
        config: gpu.as_ref().map(|g| g.name.clone()),
        threads: a.threads,
        ..BenchRecord::default()
    };
    let per_s = |n: u64, d: Duration| n as f64 / d.as_secs_f64().max(1e-9);
    let (mut tot_thread, mut tot_warp, mut tot_time) = (0u64, 0u64, Duration::ZERO);
    let (mut ttot_thread, mut ttot_warp, mut ttot_cycles, mut ttot_time) = (0u64, 0u64, 0u64, Duration::ZERO);
    // Parser speed on the suite's PTX.
    let mut ptx_bytes = 0usize;
    let mut parse_time = Duration::ZERO;
    let entries: Vec<_> = manifest
        .kernels
        .iter()
        .filter(|e| a.only.is_empty() || a.only.contains(&e.name))
        .filter(|e| e.supports_warp_size(a.warp_size) && e.expected_outcome(mech.name()) == "completed")
        .collect();
    if a.native {
        let bench = crate::bench_native::NativeBench { args: &a, dir: &dir, mech, gpu: gpu.as_ref() };
        return bench.run(&entries);
    }
    let bar = crate::progress::bar(entries.len() as u64, a.csv || a.json);
    for e in entries {
        bar.inc(1);
        let bytes = load(&e.ptx).map_err(|err| Failure::input(format!("cannot read `{}`: {err}", e.ptx)))?;
        let text = String::from_utf8(bytes).map_err(|e| Failure::input(e.to_string()))?;
        let t0 = Instant::now();
        reconverge_ptx::parse(&text).map_err(|_| Failure::input(format!("{}: parse error", e.ptx)))?;
        parse_time += t0.elapsed();
        ptx_bytes += text.len();
        let p = reconverge_suite::prepare_entry(e, mech, a.warp_size, &load, u64::MAX)
            .map_err(|err| Failure::input(format!("{}: {err}", e.name)))?;
        let (kernel, args) = (&p.kernel, &p.args);
        let cfg = LaunchConfig {
            limits: RunLimits { max_instructions: None, ..p.cfg.limits },
            host: HostOptions { jit: if a.no_jit { JitPolicy::Off } else { JitPolicy::Hot }, ..p.cfg.host.clone() },
            ..p.cfg.clone()
        };
        let (mut warp, mut thread, mut runs) = (0u64, 0u64, 0u64);
        let start = Instant::now();
        let mut eff = 0.0;
        while runs == 0 || start.elapsed() < Duration::from_millis(a.min_ms) {
            let r = run(kernel, &cfg, args, &mut NoObserver);
            if let Some(err) = &r.error {
                return Err(Failure::input(format!("{}: {}", e.name, crate::errors::render(err))));
            }
            warp += r.stats.warp_instructions;
            thread += r.stats.thread_instructions;
            eff = r.stats.simd_efficiency(a.warp_size);
            runs += 1;
        }
        let el = start.elapsed();
        tot_thread += thread;
        tot_warp += warp;
        tot_time += el;
        let mut row = BenchRecord {
            kernel: e.name.clone(),
            simd_efficiency: Some(eff),
            functional_thread_instructions_per_s: per_s(thread, el),
            functional_warp_instructions_per_s: per_s(warp, el),
            ..base.clone()
        };
        if let Some(g) = &gpu {
            let (mut tw, mut tt, mut tc, mut runs) = (0u64, 0u64, 0u64, 0u64);
            let start = Instant::now();
            while runs == 0 || start.elapsed() < Duration::from_millis(a.min_ms) {
                let r = reconverge_timing::run_timed(
                    kernel,
                    &cfg,
                    g,
                    args,
                    TimedOptions { max_cycles: None, threads: a.threads, sample: None },
                );
                if let Some(err) = &r.run.error {
                    return Err(Failure::input(format!("{}: {}", e.name, crate::errors::render(err))));
                }
                tw += r.run.stats.warp_instructions;
                tt += r.run.stats.thread_instructions;
                tc += r.timing.cycles;
                runs += 1;
            }
            let el = start.elapsed();
            ttot_thread += tt;
            ttot_warp += tw;
            ttot_cycles += tc;
            ttot_time += el;
            row.timed_thread_instructions_per_s = Some(per_s(tt, el));
            row.timed_warp_instructions_per_s = Some(per_s(tw, el));
            row.simulated_cycles_per_s = Some(per_s(tc, el));
        }
        rows.push(row);
    }
    bar.finish_and_clear();
    let timed = gpu.is_some();
    rows.push(BenchRecord {
        kernel: "ALL".into(),
        functional_thread_instructions_per_s: per_s(tot_thread, tot_time),
        functional_warp_instructions_per_s: per_s(tot_warp, tot_time),
        timed_thread_instructions_per_s: timed.then(|| per_s(ttot_thread, ttot_time)),
        timed_warp_instructions_per_s: timed.then(|| per_s(ttot_warp, ttot_time)),
        simulated_cycles_per_s: timed.then(|| per_s(ttot_cycles, ttot_time)),
        ..base.clone()
    });
    print_rows(&a, mech, gpu.as_ref(), &rows, (ptx_bytes, parse_time))
}

/// Prints the rows of `bench` as CSV, JSON or a table, with the parser's speed (`parsed`: PTX bytes and
/// the time they took) under the table.
fn print_rows(
    a: &BenchArgs,
    mech: Mechanism,
    gpu: Option<&reconverge_timing::GpuConfig>,
    rows: &[BenchRecord],
    parsed: (usize, Duration),
) -> Result<(), Failure> {
    let (ptx_bytes, parse_time) = parsed;
    if a.csv {
        return out!("{}", records::to_csv(rows));
    }
    if a.json {
        return outln!("{}", records::to_json(rows));
    }
    let mut t = Table::new(&[
        "kernel",
        "SIMD eff",
        "func thread/s",
        "func warp/s",
        "timed thread/s",
        "timed warp/s",
        "cycles/s",
    ]);
    let m = |x: Option<f64>, d: usize| x.map(|v| format!("{:.*}M", d, v / 1e6)).unwrap_or_else(|| "-".into());
    for r in rows {
        t.row(vec![
            r.kernel.clone(),
            records::pct(r.simd_efficiency),
            m(Some(r.functional_thread_instructions_per_s), 1),
            m(Some(r.functional_warp_instructions_per_s), 2),
            m(r.timed_thread_instructions_per_s, 1),
            m(r.timed_warp_instructions_per_s, 2),
            m(r.simulated_cycles_per_s, 2),
        ]);
    }
    outln!(
        "mechanism {}, warp size {}; functional: one host thread; timed: {} on {} host thread(s)",
        mech,
        a.warp_size,
        gpu.map(|g| g.name.as_str()).unwrap_or("-"),
        a.threads
    )?;
    out!("{}", t.render())?;
    outln!(
        "PTX parsing: {} bytes in {:.2} ms ({:.1} MB/s, single pass; see `cargo bench -p reconverge-ptx` for a careful figure)",
        ptx_bytes,
        parse_time.as_secs_f64() * 1e3,
        ptx_bytes as f64 / parse_time.as_secs_f64().max(1e-9) / 1e6
    )
}
