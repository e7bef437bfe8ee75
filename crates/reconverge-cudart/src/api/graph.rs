//! CUDA graphs ([`crate::graph`]): creating graphs and their nodes explicitly (CUDA Runtime API, Graph
//! Management), instantiating and launching them, and the nodes' parameters.
//!
//! A graph launch runs its work in the order instantiation fixed, at once (launches are synchronous):
//! each kernel node through the path of `<<<...>>>` ([`Runtime::launch`]: one launch in the statistics
//! per kernel node run), each copy and set as `cudaMemcpy`/`cudaMemcpy3D`/`cudaMemset2D` would, each host
//! node's function outside the runtime's lock (as `cudaLaunchHostFunc`'s). A launch that fails stops the
//! graph with its code; a kernel that faults stops it too, and the fault surfaces at the next call, as an
//! asynchronous launch's does.

use super::register::read_params;
use super::{call, first_error, put, with_runtime, Dim3};
use crate::api::pitched::{copy_3d_parms, CudaMemcpy3DParms};
use crate::capture::Gate;
use crate::error::{self as cuda, CudaError};
use crate::graph::{CopyWork, HostFunc, HostWork, KernelWork, SetWork, Step, Work};
use crate::hostmem::{self, Plain};
use crate::launch::LaunchEnd;
use crate::pitched::{Extent, Rows};
use crate::runtime::{CallConfig, CopyKind, Runtime};
use std::ffi::{c_int, c_void};

/// `cudaKernelNodeParams` as C lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KernelNodeParams {
    /// The kernel (its host stub).
    pub func: u64,
    /// Grid size.
    pub grid: Dim3,
    /// Block size.
    pub block: Dim3,
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// The C structure's padding before the next pointer, made a field so that the type has none.
    pub pad: u32,
    /// `void **kernelParams`: a pointer to each argument.
    pub kernel_params: u64,
    /// `void **extra`: the arguments packed in one buffer (not supported).
    pub extra: u64,
}

// SAFETY: integers and `Dim3`s, no padding (see `pad`); every bit pattern is valid.
unsafe impl Plain for KernelNodeParams {}

/// `cudaMemsetParams` as C lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MemsetParams {
    /// The first byte.
    pub dst: u64,
    /// Bytes from one row to the next (unused for one row).
    pub pitch: usize,
    /// The value of each element.
    pub value: u32,
    /// Bytes per element: 1, 2 or 4.
    pub element_size: u32,
    /// Elements per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
}

// SAFETY: integers, no padding; every bit pattern is valid.
unsafe impl Plain for MemsetParams {}

/// `cudaHostNodeParams` as C lays it out.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct HostNodeParams {
    /// The function (NULL is `cudaErrorInvalidValue`).
    pub func: Option<HostFunc>,
    /// Its argument.
    pub user_data: u64,
}

// SAFETY: a function pointer that may be NULL (`Option` of one: any bit pattern is a valid value, whether
// it may be called is the program's contract, as in CUDA) and an integer, no padding.
unsafe impl Plain for HostNodeParams {}

/// The most handles one array a program passes may hold (dependencies, edges): far more than any graph
/// has, few enough that reading them cannot exhaust memory.
const MAX_HANDLES: usize = 1 << 20;

/// A result as the code the program sees.
fn code_of(r: Result<CudaError, CudaError>) -> CudaError {
    r.unwrap_or_else(|c| c)
}

/// The `n` handles (`cudaGraphNode_t`) of the program's array at `p`; `cudaErrorInvalidValue` when it
/// cannot be read (NULL with `n` above 0 included).
fn read_handles(p: *const *mut c_void, n: usize) -> Result<Vec<u64>, CudaError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if n > MAX_HANDLES {
        return Err(cuda::INVALID_VALUE);
    }
    let mut bytes = vec![0u8; n * 8];
    hostmem::read(p as u64, &mut bytes).map_err(|_| cuda::INVALID_VALUE)?;
    Ok(bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect())
}

