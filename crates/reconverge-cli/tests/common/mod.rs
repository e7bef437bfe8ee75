//! Running the `reconverge` binary from the repository root, shared by the integration tests.
#![allow(dead_code)] // each test file uses part of it

use std::path::PathBuf;
use std::process::Command;

/// The repository root.
pub(crate) fn root() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Runs `reconverge` from the repository root; returns (exit status, stdout, stderr).
pub(crate) fn reconverge(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_reconverge")).args(args).current_dir(root()).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `reconverge`, asserts success, returns stdout.
pub(crate) fn ok(args: &[&str]) -> String {
    let (code, out, err) = reconverge(args);
    assert_eq!(code, 0, "reconverge {args:?} failed:\n{err}");
    out
}

/// A fresh directory under the system's temporary directory for this test process, named after `tag`.
pub(crate) fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconverge-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Runs `reconverge exec FLAGS -- DIR/PROGRAM` (a test program built into `dir`): (exit status, stdout,
/// stderr).
pub(crate) fn exec_program(dir: &std::path::Path, flags: &[&str], program: &str) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .arg("exec")
        .args(flags)
        .arg("--")
        .arg(dir.join(program))
        .output()
        .expect("reconverge runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}
