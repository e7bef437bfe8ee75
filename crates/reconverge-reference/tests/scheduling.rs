//! The reference interpreter's own behaviours on small hand-written kernels: deadlock, runaway and memory
//! errors, cross-CTA spinning, `activemask` grouping, warp-synchronous collectives and barrier reductions.

use reconverge_reference::{
    run_reference, run_reference_with, Arg, Buffer, Dtype, LaunchConfig, LaunchError, MemoryFaultKind, RefError,
    RefOptions, RefResult, Region, ThreadFault,
};

fn run_with(ptx: &str, grid: u32, block: u32, warp: u32, args: Vec<Arg>, opts: &RefOptions) -> RefResult {
    let m = reconverge_ptx::parse(ptx).unwrap_or_else(|e| panic!("{e}"));
    let k = m.kernels().next().expect("a kernel");
    let cfg = LaunchConfig { grid: [grid, 1, 1], block: [block, 1, 1], warp_size: warp, ..LaunchConfig::default() };
    run_reference_with(&m, k, &cfg, &args, opts)
}

fn run(ptx: &str, grid: u32, block: u32, warp: u32, args: Vec<Arg>) -> RefResult {
    run_with(ptx, grid, block, warp, args, &RefOptions::default())
}

fn u32s(r: &RefResult, i: usize) -> Vec<u32> {
    let b = r.buffers[i].as_ref().expect("buffer");
    (0..b.len()).map(|j| b.bits(j) as u32).collect()
}

fn zeros(n: usize) -> Arg {
    Arg::Buffer(Buffer::zeros(Dtype::U32, n))
}

const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n";

/// `out[tid] = value` epilogue helper: expects `%rd1` = out (global) and `%r1` = tid.
const STORE: &str = "mul.wide.u32 %rd2, %r1, 4;\n add.s64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r9;\n";

#[test]
fn a_shuffle_waiting_for_threads_at_a_barrier_is_a_deadlock() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out) {{
  .reg .pred %p<2>; .reg .b32 %r<10>;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p1, %r1, 16;
  @%p1 bra $L1;
  bar.sync 0;
  ret;
$L1:
  shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
  ret;
}}"
    );
    let r = run(&ptx, 1, 32, 32, vec![zeros(32)]);
    assert_eq!(r.outcome(), "deadlock", "{:?}", r.error.as_ref().map(|e| e.to_string()));
    let e = r.error.map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("wait at barrier 0 in `k` at instruction 3 `bar.sync") && e.contains("warp-synchronous"), "{e}");
}

#[test]
fn an_endless_loop_hits_the_instruction_limit() {
    let ptx = format!("{HEADER}.visible .entry k() {{\n$L1:\n  bra.uni $L1;\n}}");
    let opts = RefOptions { max_thread_instructions: 5000, ..RefOptions::default() };
    let r = run_with(&ptx, 1, 4, 4, vec![], &opts);
    assert_eq!(r.outcome(), "limit", "{:?}", r.error.as_ref().map(|e| e.to_string()));
}

/// A kernel whose threads 5-7 store past the end of its 8-element buffer `out`.
fn out_of_bounds_store() -> String {
    format!(
        "{HEADER}.visible .entry k(.param .u64 out) {{
  .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  add.s32 %r1, %r1, 3;
  mov.u32 %r9, 7;
  {STORE}  ret;
}}"
    )
}

#[test]
fn an_out_of_bounds_store_names_the_thread_and_instruction() {
    let ptx = out_of_bounds_store();
    let r = run(&ptx, 1, 8, 8, vec![zeros(8)]);
    assert_eq!(r.outcome(), "error");
    let e = r.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("thread (5,0,0)") && e.contains("st.global.u32") && e.contains("out-of-bounds"), "{e}");
    // Threads before the faulting one ran to completion.
    assert_eq!(&u32s(&r, 0)[3..8], &[7, 7, 7, 7, 7]);
}

