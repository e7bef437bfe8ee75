//! Kernel argument specifications (`--arg` on the command line, `args` in the manifest): a number, a
//! buffer (`@FILE.npy`, `zeros:`, `rand:`), a pointer into a buffer (`BUFFER+N`) or a struct passed by
//! value (`struct:TYPE=VALUE,...`, [`crate::structs`]); and the values of module variables.

use crate::error::ArgError;
use crate::structs::{self, Budget, FieldSpec, Offset};
use crate::Loader;
use reconverge_ir::ScalarType;
use reconverge_program::program::PlacedVar;
use reconverge_program::{parse_scalar, Arg, Buffer, Dtype, GlobalInit, Program, ValueError, VariableUse};

/// A parsed argument specification.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A number for a scalar parameter.
    Scalar(String),
    /// `@FILE.npy`: a buffer filled from the file.
    File(String),
    /// `zeros:DTYPE:LEN`: a zero-filled buffer.
    Zeros(Dtype, u64),
    /// `rand:DTYPE:LEN:SEED[:BOUND]`: a buffer of pseudo-random values ([`random_buffer`]).
    Random {
        /// Element type.
        dtype: Dtype,
        /// Elements.
        len: u64,
        /// The generator's seed.
        seed: u64,
        /// Integers in `0..BOUND`, floats in `[0, BOUND)` (absent: every bit pattern of an integer type,
        /// floats in `[0, 1)`).
        bound: Option<u64>,
    },
    /// `BUFFER+N` (`N` elements of the buffer's dtype, as `d_b + N` in C) or `BUFFER+Nb` (`N` bytes): the
    /// whole buffer is allocated and the address `N` elements (bytes) past its start is passed.
    At {
        /// The buffer spec (`File`, `Zeros` or `Random`).
        buffer: Box<ArgSpec>,
        /// How far into it.
        offset: Offset,
    },
    /// `struct:FIELD,...`: a struct passed by value, its fields laid out with C's natural alignment.
    Struct(Vec<FieldSpec>),
}

/// The `i`-th output of SplitMix64 from `seed` (Steele, Lea & Flood): the generator behind `rand:` specs,
/// written out so that any tool (the GPGPU-Sim runner, `scripts/gpgpusim/run.py`) makes the same bytes.
pub fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The buffer of `rand:DTYPE:LEN:SEED[:BOUND]`: element `i` comes from `x = splitmix64(SEED, i)`; an
/// integer is `x % BOUND` (or `x`'s low bytes without a bound), an `f32` is `(x >> 40) / 2^24 × BOUND`
/// and an `f64` `(x >> 11) / 2^53 × BOUND` (BOUND 1 when absent).
pub fn random_buffer(dtype: Dtype, len: usize, seed: u64, bound: Option<u64>) -> Result<Buffer, ArgError> {
    let mut b = Buffer::try_zeros(dtype, len)?;
    let size = dtype.size();
    for (i, chunk) in b.bytes.chunks_exact_mut(size).enumerate() {
        let x = splitmix64(seed, i as u64);
        let bits: u64 = match dtype {
            Dtype::F32 => {
                (((x >> 40) as f64 / (1u64 << 24) as f64 * bound.unwrap_or(1) as f64) as f32).to_bits().into()
            }
            Dtype::F64 => ((x >> 11) as f64 / (1u64 << 53) as f64 * bound.unwrap_or(1) as f64).to_bits(),
            _ => bound.filter(|&m| m > 0).map_or(x, |m| x % m),
        };
        chunk.copy_from_slice(&bits.to_le_bytes()[..size]);
    }
    Ok(b)
}

