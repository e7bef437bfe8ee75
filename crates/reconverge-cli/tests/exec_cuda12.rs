//! `reconverge exec` with programs built by a CUDA 12 toolchain: their host code compiled against CUDA 12's
//! runtime headers, linked with `-cudart shared` against a `libcudart.so.12`, so that they name
//! `libcudart.so.12` and import every call versioned `libcudart.so.12`; `exec` runs them on reconverge's
//! CUDA 12 runtime (`reconverge-cudart12`).
//!
//! PyPI has no CUDA 12 `nvcc` driver (`nvidia-cuda-nvcc-cu12` holds `ptxas` and headers only), so the
//! programs are built as docs/cudart.md tells users to: CUDA 13's `nvcc` (its `cudafe++`, `cicc` and
//! their own `crt/` headers) with CUDA 12's runtime headers (`nvidia-cuda-runtime-cu12`) and CCCL
//! (`nvidia-cuda-cccl-cu12`) in place of CUDA 13's, through `--dont-use-profile` and the variables
//! `nvcc.profile` would set ([`nvcc12`]). The tests check with `readelf` that the result is a CUDA 12
//! binary.
//!
//! Runs where CUDA 13's `nvcc` and CUDA 12's runtime wheel are installed (CI installs both into
//! `.tools/cuda`; `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure) and both runtimes are built
//! beside the `reconverge` binary.

#![allow(clippy::print_stderr, reason = "its helpers say on stderr what was skipped and why")]

mod common;

use common::{root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The toolchain of a CUDA 12 build: CUDA 13's compiler driver and CUDA 12's runtime wheel.
struct Toolchain {
    /// `site-packages/nvidia/cu13/bin` (nvcc, cudafe++, fatbinary, nvlink, ptxas).
    bin: PathBuf,
    /// `site-packages/nvidia/cu13`: the compiler's `crt/` headers, `nvvm/`.
    cu13: PathBuf,
    /// `site-packages/nvidia/cuda_runtime`: CUDA 12's headers and `libcudart.so.12`.
    runtime12: PathBuf,
    /// `site-packages/nvidia/cuda_cccl`: CUDA 12's CCCL headers, when installed.
    cccl12: Option<PathBuf>,
}

/// The toolchain under `.tools/cuda` (or `RECONVERGE_NVCC`'s CUDA 13 `nvcc` beside it), or a skip note.
fn toolchain() -> Option<Toolchain> {
    let found = std::fs::read_dir(root().join(".tools/cuda/lib")).ok().and_then(|entries| {
        entries.flatten().map(|e| e.path().join("site-packages/nvidia")).find_map(|nvidia| {
            let runtime12 = nvidia.join("cuda_runtime");
            let bin = match std::env::var("RECONVERGE_NVCC") {
                Ok(p) => Path::new(&p).parent()?.to_path_buf(),
                Err(_) => nvidia.join("cu13/bin"),
            };
            let ready = bin.join("nvcc").is_file()
                && runtime12.join("include/cuda_runtime_api.h").is_file()
                && runtime12.join("lib/libcudart.so.12").is_file();
            let cccl12 = Some(nvidia.join("cuda_cccl/include")).filter(|p| p.is_dir());
            ready.then(|| Toolchain { cu13: bin.join(".."), bin, runtime12, cccl12 })
        })
    });
    if found.is_none() {
        assert!(
            std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(),
            "CUDA 13's nvcc and CUDA 12's runtime are required here (pip install -r scripts/requirements-cuda.txt)"
        );
        eprintln!("skipped: CUDA 13's nvcc or CUDA 12's runtime wheel (nvidia-cuda-runtime-cu12) is not installed");
    }
    found
}

/// Both runtimes beside the binary (built with the command line), or a skip note.
fn runtimes_built() -> bool {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_reconverge"));
    let dir = exe.parent().expect("the binary's directory");
    let found = ["libreconverge_cudart.so", "libreconverge_cudart12.so"]
        .iter()
        .all(|f| dir.join(f).is_file() || dir.join("deps").join(f).is_file());
    if !found {
        assert!(
            std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(),
            "the runtimes are not built beside {}",
            exe.display()
        );
        eprintln!("skipped: the runtimes are not built (cargo build -p reconverge-cli)");
    }
    found
}

/// The compiler's own headers of CUDA 13's wheel, alone in a directory under `out`: `crt/` and
/// `fatbinary_section.h`, which the code its `cudafe++` writes includes (and nothing else of CUDA 13's
/// include directory, whose runtime headers CUDA 12's replace).
fn compiler_headers(t: &Toolchain, out: &Path) -> PathBuf {
    let dir = out.join("compiler-headers");
    std::fs::create_dir_all(&dir).expect("dir");
    for name in ["crt", "fatbinary_section.h"] {
        let link = dir.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(t.cu13.join("include").join(name), &link).expect("link");
    }
    dir
}

/// The places of a CUDA 12 build: the compiler's own headers ([`compiler_headers`]), the directory whose
/// `libcudart.so` the program links against (NVIDIA's CUDA 12 library or `reconverge cuda-lib --cuda 12`)
/// and the output directory.
struct Dirs<'a> {
    compiler: &'a Path,
    lib: &'a Path,
    out: &'a Path,
}

