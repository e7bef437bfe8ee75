//! The device: count, selection, properties and attributes (describing the configured GPU),
//! synchronisation, reset, per-function settings and attributes, errors and versions.

use super::{call, first_error, put, put_bytes, with_runtime};
use crate::abi::{cuda12, Abi, ABI};
use crate::error::{self as cuda, CudaError};
use crate::runtime::Runtime;
use reconverge_timing::GpuConfig;
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

/// The compute capability reported: the simulator runs PTX of any target, so programs' capability
/// checks pass.
const CAPABILITY: (i32, i32) = (8, 0);

/// `cudaDeviceProp`'s fields the shim fills: (name, offset, size in bytes) in CUDA 13's layout (1008 bytes).
/// `tests/device_props.rs` checks every offset and size against the CUDA 13 headers with the C compiler.
pub const PROP_LAYOUT: [(&str, usize, usize); 29] = [
    ("totalGlobalMem", 288, 8),
    ("sharedMemPerBlock", 296, 8),
    ("regsPerBlock", 304, 4),
    ("warpSize", 308, 4),
    ("memPitch", 312, 8),
    ("maxThreadsPerBlock", 320, 4),
    ("maxThreadsDim[0]", 324, 4),
    ("maxThreadsDim[1]", 328, 4),
    ("maxThreadsDim[2]", 332, 4),
    ("maxGridSize[0]", 336, 4),
    ("maxGridSize[1]", 340, 4),
    ("maxGridSize[2]", 344, 4),
    ("totalConstMem", 352, 8),
    ("major", 360, 4),
    ("minor", 364, 4),
    ("textureAlignment", 368, 8),
    ("multiProcessorCount", 384, 4),
    ("canMapHostMemory", 392, 4),
    ("asyncEngineCount", 584, 4),
    ("unifiedAddressing", 588, 4),
    ("l2CacheSize", 596, 4),
    ("maxThreadsPerMultiProcessor", 604, 4),
    ("sharedMemPerMultiprocessor", 624, 8),
    ("regsPerMultiprocessor", 632, 4),
    ("managedMemory", 636, 4),
    ("canUseHostPointerForRegisteredMem", 664, 4),
    ("sharedMemPerBlockOptin", 672, 8),
    ("maxBlocksPerMultiProcessor", 688, 4),
    ("hostRegisterSupported", 704, 4),
];

/// The value of `cudaDeviceProp` field `name` for the configured GPU.
fn prop_value(rt: &Runtime, g: &GpuConfig, name: &str) -> u64 {
    let sm = &g.sm;
    let limits = crate::limits::Limits::of(g);
    match name {
        "totalGlobalMem" => rt.settings.max_memory,
        "sharedMemPerBlock" => limits.shared_per_block,
        "sharedMemPerBlockOptin" => limits.shared_per_block_optin,
        "regsPerBlock" | "regsPerMultiprocessor" => u64::from(sm.registers),
        "warpSize" => u64::from(rt.settings.warp_size),
        "memPitch" => 1 << 31,
        "maxThreadsPerBlock" => limits.threads_per_block,
        "maxThreadsDim[0]" => limits.block[0],
        "maxThreadsDim[1]" => limits.block[1],
        "maxThreadsDim[2]" => limits.block[2],
        "maxGridSize[0]" => limits.grid[0],
        "maxGridSize[1]" => limits.grid[1],
        "maxGridSize[2]" => limits.grid[2],
        "totalConstMem" => 65536,
        "major" => CAPABILITY.0 as u64,
        "minor" => CAPABILITY.1 as u64,
        "textureAlignment" => 512,
        "multiProcessorCount" => u64::from(g.num_sms),
        // One copy engine, as GTX 480 and Volta-class GPUs have (copies run in program order here).
        "unifiedAddressing" | "managedMemory" | "asyncEngineCount" => 1,
        // Page-locked memory is mapped at the host's own addresses (crate::pinned).
        "canMapHostMemory" | "canUseHostPointerForRegisteredMem" | "hostRegisterSupported" => 1,
        "l2CacheSize" => g.l2.size,
        "maxThreadsPerMultiProcessor" => u64::from(sm.max_threads),
        "sharedMemPerMultiprocessor" => u64::from(sm.shared_memory),
        "maxBlocksPerMultiProcessor" => u64::from(sm.max_ctas),
        _ => 0,
    }
}

