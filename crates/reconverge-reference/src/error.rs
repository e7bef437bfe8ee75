//! Why a reference run stops early: a typed error whose `Display` text is the message the run reports.

use reconverge_ir::{FuncId, ScalarType};

pub use crate::memory::Region;

/// Why a reference run stopped before every thread exited.
///
/// [`crate::RefResult::outcome`] classifies it: [`RefError::Deadlock`] is a `deadlock`, [`RefError::Limit`]
/// a `limit`, everything else an `error`. The `Display` text is the run's message: deadlocks start with
/// `deadlock:`, limits with `limit:`, and thread faults with the thread, function, instruction and source
/// line they happened at.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RefError {
    /// No thread of a resident CTA can run: every live one waits at a barrier, a warp-synchronous
    /// instruction or `activemask` that cannot complete.
    #[error("deadlock: no thread of block ({},{},{}) can run:\n{report}", .block[0], .block[1], .block[2])]
    Deadlock {
        /// The CTA that cannot make progress.
        block: [u32; 3],
        /// One line per group of waiting threads: how many, which (the first eight), what they wait for
        /// and where (at most sixteen groups).
        report: String,
    },
    /// A thread exceeded [`crate::RefOptions::max_thread_instructions`].
    #[error("limit: {at} executed {executed} instructions (the per-thread budget)")]
    Limit {
        /// The thread and where it stands (as in [`RefError::Thread`]).
        at: String,
        /// Instructions it executed.
        executed: u64,
    },
    /// The launch does not fit the kernel or the machine (geometry, warp size, arguments, `--global`s).
    #[error("{0}")]
    Launch(#[from] LaunchError),
    /// The module cannot be laid out for the kernel.
    #[error("{0}")]
    Module(#[from] ModuleError),
    /// A thread faulted at an instruction.
    #[error("{at}: {fault}")]
    Thread {
        /// The thread, its block, the function, the instruction position and text, and its source line.
        at: String,
        /// What went wrong.
        fault: ThreadFault,
    },
    /// A thread faulted where the interpreter does not name the thread (checks while returning from a
    /// call or computing a shuffle's source lane, and interpreter invariants); the text is the fault alone.
    #[error("{0}")]
    Fault(ThreadFault),
}

/// What went wrong while one thread executed an instruction.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ThreadFault {
    /// A load, store or atomic that is misaligned, out of bounds, or writes read-only memory.
    #[error("{kind} {region} access of {size} bytes at {addr:#x}{}", nearest_suffix(.nearest))]
    Memory {
        /// What is wrong with the access.
        kind: MemoryFaultKind,
        /// The memory it reached (after generic addresses are resolved).
        region: Region,
        /// The address (an offset for every region but device memory).
        addr: u64,
        /// Bytes accessed.
        size: u64,
        /// For device memory: the allocation nearest to the address and its range.
        nearest: Option<String>,
    },
    /// A call needs more local memory than `LaunchConfig::local_bytes` allows.
    #[error("local memory stack overflow calling `{callee}` (depth {depth}, {limit} bytes per thread)")]
    StackOverflow {
        /// The function being called.
        callee: String,
        /// Frames on the stack at the call.
        depth: usize,
        /// Local memory per thread.
        limit: u64,
    },
    /// A warp-synchronous instruction whose member mask does not contain the executing lane.
    #[error("the thread (lane {lane}) is not in its member mask {mask:#x}")]
    NotInMemberMask {
        /// The thread's lane.
        lane: u32,
        /// The member mask (restricted to the warp's lanes).
        mask: u64,
    },
    /// A barrier id outside `0..16`.
    #[error("barrier id {0} is not in 0..16")]
    BarrierId(u32),
    /// `trap` or `brkpt` executed.
    #[error("trap")]
    Trap,
    /// An instruction, type, operand or state space the reference does not implement.
    #[error("{0}")]
    Unsupported(String),
    /// Any other semantic error of the program: a missing operand or type, a call with the wrong arguments,
    /// a branch or index out of range, a lane that is not there, ...
    #[error("{0}")]
    Invalid(String),
}

/// What is wrong with a memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryFaultKind {
    /// The address is not a multiple of the access size.
    Misaligned,
    /// The access reaches outside the memory (or every device allocation).
    OutOfBounds,
    /// A store to the constant bank or the kernel parameter buffer.
    ReadOnly,
}

impl std::fmt::Display for MemoryFaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemoryFaultKind::Misaligned => "misaligned",
            MemoryFaultKind::OutOfBounds => "out-of-bounds",
            MemoryFaultKind::ReadOnly => "store to read-only",
        })
    }
}

fn nearest_suffix(nearest: &Option<String>) -> String {
    nearest.as_ref().map(|n| format!(" ({n})")).unwrap_or_default()
}

