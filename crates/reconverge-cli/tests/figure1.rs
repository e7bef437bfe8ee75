//! Seed 003 Figure 1 as golden traces: `if (A && B) C; else D; E;` (`kernels/src/short_circuit.cu`) on
//! one warp of 4 threads (thread 0 goes A B C E, thread 1 A D E, threads 2 and 3 A B D E), traced with
//! `trace --blocks` under every per-warp mechanism: the active path, saved paths in parentheses,
//! synchronisation points in brackets. Re-bless with `UPDATE_EXPECT=1 cargo test -p reconverge-cli`.
//!
//! NVRTC lays the blocks out as B0 = A, B1 = B, B2 = B's jump to C, B3 = D, B4 = C, B5 = E.

use expect_test::expect_file;
use reconverge_mechanism::Mechanism;
use reconverge_mechanism::Scope;
use std::process::Command;

fn trace(mech: Mechanism) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let args = [
        "trace",
        "kernels/ptx/sm_80/short_circuit.ptx",
        "--grid",
        "1",
        "--block",
        "4",
        "--warp-size",
        "4",
        "--arg",
        "zeros:i32:32",
        "--blocks",
        "--mechanism",
        mech.name(),
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_reconverge")).args(args).current_dir(root).output().expect("runs");
    assert!(out.status.success(), "{}: {}", mech, String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Block D (B3) executions: the figure's point is how often each order runs it.
fn d_runs(t: &str) -> usize {
    t.lines().filter(|l| l.split_whitespace().nth(1) == Some("B3")).count()
}

#[test]
fn figure1_under_every_per_warp_mechanism() {
    for m in Mechanism::ALL.into_iter().filter(|m| m.scope() == Scope::Warp) {
        let t = trace(m);
        let file = format!("golden/figure1/{}.txt", m.name().replace(':', "_"));
        expect_file![file].assert_eq(&t);
    }
}

#[test]
fn figure1_depth_first_runs_d_once_and_breadth_first_synchronises_at_e() {
    assert_eq!(d_runs(&trace(Mechanism::MinPc)), 1, "Fig. 1b: the two paths into D merge");
    let b = trace(Mechanism::Breadth);
    assert_eq!(d_runs(&b), 1);
    assert!(b.contains("[B5 0111]"), "Fig. 1d: lanes wait at E for thread 0:\n{b}");
    assert_eq!(d_runs(&trace(Mechanism::Pdom)), 2, "PDOM reconverges only at E: D runs twice");
    assert_eq!(d_runs(&trace(Mechanism::ForkJoin)), 2, "Fig. 1c: no partial convergence before the join");
    assert_eq!(d_runs(&trace(Mechanism::Its)), 1, "lowest pc first: the paths into D meet");
    // Fig. 1f: a parallel order runs D for two paths, interleaved.
    let mp = trace(Mechanism::MultiPath);
    let d_masks: std::collections::BTreeSet<&str> = mp
        .lines()
        .filter(|l| l.split_whitespace().nth(1) == Some("B3"))
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert_eq!(d_masks.into_iter().collect::<Vec<_>>(), ["0011", "0100"], "{mp}");
}

#[test]
fn figure1_hybrid_is_breadth_first_and_maven_and_the_runner_up_run_d_once() {
    // The trace without its first line (which names the mechanism).
    let body = |t: &str| t.lines().skip(1).collect::<Vec<_>>().join("\n");
    // `if (A && B)` is unstructured at both branches: `hybrid` traverses it breadth-first (Fig. 1d).
    let h = trace(Mechanism::Hybrid);
    assert_eq!(body(&h), body(&trace(Mechanism::Breadth)), "{h}");
    assert!(h.contains("[B5 0111]"), "lanes wait at E for thread 0:\n{h}");
    // Minimum-pc orders (Maven's shift registers, the runner-up registers): the paths into D merge, as in
    // `sorted:minpc`; with no back edge, 2-stack's second register stays empty.
    let sorted = body(&trace(Mechanism::Sorted(reconverge_mechanism::Priority::MinPc)));
    for m in [Mechanism::Maven { two_stacks: false }, Mechanism::Maven { two_stacks: true }, Mechanism::RunnerUp] {
        let t = trace(m);
        assert_eq!(d_runs(&t), 1, "{m}: D runs once\n{t}");
        assert_eq!(body(&t), sorted, "{m}");
    }
}

#[test]
fn cfg_shows_the_region_instructions() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    for (mech, file) in
        [("forkjoin", "golden/cfg_short_circuit_forkjoin.txt"), ("its", "golden/cfg_short_circuit_its.txt")]
    {
        let out = Command::new(env!("CARGO_BIN_EXE_reconverge"))
            .args(["cfg", "kernels/ptx/sm_80/short_circuit.ptx", "--mechanism", mech])
            .current_dir(root)
            .output()
            .expect("runs");
        assert!(out.status.success());
        expect_file![file].assert_eq(&String::from_utf8_lossy(&out.stdout));
    }
}
