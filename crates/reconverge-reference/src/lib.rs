//! A one-thread-at-a-time reference interpreter for reconverge kernels.
//!
//! The differential tests of the project compare every divergence mechanism of the simulator against this
//! crate. It is deliberately simple and independent of the simulator's structure: it interprets
//! [`reconverge_ir`] instructions directly (its own name resolution, its own memories), one thread at a
//! time, with the scalar per-lane semantics of `reconverge_semantics`. Only the launch types
//! ([`LaunchConfig`], [`Arg`], [`Buffer`]) and the generic-address windows of `reconverge_program::layout` are
//! shared with the simulator, so that generic addresses agree.
//!
//! # Machine model
//! - **Memories.** Device (global) memory holds the module's `.global` variables (with their initializers)
//!   and then one allocation per buffer argument, whose address is passed in the kernel parameter. Each CTA
//!   has shared memory (static variables, then `LaunchConfig::dynamic_shared` bytes for `extern .shared`).
//!   Each thread has local memory holding one frame of `.local` variables per active call (so recursion
//!   works, and the `%SP`/`%SPL` depot pattern of NVRTC addresses the current frame). The `.const` bank
//!   and the kernel parameter buffer are read-only. Each call frame has its own parameter area for the
//!   callee's `.param` parameters, its return values, and the `.param` staging variables of calls it makes.
//!   Generic addresses use the simulator's windows; `cvta` adds or removes a window.
//! - **Threads.** A thread is a stack of frames, each with its own registers. Writes to a register wider
//!   than the instruction type are sign-extended for signed types and zero-extended otherwise.
//! - **Scheduling (Volta-style independent thread scheduling, one thread at a time).** Within a CTA each
//!   runnable thread, in thread order, runs alone until it exits, blocks, or uses up a time slice
//!   ([`RefOptions::quantum`], so that spin-waiting on another thread cannot starve it). Blocking points:
//!   - `bar.sync`/`barrier.sync`/`bar.red` (and `bar.arrive`, which only counts): the barrier releases when
//!     the expected count, or every non-exited thread of the CTA, has arrived;
//!   - warp-synchronous instructions with a member mask (`shfl.sync`, `vote.sync`, `match.sync`,
//!     `redux.sync`, `bar.warp.sync`): a thread waits until every live (non-exited) member of its warp
//!     (warp = `warp_size` consecutive threads) waits at the same instruction; then the instruction is
//!     computed for all of them at once;
//!   - `activemask`: a thread waits until no other thread of its warp can still arrive (every runnable one
//!     has only spun); the result is the set of threads waiting at that `activemask`, which is one of the
//!     groupings a GPU may produce.
//!
//!   CTAs run one after another (at most [`RefOptions::max_resident_ctas`] resident, the rest in waves);
//!   when a round of turns in a CTA makes no progress (its runnable threads only spin), the next resident
//!   CTA runs, so cross-CTA spin locks complete. Atomics are serialized in execution order.
//! - **Errors** are results, never panics: a [`RefError`], [`RefError::Deadlock`] (`deadlock: ...`) when no
//!   thread of a CTA can run, [`RefError::Limit`] (`limit: ...`) when a thread exceeds
//!   [`RefOptions::max_thread_instructions`], and [`RefError::Thread`], naming the thread, the function, the
//!   instruction and its source line, for memory faults, traps and unsupported instructions.
#![deny(missing_docs)]

mod error;
mod memory;
mod prep;
mod sched;
mod thread;

pub use error::{LaunchError, MemoryFaultKind, ModuleError, RefError, Region, ThreadFault};
use reconverge_ir::{FuncId, Module};
pub use reconverge_program::{Arg, Buffer, Dtype, LaunchConfig};

/// Limits of a reference run.
#[derive(Clone, Debug)]
pub struct RefOptions {
    /// Instructions one thread may execute before the run stops with a `limit:` error.
    pub max_thread_instructions: u64,
    /// Instructions a thread runs before another thread of its CTA gets a turn (if it has not blocked).
    pub quantum: u64,
    /// CTAs resident at once; more start as resident ones finish.
    pub max_resident_ctas: usize,
}

impl Default for RefOptions {
    fn default() -> Self {
        RefOptions { max_thread_instructions: 10_000_000, quantum: 10_000, max_resident_ctas: 64 }
    }
}

/// The outcome of a reference run.
#[derive(Clone, Debug, PartialEq)]
pub struct RefResult {
    /// Final contents of every buffer argument (`None` for scalars), in argument order.
    pub buffers: Vec<Option<Buffer>>,
    /// Why the run stopped early.
    pub error: Option<RefError>,
    /// Instructions executed, summed over threads (guarded-off instructions included).
    pub thread_instructions: u64,
    /// Final contents of the module variables named in `LaunchConfig::dump_globals`, in that order.
    pub globals: Vec<(String, Buffer)>,
    /// Final contents of the buffers that struct arguments' pointer fields point into.
    pub fields: Vec<reconverge_program::FieldBuffer>,
}

impl RefResult {
    /// `completed`, `deadlock`, `limit` or `error`.
    pub fn outcome(&self) -> &'static str {
        match &self.error {
            None => "completed",
            Some(RefError::Deadlock { .. }) => "deadlock",
            Some(RefError::Limit { .. }) => "limit",
            Some(_) => "error",
        }
    }
}

/// Runs `kernel` of `module` with `args` under `cfg` (its warp size, geometry, dynamic shared memory and
/// local memory size are used), with the default [`RefOptions`].
pub fn run_reference(module: &Module, kernel: FuncId, cfg: &LaunchConfig, args: &[Arg]) -> RefResult {
    run_reference_with(module, kernel, cfg, args, &RefOptions::default())
}

/// [`run_reference`] with explicit limits.
pub fn run_reference_with(
    module: &Module,
    kernel: FuncId,
    cfg: &LaunchConfig,
    args: &[Arg],
    opts: &RefOptions,
) -> RefResult {
    match prep::Prepared::new(module, kernel) {
        Ok(p) => sched::launch(&p, cfg, args, opts),
        Err(e) => RefResult {
            buffers: args.iter().map(|_| None).collect(),
            error: Some(RefError::Module(e)),
            thread_instructions: 0,
            globals: Vec::new(),
            fields: Vec::new(),
        },
    }
}
