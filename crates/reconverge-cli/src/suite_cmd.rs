//! `reconverge suite`: every kernel of `kernels/` under every mechanism, checked against its expected
//! outputs.

use crate::launch_args::mechanism;
use crate::{out, outln, Failure};
use clap::Args;
use reconverge_mechanism::Mechanism;
use reconverge_report::records::{self, branch_records, sort_branches, BranchRecord, RunRecord};
use reconverge_report::table::Table;
use reconverge_suite::{run_entry, Manifest};
use std::path::{Path, PathBuf};

/// Arguments of `reconverge suite`.
#[derive(Args)]
pub(crate) struct SuiteArgs {
    /// The kernel directory (holding manifest.toml); by default `kernels/` of this repository.
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable).
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// Mechanisms to run (repeatable; default: every mechanism of the default set, see the README).
    #[arg(long = "mechanism", value_parser = crate::launch_args::mechanism_values())]
    pub mechanisms: Vec<String>,
    #[command(flatten)]
    pub warp_sizes: crate::launch_args::WarpSizes,
    /// Print CSV (one row per run; with --branches, one row per branch of each run).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print JSON: one array of run records (with --branches, each has `branches_by_pc`).
    #[arg(long)]
    pub json: bool,
    /// Also print the per-branch statistics of every run, sorted by divergent executions.
    #[arg(long)]
    pub branches: bool,
    /// Also print the mechanisms' own counters (compactions, predictions, merges, ...) of every run.
    #[arg(long)]
    pub counters: bool,
    /// Warp-instruction limit per run (0 = no limit).
    #[arg(long, default_value_t = 50_000_000)]
    pub max_instructions: u64,
}

/// Finds `kernels/` next to the current directory or above it, or above the executable.
pub(crate) fn default_kernels_dir() -> Option<PathBuf> {
    let mut starts: Vec<PathBuf> = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        starts.push(cwd);
    }
    if let Ok(exe) = std::env::current_exe() {
        starts.push(exe);
    }
    for s in starts {
        for dir in s.ancestors() {
            let k = dir.join("kernels");
            if k.join("manifest.toml").is_file() {
                return Some(k);
            }
        }
    }
    None
}

/// Reads the manifest of `dir`.
pub(crate) fn load_manifest(dir: &Path) -> Result<Manifest, Failure> {
    let path = dir.join("manifest.toml");
    let text =
        std::fs::read_to_string(&path).map_err(|e| Failure::input(format!("cannot read `{}`: {e}", path.display())))?;
    Manifest::parse(&text).map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

/// Checks that every name in `only` is a suite kernel.
pub(crate) fn check_kernel_names(manifest: &Manifest, only: &[String]) -> Result<(), Failure> {
    for k in only {
        if !manifest.kernels.iter().any(|e| &e.name == k) {
            let names: Vec<&str> = manifest.kernels.iter().map(|e| e.name.as_str()).collect();
            return Err(Failure::input(format!("no kernel `{k}` in the suite (kernels: {})", names.join(", "))));
        }
    }
    Ok(())
}

/// The mechanisms named on the command line (all when none).
pub(crate) fn mechanisms(names: &[String]) -> Result<Vec<Mechanism>, Failure> {
    if names.is_empty() {
        Ok(Mechanism::defaults().collect())
    } else {
        names.iter().map(|m| mechanism(m)).collect()
    }
}

/// Checks warp sizes given on the command line.
pub(crate) fn check_warp_sizes(sizes: &[u32]) -> Result<(), Failure> {
    for &w in sizes {
        if !(1..=64).contains(&w) || !w.is_power_of_two() {
            return Err(Failure::input(format!("--warp-size {w}: not a power of two in 1..=64")));
        }
    }
    Ok(())
}

pub(crate) use reconverge_suite::grid::{check_of, record_of};

/// Prints runs (and their branches) in the format asked: CSV, JSON or nothing (the caller prints a table).
pub(crate) fn print_tidy(
    csv: bool,
    json: bool,
    branches: bool,
    runs: &[RunRecord],
    branch_rows: &[Vec<BranchRecord>],
) -> Result<bool, Failure> {
    if csv {
        if branches {
            let mut all: Vec<BranchRecord> = branch_rows.iter().flatten().cloned().collect();
            sort_branches(&mut all);
            out!("{}", records::to_csv(&all))?;
        } else {
            out!("{}", records::to_csv(runs))?;
        }
        return Ok(true);
    }
    if json {
        if branches {
            let rows: Vec<serde_json::Value> = runs
                .iter()
                .zip(branch_rows)
                .map(|(r, b)| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    if let Some(obj) = v.as_object_mut() {
                        obj.insert("branches_by_pc".into(), serde_json::to_value(b).unwrap_or_default());
                    }
                    v
                })
                .collect();
            outln!("{}", records::to_json(&rows))?;
        } else {
            outln!("{}", records::to_json(runs))?;
        }
        return Ok(true);
    }
    Ok(false)
}

