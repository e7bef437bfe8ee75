//! Seed 004 §5.1's scalar dispatches (Figure 7a `scalar-unit`, 7b `scalar-lane`) against spatial SIMT: the
//! same results; a separate scalar unit frees the SIMT unit for other warps; one-lane scalar execution
//! changes no cycle, only the lane operations; scalar registers leave the SIMT register file.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::Loaded;
use reconverge_timing::{run_timed, Dispatch, GpuConfig, TimedOptions, TimedResult};

/// A loop of scalar bookkeeping (`%r3`, `%r4`, `%r6`, the compare and branch) beside per-thread work
/// (`%r5`), then a warp-sequential store `out[tid]` (one base-address instruction).
const MIX: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry mix(.param .u64 mix_out, .param .u32 mix_n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [mix_out];
    cvta.to.global.u64 %rd1, %rd1;
    ld.param.u32 %r1, [mix_n];
    mov.u32 %r2, %tid.x;
    mov.u32 %r3, 0;
    mov.u32 %r4, 0;
    mov.u32 %r5, %r2;
$L_loop:
    mul.lo.s32 %r6, %r3, 7;
    add.s32 %r4, %r4, %r6;
    xor.b32 %r7, %r4, 5;
    mul.lo.s32 %r5, %r5, 3;
    add.s32 %r5, %r5, %r7;
    add.s32 %r3, %r3, 1;
    setp.lt.s32 %p1, %r3, %r1;
    @%p1 bra $L_loop;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    ret;
}
"#;

const ONE_THREAD: TimedOptions = TimedOptions { max_cycles: None, threads: 1, sample: None };
const THREADS: u32 = 256;

fn load() -> Loaded {
    let m = reconverge_ptx::parse(MIX).expect("parses");
    let opts = DecodeOptions { scalarize: true, ..DecodeOptions::default() };
    reconverge_sim::load(&m, None, Mechanism::Pdom, &opts).expect("decodes")
}

/// One SM with one scheduler whose integer unit takes 4 cycles per warp instruction: with 8 warps the
/// SIMT unit, not issue, binds.
fn gpu(dispatch: Dispatch) -> GpuConfig {
    let mut g = GpuConfig::tiny();
    g.num_sms = 1;
    g.sm.schedulers = 1;
    g.sm.units = Vec::new();
    g.opcode = None;
    g.interval.int = 4;
    g.sm.dispatch = dispatch;
    g
}

fn run(prog: &Loaded, gpu: &GpuConfig) -> TimedResult {
    let launch = LaunchConfig { grid: [1, 1, 1], block: [THREADS, 1, 1], ..LaunchConfig::default() };
    let args = vec![Arg::Buffer(Buffer::zeros(Dtype::U32, THREADS as usize)), Arg::Scalar(20)];
    let r = run_timed(prog, &launch, gpu, args, ONE_THREAD);
    assert!(r.run.error.is_none(), "{:?}", r.run.error);
    r
}

#[test]
fn scalar_unit_frees_the_simt_unit_and_scalar_lane_changes_no_cycle() {
    let prog = load();
    let plan = prog.program().scalar.as_ref().expect("plan");
    assert_eq!(plan.static_base_instructions(), 1, "one base address: the store's");
    let spatial = run(&prog, &gpu(Dispatch::Spatial));
    let unit = run(&prog, &gpu(Dispatch::ScalarUnit));
    let lane = run(&prog, &gpu(Dispatch::ScalarLane));
    let out = |r: &TimedResult| r.run.buffers[0].clone();
    assert_eq!(out(&spatial), out(&unit));
    assert_eq!(out(&spatial), out(&lane));
    // 5 of the loop's 8 instructions are scalar: the SIMT unit does 3 of every 8 on the scalar unit's side.
    assert!(
        (unit.timing.cycles as f64) < 0.7 * spatial.timing.cycles as f64,
        "scalar-unit {} vs spatial {} cycles",
        unit.timing.cycles,
        spatial.timing.cycles
    );
    assert_eq!(lane.timing.cycles, spatial.timing.cycles, "one-lane scalar execution is timed as spatial");
    assert_eq!(lane.timing.issued, spatial.timing.issued);
    // Lane operations: every active thread under spatial; one per warp for a scalar instruction otherwise.
    assert_eq!(spatial.timing.lane_ops, spatial.run.stats.thread_instructions);
    assert!(
        lane.timing.lane_ops < spatial.timing.lane_ops / 2,
        "{} vs {}",
        lane.timing.lane_ops,
        spatial.timing.lane_ops
    );
    // The scalar unit also runs the store's base-address instruction, once per warp.
    assert_eq!(unit.timing.lane_ops, lane.timing.lane_ops + u64::from(THREADS / 32));
}

