//! Stream capture ([`crate::capture`]): `cudaStreamBeginCapture`, `cudaStreamEndCapture`,
//! `cudaStreamIsCapturing`, `cudaStreamGetCaptureInfo` (CUDA 13's form, with edge data),
//! `cudaThreadExchangeStreamCaptureMode`, and the gates the stream-ordered entry points of the other
//! files pass their work through (`stream_work`, `memory::on_stream`).

use super::{call, first_error, put};
use crate::capture::{Captures, Gate, Mode, Status};
use crate::error::{self as cuda, CudaError};
use crate::graph::Work;
use crate::runtime::Runtime;
use std::ffi::{c_int, c_void};

/// A stream-ordered operation that can be captured (`cudaMemcpyAsync`, `cudaMemsetAsync`,
/// `cudaLaunchHostFunc`, launches): unless `stream` is unknown (`cudaErrorInvalidResourceHandle`), it is
/// run with `run` when the stream is not capturing, recorded as a node doing `work()` when it is, or
/// refused ([`crate::graph::Graphs::gate`]).
pub(super) fn stream_work(
    rt: &mut Runtime,
    stream: *mut c_void,
    work: impl FnOnce() -> Work,
    run: impl FnOnce(&mut Runtime) -> CudaError,
) -> CudaError {
    if let Err(c) = rt.stream(stream as u64) {
        return c;
    }
    match rt.graphs.gate(stream as u64) {
        Gate::Run => run(rt),
        Gate::Capture => rt.graphs.capture(stream as u64, work()),
        Gate::Refused(c) => c,
    }
}

/// Begins a capture on `stream` in raw mode `mode`.
fn begin(name: &str, stream: *mut c_void, mode: c_int) -> CudaError {
    call(name, |rt| {
        if let Err(c) = rt.stream(stream as u64) {
            return c;
        }
        match Mode::from_raw(mode) {
            Some(m) => rt.graphs.begin_capture(stream as u64, m),
            None => cuda::INVALID_VALUE,
        }
    })
}

/// `cudaStreamBeginCapture` (CUDA Runtime API, Stream Management): later work on `stream` is captured
/// into a new graph; mode 0 (global), 1 (thread-local) or 2 (relaxed), anything else
/// `cudaErrorInvalidValue`; the legacy stream `cudaErrorStreamCaptureUnsupported`; a stream already
/// capturing `cudaErrorIllegalState`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCapture(stream: *mut c_void, mode: c_int) -> CudaError {
    begin("cudaStreamBeginCapture", stream, mode)
}

/// `cudaStreamBeginCapture_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCapture_ptsz(stream: *mut c_void, mode: c_int) -> CudaError {
    begin("cudaStreamBeginCapture_ptsz", stream, mode)
}

/// Ends the capture on `stream`, writing its graph (NULL when there is none) to `graph`.
fn end(name: &str, stream: *mut c_void, graph: *mut *mut c_void) -> CudaError {
    call(name, |rt| {
        if let Err(c) = rt.stream(stream as u64) {
            return c;
        }
        // SAFETY: the program's output parameter, checked before the capture ends.
        if unsafe { put(graph, std::ptr::null_mut()) } != cuda::SUCCESS {
            return cuda::INVALID_VALUE;
        }
        let (g, code) = match rt.graphs.end_capture(stream as u64) {
            Ok(g) => (g, cuda::SUCCESS),
            Err(c) => (0, c),
        };
        // SAFETY: as above.
        first_error([code, unsafe { put(graph, g as *mut c_void) }])
    })
}

/// `cudaStreamEndCapture` (CUDA Runtime API, Stream Management): the captured graph. "If capture was
/// invalidated, due to a violation of the rules of stream capture, then a NULL graph will be returned"
/// with `cudaErrorStreamCaptureInvalidated`; work forked to another stream and never joined back is
/// `cudaErrorStreamCaptureUnjoined` and a NULL graph too. A stream not capturing is
/// `cudaErrorIllegalState`, one that did not begin the capture `cudaErrorStreamCaptureUnmatched`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamEndCapture(stream: *mut c_void, graph: *mut *mut c_void) -> CudaError {
    end("cudaStreamEndCapture", stream, graph)
}

/// `cudaStreamEndCapture_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamEndCapture_ptsz(stream: *mut c_void, graph: *mut *mut c_void) -> CudaError {
    end("cudaStreamEndCapture_ptsz", stream, graph)
}

