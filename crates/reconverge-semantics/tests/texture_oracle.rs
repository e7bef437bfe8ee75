//! `texture`: every case of `tests/data/texture_cases.txt`, which `scripts/texture_oracle.py` (a NumPy
//! implementation of the module documentation, written without reading the function bodies) generates, must
//! come out bit for bit the same here; and a few cases worked out by hand. `TEXTURE_ORACLE_DUMP=FILE` appends
//! every differing case to FILE (the failure message shows the first few).

use std::collections::HashMap;

use reconverge_semantics::texture::{
    gather, query, sample, surface_addr, AddressMode, ChannelKind, Coords, Descriptor, Format, Geometry, ObjectKind,
    OutOfRange, Query, Resource, ResultType, Sampler, SurfaceAddr,
};

/// Device memory: a byte image at a base address; a read outside it is an error naming the address.
struct Image {
    base: u64,
    bytes: Vec<u8>,
}

impl Image {
    fn read(&self, addr: u64, size: u32) -> Result<u64, String> {
        let off = addr.checked_sub(self.base).filter(|o| o + u64::from(size) <= self.bytes.len() as u64);
        let Some(off) = off else {
            return Err(format!("read of {size} bytes at {addr:#x}, outside the image at {:#x}", self.base));
        };
        let off = off as usize;
        Ok(self.bytes[off..off + size as usize].iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b)))
    }
}

fn hex_u64(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("hex {s:?}: {e}"))
}

fn hex_f32(s: &str) -> f32 {
    f32::from_bits(u32::from_str_radix(s, 16).unwrap_or_else(|e| panic!("hex {s:?}: {e}")))
}

fn dec<T: std::str::FromStr>(s: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    s.parse().unwrap_or_else(|e| panic!("number {s:?}: {e:?}"))
}

fn bytes_of_hex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd hex length");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

fn geometry(s: &str) -> Geometry {
    match s {
        "1d" => Geometry::D1,
        "2d" => Geometry::D2,
        "3d" => Geometry::D3,
        "a1d" => Geometry::A1,
        "a2d" => Geometry::A2,
        _ => panic!("geometry {s:?}"),
    }
}

fn result_type(s: &str) -> ResultType {
    match s {
        "f32" => ResultType::F32,
        "s32" => ResultType::S32,
        "u32" => ResultType::U32,
        _ => panic!("result type {s:?}"),
    }
}

fn query_of(s: &str) -> Query {
    match s {
        "width" => Query::Width,
        "height" => Query::Height,
        "depth" => Query::Depth,
        "array_size" => Query::ArraySize,
        "normalized_coords" => Query::NormalizedCoords,
        "filter_mode" => Query::FilterMode,
        "addr_mode_0" => Query::AddrMode(0),
        "addr_mode_1" => Query::AddrMode(1),
        "addr_mode_2" => Query::AddrMode(2),
        _ => panic!("query {s:?}"),
    }
}

fn out_of_range(s: &str) -> OutOfRange {
    match s {
        "trap" => OutOfRange::Trap,
        "clamp" => OutOfRange::Clamp,
        "zero" => OutOfRange::Zero,
        _ => panic!("out-of-range rule {s:?}"),
    }
}