/// Compiles `source` into `exe` as a CUDA 12 program: CUDA 13's `nvcc` without its profile
/// (`--dont-use-profile`), given by the variables the profile would set what it needs, with CUDA 12's
/// headers in the place of CUDA 13's: CUDA 12's runtime headers, the compiler's own headers, CUDA 12's
/// CCCL; `-cudart shared` against the `libcudart.so` of `d.lib` and CUDA 12's `libcudadevrt.a`.
fn nvcc12(t: &Toolchain, d: &Dirs, source: &Path, exe: &str) {
    let (compiler, lib, out) = (d.compiler, d.lib, d.out);
    let includes = format!("-I{} -I{}", t.runtime12.join("include").display(), compiler.display());
    let system = t.cccl12.as_ref().map(|c| format!("-isystem {}", c.display())).unwrap_or_default();
    let path = format!("{}:{}", t.bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new(t.bin.join("nvcc"))
        .env("INCLUDES", includes)
        .env("SYSTEM_INCLUDES", system)
        .env("LIBRARIES", format!("-L{} -L{}", lib.display(), t.runtime12.join("lib").display()))
        .env("CICC_PATH", t.cu13.join("nvvm/bin"))
        .env("NVVMIR_LIBRARY_DIR", t.cu13.join("nvvm/libdevice"))
        .env("PATH", path)
        .args(["--dont-use-profile", "-cudart", "shared", "-O2", "-gencode", "arch=compute_80,code=compute_80"])
        .arg("-o")
        .arg(out.join(exe))
        .arg(source)
        .output()
        .expect("nvcc runs");
    assert!(o.status.success(), "nvcc (CUDA 12 headers) {}: {}", source.display(), String::from_utf8_lossy(&o.stderr));
}

/// `reconverge cuda-lib ARGS` with its cache under `out`: the directory it prints.
fn cuda_lib(out: &Path, args: &[&str]) -> PathBuf {
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .arg("cuda-lib")
        .args(args)
        .env("XDG_CACHE_HOME", out.join("cache"))
        .output()
        .expect("reconverge runs");
    assert!(o.status.success(), "cuda-lib {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
}

/// The CUDA 12 programs' directory, built once (`None`: skipped). `bfs` and `stencil` are linked against
/// NVIDIA's `libcudart.so.12` (as a user with the toolkit would), `cuda12` against `reconverge cuda-lib
/// --cuda 12` (no NVIDIA runtime library).
fn built() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let t = toolchain()?;
            if !runtimes_built() {
                return None;
            }
            let out = temp_dir("exec-cuda12");
            let nvidia = out.join("nvidia-lib");
            std::fs::create_dir_all(&nvidia).expect("dir");
            let link = nvidia.join("libcudart.so");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(t.runtime12.join("lib/libcudart.so.12"), &link).expect("link");
            let ours = cuda_lib(&out, &["--cuda", "12"]);
            let programs = root().join("crates/reconverge-cudart/tests/programs");
            let compiler = compiler_headers(&t, &out);
            let with_nvidia = Dirs { compiler: &compiler, lib: &nvidia, out: &out };
            let with_ours = Dirs { compiler: &compiler, lib: &ours, out: &out };
            std::thread::scope(|s| {
                let (t, programs, with_nvidia, with_ours) = (&t, &programs, &with_nvidia, &with_ours);
                s.spawn(move || nvcc12(t, with_nvidia, &programs.join("bfs.cu"), "bfs"));
                s.spawn(move || nvcc12(t, with_nvidia, &programs.join("stencil.cu"), "stencil"));
                s.spawn(move || nvcc12(t, with_ours, &programs.join("cuda12.cu"), "cuda12"));
            });
            Some(out)
        })
        .as_deref()
}

/// `readelf ARGS FILE`'s output.
fn readelf(args: &[&str], file: &Path) -> String {
    let o = Command::new("readelf").args(args).arg(file).output().expect("readelf runs");
    assert!(o.status.success(), "readelf {args:?} {}", file.display());
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The program's imported functions, `name@version`.
fn imports(file: &Path) -> Vec<String> {
    readelf(&["--dyn-syms", "-W"], file)
        .lines()
        .filter(|l| l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7))
        .map(|s| s.split(" (").next().unwrap_or(s).to_string())
        .collect()
}