#[test]
fn a_cta_spinning_on_a_later_cta_completes() {
    // CTA 0 waits until CTA 1 has set the flag; CTAs run one after another unless one only spins.
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 flag, .param .u64 out) {{
  .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<6>;
  ld.param.u64 %rd4, [flag];
  cvta.to.global.u64 %rd4, %rd4;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra $SPIN;
  atom.global.add.u32 %r3, [%rd4], 1;
  ret;
$SPIN:
  ld.volatile.global.u32 %r3, [%rd4];
  setp.lt.u32 %p2, %r3, 4;
  @%p2 bra $SPIN;
  mov.u32 %r9, %r3;
  {STORE}  ret;
}}"
    );
    let opts = RefOptions { quantum: 100, ..RefOptions::default() };
    let r = run_with(&ptx, 2, 4, 4, vec![zeros(1), zeros(4)], &opts);
    assert_eq!(r.error, None);
    assert_eq!(u32s(&r, 1), vec![4, 4, 4, 4]);
}

#[test]
fn activemask_groups_the_threads_that_reach_it_together() {
    // Odd threads exit; even threads read activemask and ballot their lane's bit 1 among it.
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out) {{
  .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  setp.ne.u32 %p1, %r2, 0;
  @%p1 exit;
  activemask.b32 %r3;
  and.b32 %r4, %r1, 2;
  setp.ne.u32 %p2, %r4, 0;
  vote.sync.ballot.b32 %r5, %p2, %r3;
  xor.b32 %r9, %r3, %r5;
  {STORE}  ret;
}}"
    );
    let r = run(&ptx, 1, 16, 8, vec![zeros(16)]);
    assert_eq!(r.error, None);
    let out = u32s(&r, 0);
    // Warp of lanes 0..7: evens 0x55, ballot of tid & 2 among them: lanes 2 and 6 = 0x44.
    assert_eq!(out[0], 0x55 ^ 0x44);
    assert_eq!(out[8], 0x55 ^ 0x44);
    assert_eq!(out[1], 0);
}

#[test]
fn shuffles_reduce_each_warp() {
    // Tree sum with shfl.down over warps of 8: lane 0 of each warp gets the sum of its tids.
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out) {{
  .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r9, %r1;
  shfl.sync.down.b32 %r2|%p1, %r9, 4, 31, 255;
  @%p1 add.s32 %r9, %r9, %r2;
  shfl.sync.down.b32 %r2|%p1, %r9, 2, 31, 255;
  @%p1 add.s32 %r9, %r9, %r2;
  shfl.sync.down.b32 %r2|%p1, %r9, 1, 31, 255;
  @%p1 add.s32 %r9, %r9, %r2;
  {STORE}  ret;
}}"
    );
    let r = run(&ptx, 1, 16, 8, vec![zeros(16)]);
    assert_eq!(r.error, None);
    let out = u32s(&r, 0);
    assert_eq!(out[0], (0..8).sum::<u32>());
    assert_eq!(out[8], (8..16).sum::<u32>());
    // Lane 7 has no valid source at any step.
    assert_eq!(out[7], 7);
}

#[test]
fn barrier_reductions_count_across_the_cta() {
    let ptx = format!(
        "{HEADER}.visible .entry k(.param .u64 out) {{
  .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  rem.u32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  bar.red.popc.u32 %r9, 0, %p1;
  bar.red.or.pred %p2, 1, %p1;
  selp.u32 %r3, 1000, 0, %p2;
  add.s32 %r9, %r9, %r3;
  {STORE}  ret;
}}"
    );
    let r = run(&ptx, 1, 20, 4, vec![zeros(20)]);
    assert_eq!(r.error, None);
    // tids 0,3,..,18: 7 threads.
    assert!(u32s(&r, 0).iter().all(|&v| v == 1007), "{:?}", u32s(&r, 0));
}

