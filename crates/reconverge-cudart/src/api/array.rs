//! CUDA arrays ([`crate::array`]): `cudaCreateChannelDesc`, `cudaGetChannelDesc`, `cudaMallocArray`,
//! `cudaMalloc3DArray`, `cudaFreeArray`, `cudaArrayGetInfo`, and the copies to, from and between arrays:
//! `cudaMemcpy2DToArray`, `cudaMemcpy2DFromArray` (and their `Async` forms), `cudaMemcpy2DArrayToArray`,
//! and the deprecated `cudaMemcpyToArray`, `cudaMemcpyFromArray` (and `Async`), `cudaMemcpyArrayToArray`.
//! `cudaMemcpy3D` with an array is in [`super::pitched`]. The 2-D copies take the offset in the row and the
//! width in bytes, as CUDA's documentation says ("columns in bytes").

use super::memory::on_stream;
use super::pitched::CudaExtent;
use super::{call, first_error, put};
use crate::array::{ChannelDesc, End, Flat, DEFERRED_MAPPING, SPARSE, SURFACE_LOAD_STORE, TEXTURE_GATHER};
use crate::error::{self as cuda, CudaError};
use crate::hostmem::{self, Plain};
use crate::pitched::{Extent, Rows};
use crate::runtime::Runtime;
use std::ffi::{c_int, c_void};

/// `cudaCreateChannelDesc`: the descriptor of the given channel bits and `cudaChannelFormatKind`,
/// returned by value (checked when it is used, as CUDA checks it).
#[no_mangle]
pub unsafe extern "C" fn cudaCreateChannelDesc(x: c_int, y: c_int, z: c_int, w: c_int, f: c_int) -> ChannelDesc {
    ChannelDesc { x, y, z, w, f }
}

/// `cudaGetChannelDesc`: the channel descriptor array `array` was allocated with.
#[no_mangle]
pub unsafe extern "C" fn cudaGetChannelDesc(desc: *mut ChannelDesc, array: *const c_void) -> CudaError {
    call("cudaGetChannelDesc", |rt| match rt.array(array as u64) {
        // SAFETY: the program's output parameter; a bad one is an error.
        Ok(a) => unsafe { put(desc, a.desc) },
        Err(c) => c,
    })
}

/// Allocates an array into the program's handle `out`, which is checked writable first, from the channel
/// descriptor at `desc` (NULL or unreadable: `cudaErrorInvalidValue`).
///
/// # Safety
/// `out` and `desc` are the parameters the program passed.
unsafe fn malloc_array_into(
    rt: &mut Runtime,
    out: *mut *mut c_void,
    desc: *const ChannelDesc,
    extent: [usize; 3],
    flags: u32,
) -> CudaError {
    // SAFETY: the caller's contract; a bad pointer is an error.
    let checked = unsafe { put(out, std::ptr::null_mut()) };
    if checked != cuda::SUCCESS {
        return checked;
    }
    let Ok(desc) = hostmem::read_value(desc) else { return cuda::INVALID_VALUE };
    match rt.malloc_array(desc, extent.map(|v| v as u64), flags) {
        // SAFETY: as above.
        Ok(handle) => unsafe { put(out, handle as *mut c_void) },
        Err(c) => c,
    }
}

/// `cudaMallocArray`: a 1-D (`height` 0) or 2-D array. Its flags may be `cudaArraySurfaceLoadStore` and
/// `cudaArrayTextureGather` (sparse and deferred-mapping arrays are `cudaErrorNotSupported`); any other
/// flag, `cudaArrayLayered` and `cudaArrayCubemap` included, is `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocArray(
    array: *mut *mut c_void,
    desc: *const ChannelDesc,
    width: usize,
    height: usize,
    flags: u32,
) -> CudaError {
    call("cudaMallocArray", |rt| {
        if flags & !(SURFACE_LOAD_STORE | TEXTURE_GATHER | SPARSE | DEFERRED_MAPPING) != 0 {
            return cuda::INVALID_VALUE;
        }
        // SAFETY: the program's parameters.
        unsafe { malloc_array_into(rt, array, desc, [width, height, 0], flags) }
    })
}

