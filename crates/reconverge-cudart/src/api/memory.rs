//! Memory: `cudaMalloc`, `cudaFree`, copies and sets (their `Async` forms run at once, in order),
//! symbols, managed and page-locked host memory, `cudaMemGetInfo`.

use super::capture::stream_work;
use super::{call, first_error, put};
use crate::capture::Gate;
use crate::error::{self as cuda, CudaError};
use crate::graph::{CopyWork, SetWork, Work};
use crate::runtime::Runtime;
use std::ffi::c_void;

/// Runs `f` unless `stream` is unknown (`cudaErrorInvalidResourceHandle`): the `Async` forms that are
/// not captured. On a capturing stream they are refused with `cudaErrorStreamCaptureUnsupported` (which
/// invalidates the capture), and otherwise as [`crate::graph::Graphs::gate`] says.
pub(super) fn on_stream(rt: &mut Runtime, stream: *mut c_void, f: impl FnOnce(&mut Runtime) -> CudaError) -> CudaError {
    if let Err(c) = rt.stream(stream as u64) {
        return c;
    }
    match rt.graphs.gate(stream as u64) {
        Gate::Run => f(rt),
        Gate::Capture => rt.graphs.captures.refuse(stream as u64),
        Gate::Refused(c) => c,
    }
}

/// Allocates with `alloc` and writes the address through the program's output parameter `out`, which is
/// checked first (NULL or not writable: `cudaErrorInvalidValue`), so that a bad one allocates nothing.
///
/// # Safety
/// `out` is the output parameter the program passed.
unsafe fn allocate_into(out: *mut *mut c_void, alloc: impl FnOnce() -> Result<u64, CudaError>) -> CudaError {
    // SAFETY: the caller's contract.
    let checked = unsafe { put(out, std::ptr::null_mut()) };
    if checked != cuda::SUCCESS {
        return checked;
    }
    match alloc() {
        // SAFETY: as above.
        Ok(a) => unsafe { put(out, a as *mut c_void) },
        Err(c) => c,
    }
}

/// `cudaMalloc`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(dev_ptr: *mut *mut c_void, size: usize) -> CudaError {
    // SAFETY: the program passes the address of its pointer.
    call("cudaMalloc", |rt| unsafe { allocate_into(dev_ptr, || rt.malloc(size as u64)) })
}

/// `cudaFree` (device or managed memory; a `__managed__` variable's memory, a CUDA array and a texture or
/// surface object's descriptor are not the program's to free with it).
#[no_mangle]
pub unsafe extern "C" fn cudaFree(p: *mut c_void) -> CudaError {
    call("cudaFree", |rt| {
        let addr = p as u64;
        let not_cuda_malloc = rt.arrays.contains_key(&addr) || rt.objects.contains_key(&addr);
        if not_cuda_malloc || rt.variables.values().any(|v| v.managed == Some(addr)) {
            cuda::INVALID_VALUE
        } else if rt.managed.free(addr) {
            cuda::SUCCESS
        } else {
            rt.free(addr)
        }
    })
}

/// `cudaMemcpy`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(dst: *mut c_void, src: *const c_void, n: usize, kind: i32) -> CudaError {
    // SAFETY: the program's pointers; bad ones are errors (`Runtime::classify`, `hostmem`).
    call("cudaMemcpy", |rt| unsafe { rt.memcpy(dst as u64, src as u64, n as u64, kind) })
}

/// `cudaMemcpyAsync` (runs at once: streams are executed in order; captured as a memcpy node on a
/// capturing stream).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    let (dst, src, len) = (dst as u64, src as u64, n as u64);
    let work = || Work::Copy(CopyWork::Linear { dst, src, len, kind });
    call("cudaMemcpyAsync", |rt| {
        // SAFETY: as for cudaMemcpy.
        stream_work(rt, stream, work, |rt| unsafe { rt.memcpy(dst, src, len, kind) })
    })
}

/// `cudaMemset`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset(p: *mut c_void, value: i32, n: usize) -> CudaError {
    call("cudaMemset", |rt| rt.memset(p as u64, value, n as u64))
}

/// `cudaMemsetAsync` (captured as a memset node of one row of bytes on a capturing stream).
#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(p: *mut c_void, value: i32, n: usize, stream: *mut c_void) -> CudaError {
    let (dst, len) = (p as u64, n as u64);
    let set = SetWork { dst, pitch: len, value: value as u32 & 0xff, element: 1, width: len, height: 1 };
    call("cudaMemsetAsync", |rt| stream_work(rt, stream, || Work::Set(set), |rt| rt.memset(dst, value, len)))
}

