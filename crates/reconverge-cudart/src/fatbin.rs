//! Fat binaries: the device code `nvcc` embeds in a program.
//!
//! A CUDA program's static constructor calls `__cudaRegisterFatBinary(&wrapper)`, where `wrapper` is an
//! `__fatBinC_Wrapper_t` (CUDA's `fatbinary_section.h`) in the section `.nvFatBinSegment`:
//!
//! ```text
//! struct { int magic;                 // WRAPPER_MAGIC, 0x466243b1
//!          int version;               // 1 for a program's own code; 2 for the device-link step's
//!          const unsigned long long *data;  // the fat binary (below), in section .nv_fatbin
//!          void *filename_or_fatbins; }     // version 1: NULL; version 2: prelinked fat binaries
//! ```
//!
//! Everything below was read off the bytes CUDA 13.5's `nvcc` writes (fixtures in `tests/data/`, described
//! in its README). All numbers are little-endian; offsets are in bytes.
//!
//! # The fat binary header (16 bytes)
//!
//! | offset | type | field |
//! | --- | --- | --- |
//! | 0x0 | u32 | magic, [`FATBIN_MAGIC`] (`50 ed 55 ba`) |
//! | 0x4 | u16 | version, 1 |
//! | 0x6 | u16 | header size, 16: the first entry starts here |
//! | 0x8 | u64 | fat size: the bytes of entries that follow the header |
//!
//! A program's `.nv_fatbin` section starts with the device-link step's fat binary, which is empty (fat
//! size 0) when the program was not built with `-rdc=true`; the version-2 wrapper points at it. The
//! fat binary the program registers (version-1 wrapper) follows it at offset 16. [`entries`] therefore
//! looks past an empty fat binary when another header follows it inside the caller's bytes.
//!
//! # An entry
//!
//! Entries follow one another, each a header then its payload. The header's first 0x40 bytes are fixed:
//!
//! | offset | type | field |
//! | --- | --- | --- |
//! | 0x00 | u16 | kind: 1 PTX, 2 ELF (SASS, a cubin), 0x100 a concatenated entry (`nvcc --concat`, below) |
//! | 0x02 | u16 | version, 0x0101 (not checked) |
//! | 0x04 | u32 | header size: the payload starts here (0x40 for SASS, 0x50 for PTX, more with `-G`) |
//! | 0x08 | u64 | payload size, padded to a multiple of 8; the next entry starts after it |
//! | 0x10 | u32 | compressed size: the compressed bytes at the payload's start; 0 when not compressed |
//! | 0x14 | u32 | offset in this header of extra data, 0 if none: for PTX, a (u32 offset, u32 length) pair locating the ptxas options string; for a concatenated entry, its table |
//! | 0x18 | u16, u16 | minor, major: the PTX ISA version (9.5) for PTX; 1.8 for ELF (not used) |
//! | 0x1c | u32 | architecture: the SM number, 80 for `sm_80` / `compute_80` (also 90 for `sm_90a`) |
//! | 0x20 | u32, u32 | offset in this header and length of the source file name (`-G` only; else 0, 0) |
//! | 0x28 | u64 | flags: 0x1 64-bit, 0x2 debug (`-G`), 0x10 set on every entry seen, **0x2000 LZ4**, **0x8000 zstd**, 0x10_0000 arch-specific (`sm_90a`), 0x20_0000 family-specific (`sm_100f`) |
//! | 0x30 | u64 | 0 |
//! | 0x38 | u64 | decompressed size, exactly; 0 when not compressed |
//!
//! The variable part (file name, options pair, options string) follows, each NUL-terminated and padded
//! to 8 bytes. A PTX payload is NUL-terminated, NUL-padded text: the PTX `nvcc -ptx` writes with its
//! comments removed and each line's whitespace squeezed.
//!
//! # Compression
//!
//! The payload's first `compressed size` bytes decompress to `decompressed size` bytes. Flag 0x8000: one
//! zstd frame (RFC 8878), `--compress-mode=default`, `balance` (the same bytes as `default`) and `size`
//! (a higher level); `default` is what `nvcc` does unless told otherwise. Flag 0x2000: one LZ4 *block*
//! (the LZ4 block format, no frame header), `--compress-mode=speed`; older CUDA releases are said to
//! compress this way by default (not checked here: only CUDA 13.5 output was examined).
//! `--compress-mode=none` sets neither flag. Small SASS entries are stored uncompressed even by default.
//!
//! # Concatenated entries (`nvcc --concat`)
//!
//! Kind 0x100 puts entries of one kind (all PTX, or all ELF) in one compressed payload. The u32 at
//! header offset 0x14 locates a table: u32 count, u32 table length (these 8 bytes included), then
//! `count` sub-headers laid out as above except that the field at 0x04 is the sub-entry's offset in the
//! decompressed payload, and 0x08 its size there. A sub-header's length is not stored: it is 0x40 plus
//! its variable part (which ends where its name, options pair and options string do, NUL-terminated
//! and rounded up to 8), which the parser checks against the table length.

use std::fmt;
use std::io::Read;
use thiserror::Error;

/// `__fatBinC_Wrapper_t::magic`: the wrapper `__cudaRegisterFatBinary` receives starts with it.
pub const WRAPPER_MAGIC: u32 = 0x466243b1;

/// The first four bytes (little-endian) of a fat binary.
pub const FATBIN_MAGIC: u32 = 0xBA55ED50;

/// The length of a fat binary's header: what a caller reads first to learn [`total_len`].
pub const HEADER_LEN: usize = 16;

/// The largest decompressed entry accepted (1 GiB): a bound on what a corrupt size field can make the
/// parser allocate.
pub const MAX_PAYLOAD_LEN: u64 = 1 << 30;

/// The fat binary header version this parser reads.
const FATBIN_VERSION: u16 = 1;
/// The fixed part of an entry header: every field the parser reads lies in it.
const ENTRY_FIXED_LEN: usize = 0x40;
const KIND_PTX: u16 = 1;
const KIND_ELF: u16 = 2;
const KIND_CONCAT: u16 = 0x100;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
/// At most this much output is reserved up front; a larger payload's buffer grows as it decompresses.
const PREALLOC_LIMIT: usize = 16 << 20;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// PTX text (kind 1), what `-gencode arch=compute_XX,code=compute_XX` embeds.
    Ptx,
    /// An ELF cubin of SASS machine code (kind 2), what `code=sm_XX` embeds.
    Elf,
    /// Any other kind number.
    Other(u16),
}

impl EntryKind {
    fn from_raw(kind: u16) -> EntryKind {
        match kind {
            KIND_PTX => EntryKind::Ptx,
            KIND_ELF => EntryKind::Elf,
            other => EntryKind::Other(other),
        }
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EntryKind::Ptx => f.write_str("PTX"),
            EntryKind::Elf => f.write_str("SASS (ELF)"),
            EntryKind::Other(k) => write!(f, "kind {k:#x}"),
        }
    }
}