/// Adds a node doing what `make` returns to `graph` after the `n` nodes at `deps`, and writes its handle
/// to `out` (checked writable first, so that a bad one adds nothing).
fn add_node(
    name: &str,
    out: *mut *mut c_void,
    (graph, deps, n): (*mut c_void, *const *mut c_void, usize),
    make: impl FnOnce(&mut Runtime) -> Result<Work, CudaError>,
) -> CudaError {
    call(name, |rt| {
        // SAFETY: the program's output parameter.
        if unsafe { put(out, std::ptr::null_mut()) } != cuda::SUCCESS {
            return cuda::INVALID_VALUE;
        }
        code_of((|| {
            let deps = read_handles(deps, n)?;
            rt.graphs.graph(graph as u64)?;
            let work = make(rt)?;
            let node = rt.graphs.add(graph as u64, &deps, work)?;
            // SAFETY: as above.
            Ok(unsafe { put(out, node as *mut c_void) })
        })())
    })
}

/// `cudaGraphCreate`: an empty graph; `flags` must be 0.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphCreate(graph: *mut *mut c_void, flags: u32) -> CudaError {
    call("cudaGraphCreate", |rt| {
        if flags != 0 {
            return cuda::INVALID_VALUE;
        }
        // SAFETY: the program's output parameter, checked before the graph is made.
        if unsafe { put(graph, std::ptr::null_mut()) } != cuda::SUCCESS {
            return cuda::INVALID_VALUE;
        }
        let g = rt.graphs.create();
        // SAFETY: as above.
        unsafe { put(graph, g as *mut c_void) }
    })
}

/// `cudaGraphDestroy`: the graph and its nodes (an unknown graph, or one a stream captures into, is
/// `cudaErrorInvalidValue`). Executable graphs made from it stay.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphDestroy(graph: *mut c_void) -> CudaError {
    call("cudaGraphDestroy", |rt| code_of(rt.graphs.destroy(graph as u64).map(|()| cuda::SUCCESS)))
}

/// The kernel launch `p` describes, its arguments copied now. `extra` (arguments packed in one buffer) is
/// `cudaErrorNotSupported`, and `cudaErrorInvalidValue` together with `kernelParams`, as CUDA documents;
/// an unregistered function is `cudaErrorInvalidDeviceFunction`.
fn kernel_work(rt: &mut Runtime, p: &KernelNodeParams) -> Result<KernelWork, CudaError> {
    if p.extra != 0 {
        return Err(if p.kernel_params != 0 { cuda::INVALID_VALUE } else { cuda::NOT_SUPPORTED });
    }
    let layout = rt.param_layout(p.func)?;
    let params = read_params(&layout, p.kernel_params as *mut *mut c_void)?;
    let call = CallConfig { grid: p.grid.array(), block: p.block.array(), shared: u64::from(p.shared), stream: 0 };
    Ok(KernelWork::new(p.func, call, params, &layout))
}

/// The kernel launch of the program's `cudaKernelNodeParams` at `p`.
fn read_kernel(rt: &mut Runtime, p: *const KernelNodeParams) -> Result<KernelWork, CudaError> {
    let params = hostmem::read_value(p).map_err(|_| cuda::INVALID_VALUE)?;
    kernel_work(rt, &params)
}

/// `cudaGraphAddKernelNode`: a kernel launch; its arguments are copied when the node is made.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const KernelNodeParams,
) -> CudaError {
    add_node("cudaGraphAddKernelNode", node, (graph, deps, n), |rt| read_kernel(rt, params).map(Work::Kernel))
}

/// `cudaGraphKernelNodeGetParams`: the node's kernel, geometry and shared memory, and `kernelParams`
/// pointing at the node's copies of the arguments (valid while the node and its parameters are).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphKernelNodeGetParams(node: *mut c_void, params: *mut KernelNodeParams) -> CudaError {
    call("cudaGraphKernelNodeGetParams", |rt| {
        let Ok(n) = rt.graphs.node_mut(node as u64) else { return cuda::INVALID_VALUE };
        let Work::Kernel(k) = &mut n.work else { return cuda::INVALID_VALUE };
        let base = k.params.as_ptr() as u64;
        k.arg_ptrs = k.offsets.iter().map(|&o| base + o as u64).collect();
        let dim = |d: [u32; 3]| Dim3 { x: d[0], y: d[1], z: d[2] };
        let v = KernelNodeParams {
            func: k.func,
            grid: dim(k.call.grid),
            block: dim(k.call.block),
            shared: u32::try_from(k.call.shared).unwrap_or(u32::MAX),
            pad: 0,
            kernel_params: if k.arg_ptrs.is_empty() { 0 } else { k.arg_ptrs.as_ptr() as u64 },
            extra: 0,
        };
        // SAFETY: the program's output parameter.
        unsafe { put(params, v) }
    })
}

