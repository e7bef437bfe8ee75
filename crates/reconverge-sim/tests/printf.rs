//! CUDA's device `printf` (`vprintf`) executed: formats, thread order under every mechanism and warp
//! size, the result, memory faults, unterminated strings and the output limit.

use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::printf::{MAX_STRING, OUTPUT_LIMIT};
use reconverge_sim::*;

fn load_text(src: &str, mech: Mechanism) -> Loaded {
    let m = reconverge_ptx::parse(src).unwrap_or_else(|e| panic!("{e}"));
    load(&m, None, mech, &DecodeOptions::default()).expect("loads")
}

/// The kernel of the command line's printf test: 2 CTAs of 5 threads print these lines in thread order.
const FORMATS: &str = include_str!("../../reconverge-cli/tests/data/printf.ptx");
const EXPECTED: &str = "t0 c0: 3| 0.00|str|0|0|A|%\ndone\n\
t1 c0: -4| 1.25|str|ff|-1234567890123|B|%\nodd 1\n\
t2 c0: -11| 2.50|str|1fe|-2469135780246|C|%\n\
t3 c0: -18| 3.75|str|2fd|-3703703670369|D|%\nodd 3\n\
t4 c0: -25| 5.00|str|3fc|-4938271560492|E|%\n\
t0 c1: 3| 0.00|str|0|0|A|%\n\
t1 c1: -4| 1.25|str|ff|-1234567890123|B|%\nodd 1\n\
t2 c1: -11| 2.50|str|1fe|-2469135780246|C|%\n\
t3 c1: -18| 3.75|str|2fd|-3703703670369|D|%\nodd 3\n\
t4 c1: -25| 5.00|str|3fc|-4938271560492|E|%\n";

fn text(r: &RunResult) -> String {
    r.printf_in_thread_order().iter().map(|r| r.text.as_str()).collect()
}

#[test]
fn every_mechanism_prints_the_same_lines_in_thread_order() {
    for mech in Mechanism::ALL {
        let p = load_text(FORMATS, mech);
        for warp in [4, 32] {
            let cfg = LaunchConfig { grid: [2, 1, 1], block: [5, 1, 1], warp_size: warp, ..LaunchConfig::default() };
            let r = run(&p, &cfg, vec![Arg::Buffer(Buffer::zeros(Dtype::I32, 10))], &mut NoObserver);
            assert!(r.error.is_none(), "{mech}/{warp}: {:?}", r.error.map(|e| e.to_string()));
            assert_eq!(text(&r), EXPECTED, "{mech}/{warp}");
            assert!(!r.printf_truncated);
            // The records name their threads; the first printf returned its argument count.
            let first = r.printf_in_thread_order()[2];
            assert_eq!((first.cta, first.thread), ([0, 0, 0], [1, 0, 0]));
            let out = r.buffers[0].as_ref().expect("the buffer");
            assert!((0..10).all(|i| out.bits(i) == 8), "{mech}/{warp}: {out:?}");
        }
    }
}

/// `printf(fmt, args)` with both pointers from the kernel's parameters, by every thread.
const FROM_PARAMS: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);\n\
.visible .entry k(.param .u64 k_fmt, .param .u64 k_args)\n{\n.reg .b32 %r<2>;\n.reg .b64 %rd<3>;\n\
ld.param.u64 %rd1, [k_fmt];\nld.param.u64 %rd2, [k_args];\n\
{ .param .b64 param0; st.param.b64 [param0], %rd1; .param .b64 param1; st.param.b64 [param1], %rd2;\n\
.param .b32 retval0; call.uni (retval0), vprintf, (param0, param1); ld.param.b32 %r1, [retval0]; }\n\
ret;\n}\n";

fn bytes(b: &[u8]) -> Arg {
    Arg::Buffer(Buffer { dtype: Dtype::U8, bytes: b.to_vec() })
}

fn from_params(fmt: Arg, args: Arg, threads: u32) -> RunResult {
    let p = load_text(FROM_PARAMS, Mechanism::Pdom);
    let cfg = LaunchConfig { block: [threads, 1, 1], ..LaunchConfig::default() };
    run(&p, &cfg, vec![fmt, args], &mut NoObserver)
}

#[test]
fn strings_and_arguments_come_from_global_memory_too() {
    // The argument buffer in a device buffer: an int at 0, a double at 8.
    let mut args = 42i32.to_le_bytes().to_vec();
    args.extend_from_slice(&[0; 4]);
    args.extend_from_slice(&2.5f64.to_le_bytes());
    let r = from_params(bytes(b"%d %g\n\0"), bytes(&args), 2);
    assert!(r.error.is_none(), "{:?}", r.error.map(|e| e.to_string()));
    assert_eq!(text(&r), "42 2.5\n42 2.5\n");
    assert_eq!(r.printf[1].thread, [1, 0, 0]);
}

#[test]
fn bad_addresses_are_memory_faults_and_unterminated_strings_traps() {
    let err = |r: RunResult| r.error.map(|e| e.to_string()).unwrap_or_default();
    // A format pointer outside every allocation.
    let e = err(from_params(Arg::Scalar(0x10), Arg::Scalar(0), 1));
    assert!(e.contains("out-of-bounds 1-byte global memory access at address 0x10"), "{e}");
    assert!(e.contains("vprintf"), "{e}");
    // Arguments the format needs, with a null buffer.
    let e = err(from_params(bytes(b"%d\0"), Arg::Scalar(0), 1));
    assert!(e.contains("4-byte global memory access at address 0x0"), "{e}");
    // A format string without a NUL within the bound.
    let e = err(from_params(bytes(&vec![b'a'; MAX_STRING + 10]), Arg::Scalar(0), 1));
    assert!(e.contains(&format!("has no terminating NUL within {MAX_STRING} bytes")), "{e}");
    assert!(e.contains("thread (0,0,0)"), "{e}");
}

#[test]
fn a_launch_keeps_at_most_the_output_limit() {
    let mut line = vec![b'x'; 4000];
    line.extend_from_slice(b"\n\0");
    let r = from_params(bytes(&line), Arg::Scalar(0), 512);
    assert!(r.error.is_none(), "{:?}", r.error.map(|e| e.to_string()));
    assert!(r.printf_truncated);
    assert_eq!(r.printf.len(), OUTPUT_LIMIT / 4001);
    // The threads that printed first are kept (execution order: lowest threads first here).
    assert!(r.printf.iter().enumerate().all(|(i, p)| p.thread == [i as u32, 0, 0]));
}
