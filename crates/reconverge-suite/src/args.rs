//! Kernel argument specifications (`--arg` on the command line, `args` in the manifest).

use crate::{npy, Loader};
use reconverge_sim::{parse_scalar, Arg, Buffer, Dtype, GlobalInit, Program};

/// A parsed argument specification.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A number for a scalar parameter.
    Scalar(String),
    /// `@FILE.npy`: a buffer filled from the file.
    File(String),
    /// `zeros:DTYPE:LEN`: a zero-filled buffer.
    Zeros(Dtype, u64),
}

impl ArgSpec {
    /// Parses `text`.
    pub fn parse(text: &str) -> Result<ArgSpec, String> {
        if let Some(f) = text.strip_prefix('@') {
            if f.is_empty() {
                return Err("`@` must be followed by a .npy file name".into());
            }
            return Ok(ArgSpec::File(f.to_string()));
        }
        if let Some(rest) = text.strip_prefix("zeros:") {
            let mut parts = rest.split(':');
            let (Some(d), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!("`{text}`: expected zeros:DTYPE:LEN"));
            };
            let dtype: Dtype = d.parse()?;
            let len: u64 = n.parse().map_err(|_| {
                if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                    format!("`{text}`: the length `{n}` is too large")
                } else {
                    format!("`{text}`: `{n}` is not a length")
                }
            })?;
            return Ok(ArgSpec::Zeros(dtype, len));
        }
        Ok(ArgSpec::Scalar(text.to_string()))
    }
}

/// Turns argument specs into launch arguments for `prog`'s parameters, reading files through `load`.
/// Buffers together may take at most `max_bytes` (the launch's memory limit).
pub fn resolve_args(prog: &Program, specs: &[ArgSpec], load: &Loader<'_>, max_bytes: u64) -> Result<Vec<Arg>, String> {
    if specs.len() != prog.params.len() {
        let names: Vec<String> = prog.params.iter().map(|p| format!("{}: .{}", p.name, p.ty.as_str())).collect();
        return Err(format!(
            "kernel `{}` takes {} arguments ({}); {} given",
            prog.kernel_name(),
            prog.params.len(),
            names.join(", "),
            specs.len()
        ));
    }
    let mut total = 0u64;
    let mut out = Vec::with_capacity(specs.len());
    for (i, (s, p)) in specs.iter().zip(&prog.params).enumerate() {
        let what = || format!("argument {i} ({})", p.name);
        let too_big = |bytes: Option<u64>| match bytes {
            None => format!("{}: the buffer is too large", what()),
            Some(b) => format!(
                "{}: the buffers need {b} bytes together, more than the memory limit of {max_bytes} bytes \
                 (raise it with --max-memory)",
                what()
            ),
        };
        let arg = match s {
            ArgSpec::Scalar(t) => parse_scalar(t, p.ty).map(Arg::Scalar).map_err(|e| format!("{}: {e}", what()))?,
            ArgSpec::File(f) => {
                let bytes = load(f).map_err(|e| format!("{}: {e}", what()))?;
                let b = npy::read_owned(bytes).map_err(|e| format!("{}: {f}: {e}", what()))?;
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
                Arg::Buffer(Buffer::try_zeros(*d, *n as usize).map_err(|e| format!("{}: {e}", what()))?)
            }
        };
        out.push(arg);
    }
    Ok(out)
}

/// The value of a module variable (`--global NAME=SPEC`, `globals` in the manifest). A number is stored
/// as 64-bit two's complement (a float literal as an f64) and the variable keeps its low bytes; a buffer
/// fills the variable, or for a 64-bit scalar variable (a device pointer) is allocated and pointed to.
pub fn resolve_global(name: &str, spec: &ArgSpec, load: &Loader<'_>, max_bytes: u64) -> Result<GlobalInit, String> {
    let value = match spec {
        ArgSpec::Scalar(t) => {
            let t = t.trim();
            let v = if t.contains(['.', 'e', 'E']) && !t.starts_with("0x") {
                t.parse::<f64>().map(f64::to_bits).map_err(|_| format!("`{t}` is not a number"))?
            } else {
                parse_scalar(t, reconverge_ir::ScalarType::S64)
                    .or_else(|_| parse_scalar(t, reconverge_ir::ScalarType::U64))?
            };
            Arg::Scalar(v)
        }
        ArgSpec::File(f) => {
            let b = load(f)?;
            let b = npy::read_owned(b).map_err(|e| format!("{f}: {e}"))?;
            if b.bytes.len() as u64 > max_bytes {
                return Err(format!("{f} is larger than the memory limit of {max_bytes} bytes (--max-memory)"));
            }
            Arg::Buffer(b)
        }
        ArgSpec::Zeros(d, n) => {
            let bytes = n.checked_mul(d.size() as u64).filter(|&b| b <= max_bytes).ok_or_else(|| {
                format!("the buffer is larger than the memory limit of {max_bytes} bytes (--max-memory)")
            })?;
            Arg::Buffer(Buffer::try_zeros(*d, (bytes / d.size() as u64) as usize).map_err(|e| e.to_string())?)
        }
    };
    Ok(GlobalInit { name: name.to_string(), value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        assert_eq!(ArgSpec::parse("@a.npy").unwrap(), ArgSpec::File("a.npy".into()));
        assert_eq!(ArgSpec::parse("zeros:f32:8").unwrap(), ArgSpec::Zeros(Dtype::F32, 8));
        assert_eq!(ArgSpec::parse("-3").unwrap(), ArgSpec::Scalar("-3".into()));
        assert!(ArgSpec::parse("zeros:f33:8").is_err());
        assert!(ArgSpec::parse("zeros:f32").is_err());
        assert!(ArgSpec::parse("@").is_err());
        assert!(ArgSpec::parse("zeros:f64:18446744073709551616").unwrap_err().contains("too large"));
        assert_eq!(ArgSpec::parse("zeros:f64:18446744073709551615").unwrap(), ArgSpec::Zeros(Dtype::F64, u64::MAX));
    }
}
