//! `reconverge compare`: kernels × mechanisms (× warp sizes × configurations) under the timing model, in
//! one table: cycles, speedup over `pdom`, SIMD efficiency, IPC and where the issue slots went.

use crate::launch_args::{dims, gpu_config};
use crate::suite_cmd::{
    check_kernel_names, check_of, check_warp_sizes, default_kernels_dir, load_manifest, mechanisms, print_branch_table,
    print_counters_table, print_tidy, record_of,
};
use crate::{out, outln, Failure};
use clap::Args;
use rayon::prelude::*;
use reconverge_report::records::{
    self, branch_records, fill_speedups, speedup_summaries, summary_rows, BranchRecord, RunRecord, SpeedupSummary,
};
use reconverge_report::table::Table;
use reconverge_suite::grid::Job;
use reconverge_suite::manifest::ManifestArg;
use reconverge_suite::{EntryOutcome, KernelEntry, Manifest};
use std::path::PathBuf;

/// Arguments of `reconverge compare`.
#[derive(Args)]
pub(crate) struct CompareArgs {
    /// A kernel file of your own (.ptx, or .cu through NVRTC) to compare the mechanisms on instead of the
    /// suite, launched as `run` launches it (--grid, --block, --arg, --dynamic-shared; --kernel names the
    /// kernel when the file has several). Without it: the kernels of --kernels' manifest.
    #[arg(value_name = "FILE", conflicts_with = "kernels")]
    pub file: Option<String>,
    /// With FILE: grid dimensions (CTAs; default 1).
    #[arg(long, value_name = "X[,Y[,Z]]", requires = "file")]
    pub grid: Option<String>,
    /// With FILE: block dimensions (threads per CTA; default 32).
    #[arg(long, value_name = "X[,Y[,Z]]", requires = "file")]
    pub block: Option<String>,
    /// With FILE: one per kernel parameter, as `run --arg` takes them (docs/arguments.md).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true, requires = "file")]
    pub args: Vec<String>,
    /// With FILE: dynamic shared memory per block, bytes.
    #[arg(long, requires = "file")]
    pub dynamic_shared: Option<u32>,
    /// The kernel directory (holding manifest.toml; its format: docs/arguments.md).
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable); with FILE, the kernel to launch.
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// Mechanisms (repeatable; default: every mechanism of the default set, see the README).
    #[arg(long = "mechanism", value_parser = crate::launch_args::mechanism_values())]
    pub mechanisms: Vec<String>,
    #[command(flatten)]
    pub warp_sizes: crate::launch_args::WarpSizes,
    /// GPU configurations, presets or TOML files (repeatable; default gtx480).
    #[arg(long = "config", help = compare_config_help())]
    pub configs: Vec<String>,
    /// Print CSV (one row per run; with --branches, one row per branch of each run).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print JSON: one array of run records (with --branches, each has `branches_by_pc`).
    #[arg(long)]
    pub json: bool,
    /// With --csv or --json: print the speedup summary instead of the runs, one row per (configuration,
    /// warp size, mechanism): geometric mean, median, min and max over the kernels every listed mechanism
    /// completed, their count, and the kernels left out with why.
    #[arg(long, conflicts_with = "branches")]
    pub summary: bool,
    /// Also print the per-branch statistics of every run, sorted by divergent executions.
    #[arg(long)]
    pub branches: bool,
    /// Also print the mechanisms' own counters (compactions, predictions, merges, ...) of every run.
    #[arg(long)]
    pub counters: bool,
    /// Functional simulation only (no cycles; every warp size fits, which the GPU's warp slots may not
    /// allow at warp size 4): for instruction-level studies such as --scalarize.
    #[arg(long, conflicts_with = "configs")]
    pub functional: bool,
    /// Also write the comparison as a self-contained HTML report (speedup bars per kernel and the geometric
    /// mean, SIMD efficiency and IPC side by side, the table of all runs).
    #[arg(long, value_name = "FILE.html")]
    pub html: Option<String>,
    /// Also count seed 004's scalarization metrics of every run (CSV/JSON `scalarization_*`; in text, a
    /// table per run and the reproduce table beside the paper's averages).
    #[arg(long)]
    pub scalarize: bool,
    /// Host threads (0 = all cores, at most 1024; never more than the runs); results do not depend on it.
    #[arg(long, default_value_t = 0, value_parser = crate::launch_args::host_threads)]
    pub threads: usize,
    /// Warp-instruction limit per run (0 = no limit).
    #[arg(long, default_value_t = 50_000_000)]
    pub max_instructions: u64,
}

