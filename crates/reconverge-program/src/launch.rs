//! Launch configuration and kernel arguments.

use crate::error::{LaunchError, OutOfMemory, ValueError, VariableUse};
use crate::program::Program;
use std::fmt;
use std::str::FromStr;

/// Element types of argument buffers (`.npy` dtypes).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Dtype {
    /// `i8`
    I8,
    /// `u8`
    U8,
    /// `i16`
    I16,
    /// `u16`
    U16,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl Dtype {
    /// Every dtype.
    pub const ALL: [Dtype; 10] = [
        Dtype::I8,
        Dtype::U8,
        Dtype::I16,
        Dtype::U16,
        Dtype::I32,
        Dtype::U32,
        Dtype::I64,
        Dtype::U64,
        Dtype::F32,
        Dtype::F64,
    ];

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::I8 | Dtype::U8 => 1,
            Dtype::I16 | Dtype::U16 => 2,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 4,
            Dtype::I64 | Dtype::U64 | Dtype::F64 => 8,
        }
    }

    /// The short name (`i32`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::I8 => "i8",
            Dtype::U8 => "u8",
            Dtype::I16 => "i16",
            Dtype::U16 => "u16",
            Dtype::I32 => "i32",
            Dtype::U32 => "u32",
            Dtype::I64 => "i64",
            Dtype::U64 => "u64",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    /// Whether the dtype is floating point.
    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F64)
    }

    /// Whether the dtype is a signed integer.
    pub fn is_signed(self) -> bool {
        matches!(self, Dtype::I8 | Dtype::I16 | Dtype::I32 | Dtype::I64)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Dtype {
    type Err = ValueError;
    fn from_str(s: &str) -> Result<Dtype, ValueError> {
        Dtype::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| ValueError::UnknownDtype(s.to_string()))
    }
}

/// A typed host buffer (the contents of a `.npy` file or a zero-filled argument).
#[derive(Clone, PartialEq, Debug)]
pub struct Buffer {
    /// Element type.
    pub dtype: Dtype,
    /// Raw little-endian bytes.
    pub bytes: Vec<u8>,
}

impl Buffer {
    /// A zero-filled buffer of `len` elements.
    pub fn zeros(dtype: Dtype, len: usize) -> Buffer {
        Buffer { dtype, bytes: vec![0; len * dtype.size()] }
    }

