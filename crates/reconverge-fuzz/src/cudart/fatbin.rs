//! The fat binaries a child registers: the fuzzer's own module (`module.ptx`) wrapped the way `nvcc`
//! wraps PTX, or one of the shim's real `nvcc` fixtures (`reconverge-cudart/tests/data`, compressed with
//! zstd or LZ4, concatenated, SASS only, a program's whole `.nv_fatbin` section), and the damage done to
//! them: bit flips, truncation, lying header and entry fields (a fat size of `0x0fff0000`, a payload 8 MiB
//! past the bytes there), garbage magic, swapped entries, damaged PTX text.
//!
//! The layout (the shim's `fatbin.rs` documents it in full): a 16-byte header (magic [`FATBIN_MAGIC`],
//! version 1, header size 16, fat size), then entries, each a header of at least 0x40 bytes (kind, header
//! size, payload size, compressed size, architecture, flags, decompressed size) and its payload.

use reconverge_ptx::mutate::{apply as apply_ptx, random_mutation, Mutation};

/// `__fatBinC_Wrapper_t::magic`.
pub const WRAPPER_MAGIC: u32 = 0x466243b1;
/// The first four bytes of a fat binary.
pub const FATBIN_MAGIC: u32 = 0xBA55ED50;
/// The fuzzer's module: six kernels, a `__device__`, a `__constant__` and a `__managed__` variable.
pub const MODULE_PTX: &str = include_str!("module.ptx");

macro_rules! fixture {
    ($name:literal) => {
        ($name, include_bytes!(concat!("../../../reconverge-cudart/tests/data/", $name)).as_slice())
    };
}

/// Real `nvcc` output (the shim's fixtures; their kernel is `add`, [`super::plan::FIXTURE_KERNEL`]).
pub const FIXTURES: [(&str, &[u8]); 7] = [
    fixture!("add_compute80_none.fatbin"),
    fixture!("add_compute80_default.fatbin"),
    fixture!("add_compute80_speed.fatbin"),
    fixture!("add_compute75_compute90_concat.fatbin"),
    fixture!("add_sm75_sm90_compute75_compute90_concat.fatbin"),
    fixture!("add_sm80_sass_only.fatbin"),
    fixture!("add_program_compute80.nv_fatbin"),
];

/// Where the fat binary's bytes are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// In an anonymous mapping, ending at an unmapped page (what a header claims past it cannot be read).
    Heap,
    /// In a static buffer of the child's executable (a loaded segment, as nvcc's `.nv_fatbin` is), at
    /// the buffer's end.
    Static,
}

/// What the fat binary is made from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FatBase {
    /// The fuzzer's module, one PTX entry per architecture listed (in order), after an empty fat binary
    /// when `leading_empty` (as a program's section starts), one of its arrays given another length
    /// (`resize`), its text damaged by `ptx`.
    Own {
        /// SM numbers of the PTX entries.
        archs: Vec<u32>,
        /// An empty fat binary first.
        leading_empty: bool,
        /// An array ([`RESIZABLE`] index) and its new length in the PTX.
        resize: Option<(u8, u64)>,
        /// Damage to the PTX text.
        ptx: Vec<Mutation>,
    },
    /// A fixture, by index in [`FIXTURES`].
    Fixture(u8),
}

/// The module's arrays whose declared length [`FatBase::Own`]'s `resize` changes: the `__device__`, the
/// `__constant__`, the `__managed__` variable and the dynamic shared array (which then gets a static size).
pub const RESIZABLE: [&str; 4] = ["dvar[64]", "cvals[128]", "mvar[16]", "sh[]"];

/// Lengths a resized array is given: empty, small, past the memory limit, 2^31, 2^32, huge.
const ARRAY_LIES: [u64; 11] =
    [0, 1, 65, 1 << 16, 1 << 20, (64 << 20) + 1, 1 << 31, 1 << 32, 1 << 40, u32::MAX as u64, u64::MAX];