/// Size of CUDA 13's `cudaDeviceProp`.
pub const DEVICE_PROP_SIZE: usize = 1008;

/// The bytes of `cudaDeviceProp` for the configured GPU, in `abi`'s layout: CUDA 13's ([`PROP_LAYOUT`]),
/// or CUDA 12's, where the same fields lie elsewhere ([`cuda12::DEVICE_PROP_FIELDS`]; a field CUDA 13 added
/// is left out) and the fields CUDA 13 removed hold the values of their attributes
/// ([`cuda12::REMOVED_PROP_FIELDS`], [`attribute_in`]).
pub fn device_prop(rt: &Runtime, abi: Abi) -> Vec<u8> {
    let g = rt.described();
    let mut out = vec![0u8; abi.device_prop_size()];
    let name = format!("reconverge {} ({})", g.name, rt.settings.mechanism.name());
    let n = name.len().min(255);
    out[..n].copy_from_slice(&name.as_bytes()[..n]);
    for (field, offset, size) in PROP_LAYOUT {
        let at = match abi {
            Abi::Cuda13 => Some(offset),
            Abi::Cuda12 => cuda12::prop_offset(field, size),
        };
        if let Some(at) = at {
            out[at..at + size].copy_from_slice(&prop_value(rt, g, field).to_le_bytes()[..size]);
        }
    }
    if abi == Abi::Cuda12 {
        for (field, attr) in cuda12::REMOVED_PROP_FIELDS {
            let v = attribute_in(rt, attr, abi).unwrap_or(0) as i32;
            let at = cuda12::prop_offset(field, 4).unwrap_or(0);
            out[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    out
}

/// `cudaDevAttrMemoryClockRate`, kHz. A configuration models DRAM as a latency and a bandwidth in bytes
/// per core cycle (`[dram]`), without a clock of its own, so the memory clock reported is the core clock:
/// the clock the configured bandwidth is counted in (bytes per second = `dram.bytes_per_cycle` x this x
/// 1000).
fn memory_clock_khz(g: &GpuConfig) -> i64 {
    i64::from(g.clock_mhz) * 1000
}

/// [`attribute`] under `abi`'s `cudaDeviceAttr`: CUDA 12's `cudaDevAttrCooperativeMultiDeviceLaunch` (96,
/// reserved in CUDA 13) is 0, as the one device has no multi-device launches.
pub fn attribute_in(rt: &Runtime, attr: i32, abi: Abi) -> Option<i64> {
    match (abi, attr) {
        (Abi::Cuda12, 96) => Some(0),
        _ => attribute(rt, attr),
    }
}

/// `cudaDeviceGetAttribute`'s value of `attr` (`cudaDeviceAttr`), when the shim knows it.
pub fn attribute(rt: &Runtime, attr: i32) -> Option<i64> {
    let g = rt.described();
    let sm = &g.sm;
    let limits = crate::limits::Limits::of(g);
    let limit = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    Some(match attr {
        1 => limit(limits.threads_per_block),            // MaxThreadsPerBlock
        2..=4 => limit(limits.block[attr as usize - 2]), // MaxBlockDimX/Y/Z
        5..=7 => limit(limits.grid[attr as usize - 5]),  // MaxGridDimX/Y/Z
        8 => limit(limits.shared_per_block),             // MaxSharedMemoryPerBlock
        9 => 65536,                                      // TotalConstantMemory
        10 => i64::from(rt.settings.warp_size),          // WarpSize
        12 => i64::from(sm.registers),                   // MaxRegistersPerBlock
        13 => i64::from(g.clock_mhz) * 1000,             // ClockRate (kHz)
        15 => 1,                                         // GpuOverlap: one copy engine (asyncEngineCount)
        17 => 0,                                         // KernelExecTimeout: no run-time limit
        20 => 0,                                         // ComputeMode: cudaComputeModeDefault
        36 => memory_clock_khz(g),                       // MemoryClockRate (kHz)
        16 => i64::from(g.num_sms),                      // MultiProcessorCount
        14 => crate::texture::TEXTURE_ALIGNMENT as i64,  // TextureAlignment
        21 => crate::array::max::WIDTH_1D as i64,        // MaxTexture1DWidth
        22 | 23 => crate::array::max::EXTENT_2D[attr as usize - 22] as i64, // MaxTexture2DWidth/Height
        24..=26 => crate::array::max::EXTENT_3D as i64,  // MaxTexture3DWidth/Height/Depth
        27 | 28 | 42 => crate::array::max::LAYERED_EXTENT as i64, // MaxTexture2DLayeredWidth/Height, 1DLayeredWidth
        29 | 43 => crate::array::max::LAYERS as i64,     // MaxTexture2DLayeredLayers, 1DLayeredLayers
        45 | 46 => crate::array::max::GATHER_EXTENT as i64, // MaxTexture2DGatherWidth/Height
        51 => crate::texture::TEXTURE_PITCH_ALIGNMENT as i64, // TexturePitchAlignment
        69 => crate::texture::MAX_LINEAR_WIDTH as i64,   // MaxTexture1DLinearWidth
        70..=72 => crate::texture::MAX_PITCH_2D[attr as usize - 70] as i64, // MaxTexture2DLinearWidth/Height/Pitch
        38 => g.l2.size as i64,                          // L2CacheSize
        39 => i64::from(sm.max_threads),                 // MaxThreadsPerMultiProcessor
        41 | 83 => 1,                                    // UnifiedAddressing, ManagedMemory
        19 | 91 => 1,  // CanMapHostMemory, CanUseHostPointerForRegisteredMem (crate::pinned)
        99 | 113 => 1, // HostRegisterSupported, HostRegisterReadOnlySupported
        75 => i64::from(CAPABILITY.0), // ComputeCapabilityMajor
        76 => i64::from(CAPABILITY.1), // ComputeCapabilityMinor
        81 => i64::from(sm.shared_memory), // MaxSharedMemoryPerMultiprocessor
        82 => i64::from(sm.registers), // MaxRegistersPerMultiprocessor
        97 => limit(limits.shared_per_block_optin), // MaxSharedMemoryPerBlockOptin
        87 => 2,       // SingleToDoublePrecisionPerfRatio, as 8.0's
        106 => i64::from(sm.max_ctas), // MaxBlocksPerMultiprocessor
        _ => return None,
    })
}

/// `cudaGetDeviceCount`: one simulated GPU.
#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceCount(count: *mut c_int) -> CudaError {
    // SAFETY: the program passes the address of its count.
    call("cudaGetDeviceCount", |_| unsafe { put(count, 1) })
}

/// `cudaChooseDevice`: the one simulated GPU, device 0, whatever the properties asked for (a NULL
/// `prop` is `cudaErrorInvalidValue`, as CUDA's).
#[no_mangle]
pub unsafe extern "C" fn cudaChooseDevice(device: *mut c_int, prop: *const c_void) -> CudaError {
    // SAFETY: the program passes the address of its device number.
    call("cudaChooseDevice", |_| if prop.is_null() { cuda::INVALID_VALUE } else { unsafe { put(device, 0) } })
}

/// `cudaSetDevice`: only device 0.
#[no_mangle]
pub unsafe extern "C" fn cudaSetDevice(device: c_int) -> CudaError {
    call("cudaSetDevice", |rt| {
        if device == 0 {
            rt.device = 0;
            cuda::SUCCESS
        } else {
            cuda::INVALID_DEVICE
        }
    })
}

/// `cudaGetDevice`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetDevice(device: *mut c_int) -> CudaError {
    // SAFETY: the program passes the address of its device.
    call("cudaGetDevice", |rt| unsafe { put(device, rt.device) })
}

/// The configured GPU's `cudaDeviceProp` in `abi`'s layout, written through `prop` by the entry point
/// `name`.
///
/// # Safety
/// `prop` is the program's `cudaDeviceProp` of `abi` (a bad pointer is an error).
pub unsafe fn device_properties(name: &str, prop: *mut c_void, device: c_int, abi: Abi) -> CudaError {
    call(name, |rt| {
        if device != 0 {
            return cuda::INVALID_DEVICE;
        }
        // SAFETY: the caller's contract.
        unsafe { put_bytes(prop, &device_prop(rt, abi)) }
    })
}

/// `cudaGetDeviceProperties`: the configured GPU, in CUDA 13's layout. CUDA 12's programs call
/// `cudaGetDeviceProperties_v2` (`api::cuda12`); the plain name in `libcudart.so.12` takes CUDA 11's
/// layout and is a stub there (`abi12.txt`).
#[cfg(not(cuda12))]
#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceProperties(prop: *mut c_void, device: c_int) -> CudaError {
    // SAFETY: the program passes a `cudaDeviceProp` (CUDA 13's, DEVICE_PROP_SIZE bytes).
    unsafe { device_properties("cudaGetDeviceProperties", prop, device, Abi::Cuda13) }
}

