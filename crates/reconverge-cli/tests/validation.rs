//! The timing model's calibration against GPGPU-Sim (docs/validation.md), without GPGPU-Sim: every launch of
//! the validation set runs under `gtx480` and `volta` and is compared with the GPGPU-Sim cycles committed in
//! `docs/validation/gpgpusim-*.csv`. `scripts/gpgpusim/validate.py --check --targets` fails when a launch is
//! more than 2x off GPGPU-Sim, the correlation of log cycles drops below 0.98, the mean absolute relative
//! error rises above 15%, warp instructions differ (beyond the timing-dependent spin lock), or the tables
//! in docs/ no longer match this binary.

mod common;

use std::process::Command;

#[test]
fn presets_stay_calibrated_against_gpgpusim() {
    let out = Command::new("python3")
        .arg(common::root().join("scripts/gpgpusim/validate.py"))
        .args(["--check", "--targets", "--bin", env!("CARGO_BIN_EXE_reconverge")])
        .output()
        .expect("python3 (3.11 or newer) runs scripts/gpgpusim/validate.py");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "validate.py --check --targets failed:\n{text}");
    assert!(
        text.contains("gtx480 vs SM2_GTX480: launches 41") && text.contains("volta vs SM7_QV100: launches 41"),
        "{text}"
    );
}

/// `run --json`'s occupancy for the validation set's `conv1d` (256 threads per CTA) on the GTX 480, with
/// the environment variable `RECONVERGE_PTXAS` set to `value` (unset when `None`).
fn conv1d_occupancy(value: Option<&str>) -> serde_json::Value {
    let dir = common::root().join("kernels/validation");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reconverge"));
    cmd.current_dir(&dir).args(["run", "ptx/conv1d.ptx", "--kernel", "conv1d", "--grid", "256", "--block", "256"]);
    cmd.args(["--arg", "rand:f32:65536:22", "--arg", "rand:f32:17:23", "--arg", "zeros:f32:65536", "--arg", "65536"]);
    cmd.arg("--json");
    match value {
        Some(v) => cmd.env("RECONVERGE_PTXAS", v),
        None => cmd.env_remove("RECONVERGE_PTXAS"),
    };
    let out = cmd.output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v["occupancy"].clone()
}

/// Registers per thread come from `ptxas -v`, as GPGPU-Sim takes them (CI installs CUDA 11.8's ptxas, the
/// one that assembles these `sm_35` modules); `RECONVERGE_PTXAS=off` gives the PTX estimate, which holds
/// half the CTAs.
#[test]
fn registers_per_thread_come_from_ptxas() {
    let o = conv1d_occupancy(None);
    assert_eq!(o["registers_from"], "ptxas", "{o}");
    assert_eq!(o["ptxas"], "11.8 sm_35", "{o}");
    assert_eq!((o["registers_per_thread"].as_u64(), o["resident_ctas"].as_u64()), (Some(27), Some(4)), "{o}");
    let est = conv1d_occupancy(Some("off"));
    assert_eq!(est["registers_from"], "estimate", "{est}");
    assert_eq!((est["registers_per_thread"].as_u64(), est["resident_ctas"].as_u64()), (Some(63), Some(2)), "{est}");
}
