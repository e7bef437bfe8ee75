//! Idle scheduler-cycles charged to pcs (`Record::pc_stalls`): per cause, the pcs sum to the run's
//! `StallCounts` (`no_ready_warp`, charged to no pc, excepted), under mechanisms that keep warps (pdom,
//! ssy with its inserted instructions, its) and ones that regroup threads (tbc, dwf), on kernels that
//! diverge, loop, wait at barriers and contend in memory; recording changes no result or statistic; the
//! per-pc executions equal the functional run's where warps do not depend on timing.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::Loaded;
use reconverge_timing::per_pc::PcCounter;
use reconverge_timing::stats::StallCounts;
use reconverge_timing::{run_timed_recorded, GpuConfig, Record, TimedOptions};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn load(path: &str, mech: Mechanism) -> Loaded {
    let src = std::fs::read_to_string(format!("{ROOT}/{path}")).expect("kernel file");
    let m = reconverge_ptx::parse(&src).expect("parses");
    reconverge_sim::load(&m, None, mech, &DecodeOptions::default()).expect("decodes")
}

fn scalar_f32(x: f32) -> Arg {
    Arg::Scalar(u64::from(x.to_bits()))
}

/// A kernel file and one launch of it.
struct Kernel {
    file: &'static str,
    grid: [u32; 3],
    block: [u32; 3],
    args: Vec<Arg>,
}

/// The kernels: divergent loops, a barrier with contended atomics, seed 004's Figure 2.
fn kernels() -> Vec<Kernel> {
    let data: Vec<u8> = (0..3000u32).flat_map(|i| (i * 7 % 64).to_le_bytes()).collect();
    let mandelbrot = vec![
        Arg::Buffer(Buffer::zeros(Dtype::I32, 874)),
        Arg::Scalar(38),
        Arg::Scalar(23),
        scalar_f32(-2.0),
        scalar_f32(-1.125),
        scalar_f32(0.0625),
        scalar_f32(0.09375),
        Arg::Scalar(64),
    ];
    let histogram = vec![
        Arg::Buffer(Buffer { dtype: Dtype::U32, bytes: data }),
        Arg::Scalar(3000),
        Arg::Buffer(Buffer::zeros(Dtype::U32, 64)),
    ];
    let fig2 = vec![Arg::Buffer(Buffer::zeros(Dtype::I32, 128)), Arg::Scalar(1)];
    vec![
        Kernel {
            file: "kernels/ptx/sm_80-nofma/mandelbrot.ptx",
            grid: [2, 2, 1],
            block: [20, 12, 1],
            args: mandelbrot,
        },
        Kernel { file: "kernels/ptx/sm_80/histogram.ptx", grid: [4, 1, 1], block: [100, 1, 1], args: histogram },
        Kernel { file: "kernels/handwritten/seed004_fig2.ptx", grid: [2, 1, 1], block: [64, 1, 1], args: fig2 },
    ]
}

fn minus_no_warp(s: &StallCounts) -> StallCounts {
    StallCounts { no_ready_warp: 0, ..s.clone() }
}

#[test]
fn per_pc_stalls_sum_to_the_runs_stalls_under_every_kind_of_mechanism() {
    let mechs: Vec<Mechanism> = ["pdom", "ssy", "its", "tbc", "dwf", "dwf:sm"]
        .iter()
        .map(|n| Mechanism::from_name(n).expect("a mechanism"))
        .collect();
    let mut gpu = GpuConfig::gtx480();
    gpu.num_sms = 2;
    let opts = TimedOptions { max_cycles: Some(5_000_000), threads: 1, sample: None };
    let mut charged_by_cause = StallCounts::default();
    for Kernel { file, grid, block, args } in kernels() {
        for &mech in &mechs {
            let k = load(file, mech);
            let launch = LaunchConfig { grid, block, ..LaunchConfig::default() };
            let record = Record { pc_stalls: true, pc_counts: true, ..Record::default() };
            let (t, _) = run_timed_recorded(&k, &launch, &gpu, &args[..], opts, record);
            assert!(t.run.error.is_none(), "{file} under {mech}: {:?}", t.run.error);
            let per_pc = t.pc_stalls.as_ref().expect("asked for");
            assert_eq!(per_pc.len(), k.program().insts.len());
            let mut sum = StallCounts::default();
            per_pc.iter().for_each(|s| sum.merge(s));
            assert_eq!(sum, minus_no_warp(&t.timing.stalls), "{file} under {mech}");
            assert!(t.timing.stalls.memory + t.timing.stalls.scoreboard > 0, "{file} under {mech}: nothing waited");
            charged_by_cause.merge(&sum);
            // Recording changes nothing the run reports.
            let (plain, _) = run_timed_recorded(&k, &launch, &gpu, &args[..], opts, Record::default());
            assert_eq!(plain.timing, t.timing, "{file} under {mech}");
            assert_eq!(plain.run.stats, t.run.stats, "{file} under {mech}");
            assert!(plain.pc_stalls.is_none() && plain.pc_counts.is_none());
            // Every kernel instruction issued is counted once at its pc.
            let counts = t.pc_counts.as_ref().expect("asked for");
            let executions: u64 = counts.iter().map(|c| c.executions).sum();
            assert_eq!(executions, t.run.stats.kernel_instructions(), "{file} under {mech}");
            if matches!(mech.name(), "pdom" | "ssy") {
                let mut c = PcCounter::new(k.program());
                let f = reconverge_sim::run(&k, &launch, &args[..], &mut c);
                assert!(f.error.is_none());
                assert_eq!(&c.per_pc, counts, "{file} under {mech}: functional and timed executions");
            }
        }
    }
    // Every cause but no_ready_warp reached some pc somewhere.
    let c = charged_by_cause;
    assert!(c.memory > 0 && c.scoreboard > 0 && c.pipeline > 0 && c.barrier > 0 && c.mechanism > 0, "{c:?}");
}