/// `cudaGraphKernelNodeSetParams`: new parameters for a kernel node (other nodes:
/// `cudaErrorInvalidValue`); the arguments are copied now.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphKernelNodeSetParams(node: *mut c_void, params: *const KernelNodeParams) -> CudaError {
    call("cudaGraphKernelNodeSetParams", |rt| {
        code_of((|| {
            if !matches!(rt.graphs.node(node as u64)?.0.work, Work::Kernel(_)) {
                return Err(cuda::INVALID_VALUE);
            }
            let k = read_kernel(rt, params)?;
            rt.graphs.node_mut(node as u64)?.work = Work::Kernel(k);
            Ok(cuda::SUCCESS)
        })())
    })
}

/// `cudaGraphExecKernelNodeSetParams`: new parameters for the work of kernel node `node` in executable
/// graph `exec` (the graph itself is unchanged); a node that is no kernel node of the graph `exec` was
/// made from is `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecKernelNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    call("cudaGraphExecKernelNodeSetParams", |rt| {
        code_of((|| {
            rt.graphs.exec(exec as u64)?;
            let k = read_kernel(rt, params)?;
            let e = rt.graphs.exec_mut(exec as u64)?;
            let step = e.steps.iter_mut().find(|s| s.node == Some(node as u64)).ok_or(cuda::INVALID_VALUE)?;
            let Work::Kernel(old) = &mut step.work else { return Err(cuda::INVALID_VALUE) };
            *old = k;
            Ok(cuda::SUCCESS)
        })())
    })
}

/// A copy kind a node may hold: a valid `cudaMemcpyKind` (`cudaErrorInvalidMemcpyDirection` otherwise).
fn copy_kind(kind: i32) -> Result<i32, CudaError> {
    CopyKind::from_raw(kind).map(|_| kind).ok_or(cuda::INVALID_MEMCPY_DIRECTION)
}

/// `cudaGraphAddMemcpyNode`: a `cudaMemcpy3DParms` copy (between pitched pointers and CUDA arrays), its
/// parameters read now and the copy made when the node runs.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    parms: *const CudaMemcpy3DParms,
) -> CudaError {
    add_node("cudaGraphAddMemcpyNode", node, (graph, deps, n), |_| {
        let p = hostmem::read_value(parms).map_err(|_| cuda::INVALID_VALUE)?;
        copy_kind(p.kind)?;
        Ok(Work::Copy(CopyWork::Parms(p)))
    })
}

/// `cudaGraphAddMemcpyNode1D`: `count` bytes from `src` to `dst`, as `cudaMemcpy` copies them.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddMemcpyNode1D(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> CudaError {
    add_node("cudaGraphAddMemcpyNode1D", node, (graph, deps, n), |_| {
        let kind = copy_kind(kind)?;
        Ok(Work::Copy(CopyWork::Linear { dst: dst as u64, src: src as u64, len: count as u64, kind }))
    })
}

/// The set a `cudaMemsetParams` describes: an element size other than 1, 2 or 4, a NULL destination, or
/// a pitch below the row's bytes with more than one row is `cudaErrorInvalidValue`.
fn set_work(p: &MemsetParams) -> Result<SetWork, CudaError> {
    let row = (p.width as u64).checked_mul(u64::from(p.element_size)).ok_or(cuda::INVALID_VALUE)?;
    if ![1, 2, 4].contains(&p.element_size) || p.dst == 0 || (p.height > 1 && (p.pitch as u64) < row) {
        return Err(cuda::INVALID_VALUE);
    }
    Ok(SetWork {
        dst: p.dst,
        pitch: p.pitch as u64,
        value: p.value,
        element: p.element_size,
        width: p.width as u64,
        height: p.height as u64,
    })
}

/// `cudaGraphAddMemsetNode`: rows of 1-, 2- or 4-byte elements set to a value.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const MemsetParams,
) -> CudaError {
    add_node("cudaGraphAddMemsetNode", node, (graph, deps, n), |_| {
        let p = hostmem::read_value(params).map_err(|_| cuda::INVALID_VALUE)?;
        Ok(Work::Set(set_work(&p)?))
    })
}

/// `cudaGraphAddHostNode`: a host function call (NULL function: `cudaErrorInvalidValue`).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddHostNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    params: *const HostNodeParams,
) -> CudaError {
    add_node("cudaGraphAddHostNode", node, (graph, deps, n), |_| {
        let p = hostmem::read_value(params).map_err(|_| cuda::INVALID_VALUE)?;
        let func = p.func.ok_or(cuda::INVALID_VALUE)?;
        Ok(Work::Host(HostWork { func, data: p.user_data }))
    })
}

