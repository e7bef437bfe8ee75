//! CUDA arrays (`cudaMallocArray`, `cudaMalloc3DArray`) and the copies to, from and between them.
//!
//! An array is one device allocation, row-major without padding: rows of `width` elements of
//! [`Format::bytes`] each (the pitch is the row's bytes), `max(height, 1)` rows per slice and
//! `max(depth, 1)` slices; the layers of a layered array are its slices (one slice per layer), stacked
//! the same way. Its `cudaArray_t` handle is the address of its first byte, and the runtime keeps its
//! channel format, extent and flags by that handle ([`Runtime::arrays`]): a handle the runtime does not
//! hold (never allocated, or freed) is `cudaErrorInvalidResourceHandle`, NULL `cudaErrorInvalidValue`.
//! The storage is allocated as `cudaMalloc` allocates, so `--max-memory` and `cudaMemGetInfo` count it.
//! Texture and surface objects over an array describe this layout to the device
//! ([`CudaArray::descriptor`]).
//!
//! Copies address an array as rows of bytes and go through the pitched copies of [`crate::pitched`]: the
//! box a copy names is checked against the array's extent, then every row against the memory it lies in,
//! before the first byte moves. An array is device memory whatever the copy kind says of it: as
//! `cudaMemcpy3D`'s documentation puts it, the runtime "will disregard that implication and silently
//! correct the kind" ([`corrected`]); the other side's claim is checked as for any copy.

use crate::error::{self as cuda, CudaError};
use crate::hostmem::Plain;
use crate::pitched::{Extent, Rows};
use crate::runtime::{CopyKind, Runtime};
use reconverge_semantics::texture::{ChannelKind, Descriptor, Format, ObjectKind, Resource, Sampler};

/// `cudaArrayLayered`: the depth extent counts layers.
pub const LAYERED: u32 = 0x01;
/// `cudaArraySurfaceLoadStore`: surface objects may be created over the array.
pub const SURFACE_LOAD_STORE: u32 = 0x02;
/// `cudaArrayCubemap` (not supported).
pub const CUBEMAP: u32 = 0x04;
/// `cudaArrayTextureGather`: a 2-D array that `tex2Dgather` reads.
pub const TEXTURE_GATHER: u32 = 0x08;
/// `cudaArrayColorAttachment` (not supported).
pub const COLOR_ATTACHMENT: u32 = 0x20;
/// `cudaArraySparse` (not supported).
pub const SPARSE: u32 = 0x40;
/// `cudaArrayDeferredMapping` (not supported).
pub const DEFERRED_MAPPING: u32 = 0x80;

/// The largest extents, in elements, from the table of `cudaMalloc3DArray`'s documentation with the
/// values a compute capability 8.0 device reports (the capability the shim reports): `maxTexture1D`,
/// `maxTexture2D`, `maxTexture3D`, `maxTexture1DLayered`, `maxTexture2DLayered`, `maxTexture2DGather`.
pub mod max {
    /// A 1-D array's width.
    pub const WIDTH_1D: u64 = 131_072;
    /// A 2-D array's width and height.
    pub const EXTENT_2D: [u64; 2] = [131_072, 65_536];
    /// Each extent of a 3-D array.
    pub const EXTENT_3D: u64 = 16_384;
    /// A layered array's width and height.
    pub const LAYERED_EXTENT: u64 = 32_768;
    /// A layered array's layers.
    pub const LAYERS: u64 = 2_048;
    /// The width and height of a 2-D array with `cudaArrayTextureGather`.
    pub const GATHER_EXTENT: u64 = 32_768;
}

/// `cudaChannelFormatDesc` as C lays it out: the bits of each channel and `cudaChannelFormatKind`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelDesc {
    /// Bits of the first channel.
    pub x: i32,
    /// Bits of the second channel.
    pub y: i32,
    /// Bits of the third channel.
    pub z: i32,
    /// Bits of the fourth channel.
    pub w: i32,
    /// `cudaChannelFormatKind`.
    pub f: i32,
}

