//! Pointer queries and the peer-access calls of a one-device machine: `cudaPointerGetAttributes`,
//! `cudaDeviceCanAccessPeer`, `cudaDeviceEnablePeerAccess`, `cudaDeviceDisablePeerAccess`,
//! `cudaMemcpyPeer` and `cudaMemcpyPeerAsync`, answered as CUDA answers them with one device.

use super::memory::on_stream;
use super::{call, put, put_bytes};
use crate::error::{self as cuda, CudaError};
use crate::runtime::Runtime;
use crate::span::Span;
use std::ffi::{c_int, c_uint, c_void};

/// `cudaMemoryType` values.
const UNREGISTERED: i32 = 0;
const HOST: i32 = 1;
const DEVICE: i32 = 2;
const MANAGED: i32 = 3;
/// `cudaMemcpyDeviceToDevice`.
const DEVICE_TO_DEVICE: i32 = 3;
/// `cudaInvalidDeviceId` (CUDA's headers): the device of unregistered memory.
const INVALID_DEVICE_ID: i32 = -2;
/// Size of CUDA 13's `cudaPointerAttributes`: type, device, two pointers, a union of `int` and `long`,
/// `long reserved[7]`.
pub const POINTER_ATTRIBUTES_SIZE: usize = 4 + 4 + 8 + 8 + 8 + 7 * 8;

/// The bytes of `cudaPointerAttributes` for `ptr` in `rt`: device memory (and `__constant__` variables)
/// type 2 with `devicePointer` = `ptr`; managed memory type 3 with both pointers; page-locked host memory
/// (`cudaMallocHost`, `cudaHostAlloc`, `cudaHostRegister`, [`crate::pinned`]) type 1 with its host
/// pointer and the device pointer `cudaHostGetDevicePointer` gives (the host pointer itself, or its
/// device alias; a device alias asked about answers the same); any other host address type 0, device
/// `cudaInvalidDeviceId`, no pointers, as CUDA 11 and later answer for unregistered memory. The union's
/// `localityDomainOrdinal` is -1 (not localized) and `reserved` zero.
pub fn pointer_attributes(rt: &Runtime, ptr: u64) -> Result<[u8; POINTER_ATTRIBUTES_SIZE], CudaError> {
    let (kind, device, dev_ptr, host_ptr) = match rt.classify(ptr, 1)? {
        Span::Device(_) | Span::Constant { .. } => (DEVICE, rt.device, ptr, 0),
        Span::Managed(_) => (MANAGED, rt.device, ptr, ptr),
        Span::Host(h) => match rt.pinned.holding(h, 1) {
            Some(r) => (HOST, rt.device, r.device_address(h), h),
            None => (UNREGISTERED, INVALID_DEVICE_ID, 0, 0),
        },
    };
    let mut b = [0u8; POINTER_ATTRIBUTES_SIZE];
    b[0..4].copy_from_slice(&kind.to_le_bytes());
    b[4..8].copy_from_slice(&device.to_le_bytes());
    b[8..16].copy_from_slice(&dev_ptr.to_le_bytes());
    b[16..24].copy_from_slice(&host_ptr.to_le_bytes());
    b[24..28].copy_from_slice(&(-1i32).to_le_bytes());
    Ok(b)
}

/// `cudaPointerGetAttributes`. A NULL `ptr` is `cudaErrorInvalidValue` (a NULL `attributes` too). CUDA
/// 12's structure is the first 24 bytes of CUDA 13's ([`crate::abi::Abi::pointer_attributes_size`]).
#[no_mangle]
pub unsafe extern "C" fn cudaPointerGetAttributes(attributes: *mut c_void, ptr: *const c_void) -> CudaError {
    call("cudaPointerGetAttributes", |rt| match pointer_attributes(rt, ptr as u64) {
        // SAFETY: the program's `cudaPointerAttributes` of this library's ABI; a bad pointer is an error.
        Ok(bytes) => unsafe { put_bytes(attributes, &bytes[..crate::abi::ABI.pointer_attributes_size()]) },
        Err(e) => e,
    })
}

/// `cudaDeviceCanAccessPeer`: the one device has no peer (CUDA answers 0 for a device and itself).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceCanAccessPeer(can: *mut c_int, device: c_int, peer: c_int) -> CudaError {
    call("cudaDeviceCanAccessPeer", |_| {
        if device != 0 || peer != 0 {
            return cuda::INVALID_DEVICE;
        }
        // SAFETY: the program's output parameter.
        unsafe { put(can, 0) }
    })
}

/// `cudaDeviceEnablePeerAccess`: flags other than 0 are `cudaErrorInvalidValue`; the only device is the
/// current one, which is not its own peer (`cudaErrorInvalidDevice`).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceEnablePeerAccess(_peer: c_int, flags: c_uint) -> CudaError {
    call("cudaDeviceEnablePeerAccess", |_| if flags != 0 { cuda::INVALID_VALUE } else { cuda::INVALID_DEVICE })
}

/// `cudaDeviceDisablePeerAccess`: access to device 0 was never enabled (`cudaErrorPeerAccessNotEnabled`);
/// any other device does not exist.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceDisablePeerAccess(peer: c_int) -> CudaError {
    call(
        "cudaDeviceDisablePeerAccess",
        |_| if peer == 0 { cuda::PEER_ACCESS_NOT_ENABLED } else { cuda::INVALID_DEVICE },
    )
}

/// A peer copy on the one device: a device-to-device copy when both devices are 0.
fn peer_copy(rt: &mut Runtime, (dst, dst_device): (u64, c_int), (src, src_device): (u64, c_int), n: u64) -> CudaError {
    if dst_device != 0 || src_device != 0 {
        return cuda::INVALID_DEVICE;
    }
    // SAFETY: the program's pointers; bad ones are errors (`Runtime::classify`, `hostmem`).
    unsafe { rt.memcpy(dst, src, n, DEVICE_TO_DEVICE) }
}

/// `cudaMemcpyPeer`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyPeer(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    n: usize,
) -> CudaError {
    call("cudaMemcpyPeer", |rt| peer_copy(rt, (dst as u64, dst_device), (src as u64, src_device), n as u64))
}

/// `cudaMemcpyPeerAsync` (runs at once, in stream order).
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyPeerAsync(
    dst: *mut c_void,
    dst_device: c_int,
    src: *const c_void,
    src_device: c_int,
    n: usize,
    stream: *mut c_void,
) -> CudaError {
    call("cudaMemcpyPeerAsync", |rt| {
        on_stream(rt, stream, |rt| peer_copy(rt, (dst as u64, dst_device), (src as u64, src_device), n as u64))
    })
}
