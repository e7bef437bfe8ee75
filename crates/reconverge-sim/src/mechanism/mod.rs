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
//! facts, and every list of mechanisms derives from it. [`with_tracker!`](crate::with_tracker) is the one
//! place a mechanism becomes code: the drivers dispatch once into generic code, so the hot loop has no
//! dynamic dispatch.

mod arbiter;
mod breadth;
mod capri;
pub mod cost;
mod cta_stack;
mod dual_path;
mod dwf;
mod forkjoin;
mod frontier;
mod its;
mod minpc;
mod multi_path;
mod none;
mod parallel;
mod paths;
mod pdom;
mod per_warp;
mod registry;
mod simty;
mod sorted;
mod ssy;
mod stackless;
mod tbc;
mod tracker;

pub use arbiter::{Arbiter, ThreadPcs};
pub use breadth::{Breadth, BreadthState, SyncPoint};
pub use capri::{Capri, Capt};
pub use cta_stack::{CompactionPolicy, CtaMask, CtaStack, Decision};
pub use dual_path::{DualEntry, DualPath};
pub use dwf::{Dwf, Heuristic, PoolCta, PoolSm};
pub use forkjoin::{ForkJoin, ForkJoinState, Region};
pub use frontier::ThreadFrontiers;
pub use its::{ConvergenceBarrier, Its, ItsState, YIELD_AFTER};
pub use minpc::MinPc;
pub use multi_path::{MultiPath, MultiPathState, RtEntry, Split};
pub use none::NoReconvergence;
pub use parallel::{SlotCta, SlotTracker, Slots};
pub use paths::{successors, Path};
pub use pdom::PdomStack;
pub use per_warp::{PerWarp, WarpCtx, WarpTracker};
pub use registry::{known_names, Entry, Info, REGISTRY};
pub use simty::{Simty, SimtyState};
pub use sorted::{Priority, Sorted};
pub use ssy::SsyStack;
pub use stackless::{Stackless, StacklessState};
pub use tbc::Tbc;
pub use tracker::{
    by_pc, Agg, Blocked, Counter, CtaView, Delay, Group, LaneMap, Peek, Position, Ratio, Tracker, UpdateCtx,
};

use crate::types::{LaneMask, Pc};
use smallvec::SmallVec;
use std::fmt;

/// What executing one instruction did to the group's lanes.
///
/// Lanes of the issued mask not named by the variant continue at `pc + 1` (this includes lanes whose
/// guard predicate was false).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Flow {
    /// Every lane continues at `pc + 1`.
    Next,
    /// `taken` lanes go to `target`.
    Branch {
        /// The branch target.
        target: Pc,
        /// Lanes that take the branch (a subset of the issued mask).
        taken: LaneMask,
    },
    /// An indirect branch: each group of lanes goes to its pc (lanes not listed go to `pc + 1`). Boxed:
    /// indirect branches are rare and every instruction's outcome is moved around.
    Multi(Box<[(Pc, LaneMask)]>),
    /// `callers` call the function at `target`; they return to `pc + 1`.
    Call {
        /// The callee's first pc.
        target: Pc,
        /// The calling lanes.
        callers: LaneMask,
    },
    /// `lanes` return from the current device function, to the return pcs listed (grouped; boxed to keep
    /// every instruction's outcome small).
    Return {
        /// The returning lanes.
        lanes: LaneMask,
        /// Their return pcs.
        to: Box<[(Pc, LaneMask)]>,
    },
    /// `lanes` have exited (the core already removed them from the live mask).
    Exit {
        /// The exiting lanes.
        lanes: LaneMask,
    },
    /// `ssy target` executed.
    Ssy {
        /// The reconvergence target.
        target: Pc,
    },
    /// `sync` executed.
    Sync,
    /// `pbk target` executed.
    Pbk {
        /// The loop exit.
        target: Pc,
    },
    /// `brk` executed by `lanes`.
    Brk {
        /// The breaking lanes.
        lanes: LaneMask,
    },
    /// `join` executed (the end of a fork/join region, inserted by the fork/join pass).
    Join,
    /// `bssy target` executed: the issuing lanes join the convergence barrier of the region that
    /// reconverges at `target` (inserted by the convergence-barrier pass).
    Bssy {
        /// The region's reconvergence pc (names the barrier).
        target: Pc,
    },
    /// `bsync target` executed: the issuing lanes wait at the convergence barrier named by `target`.
    Bsync {
        /// The region's reconvergence pc (names the barrier).
        target: Pc,
    },
    /// `yield` executed: the issuing lanes let the scheduler run another group.
    Yield,
    /// `syncwarp` executed (stackless SIMT): the issuing lanes wait for every live lane of the warp.
    SyncWarp,
    /// Nothing executed: the instruction is warp-synchronous and the live member `lanes` of the group's
    /// static warp are not in the group. Only for mechanisms that bring them
    /// ([`Tracker::AWAITS_MEMBERS`]); the group must issue again once they joined.
    Await {
        /// The missing member lanes.
        lanes: LaneMask,
    },
}