// SAFETY: five `i32`s, no padding; every bit pattern is a valid value.
unsafe impl Plain for ChannelDesc {}

impl ChannelDesc {
    /// The element format: 1, 2 or 4 leading channels of one size (8, 16 or 32 bits; 16 or 32 for
    /// floats) and none after them, of kind signed, unsigned or float. Any other channel layout, and
    /// `cudaChannelFormatKindNone` or a kind CUDA does not define, is `cudaErrorInvalidChannelDescriptor`;
    /// CUDA's other kinds (NV12, the normalized and block-compressed formats) are
    /// `cudaErrorNotSupported`.
    pub fn format(self) -> Result<Format, CudaError> {
        let kind = match self.f {
            0 => ChannelKind::Signed,
            1 => ChannelKind::Unsigned,
            2 => ChannelKind::Float,
            4..=45 => return Err(cuda::NOT_SUPPORTED),
            _ => return Err(cuda::INVALID_CHANNEL_DESCRIPTOR),
        };
        let bits = [self.x, self.y, self.z, self.w];
        let channels = bits.iter().take_while(|&&b| b != 0).count();
        let same = bits.iter().take(channels).all(|&b| b == self.x);
        let trailing = bits.iter().skip(channels).any(|&b| b != 0);
        let Ok(size) = u8::try_from(self.x) else { return Err(cuda::INVALID_CHANNEL_DESCRIPTOR) };
        let format = Format { kind, channels: channels as u8, bits: size };
        if !same || trailing || !format.is_valid() {
            return Err(cuda::INVALID_CHANNEL_DESCRIPTOR);
        }
        Ok(format)
    }
}

/// A CUDA array the runtime holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaArray {
    /// Its handle: the device address of element (0, 0, 0).
    pub base: u64,
    /// The channel descriptor it was allocated with (`cudaGetChannelDesc`).
    pub desc: ChannelDesc,
    /// Its element format.
    pub format: Format,
    /// Its extent in elements as allocated (`cudaExtent`; 0 for a dimension it does not have).
    pub extent: [u64; 3],
    /// The flags it was allocated with (`cudaArrayLayered`, `cudaArraySurfaceLoadStore`, ...).
    pub flags: u32,
}

impl CudaArray {
    /// Bytes per element.
    pub fn element_bytes(&self) -> u64 {
        self.format.bytes()
    }

    /// Bytes per row (the pitch: rows are not padded).
    pub fn row_bytes(&self) -> u64 {
        self.extent[0] * self.element_bytes()
    }

    /// Rows per slice (1 for a 1-D array).
    pub fn rows(&self) -> u64 {
        self.extent[1].max(1)
    }

    /// Slices (the layers of a layered array; 1 for a 1-D or 2-D array).
    pub fn slices(&self) -> u64 {
        self.extent[2].max(1)
    }

    /// Whether it was allocated with `cudaArrayLayered`.
    pub fn layered(&self) -> bool {
        self.flags & LAYERED != 0
    }

    /// Its storage in bytes.
    pub fn size(&self) -> u64 {
        self.row_bytes() * self.rows() * self.slices()
    }

    /// The descriptor of an object of `kind` over the whole array.
    pub fn descriptor(&self, object: ObjectKind, sampler: Sampler) -> Descriptor {
        let small = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        let (depth, layers) = if self.layered() { (1, self.slices()) } else { (self.slices(), 1) };
        Descriptor {
            object,
            resource: Resource::Array,
            format: self.format,
            base: self.base,
            width: self.extent[0],
            pitch: self.row_bytes(),
            height: small(self.rows()),
            depth: small(depth),
            layers: small(layers),
            sampler,
        }
    }
}

