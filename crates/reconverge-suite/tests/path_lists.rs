//! Seed 003's path-list mechanisms on the suite kernels: the two hardware implementations of
//! `sorted:depth` (Simty's context tables, per-thread pc arbitration) issue exactly its sequence; the
//! structures' counters mean what they say; outcomes of the synchronisation kernels.

mod common;

use reconverge_mechanism::{Mechanism, Priority};
use reconverge_sim::{run, IssueEvent, Observer, RunResult};
use reconverge_suite::{prepare_entry, run_prepared, Manifest, Mode, PreparedEntry};

fn manifest() -> (Manifest, std::path::PathBuf) {
    let suite = common::Suite::load();
    (suite.manifest, suite.dir)
}

fn prepared(kernel: &str, mech: Mechanism, w: u32) -> PreparedEntry {
    let (manifest, dir) = manifest();
    let entry = manifest.kernels.iter().find(|e| e.name == kernel).expect("kernel");
    let load = |p: &str| std::fs::read(dir.join(p));
    prepare_entry(entry, mech, w, &load, 2_000_000).expect("loads")
}

/// Every issued (CTA, warp, pc, mask), in order.
#[derive(Default)]
struct Sequence(Vec<(u64, u32, u32, u64)>);

impl Observer for Sequence {
    fn wants(&self, _: u64, _: u32) -> bool {
        true
    }
    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        self.0.push((ev.cta, ev.ctx, ev.pc, ev.mask));
    }
}

fn sequence(kernel: &str, mech: Mechanism, w: u32) -> (RunResult, Vec<(u64, u32, u32, u64)>) {
    let p = prepared(kernel, mech, w);
    let mut seq = Sequence::default();
    let r = run(&p.kernel, &p.cfg, &p.args, &mut seq);
    (r, seq.0)
}

const DEPTH: Mechanism = Mechanism::Sorted(Priority::Depth);

#[test]
fn simty_and_the_arbiter_issue_exactly_the_sorted_depth_sequence() {
    let (manifest, _) = manifest();
    for e in &manifest.kernels {
        if e.name == "spinlock_naive" {
            continue; // a livelock: the sequences agree, but 100,000 instructions of spinning prove little
        }
        for w in [4u32, 8, 32] {
            if e.warp_sizes.as_ref().is_some_and(|ws| !ws.contains(&w)) {
                continue;
            }
            let (r0, s0) = sequence(&e.name, DEPTH, w);
            for mech in [Mechanism::Simty, Mechanism::Arbiter] {
                let (r, s) = sequence(&e.name, mech, w);
                assert_eq!(r.buffers, r0.buffers, "{} {mech} w{w}: memory", e.name);
                if let Some(k) = (0..s.len().min(s0.len())).find(|&k| s[k] != s0[k]) {
                    panic!(
                        "{} {mech} w{w}: issue {k} differs: {:?} vs sorted:depth {:?} (before: {:?})",
                        e.name,
                        s[k],
                        s0[k],
                        &s0[k.saturating_sub(6)..k]
                    );
                }
                assert_eq!(s.len(), s0.len(), "{} {mech} w{w}: issued count", e.name);
                // Structure sizes differ legitimately: a sorted list may hold two paths at one place until
                // they reach the head, the compact-sort unit merges them earlier, the arbiter has none.
            }
        }
    }
}

fn counter(r: &RunResult, name: &str) -> u64 {
    r.stats.mechanism_counter(name).unwrap_or_else(|| panic!("no counter {name}"))
}

#[test]
fn simty_counts_its_table_traffic() {
    let (r, _) = sequence("nested_loops", Mechanism::Simty, 32);
    assert!(r.error.is_none(), "{:?}", r.error);
    let ins = counter(&r, "cct_insertions");
    let ext = counter(&r, "cct_extractions");
    assert!(ins > 0, "nested divergence spills paths to the CCT");
    // Every path inserted leaves the CCT again (extracted, swapped out, or emptied by exits).
    assert!(ext <= ins, "{ext} extractions > {ins} insertions");
    let occ = counter(&r, "max_cct_occupancy");
    assert!((1..=30).contains(&occ), "at most W - 2 paths in the CCT: {occ}");
    assert!(r.stats.max_paths().is_some_and(|p| p >= occ as usize + 2), "x, y and the CCT are all paths");
    assert!(counter(&r, "cct_wait_instructions") > 0);
}

