//! The command line's build and the Python module's build enable the same features of every crate they
//! share, so that `pip install ./python` after `cargo build --release -p reconverge-cli -p reconverge-cudart`
//! compiles only PyO3 and the module itself (cargo compiles a crate again, with everything that depends on
//! it, for every distinct set of its features). `reconverge-workspace-hack` supplies the command line's side
//! of the difference; this test names any crate a dependency update makes differ again.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

mod common;

/// Every package of the build of `packages` (normal and build dependencies, proc macros included) with the
/// set of feature lists cargo resolves for it (a crate built for the target and for the host may have two).
fn features(packages: &[&str], extra: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(["tree", "--offline", "--locked", "-e", "normal,build", "--prefix", "none", "-f", "{p}|{f}"]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let out = cmd.args(extra).current_dir(common::root()).output().expect("runs cargo tree");
    assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let line = line.replace(" (*)", "");
        if let Some((package, feats)) = line.split_once('|') {
            map.entry(package.trim().to_string()).or_default().insert(feats.to_string());
        }
    }
    map
}

#[test]
fn the_command_line_and_the_python_module_build_shared_crates_with_the_same_features() {
    let cli = features(&["reconverge-cli", "reconverge-cudart"], &[]);
    let python = features(&["reconverge-py"], &["--features", "pyo3/extension-module"]);
    let shared: Vec<&String> = cli.keys().filter(|k| python.contains_key(*k)).collect();
    assert!(shared.len() > 50, "only {} shared packages: cargo tree's output changed?", shared.len());
    let differ: Vec<String> = shared
        .into_iter()
        .filter(|k| cli[*k] != python[*k])
        .map(|k| format!("{k}: command line {:?}, Python module {:?}", cli[k], python[k]))
        .collect();
    assert!(
        differ.is_empty(),
        "crates built with other features for the Python module than for the command line (add the \
         Python side's features to crates/reconverge-workspace-hack/Cargo.toml):\n{}",
        differ.join("\n")
    );
}
