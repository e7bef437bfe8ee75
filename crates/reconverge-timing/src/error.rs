//! Errors of the timing model's configuration: a structure that cannot be built as described
//! ([`StructureError`]) and a configuration that is not usable ([`ConfigError`]). Messages name the
//! configuration keys at fault as a file writes them (`[l1] sector = 1`; `docs/configuration.md` lists
//! them), never a command-line flag, and quote the file's own text only in bounded excerpts.

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
    /// A DRAM address mapping that is not GPGPU-Sim's `dramid@N;` + 64 bits syntax.
    #[error("DRAM address mapping: {0}")]
    AddressMapping(String),
    /// DRAM bank parameters the model cannot build.
    #[error("DRAM banks: {0}")]
    DramTiming(String),
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
/// combination the model cannot build. Messages name the table and the key as the file writes them
/// (`[l1] sector = 1`) and quote the file's text only in bounded excerpts ([`MAX_QUOTE`] characters).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The text is not TOML.
    #[error("invalid TOML: {0}")]
    Toml(TomlError),
    /// `base` is not a string.
    #[error("`base` must be a preset name, found {}", quote(.0))]
    Base(String),
    /// `base` names no preset.
    #[error("unknown base preset `{}` (presets: {presets})", quote(.0), presets = crate::config::PRESETS.join(", "))]
    UnknownPreset(String),
    /// The merged table does not describe a configuration (an unknown key, a value of the wrong type).
    #[error("invalid configuration: {0}")]
    Invalid(TomlError),
    /// A preset that cannot be written as TOML (a bug).
    #[error("cannot write the preset as TOML: {0}")]
    Serialize(toml::ser::Error),
    /// A numeric key outside its documented range.
    #[error("{} is outside its range {least}..={most}", settings(&[(*key, *value)]))]
    OutOfRange {
        /// The key (`l1.sector`; `num_sms` at the top level).
        key: &'static str,
        /// Its value.
        value: u64,
        /// The least value allowed.
        least: u64,
        /// The most.
        most: u64,
    },
    /// `sm.units` is not five counts with a load/store unit.
    #[error("[sm] units: 5 counts (int, float, double, sfu, load/store) and optionally a sixth (tensor), with a load/store unit, or none")]
    Units,
    /// A warp size that is not a power of two.
    #[error("{}: not a power of two in 1..=64", settings(&[("warp_size", u64::from(*.0))]))]
    WarpSize(u32),
    /// A structure the model builds from these settings cannot be built (a cache geometry, the sectors of a
    /// line, the MSHR file): found when the configuration is read, never at a launch.
    #[error("{}: {what}: {error}", settings(.keys))]
    Structure {
        /// The settings at fault with their values (`l1.sector`, ...).
        keys: Vec<(&'static str, u64)>,
        /// What the model builds from them.
        what: &'static str,
        /// Why it cannot.
        error: StructureError,
    },
    /// An `[energy]` value that is negative or not finite (or an idle-lane fraction outside 0 to 1).
    #[error("`{0}` must be a finite energy or power of at least 0 (a fraction from 0 to 1 for idle_lane_fraction)")]
    Energy(&'static str),
    /// L2 lines shorter than the L1's (an L1 miss must fit one L2 line).
    #[error("{}: the L2's lines must be at least as long as the L1's", settings(&[("l1.line", u64::from(*l1)), ("l2.line", u64::from(*l2))]))]
    LineSizes {
        /// `l1.line`.
        l1: u32,
        /// `l2.line`.
        l2: u32,
    },
    /// Instructions that do not tile an instruction-cache line.
    #[error("[frontend] inst_bytes must divide icache_line")]
    InstBytes,
    /// An opcode initiation interval outside 1..=1000000.
    #[error("[opcode] initiation intervals must lie in 1..=1000000")]
    OpcodeInitiation,
    /// An opcode latency above 1000000.
    #[error("[opcode] latencies must lie in 0..=1000000")]
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

pub use reconverge_program::error::{quote, MAX_QUOTE};

/// A GPU configuration named by a preset or a TOML file that cannot be used ([`crate::GpuConfig::named`]).
#[derive(Debug, thiserror::Error)]
pub enum ConfigSourceError {
    /// Not a preset, and no file of that name can be read.
    #[error("`{name}` is neither a preset ({}) nor a readable file: {error}", crate::PRESETS.join(", "))]
    Unreadable {
        /// The value given.
        name: String,
        /// Why the file cannot be read.
        error: std::io::Error,
    },
    /// The file is not a usable configuration.
    #[error("{name}: {error}")]
    Invalid {
        /// The file's path.
        name: String,
        /// What is wrong with it.
        error: Box<ConfigError>,
    },
}

/// Settings as a configuration file writes them: `num_sms = 0`, `[l1] line = 32, sector = 1`,
/// `[l1] sector = 1, [l2] line = 128` (`keys` are dotted: `l1.sector`).
pub fn settings(keys: &[(&str, u64)]) -> String {
    let mut out = String::new();
    let mut table = None;
    for (i, (key, value)) in keys.iter().enumerate() {
        let (t, k) = key.split_once('.').map_or((None, *key), |(t, k)| (Some(t), k));
        if i > 0 {
            out.push_str(", ");
        }
        if t.is_some() && t != table {
            out.push_str(&format!("[{}] ", t.unwrap_or_default()));
        }
        table = t;
        out.push_str(&format!("{k} = {value}"));
    }
    out
}

/// A TOML error of a configuration: what is wrong and where. An error of the file's text has its line
/// and column and an excerpt of at most [`MAX_QUOTE`] characters of that line around the column, marked;
/// an error of the merged configuration (the base preset with the file's overrides) names the setting it
/// is about as the file writes it (`[l1] sise = 4`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct TomlError {
    /// The parser's message, every quoted part at most [`MAX_QUOTE`] characters.
    pub message: String,
    /// Line and column (1-based, in characters) of the error in the file.
    pub at: Option<(usize, usize)>,
    /// The excerpt of the line and a marker line under the column.
    pub excerpt: Option<(String, String)>,
    /// The setting at fault, `[table] key = value`, at most [`MAX_QUOTE`] characters of it.
    pub setting: Option<String>,
}

/// `message` with every part between backquotes or double quotes at most [`MAX_QUOTE`] characters, and
/// at most 8 × [`MAX_QUOTE`] characters in all.
fn bound_quoted(message: &str) -> String {
    let (mut out, mut part, mut open) = (String::new(), String::new(), None);
    for c in message.trim().chars() {
        match open {
            Some(q) if c == q => {
                out.push_str(&quote(&part));
                out.push(c);
                part.clear();
                open = None;
            }
            Some(_) => part.push(c),
            None => {
                out.push(c);
                if c == '`' || c == '"' {
                    open = Some(c);
                }
            }
        }
    }
    out.push_str(&quote(&part));
    match out.char_indices().nth(8 * MAX_QUOTE) {
        Some((end, _)) => format!("{}…", &out[..end]),
        None => out,
    }
}

/// The line of `text` holding byte `at` (clamped to a character boundary): its start and end.
fn line_around(text: &str, at: usize) -> (usize, usize, usize) {
    let at = (0..=at.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    (at, start, end)
}

impl TomlError {
    /// The error `e` found in the file's `text`.
    pub fn new(e: &toml::de::Error, text: &str) -> TomlError {
        let message = bound_quoted(e.message());
        let Some(span) = e.span() else {
            return TomlError { message, at: None, excerpt: None, setting: None };
        };
        let (at, start, end) = line_around(text, span.start);
        let line = &text[start..end];
        let column = text[start..at].chars().count();
        // A window of MAX_QUOTE characters with the column a third of the way in.
        let first = column.saturating_sub(MAX_QUOTE / 3);
        let shown: String = line.chars().skip(first).take(MAX_QUOTE).collect();
        let lead = if first > 0 { "…" } else { "" };
        let tail = if line.chars().count() > first + MAX_QUOTE { "…" } else { "" };
        let marker = format!("{}^", " ".repeat(column - first + lead.chars().count()));
        let at = Some((text[..start].matches('\n').count() + 1, column + 1));
        TomlError { message, at, excerpt: Some((format!("{lead}{shown}{tail}"), marker)), setting: None }
    }

    /// The error `e` found in `merged`, the TOML text of the merged configuration: named by the setting
    /// its span points at, under the last table header before it.
    pub fn in_merged(e: &toml::de::Error, merged: &str) -> TomlError {
        let message = bound_quoted(e.message());
        let setting = e.span().map(|span| {
            let (_, start, end) = line_around(merged, span.start);
            let line = quote(merged[start..end].trim());
            match merged[..start].lines().rev().map(str::trim).find(|l| l.starts_with('[')) {
                Some(table) if !line.starts_with('[') => format!("{table} {line}"),
                _ => line.into_owned(),
            }
        });
        TomlError { message, at: None, excerpt: None, setting }
    }
}

impl std::fmt::Display for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some((line, column)) = self.at {
            write!(f, "line {line}, column {column}: ")?;
        }
        if let Some(setting) = &self.setting {
            write!(f, "{setting}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let (Some((line, _)), Some((excerpt, marker))) = (self.at, &self.excerpt) {
            let gutter = " ".repeat(line.to_string().len());
            write!(f, "\n{line} | {excerpt}\n{gutter} | {marker}")?;
        }
        Ok(())
    }
}
