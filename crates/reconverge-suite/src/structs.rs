//! Argument specs beyond a number and a whole buffer: a pointer into a buffer (`@FILE.npy+N`, `N`
//! elements of the buffer's dtype, or `+Nb`, `N` bytes) and a struct passed by value
//! (`struct:u32=2048,ptr=@row.npy,ptr=0,pad=4,f32=1.5`), whose fields are laid out with C's natural
//! alignment and checked against the PTX parameter ([`reconverge_program::StructArg`]).

use crate::error::ArgError;
use crate::{npy, ArgSpec, Loader};
use reconverge_ir::ScalarType;
use reconverge_program::program::KernelParam;
use reconverge_program::{parse_scalar, struct_layout, Arg, Buffer, Dtype, StructArg, StructField};

/// How far into its buffer a pointer spec points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offset {
    /// `+N`: `N` elements of the buffer's dtype (as `d_b + N` in C).
    Elements(u64),
    /// `+Nb`: `N` bytes.
    Bytes(u64),
}

impl Offset {
    /// The offset in bytes into a buffer of `dtype` (`None` on overflow).
    pub fn bytes(self, dtype: Dtype) -> Option<u64> {
        match self {
            Offset::Elements(n) => n.checked_mul(dtype.size() as u64),
            Offset::Bytes(n) => Some(n),
        }
    }
}

/// Splits `BUFFER+N` or `BUFFER+Nb` at its last `+` when what follows is such an offset (a file name
/// with a `+` in it is left whole).
pub fn split_offset(text: &str) -> Option<(&str, Offset)> {
    let (base, suffix) = text.rsplit_once('+')?;
    let (digits, bytes) = match suffix.strip_suffix('b') {
        Some(d) => (d, true),
        None => (suffix, false),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = digits.parse::<u64>().ok()?;
    Some((base, if bytes { Offset::Bytes(n) } else { Offset::Elements(n) }))
}

/// One field of a `struct:` spec.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldSpec {
    /// `TYPE=VALUE`: a number, already range-checked for its type.
    Number {
        /// Its type.
        dtype: Dtype,
        /// Its bits.
        bits: u64,
    },
    /// `ptr=BUFFER`: a device pointer into a buffer spec (a file, `zeros:`, `rand:`, with any `+N`).
    Pointer(ArgSpec),
    /// `ptr=0` or `ptr=null`.
    Null,
    /// `pad=N`: `N` zero bytes.
    Pad(u32),
}

impl FieldSpec {
    /// Size and alignment in bytes.
    pub fn size_align(&self) -> (u64, u64) {
        match self {
            FieldSpec::Number { dtype, .. } => (dtype.size() as u64, dtype.size() as u64),
            FieldSpec::Pointer(_) | FieldSpec::Null => (8, 8),
            FieldSpec::Pad(n) => (*n as u64, 1),
        }
    }
}

/// The PTX type of a buffer dtype (how a number for it is range-checked).
pub fn ir_type(d: Dtype) -> ScalarType {
    match d {
        Dtype::I8 => ScalarType::S8,
        Dtype::U8 => ScalarType::U8,
        Dtype::I16 => ScalarType::S16,
        Dtype::U16 => ScalarType::U16,
        Dtype::I32 => ScalarType::S32,
        Dtype::U32 => ScalarType::U32,
        Dtype::I64 => ScalarType::S64,
        Dtype::U64 => ScalarType::U64,
        Dtype::F32 => ScalarType::F32,
        Dtype::F64 => ScalarType::F64,
    }
}

/// Parses the fields after `struct:` (comma-separated).
pub fn parse_struct(rest: &str) -> Result<Vec<FieldSpec>, ArgError> {
    if rest.trim().is_empty() {
        return Err(ArgError::EmptyStruct);
    }
    rest.split(',')
        .enumerate()
        .map(|(k, f)| parse_field(f.trim()).map_err(|error| ArgError::Field { field: k, error: Box::new(error) }))
        .collect()
}

fn parse_field(text: &str) -> Result<FieldSpec, ArgError> {
    let (ty, value) = text.split_once('=').ok_or_else(|| ArgError::FieldSyntax(text.to_string()))?;
    let (ty, value) = (ty.trim(), value.trim());
    match ty {
        "pad" => {
            let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            match value.parse::<u32>() {
                Ok(n) => Ok(FieldSpec::Pad(n)),
                Err(_) => Err(ArgError::Pad { value: value.to_string(), too_large: digits }),
            }
        }
        "ptr" => {
            if matches!(value, "0" | "null" | "NULL" | "nullptr") {
                return Ok(FieldSpec::Null);
            }
            match ArgSpec::parse(value) {
                Ok(s @ (ArgSpec::File(_) | ArgSpec::Zeros(..) | ArgSpec::Random { .. } | ArgSpec::At { .. })) => {
                    Ok(FieldSpec::Pointer(s))
                }
                Ok(_) => Err(ArgError::PointerValue(value.to_string())),
                Err(e) => Err(e),
            }
        }
        _ => {
            let dtype: Dtype = ty.parse().map_err(|_| ArgError::FieldSyntax(text.to_string()))?;
            Ok(FieldSpec::Number { dtype, bits: parse_scalar(value, ir_type(dtype))? })
        }
    }
}