/// `stream`'s capture status; the legacy stream while a capture is in progress is
/// `cudaErrorStreamCaptureImplicit` ("The blocking stream capture is not invalidated").
fn status(rt: &Runtime, stream: u64) -> Result<Status, CudaError> {
    rt.stream(stream)?;
    if Captures::is_legacy(stream) && rt.graphs.captures.active() {
        return Err(cuda::STREAM_CAPTURE_IMPLICIT);
    }
    Ok(rt.graphs.captures.status(stream))
}

/// Writes `stream`'s capture status to `out`.
fn is_capturing(name: &str, stream: *mut c_void, out: *mut c_int) -> CudaError {
    call(name, |rt| match status(rt, stream as u64) {
        // SAFETY: the program's output parameter.
        Ok(s) => unsafe { put(out, s as c_int) },
        Err(c) => c,
    })
}

/// `cudaStreamIsCapturing` (CUDA Runtime API, Stream Management): 0 (none), 1 (active) or 2
/// (invalidated).
#[no_mangle]
pub unsafe extern "C" fn cudaStreamIsCapturing(stream: *mut c_void, status: *mut c_int) -> CudaError {
    is_capturing("cudaStreamIsCapturing", stream, status)
}

/// `cudaStreamIsCapturing_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamIsCapturing_ptsz(stream: *mut c_void, status: *mut c_int) -> CudaError {
    is_capturing("cudaStreamIsCapturing_ptsz", stream, status)
}

/// The output parameters of `cudaStreamGetCaptureInfo` after the status (each may be NULL).
#[derive(Clone, Copy)]
pub(super) struct InfoOut {
    pub(super) id: *mut u64,
    pub(super) graph: *mut *mut c_void,
    pub(super) deps: *mut *const u64,
    pub(super) edges: *mut *const [u8; 8],
    pub(super) count: *mut usize,
}

/// Writes an active capture's id, graph, dependencies (the stream's tail, in an array the runtime keeps
/// until the next call on the stream) and their edge data (all default) where the program asked for them.
///
/// # Safety
/// The pointers in `out` are the program's output parameters.
unsafe fn write_info(rt: &mut Runtime, stream: u64, out: InfoOut) -> CudaError {
    let Some((tail, seq)) = rt.graphs.captures.of_stream(stream) else { return cuda::SUCCESS };
    let (id, graph, deps) = (seq.id, seq.graph, tail.deps.clone());
    let c = &mut rt.graphs.captures;
    c.info_edges = vec![[0u8; 8]; deps.len()];
    c.info_nodes = deps;
    let (nodes, edges, n) = (c.info_nodes.as_ptr(), c.info_edges.as_ptr(), c.info_nodes.len());
    // SAFETY: the caller's contract; NULL outputs are not written.
    first_error(unsafe {
        [
            put_if(out.id, id),
            put_if(out.graph, graph as *mut c_void),
            put_if(out.deps, nodes),
            put_if(out.edges, edges),
            put_if(out.count, n),
        ]
    })
}

/// [`put`] where `p` is not NULL (an optional output parameter).
///
/// # Safety
/// As [`put`].
unsafe fn put_if<T: crate::hostmem::Plain>(p: *mut T, v: T) -> CudaError {
    if p.is_null() {
        return cuda::SUCCESS;
    }
    // SAFETY: the caller's contract.
    unsafe { put(p, v) }
}

/// `cudaStreamGetCaptureInfo` and its `_ptsz` form (and CUDA 12's `_v2` and `_v3`, `api::cuda12`).
pub(super) fn capture_info(name: &str, stream: *mut c_void, status_out: *mut c_int, out: InfoOut) -> CudaError {
    call(name, |rt| {
        if !out.edges.is_null() && out.deps.is_null() {
            return cuda::INVALID_VALUE;
        }
        let s = match status(rt, stream as u64) {
            Ok(s) => s,
            Err(c) => return c,
        };
        // SAFETY: the program's output parameter (required: NULL is `cudaErrorInvalidValue`).
        let code = unsafe { put(status_out, s as c_int) };
        if code != cuda::SUCCESS || s != Status::Active {
            return code;
        }
        // SAFETY: the program's output parameters.
        unsafe { write_info(rt, stream as u64, out) }
    })
}

/// `cudaStreamGetCaptureInfo`, CUDA 13's signature (CUDA Runtime API, Stream Management): the status
/// (required), and for an active capture its id, graph, the nodes the next captured work will depend on
/// and their edge data (default), and their number; each output may be NULL, but edge data without the
/// node array is `cudaErrorInvalidValue`.
#[cfg(not(cuda12))] // CUDA 12's is another function (abi12.txt): a stub there
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    edges: *mut *const [u8; 8],
    count: *mut usize,
) -> CudaError {
    capture_info("cudaStreamGetCaptureInfo", stream, status, InfoOut { id, graph, deps, edges, count })
}