/// `cudaMemcpyToSymbol`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbol(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
) -> CudaError {
    // SAFETY: the program's pointers; bad ones are errors.
    call("cudaMemcpyToSymbol", |rt| unsafe {
        rt.symbol_copy(true, symbol as u64, src as u64, n as u64, offset as u64, kind)
    })
}

/// `cudaMemcpyToSymbolAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    call("cudaMemcpyToSymbolAsync", |rt| {
        // SAFETY: as above.
        on_stream(rt, stream, |rt| unsafe {
            rt.symbol_copy(true, symbol as u64, src as u64, n as u64, offset as u64, kind)
        })
    })
}

/// `cudaMemcpyFromSymbol`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbol(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
) -> CudaError {
    // SAFETY: the program's pointers; bad ones are errors.
    call("cudaMemcpyFromSymbol", |rt| unsafe {
        rt.symbol_copy(false, symbol as u64, dst as u64, n as u64, offset as u64, kind)
    })
}

/// `cudaMemcpyFromSymbolAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyFromSymbolAsync(
    dst: *mut c_void,
    symbol: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
    stream: *mut c_void,
) -> CudaError {
    call("cudaMemcpyFromSymbolAsync", |rt| {
        // SAFETY: as above.
        on_stream(rt, stream, |rt| unsafe {
            rt.symbol_copy(false, symbol as u64, dst as u64, n as u64, offset as u64, kind)
        })
    })
}

/// `cudaGetSymbolAddress`: a variable's device address (a `__constant__`'s in the constant window).
#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(dev_ptr: *mut *mut c_void, symbol: *const c_void) -> CudaError {
    call("cudaGetSymbolAddress", |rt| match rt.symbol_address(symbol as u64) {
        // SAFETY: the program passes the address of its pointer.
        Ok((a, _)) => unsafe { put(dev_ptr, a as *mut c_void) },
        Err(c) => c,
    })
}

/// `cudaGetSymbolSize`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> CudaError {
    call("cudaGetSymbolSize", |rt| match rt.variable(symbol as u64) {
        // SAFETY: the program passes the address of its size.
        Ok(v) => unsafe { put(size, v.size as usize) },
        Err(c) => c,
    })
}

/// `cudaMallocManaged`: host memory at an address the simulated device shares, counted against the
/// memory limit.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(dev_ptr: *mut *mut c_void, size: usize, _flags: u32) -> CudaError {
    let name = format!("cudaMallocManaged({size})");
    // SAFETY: the program passes the address of its pointer.
    call("cudaMallocManaged", |rt| unsafe { allocate_into(dev_ptr, || rt.malloc_managed(size as u64, name)) })
}

/// Page-locked host memory ([`crate::pinned`]): host memory the device reads and writes at the host's
/// own address, counted against the memory limit.
fn host_alloc(name: &str, ptr: *mut *mut c_void, size: usize, flags: u32) -> CudaError {
    // SAFETY: the program passes the address of its pointer.
    call(name, |rt| unsafe { allocate_into(ptr, || rt.host_alloc(size as u64, flags)) })
}

/// `cudaMallocHost`.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> CudaError {
    host_alloc("cudaMallocHost", ptr, size, 0)
}

/// `cudaHostAlloc`: `cudaHostAllocPortable`, `cudaHostAllocMapped` and `cudaHostAllocWriteCombined` are
/// accepted (all page-locked memory is mapped, with unified addressing); any other flag is
/// `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, flags: u32) -> CudaError {
    host_alloc("cudaHostAlloc", ptr, size, flags)
}

/// `cudaFreeHost`.
#[no_mangle]
pub unsafe extern "C" fn cudaFreeHost(p: *mut c_void) -> CudaError {
    call("cudaFreeHost", |rt| rt.host_free(p as u64))
}

/// `cudaMemGetInfo`: the memory limit and what is left of it (device, managed and page-locked memory
/// count).
#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> CudaError {
    call("cudaMemGetInfo", |rt| {
        let limit = rt.settings.max_memory;
        let left = limit.saturating_sub(rt.held());
        // SAFETY: the program passes the addresses of its two sizes.
        first_error(unsafe { [put(free, left as usize), put(total, limit as usize)] })
    })
}