/// Checks the extent (elements; 0 for an absent dimension) and flags of a new array against CUDA's rules:
/// cubemaps, sparse, deferred-mapping and color-attachment arrays are `cudaErrorNotSupported`; unknown
/// flags, a shape CUDA does not define (a depth without a height, unless layered; a layered array without
/// layers; a gather array that is not 2-D) and extents past [`max`] are `cudaErrorInvalidValue`.
pub fn check_shape(extent: [u64; 3], flags: u32) -> Result<(), CudaError> {
    if flags & (CUBEMAP | COLOR_ATTACHMENT | SPARSE | DEFERRED_MAPPING) != 0 {
        return Err(cuda::NOT_SUPPORTED);
    }
    if flags & !(LAYERED | SURFACE_LOAD_STORE | TEXTURE_GATHER) != 0 {
        return Err(cuda::INVALID_VALUE);
    }
    let [w, h, d] = extent;
    let within = |v: u64, most: u64| (1..=most).contains(&v);
    let ok = if flags & LAYERED != 0 {
        let layer = within(w, max::LAYERED_EXTENT) && (h == 0 || within(h, max::LAYERED_EXTENT));
        flags & TEXTURE_GATHER == 0 && layer && within(d, max::LAYERS)
    } else if flags & TEXTURE_GATHER != 0 {
        d == 0 && within(w, max::GATHER_EXTENT) && within(h, max::GATHER_EXTENT)
    } else {
        match (h, d) {
            (0, 0) => within(w, max::WIDTH_1D),
            (_, 0) => within(w, max::EXTENT_2D[0]) && within(h, max::EXTENT_2D[1]),
            (0, _) => false,
            _ => extent.iter().all(|&v| within(v, max::EXTENT_3D)),
        }
    };
    if ok {
        Ok(())
    } else {
        Err(cuda::INVALID_VALUE)
    }
}

/// One side of a 2-D or 3-D copy: a CUDA array from a position (`x` in bytes, then row and slice), or rows
/// of linear memory (a position already applied).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// An array.
    Array {
        /// Its handle.
        handle: u64,
        /// Byte in the row, row, slice.
        at: [u64; 3],
    },
    /// Linear memory (host, device or managed).
    Memory(Rows),
}

/// One side of a deprecated 1-D copy (`cudaMemcpyToArray` and its kin): an array from byte `w_offset` of
/// row `h_offset` (a copy runs on past a row's end into the next rows), or a linear address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flat {
    /// An array.
    Array {
        /// Its handle.
        handle: u64,
        /// The first byte's offset in its row.
        w_offset: u64,
        /// The first byte's row.
        h_offset: u64,
    },
    /// A linear address.
    Memory(u64),
}

/// The raw `cudaMemcpyKind` of a copy of `kind` with its array sides taken as device memory.
pub fn corrected(kind: CopyKind, dst_array: bool, src_array: bool) -> i32 {
    if kind == CopyKind::Default {
        return 4;
    }
    let src_device = src_array || matches!(kind, CopyKind::DeviceToHost | CopyKind::DeviceToDevice);
    let dst_device = dst_array || matches!(kind, CopyKind::HostToDevice | CopyKind::DeviceToDevice);
    match (src_device, dst_device) {
        (false, false) => 0,
        (false, true) => 1,
        (true, false) => 2,
        (true, true) => 3,
    }
}

impl Runtime {
    /// `cudaMalloc3DArray` (and `cudaMallocArray`, depth 0): a zeroed array of `extent` elements of
    /// `desc`'s format; its handle.
    pub fn malloc_array(&mut self, desc: ChannelDesc, extent: [u64; 3], flags: u32) -> Result<u64, CudaError> {
        let format = desc.format()?;
        check_shape(extent, flags)?;
        let array = CudaArray { base: 0, desc, format, extent, flags };
        let [w, h, d] = extent;
        let name = format!("cudaArray({w}x{h}x{d}, {} bytes per element)", format.bytes());
        let base = self.malloc_named(array.size(), name)?;
        self.arrays.insert(base, CudaArray { base, ..array });
        Ok(base)
    }

    /// The array `handle` names: NULL is `cudaErrorInvalidValue`, a handle the runtime does not hold
    /// `cudaErrorInvalidResourceHandle`.
    pub fn array(&self, handle: u64) -> Result<&CudaArray, CudaError> {
        if handle == 0 {
            return Err(cuda::INVALID_VALUE);
        }
        self.arrays.get(&handle).ok_or(cuda::INVALID_RESOURCE_HANDLE)
    }

