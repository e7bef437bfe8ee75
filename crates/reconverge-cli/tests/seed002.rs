//! Seed 002's test case (Fig. 9: 64 threads, one block, a compaction-adequate loop then an inadequate
//! one) under PDOM, TBC and CAPRI: the SIMD utilisation of Fig. 10, the compactions of each loop's
//! branch, and CAPRI's predictions and mispredictions.

mod common;

use common::ok;

use expect_test::expect_file;

const SUITE: [&str; 9] =
    ["suite", "--kernel", "capri", "--mechanism", "pdom", "--mechanism", "tbc", "--mechanism", "capri"];

/// The `mechanism` object of the branch at CUDA line `line` of the run under `mech`.
fn branch<'a>(runs: &'a [serde_json::Value], mech: &str, line: u64) -> &'a serde_json::Value {
    let run = runs.iter().find(|r| r["mechanism"] == mech).expect("the mechanism ran");
    let b = run["branches_by_pc"].as_array().expect("branches").iter().find(|b| b["cuda_line"] == line);
    &b.expect("the branch at that line")["mechanism_counters"]
}

fn n(v: &serde_json::Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn seed_002_table() {
    let text = ok(&[&SUITE[..], &["--counters", "--branches"]].concat());
    expect_file!["golden/seed002_capri.txt"].assert_eq(&text);
}

#[test]
fn tbc_compacts_the_first_loop_and_not_the_second() {
    let runs: serde_json::Value = serde_json::from_str(&ok(&[&SUITE[..], &["--json", "--branches"]].concat())).unwrap();
    let runs = runs.as_array().expect("runs");
    // Loop 1: `tid < 16 || tid > 47` (line 37); loop 2: `threadIdx.x % 2 == 0` (line 46). 32 iterations
    // each; every instance compacts both paths (2 static warps -> 1 warp each for loop 1, 2 -> 2 for
    // loop 2) and re-forms the 2 warps at the reconvergence point.
    let first = branch(runs, "tbc", 37);
    assert_eq!((n(first, "compactions"), n(first, "warps_before"), n(first, "warps_after")), (96, 192, 128));
    let second = branch(runs, "tbc", 46);
    assert_eq!((n(second, "compactions"), n(second, "warps_before"), n(second, "warps_after")), (96, 192, 192));
    // CAPRI: the first loop is predicted adequate every time and keeps compacting; the second is
    // predicted adequate once (the table starts "adequate"), found inadequate (one misprediction), and
    // its 31 later instances bypass: both warps go ahead each time.
    let first = branch(runs, "capri", 37);
    assert_eq!((n(first, "predicted_adequate"), n(first, "mispredictions"), n(first, "bypassed")), (32, 0, 0));
    assert_eq!((n(first, "warps_before"), n(first, "warps_after")), (192, 128));
    let second = branch(runs, "capri", 46);
    assert_eq!((n(second, "predicted_adequate"), n(second, "mispredictions"), n(second, "bypassed")), (1, 1, 62));
    let capri = runs.iter().find(|r| r["mechanism"] == "capri").expect("capri");
    let c = &capri["mechanism_counters"];
    assert_eq!((n(c, "predictions"), n(c, "mispredictions")), (64, 1));
    assert_eq!((n(c, "unnecessary_syncs"), n(c, "unnecessary_syncs_avoided")), (32, 31));
    // SIMD utilisation (seed 002 Fig. 10): compaction recovers the first loop's idle lanes.
    let simd = |m: &str| runs.iter().find(|r| r["mechanism"] == m).expect(m)["simd_efficiency"].as_f64().unwrap();
    assert!(simd("tbc") > simd("pdom") + 0.05, "{} vs {}", simd("tbc"), simd("pdom"));
    assert_eq!(simd("capri"), simd("tbc"), "CAPRI compacts exactly where it helps");
}

/// The capped scan (tests/data/capped_scan.cu: a loop with a `break` inside a conditional) and its arguments.
const CAPPED_SCAN: [&str; 8] = [
    "crates/reconverge-cli/tests/data/capped_scan.ptx",
    "--arg",
    "rand:i32:64:7:2",
    "--arg",
    "zeros:i32:64",
    "--arg",
    "6",
    "--functional",
];

/// `trace` of the capped scan, 16 threads in two warps of 8.
fn capped_scan_trace(mech: &str) -> String {
    let opts = ["--block", "16", "--warp-size", "8", "--limit", "120", "--mechanism", mech];
    ok(&[&["trace"][..], &CAPPED_SCAN, &opts].concat())
}

#[test]
fn likely_convergence_traces() {
    let plain = capped_scan_trace("tbc");
    let lpc = capped_scan_trace("tbc:lpc");
    expect_file!["golden/trace_capped_scan_tbc.txt"].assert_eq(&plain);
    expect_file!["golden/trace_capped_scan_tbc_lpc.txt"].assert_eq(&lpc);
    assert!(!plain.contains("lpc="), "plain TBC has no likely-convergence entries");
    assert!(lpc.contains("lpc="), "the path entries of the break's branch stop at its likely-convergence point");
}

#[test]
fn likely_convergence_saves_warp_instructions_on_the_capped_scan() {
    let run = |mech: &str| -> serde_json::Value {
        let opts = ["--block", "64", "--json", "--mechanism", mech];
        serde_json::from_str(&ok(&[&["run"][..], &CAPPED_SCAN, &opts].concat())).expect("json")
    };
    let (tbc, lpc) = (run("tbc"), run("tbc:lpc"));
    let w = |v: &serde_json::Value| v["warp_instructions"].as_u64().expect("warp_instructions");
    assert!(w(&lpc) < w(&tbc), "{} vs {}", w(&lpc), w(&tbc));
    assert!(n(&lpc["mechanism_counters"], "likely_merges") > 0);
    assert!(tbc["mechanism_counters"].get("likely_merges").is_none());
}

/// docs/seed002-results.md's test-case and suite tables are this binary's (`scripts/regrouping_table.py
/// --check --quick`; the graph tables take minutes and are checked by hand with `--check`).
#[test]
fn the_seed002_results_tables_match_the_binary() {
    let out = std::process::Command::new("python3")
        .arg(common::root().join("scripts/regrouping_table.py"))
        .args(["--check", "--quick", "--bin", env!("CARGO_BIN_EXE_reconverge")])
        .output()
        .expect("python3 runs scripts/regrouping_table.py");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