/// `cudaDeviceGetAttribute` (the codes of this library's ABI, [`attribute_in`]).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetAttribute(value: *mut c_int, attr: c_int, device: c_int) -> CudaError {
    call("cudaDeviceGetAttribute", |rt| {
        if device != 0 {
            return cuda::INVALID_DEVICE;
        }
        match attribute_in(rt, attr, ABI) {
            // SAFETY: the program passes the address of its value.
            Some(v) => unsafe { put(value, v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as c_int) },
            None => {
                eprintln!("reconverge: cudaDeviceGetAttribute: attribute {attr} is not described (docs/cudart.md)");
                cuda::INVALID_VALUE
            }
        }
    })
}

/// `cudaDeviceSynchronize`: launches are synchronous; returns a sticky error if a launch faulted.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> CudaError {
    call("cudaDeviceSynchronize", |_| cuda::SUCCESS)
}

/// `cudaThreadSynchronize` (removed from CUDA 13's headers; kept for programs built against older ones).
#[no_mangle]
pub unsafe extern "C" fn cudaThreadSynchronize() -> CudaError {
    call("cudaThreadSynchronize", |_| cuda::SUCCESS)
}

/// `cudaDeviceReset`: frees every `cudaMalloc` allocation and clears the errors.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceReset() -> CudaError {
    with_runtime("cudaDeviceReset", |rt| {
        let owned: Vec<u64> =
            rt.mem.allocations().iter().filter(|a| a.name.starts_with("cudaMalloc(")).map(|a| a.base).collect();
        for a in owned {
            rt.mem.free(a);
        }
        rt.free_arrays_and_objects();
        rt.sticky = cuda::SUCCESS;
        rt.pending = cuda::SUCCESS;
        rt.last_error = cuda::SUCCESS;
        cuda::SUCCESS
    })
}