impl ArgSpec {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<ArgSpec, ArgError> {
        if let Some(rest) = text.strip_prefix("struct:") {
            return structs::parse_struct(rest).map(ArgSpec::Struct);
        }
        let is_buffer = text.starts_with('@') || text.starts_with("zeros:") || text.starts_with("rand:");
        if is_buffer {
            if let Some((base, offset)) = structs::split_offset(text) {
                let buffer = Box::new(ArgSpec::parse_buffer(base)?);
                return Ok(ArgSpec::At { buffer, offset });
            }
            return ArgSpec::parse_buffer(text);
        }
        Ok(ArgSpec::Scalar(text.to_string()))
    }

    /// Parses `@FILE`, `zeros:DTYPE:LEN` or `rand:DTYPE:LEN:SEED[:BOUND]`.
    fn parse_buffer(text: &str) -> Result<ArgSpec, ArgError> {
        if let Some(f) = text.strip_prefix('@') {
            if f.is_empty() {
                return Err(ArgError::EmptyFile);
            }
            return Ok(ArgSpec::File(f.to_string()));
        }
        if let Some(rest) = text.strip_prefix("zeros:") {
            let mut parts = rest.split(':');
            let (Some(d), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(ArgError::ZerosSyntax(text.to_string()));
            };
            let dtype: Dtype = d.parse()?;
            let len: u64 = n.parse().map_err(|_| {
                let (text, len) = (text.to_string(), n.to_string());
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    ArgError::LengthTooLarge { text, len }
                } else {
                    ArgError::NotALength { text, len }
                }
            })?;
            return Ok(ArgSpec::Zeros(dtype, len));
        }
        if let Some(rest) = text.strip_prefix("rand:") {
            let parts: Vec<&str> = rest.split(':').collect();
            let bad = || ArgError::RandSyntax(text.to_string());
            if !(3..=4).contains(&parts.len()) {
                return Err(bad());
            }
            let dtype: Dtype = parts[0].parse()?;
            let num = |s: &str| s.parse::<u64>().map_err(|_| bad());
            let bound = parts.get(3).map(|b| num(b)).transpose()?;
            return Ok(ArgSpec::Random { dtype, len: num(parts[1])?, seed: num(parts[2])?, bound });
        }
        Err(ArgError::OffsetSyntax(text.to_string()))
    }

    /// The spec with every file name it reads (its own, a struct's pointer fields') passed through `f`:
    /// specs from a manifest name files relative to the kernels directory.
    pub fn map_files(&self, f: &dyn Fn(&str) -> String) -> ArgSpec {
        match self {
            ArgSpec::File(p) => ArgSpec::File(f(p)),
            ArgSpec::At { buffer, offset } => ArgSpec::At { buffer: Box::new(buffer.map_files(f)), offset: *offset },
            ArgSpec::Struct(fields) => ArgSpec::Struct(
                fields
                    .iter()
                    .map(|x| match x {
                        FieldSpec::Pointer(s) => FieldSpec::Pointer(s.map_files(f)),
                        x => x.clone(),
                    })
                    .collect(),
            ),
            s => s.clone(),
        }
    }
}

/// Turns argument specs into launch arguments for `prog`'s parameters, reading files through `load`.
/// Buffers together may take at most `max_bytes` (the launch's memory limit).
pub fn resolve_args(
    prog: &Program,
    specs: &[ArgSpec],
    load: &Loader<'_>,
    max_bytes: u64,
) -> Result<Vec<Arg>, ArgError> {
    if specs.len() != prog.params.len() {
        let params = prog.params.iter().map(|p| format!("{}: .{}", p.name, p.ty.as_str())).collect();
        return Err(ArgError::Count { kernel: prog.kernel_name().to_string(), params, given: specs.len() });
    }
    let mut budget = Budget { total: 0, max: max_bytes };
    let mut out = Vec::with_capacity(specs.len());
    for (i, (s, p)) in specs.iter().zip(&prog.params).enumerate() {
        let within =
            |error: ArgError| ArgError::In { what: format!("argument {i} ({})", p.name), error: Box::new(error) };
        let arg = match s {
            ArgSpec::Scalar(_) if p.size as u64 > p.ty.bytes() as u64 => {
                return Err(within(ArgError::NumberForStruct { size: p.size, ty: p.ty.as_str() }))
            }
            ArgSpec::Scalar(t) => parse_scalar(t, p.ty).map(Arg::Scalar).map_err(|e| within(e.into()))?,
            ArgSpec::Struct(fields) => structs::resolve_struct(fields, p, load, &mut budget).map_err(within)?,
            buffer => match structs::resolve_buffer(buffer, load, &mut budget).map_err(within)? {
                Some((b, None)) => Arg::Buffer(b),
                Some((buffer, Some(offset))) => Arg::BufferAt { buffer, offset },
                None => return Err(within(ArgError::OffsetSyntax(format!("{buffer:?}")))),
            },
        };
        out.push(arg);
    }
    Ok(out)
}