/// `desc ID IMAGE OBJ RES KIND CHANNELS BITS BASE WIDTH PITCH HEIGHT DEPTH LAYERS A0 A1 A2 LIN NF NC B0..B3`
/// (after `desc ID`).
fn descriptor(f: &[&str]) -> (Option<u32>, Descriptor) {
    assert_eq!(f.len(), 22, "desc fields: {f:?}");
    let image = if f[0] == "-" { None } else { Some(dec(f[0])) };
    let object = match f[1] {
        "tex" => ObjectKind::Texture,
        "surf" => ObjectKind::Surface,
        s => panic!("object {s:?}"),
    };
    let resource = match f[2] {
        "linear" => Resource::Linear,
        "pitch2d" => Resource::Pitch2d,
        "array" => Resource::Array,
        s => panic!("resource {s:?}"),
    };
    let kind = match f[3] {
        "s" => ChannelKind::Signed,
        "u" => ChannelKind::Unsigned,
        "f" => ChannelKind::Float,
        s => panic!("channel kind {s:?}"),
    };
    let mode = |s: &str| AddressMode::from_cuda(dec(s)).unwrap_or_else(|| panic!("address mode {s:?}"));
    let flag = |s: &str| match s {
        "0" => false,
        "1" => true,
        _ => panic!("flag {s:?}"),
    };
    let d = Descriptor {
        object,
        resource,
        format: Format { kind, channels: dec(f[4]), bits: dec(f[5]) },
        base: hex_u64(f[6]),
        width: dec(f[7]),
        pitch: dec(f[8]),
        height: dec(f[9]),
        depth: dec(f[10]),
        layers: dec(f[11]),
        sampler: Sampler {
            address: [mode(f[12]), mode(f[13]), mode(f[14])],
            linear: flag(f[15]),
            normalized_float: flag(f[16]),
            normalized_coords: flag(f[17]),
            border: [hex_f32(f[18]), hex_f32(f[19]), hex_f32(f[20]), hex_f32(f[21])],
        },
    };
    (image, d)
}

fn results(f: &[&str]) -> [u32; 4] {
    assert_eq!(f.len(), 4, "four results: {f:?}");
    [0, 1, 2, 3].map(|i| hex_u64(f[i]) as u32)
}

/// What a case line says it expects, and what the Rust functions give.
#[derive(PartialEq, Debug)]
enum Outcome {
    Regs([u32; 4]),
    Value(u32),
    Surface(SurfaceAddr),
    Fault(String),
    Panic(String),
}

/// Equal bit for bit; except off x86-64, where a NaN the filter's binary64 arithmetic made matches any NaN (the
/// file's header says why).
fn agree(expected: &Outcome, actual: &Outcome, filtered: bool) -> bool {
    match (expected, actual) {
        (Outcome::Regs(e), Outcome::Regs(a)) if filtered && !cfg!(target_arch = "x86_64") => {
            e.iter().zip(a).all(|(&e, &a)| e == a || (f32::from_bits(e).is_nan() && f32::from_bits(a).is_nan()))
        }
        _ => expected == actual,
    }
}

struct Mismatch {
    line_no: usize,
    line: String,
    desc_line: String,
    image: String,
    actual: Outcome,
}

