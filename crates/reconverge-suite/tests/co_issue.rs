//! SBI co-issues the two paths of a warp in one cycle (`Tracker::CO_ISSUE_PATHS`): on the built-in
//! `nested_loops` (two paths per warp most of the time) the timed run counts `dual_issues`, each the second
//! issue of a pair from the warp's two slots (so at most the secondary slot's issues plus the primary's),
//! and the results are the functional run's. Functional runs have no cycles and count none.

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_suite::{prepare_entry, run_prepared, Mode};
use reconverge_timing::GpuConfig;

fn counter(r: &reconverge_sim::RunResult, name: &str) -> u64 {
    let defs = r.stats.mechanism_counter_defs;
    let i = defs.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("sbi counts {name}"));
    r.stats.mechanism_counters[i]
}

#[test]
fn sbi_co_issues_its_two_paths() {
    let suite = common::Suite::load();
    let load = |p: &str| suite.read(p);
    let entry = suite.manifest.kernels.iter().find(|e| e.name == "nested_loops").expect("nested_loops");
    let sbi = Mechanism::from_name("sbi").expect("registered");
    let p = prepare_entry(entry, sbi, 32, &load, 20_000_000).expect("loads");
    let gpu = GpuConfig::gtx480();
    let (timed, _) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
    let (functional, _) = run_prepared(&p, Mode::Functional);
    assert!(timed.error.is_none() && functional.error.is_none());
    assert_eq!(timed.buffers, functional.buffers, "co-issue changes no result");
    let (dual, secondary) = (counter(&timed, "dual_issues"), counter(&timed, "secondary_issues"));
    assert!(dual > 0, "no pair co-issued");
    assert!(dual <= timed.stats.warp_instructions / 2, "{dual} pairs of {} issues", timed.stats.warp_instructions);
    assert!(secondary > 0);
    assert_eq!(counter(&functional, "dual_issues"), 0, "a functional run has no cycles");
}

#[test]
fn sbi_swi_also_pairs_warps_whose_shuffled_lanes_are_disjoint() {
    let suite = common::Suite::load();
    let load = |p: &str| suite.read(p);
    let entry = suite.manifest.kernels.iter().find(|e| e.name == "nested_loops").expect("nested_loops");
    let gpu = GpuConfig::gtx480();
    let mut cross = Vec::new();
    for name in ["sbi", "sbi:swi"] {
        let mech = Mechanism::from_name(name).expect("registered");
        let p = prepare_entry(entry, mech, 32, &load, 20_000_000).expect("loads");
        let (timed, timing) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
        let (functional, _) = run_prepared(&p, Mode::Functional);
        assert!(timed.error.is_none(), "{name}: {:?}", timed.error);
        assert_eq!(timed.buffers, functional.buffers, "{name}: co-issue changes no result");
        let t = timing.expect("timed");
        assert!(t.warp_co_issues <= t.issued / 2, "{name}: {} pairs of {} issues", t.warp_co_issues, t.issued);
        cross.push(t.warp_co_issues);
    }
    assert_eq!(cross[0], 0, "sbi pairs only the paths of one warp");
    assert!(cross[1] > 0, "sbi:swi paired no two warps");
}