/// `cudaMalloc3DArray`: a 1-D, 2-D, 3-D or layered array of `extent` elements.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3DArray(
    array: *mut *mut c_void,
    desc: *const ChannelDesc,
    extent: CudaExtent,
    flags: u32,
) -> CudaError {
    let extent = [extent.width, extent.height, extent.depth];
    // SAFETY: the program's parameters.
    call("cudaMalloc3DArray", |rt| unsafe { malloc_array_into(rt, array, desc, extent, flags) })
}

/// `cudaFreeArray` (NULL does nothing).
#[no_mangle]
pub unsafe extern "C" fn cudaFreeArray(array: *mut c_void) -> CudaError {
    call("cudaFreeArray", |rt| rt.free_array(array as u64))
}

/// Writes `v` through `p` unless `p` is NULL (an output the program does not want).
///
/// # Safety
/// As [`put`].
unsafe fn put_wanted<T: Plain>(p: *mut T, v: T) -> CudaError {
    if p.is_null() {
        return cuda::SUCCESS;
    }
    // SAFETY: the caller's contract.
    unsafe { put(p, v) }
}

/// `cudaArrayGetInfo`: the channel descriptor, extent (in elements, as allocated) and flags of `array`;
/// each output may be NULL.
#[no_mangle]
pub unsafe extern "C" fn cudaArrayGetInfo(
    desc: *mut ChannelDesc,
    extent: *mut CudaExtent,
    flags: *mut u32,
    array: *mut c_void,
) -> CudaError {
    call("cudaArrayGetInfo", |rt| {
        let a = match rt.array(array as u64) {
            Ok(a) => *a,
            Err(c) => return c,
        };
        let [width, height, depth] = a.extent.map(|v| v as usize);
        let e = CudaExtent { width, height, depth };
        // SAFETY: the program's output parameters; bad ones are errors.
        first_error(unsafe { [put_wanted(desc, a.desc), put_wanted(extent, e), put_wanted(flags, a.flags)] })
    })
}

/// Runs a copy on the runtime, on `stream` when it is an `Async` form (an unknown stream is
/// `cudaErrorInvalidResourceHandle`).
fn copy_call(name: &str, stream: Option<*mut c_void>, f: impl FnOnce(&mut Runtime) -> CudaError) -> CudaError {
    call(name, |rt| match stream {
        Some(s) => on_stream(rt, s, f),
        None => f(rt),
    })
}

/// An array from byte `w_offset` of row `h_offset`.
fn array_at(array: *const c_void, w_offset: usize, h_offset: usize) -> End {
    End::Array { handle: array as u64, at: [w_offset as u64, h_offset as u64, 0] }
}

/// `height` rows of linear memory, `pitch` bytes apart.
fn memory(p: *const c_void, pitch: usize, height: usize) -> End {
    End::Memory(Rows { base: p as u64, pitch: pitch as u64, rows_per_slice: height as u64 })
}

/// `height` rows of `width` bytes.
fn extent_2d(width: usize, height: usize) -> Extent {
    Extent { width: width as u64, height: height as u64, depth: 1 }
}

/// A deprecated copy's array side.
fn flat_array(array: *const c_void, w_offset: usize, h_offset: usize) -> Flat {
    Flat::Array { handle: array as u64, w_offset: w_offset as u64, h_offset: h_offset as u64 }
}

/// `cudaMemcpy2DToArray`: `height` rows of `width` bytes from `src` (`spitch` apart) into `dst` from byte
/// `w_offset` of row `h_offset`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DToArray(
    dst: *mut c_void,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> CudaError {
    let (to, from, e) = (array_at(dst, w_offset, h_offset), memory(src, spitch, height), extent_2d(width, height));
    // SAFETY: the destination is an array; a bad source is an error.
    copy_call("cudaMemcpy2DToArray", None, |rt| unsafe { rt.copy_array(to, from, e, kind) })
}

/// `cudaMemcpy2DToArrayAsync` (runs at once: streams are executed in order).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DToArrayAsync(
    dst: *mut c_void,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (to, from, e) = (array_at(dst, w_offset, h_offset), memory(src, spitch, height), extent_2d(width, height));
    // SAFETY: as for cudaMemcpy2DToArray.
    copy_call("cudaMemcpy2DToArrayAsync", Some(stream), |rt| unsafe { rt.copy_array(to, from, e, kind) })
}