#[test]
fn the_oracle_table_agrees_bit_for_bit() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/texture_cases.txt");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut declared: Option<usize> = None;
    let mut images: HashMap<u32, Image> = HashMap::new();
    let mut image_lines: HashMap<u32, String> = HashMap::new();
    let mut descs: HashMap<u32, (Option<u32>, Descriptor, String)> = HashMap::new();
    let mut cases = 0usize;
    let mut by_op: HashMap<&str, usize> = HashMap::new();
    let mut mismatches: Vec<Mismatch> = Vec::new();
    let mut mismatch_count = 0usize;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let op = f[0];
        if op == "cases" {
            declared = Some(dec(f[1]));
            continue;
        }
        if op == "image" {
            let id: u32 = dec(f[1]);
            images.insert(id, Image { base: hex_u64(f[2]), bytes: bytes_of_hex(f[3]) });
            let shown =
                if f[3].len() > 96 { format!("{}… ({} bytes)", &f[3][..96], f[3].len() / 2) } else { f[3].into() };
            image_lines.insert(id, format!("image {} {} {}", f[1], f[2], shown));
            continue;
        }
        if op == "desc" {
            let (image, d) = descriptor(&f[2..]);
            // The descriptor survives its trip through device memory.
            assert_eq!(Descriptor::decode(&d.encode()), Ok(d), "line {}: encode/decode round trip", n + 1);
            descs.insert(dec(f[1]), (image, d, line.to_string()));
            continue;
        }
        cases += 1;
        *by_op.entry(op).or_default() += 1;
        let eq = f.iter().position(|&t| t == "=").unwrap_or_else(|| panic!("line {}: no '='", n + 1));
        let (args, want) = (&f[1..eq], &f[eq + 1..]);
        let (image, d, desc_line) = descs.get(&dec::<u32>(args[0])).unwrap_or_else(|| panic!("line {}: desc", n + 1));
        let img = image.map(|i| &images[&i]);
        let mut mem = |addr: u64, size: u32| match img {
            Some(img) => img.read(addr, size),
            None => Err(format!("read of {size} bytes at {addr:#x}: this object has no image")),
        };
        let regs = |r: Result<[u32; 4], String>| r.map_or_else(Outcome::Fault, Outcome::Regs);
        // A panic is an outcome too (reported with the case), not the end of the run.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match op {
            "sample" => {
                let geom = geometry(args[1]);
                let ty = result_type(args[7]);
                let (coords, float) = match args[2] {
                    "f" => (Coords::Float([hex_f32(args[3]), hex_f32(args[4]), hex_f32(args[5])]), true),
                    "i" => (Coords::Int([dec(args[3]), dec(args[4]), dec(args[5])]), false),
                    s => panic!("line {}: coordinates {s:?}", n + 1),
                };
                let actual = regs(sample(d, geom, coords, dec(args[6]), ty, &mut mem));
                (Outcome::Regs(results(want)), actual, float && d.sampler.linear && ty == ResultType::F32)
            }
            "gather" => {
                let actual =
                    regs(gather(d, dec(args[1]), [hex_f32(args[2]), hex_f32(args[3])], result_type(args[4]), &mut mem));
                (Outcome::Regs(results(want)), actual, false)
            }
            "query" => (Outcome::Value(dec(want[0])), Outcome::Value(query(d, query_of(args[1]))), false),
            "surface" => {
                let expected = match want {
                    ["at", a] => SurfaceAddr::At(hex_u64(a)),
                    ["dropped"] => SurfaceAddr::Dropped,
                    ["trap"] => SurfaceAddr::Trap,
                    _ => panic!("line {}: surface result {want:?}", n + 1),
                };
                let c = [dec(args[2]), dec(args[3]), dec(args[4])];
                let actual = surface_addr(d, geometry(args[1]), c, dec(args[5]), dec(args[6]), out_of_range(args[7]));
                (Outcome::Surface(expected), Outcome::Surface(actual), false)
            }
            _ => panic!("line {}: unknown record {op:?}", n + 1),
        }));
        let (expected, actual, filtered) = run.unwrap_or_else(|p| {
            let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            (Outcome::Fault(String::new()), Outcome::Panic(msg.unwrap_or_default()), false)
        });
        if !agree(&expected, &actual, filtered) {
            mismatch_count += 1;
            if let Ok(p) = std::env::var("TEXTURE_ORACLE_DUMP") {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new().append(true).create(true).open(p).unwrap();
                writeln!(
                    f,
                    "{line}\n  actual: {actual:x?}\n  {desc_line}\n  {}",
                    image.map(|i| image_lines[&i].clone()).unwrap_or_default()
                )
                .unwrap();
            }
            if mismatches.len() < 8 {
                mismatches.push(Mismatch {
                    line_no: n + 1,
                    line: line.to_string(),
                    desc_line: desc_line.clone(),
                    image: image.map(|i| image_lines[&i].clone()).unwrap_or_default(),
                    actual,
                });
            }
        }
    }
    let declared = declared.expect("the file declares its number of cases");
    assert_eq!(cases, declared, "the file declares {declared} cases and holds {cases}");
    assert!(cases >= 1000, "only {cases} cases");
    for op in ["sample", "gather", "query", "surface"] {
        assert!(by_op.get(op).copied().unwrap_or(0) > 0, "no {op} cases");
    }
    if mismatch_count > 0 {
        let mut report = format!("{mismatch_count} of {cases} cases differ from the oracle; the first ones:\n");
        for m in &mismatches {
            report += &format!(
                "line {}: {}\n  actual: {:x?}\n  {}\n  {}\n",
                m.line_no, m.line, m.actual, m.desc_line, m.image
            );
        }
        panic!("{report}");
    }
    println!("{cases} texture cases agree ({by_op:?})");
}

// ------------------------------------------------------------------------------------------------------------
// Cases worked out by hand.
// ------------------------------------------------------------------------------------------------------------

const BASE: u64 = 0x4000;

