//! Simulation errors: what stops a run, with the thread, pc and source location that caused it.

use crate::memory::{FaultKind, MemFault};
use crate::program::Space;
use crate::types::{lanes, LaneMask, Pc};
pub use reconverge_program::error::{try_copy, try_with_capacity, try_zeros, LaunchError, OutOfMemory};
use std::fmt;

/// Where in the kernel something happened.
#[derive(Clone, PartialEq, Eq, Debug, Default, serde::Serialize)]
pub struct Location {
    /// The kernel.
    pub kernel: String,
    /// Block index (x, y, z).
    pub block: [u32; 3],
    /// Thread index in the block (x, y, z), when one thread is concerned.
    pub thread: Option<[u32; 3]>,
    /// Program counter.
    pub pc: u32,
    /// The instruction's PTX text.
    pub inst: String,
    /// The PTX file.
    pub file: String,
    /// 1-based PTX line (0 if unknown).
    pub ptx_line: u32,
    /// CUDA source `file:line`, if the PTX has `.loc`.
    pub source: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}`, block ({},{},{})", self.kernel, self.block[0], self.block[1], self.block[2])?;
        if let Some(t) = self.thread {
            write!(f, ", thread ({},{},{})", t[0], t[1], t[2])?;
        }
        write!(f, ", pc {}", self.pc)?;
        if self.ptx_line > 0 {
            write!(f, " ({}:{})", self.file, self.ptx_line)?;
        }
        if let Some(s) = &self.source {
            write!(f, " [{s}]")?;
        }
        write!(f, ": `{}`", self.inst)
    }
}

/// Why a run stopped abnormally.
#[derive(Clone, PartialEq, Debug)]
pub enum SimError {
    /// A memory access outside every allocation, misaligned, or to read-only memory.
    Memory {
        /// The access.
        fault: MemFault,
        /// Where.
        at: Box<Location>,
        /// The nearest allocation, for the message.
        near: Option<String>,
    },
    /// An instruction the simulator cannot execute.
    Unsupported {
        /// What.
        what: String,
        /// Where.
        at: Box<Location>,
    },
    /// `trap` or an undefined operation (e.g. `brx.idx` out of range).
    Trap {
        /// What.
        what: String,
        /// Where.
        at: Box<Location>,
    },
    /// No thread can make progress (a SIMT deadlock, a barrier that never completes, a livelock).
    Deadlock {
        /// The report: why no thread progresses and which threads wait where (boxed: it is large and rare).
        report: Box<DeadlockReport>,
    },
    /// A configured limit was reached.
    Limit(RunLimit),
    /// The launch is malformed (arguments, geometry, module variables, limits).
    Launch(LaunchError),
    /// A driver broke the core's contract (a bug in reconverge, not in the kernel).
    Internal(&'static str),
    /// The caller stopped the run ([`reconverge_program::HostOptions::cancel`], Ctrl-C).
    Interrupted,
    /// The host could not allocate memory the run needs (the machine's memory or the process's limit is
    /// exhausted); nothing was aborted.
    OutOfMemory {
        /// What the memory was for.
        what: String,
        /// How many bytes were asked for.
        bytes: u64,
    },
}

/// A limit of the run that was reached.
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
pub enum RunLimit {
    /// The most warp instructions ([`reconverge_program::RunLimits::max_instructions`]).
    #[error("the instruction limit of {0} warp instructions")]
    Instructions(u64),
    /// The most cycles of a timed run.
    #[error("the cycle limit of {0} cycles")]
    Cycles(u64),
}

/// Why no thread of a run can make progress, with where the live threads are. Its `Display` is the report
/// the command line prints after `SIMT deadlock: `.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum DeadlockReport {
    /// No warp can issue: every live thread waits at a barrier or for threads that cannot arrive.
    Stall {
        /// The mechanism's name.
        mechanism: &'static str,
        /// Where the live threads are.
        live: LiveThreads,
    },
    /// A livelock: the threads issue, but nothing changes (the [`crate::core::Watchdog`]'s verdict).
    Livelock {
        /// The mechanism's name.
        mechanism: &'static str,
        /// Warp instructions since the last memory, barrier or thread change.
        quiet: u64,
        /// Warp instructions, the last of `quiet`, without any register or predicate change either.
        watched: u64,
        /// Where the live threads are.
        live: LiveThreads,
    },
    /// A warp-synchronous instruction waits for live member lanes that are not executing with it and,
    /// under the mechanism, can never join.
    MembersMissing {
        /// The static warp.
        warp: u32,
        /// The live member lanes that are missing.
        missing: LaneMask,
        /// The instruction's member mask.
        members: u64,
        /// The lanes that issued it.
        present: LaneMask,
        /// Where.
        at: Box<Location>,
    },
}

impl DeadlockReport {
    /// Whether this is a livelock (threads that spin forever) rather than threads that wait.
    pub fn livelock(&self) -> bool {
        matches!(self, DeadlockReport::Livelock { .. })
    }

    /// The groups of live threads the report lists (none for [`DeadlockReport::MembersMissing`]).
    pub fn groups(&self) -> &[WaitingGroup] {
        match self {
            DeadlockReport::Stall { live, .. } | DeadlockReport::Livelock { live, .. } => &live.groups,
            DeadlockReport::MembersMissing { .. } => &[],
        }
    }
}

impl fmt::Display for DeadlockReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeadlockReport::Stall { mechanism, live } => write!(
                f,
                "no warp can issue under `{mechanism}` (every live thread waits at a barrier or for threads \
                 that cannot arrive). Live threads:\n{live}"
            ),
            DeadlockReport::Livelock { mechanism, quiet, watched, live } => write!(
                f,
                "no thread changed any register or predicate in the last {watched} warp instructions under \
                 `{mechanism}`, nor any memory location, barrier or thread in the last {quiet}; every thread \
                 that issued repeats a state, so the threads spin forever. Live threads:\n{live}"
            ),
            DeadlockReport::MembersMissing { warp, missing, members, present, at } => {
                let missing_lanes: Vec<String> = lanes(*missing).map(|l| l.to_string()).collect();
                write!(
                    f,
                    "warp-synchronous instruction waits for lanes {} of warp {warp} which are not executing \
                     with it (membermask {members:#x}, issued {present:#x}); under this mechanism they can \
                     never join: {at}",
                    missing_lanes.join(",")
                )
            }
        }
    }
}

/// The live threads a deadlock report lists, one line per group.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct LiveThreads {
    /// The groups, SM by SM and CTA by CTA in the mechanism's order, up to the report's limit.
    pub groups: Vec<WaitingGroup>,
    /// How many `  ...` lines follow the groups: one for each SM that had groups past the limit.
    pub elided: usize,
}

impl LiveThreads {
    /// The number of lines the list prints (groups and `  ...` lines).
    pub fn lines(&self) -> usize {
        self.groups.len() + self.elided
    }
}

impl fmt::Display for LiveThreads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines = self.groups.iter().map(|g| format!("  {g}")).chain((0..self.elided).map(|_| "  ...".into()));
        write!(f, "{}", lines.collect::<Vec<String>>().join("\n"))
    }
}

/// A group of live threads of a deadlocked run: the lanes of one warp that are at the same pc in the same
/// state. Displayed as `block (x,y,z) warp W lanes L (first thread (a,b,c)) STATE at pc P in ...`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct WaitingGroup {
    /// The CTA's index in the grid.
    pub block: [u32; 3],
    /// The warp in the CTA.
    pub warp: u32,
    /// The lanes of the warp.
    pub lanes: LaneMask,
    /// The index in the CTA of the group's first thread (its lowest lane).
    pub first_thread: [u32; 3],
    /// What the threads do, in the mechanism's words ([`reconverge_mechanism::Position::state`]).
    pub state: reconverge_mechanism::PositionState,
    /// The pc they execute next.
    pub pc: Pc,
    /// Where that is: `pc P in FUNCTION `INSTRUCTION` (FILE:LINE)` ([`crate::program::Program::describe_pc`]).
    pub at: String,
}

impl WaitingGroup {
    /// The lanes as ranges: `0-3,8`.
    pub fn lane_ranges(&self) -> String {
        let mut parts = Vec::new();
        let mut it = lanes(self.lanes).peekable();
        while let Some(start) = it.next() {
            let mut end = start;
            while it.peek() == Some(&(end + 1)) {
                end = it.next().unwrap_or(end);
            }
            parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        }
        parts.join(",")
    }
}

impl fmt::Display for WaitingGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ([b0, b1, b2], [t0, t1, t2]) = (self.block, self.first_thread);
        write!(
            f,
            "block ({b0},{b1},{b2}) warp {} lanes {} (first thread ({t0},{t1},{t2})) {} at {}",
            self.warp,
            self.lane_ranges(),
            self.state,
            self.at
        )
    }
}

impl From<LaunchError> for SimError {
    fn from(e: LaunchError) -> SimError {
        SimError::Launch(e)
    }
}

impl From<OutOfMemory> for SimError {
    fn from(e: OutOfMemory) -> SimError {
        SimError::OutOfMemory { what: e.what, bytes: e.bytes }
    }
}

impl SimError {
    /// The process exit status for this error (the README's exit statuses): 2 invalid input or kernel fault,
    /// 3 deadlock, 4 limit.
    pub fn exit_code(&self) -> i32 {
        match self {
            SimError::Deadlock { .. } => 3,
            SimError::Limit(_) => 4,
            SimError::Interrupted => 130,
            _ => 2,
        }
    }

    /// The `outcome` statistic for this error.
    pub fn outcome(&self) -> &'static str {
        match self {
            SimError::Deadlock { .. } => "deadlock",
            SimError::Limit(_) => "limit",
            SimError::Interrupted => "interrupted",
            _ => "error",
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Memory { fault, at, near } => {
                let kind = match fault.kind {
                    FaultKind::OutOfBounds => "out-of-bounds",
                    FaultKind::Misaligned => "misaligned",
                    FaultKind::ReadOnly => "read-only",
                };
                let space = match fault.space {
                    Space::Global => "global",
                    Space::Shared => "shared",
                    Space::Local => "local",
                    Space::Const => "const",
                    Space::KernelParam => "param",
                    Space::Generic => "generic",
                };
                write!(f, "{kind} {}-byte {space} memory access at address {:#x} in {at}", fault.size, fault.addr)?;
                if let Some(n) = near {
                    write!(f, "\n  note: {n}")?;
                }
                Ok(())
            }
            SimError::Unsupported { what, at } => write!(f, "unsupported instruction in {at}: {what}"),
            SimError::Trap { what, at } => write!(f, "{what} in {at}"),
            SimError::Deadlock { report } => write!(f, "SIMT deadlock: {report}"),
            SimError::Limit(l) => write!(f, "limit reached: {l}"),
            SimError::Internal(what) => write!(f, "internal error: {what}"),
            SimError::Launch(e) => write!(f, "invalid launch: {e}"),
            SimError::Interrupted => write!(f, "interrupted"),
            SimError::OutOfMemory { what, bytes } => {
                write!(f, "out of memory: cannot allocate {bytes} bytes for {what}")
            }
        }
    }
}

impl std::error::Error for SimError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(warp: u32, lanes: LaneMask) -> WaitingGroup {
        WaitingGroup {
            block: [1, 0, 0],
            warp,
            lanes,
            first_thread: [32 * warp + lanes.trailing_zeros(), 0, 0],
            state: reconverge_mechanism::PositionState::AtBarrier,
            pc: 7,
            at: "pc 7 in k `bar.sync 0;` (k.cu:3)".into(),
        }
    }

    #[test]
    fn a_deadlock_report_renders_its_groups_and_elided_lines() {
        let live = LiveThreads { groups: vec![group(0, 0b1111_0001), group(1, 1 << 31)], elided: 2 };
        let e = SimError::Deadlock { report: Box::new(DeadlockReport::Stall { mechanism: "stack", live }) };
        assert_eq!(
            e.to_string(),
            "SIMT deadlock: no warp can issue under `stack` (every live thread waits at a barrier or for \
             threads that cannot arrive). Live threads:\n  block (1,0,0) warp 0 lanes 0,4-7 (first thread \
             (0,0,0)) waiting at a barrier at pc 7 in k `bar.sync 0;` (k.cu:3)\n  block (1,0,0) warp 1 lanes \
             31 (first thread (63,0,0)) waiting at a barrier at pc 7 in k `bar.sync 0;` (k.cu:3)\n  ...\n  ..."
        );
        let live = LiveThreads::default();
        let report = DeadlockReport::Livelock { mechanism: "its", quiet: 9, watched: 4, live };
        assert!(report.livelock() && report.groups().is_empty());
        assert_eq!(
            report.to_string(),
            "no thread changed any register or predicate in the last 4 warp instructions under `its`, nor any \
             memory location, barrier or thread in the last 9; every thread that issued repeats a state, so \
             the threads spin forever. Live threads:\n"
        );
        let at = Box::new(Location { kernel: "k".into(), inst: "shfl.sync".into(), ..Location::default() });
        let report = DeadlockReport::MembersMissing { warp: 2, missing: 0b1010, members: 0xff, present: 0xf5, at };
        assert_eq!(
            report.to_string(),
            "warp-synchronous instruction waits for lanes 1,3 of warp 2 which are not executing with it \
             (membermask 0xff, issued 0xf5); under this mechanism they can never join: kernel `k`, block \
             (0,0,0), pc 0: `shfl.sync`"
        );
    }
}
