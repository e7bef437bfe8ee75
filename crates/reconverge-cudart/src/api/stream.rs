//! Streams and events. Every operation runs when it is called, in program order, so a stream is a
//! handle and synchronising is immediate. Events record *simulated* time: the launches' cycles at the
//! configuration's clock (functional mode: one nanosecond per issued warp instruction).

use super::{call, put};
use crate::error::{self as cuda, CudaError};
use std::ffi::{c_float, c_int, c_void};

/// Creates a stream handle into `*stream`.
fn create_stream(name: &str, stream: *mut *mut c_void) -> CudaError {
    call(name, |rt| {
        let h = rt.handle();
        // SAFETY: the program passes the address of its handle.
        if !unsafe { put(stream, h as *mut c_void) } {
            return cuda::INVALID_VALUE;
        }
        rt.streams.push(h);
        cuda::SUCCESS
    })
}

/// `cudaStreamCreate`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreate(stream: *mut *mut c_void) -> CudaError {
    create_stream("cudaStreamCreate", stream)
}

/// `cudaStreamCreateWithFlags`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithFlags(stream: *mut *mut c_void, _flags: u32) -> CudaError {
    create_stream("cudaStreamCreateWithFlags", stream)
}

/// `cudaStreamCreateWithPriority`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamCreateWithPriority(
    stream: *mut *mut c_void,
    _flags: u32,
    _priority: c_int,
) -> CudaError {
    create_stream("cudaStreamCreateWithPriority", stream)
}

/// Checks that `stream` is the default stream or one created and not destroyed.
fn known_stream(name: &str, stream: *mut c_void) -> CudaError {
    call(name, |rt| {
        let s = stream as u64;
        // 0 is the legacy default stream, 1 and 2 the per-thread and legacy handles.
        if s <= 2 || rt.streams.contains(&s) {
            cuda::SUCCESS
        } else {
            cuda::INVALID_RESOURCE_HANDLE
        }
    })
}

/// `cudaStreamDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamDestroy(stream: *mut c_void) -> CudaError {
    call("cudaStreamDestroy", |rt| match rt.streams.iter().position(|&s| s == stream as u64) {
        Some(i) => {
            rt.streams.remove(i);
            cuda::SUCCESS
        }
        None => cuda::INVALID_RESOURCE_HANDLE,
    })
}

/// `cudaStreamSynchronize`: everything has run.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamSynchronize(stream: *mut c_void) -> CudaError {
    known_stream("cudaStreamSynchronize", stream)
}

/// `cudaStreamQuery`: everything has run.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamQuery(stream: *mut c_void) -> CudaError {
    known_stream("cudaStreamQuery", stream)
}

/// `cudaStreamWaitEvent`: already satisfied.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamWaitEvent(stream: *mut c_void, _event: *mut c_void, _flags: u32) -> CudaError {
    known_stream("cudaStreamWaitEvent", stream)
}

/// Creates an event handle into `*event`.
fn create_event(name: &str, event: *mut *mut c_void) -> CudaError {
    call(name, |rt| {
        let h = rt.handle();
        // SAFETY: the program passes the address of its handle.
        if !unsafe { put(event, h as *mut c_void) } {
            return cuda::INVALID_VALUE;
        }
        rt.events.insert(h, None);
        cuda::SUCCESS
    })
}

/// `cudaEventCreate`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventCreate(event: *mut *mut c_void) -> CudaError {
    create_event("cudaEventCreate", event)
}

/// `cudaEventCreateWithFlags`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventCreateWithFlags(event: *mut *mut c_void, _flags: u32) -> CudaError {
    create_event("cudaEventCreateWithFlags", event)
}

/// Records the simulated time into `event`.
fn record(name: &str, event: *mut c_void) -> CudaError {
    call(name, |rt| {
        let now = rt.clock_ns;
        match rt.events.get_mut(&(event as u64)) {
            Some(t) => {
                *t = Some(now);
                cuda::SUCCESS
            }
            None => cuda::INVALID_RESOURCE_HANDLE,
        }
    })
}

/// `cudaEventRecord`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventRecord(event: *mut c_void, _stream: *mut c_void) -> CudaError {
    record("cudaEventRecord", event)
}

/// `cudaEventRecordWithFlags`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventRecordWithFlags(event: *mut c_void, _stream: *mut c_void, _flags: u32) -> CudaError {
    record("cudaEventRecordWithFlags", event)
}

/// Checks that `event` exists.
fn known_event(name: &str, event: *mut c_void) -> CudaError {
    call(name, |rt| if rt.events.contains_key(&(event as u64)) { cuda::SUCCESS } else { cuda::INVALID_RESOURCE_HANDLE })
}

/// `cudaEventSynchronize`: already complete.
#[no_mangle]
pub unsafe extern "C" fn cudaEventSynchronize(event: *mut c_void) -> CudaError {
    known_event("cudaEventSynchronize", event)
}

/// `cudaEventQuery`: already complete.
#[no_mangle]
pub unsafe extern "C" fn cudaEventQuery(event: *mut c_void) -> CudaError {
    known_event("cudaEventQuery", event)
}

/// `cudaEventDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventDestroy(event: *mut c_void) -> CudaError {
    call("cudaEventDestroy", |rt| match rt.events.remove(&(event as u64)) {
        Some(_) => cuda::SUCCESS,
        None => cuda::INVALID_RESOURCE_HANDLE,
    })
}

/// `cudaEventElapsedTime`: simulated milliseconds between two recorded events.
#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(ms: *mut c_float, start: *mut c_void, end: *mut c_void) -> CudaError {
    call("cudaEventElapsedTime", |rt| {
        match (rt.events.get(&(start as u64)), rt.events.get(&(end as u64))) {
            (Some(Some(a)), Some(Some(b))) => {
                // SAFETY: the program passes the address of its float.
                if unsafe { put(ms, ((b - a) / 1e6) as c_float) } {
                    cuda::SUCCESS
                } else {
                    cuda::INVALID_VALUE
                }
            }
            (Some(_), Some(_)) => cuda::INVALID_RESOURCE_HANDLE,
            _ => cuda::INVALID_RESOURCE_HANDLE,
        }
    })
}