/// `cudaThreadExit` (the old name of `cudaDeviceReset`).
#[no_mangle]
pub unsafe extern "C" fn cudaThreadExit() -> CudaError {
    // SAFETY: no arguments.
    unsafe { cudaDeviceReset() }
}

/// A call that only tunes hardware the model does not have (cache split, limits, flags): accepted, with
/// no effect on results or cycles (docs/cudart.md).
fn accepted(name: &str) -> CudaError {
    call(name, |_| cuda::SUCCESS)
}

/// `cudaFuncSetCacheConfig` (no effect: the configuration fixes the L1/shared split).
#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetCacheConfig(func: *const c_void, _config: c_int) -> CudaError {
    call("cudaFuncSetCacheConfig", |rt| {
        if rt.kernels.contains_key(&(func as u64)) {
            cuda::SUCCESS
        } else {
            cuda::INVALID_DEVICE_FUNCTION
        }
    })
}

/// `cudaFuncAttributeMaxDynamicSharedMemorySize`.
const MAX_DYNAMIC_SHARED_ATTRIBUTE: c_int = 8;

/// `cudaFuncSetAttribute`: `cudaFuncAttributeMaxDynamicSharedMemorySize` sets the dynamic shared memory
/// the kernel's launches may ask for (its static shared memory plus the value at most
/// `sharedMemPerBlockOptin`); other attributes (the carveout preference, cluster shapes) are accepted with
/// no effect.
#[no_mangle]
pub unsafe extern "C" fn cudaFuncSetAttribute(func: *const c_void, attr: c_int, value: c_int) -> CudaError {
    call("cudaFuncSetAttribute", |rt| {
        if let Err(c) = rt.param_layout(func as u64) {
            return c;
        }
        if attr != MAX_DYNAMIC_SHARED_ATTRIBUTE {
            return cuda::SUCCESS;
        }
        let static_shared = rt.program(func as u64).map_or(0, |p| u64::from(p.static_shared));
        match u64::try_from(value) {
            Ok(v) if static_shared + v <= rt.limits().shared_per_block_optin => {
                rt.max_dynamic_shared.insert(func as u64, v);
                cuda::SUCCESS
            }
            _ => cuda::INVALID_VALUE,
        }
    })
}

