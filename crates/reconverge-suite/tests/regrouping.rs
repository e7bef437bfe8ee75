//! The mechanisms that regroup threads across warps (DWF, TBC, CAPRI) on suite kernels: what they count,
//! how the LUT geometry changes DWF, deadlock reports, and determinism of the timed runs.

mod common;

use reconverge_mechanism::{Heuristic, LutGeometry, Mechanism};
use reconverge_sim::RunResult;
use reconverge_suite::{prepare_entry, run_prepared, Mode, PreparedEntry};

fn prepared(kernel: &str, mech: Mechanism) -> PreparedEntry {
    let suite = common::Suite::load();
    let entry = suite.manifest.kernels.iter().find(|e| e.name == kernel).expect("kernel");
    let load = |p: &str| suite.read(p);
    prepare_entry(entry, mech, 32, &load, 20_000_000).expect("loads")
}

fn functional(kernel: &str, mech: Mechanism) -> RunResult {
    run_prepared(&prepared(kernel, mech), Mode::Functional).0
}

fn counter(r: &RunResult, name: &str) -> u64 {
    r.stats.mechanism_counter(name).unwrap_or_else(|| panic!("no counter {name}"))
}

const DWF: Mechanism = Mechanism::Dwf(Heuristic::Majority, LutGeometry::PERFECT);

#[test]
fn dwf_merges_threads_of_different_warps_and_raises_simd_efficiency() {
    let pdom = functional("capri", Mechanism::Pdom);
    let dwf = functional("capri", DWF);
    assert!(dwf.error.is_none() && pdom.error.is_none());
    assert!(counter(&dwf, "merges") > 0);
    assert!(dwf.stats.simd_efficiency(32) > pdom.stats.simd_efficiency(32));
    assert_eq!(dwf.buffers, pdom.buffers, "same memory");
    assert!(dwf.stats.max_pool_warps().is_some_and(|n| n >= 2) && dwf.stats.max_stack_depth().is_none());
}

#[test]
fn an_sm_wide_pool_forms_warps_of_threads_from_several_ctas() {
    let pdom = functional("bitonic_sort", Mechanism::Pdom);
    let per_cta = functional("bitonic_sort", DWF);
    let sm_wide = functional("bitonic_sort", Mechanism::DwfSm(LutGeometry::PERFECT));
    assert!(sm_wide.error.is_none(), "{:?}", sm_wide.error);
    assert_eq!(sm_wide.buffers, pdom.buffers, "same memory");
    assert_eq!(counter(&per_cta, "multi_cta_warps"), 0, "a per-CTA pool never mixes CTAs");
    assert!(counter(&sm_wide, "multi_cta_warps") > 0, "the SM-wide pool mixes CTAs");
    assert!(counter(&sm_wide, "merges") > counter(&per_cta, "merges"), "more threads to merge with");
    assert_eq!(sm_wide.stats.thread_instructions, per_cta.stats.thread_instructions, "the same work");
    // One SM, so that the timing model keeps several CTAs resident together.
    let mut gpu = reconverge_timing::GpuConfig::gtx480();
    gpu.num_sms = 1;
    let p = prepared("bitonic_sort", Mechanism::DwfSm(LutGeometry::PERFECT));
    let (timed, t1) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
    assert!(timed.error.is_none(), "{:?}", timed.error);
    assert_eq!(timed.buffers, pdom.buffers, "timed runs compute the same");
    assert!(counter(&timed, "multi_cta_warps") > 0, "the timing model's SM mixes CTAs too");
    let (again, t2) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 2 });
    assert_eq!(timed.stats, again.stats);
    assert_eq!(t1.expect("timing").cycles, t2.expect("timing").cycles);
}

#[test]
fn a_finite_lut_loses_merges_a_perfect_one_keeps() {
    let p = prepared("bfs", DWF);
    let perfect = run_prepared(&p, Mode::Functional).0;
    let tiny = run_prepared(
        &PreparedEntry { kernel: p.kernel.clone().with_lut(LutGeometry::parse("4:1").expect("geometry")), ..p.clone() },
        Mode::Functional,
    )
    .0;
    assert_eq!(counter(&perfect, "lut_evictions"), 0);
    assert!(counter(&tiny, "lut_evictions") > 0, "a 4-entry direct-mapped LUT aliases");
    assert!(counter(&tiny, "lut_real_misses") > counter(&perfect, "lut_real_misses"));
    assert_eq!(tiny.buffers, perfect.buffers, "the LUT changes grouping, never results");
}

#[test]
fn every_dwf_heuristic_gives_the_same_memory_in_a_different_order() {
    let pdom = functional("nested_loops", Mechanism::Pdom);
    let mut issued = Vec::new();
    for h in Heuristic::ALL {
        let r = functional("nested_loops", Mechanism::Dwf(h, LutGeometry::PERFECT));
        assert!(r.error.is_none(), "{h:?}: {:?}", r.error);
        assert_eq!(r.buffers, pdom.buffers, "{h:?}");
        issued.push(r.stats.warp_instructions);
    }
    issued.dedup();
    assert!(issued.len() > 1, "the heuristics order issue differently: {issued:?}");
}