#[test]
fn temporal_and_the_scalar_unit_dispatch_the_same_lane_operations() {
    let prog = load();
    let mut g = GpuConfig::temporal();
    g.num_sms = 1;
    let temporal = run(&prog, &g);
    let unit = run(&prog, &gpu(Dispatch::ScalarUnit));
    assert_eq!(temporal.run.buffers[0], unit.run.buffers[0]);
    // Both run a thread instruction per active thread, a scalar one and a base address once per warp.
    assert_eq!(temporal.timing.lane_ops, unit.timing.lane_ops);
    assert!(temporal.timing.lane_ops < temporal.run.stats.thread_instructions);
}

#[test]
fn scalar_registers_leave_the_simt_register_file_only_with_a_scalar_unit() {
    let prog = load();
    let plan = prog.program().scalar.as_ref().expect("plan");
    assert!(plan.scalar_reg_words > 0, "the loop counter and the scalar sum are per-warp registers");
    let spatial = gpu(Dispatch::Spatial).registers_per_thread(prog.program());
    let lane = gpu(Dispatch::ScalarLane).registers_per_thread(prog.program());
    let unit = gpu(Dispatch::ScalarUnit).registers_per_thread(prog.program());
    assert_eq!(lane, spatial);
    assert_eq!(unit, spatial - plan.scalar_reg_words);
    // A register file that holds one CTA of 256 threads only without the scalar registers.
    let mut small = gpu(Dispatch::Spatial);
    small.sm.registers = THREADS * unit;
    small.sm.max_ctas = 8;
    let ctas = |g: &GpuConfig| g.resident_ctas(prog.program(), THREADS / 2, 32, 0);
    let mut small_unit = small.clone();
    small_unit.sm.dispatch = Dispatch::ScalarUnit;
    assert_eq!(ctas(&small_unit), 2);
    assert!(ctas(&small) < 2, "{}", ctas(&small));
    // A fixed per-thread count (from ptxas) is taken as given.
    small_unit.sm.regs_per_thread = 16;
    assert_eq!(small_unit.registers_per_thread(prog.program()), 16);
}

#[test]
fn spatial_presets_take_a_dispatch_suffix() {
    let c = GpuConfig::preset("volta+scalar-unit").expect("preset");
    assert_eq!((c.name.as_str(), c.sm.dispatch), ("volta+scalar-unit", Dispatch::ScalarUnit));
    assert_eq!(GpuConfig::preset("gtx480+scalar-lane").map(|c| c.sm.dispatch), Some(Dispatch::ScalarLane));
    assert!(GpuConfig::preset("temporal+scalar-unit").is_none(), "temporal is not a spatial preset");
    assert!(GpuConfig::preset("gtx480+temporal").is_none(), "temporal needs its own lanes: use the preset");
    assert!(GpuConfig::preset("gtx480+nope").is_none());
    let t = GpuConfig::from_toml("base = \"volta\"\n[sm]\ndispatch = \"scalar-lane\"\n").expect("toml");
    assert_eq!(t.sm.dispatch, Dispatch::ScalarLane);
}
