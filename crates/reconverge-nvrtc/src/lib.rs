//! Compiling CUDA C to PTX with NVRTC, loaded at run time (shared by the command line and the Python package).
//!
//! The library is found, in order: the path in `RECONVERGE_NVRTC`; `libnvrtc.so.12` on the system library
//! path; the PyPI package `nvidia-cuda-nvrtc-cu12` in the repository's `.tools/cuda` environment (made by
//! `scripts/gen_ptx.py`) or in the site-packages of `python3`. CUDA headers (`cooperative_groups.h`,
//! `cuda/std/...`) come from the PyPI packages `nvidia-cuda-runtime-cu12` and `nvidia-cuda-cccl-cu12`,
//! found the same way, so `#include <cooperative_groups.h>` works without flags.
#![deny(missing_docs)]

pub mod ptxas;

use anyhow::{anyhow, bail, Context, Result};
use std::ffi::{c_char, c_int, CStr, CString};
use std::path::PathBuf;

/// The NVRTC options reconverge uses for `.cu` input (the same as `scripts/gen_ptx.py`'s sm_80 variant).
pub const DEFAULT_OPTIONS: &[&str] = &["-default-device", "-lineinfo", "-arch=compute_80"];

const INSTALL_HINT: &str = "CUDA C input needs NVRTC. Install it with \
`python3 -m pip install nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-runtime-cu12 nvidia-cuda-cccl-cu12` (the \
last two provide the CUDA headers), or run `python3 scripts/gen_ptx.py`, which installs them into .tools/cuda, \
or point RECONVERGE_NVRTC at libnvrtc.so.12. Or compile the kernel to PTX yourself and pass the .ptx file.";

/// Python `site-packages` directories that may hold NVIDIA's PyPI wheels (`nvidia/cuda_nvrtc`,
/// `nvidia/cuda_runtime`, `nvidia/cuda_cccl`): the repository's `.tools/cuda` environment (made by
/// `scripts/gen_ptx.py`) and the site-packages of `python3`.
pub(crate) fn site_packages() -> Vec<PathBuf> {
    let mut roots = vec![PathBuf::from(".tools/cuda")];
    if let Ok(exe) = std::env::current_exe() {
        // target/{debug,release}/reconverge → repository root
        if let Some(root) = exe.ancestors().nth(3) {
            roots.push(root.join(".tools/cuda"));
        }
    }
    let mut v = Vec::new();
    for root in roots {
        if let Ok(rd) = std::fs::read_dir(root.join("lib")) {
            for e in rd.flatten() {
                v.push(e.path().join("site-packages"));
            }
        }
    }
    if let Ok(out) = std::process::Command::new("python3")
        .args(["-c", "import nvidia, os\nfor p in nvidia.__path__: print(os.path.dirname(p))"])
        .output()
    {
        if out.status.success() {
            v.extend(String::from_utf8_lossy(&out.stdout).lines().map(|l| PathBuf::from(l.trim())));
        }
    }
    v
}

fn candidates(sites: &[PathBuf]) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(p) = std::env::var("RECONVERGE_NVRTC") {
        v.push(PathBuf::from(p));
    }
    v.push(PathBuf::from("libnvrtc.so.12"));
    v.extend(sites.iter().map(|s| s.join("nvidia/cuda_nvrtc/lib/libnvrtc.so.12")));
    v
}

/// `-I` options for the CUDA headers the PyPI wheels ship (`nvidia-cuda-runtime-cu12`:
/// `cooperative_groups.h`, `cuda_fp16.h`, ...; `nvidia-cuda-cccl-cu12`: `cuda/std`, CUB, Thrust), found
/// the same way as the library, plus `RECONVERGE_CUDA_INCLUDE` (a `:`-separated list) when set.
pub fn include_options() -> Vec<String> {
    include_dirs(&site_packages()).into_iter().map(|d| format!("-I{}", d.display())).collect()
}

fn include_dirs(sites: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var("RECONVERGE_CUDA_INCLUDE")
        .map(|v| v.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect())
        .unwrap_or_default();
    for pkg in ["cuda_runtime", "cuda_cccl"] {
        if let Some(d) = sites.iter().map(|s| s.join("nvidia").join(pkg).join("include")).find(|d| d.is_dir()) {
            dirs.push(d);
        }
    }
    dirs
}

type Create = unsafe extern "C" fn(
    *mut *mut u8,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type Compile = unsafe extern "C" fn(*mut u8, c_int, *const *const c_char) -> c_int;
type GetSize = unsafe extern "C" fn(*mut u8, *mut usize) -> c_int;
type Get = unsafe extern "C" fn(*mut u8, *mut c_char) -> c_int;
type Destroy = unsafe extern "C" fn(*mut *mut u8) -> c_int;

/// Compiles `source` (named `name` in messages) to PTX with `options`.
pub fn compile(source: &str, name: &str, options: &[String]) -> Result<String> {
    let lib = candidates(&site_packages())
        .into_iter()
        // SAFETY: loading NVRTC runs its initialisers, which are NVIDIA's and sound for any process.
        .find_map(|p| unsafe { libloading::Library::new(&p) }.ok())
        .ok_or_else(|| anyhow!("{INSTALL_HINT}"))?;
    // SAFETY: the symbols are NVRTC's documented C API with these signatures; buffers are sized by the
    // matching size queries and every program is destroyed before returning.
    unsafe {
        let create: libloading::Symbol<Create> = lib.get(b"nvrtcCreateProgram")?;
        let compile: libloading::Symbol<Compile> = lib.get(b"nvrtcCompileProgram")?;
        let log_size: libloading::Symbol<GetSize> = lib.get(b"nvrtcGetProgramLogSize")?;
        let get_log: libloading::Symbol<Get> = lib.get(b"nvrtcGetProgramLog")?;
        let ptx_size: libloading::Symbol<GetSize> = lib.get(b"nvrtcGetPTXSize")?;
        let get_ptx: libloading::Symbol<Get> = lib.get(b"nvrtcGetPTX")?;
        let destroy: libloading::Symbol<Destroy> = lib.get(b"nvrtcDestroyProgram")?;
        let src = CString::new(source).context("the CUDA source contains a NUL byte")?;
        let cname = CString::new(name).unwrap_or_default();
        let mut prog: *mut u8 = std::ptr::null_mut();
        if create(&mut prog, src.as_ptr(), cname.as_ptr(), 0, std::ptr::null(), std::ptr::null()) != 0 {
            bail!("nvrtcCreateProgram failed");
        }
        let opts: Vec<CString> = options.iter().map(|o| CString::new(o.as_str()).unwrap_or_default()).collect();
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let rc = compile(prog, ptrs.len() as c_int, ptrs.as_ptr());
        let mut n = 0usize;
        log_size(prog, &mut n);
        let mut log = vec![0u8; n.max(1)];
        get_log(prog, log.as_mut_ptr() as *mut c_char);
        let log = CStr::from_bytes_until_nul(&log).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
        if rc != 0 {
            destroy(&mut prog);
            bail!("NVRTC could not compile {name}:\n{log}");
        }
        ptx_size(prog, &mut n);
        let mut ptx = vec![0u8; n.max(1)];
        get_ptx(prog, ptx.as_mut_ptr() as *mut c_char);
        destroy(&mut prog);
        let ptx = CStr::from_bytes_until_nul(&ptx).map(|c| c.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(ptx)
    }
}
