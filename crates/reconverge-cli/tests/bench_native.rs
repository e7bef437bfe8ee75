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

#[test]
fn a_compiler_that_hangs_is_stopped_with_its_message() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("reconverge-hang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cxx = dir.join("hangcxx.sh");
    let pidfile = dir.join("sleep.pid");
    let script = format!(
        "#!/bin/sh\necho 'hangcxx: thinking very hard' >&2\nsleep 60 &\necho $! > {}\nwait\n",
        pidfile.display()
    );
    std::fs::write(&cxx, script).expect("script");
    std::fs::set_permissions(&cxx, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["bench", "--native", "--functional", "--min-ms", "1", "--kernel", "kern", "--fractal-rows", "0"])
        .args(["--native-timeout", "1"])
        .env("CXX", &cxx)
        .current_dir(common::root())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did not finish within 1 s") && err.contains("thinking very hard"), "{err}");
    // Stopped with its children (the `sleep` holds the pipes open): it is gone, or a zombie.
    let pid = std::fs::read_to_string(&pidfile).expect("the script ran").trim().to_string();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(stat.is_empty() || stat.contains(") Z "), "the compiler's child still runs: {stat}");
    let _ = std::fs::remove_dir_all(&dir);
}
