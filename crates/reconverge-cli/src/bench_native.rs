//! `reconverge bench --native`: the suite's CUDA C run natively (compiled as C++, one thread after another)
//! beside the functional and the timed simulation of the same launch, in one run: median times over
//! repeats and the ratios, plus the escape-time fractal at 64, 256 and 1024 rows to show how the cost
//! grows with the work.

use crate::bench_cmd::BenchArgs;
use crate::native::{self, Workdir};
use crate::{out, outln, Failure};
use reconverge_mechanism::Mechanism;
use reconverge_program::{HostOptions, JitPolicy, LaunchConfig, RunLimits};
use reconverge_report::records;
use reconverge_report::table::Table;
use reconverge_sim::{run, NoObserver, RunResult};
use reconverge_suite::manifest::{KernelEntry, ManifestArg};
use reconverge_timing::GpuConfig;
use reconverge_timing::TimedOptions;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// One row of `bench --native` (the `--csv`/`--json` columns).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct NativeRecord {
    /// The kernel (`mandelbrot@960x256`: the fractal scaled to 960 × 256 pixels).
    pub kernel: String,
    /// Threads launched.
    pub threads: u64,
    /// Warp instructions simulated per launch.
    pub warp_instructions: u64,
    /// Why the kernel has no native time (`null` when it has one).
    pub skipped: Option<String>,
    /// Median native time per launch, seconds.
    pub native_s: Option<f64>,
    /// Median functional simulation time per launch, seconds.
    pub functional_s: Option<f64>,
    /// `functional_s / native_s`.
    pub functional_ratio: Option<f64>,
    /// Median timed simulation time per launch, seconds (`null` with --functional).
    pub timed_s: Option<f64>,
    /// `timed_s / native_s`.
    pub timed_ratio: Option<f64>,
    /// Whether the native run left the same buffers as the simulator.
    pub same_output: Option<bool>,
    /// Segments the first functional run compiled to native code (0 with --no-jit, when none got hot or
    /// when the process had compiled them already: the code is cached for the whole process).
    pub jit_segments: u64,
    /// Time the first functional run spent compiling them, seconds. Not part of `functional_s`: that is the
    /// median of the repeats after the first run, which find the segments compiled already (the code is
    /// cached for the whole process).
    pub jit_compile_s: f64,
}

/// Repeats of a measurement: at least 3, more while they fit in `min_ms`.
fn measure(min_ms: u64, mut f: impl FnMut() -> Result<(), Failure>) -> Result<Duration, Failure> {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 3 || (start.elapsed() < Duration::from_millis(min_ms) && times.len() < 1000) {
        let t0 = Instant::now();
        f()?;
        times.push(t0.elapsed());
    }
    Ok(median(&mut times))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// The fractal of the suite's `mandelbrot` entry scaled to 960 × `rows` pixels (32 × 8 threads per CTA),
/// with its row label.
fn fractal(base: &KernelEntry, rows: u32) -> (String, KernelEntry) {
    let mut e = base.clone();
    e.grid = [30, rows.div_ceil(8), 1];
    e.block = [32, 8, 1];
    e.args = vec![
        ManifestArg::Text(format!("zeros:i32:{}", 960 * rows)),
        ManifestArg::Int(960),
        ManifestArg::Int(rows as i64),
        ManifestArg::Float(-2.0),
        ManifestArg::Float(-1.125),
        ManifestArg::Float(2.5 / 960.0),
        ManifestArg::Float(2.25 / rows as f64),
        ManifestArg::Int(64),
    ];
    e.expected.clear();
    (format!("mandelbrot@960x{rows}"), e)
}

/// The buffers a simulation left, in argument order.
fn sim_buffers(r: &RunResult) -> Vec<Vec<u8>> {
    r.buffers.iter().flatten().map(|b| b.bytes.clone()).collect()
}

/// What `bench --native` needs from the bench command.
pub(crate) struct NativeBench<'a> {
    /// The arguments.
    pub args: &'a BenchArgs,
    /// The kernel directory.
    pub dir: &'a Path,
    /// The mechanism.
    pub mech: Mechanism,
    /// The GPU of the timed runs (`None` with --functional).
    pub gpu: Option<&'a GpuConfig>,
}