/// One entry of a fat binary, its payload decompressed. A concatenated (`--concat`) entry is returned
/// as the entries it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What the payload is.
    pub kind: EntryKind,
    /// The SM number it is for: 80 for `compute_80` PTX or `sm_80` SASS.
    pub arch: u32,
    /// Whether it was stored compressed (LZ4 or zstd).
    pub compressed: bool,
    /// The payload, decompressed. An uncompressed one keeps the NUL padding it was stored with; PTX
    /// text ends in at least one NUL.
    pub payload: Vec<u8>,
}

/// Why a fat binary could not be read or offers no PTX to run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FatbinError {
    /// The bytes do not start with a fat binary header.
    #[error("not a CUDA fat binary: expected magic {FATBIN_MAGIC:#010x} at byte {offset}, found {found:#010x}")]
    BadMagic {
        /// Where the header was expected.
        offset: usize,
        /// The four bytes found there, little-endian.
        found: u32,
    },
    /// A fat binary header of a version this parser does not know.
    #[error(
        "fat binary at byte {offset} has header version {version}; reconverge reads version {FATBIN_VERSION} \
         (what CUDA 13's nvcc writes): rebuild the program with a supported nvcc"
    )]
    UnsupportedVersion {
        /// Where the header is.
        offset: usize,
        /// The version it declares.
        version: u16,
    },
    /// A structure runs past the end of the bytes given.
    #[error(
        "fat binary is truncated: the {what} at byte {offset} needs {needed} bytes but only {available} \
         are there (the program's fat binary is damaged, or the caller passed too few bytes)"
    )]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where it starts.
        offset: usize,
        /// How many bytes it needs.
        needed: u64,
        /// How many bytes are there from `offset` on.
        available: usize,
    },
    /// A field holds a value the format does not allow.
    #[error("malformed fat binary: {detail} (entry at byte {offset}); the program's fat binary is damaged")]
    Malformed {
        /// Where the entry (or header) starts.
        offset: usize,
        /// What is wrong.
        detail: String,
    },
    /// An entry is flagged as compressed with both LZ4 and zstd.
    #[error(
        "the entry at byte {offset} uses a compression reconverge cannot read (flags {flags:#x}); \
         rebuild with `nvcc --compress-mode=none` (or `speed` or `default`)"
    )]
    UnknownCompression {
        /// Where the entry starts.
        offset: usize,
        /// Its flags field.
        flags: u64,
    },
    /// An entry declares a decompressed size over [`MAX_PAYLOAD_LEN`].
    #[error(
        "the entry at byte {offset} declares {size} bytes once decompressed, over reconverge's limit of \
         {limit} bytes: the fat binary is damaged, or its device code is too large to simulate"
    )]
    TooLarge {
        /// Where the entry starts.
        offset: usize,
        /// The size it declares.
        size: u64,
        /// [`MAX_PAYLOAD_LEN`].
        limit: u64,
    },
    /// A compressed payload is corrupt.
    #[error("the {codec}-compressed {kind} entry for sm_{arch} at byte {offset} is corrupt: {detail}")]
    Decompress {
        /// Where the entry starts.
        offset: usize,
        /// Its kind.
        kind: EntryKind,
        /// Its architecture.
        arch: u32,
        /// `"LZ4"` or `"zstd"`.
        codec: &'static str,
        /// What the decompressor found.
        detail: String,
    },
    /// The fat binary holds no PTX entry.
    #[error("{}", no_ptx_message(.sass_archs))]
    NoPtx {
        /// The SM numbers of the SASS entries it holds, ascending, without repeats.
        sass_archs: Vec<u32>,
    },
    /// The fat binary holds PTX, but the caller accepted none of it.
    #[error("{}", rejected_ptx_message(.ptx_archs, *.not_utf8, .refused.as_ref()))]
    NoAcceptablePtx {
        /// The SM numbers of the PTX entries, ascending, without repeats.
        ptx_archs: Vec<u32>,
        /// How many of them were not UTF-8 text.
        not_utf8: usize,
        /// The newest PTX that was text: its SM number and why the caller refused it (the parser's
        /// messages, with the file, line and column and the line itself).
        refused: Option<(u32, PtxRefused)>,
    },
}

fn arch_list(prefix: &str, archs: &[u32]) -> String {
    archs.iter().map(|a| format!("{prefix}{a}")).collect::<Vec<_>>().join(", ")
}

fn no_ptx_message(sass_archs: &[u32]) -> String {
    let suggest = sass_archs.last().copied().unwrap_or(80);
    let rebuild = format!(
        "rebuild it with `-gencode arch=compute_{suggest},code=compute_{suggest}` (alongside any `code=sm_XX` \
         options) so nvcc embeds PTX"
    );
    if sass_archs.is_empty() {
        format!("the program's fat binary holds no device code reconverge can use (no PTX, no SASS); {rebuild}")
    } else {
        format!(
            "the program carries only SASS machine code (for {}), which reconverge cannot simulate: it needs \
             PTX; {rebuild}",
            arch_list("sm_", sass_archs)
        )
    }
}

fn rejected_ptx_message(ptx_archs: &[u32], not_utf8: usize, refused: Option<&(u32, PtxRefused)>) -> String {
    let utf8 = if not_utf8 > 0 { format!(" ({not_utf8} of them not UTF-8 text)") } else { String::new() };
    if let Some((arch, why)) = refused {
        // The program's PTX is for an architecture reconverge reads, but its text is refused: what the
        // parser says (where, and the instruction) is what to act on, not the architecture.
        let others = if ptx_archs.len() > 1 {
            format!(" (nor does its other PTX, for {}{utf8})", arch_list("compute_", ptx_archs))
        } else {
            utf8
        };
        return format!(
            "the program's PTX for compute_{arch} is not PTX reconverge can run{others}:\n{}",
            why.0.trim_end()
        );
    }
    let oldest = ptx_archs.first().copied().unwrap_or(80);
    format!(
        "none of the program's PTX (for {}){utf8} is PTX reconverge can run; rebuild with \
         `-gencode arch=compute_XX,code=compute_XX` for an older architecture (such as compute_{oldest}) \
         or an older nvcc",
        arch_list("compute_", ptx_archs)
    )
}

/// Why PTX was refused: the parser's messages rendered against the name messages give it
/// (`file:line:col`, the line and a marker under the instruction).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PtxRefused(pub String);

/// `ptx` parsed by reconverge's front end, or the parser's messages rendered against `label`.
pub fn parse_check(label: &str, ptx: &str) -> Result<reconverge_ir::Module, PtxRefused> {
    reconverge_ptx::parse(ptx).map_err(|e| PtxRefused(reconverge_ptx::SourceError::new(label, ptx, e).render_plain()))
}

