//! Registration (`__cudaRegisterFatBinary` and friends, run by the program's static constructors) and the
//! launch path of both `<<<...>>>` (`__cudaPushCallConfiguration`, `__cudaPopCallConfiguration`,
//! `__cudaGetKernel`, `__cudaLaunchKernel`) and `cudaLaunchKernel`.

use super::{exit_with, first_error, put, with_runtime, Dim3};
use crate::capture::Gate;
use crate::error::{self as cuda, CudaError};
use crate::graph::{KernelWork, Work};
use crate::hostmem::{self, Plain};
use crate::launch::LaunchEnd;
use crate::module::{ModuleError, ModuleImage};
use crate::runtime::{CallConfig, KernelRef, Runtime, VariableRef};
use std::borrow::Cow;
use std::ffi::{c_char, c_int, c_void};

/// The wrapper `nvcc` passes to `__cudaRegisterFatBinary` (`__fatBinC_Wrapper_t`).
#[repr(C)]
#[derive(Clone, Copy)]
struct FatbinWrapper {
    magic: c_int,
    version: c_int,
    data: *const u8,
    filename_or_fatbins: *const c_void,
}

// SAFETY: two `c_int`s and two pointers, no padding; every bit pattern is a valid value.
unsafe impl Plain for FatbinWrapper {}

/// The longest name a registration passes that is read (a mangled kernel or variable name).
const MAX_NAME: usize = 1 << 20;

/// A C string the program passed, as Rust text (empty when NULL or unreadable: then it names nothing).
fn text(p: *const c_char) -> String {
    hostmem::read_cstr(p, MAX_NAME).unwrap_or_default()
}

/// The fat binary's bytes: the header the wrapper points at and its entries, past empty headers.
fn fatbin_bytes(data: *const u8) -> Result<Cow<'static, [u8]>, ModuleError> {
    let mut at = data as u64;
    for _ in 0..4 {
        let header = hostmem::read_value(at as *const [u8; 16]).map_err(|_| ModuleError::Unreadable(at))?;
        let len = crate::fatbin::total_len(&header)?;
        if len > 1 << 32 {
            return Err(ModuleError::TooLarge(len));
        }
        if len > 16 {
            return mapped_bytes(at, len);
        }
        // An empty fat binary is followed by the next one.
        at = at.checked_add(16).ok_or(ModuleError::Unreadable(at))?;
    }
    Err(ModuleError::Empty)
}

/// The `len` bytes at `at` a fat binary's header claims, bounded by what is mapped: in place when the
/// loaded segment that holds them (the program's `.nv_fatbin` section, as nvcc places it) has them all,
/// copied through [`hostmem`] when the fat binary lies outside every loaded object; a header that claims
/// more than is there is a damaged fat binary ([`ModuleError::Truncated`]).
fn mapped_bytes(at: u64, len: u64) -> Result<Cow<'static, [u8]>, ModuleError> {
    let truncated = |mapped| ModuleError::Truncated { claimed: len, mapped };
    match hostmem::loaded_segment_end(at) {
        Some(end) if end - at >= len => {
            // SAFETY: `[at, at + len)` lies in a readable segment of a loaded object, which stays mapped
            // (the runtime never unloads the program or its libraries before exit).
            Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(at as *const u8, len as usize) }))
        }
        Some(end) => Err(truncated(Some(end - at))),
        None => {
            let mut bytes = reconverge_program::error::try_zeros(len as usize, || "the fat binary".into())
                .map_err(|_| ModuleError::TooLarge(len))?;
            hostmem::read(at, &mut bytes).map_err(|_| truncated(None))?;
            Ok(Cow::Owned(bytes))
        }
    }
}

/// The program's own name, for module labels.
fn program_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "program".into())
}

/// Registers the module of `bytes` (its PTX parsed, variables placed); its index.
fn register_module(rt: &mut Runtime, bytes: &[u8]) -> Result<usize, ModuleError> {
    let entries = crate::fatbin::entries(bytes)?;
    let index = rt.modules.len();
    let name = |arch: u32| format!("{}:module{index}.sm_{arch}.ptx", program_name());
    let (arch, ptx, ir) = crate::fatbin::select_ptx(&entries, |a, t| crate::fatbin::parse_check(&name(a), t))?;
    let mut label = name(arch);
    if let Ok(dir) = std::env::var("RECONVERGE_PTX_DIR") {
        let path = std::path::Path::new(&dir).join(label.replace(':', "."));
        std::fs::write(&path, &ptx)
            .map_err(|error| ModuleError::KeepPtx { path: path.display().to_string(), error })?;
        label = path.display().to_string();
    }
    let budget = rt.settings.max_memory.saturating_sub(rt.held());
    let image = ModuleImage::new(label, ptx, ir, &mut rt.mem, &rt.settings, budget)?;
    rt.modules.push(image);
    Ok(index)
}