impl Flow {
    /// The mnemonic of a mechanism instruction's outcome, for messages.
    pub fn mnemonic(&self) -> &'static str {
        match self {
            Flow::Ssy { .. } => "ssy",
            Flow::Sync => "sync",
            Flow::Pbk { .. } => "pbk",
            Flow::Brk { .. } => "brk",
            Flow::Join => "join",
            Flow::Bssy { .. } => "bssy",
            Flow::Bsync { .. } => "bsync",
            Flow::Yield => "yield",
            Flow::SyncWarp => "syncwarp",
            _ => "an instruction",
        }
    }

    /// The outcome of one instruction executed on two disjoint sets of lanes (a group that draws threads
    /// from several CTAs executes once per CTA, [`Tracker::SM_POOL`]): lanes named by neither outcome go
    /// to `pc + 1`, so [`Flow::Next`] is the identity, and outcomes of one kind combine their lanes.
    pub fn merge(self, other: Flow) -> Flow {
        fn union(a: &[(Pc, LaneMask)], b: &[(Pc, LaneMask)]) -> Box<[(Pc, LaneMask)]> {
            let mut out: Vec<(Pc, LaneMask)> = a.to_vec();
            for &(pc, m) in b {
                match out.iter_mut().find(|e| e.0 == pc) {
                    Some(e) => e.1 |= m,
                    None => out.push((pc, m)),
                }
            }
            out.into_boxed_slice()
        }
        match (self, other) {
            (Flow::Next, f) | (f, Flow::Next) => f,
            (Flow::Branch { target, taken: a }, Flow::Branch { taken: b, .. }) => Flow::Branch { target, taken: a | b },
            (Flow::Multi(a), Flow::Multi(b)) => Flow::Multi(union(&a, &b)),
            (Flow::Call { target, callers: a }, Flow::Call { callers: b, .. }) => Flow::Call { target, callers: a | b },
            (Flow::Return { lanes: a, to: ta }, Flow::Return { lanes: b, to: tb }) => {
                Flow::Return { lanes: a | b, to: union(&ta, &tb) }
            }
            (Flow::Exit { lanes: a }, Flow::Exit { lanes: b }) => Flow::Exit { lanes: a | b },
            (Flow::Brk { lanes: a }, Flow::Brk { lanes: b }) => Flow::Brk { lanes: a | b },
            (Flow::Await { lanes: a }, Flow::Await { lanes: b }) => Flow::Await { lanes: a | b },
            // Outcomes that name no lanes (ssy, sync, pbk, join, bssy, bsync, yield, syncwarp) are the
            // same for every set of lanes of one instruction.
            (f, _) => f,
        }
    }
}

/// A mechanism's compiler pass: it inserts the instructions the mechanism's hardware interprets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pass {
    /// `ssy`/`sync`/`pbk`/`brk` (seed 001).
    Ssy,
    /// `join` (fork/join) or `bssy`/`bsync` (convergence barriers).
    Region(crate::RegionPass),
}

impl Pass {
    /// The transformed module.
    pub fn apply(self, module: &reconverge_ir::Module) -> reconverge_ir::Module {
        match self {
            Pass::Ssy => crate::insert_ssy(module).0,
            Pass::Region(p) => crate::insert_regions(module, p).0,
        }
    }
}

/// How `bar.sync` counts arrivals under a mechanism.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BarrierMode {
    /// A warp arrives as soon as any of its groups executes the barrier (GPGPU-Sim, pre-Volta): the whole
    /// warp stops issuing until the CTA's barrier releases.
    Warp,
    /// Each thread arrives by itself (Volta-style): groups not at the barrier keep issuing.
    Thread,
}