/// Reads `N` bytes at `off`, or `None` when they are not all there.
fn array_at<const N: usize>(bytes: &[u8], off: usize) -> Option<[u8; N]> {
    bytes.get(off..off.checked_add(N)?)?.try_into().ok()
}

fn u16_at(bytes: &[u8], off: usize) -> Option<u16> {
    array_at(bytes, off).map(u16::from_le_bytes)
}

fn u32_at(bytes: &[u8], off: usize) -> Option<u32> {
    array_at(bytes, off).map(u32::from_le_bytes)
}

fn u64_at(bytes: &[u8], off: usize) -> Option<u64> {
    array_at(bytes, off).map(u64::from_le_bytes)
}

/// `bytes[off..off + len]`, or a [`FatbinError::Truncated`] naming `what`.
fn slice_at<'a>(bytes: &'a [u8], off: usize, len: u64, what: &'static str) -> Result<&'a [u8], FatbinError> {
    let truncated =
        || FatbinError::Truncated { what, offset: off, needed: len, available: bytes.len().saturating_sub(off) };
    let len = usize::try_from(len).map_err(|_| truncated())?;
    let end = off.checked_add(len).ok_or_else(truncated)?;
    bytes.get(off..end).ok_or_else(truncated)
}

/// The fat binary header's fields.
struct Header {
    header_len: u16,
    fat_size: u64,
}

/// Reads and checks the fat binary header at `bytes[off..]`.
fn header_at(bytes: &[u8], off: usize) -> Result<Header, FatbinError> {
    let h = slice_at(bytes, off, HEADER_LEN as u64, "fat binary header")?;
    let magic = u32_at(h, 0).unwrap_or(0);
    if magic != FATBIN_MAGIC {
        return Err(FatbinError::BadMagic { offset: off, found: magic });
    }
    let version = u16_at(h, 4).unwrap_or(0);
    if version != FATBIN_VERSION {
        return Err(FatbinError::UnsupportedVersion { offset: off, version });
    }
    let header_len = u16_at(h, 6).unwrap_or(0);
    if usize::from(header_len) < HEADER_LEN {
        return Err(FatbinError::Malformed {
            offset: off,
            detail: format!("header size {header_len} is below the header's own {HEADER_LEN} bytes"),
        });
    }
    let fat_size = u64_at(h, 8).unwrap_or(0);
    Ok(Header { header_len, fat_size })
}

/// The total length in bytes of the fat binary (header + entries) that starts with `header`, its first
/// [`HEADER_LEN`] bytes: how many bytes to read from the wrapper's `data` pointer before calling
/// [`entries`].
///
/// A result of [`HEADER_LEN`] is an empty fat binary. In a program's `.nv_fatbin` section the one a
/// program registers may follow such an empty one directly; a caller holding a pointer to the empty one
/// reads the next [`HEADER_LEN`] bytes and asks again, then passes [`entries`] both.
pub fn total_len(header: &[u8; 16]) -> Result<u64, FatbinError> {
    let h = header_at(header, 0)?;
    u64::from(h.header_len)
        .checked_add(h.fat_size)
        .ok_or(FatbinError::Malformed { offset: 0, detail: format!("fat size {:#x} overflows", h.fat_size) })
}

/// Parses a fat binary starting at `bytes[0]` (the header with [`FATBIN_MAGIC`]), following size-0
/// headers; `bytes` may extend past it.
///
/// When the fat binary at `bytes[0]` is empty (fat size 0) and another fat binary header starts right
/// after it within `bytes`, that one is parsed instead (as a program's `.nv_fatbin` section starts with
/// the device-link step's empty fat binary). Bytes after the fat binary's end are ignored. Entries come
/// in the order stored, with each concatenated (`--concat`) entry replaced by the entries it holds.
pub fn entries(bytes: &[u8]) -> Result<Vec<Entry>, FatbinError> {
    let mut off = 0usize;
    loop {
        let h = header_at(bytes, off)?;
        let body_start = off.saturating_add(usize::from(h.header_len));
        if h.fat_size == 0 {
            // Another fat binary header right after an empty one: look past it. Anything else after it
            // (or nothing) means this empty fat binary is all there is.
            if u32_at(bytes, body_start) == Some(FATBIN_MAGIC) {
                off = body_start;
                continue;
            }
            return Ok(Vec::new());
        }
        let body = slice_at(bytes, body_start, h.fat_size, "fat binary's entries")?;
        return parse_entries(body, body_start);
    }
}

/// The fixed part of an entry header.
struct EntryHeader {
    kind: u16,
    /// The header size; in a concatenated entry's sub-header, the payload's offset in its data.
    header_len_or_offset: u32,
    payload_size: u64,
    compressed_size: u32,
    extra_offset: u32,
    arch: u32,
    name_offset: u32,
    name_len: u32,
    flags: u64,
    decompressed_size: u64,
}

impl EntryHeader {
    /// Reads the fixed part at the start of `h` (at least [`ENTRY_FIXED_LEN`] bytes).
    fn read(h: &[u8]) -> Option<EntryHeader> {
        Some(EntryHeader {
            kind: u16_at(h, 0x00)?,
            header_len_or_offset: u32_at(h, 0x04)?,
            payload_size: u64_at(h, 0x08)?,
            compressed_size: u32_at(h, 0x10)?,
            extra_offset: u32_at(h, 0x14)?,
            arch: u32_at(h, 0x1c)?,
            name_offset: u32_at(h, 0x20)?,
            name_len: u32_at(h, 0x24)?,
            flags: u64_at(h, 0x28)?,
            decompressed_size: u64_at(h, 0x38)?,
        })
    }
}

/// Parses the entries that fill `body`, which starts at byte `base` of the caller's bytes.
fn parse_entries(body: &[u8], base: usize) -> Result<Vec<Entry>, FatbinError> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < body.len() {
        let at = base.saturating_add(pos);
        let fixed = slice_at(body, pos, ENTRY_FIXED_LEN as u64, "entry header").map_err(|e| rebase(e, base))?;
        let eh = EntryHeader::read(fixed)
            .ok_or(FatbinError::Malformed { offset: at, detail: "entry header unreadable".into() })?;
        let header_len = eh.header_len_or_offset;
        if (header_len as usize) < ENTRY_FIXED_LEN {
            return Err(FatbinError::Malformed {
                offset: at,
                detail: format!("entry header size {header_len} is below the {ENTRY_FIXED_LEN} bytes every entry has"),
            });
        }
        let header = slice_at(body, pos, u64::from(header_len), "entry header").map_err(|e| rebase(e, base))?;
        let payload_start = pos.saturating_add(header_len as usize);
        let payload = slice_at(body, payload_start, eh.payload_size, "entry payload").map_err(|e| rebase(e, base))?;
        if eh.kind == KIND_CONCAT {
            parse_concat(header, &eh, payload, at, &mut out)?;
        } else {
            let (compressed, data) = decode_payload(&eh, payload, at)?;
            out.push(Entry { kind: EntryKind::from_raw(eh.kind), arch: eh.arch, compressed, payload: data });
        }
        pos = payload_start.saturating_add(payload.len());
    }
    Ok(out)
}

