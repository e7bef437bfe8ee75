//! `reconverge report`: one launch under one or more mechanisms, as a self-contained HTML page.

use crate::launch_args::LaunchArgs;
use crate::{outln, Failure};
use clap::Args;
use reconverge_mechanism::Mechanism;
use reconverge_report::html::{run_report, MechanismRun, RunReport, SourceView};
use reconverge_report::records::RunRecord;
use reconverge_report::timeline::{CycleBuckets, TimelineRecorder};
use reconverge_sim::{run, RunResult};

/// Arguments of `reconverge report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Every mechanism (instead of --mechanism).
    #[arg(long)]
    all: bool,
    /// The CUDA source for the per-line heat map, when the kernel's `.loc` lines name a file that is not
    /// at that path (default: the `.cu` input, or the file `.loc` names, else the PTX).
    #[arg(long, value_name = "FILE.cu")]
    source: Option<String>,
    /// The HTML file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    output: String,
    /// Also write each mechanism's timed-run timeline beside the report, as a Chrome trace-event file
    /// (FILE.MECHANISM.trace.json, at most 200,000 events, about 150 bytes each; open it in the Perfetto
    /// UI or chrome://tracing, where one microsecond is one cycle). Off by default.
    #[arg(long)]
    timeline: bool,
}

/// One mechanism's functional run (with its timeline) and timed record.
struct Done {
    mech: Mechanism,
    prog: reconverge_program::Program,
    result: RunResult,
    timeline: TimelineRecorder,
    warp_size: u32,
    timed: Option<RunRecord>,
    /// The timed run (`None` in functional mode).
    timed_result: Option<RunResult>,
    /// The timed run's issues by cycle (`None` in functional mode).
    by_cycle: Option<CycleBuckets>,
    /// The timed run's Chrome trace file (beside the report; `--timeline`).
    trace_file: Option<String>,
    /// The timed run's timing statistics (`None` in functional mode).
    timing: Option<reconverge_timing::TimingStats>,
    /// The timed run's idle scheduler-cycles per pc (`None` in functional mode).
    pc_stalls: Option<Vec<reconverge_timing::stats::StallCounts>>,
}