/// Whether `t` is written as a float (`1.5`, `1e3`, `inf`), not an integer.
fn is_float_literal(t: &str) -> bool {
    let l = t.to_ascii_lowercase();
    !l.starts_with("0x") && !l.starts_with("-0x") && (l.contains(['.', 'e']) || l.contains("inf") || l.contains("nan"))
}

/// The element a number sets in variable `v`: its PTX type, or for an untyped byte array (`.b8`, as nvcc
/// declares `__device__ int a[4]`) an element as wide as the variable's alignment (2, 4 or 8 bytes).
fn element_of(v: &PlacedVar) -> (ScalarType, u64) {
    let align = v.align;
    if v.ty == ScalarType::B8 && !v.scalar && matches!(align, 2 | 4 | 8) && v.size.is_multiple_of(align) {
        let ty = [ScalarType::B16, ScalarType::B32, ScalarType::B64][align.trailing_zeros() as usize - 1];
        return (ty, align);
    }
    (v.ty, v.ty.bytes().max(1) as u64)
}

/// The bits of number `t` for an element of type `ty` (`width` bytes): range-checked for the type; a
/// float literal for an untyped 4- or 8-byte element is an f32 or f64.
fn element_bits(t: &str, ty: ScalarType, width: u64) -> Result<u64, ValueError> {
    if ty.is_bits() && is_float_literal(t) {
        return match width {
            4 => parse_scalar(t, ScalarType::F32),
            8 => parse_scalar(t, ScalarType::F64),
            _ => Err(ValueError::NotAnInteger(t.to_string())),
        };
    }
    parse_scalar(t, ty)
}

/// A number for module variable `name`: typed by the variable's element ([`element_of`]); a variable
/// larger than one element gets the number in its first element and zeros after it. A variable the
/// program does not have keeps the untyped value (64-bit two's complement, a float literal as an f64):
/// the launch reports the unknown name.
fn global_number(prog: &Program, name: &str, t: &str, max_bytes: u64) -> Result<Arg, ArgError> {
    let t = t.trim();
    let Ok((_, v)) = prog.find_variable(name, VariableUse::Set) else {
        let v = if is_float_literal(t) {
            t.parse::<f64>().map(f64::to_bits).map_err(|_| ValueError::NotANumber(t.to_string()))?
        } else {
            parse_scalar(t, ScalarType::S64).or_else(|_| parse_scalar(t, ScalarType::U64))?
        };
        return Ok(Arg::Scalar(v));
    };
    let (ty, width) = element_of(v);
    let bits = element_bits(t, ty, width)?;
    if v.size <= width {
        return Ok(Arg::Scalar(bits));
    }
    if v.size > max_bytes {
        return Err(ArgError::MemoryLimit { bytes: v.size, limit: max_bytes });
    }
    let mut b = Buffer::try_zeros(Dtype::U8, v.size as usize)?;
    b.bytes[..width as usize].copy_from_slice(&bits.to_le_bytes()[..width as usize]);
    Ok(Arg::Buffer(b))
}

