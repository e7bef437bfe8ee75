//! Fuzzing reconverge's whole pipeline.
//!
//! [`mutate`] turns a corpus PTX file into a damaged one (byte flips, insertions, deletions, token
//! deletions and duplications, truncation, garbage); [`check`] pushes any text through every stage a
//! user's input goes through — parsing and lowering, diagnostics rendering, printing and re-parsing, the
//! control-flow analyses and `cfg` reports, the SSY pass, decoding, and bounded runs under every mechanism
//! in functional and timed mode — and reports a [`Finding`] when a stage panics, breaks its contract
//! (a diagnostic outside the source, printed IR that does not re-parse, unbounded diagnostics) or takes too
//! long. A run that stops with an error value (out-of-bounds access, deadlock, limit) is a correct outcome,
//! not a finding.
//!
//! The `reconverge-fuzz` binary runs a campaign for a given time and saves what it finds; the tests run a
//! bounded number of inputs in CI.
//!
//! [`cudart`] fuzzes the CUDA runtime shim instead (random runtime-call sequences and damaged fat
//! binaries, each in a child process); its binary is `reconverge-fuzz-cudart`.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
#![deny(missing_docs)]

pub mod cudart;

use reconverge_analysis::FunctionAnalysis;
use reconverge_ir::{print_module, Module};
use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
pub use reconverge_ptx::mutate::{apply, mutate, random_mutation, Mutation};
use reconverge_ptx::{parse, SourceError};
use reconverge_sim::{load, run, NoObserver};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// What went wrong on one input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The stage (`parse`, `print`, `analysis`, `report`, `ssy`, `decode`, `run`, `timed`).
    pub stage: &'static str,
    /// What happened.
    pub what: String,
}

/// How far an input got.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// It parsed.
    pub parsed: bool,
    /// A kernel decoded under some mechanism.
    pub decoded: bool,
    /// Runs made (kernels × mechanisms × modes).
    pub runs: u32,
    /// Runs per mechanism (in [`Mechanism::ALL`]'s order).
    pub per_mechanism: Vec<u32>,
    /// Runs per warp size 1, 2, 4, ..., 64.
    pub per_warp_size: [u32; 7],
    /// Timed runs per configuration kind: the presets in [`reconverge_timing::PRESETS`] order, then random
    /// valid configurations, then random invalid ones (which must be refused, not crash).
    pub per_config: Vec<u32>,
    /// Runs with seed 004's scalarization counters, and DWF runs with a finite look-up table.
    pub scalarized: u32,
    /// DWF runs with a finite (set-associative) look-up table.
    pub finite_lut: u32,
}

/// Limits of one check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// Warp-instruction limit of each run.
    pub max_instructions: u64,
    /// Cycle limit of each timed run.
    pub max_cycles: u64,
    /// Memory limit of each run.
    pub max_memory: u64,
    /// Also run under the timing model.
    pub timed: bool,
    /// An input taking longer than this is a finding.
    pub slow: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            max_instructions: 20_000,
            max_cycles: 200_000,
            max_memory: 64 << 20,
            timed: true,
            slow: Duration::from_secs(20),
        }
    }
}

/// A contract a stage broke without panicking (its `Display` text is the [`Finding::what`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Violation {
    /// A parse error came without diagnostics.
    NoDiagnostics,
    /// A diagnostic's span lies outside the source (of this many bytes).
    SpanOutside { span: reconverge_ir::Span, len: usize },
    /// A diagnostic with an empty message.
    EmptyDiagnostic,
    /// The rendered diagnostics have this many bytes (more than 64 KiB).
    DiagnosticsTooLong(usize),
    /// Printed IR that does not parse again: the parse error and the printed text.
    PrintDoesNotParse { error: String, printed: String },
    /// A timed run under an invalid GPU configuration (its TOML) was not refused.
    InvalidConfigurationRan(String),
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Violation::NoDiagnostics => f.write_str("a parse error without diagnostics"),
            Violation::SpanOutside { span, len } => write!(f, "span {span:?} outside 0..{len}"),
            Violation::EmptyDiagnostic => f.write_str("an empty diagnostic"),
            Violation::DiagnosticsTooLong(n) => write!(f, "{n} bytes of diagnostics"),
            Violation::PrintDoesNotParse { error, printed } => {
                write!(f, "the printed module does not parse: {error}\n{printed}")
            }
            Violation::InvalidConfigurationRan(toml) => write!(f, "an invalid configuration ran: {toml}"),
        }
    }
}

fn guarded<T>(stage: &'static str, f: impl FnOnce() -> Result<T, Violation>) -> Result<T, Finding> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(v)) => Err(Finding { stage, what: v.to_string() }),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(Finding { stage, what: format!("panicked: {msg}") })
        }
    }
}

