//! Registered and mapped host memory ([`crate::pinned`]): `cudaHostRegister`, `cudaHostUnregister`,
//! `cudaHostGetDevicePointer`, `cudaHostGetFlags`. (`cudaMallocHost`, `cudaHostAlloc` and
//! `cudaFreeHost` are with the other allocations, in [`super::memory`].)

use super::{call, put};
use crate::error::CudaError;
use std::ffi::c_void;

/// `cudaHostRegister` (CUDA Runtime API, Memory Management): page-locks `[ptr, ptr + size)` of the
/// program's memory and maps it for the device, which reads and writes it at the host's own address
/// (every flag maps it: with unified addressing "the memory will be both mapped and portable"). Flags:
/// `cudaHostRegisterDefault`, `Portable`, `Mapped`, `IoMemory` (taken as ordinary memory), `ReadOnly`
/// (what the device stores there is dropped); any other bit, NULL, a size of 0, device memory and a range
/// the host cannot read are `cudaErrorInvalidValue`; a range that shares a byte with page-locked memory
/// is `cudaErrorHostMemoryAlreadyRegistered`; one past the memory limit `cudaErrorMemoryAllocation`.
#[no_mangle]
pub unsafe extern "C" fn cudaHostRegister(ptr: *mut c_void, size: usize, flags: u32) -> CudaError {
    call("cudaHostRegister", |rt| rt.host_register(ptr as u64, size as u64, flags))
}

/// `cudaHostUnregister`: ends the registration that begins at `ptr` ("The base address must be the same
/// one specified to cudaHostRegister()"): any other pointer is `cudaErrorHostMemoryNotRegistered`, NULL
/// `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaHostUnregister(ptr: *mut c_void) -> CudaError {
    call("cudaHostUnregister", |rt| rt.host_unregister(ptr as u64))
}

/// `cudaHostGetDevicePointer`: the device pointer of page-locked host memory (`cudaMallocHost`,
/// `cudaHostAlloc`, `cudaHostRegister`): the host pointer itself, as CUDA gives it when every device can
/// use host pointers for registered memory. Memory that is not page-locked, and `flags` other than 0,
/// are `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaHostGetDevicePointer(
    device: *mut *mut c_void,
    host: *mut c_void,
    flags: u32,
) -> CudaError {
    call("cudaHostGetDevicePointer", |rt| match rt.host_device_pointer(host as u64, flags) {
        // SAFETY: the program's output parameter.
        Ok(d) => unsafe { put(device, d as *mut c_void) },
        Err(c) => c,
    })
}

/// `cudaHostGetFlags`: the flags `cudaHostAlloc` was given for the allocation holding `host` (0 for
/// `cudaMallocHost`'s); registered and other memory is `cudaErrorInvalidValue`, as documented.
#[no_mangle]
pub unsafe extern "C" fn cudaHostGetFlags(flags: *mut u32, host: *mut c_void) -> CudaError {
    call("cudaHostGetFlags", |rt| match rt.host_flags(host as u64) {
        // SAFETY: the program's output parameter.
        Ok(f) => unsafe { put(flags, f) },
        Err(c) => c,
    })
}
