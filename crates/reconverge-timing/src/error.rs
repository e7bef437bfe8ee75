//! Errors of the timing model's configuration: a structure that cannot be built as described
//! ([`StructureError`]) and a configuration that is not usable ([`ConfigError`]). Messages name the
//! configuration key at fault (as in `docs/configuration.md`), never a command-line flag.

/// A hardware structure (cache, MSHR file, bandwidth limiter, L2) that cannot be built as described.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum StructureError {
    /// A cache line size that is not a power of two.
    #[error("cache line size {0} bytes is not a power of two")]
    LineSize(u32),
    /// A cache with no ways.
    #[error("cache associativity (ways) must be at least 1")]
    NoWays,
    /// A cache smaller than one set.
    #[error("cache of {size} bytes has no set: it is smaller than one set ({ways} ways × {line} bytes)")]
    NoSet {
        /// Cache size in bytes.
        size: u64,
        /// Ways.
        ways: u32,
        /// Line size in bytes.
        line: u32,
    },
    /// A cache size that is not a multiple of a set.
    #[error("cache size {size} bytes is not a multiple of ways × line size ({ways} × {line} bytes)")]
    PartialSet {
        /// Cache size in bytes.
        size: u64,
        /// Ways.
        ways: u32,
        /// Line size in bytes.
        line: u32,
    },
    /// A number of sets that is not a power of two.
    #[error("cache of {size} bytes with {ways} ways of {line}-byte lines has {sets} sets, not a power of two")]
    Sets {
        /// Cache size in bytes.
        size: u64,
        /// Ways.
        ways: u32,
        /// Line size in bytes.
        line: u32,
        /// The resulting number of sets.
        sets: u64,
    },
    /// More lines than the model builds.
    #[error("cache of {lines} lines is too large (at most {max})")]
    TooManyLines {
        /// Lines asked for.
        lines: u64,
        /// The most the model builds.
        max: u64,
    },
    /// A bandwidth of 0 units or with a 0 denominator.
    #[error("bandwidth {num}/{den} units per cycle: numerator and denominator must be > 0")]
    Bandwidth {
        /// Units.
        num: u64,
        /// Per this many cycles.
        den: u64,
    },
    /// An MSHR file without entries.
    #[error("MSHR capacity must be at least 1")]
    MshrCapacity,
    /// An MSHR entry that cannot hold its own request.
    #[error("MSHR max_merge must be at least 1 (the allocating request itself)")]
    MshrMerge,
    /// An MSHR file larger than the model builds.
    #[error("MSHR of {capacity} entries × {max_merge} waiters is too large (at most {max})")]
    MshrTooLarge {
        /// Entries.
        capacity: usize,
        /// Waiters per entry.
        max_merge: usize,
        /// The most waiter slots the model builds.
        max: usize,
    },
    /// An L2 sector size that does not divide its line.
    #[error("sector size {sector} bytes must be a power of two no larger than the {line}-byte line")]
    SectorSize {
        /// Sector size in bytes.
        sector: u32,
        /// Line size in bytes.
        line: u32,
    },
    /// More than 32 sectors per line.
    #[error("{line}-byte lines of {sector}-byte sectors have {sectors} sectors, more than 32")]
    TooManySectors {
        /// Line size in bytes.
        line: u32,
        /// Sector size in bytes.
        sector: u32,
        /// Sectors per line.
        sectors: u32,
    },
    /// An error in one part of a larger structure (`L2`, `L2 pipe`, `DRAM`).
    #[error("{part}: {error}")]
    In {
        /// The part.
        part: &'static str,
        /// What is wrong with it.
        error: Box<StructureError>,
    },
}

impl StructureError {
    /// This error, located in `part` of a larger structure.
    pub fn in_part(self, part: &'static str) -> StructureError {
        StructureError::In { part, error: Box::new(self) }
    }
}

/// A GPU configuration that cannot be used: bad TOML, an unknown preset, a key outside its range, or a
/// combination the model cannot build.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not TOML.
    #[error("invalid TOML: {0}")]
    Toml(toml::de::Error),
    /// `base` is not a string.
    #[error("`base` must be a preset name, found {0}")]
    Base(String),
    /// `base` names no preset.
    #[error("unknown base preset `{0}` (presets: {presets})", presets = crate::config::PRESETS.join(", "))]
    UnknownPreset(String),
    /// The merged table does not describe a configuration (an unknown key, a value of the wrong type).
    #[error("invalid configuration: {0}")]
    Invalid(toml::de::Error),
    /// A preset that cannot be written as TOML (a bug).
    #[error("cannot write the preset as TOML: {0}")]
    Serialize(toml::ser::Error),
    /// A numeric key outside its documented range.
    #[error("`{key}` = {value} is outside its range {least}..={most}")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// Its value.
        value: u64,
        /// The least value allowed.
        least: u64,
        /// The most.
        most: u64,
    },
    /// `sm.units` is not five counts with a load/store unit.
    #[error("`sm.units` lists 5 counts (int, float, double, sfu, load/store), with a load/store unit")]
    Units,
    /// A warp size that is not a power of two.
    #[error("`warp_size` = {0} is not a power of two in 1..=64")]
    WarpSize(u32),
    /// L1 sectors that do not divide the line.
    #[error("`l1.sector` = {sector} must divide `l1.line` = {line} into at most 32 sectors")]
    L1Sectors {
        /// `l1.sector`.
        sector: u32,
        /// `l1.line`.
        line: u32,
    },
    /// A structure that cannot be built (`l1`, `l2`, `frontend` icache, `constant_cache`).
    #[error("`{part}` geometry: {error}")]
    Geometry {
        /// The configuration table.
        part: &'static str,
        /// What is wrong.
        error: StructureError,
    },
    /// Instructions that do not tile an instruction-cache line.
    #[error("`frontend.inst_bytes` must divide `frontend.icache_line`")]
    InstBytes,
    /// An opcode initiation interval outside 1..=1000000.
    #[error("`opcode` initiation intervals must lie in 1..=1000000")]
    OpcodeInitiation,
    /// An opcode latency above 1000000.
    #[error("`opcode` latencies must lie in 0..=1000000")]
    OpcodeLatency,
    /// The same configuration given twice in one comparison.
    #[error("`{first}` and `{second}` are the same configuration: give it once")]
    Repeated {
        /// The first as given (a preset name or a file).
        first: String,
        /// The second.
        second: String,
    },
}