/// `cudaGraphAddEmptyNode`: a node that only orders others.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddEmptyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
) -> CudaError {
    add_node("cudaGraphAddEmptyNode", node, (graph, deps, n), |_| Ok(Work::Empty))
}

/// `cudaGraphAddChildGraphNode`: runs a copy of `child` as it is now (a graph with a cycle:
/// `cudaErrorInvalidValue`).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddChildGraphNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    child: *mut c_void,
) -> CudaError {
    add_node("cudaGraphAddChildGraphNode", node, (graph, deps, n), |rt| {
        let steps = rt.graphs.graph(child as u64)?.plan()?;
        Ok(Work::Child(steps.into_iter().map(|s| s.work).collect()))
    })
}

/// `cudaGraphAddDependencies`, CUDA 13's signature (with edge data): `to[i]` depends on `from[i]`.
/// Edge data other than the default (all zero) is `cudaErrorNotSupported`; nodes of another graph, an
/// edge that exists or a node on itself `cudaErrorInvalidValue` (and no edge is added). CUDA 12's
/// library has CUDA 12's signature, without edge data, and this one as `cudaGraphAddDependencies_v2`
/// (`api::cuda12`, abi12.txt).
#[cfg(not(cuda12))]
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddDependencies(
    graph: *mut c_void,
    from: *const *mut c_void,
    to: *const *mut c_void,
    edge_data: *const [u8; 8],
    n: usize,
) -> CudaError {
    add_dependencies("cudaGraphAddDependencies", graph, (from, to), edge_data, n)
}

/// `cudaGraphAddDependencies` (and CUDA 12's forms) as the entry point `name`: the `n` edges of `from` and
/// `to` (`(from, to)`) with their edge data (NULL: the default).
pub(super) fn add_dependencies(
    name: &str,
    graph: *mut c_void,
    (from, to): (*const *mut c_void, *const *mut c_void),
    edge_data: *const [u8; 8],
    n: usize,
) -> CudaError {
    call(name, |rt| {
        code_of((|| {
            let (from, to) = (read_handles(from, n)?, read_handles(to, n)?);
            if !edge_data.is_null() && n > 0 {
                let mut bytes = vec![0u8; n * 8];
                hostmem::read(edge_data as u64, &mut bytes).map_err(|_| cuda::INVALID_VALUE)?;
                if bytes.iter().any(|&b| b != 0) {
                    return Err(cuda::NOT_SUPPORTED);
                }
            }
            let edges: Vec<(u64, u64)> = from.into_iter().zip(to).collect();
            rt.graphs.add_edges(graph as u64, &edges)?;
            Ok(cuda::SUCCESS)
        })())
    })
}

/// Writes `handles` to the program's array `out` of `*count` entries (`out` NULL: only the count), as
/// `cudaGraphGetNodes` documents: at most `*count` handles, NULL in the entries past the last, and the
/// number written back to `*count`.
///
/// # Safety
/// `out` and `count` are the program's output parameters.
unsafe fn write_handles(handles: &[u64], out: *mut *mut c_void, count: *mut usize) -> CudaError {
    if out.is_null() {
        // SAFETY: the caller's contract.
        return unsafe { put(count, handles.len()) };
    }
    let Ok(room) = hostmem::read_value(count) else { return cuda::INVALID_VALUE };
    let n = room.min(handles.len());
    let mut bytes: Vec<u8> = handles[..n].iter().flat_map(|h| h.to_le_bytes()).collect();
    bytes.resize(room.min(n + MAX_HANDLES) * 8, 0);
    // SAFETY: the caller's contract.
    first_error([
        unsafe { hostmem::write(out as u64, &bytes) }.map_or(cuda::INVALID_VALUE, |()| cuda::SUCCESS),
        unsafe { put(count, n) },
    ])
}

/// `cudaGraphGetNodes`: the graph's nodes in creation order.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphGetNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    count: *mut usize,
) -> CudaError {
    call("cudaGraphGetNodes", |rt| match rt.graphs.graph(graph as u64) {
        Ok(g) => {
            let handles: Vec<u64> = g.nodes.iter().map(|n| n.handle).collect();
            // SAFETY: the program's output parameters.
            unsafe { write_handles(&handles, nodes, count) }
        }
        Err(c) => c,
    })
}

