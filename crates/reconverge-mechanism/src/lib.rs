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
    pub(crate) mod cta_stack;
    pub(crate) mod parallel;
    pub(crate) mod path_list;
    pub(crate) mod paths;
    pub(crate) mod pdom_rules;
    pub(crate) mod per_warp;
}

mod mechanisms {
    pub(crate) mod arbiter;
    pub(crate) mod breadth;
    pub(crate) mod capri;
    pub(crate) mod dual_path;
    pub(crate) mod dwf;
    pub(crate) mod dws;
    pub(crate) mod forkjoin;
    pub(crate) mod frontier;
    pub(crate) mod harp;
    pub(crate) mod hybrid;
    pub(crate) mod its;
    pub(crate) mod maven;
    pub(crate) mod mimd;
    pub(crate) mod minpc;
    pub(crate) mod multi_path;
    pub(crate) mod none;
    pub(crate) mod pdom;
    pub(crate) mod runner_up;
    pub(crate) mod sbi;
    pub(crate) mod simty;
    pub(crate) mod sorted;
    pub(crate) mod ssy;
    pub(crate) mod stackless;
    pub(crate) mod tbc;
}

use reconverge_program::{launch, program, types};

pub use adapters::cta_stack::{CompactionPolicy, CtaMask, CtaStack, Decision};
pub use adapters::parallel::{SlotCta, SlotTracker, Slots};
pub use adapters::path_list::{BreadthState, Order, PathList, Priority, SyncPoint};
pub use adapters::paths::{successors, Path, ThreadPcs};
pub use adapters::pdom_rules::PdomEntry;
pub use adapters::per_warp::{PerWarp, WarpCtx, WarpTracker};
pub use interface::*;
pub use mechanisms::arbiter::Arbiter;
pub use mechanisms::breadth::Breadth;
pub use mechanisms::capri::{Capri, Capt};
pub use mechanisms::dual_path::{DualEntry, DualPath};
pub use mechanisms::dwf::{Dwf, Heuristic, LutGeometry, PoolCta, PoolSm};
pub use mechanisms::dws::{Dws, DwsState, SplitJoin, WarpSplit};
pub use mechanisms::forkjoin::{ForkJoin, ForkJoinState, Region};
pub use mechanisms::frontier::ThreadFrontiers;
pub use mechanisms::harp::{CbtEntry, Harp, HarpCta, HarpState, IssueGroup, CBT_ENTRIES, MERGE_ENTRIES};
pub use mechanisms::hybrid::{Hybrid, HybridState};
pub use mechanisms::its::{ConvergenceBarrier, Its, ItsState, YIELD_AFTER};
pub use mechanisms::maven::{Maven, MavenState};
pub use mechanisms::mimd::{Mimd, MimdCta, MimdWarp, GROUPS_PER_WARP};
pub use mechanisms::minpc::MinPc;
pub use mechanisms::multi_path::{MultiPath, MultiPathState, RtEntry, Split};
pub use mechanisms::none::NoReconvergence;
pub use mechanisms::pdom::PdomStack;
pub use mechanisms::runner_up::{Place, RunnerUp, RunnerUpState};
pub use mechanisms::sbi::{Interval, Sbi, SbiState};
pub use mechanisms::simty::{Simty, SimtyState};
pub use mechanisms::sorted::Sorted;
pub use mechanisms::ssy::SsyStack;
pub use mechanisms::stackless::{Stackless, StacklessState};
pub use mechanisms::tbc::Tbc;
pub use registry::Mechanism;
pub use registry::{known_names, Entry, Info, REGISTRY};
