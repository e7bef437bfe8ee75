//! `reconverge run` and `reconverge trace`.

use crate::launch_args::LaunchArgs;
use crate::{out, outln, Failure};
use clap::Args;
use reconverge_program::Arg;
use reconverge_report::path_export::PathRecorder;
use reconverge_report::run::run_text;
use reconverge_report::trace::TraceRecorder;
use reconverge_sim::{run, NoObserver, RunResult};
use reconverge_suite::OutputKey;

/// Arguments of `reconverge run`.
#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Write the final contents of argument INDEX (0-based) to FILE.npy: all of its buffer, also for
    /// BUFFER+N; INDEX.FIELD: the buffer that pointer field FIELD (0-based, padding counted) of a struct
    /// argument points into (repeatable).
    #[arg(long = "dump", value_name = "INDEX[.FIELD]=FILE.npy")]
    dumps: Vec<String>,
    /// Write the final contents of module variable NAME to FILE.npy (for a device pointer set with
    /// --global NAME=@...: the buffer it points to) (repeatable).
    #[arg(long = "dump-global", value_name = "NAME=FILE.npy")]
    dump_globals: Vec<String>,
    /// Print the statistics as one JSON object.
    #[arg(long)]
    json: bool,
    /// Also print the per-branch statistics as a table sorted by divergent executions (in JSON they are
    /// always there, as `branches_by_pc`).
    #[arg(long)]
    branches: bool,
}

/// Arguments of `reconverge trace`.
#[derive(Args)]
pub(crate) struct TraceArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// The CTA (linear block index) whose warp is traced.
    #[arg(long = "cta", default_value_t = 0)]
    cta: u64,
    /// The warp (index within the CTA) to trace.
    #[arg(long, default_value_t = 0)]
    warp: u32,
    /// Print at most this many instructions.
    #[arg(long, default_value_t = 10_000)]
    limit: usize,
    /// Leave out the first N instructions (numbering is kept).
    #[arg(long, default_value_t = 0)]
    skip: usize,
    /// One line per basic block entered, in the style of seed 003's Figure 1: the block and its
    /// active lanes, saved paths in parentheses, synchronisation points in brackets.
    #[arg(long)]
    blocks: bool,
    /// Instead of the text trace, run the timing model and write its timeline in the Chrome trace-event
    /// format (open it in the Perfetto UI or chrome://tracing): per SM a track per scheduler (idle
    /// slots by cause) and per warp (issued groups with pc, line, active lanes, structure size), and a
    /// SIMD-efficiency counter.
    #[arg(long, value_name = "FILE.json")]
    perfetto: Option<String>,
    /// With --perfetto: only the first CYCLES cycles, or cycles FROM..TO.
    #[arg(long, value_name = "CYCLES|FROM:TO")]
    window: Option<String>,
    /// With --perfetto: keep at most this many events (the rest are counted and reported).
    #[arg(long, default_value_t = 1_000_000)]
    max_events: usize,
    /// Instead of the text trace, write the path trace of every warp of the CTA for the hardware test
    /// benches of hw/ (only with --mechanism simty or arbiter): per issue the issued path, its successor
    /// paths and the path the unit runs next (format: docs/hardware.md); --limit caps the steps.
    #[arg(long, value_name = "FILE")]
    export_paths: Option<String>,
}

fn exit_for(r: &RunResult) -> Result<(), Failure> {
    match &r.error {
        None => Ok(()),
        Some(e) => Err(Failure { message: format!("error: {}", crate::errors::render(e)), code: e.exit_code() as u8 }),
    }
}

