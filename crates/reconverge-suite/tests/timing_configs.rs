//! Property: under randomised GPU configurations (latencies, epoch length, SM count, schedulers, cache
//! sizes, bandwidths) every suite kernel gives the same outcome and memory as functional mode. The
//! epoch length is L1 hit + L2 hit latency, so it varies with them.

mod common;

use proptest::prelude::*;
use rayon::prelude::*;
use reconverge_mechanism::Mechanism;
use reconverge_program::JitPolicy;
use reconverge_suite::{prepare_entry, run_prepared, Mode, PreparedEntry};
use reconverge_timing::{GpuConfig, SchedulerPolicy};
use std::sync::OnceLock;

/// Cases run in CI (each: one configuration, three kernels, every mechanism).
const CASES: u32 = 32;

struct Fixture {
    /// (kernel, mechanism, prepared launch, functional result, outcome may depend on timing)
    runs: Vec<(String, Mechanism, PreparedEntry, reconverge_sim::RunResult, bool)>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let suite = common::Suite::load();
        let load = |p: &str| suite.read(p);
        let mut runs = Vec::new();
        for e in &suite.manifest.kernels {
            for m in Mechanism::defaults() {
                let p = prepare_entry(e, m, 32, &load, 20_000_000).expect("loads");
                let (r, _) = run_prepared(&p, Mode::Functional);
                // `deadlock|completed`: a heuristic that starves a thread only without latencies.
                let either = e.expected_outcome(m.name()).contains('|');
                runs.push((e.name.clone(), m, p, r, either));
            }
        }
        Fixture { runs }
    })
}

fn config() -> impl Strategy<Value = GpuConfig> {
    (
        (1u32..=6, 1u32..=4, 0usize..4, any::<bool>(), 1u32..=8),
        (1u64..=400, 1u64..=40, 1u64..=200, 1u64..=60, 1u64..=60),
        (1u64..=64, 1u64..=300, 0usize..4, 1u32..=16, 1u64..=400),
        (1u64..=16, 1u64..=256, 0usize..3),
    )
        .prop_map(|((sms, scheds, pol, miss, ctas), (int, float, branch, shared, barrier), l1l2, dram)| {
            let (l1_hit, l2_hit, l1_kib, mshrs, dram_lat) = l1l2;
            let (l2_rate, dram_rate, base) = dram;
            let mut c = [GpuConfig::gtx480(), GpuConfig::volta(), GpuConfig::tiny()][base].clone();
            c.name = "random".into();
            c.num_sms = sms;
            c.sm.schedulers = scheds;
            c.sm.scheduler =
                [SchedulerPolicy::Lrr, SchedulerPolicy::Gto, SchedulerPolicy::TwoLevel, SchedulerPolicy::CtaOldest]
                    [pol];
            c.sm.miss_blocks_warp = miss;
            c.sm.max_ctas = ctas;
            c.latency.int = int;
            c.latency.float = float;
            c.latency.branch = branch;
            c.latency.shared = shared;
            c.latency.barrier = barrier;
            c.l1.hit_latency = l1_hit;
            c.l1.size = 1024 << l1_kib;
            c.l1.mshrs = mshrs;
            c.l2.hit_latency = l2_hit;
            c.l2.sectors_per_cycle = l2_rate;
            c.dram.latency = dram_lat;
            c.dram.bytes_per_cycle = dram_rate;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn timed_memory_equals_functional_memory(gpu in config(), picks in prop::array::uniform3(any::<prop::sample::Index>())) {
        prop_assert!(gpu.validate().is_ok(), "{:?}", gpu.validate());
        let f = fixture();
        let kernels: Vec<&str> = {
            let mut k: Vec<&str> = f.runs.iter().map(|r| r.0.as_str()).collect();
            k.dedup();
            k
        };
        let chosen: Vec<&str> = picks.iter().map(|p| kernels[p.index(kernels.len())]).collect();
        let runs: Vec<_> = f.runs.iter().filter(|r| chosen.contains(&r.0.as_str())).collect();
        // The runs on every core; every other one on two host threads (the parallel epochs under random
        // configurations), the rest on one; every pure lane instruction deferred and compiled at once
        // (`JitPolicy::Always`), so the compiled segments' timed use is checked against functional mode too.
        let timed: Vec<_> = runs
            .par_iter()
            .enumerate()
            .map(|(i, (_, _, p, _, _))| {
                let mut p = p.clone();
                p.cfg.host.jit = JitPolicy::Always;
                run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 + i % 2 }).0
            })
            .collect();
        for ((name, mech, _, functional, either), timed) in runs.into_iter().zip(timed) {
            if !either {
                prop_assert_eq!(functional.outcome(), timed.outcome(), "{} / {}: {:?}", name, mech, timed.error.map(|e| e.to_string()));
            }
            if functional.error.is_none() && timed.error.is_none() {
                prop_assert!(functional.buffers == timed.buffers, "{} / {}: memory differs from functional mode", name, mech);
            }
        }
    }
}