/// Bytes of buffers resolved so far, against the launch's memory limit.
pub struct Budget {
    /// Bytes so far.
    pub total: u64,
    /// The limit.
    pub max: u64,
}

impl Budget {
    /// Counts `bytes` more; fails past the limit.
    pub fn take(&mut self, bytes: Option<u64>) -> Result<(), ArgError> {
        let total = bytes.and_then(|b| self.total.checked_add(b)).ok_or(ArgError::Overflow)?;
        if total > self.max {
            return Err(ArgError::MemoryLimit { bytes: total, limit: self.max });
        }
        self.total = total;
        Ok(())
    }
}

/// The buffer of a buffer spec (`@FILE.npy`, `zeros:`, `rand:`) and, for `BUFFER+N`, the offset in bytes;
/// `None` when `spec` is not a buffer.
pub fn resolve_buffer(
    spec: &ArgSpec,
    load: &Loader<'_>,
    budget: &mut Budget,
) -> Result<Option<(Buffer, Option<u64>)>, ArgError> {
    let b = match spec {
        ArgSpec::File(f) => {
            let bytes = load(f).map_err(|error| ArgError::Read { file: f.clone(), error })?;
            let b = npy::read_owned(bytes).map_err(|error| ArgError::Npy { file: f.clone(), error })?;
            budget.take(Some(b.bytes.len() as u64))?;
            b
        }
        ArgSpec::Zeros(d, n) => {
            budget.take(n.checked_mul(d.size() as u64))?;
            Buffer::try_zeros(*d, *n as usize)?
        }
        ArgSpec::Random { dtype, len, seed, bound } => {
            budget.take(len.checked_mul(dtype.size() as u64))?;
            crate::args::random_buffer(*dtype, *len as usize, *seed, *bound)?
        }
        ArgSpec::At { buffer, offset } => {
            let Some((b, _)) = resolve_buffer(buffer, load, budget)? else { return Ok(None) };
            let len = b.bytes.len() as u64;
            let offset = offset.bytes(b.dtype).ok_or(ArgError::Overflow)?;
            if offset > len {
                return Err(ArgError::OffsetPastEnd { offset, len });
            }
            return Ok(Some((b, Some(offset))));
        }
        ArgSpec::Scalar(_) | ArgSpec::Struct(_) => return Ok(None),
    };
    Ok(Some((b, None)))
}

