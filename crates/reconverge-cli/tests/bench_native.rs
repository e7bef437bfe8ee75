//! `bench --native`: the suite's CUDA C compiled as C++ and run natively beside the simulator.

mod common;

use common::ok;
use serde_json::Value;

#[test]
fn native_runs_sit_beside_the_simulation_with_the_same_output() {
    let out = ok(&[
        "bench",
        "--native",
        "--functional",
        "--min-ms",
        "1",
        "--kernel",
        "mandelbrot",
        "--kernel",
        "kern",
        "--kernel",
        "warp_reduce",
        "--fractal-rows",
        "8,16",
        "--json",
    ]);
    let rows: Vec<Value> = serde_json::from_str(&out).expect("JSON rows");
    let find = |k: &str| rows.iter().find(|r| r["kernel"] == k).unwrap_or_else(|| panic!("no row {k}: {out}"));
    for k in ["kern", "mandelbrot", "mandelbrot@960x8", "mandelbrot@960x16"] {
        let r = find(k);
        assert_eq!(r["same_output"], true, "{k}: native and simulated outputs differ: {r}");
        assert!(r["native_s"].as_f64().unwrap() > 0.0, "{k}: {r}");
        assert!(r["functional_ratio"].as_f64().unwrap() > 0.0, "{k}: {r}");
        assert!(r["skipped"].is_null(), "{k}: {r}");
        assert!(r["timed_s"].is_null(), "{k}: --functional has no timed run: {r}");
    }
    // Twice the rows, twice the work.
    let w8 = find("mandelbrot@960x8")["warp_instructions"].as_f64().unwrap();
    let w16 = find("mandelbrot@960x16")["warp_instructions"].as_f64().unwrap();
    assert!((w16 / w8 - 2.0).abs() < 0.2, "{w8} {w16}");
    // A kernel whose threads must run together is listed as skipped, with the reason.
    let r = find("warp_reduce");
    assert!(r["skipped"].as_str().unwrap().contains("__shfl"), "{r}");
    assert!(r["native_s"].is_null(), "{r}");
}