#[test]
fn the_arbiter_compares_2w_minus_1_times_per_selection() {
    for w in [8u32, 32] {
        let (r, _) = sequence("bfs", Mechanism::Arbiter, w);
        let sel = counter(&r, "selections");
        assert_eq!(sel, r.stats.warp_instructions);
        assert_eq!(counter(&r, "comparisons"), sel * (2 * u64::from(w) - 1));
    }
}

#[test]
fn minimum_pc_orders_livelock_on_the_naive_spin_lock_and_breadth_first_completes() {
    for mech in [Mechanism::MinPc, DEPTH, Mechanism::Simty, Mechanism::Arbiter] {
        let (r, _) = sequence("spinlock_naive", mech, 32);
        let e = r.error.expect("livelock").to_string();
        assert!(e.contains("spin forever"), "{mech}: {e}");
    }
    let p = prepared("spinlock_naive", Mechanism::Breadth, 32);
    let r = run_prepared(&p, Mode::Functional).0;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(counter(&r, "path_rotations") > 0);
}

#[test]
fn depth_first_and_sorted_minpc_reconverge_on_structured_code() {
    // On if/else and loops laid out in order, minimum-pc traversals reconverge where PDOM does: no
    // more warp instructions than PDOM on a kernel of nested structured branches.
    let (pdom, _) = sequence("nested_loops", Mechanism::Pdom, 32);
    for mech in [Mechanism::MinPc, Mechanism::Sorted(Priority::MinPc)] {
        let (r, _) = sequence("nested_loops", mech, 32);
        assert_eq!(r.buffers, pdom.buffers);
        assert!(r.stats.warp_instructions <= pdom.stats.warp_instructions, "{mech}");
        assert!(counter(&r, "path_merges") > 0, "{mech}");
    }
}

#[test]
fn its_completes_both_spin_locks_by_yielding_and_synchronises_its_barriers() {
    for k in ["spinlock_naive", "spinlock_safe", "flag_handoff"] {
        let (r, _) = sequence(k, Mechanism::Its, 32);
        assert!(r.error.is_none(), "{k}: {:?}", r.error);
        assert!(counter(&r, "yields") > 0, "{k}: the spinners yield");
        assert!(counter(&r, "barrier_syncs") > 0, "{k}");
    }
    // Warp collectives after a divergence: the members are gathered (or already reconverged).
    let (r, _) = sequence("warp_reduce", Mechanism::Its, 32);
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.stats.mechanism_instructions > 0, "bssy/bsync are mechanism instructions");
}

#[test]
fn forkjoin_keeps_its_stack_within_log2_w() {
    let (manifest, _) = manifest();
    for e in &manifest.kernels {
        for w in [4u32, 8, 16, 32] {
            if e.warp_sizes.as_ref().is_some_and(|ws| !ws.contains(&w)) {
                continue;
            }
            let (r, _) = sequence(&e.name, Mechanism::ForkJoin, w);
            let d = r.stats.max_stack_depth().unwrap_or(0);
            assert!(d <= w.ilog2() as usize, "{} w{w}: depth {d}", e.name);
        }
    }
}

#[test]
fn parallel_paths_hide_latency_and_single_paths_do_not() {
    let gpu = reconverge_timing::GpuConfig::preset("gtx480").expect("preset");
    let timed = |m: Mechanism| {
        let p = prepared("nested_loops", m, 32);
        let (r, t) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
        assert!(r.error.is_none(), "{m}: {:?}", r.error);
        t.expect("timing")
    };
    let pdom = timed(Mechanism::Pdom);
    assert_eq!(pdom.latency_hiding_issues, 0);
    for m in [Mechanism::DualPath, Mechanism::MultiPath] {
        let t = timed(m);
        assert!(t.latency_hiding_issues > 0, "{m}");
        assert!(t.cycles < pdom.cycles, "{m}: {} cycles vs pdom {}", t.cycles, pdom.cycles);
    }
}

