//! Kernel arguments beyond a number and a buffer: a struct passed by value ([`StructArg`]), built from
//! typed fields laid out with C's natural alignment, whose pointer fields hold the device addresses of
//! buffers the launch allocates; and the checks of such arguments (and of pointers into a buffer,
//! [`Arg::BufferAt`]) against the kernel parameter they fill ([`check_arg`]).
//!
//! A front end builds a [`StructArg`] with [`StructArg::new`] from [`StructField`]s and passes it as
//! [`Arg::Struct`]; the launch allocates every pointed-to buffer, writes the addresses with
//! [`StructArg::bytes_with`] and returns each buffer's final contents as a [`FieldBuffer`].

use crate::error::ArgShapeError;
use crate::launch::{Arg, Buffer, Dtype};

/// One field of a struct passed by value, in declaration order.
#[derive(Clone, PartialEq, Debug)]
pub enum StructField {
    /// A number of `dtype`: the low `dtype.size()` bytes of `bits` (two's complement or IEEE bits),
    /// aligned to its size.
    Number {
        /// The field's type.
        dtype: Dtype,
        /// Its bits.
        bits: u64,
    },
    /// A 64-bit device pointer `offset` bytes into `buffer`, which the launch allocates (8 bytes, aligned
    /// to 8).
    Pointer {
        /// The buffer pointed into.
        buffer: Buffer,
        /// Bytes past the buffer's start.
        offset: u64,
    },
    /// A null device pointer (8 zero bytes, aligned to 8).
    Null,
    /// Explicit padding: this many zero bytes (alignment 1).
    Pad(u32),
}

impl StructField {
    /// Size in bytes.
    pub fn size(&self) -> u64 {
        match self {
            StructField::Number { dtype, .. } => dtype.size() as u64,
            StructField::Pointer { .. } | StructField::Null => 8,
            StructField::Pad(n) => *n as u64,
        }
    }

    /// Natural alignment in bytes.
    pub fn align(&self) -> u64 {
        match self {
            StructField::Pad(_) => 1,
            f => f.size(),
        }
    }
}

/// Where the fields of a struct go.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct StructLayout {
    /// Each field's byte offset.
    pub offsets: Vec<u64>,
    /// The struct's size: past the last field, rounded up to [`StructLayout::align`].
    pub size: u64,
    /// The struct's alignment: its largest field alignment (1 for no fields).
    pub align: u64,
}

/// Lays out fields of the given `(size, alignment)` as a C compiler does: each at the next multiple of
/// its alignment, the whole rounded up to the largest alignment (saturating: an absurd size is caught by
/// the caller's size check).
pub fn struct_layout(fields: impl IntoIterator<Item = (u64, u64)>) -> StructLayout {
    let (mut offsets, mut end, mut align) = (Vec::new(), 0u64, 1u64);
    for (size, a) in fields {
        let a = a.max(1);
        let at = crate::layout::align_up(end, a);
        offsets.push(at);
        end = at.saturating_add(size);
        align = align.max(a);
    }
    StructLayout { offsets, size: crate::layout::align_up(end, align), align }
}

/// A pointer field of a [`StructArg`]: the buffer the launch allocates and where its address goes.
#[derive(Clone, PartialEq, Debug)]
pub struct StructPointer {
    /// The field's index among all fields (padding included), as written.
    pub field: usize,
    /// The field's byte offset in the struct.
    pub at: u32,
    /// The buffer.
    pub buffer: Buffer,
    /// Bytes past the buffer's start the pointer points to.
    pub offset: u64,
}

/// A struct passed by value: its bytes with every pointer field null, its alignment, and its pointer
/// fields.
#[derive(Clone, PartialEq, Debug)]
pub struct StructArg {
    /// The struct's bytes (pointer fields zero until [`StructArg::bytes_with`] fills them).
    pub bytes: Vec<u8>,
    /// Its alignment (the largest field alignment).
    pub align: u32,
    /// Its non-null pointer fields, in field order.
    pub pointers: Vec<StructPointer>,
}

impl StructArg {
    /// Builds the struct from its fields, laid out with C's natural alignment ([`struct_layout`]).
    pub fn new(fields: Vec<StructField>) -> Result<StructArg, ArgShapeError> {
        let layout = struct_layout(fields.iter().map(|f| (f.size(), f.align())));
        let size = u32::try_from(layout.size).map_err(|_| ArgShapeError::StructTooLarge(layout.size))?;
        let mut bytes = vec![0u8; size as usize];
        let mut pointers = Vec::new();
        for (field, (f, &at)) in fields.into_iter().zip(&layout.offsets).enumerate() {
            let at = at as usize;
            match f {
                StructField::Number { dtype, bits } => {
                    bytes[at..at + dtype.size()].copy_from_slice(&bits.to_le_bytes()[..dtype.size()]);
                }
                StructField::Pointer { buffer, offset } => {
                    pointers.push(StructPointer { field, at: at as u32, buffer, offset });
                }
                StructField::Null | StructField::Pad(_) => {}
            }
        }
        Ok(StructArg { bytes, align: layout.align as u32, pointers })
    }

    /// The struct's bytes with pointer `k` set to `addresses[k] + pointers[k].offset` (`addresses[k]` is
    /// where the launch placed `pointers[k].buffer`; a missing address leaves the pointer null).
    pub fn bytes_with(&self, addresses: &[u64]) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        for (p, &a) in self.pointers.iter().zip(addresses) {
            let at = p.at as usize;
            bytes[at..at + 8].copy_from_slice(&a.wrapping_add(p.offset).to_le_bytes());
        }
        bytes
    }

    /// Bytes of all the buffers it points into.
    pub fn buffer_bytes(&self) -> u64 {
        self.pointers.iter().map(|p| p.buffer.bytes.len() as u64).fold(0, u64::saturating_add)
    }
}