/// What one mechanism's runs of an input use, drawn at random per input (so a campaign covers every
/// combination): the warp size (1 to 64), seed 004's scalarization counters, DWF's look-up table.
struct Plan {
    warp_size: u32,
    scalarize: bool,
    lut: reconverge_mechanism::LutGeometry,
}

impl Plan {
    fn draw(rng: &mut fastrand::Rng) -> Plan {
        let warp_size = 1 << rng.u32(0..=6);
        let scalarize = rng.u32(0..5) == 0;
        let lut = if rng.bool() {
            reconverge_mechanism::LutGeometry::PERFECT
        } else {
            let ways = 1 << rng.u32(0..=3);
            reconverge_mechanism::LutGeometry { entries: ways << rng.u32(0..=4), ways }
        };
        Plan { warp_size, scalarize, lut }
    }
}

impl Reached {
    fn count(&mut self, mechanism: usize, plan: &Plan) {
        self.runs += 1;
        self.per_mechanism[mechanism] += 1;
        self.per_warp_size[plan.warp_size.trailing_zeros() as usize] += 1;
        self.scalarized += u32::from(plan.scalarize);
        self.finite_lut += u32::from(plan.lut != reconverge_mechanism::LutGeometry::PERFECT);
    }
}

/// The arguments of a fuzzed kernel: a zeroed buffer for most 64-bit parameters, small numbers otherwise.
fn arguments(prog: &reconverge_program::Program) -> Vec<Arg> {
    prog.params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if p.size == 8 && i % 3 != 2 {
                Arg::Buffer(Buffer::zeros(Dtype::U32, 1024))
            } else {
                Arg::Scalar((i as u64 * 7 + 3) % 17)
            }
        })
        .collect()
}

/// A GPU for a timed run and its kind: a preset (its index in [`reconverge_timing::PRESETS`]), a random
/// valid configuration (`PRESETS.len()`: a preset with random changes inside small ranges), or a random
/// invalid one (`PRESETS.len() + 1`: one parameter outside its documented range).
pub fn random_gpu(rng: &mut fastrand::Rng) -> (usize, reconverge_timing::GpuConfig) {
    use reconverge_timing::{GpuConfig, SchedulerPolicy, PRESETS};
    let kind = rng.usize(0..PRESETS.len() + 2);
    let base = GpuConfig::preset(PRESETS[rng.usize(0..PRESETS.len())]).unwrap_or_else(GpuConfig::tiny);
    if kind < PRESETS.len() {
        return (kind, GpuConfig::preset(PRESETS[kind]).unwrap_or_else(GpuConfig::tiny));
    }
    let mut g = base;
    g.name = "random".into();
    g.num_sms = rng.u32(1..=4);
    g.sm.schedulers = rng.u32(1..=4);
    g.sm.max_ctas = rng.u32(1..=8);
    g.sm.scheduler =
        [SchedulerPolicy::Lrr, SchedulerPolicy::Gto, SchedulerPolicy::TwoLevel, SchedulerPolicy::CtaOldest]
            [rng.usize(0..4)];
    g.sm.miss_blocks_warp = rng.bool();
    g.latency.int = rng.u64(0..20);
    g.latency.branch = rng.u64(0..20);
    g.interval.mem = rng.u64(1..4);
    g.l1.mshrs = rng.u32(1..64);
    g.dram.latency = rng.u64(0..400);
    g.mechanism.compaction_latency = rng.u64(0..20);
    if kind == PRESETS.len() {
        return (kind, g);
    }
    // One parameter outside its range.
    match rng.u32(0..6) {
        0 => g.num_sms = [0, 2_147_483_647][rng.usize(0..2)],
        1 => g.sm.schedulers = [0, 4_294_967_295][rng.usize(0..2)],
        2 => g.l2.line = rng.u32(0..32),
        3 => g.l1.mshrs = [0, 4_000_000][rng.usize(0..2)],
        4 => g.interval.int = 0,
        _ => g.warp_size = [0, 3, 128][rng.usize(0..3)],
    }
    (kind, g)
}