/// The value of module variable `name` of `prog` (`--global NAME=SPEC`, `globals` in the manifest). A
/// number sets the variable's first element, typed by it (`.f32`, `.u32`; an untyped `.b8` array by its
/// alignment), and zeroes the rest; a buffer fills the variable (it may be shorter), or for a 64-bit
/// scalar variable (a device pointer) is allocated and pointed to (`BUFFER+N` points into it).
pub fn resolve_global(
    prog: &Program,
    name: &str,
    spec: &ArgSpec,
    load: &Loader<'_>,
    max_bytes: u64,
) -> Result<GlobalInit, ArgError> {
    let value = match spec {
        ArgSpec::Scalar(t) => global_number(prog, name, t, max_bytes)?,
        ArgSpec::Struct(_) => return Err(ArgError::StructForVariable),
        buffer => {
            let mut budget = Budget { total: 0, max: max_bytes };
            let within = |error: ArgError| match (&error, buffer) {
                (ArgError::MemoryLimit { .. }, ArgSpec::File(f)) => {
                    ArgError::In { what: f.clone(), error: Box::new(error) }
                }
                _ => error,
            };
            match structs::resolve_buffer(buffer, load, &mut budget).map_err(within)? {
                Some((b, None)) => Arg::Buffer(b),
                Some((buffer, Some(offset))) => Arg::BufferAt { buffer, offset },
                None => return Err(ArgError::OffsetSyntax(format!("{buffer:?}"))),
            }
        }
    };
    Ok(GlobalInit { name: name.to_string(), value })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The program of a PTX kernel `k` (the suite's tests decode small hand-written kernels).
    pub(crate) fn program(ptx: &str) -> Program {
        let m = reconverge_ptx::parse(ptx).expect("parses");
        let opts = reconverge_program::DecodeOptions::default();
        reconverge_sim::load(&m, None, reconverge_mechanism::Mechanism::Pdom, &opts).expect("decodes").into_program()
    }

    const VARS: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .global .f32 x;\n.global .u32 arr[4];\n.global .align 4 .b8 words[16];\n.global .align 2 .b8 odd[3];\n\
        .visible .entry k(.param .u64 p) { ret; }\n";

    fn number(prog: &Program, name: &str, t: &str) -> Result<Arg, ArgError> {
        resolve_global(
            prog,
            name,
            &ArgSpec::parse(t).unwrap(),
            &|_: &str| Err(std::io::ErrorKind::NotFound.into()),
            1 << 20,
        )
        .map(|g| g.value)
    }

    #[test]
    fn a_number_sets_a_variables_first_element_typed_by_it() {
        let prog = program(VARS);
        // A float variable takes the number as an f32 (not the low bytes of an f64).
        assert_eq!(number(&prog, "x", "1.5").unwrap(), Arg::Scalar(1.5f32.to_bits() as u64));
        assert_eq!(number(&prog, "x", "2").unwrap(), Arg::Scalar(2.0f32.to_bits() as u64));
        // An array: the first element, the rest zero.
        let Arg::Buffer(b) = number(&prog, "arr", "-1").unwrap() else { panic!("a buffer") };
        assert_eq!(b.bytes, [[0xff; 4], [0; 4], [0; 4], [0; 4]].concat());
        // An untyped .b8 array: elements as wide as its alignment; a float literal is an f32 there.
        let Arg::Buffer(b) = number(&prog, "words", "1000").unwrap() else { panic!("a buffer") };
        assert_eq!(&b.bytes[..5], &[0xe8, 0x03, 0, 0, 0]);
        let Arg::Buffer(b) = number(&prog, "words", "0.5").unwrap() else { panic!("a buffer") };
        assert_eq!(&b.bytes[..4], &0.5f32.to_le_bytes());
        // Alignment 2 does not divide 3 bytes: one-byte elements.
        assert!(matches!(number(&prog, "odd", "300"), Err(ArgError::Value(ValueError::OutOfRange { .. }))));
        assert!(matches!(number(&prog, "arr", "5000000000"), Err(ArgError::Value(ValueError::OutOfRange { .. }))));
        assert!(matches!(number(&prog, "arr", "1.5"), Err(ArgError::Value(ValueError::NotAnInteger(_)))));
        // An unknown variable keeps the untyped value; the launch names it.
        assert_eq!(number(&prog, "nope", "-1").unwrap(), Arg::Scalar(u64::MAX));
        assert!(matches!(number(&prog, "x", "struct:u32=1"), Err(ArgError::StructForVariable)));
    }

    #[test]
    fn offsets_and_structs_parse_and_map_their_files() {
        let at = ArgSpec::parse("@d/a.npy+3").unwrap();
        assert_eq!(at, ArgSpec::At { buffer: Box::new(ArgSpec::File("d/a.npy".into())), offset: Offset::Elements(3) });
        assert!(matches!(ArgSpec::parse("zeros:f32:8+16b").unwrap(), ArgSpec::At { offset: Offset::Bytes(16), .. }));
        assert_eq!(ArgSpec::parse("@a+b.npy").unwrap(), ArgSpec::File("a+b.npy".into()));
        assert_eq!(ArgSpec::parse("1e+5").unwrap(), ArgSpec::Scalar("1e+5".into()));
        let s = ArgSpec::parse("struct:u32=1,ptr=@r.npy+1").unwrap();
        let mapped = s.map_files(&|p: &str| format!("kernels/{p}"));
        let ArgSpec::Struct(f) = mapped else { panic!("a struct") };
        let FieldSpec::Pointer(ArgSpec::At { buffer, .. }) = &f[1] else { panic!("a pointer") };
        assert_eq!(**buffer, ArgSpec::File("kernels/r.npy".into()));
        assert_eq!(at.map_files(&|p: &str| format!("k/{p}")), ArgSpec::parse("@k/d/a.npy+3").unwrap());
    }

    #[test]
    fn random_buffers_are_the_documented_splitmix64_stream() {
        // SplitMix64 from seed 0: the reference values of the published algorithm.
        assert_eq!(splitmix64(0, 0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(0, 1), 0x6E78_9E6A_A1B9_65F4);
        let b = random_buffer(Dtype::U32, 4, 7, Some(10)).unwrap();
        assert!((0..4).all(|i| b.bits(i) < 10));
        let f = random_buffer(Dtype::F32, 1000, 1, None).unwrap();
        assert!((0..1000).all(|i| (0.0..1.0).contains(&f32::from_bits(f.bits(i) as u32))));
        assert_eq!(
            ArgSpec::parse("rand:f32:8:3:2").unwrap(),
            ArgSpec::Random { dtype: Dtype::F32, len: 8, seed: 3, bound: Some(2) }
        );
        assert!(ArgSpec::parse("rand:f32:8").is_err());
    }

    #[test]
    fn parses_specs() {
        assert_eq!(ArgSpec::parse("@a.npy").unwrap(), ArgSpec::File("a.npy".into()));
        assert_eq!(ArgSpec::parse("zeros:f32:8").unwrap(), ArgSpec::Zeros(Dtype::F32, 8));
        assert_eq!(ArgSpec::parse("-3").unwrap(), ArgSpec::Scalar("-3".into()));
        assert!(ArgSpec::parse("zeros:f33:8").is_err());
        assert!(ArgSpec::parse("zeros:f32").is_err());
        assert!(ArgSpec::parse("@").is_err());
        assert!(matches!(
            ArgSpec::parse("zeros:f64:18446744073709551616").unwrap_err(),
            ArgError::LengthTooLarge { .. }
        ));
        assert_eq!(ArgSpec::parse("zeros:f64:18446744073709551615").unwrap(), ArgSpec::Zeros(Dtype::F64, u64::MAX));
    }
}
