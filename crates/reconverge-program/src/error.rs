//! Errors of a launch description: a malformed launch ([`LaunchError`]) and host memory that cannot be
//! had ([`OutOfMemory`]). They name the setting at fault, never a command-line flag: the command line and
//! the Python package render them in their own words.

use std::fmt;

/// The host could not allocate memory a launch needs (the machine's memory or the process's limit is
/// exhausted); nothing was aborted.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
#[error("out of memory: cannot allocate {bytes} bytes for {what}")]
pub struct OutOfMemory {
    /// What the memory was for.
    pub what: String,
    /// How many bytes were asked for.
    pub bytes: u64,
}

/// What a module variable named by a launch is for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum VariableUse {
    /// Set before the launch ([`crate::LaunchConfig::globals`]).
    Set,
    /// Read back after the launch ([`crate::LaunchConfig::dump_globals`]).
    Dump,
}

impl fmt::Display for VariableUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            VariableUse::Set => "to set",
            VariableUse::Dump => "to read back",
        })
    }
}

/// A launch that cannot run as described: geometry, arguments, module variables, limits.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum LaunchError {
    /// The warp size is not a power of two in 1..=64.
    #[error("warp size {0} is not a power of two in 1..=64")]
    WarpSize(u32),
    /// A grid or block dimension is 0.
    #[error("grid and block dimensions must be at least 1")]
    ZeroDimension,
    /// More than 1024 threads per CTA.
    #[error("block {}x{}x{} has {threads} threads; a block has at most 1024", block[0], block[1], block[2])]
    BlockTooLarge {
        /// The block dimensions.
        block: [u32; 3],
        /// Their product.
        threads: u64,
    },
    /// `block.z` above 64.
    #[error("block.z is {0}; it is at most 64")]
    BlockDepth(u32),
    /// A grid dimension above CUDA's limit ([`crate::launch::MAX_GRID`]).
    #[error("grid dimension {axis} is {size}; CUDA allows at most {max}")]
    GridTooLarge {
        /// `x`, `y` or `z`.
        axis: &'static str,
        /// The dimension asked for.
        size: u32,
        /// CUDA's limit.
        max: u64,
    },
    /// The livelock window is below [`crate::launch::MIN_LIVELOCK_WINDOW`].
    #[error(
        "the livelock window is {0} warp instructions; it must be at least {min} (a correct kernel can run that \
         many instructions without changing anything)",
        min = crate::launch::MIN_LIVELOCK_WINDOW
    )]
    LivelockWindow(u64),
    /// No `.global`/`.const` variable of that name.
    #[error(
        "module variable `{name}` ({purpose}): the module has no .global or .const variable of that name (variables: {})",
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )]
    UnknownVariable {
        /// The name asked for.
        name: String,
        /// Set or read back.
        purpose: VariableUse,
        /// The module's variables (display names).
        known: Vec<String>,
    },
    /// The (demangled) name matches several variables.
    #[error("module variable `{name}` ({purpose}): the name matches several variables; use the PTX name")]
    AmbiguousVariable {
        /// The name asked for.
        name: String,
        /// Set or read back.
        purpose: VariableUse,
    },
    /// A number given for a variable larger than 8 bytes.
    #[error("module variable `{name}` (to set): a number cannot fill a {size}-byte variable (give a buffer)")]
    NumberForLargeVariable {
        /// The variable.
        name: String,
        /// Its size in bytes.
        size: u64,
    },
    /// A buffer larger than the variable it fills.
    #[error("module variable `{name}` (to set): {bytes} bytes do not fit the {size}-byte variable")]
    BufferTooLargeForVariable {
        /// The variable.
        name: String,
        /// The buffer's size.
        bytes: usize,
        /// The variable's size.
        size: u64,
    },
    /// The number of arguments differs from the kernel's parameters.
    #[error("kernel `{kernel}` takes {} arguments ({}), {given} given", params.len(), params.join(", "))]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its parameters, as `name (.type)`.
        params: Vec<String>,
        /// Arguments given.
        given: usize,
    },
    /// A buffer passed for a parameter that is not a 64-bit pointer.
    #[error("argument {index} is a buffer but parameter `{param}` is .{ty} ({size} bytes), not a 64-bit pointer")]
    BufferForScalar {
        /// Argument index.
        index: usize,
        /// The parameter's name.
        param: String,
        /// Its PTX type.
        ty: &'static str,
        /// Its size in bytes.
        size: u32,
    },
    /// The launch needs more memory than the limit ([`crate::RunLimits::max_memory`]).
    #[error(
        "the launch needs at least {total} bytes ({}), more than the memory limit of {limit} bytes",
        parts.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    )]
    MemoryLimit {
        /// The estimate.
        total: u64,
        /// The estimate by part.
        parts: Vec<(&'static str, u64)>,
        /// The limit.
        limit: u64,
    },
    /// The machine model cannot hold the launch or is misconfigured (e.g. a CTA that fits no SM).
    #[error("{0}")]
    Machine(String),
    /// A struct or pointer-into-a-buffer argument that does not fit its parameter.
    #[error(transparent)]
    Shape(#[from] ArgShapeError),
}

/// A by-value struct ([`crate::StructArg`]) or a pointer into a buffer ([`crate::Arg::BufferAt`]) that
/// does not fit the kernel parameter it is passed for, or a struct that cannot be built.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum ArgShapeError {
    /// A struct whose size differs from the parameter's.
    #[error("argument {index}: the struct is {given} bytes but parameter `{param}` is {size} bytes")]
    StructSize {
        /// Argument index.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The parameter's size in bytes.
        size: u32,
        /// The struct's size in bytes.
        given: u64,
    },
    /// A struct that needs more alignment than the parameter has (its layout cannot be the kernel's).
    #[error(
        "argument {index}: the struct's fields need {given}-byte alignment but parameter `{param}` is aligned to \
         {align} bytes"
    )]
    StructAlign {
        /// Argument index.
        index: usize,
        /// The parameter's name.
        param: String,
        /// The parameter's alignment.
        align: u32,
        /// The struct's alignment (its largest field alignment).
        given: u64,
    },
    /// A pointer past the end of its buffer.
    #[error("argument {index}: an offset of {offset} bytes is past the end of the {len}-byte buffer")]
    OffsetPastEnd {
        /// Argument index.
        index: usize,
        /// The offset in bytes.
        offset: u64,
        /// The buffer's size in bytes.
        len: u64,
    },
    /// A struct larger than a parameter can be.
    #[error("a struct of {0} bytes is larger than a kernel parameter can be (4 GiB)")]
    StructTooLarge(u64),
    /// A struct, or a pointer into a buffer for a variable that is not a 64-bit scalar (a pointer), given
    /// for a module variable.
    #[error("module variable `{0}` (to set): a struct or a pointer into a buffer sets only a 64-bit pointer variable")]
    NotForVariable(String),
}

