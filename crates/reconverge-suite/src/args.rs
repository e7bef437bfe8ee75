//! Kernel argument specifications (`--arg` on the command line, `args` in the manifest).

use crate::{npy, Loader};
use reconverge_sim::{parse_scalar, Arg, Buffer, Dtype, Program};

/// A parsed argument specification.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSpec {
    /// A number for a scalar parameter.
    Scalar(String),
    /// `@FILE.npy`: a buffer filled from the file.
    File(String),
    /// `zeros:DTYPE:LEN`: a zero-filled buffer.
    Zeros(Dtype, usize),
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
            let len: usize = n.parse().map_err(|_| format!("`{text}`: `{n}` is not a length"))?;
            return Ok(ArgSpec::Zeros(dtype, len));
        }
        Ok(ArgSpec::Scalar(text.to_string()))
    }
}

/// Turns argument specs into launch arguments for `prog`'s parameters, reading files through `load`.
pub fn resolve_args(prog: &Program, specs: &[ArgSpec], load: &Loader<'_>) -> Result<Vec<Arg>, String> {
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
    specs
        .iter()
        .zip(&prog.params)
        .enumerate()
        .map(|(i, (s, p))| match s {
            ArgSpec::Scalar(t) => {
                parse_scalar(t, p.ty).map(Arg::Scalar).map_err(|e| format!("argument {i} ({}): {e}", p.name))
            }
            ArgSpec::File(f) => {
                let bytes = load(f).map_err(|e| format!("argument {i} ({}): {e}", p.name))?;
                npy::read(&bytes).map(Arg::Buffer).map_err(|e| format!("argument {i} ({}): {f}: {e}", p.name))
            }
            ArgSpec::Zeros(d, n) => Ok(Arg::Buffer(Buffer::zeros(*d, *n))),
        })
        .collect()
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
    }
}