fn array(format: Format, width: u64, height: u32, sampler: Sampler) -> Descriptor {
    Descriptor {
        object: ObjectKind::Texture,
        resource: Resource::Array,
        format,
        base: BASE,
        width,
        pitch: width * format.bytes(),
        height,
        depth: 1,
        layers: 1,
        sampler,
    }
}

fn sampler(mode: AddressMode, linear: bool) -> Sampler {
    Sampler {
        address: [mode; 3],
        linear,
        normalized_float: false,
        normalized_coords: false,
        border: [0.25, -0.5, 2.0, -0.0],
    }
}

const F32X1: Format = Format { kind: ChannelKind::Float, channels: 1, bits: 32 };

fn f32_image(values: &[f32]) -> Image {
    Image { base: BASE, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() }
}

fn fetch(d: &Descriptor, img: &Image, geom: Geometry, c: Coords, ty: ResultType) -> [u32; 4] {
    sample(d, geom, c, 0, ty, &mut |a, s| img.read(a, s)).unwrap()
}

fn floats(r: [u32; 4]) -> [f32; 4] {
    r.map(f32::from_bits)
}

/// Two texels 1.0 and 4.0, linear filtering, x = 1.0 (the edge between the two centres 0.5 and 1.5):
/// x - 0.5 = 0.5, i = 0, alpha = 0.5 exactly, so 0.5 * 1.0 + 0.5 * 4.0 = 2.5 — the mean, exactly. A one-channel
/// format reads g = b = 0 and alpha = 1.
#[test]
fn a_two_texel_linear_filter_at_the_middle_is_the_mean() {
    let img = f32_image(&[1.0, 4.0]);
    let d = array(F32X1, 2, 1, sampler(AddressMode::Clamp, true));
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([1.0, 0.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r), [2.5, 0.0, 0.0, 1.0]);
    // At a texel centre (x = 0.5: alpha = 0) the filter returns that texel.
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([0.5, 0.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r)[0], 1.0);
    // x = 1.25: alpha = 0.75 = 192/256, 0.25 * 1 + 0.75 * 4 = 3.25.
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([1.25, 0.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r)[0], 3.25);
    // x = 0.6: x - 0.5 = 0.100000024 (binary32); alpha = round(25.6000061) / 256 = 26/256;
    // (230 * 1 + 26 * 4) / 256 = 334 / 256 = 1.3046875, exact in binary32.
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([0.6, 0.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r)[0], 1.3046875);
}

