//! `reconverge bench -- PROGRAM [ARGS]...`: the simulation speed of a whole CUDA program under `exec`,
//! functional and timed. Each measurement is a complete `reconverge exec` process (this executable,
//! started anew: process start, the program's host code, every launch's simulation), repeated until
//! `--min-ms` has passed, its median wall time reported with the work it simulated, read from the launches'
//! statistics lines. There is no native column: the program's kernels would need a GPU.

use crate::bench_cmd::BenchArgs;
use crate::{out, outln, Failure};
use reconverge_mechanism::Mechanism;
use reconverge_report::records;
use reconverge_report::table::Table;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One row of `bench -- PROGRAM` (its `--csv`/`--json` columns).
#[derive(Clone, Debug, Default, Serialize)]
pub(crate) struct ExecBenchRecord {
    /// The program's file name.
    pub program: String,
    /// The mechanism.
    pub mechanism: String,
    /// Threads per warp.
    pub warp_size: u32,
    /// The GPU configuration of the timed measurement (`null` with --functional).
    pub config: Option<String>,
    /// Host threads of the timed measurement.
    pub threads: usize,
    /// Kernel launches of one run of the program.
    pub launches: u64,
    /// Simulated warp instructions of one run (every launch).
    pub warp_instructions: u64,
    /// Simulated thread instructions of one run.
    pub thread_instructions: u64,
    /// Simulated cycles of one timed run (every launch's, summed).
    pub cycles: Option<u64>,
    /// Median wall time of one functional `exec` of the program, milliseconds.
    pub functional_ms: f64,
    /// Median wall time of one timed `exec`, milliseconds.
    pub timed_ms: Option<f64>,
    /// Simulated warp instructions per second of wall time, functional.
    pub functional_warp_instructions_per_s: f64,
    /// Simulated warp instructions per second of wall time, timed.
    pub timed_warp_instructions_per_s: Option<f64>,
    /// Simulated cycles per second of wall time, timed.
    pub simulated_cycles_per_s: Option<f64>,
}

/// What a launch's statistics line says about its work (the rest of the line is not needed here).
#[derive(Deserialize)]
struct LaunchWork {
    warp_instructions: u64,
    thread_instructions: u64,
    cycles: Option<u64>,
}

/// The work of one run of the program: launches, warp and thread instructions, cycles (timed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Work {
    launches: u64,
    warp: u64,
    thread: u64,
    cycles: Option<u64>,
}

