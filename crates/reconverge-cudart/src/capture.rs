//! Stream capture: while a stream captures, the work enqueued on it is recorded as nodes of a graph
//! instead of run (CUDA Runtime API, Stream Management, `cudaStreamBeginCapture`: "When a stream is in
//! capture mode, all operations pushed into the stream will not be executed, but will instead be
//! captured into a graph, which will be returned via `cudaStreamEndCapture`").
//!
//! A capture *sequence* begins on one stream (its origin) and captures into one graph. Each capturing
//! stream has a *tail*: the nodes the next work enqueued on it depends on. An event recorded on a
//! capturing stream marks that stream's tail (no node); a stream that waits for such an event joins the
//! sequence with the event's tail (a fork) or adds it to its own (a join), which is how work on several
//! streams is captured into one graph (CUDA Programming Guide, "Stream Capture", "Cross-stream
//! Dependencies and Events"). Only with `cudaEventRecordExternal` / `cudaEventWaitExternal` does a
//! record or wait become a node.
//!
//! What may not happen during a capture follows the Programming Guide's "Prohibited and Unhandled
//! Operations" and the modes of `cudaThreadExchangeStreamCaptureMode`: synchronising or querying a
//! capturing stream or the device, and stream-ordered work this runtime cannot capture, return
//! `cudaErrorStreamCaptureUnsupported`; using the legacy default stream while a (blocking) stream
//! captures returns `cudaErrorStreamCaptureImplicit`; the "potentially unsafe" calls (allocation and
//! freeing, [`UNSAFE_CALLS`]) return `cudaErrorStreamCaptureUnsupported` where the calling thread's mode
//! forbids them; querying an event recorded in a capture returns `cudaErrorCapturedEvent`. Each of these
//! invalidates the sequences concerned ("When an invalid operation is attempted during stream capture,
//! any associated capture graphs are invalidated"): their streams' later work returns
//! `cudaErrorStreamCaptureInvalidated`, and `cudaStreamEndCapture` returns that code and a NULL graph.

use crate::error::{self as cuda, CudaError};
use crate::graph::{Graphs, Work};
use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::thread::ThreadId;

/// `cudaStreamCaptureMode`: which calls a capture forbids, and to which threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `cudaStreamCaptureModeGlobal`.
    Global,
    /// `cudaStreamCaptureModeThreadLocal`.
    ThreadLocal,
    /// `cudaStreamCaptureModeRelaxed`.
    Relaxed,
}

impl Mode {
    /// The mode the raw `cudaStreamCaptureMode` value `m` names.
    pub fn from_raw(m: i32) -> Option<Mode> {
        Some(match m {
            0 => Mode::Global,
            1 => Mode::ThreadLocal,
            2 => Mode::Relaxed,
            _ => return None,
        })
    }

    /// Its raw value.
    pub fn raw(self) -> i32 {
        match self {
            Mode::Global => 0,
            Mode::ThreadLocal => 1,
            Mode::Relaxed => 2,
        }
    }
}

thread_local! {
    /// The calling thread's capture interaction mode (`cudaThreadExchangeStreamCaptureMode`).
    static THREAD_MODE: Cell<Mode> = const { Cell::new(Mode::Global) };
}

/// `cudaThreadExchangeStreamCaptureMode`: sets the calling thread's mode; the one it had.
pub fn exchange_mode(mode: Mode) -> Mode {
    THREAD_MODE.with(|m| m.replace(mode))
}

/// `cudaStreamCaptureStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Not capturing.
    None = 0,
    /// Capturing.
    Active = 1,
    /// Capturing, but invalidated: only `cudaStreamEndCapture` is left to do.
    Invalidated = 2,
}

/// A capture sequence.
#[derive(Clone, Debug)]
pub struct Sequence {
    /// Its id (`cudaStreamGetCaptureInfo`), unique in the process.
    pub id: u64,
    /// The graph it captures into.
    pub graph: u64,
    /// The stream it began on, where it must end.
    pub origin: u64,
    /// Its mode.
    pub mode: Mode,
    /// The thread that began it.
    pub thread: ThreadId,
    /// Whether a prohibited operation invalidated it.
    pub invalidated: bool,
}

/// Where a capturing stream (or an event recorded in a capture) stands: its sequence, and the nodes the
/// next captured work depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tail {
    /// The sequence's id.
    pub seq: u64,
    /// The nodes.
    pub deps: Vec<u64>,
}

