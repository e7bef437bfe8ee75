//! Sampling a launch's CTAs (`TimedOptions::sample`): the same memory and work as timing every CTA,
//! under every mechanism; short launches timed in full; limits that count the skipped CTAs; cycles close to
//! the full run's where CTAs do the same work.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig, RunLimits};
use reconverge_sim::{Loaded, RunLimit, SimError};
use reconverge_timing::{run_timed, CtaSampling, GpuConfig, TimedOptions, TimedResult, WorkUnit};

const MANDELBROT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../kernels/ptx/sm_80-nofma/mandelbrot.ptx");

fn load(mech: Mechanism) -> Loaded {
    let src = std::fs::read_to_string(MANDELBROT).expect("kernel file");
    let m = reconverge_ptx::parse(&src).expect("parses");
    reconverge_sim::load(&m, None, mech, &DecodeOptions::default()).expect("decodes")
}

/// The escape-time fractal over `w` × `h` pixels of the plane from (`x0`, `y0`), `span` wide, one warp per
/// CTA (one CTA per 32 pixels of a row).
fn fractal(w: u32, h: u32, (x0, y0, span): (f32, f32, f32)) -> (LaunchConfig, Vec<Arg>) {
    let launch = LaunchConfig { grid: [w / 32, h, 1], block: [32, 1, 1], ..LaunchConfig::default() };
    let f = |x: f32| Arg::Scalar(u64::from(x.to_bits()));
    let i = |x: u32| Arg::Scalar(u64::from(x));
    let args = vec![
        Arg::Buffer(Buffer::zeros(Dtype::I32, (w * h) as usize)),
        i(w),
        i(h),
        f(x0),
        f(y0),
        f(span / w as f32),
        f(span / h as f32),
        i(64),
    ];
    (launch, args)
}

/// Two SMs: a wave is 16 one-warp CTAs, a window 4, so a launch of 128 CTAs has room for several skips.
fn small_gpu() -> GpuConfig {
    let mut gpu = GpuConfig::gtx480();
    gpu.num_sms = 2;
    gpu
}

fn timed(mech: Mechanism, launch: &LaunchConfig, args: Vec<Arg>, sample: Option<u32>, threads: usize) -> TimedResult {
    let opts = TimedOptions { max_cycles: None, threads, sample: sample.map(|one_in| CtaSampling { one_in }) };
    run_timed(&load(mech), launch, &small_gpu(), args, opts)
}

#[test]
fn every_mechanism_computes_the_same_memory_and_work_with_ctas_skipped() {
    let (launch, args) = fractal(64, 64, (-2.0, -1.125, 2.5));
    for mech in Mechanism::ALL {
        let full = timed(mech, &launch, args.clone(), None, 1);
        let sampled = timed(mech, &launch, args.clone(), Some(4), 1);
        assert!(full.run.error.is_none() && sampled.run.error.is_none(), "{mech}: {:?}", sampled.run.error);
        assert_eq!(sampled.run.buffers, full.run.buffers, "{mech}: the image differs");
        let (s, f) = (&sampled.run.stats, &full.run.stats);
        assert_eq!((s.ctas, s.threads), (f.ctas, f.threads), "{mech}");
        if mech.name() == "dwf:sm" {
            // Its warps mix the SM's CTAs: timed in full.
            assert_eq!((&sampled.timing, &sampled.run.stats), (&full.timing, &full.run.stats));
            continue;
        }
        let sample = sampled.timing.sample.as_ref().unwrap_or_else(|| panic!("{mech}: no CTA was skipped"));
        assert_eq!(sample.ctas, 128);
        assert!(sample.skipped_ctas >= 24 && sample.skips >= 2, "{mech}: {sample:?}");
        // The skipped CTAs run the same threads' instructions; only mechanisms that form warps in issue order
        // (DWF) form other warps of them functionally.
        assert_eq!(s.thread_instructions, f.thread_instructions, "{mech}");
        if sample.work == WorkUnit::WarpInstructions {
            assert_eq!(s.warp_instructions, f.warp_instructions, "{mech}");
        }
        assert_eq!(sample.timed_warp_instructions + sample.skipped_warp_instructions, s.warp_instructions);
        assert_eq!(sampled.timing.issued, s.warp_instructions, "{mech}");
        // Only the timed CTAs had issue slots.
        assert!(sampled.timing.issue_utilization() <= 1.0, "{mech}");
        let (c, fc) = (sampled.timing.cycles as f64, full.timing.cycles as f64);
        assert!((c - fc).abs() < 0.25 * fc, "{mech}: {c} sampled against {fc} cycles");
    }
}

