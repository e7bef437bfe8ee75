//! Streams and events. Every operation runs when it is called, in program order, so a stream is a
//! handle and synchronising is immediate. Events record *simulated* time: the launches' cycles at the
//! configuration's clock (functional mode: one nanosecond per issued warp instruction).

use super::memory::on_stream;
use super::{call, put};
use crate::error::{self as cuda, CudaError};
use crate::graph::{HostWork, Work};
use crate::runtime::Runtime;
use std::ffi::{c_float, c_int, c_void};

/// Runs `f` on the runtime with the result of looking `stream` and `event` up (either may be `None`):
/// an unknown one is `cudaErrorInvalidResourceHandle`, for every call alike.
fn with_handles(
    name: &str,
    stream: Option<*mut c_void>,
    event: Option<*mut c_void>,
    f: impl FnOnce(&mut Runtime) -> CudaError,
) -> CudaError {
    call(name, |rt| {
        if let Some(Err(c)) = stream.map(|s| rt.stream(s as u64)) {
            return c;
        }
        if let Some(Err(c)) = event.map(|e| rt.event(e as u64).map(|_| ())) {
            return c;
        }
        f(rt)
    })
}

/// Creates a stream handle into `*stream`.
fn create_stream(name: &str, stream: *mut *mut c_void) -> CudaError {
    call(name, |rt| {
        let h = rt.handle();
        // SAFETY: the program passes the address of its handle.
        let code = unsafe { put(stream, h as *mut c_void) };
        if code == cuda::SUCCESS {
            rt.streams.push(h);
        }
        code
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

/// `cudaStreamDestroy` (a capture it takes part in ends or is invalidated:
/// [`crate::graph::Graphs::forget_stream`]).
#[no_mangle]
pub unsafe extern "C" fn cudaStreamDestroy(stream: *mut c_void) -> CudaError {
    call("cudaStreamDestroy", |rt| match rt.streams.iter().position(|&s| s == stream as u64) {
        Some(i) => {
            rt.streams.remove(i);
            rt.graphs.forget_stream(stream as u64);
            cuda::SUCCESS
        }
        None => cuda::INVALID_RESOURCE_HANDLE,
    })
}

/// `cudaStreamSynchronize`: everything has run (a capturing stream: `cudaErrorStreamCaptureUnsupported`,
/// and the capture is invalidated).
#[no_mangle]
pub unsafe extern "C" fn cudaStreamSynchronize(stream: *mut c_void) -> CudaError {
    with_handles("cudaStreamSynchronize", Some(stream), None, |rt| on_stream(rt, stream, |_| cuda::SUCCESS))
}

/// `cudaStreamQuery`: everything has run (a capturing stream as `cudaStreamSynchronize`).
#[no_mangle]
pub unsafe extern "C" fn cudaStreamQuery(stream: *mut c_void) -> CudaError {
    with_handles("cudaStreamQuery", Some(stream), None, |rt| on_stream(rt, stream, |_| cuda::SUCCESS))
}

/// `cudaStreamWaitEvent`: already satisfied; with stream capture, the fork or join it stands for
/// (`capture::wait_event`).
#[no_mangle]
pub unsafe extern "C" fn cudaStreamWaitEvent(stream: *mut c_void, event: *mut c_void, flags: u32) -> CudaError {
    with_handles("cudaStreamWaitEvent", Some(stream), Some(event), |rt| {
        super::capture::wait_event(rt, stream as u64, event as u64, flags)
    })
}

/// Creates an event handle into `*event`.
fn create_event(name: &str, event: *mut *mut c_void) -> CudaError {
    call(name, |rt| {
        let h = rt.handle();
        // SAFETY: the program passes the address of its handle.
        let code = unsafe { put(event, h as *mut c_void) };
        if code == cuda::SUCCESS {
            rt.events.insert(h, None);
        }
        code
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

/// Records the simulated time into `event` (on `stream`), or captures the record
/// ([`super::capture::record_event`]).
fn record(name: &str, event: *mut c_void, stream: *mut c_void, flags: u32) -> CudaError {
    with_handles(name, Some(stream), Some(event), |rt| {
        super::capture::record_event(rt, event as u64, stream as u64, flags)
    })
}

/// `cudaEventRecord`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventRecord(event: *mut c_void, stream: *mut c_void) -> CudaError {
    record("cudaEventRecord", event, stream, 0)
}

/// `cudaEventRecordWithFlags` (`cudaEventRecordExternal`: a record node when captured).
#[no_mangle]
pub unsafe extern "C" fn cudaEventRecordWithFlags(event: *mut c_void, stream: *mut c_void, flags: u32) -> CudaError {
    record("cudaEventRecordWithFlags", event, stream, flags)
}

/// `cudaEventSynchronize`: already complete (an event last recorded in a capture in progress:
/// `cudaErrorCapturedEvent`).
#[no_mangle]
pub unsafe extern "C" fn cudaEventSynchronize(event: *mut c_void) -> CudaError {
    with_handles("cudaEventSynchronize", None, Some(event), |rt| {
        rt.graphs.captures.event_usable(event as u64).map_or_else(|c| c, |()| cuda::SUCCESS)
    })
}

/// `cudaEventQuery`: already complete (as `cudaEventSynchronize` for a captured event).
#[no_mangle]
pub unsafe extern "C" fn cudaEventQuery(event: *mut c_void) -> CudaError {
    with_handles("cudaEventQuery", None, Some(event), |rt| {
        rt.graphs.captures.event_usable(event as u64).map_or_else(|c| c, |()| cuda::SUCCESS)
    })
}

/// `cudaEventDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventDestroy(event: *mut c_void) -> CudaError {
    call("cudaEventDestroy", |rt| match rt.events.remove(&(event as u64)) {
        Some(_) => cuda::SUCCESS,
        None => cuda::INVALID_RESOURCE_HANDLE,
    })
}

/// `cudaEventElapsedTime`: simulated milliseconds between two recorded events (an event never recorded is
/// `cudaErrorInvalidResourceHandle`, as CUDA's is).
#[no_mangle]
pub unsafe extern "C" fn cudaEventElapsedTime(ms: *mut c_float, start: *mut c_void, end: *mut c_void) -> CudaError {
    call("cudaEventElapsedTime", |rt| {
        let usable = |rt: &mut Runtime, e: *mut c_void| rt.graphs.captures.event_usable(e as u64);
        if let Err(c) = usable(rt, start).and_then(|()| usable(rt, end)) {
            return c;
        }
        let times = rt.event(start as u64).map(|t| *t).and_then(|a| Ok((a, *rt.event(end as u64)?)));
        match times {
            // SAFETY: the program passes the address of its float.
            Ok((Some(a), Some(b))) => unsafe { put(ms, ((b - a) / 1e6) as c_float) },
            Ok(_) => cuda::INVALID_RESOURCE_HANDLE,
            Err(c) => c,
        }
    })
}

/// A host function of `cudaLaunchHostFunc`.
pub type HostFn = Option<unsafe extern "C" fn(user_data: *mut c_void)>;

/// A callback of `cudaStreamAddCallback`: the stream, its status, the user's data.
pub type StreamCallback = Option<unsafe extern "C" fn(stream: *mut c_void, status: CudaError, user_data: *mut c_void)>;

/// Checks `stream` (and that `f` is there) under the runtime's lock, then runs `run` after releasing it:
/// everything earlier on the stream has completed, so the host function runs at once, in stream order,
/// and a CUDA call it makes (which CUDA forbids) cannot deadlock on the lock. On a capturing stream the
/// call is captured as a host node doing `work` instead ([`super::capture::host_gate`]).
fn enqueue_host(
    name: &str,
    stream: *mut c_void,
    (present, flags): (bool, u32),
    work: Option<Work>,
    run: impl FnOnce(),
) -> CudaError {
    let mut now = false;
    let code = with_handles(name, Some(stream), None, |rt| {
        if !present || flags != 0 {
            return cuda::INVALID_VALUE;
        }
        match super::capture::host_gate(rt, stream as u64, work) {
            Ok(n) => {
                now = n;
                cuda::SUCCESS
            }
            Err(c) => c,
        }
    });
    if code == cuda::SUCCESS && now {
        run();
    }
    code
}

/// `cudaLaunchHostFunc`: runs `f(user_data)` now (the stream's earlier work is done).
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchHostFunc(stream: *mut c_void, f: HostFn, user_data: *mut c_void) -> CudaError {
    let work = f.map(|func| Work::Host(HostWork { func, data: user_data as u64 }));
    enqueue_host("cudaLaunchHostFunc", stream, (f.is_some(), 0), work, || {
        if let Some(f) = f {
            // SAFETY: the program's own function, called as CUDA calls it.
            unsafe { f(user_data) }
        }
    })
}

/// `cudaLaunchHostFunc_ptsz` (the per-thread default stream is the default stream here).
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchHostFunc_ptsz(stream: *mut c_void, f: HostFn, user_data: *mut c_void) -> CudaError {
    // SAFETY: as cudaLaunchHostFunc.
    unsafe { cudaLaunchHostFunc(stream, f, user_data) }
}

/// `cudaStreamAddCallback`: runs `callback(stream, cudaSuccess, user_data)` now; `flags` must be 0.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamAddCallback(
    stream: *mut c_void,
    callback: StreamCallback,
    user_data: *mut c_void,
    flags: u32,
) -> CudaError {
    enqueue_host("cudaStreamAddCallback", stream, (callback.is_some(), flags), None, || {
        if let Some(f) = callback {
            // SAFETY: the program's own function, called as CUDA calls it.
            unsafe { f(stream, cuda::SUCCESS, user_data) }
        }
    })
}

/// `cudaStreamAddCallback_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamAddCallback_ptsz(
    stream: *mut c_void,
    callback: StreamCallback,
    user_data: *mut c_void,
    flags: u32,
) -> CudaError {
    // SAFETY: as cudaStreamAddCallback.
    unsafe { cudaStreamAddCallback(stream, callback, user_data, flags) }
}