/// What a stream-ordered operation does now ([`Graphs::gate`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Run it: its stream is not capturing.
    Run,
    /// Capture it: its stream is capturing.
    Capture,
    /// Neither: return this code.
    Refused(CudaError),
}

/// Calls CUDA counts as potentially unsafe during a capture: "in the case of `cudaMalloc`, the operation
/// is not enqueued asynchronously to a stream, and is not observed by stream capture"
/// (`cudaThreadExchangeStreamCaptureMode`). Allocation and freeing.
pub const UNSAFE_CALLS: &[&str] = &[
    "cudaMalloc",
    "cudaMallocManaged",
    "cudaMallocHost",
    "cudaHostAlloc",
    "cudaMallocPitch",
    "cudaMalloc3D",
    "cudaMallocArray",
    "cudaMalloc3DArray",
    "cudaHostRegister",
    "cudaHostUnregister",
    "cudaFree",
    "cudaFreeHost",
    "cudaFreeArray",
];

/// Synchronous copies and sets: work on the legacy default stream.
pub const LEGACY_CALLS: &[&str] = &[
    "cudaMemcpy",
    "cudaMemset",
    "cudaMemcpy2D",
    "cudaMemcpy3D",
    "cudaMemset2D",
    "cudaMemset3D",
    "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol",
    "cudaMemcpyPeer",
    "cudaMemcpy2DToArray",
    "cudaMemcpy2DFromArray",
    "cudaMemcpy2DArrayToArray",
    "cudaMemcpyToArray",
    "cudaMemcpyFromArray",
    "cudaMemcpyArrayToArray",
];

/// Calls that synchronise the whole device.
pub const DEVICE_SYNC_CALLS: &[&str] = &["cudaDeviceSynchronize", "cudaThreadSynchronize"];

/// The stream captures of the process.
#[derive(Debug, Default)]
pub struct Captures {
    sequences: BTreeMap<u64, Sequence>,
    streams: BTreeMap<u64, Tail>,
    events: HashMap<u64, Tail>,
    next_id: u64,
    /// The node array the last `cudaStreamGetCaptureInfo` handed out (valid until the next call on the
    /// stream, as CUDA's is).
    pub info_nodes: Vec<u64>,
    /// Its edge data (all default: zero).
    pub info_edges: Vec<[u8; 8]>,
}

impl Captures {
    /// Whether a sequence captures into `graph`.
    pub fn capturing_into(&self, graph: u64) -> bool {
        self.sequences.values().any(|s| s.graph == graph)
    }

    /// `stream`'s capture status.
    pub fn status(&self, stream: u64) -> Status {
        match self.streams.get(&stream).and_then(|t| self.sequences.get(&t.seq)) {
            None => Status::None,
            Some(s) if s.invalidated => Status::Invalidated,
            Some(_) => Status::Active,
        }
    }

    /// `stream`'s tail and sequence, when it captures.
    pub fn of_stream(&self, stream: u64) -> Option<(&Tail, &Sequence)> {
        let t = self.streams.get(&stream)?;
        Some((t, self.sequences.get(&t.seq)?))
    }

    /// Whether `stream` is the legacy default stream (0, or `cudaStreamLegacy`).
    pub fn is_legacy(stream: u64) -> bool {
        stream <= 1
    }

    /// Whether any capture is in progress: the legacy stream may not be used then.
    pub fn active(&self) -> bool {
        !self.sequences.is_empty()
    }

    /// Invalidates the sequences `which` selects.
    fn invalidate(&mut self, which: impl Fn(&Sequence) -> bool) {
        self.sequences.values_mut().filter(|s| which(s)).for_each(|s| s.invalidated = true);
    }

    /// Invalidates every sequence and returns `code`: a use of the legacy stream or of the device while
    /// captures are in progress.
    fn refuse_all(&mut self, code: CudaError) -> CudaError {
        self.invalidate(|_| true);
        code
    }

    /// The sequences a potentially unsafe call of the calling thread conflicts with, by the thread's mode
    /// (`cudaThreadExchangeStreamCaptureMode`): Global: its own sequences not begun relaxed, and other
    /// threads' global ones; ThreadLocal: its own not begun relaxed; Relaxed: none.
    fn conflicts(&self, me: ThreadId, mode: Mode) -> impl Fn(&Sequence) -> bool {
        move |s| {
            let own = s.thread == me && s.mode != Mode::Relaxed;
            match mode {
                Mode::Global => own || (s.thread != me && s.mode == Mode::Global),
                Mode::ThreadLocal => own,
                Mode::Relaxed => false,
            }
        }
    }

