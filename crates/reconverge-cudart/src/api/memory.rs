//! Memory: `cudaMalloc`, `cudaFree`, copies and sets (their `Async` forms run at once, in order),
//! symbols, managed and page-locked host memory, `cudaMemGetInfo`.

use super::{call, host_slice, put, with_runtime};
use crate::error::{self as cuda, CudaError};
use crate::runtime::{CopyKind, Runtime};
use std::ffi::c_void;

/// Where one side of a copy is: simulated device memory, or host memory (which includes managed memory:
/// its host bytes are the truth between launches).
fn on_device(rt: &Runtime, addr: u64, len: u64) -> bool {
    rt.is_device(addr, len)
}

/// Copies `n` bytes from `src` to `dst` as `kind` says.
///
/// # Safety
/// Host-side pointers must be valid for `n` bytes.
unsafe fn copy(rt: &mut Runtime, dst: u64, src: u64, n: u64, kind: i32) -> CudaError {
    let Some(kind) = CopyKind::from_raw(kind) else { return cuda::INVALID_MEMCPY_DIRECTION };
    if n == 0 {
        return cuda::SUCCESS;
    }
    let (src_dev, dst_dev) = (on_device(rt, src, n), on_device(rt, dst, n));
    let host = |addr: u64| addr != 0 && !rt.is_device(addr, 1);
    let ok = match kind {
        CopyKind::HostToHost => host(src) && host(dst),
        CopyKind::HostToDevice => host(src) && (dst_dev || rt.managed.block(dst).is_some()),
        CopyKind::DeviceToHost => (src_dev || rt.managed.block(src).is_some()) && host(dst),
        CopyKind::DeviceToDevice => {
            (src_dev || rt.managed.block(src).is_some()) && (dst_dev || rt.managed.block(dst).is_some())
        }
        CopyKind::Default => (src_dev || host(src)) && (dst_dev || host(dst)),
    };
    if !ok {
        return cuda::INVALID_VALUE;
    }
    let data: Vec<u8> = if src_dev {
        match rt.device_bytes(src, n) {
            Ok(b) => b.to_vec(),
            Err(c) => return c,
        }
    } else {
        // SAFETY: a host source, valid for `n` bytes by the caller's contract.
        unsafe { host_slice(src as *const u8, n as usize) }.to_vec()
    };
    if dst_dev {
        match rt.device_bytes_mut(dst, n) {
            Ok(b) => b.copy_from_slice(&data),
            Err(c) => return c,
        }
    } else {
        // SAFETY: a host destination, valid for `n` bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
    }
    cuda::SUCCESS
}

/// `cudaMalloc`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(dev_ptr: *mut *mut c_void, size: usize) -> CudaError {
    call("cudaMalloc", |rt| match rt.malloc(size as u64) {
        // SAFETY: the program passes the address of its pointer.
        Ok(a) => {
            if unsafe { put(dev_ptr, a as *mut c_void) } {
                cuda::SUCCESS
            } else {
                cuda::INVALID_VALUE
            }
        }
        Err(c) => c,
    })
}

/// `cudaFree` (device or managed memory).
#[no_mangle]
pub unsafe extern "C" fn cudaFree(p: *mut c_void) -> CudaError {
    call("cudaFree", |rt| if rt.managed.free(p as u64) { cuda::SUCCESS } else { rt.free(p as u64) })
}

/// `cudaMemcpy`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(dst: *mut c_void, src: *const c_void, n: usize, kind: i32) -> CudaError {
    // SAFETY: the program passes valid pointers for `n` bytes.
    call("cudaMemcpy", |rt| unsafe { copy(rt, dst as u64, src as u64, n as u64, kind) })
}

/// `cudaMemcpyAsync` (runs at once: streams are executed in order).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    n: usize,
    kind: i32,
    _stream: *mut c_void,
) -> CudaError {
    // SAFETY: as for cudaMemcpy.
    call("cudaMemcpyAsync", |rt| unsafe { copy(rt, dst as u64, src as u64, n as u64, kind) })
}