/// `cudaDeviceSetLimit` (no effect: stack, heap and printf buffer are the model's own).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSetLimit(_limit: c_int, _value: usize) -> CudaError {
    accepted("cudaDeviceSetLimit")
}

/// `cudaDeviceGetLimit`: the stack per thread (the model's local memory per thread), the printf buffer
/// (1 MiB), the device heap (8 MiB, CUDA's default; `malloc` in kernels is not supported).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetLimit(value: *mut usize, limit: c_int) -> CudaError {
    call("cudaDeviceGetLimit", |_| {
        let v = match limit {
            0 => 64 * 1024,
            1 => 1 << 20,
            2 => 8 << 20,
            _ => return cuda::INVALID_VALUE,
        };
        // SAFETY: the program passes the address of its value.
        unsafe { put(value, v) }
    })
}

/// `cudaGetDeviceFlags`: none set.
#[no_mangle]
pub unsafe extern "C" fn cudaGetDeviceFlags(flags: *mut u32) -> CudaError {
    // SAFETY: the program passes the address of its flags.
    call("cudaGetDeviceFlags", |_| unsafe { put(flags, 0) })
}

/// `cudaDeviceGetStreamPriorityRange`: one priority (streams run in program order).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> CudaError {
    // SAFETY: the program passes the addresses of its two values; either may be NULL (not written).
    let put_unless_null = |p: *mut c_int| if p.is_null() { cuda::SUCCESS } else { unsafe { put(p, 0) } };
    call("cudaDeviceGetStreamPriorityRange", |_| first_error([put_unless_null(least), put_unless_null(greatest)]))
}

/// `cudaProfilerStart` (no effect: every launch is measured).
#[no_mangle]
pub unsafe extern "C" fn cudaProfilerStart() -> CudaError {
    accepted("cudaProfilerStart")
}

/// `cudaProfilerStop` (no effect).
#[no_mangle]
pub unsafe extern "C" fn cudaProfilerStop() -> CudaError {
    accepted("cudaProfilerStop")
}

/// `cudaMemPrefetchAsync` (no effect: managed memory is copied for every launch; the arguments, whose
/// layout changed in CUDA 13, are not read).
#[no_mangle]
pub unsafe extern "C" fn cudaMemPrefetchAsync() -> CudaError {
    accepted("cudaMemPrefetchAsync")
}

/// `cudaMemAdvise` (no effect; the arguments are not read).
#[no_mangle]
pub unsafe extern "C" fn cudaMemAdvise() -> CudaError {
    accepted("cudaMemAdvise")
}

/// `cudaDeviceSetCacheConfig` (no effect).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSetCacheConfig(_config: c_int) -> CudaError {
    accepted("cudaDeviceSetCacheConfig")
}

/// `cudaSetDeviceFlags` (no effect).
#[no_mangle]
pub unsafe extern "C" fn cudaSetDeviceFlags(_flags: u32) -> CudaError {
    accepted("cudaSetDeviceFlags")
}