/// `cudaStreamGetCaptureInfo_ptsz`.
#[cfg(not(cuda12))] // as cudaStreamGetCaptureInfo
#[no_mangle]
pub unsafe extern "C" fn cudaStreamGetCaptureInfo_ptsz(
    stream: *mut c_void,
    status: *mut c_int,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const u64,
    edges: *mut *const [u8; 8],
    count: *mut usize,
) -> CudaError {
    capture_info("cudaStreamGetCaptureInfo_ptsz", stream, status, InfoOut { id, graph, deps, edges, count })
}

/// `cudaThreadExchangeStreamCaptureMode` (CUDA Runtime API, Stream Management): sets the calling
/// thread's mode to `*mode` and writes the one it had there; NULL or an unknown mode is
/// `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaThreadExchangeStreamCaptureMode(mode: *mut c_int) -> CudaError {
    call("cudaThreadExchangeStreamCaptureMode", |_| {
        let Some(new) = crate::hostmem::read_value(mode).ok().and_then(Mode::from_raw) else {
            return cuda::INVALID_VALUE;
        };
        let old = crate::capture::exchange_mode(new);
        // SAFETY: the program's in-out parameter, just read.
        let code = unsafe { put(mode, old.raw()) };
        if code != cuda::SUCCESS {
            crate::capture::exchange_mode(old);
        }
        code
    })
}

/// `cudaEventRecordExternal` / `cudaEventWaitExternal`: the record or wait is a node of a capture.
const EXTERNAL: u32 = 0x1;

/// `cudaEventRecord[WithFlags]` on a known `stream` and `event`: the simulated time now, or, on a
/// capturing stream, a capture of the record ([`crate::graph::Graphs::capture_record`]). Flags other than
/// `cudaEventRecordExternal` are `cudaErrorInvalidValue`.
pub(super) fn record_event(rt: &mut Runtime, event: u64, stream: u64, flags: u32) -> CudaError {
    if flags & !EXTERNAL != 0 {
        return cuda::INVALID_VALUE;
    }
    match rt.graphs.gate(stream) {
        Gate::Run => {
            let now = rt.clock_ns;
            rt.graphs.captures.forget_event(event);
            rt.event(event).map(|t| *t = Some(now)).map_or_else(|c| c, |()| cuda::SUCCESS)
        }
        Gate::Capture => rt.graphs.capture_record(event, stream, flags & EXTERNAL != 0),
        Gate::Refused(c) => c,
    }
}

/// `cudaStreamWaitEvent` on a known `stream` and `event`: already satisfied, except where a capture is
/// concerned ([`crate::graph::Graphs::capture_wait`]). Flags other than `cudaEventWaitExternal` are
/// `cudaErrorInvalidValue`.
pub(super) fn wait_event(rt: &mut Runtime, stream: u64, event: u64, flags: u32) -> CudaError {
    if flags & !EXTERNAL != 0 {
        return cuda::INVALID_VALUE;
    }
    let recorded = matches!(rt.event(event), Ok(Some(_)));
    match rt.graphs.capture_wait(stream, event, recorded, flags & EXTERNAL != 0) {
        Some(c) => c,
        None => match rt.graphs.gate(stream) {
            Gate::Refused(c) => c,
            Gate::Run | Gate::Capture => cuda::SUCCESS,
        },
    }
}

/// Where a host function enqueued on `stream` goes: `Ok(true)`: run it now (the caller runs it after
/// releasing the lock); `Ok(false)`: captured as a host node doing `work` (a `cudaStreamAddCallback`,
/// `work` `None`, cannot be captured: `cudaErrorStreamCaptureUnsupported`); `Err`: refused.
pub(super) fn host_gate(rt: &mut Runtime, stream: u64, work: Option<Work>) -> Result<bool, CudaError> {
    let code = match (rt.graphs.gate(stream), work) {
        (Gate::Run, _) => return Ok(true),
        (Gate::Capture, Some(w)) => rt.graphs.capture(stream, w),
        (Gate::Capture, None) => rt.graphs.captures.refuse(stream),
        (Gate::Refused(c), _) => c,
    };
    if code == cuda::SUCCESS {
        Ok(false)
    } else {
        Err(code)
    }
}