/// Makes a [`FatbinError::Truncated`] offset relative to `body` absolute.
fn rebase(e: FatbinError, base: usize) -> FatbinError {
    match e {
        FatbinError::Truncated { what, offset, needed, available } => {
            FatbinError::Truncated { what, offset: base.saturating_add(offset), needed, available }
        }
        other => other,
    }
}

/// Which decompressor an entry's flags ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Codec {
    Lz4,
    Zstd,
}

impl Codec {
    fn name(self) -> &'static str {
        match self {
            Codec::Lz4 => "LZ4",
            Codec::Zstd => "zstd",
        }
    }
}

fn codec_of(flags: u64, offset: usize) -> Result<Option<Codec>, FatbinError> {
    match (flags & FLAG_LZ4 != 0, flags & FLAG_ZSTD != 0) {
        (false, false) => Ok(None),
        (true, false) => Ok(Some(Codec::Lz4)),
        (false, true) => Ok(Some(Codec::Zstd)),
        (true, true) => Err(FatbinError::UnknownCompression { offset, flags }),
    }
}

/// Decompresses (or copies) an entry's payload; returns whether it was compressed, and the data.
fn decode_payload(eh: &EntryHeader, payload: &[u8], offset: usize) -> Result<(bool, Vec<u8>), FatbinError> {
    let Some(codec) = codec_of(eh.flags, offset)? else {
        return Ok((false, payload.to_vec()));
    };
    let kind = EntryKind::from_raw(eh.kind);
    let corrupt = |detail: String| FatbinError::Decompress { offset, kind, arch: eh.arch, codec: codec.name(), detail };
    let csize = eh.compressed_size as usize;
    let Some(input) = payload.get(..csize).filter(|i| !i.is_empty()) else {
        return Err(corrupt(format!(
            "its compressed size {} does not fit its {}-byte payload",
            eh.compressed_size,
            payload.len()
        )));
    };
    if eh.decompressed_size > MAX_PAYLOAD_LEN {
        return Err(FatbinError::TooLarge { offset, size: eh.decompressed_size, limit: MAX_PAYLOAD_LEN });
    }
    // Bounded by MAX_PAYLOAD_LEN above, so it fits a usize on every 64- and 32-bit target.
    let expected = usize::try_from(eh.decompressed_size).unwrap_or(usize::MAX);
    let data = match codec {
        Codec::Lz4 => lz4_block_decompress(input, expected),
        Codec::Zstd => zstd_decompress(input, expected),
    }
    .map_err(|c| corrupt(c.0))?;
    Ok((true, data))
}

/// Expands a concatenated (`--concat`) entry into the entries it holds, appending them to `out`.
fn parse_concat(
    header: &[u8],
    eh: &EntryHeader,
    payload: &[u8],
    offset: usize,
    out: &mut Vec<Entry>,
) -> Result<(), FatbinError> {
    let malformed = |detail: String| FatbinError::Malformed { offset, detail };
    let (_, data) = decode_payload(eh, payload, offset)?;
    let table_off = eh.extra_offset as usize;
    if table_off < ENTRY_FIXED_LEN {
        return Err(malformed(format!("concatenated entry's table offset {table_off:#x} lies in its fixed header")));
    }
    let (Some(count), Some(table_len)) = (u32_at(header, table_off), u32_at(header, table_off.saturating_add(4)))
    else {
        return Err(malformed("concatenated entry's table lies past its header".into()));
    };
    let table = table_off
        .checked_add(table_len as usize)
        .and_then(|end| header.get(table_off..end))
        .filter(|t| t.len() >= 8)
        .ok_or_else(|| malformed(format!("concatenated entry's {table_len}-byte table does not fit its header")))?;
    let mut pos = 8usize;
    for i in 0..count {
        let sub = table.get(pos..).unwrap_or(&[]);
        let sh = (sub.len() >= ENTRY_FIXED_LEN)
            .then(|| EntryHeader::read(sub))
            .flatten()
            .ok_or_else(|| malformed(format!("concatenated entry's sub-header {i} runs past its table")))?;
        let sub_len = sub_header_len(sub, &sh)
            .filter(|&l| l <= sub.len())
            .ok_or_else(|| malformed(format!("concatenated entry's sub-header {i} runs past its table")))?;
        if sh.kind == KIND_CONCAT {
            return Err(malformed(format!("concatenated entry's sub-header {i} is itself concatenated")));
        }
        let start = sh.header_len_or_offset as usize;
        let sub_payload = usize::try_from(sh.payload_size)
            .ok()
            .and_then(|size| data.get(start..start.checked_add(size)?))
            .ok_or_else(|| {
                malformed(format!(
                    "concatenated entry's sub-entry {i} ({} bytes at {start}) lies outside its {} bytes of data",
                    sh.payload_size,
                    data.len()
                ))
            })?;
        let (compressed, sub_data) = decode_payload(&sh, sub_payload, offset)?;
        out.push(Entry {
            kind: EntryKind::from_raw(sh.kind),
            arch: sh.arch,
            compressed: compressed || codec_of(eh.flags, offset)?.is_some(),
            payload: sub_data,
        });
        pos = pos.saturating_add(sub_len);
    }
    if pos != table.len() {
        return Err(malformed(format!(
            "concatenated entry's {count} sub-headers take {pos} bytes of its {}-byte table",
            table.len()
        )));
    }
    Ok(())
}

/// The length of a concatenated entry's sub-header `h` (which may run on past it): the fixed part plus
/// its file name, options pair and options string, each NUL-terminated, rounded up to 8 bytes.
fn sub_header_len(h: &[u8], sh: &EntryHeader) -> Option<usize> {
    let mut end = ENTRY_FIXED_LEN;
    if sh.name_len != 0 {
        end = end.max((sh.name_offset as usize).checked_add(sh.name_len as usize)?.checked_add(1)?);
    }
    if sh.extra_offset != 0 {
        let pair = sh.extra_offset as usize;
        let (opt_off, opt_len) = (u32_at(h, pair)?, u32_at(h, pair.checked_add(4)?)?);
        end = end.max(pair.checked_add(8)?);
        end = end.max((opt_off as usize).checked_add(opt_len as usize)?.checked_add(1)?);
    }
    end.checked_add(7).map(|e| e & !7)
}

/// Why a compressed payload does not decode, in words.
#[derive(Debug, PartialEq, Eq)]
struct Corrupt(String);

