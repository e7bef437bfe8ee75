//! Random PTX kernels for differential testing of reconverge's divergence mechanisms.
//!
//! [`generate`] turns a seed into a kernel: PTX text of the shape NVRTC emits (`.version 8.0`,
//! `.target sm_80`, `.address_size 64`, `%r<N>` register ranges, `ld.param` + `cvta.to.global`,
//! `mul.wide`, `@%p bra $L__BB0_N`, `{ .param ...; call.uni (retval0), f, (...); }` call sequences,
//! `__local_depot` with `%SP`/`%SPL`), its launch geometry and its arguments. The same seed always gives
//! the same kernel, byte for byte.
//!
//! # What a kernel contains
//! Drawn at random per kernel and per statement, within [`GenOptions`]:
//! - **Structured control flow**: if, if-else and nested ifs on the thread index (`tid % k < j`,
//!   `tid & mask`, `tid > c`), on loaded data (`in[gtid] > c`, `in[gtid] < param`), on variables, and
//!   combined (`setp.lt.and`); the short-circuit shapes `if (A && B) C; else D;` (seed 003 Fig. 1) and
//!   `if (A || B) C; else D;`.
//! - **Loops** with thread- or data-dependent trip counts (`x % m + 1`, `m ≤ 5`): do-while and while
//!   forms, nested, with `break` (also out of an outer loop) and `continue`.
//! - **Unstructured control flow**: forward gotos out of nested regions, a jump into the middle of an else
//!   branch, a backward goto guarded by a decrementing counter, and irreducible cycles (two blocks, each an
//!   entry, sharing a decrementing counter).
//! - **Multi-way branches**: `switch` statements through `brx.idx` and a `.branchtargets` table, with
//!   shared targets and fall-through between cases.
//! - **Early exits**: `@%p ret` and `@%p exit` in the kernel; early `return` and `exit` in functions.
//! - **Calls** to up to [`GenOptions::max_funcs`] `.func`s (each may call the ones written before it),
//!   optionally self-recursive with depth ≤ 3, through NVRTC-style `.param` staging.
//! - **Side effects**: every basic block appends a distinct code, mixed with a variable, to the thread's
//!   own trace `out[gtid * slots + k]` (a per-thread counter `k`; a full trace stops writing; the last slot
//!   finally receives `k`); arithmetic in 32 and 64 bits (add, sub, mul, mad, xor, and, or, not, neg,
//!   shifts, min/max, setp + selp, rem/div by constants, popc, brev, wide multiplies, conversions) feeds
//!   the stored values; a per-frame
//!   `.local` array and thread-private shared-memory words are written and read through local, shared and
//!   generic addresses.
//!
//! - **Barrier nests** (a quarter of the kernels, at the top of the kernel): the CUDA samples'
//!   `bitonicSortShared` shape, two loops with uniform trip counts whose body is an `if` on the thread
//!   index followed by `bar.sync 0`; nothing inside leaves the nest or ends a thread.
//!
//! There are no other barriers and no warp-synchronous instructions, and every thread writes only its own slots,
//! so the final memory is the same under any schedule and any divergence mechanism. Every loop and cycle
//! is bounded by a counter no other statement touches and recursion by a decreasing depth argument, so
//! every kernel terminates; a running estimate of dynamic instructions ([`GenOptions::budget`]) keeps them
//! small.
#![deny(missing_docs)]

mod gen;
mod rng;

use gen::{Callee, FnGen, FnSpec, KernelFacts, IN_LEN, SHARED_WORDS};
pub use reconverge_program::{Arg, Buffer, Dtype};
pub use rng::Rng;
use std::fmt::Write as _;

/// The kernel's entry point name.
pub const KERNEL_NAME: &str = "randk";

