//! Pitched, 2-D and 3-D memory: `cudaMallocPitch`, `cudaMalloc3D`, `cudaMemcpy2D[Async]`,
//! `cudaMemcpy3D[Async]`, `cudaMemset2D[Async]`, `cudaMemset3D[Async]` ([`crate::pitched`]). A
//! `cudaMemcpy3DParms` may name a CUDA array on either side ([`crate::array`]): its position and the
//! extent's width are then in the array's elements.

use super::memory::on_stream;
use super::{call, put};
use crate::array::End;
use crate::error::{self as cuda, CudaError};
use crate::hostmem::{self, Plain};
use crate::pitched::{Extent, Rows};
use crate::runtime::Runtime;
use std::ffi::c_void;

/// `cudaExtent` as C passes it (`width` in bytes for linear memory).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaExtent {
    /// Bytes per row.
    pub width: usize,
    /// Rows per slice.
    pub height: usize,
    /// Slices.
    pub depth: usize,
}

// SAFETY: three `usize`s, no padding, every bit pattern valid.
unsafe impl Plain for CudaExtent {}

/// `cudaPitchedPtr` as C lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaPitchedPtr {
    /// The first byte.
    pub ptr: usize,
    /// Bytes from one row to the next.
    pub pitch: usize,
    /// The logical row width, bytes.
    pub xsize: usize,
    /// Rows per slice.
    pub ysize: usize,
}

// SAFETY: plain integers, no padding, every bit pattern valid.
unsafe impl Plain for CudaPitchedPtr {}

/// `cudaPos` as C lays it out (`x` in bytes for linear memory).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaPos {
    /// Byte in the row.
    pub x: usize,
    /// Row.
    pub y: usize,
    /// Slice.
    pub z: usize,
}

/// `cudaMemcpy3DParms` as C lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CudaMemcpy3DParms {
    /// Source array, or NULL for `src_ptr`.
    pub src_array: usize,
    /// Where in the source the copy starts.
    pub src_pos: CudaPos,
    /// The source.
    pub src_ptr: CudaPitchedPtr,
    /// Destination array, or NULL for `dst_ptr`.
    pub dst_array: usize,
    /// Where in the destination the copy starts.
    pub dst_pos: CudaPos,
    /// The destination.
    pub dst_ptr: CudaPitchedPtr,
    /// The size of the copy.
    pub extent: CudaExtent,
    /// `cudaMemcpyKind`.
    pub kind: i32,
    /// The C structure's padding to its 8-byte alignment, made a field so that the type has none.
    pub pad: i32,
}

// SAFETY: integers and structs of integers, no padding (see `pad`).
unsafe impl Plain for CudaMemcpy3DParms {}

// SAFETY: as above: plain integers.
unsafe impl Plain for CudaPos {}

impl From<CudaExtent> for Extent {
    fn from(e: CudaExtent) -> Extent {
        Extent { width: e.width as u64, height: e.height as u64, depth: e.depth as u64 }
    }
}

/// A 2-D block: `height` rows of `width` bytes, `pitch` apart.
fn rows_2d(base: *const c_void, pitch: usize, height: usize) -> Rows {
    Rows { base: base as u64, pitch: pitch as u64, rows_per_slice: height as u64 }
}

/// The rows of a pitched pointer from a position; `None` when the address overflows.
fn rows_3d(p: CudaPitchedPtr, pos: CudaPos) -> Option<Rows> {
    Rows::at(p.ptr as u64, p.pitch as u64, p.ysize as u64, (pos.x as u64, pos.y as u64, pos.z as u64))
}

/// `cudaMallocPitch`: `height` rows of `width` bytes, each padded to the pitch written to `pitch`.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(
    dev_ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> CudaError {
    call("cudaMallocPitch", |rt| {
        // SAFETY: the program passes the addresses of its pointer and its pitch; both are checked writable
        // before anything is allocated.
        let checked = unsafe { [put(dev_ptr, std::ptr::null_mut()), put(pitch, 0)] };
        if let Some(&c) = checked.iter().find(|&&c| c != cuda::SUCCESS) {
            return c;
        }
        match rt.malloc_pitched(Extent { width: width as u64, height: height as u64, depth: 1 }) {
            // SAFETY: as above.
            Ok((p, w)) => unsafe { super::first_error([put(dev_ptr, p as *mut c_void), put(pitch, w as usize)]) },
            Err(c) => c,
        }
    })
}

/// `cudaMalloc3D`: `extent.depth` slices of `extent.height` padded rows of `extent.width` bytes.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3D(out: *mut CudaPitchedPtr, extent: CudaExtent) -> CudaError {
    call("cudaMalloc3D", |rt| {
        // SAFETY: the program's output parameter, checked writable before anything is allocated.
        let checked = unsafe { put(out, CudaPitchedPtr::default()) };
        if checked != cuda::SUCCESS {
            return checked;
        }
        match rt.malloc_pitched(extent.into()) {
            Ok((p, pitch)) => {
                let v = CudaPitchedPtr {
                    ptr: p as usize,
                    pitch: pitch as usize,
                    xsize: extent.width,
                    ysize: extent.height,
                };
                // SAFETY: as above.
                unsafe { put(out, v) }
            }
            Err(c) => c,
        }
    })
}

/// The extent of a 2-D copy or set: `height` rows of `width` bytes.
fn extent_2d(width: usize, height: usize) -> Extent {
    Extent { width: width as u64, height: height as u64, depth: 1 }
}