impl From<String> for Corrupt {
    fn from(s: String) -> Corrupt {
        Corrupt(s)
    }
}

impl From<&str> for Corrupt {
    fn from(s: &str) -> Corrupt {
        Corrupt(s.to_string())
    }
}

/// Decodes one LZ4 block (the LZ4 block format: sequences of a token, literals, a 2-byte offset and a
/// match; the last sequence has literals only) that must expand to exactly `expected` bytes.
fn lz4_block_decompress(input: &[u8], expected: usize) -> Result<Vec<u8>, Corrupt> {
    fn length(input: &[u8], i: &mut usize, nibble: u8, what: &str) -> Result<usize, Corrupt> {
        let mut len = usize::from(nibble);
        if nibble == 15 {
            loop {
                let b = *input.get(*i).ok_or_else(|| format!("the input ends inside a {what} length"))?;
                *i += 1;
                len = len.checked_add(usize::from(b)).ok_or_else(|| format!("{what} length overflows"))?;
                if b != 255 {
                    break;
                }
            }
        }
        Ok(len)
    }
    let too_long = || format!("it expands past the {expected} bytes its header declares");
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(PREALLOC_LIMIT));
    let mut i = 0usize;
    loop {
        let token = *input.get(i).ok_or("the input ends before a sequence")?;
        i += 1;
        let lit_len = length(input, &mut i, token >> 4, "literal")?;
        let literals = i
            .checked_add(lit_len)
            .and_then(|end| input.get(i..end))
            .ok_or_else(|| format!("a {lit_len}-byte literal run at input byte {i} runs past the input's end"))?;
        if lit_len > expected - out.len() {
            return Err(too_long().into());
        }
        out.extend_from_slice(literals);
        i += lit_len;
        if i == input.len() {
            break;
        }
        let distance = u16_at(input, i).ok_or("the input ends inside a match offset")?;
        i += 2;
        let distance = usize::from(distance);
        if distance == 0 || distance > out.len() {
            return Err(format!("a match reaches {distance} bytes back with only {} bytes decoded", out.len()).into());
        }
        let match_len = length(input, &mut i, token & 15, "match")?.checked_add(4).ok_or("match length overflows")?;
        if match_len > expected - out.len() {
            return Err(too_long().into());
        }
        let start = out.len() - distance;
        if distance >= match_len {
            out.extend_from_within(start..start + match_len);
        } else {
            // Overlapping: the match repeats the last `distance` bytes.
            for k in 0..match_len {
                let b = out.get(start + k).copied().ok_or("match out of range")?;
                out.push(b);
            }
        }
        if i == input.len() {
            return Err("the input ends after a match; an LZ4 block ends with literals".into());
        }
    }
    if out.len() != expected {
        return Err(format!("it expands to {} bytes, not the {expected} its header declares", out.len()).into());
    }
    Ok(out)
}

/// Decodes zstd frames (one, from nvcc) filling `input` that must expand to exactly `expected` bytes.
fn zstd_decompress(input: &[u8], expected: usize) -> Result<Vec<u8>, Corrupt> {
    // A frame whose window exceeds its output is not nvcc's; bounding the window bounds the memory a
    // corrupt frame header can make the decoder reserve.
    let max_window = (expected as u64).max(1 << 20);
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(PREALLOC_LIMIT));
    let mut rest = input;
    while !rest.is_empty() {
        let before = rest.len();
        let decoder = ruzstd::decoding::StreamingDecoder::new_with_max_window_size(&mut rest, max_window)
            .map_err(|e| format!("bad zstd frame header: {e}"))?;
        let room = (expected - out.len()) as u64;
        decoder.take(room + 1).read_to_end(&mut out).map_err(|e| format!("bad zstd data: {e}"))?;
        if out.len() > expected {
            return Err(format!("it expands past the {expected} bytes its header declares").into());
        }
        if rest.len() == before {
            return Err("a zstd frame consumed no input".into());
        }
    }
    if out.len() != expected {
        return Err(format!("it expands to {} bytes, not the {expected} its header declares", out.len()).into());
    }
    Ok(out)
}

