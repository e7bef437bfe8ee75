//! The register estimate never refuses a launch the GPU runs: a CTA of 1,024 threads at 63 registers per
//! thread does not fit GTX 480's 32,768 registers, but `ptxas` would allocate fewer (spilling), so the
//! model charges what fits, and reports the occupancy from it.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_timing::{run_timed, GpuConfig, TimedOptions};

const STORE: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<2>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd2, %rd2, %rd3;
    st.global.u32 [%rd2], %r1;
    ret;
}
"#;

#[test]
fn a_cta_that_fits_only_with_fewer_registers_runs_with_fewer() {
    let m = reconverge_ptx::parse(STORE).unwrap_or_else(|e| panic!("{e}"));
    let k = reconverge_sim::load(&m, None, Mechanism::Pdom, &DecodeOptions::default()).expect("decodes");
    let mut gpu = GpuConfig::preset("gtx480").expect("preset");
    gpu.sm.regs_per_thread = 63;
    assert_eq!(gpu.registers_per_thread(k.program()), 63);
    assert_eq!(gpu.launch_registers_per_thread(k.program(), 1024, 32), 32, "32768 / 1024");
    assert_eq!(gpu.launch_registers_per_thread(k.program(), 256, 32), 63, "fits: the estimate stands");
    assert_eq!(gpu.resident_ctas(k.program(), 1024, 32, 0), 1);
    assert_eq!(gpu.resident_ctas(k.program(), 256, 32, 0), 2, "2 x 256 x 63 registers fit, 3 do not");
    assert_eq!(gpu.max_threads_per_cta(32), 1024);
    let cfg = LaunchConfig { block: [1024, 1, 1], ..LaunchConfig::default() };
    let opts = TimedOptions { max_cycles: None, threads: 1, sample: None };
    let r = run_timed(&k, &cfg, &gpu, vec![Arg::Buffer(Buffer::zeros(Dtype::U32, 1024))], opts);
    assert!(r.run.error.is_none(), "{:?}", r.run.error.map(|e| e.to_string()));
    assert_eq!(r.run.buffers[0].as_ref().expect("out").format(1023), "1023");
}
