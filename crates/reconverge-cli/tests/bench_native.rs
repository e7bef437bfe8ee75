//! `bench --native`: the suite's CUDA C compiled as C++ and run natively beside the simulator.

mod common;

use common::ok;

fn rows(csv: &str) -> Vec<Vec<String>> {
    csv.lines().map(|l| l.split(',').map(str::to_string).collect()).collect()
}

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
        "--csv",
    ]);
    let rows = rows(&out);
    let head = &rows[0];
    let col = |name: &str| head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}: {head:?}"));
    let (kernel, skipped, native, ratio, same, warp) = (
        col("kernel"),
        col("skipped"),
        col("native_s"),
        col("functional_ratio"),
        col("same_output"),
        col("warp_instructions"),
    );
    let find = |k: &str| rows.iter().find(|r| r[kernel] == k).unwrap_or_else(|| panic!("no row {k}: {out}"));
    for k in ["kern", "mandelbrot", "mandelbrot@960x8", "mandelbrot@960x16"] {
        let r = find(k);
        assert_eq!(r[same], "true", "{k}: native and simulated outputs differ: {r:?}");
        assert!(r[native].parse::<f64>().unwrap() > 0.0, "{k}: {r:?}");
        assert!(r[ratio].parse::<f64>().unwrap() > 0.0, "{k}: {r:?}");
        assert!(r[skipped].is_empty(), "{k}: {r:?}");
    }
    // Twice the rows, twice the work.
    let w8: f64 = find("mandelbrot@960x8")[warp].parse().unwrap();
    let w16: f64 = find("mandelbrot@960x16")[warp].parse().unwrap();
    assert!((w16 / w8 - 2.0).abs() < 0.2, "{w8} {w16}");
    // A kernel whose threads must run together is listed as skipped, with the reason.
    let r = find("warp_reduce");
    assert!(r[skipped].contains("__shfl"), "{r:?}");
    assert!(r[native].is_empty(), "{r:?}");
}