/// A launch the reference refuses before running any thread.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LaunchError {
    /// The warp size is not a power of two in `1..=64`.
    #[error("warp size {0} is not a power of two in 1..=64")]
    WarpSize(u32),
    /// A grid or block dimension is zero.
    #[error("grid and block dimensions must be at least 1")]
    EmptyGeometry,
    /// More than 1024 threads per CTA.
    #[error("{0} threads per block exceed 1024")]
    TooManyThreads(u32),
    /// The kernel's `.local` variables do not fit `LaunchConfig::local_bytes` (the value given).
    #[error("the kernel's .local variables exceed {0} bytes per thread")]
    LocalMemory(u32),
    /// The number of arguments differs from the kernel's parameters.
    #[error("kernel `{kernel}` takes {expected} arguments, {given} given")]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its parameters.
        expected: usize,
        /// Arguments given.
        given: usize,
    },
    /// A buffer argument for a parameter that cannot hold a 64-bit pointer.
    #[error("argument {index} is a buffer but parameter `{param}` is .{ty}, not a 64-bit pointer")]
    NotAPointer {
        /// The argument's position.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The parameter's type.
        ty: ScalarType,
    },
    /// A `--global` names no module variable.
    #[error("no module variable `{0}`")]
    UnknownGlobal(String),
    /// A number given for a variable wider than 8 bytes.
    #[error("`{name}` is {size} bytes; a number cannot fill it")]
    NumberDoesNotFill {
        /// The variable as named in the launch.
        name: String,
        /// Its size in bytes.
        size: u64,
    },
    /// A buffer larger than the variable it initializes.
    #[error("{len} bytes do not fit `{name}` ({size} bytes)")]
    BufferDoesNotFit {
        /// The variable as named in the launch.
        name: String,
        /// The buffer's bytes.
        len: usize,
        /// The variable's size in bytes.
        size: u64,
    },
    /// A `.global` variable whose bytes are not in device memory.
    #[error("the variable is not in device memory")]
    NotInDeviceMemory,
    /// A `--global` naming a variable in another state space.
    #[error("`{0}` is neither a .global nor a .const variable")]
    NotGlobalOrConst(String),
    /// A struct or pointer-into-a-buffer argument that does not fit its parameter.
    #[error(transparent)]
    Shape(#[from] reconverge_program::ArgShapeError),
}