/// Runs `reconverge run`.
pub(crate) fn run_cmd(a: RunArgs) -> Result<(), Failure> {
    let mut dumps = Vec::new();
    for d in &a.dumps {
        let (k, f) = d
            .split_once('=')
            .filter(|(_, f)| !f.is_empty())
            .and_then(|(k, f)| OutputKey::parse(k).map(|k| (k, f.to_string())))
            .ok_or_else(|| Failure::input(format!("--dump `{d}`: expected INDEX=FILE.npy or INDEX.FIELD=FILE.npy")))?;
        dumps.push((k, f));
    }
    let mut global_dumps = Vec::new();
    for d in &a.dump_globals {
        let (n, f) = d
            .split_once('=')
            .filter(|(n, f)| !n.is_empty() && !f.is_empty())
            .ok_or_else(|| Failure::input(format!("--dump-global `{d}`: expected NAME=FILE.npy")))?;
        global_dumps.push((n.to_string(), f.to_string()));
    }
    let names: Vec<String> = global_dumps.iter().map(|(n, _)| n.clone()).collect();
    let mut p = a.launch.prepare(&names)?;
    for (k, _) in &dumps {
        check_dump(&p.args, *k)?;
    }
    let gpu = a.launch.timing.gpu()?;
    // The launch takes the argument buffers over (no second copy of a large buffer).
    let args = std::mem::take(&mut p.args);
    let (r, timing) = match &gpu {
        None => (run(&p.kernel, &p.cfg, args, &mut NoObserver), None),
        Some(g) => {
            let t = reconverge_timing::run_timed(&p.kernel, &p.cfg, g, args, a.launch.timing.options());
            (t.run, Some(t.timing))
        }
    };
    for (k, f) in &dumps {
        if let Some(b) = k.find(&r.buffers, &r.fields) {
            write_npy(f, b)?;
        }
    }
    for ((_, f), (_, b)) in global_dumps.iter().zip(&r.globals) {
        write_npy(f, b)?;
    }
    print_printf(&r, a.json)?;
    let name = p.kernel.program().kernel_name().to_string();
    if a.json {
        let j = reconverge_report::run::run_json_timed(
            &name,
            p.kernel.mechanism().name(),
            p.cfg.warp_size,
            &r,
            timing.as_ref(),
            gpu.as_ref(),
        );
        outln!("{}", serde_json::to_string(&j).unwrap_or_default())?;
    } else {
        out!("{}", run_text(&name, p.kernel.mechanism().name(), p.cfg.warp_size, &r))?;
        if let (Some(t), Some(g)) = (&timing, &gpu) {
            out!("{}", reconverge_report::run::timing_text(t, g))?;
        }
        if a.branches {
            let config = gpu.as_ref().map(|g| g.name.as_str());
            let mut rows = reconverge_report::records::branch_records(
                &name,
                config,
                p.cfg.warp_size,
                p.kernel.mechanism().name(),
                &r,
            );
            reconverge_report::records::sort_branches(&mut rows);
            outln!("\nbranches, most divergent first:")?;
            out!("{}", reconverge_report::records::branch_table(&rows).render())?;
        }
    }
    exit_for(&r)
}

/// Prints what the kernel's `printf` calls printed, in thread order and exactly as the kernel formatted
/// it: on standard output before the report (a line break is added when the text does not end in one),
/// or on standard error with `--json`, whose standard output is one JSON object. A warning on standard
/// error says when the launch's output limit dropped some.
fn print_printf(r: &RunResult, json: bool) -> Result<(), Failure> {
    let text: String = r.printf_in_thread_order().iter().map(|p| p.text.as_str()).collect();
    if json {
        eprint!("{text}");
    } else {
        out!("{text}")?;
        if !text.is_empty() && !text.ends_with('\n') {
            outln!()?;
        }
    }
    if r.printf_truncated {
        eprintln!(
            "warning: the kernel's printf output exceeded {} bytes (CUDA's default printf buffer); later calls \
             were dropped",
            reconverge_sim::printf::OUTPUT_LIMIT
        );
    }
    Ok(())
}

/// Checks that `--dump KEY` names a buffer: a buffer argument (or a pointer into one), or a pointer field
/// of a struct argument.
fn check_dump(args: &[Arg], k: OutputKey) -> Result<(), Failure> {
    let i = k.arg;
    match (args.get(i), k.field) {
        (Some(a), None) if a.buffer().is_some() => Ok(()),
        (Some(Arg::Struct(s)), Some(f)) if s.pointers.iter().any(|p| p.field == f) => Ok(()),
        (Some(Arg::Struct(s)), _) => {
            let fields: Vec<String> = s.pointers.iter().map(|p| format!("{i}.{}", p.field)).collect();
            let fields = if fields.is_empty() { "none".to_string() } else { fields.join(", ") };
            let key = k.field.map_or(i.to_string(), |f| format!("{i}.{f}"));
            Err(Failure::input(format!(
                "--dump {key}: argument {i} is a struct; dump the buffer of one of its pointer fields ({fields})"
            )))
        }
        (_, Some(f)) => Err(Failure::input(format!("--dump {i}.{f}: argument {i} is not a struct"))),
        (_, None) => Err(Failure::input(format!("--dump {i}: argument {i} is not a buffer"))),
    }
}

