//! Why a module cannot be decoded: [`DecodeError`] for the module, [`Unsupported`] for one instruction.

/// Why a module cannot be turned into a program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// No kernel of that name.
    #[error("no kernel named `{name}` in the module (kernels: {available})")]
    NoSuchKernel {
        /// The requested name.
        name: String,
        /// The kernels that exist.
        available: String,
    },
    /// The module has no kernel at all.
    #[error("the module defines no kernel (.entry with a body)")]
    NoKernel,
    /// The module has several kernels and none was chosen.
    #[error("the module defines several kernels ({available}); choose one with --kernel")]
    AmbiguousKernel {
        /// The kernels that exist.
        available: String,
    },
    /// `--kernel NAME` names several kernels (overloads or templates with the same name).
    #[error("`{name}` names several kernels ({candidates}); give the full signature or the mangled name")]
    AmbiguousName {
        /// The requested name.
        name: String,
        /// The kernels it matches.
        candidates: String,
    },
    /// A variable initializer that cannot be laid out.
    #[error("cannot lay out variable `{name}`: {why}")]
    BadVariable {
        /// The variable.
        name: String,
        /// The reason.
        why: String,
    },
}

/// Why one instruction cannot be decoded. It is not an error of the load: the instruction decodes to
/// [`Op::Unsupported`](crate::program::Op::Unsupported) with this message, which traps only if a thread executes it.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum Unsupported {
    /// A form the decoder rejects, described in a fixed phrase ("setp needs a comparison").
    #[error("{0}")]
    Form(&'static str),
    /// An operand of the wrong kind.
    #[error("expected {expected}, found {found}")]
    Operand {
        /// What the instruction needs there.
        expected: &'static str,
        /// What it has (the IR operand).
        found: String,
    },
    /// An instruction without the type it needs.
    #[error("`{0}` needs a type")]
    NeedsType(String),
    /// An instruction with too few operands.
    #[error("`{opcode}` needs {n} operands")]
    NeedsOperands {
        /// The opcode.
        opcode: String,
        /// Operands it needs.
        n: usize,
    },
    /// A symbol used where it cannot be.
    #[error("symbol {symbol} used as {role}")]
    Symbol {
        /// The symbol (IR form).
        symbol: String,
        /// `a value`, `an address`.
        role: &'static str,
    },
    /// The address of a function without a body.
    #[error("address of function `{0}` without a body")]
    BodilessAddress(String),
    /// An atomic operation on a type the executor does not have.
    #[error("atom on .{0} is not supported")]
    AtomType(&'static str),
    /// An opcode the IR does not know.
    #[error("unknown instruction `{0}`")]
    UnknownOpcode(String),
    /// A known opcode with modifiers or types the executor does not implement.
    #[error("`{0}` with these modifiers/types is not supported")]
    Modifiers(String),
    /// A call to a function without a body.
    #[error("call to `{0}`, which has no body (external functions are not supported)")]
    ExternalCall(String),
    /// A call whose arguments or return values do not match the callee.
    #[error("call to `{callee}` passes {args} arguments and {rets} return values; it takes {params} and {returns}")]
    CallArity {
        /// The callee.
        callee: String,
        /// Arguments passed.
        args: usize,
        /// Return values received.
        rets: usize,
        /// Parameters it takes.
        params: usize,
        /// Values it returns.
        returns: usize,
    },
}

impl From<&'static str> for Unsupported {
    fn from(s: &'static str) -> Unsupported {
        Unsupported::Form(s)
    }
}

pub(super) type DResult<T> = Result<T, Unsupported>;
