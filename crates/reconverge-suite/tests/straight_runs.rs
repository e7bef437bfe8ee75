//! Straight-line runs are exact: a functional run that issues straight-line code as runs (a mechanism's
//! `straight_run` and one `advance`) ends exactly as one that issues every instruction on its own (an
//! observer that follows every context turns runs off): the same outcome, memory, `printf` output and
//! statistics (every counter, per-branch statistic and structure maximum), for every mechanism of the
//! registry on the suite kernels, at the usual warp size and a small one.

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_sim::{run, IssueEvent, NoObserver, Observer, RunResult};
use reconverge_suite::prepare_entry;

/// Follows every context, so the machine issues one instruction at a time; counts the issues.
#[derive(Default)]
struct OneAtATime(u64);

impl Observer for OneAtATime {
    fn wants(&self, _: u64, _: u32) -> bool {
        true
    }
    fn on_issue(&mut self, _: &IssueEvent<'_>) {
        self.0 += 1;
    }
}

/// The kernels compared (the whole suite takes minutes at the test profile's optimisation): structured
/// and unstructured divergence, loops, calls, barriers, warp-synchronous instructions and spin locks.
const KERNELS: &[&str] = &[
    "kern",
    "short_circuit",
    "nested_loops",
    "recursion",
    "irreducible",
    "switch_kernel",
    "warp_reduce",
    "spinlock_safe",
    "histogram",
    "bfs",
];

/// What a run ended with, every part the two ways of issuing must agree on.
fn summary(r: &RunResult) -> (Option<String>, String) {
    let outcome = r.error.as_ref().map(|e| e.to_string());
    let rest = format!("{:?} {:?} {:?} {:?} {:?}", r.buffers, r.globals, r.fields, r.printf, r.printf_truncated);
    (outcome, rest)
}

#[test]
fn straight_runs_change_nothing_for_any_mechanism() {
    let suite = common::Suite::load();
    let load = |p: &str| suite.read(p);
    let mut compared = 0;
    for mech in Mechanism::ALL {
        for e in suite.manifest.kernels.iter().filter(|e| KERNELS.contains(&e.name.as_str())) {
            for w in [32u32, 8] {
                let Ok(p) = prepare_entry(e, mech, w, &load, 400_000) else { continue };
                let fast = run(&p.kernel, &p.cfg, &p.args, &mut NoObserver);
                let mut each = OneAtATime::default();
                let slow = run(&p.kernel, &p.cfg, &p.args, &mut each);
                let what = format!("{} {mech} w{w}", e.name);
                assert_eq!(summary(&fast), summary(&slow), "{what}: outcome or memory");
                assert_eq!(fast.stats, slow.stats, "{what}: statistics");
                assert!(each.0 > 0 || slow.error.is_some(), "{what}: nothing issued");
                compared += 1;
            }
        }
    }
    assert!(compared >= Mechanism::ALL.len() * 15, "only {compared} runs compared");
}
