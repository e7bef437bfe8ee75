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