/// `cudaGraphGetRootNodes`: the graph's nodes without dependencies, in creation order.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphGetRootNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    count: *mut usize,
) -> CudaError {
    call("cudaGraphGetRootNodes", |rt| match rt.graphs.graph(graph as u64) {
        // SAFETY: the program's output parameters.
        Ok(g) => unsafe { write_handles(&g.roots(), nodes, count) },
        Err(c) => c,
    })
}

/// `cudaGraphNodeGetType`: the node's `cudaGraphNodeType`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphNodeGetType(node: *mut c_void, kind: *mut c_int) -> CudaError {
    call("cudaGraphNodeGetType", |rt| match rt.graphs.node(node as u64) {
        // SAFETY: the program's output parameter.
        Ok((n, _)) => unsafe { put(kind, n.work.node_type()) },
        Err(c) => c,
    })
}

/// `cudaGraphInstantiateFlagAutoFreeOnLaunch | Upload | DeviceLaunch | UseNodePriority`.
const INSTANTIATE_FLAGS: u64 = 0xf;

/// `cudaGraphInstantiateFlagDeviceLaunch`: graphs launched from device code (not supported).
const DEVICE_LAUNCH: u64 = 0x4;

/// Instantiates `graph` into `*exec`.
fn instantiate(name: &str, exec: *mut *mut c_void, graph: *mut c_void, flags: u64) -> CudaError {
    call(name, |rt| {
        if flags & !INSTANTIATE_FLAGS != 0 {
            return cuda::INVALID_VALUE;
        }
        if flags & DEVICE_LAUNCH != 0 {
            return cuda::NOT_SUPPORTED;
        }
        // SAFETY: the program's output parameter, checked before anything is made.
        if unsafe { put(exec, std::ptr::null_mut()) } != cuda::SUCCESS {
            return cuda::INVALID_VALUE;
        }
        match rt.graphs.instantiate(graph as u64) {
            // SAFETY: as above.
            Ok(e) => unsafe { put(exec, e as *mut c_void) },
            Err(c) => c,
        }
    })
}

/// `cudaGraphInstantiate`, CUDA 13's signature (`unsigned long long flags`): an executable graph of the
/// graph's work as it is now, in the order it will run. `cudaGraphInstantiateFlagAutoFreeOnLaunch`,
/// `Upload` and `UseNodePriority` have no effect here; `DeviceLaunch` is `cudaErrorNotSupported`, other
/// flags and a graph with a cycle `cudaErrorInvalidValue`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphInstantiate(exec: *mut *mut c_void, graph: *mut c_void, flags: u64) -> CudaError {
    instantiate("cudaGraphInstantiate", exec, graph, flags)
}

/// `cudaGraphInstantiateWithFlags`: as `cudaGraphInstantiate`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphInstantiateWithFlags(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    flags: u64,
) -> CudaError {
    instantiate("cudaGraphInstantiateWithFlags", exec, graph, flags)
}

/// `cudaGraphExecDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecDestroy(exec: *mut c_void) -> CudaError {
    call("cudaGraphExecDestroy", |rt| code_of(rt.graphs.destroy_exec(exec as u64).map(|()| cuda::SUCCESS)))
}

/// Uploads `exec` to the device: nothing to do (an unknown executable graph or stream is refused).
fn upload(name: &str, exec: *mut c_void, stream: *mut c_void) -> CudaError {
    call(name, |rt| code_of(rt.stream(stream as u64).and_then(|()| rt.graphs.exec(exec as u64)).map(|_| cuda::SUCCESS)))
}

/// `cudaGraphUpload`: nothing to upload (checks its handles).
#[no_mangle]
pub unsafe extern "C" fn cudaGraphUpload(exec: *mut c_void, stream: *mut c_void) -> CudaError {
    upload("cudaGraphUpload", exec, stream)
}

/// `cudaGraphUpload_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphUpload_ptsz(exec: *mut c_void, stream: *mut c_void) -> CudaError {
    upload("cudaGraphUpload_ptsz", exec, stream)
}

/// A set node's work: each element's low `element` bytes of the value.
fn set(rt: &mut Runtime, s: &SetWork) -> CudaError {
    let pattern = &s.value.to_le_bytes()[..s.element as usize];
    let row = s.width * u64::from(s.element);
    let pitch = if s.height > 1 { s.pitch } else { row };
    rt.fill_rows(
        Rows { base: s.dst, pitch, rows_per_slice: s.height },
        pattern,
        Extent { width: row, height: s.height, depth: 1 },
    )
}