/// Prints the mechanism counters of the runs that have any (text output).
pub(crate) fn print_counters_table(runs: &[RunRecord]) -> Result<(), Failure> {
    if let Some(t) = records::counters_text(runs) {
        outln!("\nmechanism counters:")?;
        out!("{t}")?;
    }
    Ok(())
}

/// Prints the branch records of every run as one table, most divergent first.
pub(crate) fn print_branch_table(branch_rows: &[Vec<BranchRecord>]) -> Result<(), Failure> {
    let mut all: Vec<BranchRecord> = branch_rows.iter().flatten().cloned().collect();
    sort_branches(&mut all);
    outln!("\nbranches, most divergent first:")?;
    out!("{}", records::branch_table(&all).render())
}

/// `n thing` or `n things`.
pub(crate) fn plural(n: usize, thing: &str) -> String {
    format!("{n} {thing}{}", if n == 1 { "" } else { "s" })
}

/// The suite's table of runs, with the legend of its `outcome` and `check` columns.
fn print_runs_table(runs: &[RunRecord]) -> Result<(), Failure> {
    let mut table = Table::new(&[
        "kernel",
        "mechanism",
        "warp",
        "outcome",
        "check",
        "warp instr",
        "mech instr",
        "thread instr",
        "SIMD eff",
        "structure",
        "div branches",
    ]);
    for r in runs {
        let p = r.partial;
        table.row(vec![
            r.kernel.clone(),
            r.mechanism.clone(),
            r.warp_size.to_string(),
            r.outcome.clone(),
            r.check.clone().unwrap_or_default(),
            records::count(r.warp_instructions, p),
            records::count(r.mechanism_instructions, p),
            records::count(r.thread_instructions, p),
            records::pct(r.simd_efficiency),
            records::structure(r),
            match (r.divergent_branches, r.branches) {
                (Some(d), Some(b)) => format!("{d}/{b}"),
                _ => "-".into(),
            },
        ]);
    }
    out!("{}", table.render())?;
    if runs.iter().any(|r| r.partial) {
        outln!("{}", records::PARTIAL_NOTE)?;
    }
    outln!("{SUITE_LEGEND}")
}

/// The legend below the suite's table.
const SUITE_LEGEND: &str =
    "\noutcome: what the run did (completed, deadlock, limit, error); check: whether that is what \
kernels/manifest.toml expects of this mechanism and whether the buffers match the reference (ok, wrong_outcome, \
mismatch, broken). `deadlock ... ok` is an expected SIMT deadlock (docs/simt-deadlock.md).";