/// `cudaMemcpy2D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> CudaError {
    let (to, from) = (rows_2d(dst, dpitch, height), rows_2d(src, spitch, height));
    // SAFETY: the program's pointers; bad ranges are errors (`Runtime::classify`).
    call("cudaMemcpy2D", |rt| unsafe { rt.copy_rows(to, from, extent_2d(width, height), kind) })
}

/// `cudaMemcpy2DAsync` (runs at once: streams are executed in order).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (to, from) = (rows_2d(dst, dpitch, height), rows_2d(src, spitch, height));
    call("cudaMemcpy2DAsync", |rt| {
        // SAFETY: as for cudaMemcpy2D.
        on_stream(rt, stream, |rt| unsafe { rt.copy_rows(to, from, extent_2d(width, height), kind) })
    })
}

/// One side of a 3-D copy with an array: the array from its position (in elements), or the pitched
/// pointer from its position; `None` when both are set (CUDA: "Passing more than one non-zero source or
/// destination will cause cudaMemcpy3D() to return an error") or the address overflows.
fn end_3d(array: usize, ptr: CudaPitchedPtr, pos: CudaPos) -> Option<End> {
    if array == 0 {
        return rows_3d(ptr, pos).map(End::Memory);
    }
    if ptr.ptr != 0 {
        return None;
    }
    Some(End::Array { handle: array as u64, at: [pos.x as u64, pos.y as u64, pos.z as u64] })
}

/// The 3-D copy a `cudaMemcpy3DParms` at `p` describes.
///
/// # Safety
/// `p` is the program's parameter block, whose host pointers are memory the program named.
unsafe fn copy_3d(rt: &mut Runtime, p: *const CudaMemcpy3DParms) -> CudaError {
    // An unreadable block is an error, never a fault.
    let Ok(parms) = hostmem::read_value(p) else { return cuda::INVALID_VALUE };
    // SAFETY: the caller's contract.
    unsafe { copy_3d_parms(rt, &parms) }
}

/// The 3-D copy `parms` describes (`cudaMemcpy3D`, and a graph's memcpy node, which holds its
/// parameters from the node's creation).
///
/// # Safety
/// The host pointers in `parms` are memory the program named.
pub unsafe fn copy_3d_parms(rt: &mut Runtime, parms: &CudaMemcpy3DParms) -> CudaError {
    if parms.src_array != 0 || parms.dst_array != 0 {
        let (dst, src) = (
            end_3d(parms.dst_array, parms.dst_ptr, parms.dst_pos),
            end_3d(parms.src_array, parms.src_ptr, parms.src_pos),
        );
        let (Some(dst), Some(src)) = (dst, src) else { return cuda::INVALID_VALUE };
        // SAFETY: the program's pointers; bad ranges and handles are errors.
        return unsafe { rt.copy_3d_array(dst, src, parms.extent.into(), parms.kind) };
    }
    let (Some(dst), Some(src)) = (rows_3d(parms.dst_ptr, parms.dst_pos), rows_3d(parms.src_ptr, parms.src_pos)) else {
        return cuda::INVALID_VALUE;
    };
    // SAFETY: the program's pointers; bad ranges are errors.
    unsafe { rt.copy_rows(dst, src, parms.extent.into(), parms.kind) }
}

/// `cudaMemcpy3D` between pitched pointers and CUDA arrays.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy3D(p: *const CudaMemcpy3DParms) -> CudaError {
    // SAFETY: the program's parameter block.
    call("cudaMemcpy3D", |rt| unsafe { copy_3d(rt, p) })
}

/// `cudaMemcpy3DAsync` (runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy3DAsync(p: *const CudaMemcpy3DParms, stream: *mut c_void) -> CudaError {
    // SAFETY: the program's parameter block.
    call("cudaMemcpy3DAsync", |rt| on_stream(rt, stream, |rt| unsafe { copy_3d(rt, p) }))
}

/// `cudaMemset2D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset2D(
    p: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
) -> CudaError {
    call("cudaMemset2D", |rt| rt.set_rows(rows_2d(p, pitch, height), value, extent_2d(width, height)))
}

/// `cudaMemset2DAsync` (runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemset2DAsync(
    p: *mut c_void,
    pitch: usize,
    value: i32,
    width: usize,
    height: usize,
    stream: *mut c_void,
) -> CudaError {
    let (rows, e) = (rows_2d(p, pitch, height), extent_2d(width, height));
    call("cudaMemset2DAsync", |rt| on_stream(rt, stream, |rt| rt.set_rows(rows, value, e)))
}

/// The 3-D set of `cudaMemset3D` and its `Async` form.
fn set_3d(rt: &mut Runtime, p: CudaPitchedPtr, value: i32, extent: CudaExtent) -> CudaError {
    match rows_3d(p, CudaPos::default()) {
        Some(rows) => rt.set_rows(rows, value, extent.into()),
        None => cuda::INVALID_VALUE,
    }
}

/// `cudaMemset3D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset3D(p: CudaPitchedPtr, value: i32, extent: CudaExtent) -> CudaError {
    call("cudaMemset3D", |rt| set_3d(rt, p, value, extent))
}

/// `cudaMemset3DAsync` (runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemset3DAsync(
    p: CudaPitchedPtr,
    value: i32,
    extent: CudaExtent,
    stream: *mut c_void,
) -> CudaError {
    call("cudaMemset3DAsync", |rt| on_stream(rt, stream, |rt| set_3d(rt, p, value, extent)))
}
