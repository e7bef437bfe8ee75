//! `reconverge suite`: every kernel of `kernels/` under every mechanism, checked against its expected
//! outputs.

use crate::launch_args::mechanism;
use crate::Failure;
use clap::Args;
use reconverge_report::table::Table;
use reconverge_sim::Mechanism;
use reconverge_suite::{run_entry, Manifest, Verdict};
use std::path::{Path, PathBuf};

/// Arguments of `reconverge suite`.
#[derive(Args)]
pub struct SuiteArgs {
    /// The kernel directory (holding manifest.toml); by default `kernels/` of this repository.
    #[arg(long)]
    pub kernels: Option<PathBuf>,
    /// Only these kernels (repeatable).
    #[arg(long = "kernel")]
    pub only: Vec<String>,
    /// Mechanisms to run (repeatable; default: all).
    #[arg(long = "mechanism")]
    pub mechanisms: Vec<String>,
    /// Warp sizes (repeatable; default 32).
    #[arg(long = "warp-size")]
    pub warp_sizes: Vec<u32>,
    /// Print CSV instead of a table.
    #[arg(long)]
    pub csv: bool,
    /// Print JSON lines, one object per run.
    #[arg(long)]
    pub json: bool,
    /// Warp-instruction limit per run.
    #[arg(long, default_value_t = 50_000_000)]
    pub max_instructions: u64,
}

/// Finds `kernels/` next to the current directory or above it, or above the executable.
pub fn default_kernels_dir() -> Option<PathBuf> {
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
pub fn load_manifest(dir: &Path) -> Result<Manifest, Failure> {
    let path = dir.join("manifest.toml");
    let text =
        std::fs::read_to_string(&path).map_err(|e| Failure::input(format!("cannot read `{}`: {e}", path.display())))?;
    Manifest::parse(&text).map_err(|e| Failure::input(format!("{}: {e}", path.display())))
}

/// Runs `reconverge suite`.
pub fn run(a: SuiteArgs) -> Result<(), Failure> {
    let dir = match a.kernels.clone().or_else(default_kernels_dir) {
        Some(d) => d,
        None => return Err(Failure::input("cannot find kernels/manifest.toml; pass --kernels DIR")),
    };
    let manifest = load_manifest(&dir)?;
    let mechs: Vec<Mechanism> = if a.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        a.mechanisms.iter().map(|m| mechanism(m)).collect::<Result<_, _>>()?
    };
    let warp_sizes = if a.warp_sizes.is_empty() { vec![32] } else { a.warp_sizes.clone() };
    for k in &a.only {
        if !manifest.kernels.iter().any(|e| &e.name == k) {
            let names: Vec<&str> = manifest.kernels.iter().map(|e| e.name.as_str()).collect();
            return Err(Failure::input(format!("no kernel `{k}` in the suite (kernels: {})", names.join(", "))));
        }
    }
    let load = |p: &str| std::fs::read(dir.join(p)).map_err(|e| format!("cannot read `{p}`: {e}"));
    let mut table = Table::new(&[
        "kernel",
        "mechanism",
        "warp",
        "outcome",
        "check",
        "warp instr",
        "thread instr",
        "SIMD eff",
        "max depth",
        "div branches",
    ]);
    let (mut ok, mut total) = (0, 0);
    let mut problems = Vec::new();
    for e in manifest.kernels.iter().filter(|e| a.only.is_empty() || a.only.contains(&e.name)) {
        for &ws in &warp_sizes {
            for &m in &mechs {
                if !e.supports_warp_size(ws) {
                    table.row(vec![e.name.clone(), m.to_string(), ws.to_string(), "skipped".into(), "-".into()]);
                    continue;
                }
                let o = run_entry(e, m, ws, &load, a.max_instructions, reconverge_suite::Mode::Functional);
                total += 1;
                let check = match &o.verdict {
                    Verdict::Pass => {
                        ok += 1;
                        "ok".to_string()
                    }
                    Verdict::WrongOutcome { expected, got } => {
                        problems.push(format!("{} / {m} / warp {ws}: expected {expected}, got {got}", e.name));
                        "WRONG OUTCOME".into()
                    }
                    Verdict::Mismatch(s) => {
                        problems.push(format!("{} / {m} / warp {ws}: {s}", e.name));
                        "MISMATCH".into()
                    }
                    Verdict::Broken(s) => {
                        problems.push(format!("{} / {m} / warp {ws}: {s}", e.name));
                        "BROKEN".into()
                    }
                };
                let (outcome, w, t, eff, depth, div) = match &o.result {
                    Some(r) => (
                        r.outcome().to_string(),
                        r.stats.warp_instructions.to_string(),
                        r.stats.thread_instructions.to_string(),
                        format!("{:.1}%", 100.0 * r.stats.simd_efficiency(ws)),
                        r.stats.max_stack_depth.to_string(),
                        format!("{}/{}", r.stats.divergent_branches, r.stats.branches),
                    ),
                    None => ("-".into(), "-".into(), "-".into(), "-".into(), "-".into(), "-".into()),
                };
                if a.json {
                    let j = serde_json::json!({
                        "kernel": e.name, "mechanism": m.name(), "warp_size": ws, "check": check,
                        "outcome": outcome,
                        "stats": o.result.as_ref().map(|r| serde_json::to_value(reconverge_report::run::run_json(&e.name, m.name(), ws, r)).unwrap_or_default()),
                    });
                    println!("{j}");
                }
                table.row(vec![e.name.clone(), m.to_string(), ws.to_string(), outcome, check, w, t, eff, depth, div]);
            }
        }
    }
    if a.csv {
        print!("{}", table.render_csv());
    } else if !a.json {
        print!("{}", table.render());
        println!(
            "\n{ok} of {total} runs as expected ({} kernels, mechanisms: {})",
            manifest.kernels.len(),
            mechs.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
        );
        for p in &problems {
            println!("  {p}");
        }
    }
    if ok == total {
        Ok(())
    } else {
        Err(Failure { message: format!("{} of {total} suite runs were not as expected", total - ok), code: 1 })
    }
}
