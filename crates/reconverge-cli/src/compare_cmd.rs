//! `reconverge compare`: kernels × mechanisms (× warp sizes × configurations) under the timing model, in
//! one table: cycles, speedup over `pdom`, SIMD efficiency, IPC and where the issue slots went.

use crate::launch_args::{gpu_config, mechanism};
use crate::suite_cmd::{default_kernels_dir, load_manifest};
use crate::Failure;
use clap::Args;
use rayon::prelude::*;
use reconverge_report::table::Table;
use reconverge_sim::Mechanism;
use reconverge_suite::{run_entry, EntryOutcome, Mode, Verdict};
use std::path::PathBuf;

/// Arguments of `reconverge compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// The kernel directory (holding manifest.toml).
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable).
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// Mechanisms (repeatable; default: all).
    #[arg(long = "mechanism")]
    pub mechanisms: Vec<String>,
    /// Warp sizes (repeatable; default 32).
    #[arg(long = "warp-size")]
    pub warp_sizes: Vec<u32>,
    /// GPU configurations, presets or TOML files (repeatable; default gtx480).
    #[arg(long = "config")]
    pub configs: Vec<String>,
    /// Print CSV.
    #[arg(long)]
    pub csv: bool,
    /// Print JSON (one array of runs).
    #[arg(long)]
    pub json: bool,
    /// Host threads (0 = all cores); results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Warp-instruction limit per run.
    #[arg(long, default_value_t = 50_000_000)]
    pub max_instructions: u64,
}

struct Job {
    entry: usize,
    config: usize,
    warp: u32,
    mech: Mechanism,
}

fn pct(x: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{:.0}%", 100.0 * x as f64 / of as f64)
    }
}