/// `cudaFuncGetAttributes`: the kernel's static shared, constant and local bytes, the registers a thread
/// holds on the configured GPU, and the most threads a CTA of it can have there.
#[no_mangle]
pub unsafe extern "C" fn cudaFuncGetAttributes(attr: *mut c_void, func: *const c_void) -> CudaError {
    call("cudaFuncGetAttributes", |rt| {
        if let Err(c) = rt.param_layout(func as u64) {
            return c;
        }
        let (g, w) = (rt.described().clone(), rt.settings.warp_size);
        let opted_in = rt.max_dynamic_shared.get(&(func as u64)).copied();
        let Some(prog) = rt.program(func as u64) else { return cuda::INVALID_DEVICE_FUNCTION };
        let static_shared = u64::from(prog.static_shared);
        let mut out = [0u8; 144];
        let fields: [(usize, u64, usize); 8] = [
            (0, static_shared, 8),
            (8, prog.const_size, 8),
            (16, u64::from(prog.functions[0].frame_size), 8),
            (24, u64::from(g.max_threads_per_cta(w)), 4),
            (28, u64::from(g.registers_per_thread(prog)), 4),
            (32, 80, 4),
            (36, 80, 4),
            // maxDynamicSharedSizeBytes: what a launch may ask for (`Limits::check`).
            (44, crate::limits::Limits::of(&g).dynamic_shared(static_shared, opted_in), 4),
        ];
        for (o, v, s) in fields {
            out[o..o + s].copy_from_slice(&v.to_le_bytes()[..s]);
        }
        // SAFETY: the program passes a `cudaFuncAttributes` (144 bytes in CUDA 13).
        unsafe { put_bytes(attr, &out) }
    })
}

/// CTAs of `block` threads of kernel `func` one SM of the configured GPU holds at once.
fn occupancy(name: &str, blocks: *mut c_int, func: *const c_void, block: c_int, dynamic_shared: usize) -> CudaError {
    call(name, |rt| {
        if let Err(c) = rt.param_layout(func as u64) {
            return c;
        }
        let (g, w) = (rt.described().clone(), rt.settings.warp_size);
        let Some(prog) = rt.program(func as u64) else { return cuda::INVALID_DEVICE_FUNCTION };
        let (Ok(threads), Ok(shared)) = (u32::try_from(block), u32::try_from(dynamic_shared)) else {
            return cuda::INVALID_VALUE;
        };
        if threads == 0 {
            return cuda::INVALID_VALUE;
        }
        let n = g.resident_ctas(prog, threads, w, shared);
        // SAFETY: the program passes the address of its count.
        unsafe { put(blocks, n.min(i32::MAX as u32) as c_int) }
    })
}

/// `cudaOccupancyMaxActiveBlocksPerMultiprocessor`: from the timing model's residency limits (CTAs,
/// threads, warps, registers, shared memory per SM).
#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    blocks: *mut c_int,
    func: *const c_void,
    block: c_int,
    dynamic_shared: usize,
) -> CudaError {
    occupancy("cudaOccupancyMaxActiveBlocksPerMultiprocessor", blocks, func, block, dynamic_shared)
}

/// `cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags` (the flags change nothing here).
#[no_mangle]
pub unsafe extern "C" fn cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    blocks: *mut c_int,
    func: *const c_void,
    block: c_int,
    dynamic_shared: usize,
    _flags: u32,
) -> CudaError {
    occupancy("cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", blocks, func, block, dynamic_shared)
}

/// `cudaGetLastError`: the last error, cleared unless sticky.
#[no_mangle]
pub unsafe extern "C" fn cudaGetLastError() -> CudaError {
    with_runtime("cudaGetLastError", |rt| {
        let e = rt.last_error;
        rt.last_error = rt.sticky;
        e
    })
}

/// `cudaPeekAtLastError`.
#[no_mangle]
pub unsafe extern "C" fn cudaPeekAtLastError() -> CudaError {
    with_runtime("cudaPeekAtLastError", |rt| rt.last_error)
}

/// The C strings of the error table: (name, description) per code.
fn error_texts() -> &'static [(CudaError, CString, CString)] {
    static TEXTS: OnceLock<Vec<(CudaError, CString, CString)>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        cuda::ERRORS.iter().filter_map(|&(c, n, d)| Some((c, CString::new(n).ok()?, CString::new(d).ok()?))).collect()
    })
}

/// The entry of `code` in the error table (unknown codes read as `cudaErrorUnknown`).
fn error_text(code: CudaError) -> Option<&'static (CudaError, CString, CString)> {
    let t = error_texts();
    t.iter().find(|e| e.0 == code).or_else(|| t.iter().find(|e| e.0 == cuda::UNKNOWN))
}

/// `cudaGetErrorString`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetErrorString(code: CudaError) -> *const c_char {
    error_text(code).map_or(c"unknown error".as_ptr(), |e| e.2.as_ptr())
}

