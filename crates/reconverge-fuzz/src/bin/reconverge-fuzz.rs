//! `reconverge-fuzz`: a time-bounded fuzzing campaign over the whole pipeline.
//!
//! ```text
//! cargo run --release -p reconverge-fuzz -- --minutes 10 [--seed 1] [--out fuzz-findings] [--no-timed]
//! ```
//! Each input is a corpus PTX file with one to four random mutations, checked by
//! `reconverge_fuzz::check` (parse, print, analyses, reports, SSY pass, decode, runs of up to four kernels
//! under every mechanism, functional and timed, each with a warp size from 1 to 64, sometimes seed 004's
//! counters or a finite DWF table, and a timed configuration drawn from the presets, random valid
//! configurations and random invalid ones). Findings (panics, broken contracts, slow inputs) are written to
//! `--out` as `NNNN-STAGE.ptx` with the message in `NNNN-STAGE.txt`. The totals are printed at the end,
//! per mechanism, warp size and configuration kind; the exit status is 1 when something was found.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
use clap::Parser;
use reconverge_fuzz::{check, corpus, mutate, CheckOptions, Reached};
use reconverge_mechanism::Mechanism;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "reconverge-fuzz", about = "Fuzz reconverge's whole pipeline with mutated PTX for a given time.")]
struct Args {
    /// Minutes to run (added to --seconds).
    #[arg(long, default_value_t = 0)]
    minutes: u64,
    /// Seconds to run (added to --minutes; default 60 when both are 0).
    #[arg(long, default_value_t = 0)]
    seconds: u64,
    /// Random seed (the same seed and corpus give the same inputs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory for findings.
    #[arg(long, default_value = "fuzz-findings")]
    out: PathBuf,
    /// Skip the timing-model runs (more inputs per minute).
    #[arg(long)]
    no_timed: bool,
    /// The repository root (holding kernels/).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
}

fn main() -> std::process::ExitCode {
    let a = Args::parse();
    let secs = a.minutes * 60 + a.seconds;
    let budget = Duration::from_secs(if secs == 0 { 60 } else { secs });
    let files = corpus(&a.repo);
    if files.is_empty() {
        eprintln!("no PTX corpus under {} (run from the repository root or pass --repo)", a.repo.display());
        return std::process::ExitCode::from(2);
    }
    // Panics are caught and reported as findings; keep the terminal quiet.
    std::panic::set_hook(Box::new(|_| {}));
    let opts = CheckOptions { timed: !a.no_timed, ..CheckOptions::default() };
    let mut rng = fastrand::Rng::with_seed(a.seed);
    let start = Instant::now();
    let (mut tried, mut parsed, mut decoded, mut runs, mut found) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut totals = Totals::default();
    while start.elapsed() < budget {
        // Smaller files more often: the same constructs, faster cases.
        let i = rng.usize(..files.len()).min(rng.usize(..files.len()));
        let (name, text) = &files[i];
        let (input, muts) = mutate(text, &mut rng);
        tried += 1;
        match check(&input, &opts, a.seed.wrapping_mul(1_000_003).wrapping_add(tried)) {
            Ok(r) => {
                parsed += r.parsed as u64;
                decoded += r.decoded as u64;
                runs += r.runs as u64;
                totals.add(&r);
            }
            Err(f) => {
                found += 1;
                let _ = std::fs::create_dir_all(&a.out);
                let stem = a.out.join(format!("{found:04}-{}", f.stage));
                let _ = std::fs::write(stem.with_extension("ptx"), &input);
                let _ = std::fs::write(
                    stem.with_extension("txt"),
                    format!("from {name} with {muts:?}\nstage {}: {}\n", f.stage, f.what),
                );
                eprintln!("finding {found}: {} in stage {}: {}", name, f.stage, f.what.lines().next().unwrap_or(""));
            }
        }
    }
    println!(
        "{tried} inputs in {:.0} s from {} corpus files (seed {}): {parsed} parsed, {decoded} decoded, {runs} runs; \
         {found} findings{}",
        start.elapsed().as_secs_f64(),
        files.len(),
        a.seed,
        if found > 0 { format!(" (in {})", a.out.display()) } else { String::new() }
    );
    totals.print();
    if found > 0 {
        std::process::ExitCode::from(1)
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// Runs of a campaign by mechanism, warp size and configuration kind.
#[derive(Default)]
struct Totals {
    mechanism: Vec<u64>,
    warp_size: [u64; 7],
    config: Vec<u64>,
    scalarized: u64,
    finite_lut: u64,
}

impl Totals {
    fn add(&mut self, r: &Reached) {
        self.mechanism.resize(r.per_mechanism.len().max(self.mechanism.len()), 0);
        for (t, &n) in self.mechanism.iter_mut().zip(&r.per_mechanism) {
            *t += u64::from(n);
        }
        for (t, &n) in self.warp_size.iter_mut().zip(&r.per_warp_size) {
            *t += u64::from(n);
        }
        self.config.resize(r.per_config.len().max(self.config.len()), 0);
        for (t, &n) in self.config.iter_mut().zip(&r.per_config) {
            *t += u64::from(n);
        }
        self.scalarized += u64::from(r.scalarized);
        self.finite_lut += u64::from(r.finite_lut);
    }

    fn print(&self) {
        let per: Vec<String> =
            Mechanism::ALL.iter().zip(&self.mechanism).map(|(m, n)| format!("{} {n}", m.name())).collect();
        println!("runs per mechanism: {}", per.join(", "));
        let ws: Vec<String> = self.warp_size.iter().enumerate().map(|(i, n)| format!("W{} {n}", 1 << i)).collect();
        println!("runs per warp size: {}", ws.join(", "));
        let mut kinds: Vec<String> = reconverge_timing::PRESETS.iter().map(|p| p.to_string()).collect();
        kinds.extend(["random valid".to_string(), "random invalid (refused)".to_string()]);
        let cs: Vec<String> = kinds.iter().zip(&self.config).map(|(k, n)| format!("{k} {n}")).collect();
        println!("timed runs per configuration: {}", cs.join(", "));
        println!(
            "runs with --scalarize: {}; DWF-family runs with a finite look-up table: {}",
            self.scalarized, self.finite_lut
        );
    }
}