/// A mechanism's failure: the program did something the mechanism cannot represent, or (a bug) the
/// core issued a group the mechanism does not hold.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum MechError {
    /// `ssy`/`sync`/`pbk`/`brk` under a mechanism other than `ssy`.
    #[error("explicit stack instructions need the `ssy` mechanism")]
    NeedsSsy,
    /// An instruction another mechanism's compiler pass inserts (named by its mnemonic).
    #[error("`{0}` is not an instruction of this mechanism")]
    ForeignInstruction(&'static str),
    /// A stack (named) had no entry to pop.
    #[error("{0} stack underflow")]
    Underflow(&'static str),
    /// A `brk` without an enclosing `pbk`, a `ret` without a call.
    #[error("{0} without {1}")]
    Unmatched(&'static str, &'static str),
    /// A divergent branch whose reconvergence point is unknown (a pc description).
    #[error("divergence at {0} which has no reconvergence point")]
    NoReconvergence(String),
    /// Warps of one CTA-wide stack entry reached different sync points (their pc descriptions).
    #[error("warps of one CTA-wide stack entry reached different sync points ({0} and {1})")]
    SplitSyncPoint(String, String),
    /// The issued group is not in the mechanism's structure (named).
    #[error("the issued group is not in {0}")]
    NotHeld(&'static str),
    /// The issued context holds no warp (the kind named).
    #[error("no {0} in context {1}")]
    EmptyContext(&'static str, u32),
    /// The issued path or split (named) is not valid.
    #[error("the issued {0} is not valid")]
    InvalidSlot(&'static str),
    /// A group with no lanes issued.
    #[error("an empty group issued")]
    EmptyGroup,
    /// A mechanism that does not gather warp-synchronous members was asked to.
    #[error("this mechanism does not await warp-synchronous lanes")]
    NoAwait,
}

/// One entry of a mechanism's structure, for traces and teaching.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct EntryView {
    /// Entry kind (`div`, `ssy`, `pbk`, `cal`, `call`, `group`, `path`, `warp`, ...).
    pub kind: &'static str,
    /// Lanes of the entry: one mask for a per-warp structure, one per static warp of the CTA for a
    /// CTA-wide one.
    pub lanes: Vec<LaneMask>,
    /// Next pc of the entry.
    pub pc: Pc,
    /// Reconvergence pc of the entry ([`crate::PC_NONE`] if none).
    pub rpc: Pc,
    /// Anything else the mechanism shows (`wcnt=2`, `occ=5`), empty if nothing.
    pub note: String,
}

impl EntryView {
    /// An entry of a per-warp structure.
    pub fn warp(kind: &'static str, mask: LaneMask, pc: Pc, rpc: Pc) -> EntryView {
        EntryView { kind, lanes: vec![mask], pc, rpc, note: String::new() }
    }
}

/// Where a mechanism keeps its state (and so which threads an issue group may combine).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scope {
    /// One structure per static warp; groups stay in their warp.
    Warp,
    /// One structure per CTA; groups combine threads of the CTA's warps.
    Cta,
    /// One structure per SM (`dwf` still groups threads within their CTA; `dwf:sm` across the SM's
    /// CTAs).
    Sm,
}

/// The mechanisms the command line can choose.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Mechanism {
    /// Implicit per-warp stack reconverging at the immediate post-dominator (GPGPU-Sim).
    Pdom,
    /// Explicit SSY/SYNC + PBK/BRK stack of seed 001 (the SSY pass inserts the instructions).
    Ssy,
    /// No reconvergence: split groups take turns until they exit.
    None,
    /// Dynamic warp formation: threads regrouped by pc in a warp pool, issued by a heuristic.
    Dwf(Heuristic),
    /// Dynamic warp formation with one warp pool for every CTA of the SM (Fung et al., MICRO'07): threads
    /// of different CTAs at one pc share warps; the majority heuristic.
    DwfSm,
    /// Thread block compaction: a CTA-wide stack; warps wait at every sync point and are compacted.
    Tbc,
    /// CAPRI: thread block compaction where divergent warps wait only when compaction is predicted
    /// adequate.
    Capri,
    /// Thread block compaction with likely-convergence points (Fung & Aamodt's extension): threads that
    /// stay in a loop meet before the back edge instead of at the loop's exit.
    TbcLpc,
    /// CAPRI with likely-convergence points.
    CapriLpc,
    /// Depth-first path traversal, minimum pc first (seed 003 §2.1).
    MinPc,
    /// Breadth-first path traversal with synchronisation at safe points (seed 003 §2.3).
    Breadth,
    /// A path list sorted by a priority, convergence at the head (seed 003 §2.4).
    Sorted(Priority),
    /// Simty's hot and cold context tables with the compact-sort unit (seed 003 §3.2).
    Simty,
    /// Per-thread pcs and a reduction tree choosing maximum depth, then minimum pc (seed 003 §3.1).
    Arbiter,
    /// Depth-first traversal with stack-depth minimisation: compiler fork/join regions, minority path
    /// first (seed 003 §2.2, AMD GCN).
    ForkJoin,
    /// Independent thread scheduling (Volta and later): per-thread pcs, compiler convergence barriers
    /// (`bssy`/`bsync`), yield for forward progress, warp-synchronous instructions that wait for members.
    Its,
    /// Thread frontiers: paths sorted by the compiler's block priority, merging wherever they meet
    /// (Diamos et al., MICRO'11; seed 003 §2.4).
    ThreadFrontiers,
    /// Dual-path execution: the PDOM stack's top entry holds two paths that both issue (Rhu & Erez,
    /// HPCA'13; seed 003 §2.5).
    DualPath,
    /// Multi-path IPDOM: a split table whose every path issues and a reconvergence table (ElTantawy et
    /// al., HPCA'14; seed 003 §2.5).
    MultiPath,
    /// Stackless SIMT: per-thread pcs, compiler `syncwarp` at convergent blocks with a divergent
    /// predecessor, independent threads in between (seed 004 §5.2).
    Stackless,
    /// Stackless SIMT with dynamic convergence preservation: threads that branch alike stay together.
    StacklessDcp,
}

/// Runs `$body` with `$t` bound to the [`Tracker`] of mechanism `$m`: the one place a mechanism's name
/// becomes code. Each arm monomorphizes `$body` for one tracker, so the drivers' hot loops are generic
/// code with no dynamic dispatch.
#[macro_export]
macro_rules! with_tracker {
    ($m:expr, |$t:ident| $body:expr) => {{
        use $crate::mechanism::{
            Arbiter, Breadth, Capri, CtaStack, DualPath, Dwf, ForkJoin, Its, Mechanism as M, MinPc, MultiPath,
            NoReconvergence, PdomStack, PerWarp, Simty, Slots, Sorted, SsyStack, Stackless, Tbc, ThreadFrontiers,
        };
        match $m {
            M::Pdom => {
                let $t = &PerWarp(PdomStack);
                $body
            }
            M::Ssy => {
                let $t = &PerWarp(SsyStack);
                $body
            }
            M::None => {
                let $t = &PerWarp(NoReconvergence);
                $body
            }
            M::Dwf(h) => {
                let $t = &Dwf::<false>(h);
                $body
            }
            M::DwfSm => {
                let $t = &Dwf::<true>($crate::mechanism::Heuristic::Majority);
                $body
            }
            M::Tbc => {
                let $t = &CtaStack(Tbc::<false>);
                $body
            }
            M::Capri => {
                let $t = &CtaStack(Capri::<false>);
                $body
            }
            M::TbcLpc => {
                let $t = &CtaStack(Tbc::<true>);
                $body
            }
            M::CapriLpc => {
                let $t = &CtaStack(Capri::<true>);
                $body
            }
            M::MinPc => {
                let $t = &PerWarp(MinPc);
                $body
            }
            M::Breadth => {
                let $t = &PerWarp(Breadth);
                $body
            }
            M::Sorted(p) => {
                let $t = &PerWarp(Sorted(p));
                $body
            }
            M::Simty => {
                let $t = &PerWarp(Simty);
                $body
            }
            M::Arbiter => {
                let $t = &PerWarp(Arbiter);
                $body
            }
            M::ForkJoin => {
                let $t = &PerWarp(ForkJoin);
                $body
            }
            M::Its => {
                let $t = &PerWarp(Its);
                $body
            }
            M::ThreadFrontiers => {
                let $t = &PerWarp(ThreadFrontiers);
                $body
            }
            M::DualPath => {
                let $t = &Slots(DualPath);
                $body
            }
            M::MultiPath => {
                let $t = &Slots(MultiPath);
                $body
            }
            M::Stackless => {
                let $t = &PerWarp(Stackless { dcp: false });
                $body
            }
            M::StacklessDcp => {
                let $t = &PerWarp(Stackless { dcp: true });
                $body
            }
        }
    }};
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether the active lanes of a branch went to more than one place.
pub fn splits(mask: LaneMask, flow: &Flow) -> bool {
    match flow {
        Flow::Branch { taken, .. } => *taken != 0 && *taken != mask,
        Flow::Brk { lanes } => *lanes != 0 && *lanes != mask,
        Flow::Multi(groups) => {
            let listed = groups.iter().fold(0, |a, (_, m)| a | m) & mask;
            let parts = groups.iter().filter(|(_, m)| m & mask != 0).count() + usize::from(listed != mask);
            parts > 1
        }
        _ => false,
    }
}

/// Splits `mask` by the lanes' next pcs after `flow`, fall-through group first (the order GPGPU-Sim
/// pushes them, so the last group ends on top of a stack).
pub fn next_groups(pc: Pc, mask: LaneMask, flow: &Flow) -> SmallVec<[(Pc, LaneMask); 4]> {
    let mut out: SmallVec<[(Pc, LaneMask); 4]> = SmallVec::new();
    let mut push = |p: Pc, m: LaneMask| {
        if m != 0 {
            if let Some(e) = out.iter_mut().find(|(q, _)| *q == p) {
                e.1 |= m;
            } else {
                out.push((p, m));
            }
        }
    };
    match flow {
        Flow::Branch { target, taken } => {
            push(pc + 1, mask & !taken);
            push(*target, mask & taken);
        }
        Flow::Multi(groups) => {
            let listed = groups.iter().fold(0, |a, (_, m)| a | m);
            push(pc + 1, mask & !listed);
            let mut sorted = groups.to_vec();
            sorted.sort_by_key(|(p, _)| *p);
            for (p, m) in sorted {
                push(p, mask & m);
            }
        }
        Flow::Call { target, callers } => {
            push(pc + 1, mask & !callers);
            push(*target, mask & callers);
        }
        Flow::Return { lanes, to } => {
            push(pc + 1, mask & !lanes);
            for (p, m) in to.iter() {
                push(*p, mask & m);
            }
        }
        Flow::Exit { lanes } => push(pc + 1, mask & !lanes),
        Flow::Brk { lanes } => push(pc + 1, mask & !lanes),
        _ => push(pc + 1, mask),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Flow;

    #[test]
    fn merged_outcomes_combine_the_lanes_of_each_part() {
        let a = Flow::Branch { target: 9, taken: 0b0011 };
        let b = Flow::Branch { target: 9, taken: 0b1000 };
        assert_eq!(a.merge(b), Flow::Branch { target: 9, taken: 0b1011 });
        // A part whose lanes were all predicated off continues at pc + 1 (the identity).
        assert_eq!(Flow::Next.merge(Flow::Exit { lanes: 0b100 }), Flow::Exit { lanes: 0b100 });
        assert_eq!(Flow::Exit { lanes: 0b1 }.merge(Flow::Next), Flow::Exit { lanes: 0b1 });
        let m = Flow::Multi(vec![(3, 0b01)].into()).merge(Flow::Multi(vec![(3, 0b10), (5, 0b100)].into()));
        assert_eq!(m, Flow::Multi(vec![(3, 0b11), (5, 0b100)].into()));
        let r = Flow::Return { lanes: 0b1, to: vec![(4, 0b1)].into() }
            .merge(Flow::Return { lanes: 0b10, to: vec![(4, 0b10)].into() });
        assert_eq!(r, Flow::Return { lanes: 0b11, to: vec![(4, 0b11)].into() });
        assert_eq!(
            Flow::Call { target: 7, callers: 1 }.merge(Flow::Call { target: 7, callers: 4 }),
            Flow::Call { target: 7, callers: 5 }
        );
    }
}