/// The fuzzer's module with array `resize.0` ([`RESIZABLE`]) declared `resize.1` long.
pub fn resized_module(resize: Option<(u8, u64)>) -> String {
    match resize {
        Some((i, len)) => {
            let decl = RESIZABLE[i as usize % RESIZABLE.len()];
            let name = decl.split('[').next().unwrap_or(decl);
            MODULE_PTX.replacen(decl, &format!("{name}[{len}]"), 1)
        }
        None => MODULE_PTX.to_string(),
    }
}

/// A field of a fat binary header or an entry header: (offset, width in bytes).
const HEADER_FIELDS: [(usize, usize); 4] = [(0, 4), (4, 2), (6, 2), (8, 8)];
/// Entry header fields: kind, version, header size, payload size, compressed size, extra offset, PTX
/// version, architecture, name offset and length, flags, decompressed size.
const ENTRY_FIELDS: [(usize, usize); 12] = [
    (0, 2),
    (2, 2),
    (4, 4),
    (8, 8),
    (0x10, 4),
    (0x14, 4),
    (0x18, 4),
    (0x1c, 4),
    (0x20, 4),
    (0x24, 4),
    (0x28, 8),
    (0x38, 8),
];

/// A new field value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    /// This value.
    Set(u64),
    /// The old value plus this (wrapping).
    Add(i64),
}

/// One piece of damage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FatMut {
    /// A field of the first fat binary header (`HEADER_FIELDS` index).
    Header {
        /// Which field.
        field: u8,
        /// Its new value.
        value: Value,
    },
    /// A field of an entry header (entry index and field modulo what is there).
    Entry {
        /// Which entry.
        entry: u8,
        /// Which field (`ENTRY_FIELDS` index).
        field: u8,
        /// Its new value.
        value: Value,
    },
    /// XOR a byte (position modulo the length).
    Flip {
        /// Position.
        at: u32,
        /// Mask.
        xor: u8,
    },
    /// Keep only the first bytes (modulo the length + 1).
    Truncate {
        /// How many.
        keep: u32,
    },
    /// Delete a run of bytes.
    Delete {
        /// Position.
        at: u32,
        /// Length.
        len: u16,
    },
    /// Insert random bytes.
    Insert {
        /// Position.
        at: u32,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// Swap two entries (header and payload).
    Swap {
        /// One entry.
        a: u8,
        /// The other.
        b: u8,
    },
}

/// A fat binary to register: its base, its damage, its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FatSource {
    /// What it is made from.
    pub base: FatBase,
    /// The damage done to the bytes.
    pub damage: Vec<FatMut>,
    /// Where the bytes are placed.
    pub place: Place,
}

impl FatSource {
    /// The bytes: the base built, then damaged.
    pub fn bytes(&self) -> Vec<u8> {
        let mut bytes = match &self.base {
            FatBase::Own { archs, leading_empty, resize, ptx } => {
                let text = apply_ptx(&resized_module(*resize), ptx);
                let entries: Vec<(u32, &[u8])> = archs.iter().map(|&a| (a, text.as_bytes())).collect();
                let mut b = if *leading_empty { build(&[]) } else { Vec::new() };
                b.extend(build(&entries));
                b
            }
            FatBase::Fixture(i) => FIXTURES[*i as usize % FIXTURES.len()].1.to_vec(),
        };
        for m in &self.damage {
            apply(&mut bytes, m);
        }
        bytes
    }
}