/// `cudaGetErrorName`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetErrorName(code: CudaError) -> *const c_char {
    error_text(code).map_or(c"cudaErrorUnknown".as_ptr(), |e| e.1.as_ptr())
}

/// `cudaDriverGetVersion`: 13.0.
#[no_mangle]
pub unsafe extern "C" fn cudaDriverGetVersion(version: *mut c_int) -> CudaError {
    // SAFETY: the program passes the address of its version.
    unsafe { put(version, 13000) }
}

/// `cudaRuntimeGetVersion`: 13.0, or 12.9 in CUDA 12's library ([`Abi::runtime_version`]).
#[no_mangle]
pub unsafe extern "C" fn cudaRuntimeGetVersion(version: *mut c_int) -> CudaError {
    // SAFETY: the program passes the address of its version.
    unsafe { put(version, ABI.runtime_version()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    /// The attributes behind the `cudaDeviceProp` fields CUDA 13 removed (`memoryClockRate`,
    /// `deviceOverlap`, `kernelExecTimeoutEnabled`, `computeMode`, `singleToDoublePrecisionPerfRatio`),
    /// which programs written for older runtimes read (through the compatibility header), agree with the
    /// fields that remain.
    #[test]
    fn the_attributes_of_removed_properties_are_answered() {
        let rt = Runtime::new(Settings::from_vars(|_| None).expect("default settings"));
        let clock = i64::from(rt.described().clock_mhz) * 1000;
        let prop = device_prop(&rt, Abi::Cuda13);
        let field = |name: &str| {
            let (_, offset, size) = PROP_LAYOUT.iter().copied().find(|f| f.0 == name).expect("a field");
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&prop[offset..offset + size]);
            i64::from_le_bytes(b)
        };
        let expected =
            [(13, clock), (15, i64::from(field("asyncEngineCount") > 0)), (17, 0), (20, 0), (36, clock), (87, 2)];
        for (attr, value) in expected {
            assert_eq!(attribute(&rt, attr), Some(value), "attribute {attr}");
        }
        assert_eq!(attribute(&rt, 69), Some(crate::texture::MAX_LINEAR_WIDTH as i64), "maxTexture1DLinear");
        assert_eq!(attribute(&rt, 10_000), None);
    }

    /// CUDA 12's `cudaDeviceProp` holds every field CUDA 13's does at its own offset, and the fields CUDA
    /// 13 removed hold their attributes' values; `cudaDevAttrCooperativeMultiDeviceLaunch` is answered
    /// under CUDA 12 only (reserved in 13).
    #[test]
    fn cuda_12_properties_hold_the_same_values_where_cuda_12_puts_them() {
        let rt = Runtime::new(Settings::from_vars(|_| None).expect("default settings"));
        let (p13, p12) = (device_prop(&rt, Abi::Cuda13), device_prop(&rt, Abi::Cuda12));
        assert_eq!((p13.len(), p12.len()), (1008, 1032));
        assert_eq!(p12[..256], p13[..256], "the name");
        let read = |p: &[u8], at: usize, size: usize| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(&p[at..at + size]);
            u64::from_le_bytes(b)
        };
        for (field, offset, size) in PROP_LAYOUT {
            // Every field the shim fills exists in CUDA 12's structure too.
            let at = cuda12::prop_offset(field, size).unwrap_or_else(|| panic!("{field} has no CUDA 12 offset"));
            assert_eq!(read(&p12, at, size), read(&p13, offset, size), "{field}");
        }
        for (field, attr) in cuda12::REMOVED_PROP_FIELDS {
            let at = cuda12::prop_offset(field, 4).expect("a CUDA 12 field");
            let want = attribute_in(&rt, attr, Abi::Cuda12).expect("answered") as u64;
            assert_eq!(read(&p12, at, 4), want, "{field}");
        }
        let clock = u64::from(rt.described().clock_mhz) * 1000;
        assert_eq!(read(&p12, cuda12::prop_offset("clockRate", 4).expect("clockRate"), 4), clock, "kHz");
        assert_eq!(attribute_in(&rt, 96, Abi::Cuda12), Some(0));
        assert_eq!(attribute_in(&rt, 96, Abi::Cuda13), None);
    }
}