/// The argument of a `struct:` spec for parameter `p`: the layout is checked against the parameter
/// before any buffer is read.
pub fn resolve_struct(
    fields: &[FieldSpec],
    p: &KernelParam,
    load: &Loader<'_>,
    budget: &mut Budget,
) -> Result<Arg, ArgError> {
    let layout = struct_layout(fields.iter().map(FieldSpec::size_align));
    if layout.size != p.size as u64 {
        return Err(ArgError::StructSize {
            param: p.name.clone(),
            size: p.size,
            param_align: p.align,
            given: layout.size,
            align: layout.align,
            offsets: layout.offsets,
        });
    }
    if layout.align > p.align as u64 {
        return Err(ArgError::StructAlign { param: p.name.clone(), param_align: p.align, align: layout.align });
    }
    let mut out = Vec::with_capacity(fields.len());
    for (k, f) in fields.iter().enumerate() {
        out.push(match f {
            FieldSpec::Number { dtype, bits } => StructField::Number { dtype: *dtype, bits: *bits },
            FieldSpec::Null => StructField::Null,
            FieldSpec::Pad(n) => StructField::Pad(*n),
            FieldSpec::Pointer(spec) => {
                let within = |error| ArgError::Field { field: k, error: Box::new(error) };
                let (buffer, offset) = resolve_buffer(spec, load, budget)
                    .map_err(within)?
                    .ok_or_else(|| within(ArgError::PointerValue(format!("{spec:?}"))))?;
                StructField::Pointer { buffer, offset: offset.unwrap_or(0) }
            }
        });
    }
    Ok(Arg::Struct(StructArg::new(out)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_elements_or_bytes_after_the_last_plus() {
        assert_eq!(split_offset("@b.npy+1"), Some(("@b.npy", Offset::Elements(1))));
        assert_eq!(split_offset("@b.npy+12b"), Some(("@b.npy", Offset::Bytes(12))));
        assert_eq!(split_offset("@a+b.npy"), None);
        assert_eq!(split_offset("@a+2.npy"), None);
        assert_eq!(split_offset("@b.npy+"), None);
        assert_eq!(split_offset("@b.npy+b"), None);
        assert_eq!(Offset::Elements(3).bytes(Dtype::F64), Some(24));
        assert_eq!(Offset::Elements(u64::MAX).bytes(Dtype::F64), None);
    }

    const PARAMS: &str = ".version 8.0\n.target sm_80\n.address_size 64\n\
        .visible .entry k(.param .align 4 .b8 q[8], .param .align 8 .b8 g[24], .param .u64 p) { ret; }\n";

    fn resolve(specs: &[&str]) -> Result<Vec<Arg>, ArgError> {
        let prog = crate::args::tests::program(PARAMS);
        let specs: Vec<ArgSpec> = specs.iter().map(|s| ArgSpec::parse(s).unwrap()).collect();
        let load = |p: &str| match p {
            "four.npy" => Ok(npy::write(&Buffer::zeros(Dtype::I16, 4))),
            _ => Err(std::io::ErrorKind::NotFound.into()),
        };
        crate::resolve_args(&prog, &specs, &load, 1 << 20)
    }

    #[test]
    fn structs_are_checked_against_their_parameter_before_any_file_is_read() {
        let args = resolve(&["struct:u32=1,f32=2", "struct:u8=1,ptr=@four.npy+1,ptr=0", "@four.npy+4"]).unwrap();
        let Arg::Struct(g) = &args[1] else { panic!("a struct") };
        assert_eq!((g.bytes.len(), g.pointers.len(), g.pointers[0].offset, g.pointers[0].field), (24, 1, 2, 1));
        assert!(matches!(&args[2], Arg::BufferAt { offset: 8, .. }));
        // 8 bytes aligned to 8 for a parameter aligned to 4: the layouts cannot agree.
        let e = resolve(&["struct:u64=1", "struct:pad=24", "0"]).unwrap_err();
        assert!(matches!(e.root(), ArgError::StructAlign { align: 8, param_align: 4, .. }), "{e}");
        assert!(e.to_string().starts_with("argument 0 (q): "), "{e}");
        // Too short: the size error comes before the missing file.
        let e = resolve(&["struct:pad=8", "struct:ptr=@nope.npy", "0"]).unwrap_err();
        assert!(matches!(e.root(), ArgError::StructSize { size: 24, given: 8, .. }), "{e}");
        let e = resolve(&["struct:pad=8", "struct:ptr=@nope.npy,pad=16", "0"]).unwrap_err();
        assert!(e.to_string().starts_with("argument 1 (g): field 0: cannot read `nope.npy`"), "{e}");
        let e = resolve(&["struct:pad=8", "struct:pad=24", "@four.npy+5"]).unwrap_err();
        assert!(matches!(e.root(), ArgError::OffsetPastEnd { offset: 10, len: 8 }), "{e}");
        let e = parse_struct("pad=4294967296").unwrap_err().to_string();
        assert_eq!(e, "field 0: `pad=4294967296`: 4294967296 zero bytes is too large (at most 4294967295)");
        let e = parse_struct("u8=1,pad=-1").unwrap_err().to_string();
        assert_eq!(e, "field 1: `pad=-1`: `-1` is not a number of bytes");
        let e = resolve(&["1", "struct:pad=24", "0"]).unwrap_err();
        assert!(matches!(e.root(), ArgError::NumberForStruct { size: 8, .. }), "{e}");
    }

    #[test]
    fn struct_fields_parse_with_their_types() {
        let f = parse_struct("u32=2048, i8=-1,ptr=@row.npy+2,ptr=0,pad=4,f32=1.5").unwrap();
        assert_eq!(f[0], FieldSpec::Number { dtype: Dtype::U32, bits: 2048 });
        assert_eq!(f[1], FieldSpec::Number { dtype: Dtype::I8, bits: 0xff });
        assert!(matches!(&f[2], FieldSpec::Pointer(ArgSpec::At { offset: Offset::Elements(2), .. })));
        assert_eq!(f[3..5], [FieldSpec::Null, FieldSpec::Pad(4)]);
        assert_eq!(f[5], FieldSpec::Number { dtype: Dtype::F32, bits: 1.5f32.to_bits() as u64 });
        assert!(matches!(parse_struct(""), Err(ArgError::EmptyStruct)));
        let e = parse_struct("u32=1,u8=300").unwrap_err();
        assert_eq!(e.to_string(), "field 1: `300` does not fit in .u8");
        assert!(matches!(parse_struct("u33=1").unwrap_err().root(), ArgError::FieldSyntax(_)));
        assert!(matches!(parse_struct("ptr=5").unwrap_err().root(), ArgError::PointerValue(_)));
        assert!(matches!(parse_struct("u32").unwrap_err().root(), ArgError::FieldSyntax(_)));
    }
}