/// `__cudaRegisterFatBinary`: registers one module; the handle the program passes back.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(fat_cubin: *const c_void) -> *mut *mut c_void {
    let _private = crate::heap::private();
    let data = match hostmem::read_value(fat_cubin as *const FatbinWrapper) {
        Ok(w) if w.magic as u32 == crate::fatbin::WRAPPER_MAGIC && !w.data.is_null() => w.data,
        _ => exit_with(2, "__cudaRegisterFatBinary: not an nvcc fat binary wrapper"),
    };
    let bytes = fatbin_bytes(data).unwrap_or_else(|e| exit_with(2, &format!("the program's device code: {e}")));
    let index = with_runtime("__cudaRegisterFatBinary", |rt| register_module(rt, &bytes));
    match index {
        Ok(i) => Box::into_raw(Box::new(i)) as *mut *mut c_void,
        Err(e) => exit_with(2, &format!("the program's device code: {e}")),
    }
}

/// The module index behind a handle from [`__cudaRegisterFatBinary`] (a leaked `Box<usize>`);
/// `usize::MAX`, which names no module, for a handle that cannot be read.
fn module_of(handle: *mut *mut c_void) -> usize {
    hostmem::read_value(handle as *const usize).unwrap_or(usize::MAX)
}

/// `__cudaRegisterFatBinaryEnd`: nothing left to do (the module was registered whole).
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinaryEnd(_handle: *mut *mut c_void) {}

/// `__cudaUnregisterFatBinary` (at exit): the module stays until the process ends.
#[no_mangle]
pub unsafe extern "C" fn __cudaUnregisterFatBinary(_handle: *mut *mut c_void) {}

/// `__cudaInitModule`: modules are ready at registration.
#[no_mangle]
pub unsafe extern "C" fn __cudaInitModule(_handle: *mut *mut c_void) -> c_char {
    1
}

/// `__cudaRegisterFunction`: the kernel behind a host stub.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFunction(
    handle: *mut *mut c_void,
    host_fun: *const c_char,
    _device_fun: *mut c_char,
    device_name: *const c_char,
    _thread_limit: c_int,
    _tid: *mut c_void,
    _bid: *mut c_void,
    _bdim: *mut Dim3,
    _gdim: *mut Dim3,
    _wsize: *mut c_int,
) {
    let _private = crate::heap::private();
    let (module, name) = (module_of(handle), text(device_name));
    with_runtime("__cudaRegisterFunction", |rt| rt.kernels.insert(host_fun as u64, KernelRef { module, name }));
}

/// `__cudaRegisterVar`: a `__device__` or `__constant__` variable behind a host shadow.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterVar(
    handle: *mut *mut c_void,
    host_var: *mut c_char,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let _private = crate::heap::private();
    let (module, name) = (module_of(handle), text(device_name));
    let v = VariableRef { module, name, size: size as u64, managed: None };
    with_runtime("__cudaRegisterVar", |rt| rt.variables.insert(host_var as u64, v));
}

/// `__cudaRegisterManagedVar`: a `__managed__` variable: its host copy is managed memory (initialised
/// from the variable's initial value) and `*host_var_ptr` points at it.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterManagedVar(
    handle: *mut *mut c_void,
    host_var_ptr: *mut *mut c_void,
    _device_address: *mut c_char,
    device_name: *const c_char,
    _ext: c_int,
    size: usize,
    _constant: c_int,
    _global: c_int,
) {
    let _private = crate::heap::private();
    let (module, name) = (module_of(handle), text(device_name));
    let block = with_runtime("__cudaRegisterManagedVar", |rt| {
        let block = rt.malloc_managed(size as u64, format!("__managed__ {name}"))?;
        let place = rt.modules.get(module).and_then(|m| m.variable(&name)).cloned();
        let init = place.and_then(|p| rt.mem.bytes(p.addr, size as u64));
        if let (Some(init), Some(host)) = (init, rt.managed.bytes_mut(block, size as u64)) {
            host.copy_from_slice(init);
        }
        let v = VariableRef { module, name: name.clone(), size: size as u64, managed: Some(block) };
        rt.variables.insert(host_var_ptr as u64, v);
        Ok::<u64, CudaError>(block)
    });
    let Ok(b) = block else { exit_with(2, &format!("cannot map managed memory for __managed__ variable `{name}`")) };
    // SAFETY: the program passes the address of its pointer.
    if unsafe { put(host_var_ptr, b as *mut c_void) } != cuda::SUCCESS {
        exit_with(2, &format!("__cudaRegisterManagedVar: the pointer of `{name}` cannot be written"));
    }
}

/// `__cudaPushCallConfiguration`: `<<<grid, block, shared, stream>>>`.
#[no_mangle]
pub unsafe extern "C" fn __cudaPushCallConfiguration(
    grid: Dim3,
    block: Dim3,
    shared: usize,
    stream: *mut c_void,
) -> u32 {
    let c = CallConfig { grid: grid.array(), block: block.array(), shared: shared as u64, stream: stream as u64 };
    with_runtime("__cudaPushCallConfiguration", |rt| rt.configs.push(c));
    0
}