#[test]
fn a_tbc_deadlock_report_names_the_cta_wide_stack() {
    let r = functional("spinlock_naive", Mechanism::Tbc);
    let msg = r.error.expect("the naive spin lock deadlocks under TBC").to_string();
    assert!(msg.contains("under `tbc`"), "{msg}");
    assert!(msg.contains("CTA-wide stack") || msg.contains("dynamic warp"), "{msg}");
}

#[test]
fn capri_stalls_fewer_warps_than_tbc_for_the_same_compaction_benefit() {
    let tbc = functional("bfs_large", Mechanism::Tbc);
    let capri = functional("bfs_large", Mechanism::Capri);
    assert_eq!(tbc.buffers, capri.buffers);
    assert_eq!(counter(&tbc, "stalled_warps"), counter(&tbc, "arrivals"), "TBC stalls every arrival");
    assert!(counter(&capri, "stalled_warps") * 2 < counter(&capri, "arrivals"));
    assert!(counter(&capri, "unnecessary_syncs_avoided") > 0);
    assert!(counter(&capri, "predictions") >= counter(&capri, "mispredictions"));
    let saved = |r: &RunResult| counter(r, "warps_before") - counter(r, "warps_after");
    assert!(saved(&tbc) > 0 && saved(&capri) > 0);
}

#[test]
fn timed_regrouping_runs_do_not_depend_on_host_threads() {
    let gpu = reconverge_timing::GpuConfig::gtx480();
    for mech in [DWF, Mechanism::DwfSm(LutGeometry::PERFECT), Mechanism::Tbc, Mechanism::Capri] {
        let p = prepared("bfs_large", mech);
        let (a, ta) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
        let (b, tb) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 2 });
        assert_eq!(a.stats, b.stats, "{mech}");
        assert_eq!(a.buffers, b.buffers, "{mech}");
        let (ta, tb) = (ta.expect("timing"), tb.expect("timing"));
        assert_eq!((ta.cycles, ta.stalls.mechanism), (tb.cycles, tb.stalls.mechanism), "{mech}");
        if mech != DWF && mech != Mechanism::DwfSm(LutGeometry::PERFECT) {
            assert!(counter(&a, "sync_stall_cycles") > 0, "{mech}: warps wait for their block");
        }
    }
}

#[test]
fn likely_convergence_points_merge_the_threads_that_stay_in_the_loop() {
    // nested_loops' inner loop holds a branch whose one side leaves it: under `tbc` its two sides run the
    // rest of the loop in separate entries; under `tbc:lpc` they meet at the loop's increment.
    for (plain, lpc) in [(Mechanism::Tbc, Mechanism::TbcLpc), (Mechanism::Capri, Mechanism::CapriLpc)] {
        let a = functional("nested_loops", plain);
        let b = functional("nested_loops", lpc);
        assert!(a.error.is_none() && b.error.is_none(), "{lpc}: {:?}", b.error);
        assert_eq!(a.buffers, b.buffers, "{lpc}: same memory");
        assert!(counter(&b, "likely_merges") > 0, "{lpc} merges at the likely-convergence point");
        assert!(
            b.stats.warp_instructions < a.stats.warp_instructions,
            "{lpc}: {} warp instructions vs {}",
            b.stats.warp_instructions,
            a.stats.warp_instructions
        );
        assert!(b.stats.simd_efficiency(32) > a.stats.simd_efficiency(32), "{lpc}");
    }
    // Only the `:lpc` variants report the counter; `capri` reports it as 0.
    assert!(functional("nested_loops", Mechanism::Tbc).stats.mechanism_counter("likely_merges").is_none());
    assert_eq!(counter(&functional("nested_loops", Mechanism::Capri), "likely_merges"), 0);
}

#[test]
fn the_cta_oldest_scheduler_keeps_results_and_is_deterministic() {
    let mut gpu = reconverge_timing::GpuConfig::gtx480();
    gpu.sm.scheduler = reconverge_timing::config::SchedulerPolicy::CtaOldest;
    let gto = reconverge_timing::GpuConfig::gtx480();
    for mech in [Mechanism::Pdom, Mechanism::TbcLpc] {
        let p = prepared("bfs_large", mech);
        let (a, ta) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
        let (b, tb) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 2 });
        let (c, tc) = run_prepared(&p, Mode::Timed { gpu: &gto, threads: 1 });
        assert_eq!((a.stats.clone(), a.buffers.clone()), (b.stats, b.buffers), "{mech}");
        assert_eq!(a.buffers, c.buffers, "{mech}: the scheduler changes timing only");
        let (ta, tb, tc) = (ta.expect("timing"), tb.expect("timing"), tc.expect("timing"));
        assert_eq!(ta.cycles, tb.cycles, "{mech}");
        assert_ne!(ta.cycles, tc.cycles, "{mech}: block-age priority issues in another order than GTO");
    }
}
