//! `reconverge-fuzz-cudart`: a fuzzing campaign of the CUDA runtime shim (`libreconverge_cudart.so`).
//!
//! ```text
//! cargo build --release -p reconverge-cudart -p reconverge-fuzz
//! target/release/reconverge-fuzz-cudart --seconds 1200 [--seed 1] [--jobs 1] [--out fuzz-cudart-findings] [--json]
//! target/release/reconverge-fuzz-cudart --replay SEED [--keep 0,3,7]
//! ```
//! Each sequence runs in a child (this binary with `--child SEED`) that loads the shim and makes a seeded
//! random sequence of runtime calls after registering a fat binary (damaged for about a third of the
//! seeds); see `reconverge_fuzz::cudart`. Exit status: 0 when no child crashed, 1 when one did (each is
//! saved under `--out` as `seed-N/` and minimised), 2 when the fuzzer itself could not run.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
use clap::Parser;
use reconverge_fuzz::cudart::campaign::{self, End, Options};
use reconverge_fuzz::cudart::child::{run_child, ChildOptions};
use reconverge_fuzz::cudart::plan::Plan;
use reconverge_fuzz::cudart::{find_shim, HarnessError, HARNESS_EXIT};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(
    name = "reconverge-fuzz-cudart",
    about = "Fuzz the CUDA runtime shim with random runtime-call sequences and damaged fat binaries."
)]
struct Args {
    /// Seconds to run (default 60 when --count is not given either).
    #[arg(long)]
    seconds: Option<f64>,
    /// Run this many sequences (children) at most.
    #[arg(long)]
    count: Option<u64>,
    /// The first seed; sequence i uses seed + i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Children in parallel.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Directory for crashes (seed-N/) and the children's working files (.work/).
    #[arg(long, default_value = "fuzz-cudart-findings")]
    out: PathBuf,
    /// Print the totals as JSON (on standard output) instead of text.
    #[arg(long)]
    json: bool,
    /// Print the plan of SEED and run its child in the foreground, its call log on standard error.
    #[arg(long, value_name = "SEED")]
    replay: Option<u64>,
    /// With --replay (and in children): only these calls of the plan, by index (`-` for none).
    #[arg(long, value_name = "LIST")]
    keep: Option<String>,
    /// The shim (default: RECONVERGE_CUDART, or the newest libreconverge_cudart.so beside this binary,
    /// in its deps/ or one directory up).
    #[arg(long)]
    shim: Option<PathBuf>,
    /// Seconds a child may run before it counts as hung (a crash).
    #[arg(long, default_value_t = 20)]
    timeout: u64,
    /// Do not minimise crashes.
    #[arg(long)]
    no_minimise: bool,
    /// Run as a child: the plan of this seed.
    #[arg(long, hide = true, value_name = "SEED")]
    child: Option<u64>,
    /// A child's call log.
    #[arg(long, hide = true)]
    log: Option<PathBuf>,
    /// Children crash on purpose at this call (checks the harness).
    #[arg(long, hide = true)]
    canary: Option<usize>,
}

fn main() -> ExitCode {
    let a = Args::parse();
    let keep = match a.keep.as_deref().map(campaign::parse_keep).transpose() {
        Ok(k) => k,
        Err(e) => {
            eprintln!(
                "reconverge-fuzz-cudart: --keep {}: not a list of call indices ({e})",
                a.keep.as_deref().unwrap_or("")
            );
            return ExitCode::from(2);
        }
    };
    if let Some(seed) = a.child {
        let Some(shim) = a.shim.clone() else {
            eprintln!("reconverge-fuzz-cudart: --child needs --shim");
            std::process::exit(HARNESS_EXIT);
        };
        let opts = ChildOptions { seed, shim, log: a.log.clone(), keep, canary: a.canary };
        if let Err(e) = run_child(&opts) {
            eprintln!("reconverge-fuzz-cudart: {e}");
            std::process::exit(HARNESS_EXIT);
        }
        std::process::exit(0);
    }
    match parent(&a, keep) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("reconverge-fuzz-cudart: {e}");
            ExitCode::from(2)
        }
    }
}

/// A campaign or a replay; whether no child crashed.
fn parent(a: &Args, keep: Option<Vec<usize>>) -> Result<bool, HarnessError> {
    let exe = std::env::current_exe().map_err(|e| HarnessError::Io("this executable".into(), e))?;
    let shim = find_shim(a.shim.as_deref(), &exe)?;
    let opts = Options {
        exe,
        shim,
        first_seed: a.seed,
        count: a.count,
        seconds: a.seconds.or(if a.count.is_none() { Some(60.0) } else { None }),
        jobs: a.jobs.max(1),
        timeout: Duration::from_secs(a.timeout),
        out: a.out.clone(),
        minimise: !a.no_minimise,
        canary: a.canary,
    };
    if let Some(seed) = a.replay {
        return replay(&opts, seed, keep.as_deref());
    }
    let mut last = Instant::now();
    let totals = campaign::run(&opts, |t| {
        if last.elapsed() >= Duration::from_secs(30) {
            last = Instant::now();
            eprintln!("{} sequences, {} calls, {} crashes", t.children, t.calls, t.crashes.len());
        }
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&totals).unwrap_or_default());
    } else {
        print!("{}", totals.summary());
    }
    Ok(totals.crashes.is_empty())
}

/// Prints the plan of `seed` and runs its child in the foreground (the log on standard error).
fn replay(opts: &Options, seed: u64, keep: Option<&[usize]>) -> Result<bool, HarnessError> {
    print!("{}", Plan::generate(seed).describe());
    let mut cmd = std::process::Command::new(&opts.exe);
    cmd.arg("--child").arg(seed.to_string()).arg("--shim").arg(&opts.shim);
    if let Some(k) = keep {
        cmd.arg("--keep").arg(campaign::keep_arg(k));
    }
    campaign::set_env(&mut cmd, seed);
    let status = cmd.status().map_err(|e| HarnessError::Io(opts.exe.display().to_string(), e))?;
    let end = End::of(status);
    println!("seed {seed}: {} ({})", end.describe(), if end.is_crash() { "a crash" } else { "fine" });
    Ok(!end.is_crash())
}