#[test]
fn threads_that_advance_slowly_are_not_a_livelock() {
    // The stackless mechanisms run every thread of a divergent loop on its own, one per turn: with 2048
    // threads a window of 1000 warp instructions covers half an instruction per thread, and many of them
    // write the value a register already held (zr * zr with zr = 0). The watchdog declared a livelock
    // here (as on the 64-CTA fractal at its default window); it must only when every thread that issued
    // repeats a state. Functional and timed.
    let mut p = prepared("mandelbrot", Mechanism::Stackless, 32);
    p.cfg.grid = [4, 2, 1];
    p.cfg.block = [16, 16, 1];
    p.cfg.limits.livelock_window = 1000;
    p.cfg.limits.max_instructions = Some(5_000_000);
    let f32 = |x: f32| reconverge_program::Arg::Scalar(u64::from(x.to_bits()));
    p.args = vec![
        reconverge_program::Arg::Buffer(reconverge_program::Buffer::zeros(reconverge_program::Dtype::I32, 64 * 32)),
        reconverge_program::Arg::Scalar(64),
        reconverge_program::Arg::Scalar(32),
        f32(-2.0),
        f32(-1.125),
        f32(0.046875),
        f32(0.0703125),
        reconverge_program::Arg::Scalar(64),
    ];
    let want = run(&p.kernel, &p.cfg, &p.args, &mut reconverge_sim::NoObserver);
    assert!(want.error.is_none(), "functional: {:?}", want.error.map(|e| e.to_string()));
    let pdom = prepared("mandelbrot", Mechanism::Pdom, 32);
    let r = run(&pdom.kernel, &p.cfg, &p.args, &mut reconverge_sim::NoObserver);
    assert_eq!(r.buffers, want.buffers);
    assert!(want.stats.warp_instructions > 10 * r.stats.warp_instructions, "every thread issued on its own");
    let gpu = reconverge_timing::GpuConfig::preset("tiny").expect("tiny");
    let timed = reconverge_timing::run_timed(&p.kernel, &p.cfg, &gpu, &p.args, Default::default());
    assert!(timed.run.error.is_none(), "timed: {:?}", timed.run.error.map(|e| e.to_string()));
    assert_eq!(timed.run.buffers, want.buffers);
}

/// Asserts that `mech` issues exactly `reference`'s sequence of (CTA, warp, pc, mask) on `kernel` at
/// warp size `w`, with the same memory.
fn same_sequence(kernel: &str, mech: Mechanism, reference: Mechanism, w: u32) {
    let (r0, s0) = sequence(kernel, reference, w);
    let (r, s) = sequence(kernel, mech, w);
    assert_eq!(r.buffers, r0.buffers, "{kernel} {mech} w{w}: memory");
    if let Some(k) = (0..s.len().min(s0.len())).find(|&k| s[k] != s0[k]) {
        panic!("{kernel} {mech} w{w}: issue {k} differs: {:?} vs {reference} {:?}", s[k], s0[k]);
    }
    assert_eq!(s.len(), s0.len(), "{kernel} {mech} w{w}: issued count");
}

#[test]
fn maven_1_stack_and_the_runner_up_issue_exactly_the_sorted_minpc_sequence() {
    // 1-stack is `sorted:minpc` in a shift register. The runner-up registers order by pc too; they differ
    // only where threads share a pc at different call depths (recursion: the deeper issues first).
    let (manifest, _) = manifest();
    let minpc = Mechanism::Sorted(Priority::MinPc);
    for e in &manifest.kernels {
        if e.name == "spinlock_naive" {
            continue; // a livelock under both
        }
        for w in [4u32, 32] {
            if e.warp_sizes.as_ref().is_some_and(|ws| !ws.contains(&w)) {
                continue;
            }
            same_sequence(&e.name, Mechanism::Maven { two_stacks: false }, minpc, w);
            if e.name != "recursion" {
                same_sequence(&e.name, Mechanism::RunnerUp, minpc, w);
            }
        }
    }
}