    /// `cudaFreeArray`: NULL does nothing; a handle the runtime does not hold (freed already) is
    /// `cudaErrorInvalidResourceHandle`.
    pub fn free_array(&mut self, handle: u64) -> CudaError {
        if handle == 0 {
            return cuda::SUCCESS;
        }
        if self.arrays.remove(&handle).is_none() {
            return cuda::INVALID_RESOURCE_HANDLE;
        }
        self.mem.free(handle);
        cuda::SUCCESS
    }

    /// `cudaDeviceReset`: every array and texture or surface object is freed.
    pub fn free_arrays_and_objects(&mut self) {
        let handles: Vec<u64> = self.arrays.keys().chain(self.objects.keys()).copied().collect();
        for h in handles {
            self.mem.free(h);
        }
        self.arrays.clear();
        self.objects.clear();
    }

    /// The rows of `end` for a copy of `e`: an array's box (from its position, `e.width` bytes by
    /// `e.height` rows by `e.depth` slices) must lie inside it (`cudaErrorInvalidValue`).
    fn rows_of(&self, end: End, e: Extent) -> Result<Rows, CudaError> {
        let (handle, [x, y, z]) = match end {
            End::Memory(rows) => return Ok(rows),
            End::Array { handle, at } => (handle, at),
        };
        let a = self.array(handle)?;
        let inside = |from: u64, n: u64, most: u64| from.checked_add(n).is_some_and(|end| end <= most);
        if !(inside(x, e.width, a.row_bytes()) && inside(y, e.height, a.rows()) && inside(z, e.depth, a.slices())) {
            return Err(cuda::INVALID_VALUE);
        }
        Rows::at(a.base, a.row_bytes(), a.rows(), (x, y, z)).ok_or(cuda::INVALID_VALUE)
    }

    /// `cudaMemcpy2DToArray`, `cudaMemcpy2DFromArray`, `cudaMemcpy2DArrayToArray` (and `cudaMemcpy3D` in
    /// bytes, [`Runtime::copy_3d_array`]): the extent's rows (`e.width` bytes each) from `src` to `dst` as
    /// the raw `kind` says of the sides that are not arrays. Every check comes before the first byte moves.
    ///
    /// # Safety
    /// A host `dst` is memory the program named ([`crate::hostmem::write`]).
    pub unsafe fn copy_array(&mut self, dst: End, src: End, e: Extent, kind: i32) -> CudaError {
        let Some(k) = CopyKind::from_raw(kind) else { return cuda::INVALID_MEMCPY_DIRECTION };
        let rows = self.rows_of(dst, e).and_then(|d| Ok((d, self.rows_of(src, e)?)));
        let (to, from) = match rows {
            Ok(r) => r,
            Err(c) => return c,
        };
        let kind = corrected(k, matches!(dst, End::Array { .. }), matches!(src, End::Array { .. }));
        // SAFETY: the caller's contract.
        unsafe { self.copy_rows(to, from, e, kind) }
    }

    /// `cudaMemcpy3D` with an array on either side or both: an array's position and the extent's width
    /// are in its elements (linear memory's in bytes, CUDA's "elements of unsigned char"); two arrays
    /// must have elements of one size (`cudaErrorInvalidValue`).
    ///
    /// # Safety
    /// As [`Runtime::copy_array`].
    pub unsafe fn copy_3d_array(&mut self, dst: End, src: End, extent: Extent, kind: i32) -> CudaError {
        let size_of = |end: End| match end {
            End::Array { handle, .. } => self.array(handle).map(|a| Some(a.element_bytes())),
            End::Memory(_) => Ok(None),
        };
        let size = match (size_of(dst), size_of(src)) {
            (Err(c), _) | (_, Err(c)) => return c,
            (Ok(Some(a)), Ok(Some(b))) if a != b => return cuda::INVALID_VALUE,
            (Ok(Some(a)), _) | (_, Ok(Some(a))) => a,
            (Ok(None), Ok(None)) => 1,
        };
        let in_bytes = |end: End| match end {
            End::Array { handle, at: [x, y, z] } => x.checked_mul(size).map(|x| End::Array { handle, at: [x, y, z] }),
            memory => Some(memory),
        };
        let (Some(dst), Some(src), Some(width)) = (in_bytes(dst), in_bytes(src), extent.width.checked_mul(size)) else {
            return cuda::INVALID_VALUE;
        };
        // SAFETY: the caller's contract.
        unsafe { self.copy_array(dst, src, Extent { width, ..extent }, kind) }
    }