/// A fat binary of PTX entries `(SM number, text)`, stored uncompressed as `nvcc --compress-mode=none`
/// stores them: a 16-byte header, then per entry a 0x40-byte header and the text, NUL-terminated and
/// padded to 8 bytes.
pub fn build(entries: &[(u32, &[u8])]) -> Vec<u8> {
    let mut body = Vec::new();
    for &(arch, text) in entries {
        let payload_len = (text.len() + 1).div_ceil(8) * 8;
        let mut h = [0u8; 0x40];
        h[0..2].copy_from_slice(&1u16.to_le_bytes()); // PTX
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&0x40u32.to_le_bytes());
        h[8..16].copy_from_slice(&(payload_len as u64).to_le_bytes());
        h[0x18..0x1c].copy_from_slice(&[5, 0, 9, 0]); // PTX ISA 9.5
        h[0x1c..0x20].copy_from_slice(&arch.to_le_bytes());
        h[0x28..0x30].copy_from_slice(&0x11u64.to_le_bytes()); // 64-bit, as nvcc sets
        body.extend_from_slice(&h);
        body.extend_from_slice(text);
        body.resize(body.len() + payload_len - text.len(), 0);
    }
    let mut out = Vec::with_capacity(16 + body.len());
    out.extend_from_slice(&FATBIN_MAGIC.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend(body);
    out
}

/// Little-endian read of `width` bytes at `at` (0 past the end).
fn get(bytes: &[u8], at: usize, width: usize) -> u64 {
    let mut v = [0u8; 8];
    if let Some(s) = bytes.get(at..at.saturating_add(width)) {
        v[..width].copy_from_slice(s);
    }
    u64::from_le_bytes(v)
}

/// Little-endian write of the low `width` bytes of `value` at `at` (nothing past the end).
fn set(bytes: &mut [u8], at: usize, width: usize, value: u64) {
    if let Some(s) = bytes.get_mut(at..at.saturating_add(width)) {
        s.copy_from_slice(&value.to_le_bytes()[..width]);
    }
}

/// `(start, length)` of each entry of the first non-empty fat binary in `bytes`, as far as the headers
/// can be followed inside the bytes.
pub fn entry_spans(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut at = 0usize;
    // Past empty fat binaries, as the shim looks past the device-link step's.
    for _ in 0..4 {
        if get(bytes, at + 8, 8) != 0 || get(bytes, at + 16, 4) != u64::from(FATBIN_MAGIC) {
            break;
        }
        at += 16;
    }
    let header_len = get(bytes, at + 6, 2) as usize;
    let end = (at + header_len).saturating_add(get(bytes, at + 8, 8) as usize).min(bytes.len());
    let mut pos = at + header_len;
    let mut spans = Vec::new();
    while pos + 0x40 <= end && spans.len() < 64 {
        let len = get(bytes, pos + 4, 4).saturating_add(get(bytes, pos + 8, 8));
        let Some(next) = usize::try_from(len).ok().and_then(|l| pos.checked_add(l)).filter(|&n| n <= end && n > pos)
        else {
            break;
        };
        spans.push((pos, next - pos));
        pos = next;
    }
    spans
}

/// Applies one piece of damage.
pub fn apply(bytes: &mut Vec<u8>, m: &FatMut) {
    let value = |old: u64, v: Value| match v {
        Value::Set(x) => x,
        Value::Add(d) => old.wrapping_add_signed(d),
    };
    match m {
        FatMut::Header { field, value: v } => {
            let (at, w) = HEADER_FIELDS[*field as usize % HEADER_FIELDS.len()];
            let old = get(bytes, at, w);
            set(bytes, at, w, value(old, *v));
        }
        FatMut::Entry { entry, field, value: v } => {
            let spans = entry_spans(bytes);
            let Some(&(start, _)) = spans.get(*entry as usize % spans.len().max(1)) else { return };
            let (off, w) = ENTRY_FIELDS[*field as usize % ENTRY_FIELDS.len()];
            let old = get(bytes, start + off, w);
            set(bytes, start + off, w, value(old, *v));
        }
        FatMut::Flip { at, xor } if !bytes.is_empty() => {
            let i = *at as usize % bytes.len();
            bytes[i] ^= xor;
        }
        FatMut::Truncate { keep } => bytes.truncate(*keep as usize % (bytes.len() + 1)),
        FatMut::Delete { at, len } if !bytes.is_empty() => {
            let i = *at as usize % bytes.len();
            let end = (i + *len as usize).min(bytes.len());
            bytes.drain(i..end);
        }
        FatMut::Insert { at, bytes: extra } => {
            let i = *at as usize % (bytes.len() + 1);
            bytes.splice(i..i, extra.iter().copied());
        }
        FatMut::Swap { a, b } => swap_entries(bytes, *a, *b),
        FatMut::Flip { .. } | FatMut::Delete { .. } => {}
    }
}

