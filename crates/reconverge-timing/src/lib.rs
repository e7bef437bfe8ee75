//! The cycle-level timing model of reconverge.
//!
//! It wraps the functional core without changing any result: instructions still execute when they issue
//! (it drives the simulator's `SmCore`, the same core as the functional machine), and the timing model
//! decides *when* each issue group may issue —
//! warp schedulers, a register scoreboard, functional-unit initiation intervals, barrier and branch
//! latencies, and a memory hierarchy (coalescer, per-SM L1 with MSHRs, shared-memory banks, a shared L2
//! and DRAM with latency and bandwidth).
//!
//! # Parallel and deterministic
//! SMs are simulated in *epochs* of E cycles, E = the shortest possible L1-miss round trip (L1 hit latency +
//! L2 hit latency). During an epoch the SMs are independent and run on any number of host threads: global
//! loads read memory as it was at the epoch start plus the SM's own stores; stores and atomics are logged.
//! At the epoch end, in one thread, the logs of all SMs are merged in (cycle, SM, sequence) order: stores
//! and atomics are applied to device memory (atomics write their old value into the issuing thread's
//! register), L2/DRAM requests are served in that order (their responses always arrive in a later epoch,
//! since E is the minimum round trip), and waiting CTAs are dispatched to SMs with room. Results and
//! statistics are therefore bit-identical for any thread count. The price is visibility: other SMs see a
//! store at the next epoch, as a weakly ordered GPU may; race-free kernels produce the same memory.
#![deny(missing_docs)]

pub mod config;
pub mod energy;
pub mod error;
pub mod gmem;
pub mod gpu;
pub mod import;
pub mod memsys;
mod opcode;
pub mod per_pc;
pub mod sampling;
pub mod sm;
pub mod stats;
pub mod trace;

pub use config::{
    ConstCacheConfig, Dispatch, FrontendConfig, GpuConfig, LaunchCostConfig, OpcodeConfig, RegisterSource,
    SchedulerPolicy, TextureCacheConfig, PRESETS,
};
pub use energy::EnergyCoefficients;
pub use gpu::{
    run_timed, run_timed_recorded, run_timed_resident, run_timed_resident_recorded, run_timed_traced, Record,
    TimedOptions, TimedResult,
};
pub use sampling::{CtaSample, CtaSampling, WorkUnit};
pub use stats::{DatapathActivity, Occupancy, TimingStats};
pub use trace::{Timeline, TraceEvent, TraceSpec};
