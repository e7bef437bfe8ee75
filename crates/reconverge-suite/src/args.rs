//! Kernel argument specifications (`--arg` on the command line, `args` in the manifest).

use crate::error::ArgError;
use crate::{npy, Loader};
use reconverge_program::{parse_scalar, Arg, Buffer, Dtype, GlobalInit, Program, ValueError};

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
        Ok(ArgSpec::Scalar(text.to_string()))
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
    let mut total = 0u64;
    let mut out = Vec::with_capacity(specs.len());
    for (i, (s, p)) in specs.iter().zip(&prog.params).enumerate() {
        let what = || format!("argument {i} ({})", p.name);
        let within = |error: ArgError| ArgError::In { what: what(), error: Box::new(error) };
        let too_big = |bytes: Option<u64>| {
            within(match bytes {
                None => ArgError::Overflow,
                Some(bytes) => ArgError::MemoryLimit { bytes, limit: max_bytes },
            })
        };
        let arg = match s {
            ArgSpec::Scalar(t) => parse_scalar(t, p.ty).map(Arg::Scalar).map_err(|e| within(e.into()))?,
            ArgSpec::File(f) => {
                let bytes = load(f).map_err(|error| within(ArgError::Read { file: f.clone(), error }))?;
                let b = npy::read_owned(bytes).map_err(|error| within(ArgError::Npy { file: f.clone(), error }))?;
                total = total.saturating_add(b.bytes.len() as u64);
                if total > max_bytes {
                    return Err(too_big(Some(total)));
                }
                Arg::Buffer(b)
            }
            ArgSpec::Zeros(d, n) => {
                let bytes = n.checked_mul(d.size() as u64).ok_or_else(|| too_big(None))?;
                total = total.checked_add(bytes).ok_or_else(|| too_big(None))?;
                if total > max_bytes {
                    return Err(too_big(Some(total)));
                }
                Arg::Buffer(Buffer::try_zeros(*d, *n as usize).map_err(|e| within(e.into()))?)
            }
            ArgSpec::Random { dtype, len, seed, bound } => {
                let bytes = len.checked_mul(dtype.size() as u64).ok_or_else(|| too_big(None))?;
                total = total.checked_add(bytes).ok_or_else(|| too_big(None))?;
                if total > max_bytes {
                    return Err(too_big(Some(total)));
                }
                Arg::Buffer(random_buffer(*dtype, *len as usize, *seed, *bound).map_err(within)?)
            }
        };
        out.push(arg);
    }
    Ok(out)
}

/// The value of a module variable (`--global NAME=SPEC`, `globals` in the manifest). A number is stored
/// as 64-bit two's complement (a float literal as an f64) and the variable keeps its low bytes; a buffer
/// fills the variable, or for a 64-bit scalar variable (a device pointer) is allocated and pointed to.
pub fn resolve_global(name: &str, spec: &ArgSpec, load: &Loader<'_>, max_bytes: u64) -> Result<GlobalInit, ArgError> {
    let too_big = |bytes: u64| ArgError::MemoryLimit { bytes, limit: max_bytes };
    let value = match spec {
        ArgSpec::Scalar(t) => {
            let t = t.trim();
            let v = if t.contains(['.', 'e', 'E']) && !t.starts_with("0x") {
                t.parse::<f64>().map(f64::to_bits).map_err(|_| ValueError::NotANumber(t.to_string()))?
            } else {
                parse_scalar(t, reconverge_ir::ScalarType::S64)
                    .or_else(|_| parse_scalar(t, reconverge_ir::ScalarType::U64))?
            };
            Arg::Scalar(v)
        }
        ArgSpec::File(f) => {
            let b = load(f).map_err(|error| ArgError::Read { file: f.clone(), error })?;
            let b = npy::read_owned(b).map_err(|error| ArgError::Npy { file: f.clone(), error })?;
            if b.bytes.len() as u64 > max_bytes {
                return Err(ArgError::In { what: f.clone(), error: Box::new(too_big(b.bytes.len() as u64)) });
            }
            Arg::Buffer(b)
        }
        ArgSpec::Zeros(d, n) => {
            let bytes = n.checked_mul(d.size() as u64).ok_or(ArgError::Overflow)?;
            if bytes > max_bytes {
                return Err(too_big(bytes));
            }
            Arg::Buffer(Buffer::try_zeros(*d, (bytes / d.size() as u64) as usize)?)
        }
        ArgSpec::Random { dtype, len, seed, bound } => {
            let bytes = len.checked_mul(dtype.size() as u64).ok_or(ArgError::Overflow)?;
            if bytes > max_bytes {
                return Err(too_big(bytes));
            }
            Arg::Buffer(random_buffer(*dtype, (bytes / dtype.size() as u64) as usize, *seed, *bound)?)
        }
    };
    Ok(GlobalInit { name: name.to_string(), value })
}

#[cfg(test)]
mod tests {
    use super::*;

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