/// A 2 x 2 texture 1, 2 / 3, 4 filtered at (1, 1), the corner the four texels share: every weight is 1/4,
/// (1 + 2 + 3 + 4) / 4 = 2.5.
#[test]
fn a_bilinear_filter_at_the_shared_corner_is_the_mean_of_four() {
    let img = f32_image(&[1.0, 2.0, 3.0, 4.0]);
    let d = array(F32X1, 2, 2, sampler(AddressMode::Clamp, true));
    let r = fetch(&d, &img, Geometry::D2, Coords::Float([1.0, 1.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r), [2.5, 0.0, 0.0, 1.0]);
}

/// Point sampling reads texel floor(x): 1.999 reads texel 1; 2.0 is past the last texel of two: clamp reads
/// texel 1, border returns the border color (all four channels, for float results).
#[test]
fn point_sampling_floors_and_clamps_or_borders() {
    let img = f32_image(&[7.0, 9.0]);
    let clamp = array(F32X1, 2, 1, sampler(AddressMode::Clamp, false));
    let border = array(F32X1, 2, 1, sampler(AddressMode::Border, false));
    let at =
        |d: &Descriptor, x: f32| floats(fetch(d, &img, Geometry::D1, Coords::Float([x, 0.0, 0.0]), ResultType::F32));
    assert_eq!(at(&clamp, 1.999)[0], 9.0);
    assert_eq!(at(&clamp, 2.0)[0], 9.0);
    assert_eq!(at(&clamp, -0.001)[0], 7.0);
    assert_eq!(at(&border, 2.0).map(f32::to_bits), [0.25f32, -0.5, 2.0, -0.0].map(f32::to_bits));
    // NaN is index 0 (in range, so not the border).
    assert_eq!(at(&border, f32::NAN)[0], 7.0);
}

/// Normalized coordinates with mirror: x = 1.25 has floor 1 (odd), so 1 - frac = 0.75, times N = 4 is 3.0:
/// texel 3. Wrap: x = -0.25 has frac 0.75: texel 3 too; x = 2.5: frac 0.5, texel 2.
#[test]
fn normalized_mirror_and_wrap() {
    let img = f32_image(&[10.0, 11.0, 12.0, 13.0]);
    let mut s = sampler(AddressMode::Mirror, false);
    s.normalized_coords = true;
    let mirror = array(F32X1, 4, 1, s);
    s.address = [AddressMode::Wrap; 3];
    let wrap = array(F32X1, 4, 1, s);
    let at =
        |d: &Descriptor, x: f32| floats(fetch(d, &img, Geometry::D1, Coords::Float([x, 0.0, 0.0]), ResultType::F32))[0];
    assert_eq!(at(&mirror, 1.25), 13.0);
    assert_eq!(at(&mirror, 0.25), 11.0);
    assert_eq!(at(&wrap, -0.25), 13.0);
    assert_eq!(at(&wrap, 2.5), 12.0);
}

/// Normalized float: u8 255 -> 1.0, 0 -> 0.0, 51 -> 0.2 (51/255, rounded to binary32); s8 -128 -> -1.0
/// (-128/127 clamped), -127 -> -1.0, 127 -> 1.0. Element type with a u32 result: the raw values.
#[test]
fn normalized_float_reads() {
    let img = Image { base: BASE, bytes: vec![255, 0, 51, 0x80, 0x81, 0x7f] };
    let u8x1 = Format { kind: ChannelKind::Unsigned, channels: 1, bits: 8 };
    let s8x1 = Format { kind: ChannelKind::Signed, channels: 1, bits: 8 };
    let mut s = sampler(AddressMode::Clamp, false);
    s.normalized_float = true;
    let un = array(u8x1, 3, 1, s);
    let mut sn = array(s8x1, 3, 1, s);
    sn.base = BASE + 3;
    let at = |d: &Descriptor, x: i32| floats(fetch(d, &img, Geometry::D1, Coords::Int([x, 0, 0]), ResultType::F32))[0];
    assert_eq!([at(&un, 0), at(&un, 1), at(&un, 2)], [1.0, 0.0, 51.0f32 / 255.0]);
    assert_eq!(51.0f32 / 255.0, 0.2);
    assert_eq!([at(&sn, 0), at(&sn, 1), at(&sn, 2)], [-1.0, -1.0, 1.0]);
    // Element type, .s32: sign-extended; one channel, so g = b = 0 and alpha = 1.
    sn.sampler.normalized_float = false;
    let r = fetch(&sn, &img, Geometry::D1, Coords::Int([0, 0, 0]), ResultType::S32);
    assert_eq!(r, [(-128i32) as u32, 0, 0, 1]);
}

/// tex1Dfetch past the end of linear memory returns four zeros (alpha too), whatever the address mode.
#[test]
fn linear_memory_out_of_range_is_zero() {
    let img = f32_image(&[5.0, 6.0]);
    let mut d = array(F32X1, 2, 1, sampler(AddressMode::Clamp, false));
    d.resource = Resource::Linear;
    assert_eq!(
        fetch(&d, &img, Geometry::D1, Coords::Int([1, 0, 0]), ResultType::F32),
        [6.0f32.to_bits(), 0, 0, 1.0f32.to_bits()]
    );
    assert_eq!(fetch(&d, &img, Geometry::D1, Coords::Int([2, 0, 0]), ResultType::F32), [0; 4]);
    assert_eq!(fetch(&d, &img, Geometry::D1, Coords::Int([-1, 0, 0]), ResultType::F32), [0; 4]);
}

/// tld4 of a 2 x 2 texture a b / c d (a at (0, 0), b at (1, 0), c at (0, 1), d at (1, 1)) at (1, 1): the
/// footprint is i = j = 0, and the order (i, j+1), (i+1, j+1), (i+1, j), (i, j) is c, d, b, a.
#[test]
fn gather_order_is_counter_clockwise_from_the_lower_left() {
    let img = f32_image(&[1.0, 2.0, 3.0, 4.0]);
    let d = array(F32X1, 2, 2, sampler(AddressMode::Clamp, false));
    let r = gather(&d, 0, [1.0, 1.0], ResultType::F32, &mut |a, s| img.read(a, s)).unwrap();
    assert_eq!(floats(r), [3.0, 4.0, 2.0, 1.0]);
    // Component 3 of a one-channel format is alpha = 1 for every texel.
    let r = gather(&d, 3, [1.0, 1.0], ResultType::F32, &mut |a, s| img.read(a, s)).unwrap();
    assert_eq!(floats(r), [1.0; 4]);
}

/// A surface of 4 u32 elements a row, 3 rows, at BASE: byte x = 8, row 2 is BASE + 2 * 16 + 8; x = 16 is past
/// the row: trap, clamp to the last element (byte 12), or dropped.
#[test]
fn surface_addresses() {
    let mut d = array(Format { kind: ChannelKind::Unsigned, channels: 1, bits: 32 }, 4, 3, Sampler::default());
    d.object = ObjectKind::Surface;
    let at = |c: [i32; 3], oob| surface_addr(&d, Geometry::D2, c, 0, 4, oob);
    assert_eq!(at([8, 2, 0], OutOfRange::Trap), SurfaceAddr::At(BASE + 40));
    assert_eq!(at([16, 2, 0], OutOfRange::Trap), SurfaceAddr::Trap);
    assert_eq!(at([16, 2, 0], OutOfRange::Clamp), SurfaceAddr::At(BASE + 44));
    assert_eq!(at([-4, 5, 0], OutOfRange::Clamp), SurfaceAddr::At(BASE + 32));
    assert_eq!(at([16, 2, 0], OutOfRange::Zero), SurfaceAddr::Dropped);
    assert_eq!(query(&d, Query::Width), 4);
    assert_eq!(query(&d, Query::Height), 3);
}

/// Linear filtering entirely outside a border-mode texture: every term is the border color, so each channel is
/// (1-α)B + αB = B exactly; the border's alpha is -0.0 and -0.0 + -0.0 stays -0.0 (a sum started from +0.0
/// would give +0.0).
#[test]
fn a_filtered_sum_of_negative_zero_border_texels_is_negative_zero() {
    let img = f32_image(&[1.0, 4.0]);
    let d = array(F32X1, 2, 1, sampler(AddressMode::Border, true));
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([10.3, 0.0, 0.0]), ResultType::F32);
    assert_eq!(r, [0.25f32.to_bits(), (-0.5f32).to_bits(), 2.0f32.to_bits(), 0x8000_0000]);
}