/// Runs `reconverge compare`.
pub fn run(a: CompareArgs) -> Result<(), Failure> {
    let dir = a
        .kernels
        .clone()
        .or_else(default_kernels_dir)
        .ok_or_else(|| Failure::input("cannot find kernels/; pass --kernels DIR"))?;
    let manifest = load_manifest(&dir)?;
    let mechs: Vec<Mechanism> = if a.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        a.mechanisms.iter().map(|m| mechanism(m)).collect::<Result<_, _>>()?
    };
    let warps = if a.warp_sizes.is_empty() { vec![32] } else { a.warp_sizes.clone() };
    let names = if a.configs.is_empty() { vec!["gtx480".to_string()] } else { a.configs.clone() };
    let configs = names.iter().map(|c| gpu_config(c)).collect::<Result<Vec<_>, _>>()?;
    for k in &a.only {
        if !manifest.kernels.iter().any(|e| &e.name == k) {
            return Err(Failure::input(format!("no kernel `{k}` in the suite")));
        }
    }
    let mut jobs = Vec::new();
    for (ei, e) in manifest.kernels.iter().enumerate() {
        if !a.only.is_empty() && !a.only.contains(&e.name) {
            continue;
        }
        for ci in 0..configs.len() {
            for &w in &warps {
                if !e.supports_warp_size(w) {
                    continue;
                }
                for &m in &mechs {
                    jobs.push(Job { entry: ei, config: ci, warp: w, mech: m });
                }
            }
        }
    }
    let load = |p: &str| std::fs::read(dir.join(p)).map_err(|e| format!("cannot read `{p}`: {e}"));
    let bar = indicatif::ProgressBar::new(jobs.len() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} runs {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(a.threads).build().map_err(|e| Failure::input(e.to_string()))?;
    let results: Vec<EntryOutcome> = pool.install(|| {
        jobs.par_iter()
            .map(|j| {
                let e = &manifest.kernels[j.entry];
                let o = run_entry(
                    e,
                    j.mech,
                    j.warp,
                    &load,
                    a.max_instructions,
                    Mode::Timed { gpu: &configs[j.config], threads: 1 },
                );
                bar.inc(1);
                o
            })
            .collect()
    });
    bar.finish_and_clear();
    let cycles_of = |j: &Job, m: Mechanism| -> Option<u64> {
        jobs.iter().zip(&results).find_map(|(k, o)| {
            (k.entry == j.entry
                && k.config == j.config
                && k.warp == j.warp
                && k.mech == m
                && o.result.as_ref().is_some_and(|r| r.error.is_none()))
            .then(|| o.timing.as_ref().map(|t| t.cycles))
            .flatten()
        })
    };
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
        "mem",
        "dep",
        "pipe",
        "bar",
        "mech",
        "idle",
    ]);
    let mut json = Vec::new();
    let mut bad = 0;
    for (j, o) in jobs.iter().zip(&results) {
        let e = &manifest.kernels[j.entry];
        let check = match &o.verdict {
            Verdict::Pass => "ok".to_string(),
            Verdict::WrongOutcome { .. } => "WRONG OUTCOME".into(),
            Verdict::Mismatch(_) => "MISMATCH".into(),
            Verdict::Broken(_) => "BROKEN".into(),
        };
        if !o.verdict.ok() {
            bad += 1;
        }
        let (outcome, eff) = match &o.result {
            Some(r) => (r.outcome().to_string(), format!("{:.1}%", 100.0 * r.stats.simd_efficiency(j.warp))),
            None => ("-".into(), "-".into()),
        };
        let completed = o.result.as_ref().is_some_and(|r| r.error.is_none());
        let speed = match (cycles_of(j, Mechanism::Pdom), o.timing.as_ref().filter(|_| completed)) {
            (Some(p), Some(tm)) if tm.cycles > 0 => format!("{:.2}x", p as f64 / tm.cycles as f64),
            _ => "-".into(),
        };
        let mut row = vec![
            e.name.clone(),
            configs[j.config].name.clone(),
            j.warp.to_string(),
            j.mech.to_string(),
            outcome,
            check.clone(),
        ];
        match o.timing.as_ref().filter(|_| completed) {
            Some(tm) => {
                let s = &tm.stalls;
                let slots = tm.issue_slots;
                row.extend([
                    tm.cycles.to_string(),
                    speed.clone(),
                    eff.clone(),
                    format!("{:.2}", tm.ipc()),
                    pct(s.memory, slots),
                    pct(s.scoreboard, slots),
                    pct(s.pipeline, slots),
                    pct(s.barrier, slots),
                    pct(s.mechanism, slots),
                    pct(s.no_ready_warp, slots),
                ]);
            }
            None => row.extend([
                "-".to_string(),
                "-".into(),
                eff.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
            ]),
        }
        t.row(row);
        if a.json {
            let stats = o.result.as_ref().map(|r| {
                reconverge_report::run::run_json_timed(&e.name, j.mech.name(), j.warp, r, o.timing.as_ref(), None)
            });
            json.push(serde_json::json!({
                "kernel": e.name, "config": configs[j.config].name, "warp_size": j.warp, "mechanism": j.mech.name(),
                "check": check, "speedup_over_pdom": speed, "stats": stats,
            }));
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json).unwrap_or_default());
    } else if a.csv {
        print!("{}", t.render_csv());
    } else {
        print!("{}", t.render());
        println!("\nidle issue slots by cause: mem = memory, dep = register dependency, pipe = busy unit or branch, bar = barrier, mech = mechanism, idle = no warp");
        // Geometric-mean speedup of each mechanism over pdom.
        for (ci, config) in configs.iter().enumerate() {
            for &w in &warps {
                let mut parts = Vec::new();
                for &m in &mechs {
                    let ratios: Vec<f64> = jobs
                        .iter()
                        .filter(|j| j.config == ci && j.warp == w && j.mech == m)
                        .filter_map(|j| Some(cycles_of(j, Mechanism::Pdom)? as f64 / cycles_of(j, m)?.max(1) as f64))
                        .collect();
                    if !ratios.is_empty() {
                        let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
                        parts.push(format!("{m} {g:.3}x ({} kernels)", ratios.len()));
                    }
                }
                println!("geometric-mean speedup over pdom, {} warp {w}: {}", config.name, parts.join(", "));
            }
        }
    }
    if bad > 0 {
        return Err(Failure { message: format!("{bad} runs were not as expected"), code: 1 });
    }
    Ok(())
}