/// `__cudaPopCallConfiguration`: the configuration the launch that follows uses.
#[no_mangle]
pub unsafe extern "C" fn __cudaPopCallConfiguration(
    grid: *mut Dim3,
    block: *mut Dim3,
    shared: *mut usize,
    stream: *mut *mut c_void,
) -> CudaError {
    let Some(c) = with_runtime("__cudaPopCallConfiguration", |rt| rt.configs.pop()) else {
        return cuda::MISSING_CONFIGURATION;
    };
    let dim = |d: [u32; 3]| Dim3 { x: d[0], y: d[1], z: d[2] };
    // SAFETY: the program passes pointers to its locals.
    first_error(unsafe {
        [
            put(grid, dim(c.grid)),
            put(block, dim(c.block)),
            put(shared, c.shared as usize),
            put(stream, c.stream as *mut c_void),
        ]
    })
}

/// `__cudaGetKernel`: the kernel handle of a host stub (the stub's own address).
#[no_mangle]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *mut c_void, func: *const c_void) -> CudaError {
    let known = with_runtime("__cudaGetKernel", |rt| rt.kernels.contains_key(&(func as u64)));
    // SAFETY: the program passes the address of its handle.
    match unsafe { put(kernel, func as *mut c_void) } {
        cuda::SUCCESS if !known => cuda::INVALID_DEVICE_FUNCTION,
        code => code,
    }
}

/// The parameter buffer of a launch: each parameter's bytes read from the pointer the program's argument
/// array `args` holds for it; `cudaErrorInvalidValue` when the array, a pointer in it, or an argument
/// cannot be read.
pub(super) fn read_params(layout: &crate::launch::ParamLayout, args: *mut *mut c_void) -> Result<Vec<u8>, CudaError> {
    let mut params = vec![0u8; layout.size];
    for (i, &(offset, size)) in layout.params.iter().enumerate() {
        let slot = (args as u64).checked_add(8 * i as u64).ok_or(cuda::INVALID_VALUE)?;
        let p = hostmem::read_value(slot as *const u64).map_err(|_| cuda::INVALID_VALUE)?;
        let bytes = params.get_mut(offset..offset + size).ok_or(cuda::INVALID_VALUE)?;
        hostmem::read(p, bytes).map_err(|_| cuda::INVALID_VALUE)?;
    }
    Ok(params)
}

/// Launches the kernel of host stub `func` with the argument pointers `args`; on a capturing stream the
/// launch is captured as a kernel node holding a copy of the arguments instead.
fn launch(
    name: &str,
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared: usize,
    stream: *mut c_void,
) -> CudaError {
    let end = with_runtime(name, |rt| {
        rt.surface_fault();
        if rt.sticky != cuda::SUCCESS {
            return LaunchEnd::Returned(rt.sticky);
        }
        let layout = match rt.param_layout(func as u64) {
            Ok(l) => l,
            Err(c) => return LaunchEnd::Returned(rt.fail(c)),
        };
        let params = match read_params(&layout, args) {
            Ok(p) => p,
            Err(c) => return LaunchEnd::Returned(rt.fail(c)),
        };
        let call =
            CallConfig { grid: grid.array(), block: block.array(), shared: shared as u64, stream: stream as u64 };
        let code = match rt.graphs.gate(call.stream) {
            Gate::Run => return rt.launch(func as u64, call, params),
            Gate::Capture => {
                let k = KernelWork::new(func as u64, call, params, &layout);
                rt.graphs.capture(call.stream, Work::Kernel(k))
            }
            Gate::Refused(c) => c,
        };
        LaunchEnd::Returned(rt.fail(code))
    });
    match end {
        LaunchEnd::Returned(code) => code,
        LaunchEnd::Exit(status) => std::process::exit(status),
    }
}

/// Defines launch entry points: `<<<...>>>` compiles to `__cudaLaunchKernel` (CUDA 13), the explicit API
/// is `cudaLaunchKernel`, and `_ptsz` are their per-thread-default-stream forms; all launch the kernel
/// of a host stub (or kernel handle, which is the stub's address) with its argument array.
macro_rules! launch_entry {
    ($($name:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "`: launches a kernel with its argument array.")]
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            func: *const c_void,
            grid: Dim3,
            block: Dim3,
            args: *mut *mut c_void,
            shared: usize,
            stream: *mut c_void,
        ) -> CudaError {
            launch(stringify!($name), func, grid, block, args, shared, stream)
        }
    )*};
}

launch_entry!(__cudaLaunchKernel, __cudaLaunchKernel_ptsz, cudaLaunchKernel, cudaLaunchKernel_ptsz);