#[test]
fn recursion_with_local_frames() {
    // f(n) keeps n in its own .local depot across the recursive call: f(n) = n + f(n - 1), f(0) = 0.
    let ptx = format!(
        "{HEADER}.func (.param .b32 ret) f(.param .b32 n) {{
  .local .align 4 .b8 __local_depot0[8];
  .reg .b64 %SP; .reg .b64 %SPL;
  .reg .pred %p<2>; .reg .b32 %r<8>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  ld.param.u32 %r1, [n];
  st.u32 [%SP+4], %r1;
  mov.u32 %r5, 0;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $DONE;
  add.s32 %r2, %r1, -1;
  {{ .param .b32 param0; st.param.b32 [param0+0], %r2; .param .b32 retval0;
    call.uni (retval0), f, (param0); ld.param.b32 %r3, [retval0+0]; }}
  ld.local.u32 %r4, [%SPL+4];
  add.s32 %r5, %r3, %r4;
$DONE:
  st.param.b32 [ret+0], %r5;
  ret;
}}
.visible .entry k(.param .u64 out) {{
  .reg .b32 %r<10>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  {{ .param .b32 param0; st.param.b32 [param0+0], %r1; .param .b32 retval0;
    call.uni (retval0), f, (param0); ld.param.b32 %r9, [retval0+0]; }}
  {STORE}  ret;
}}"
    );
    let r = run(&ptx, 1, 12, 4, vec![zeros(12)]);
    assert_eq!(r.error, None);
    assert_eq!(u32s(&r, 0), (0..12).map(|n| n * (n + 1) / 2).collect::<Vec<u32>>());
}

#[test]
fn wrong_arguments_are_errors_not_panics() {
    let ptx = format!("{HEADER}.visible .entry k(.param .u64 out) {{ ret; }}");
    let m = reconverge_ptx::parse(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let k = m.kernels().next().expect("kernel");
    let r = run_reference(&m, k, &LaunchConfig::default(), &[]);
    assert_eq!(r.outcome(), "error");
    let r = run_reference(&m, k, &LaunchConfig { warp_size: 3, ..LaunchConfig::default() }, &[zeros(1)]);
    assert_eq!(r.outcome(), "error");
}

#[test]
fn errors_are_typed() {
    // An out-of-bounds store: a memory fault of the thread, naming the nearest allocation.
    let ptx = out_of_bounds_store();
    let r = run(&ptx, 1, 8, 8, vec![zeros(8)]);
    match &r.error {
        Some(RefError::Thread {
            at,
            fault:
                ThreadFault::Memory { kind: MemoryFaultKind::OutOfBounds, region: Region::Global, size: 4, nearest, .. },
        }) => {
            assert!(at.starts_with("thread (5,0,0) of block (0,0,0) in `k`"), "{at}");
            assert!(nearest.as_deref().is_some_and(|n| n.starts_with("nearest allocation `argument 0 (out)`")));
        }
        other => panic!("{other:?}"),
    }
    // A trap.
    let r = run(&format!("{HEADER}.visible .entry k() {{ trap; }}"), 1, 1, 1, vec![]);
    assert!(matches!(&r.error, Some(RefError::Thread { fault: ThreadFault::Trap, .. })), "{:?}", r.error);
    assert!(r.error.as_ref().is_some_and(|e| e.to_string().ends_with(": trap")));
    // Launch errors.
    let ptx = format!("{HEADER}.visible .entry k(.param .u64 out) {{ ret; }}");
    let m = reconverge_ptx::parse(&ptx).unwrap_or_else(|e| panic!("{e}"));
    let k = m.kernels().next().expect("kernel");
    let r = run_reference(&m, k, &LaunchConfig::default(), &[]);
    let want = LaunchError::ArgumentCount { kernel: "k".into(), expected: 1, given: 0 };
    assert_eq!(r.error, Some(RefError::Launch(want)));
    assert_eq!(r.error.map(|e| e.to_string()).as_deref(), Some("kernel `k` takes 1 arguments, 0 given"));
    let r = run_reference(&m, k, &LaunchConfig { warp_size: 3, ..LaunchConfig::default() }, &[zeros(1)]);
    assert_eq!(r.error, Some(RefError::Launch(LaunchError::WarpSize(3))));
}
