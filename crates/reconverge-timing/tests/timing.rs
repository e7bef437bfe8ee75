//! Timing-model properties on whole kernels: latency hiding, determinism across host threads.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::Loaded;
use reconverge_timing::{run_timed, GpuConfig, TimedOptions};

/// No cycle limit, one host thread.
const ONE_THREAD: TimedOptions = TimedOptions { max_cycles: None, threads: 1, sample: None };

fn load(path: &str, mech: Mechanism) -> Loaded {
    let src = std::fs::read_to_string(path).expect("kernel file");
    let m = reconverge_ptx::parse(&src).expect("parses");
    reconverge_sim::load(&m, None, mech, &DecodeOptions::default()).expect("decodes")
}

fn stream_args(ctas: usize) -> Vec<Arg> {
    let input: Vec<u8> = (0..32 * 4096u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
    vec![Arg::Buffer(Buffer { dtype: Dtype::U32, bytes: input }), Arg::Buffer(Buffer::zeros(Dtype::U32, 32 * ctas))]
}

#[test]
fn latency_hiding_more_resident_warps_means_fewer_cycles_per_instruction() {
    let prog = load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stream.ptx"), Mechanism::Pdom);
    // One SM, one scheduler, loads that miss: each extra resident warp fills the latency of the others.
    let mut gpu = GpuConfig::gtx480();
    gpu.num_sms = 1;
    gpu.sm.schedulers = 1;
    let mut per_instr = Vec::new();
    for warps in [1u32, 2, 4, 8] {
        let launch = LaunchConfig { grid: [warps, 1, 1], block: [32, 1, 1], ..LaunchConfig::default() };
        let r = run_timed(&prog, &launch, &gpu, stream_args(warps as usize), ONE_THREAD);
        assert!(r.run.error.is_none(), "{:?}", r.run.error);
        // The sums are right.
        let out = r.run.buffers[1].as_ref().expect("out");
        for t in 0..(32 * warps as usize) {
            let want: u32 = (0..32u32).map(|k| (k * 4096 + t as u32) % 7).sum();
            assert_eq!(out.bits(t) as u32, want);
        }
        let cpi = r.timing.cycles as f64 / r.run.stats.warp_instructions as f64;
        per_instr.push((warps, cpi, r.timing.stalls.memory));
    }
    for w in per_instr.windows(2) {
        assert!(
            w[1].1 < w[0].1,
            "cycles per warp instruction did not fall from {} to {} warps: {per_instr:?}",
            w[0].0,
            w[1].0
        );
    }
    // With one warp the scheduler mostly waits for memory.
    assert!(per_instr[0].2 > 0);
}

#[test]
fn bandwidth_binds_eventually() {
    // With a DRAM of 1 byte per cycle, going from 8 to 16 warps no longer helps much: each warp's load needs
    // 128 bytes of DRAM time.
    let prog = load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stream.ptx"), Mechanism::Pdom);
    let mut gpu = GpuConfig::gtx480();
    gpu.num_sms = 1;
    gpu.dram.bytes_per_cycle = 1;
    // The inputs start in DRAM, not in the L2 (the preset preloads them as GPGPU-Sim's memcpy does).
    gpu.l2.preload = false;
    let cpi = |warps: u32| {
        let launch = LaunchConfig { grid: [warps, 1, 1], block: [32, 1, 1], ..LaunchConfig::default() };
        let r = run_timed(&prog, &launch, &gpu, stream_args(warps as usize), ONE_THREAD);
        r.timing.cycles as f64 / r.run.stats.warp_instructions as f64
    };
    let (a, b) = (cpi(8), cpi(16));
    assert!(b > 0.9 * a, "bandwidth-bound: 8 warps {a:.2}, 16 warps {b:.2} cycles per instruction");
}

#[test]
fn results_and_statistics_do_not_depend_on_host_threads() {
    let prog = load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/stream.ptx"), Mechanism::Pdom);
    let gpu = GpuConfig::gtx480();
    let launch = LaunchConfig { grid: [32, 1, 1], block: [32, 1, 1], ..LaunchConfig::default() };
    let runs: Vec<_> = [1usize, 2, 1, 2]
        .iter()
        .map(|&th| {
            run_timed(
                &prog,
                &launch,
                &gpu,
                stream_args(32),
                TimedOptions { max_cycles: None, threads: th, sample: None },
            )
        })
        .collect();
    for r in &runs[1..] {
        assert_eq!(r.timing, runs[0].timing);
        assert_eq!(r.run.stats, runs[0].run.stats);
        assert_eq!(r.run.buffers, runs[0].run.buffers);
    }
}

/// Collatz step counts of 1..=n, as the kernel computes them.
fn collatz_steps(n: u32) -> Vec<u32> {
    (1..=n)
        .map(|mut x| {
            let mut steps = 0;
            while x > 1 {
                x = if x.is_multiple_of(2) { x / 2 } else { 3 * x + 1 };
                steps += 1;
            }
            steps
        })
        .collect()
}

#[test]
fn mimd_bounds_pdom_and_dwf_on_an_alu_bound_divergent_loop() {
    // 8 CTAs of 256 threads on the GTX 480: one CTA on each of 8 SMs, parity divergence every iteration.
    let launch = LaunchConfig { grid: [8, 1, 1], block: [256, 1, 1], ..LaunchConfig::default() };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/collatz.ptx");
    let want = collatz_steps(8 * 256);
    let mut cycles = Vec::new();
    for mech in ["pdom", "dwf", "mimd"].map(|n| Mechanism::from_name(n).expect("registered")) {
        let args = vec![Arg::Buffer(Buffer::zeros(Dtype::U32, want.len()))];
        let r = run_timed(&load(path, mech), &launch, &GpuConfig::gtx480(), args, ONE_THREAD);
        assert!(r.run.error.is_none(), "{mech}: {:?}", r.run.error);
        let out = r.run.buffers[0].as_ref().expect("out");
        assert!((0..want.len()).all(|t| out.bits(t) as u32 == want[t]), "{mech}: wrong step counts");
        cycles.push((mech, r.timing.cycles));
    }
    let mimd = cycles[2].1;
    assert!(mimd <= cycles[0].1 && mimd <= cycles[1].1, "the MIMD bound is slower: {cycles:?}");
}

fn counter(r: &reconverge_timing::TimedResult, name: &str) -> u64 {
    let s = &r.run.stats;
    let i = s.mechanism_counter_defs.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("counts {name}"));
    s.mechanism_counters[i]
}