    /// Whether the call `name` may be made now; the code it returns when not (its sequences are
    /// invalidated). Every entry point asks this through [`crate::api::call`].
    pub fn admits(&mut self, name: &str) -> Result<(), CudaError> {
        if !self.active() {
            return Ok(());
        }
        if LEGACY_CALLS.contains(&name) {
            return Err(self.refuse_all(cuda::STREAM_CAPTURE_IMPLICIT));
        }
        if DEVICE_SYNC_CALLS.contains(&name) {
            return Err(self.refuse_all(cuda::STREAM_CAPTURE_UNSUPPORTED));
        }
        if UNSAFE_CALLS.contains(&name) {
            let conflicts = self.conflicts(std::thread::current().id(), THREAD_MODE.with(Cell::get));
            if self.sequences.values().any(&conflicts) {
                self.invalidate(conflicts);
                return Err(cuda::STREAM_CAPTURE_UNSUPPORTED);
            }
        }
        Ok(())
    }

    /// Whether event `event`, last recorded in a capture in progress, may be synchronised or queried:
    /// `cudaErrorCapturedEvent` (and its sequence invalidated) when not.
    pub fn event_usable(&mut self, event: u64) -> Result<(), CudaError> {
        let Some(seq) = self.events.get(&event).map(|t| t.seq) else { return Ok(()) };
        self.invalidate(|s| s.id == seq);
        Err(cuda::CAPTURED_EVENT)
    }

    /// Ends sequence `id` on every stream and event it reached.
    fn terminate(&mut self, id: u64) {
        self.streams.retain(|_, t| t.seq != id);
        self.events.retain(|_, t| t.seq != id);
        self.sequences.remove(&id);
    }

    /// Forgets that `event` was recorded in a capture (it was recorded again outside one).
    pub fn forget_event(&mut self, event: u64) {
        self.events.remove(&event);
    }

    /// A stream-ordered operation on `stream` that this runtime cannot capture, while the stream
    /// captures: `cudaErrorStreamCaptureUnsupported`, its sequence invalidated.
    pub fn refuse(&mut self, stream: u64) -> CudaError {
        if let Some(seq) = self.streams.get(&stream).map(|t| t.seq) {
            self.invalidate(|s| s.id == seq);
        }
        cuda::STREAM_CAPTURE_UNSUPPORTED
    }
}

impl Graphs {
    /// What a stream-ordered operation on `stream` does now: run (not capturing), be captured, or be
    /// refused: `cudaErrorStreamCaptureInvalidated` on a stream of an invalidated sequence, and
    /// `cudaErrorStreamCaptureImplicit` on the legacy stream while captures are in progress (which
    /// invalidates them).
    pub fn gate(&mut self, stream: u64) -> Gate {
        let c = &mut self.captures;
        match c.status(stream) {
            Status::Active => Gate::Capture,
            Status::Invalidated => Gate::Refused(cuda::STREAM_CAPTURE_INVALIDATED),
            Status::None if Captures::is_legacy(stream) && c.active() => {
                Gate::Refused(c.refuse_all(cuda::STREAM_CAPTURE_IMPLICIT))
            }
            Status::None => Gate::Run,
        }
    }

    /// Records `work` as a node of the graph `stream` captures into, after the stream's tail, which the
    /// node becomes (call when [`Graphs::gate`] says [`Gate::Capture`]).
    pub fn capture(&mut self, stream: u64, work: Work) -> CudaError {
        let Some((tail, seq)) = self.captures.of_stream(stream) else { return cuda::ILLEGAL_STATE };
        let (deps, graph) = (tail.deps.clone(), seq.graph);
        match self.add(graph, &deps, work) {
            Ok(node) => {
                if let Some(t) = self.captures.streams.get_mut(&stream) {
                    t.deps = vec![node];
                }
                cuda::SUCCESS
            }
            Err(c) => c,
        }
    }

