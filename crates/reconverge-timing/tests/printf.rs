//! `printf` in timed runs: the records of every SM are gathered in thread order, the same for any number
//! of host threads, and the same lines as the functional run prints.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_timing::{run_timed, GpuConfig, TimedOptions};

#[test]
fn every_sm_prints_in_thread_order_for_any_host_threads() {
    let src = include_str!("../../reconverge-cli/tests/data/printf.ptx");
    let m = reconverge_ptx::parse(src).expect("parses");
    let ctas = 64u32;
    for mech in [Mechanism::Pdom, Mechanism::Its, Mechanism::from_name("dwf:sm").expect("a mechanism")] {
        let prog = reconverge_sim::load(&m, None, mech, &DecodeOptions::default()).expect("decodes");
        let launch = LaunchConfig { grid: [ctas, 1, 1], block: [5, 1, 1], ..LaunchConfig::default() };
        let args = || vec![Arg::Buffer(Buffer::zeros(Dtype::I32, 5 * ctas as usize))];
        let functional = reconverge_sim::run(&prog, &launch, args(), &mut reconverge_sim::NoObserver);
        let want: Vec<_> = functional.printf_in_thread_order().into_iter().cloned().collect();
        assert_eq!(want.len(), 5 * ctas as usize + 2 * ctas as usize + 1);
        for threads in [1, 2] {
            let opts = TimedOptions { max_cycles: None, threads, sample: None };
            let r = run_timed(&prog, &launch, &GpuConfig::gtx480(), args(), opts);
            assert!(r.run.error.is_none(), "{mech}: {:?}", r.run.error.map(|e| e.to_string()));
            assert_eq!(r.run.printf, want, "{mech} on {threads} host threads");
            assert!(!r.run.printf_truncated);
        }
    }
}
