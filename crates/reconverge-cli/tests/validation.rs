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
