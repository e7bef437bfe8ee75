//! `reconverge exec`: runs an unmodified CUDA program on the simulated GPU through the drop-in runtime
//! (`reconverge-cudart`, loaded as `libcudart.so.13`), then summarises its launches per kernel.

use crate::Failure;
use clap::Args;
use reconverge_records::aggregate;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Arguments of `reconverge exec`.
#[derive(Args)]
#[command(after_help = env_help())]
pub struct ExecArgs {
    /// The divergence mechanism every launch runs under.
    #[arg(long, default_value = "pdom", value_parser = crate::launch_args::mechanism_values())]
    mechanism: String,
    /// GPU configuration: a preset or a TOML file (docs/configuration.md).
    #[arg(long, default_value = "gtx480")]
    config: String,
    /// Functional simulation only: no cycles, fastest.
    #[arg(long, conflicts_with = "config")]
    functional: bool,
    /// Threads per warp (a power of two, 1..64); default: the configuration's.
    #[arg(long)]
    warp_size: Option<u32>,
    /// Write one JSON line per launch (the kernel, grid, block and `run --json`'s statistics) to FILE.
    #[arg(long, value_name = "FILE.jsonl")]
    stats: Option<PathBuf>,
    /// Write an HTML page of the launches: per-kernel totals and every launch.
    #[arg(long, value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Stop a launch after this many warp instructions (the program exits with status 4).
    #[arg(long, default_value_t = crate::launch_args::DEFAULT_MAX_INSTRUCTIONS)]
    max_instructions: u64,
    /// Stop a launch after this many cycles (status 4).
    #[arg(long)]
    max_cycles: Option<u64>,
    /// Most bytes of simulated device memory and model state (default 8 GiB; K/M/G suffixes).
    #[arg(long, value_name = "BYTES")]
    max_memory: Option<String>,
    /// Host threads of the timing model (0 = all cores).
    #[arg(long, default_value_t = 0, value_parser = crate::launch_args::host_threads)]
    threads: usize,
    /// Write each module's PTX (the code that runs) into DIR; messages then name its lines.
    #[arg(long, value_name = "DIR")]
    keep_ptx: Option<PathBuf>,
    /// The program and its arguments (after `--`).
    #[arg(required = true, last = true, value_name = "PROGRAM [ARGS]...")]
    program: Vec<String>,
}

/// The shim's file name as cargo builds it.
const SHIM: &str = "libreconverge_cudart.so";

/// The help text after the options: the environment variables the shim reads (from its own table).
pub fn env_help() -> String {
    let mut s = String::from(
        "The program runs with reconverge's libcudart.so.13 first on its library path; the flags reach it as \
         environment variables, which scripts that launch programs themselves can set directly:\n",
    );
    for (var, what) in reconverge_cudart::settings::VARIABLES {
        s.push_str(&format!("  {var:<29} {what}\n"));
    }
    s.push_str("See docs/cudart.md for what the runtime supports and how to compile for it.");
    s
}

/// Finds the shim: `RECONVERGE_CUDART`, or the newest of the copies beside this executable, in its
/// `deps/` (where cargo leaves it when it builds it as the command line's dependency) and one directory
/// up (test binaries).
fn find_shim() -> Result<PathBuf, Failure> {
    if let Ok(p) = std::env::var("RECONVERGE_CUDART") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| Failure::input(format!("cannot locate reconverge: {e}")))?;
    let dir = exe.parent().unwrap_or(Path::new("."));
    // The newest copy: a direct `cargo build -p reconverge-cudart` leaves one beside the binary, building
    // the command line refreshes the one in `deps/`.
    let newest = [Some(dir.to_path_buf()), Some(dir.join("deps")), dir.parent().map(Path::to_path_buf)]
        .into_iter()
        .flatten()
        .map(|d| d.join(SHIM))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t);
    if let Some((_, p)) = newest {
        return Ok(p);
    }
    Err(Failure::input(format!(
        "the CUDA runtime shim {SHIM} is not beside {} (build it with `cargo build --release -p reconverge-cudart`, \
         or point RECONVERGE_CUDART at it)",
        exe.display()
    )))
}