/// Sets `n` bytes at `p` to `value`.
fn set(rt: &mut Runtime, p: u64, value: i32, n: u64) -> CudaError {
    if let Ok(b) = rt.device_bytes_mut(p, n) {
        b.fill(value as u8);
        return cuda::SUCCESS;
    }
    match rt.managed.block(p) {
        Some(b) if p + n <= b.addr + b.len => {
            // SAFETY: inside a live managed block.
            unsafe { std::ptr::write_bytes(p as *mut u8, value as u8, n as usize) };
            cuda::SUCCESS
        }
        _ => cuda::INVALID_VALUE,
    }
}

/// `cudaMemset`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset(p: *mut c_void, value: i32, n: usize) -> CudaError {
    call("cudaMemset", |rt| set(rt, p as u64, value, n as u64))
}

/// `cudaMemsetAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(p: *mut c_void, value: i32, n: usize, _stream: *mut c_void) -> CudaError {
    call("cudaMemsetAsync", |rt| set(rt, p as u64, value, n as u64))
}

/// The bytes of variable `symbol` from `offset`, `n` long: a managed variable's host copy, or the
/// device variable.
fn symbol_slice(rt: &mut Runtime, symbol: u64, offset: u64, n: u64) -> Result<&mut [u8], CudaError> {
    let v = rt.variable(symbol)?.clone();
    if let Some(host) = v.managed {
        if offset.checked_add(n).is_none_or(|e| e > v.size) {
            return Err(cuda::INVALID_VALUE);
        }
        // SAFETY: the managed block of this variable, `v.size` bytes long.
        return Ok(unsafe { std::slice::from_raw_parts_mut((host + offset) as *mut u8, n as usize) });
    }
    rt.symbol_bytes_mut(symbol, offset, n)
}

/// Copies to a symbol from host (`kind` 1 or 4) or device (3) memory.
///
/// # Safety
/// A host `src` must be valid for `n` bytes.
unsafe fn to_symbol(rt: &mut Runtime, symbol: u64, src: u64, n: u64, offset: u64, kind: i32) -> CudaError {
    let data: Vec<u8> = match (kind, rt.device_bytes(src, n)) {
        (3 | 4, Ok(b)) => b.to_vec(),
        // SAFETY: a host source by the caller's contract.
        (1 | 4, Err(_)) => unsafe { host_slice(src as *const u8, n as usize) }.to_vec(),
        (0..=4, _) => return cuda::INVALID_VALUE,
        _ => return cuda::INVALID_MEMCPY_DIRECTION,
    };
    match symbol_slice(rt, symbol, offset, n) {
        Ok(dst) => {
            dst.copy_from_slice(&data);
            cuda::SUCCESS
        }
        Err(c) => c,
    }
}

/// Copies from a symbol to host (`kind` 2 or 4) or device (3) memory.
///
/// # Safety
/// A host `dst` must be valid for `n` bytes.
unsafe fn from_symbol(rt: &mut Runtime, dst: u64, symbol: u64, n: u64, offset: u64, kind: i32) -> CudaError {
    let data = match symbol_slice(rt, symbol, offset, n) {
        Ok(s) => s.to_vec(),
        Err(c) => return c,
    };
    match (kind, rt.device_bytes_mut(dst, n)) {
        (3 | 4, Ok(b)) => b.copy_from_slice(&data),
        // SAFETY: a host destination by the caller's contract.
        (2 | 4, Err(_)) => unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) },
        (0..=4, _) => return cuda::INVALID_VALUE,
        _ => return cuda::INVALID_MEMCPY_DIRECTION,
    }
    cuda::SUCCESS
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
    // SAFETY: the program's pointers.
    call("cudaMemcpyToSymbol", |rt| unsafe { to_symbol(rt, symbol as u64, src as u64, n as u64, offset as u64, kind) })
}

/// `cudaMemcpyToSymbolAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyToSymbolAsync(
    symbol: *const c_void,
    src: *const c_void,
    n: usize,
    offset: usize,
    kind: i32,
    _stream: *mut c_void,
) -> CudaError {
    // SAFETY: the program's pointers.
    call("cudaMemcpyToSymbolAsync", |rt| unsafe {
        to_symbol(rt, symbol as u64, src as u64, n as u64, offset as u64, kind)
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
    // SAFETY: the program's pointers.
    call("cudaMemcpyFromSymbol", |rt| unsafe {
        from_symbol(rt, dst as u64, symbol as u64, n as u64, offset as u64, kind)
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
    _stream: *mut c_void,
) -> CudaError {
    // SAFETY: the program's pointers.
    call("cudaMemcpyFromSymbolAsync", |rt| unsafe {
        from_symbol(rt, dst as u64, symbol as u64, n as u64, offset as u64, kind)
    })
}

/// `cudaGetSymbolAddress`: a variable's device address (a `__constant__`'s in the constant window).
#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolAddress(dev_ptr: *mut *mut c_void, symbol: *const c_void) -> CudaError {
    call("cudaGetSymbolAddress", |rt| match rt.symbol_address(symbol as u64) {
        // SAFETY: the program passes the address of its pointer.
        Ok((a, _)) => {
            unsafe { put(dev_ptr, a as *mut c_void) };
            cuda::SUCCESS
        }
        Err(c) => c,
    })
}

/// `cudaGetSymbolSize`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetSymbolSize(size: *mut usize, symbol: *const c_void) -> CudaError {
    call("cudaGetSymbolSize", |rt| match rt.variable(symbol as u64) {
        // SAFETY: the program passes the address of its size.
        Ok(v) => {
            unsafe { put(size, v.size as usize) };
            cuda::SUCCESS
        }
        Err(c) => c,
    })
}

/// `cudaMallocManaged`: host memory at an address the simulated device shares.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocManaged(dev_ptr: *mut *mut c_void, size: usize, _flags: u32) -> CudaError {
    call("cudaMallocManaged", |rt| match rt.managed.alloc(size as u64, format!("cudaMallocManaged({size})")) {
        // SAFETY: the program passes the address of its pointer.
        Ok(a) => {
            unsafe { put(dev_ptr, a as *mut c_void) };
            cuda::SUCCESS
        }
        Err(c) => c,
    })
}

/// Page-locked host memory: ordinary host memory here (the simulated device does not read host memory).
fn host_alloc(ptr: *mut *mut c_void, size: usize) -> CudaError {
    // SAFETY: calloc of the size asked for; freed by cudaFreeHost.
    let p = unsafe { libc::calloc(size.max(1), 1) };
    if p.is_null() {
        return cuda::MEMORY_ALLOCATION;
    }
    with_runtime("cudaMallocHost", |rt| rt.host_allocs.push(p as u64));
    // SAFETY: the program passes the address of its pointer.
    unsafe { put(ptr, p) };
    cuda::SUCCESS
}

/// `cudaMallocHost`.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocHost(ptr: *mut *mut c_void, size: usize) -> CudaError {
    host_alloc(ptr, size)
}

/// `cudaHostAlloc` (the flags do not change anything here: no mapped or portable memory is simulated).
#[no_mangle]
pub unsafe extern "C" fn cudaHostAlloc(ptr: *mut *mut c_void, size: usize, _flags: u32) -> CudaError {
    host_alloc(ptr, size)
}

/// `cudaFreeHost`.
#[no_mangle]
pub unsafe extern "C" fn cudaFreeHost(p: *mut c_void) -> CudaError {
    call("cudaFreeHost", |rt| match rt.host_allocs.iter().position(|&a| a == p as u64) {
        Some(i) => {
            rt.host_allocs.swap_remove(i);
            // SAFETY: allocated by `host_alloc` with calloc, freed once.
            unsafe { libc::free(p) };
            cuda::SUCCESS
        }
        None => cuda::INVALID_VALUE,
    })
}

/// `cudaMemGetInfo`: the memory limit and what is left of it.
#[no_mangle]
pub unsafe extern "C" fn cudaMemGetInfo(free: *mut usize, total: *mut usize) -> CudaError {
    call("cudaMemGetInfo", |rt| {
        let held: u64 = rt.mem.allocations().iter().map(|a| a.data.len() as u64).sum();
        let limit = rt.settings.max_memory;
        // SAFETY: the program passes the addresses of its two sizes.
        unsafe {
            put(free, limit.saturating_sub(held) as usize);
            put(total, limit as usize);
        }
        cuda::SUCCESS
    })
}
