//! Simulation errors: what stops a run, with the thread, pc and source location that caused it.

use crate::memory::{FaultKind, MemFault};
use crate::program::Space;
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
        /// The report: which threads wait where.
        report: String,
    },
    /// A configured limit was reached.
    Limit(RunLimit),
    /// The launch is malformed (arguments, geometry, module variables, limits).
    Launch(LaunchError),
    /// A driver broke the core's contract (a bug in reconverge, not in the kernel).
    Internal(&'static str),
    /// The caller stopped the run ([`reconverge_program::LaunchConfig::cancel`], Ctrl-C).
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
    /// The most warp instructions ([`reconverge_program::LaunchConfig::max_instructions`]).
    #[error("the instruction limit of {0} warp instructions")]
    Instructions(u64),
    /// The most cycles of a timed run.
    #[error("the cycle limit of {0} cycles")]
    Cycles(u64),
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