impl NativeBench<'_> {
    /// Measures one entry.
    fn row(&self, work: &Workdir, label: &str, e: &KernelEntry, source: &str) -> Result<NativeRecord, Failure> {
        let a = self.args;
        let load = |p: &str| std::fs::read(self.dir.join(p));
        let p = reconverge_suite::prepare_entry(e, self.mech, a.warp_size, &load, u64::MAX)
            .map_err(|err| Failure::input(format!("{}: {err}", e.name)))?;
        let cfg = LaunchConfig {
            limits: RunLimits { max_instructions: None, ..p.cfg.limits },
            host: HostOptions { jit: if a.no_jit { JitPolicy::Off } else { JitPolicy::Hot }, ..p.cfg.host.clone() },
            ..p.cfg.clone()
        };
        let threads = cfg.num_ctas() * u64::from(cfg.threads_per_cta());
        let mut row = NativeRecord { kernel: label.to_string(), threads, ..NativeRecord::default() };
        let first = run(&p.kernel, &cfg, &p.args, &mut NoObserver);
        if let Some(err) = &first.error {
            return Err(Failure::input(format!("{}: {}", e.name, crate::errors::render(err))));
        }
        row.warp_instructions = first.stats.warp_instructions;
        (row.jit_segments, row.jit_compile_s) = (first.jit.segments, first.jit.time.as_secs_f64());
        let functional = measure(a.min_ms, || {
            run(&p.kernel, &cfg, &p.args, &mut NoObserver);
            Ok(())
        })?;
        row.functional_s = Some(functional.as_secs_f64());
        if let Some(g) = self.gpu {
            let timed = measure(a.min_ms, || {
                reconverge_timing::run_timed(
                    &p.kernel,
                    &cfg,
                    g,
                    &p.args,
                    TimedOptions { max_cycles: None, threads: a.threads, sample: None },
                );
                Ok(())
            })?;
            row.timed_s = Some(timed.as_secs_f64());
        }
        if let Some(why) = native::skip_reason(source, !e.globals.is_empty()) {
            row.skipped = Some(why);
            return Ok(row);
        }
        let timeout = std::time::Duration::from_secs(a.native_timeout);
        let exe = native::compile(work, &e.name, &self.dir.join(format!("src/{}.cu", e.name)), timeout)
            .map_err(Failure::input)?;
        let native_run = |reps: u32| {
            native::run(work, &exe, &p.args, cfg.grid, cfg.block, reps, timeout)
                .map_err(|err| Failure::input(format!("{}: {err}", e.name)))
        };
        let probe = native_run(1)?;
        let once = probe.times.first().copied().unwrap_or_default().as_secs_f64().max(1e-7);
        let reps = ((a.min_ms as f64 / 1e3 / once) as u32).clamp(3, 1000);
        let mut nat = native_run(reps)?;
        let native_s = median(&mut nat.times).as_secs_f64();
        row.native_s = Some(native_s);
        row.functional_ratio = Some(functional.as_secs_f64() / native_s.max(1e-12));
        row.timed_ratio = row.timed_s.map(|t| t / native_s.max(1e-12));
        row.same_output = Some(probe.buffers == sim_buffers(&first));
        Ok(row)
    }

    /// Runs the side-by-side measurement over `entries` and prints it.
    pub(crate) fn run(&self, entries: &[&KernelEntry]) -> Result<(), Failure> {
        let work = Workdir::new().map_err(Failure::input)?;
        let mut list: Vec<(String, KernelEntry)> = entries.iter().map(|e| (e.name.clone(), (*e).clone())).collect();
        if let Some(m) = entries.iter().find(|e| e.name == "mandelbrot") {
            list.extend(self.args.fractal_rows.iter().filter(|&&r| r > 0).map(|&rows| fractal(m, rows)));
        }
        let bar = crate::progress::bar(list.len() as u64, self.args.csv || self.args.json);
        let mut rows = Vec::new();
        for (label, e) in &list {
            bar.inc(1);
            let cu = self.dir.join(format!("src/{}.cu", e.name));
            let row = match std::fs::read_to_string(&cu) {
                Ok(source) => self.row(&work, label, e, &source)?,
                Err(_) => NativeRecord {
                    kernel: label.clone(),
                    skipped: Some("no CUDA C source (hand-written PTX)".into()),
                    ..NativeRecord::default()
                },
            };
            rows.push(row);
        }
        bar.finish_and_clear();
        self.print(&rows)
    }

    fn print(&self, rows: &[NativeRecord]) -> Result<(), Failure> {
        if self.args.csv {
            return out!("{}", records::to_csv(rows));
        }
        if self.args.json {
            return outln!("{}", records::to_json(rows));
        }
        let ms = |x: Option<f64>| x.map(|v| format!("{:.3}", v * 1e3)).unwrap_or_else(|| "-".into());
        let ratio = |x: Option<f64>| x.map(|v| format!("{v:.1}x")).unwrap_or_else(|| "-".into());
        let mut t = Table::new(&[
            "kernel",
            "threads",
            "warp instr",
            "native ms",
            "functional ms",
            "func/native",
            "jit ms",
            "timed ms",
            "timed/native",
            "output",
        ]);
        for r in rows {
            let output = match (&r.skipped, r.same_output) {
                (Some(why), _) => format!("skipped: {why}"),
                (None, Some(true)) => "same".into(),
                (None, _) => "DIFFERS".into(),
            };
            t.row(vec![
                r.kernel.clone(),
                r.threads.to_string(),
                r.warp_instructions.to_string(),
                ms(r.native_s),
                ms(r.functional_s),
                ratio(r.functional_ratio),
                if r.jit_segments > 0 { ms(Some(r.jit_compile_s)) } else { "-".into() },
                ms(r.timed_s),
                ratio(r.timed_ratio),
                output,
            ]);
        }
        let gm = |f: fn(&NativeRecord) -> Option<f64>| {
            let v: Vec<f64> = rows.iter().filter_map(f).filter(|x| *x > 0.0).collect();
            (!v.is_empty()).then(|| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
        };
        outln!(
            "native: the CUDA C compiled as C++ ({} -O2 -ffp-contract=off), one thread after another; \
             simulation: mechanism {}, warp size {}, timed on {} with {} host thread(s); medians over repeats; \
             jit ms: compiling hot segments in the first functional run, which is not one of the repeats \
             (they reuse the compiled code), so not part of functional ms",
            native::compiler(),
            self.mech.name(),
            self.args.warp_size,
            self.gpu.map(|g| g.name.as_str()).unwrap_or("-"),
            self.args.threads
        )?;
        out!("{}", t.render())?;
        outln!(
            "geometric mean over the kernels run natively: functional {} native, timed {} native",
            ratio(gm(|r| r.functional_ratio)),
            ratio(gm(|r| r.timed_ratio))
        )
    }
}