/// Writes `b` as a `.npy` file (the header, then the buffer's bytes as they are: no second copy).
fn write_npy(path: &str, b: &reconverge_program::Buffer) -> Result<(), Failure> {
    use std::io::Write as _;
    let fail = |e: std::io::Error| Failure::input(format!("cannot write `{path}`: {e}"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    f.write_all(&reconverge_suite::npy::header(b)).map_err(fail)?;
    f.write_all(&b.bytes).map_err(fail)?;
    f.flush().map_err(fail)
}

/// Parses `--window CYCLES` (the first CYCLES cycles) or `--window FROM:TO`.
fn window(text: &str) -> Result<(u64, u64), Failure> {
    let bad = || Failure::input(format!("--window `{text}`: expected CYCLES or FROM:TO (cycle numbers, FROM < TO)"));
    let (a, b) = text.split_once(':').unwrap_or(("0", text));
    let (from, to) = (a.trim().parse::<u64>().map_err(|_| bad())?, b.trim().parse::<u64>().map_err(|_| bad())?);
    if from >= to {
        return Err(bad());
    }
    Ok((from, to))
}

/// Writes a timed run's timeline in the Chrome trace-event format to `path`, streaming.
pub(crate) fn write_trace(
    path: &str,
    timeline: &reconverge_timing::Timeline,
    prog: &reconverge_program::Program,
    kernel: &str,
    mechanism: &str,
) -> Result<(), Failure> {
    use std::io::Write as _;
    let fail = |e: std::io::Error| Failure::input(format!("cannot write `{path}`: {e}"));
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    reconverge_report::perfetto::write_chrome_trace(timeline, prog, kernel, mechanism, &mut f).map_err(fail)?;
    f.flush().map_err(fail)
}

/// `trace --perfetto`: the timed run's timeline.
fn perfetto_cmd(a: &TraceArgs, path: &str) -> Result<(), Failure> {
    let p = a.launch.prepare(&[])?;
    let gpu = crate::launch_args::gpu_config(&a.launch.timing.config)?;
    let (from, to) = match &a.window {
        Some(w) => window(w)?,
        None => (0, u64::MAX),
    };
    if a.max_events == 0 {
        return Err(Failure::input("--max-events must be at least 1"));
    }
    let spec = reconverge_timing::TraceSpec { from, to, max_events: a.max_events, bucket: 1000 };
    let (t, timeline) =
        reconverge_timing::run_timed_traced(&p.kernel, &p.cfg, &gpu, &p.args, a.launch.timing.options(), Some(spec));
    let name = p.kernel.program().kernel_name().to_string();
    write_trace(path, &timeline, p.kernel.program(), &name, p.kernel.mechanism().name())?;
    outln!(
        "wrote {path}: {} events of kernel {name} under {} on {}, {} cycles (open it in the Perfetto UI or chrome://tracing)",
        timeline.events.len(),
        p.kernel.mechanism(),
        gpu.name,
        t.timing.cycles
    )?;
    if timeline.dropped > 0 {
        outln!(
            "note: {} more events were left out by --max-events {}; narrow the cycles with --window FROM:TO or raise the cap",
            timeline.dropped,
            a.max_events
        )?;
    }
    exit_for(&t.run)
}

/// `trace --export-paths`: the path trace of the CTA's warps for the hardware test benches.
fn export_paths_cmd(a: &TraceArgs, p: &crate::launch_args::Prepared, path: &str, warps: u32) -> Result<(), Failure> {
    let mech = p.kernel.mechanism().name();
    if !p.kernel.mechanism().info().exports_paths {
        let units: Vec<&str> =
            reconverge_mechanism::REGISTRY.iter().filter(|e| e.info.exports_paths).map(|e| e.info.name).collect();
        return Err(Failure::input(format!(
            "--export-paths records seed 003's path-tracking units: use --mechanism {} (not {})",
            units.join(" or "),
            mech
        )));
    }
    if a.blocks {
        return Err(Failure::input("--blocks and --export-paths are separate outputs: give one"));
    }
    let mut rec = PathRecorder::new(a.cta, a.limit);
    let r = run(&p.kernel, &p.cfg, &p.args, &mut rec);
    if let Some(e) = &rec.error {
        return Err(Failure::input(format!("--export-paths: {e}")));
    }
    let name = p.kernel.program().kernel_name().to_string();
    let text = PathRecorder::header(&name, mech, a.cta, p.cfg.warp_size, warps) + &rec.body;
    std::fs::write(path, text).map_err(|e| Failure::input(format!("cannot write `{path}`: {e}")))?;
    outln!(
        "wrote {path}: {} steps of {} warps of CTA {} of kernel {name} under {mech}, warp size {} (at most {} successor paths per step)",
        rec.steps,
        rec.warps_seen,
        a.cta,
        p.cfg.warp_size,
        rec.max_successors
    )?;
    if rec.truncated {
        outln!("note: the trace was cut at --limit {} steps", a.limit)?;
    }
    if rec.reorders > 0 {
        outln!(
            "note: at {} steps a path waited at a barrier and another one issued; the hardware units do not model that and their benches will report those steps",
            rec.reorders
        )?;
    }
    exit_for(&r)
}

/// Runs `reconverge trace`.
pub(crate) fn trace_cmd(a: TraceArgs) -> Result<(), Failure> {
    if let Some(path) = a.perfetto.clone() {
        if a.export_paths.is_some() {
            return Err(Failure::input("--perfetto and --export-paths are separate outputs: give one"));
        }
        return perfetto_cmd(&a, &path);
    }
    if a.window.is_some() {
        return Err(Failure::input("--window applies to --perfetto"));
    }
    let p = a.launch.prepare(&[])?;
    if a.cta >= p.cfg.num_ctas() {
        return Err(Failure::input(format!(
            "--cta {}: the grid has {} CTAs (valid: 0..={})",
            a.cta,
            p.cfg.num_ctas(),
            p.cfg.num_ctas() - 1
        )));
    }
    let warps = p.cfg.threads_per_cta().div_ceil(p.cfg.warp_size);
    if a.warp >= warps {
        return Err(Failure::input(format!(
            "--warp {}: a CTA of {} threads has {warps} warps of {} (valid: 0..={})",
            a.warp,
            p.cfg.threads_per_cta(),
            p.cfg.warp_size,
            warps - 1
        )));
    }
    if let Some(path) = a.export_paths.clone() {
        return export_paths_cmd(&a, &p, &path, warps);
    }
    let per_warp = p.kernel.mechanism().scope() == reconverge_mechanism::Scope::Warp;
    let mut rec = TraceRecorder::new(p.kernel.program(), a.cta, per_warp.then_some(a.warp), p.cfg.warp_size, a.limit)
        .skip(a.skip);
    if a.blocks {
        if !per_warp {
            return Err(Failure::input(format!(
                "--blocks traces one warp's path list; {} regroups threads across warps",
                p.kernel.mechanism()
            )));
        }
        rec = rec.figure();
    }
    let r = run(&p.kernel, &p.cfg, &p.args, &mut rec);
    let whom = if per_warp {
        format!("CTA {} warp {}", a.cta, a.warp)
    } else {
        format!("CTA {} (every warp: {} regroups threads across warps)", a.cta, p.kernel.mechanism())
    };
    outln!(
        "trace of {whom} of kernel {} under {}, warp size {}",
        p.kernel.program().kernel_name(),
        p.kernel.mechanism(),
        p.cfg.warp_size
    )?;
    outln!("{}", rec.header())?;
    for l in &rec.lines {
        outln!("{l}")?;
    }
    if rec.truncated {
        outln!("... (trace cut at --limit {})", a.limit)?;
    }
    outln!("outcome: {}", r.outcome())?;
    exit_for(&r)
}