/// Measures the program `a.program` under `exec` and prints its row.
pub(crate) fn run(a: &BenchArgs, mech: Mechanism) -> Result<(), Failure> {
    let exe = std::env::current_exe().map_err(|e| Failure::input(format!("cannot find this executable: {e}")))?;
    let dir = std::env::temp_dir().join(format!("reconverge-bench-exec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Failure::input(format!("{}: {e}", dir.display())))?;
    let result = measure(a, mech, &exe, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    let row = result?;
    print(a, &row)
}

fn measure(a: &BenchArgs, mech: Mechanism, exe: &Path, dir: &Path) -> Result<ExecBenchRecord, Failure> {
    let stats = dir.join("launches.jsonl");
    let (functional, work) = median_run(a, mech, exe, &stats, None)?;
    let program =
        Path::new(&a.program[0]).file_name().map_or_else(|| a.program[0].clone(), |n| n.to_string_lossy().into());
    let per_s = |n: u64, d: Duration| n as f64 / d.as_secs_f64().max(1e-9);
    let mut row = ExecBenchRecord {
        program,
        mechanism: mech.name().to_string(),
        warp_size: a.warp_size,
        config: None,
        threads: a.threads,
        launches: work.launches,
        warp_instructions: work.warp,
        thread_instructions: work.thread,
        functional_ms: functional.as_secs_f64() * 1e3,
        functional_warp_instructions_per_s: per_s(work.warp, functional),
        ..ExecBenchRecord::default()
    };
    if !a.functional {
        let (timed, tw) = median_run(a, mech, exe, &stats, Some(&a.config))?;
        if (tw.launches, tw.warp) != (work.launches, work.warp) {
            return Err(Failure::input(format!(
                "{}: a timed run launched {} kernels for {} warp instructions, the functional one {} for {}",
                row.program, tw.launches, tw.warp, work.launches, work.warp
            )));
        }
        row.config = Some(a.config.clone());
        row.cycles = tw.cycles;
        row.timed_ms = Some(timed.as_secs_f64() * 1e3);
        row.timed_warp_instructions_per_s = Some(per_s(tw.warp, timed));
        row.simulated_cycles_per_s = tw.cycles.map(|c| per_s(c, timed));
    }
    Ok(row)
}

/// Runs the program under `exec` (timed on `config`, else functional) until `--min-ms` passed (at least
/// once): the median wall time and the work of the last run.
fn median_run(
    a: &BenchArgs,
    mech: Mechanism,
    exe: &Path,
    stats: &Path,
    config: Option<&str>,
) -> Result<(Duration, Work), Failure> {
    let mut times = Vec::new();
    let start = Instant::now();
    let mut work = Work::default();
    while times.is_empty() || start.elapsed() < Duration::from_millis(a.min_ms) {
        let mut cmd = Command::new(exe);
        cmd.arg("exec").args(["--mechanism", mech.name(), "--warp-size", &a.warp_size.to_string()]);
        match config {
            Some(c) => cmd.args(["--config", c, "--threads", &a.threads.to_string()]),
            None => cmd.arg("--functional"),
        };
        cmd.arg("--stats").arg(stats).arg("--").args(&a.program);
        let t0 = Instant::now();
        let o = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| Failure::input(format!("cannot start `reconverge exec`: {e}")))?;
        times.push(t0.elapsed());
        if !o.status.success() {
            let err = String::from_utf8_lossy(&o.stderr);
            let lines: Vec<&str> = err.lines().collect();
            let tail = lines[lines.len().saturating_sub(12)..].join("\n");
            return Err(Failure::input(format!("`{}` under exec failed ({}):\n{tail}", a.program[0], o.status)));
        }
        work = read_work(stats)?;
    }
    times.sort();
    Ok((times[times.len() / 2], work))
}

/// Sums the launches' statistics lines of `--stats FILE`.
fn read_work(path: &Path) -> Result<Work, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
    let mut w = Work::default();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let l: LaunchWork = serde_json::from_str(line)
            .map_err(|e| Failure::input(format!("{}:{}: not a launch's statistics: {e}", path.display(), i + 1)))?;
        w.launches += 1;
        w.warp += l.warp_instructions;
        w.thread += l.thread_instructions;
        if let Some(c) = l.cycles {
            w.cycles = Some(w.cycles.unwrap_or(0) + c);
        }
    }
    Ok(w)
}

fn print(a: &BenchArgs, r: &ExecBenchRecord) -> Result<(), Failure> {
    let rows = std::slice::from_ref(r);
    if a.csv {
        return out!("{}", records::to_csv(rows));
    }
    if a.json {
        return outln!("{}", records::to_json(rows));
    }
    let mut t = Table::new(&[
        "program",
        "launches",
        "warp instr",
        "functional ms",
        "timed ms",
        "func warp/s",
        "timed warp/s",
        "cycles/s",
    ]);
    let m = |x: Option<f64>| x.map(|v| format!("{:.2}M", v / 1e6)).unwrap_or_else(|| "-".into());
    t.row(vec![
        r.program.clone(),
        r.launches.to_string(),
        r.warp_instructions.to_string(),
        format!("{:.1}", r.functional_ms),
        r.timed_ms.map(|x| format!("{x:.1}")).unwrap_or_else(|| "-".into()),
        m(Some(r.functional_warp_instructions_per_s)),
        m(r.timed_warp_instructions_per_s),
        m(r.simulated_cycles_per_s),
    ]);
    outln!(
        "mechanism {}, warp size {}; timed: {} on {} host thread(s); median wall time of a whole `exec` (process, \
         host code, simulation); no native column: the program's kernels need a GPU",
        r.mechanism,
        r.warp_size,
        r.config.as_deref().unwrap_or("-"),
        r.threads
    )?;
    out!("{}", t.render())
}