#[test]
fn hybrid_runs_structured_code_exactly_as_minpc_and_short_circuits_breadth_first() {
    let (manifest, _) = manifest();
    let mut structured = 0;
    for e in &manifest.kernels {
        let p = prepared(&e.name, Mechanism::Hybrid, 32);
        let prog = p.kernel.program();
        let branches: Vec<u32> = (0..prog.insts.len() as u32).filter(|&pc| prog.is_conditional_branch(pc)).collect();
        if branches.iter().all(|&pc| prog.is_structured(pc)) && e.name != "spinlock_naive" {
            same_sequence(&e.name, Mechanism::Hybrid, Mechanism::MinPc, 32);
            structured += 1;
        }
    }
    assert!(structured > 10, "most suite kernels are structured: {structured}");
    // Seed 003's Figure 1 at W = 32: both branches unstructured, breadth-first with its synchronisation.
    same_sequence("short_circuit", Mechanism::Hybrid, Mechanism::Breadth, 32);
    let (r, _) = sequence("switch_kernel", Mechanism::Hybrid, 32);
    assert!(counter(&r, "unstructured_divergences") > 0 && counter(&r, "path_rotations") > 0);
    assert_eq!(counter(&r, "structured_divergences"), 0);
}

#[test]
fn maven_2_stack_keeps_no_outer_loop_in_step_on_nested_loops() {
    // `nested_loops`: an outer loop (8 iterations) around an inner loop with a data-dependent trip count.
    // 1-stack reconverges at the inner loop's exit: each warp runs the outer loop's header once per outer
    // iteration. 2-stack's second register holds the inner loop's back-edge paths until every forward path
    // ran out: lanes that leave the inner loop run on into their next outer iteration alone, so the outer
    // header issues many more times, for fewer lanes each, and lanes of different outer iterations meet
    // in the inner loop (which, on this kernel, packs the inner loop better: fewer warp instructions).
    let header = |p: &PreparedEntry| {
        let prog = p.kernel.program();
        let pc = (0..prog.insts.len()).find(|&pc| prog.info[pc].text.contains("%r26, %r44, %r1"));
        pc.expect("the outer header") as u32
    };
    let one = prepared("nested_loops", Mechanism::Maven { two_stacks: false }, 32);
    let two = prepared("nested_loops", Mechanism::Maven { two_stacks: true }, 32);
    let (r1, s1) = sequence("nested_loops", Mechanism::Maven { two_stacks: false }, 32);
    let (r2, s2) = sequence("nested_loops", Mechanism::Maven { two_stacks: true }, 32);
    assert!(r1.error.is_none() && r2.error.is_none());
    assert_eq!(r1.buffers, r2.buffers, "correct either way");
    let at = |s: &[(u64, u32, u32, u64)], pc: u32| s.iter().filter(|i| (i.0, i.1, i.2) == (0, 0, pc)).count();
    let (h1, h2) = (at(&s1, header(&one)), at(&s2, header(&two)));
    assert_eq!(h1, 8, "1-stack: the outer header once per outer iteration");
    assert!(h2 >= 4 * h1, "2-stack: the outer loop runs split ({h2} issues of its header)");
    assert!(counter(&r2, "stack_swaps") > 0 && counter(&r2, "back_edge_paths") > 0);
    assert!(r2.stats.warp_instructions < r1.stats.warp_instructions);
}

#[test]
fn maven_and_the_runner_up_charge_their_sequential_logic_in_timed_runs() {
    let gpu = reconverge_timing::GpuConfig::preset("gtx480").expect("preset");
    let timed = |m: Mechanism| {
        let p = prepared("nested_loops", m, 32);
        let (r, t) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
        assert!(r.error.is_none(), "{m}: {:?}", r.error);
        (r, t.expect("timing"))
    };
    let (_, minpc) = timed(Mechanism::Sorted(Priority::MinPc));
    let (r, one) = timed(Mechanism::Maven { two_stacks: false });
    // The same issue order, plus one cycle per extra path a divergence inserts.
    assert_eq!(one.issued, minpc.issued);
    assert!(counter(&r, "insert_wait_cycles") > 0 && one.cycles > minpc.cycles);
    // The runner-up issues `sorted:minpc`'s order too, plus log2(32) = 5 cycles per scan.
    let (r, up) = timed(Mechanism::RunnerUp);
    assert_eq!(up.issued, minpc.issued);
    assert!(counter(&r, "runner_up_scans") > 0 && up.cycles > minpc.cycles);
}