/// Runs one piece of a graph's work (a host node's function is run by the caller, outside the lock).
fn run_work(rt: &mut Runtime, work: Work, stream: u64) -> LaunchEnd {
    let code = match work {
        Work::Kernel(k) => return rt.launch(k.func, CallConfig { stream, ..k.call }, k.params),
        // SAFETY: the program's pointers, as it passed them to the node; bad ones are errors.
        Work::Copy(CopyWork::Linear { dst, src, len, kind }) => unsafe { rt.memcpy(dst, src, len, kind) },
        // SAFETY: as above.
        Work::Copy(CopyWork::Parms(p)) => unsafe { copy_3d_parms(rt, &p) },
        Work::Set(s) => set(rt, &s),
        Work::Record(e) => {
            let now = rt.clock_ns;
            rt.event(e).map(|t| *t = Some(now)).map_or_else(|c| c, |()| cuda::SUCCESS)
        }
        Work::Wait(e) => rt.event(e).map_or_else(|c| c, |_| cuda::SUCCESS),
        Work::Empty | Work::Host(_) | Work::Child(_) => cuda::SUCCESS,
    };
    LaunchEnd::Returned(rt.fail(code))
}

/// Runs an executable graph's steps on `stream`, in order: each under the lock, a host function after
/// releasing it. A step that fails ends the launch with its code; a kernel fault ends it (the fault
/// surfaces at the next call); a deadlock or limit ends the process, as a launch's does.
fn run_steps(name: &str, steps: Vec<Step>, stream: u64) -> CudaError {
    for step in steps {
        let host = if let Work::Host(h) = &step.work { Some(*h) } else { None };
        let end = with_runtime(name, |rt| {
            if rt.pending != cuda::SUCCESS || rt.sticky != cuda::SUCCESS {
                return None;
            }
            Some(run_work(rt, step.work, stream))
        });
        match end {
            None => return cuda::SUCCESS,
            Some(LaunchEnd::Exit(status)) => std::process::exit(status),
            Some(LaunchEnd::Returned(c)) if c != cuda::SUCCESS => return c,
            Some(LaunchEnd::Returned(_)) => {}
        }
        if let Some(h) = host {
            // SAFETY: the program's own function and argument, called as CUDA calls a host node's.
            unsafe { (h.func)(h.data as *mut c_void) }
        }
    }
    cuda::SUCCESS
}

/// What a graph launch does after its checks: run these steps, or nothing more (this code).
enum Start {
    /// Run the steps.
    Run(Vec<Step>),
    /// Done: the launch was refused, failed its checks, or was captured.
    Done(CudaError),
}

/// Checks a launch of `exec` on `stream` and takes its steps; on a capturing stream the launch is
/// captured as a child graph node instead.
fn start(rt: &mut Runtime, exec: u64, stream: u64) -> Start {
    rt.surface_fault();
    if rt.sticky != cuda::SUCCESS {
        return Start::Done(rt.sticky);
    }
    let steps = match rt.stream(stream).and_then(|()| rt.graphs.exec(exec)) {
        Ok(e) => e.steps.clone(),
        Err(c) => return Start::Done(rt.fail(c)),
    };
    let code = match rt.graphs.gate(stream) {
        Gate::Run => return Start::Run(steps),
        Gate::Capture => rt.graphs.capture(stream, Work::Child(steps.into_iter().map(|s| s.work).collect())),
        Gate::Refused(c) => c,
    };
    Start::Done(rt.fail(code))
}

/// Launches executable graph `exec` on `stream`.
fn launch_graph(name: &str, exec: *mut c_void, stream: *mut c_void) -> CudaError {
    match with_runtime(name, |rt| start(rt, exec as u64, stream as u64)) {
        Start::Done(c) => c,
        Start::Run(steps) => run_steps(name, steps, stream as u64),
    }
}

/// `cudaGraphLaunch` (CUDA Runtime API, Graph Management): runs the executable graph's work now, in its
/// order; each kernel node is one launch. On a capturing stream the graph is captured as a child graph
/// node.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphLaunch(exec: *mut c_void, stream: *mut c_void) -> CudaError {
    launch_graph("cudaGraphLaunch", exec, stream)
}

/// `cudaGraphLaunch_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphLaunch_ptsz(exec: *mut c_void, stream: *mut c_void) -> CudaError {
    launch_graph("cudaGraphLaunch_ptsz", exec, stream)
}
