//! The results tables of `docs/` are this binary's: each generating script's `--check` fails when a table
//! no longer matches what the binary prints (seed 002's tables are checked in `seed002.rs`, the GPGPU-Sim
//! comparison in `validation.rs`).

mod common;

fn check(script: &str, extra: &[&str]) {
    let out = std::process::Command::new("python3")
        .arg(common::root().join(script))
        .arg("--check")
        .args(extra)
        .args(["--bin", env!("CARGO_BIN_EXE_reconverge")])
        .output()
        .unwrap_or_else(|e| panic!("python3 runs {script}: {e}"));
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// docs/simt-deadlock.md: every mechanism on the four synchronisation patterns at warp sizes 4–32.
#[test]
fn the_simt_deadlock_table_matches_the_binary() {
    check("scripts/deadlock_table.py", &[]);
}

/// docs/seed003-results.md: every seed 003 mechanism on every built-in kernel (GTX 480, warp 32).
#[test]
fn the_seed003_tables_match_the_binary() {
    check("scripts/path_list_table.py", &[]);
}

/// docs/seed004-results.md: pdom, stackless and stackless-dcp on gtx480 and temporal.
#[test]
fn the_seed004_cycles_table_matches_the_binary() {
    check("scripts/seed004_cycles_table.py", &[]);
}

/// docs/energy.md: the coefficients, the energy of the validation set beside GPUWattch's and AccelWattch's
/// (the `gtx480` targets: correlation of per-launch energy at least 0.95, mean error at most 20%), every
/// mechanism's energy and EDP, and seed 004's Figure 7 machines.
#[test]
fn the_energy_tables_match_the_binary_and_gtx480_meets_its_targets() {
    check("scripts/energy_compare.py", &["--targets"]);
}

/// docs/paper-headlines.md: the papers' headline numbers beside ours (GTX 480, warp 32).
#[test]
fn the_paper_headlines_table_matches_the_binary() {
    check("scripts/paper_headlines.py", &[]);
}

/// docs/paper-reproduction.md: the ablation of the papers' claims over machine variants (GTX 480, warp 32).
#[test]
fn the_paper_ablation_table_matches_the_binary() {
    check("scripts/paper_ablation.py", &[]);
}
