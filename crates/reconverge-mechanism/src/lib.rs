//! Divergence mechanisms: who issues next, with which lanes, and where threads meet again.
//!
//! The core executes one instruction for an *issue group* (a pc, an active lane mask, and the CTA thread
//! slots the lanes hold) and reports what happened as a [`Flow`]: which lanes branched where, called,
//! returned, exited, or ran a reconvergence-stack instruction. A mechanism keeps its own structure (a
//! stack, a list of paths, a CTA-wide stack, a warp pool) up to date from these reports and decides the
//! next groups. Mechanisms never compute data; the core never decides reconvergence.
//!
//! Every mechanism implements [`Tracker`] (state per SM and per CTA; issue contexts; a pure `peek` and a
//! committing `update`). Per-warp mechanisms implement the smaller [`WarpTracker`] and run through the
//! [`PerWarp`] adapter. Each mechanism declares its facts (name, aliases, summary, scope, compiler pass,
//! default set) once in its own file as an [`Info`]; the [`REGISTRY`] lists every [`Mechanism`] with its
//! facts, and every list of mechanisms derives from it. [`with_tracker!`] is the one
//! place a mechanism becomes code: the drivers dispatch once into generic code, so the hot loop has no
//! dynamic dispatch.

//!
//! The crate has three walls:
//! - [`interface`]: what the core and a mechanism tell each other ([`Tracker`], [`Group`], [`Flow`], ...);
//! - `adapters`: the shapes most mechanisms share — [`PerWarp`] (a [`WarpTracker`] per static warp),
//!   [`Slots`] (per-warp issue slots of parallel paths), [`CtaStack`] (a CTA-wide stack with a compaction
//!   policy) — and the path rules of the path-list mechanisms;
//! - `mechanisms`: one file per mechanism, each with its [`Info`];
//!
//! and the [`registry`] that lists them. A mechanism never computes a value and never reaches into the
//! core: it sees issue groups and their [`Flow`]s only.
#![deny(missing_docs)]

pub mod interface;
pub mod registry;
#[cfg(test)]
mod testing;

mod adapters {
    pub mod cta_stack;
    pub mod parallel;
    pub mod paths;
    pub mod per_warp;
}

mod mechanisms {
    pub mod arbiter;
    pub mod breadth;
    pub mod capri;
    pub mod dual_path;
    pub mod dwf;
    pub mod dws;
    pub mod forkjoin;
    pub mod frontier;
    pub mod harp;
    pub mod hybrid;
    pub mod its;
    pub mod maven;
    pub mod mimd;
    pub mod minpc;
    pub mod multi_path;
    pub mod none;
    pub mod pdom;
    pub mod runner_up;
    pub mod sbi;
    pub mod simty;
    pub mod sorted;
    pub mod ssy;
    pub mod stackless;
    pub mod tbc;
}

// Module paths every file names its neighbours by (`crate::pdom::...`, `crate::paths::...`).
use adapters::{cta_stack, parallel, paths, per_warp};
use mechanisms::mimd;
use mechanisms::{arbiter, breadth, capri, dual_path, dwf, forkjoin, frontier, its, minpc, multi_path, none, pdom};
use mechanisms::{dws, harp, sbi, simty, sorted, ssy, stackless, tbc};
use mechanisms::{hybrid, maven, runner_up};
use reconverge_program::{launch, program, types};

pub use arbiter::{Arbiter, ThreadPcs};
pub use breadth::{Breadth, BreadthState, SyncPoint};
pub use capri::{Capri, Capt};
pub use cta_stack::{CompactionPolicy, CtaMask, CtaStack, Decision};
pub use dual_path::{DualEntry, DualPath};
pub use dwf::{Dwf, Heuristic, LutGeometry, PoolCta, PoolSm};
pub use dws::{Dws, DwsState, SplitJoin, WarpSplit};
pub use forkjoin::{ForkJoin, ForkJoinState, Region};
pub use frontier::ThreadFrontiers;
pub use harp::{CbtEntry, Harp, HarpState};
pub use hybrid::{Hybrid, HybridState};
pub use interface::*;
pub use its::{ConvergenceBarrier, Its, ItsState, YIELD_AFTER};
pub use maven::{Maven, MavenState};
pub use mimd::{Mimd, MimdCta, MimdWarp, GROUPS_PER_WARP};
pub use minpc::MinPc;
pub use multi_path::{MultiPath, MultiPathState, RtEntry, Split};
pub use none::NoReconvergence;
pub use parallel::{SlotCta, SlotTracker, Slots};
pub use paths::{successors, Path};
pub use pdom::PdomStack;
pub use per_warp::{PerWarp, WarpCtx, WarpTracker};
pub use registry::Mechanism;
pub use registry::{known_names, Entry, Info, REGISTRY};
pub use runner_up::{Place, RunnerUp, RunnerUpState};
pub use sbi::{Interval, Sbi, SbiState};
pub use simty::{Simty, SimtyState};
pub use sorted::{Priority, Sorted};
pub use ssy::SsyStack;
pub use stackless::{Stackless, StacklessState};
pub use tbc::Tbc;