/// One line per mechanism: its runs, how they ended, how many were as expected, and its SIMD efficiency.
fn print_mechanism_summary(runs: &[RunRecord]) -> Result<(), Failure> {
    let mut mechs: Vec<&str> = Vec::new();
    for r in runs {
        if !mechs.contains(&r.mechanism.as_str()) {
            mechs.push(&r.mechanism);
        }
    }
    // SIMD efficiency is averaged over the same (kernel, warp size) pairs for every mechanism: those every
    // mechanism completed.
    let common = |k: &str, w: u32| {
        mechs
            .iter()
            .all(|m| runs.iter().any(|r| r.kernel == k && r.warp_size == w && r.mechanism == *m && r.completed()))
    };
    let mut pairs: Vec<(&str, u32)> = runs.iter().map(|r| (r.kernel.as_str(), r.warp_size)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    let n_common = pairs.iter().filter(|(k, w)| common(k, *w)).count();
    let eff_head =
        format!("SIMD eff (mean over the {} every mechanism completed)", plural(n_common, "kernel × warp run"));
    let mut t = Table::new(&["mechanism", "runs", "as expected", "completed", "deadlock", "other", &eff_head]);
    for m in &mechs {
        let these: Vec<&RunRecord> = runs.iter().filter(|r| r.mechanism == *m).collect();
        let count = |f: &dyn Fn(&RunRecord) -> bool| these.iter().filter(|r| f(r)).count();
        let done: Vec<f64> =
            these.iter().filter(|r| common(&r.kernel, r.warp_size)).filter_map(|r| r.simd_efficiency).collect();
        let eff = (!done.is_empty()).then(|| done.iter().sum::<f64>() / done.len() as f64);
        t.row(vec![
            m.to_string(),
            these.len().to_string(),
            count(&|r| r.check.as_deref() == Some("ok")).to_string(),
            count(&|r| r.completed()).to_string(),
            count(&|r| r.outcome == "deadlock").to_string(),
            count(&|r| !r.completed() && r.outcome != "deadlock").to_string(),
            records::pct(eff),
        ]);
    }
    outln!("\nper mechanism:")?;
    out!("{}", t.render())
}

/// Runs `reconverge suite`.
pub(crate) fn run(a: SuiteArgs) -> Result<(), Failure> {
    let dir = match a.kernels.clone().or_else(default_kernels_dir) {
        Some(d) => d,
        None => return Err(Failure::input("cannot find kernels/manifest.toml; pass --kernels DIR")),
    };
    let manifest = load_manifest(&dir)?;
    let mechs = mechanisms(&a.mechanisms)?;
    let warp_sizes = a.warp_sizes.or(&[32]);
    check_warp_sizes(&warp_sizes)?;
    check_kernel_names(&manifest, &a.only)?;
    let load = |p: &str| std::fs::read(dir.join(p));
    let mut runs: Vec<RunRecord> = Vec::new();
    let mut branch_rows: Vec<Vec<BranchRecord>> = Vec::new();
    let mut skipped = Vec::new();
    let mut problems = Vec::new();
    let entries: Vec<_> = manifest.kernels.iter().filter(|e| a.only.is_empty() || a.only.contains(&e.name)).collect();
    let kernels = entries.len();
    let total_jobs = kernels * warp_sizes.len() * mechs.len();
    let bar = crate::progress::bar(total_jobs as u64, a.csv || a.json);
    for e in entries {
        for &ws in &warp_sizes {
            for &m in &mechs {
                bar.inc(1);
                if !e.supports_warp_size(ws) {
                    skipped.push(format!("{} / {m} / warp {ws}", e.name));
                    continue;
                }
                let o = run_entry(e, m, ws, &load, a.max_instructions, reconverge_suite::Mode::Functional, false);
                if let (_, Some(p)) = check_of(&o.verdict) {
                    problems.push(format!("{} / {m} / warp {ws}: {p}", e.name));
                }
                runs.push(record_of(&o, None));
                branch_rows.push(match &o.result {
                    Some(r) if a.branches => branch_records(&e.name, None, ws, m.name(), r),
                    _ => Vec::new(),
                });
            }
        }
    }
    bar.finish_and_clear();
    let ok = runs.iter().filter(|r| r.check.as_deref() == Some("ok")).count();
    let total = runs.len();
    if !print_tidy(a.csv, a.json, a.branches, &runs, &branch_rows)? {
        print_runs_table(&runs)?;
        if a.counters {
            print_counters_table(&runs)?;
        }
        if a.branches {
            print_branch_table(&branch_rows)?;
        }
        print_mechanism_summary(&runs)?;
        outln!(
            "\n{ok} of {total} runs as expected ({}, {})",
            plural(kernels, "kernel"),
            plural(mechs.len(), "mechanism")
        )?;
        for s in &skipped {
            outln!("  skipped (the kernel's expected outputs do not hold at this warp size): {s}")?;
        }
        for p in &problems {
            outln!("  {p}")?;
        }
    }
    if ok == total {
        Ok(())
    } else {
        Err(Failure { message: format!("{} of {total} suite runs were not as expected", total - ok), code: 1 })
    }
}