/// Runs `reconverge report`.
pub(crate) fn run_cmd(a: ReportArgs) -> Result<(), Failure> {
    // --suite-kernel: the file, grid and block below come from the manifest.
    let a = ReportArgs { launch: a.launch.resolved()?, ..a };
    let mechs = if a.all { Mechanism::defaults().collect() } else { a.launch.mechanisms()? };
    let gpu = a.launch.timing.gpu()?;
    let mut done = Vec::new();
    for &m in &mechs {
        done.push(run_one(&a, m, gpu.as_ref())?);
    }
    let first = &done[0];
    let loaded = crate::source::load(&a.launch.file, &a.launch.nvrtc_opts)?;
    let report_cfg = reconverge_report::cfg_report(&loaded.module, &a.launch.file, &loaded.ptx, None, None);
    let kernel_name = first.prog.kernel_name().to_string();
    let cfg = report_cfg.functions.iter().find(|f| f.name == first.prog.functions[0].name);
    // The heat map shows the CUDA source when the kernel's `.loc` names a readable file (or the input is
    // CUDA C), else the PTX, saying why on standard error and in the page.
    let loc_file = first.prog.info.iter().find_map(|i| i.loc.map(|l| l.file));
    let found = cuda_source(&a.launch.file, a.source.as_deref(), loc_file, &first.prog.src_files)?;
    let (name, text, cuda_file, fallback) = match found {
        Cuda::Found(f, path, text) => (path, text, Some(f), None),
        Cuda::NoLineInfo => (
            a.launch.file.clone(),
            loaded.ptx.clone(),
            None,
            Some("The kernel has no CUDA line information (.loc), so the heat map shows PTX lines.".to_string()),
        ),
        Cuda::NotFound(named) => {
            eprintln!(
                "note: the kernel's line information names `{named}`, which is neither at that path nor beside `{}`; the heat map shows PTX lines instead (give the CUDA file with --source FILE.cu)",
                a.launch.file
            );
            let why = format!("The kernel's line information names {named}, which was not found (neither at that path nor beside {}), so the heat map shows PTX lines. Give the CUDA file with --source FILE.cu to see CUDA lines.", a.launch.file);
            (a.launch.file.clone(), loaded.ptx.clone(), None, Some(why))
        }
    };
    let launch = format!(
        "{} · grid {} · block {} · warp size {} · {}",
        a.launch.file,
        a.launch.grid,
        a.launch.block,
        first.warp_size,
        gpu.as_ref().map(|g| format!("GPU {}", g.name)).unwrap_or_else(|| "functional".into())
    );
    let report = RunReport {
        kernel: &kernel_name,
        launch: &launch,
        warp_size: first.warp_size,
        runs: done
            .iter()
            .map(|d| MechanismRun {
                mechanism: d.mech.name(),
                prog: &d.prog,
                result: &d.result,
                timeline: &d.timeline,
                by_cycle: d.by_cycle.as_ref(),
                timed: d.timed.as_ref(),
                timed_result: d.timed_result.as_ref(),
                trace_file: d.trace_file.as_deref().map(file_name),
                timing: d.timing.as_ref(),
                pc_stalls: d.pc_stalls.as_deref(),
            })
            .collect(),
        source: SourceView { name: &name, text: &text, cuda_file, fallback: fallback.as_deref() },
        cfg,
        gpu: gpu.as_ref(),
    };
    let html = run_report(&report);
    std::fs::write(&a.output, html).map_err(|e| Failure::input(format!("cannot write `{}`: {e}", a.output)))?;
    outln!("wrote {} ({} mechanisms)", a.output, done.len())?;
    for d in &done {
        if let Some(e) = &d.result.error {
            outln!("  {}: {}", d.mech, crate::errors::render(e))?;
        }
    }
    Ok(())
}

/// The plots over cycles: at most this many points per mechanism.
const CYCLE_BUCKETS: usize = 150;

/// Runs the launch under `m`: functionally (for the timeline over instructions, the histogram, the heat
/// map and the CFG) and, on a GPU, timed (for the cycles, the plots over cycles, the idle cycles per line
/// and, with `--timeline`, the trace file).
fn run_one(a: &ReportArgs, m: Mechanism, gpu: Option<&reconverge_timing::GpuConfig>) -> Result<Done, Failure> {
    let p = a.launch.prepare_for(m, &[])?;
    let mut rec = TimelineRecorder::new(p.kernel.program(), p.cfg.warp_size);
    let result = run(&p.kernel, &p.cfg, &p.args, &mut rec);
    let (mut timing, mut pc_stalls) = (None, None);
    let (timed, by_cycle, trace_file, timed_result) = match gpu {
        Some(g) => {
            let spec = reconverge_timing::TraceSpec { max_events: PLOT_EVENTS, ..Default::default() };
            let record = reconverge_timing::Record { trace: Some(spec), pc_stalls: true, pc_counts: false };
            let (t, mut timeline) =
                reconverge_timing::run_timed_recorded(&p.kernel, &p.cfg, g, &p.args, a.launch.timing.options(), record);
            let per_sm = PLOT_EVENTS / g.num_sms.max(1) as usize;
            let prog = p.kernel.program();
            let by_cycle =
                CycleBuckets::from_timeline(&timeline, (prog, p.cfg.warp_size), t.timing.cycles, CYCLE_BUCKETS, per_sm);
            let file = if a.timeline {
                // The file keeps the run's earliest events.
                if timeline.events.len() > TRACE_EVENTS {
                    timeline.dropped += (timeline.events.len() - TRACE_EVENTS) as u64;
                    timeline.events.truncate(TRACE_EVENTS);
                }
                let file = trace_path(&a.output, m);
                crate::run_cmd::write_trace(&file, &timeline, prog, prog.kernel_name(), m.name())?;
                Some(file)
            } else {
                None
            };
            let mut rec =
                RunRecord::new("", Some(&g.name), p.cfg.warp_size, m.name(), None, Some(&t.run), Some(&t.timing));
            if let Some(e) = reconverge_energy::energy(&t.timing, g) {
                rec.set_energy(&e);
            }
            (timing, pc_stalls) = (Some(t.timing), t.pc_stalls);
            (Some(rec), Some(by_cycle), file, Some(t.run))
        }
        None => (None, None, None, None),
    };
    Ok(Done {
        mech: m,
        prog: p.kernel.into_program(),
        result,
        timeline: rec,
        warp_size: p.cfg.warp_size,
        timed,
        timed_result,
        by_cycle,
        trace_file,
        timing,
        pc_stalls,
    })
}