/// `cudaMemcpy2DFromArray`: `height` rows of `width` bytes of `src` from byte `w_offset` of row `h_offset`
/// into `dst` (`dpitch` apart).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DFromArray(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> CudaError {
    let (to, from, e) = (memory(dst, dpitch, height), array_at(src, w_offset, h_offset), extent_2d(width, height));
    // SAFETY: the program's destination; a bad one is an error.
    copy_call("cudaMemcpy2DFromArray", None, |rt| unsafe { rt.copy_array(to, from, e, kind) })
}

/// `cudaMemcpy2DFromArrayAsync` (runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DFromArrayAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    w_offset: usize,
    h_offset: usize,
    width: usize,
    height: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (to, from, e) = (memory(dst, dpitch, height), array_at(src, w_offset, h_offset), extent_2d(width, height));
    // SAFETY: as for cudaMemcpy2DFromArray.
    copy_call("cudaMemcpy2DFromArrayAsync", Some(stream), |rt| unsafe { rt.copy_array(to, from, e, kind) })
}

/// `cudaMemcpy2DArrayToArray`: `height` rows of `width` bytes between two arrays.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2DArrayToArray(
    dst: *mut c_void,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: *const c_void,
    w_offset_src: usize,
    h_offset_src: usize,
    width: usize,
    height: usize,
    kind: i32,
) -> CudaError {
    let (to, from) = (array_at(dst, w_offset_dst, h_offset_dst), array_at(src, w_offset_src, h_offset_src));
    let e = extent_2d(width, height);
    // SAFETY: both sides are arrays (device memory).
    copy_call("cudaMemcpy2DArrayToArray", None, |rt| unsafe { rt.copy_array(to, from, e, kind) })
}

/// `cudaMemcpyToArray` (deprecated): `count` bytes from `src` into `dst` from byte `w_offset` of row
/// `h_offset`, running on through the following rows.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToArray(
    dst: *mut c_void,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: i32,
) -> CudaError {
    let (to, from) = (flat_array(dst, w_offset, h_offset), Flat::Memory(src as u64));
    // SAFETY: the destination is an array; a bad source is an error.
    copy_call("cudaMemcpyToArray", None, |rt| unsafe { rt.copy_flat(to, from, count as u64, kind) })
}

/// `cudaMemcpyToArrayAsync` (deprecated; runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToArrayAsync(
    dst: *mut c_void,
    w_offset: usize,
    h_offset: usize,
    src: *const c_void,
    count: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (to, from) = (flat_array(dst, w_offset, h_offset), Flat::Memory(src as u64));
    // SAFETY: as for cudaMemcpyToArray.
    copy_call("cudaMemcpyToArrayAsync", Some(stream), |rt| unsafe { rt.copy_flat(to, from, count as u64, kind) })
}

/// `cudaMemcpyFromArray` (deprecated): `count` bytes of `src` from byte `w_offset` of row `h_offset` into
/// `dst`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromArray(
    dst: *mut c_void,
    src: *const c_void,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: i32,
) -> CudaError {
    let (to, from) = (Flat::Memory(dst as u64), flat_array(src, w_offset, h_offset));
    // SAFETY: the program's destination; a bad one is an error.
    copy_call("cudaMemcpyFromArray", None, |rt| unsafe { rt.copy_flat(to, from, count as u64, kind) })
}

/// `cudaMemcpyFromArrayAsync` (deprecated; runs at once).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromArrayAsync(
    dst: *mut c_void,
    src: *const c_void,
    w_offset: usize,
    h_offset: usize,
    count: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (to, from) = (Flat::Memory(dst as u64), flat_array(src, w_offset, h_offset));
    // SAFETY: as for cudaMemcpyFromArray.
    copy_call("cudaMemcpyFromArrayAsync", Some(stream), |rt| unsafe { rt.copy_flat(to, from, count as u64, kind) })
}

/// `cudaMemcpyArrayToArray` (deprecated): `count` bytes between two arrays.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyArrayToArray(
    dst: *mut c_void,
    w_offset_dst: usize,
    h_offset_dst: usize,
    src: *const c_void,
    w_offset_src: usize,
    h_offset_src: usize,
    count: usize,
    kind: i32,
) -> CudaError {
    let (to, from) = (flat_array(dst, w_offset_dst, h_offset_dst), flat_array(src, w_offset_src, h_offset_src));
    // SAFETY: both sides are arrays (device memory).
    copy_call("cudaMemcpyArrayToArray", None, |rt| unsafe { rt.copy_flat(to, from, count as u64, kind) })
}
