//! `reconverge`: a laboratory for SIMT control-flow divergence.
//!
//! This crate is the only one that does IO: it parses arguments, reads files, runs the libraries and
//! prints their reports. Exit status: 0 success, 2 invalid input (with file:line:col or the argument),
//! 3 SIMT deadlock, 4 a configured limit was reached.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
mod analyze_cmd;
mod bench_cmd;
mod bench_exec;
mod bench_native;
mod cfg_cmd;
mod compare_cmd;
mod config_cmd;
mod cost_cmd;
mod cuda_dirs;
mod errors;
mod exec_cmd;
mod launch_args;
mod native;
mod out;
mod progress;
mod report_cmd;
mod run_cmd;
mod source;
mod suite_cmd;
mod suite_launch;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A failure with its exit status.
#[derive(Debug)]
pub struct Failure {
    /// The message (already formatted for the terminal).
    pub message: String,
    /// The exit status.
    pub code: u8,
}

impl Failure {
    /// Invalid input or usage (exit 2).
    pub fn input(message: impl Into<String>) -> Failure {
        Failure { message: message.into(), code: 2 }
    }

    /// Standard output was closed by its reader: stop quietly with status 0.
    pub fn quiet() -> Failure {
        Failure { message: String::new(), code: 0 }
    }
}

#[derive(Parser)]
#[command(
    name = "reconverge",
    version,
    about = "Run CUDA kernels (PTX) on a simulated GPU under every SIMT divergence mechanism and compare what each costs.",
    after_help = "\"seed 001\" to \"seed 004\" in this help are the four source documents (lecture notes on the reconvergence stack; CAPRI over thread block compaction; Collange & Brunie's path-list traversal, Inria RR-9073; Lee et al.'s convergence and scalarization, CGO 2013): docs/seeds.md."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the control-flow graph, dominators, post-dominators, control dependence, loops and the
    /// reconvergence point of every conditional branch.
    Cfg(cfg_cmd::CfgArgs),
    /// Seed 004's analyses: per block convergent under CA / CA+VA / +exit, per instruction
    /// invariant/affine/variant, scalar, warp-sequential, and the static scalarization summary.
    Analyze(analyze_cmd::AnalyzeArgs),
    /// Run a kernel on the simulated GPU and print its statistics.
    Run(run_cmd::RunArgs),
    /// Run a kernel and print, for one warp, every issued instruction with its active lanes and the
    /// reconvergence structure after it.
    Trace(run_cmd::TraceArgs),
    /// Run every kernel of the built-in suite under every mechanism and check the results.
    Suite(suite_cmd::SuiteArgs),
    /// Compare mechanisms (and warp sizes, GPU configurations) under the timing model on the suite
    /// kernels: cycles, speedup over pdom, SIMD efficiency, stall breakdown.
    Compare(compare_cmd::CompareArgs),
    /// One launch under one or more mechanisms as a self-contained HTML report: SIMD efficiency, structure
    /// size and active lanes over time, active-lane histograms, stalls with the timing statistics and each
    /// mechanism's counters, per-line heat maps of divergence and idle cycles, the branches and the CFG.
    Report(report_cmd::ReportArgs),
    /// Measure simulation speed on the suite kernels.
    Bench(bench_cmd::BenchArgs),
    /// Run an unmodified CUDA program (built with `nvcc -cudart shared`) on the simulated GPU: every
    /// launch under one mechanism, one JSON line of statistics per launch, a per-kernel summary at exit.
    Exec(exec_cmd::ExecArgs),
    /// The storage of every mechanism in bits and in mm² at 40 nm (worst case and at the depth the suite
    /// reached; seed 001's 5% check); --units: seed 003's two path-tracking units (storage bits,
    /// comparators, multiplexers per warp size); --synth: their RTL synthesized by Yosys.
    Cost(cost_cmd::CostArgs),
    /// GPU configurations: `config show PRESET` prints a preset as an editable TOML file for --config.
    Config(config_cmd::ConfigArgs),
    /// Print the directory holding `reconverge_compat.h`, which lets programs written for CUDA 11 and
    /// earlier (texture references, `cudaThreadSynchronize`) build with CUDA 13:
    /// `nvcc -include "$(reconverge cuda-include)/reconverge_compat.h" ...`.
    CudaInclude,
    /// Print a directory holding `libcudart.so` (reconverge's runtime) to link programs against:
    /// `nvcc -cudart shared -L "$(reconverge cuda-lib)" ...`, no NVIDIA runtime library needed
    /// (`--cuda 12`: CUDA 12's `libcudart.so.12`, for programs compiled with CUDA 12's headers).
    CudaLib(cuda_dirs::LibArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Cfg(a) => cfg_cmd::run(a),
        Command::Analyze(a) => analyze_cmd::run(a),
        Command::Run(a) => run_cmd::run_cmd(a),
        Command::Trace(a) => run_cmd::trace_cmd(a),
        Command::Suite(a) => suite_cmd::run(a),
        Command::Compare(a) => compare_cmd::run(a),
        Command::Report(a) => report_cmd::run_cmd(a),
        Command::Bench(a) => bench_cmd::run_bench(a),
        Command::Cost(a) => cost_cmd::run(a),
        Command::Exec(a) => exec_cmd::run(a),
        Command::Config(a) => config_cmd::run(a),
        Command::CudaInclude => cuda_dirs::include_cmd(),
        Command::CudaLib(a) => cuda_dirs::lib_cmd(&a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("{}", f.message.trim_end());
            }
            ExitCode::from(f.code)
        }
    }
}