/// Runs `reconverge exec FLAGS -- PROGRAM`: (status, stdout, stderr).
fn exec(flags: &[&str], program: &str) -> (i32, String, String) {
    common::exec_program(built().expect("built"), flags, program)
}

/// The runs of each test: pdom and its, functional and timed.
const RUNS: [&[&str]; 4] = [
    &["--mechanism", "pdom", "--functional"],
    &["--mechanism", "pdom", "--config", "gtx480"],
    &["--mechanism", "its", "--functional"],
    &["--mechanism", "its", "--config", "gtx480"],
];

/// The recipe makes true CUDA 12 binaries: they need `libcudart.so.12`, import every runtime call as
/// `@libcudart.so.12` and nothing of CUDA 13's, and take CUDA 12's names (`cudaGetDeviceProperties_v2`,
/// `cudaStreamGetCaptureInfo_v2`, the plain `cudaMemPrefetchAsync` and `cudaGraphAddDependencies` of
/// CUDA 12's signatures).
#[test]
fn cuda12_recipe_makes_cuda_12_binaries() {
    let Some(dir) = built() else { return };
    for program in ["bfs", "stencil", "cuda12"] {
        let file = dir.join(program);
        let needed: Vec<String> = readelf(&["-d"], &file)
            .lines()
            .filter(|l| l.contains("(NEEDED)"))
            .filter_map(|l| l.split('[').nth(1).map(|s| s.trim_end_matches(']').to_string()))
            .collect();
        assert!(needed.contains(&"libcudart.so.12".to_string()), "{program}: {needed:?}");
        assert!(!needed.iter().any(|n| n.starts_with("libcudart.so.13")), "{program}: {needed:?}");
        let cuda: Vec<String> = imports(&file).into_iter().filter(|s| s.contains("cuda")).collect();
        assert!(cuda.len() > 10, "{program}: {cuda:?}");
        assert!(cuda.iter().all(|s| s.ends_with("@libcudart.so.12")), "{program}: {cuda:?}");
    }
    let cuda12 = imports(&dir.join("cuda12"));
    let names = [
        "cudaGetDeviceProperties_v2",
        "cudaStreamGetCaptureInfo_v2",
        "cudaMemPrefetchAsync",
        "cudaGraphAddDependencies",
    ];
    for name in names {
        assert!(cuda12.contains(&format!("{name}@libcudart.so.12")), "{name}: {cuda12:?}");
    }
}

#[test]
fn cuda12_bfs_and_stencil_pass_under_pdom_and_its() {
    if built().is_none() {
        return;
    }
    for program in ["bfs", "stencil"] {
        for flags in RUNS {
            let (code, out, err) = exec(flags, program);
            assert_eq!(code, 0, "{program} {flags:?}:\n{out}\n{err}");
            assert_eq!(out.lines().last(), Some("PASS"), "{program} {flags:?}:\n{out}\n{err}");
            assert!(err.contains("launches of 2 kernels") || err.contains("launches of 1 kernel"), "{err}");
        }
    }
    let (_, out, _) = exec(RUNS[0], "bfs");
    assert!(out.contains("nodes 2000 edges 4039 reached 1503 depth 21"), "{out}");
}

/// `cudaGetDeviceProperties` in CUDA 12's layout (fields CUDA 13 removed and the fields after them, each
/// checked by the program against `cudaDeviceGetAttribute`), structures CUDA 13 grew written and read
/// within CUDA 12's size, CUDA 12's signatures of the managed-memory hints and capture query.
#[test]
fn cuda12_device_properties_and_changed_structures_pass() {
    if built().is_none() {
        return;
    }
    for flags in RUNS {
        let (code, out, err) = exec(flags, "cuda12");
        assert_eq!(code, 0, "{flags:?}:\n{out}\n{err}");
        assert_eq!(out.lines().last(), Some("PASS"), "{flags:?}:\n{out}\n{err}");
        assert!(!out.contains("expected"), "{flags:?}:\n{out}");
        for line in [
            "runtime major 12",
            "sizeof(cudaDeviceProp) 1032",
            "clockRate 700000",
            "deviceOverlap 1",
            "computeMode 0",
            "cooperativeMultiDeviceLaunch 0",
            "multiProcessorCount 15",
            "warpSize 32",
            "guard after cudaDeviceProp intact 1",
            "guard after cudaPointerAttributes intact 1",
            "guard after cudaResourceDesc intact 1",
            "managed results wrong 0",
            "graph roots after the edge 1",
        ] {
            assert!(out.lines().any(|l| l == line), "{line:?} in {flags:?}:\n{out}");
        }
    }
}