/// The kernels to compare and how to read the files they name: the suite's manifest (files relative to its
/// directory), or one entry for FILE (its PTX in memory, argument files relative to the current
/// directory).
struct Kernels {
    manifest: Manifest,
    dir: PathBuf,
    /// FILE's path and PTX.
    file: Option<(String, String)>,
}

impl Kernels {
    fn read(&self, p: &str) -> std::io::Result<Vec<u8>> {
        match &self.file {
            Some((path, ptx)) if p == path => Ok(ptx.clone().into_bytes()),
            _ => std::fs::read(self.dir.join(p)),
        }
    }
}

/// One manifest entry for a user's kernel file, launched as `run` would.
fn file_kernels(a: &CompareArgs, file: &str) -> Result<Kernels, Failure> {
    let src = crate::source::load(file, &[])?;
    if a.only.len() > 1 {
        return Err(Failure::input("compare FILE launches one kernel: give --kernel once"));
    }
    let id = reconverge_program::decode::select_kernel(&src.module, a.only.first().map(String::as_str))
        .map_err(|e| Failure::input(format!("{file}: {e}")))?;
    let name = a.only.first().cloned().unwrap_or_else(|| src.module.functions[id].name.clone());
    let entry = KernelEntry {
        name,
        ptx: file.to_string(),
        grid: dims("--grid", a.grid.as_deref().unwrap_or("1"))?,
        block: dims("--block", a.block.as_deref().unwrap_or("32"))?,
        args: a.args.iter().map(|s| ManifestArg::Text(s.clone())).collect(),
        expected: Default::default(),
        globals: Default::default(),
        expected_globals: Default::default(),
        dynamic_shared: a.dynamic_shared.unwrap_or(0),
        outcome: "completed".into(),
        outcome_by_mechanism: Default::default(),
        warp_sizes: None,
        description: String::new(),
    };
    Ok(Kernels {
        manifest: Manifest { kernels: vec![entry] },
        dir: PathBuf::new(),
        file: Some((file.to_string(), src.ptx)),
    })
}

/// Runs `reconverge compare`.
pub(crate) fn run(a: CompareArgs) -> Result<(), Failure> {
    let kernels = match &a.file {
        Some(file) => file_kernels(&a, file)?,
        None => {
            let dir = a
                .kernels
                .clone()
                .or_else(default_kernels_dir)
                .ok_or_else(|| Failure::input("cannot find kernels/; pass --kernels DIR"))?;
            Kernels { manifest: load_manifest(&dir)?, dir, file: None }
        }
    };
    let manifest = &kernels.manifest;
    let mechs = mechanisms(&a.mechanisms)?;
    let warps = a.warp_sizes.or(&[32]);
    check_warp_sizes(&warps)?;
    let names = if a.configs.is_empty() { vec!["gtx480".to_string()] } else { a.configs.clone() };
    let mut configs = names.iter().map(|c| gpu_config(c)).collect::<Result<Vec<_>, _>>()?;
    reconverge_timing::GpuConfig::distinct_names(&mut configs, &names).map_err(|e| Failure::input(e.to_string()))?;
    check_kernel_names(manifest, &a.only)?;
    let jobs =
        reconverge_suite::grid::jobs(manifest, &a.only, if a.functional { 0 } else { configs.len() }, &warps, &mechs);
    let load = |p: &str| kernels.read(p);
    let bar = crate::progress::bar(jobs.len() as u64, a.csv || a.json);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if a.threads == 0 { cores } else { a.threads }.min(jobs.len().max(1));
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Failure::input(e.to_string()))?;
    let results: Vec<EntryOutcome> = pool.install(|| {
        jobs.par_iter()
            .map(|j| {
                let o = reconverge_suite::grid::run_job(manifest, j, &configs, &load, a.max_instructions, a.scalarize);
                bar.inc(1);
                o
            })
            .collect()
    });
    bar.finish_and_clear();
    let config_name = |j: &Job| j.config.map(|c| configs[c].name.as_str());
    let mut runs: Vec<RunRecord> =
        jobs.iter().zip(&results).map(|(j, o)| record_of(o, j.config.map(|c| &configs[c]))).collect();
    fill_speedups(&mut runs, records::BASELINE);
    let branch_rows: Vec<Vec<BranchRecord>> = jobs
        .iter()
        .zip(&results)
        .map(|(j, o)| match &o.result {
            Some(r) if a.branches => branch_records(&o.kernel, config_name(j), j.warp, j.mech.name(), r),
            _ => Vec::new(),
        })
        .collect();
    let bad: Vec<String> = results
        .iter()
        .filter_map(|o| {
            check_of(&o.verdict).1.map(|p| format!("{} / {} / warp {}: {p}", o.kernel, o.mechanism, o.warp_size))
        })
        .collect();
    if let Some(path) = &a.html {
        let title = format!("reconverge compare: {} kernels × {} mechanisms", kernel_count(&runs), mechs.len());
        std::fs::write(path, reconverge_report::html::compare_report(&runs, &title))
            .map_err(|e| Failure::input(format!("cannot write `{path}`: {e}")))?;
    }
    if a.summary && (a.csv || a.json) {
        let rows = summary_rows(&speedup_summaries(&runs));
        if a.csv {
            out!("{}", records::to_csv(&rows))?;
        } else {
            outln!("{}", records::to_json(&rows))?;
        }
    } else if !print_tidy(a.csv, a.json, a.branches, &runs, &branch_rows)? {
        let storage: Vec<Option<u64>> =
            jobs.iter().zip(&runs).map(|(j, r)| run_storage(manifest, &configs, j, r)).collect();
        print_table(&runs, &storage)?;
        if a.counters {
            print_counters_table(&runs)?;
        }
        if a.branches {
            print_branch_table(&branch_rows)?;
        }
        if a.scalarize {
            print_scalarization(&runs)?;
        }
        for p in &bad {
            outln!("  {p}")?;
        }
    }
    if !bad.is_empty() {
        return Err(Failure { message: format!("{} runs were not as expected", bad.len()), code: 1 });
    }
    Ok(())
}