#[test]
fn dws_lets_the_lanes_that_hit_run_ahead_of_those_that_miss() {
    // 4 CTAs of one warp: half of each warp misses the first load and hits the second, half the other
    // way round, and the second load's address depends on the first's value. PDOM waits for both misses
    // in turn; DWS's hit lanes issue their second load (and its miss) while the others wait for their
    // first.
    let (ctas, w) = (4usize, 32usize);
    let launch = LaunchConfig { grid: [ctas as u32, 1, 1], block: [w as u32, 1, 1], ..LaunchConfig::default() };
    let a: Vec<u32> = (0..(ctas * w) as u32).map(|i| i + 1).collect();
    let far: Vec<u32> = (0..(ctas * w * 32) as u32).map(|i| 1000 * i).collect();
    let buf = |v: &[u32]| Buffer { dtype: Dtype::U32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let want: Vec<u32> = (0..ctas * w).map(|t| a[t] + far[32 * t]).collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/memdiv.ptx");
    let mut cycles = Vec::new();
    for name in ["pdom", "dws"] {
        let mech = Mechanism::from_name(name).expect("registered");
        let args = vec![Arg::Buffer(buf(&a)), Arg::Buffer(buf(&far)), Arg::Buffer(Buffer::zeros(Dtype::U32, ctas * w))];
        let r = run_timed(&load(path, mech), &launch, &GpuConfig::gtx480(), args, ONE_THREAD);
        assert!(r.run.error.is_none(), "{name}: {:?}", r.run.error);
        let out = r.run.buffers[2].as_ref().expect("out");
        assert!((0..want.len()).all(|t| out.bits(t) as u32 == want[t]), "{name}: wrong sums");
        cycles.push(r.timing.cycles);
        if name == "dws" {
            // One split per warp, at the first load: within each split the second load's lanes all
            // hit or all miss.
            assert_eq!(counter(&r, "mem_splits"), ctas as u64, "one memory split per warp");
            assert_eq!(counter(&r, "reunions"), ctas as u64, "every split reunited");
        }
    }
    // The lines come from the L2 (the kernel's data fits it): DWS saves one L2 round trip per warp, the
    // second miss of each half overlapping the first of the other.
    let round_trip = GpuConfig::gtx480().l2.hit_latency;
    assert!(
        cycles[0].saturating_sub(cycles[1]) * 4 >= round_trip * 3,
        "dws {} cycles vs pdom {}: the two misses did not overlap (an L2 round trip is {round_trip})",
        cycles[1],
        cycles[0]
    );
}

#[test]
fn the_ispass09_machine_has_no_data_caches() {
    // GPGPU-Sim 2.x's ISPASS-2009 machine: no L1 (`-gpgpu_no_dl1`) and no L2. Every line a load touches
    // goes to DRAM, every store too, nothing counts as an L1 or L2 hit, so DWS's memory splits (lanes that
    // hit running ahead of lanes that miss) never happen; the results are the functional ones.
    let (ctas, w) = (4usize, 32usize);
    let launch = LaunchConfig { grid: [ctas as u32, 1, 1], block: [w as u32, 1, 1], ..LaunchConfig::default() };
    let buf = |v: Vec<u32>| Buffer { dtype: Dtype::U32, bytes: v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let a: Vec<u32> = (0..(ctas * w) as u32).map(|i| i + 1).collect();
    let far: Vec<u32> = (0..(ctas * w * 32) as u32).map(|i| 1000 * i).collect();
    let want: Vec<u32> = (0..ctas * w).map(|t| a[t] + far[32 * t]).collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/memdiv.ptx");
    let gpu = GpuConfig::preset("ispass09").expect("preset");
    let args = vec![Arg::Buffer(buf(a)), Arg::Buffer(buf(far)), Arg::Buffer(Buffer::zeros(Dtype::U32, ctas * w))];
    let r = run_timed(&load(path, Mechanism::from_name("dws").expect("registered")), &launch, &gpu, args, ONE_THREAD);
    assert!(r.run.error.is_none(), "{:?}", r.run.error);
    let out = r.run.buffers[2].as_ref().expect("out");
    assert!((0..want.len()).all(|t| out.bits(t) as u32 == want[t]), "wrong sums");
    let m = &r.timing.memory;
    assert_eq!((m.l1_accesses, m.l1_hits, m.l2_hits), (0, 0, 0), "{m:?}");
    assert!(m.l2_accesses > 0 && m.dram_reads > 0 && m.dram_writes > 0, "{m:?}");
    assert_eq!(counter(&r, "mem_splits"), 0);
}
