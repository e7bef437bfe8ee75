//! Registration (`__cudaRegisterFatBinary` and friends, run by the program's static constructors) and the
//! launch path of both `<<<...>>>` (`__cudaPushCallConfiguration`, `__cudaPopCallConfiguration`,
//! `__cudaGetKernel`, `__cudaLaunchKernel`) and `cudaLaunchKernel`.

use super::{exit_with, host_slice, put, with_runtime, Dim3};
use crate::error::{self as cuda, CudaError};
use crate::launch::LaunchEnd;
use crate::module::{ModuleError, ModuleImage};
use crate::runtime::{CallConfig, KernelRef, Runtime, VariableRef};
use std::ffi::{c_char, c_int, c_void, CStr};

/// The wrapper `nvcc` passes to `__cudaRegisterFatBinary` (`__fatBinC_Wrapper_t`).
#[repr(C)]
struct FatbinWrapper {
    magic: c_int,
    version: c_int,
    data: *const u8,
    filename_or_fatbins: *const c_void,
}

/// A C string the program passed, as Rust text (empty when null).
///
/// # Safety
/// `p` must be null or a NUL-terminated string.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// The fat binary's bytes: the header the wrapper points at and its entries, past empty headers.
///
/// # Safety
/// `data` must point at a fat binary as `nvcc` embeds it.
unsafe fn fatbin_bytes<'a>(data: *const u8) -> Result<&'a [u8], ModuleError> {
    let mut at = data;
    for _ in 0..4 {
        // SAFETY: a fat binary starts with a 16-byte header.
        let header: &[u8; 16] = unsafe { &*(at as *const [u8; 16]) };
        let len = crate::fatbin::total_len(header)?;
        if len > 1 << 32 {
            return Err(ModuleError::TooLarge(len));
        }
        if len > 16 {
            let len = usize::try_from(len).map_err(|_| ModuleError::TooLarge(len))?;
            // SAFETY: the header says `len` bytes follow from here.
            return Ok(unsafe { host_slice(at, len) });
        }
        // SAFETY: an empty fat binary is followed by the next one.
        at = unsafe { at.add(16) };
    }
    Err(ModuleError::Empty)
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
    let (arch, ptx) = crate::fatbin::select_ptx(&entries, |t| reconverge_ptx::parse(t).is_ok())?;
    let index = rt.modules.len();
    let mut label = format!("{}:module{index}.sm_{arch}.ptx", program_name());
    if let Ok(dir) = std::env::var("RECONVERGE_PTX_DIR") {
        let path = std::path::Path::new(&dir).join(label.replace(':', "."));
        std::fs::write(&path, &ptx)
            .map_err(|error| ModuleError::KeepPtx { path: path.display().to_string(), error })?;
        label = path.display().to_string();
    }
    let image = ModuleImage::new(label, ptx, &mut rt.mem, &rt.settings)?;
    rt.modules.push(image);
    Ok(index)
}

/// `__cudaRegisterFatBinary`: registers one module; the handle the program passes back.
#[no_mangle]
pub unsafe extern "C" fn __cudaRegisterFatBinary(fat_cubin: *const c_void) -> *mut *mut c_void {
    let wrapper = fat_cubin as *const FatbinWrapper;
    // SAFETY: nvcc passes its wrapper; checked for its magic before use.
    let data = match unsafe { wrapper.as_ref() } {
        Some(w) if w.magic as u32 == crate::fatbin::WRAPPER_MAGIC && !w.data.is_null() => w.data,
        _ => exit_with(2, "__cudaRegisterFatBinary: not an nvcc fat binary wrapper"),
    };
    // SAFETY: the wrapper's data is the fat binary.
    let bytes =
        unsafe { fatbin_bytes(data) }.unwrap_or_else(|e| exit_with(2, &format!("the program's device code: {e}")));
    let index = with_runtime("__cudaRegisterFatBinary", |rt| register_module(rt, bytes));
    match index {
        Ok(i) => Box::into_raw(Box::new(i)) as *mut *mut c_void,
        Err(e) => exit_with(2, &format!("the program's device code: {e}")),
    }
}