    /// A zero-filled buffer of `len` elements, or [`OutOfMemory`] when the host cannot provide it (instead
    /// of aborting the process).
    pub fn try_zeros(dtype: Dtype, len: usize) -> Result<Buffer, OutOfMemory> {
        let n = len
            .checked_mul(dtype.size())
            .ok_or(OutOfMemory { what: format!("a buffer of {len} {} elements", dtype.name()), bytes: u64::MAX })?;
        let bytes = crate::error::try_zeros(n, || format!("a buffer of {len} {} elements", dtype.name()))?;
        Ok(Buffer { dtype, bytes })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.dtype.size()
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i` as raw bits.
    pub fn bits(&self, i: usize) -> u64 {
        let s = self.dtype.size();
        crate::types::read_le(&self.bytes[i * s..(i + 1) * s])
    }

    /// Element `i` formatted for humans.
    pub fn format(&self, i: usize) -> String {
        let b = self.bits(i);
        match self.dtype {
            Dtype::I8 => (b as i8).to_string(),
            Dtype::I16 => (b as i16).to_string(),
            Dtype::I32 => (b as i32).to_string(),
            Dtype::I64 => (b as i64).to_string(),
            Dtype::F32 => format!("{:?}", f32::from_bits(b as u32)),
            Dtype::F64 => format!("{:?}", f64::from_bits(b)),
            _ => b.to_string(),
        }
    }
}

/// The arguments of a launch as a driver receives them: borrowed (the device copies every buffer, so the
/// caller's stay as they were) or owned (the device takes the buffers over: no copy, so a launch with
/// large buffers holds them once). `&args`, `&args[..]` and `args` all convert.
#[derive(Debug)]
pub enum LaunchArgs<'a> {
    /// The caller keeps the arguments.
    Borrowed(&'a [Arg]),
    /// The launch takes them.
    Owned(Vec<Arg>),
}

impl LaunchArgs<'_> {
    /// The arguments.
    pub fn as_slice(&self) -> &[Arg] {
        match self {
            LaunchArgs::Borrowed(a) => a,
            LaunchArgs::Owned(a) => a,
        }
    }

    /// Whether the buffers are copied (the caller keeps its own).
    pub fn copies(&self) -> bool {
        matches!(self, LaunchArgs::Borrowed(_))
    }
}

impl<'a> From<&'a [Arg]> for LaunchArgs<'a> {
    fn from(a: &'a [Arg]) -> Self {
        LaunchArgs::Borrowed(a)
    }
}

impl<'a> From<&'a Vec<Arg>> for LaunchArgs<'a> {
    fn from(a: &'a Vec<Arg>) -> Self {
        LaunchArgs::Borrowed(a)
    }
}

impl From<Vec<Arg>> for LaunchArgs<'_> {
    fn from(a: Vec<Arg>) -> Self {
        LaunchArgs::Owned(a)
    }
}

/// One kernel argument.
#[derive(Clone, PartialEq, Debug)]
pub enum Arg {
    /// A scalar, as the bits of the parameter's type.
    Scalar(u64),
    /// A device buffer; its address is passed.
    Buffer(Buffer),
    /// A pointer into a device buffer (`d_b + 1` in CUDA): the whole buffer is allocated and its address
    /// plus `offset` bytes is passed; its final contents are the whole buffer.
    BufferAt {
        /// The buffer.
        buffer: Buffer,
        /// Bytes past the buffer's start (at most its length).
        offset: u64,
    },
    /// A struct passed by value: its bytes fill the parameter, with the addresses of the buffers its
    /// pointer fields point into ([`crate::StructArg`]).
    Struct(crate::StructArg),
}

impl Arg {
    /// The buffer whose address the argument passes (a buffer, or a pointer into one).
    pub fn buffer(&self) -> Option<&Buffer> {
        match self {
            Arg::Buffer(b) | Arg::BufferAt { buffer: b, .. } => Some(b),
            Arg::Scalar(_) | Arg::Struct(_) => None,
        }
    }

    /// Bytes of device memory the argument's buffers take (its own buffer, or a struct's pointed-to
    /// buffers).
    pub fn buffer_bytes(&self) -> u64 {
        match self {
            Arg::Struct(s) => s.buffer_bytes(),
            a => a.buffer().map_or(0, |b| b.bytes.len() as u64),
        }
    }
}

/// Parses a scalar argument for a parameter of PTX type `ty` (decimal, hex, or float literal).
pub fn parse_scalar(text: &str, ty: reconverge_ir::ScalarType) -> Result<u64, ValueError> {
    use reconverge_ir::ScalarType as T;
    let int = |t: &str| -> Result<i128, ValueError> {
        let t = t.trim();
        let (neg, body) = match t.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, t),
        };
        let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            i128::from_str_radix(h, 16)
        } else {
            body.parse::<i128>()
        }
        .map_err(|_| ValueError::NotAnInteger(text.to_string()))?;
        Ok(if neg { -v } else { v })
    };
    let bits = ty.bits();
    match ty {
        T::F32 => {
            text.trim().parse::<f32>().map(|f| f.to_bits() as u64).map_err(|_| ValueError::NotANumber(text.to_string()))
        }
        T::F64 => text.trim().parse::<f64>().map(|f| f.to_bits()).map_err(|_| ValueError::NotANumber(text.to_string())),
        _ if ty.is_integer() || ty.is_bits() => {
            let v = int(text)?;
            let (lo, hi) = if ty.is_signed() {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << bits) - 1)
            };
            if v < lo || v > hi {
                return Err(ValueError::OutOfRange { text: text.to_string(), ty: ty.as_str() });
            }
            Ok((v as u64) & crate::types::full_mask(bits))
        }
        _ => Err(ValueError::UnsupportedType(ty.as_str())),
    }
}

/// A module variable set before the launch (`--global NAME=VALUE` on the command line).
#[derive(Clone, PartialEq, Debug)]
pub struct GlobalInit {
    /// The variable's name (as in the PTX, or its demangled name).
    pub name: String,
    /// A scalar (written into the variable) or a buffer: for a 64-bit scalar variable (a `__device__`
    /// pointer) the buffer is allocated in device memory and its address stored; for any other variable the
    /// buffer's bytes fill the variable.
    pub value: Arg,
}

/// How a kernel is launched: its geometry, its memory per CTA and per thread, and the module variables set
/// before it and read back after it; with the limits of the run ([`RunLimits`]) and the host's options
/// ([`HostOptions`]), each a concern of its own.
#[derive(Clone, Debug)]
pub struct LaunchConfig {
    /// Grid dimensions (CTAs).
    pub grid: [u32; 3],
    /// CTA dimensions (threads).
    pub block: [u32; 3],
    /// Threads per warp (a power of two, 1..=64).
    pub warp_size: u32,
    /// Dynamic shared memory per CTA, in bytes.
    pub dynamic_shared: u32,
    /// Local memory per thread (the call stack), in bytes.
    pub local_bytes: u32,
    /// Module `.global`/`.const` variables set before the launch.
    pub globals: Vec<GlobalInit>,
    /// Module variables whose final contents the run returns (the run's `globals`).
    pub dump_globals: Vec<String>,
    /// When the run stops or is refused: instructions, livelock, memory, resident CTAs.
    pub limits: RunLimits,
    /// How the host runs it: cancellation and native compilation (never a result).
    pub host: HostOptions,
}

/// The limits of a run: what stops it (exit 4, a livelock) and what it may hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunLimits {
    /// Stop after this many warp instructions (exit 4).
    pub max_instructions: Option<u64>,
    /// CTAs resident at once in functional mode (more start as others finish).
    pub max_resident_ctas: u32,
    /// Warp instructions without any change of register or memory before a livelock is declared (at
    /// least [`MIN_LIVELOCK_WINDOW`]).
    pub livelock_window: u64,
    /// The most memory the launch may use, in bytes (argument buffers and the device's copies of them,
    /// module variables, resident CTAs, the timing model's own structures); a larger launch is rejected
    /// before it allocates anything.
    pub max_memory: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max_instructions: None,
            max_resident_ctas: 64,
            livelock_window: 100_000,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// How the host runs a launch: options that change the speed or stop the run, never a result.
#[derive(Clone, Debug, Default)]
pub struct HostOptions {
    /// Set by another thread to stop the run (Ctrl-C in Python): the drivers look at it between rounds
    /// of issue (functional) or epochs (timed) and stop as interrupted.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// When functional and timed runs compile straight-line segments of pure lane instructions to native
    /// code (`--no-jit`: never). Results, statistics and cycles are the same under every policy; only the
    /// speed differs.
    pub jit: JitPolicy,
}

impl HostOptions {
    /// Whether another thread asked the run to stop ([`HostOptions::cancel`]).
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// When a straight-line segment of pure lane instructions is compiled to native code: in functional runs,
/// the straight-line runs execute it; in timed runs, the pure lane instructions a warp issued execute
/// through it when their registers are next needed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum JitPolicy {
    /// Never: the interpreter executes every instruction (`--no-jit`).
    Off,
    /// Once runs have reached the segment a few dozen times, so that compiling pays for itself (the
    /// default).
    #[default]
    Hot,
    /// The first time a run reaches it (the differential tests: every segment runs compiled).
    Always,
}

/// The smallest livelock window: a correct kernel may well run a few thousand warp instructions that
/// change nothing (a loop of uniform branches, a spin on a flag another CTA sets).
pub const MIN_LIVELOCK_WINDOW: u64 = 1000;

/// The default memory limit of a launch (the command line uses half the machine's memory instead).
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

/// The memory limit front ends use when none is given: half of the machine's memory, from the text of
/// `/proc/meminfo` (which the caller reads), or [`DEFAULT_MAX_MEMORY`] without it.
pub fn half_of_memory(meminfo: Option<&str>) -> u64 {
    meminfo
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib.saturating_mul(1024) / 2)
        })
        .unwrap_or(DEFAULT_MAX_MEMORY)
}

/// A size in bytes as front ends take it (`--max-memory`, `RECONVERGE_MAX_MEMORY`): `1000`, `64K`, `512M`,
/// `4G`, `1T` (powers of 1024, either case); `None` unless it is a positive size that fits in 64 bits.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) => match c.to_ascii_lowercase() {
            'k' => (&t[..i], 10),
            'm' => (&t[..i], 20),
            'g' => (&t[..i], 30),
            't' => (&t[..i], 40),
            _ => (t, 0),
        },
        None => (t, 0),
    };
    num.parse::<u64>().ok().and_then(|n| n.checked_mul(1u64 << shift)).filter(|&n| n > 0)
}

/// The warp-instruction limit front ends use when none is given (`--max-instructions`,
/// `RECONVERGE_MAX_INSTRUCTIONS`): a billion, about a minute of functional simulation.
pub const DEFAULT_MAX_INSTRUCTIONS: u64 = 1_000_000_000;

/// A front end's warp-instruction limit as a launch takes it: 0 means no limit (one meaning for every
/// command and the runtime's variable).
pub fn instruction_limit(n: u64) -> Option<u64> {
    (n > 0).then_some(n)
}

/// Whether `w` threads make a warp the simulator runs: a power of two from 1 to 64.
pub fn is_warp_size(w: u64) -> bool {
    (1..=64).contains(&w) && w.is_power_of_two()
}

/// CUDA's grid limits (x, y, z).
pub const MAX_GRID: [u64; 3] = [(1 << 31) - 1, 65535, 65535];

/// CUDA's block limits (x, y, z).
pub const MAX_BLOCK: [u64; 3] = [1024, 1024, 64];

/// CUDA's limit on the threads of one block.
pub const MAX_THREADS_PER_BLOCK: u64 = 1024;

impl Default for LaunchConfig {
    fn default() -> Self {
        LaunchConfig {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            warp_size: 32,
            dynamic_shared: 0,
            local_bytes: 64 * 1024,
            globals: Vec::new(),
            dump_globals: Vec::new(),
            limits: RunLimits::default(),
            host: HostOptions::default(),
        }
    }
}

impl LaunchConfig {
    /// Whether another thread asked the run to stop ([`HostOptions::cancel`]).
    #[inline]
    pub fn cancelled(&self) -> bool {
        self.host.cancelled()
    }

    /// Threads per CTA (valid after [`LaunchConfig::validate`]: at most 1024).
    pub fn threads_per_cta(&self) -> u32 {
        self.threads_per_cta_u64().min(u32::MAX as u64) as u32
    }

    /// Threads per CTA, without overflow for any block dimensions.
    pub fn threads_per_cta_u64(&self) -> u64 {
        self.block.iter().map(|&b| b as u64).product()
    }

    /// Number of CTAs (saturating; [`LaunchConfig::validate`] bounds it).
    pub fn num_ctas(&self) -> u64 {
        self.grid.iter().fold(1u64, |a, &g| a.saturating_mul(g as u64))
    }

    /// Checks the geometry, the warp size, the livelock window and the variables to read back.
    pub fn validate(&self, prog: &Program) -> Result<(), LaunchError> {
        if !is_warp_size(self.warp_size.into()) {
            return Err(LaunchError::WarpSize(self.warp_size));
        }
        if self.grid.contains(&0) || self.block.contains(&0) {
            return Err(LaunchError::ZeroDimension);
        }
        if self.threads_per_cta_u64() > MAX_THREADS_PER_BLOCK {
            return Err(LaunchError::BlockTooLarge { block: self.block, threads: self.threads_per_cta_u64() });
        }
        for (d, (&g, max)) in self.grid.iter().zip(MAX_GRID).enumerate() {
            if g as u64 > max {
                return Err(LaunchError::GridTooLarge { axis: ["x", "y", "z"][d], size: g, max });
            }
        }
        if self.limits.livelock_window < MIN_LIVELOCK_WINDOW {
            return Err(LaunchError::LivelockWindow(self.limits.livelock_window));
        }
        for n in &self.dump_globals {
            prog.find_variable(n, VariableUse::Dump)?;
        }
        if u64::from(self.block[2]) > MAX_BLOCK[2] {
            return Err(LaunchError::BlockDepth(self.block[2]));
        }
        Ok(())
    }
}

#[cfg(test)]
mod front_end_tests {
    use super::*;

    #[test]
    fn sizes_take_binary_suffixes_and_refuse_zero_and_overflow() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size(" 64k "), Some(64 << 10));
        assert_eq!(parse_size("100M"), Some(100 << 20));
        assert_eq!(parse_size("4G"), Some(4 << 30));
        assert_eq!(parse_size("1t"), Some(1 << 40));
        for bad in ["", "0", "0M", "M", "1.5G", "-1", "4GB", "99999999999T"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn zero_instructions_is_no_limit_and_warp_sizes_are_powers_of_two() {
        assert_eq!(instruction_limit(0), None);
        assert_eq!(instruction_limit(5), Some(5));
        assert!([1, 2, 4, 8, 16, 32, 64].iter().all(|&w| is_warp_size(w)));
        assert!([0, 3, 48, 128, u64::MAX].iter().all(|&w| !is_warp_size(w)));
    }
}