fn compare_config_help() -> String {
    format!(
        "GPU configurations: presets ({}) or TOML files (repeatable; default gtx480). A file without its own \
         `name` that repeats another's is named NAME~FILESTEM in the tables",
        reconverge_timing::PRESETS.join(", ")
    )
}

fn kernel_count(runs: &[RunRecord]) -> usize {
    let mut k: Vec<&str> = runs.iter().map(|r| r.kernel.as_str()).collect();
    k.sort_unstable();
    k.dedup();
    k.len()
}

/// Seed 004's metrics of every run, then the reproduce table beside the paper's averages.
fn print_scalarization(runs: &[RunRecord]) -> Result<(), Failure> {
    use reconverge_report::scalarization::{reproduce_table, runs_table, ScalarizationRow};
    let rows: Vec<ScalarizationRow<'_>> = runs
        .iter()
        .filter_map(|r| {
            r.scalarization.as_ref().map(|m| ScalarizationRow {
                kernel: &r.kernel,
                mechanism: &r.mechanism,
                completed: r.completed(),
                metrics: m,
            })
        })
        .collect();
    outln!("\nscalarization (seed 004): share of thread instructions convergent, and savings of scalarization")?;
    out!("{}", runs_table(&rows).render())?;
    outln!("\nreproduce: means over the completed runs, beside seed 004's averages over its 23 benchmarks")?;
    out!("{}", reproduce_table(&rows).render())?;
    outln!(
        "(ops = thread operations, regs = register reads + writes, addr = memory address counts, data = data accesses)"
    )?;
    Ok(())
}

/// The storage of the run's mechanism per SM, in bits, at the depth the run reached, for the run's
/// geometry: its warp size, the configuration's warps per SM (48 in functional mode), the kernel's CTA
/// size, a 30-bit pc and an 8-bit call depth (`reconverge cost`'s defaults; docs/storage-cost.md).
fn run_storage(
    manifest: &reconverge_suite::Manifest,
    configs: &[reconverge_timing::GpuConfig],
    j: &Job,
    r: &RunRecord,
) -> Option<u64> {
    if r.outcome == "broken" {
        return None;
    }
    let warps = j.config.map_or(48, |c| configs[c].sm.max_warps).max(1);
    let threads: u32 = manifest.kernels[j.entry].block.iter().product();
    let g = reconverge_mechanism::storage::Geometry {
        warp_size: j.warp,
        warps,
        cta_warps: threads.div_ceil(j.warp.max(1)).clamp(1, warps),
        lut_entries: j.mech.lut().map_or(0, |l| l.entries),
        ..reconverge_mechanism::storage::Geometry::GTX480
    };
    Some(reconverge_report::cost::run_storage_bits(j.mech.info(), &g, r))
}