/// Swaps entries `a` and `b` (modulo the count) in place.
fn swap_entries(bytes: &mut [u8], a: u8, b: u8) {
    let spans = entry_spans(bytes);
    if spans.len() < 2 {
        return;
    }
    let (i, j) = (a as usize % spans.len(), b as usize % spans.len());
    let (first, second) = (spans[i.min(j)], spans[i.max(j)]);
    if i == j {
        return;
    }
    let region = first.0..second.0 + second.1;
    let mut swapped = Vec::with_capacity(region.len());
    swapped.extend_from_slice(&bytes[second.0..second.0 + second.1]);
    swapped.extend_from_slice(&bytes[first.0 + first.1..second.0]);
    swapped.extend_from_slice(&bytes[first.0..first.0 + first.1]);
    bytes[region].copy_from_slice(&swapped);
}

/// Sizes a lying field is given.
const LIES: [u64; 14] =
    [0, 1, 8, 15, 16, 0x3f, 0x40, 0x50, 0x0fff_0000, 1 << 30, (1 << 30) + 1, u32::MAX as u64, u64::MAX - 15, u64::MAX];

/// One random piece of damage.
pub fn random_damage(rng: &mut fastrand::Rng) -> FatMut {
    let value = |rng: &mut fastrand::Rng| match rng.u8(..4) {
        0 => Value::Add(8 << 20), // 8 MiB past what is there
        1 => Value::Add([-8i64, -1, 1, 8][rng.usize(..4)]),
        _ => Value::Set(LIES[rng.usize(..LIES.len())]),
    };
    match rng.u8(..16) {
        0..=2 => FatMut::Header { field: rng.u8(..HEADER_FIELDS.len() as u8), value: value(rng) },
        3..=7 => FatMut::Entry { entry: rng.u8(..4), field: rng.u8(..ENTRY_FIELDS.len() as u8), value: value(rng) },
        8..=10 => FatMut::Flip { at: rng.u32(..), xor: 1 << rng.u8(..8) },
        11 => FatMut::Flip { at: rng.u32(..0x60), xor: rng.u8(1..) },
        12 => FatMut::Truncate { keep: rng.u32(..) },
        13 => FatMut::Delete { at: rng.u32(..), len: rng.u16(1..64) },
        14 => FatMut::Insert { at: rng.u32(..), bytes: (0..rng.usize(1..24)).map(|_| rng.u8(..)).collect() },
        _ => FatMut::Swap { a: rng.u8(..4), b: rng.u8(..4) },
    }
}

