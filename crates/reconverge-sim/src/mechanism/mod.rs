//! Divergence mechanisms: who issues next, with which lanes, and where threads meet again.
//!
//! The core executes one instruction for an *issue group* (a pc and a lane mask) and reports what happened
//! as a [`Flow`]: which lanes branched where, called, returned, exited, or ran a reconvergence-stack
//! instruction. A mechanism keeps its own structure (a stack, a list of groups, ...) up to date from these
//! reports and decides the next group. Mechanisms never compute data; the core never decides
//! reconvergence.
//!
//! Mechanisms in this module are *per-warp*: one state per static warp ([`WarpMechanism`]). The
//! [`Mechanism`] enum is the closed set the command line chooses from; the simulator dispatches once
//! into generic code, so the hot loop has no dynamic dispatch.

mod none;
mod pdom;
mod ssy;

pub use none::NoReconvergence;
pub use pdom::PdomStack;
pub use ssy::SsyStack;

use crate::program::Program;
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
    /// An indirect branch: each group of lanes goes to its pc (lanes not listed go to `pc + 1`).
    Multi(SmallVec<[(Pc, LaneMask); 4]>),
    /// `callers` call the function at `target`; they return to `pc + 1`.
    Call {
        /// The callee's first pc.
        target: Pc,
        /// The calling lanes.
        callers: LaneMask,
    },
    /// `lanes` return from the current device function, to the return pcs listed (grouped).
    Return {
        /// The returning lanes.
        lanes: LaneMask,
        /// Their return pcs.
        to: SmallVec<[(Pc, LaneMask); 2]>,
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

/// A mechanism's failure: the program did something the mechanism cannot represent.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct MechError(pub String);

impl fmt::Display for MechError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One entry of a mechanism's structure, for traces and teaching.
#[derive(Clone, PartialEq, Eq, Debug, serde::Serialize)]
pub struct EntryView {
    /// Lanes of the entry.
    pub mask: LaneMask,
    /// Next pc of the entry.
    pub pc: Pc,
    /// Reconvergence pc of the entry ([`crate::PC_NONE`] if none).
    pub rpc: Pc,
    /// Entry kind (`div`, `ssy`, `pbk`, `cal`, `call`, `group`).
    pub kind: &'static str,
}

/// Context a mechanism may consult when it updates.
pub struct UpdateCtx<'a> {
    /// The program (for reconvergence points).
    pub prog: &'a Program,
    /// Live lanes of the warp after the instruction (exited lanes removed).
    pub live: LaneMask,
}

/// A per-warp divergence mechanism.
pub trait WarpMechanism: Sync {
    /// The per-warp structure.
    type State: Clone + fmt::Debug + Send;

    /// The name used on the command line and in statistics.
    fn name(&self) -> &'static str;

    /// What the structure is (a stack, or a list of paths), which names its size in the statistics.
    const STRUCTURE: crate::stats::Structure = crate::stats::Structure::Stack;

    /// How barriers count under this mechanism.
    fn barrier_mode(&self) -> BarrierMode {
        BarrierMode::Warp
    }

    /// The state of a warp whose `live` lanes start at `entry`.
    fn init(&self, entry: Pc, live: LaneMask) -> Self::State;

    /// The group to issue next: a pc and a non-empty mask of live lanes none of which is in `blocked`.
    /// `None` when nothing can issue now (every remaining lane is blocked, or the warp is done).
    fn select(&self, st: &mut Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)>;

    /// Updates the structure after the group (`pc`, `mask`) executed with outcome `flow`.
    fn update(
        &self,
        st: &mut Self::State,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &UpdateCtx<'_>,
    ) -> Result<(), MechError>;

    /// Extra cycles the warp stalls after this update (mechanism synchronisation or structure
    /// maintenance); charged by the timing model as "mechanism" stall cycles. None by default.
    fn stall_cycles(&self, _st: &Self::State, _flow: &Flow) -> u32 {
        0
    }

    /// The current size of the structure (stack depth, number of groups).
    fn depth(&self, st: &Self::State) -> usize;

    /// The structure, bottom first, for traces.
    fn entries(&self, st: &Self::State) -> Vec<EntryView>;
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
}

impl Mechanism {
    /// Every mechanism.
    pub const ALL: [Mechanism; 3] = [Mechanism::Pdom, Mechanism::Ssy, Mechanism::None];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Pdom => "pdom",
            Mechanism::Ssy => "ssy",
            Mechanism::None => "none",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(s: &str) -> Option<Mechanism> {
        Mechanism::ALL.into_iter().find(|m| m.name() == s)
    }

    /// Whether the program must first go through the SSY pass.
    pub fn needs_ssy_pass(self) -> bool {
        self == Mechanism::Ssy
    }
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
            let mut sorted = groups.clone();
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
            for (p, m) in to {
                push(*p, mask & m);
            }
        }
        Flow::Exit { lanes } => push(pc + 1, mask & !lanes),
        Flow::Brk { lanes } => push(pc + 1, mask & !lanes),
        _ => push(pc + 1, mask),
    }
    out
}
