//! The memory system of the timing model: coalescing, shared-memory banks, caches, MSHRs, bandwidth, L2/DRAM.
//!
//! These are the building blocks the SM model calls per memory instruction; they decide *when* (and how many
//! transactions), never values. Everything is deterministic (results depend only on the sequence of calls),
//! integer-only (bandwidth is exact rational arithmetic, see [`Bandwidth`]), allocation-free on the hot path
//! (callers pass reusable output buffers), and panic-free on any input (constructors validate and return
//! `Result<_, String>`; the per-access functions clamp degenerate parameters and saturate arithmetic).
//!
//! - [`coalesce()`]: the line transactions and 32-byte sectors of one warp's global access
//!   ([`LineRequest`]s, sorted by line).
//! - [`conflict_degree`]: the number of shared-memory wavefronts of one warp access (distinct words per bank;
//!   wide accesses cover consecutive banks).
//! - [`Cache`]: a set-associative, tag-only, true-LRU cache with dirty bits, plus optional per-line sector
//!   masks and ready cycles for sectored caches with fills in flight.
//! - [`Mshr`]: miss status holding registers with per-line merging of up to `max_merge` waiters.
//! - [`Bandwidth`]: a FIFO channel of `num/den` units per cycle, exact in fixed point.
//! - [`L2Dram`]: the shared, sectored, write-back/write-allocate L2 and DRAM, a sequential model driven in the
//!   caller's deterministic order (issue cycle, SM, sequence); see [`l2`] for the timing equations.
//! - [`Dram`]: banked DRAM behind the L2 (row buffers, GPGPU-Sim's timing constraints, FR-FCFS over each
//!   epoch's batch of requests, its address mapping); see [`dram`].

pub mod bandwidth;
pub mod banks;
pub mod cache;
pub mod coalesce;
pub mod dram;
pub mod l2;
pub mod mshr;

pub use bandwidth::Bandwidth;
pub use banks::conflict_degree;
pub use cache::{Cache, CacheGeometry, Evicted, LineState, SetIndex};
pub use coalesce::{coalesce, LineRequest};
pub use dram::{AddressMapping, Dram, DramRequest, DramStats, DramTiming};
pub use l2::{L2Config, L2Dram, L2Stats, Pending, ReqKind, Slices};
pub use mshr::{Mshr, MshrResult};