/// Sizes and features of generated kernels.
#[derive(Clone, Debug)]
pub struct GenOptions {
    /// Most CTAs in the grid (1 or more).
    pub max_ctas: u32,
    /// Most threads per CTA (at most 96 keeps the default sizes; at most 1024).
    pub max_threads: u32,
    /// Deepest nesting of control-flow statements.
    pub max_depth: u32,
    /// Most statements in one statement sequence.
    pub max_stmts: u32,
    /// Most device functions.
    pub max_funcs: u32,
    /// Trace slots per thread in `out` (at least 2).
    pub slots: u32,
    /// Estimated dynamic instructions per thread a kernel may reach.
    pub budget: u64,
    /// Loops.
    pub loops: bool,
    /// Gotos, backward gotos and irreducible cycles.
    pub unstructured: bool,
    /// Device functions.
    pub calls: bool,
    /// Self-recursive device functions.
    pub recursion: bool,
    /// `ret`/`exit` before the end.
    pub early_exit: bool,
    /// The per-frame `.local` array.
    pub local_memory: bool,
    /// Thread-private shared-memory words.
    pub shared_memory: bool,
    /// Conditions and loads on the input data.
    pub data_conditions: bool,
    /// Two-dimensional CTAs sometimes.
    pub two_d_blocks: bool,
    /// `switch` statements through `brx.idx` jump tables (which NVRTC does not emit, but PTX allows).
    pub indirect_branches: bool,
    /// Sometimes (a quarter of the kernels) a barrier nest first: two uniform loops whose body is an `if`
    /// on the thread index followed by `bar.sync` (the CUDA samples' `bitonicSortShared` shape).
    pub barrier_nests: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            max_ctas: 2,
            max_threads: 96,
            max_depth: 3,
            max_stmts: 5,
            max_funcs: 3,
            slots: 24,
            budget: 2000,
            loops: true,
            unstructured: true,
            calls: true,
            recursion: true,
            early_exit: true,
            local_memory: true,
            shared_memory: true,
            data_conditions: true,
            two_d_blocks: true,
            indirect_branches: true,
            barrier_nests: true,
        }
    }
}

/// A generated kernel and its launch.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedKernel {
    /// The PTX module text (one kernel, [`KERNEL_NAME`], after its device functions).
    pub ptx: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// CTA dimensions.
    pub block: [u32; 3],
    /// Arguments: `in` (i32 input data, at least 256 elements and one per thread), `out` (u32 trace,
    /// `slots` words per thread, zero-filled), `c` (a `.u32` scalar).
    pub args: Vec<Arg>,
}

const INTERESTING_SIZES: [u32; 22] = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 47, 48, 63, 64, 65, 95, 96];

fn geometry(rng: &mut Rng, opts: &GenOptions) -> ([u32; 3], [u32; 3], Option<u32>) {
    let max = opts.max_threads.clamp(1, 1024);
    let ctas = rng.range(1, opts.max_ctas.max(1) as u64) as u32;
    if opts.two_d_blocks && max >= 4 && rng.chance(0.2) {
        let bx = *rng.pick(&[2u32, 3, 4, 5, 6, 8, 12, 16]);
        let bx = bx.min(max);
        let by = rng.range(1, (max / bx).max(1) as u64) as u32;
        return ([ctas, 1, 1], [bx, by, 1], Some(bx));
    }
    let threads = if rng.chance(0.5) {
        let fits: Vec<u32> = INTERESTING_SIZES.iter().copied().filter(|&s| s <= max).collect();
        *rng.pick(&fits)
    } else {
        rng.range(1, max as u64) as u32
    };
    ([ctas, 1, 1], [threads, 1, 1], None)
}

