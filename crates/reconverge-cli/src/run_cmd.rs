//! `reconverge run` and `reconverge trace`.

use crate::launch_args::LaunchArgs;
use crate::{out, outln, Failure};
use clap::Args;
use reconverge_report::run::run_text;
use reconverge_report::trace::TraceRecorder;
use reconverge_sim::{run, NoObserver, RunResult};

/// Arguments of `reconverge run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    launch: LaunchArgs,
    /// Write the final contents of argument INDEX (0-based) to FILE.npy (repeatable).
    #[arg(long = "dump", value_name = "INDEX=FILE.npy")]
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
pub struct TraceArgs {
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
}

fn exit_for(r: &RunResult) -> Result<(), Failure> {
    match &r.error {
        None => Ok(()),
        Some(e) => Err(Failure { message: format!("error: {e}"), code: e.exit_code() as u8 }),
    }
}

/// Runs `reconverge run`.
pub fn run_cmd(a: RunArgs) -> Result<(), Failure> {
    let mut dumps = Vec::new();
    for d in &a.dumps {
        let (i, f) = d
            .split_once('=')
            .and_then(|(i, f)| i.parse::<usize>().ok().map(|i| (i, f.to_string())))
            .ok_or_else(|| Failure::input(format!("--dump `{d}`: expected INDEX=FILE.npy")))?;
        dumps.push((i, f));
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
    let p = a.launch.prepare(&names)?;
    for (i, _) in &dumps {
        if !matches!(p.args.get(*i), Some(reconverge_sim::Arg::Buffer(_))) {
            return Err(Failure::input(format!("--dump {i}: argument {i} is not a buffer")));
        }
    }
    let gpu = a.launch.timing.gpu()?;
    let (r, timing) = match &gpu {
        None => (run(&p.prog, p.mechanism, &p.cfg, &p.args, &mut NoObserver), None),
        Some(g) => {
            let t = reconverge_timing::run_timed(
                &p.prog,
                p.mechanism,
                &p.cfg,
                g,
                &p.args,
                a.launch.timing.max_cycles,
                a.launch.timing.threads,
            );
            (t.run, Some(t.timing))
        }
    };
    for (i, f) in &dumps {
        if let Some(Some(b)) = r.buffers.get(*i) {
            std::fs::write(f, reconverge_suite::npy::write(b))
                .map_err(|e| Failure::input(format!("cannot write `{f}`: {e}")))?;
        }
    }
    for ((_, f), (_, b)) in global_dumps.iter().zip(&r.globals) {
        std::fs::write(f, reconverge_suite::npy::write(b))
            .map_err(|e| Failure::input(format!("cannot write `{f}`: {e}")))?;
    }
    let name = p.prog.kernel_name().to_string();
    if a.json {
        let j = reconverge_report::run::run_json_timed(
            &name,
            p.mechanism.name(),
            p.cfg.warp_size,
            &r,
            timing.as_ref(),
            gpu.as_ref(),
        );
        outln!("{}", serde_json::to_string(&j).unwrap_or_default())?;
    } else {
        out!("{}", run_text(&name, p.mechanism.name(), p.cfg.warp_size, &r))?;
        if let (Some(t), Some(g)) = (&timing, &gpu) {
            out!("{}", reconverge_report::run::timing_text(t, g))?;
        }
        if a.branches {
            let config = gpu.as_ref().map(|g| g.name.as_str());
            let mut rows =
                reconverge_report::records::branch_records(&name, config, p.cfg.warp_size, p.mechanism.name(), &r);
            reconverge_report::records::sort_branches(&mut rows);
            outln!("\nbranches, most divergent first:")?;
            out!("{}", reconverge_report::records::branch_table(&rows).render())?;
        }
    }
    exit_for(&r)
}

/// Runs `reconverge trace`.
pub fn trace_cmd(a: TraceArgs) -> Result<(), Failure> {
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
    let per_warp = p.mechanism.scope() == reconverge_sim::mechanism::Scope::Warp;
    let mut rec = TraceRecorder::new(&p.prog, a.cta, per_warp.then_some(a.warp), p.cfg.warp_size, a.limit).skip(a.skip);
    if a.blocks {
        if !per_warp {
            return Err(Failure::input(format!(
                "--blocks traces one warp's path list; {} regroups threads across warps",
                p.mechanism
            )));
        }
        rec = rec.figure();
    }
    let r = run(&p.prog, p.mechanism, &p.cfg, &p.args, &mut rec);
    let whom = if per_warp {
        format!("CTA {} warp {}", a.cta, a.warp)
    } else {
        format!("CTA {} (every warp: {} regroups threads across warps)", a.cta, p.mechanism)
    };
    outln!("trace of {whom} of kernel {} under {}, warp size {}", p.prog.kernel_name(), p.mechanism, p.cfg.warp_size)?;
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
