//! The interface between the core and a mechanism: what an issued instruction did ([`Flow`]), the
//! [`Tracker`] trait and its issue groups, the mechanism's errors, structure entries for traces, and the
//! facts every mechanism declares about itself ([`Scope`], [`Pass`], [`BarrierMode`], [`Structure`]).

pub mod storage;
pub mod tracker;

pub use tracker::{
    by_pc, Agg, Blocked, Counter, CtaView, Delay, Group, LaneMap, MechanismLatencies, Peek, Position, PositionState,
    Ratio, Tracker, UpdateCtx,
};

use crate::types::{LaneMask, Pc};
use smallvec::SmallVec;

/// Declares a mechanism's counters once, as a list of `Variant = kind("json_name", "what it counts")`
/// (`kind`: `sum`, `max` or `cycles`, the [`Counter`] constructors): it generates a `Copy` enum whose
/// variants index the counters (`ctx.count(Variant, n)`) and its `COUNTERS` array in the same order, so a
/// counter's index and its name cannot disagree.
macro_rules! counters {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $($(#[$vmeta:meta])* $variant:ident = $kind:ident($key:literal, $doc:expr $(,)?)),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        #[repr(usize)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The counters, in index order.
            $vis const COUNTERS: &'static [$crate::interface::Counter] =
                &[$($crate::interface::Counter::$kind($key, $doc)),+];

            /// This counter's definition.
            #[allow(dead_code)]
            $vis const fn counter(self) -> &'static $crate::interface::Counter {
                &Self::COUNTERS[self as usize]
            }
        }

        impl From<$name> for usize {
            #[inline]
            fn from(c: $name) -> usize {
                c as usize
            }
        }
    };
}
pub(crate) use counters;

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
    #[inline]
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
    #[inline]
    pub fn merge(self, other: Flow) -> Flow {
        #[inline]
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
    Region(reconverge_transform::RegionPass),
}