    /// `cudaStreamBeginCapture`: `stream` begins a sequence capturing into a new graph. The legacy stream
    /// cannot capture ("Capture may not be initiated if stream is cudaStreamLegacy":
    /// `cudaErrorStreamCaptureUnsupported`); a stream already capturing is `cudaErrorIllegalState`.
    pub fn begin_capture(&mut self, stream: u64, mode: Mode) -> CudaError {
        if Captures::is_legacy(stream) {
            return cuda::STREAM_CAPTURE_UNSUPPORTED;
        }
        if self.captures.streams.contains_key(&stream) {
            return cuda::ILLEGAL_STATE;
        }
        let graph = self.create();
        let c = &mut self.captures;
        c.next_id += 1;
        let seq = Sequence {
            id: c.next_id,
            graph,
            origin: stream,
            mode,
            thread: std::thread::current().id(),
            invalidated: false,
        };
        c.streams.insert(stream, Tail { seq: seq.id, deps: Vec::new() });
        c.sequences.insert(seq.id, seq);
        cuda::SUCCESS
    }

    /// `cudaStreamEndCapture`: ends the sequence begun on `stream` and returns its graph. A stream not
    /// capturing is `cudaErrorIllegalState`; one that joined a sequence begun elsewhere
    /// `cudaErrorStreamCaptureUnmatched` (which invalidates it); another thread than the one that began a
    /// sequence not begun relaxed `cudaErrorStreamCaptureWrongThread`. An invalidated sequence
    /// (`cudaErrorStreamCaptureInvalidated`), or one whose other streams did not join back into the origin
    /// (`cudaErrorStreamCaptureUnjoined`), ends without a graph: its graph is destroyed.
    pub fn end_capture(&mut self, stream: u64) -> Result<u64, CudaError> {
        let Some((_, seq)) = self.captures.of_stream(stream) else { return Err(cuda::ILLEGAL_STATE) };
        let seq = seq.clone();
        if seq.origin != stream {
            self.captures.invalidate(|s| s.id == seq.id);
            return Err(cuda::STREAM_CAPTURE_UNMATCHED);
        }
        if seq.mode != Mode::Relaxed && seq.thread != std::thread::current().id() {
            return Err(cuda::STREAM_CAPTURE_WRONG_THREAD);
        }
        let joined = self.joined(&seq);
        self.captures.terminate(seq.id);
        if seq.invalidated || !joined {
            let _ = self.remove(seq.graph);
            return Err(if seq.invalidated { cuda::STREAM_CAPTURE_INVALIDATED } else { cuda::STREAM_CAPTURE_UNJOINED });
        }
        Ok(seq.graph)
    }

    /// A stream destroyed while it captures: a sequence it began ends (its graph is destroyed, so that the
    /// legacy stream is usable again); one it joined is invalidated and goes on without it.
    pub fn forget_stream(&mut self, stream: u64) {
        let Some((_, seq)) = self.captures.of_stream(stream) else { return };
        let (id, graph) = (seq.id, seq.graph);
        if seq.origin == stream {
            self.captures.terminate(id);
            let _ = self.remove(graph);
        } else {
            self.captures.streams.remove(&stream);
            self.captures.invalidate(|s| s.id == id);
        }
    }

    /// Whether every other stream of `seq` joined back into its origin: the last node of each is the
    /// origin's tail or one of its dependencies.
    fn joined(&self, seq: &Sequence) -> bool {
        let Ok(graph) = self.graph(seq.graph) else { return false };
        let origin = self.captures.streams.get(&seq.origin).map(|t| t.deps.clone()).unwrap_or_default();
        self.captures
            .streams
            .iter()
            .filter(|(s, t)| t.seq == seq.id && **s != seq.origin)
            .flat_map(|(_, t)| t.deps.iter())
            .all(|d| origin.iter().any(|o| graph.reaches(*d, *o)))
    }

    /// `cudaEventRecord` on a capturing stream: the event marks the stream's tail (no node), or, with
    /// `cudaEventRecordExternal` (`external`), becomes a record node.
    pub fn capture_record(&mut self, event: u64, stream: u64, external: bool) -> CudaError {
        if external {
            return self.capture(stream, Work::Record(event));
        }
        let Some((tail, _)) = self.captures.of_stream(stream) else { return cuda::ILLEGAL_STATE };
        let tail = tail.clone();
        self.captures.events.insert(event, tail);
        cuda::SUCCESS
    }