/// Pushes `src` through the whole pipeline; `seed` draws what each mechanism's runs use (warp size,
/// scalarization, DWF's table, the timed run's GPU configuration).
pub fn check(src: &str, opts: &CheckOptions, seed: u64) -> Result<Reached, Finding> {
    let start = Instant::now();
    let mut reached = Reached::default();
    let Some(module) = guarded("parse", || check_parse(src))? else { return Ok(reached) };
    reached.parsed = true;
    guarded("print", || check_print(&module))?;
    guarded("analysis", || {
        for f in module.functions.values().filter(|f| f.has_body) {
            let _ = FunctionAnalysis::compute(f);
        }
        Ok(())
    })?;
    guarded("report", || {
        let r = reconverge_report::cfg_report(&module, "fuzz.ptx", src, None, None);
        let _ = (r.render_text(), r.render_dot(), r.render_json());
        Ok(())
    })?;
    guarded("ssy", || {
        let (m, rep) = reconverge_transform::insert_ssy(&module);
        check_print(&m)?;
        let r = reconverge_report::cfg_report(&m, "fuzz.ptx", src, None, Some(&rep.functions));
        let _ = r.render_text();
        Ok(())
    })?;
    let kernels: Vec<String> = module.kernels().take(4).map(|k| module.functions[k].name.clone()).collect();
    let mut rng = fastrand::Rng::with_seed(seed);
    reached.per_mechanism = vec![0; Mechanism::ALL.len()];
    reached.per_config = vec![0; reconverge_timing::PRESETS.len() + 2];
    for k in &kernels {
        for (mi, &mech) in Mechanism::ALL.iter().enumerate() {
            let plan = Plan::draw(&mut rng);
            let opts_d = DecodeOptions {
                file: "fuzz.ptx".into(),
                source: Some(src.to_string()),
                scalarize: plan.scalarize,
                ..Default::default()
            };
            let mech = mech.with_lut(plan.lut);
            let kernel = guarded("decode", || Ok(load(&module, Some(k), mech, &opts_d).ok()))?;
            let Some(kernel) = kernel else { continue };
            reached.decoded = true;
            let args = arguments(kernel.program());
            let cfg = LaunchConfig {
                grid: [2, 1, 1],
                block: [48, 1, 1],
                warp_size: plan.warp_size,
                local_bytes: 4096,
                limits: reconverge_program::RunLimits {
                    max_instructions: Some(opts.max_instructions),
                    max_memory: opts.max_memory,
                    livelock_window: 2_000,
                    ..Default::default()
                },
                ..LaunchConfig::default()
            };
            guarded("run", || {
                let _ = run(&kernel, &cfg, &args, &mut NoObserver);
                Ok(())
            })?;
            reached.count(mi, &plan);
            if opts.timed {
                let (kind, gpu) = random_gpu(&mut rng);
                guarded("timed", || {
                    // An invalid configuration must be refused with an error, never run or crash.
                    let limits =
                        reconverge_timing::TimedOptions { max_cycles: Some(opts.max_cycles), threads: 1, sample: None };
                    let r = reconverge_timing::run_timed(&kernel, &cfg, &gpu, &args, limits);
                    if kind == reconverge_timing::PRESETS.len() + 1 && r.run.error.is_none() {
                        return Err(Violation::InvalidConfigurationRan(gpu.to_toml()));
                    }
                    Ok(())
                })?;
                reached.count(mi, &plan);
                reached.per_config[kind] += 1;
            }
        }
    }
    if start.elapsed() > opts.slow {
        return Err(Finding { stage: "time", what: format!("took {:?}", start.elapsed()) });
    }
    Ok(reached)
}

/// Parses; on failure checks the diagnostics contract. `Ok(None)`: a clean parse error.
fn check_parse(src: &str) -> Result<Option<Module>, Violation> {
    match parse(src) {
        Ok(m) => Ok(Some(m)),
        Err(e) => {
            if e.diagnostics.is_empty() {
                return Err(Violation::NoDiagnostics);
            }
            for d in &e.diagnostics {
                if d.span.start > d.span.end || d.span.end as usize > src.len() {
                    return Err(Violation::SpanOutside { span: d.span, len: src.len() });
                }
                if d.message.is_empty() {
                    return Err(Violation::EmptyDiagnostic);
                }
            }
            let rendered = SourceError::new("fuzz.ptx", src, e).render_plain();
            if rendered.len() > 64 * 1024 {
                return Err(Violation::DiagnosticsTooLong(rendered.len()));
            }
            Ok(None)
        }
    }
}

/// Printing a module must give PTX that parses again.
fn check_print(m: &Module) -> Result<(), Violation> {
    let printed = print_module(m);
    match parse(&printed) {
        Ok(_) => Ok(()),
        Err(e) => Err(Violation::PrintDoesNotParse { error: e.to_string(), printed }),
    }
}

/// The corpus: every PTX file of the repository's kernels and test data, smallest first.
pub fn corpus(repo: &std::path::Path) -> Vec<(String, String)> {
    let dirs = [
        "kernels/ptx/sm_80",
        "kernels/ptx/sm_70",
        "kernels/ptx/sm_80-nofma",
        "kernels/handwritten",
        "crates/reconverge-ptx/tests/data",
        "crates/reconverge-cli/tests/data",
    ];
    let mut files: Vec<(String, String)> = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(repo.join(d)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "ptx") {
                if let Ok(t) = std::fs::read_to_string(&p) {
                    files.push((p.strip_prefix(repo).unwrap_or(&p).display().to_string(), t));
                }
            }
        }
    }
    files.sort_by(|a, b| a.1.len().cmp(&b.1.len()).then(a.0.cmp(&b.0)));
    files
}