#[test]
fn ctas_that_do_the_same_work_are_estimated_closely() {
    // Inside the set: every pixel iterates 64 times, every CTA does the same work.
    let (launch, args) = fractal(64, 256, (-0.3, -0.1, 0.2));
    let mech = Mechanism::from_name("pdom").expect("registered");
    let full = timed(mech, &launch, args.clone(), None, 1);
    for one_in in [2, 4, 10] {
        let sampled = timed(mech, &launch, args.clone(), Some(one_in), 1);
        let sample = sampled.timing.sample.as_ref().expect("skipped some");
        let (c, fc) = (sampled.timing.cycles as f64, full.timing.cycles as f64);
        assert!((c - fc).abs() < 0.01 * fc, "one in {one_in}: {c} against {fc} cycles, {sample:?}");
        assert!(sample.skipped_ctas > sample.ctas / 3, "one in {one_in}: {sample:?}");
    }
}

#[test]
fn sampled_results_do_not_depend_on_host_threads() {
    let (launch, args) = fractal(64, 64, (-2.0, -1.125, 2.5));
    for name in ["pdom", "dwf"] {
        let mech = Mechanism::from_name(name).expect("registered");
        let one = timed(mech, &launch, args.clone(), Some(3), 1);
        let two = timed(mech, &launch, args.clone(), Some(3), 2);
        assert_eq!(one.timing, two.timing, "{name}");
        assert_eq!(one.run.stats, two.run.stats, "{name}");
        assert_eq!(one.run.buffers, two.run.buffers, "{name}");
    }
}

#[test]
fn a_launch_too_short_to_skip_is_timed_in_full() {
    // 32 CTAs: two waves, no room for a stretch and a timed last wave.
    let (launch, args) = fractal(64, 16, (-2.0, -1.125, 2.5));
    let mech = Mechanism::from_name("pdom").expect("registered");
    let full = timed(mech, &launch, args.clone(), None, 1);
    let sampled = timed(mech, &launch, args, Some(10), 1);
    assert_eq!(sampled.timing.sample, None);
    assert_eq!(sampled.timing, full.timing);
    assert_eq!(sampled.run.stats, full.run.stats);
}

#[test]
fn the_instruction_limit_counts_the_skipped_ctas() {
    let (mut launch, args) = fractal(64, 64, (-2.0, -1.125, 2.5));
    let mech = Mechanism::from_name("pdom").expect("registered");
    let full = timed(mech, &launch, args.clone(), None, 1);
    let total = full.run.stats.warp_instructions;
    let unlimited = timed(mech, &launch, args.clone(), Some(4), 1);
    let timed_part = unlimited.timing.sample.as_ref().expect("skipped some").timed_warp_instructions;
    // A limit above the timed CTAs' instructions, below all: reached in a skipped stretch.
    let max = (timed_part + total) / 2;
    launch.limits = RunLimits { max_instructions: Some(max), ..launch.limits };
    let sampled = timed(mech, &launch, args.clone(), Some(4), 1);
    let error = sampled.run.error;
    assert!(matches!(error, Some(SimError::Limit(RunLimit::Instructions(m))) if m == max), "{error:?}");
    launch.limits = RunLimits { max_instructions: Some(total + 1), ..launch.limits };
    assert_eq!(timed(mech, &launch, args, Some(4), 1).run.error, None);
}