/// `cuda-lib` links `libcudart.so.13` and `libcudart.so.12` to the two runtimes, and `libcudart.so` to
/// the one `--cuda` names; CUDA 12's runtime exports every entry point of NVIDIA's `libcudart.so.12`
/// (`symbols12.txt`) under its version, with its soname.
#[test]
fn cuda12_runtime_and_link_directories() {
    if !runtimes_built() {
        return;
    }
    let out = temp_dir("cuda12-lib");
    let (lib13, lib12) = (cuda_lib(&out, &[]), cuda_lib(&out, &["--cuda", "12"]));
    assert_ne!(lib13, lib12);
    let target = |dir: &Path, name: &str| std::fs::read_link(dir.join(name)).expect("a link");
    for dir in [&lib13, &lib12] {
        assert!(target(dir, "libcudart.so.13").ends_with("libreconverge_cudart.so"));
        assert!(target(dir, "libcudart.so.12").ends_with("libreconverge_cudart12.so"));
    }
    assert!(target(&lib13, "libcudart.so").ends_with("libreconverge_cudart.so"));
    let shim12 = target(&lib12, "libcudart.so");
    assert!(shim12.ends_with("libreconverge_cudart12.so"), "{}", shim12.display());
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge")).args(["cuda-lib", "--cuda", "11"]).output().expect("runs");
    assert_eq!(o.status.code(), Some(2), "--cuda 11 is refused");

    let table = readelf(&["--dyn-syms", "-W"], &shim12);
    let exported: std::collections::HashSet<&str> = table
        .lines()
        .filter(|l| l.contains(" FUNC ") && !l.contains(" UND "))
        .filter_map(|l| l.split_whitespace().nth(7))
        .filter_map(|s| s.strip_suffix("@@libcudart.so.12"))
        .collect();
    let symbols = std::fs::read_to_string(root().join("crates/reconverge-cudart/symbols12.txt")).expect("symbols12");
    let missing: Vec<&str> = symbols.lines().filter(|s| !s.is_empty() && !exported.contains(s)).collect();
    assert!(symbols.lines().count() > 400 && missing.is_empty(), "not exported as @@libcudart.so.12: {missing:?}");
    assert!(!table.contains("libcudart.so.13"), "no CUDA 13 version in CUDA 12's runtime");
    assert!(readelf(&["-d"], &shim12).contains("Library soname: [libcudart.so.12]"));
}

/// A C program that calls, after `cudaGetDeviceCount`, CUDA 12's export `argv[1]` whose CUDA 12 ABI the
/// runtime does not serve (`abi12.txt`: `stub`), declared as CUDA 12's library has it.
const STUBBED: &str = r#"
#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>
#undef cudaGetDeviceProperties
#undef cudaStreamGetCaptureInfo
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                     unsigned long long *id);
int main(int argc, char **argv) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || argc < 2) return 1;
    printf("devices %d\n", n);
    fflush(stdout);
    if (strcmp(argv[1], "props") == 0) {
        struct cudaDeviceProp p;
        return cudaGetDeviceProperties(&p, 0);
    }
    enum cudaStreamCaptureStatus status;
    unsigned long long id;
    return cudaStreamGetCaptureInfo(0, &status, &id);
}
"#;

/// Where CUDA 12's ABI differs and the runtime has no CUDA 12 version of a call, CUDA 12's library has the
/// unsupported stub (the plain `cudaGetDeviceProperties` and `cudaStreamGetCaptureInfo` are CUDA 11's
/// calls, kept in `libcudart.so.12` for older programs), never CUDA 13's definition.
#[test]
fn cuda12_calls_whose_abi_differs_unadapted_are_stubs() {
    let Some(t) = toolchain() else { return };
    if !runtimes_built() {
        return;
    }
    let out = temp_dir("cuda12-stubs");
    std::fs::write(out.join("stubbed.c"), STUBBED).expect("write");
    let compiler = compiler_headers(&t, &out);
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let o = Command::new(cc)
        .arg(format!("-I{}", t.runtime12.join("include").display()))
        .arg(format!("-I{}", compiler.display()))
        .arg(out.join("stubbed.c"))
        .arg(format!("-L{}", cuda_lib(&out, &["--cuda", "12"]).display()))
        .args(["-lcudart", "-o"])
        .arg(out.join("stubbed"))
        .output()
        .expect("the C compiler runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(imports(&out.join("stubbed")).contains(&"cudaGetDeviceProperties@libcudart.so.12".to_string()));
    for (arg, call) in [("props", "cudaGetDeviceProperties"), ("capture", "cudaStreamGetCaptureInfo")] {
        let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
            .args(["exec", "--functional", "--"])
            .arg(out.join("stubbed"))
            .arg(arg)
            .output()
            .expect("reconverge runs");
        let (stdout, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert_eq!(o.status.code(), Some(2), "{call}: {stdout}{err}");
        assert!(stdout.contains("devices 1"), "{stdout}");
        assert!(err.contains(&format!("the CUDA runtime call `{call}` is not supported")), "{call}: {err}");
    }
}