/// The PTX to run: the newest-architecture PTX entry that the caller's `check` accepts (given the SM
/// number and the text, decompressed, NUL-trimmed, UTF-8; it returns what it made of the text, or why it
/// refuses), with its SM number and what `check` returned.
///
/// Entries of equal architecture are tried in the order stored; PTX that is not UTF-8 is passed over.
/// With no PTX entry the error says the program carries only SASS (listing the `sm_XX` found) and how
/// to rebuild it with PTX; with PTX that `check` refuses, it carries the newest refused entry's reason
/// ([`parse_check`]'s: where the parser stopped and why) and lists the PTX found.
pub fn select_ptx<T>(
    entries: &[Entry],
    check: impl Fn(u32, &str) -> Result<T, PtxRefused>,
) -> Result<(u32, String, T), FatbinError> {
    let mut ptx: Vec<&Entry> = entries.iter().filter(|e| e.kind == EntryKind::Ptx).collect();
    if ptx.is_empty() {
        let mut sass_archs: Vec<u32> = entries.iter().filter(|e| e.kind == EntryKind::Elf).map(|e| e.arch).collect();
        sass_archs.sort_unstable();
        sass_archs.dedup();
        return Err(FatbinError::NoPtx { sass_archs });
    }
    // Stable: equal architectures keep their stored order.
    ptx.sort_by_key(|e| std::cmp::Reverse(e.arch));
    let mut not_utf8 = 0;
    let mut refused = None;
    for e in &ptx {
        let end = e.payload.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
        let Ok(text) = std::str::from_utf8(e.payload.get(..end).unwrap_or(&[])) else {
            not_utf8 += 1;
            continue;
        };
        match check(e.arch, text) {
            Ok(accepted) => return Ok((e.arch, text.to_owned(), accepted)),
            Err(why) => {
                refused.get_or_insert((e.arch, why));
            }
        }
    }
    let mut ptx_archs: Vec<u32> = ptx.iter().map(|e| e.arch).collect();
    ptx_archs.sort_unstable();
    ptx_archs.dedup();
    Err(FatbinError::NoAcceptablePtx { ptx_archs, not_utf8, refused })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `reconverge-cudart`'s `tests/data` (whose sources `reconverge-cudart12` compiles too).
    macro_rules! data {
        ($name:literal) => {
            concat!(env!("CARGO_MANIFEST_DIR"), "/../reconverge-cudart/tests/data/", $name)
        };
    }

    macro_rules! fixture {
        ($name:literal) => {
            include_bytes!(data!($name)).as_slice()
        };
    }

    const NONE: &[u8] = fixture!("add_compute80_none.fatbin");
    const DEFAULT: &[u8] = fixture!("add_compute80_default.fatbin");
    const BALANCE: &[u8] = fixture!("add_compute80_balance.fatbin");
    const SIZE: &[u8] = fixture!("add_compute80_size.fatbin");
    const SPEED: &[u8] = fixture!("add_compute80_speed.fatbin");
    const SASS: &[u8] = fixture!("add_sm80_sass_only.fatbin");
    const TWO_PTX: &[u8] = fixture!("add_compute75_compute90.fatbin");
    const CONCAT: &[u8] = fixture!("add_compute75_compute90_concat.fatbin");
    const CONCAT_SPEED: &[u8] = fixture!("add_compute75_compute90_concat_speed.fatbin");
    const CONCAT_BOTH: &[u8] = fixture!("add_sm75_sm90_compute75_compute90_concat.fatbin");
    const DEBUG: &[u8] = fixture!("add_debug_sm80_compute80.fatbin");
    const PROGRAM: &[u8] = fixture!("add_program_compute80.nv_fatbin");
    const PTX75: &str = include_str!(data!("add_compute75.ptx"));
    const PTX80: &str = include_str!(data!("add_compute80.ptx"));
    const PTX90: &str = include_str!(data!("add_compute90.ptx"));

    const ALL: [(&str, &[u8]); 12] = [
        ("none", NONE),
        ("default", DEFAULT),
        ("balance", BALANCE),
        ("size", SIZE),
        ("speed", SPEED),
        ("sass", SASS),
        ("two ptx", TWO_PTX),
        ("concat", CONCAT),
        ("concat speed", CONCAT_SPEED),
        ("concat both", CONCAT_BOTH),
        ("debug", DEBUG),
        ("program", PROGRAM),
    ];

    /// `nvcc -ptx` output as a fat binary stores it: no comments, whitespace squeezed, no blank lines.
    fn normalise(ptx: &str) -> Vec<String> {
        ptx.lines()
            .map(|l| l.split("//").next().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|l| !l.is_empty())
            .collect()
    }

    fn text(e: &Entry) -> &str {
        std::str::from_utf8(&e.payload).expect("utf-8").trim_end_matches('\0')
    }

    fn flags(fatbin: &[u8]) -> u64 {
        u64_at(fatbin, HEADER_LEN + 0x28).expect("flags")
    }

    #[test]
    fn every_compress_mode_yields_the_ptx_nvcc_wrote() {
        let stored = entries(NONE).expect("none");
        assert_eq!(stored.len(), 1);
        assert!(!stored[0].compressed);
        let plain = text(&stored[0]).to_owned();
        assert!(plain.contains(".target sm_80") && plain.contains(".entry _Z3addPii("), "{plain}");
        assert_eq!(normalise(&plain), normalise(PTX80));
        for (name, bytes) in [("default", DEFAULT), ("balance", BALANCE), ("size", SIZE), ("speed", SPEED)] {
            let es = entries(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(es.len(), 1, "{name}");
            let e = &es[0];
            assert_eq!((e.kind, e.arch, e.compressed), (EntryKind::Ptx, 80, true), "{name}");
            assert_eq!(text(e), plain, "{name}");
            assert_eq!(e.payload.last(), Some(&0), "{name}: PTX ends in NUL");
        }
    }

    #[test]
    fn compress_modes_map_to_codecs() {
        assert_eq!(codec_of(flags(NONE), 0), Ok(None));
        assert_eq!(codec_of(flags(DEFAULT), 0), Ok(Some(Codec::Zstd)));
        assert_eq!(codec_of(flags(BALANCE), 0), Ok(Some(Codec::Zstd)));
        assert_eq!(codec_of(flags(SIZE), 0), Ok(Some(Codec::Zstd)));
        assert_eq!(codec_of(flags(SPEED), 0), Ok(Some(Codec::Lz4)));
        assert_eq!(DEFAULT, BALANCE);
        // The zstd payload starts with the zstd frame magic.
        assert_eq!(DEFAULT.get(0x60..0x64), Some([0x28, 0xb5, 0x2f, 0xfd].as_slice()));
    }

    #[test]
    fn sass_only_entry_and_message() {
        let es = entries(SASS).expect("sass");
        assert_eq!(es.len(), 1);
        assert_eq!((es[0].kind, es[0].arch, es[0].compressed), (EntryKind::Elf, 80, false));
        assert!(es[0].payload.starts_with(b"\x7fELF"));
        let err = select_ptx(&es, |_, _| Ok(())).expect_err("no PTX");
        assert_eq!(err, FatbinError::NoPtx { sass_archs: vec![80] });
        let msg = err.to_string();
        assert!(msg.contains("only SASS") && msg.contains("sm_80"), "{msg}");
        assert!(msg.contains("-gencode arch=compute_80,code=compute_80"), "{msg}");
        let none = select_ptx(&[], |_, _| Ok(())).expect_err("empty").to_string();
        assert!(none.contains("no PTX") && none.contains("-gencode arch=compute_"), "{none}");
    }

    #[test]
    fn select_ptx_prefers_the_newest_accepted() {
        let es = entries(TWO_PTX).expect("two");
        assert_eq!(
            es.iter().map(|e| (e.kind, e.arch)).collect::<Vec<_>>(),
            [(EntryKind::Ptx, 75), (EntryKind::Ptx, 90)]
        );
        assert_eq!(normalise(text(&es[0])), normalise(PTX75));
        assert_eq!(normalise(text(&es[1])), normalise(PTX90));
        let (arch, ptx, ()) = select_ptx(&es, |_, _| Ok(())).expect("select");
        assert_eq!(arch, 90);
        assert!(ptx.contains(".target sm_90") && !ptx.ends_with('\0'));
        // Reversed order: still the newest.
        let reversed: Vec<Entry> = es.iter().rev().cloned().collect();
        assert_eq!(select_ptx(&reversed, |_, _| Ok(())).expect("select").0, 90);
        let (arch, ptx, ()) =
            select_ptx(&es, |_, t| if t.contains("sm_90") { Err(PtxRefused("newer".into())) } else { Ok(()) })
                .expect("older");
        assert_eq!(arch, 75);
        assert!(ptx.contains(".target sm_75"));
        let err = select_ptx(&es, |a, _| Err::<(), _>(PtxRefused(format!("refused {a}")))).expect_err("none accepted");
        let refused = Some((90, PtxRefused("refused 90".to_string())));
        assert_eq!(err, FatbinError::NoAcceptablePtx { ptx_archs: vec![75, 90], not_utf8: 0, refused });
        assert!(err.to_string().contains("compute_75, compute_90") && err.to_string().contains("refused 90"));
        let mut bad = es.clone();
        bad[1].payload = vec![0xff, 0xfe, 0];
        assert_eq!(select_ptx(&bad, |_, _| Ok(())).expect("falls back").0, 75);
        bad[0].payload = vec![0xff, 0];
        let err = select_ptx(&bad, |_, _| Ok(())).expect_err("no text").to_string();
        assert!(err.contains("2 of them not UTF-8") && err.contains("rebuild"), "{err}");
    }

    /// Issue 37: PTX for an architecture reconverge reads whose text does not parse (then a texture
    /// instruction; now a constant expression as an operand) said "rebuild for compute_80" to a compute_80
    /// program; the parser's message (file, line, column, the instruction) is the one to act on.
    #[test]
    fn ptx_that_does_not_parse_gets_the_parsers_message() {
        let mut es = entries(NONE).expect("none");
        let expression =
            PTX80.replacen("\tcvta.to.global.u64", "\tshl.b32 %r1, %r1, (32 - 27);\n\tcvta.to.global.u64", 1);
        let line = expression.lines().position(|l| l.contains("(32 - 27)")).expect("inserted") + 1;
        es[0].payload = expression.into_bytes();
        let label = "prog:module0.sm_80.ptx";
        let err = select_ptx(&es, |_, t| parse_check(label, t)).expect_err("the expression does not parse");
        let msg = err.to_string();
        assert!(msg.starts_with("the program's PTX for compute_80 is not PTX reconverge can run:\n"), "{msg}");
        assert!(msg.contains(&format!("{label}:{line}:")), "file:line:col: {msg}");
        assert!(msg.contains("shl.b32 %r1, %r1, (32 - 27);"), "the instruction: {msg}");
        assert!(!msg.contains("rebuild"), "{msg}");
        assert_eq!(select_ptx(&entries(NONE).expect("none"), |_, t| parse_check(label, t)).map(|p| p.0), Ok(80));
    }

    #[test]
    fn concatenated_entries_expand() {
        let plain = entries(TWO_PTX).expect("two");
        for (name, bytes) in [("zstd", CONCAT), ("lz4", CONCAT_SPEED)] {
            let es = entries(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(es.len(), 2, "{name}");
            for (c, p) in es.iter().zip(&plain) {
                assert_eq!((c.kind, c.arch, c.compressed), (p.kind, p.arch, true), "{name}");
                assert_eq!(text(c), text(p), "{name}");
            }
        }
        let es = entries(CONCAT_BOTH).expect("both");
        let shape: Vec<_> = es.iter().map(|e| (e.kind, e.arch, e.compressed)).collect();
        assert_eq!(
            shape,
            [
                (EntryKind::Ptx, 75, true),
                (EntryKind::Ptx, 90, true),
                (EntryKind::Elf, 75, true),
                (EntryKind::Elf, 90, true)
            ]
        );
        assert!(es[2].payload.starts_with(b"\x7fELF") && es[3].payload.starts_with(b"\x7fELF"));
        assert_eq!(select_ptx(&es, |_, _| Ok(())).expect("select").0, 90);
    }

    #[test]
    fn debug_entries_have_longer_headers() {
        let es = entries(DEBUG).expect("debug");
        let shape: Vec<_> = es.iter().map(|e| (e.kind, e.arch, e.compressed)).collect();
        assert_eq!(shape, [(EntryKind::Elf, 80, true), (EntryKind::Ptx, 80, true)]);
        assert!(es[0].payload.starts_with(b"\x7fELF"));
        assert!(text(&es[1]).contains(".target sm_80, debug"));
    }

    #[test]
    fn program_section_skips_the_empty_fat_binary() {
        let whole = entries(PROGRAM).expect("section");
        assert_eq!(whole, entries(DEFAULT).expect("default"));
        assert_eq!(entries(&PROGRAM[HEADER_LEN..]).expect("registered"), whole);
        let first: &[u8; 16] = PROGRAM[..16].try_into().expect("16");
        let second: &[u8; 16] = PROGRAM[16..32].try_into().expect("16");
        assert_eq!(total_len(first), Ok(16));
        assert_eq!(total_len(second), Ok((PROGRAM.len() - 16) as u64));
        // An empty fat binary alone, or followed by something that is not one, has no entries.
        assert_eq!(entries(&PROGRAM[..16]), Ok(Vec::new()));
        assert_eq!(entries(&[&PROGRAM[..16], &[0u8; 16][..]].concat()), Ok(Vec::new()));
    }

    #[test]
    fn total_len_matches_each_fixture() {
        for (name, bytes) in ALL {
            let start = if name == "program" { HEADER_LEN } else { 0 };
            let h: &[u8; 16] = bytes[start..start + 16].try_into().expect("16");
            assert_eq!(total_len(h), Ok((bytes.len() - start) as u64), "{name}");
        }
        let mut h = [0u8; 16];
        h[..16].copy_from_slice(&DEFAULT[..16]);
        h[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(matches!(total_len(&h), Err(FatbinError::Malformed { .. })));
        assert!(matches!(entries(&h), Err(FatbinError::Truncated { .. })));
    }

    #[test]
    fn bytes_past_the_end_are_ignored() {
        let mut two = DEFAULT.to_vec();
        two.extend_from_slice(SASS);
        assert_eq!(entries(&two), entries(DEFAULT));
        two.extend_from_slice(&[0xAB; 100]);
        assert_eq!(entries(&two), entries(DEFAULT));
    }

    #[test]
    fn header_errors() {
        let mut b = DEFAULT.to_vec();
        b[0] ^= 1;
        let err = entries(&b).expect_err("magic");
        assert_eq!(err, FatbinError::BadMagic { offset: 0, found: 0xBA55ED51 });
        assert!(err.to_string().contains("not a CUDA fat binary"));
        let mut b = DEFAULT.to_vec();
        b[4] = 2;
        assert_eq!(entries(&b), Err(FatbinError::UnsupportedVersion { offset: 0, version: 2 }));
        let mut b = DEFAULT.to_vec();
        b[6] = 8;
        assert!(matches!(entries(&b), Err(FatbinError::Malformed { .. })));
        // Entry header size below its fixed part.
        let mut b = DEFAULT.to_vec();
        b[16 + 4..16 + 8].copy_from_slice(&0x20u32.to_le_bytes());
        assert!(matches!(entries(&b), Err(FatbinError::Malformed { offset: 16, .. })));
        // Both compressions flagged.
        let mut b = DEFAULT.to_vec();
        b[16 + 0x28..16 + 0x30].copy_from_slice(&(flags(DEFAULT) | FLAG_LZ4).to_le_bytes());
        assert!(matches!(entries(&b), Err(FatbinError::UnknownCompression { offset: 16, .. })));
        // A huge declared size.
        let mut b = DEFAULT.to_vec();
        b[16 + 0x38..16 + 0x40].copy_from_slice(&(MAX_PAYLOAD_LEN + 1).to_le_bytes());
        assert!(matches!(entries(&b), Err(FatbinError::TooLarge { .. })));
        // A declared size one off.
        for (bytes, codec) in [(DEFAULT, "zstd"), (SPEED, "LZ4")] {
            for delta in [-1i64, 1] {
                let mut b = bytes.to_vec();
                let size = u64_at(&b, 16 + 0x38).expect("size") as i64 + delta;
                b[16 + 0x38..16 + 0x40].copy_from_slice(&(size as u64).to_le_bytes());
                match entries(&b) {
                    Err(FatbinError::Decompress { codec: c, arch: 80, kind: EntryKind::Ptx, .. }) => {
                        assert_eq!(c, codec)
                    }
                    other => panic!("{codec} {delta}: {other:?}"),
                }
            }
        }
        // Compressed size past the payload, or zero.
        for csize in [0u32, 0x1000] {
            let mut b = DEFAULT.to_vec();
            b[16 + 0x10..16 + 0x14].copy_from_slice(&csize.to_le_bytes());
            assert!(matches!(entries(&b), Err(FatbinError::Decompress { .. })), "{csize}");
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        for (name, bytes) in ALL {
            for len in 0..bytes.len() {
                let r = entries(&bytes[..len]);
                // The program section's first 16 bytes are a complete, empty fat binary; a cut inside the
                // next header's magic leaves it so.
                let empty_ok = name == "program" && (16..20).contains(&len);
                if empty_ok {
                    assert_eq!(r, Ok(Vec::new()), "{name} cut to {len}");
                } else {
                    assert!(r.is_err(), "{name} cut to {len}: {r:?}");
                }
            }
        }
    }

    #[test]
    fn corruption_never_panics() {
        // Every byte of each fixture flipped three ways, then a pseudo-random scatter of changes.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (name, bytes) in ALL {
            if name == "sass" || name == "debug" {
                continue; // large and uncompressed or like the others: kept for the random pass
            }
            for i in 0..bytes.len() {
                for x in [0x01u8, 0x80, 0xff] {
                    let mut b = bytes.to_vec();
                    b[i] ^= x;
                    if let Ok(es) = entries(&b) {
                        let _ = select_ptx(&es, |_, _| Ok(()));
                    }
                }
            }
        }
        for (_, bytes) in ALL {
            for _ in 0..300 {
                let mut b = bytes.to_vec();
                for _ in 0..1 + next() % 8 {
                    let i = (next() % b.len() as u64) as usize;
                    b[i] = next() as u8;
                }
                if let Ok(es) = entries(&b) {
                    let _ = select_ptx(&es, |_, _| Ok(()));
                }
            }
        }
    }

    #[test]
    fn corrupted_structure_is_reported() {
        // A flipped magic, version or compressed payload must be an error, not silently different PTX.
        for i in [0usize, 1, 2, 3, 4] {
            let mut b = DEFAULT.to_vec();
            b[i] ^= 0x55;
            assert!(entries(&b).is_err(), "byte {i}");
        }
        // The zstd frame's magic.
        let mut b = DEFAULT.to_vec();
        b[0x60] ^= 1;
        assert!(matches!(entries(&b), Err(FatbinError::Decompress { codec: "zstd", .. })));
    }

    #[test]
    fn lz4_block_decoder() {
        // Literals only.
        assert_eq!(lz4_block_decompress(&[0x30, b'a', b'b', b'c'], 3), Ok(b"abc".to_vec()));
        // Empty output.
        assert_eq!(lz4_block_decompress(&[0x00], 0), Ok(Vec::new()));
        // One literal, then an overlapping match of 4 + 3 at distance 1, then final literals.
        assert_eq!(lz4_block_decompress(&[0x13, b'x', 1, 0, 0x10, b'y'], 9), Ok(b"xxxxxxxxy".to_vec()));
        // Non-overlapping match at distance 2.
        assert_eq!(lz4_block_decompress(&[0x20, b'a', b'b', 2, 0, 0x10, b'!'], 7), Ok(b"ababab!".to_vec()));
        // Extended lengths: 15 + 255 + 1 = 271 literals; match 15 + 4 + 2 = 21.
        let mut input = vec![0xff, 255, 1];
        input.extend(std::iter::repeat_n(b'z', 271));
        input.extend([1, 0, 2, 0x00]);
        let out = lz4_block_decompress(&input, 292).expect("extended");
        assert!(out.len() == 292 && out.iter().all(|&c| c == b'z'));

        for (bad, expected, why) in [
            (&[][..], 0, "empty input"),
            (&[0x30, b'a'][..], 3, "literals past the end"),
            (&[0xf0][..], 15, "ends inside a literal length"),
            (&[0xf0, 255][..], 300, "ends inside a literal length"),
            (&[0x10, b'a', 1][..], 5, "ends inside an offset"),
            (&[0x10, b'a', 0, 0, 0x00][..], 5, "offset 0"),
            (&[0x10, b'a', 2, 0, 0x00][..], 6, "offset before the start"),
            (&[0x1f, b'a', 1, 0][..], 50, "ends inside a match length"),
            (&[0x10, b'a', 1, 0][..], 5, "ends after a match"),
            (&[0x30, b'a', b'b', b'c'][..], 2, "literals past the declared size"),
            (&[0x13, b'x', 1, 0, 0x00][..], 5, "match past the declared size"),
            (&[0x30, b'a', b'b', b'c'][..], 4, "shorter than declared"),
        ] {
            assert!(lz4_block_decompress(bad, expected).is_err(), "{why}");
        }
        // Every prefix of nvcc's own LZ4 block fails.
        let eh = EntryHeader::read(&SPEED[16..]).expect("header");
        let block = &SPEED[16 + 0x50..16 + 0x50 + eh.compressed_size as usize];
        let full = lz4_block_decompress(block, eh.decompressed_size as usize).expect("full");
        assert_eq!(full.len(), eh.decompressed_size as usize);
        for len in 0..block.len() {
            assert!(lz4_block_decompress(&block[..len], full.len()).is_err(), "prefix {len}");
        }
    }

    #[test]
    fn zstd_decoder_rejects_bad_input() {
        let eh = EntryHeader::read(&DEFAULT[16..]).expect("header");
        let frame = &DEFAULT[16 + 0x50..16 + 0x50 + eh.compressed_size as usize];
        let n = eh.decompressed_size as usize;
        assert_eq!(zstd_decompress(frame, n).map(|v| v.len()), Ok(n));
        for len in 1..frame.len() {
            assert!(zstd_decompress(&frame[..len], n).is_err(), "prefix {len}");
        }
        assert!(zstd_decompress(frame, n - 1).is_err());
        assert!(zstd_decompress(frame, n + 1).is_err());
        assert!(zstd_decompress(&[0u8; 8], 8).is_err());
        // Two copies of the frame: two frames, twice the output.
        let twice = [frame, frame].concat();
        assert_eq!(zstd_decompress(&twice, 2 * n).map(|v| v.len()), Ok(2 * n));
    }
}