/// A fat binary source: the fuzzer's module mostly (sometimes with two PTX entries, or after an empty
/// fat binary), a fixture otherwise; when `damaged`, with one to four pieces of damage or damaged PTX.
pub fn random_source(rng: &mut fastrand::Rng, damaged: bool) -> FatSource {
    let base = if rng.u8(..10) < 8 {
        let archs = match rng.u8(..10) {
            0..=6 => vec![80],
            7 => vec![75, 80],
            8 => vec![80, 80],
            _ => vec![90, 70],
        };
        let (mut resize, mut ptx) = (None, Vec::new());
        match rng.u8(..20) {
            0..=4 if damaged => ptx = (0..rng.usize(1..=3)).map(|_| random_mutation(rng)).collect(),
            5..=8 if damaged => {
                resize = Some((rng.u8(..RESIZABLE.len() as u8), ARRAY_LIES[rng.usize(..ARRAY_LIES.len())]))
            }
            _ => {}
        }
        FatBase::Own { archs, leading_empty: rng.u8(..4) == 0, resize, ptx }
    } else {
        FatBase::Fixture(rng.u8(..FIXTURES.len() as u8))
    };
    let own_ptx_damage = matches!(&base, FatBase::Own { ptx, resize, .. } if !ptx.is_empty() || resize.is_some());
    let damage = if damaged && !own_ptx_damage {
        (0..rng.usize(1..=4)).map(|_| random_damage(rng)).collect()
    } else {
        Vec::new()
    };
    let place = if rng.bool() { Place::Heap } else { Place::Static };
    FatSource { base, damage, place }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_cudart::fatbin as shim;

    /// The fuzzer's own fat binary is one the shim reads, with its module's PTX, which the shim's front
    /// end accepts; the magic numbers are the shim's.
    #[test]
    fn own_fat_binary_is_what_the_shim_reads() {
        assert_eq!(WRAPPER_MAGIC, shim::WRAPPER_MAGIC);
        assert_eq!(FATBIN_MAGIC, shim::FATBIN_MAGIC);
        let src = FatSource {
            base: FatBase::Own { archs: vec![75, 80], leading_empty: true, resize: None, ptx: Vec::new() },
            damage: Vec::new(),
            place: Place::Heap,
        };
        let bytes = src.bytes();
        let entries = shim::entries(&bytes).expect("parses");
        assert_eq!(entries.len(), 2);
        let (arch, ptx, _) = shim::select_ptx(&entries, |a, t| shim::parse_check(&format!("sm_{a}"), t)).expect("PTX");
        assert_eq!((arch, ptx.trim_end()), (80, MODULE_PTX.trim_end()));
        assert_eq!(entry_spans(&bytes).len(), 2, "entries are found past the leading empty fat binary");
    }

    #[test]
    fn arrays_are_resized_in_the_ptx() {
        let text = resized_module(Some((0, 1 << 40)));
        assert!(text.contains(".b8 dvar[1099511627776];") && !text.contains("dvar[64]"), "{text}");
        assert!(resized_module(Some((3, 16))).contains(".b8 sh[16];"));
        assert_eq!(resized_module(None), MODULE_PTX);
    }

    #[test]
    fn entries_of_the_fixtures_are_found() {
        for (name, bytes) in FIXTURES {
            let n = shim::entries(bytes).map(|e| e.len()).unwrap_or(0);
            assert!(!entry_spans(bytes).is_empty() && n > 0, "{name}");
        }
    }

    /// A lying field lands where the header keeps it; two entries swap whole.
    #[test]
    fn damage_lands_where_it_says() {
        let mut b = build(&[(75, b"first"), (80, b"second")]);
        apply(&mut b, &FatMut::Header { field: 3, value: Value::Set(0x0fff_0000) });
        assert_eq!(get(&b, 8, 8), 0x0fff_0000);
        let mut b = build(&[(75, b"first"), (80, b"second")]);
        apply(&mut b, &FatMut::Entry { entry: 1, field: 3, value: Value::Add(8 << 20) });
        let (second, _) = entry_spans(&build(&[(75, b"first"), (80, b"second")]))[1];
        assert_eq!(get(&b, second + 8, 8), 8 + (8 << 20));
        let mut b = build(&[(75, b"first"), (80, b"second")]);
        apply(&mut b, &FatMut::Swap { a: 0, b: 1 });
        let archs: Vec<u32> = shim::entries(&b).expect("still parses").iter().map(|e| e.arch).collect();
        assert_eq!(archs, [80, 75]);
    }

    /// Any damage to any base is applied without a panic, the same way every time.
    #[test]
    fn random_damage_never_panics() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..2000 {
            let src = random_source(&mut rng, true);
            assert_eq!(src.bytes(), src.bytes());
        }
    }
}