/// A module the reference cannot lay out for a kernel.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ModuleError {
    /// The kernel id is not a function of the module.
    #[error("no function {0}")]
    NoFunction(FuncId),
    /// The function to launch is not an entry with a body.
    #[error("`{0}` is not a kernel with a body")]
    NotAKernel(String),
    /// A variable's size overflows.
    #[error("`{0}` is too large")]
    TooLarge(String),
    /// A variable larger than the reference lays out.
    #[error("`{name}` has {size} bytes; the reference lays out at most {max}")]
    VariableTooLarge {
        /// The variable.
        name: String,
        /// Its size in bytes.
        size: u64,
        /// The largest size laid out.
        max: u64,
    },
    /// A variable asking for an alignment above 64 KiB.
    #[error("`{name}` asks for an alignment of {alignment} bytes")]
    Alignment {
        /// The variable.
        name: String,
        /// Its alignment in bytes.
        alignment: u64,
    },
    /// A frame or state space larger than the reference lays out.
    #[error("{what} needs {size} bytes; the reference lays out at most {max}")]
    LayoutTooLarge {
        /// What is laid out (a function's frame, static shared memory, the constant bank, ...).
        what: String,
        /// Its size in bytes.
        size: u64,
        /// The largest size laid out.
        max: u64,
    },
    /// An initializer takes the address of a variable that has none.
    #[error("initializer uses the address of `{0}`")]
    InitializerAddress(String),
    /// An initializer uses a symbol other than a module variable or a function (its debug text).
    #[error("unsupported symbol {0} in an initializer")]
    InitializerSymbol(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_ir::EntityRef;

    /// Every message is the text the reference reported before it had typed errors.
    #[test]
    fn messages_are_unchanged() {
        let at = "thread (1,0,0) of block (0,0,0) in `k` at instruction 3 `trap;` (line 7)".to_string();
        let thread = |fault| RefError::Thread { at: at.clone(), fault };
        let cases: Vec<(RefError, String)> = vec![
            (
                RefError::Deadlock { block: [1, 2, 3], report: "  1 thread(s) (0,0,0) wait at barrier 0 in x".into() },
                "deadlock: no thread of block (1,2,3) can run:\n  1 thread(s) (0,0,0) wait at barrier 0 in x".into(),
            ),
            (
                RefError::Limit { at: at.clone(), executed: 5000 },
                format!("limit: {at} executed 5000 instructions (the per-thread budget)"),
            ),
            (thread(ThreadFault::Trap), format!("{at}: trap")),
            (
                thread(ThreadFault::Memory {
                    kind: MemoryFaultKind::OutOfBounds,
                    region: Region::Global,
                    addr: 0x1020,
                    size: 4,
                    nearest: Some("nearest allocation `a` is 0x1000..0x1020".into()),
                }),
                format!(
                    "{at}: out-of-bounds global access of 4 bytes at 0x1020 (nearest allocation `a` is 0x1000..0x1020)"
                ),
            ),
            (
                thread(ThreadFault::Memory {
                    kind: MemoryFaultKind::Misaligned,
                    region: Region::FrameParam,
                    addr: 2,
                    size: 8,
                    nearest: None,
                }),
                format!("{at}: misaligned parameter access of 8 bytes at 0x2"),
            ),
            (
                thread(ThreadFault::Memory {
                    kind: MemoryFaultKind::ReadOnly,
                    region: Region::KernelParam,
                    addr: 0,
                    size: 4,
                    nearest: None,
                }),
                format!("{at}: store to read-only kernel parameter access of 4 bytes at 0x0"),
            ),
            (
                thread(ThreadFault::StackOverflow { callee: "f".into(), depth: 3, limit: 1024 }),
                format!("{at}: local memory stack overflow calling `f` (depth 3, 1024 bytes per thread)"),
            ),
            (
                thread(ThreadFault::NotInMemberMask { lane: 5, mask: 0xf }),
                format!("{at}: the thread (lane 5) is not in its member mask 0xf"),
            ),
            (thread(ThreadFault::BarrierId(16)), format!("{at}: barrier id 16 is not in 0..16")),
            (
                thread(ThreadFault::Unsupported("`foo` is not supported".into())),
                format!("{at}: `foo` is not supported"),
            ),
            (RefError::Fault(ThreadFault::Invalid("caller lost its call".into())), "caller lost its call".into()),
            (LaunchError::WarpSize(3).into(), "warp size 3 is not a power of two in 1..=64".into()),
            (LaunchError::EmptyGeometry.into(), "grid and block dimensions must be at least 1".into()),
            (LaunchError::TooManyThreads(2048).into(), "2048 threads per block exceed 1024".into()),
            (
                LaunchError::LocalMemory(4096).into(),
                "the kernel's .local variables exceed 4096 bytes per thread".into(),
            ),
            (
                LaunchError::ArgumentCount { kernel: "k".into(), expected: 2, given: 1 }.into(),
                "kernel `k` takes 2 arguments, 1 given".into(),
            ),
            (
                LaunchError::NotAPointer { index: 1, param: "p".into(), ty: ScalarType::U32 }.into(),
                "argument 1 is a buffer but parameter `p` is .u32, not a 64-bit pointer".into(),
            ),
            (LaunchError::UnknownGlobal("g".into()).into(), "no module variable `g`".into()),
            (
                LaunchError::NumberDoesNotFill { name: "g".into(), size: 16 }.into(),
                "`g` is 16 bytes; a number cannot fill it".into(),
            ),
            (
                LaunchError::BufferDoesNotFit { name: "g".into(), len: 20, size: 16 }.into(),
                "20 bytes do not fit `g` (16 bytes)".into(),
            ),
            (LaunchError::NotInDeviceMemory.into(), "the variable is not in device memory".into()),
            (LaunchError::NotGlobalOrConst("g".into()).into(), "`g` is neither a .global nor a .const variable".into()),
            (
                LaunchError::Shape(reconverge_program::ArgShapeError::OffsetPastEnd { index: 2, offset: 9, len: 8 })
                    .into(),
                "argument 2: an offset of 9 bytes is past the end of the 8-byte buffer".into(),
            ),
            (ModuleError::NoFunction(FuncId::new(7)).into(), format!("no function {}", FuncId::new(7))),
            (ModuleError::NotAKernel("f".into()).into(), "`f` is not a kernel with a body".into()),
            (ModuleError::TooLarge("v".into()).into(), "`v` is too large".into()),
            (
                ModuleError::VariableTooLarge { name: "v".into(), size: 1 << 31, max: 1 << 30 }.into(),
                "`v` has 2147483648 bytes; the reference lays out at most 1073741824".into(),
            ),
            (
                ModuleError::Alignment { name: "v".into(), alignment: 1 << 17 }.into(),
                "`v` asks for an alignment of 131072 bytes".into(),
            ),
            (
                ModuleError::LayoutTooLarge { what: "the constant bank".into(), size: 1 << 31, max: 1 << 30 }.into(),
                "the constant bank needs 2147483648 bytes; the reference lays out at most 1073741824".into(),
            ),
            (ModuleError::InitializerAddress("v".into()).into(), "initializer uses the address of `v`".into()),
            (
                ModuleError::InitializerSymbol("Ret(0)".into()).into(),
                "unsupported symbol Ret(0) in an initializer".into(),
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want, "{e:?}");
        }
    }
}