/// A coordinate of +inf or 1e20 floors to the largest i64 (saturated); i + 1 must saturate too, so clamp reads
/// the last texel for both. Linear 1-D at +inf: alpha = 0 (no finite fraction), 1 * 4.0 + 0 * 4.0 = 4.0.
/// tld4 of a b / c d (1, 2 / 3, 4) at (1, +inf) or (1, 1e20): i = 0 and both rows clamp to row 1, so the order
/// (i, j+1), (i+1, j+1), (i+1, j), (i, j) reads c, d, d, c = 3, 4, 4, 3.
#[test]
fn infinite_and_huge_coordinates_clamp_without_overflow() {
    let img = f32_image(&[1.0, 4.0]);
    let d = array(F32X1, 2, 1, sampler(AddressMode::Clamp, true));
    let r = fetch(&d, &img, Geometry::D1, Coords::Float([f32::INFINITY, 0.0, 0.0]), ResultType::F32);
    assert_eq!(floats(r)[0], 4.0);
    let img = f32_image(&[1.0, 2.0, 3.0, 4.0]);
    let d = array(F32X1, 2, 2, sampler(AddressMode::Clamp, false));
    for y in [f32::INFINITY, 1e20] {
        let r = gather(&d, 0, [1.0, y], ResultType::F32, &mut |a, s| img.read(a, s)).unwrap();
        assert_eq!(floats(r), [3.0, 4.0, 4.0, 3.0], "y = {y}");
    }
}