/// A directory holding `libcudart.so.13` (a link to the shim) for the program's library path.
fn library_dir(shim: &Path) -> Result<PathBuf, Failure> {
    let dir = std::env::temp_dir().join(format!("reconverge-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    let link = dir.join("libcudart.so.13");
    let _ = std::fs::remove_file(&link);
    let target = shim.canonicalize().unwrap_or_else(|_| shim.to_path_buf());
    std::os::unix::fs::symlink(&target, &link).map_err(|e| Failure::input(format!("{}: {e}", link.display())))?;
    Ok(dir)
}

/// The environment the shim reads, from the flags.
fn shim_env(a: &ExecArgs, stats: &Path) -> Result<Vec<(&'static str, String)>, Failure> {
    let mut env = vec![
        ("RECONVERGE_MECHANISM", a.mechanism.clone()),
        ("RECONVERGE_CONFIG", if a.functional { "functional".into() } else { a.config.clone() }),
        ("RECONVERGE_STATS", stats.display().to_string()),
        ("RECONVERGE_MAX_INSTRUCTIONS", a.max_instructions.to_string()),
        ("RECONVERGE_THREADS", a.threads.to_string()),
    ];
    if !a.functional {
        // Checked here so that a bad --config is the command's error, not the program's.
        crate::launch_args::gpu_config(&a.config)?;
    }
    if let Some(w) = a.warp_size {
        env.push(("RECONVERGE_WARP_SIZE", w.to_string()));
    }
    if let Some(c) = a.max_cycles {
        env.push(("RECONVERGE_MAX_CYCLES", c.to_string()));
    }
    let memory = match &a.max_memory {
        Some(t) => crate::launch_args::bytes("max-memory", t)?,
        None => crate::launch_args::default_max_memory(),
    };
    env.push(("RECONVERGE_MAX_MEMORY", memory.to_string()));
    if let Some(d) = &a.keep_ptx {
        std::fs::create_dir_all(d).map_err(|e| Failure::input(format!("--keep-ptx {}: {e}", d.display())))?;
        env.push(("RECONVERGE_PTX_DIR", d.display().to_string()));
    }
    Ok(env)
}

/// Runs `reconverge exec`.
pub fn run(a: ExecArgs) -> Result<(), Failure> {
    let shim = find_shim()?;
    let libdir = library_dir(&shim)?;
    let stats = a.stats.clone().unwrap_or_else(|| libdir.join("launches.jsonl"));
    std::fs::write(&stats, "").map_err(|e| Failure::input(format!("--stats {}: {e}", stats.display())))?;
    let env = shim_env(&a, &stats)?;
    let path = match std::env::var("LD_LIBRARY_PATH") {
        Ok(p) if !p.is_empty() => format!("{}:{p}", libdir.display()),
        _ => libdir.display().to_string(),
    };
    let status = Command::new(&a.program[0])
        .args(&a.program[1..])
        .env("LD_LIBRARY_PATH", path)
        .envs(env)
        .status()
        .map_err(|e| Failure::input(format!("cannot run {}: {e}", a.program[0])));
    let launches = read_launches(&stats);
    let _ = std::fs::remove_dir_all(&libdir).or_else(|_| std::fs::remove_file(libdir.join("libcudart.so.13")));
    let status = status?;
    let launches = launches?;
    eprint!("{}", summary_text(&launches)?);
    if let Some(h) = &a.html {
        let page = reconverge_report::exec::exec_html(&a.program.join(" "), &launches, &per_kernel(&launches)?);
        std::fs::write(h, page).map_err(|e| Failure::input(format!("--html {}: {e}", h.display())))?;
    }
    exit_status(status, &launches)
}

/// The program's status, or (when it exited 0) the status of the first launch that stopped early.
fn exit_status(status: std::process::ExitStatus, launches: &[Map<String, Value>]) -> Result<(), Failure> {
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(s)) => 128 + s,
        _ => 1,
    };
    if code != 0 {
        return Err(Failure { message: String::new(), code: u8::try_from(code).unwrap_or(1) });
    }
    let failed = launches.iter().find_map(|l| match l.get("outcome").and_then(Value::as_str) {
        Some("completed") | None => None,
        Some("deadlock") => Some((3, l)),
        Some("limit") => Some((4, l)),
        Some(_) => Some((2, l)),
    });
    match failed {
        Some((code, l)) => Err(Failure {
            message: format!(
                "reconverge: the program exited 0, but launch {} ({}) stopped early: exit status {code}",
                l.get("launch").and_then(Value::as_u64).unwrap_or(0),
                l.get("outcome").and_then(Value::as_str).unwrap_or("error")
            ),
            code,
        }),
        None => Ok(()),
    }
}

/// The launches the shim wrote, one JSON object per line.
fn read_launches(path: &Path) -> Result<Vec<Map<String, Value>>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(Failure::input(format!("{}:{}: not a JSON object", path.display(), i + 1))),
        })
        .collect()
}

/// Per kernel (in order of first launch): its launches combined as Python's `Device.stats` combines them.
fn per_kernel(launches: &[Map<String, Value>]) -> Result<Vec<aggregate::KernelTotal>, Failure> {
    aggregate::per_kernel(launches).map_err(|e| Failure::input(format!("statistics: {e}")))
}

/// The summary printed at exit: one row per kernel.
fn summary_text(launches: &[Map<String, Value>]) -> Result<String, Failure> {
    let kernels = per_kernel(launches)?;
    let mut t = reconverge_report::table::Table::new(&[
        "kernel",
        "launches",
        "cycles",
        "warp instr",
        "SIMD eff",
        "divergent br",
        "outcome",
    ]);
    for aggregate::KernelTotal { kernel: name, stats: s } in &kernels {
        let n = |k: &str| s.get(k).and_then(Value::as_u64).map_or("-".to_string(), |v| v.to_string());
        let eff = s.get("simd_efficiency").and_then(Value::as_f64).map_or("-".into(), |v| format!("{v:.3}"));
        let outcome = s.get("outcome").and_then(Value::as_str).unwrap_or("-").to_string();
        t.row(vec![
            reconverge_ir::names::short_name(name),
            n(aggregate::LAUNCHES),
            n("cycles"),
            n("warp_instructions"),
            eff,
            n("divergent_branches"),
            outcome,
        ]);
    }
    let total = launches.len();
    Ok(format!(
        "\nreconverge: {total} launch{} of {} kernel{}\n{}",
        if total == 1 { "" } else { "es" },
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        t.render()
    ))
}