    /// `cudaStreamWaitEvent`, where a capture is concerned: on a capturing stream, an event recorded in
    /// the same sequence adds its tail to the stream's (a join), one recorded in another sequence is
    /// `cudaErrorStreamCaptureMerge`, one recorded outside any capture `cudaErrorStreamCaptureIsolation`
    /// (a never recorded event is no dependency); with `cudaEventWaitExternal` the wait is a node. A
    /// stream not capturing that waits for an event recorded in a capture joins that sequence (a fork;
    /// the legacy stream cannot: `cudaErrorStreamCaptureImplicit`). `recorded`: whether the event was
    /// ever recorded. `None`: nothing to do with a capture (the wait is already satisfied).
    pub fn capture_wait(&mut self, stream: u64, event: u64, recorded: bool, external: bool) -> Option<CudaError> {
        let captured = self.captures.events.get(&event).cloned();
        let own = self.captures.of_stream(stream).map(|(t, s)| (t.clone(), s.invalidated));
        let c = &mut self.captures;
        Some(match (own, captured) {
            (Some((_, true)), _) => cuda::STREAM_CAPTURE_INVALIDATED,
            (Some(_), _) if external => return Some(self.capture(stream, Work::Wait(event))),
            (Some((t, _)), Some(e)) if e.seq == t.seq => {
                if let Some(t) = c.streams.get_mut(&stream) {
                    for d in e.deps {
                        if !t.deps.contains(&d) {
                            t.deps.push(d);
                        }
                    }
                }
                cuda::SUCCESS
            }
            (Some((t, _)), Some(e)) => {
                c.invalidate(|s| s.id == t.seq || s.id == e.seq);
                cuda::STREAM_CAPTURE_MERGE
            }
            (Some((t, _)), None) if recorded => {
                c.invalidate(|s| s.id == t.seq);
                cuda::STREAM_CAPTURE_ISOLATION
            }
            (Some(_), None) => cuda::SUCCESS,
            (None, Some(e)) if Captures::is_legacy(stream) => {
                c.invalidate(|s| s.id == e.seq);
                cuda::STREAM_CAPTURE_IMPLICIT
            }
            (None, Some(e)) => {
                c.streams.insert(stream, e);
                cuda::SUCCESS
            }
            (None, None) => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_on_a_capturing_stream_becomes_a_chain_of_nodes() {
        let mut gs = Graphs::default();
        assert_eq!(gs.begin_capture(0, Mode::Global), cuda::STREAM_CAPTURE_UNSUPPORTED, "the legacy stream");
        assert_eq!(gs.begin_capture(0x100, Mode::Global), cuda::SUCCESS);
        assert_eq!(gs.begin_capture(0x100, Mode::Global), cuda::ILLEGAL_STATE, "already capturing");
        assert_eq!(gs.gate(0x100), Gate::Capture);
        assert_eq!(gs.gate(0x200), Gate::Run, "another stream");
        for _ in 0..3 {
            assert_eq!(gs.capture(0x100, Work::Empty), cuda::SUCCESS);
        }
        let graph = gs.end_capture(0x100).expect("a graph");
        let g = gs.graph(graph).expect("a graph");
        let handles: Vec<u64> = g.nodes.iter().map(|n| n.handle).collect();
        assert_eq!(g.nodes[2].deps, [handles[1]]);
        assert_eq!(g.roots(), [handles[0]]);
        assert_eq!(gs.gate(0x100), Gate::Run, "capture over");
        assert_eq!(gs.end_capture(0x100), Err(cuda::ILLEGAL_STATE));
    }

    #[test]
    fn forks_and_joins_through_events_and_unjoined_work() {
        let mut gs = Graphs::default();
        let (s, t) = (0x100, 0x200);
        gs.begin_capture(s, Mode::Relaxed);
        gs.capture(s, Work::Empty);
        assert_eq!(gs.capture_record(7, s, false), cuda::SUCCESS);
        assert_eq!(gs.capture_wait(t, 7, true, false), Some(cuda::SUCCESS), "t forks off s");
        gs.capture(t, Work::Empty);
        gs.capture(s, Work::Empty);
        gs.capture_record(8, t, false);
        assert_eq!(gs.end_capture(t), Err(cuda::STREAM_CAPTURE_UNMATCHED), "not the origin");
        assert_eq!(gs.captures.status(s), Status::Invalidated);
        assert_eq!(gs.end_capture(s), Err(cuda::STREAM_CAPTURE_INVALIDATED), "no graph");

        gs.begin_capture(s, Mode::Relaxed);
        let g = gs.captures.of_stream(s).expect("capturing").1.graph;
        gs.capture(s, Work::Empty);
        gs.capture_record(7, s, false);
        gs.capture_wait(t, 7, true, false);
        gs.capture(t, Work::Empty);
        gs.capture_record(8, t, false);
        assert_eq!(gs.capture_wait(s, 8, true, false), Some(cuda::SUCCESS), "s joins t");
        gs.capture(s, Work::Empty);
        assert_eq!(gs.end_capture(s), Ok(g));
        let nodes = &gs.graph(g).expect("a graph").nodes;
        assert_eq!(nodes[2].deps, [nodes[0].handle, nodes[1].handle], "the join depends on both");
        assert_eq!(gs.captures.status(t), Status::None, "the forked stream is done too");

        gs.begin_capture(s, Mode::Relaxed);
        gs.capture_record(7, s, false);
        gs.capture_wait(t, 7, true, false);
        gs.capture(t, Work::Empty);
        assert_eq!(gs.end_capture(s), Err(cuda::STREAM_CAPTURE_UNJOINED), "t's work never joined s");
        assert_eq!(gs.capture_wait(s, 9, true, false), None, "no capture: nothing to do");

        gs.begin_capture(s, Mode::Global);
        gs.capture_record(7, s, false);
        gs.capture_wait(t, 7, true, false);
        gs.forget_stream(t);
        assert_eq!((gs.captures.status(s), gs.captures.status(t)), (Status::Invalidated, Status::None));
        gs.forget_stream(s);
        assert!(!gs.captures.active(), "a destroyed origin ends its capture");
    }

    #[test]
    fn prohibited_calls_invalidate_by_mode_and_the_legacy_stream_is_implicit() {
        let mut gs = Graphs::default();
        assert_eq!(gs.captures.admits("cudaMalloc"), Ok(()), "no capture");
        gs.begin_capture(0x100, Mode::Relaxed);
        assert_eq!(gs.captures.admits("cudaMalloc"), Ok(()), "a relaxed capture allows it");
        assert_eq!(gs.captures.admits("cudaGetLastError"), Ok(()));
        assert_eq!(gs.gate(0), Gate::Refused(cuda::STREAM_CAPTURE_IMPLICIT), "the legacy stream");
        assert_eq!(gs.gate(0x100), Gate::Refused(cuda::STREAM_CAPTURE_INVALIDATED));
        assert_eq!(gs.end_capture(0x100), Err(cuda::STREAM_CAPTURE_INVALIDATED));

        gs.begin_capture(0x100, Mode::ThreadLocal);
        let previous = exchange_mode(Mode::Relaxed);
        assert_eq!(previous, Mode::Global);
        assert_eq!(gs.captures.admits("cudaMalloc"), Ok(()), "the thread is relaxed");
        exchange_mode(Mode::ThreadLocal);
        assert_eq!(gs.captures.admits("cudaMalloc"), Err(cuda::STREAM_CAPTURE_UNSUPPORTED));
        assert_eq!(gs.captures.status(0x100), Status::Invalidated);
        exchange_mode(previous);
        assert_eq!(gs.end_capture(0x100), Err(cuda::STREAM_CAPTURE_INVALIDATED));

        gs.begin_capture(0x100, Mode::Global);
        gs.capture_record(5, 0x100, false);
        assert_eq!(gs.captures.event_usable(6), Ok(()));
        assert_eq!(gs.captures.event_usable(5), Err(cuda::CAPTURED_EVENT));
        assert_eq!(gs.end_capture(0x100), Err(cuda::STREAM_CAPTURE_INVALIDATED));
        gs.begin_capture(0x100, Mode::Global);
        assert_eq!(gs.captures.admits("cudaMemcpy"), Err(cuda::STREAM_CAPTURE_IMPLICIT));
        assert_eq!(gs.end_capture(0x100), Err(cuda::STREAM_CAPTURE_INVALIDATED));
        gs.begin_capture(0x100, Mode::Global);
        assert_eq!(gs.capture_wait(0x100, 4, true, false), Some(cuda::STREAM_CAPTURE_ISOLATION));
        assert_eq!(gs.end_capture(0x100), Err(cuda::STREAM_CAPTURE_INVALIDATED));
    }
}