    /// The address of a deprecated 1-D copy's side, `count` bytes of which must lie in the array.
    fn flat_address(&self, side: Flat, count: u64) -> Result<u64, CudaError> {
        let (handle, w_offset, h_offset) = match side {
            Flat::Memory(addr) => return Ok(addr),
            Flat::Array { handle, w_offset, h_offset } => (handle, w_offset, h_offset),
        };
        let a = self.array(handle)?;
        let start = h_offset.checked_mul(a.row_bytes()).and_then(|r| r.checked_add(w_offset));
        match start {
            Some(s) if w_offset <= a.row_bytes() && s.checked_add(count).is_some_and(|end| end <= a.size()) => {
                Ok(a.base + s)
            }
            _ => Err(cuda::INVALID_VALUE),
        }
    }

    /// `cudaMemcpyToArray`, `cudaMemcpyFromArray`, `cudaMemcpyArrayToArray` (deprecated): `count` bytes
    /// from `src` to `dst`, an array side running on from its offset through the following rows.
    ///
    /// # Safety
    /// As [`Runtime::copy_array`].
    pub unsafe fn copy_flat(&mut self, dst: Flat, src: Flat, count: u64, kind: i32) -> CudaError {
        let Some(k) = CopyKind::from_raw(kind) else { return cuda::INVALID_MEMCPY_DIRECTION };
        let addresses = self.flat_address(dst, count).and_then(|d| Ok((d, self.flat_address(src, count)?)));
        let (to, from) = match addresses {
            Ok(a) => a,
            Err(c) => return c,
        };
        let kind = corrected(k, matches!(dst, Flat::Array { .. }), matches!(src, Flat::Array { .. }));
        // SAFETY: the caller's contract.
        unsafe { self.memcpy(to, from, count, kind) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use crate::span::Span;

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    fn desc(bits: [i32; 4], f: i32) -> ChannelDesc {
        ChannelDesc { x: bits[0], y: bits[1], z: bits[2], w: bits[3], f }
    }

    #[test]
    fn channel_descriptors_name_the_hardware_formats_only() {
        let f = desc([32, 32, 32, 32], 2).format().unwrap();
        assert_eq!((f.kind, f.channels, f.bits, f.bytes()), (ChannelKind::Float, 4, 32, 16));
        assert_eq!(desc([8, 8, 0, 0], 1).format().unwrap().bytes(), 2);
        assert_eq!(desc([16, 0, 0, 0], 0).format().unwrap().kind, ChannelKind::Signed);
        for bad in
            [[32, 32, 32, 0], [8, 16, 0, 0], [0, 8, 0, 0], [8, 0, 8, 0], [0, 0, 0, 0], [12, 0, 0, 0], [-8, 0, 0, 0]]
        {
            assert_eq!(desc(bad, 1).format(), Err(cuda::INVALID_CHANNEL_DESCRIPTOR), "{bad:?}");
        }
        assert_eq!(desc([8, 0, 0, 0], 2).format(), Err(cuda::INVALID_CHANNEL_DESCRIPTOR), "8-bit floats");
        assert_eq!(desc([32, 0, 0, 0], 3).format(), Err(cuda::INVALID_CHANNEL_DESCRIPTOR), "kind none");
        assert_eq!(desc([8, 0, 0, 0], 5).format(), Err(cuda::NOT_SUPPORTED), "a normalized kind");
        assert_eq!(desc([8, 0, 0, 0], 99).format(), Err(cuda::INVALID_CHANNEL_DESCRIPTOR));
    }

    #[test]
    fn shapes_follow_cudas_table() {
        assert_eq!(check_shape([8, 0, 0], 0), Ok(()));
        assert_eq!(check_shape([8, 4, 0], SURFACE_LOAD_STORE | TEXTURE_GATHER), Ok(()));
        assert_eq!(check_shape([8, 4, 2], 0), Ok(()));
        assert_eq!(check_shape([8, 0, 3], LAYERED), Ok(()), "1-D layered");
        assert_eq!(check_shape([8, 4, 3], LAYERED | SURFACE_LOAD_STORE), Ok(()));
        let invalid = Err(cuda::INVALID_VALUE);
        assert_eq!(check_shape([0, 4, 0], 0), invalid, "no width");
        assert_eq!(check_shape([8, 0, 3], 0), invalid, "a depth without a height");
        assert_eq!(check_shape([8, 4, 0], LAYERED), invalid, "no layers");
        assert_eq!(check_shape([8, 4, 2], TEXTURE_GATHER), invalid, "gather on 3-D");
        assert_eq!(check_shape([max::WIDTH_1D + 1, 0, 0], 0), invalid);
        assert_eq!(check_shape([8, 8, max::EXTENT_3D + 1], 0), invalid);
        assert_eq!(check_shape([8, 0, 0], 0x100), invalid, "an unknown flag");
        assert_eq!(check_shape([8, 8, 6], CUBEMAP), Err(cuda::NOT_SUPPORTED));
        assert_eq!(check_shape([8, 8, 0], SPARSE), Err(cuda::NOT_SUPPORTED));
    }

    #[test]
    fn arrays_are_allocated_counted_freed_once_and_reset() {
        let mut rt = runtime();
        let held = rt.held();
        let h = rt.malloc_array(desc([32, 32, 0, 0], 2), [5, 3, 2], 0).unwrap();
        assert_eq!(rt.held() - held, 5 * 8 * 3 * 2, "counted as device memory, unpadded");
        let a = *rt.array(h).unwrap();
        assert_eq!((a.row_bytes(), a.rows(), a.slices(), a.element_bytes()), (40, 3, 2, 8));
        let layered = rt.malloc_array(desc([8, 0, 0, 0], 1), [4, 0, 6], LAYERED).unwrap();
        let d = rt.array(layered).unwrap().descriptor(ObjectKind::Texture, Sampler::default());
        assert_eq!((d.width, d.height, d.depth, d.layers, d.pitch), (4, 1, 1, 6, 4));
        assert_eq!(rt.free_array(h), cuda::SUCCESS);
        assert_eq!(rt.free_array(h), cuda::INVALID_RESOURCE_HANDLE, "freed twice");
        assert_eq!(rt.array(h), Err(cuda::INVALID_RESOURCE_HANDLE));
        assert_eq!(rt.array(0), Err(cuda::INVALID_VALUE));
        assert_eq!(rt.free_array(0), cuda::SUCCESS);
        assert_eq!(rt.malloc_array(desc([32, 32, 32, 0], 2), [4, 0, 0], 0), Err(cuda::INVALID_CHANNEL_DESCRIPTOR));
        rt.settings.max_memory = rt.held() + 100;
        assert_eq!(rt.malloc_array(desc([32, 0, 0, 0], 2), [26, 0, 0], 0), Err(cuda::MEMORY_ALLOCATION));
        rt.free_arrays_and_objects();
        assert_eq!(rt.held(), held);
    }

    #[test]
    fn copy_kinds_treat_arrays_as_device_memory() {
        use CopyKind::*;
        assert_eq!(corrected(HostToHost, true, false), 1, "to an array from the host");
        assert_eq!(corrected(HostToHost, false, true), 2, "from an array to the host");
        assert_eq!(corrected(DeviceToDevice, false, true), 3);
        assert_eq!(corrected(HostToDevice, true, true), 3);
        assert_eq!(corrected(Default, true, false), 4);
    }

    #[test]
    fn two_and_three_d_copies_stay_inside_the_array() {
        let mut rt = runtime();
        let h = rt.malloc_array(desc([16, 0, 0, 0], 1), [4, 3, 2], 0).unwrap();
        let host: Vec<u8> = (1..=6).collect();
        let src = End::Memory(Rows { base: host.as_ptr() as u64, pitch: 2, rows_per_slice: 3 });
        // A 1x3x1-element box (2 bytes wide) at element (1, 0, 1): 3-D positions are in elements.
        let e = Extent { width: 1, height: 3, depth: 1 };
        let at = End::Array { handle: h, at: [1, 0, 1] };
        // SAFETY: the destination is an array.
        assert_eq!(unsafe { rt.copy_3d_array(at, src, e, 0) }, cuda::SUCCESS, "a host-to-host kind is corrected");
        let bytes = rt.span_bytes(Span::Device(h), 48).unwrap();
        assert_eq!(&bytes[24..32], &[0, 0, 1, 2, 0, 0, 0, 0], "slice 1, row 0");
        assert_eq!(&bytes[40..44], &[0, 0, 5, 6], "slice 1, row 2");
        let past = End::Array { handle: h, at: [3, 0, 1] };
        let wide = Extent { width: 2, height: 1, depth: 1 };
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_3d_array(past, src, wide, 1) }, cuda::INVALID_VALUE, "past the row");
        let deep = Extent { width: 1, height: 1, depth: 2 };
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_3d_array(at, src, deep, 1) }, cuda::INVALID_VALUE, "past the last slice");
        let other = rt.malloc_array(desc([8, 0, 0, 0], 1), [8, 3, 0], 0).unwrap();
        let both = End::Array { handle: other, at: [0, 0, 0] };
        // SAFETY: both sides are arrays.
        assert_eq!(unsafe { rt.copy_3d_array(both, at, e, 3) }, cuda::INVALID_VALUE, "element sizes differ");
        let mut back = [0u8; 4];
        let to = End::Memory(Rows { base: back.as_mut_ptr() as u64, pitch: 4, rows_per_slice: 1 });
        let from = End::Array { handle: h, at: [2, 2, 1] };
        // SAFETY: `back` is this test's buffer.
        let code = unsafe { rt.copy_array(to, from, Extent { width: 4, height: 1, depth: 1 }, 2) };
        assert_eq!((code, back), (cuda::SUCCESS, [5, 6, 0, 0]), "2-D copies are in bytes");
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_array(to, from, wide, 9) }, cuda::INVALID_MEMCPY_DIRECTION);
        let gone = End::Array { handle: h + 8, at: [0, 0, 0] };
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_array(to, gone, wide, 2) }, cuda::INVALID_RESOURCE_HANDLE);
    }

    #[test]
    fn flat_copies_run_on_through_the_rows() {
        let mut rt = runtime();
        let h = rt.malloc_array(desc([8, 0, 0, 0], 1), [4, 2, 0], 0).unwrap();
        let host: [u8; 5] = [1, 2, 3, 4, 5];
        let dst = Flat::Array { handle: h, w_offset: 2, h_offset: 0 };
        // SAFETY: the destination is an array.
        assert_eq!(unsafe { rt.copy_flat(dst, Flat::Memory(host.as_ptr() as u64), 5, 1) }, cuda::SUCCESS);
        assert_eq!(rt.span_bytes(Span::Device(h), 8).unwrap(), &[0, 0, 1, 2, 3, 4, 5, 0]);
        let late = Flat::Array { handle: h, w_offset: 0, h_offset: 1 };
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_flat(late, Flat::Memory(host.as_ptr() as u64), 5, 1) }, cuda::INVALID_VALUE);
        let mut back = [0u8; 3];
        let from = Flat::Array { handle: h, w_offset: 1, h_offset: 1 };
        // SAFETY: `back` is this test's buffer.
        assert_eq!(unsafe { rt.copy_flat(Flat::Memory(back.as_mut_ptr() as u64), from, 3, 2) }, cuda::SUCCESS);
        assert_eq!(back, [4, 5, 0]);
    }
}