fn print_table(runs: &[RunRecord], storage: &[Option<u64>]) -> Result<(), Failure> {
    let mut t = Table::new(&[
        "kernel",
        "config",
        "warp",
        "mechanism",
        "outcome",
        "check",
        "cycles",
        "vs pdom",
        "SIMD eff",
        "IPC",
        "energy",
        "E vs pdom",
        "structure",
        "storage",
        "mem",
        "dep",
        "pipe",
        "bar",
        "mech",
        "idle",
    ]);
    for (r, bits) in runs.iter().zip(storage) {
        let slots = r.issue_slots.unwrap_or(0);
        let share = |x: Option<u64>| match x {
            Some(v) if slots > 0 => format!("{:.0}%", 100.0 * v as f64 / slots as f64),
            _ => "-".into(),
        };
        t.row(vec![
            r.kernel.clone(),
            r.config.clone().unwrap_or_default(),
            r.warp_size.to_string(),
            r.mechanism.clone(),
            r.outcome.clone(),
            r.check.clone().unwrap_or_default(),
            records::count(r.cycles, r.partial),
            r.speedup_over_pdom.map(|s| format!("{s:.2}x")).unwrap_or_else(|| "-".into()),
            records::pct(r.simd_efficiency),
            r.ipc.map(|x| format!("{x:.2}")).unwrap_or_else(|| "-".into()),
            r.energy_j.map_or_else(|| "-".into(), reconverge_report::run::joules),
            r.energy_speedup_over_pdom.map(|s| format!("{s:.2}x")).unwrap_or_else(|| "-".into()),
            records::structure(r),
            bits.map_or_else(|| "-".into(), |b| b.to_string()),
            share(r.stall_memory),
            share(r.stall_scoreboard),
            share(r.stall_pipeline),
            share(r.stall_barrier),
            share(r.stall_mechanism),
            share(r.stall_no_ready_warp),
        ]);
    }
    out!("{}", t.render())?;
    if runs.iter().any(|r| r.partial) {
        outln!("{}", records::PARTIAL_NOTE)?;
    }
    outln!(
        "\nidle issue slots by cause: mem = memory, dep = register dependency, pipe = busy unit or branch, bar = barrier, mech = mechanism, idle = no warp"
    )?;
    outln!(
        "storage = the mechanism's bits per SM at the depth the run reached, for its warp size, warps per SM and CTA size (docs/storage-cost.md)"
    )?;
    if runs.iter().any(|r| r.energy_j.is_some()) {
        outln!("energy = the run's energy (docs/energy.md); E vs pdom = pdom's energy over the run's (above 1: less energy)")?;
    }
    print_summaries(&speedup_summaries(runs))
}

/// The speedup summary of each (configuration, warp size): every mechanism over the same kernels.
fn print_summaries(summaries: &[SpeedupSummary]) -> Result<(), Failure> {
    let x = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}x"));
    for s in summaries {
        outln!(
            "\nspeedup over pdom, {} warp {}, over the {} every mechanism completed:",
            s.config.as_deref().unwrap_or("-"),
            s.warp_size,
            crate::suite_cmd::plural(s.kernels.len(), "kernel")
        )?;
        let energy = s.mechanisms.iter().any(|m| m.energy_geomean.is_some());
        let mut head = vec!["mechanism", "geomean", "median", "min", "max"];
        if energy {
            head.extend(["energy geomean", "EDP geomean"]);
        }
        let mut t = Table::new(&head);
        for m in &s.mechanisms {
            let mut row = vec![m.mechanism.clone(), x(m.geomean), x(m.median), x(m.min), x(m.max)];
            if energy {
                row.extend([x(m.energy_geomean), x(m.edp_geomean)]);
            }
            t.row(row);
        }
        out!("{}", t.render())?;
        if let Some(e) = s.excluded_text() {
            outln!("left out of every mean (a run without a speedup): {e}")?;
        }
    }
    Ok(())
}