/// The module index behind a handle from [`__cudaRegisterFatBinary`].
///
/// # Safety
/// `handle` must be null or a handle this library returned.
unsafe fn module_of(handle: *mut *mut c_void) -> usize {
    // SAFETY: the caller's contract: a leaked `Box<usize>`.
    unsafe { (handle as *const usize).as_ref() }.copied().unwrap_or(usize::MAX)
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
    // SAFETY: the program passes our handle and a NUL-terminated name.
    let (module, name) = unsafe { (module_of(handle), text(device_name)) };
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
    // SAFETY: as for functions.
    let (module, name) = unsafe { (module_of(handle), text(device_name)) };
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
    // SAFETY: as for functions.
    let (module, name) = unsafe { (module_of(handle), text(device_name)) };
    let block = with_runtime("__cudaRegisterManagedVar", |rt| {
        let block = rt.managed.alloc(size as u64, format!("__managed__ {name}"))?;
        let place = rt.modules.get(module).and_then(|m| m.variable(&name)).cloned();
        if let Some(init) = place.and_then(|p| rt.mem.bytes(p.addr, size as u64)) {
            // SAFETY: the block was just mapped, `size` bytes long.
            unsafe { std::ptr::copy_nonoverlapping(init.as_ptr(), block as *mut u8, init.len()) };
        }
        let v = VariableRef { module, name: name.clone(), size: size as u64, managed: Some(block) };
        rt.variables.insert(host_var_ptr as u64, v);
        Ok::<u64, CudaError>(block)
    });
    match block {
        // SAFETY: the program passes the address of its pointer.
        Ok(b) => unsafe { put(host_var_ptr, b as *mut c_void) },
        Err(_) => exit_with(2, "cannot map managed memory for a __managed__ variable"),
    };
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
    unsafe {
        put(grid, dim(c.grid));
        put(block, dim(c.block));
        put(shared, c.shared as usize);
        put(stream, c.stream as *mut c_void);
    }
    cuda::SUCCESS
}

/// `__cudaGetKernel`: the kernel handle of a host stub (the stub's own address).
#[no_mangle]
pub unsafe extern "C" fn __cudaGetKernel(kernel: *mut *mut c_void, func: *const c_void) -> CudaError {
    let known = with_runtime("__cudaGetKernel", |rt| rt.kernels.contains_key(&(func as u64)));
    // SAFETY: the program passes the address of its handle.
    unsafe { put(kernel, func as *mut c_void) };
    if known {
        cuda::SUCCESS
    } else {
        cuda::INVALID_DEVICE_FUNCTION
    }
}

/// Launches the kernel of host stub `func` with the argument pointers `args`.
///
/// # Safety
/// `args` must hold one valid pointer per kernel parameter, each to as many bytes as the parameter has.
unsafe fn launch(
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
        let mut params = vec![0u8; layout.size];
        for (i, &(offset, size)) in layout.params.iter().enumerate() {
            // SAFETY: the caller's contract: one pointer per parameter.
            let p = if args.is_null() { std::ptr::null_mut() } else { unsafe { *args.add(i) } };
            if p.is_null() || offset + size > params.len() {
                return LaunchEnd::Returned(rt.fail(cuda::INVALID_VALUE));
            }
            // SAFETY: each pointer points at its argument, `size` bytes.
            params[offset..offset + size].copy_from_slice(unsafe { host_slice(p as *const u8, size) });
        }
        let call =
            CallConfig { grid: grid.array(), block: block.array(), shared: shared as u64, stream: stream as u64 };
        rt.launch(func as u64, call, params)
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
            // SAFETY: the program passes its argument array, one pointer per kernel parameter.
            unsafe { launch(stringify!($name), func, grid, block, args, shared, stream) }
        }
    )*};
}

launch_entry!(__cudaLaunchKernel, __cudaLaunchKernel_ptsz, cudaLaunchKernel, cudaLaunchKernel_ptsz);
