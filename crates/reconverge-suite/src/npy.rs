//! `.npy` files as [`Buffer`]s.

use crate::error::NpyError;
use reconverge_program::{Buffer, Dtype};

fn dtype_of(descr: &str) -> Option<Dtype> {
    let d = descr.trim_start_matches(['<', '|', '=']);
    Some(match d {
        "i1" => Dtype::I8,
        "u1" | "b1" => Dtype::U8,
        "i2" => Dtype::I16,
        "u2" => Dtype::U16,
        "i4" => Dtype::I32,
        "u4" => Dtype::U32,
        "i8" => Dtype::I64,
        "u8" => Dtype::U64,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        _ => return None,
    })
}

/// The number of elements the header's `shape` claims, checked for overflow before the `.npy` reader sees
/// it (the reader multiplies without checking).
fn header_elements(bytes: &[u8]) -> Result<u64, NpyError> {
    let invalid = |why: &str| NpyError::Invalid(why.to_string());
    let (len_at, len_bytes) = match bytes.get(6) {
        Some(1) => (8, 2),
        Some(2 | 3) => (8, 4),
        _ => return Err(invalid("unknown format version")),
    };
    let len = bytes
        .get(len_at..len_at + len_bytes)
        .map(|b| b.iter().rev().fold(0usize, |a, &x| a << 8 | x as usize))
        .ok_or_else(|| invalid("truncated header"))?;
    let start = len_at + len_bytes;
    let header = bytes.get(start..start.saturating_add(len)).ok_or_else(|| invalid("truncated header"))?;
    let header = String::from_utf8_lossy(header);
    let shape = header
        .split("'shape'")
        .nth(1)
        .and_then(|r| r.split_once('(').map(|x| x.1))
        .and_then(|r| r.split_once(')').map(|x| x.0))
        .ok_or_else(|| invalid("no shape in the header"))?;
    shape.split(',').map(str::trim).filter(|d| !d.is_empty()).try_fold(1u64, |a, d| {
        let d: u64 = d.trim_end_matches('L').parse().map_err(|_| NpyError::Shape(shape.to_string()))?;
        a.checked_mul(d).ok_or_else(|| NpyError::ShapeOverflow(shape.to_string()))
    })
}

/// Checks a `.npy` file (little-endian numeric dtypes, any shape, C order, a shape that describes exactly
/// the data that follows) and returns its dtype and where its data starts.
fn read_header(bytes: &[u8]) -> Result<(Dtype, usize), NpyError> {
    if !bytes.starts_with(b"\x93NUMPY") {
        return Err(NpyError::Invalid("no NUMPY magic".into()));
    }
    let elements = header_elements(bytes)?;
    let f = npyz::NpyFile::new(bytes).map_err(|e| NpyError::Invalid(e.to_string()))?;
    let descr = match f.dtype() {
        npyz::DType::Plain(t) => t.to_string(),
        other => return Err(NpyError::Structured(format!("{other:?}"))),
    };
    if descr.starts_with('>') {
        return Err(NpyError::BigEndian(descr));
    }
    if f.order() == npyz::Order::Fortran && f.shape().len() > 1 {
        return Err(NpyError::Fortran);
    }
    let dtype = dtype_of(&descr).ok_or_else(|| NpyError::Dtype(descr.clone()))?;
    let shape = f.shape().to_vec();
    let data_bytes = f.into_inner().len() as u64;
    if elements.checked_mul(dtype.size() as u64) != Some(data_bytes) {
        let shape = format!("{shape:?}");
        return Err(NpyError::Size { shape, elements, size: dtype.size(), data: data_bytes });
    }
    // Every supported dtype is little-endian (or one byte), as a buffer holds it: the data is the bytes
    // after the header, as they are.
    Ok((dtype, bytes.len() - data_bytes as usize))
}

/// Parses a `.npy` file (little-endian numeric dtypes, any shape, C order) into a flat buffer.
pub fn read(bytes: &[u8]) -> Result<Buffer, NpyError> {
    let (dtype, start) = read_header(bytes)?;
    Ok(Buffer { dtype, bytes: bytes[start..].to_vec() })
}

/// [`read`], taking the file's bytes over: the header is cut off in place, so a large file is held once.
pub fn read_owned(mut bytes: Vec<u8>) -> Result<Buffer, NpyError> {
    let (dtype, start) = read_header(&bytes)?;
    bytes.drain(..start);
    Ok(Buffer { dtype, bytes })
}

/// Writes a buffer as a 1-D `.npy` file.
pub fn write(b: &Buffer) -> Vec<u8> {
    let mut out = header(b);
    out.extend_from_slice(&b.bytes);
    out
}

/// The `.npy` header of [`write()`]'s file for `b`: the file is this followed by `b.bytes` (so a caller can
/// write a large buffer without a second copy of it).
pub fn header(b: &Buffer) -> Vec<u8> {
    let descr = match b.dtype {
        Dtype::I8 => "|i1",
        Dtype::U8 => "|u1",
        Dtype::I16 => "<i2",
        Dtype::U16 => "<u2",
        Dtype::I32 => "<i4",
        Dtype::U32 => "<u4",
        Dtype::I64 => "<i8",
        Dtype::U64 => "<u8",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    // Format 1.0: magic, version, header length, header padded so data starts at a multiple of 64.
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': ({},), }}", b.len());
    let unpadded = 10 + header.len() + 1;
    let pad = (64 - unpadded % 64) % 64;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_every_dtype() {
        for d in Dtype::ALL {
            let b = Buffer { dtype: d, bytes: (0..(3 * d.size()) as u8).collect() };
            let bytes = write(&b);
            assert_eq!(&bytes[..6], b"\x93NUMPY");
            assert_eq!((bytes.len() - b.bytes.len()) % 64, 0);
            assert_eq!(read(&bytes).unwrap(), b, "{d}");
        }
    }

    #[test]
    fn rejects_garbage() {
        assert!(read(b"hello").is_err());
    }
}