impl Pass {
    /// The transformed module.
    #[inline]
    pub fn apply(self, module: &reconverge_ir::Module) -> reconverge_ir::Module {
        match self {
            Pass::Ssy => reconverge_transform::insert_ssy(module).0,
            Pass::Region(p) => reconverge_transform::insert_regions(module, p).0,
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
    /// Rounds of turns were issued to a mechanism that does not take turns ([`Tracker::ROUNDS`]).
    #[error("this mechanism does not issue rounds of turns")]
    NoRounds,
    /// A hardware structure (named) needed more entries than it has (its capacity): the model's
    /// sizing invariant does not hold.
    #[error("{0} overflowed its {1} entries")]
    Overflow(&'static str, u32),
}

/// What an update of a mechanism's structure returns: nothing, or the mechanism's failure.
pub type Done = Result<(), MechError>;

/// What an entry of a mechanism's structure is, for traces: each mechanism names its entries, and the
/// trace asks the kind what it needs ([`EntryKind::label`], [`EntryKind::waits`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EntryKind {
    /// a divergence entry of a reconvergence stack.
    Div,
    /// a call entry of a reconvergence stack.
    Call,
    /// an `ssy` entry of seed 001's explicit stack (a synchronisation point).
    Ssy,
    /// a `pbk` entry of seed 001's explicit stack (a loop's break point).
    Pbk,
    /// a call entry of seed 001's explicit stack.
    Cal,
    /// a group of threads at one pc.
    Group,
    /// threads waiting at a synchronisation point.
    Sync,
    /// threads waiting at a convergence barrier.
    Barrier,
    /// threads waiting at a fork/join region's join.
    Join,
    /// a reconvergence-table entry waiting for its paths (multi-path).
    Rt,
    /// a split of the split table (multi-path).
    Split,
    /// the first path slot (dual-path).
    SlotA,
    /// the second path slot (dual-path).
    SlotB,
    /// a dynamic warp (DWF's pool, a CTA-wide stack's warps).
    Warp,
    /// an entry of a CTA-wide stack (TBC, CAPRI).
    Cta,
    /// an entry of Simty's cold context table.
    Cct,
    /// Simty's hot context X.
    HctX,
    /// Simty's hot context Y.
    HctY,
    /// threads at one place of a per-thread-pc mechanism.
    Threads,
    /// a thread group of the stackless mechanisms.
    ThreadGroup,
    /// the running path of thread frontiers.
    Running,
    /// a path on the thread frontier.
    Frontier,
    /// the front (running) path of the breadth-first queue.
    Front,
    /// a queued path of the breadth-first queue.
    Queued,
    /// the active path of a depth-first list.
    Active,
    /// a saved path of a depth-first list.
    Saved,
    /// the head (running) path of a sorted list.
    Head,
    /// a path of a sorted list.
    Path,
    /// a path of Maven's second shift register (it took a back edge: `maven:2-stack`).
    BackEdge,
    /// the threads at the current execution position (`runner-up`).
    Current,
    /// the threads at the runner-up execution position (`runner-up`).
    RunnerUp,
}

impl EntryKind {
    /// The name a trace prints.
    #[inline]
    pub fn label(self) -> &'static str {
        match self {
            EntryKind::Div => "div",
            EntryKind::Call => "call",
            EntryKind::Ssy => "ssy",
            EntryKind::Pbk => "pbk",
            EntryKind::Cal => "cal",
            EntryKind::Group => "group",
            EntryKind::Sync => "sync",
            EntryKind::Barrier => "barrier",
            EntryKind::Join => "join",
            EntryKind::Rt => "rt",
            EntryKind::Split => "split",
            EntryKind::SlotA => "A",
            EntryKind::SlotB => "B",
            EntryKind::Warp => "warp",
            EntryKind::Cta => "cta",
            EntryKind::Cct => "cct",
            EntryKind::HctX => "hct x",
            EntryKind::HctY => "hct y",
            EntryKind::Threads => "threads",
            EntryKind::ThreadGroup => "thread group",
            EntryKind::Running => "running",
            EntryKind::Frontier => "frontier",
            EntryKind::Front => "front",
            EntryKind::Queued => "queued",
            EntryKind::Active => "active",
            EntryKind::Saved => "saved",
            EntryKind::Head => "head",
            EntryKind::Path => "path",
            EntryKind::BackEdge => "back edge",
            EntryKind::Current => "current",
            EntryKind::RunnerUp => "runner-up",
        }
    }

    /// Whether the entry holds threads waiting at a synchronisation point (not a path that can run).
    #[inline]
    pub fn waits(self) -> bool {
        matches!(
            self,
            EntryKind::Sync | EntryKind::Join | EntryKind::Ssy | EntryKind::Pbk | EntryKind::Barrier | EntryKind::Rt
        )
    }

    /// Whether a trace leaves the label out (the plain entries of a stack or group list).
    #[inline]
    pub fn unlabelled(self) -> bool {
        matches!(self, EntryKind::Div | EntryKind::Group)
    }
}

impl serde::Serialize for EntryKind {
    #[inline]
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// One entry of a mechanism's structure, for traces and teaching.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct EntryView {
    /// What the entry is.
    pub kind: EntryKind,
    /// Lanes of the entry: one mask for a per-warp structure, one per static warp of the CTA for a
    /// CTA-wide one.
    pub lanes: Vec<LaneMask>,
    /// Next pc of the entry.
    pub pc: Pc,
    /// Reconvergence pc of the entry ([`PC_NONE`](reconverge_program::types::PC_NONE) if none).
    pub rpc: Pc,
    /// Anything else the mechanism shows (`wcnt=2`, `occ=5`), empty if nothing.
    pub note: String,
}

impl EntryView {
    /// An entry of a per-warp structure.
    #[inline]
    pub fn warp(kind: EntryKind, mask: LaneMask, pc: Pc, rpc: Pc) -> EntryView {
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

/// Whether the active lanes of a branch went to more than one place.
#[inline]
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
#[inline]
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

/// What kind of structure a mechanism keeps, which decides the name its size is reported under.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub enum Structure {
    /// A stack of entries (`max_stack_depth`).
    #[default]
    Stack,
    /// A list (or set) of paths or thread groups (`max_paths`).
    Paths,
    /// A pool of warps per SM (`max_pool_warps`).
    Pool,
}