/// Events each mechanism's timed run records for the plots over cycles (some 50 bytes each, counted
/// against `--max-memory`; shared evenly by the SMs): a line stops early, and says so, where an SM's share
/// runs out.
const PLOT_EVENTS: usize = 1_000_000;

/// Events a `--timeline` file keeps, the run's earliest (about 150 bytes each in the file).
const TRACE_EVENTS: usize = 200_000;

/// `report.html` → `report.tbc.trace.json` (mechanism names made file-safe).
fn trace_path(output: &str, m: Mechanism) -> String {
    let stem = output.strip_suffix(".html").unwrap_or(output);
    let safe: String = m.name().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '-' }).collect();
    format!("{stem}.{safe}.trace.json")
}

fn file_name(path: &str) -> &str {
    std::path::Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or(path)
}

/// Where the heat map's CUDA source comes from.
pub(crate) enum Cuda {
    /// The `.loc` file index, the file's path and its text.
    Found(u32, String, String),
    /// The kernel has no `.loc` lines.
    NoLineInfo,
    /// The kernel's `.loc` lines name this file, which was not found.
    NotFound(String),
}

/// The CUDA source of a kernel whose `.loc` lines name file `loc_file` (`files`: the paths of the `.file`
/// indices) and the index it is: `--source` (`given`), the `.cu` input itself, or the file the `.loc`
/// lines name (as written, or beside `input`) when readable; else why not (the heat map then shows the
/// PTX).
pub(crate) fn cuda_source(
    input: &str,
    given: Option<&str>,
    loc_file: Option<u32>,
    files: &[(u32, String)],
) -> Result<Cuda, Failure> {
    let Some(file) = loc_file else {
        return match given {
            Some(g) => Err(Failure::input(format!("--source {g}: the kernel has no CUDA line information (.loc)"))),
            None => Ok(Cuda::NoLineInfo),
        };
    };
    if let Some(g) = given {
        let text = std::fs::read_to_string(g).map_err(|e| Failure::input(format!("cannot read `{g}`: {e}")))?;
        return Ok(Cuda::Found(file, g.to_string(), text));
    }
    let path = files.iter().find(|(n, _)| *n == file).map(|(_, p)| p.clone()).unwrap_or_default();
    let mut candidates = vec![std::path::PathBuf::from(input), std::path::PathBuf::from(&path)];
    if let Some(name) = std::path::Path::new(&path).file_name() {
        candidates.push(std::path::Path::new(input).with_file_name(name));
    }
    let cu = |c: &std::path::PathBuf| c.extension().is_some_and(|e| e == "cu");
    let found = candidates
        .iter()
        .filter(|c| cu(c))
        .find_map(|c| std::fs::read_to_string(c).ok().map(|t| Cuda::Found(file, c.display().to_string(), t)));
    let named = if path.is_empty() { format!("CUDA file {file}") } else { path };
    Ok(found.unwrap_or(Cuda::NotFound(named)))
}