/// The final contents of a buffer that a struct argument's pointer field pointed into.
#[derive(Clone, PartialEq, Debug)]
pub struct FieldBuffer {
    /// The argument's index.
    pub arg: usize,
    /// The pointer field's index in the struct ([`StructPointer::field`]).
    pub field: usize,
    /// The buffer's final contents (all of it, whatever the pointer's offset).
    pub buffer: Buffer,
}

/// Checks a struct argument or a pointer into a buffer against kernel parameter `index` (`param`, of
/// `size` bytes aligned to `align`): a struct must have the parameter's size and need no more alignment;
/// a pointer may point at most one past the end of its buffer. Other arguments pass (the launch checks
/// them as it always has).
pub fn check_arg(index: usize, param: &str, size: u32, align: u32, arg: &Arg) -> Result<(), ArgShapeError> {
    match arg {
        Arg::Struct(s) => {
            if s.bytes.len() as u64 != size as u64 {
                let (param, given) = (param.to_string(), s.bytes.len() as u64);
                return Err(ArgShapeError::StructSize { index, param, size, given });
            }
            if s.align > align.max(1) {
                return Err(ArgShapeError::StructAlign {
                    index,
                    param: param.to_string(),
                    align,
                    given: s.align as u64,
                });
            }
            for p in &s.pointers {
                check_offset(index, p.offset, &p.buffer)?;
            }
            Ok(())
        }
        Arg::BufferAt { buffer, offset } => check_offset(index, *offset, buffer),
        Arg::Scalar(_) | Arg::Buffer(_) => Ok(()),
    }
}

fn check_offset(index: usize, offset: u64, b: &Buffer) -> Result<(), ArgShapeError> {
    let len = b.bytes.len() as u64;
    if offset > len {
        return Err(ArgShapeError::OffsetPastEnd { index, offset, len });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_get_c_natural_alignment_and_the_size_is_rounded_to_the_largest() {
        // struct { u32; u64; u8; } → 0, 8, 16; size 24, align 8.
        let l = struct_layout([(4, 4), (8, 8), (1, 1)]);
        assert_eq!((l.offsets, l.size, l.align), (vec![0, 8, 16], 24, 8));
        // struct { u8; u16; u8; } → 0, 2, 4; size 6, align 2.
        let l = struct_layout([(1, 1), (2, 2), (1, 1)]);
        assert_eq!((l.offsets, l.size, l.align), (vec![0, 2, 4], 6, 2));
        assert_eq!(struct_layout([]).size, 0);
    }

    #[test]
    fn a_lonestar_graph_struct_is_56_bytes_with_its_pointers_filled_in() {
        // LonestarGPU's Graph: nnodes, nedges, then five device pointers and a u32.
        let buf = |n| Buffer::zeros(Dtype::U32, n);
        let fields = vec![
            StructField::Number { dtype: Dtype::U32, bits: 2048 },
            StructField::Number { dtype: Dtype::U32, bits: 15230 },
            StructField::Pointer { buffer: buf(2049), offset: 0 },
            StructField::Pointer { buffer: buf(15230), offset: 4 },
            StructField::Null,
            StructField::Pad(4),
            StructField::Number { dtype: Dtype::I16, bits: (-2i64) as u64 },
        ];
        let s = StructArg::new(fields).unwrap();
        assert_eq!((s.bytes.len(), s.align), (40, 8));
        assert_eq!(s.pointers.iter().map(|p| (p.field, p.at)).collect::<Vec<_>>(), vec![(2, 8), (3, 16)]);
        let b = s.bytes_with(&[0x1000, 0x2000]);
        assert_eq!(&b[0..8], &[0x00, 0x08, 0, 0, 0x7e, 0x3b, 0, 0]);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 0x1000);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 0x2004);
        assert_eq!(&b[24..36], &[0; 12]);
        assert_eq!(&b[36..38], &[0xfe, 0xff]);
        assert_eq!(s.buffer_bytes(), (2049 + 15230) * 4);
    }

    #[test]
    fn structs_are_checked_against_the_parameter() {
        let s = Arg::Struct(StructArg::new(vec![StructField::Null, StructField::Pad(8)]).unwrap());
        assert!(check_arg(1, "p", 16, 8, &s).is_ok());
        let e = check_arg(1, "p", 56, 8, &s).unwrap_err();
        assert_eq!(e.to_string(), "argument 1: the struct is 16 bytes but parameter `p` is 56 bytes");
        assert!(matches!(check_arg(1, "p", 16, 4, &s), Err(ArgShapeError::StructAlign { given: 8, .. })));
        let at = |offset| Arg::BufferAt { buffer: Buffer::zeros(Dtype::F32, 4), offset };
        assert!(check_arg(0, "p", 8, 8, &at(16)).is_ok());
        assert!(matches!(check_arg(0, "p", 8, 8, &at(17)), Err(ArgShapeError::OffsetPastEnd { len: 16, .. })));
        let huge = StructArg::new(vec![StructField::Pad(u32::MAX), StructField::Null]);
        assert!(matches!(huge, Err(ArgShapeError::StructTooLarge(_))));
    }
}