/// Generates the kernel of `seed`.
pub fn generate(seed: u64, opts: &GenOptions) -> GeneratedKernel {
    let mut rng = Rng::new(seed);
    let (grid, block, two_d) = geometry(&mut rng, opts);
    let threads = block[0] * block[1] * block[2];
    let slots = opts.slots.max(2);
    let use_smem = opts.shared_memory && rng.chance(0.6);
    let facts = KernelFacts { slots, threads, two_d, smem: use_smem.then(|| format!("{KERNEL_NAME}_smem")) };
    let nfuncs = if opts.calls { rng.range(0, opts.max_funcs as u64) as usize } else { 0 };
    let mut codes = 0u32;
    let mut callees: Vec<Callee> = Vec::new();
    let mut text = String::new();
    let _ = writeln!(text, "//\n// Generated by reconverge-kernelgen (seed {seed})\n//\n");
    let _ = writeln!(text, ".version 8.0\n.target sm_80\n.address_size 64\n");
    if let Some(smem) = &facts.smem {
        let _ = writeln!(text, ".shared .align 4 .b8 {smem}[{}];", 4 * SHARED_WORDS * threads);
    }
    for i in 0..nfuncs {
        let name = format!("f{i}");
        let recursive = opts.recursion && rng.chance(0.4);
        let uses_local = opts.local_memory && rng.chance(0.4);
        let budget = (opts.budget / 8).max(40);
        let prior = callees.clone();
        let spec = FnSpec { index: i, name: name.clone(), is_kernel: false, callees: &prior, budget, recursive };
        let mut g = FnGen::new(&mut rng, opts, &facts, &mut codes, spec);
        g.func_prologue(uses_local);
        let n = opts.max_stmts.max(1);
        g.stmts(opts.max_depth.saturating_sub(1).max(1), n);
        g.epilogue();
        let cost = g.cost * if recursive { 4 } else { 1 } + 8;
        let body = g.finish(uses_local);
        let _ = writeln!(
            text,
            ".func  (.param .b64 func_retval0) {name}(\n\t.param .b64 {name}_param_0,\n\t.param .b32 {name}_param_1,\n\t\
             .param .b32 {name}_param_2,\n\t.param .b32 {name}_param_3\n)\n{{\n{body}\n}}"
        );
        callees.push(Callee { name, cost });
    }
    let uses_local = opts.local_memory && rng.chance(0.5);
    let spec = FnSpec {
        index: nfuncs,
        name: KERNEL_NAME.to_string(),
        is_kernel: true,
        callees: &callees,
        budget: opts.budget,
        recursive: false,
    };
    let mut g = FnGen::new(&mut rng, opts, &facts, &mut codes, spec);
    g.kernel_prologue(uses_local);
    // Drawn from a generator of its own, so that kernels without a nest stay what they were.
    if opts.barrier_nests && Rng::new(seed ^ 0xBA22_1E25).chance(0.25) {
        g.barrier_nest(opts.max_depth);
    }
    let n = opts.max_stmts.max(1) + 2;
    g.stmts(opts.max_depth, n);
    g.epilogue();
    let body = g.finish(uses_local);
    let _ = writeln!(
        text,
        "\t// .globl\t{KERNEL_NAME}\n.visible .entry {KERNEL_NAME}(\n\t.param .u64 {KERNEL_NAME}_param_0,\n\t\
         .param .u64 {KERNEL_NAME}_param_1,\n\t.param .u32 {KERNEL_NAME}_param_2\n)\n{{\n{body}\n}}"
    );
    // Arguments.
    let total = (grid[0] * grid[1] * grid[2] * threads) as usize;
    let in_len = total.max(IN_LEN as usize);
    let mut input = Vec::with_capacity(in_len * 4);
    for _ in 0..in_len {
        input.extend_from_slice(&(rng.range_i(-1000, 1000) as i32).to_le_bytes());
    }
    let c = rng.range(0, 1000);
    let args = vec![
        Arg::Buffer(Buffer { dtype: Dtype::I32, bytes: input }),
        Arg::Buffer(Buffer::zeros(Dtype::U32, total * slots as usize)),
        Arg::Scalar(c),
    ];
    GeneratedKernel { ptx: text, grid, block, args }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_kernel() {
        let o = GenOptions::default();
        assert_eq!(generate(42, &o), generate(42, &o));
        assert_ne!(generate(42, &o).ptx, generate(43, &o).ptx);
    }
}
