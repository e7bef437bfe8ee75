//! The entry points of CUDA 12's library (`libcudart.so.12`, crate `reconverge-cudart12`) that CUDA 13's
//! does not have: the names CUDA 12's headers call that CUDA 13's library no longer has, and CUDA 12's
//! signature of a name both have (`abi12.txt`: `cuda12`), each over the shared logic with CUDA 12's layout
//! ([`crate::abi`]). Every other entry point of CUDA 12's library is the shared one (or its unsupported
//! stub, as `abi12.txt` says).
#![cfg(cuda12)]

use super::capture::{capture_info, InfoOut};
use super::device::{self, device_properties};
use super::graph::add_dependencies;
use super::stream;
use crate::abi::Abi;
use crate::error::CudaError;
use std::ffi::{c_float, c_int, c_void};

/// `cudaGetDeviceProperties_v2`, which CUDA 12's `cudaGetDeviceProperties` is a macro for: the configured
/// GPU in CUDA 12's layout (1032 bytes, with the fields CUDA 13 removed: `clockRate`, `memoryClockRate`,
/// `deviceOverlap`, `kernelExecTimeoutEnabled`, `computeMode`, `maxTexture1DLinear`,
/// `singleToDoublePrecisionPerfRatio`, `cooperativeMultiDeviceLaunch`).
#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties_v2(prop: *mut c_void, device: c_int) -> CudaError {
    // SAFETY: the program passes CUDA 12's `cudaDeviceProp`.
    unsafe { device_properties("cudaGetDeviceProperties_v2", prop, device, Abi::Cuda12) }
}

/// `cudaMemPrefetchAsync_v2` (CUDA 13's `cudaMemPrefetchAsync` under CUDA 12's name): no effect, as the
/// plain call; the arguments are not read.
#[no_mangle]
pub unsafe extern "C" fn cudaMemPrefetchAsync_v2() -> CudaError {
    // SAFETY: no arguments are read.
    unsafe { device::cudaMemPrefetchAsync() }
}

/// `cudaMemAdvise_v2` (CUDA 13's `cudaMemAdvise` under CUDA 12's name): no effect; the arguments are not
/// read.
#[no_mangle]
pub unsafe extern "C" fn cudaMemAdvise_v2() -> CudaError {
    // SAFETY: no arguments are read.
    unsafe { device::cudaMemAdvise() }
}

/// `cudaEventElapsedTime_v2`: as `cudaEventElapsedTime` (the same signature in CUDA 12's headers).
#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime_v2(ms: *mut c_float, start: *mut c_void, end: *mut c_void) -> CudaError {
    // SAFETY: the program's parameters, passed on.
    unsafe { stream::cudaEventElapsedTime(ms, start, end) }
}

/// `cudaThreadSetLimit` (deprecated in CUDA 12, removed in 13): `cudaDeviceSetLimit`.
#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetLimit(limit: c_int, value: usize) -> CudaError {
    // SAFETY: the program's parameters, passed on.
    unsafe { device::cudaDeviceSetLimit(limit, value) }
}

/// `cudaThreadGetLimit` (deprecated in CUDA 12, removed in 13): `cudaDeviceGetLimit`.
#[no_mangle]
pub unsafe extern "C" fn cudaThreadGetLimit(value: *mut usize, limit: c_int) -> CudaError {
    // SAFETY: the program's parameters, passed on.
    unsafe { device::cudaDeviceGetLimit(value, limit) }
}

/// `cudaThreadSetCacheConfig` (deprecated in CUDA 12, removed in 13): `cudaDeviceSetCacheConfig`.
#[no_mangle]
pub unsafe extern "C" fn cudaThreadSetCacheConfig(config: c_int) -> CudaError {
    // SAFETY: the program's parameter, passed on.
    unsafe { device::cudaDeviceSetCacheConfig(config) }
}

/// `cudaStreamGetCaptureInfo_v2`, which CUDA 12's `cudaStreamGetCaptureInfo` is a macro for: CUDA 13's
/// `cudaStreamGetCaptureInfo` without the edge data.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo_v2(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    count: *mut usize,
) -> CudaError {
    let out = InfoOut { id, graph, deps, edges: std::ptr::null_mut(), count };
    capture_info("cudaStreamGetCaptureInfo_v2", stream, status, out)
}

/// `cudaStreamGetCaptureInfo_v2_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo_v2_ptsz(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    count: *mut usize,
) -> CudaError {
    let out = InfoOut { id, graph, deps, edges: std::ptr::null_mut(), count };
    capture_info("cudaStreamGetCaptureInfo_v2_ptsz", stream, status, out)
}

/// `cudaStreamGetCaptureInfo_v3`: CUDA 13's `cudaStreamGetCaptureInfo` (with the edge data) under CUDA 12's
/// name.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo_v3(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    edges: *mut *const [u8; 8],
    count: *mut usize,
) -> CudaError {
    capture_info("cudaStreamGetCaptureInfo_v3", stream, status, InfoOut { id, graph, deps, edges, count })
}

/// `cudaStreamGetCaptureInfo_v3_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo_v3_ptsz(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    edges: *mut *const [u8; 8],
    count: *mut usize,
) -> CudaError {
    capture_info("cudaStreamGetCaptureInfo_v3_ptsz", stream, status, InfoOut { id, graph, deps, edges, count })
}

/// `cudaGraphAddDependencies`, CUDA 12's signature: `to[i]` depends on `from[i]`, without edge data (CUDA
/// 13's call with the default edges).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddDependencies(
    graph: *mut c_void,
    from: *const *mut c_void,
    to: *const *mut c_void,
    n: usize,
) -> CudaError {
    add_dependencies("cudaGraphAddDependencies", graph, (from, to), std::ptr::null(), n)
}

/// `cudaGraphAddDependencies_v2`: CUDA 13's `cudaGraphAddDependencies` (with edge data) under CUDA 12's
/// name.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddDependencies_v2(
    graph: *mut c_void,
    from: *const *mut c_void,
    to: *const *mut c_void,
    edge_data: *const [u8; 8],
    n: usize,
) -> CudaError {
    add_dependencies("cudaGraphAddDependencies_v2", graph, (from, to), edge_data, n)
}
