//! Simulation errors: what stops a run, with the thread, pc and source location that caused it.

use crate::memory::{FaultKind, MemFault};
use crate::program::Space;
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
    Limit {
        /// Which limit and its value.
        what: String,
    },
    /// The launch is malformed (arguments, geometry).
    Launch(String),
    /// The caller stopped the run ([`crate::LaunchConfig::cancel`], Ctrl-C).
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

/// A copy of `bytes` in memory of its own, or [`SimError::OutOfMemory`] when the host cannot provide it.
pub fn try_copy(bytes: &[u8], what: impl FnOnce() -> String) -> Result<Vec<u8>, SimError> {
    let mut v = try_with_capacity(bytes.len(), what)?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// An empty vector with room for `n` bytes, or [`SimError::OutOfMemory`].
pub fn try_with_capacity(n: usize, what: impl FnOnce() -> String) -> Result<Vec<u8>, SimError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| SimError::OutOfMemory { what: what(), bytes: n as u64 })?;
    Ok(v)
}

/// `n` zero bytes, or [`SimError::OutOfMemory`].
pub fn try_zeros(n: usize, what: impl FnOnce() -> String) -> Result<Vec<u8>, SimError> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, 0);
    Ok(v)
}

impl SimError {
    /// The process exit status for this error (the README's exit statuses): 2 invalid input or kernel fault,
    /// 3 deadlock, 4 limit.
    pub fn exit_code(&self) -> i32 {
        match self {
            SimError::Deadlock { .. } => 3,
            SimError::Limit { .. } => 4,
            SimError::Interrupted => 130,
            _ => 2,
        }
    }

    /// The `outcome` statistic for this error.
    pub fn outcome(&self) -> &'static str {
        match self {
            SimError::Deadlock { .. } => "deadlock",
            SimError::Limit { .. } => "limit",
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
            SimError::Limit { what } => write!(f, "limit reached: {what}"),
            SimError::Launch(m) => write!(f, "invalid launch: {m}"),
            SimError::Interrupted => write!(f, "interrupted"),
            SimError::OutOfMemory { what, bytes } => {
                write!(f, "out of memory: cannot allocate {bytes} bytes for {what}")
            }
        }
    }
}

impl std::error::Error for SimError {}