/// A value given as text (an argument, a dtype, a table geometry) that does not parse.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum ValueError {
    /// Not one of the buffer element types.
    #[error("unknown dtype `{0}` (expected one of i8 u8 i16 u16 i32 u32 i64 u64 f32 f64)")]
    UnknownDtype(String),
    /// Not an integer.
    #[error("`{0}` is not an integer")]
    NotAnInteger(String),
    /// Not a floating-point number.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// An integer outside the parameter type's range.
    #[error("`{text}` does not fit in .{ty}")]
    OutOfRange {
        /// The text.
        text: String,
        /// The PTX type.
        ty: &'static str,
    },
    /// A parameter type scalars cannot be given for.
    #[error("scalar arguments of type .{0} are not supported")]
    UnsupportedType(&'static str),
    /// A look-up table geometry that is not `ENTRIES[:WAYS]`.
    #[error("`{0}`: expected ENTRIES[:WAYS], e.g. 64:4")]
    TableSyntax(String),
    /// A look-up table associativity that is not a number.
    #[error("`{0}`: the associativity must be a number")]
    TableWays(String),
    /// Entries that do not split into sets of the ways.
    #[error("`{text}`: {entries} entries cannot be split into sets of {ways} ways")]
    TableSets {
        /// The text.
        text: String,
        /// Entries.
        entries: u32,
        /// Ways.
        ways: u32,
    },
    /// More entries than the model keeps.
    #[error("`{text}`: at most {max} entries")]
    TableSize {
        /// The text.
        text: String,
        /// The most entries.
        max: u32,
    },
}

/// An empty vector with room for `n` bytes, or [`OutOfMemory`].
pub fn try_with_capacity(n: usize, what: impl FnOnce() -> String) -> Result<Vec<u8>, OutOfMemory> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| OutOfMemory { what: what(), bytes: n as u64 })?;
    Ok(v)
}

/// A copy of `bytes` in memory of its own, or [`OutOfMemory`] when the host cannot provide it.
pub fn try_copy(bytes: &[u8], what: impl FnOnce() -> String) -> Result<Vec<u8>, OutOfMemory> {
    let mut v = try_with_capacity(bytes.len(), what)?;
    v.extend_from_slice(bytes);
    Ok(v)
}

/// `n` zero bytes, or [`OutOfMemory`].
pub fn try_zeros(n: usize, what: impl FnOnce() -> String) -> Result<Vec<u8>, OutOfMemory> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, 0);
    Ok(v)
}

/// The most characters of the user's own text (a file's line, an argument) an error message quotes.
pub const MAX_QUOTE: usize = 100;

/// `text` if it has at most [`MAX_QUOTE`] characters, else its first ones, an ellipsis and how long it is:
/// what an error message quotes of the user's text.
pub fn quote(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_QUOTE) {
        None => text.into(),
        Some((end, _)) => format!("{}… ({} characters)", &text[..end], text.chars().count()).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_setting_and_no_flag() {
        let e = LaunchError::UnknownVariable { name: "nope".into(), purpose: VariableUse::Dump, known: vec![] };
        let m = e.to_string();
        assert!(m.contains("`nope` (to read back)") && m.contains("variables: none"), "{m}");
        assert!(!m.contains("--"), "{m}");
        let e = LaunchError::MemoryLimit { total: 10, parts: vec![("buffers", 6), ("ctas", 4)], limit: 8 };
        assert_eq!(
            e.to_string(),
            "the launch needs at least 10 bytes (buffers 6, ctas 4), more than the memory limit of 8 bytes"
        );
    }

    #[test]
    fn an_impossible_allocation_is_an_error() {
        let e = try_zeros(usize::MAX, || "everything".into()).unwrap_err();
        assert_eq!(e, OutOfMemory { what: "everything".into(), bytes: usize::MAX as u64 });
    }
}
