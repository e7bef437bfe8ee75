//! What real kernels need from the command line: C++ (mangled) kernel names, module variables set and read
//! back (`__device__` pointers, `__constant__` tables), and CUDA C that includes CUDA headers.

mod common;

use common::reconverge;

fn temp_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("reconverge-real-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

const MANGLED: &str = "crates/reconverge-cli/tests/data/mangled.ptx";

#[test]
fn kernels_are_found_by_their_demangled_names() {
    let args = |k: &str| {
        ["run", MANGLED, "--kernel", k, "--arg", "zeros:u8:32", "--arg", "zeros:u8:32", "--arg", "zeros:u8:32"]
            .into_iter()
            .map(String::from)
            .chain(["--arg", "zeros:u8:32", "--arg", "20", "--functional", "--json"].map(String::from))
            .collect::<Vec<String>>()
    };
    for name in [
        "Kernel2",
        "Kernel2(bool*, bool*, bool*, bool*, int)",
        "Kernel2(bool*,bool*,bool*,bool*,int)",
        "_Z7Kernel2PbS_S_S_i",
    ] {
        let a = args(name);
        let (code, out, err) = reconverge(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "--kernel {name}: {err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["kernel"], "_Z7Kernel2PbS_S_S_i");
    }
    // An overloaded name is ambiguous; the error lists both, with their signatures.
    let (code, _, err) = reconverge(&["run", MANGLED, "--kernel", "add", "--arg", "zeros:i32:1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("`add` names several kernels") && err.contains("add(int*)") && err.contains("add(float*)"),
        "{err}"
    );
    let (code, _, err) =
        reconverge(&["run", MANGLED, "--kernel", "add(float*)", "--arg", "zeros:f32:1", "--functional"]);
    assert_eq!(code, 0, "{err}");
    // Lists of kernels show both names.
    let (code, _, err) = reconverge(&["run", MANGLED, "--arg", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("_Z7Kernel2PbS_S_S_i (Kernel2(bool*, bool*, bool*, bool*, int))"), "{err}");
    let (code, out, err) = reconverge(&["cfg", MANGLED, "--kernel", "Kernel2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("_Z7Kernel2PbS_S_S_i"));
}

fn npy_i32(values: &[i32]) -> Vec<u8> {
    let b = reconverge_program::Buffer {
        dtype: reconverge_program::Dtype::I32,
        bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
    };
    reconverge_suite::npy::write(&b)
}

fn read_i32(path: &std::path::Path) -> Vec<i32> {
    let b = reconverge_suite::npy::read(&std::fs::read(path).expect("dump written")).expect("npy");
    (0..b.len()).map(|i| b.bits(i) as u32 as i32).collect()
}

#[test]
fn module_variables_are_set_and_read_back() {
    let dir = temp_dir();
    let input: Vec<i32> = (0..32).map(|i| i * 10).collect();
    let scale = [1, 2, 3, 4];
    std::fs::write(dir.join("in.npy"), npy_i32(&input)).expect("write");
    std::fs::write(dir.join("scale.npy"), npy_i32(&scale)).expect("write");
    let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
    for mode in [["--functional"].as_slice(), ["--config", "tiny"].as_slice()] {
        let args: Vec<String> = [
            "run",
            "crates/reconverge-cli/tests/data/globals.ptx",
            "--arg",
            "zeros:i32:32",
            "--global",
            &format!("g_in=@{}", p("in.npy")),
            "--global",
            &format!("c_scale=@{}", p("scale.npy")),
            "--global",
            "g_count=5",
            "--dump",
            &format!("0={}", p("out.npy")),
            "--dump-global",
            &format!("g_in={}", p("g_in.npy")),
            "--dump-global",
            &format!("g_count={}", p("count.npy")),
        ]
        .iter()
        .map(|s| s.to_string())
        .chain(mode.iter().map(|s| s.to_string()))
        .collect();
        let (code, _, err) = reconverge(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(code, 0, "{mode:?}: {err}");
        let want: Vec<i32> = (0..32).map(|t| input[t] * scale[t % 4]).collect();
        assert_eq!(read_i32(&dir.join("out.npy")), want, "{mode:?}");
        assert_eq!(read_i32(&dir.join("g_in.npy")), input, "the buffer a device pointer points to");
        assert_eq!(read_i32(&dir.join("count.npy")), vec![5 + 32], "a __device__ counter, initialised to 5");
    }
    // Errors name the variable.
    let (code, _, err) = reconverge(&[
        "run",
        "crates/reconverge-cli/tests/data/globals.ptx",
        "--arg",
        "zeros:i32:32",
        "--global",
        "nope=1",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--global nope") && err.contains("g_in") && err.contains("c_scale"), "{err}");
    let (code, _, err) = reconverge(&[
        "run",
        "crates/reconverge-cli/tests/data/globals.ptx",
        "--arg",
        "zeros:i32:32",
        "--global",
        "c_scale=zeros:i32:5",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("20 bytes do not fit the 16-byte variable"), "{err}");
}

/// `.cu` input finds the CUDA headers of the PyPI wheels like it finds NVRTC. Runs where NVRTC is
/// installed (CI installs it: `RECONVERGE_REQUIRE_NVRTC=1` makes its absence a failure).
#[test]
fn cuda_c_includes_cuda_headers_without_flags() {
    let dir = temp_dir();
    let src = dir.join("cg.cu");
    std::fs::write(
        &src,
        r#"#include <cooperative_groups.h>
#include <cuda/std/limits>
namespace cg = cooperative_groups;
__global__ void Kernel2(bool *a, bool *b, bool *c, bool *d, int n) {
    cg::thread_block blk = cg::this_thread_block();
    int t = blk.thread_rank();
    if (t < n && t < cuda::std::numeric_limits<int>::max()) { a[t] = true; }
    blk.sync();
}
"#,
    )
    .expect("write");
    let src = src.to_string_lossy().into_owned();
    let out = dir.join("a.npy").to_string_lossy().into_owned();
    let (code, _, err) = reconverge(&[
        "run",
        &src,
        "--kernel",
        "Kernel2",
        "--arg",
        "zeros:u8:32",
        "--arg",
        "zeros:u8:32",
        "--arg",
        "zeros:u8:32",
        "--arg",
        "zeros:u8:32",
        "--arg",
        "20",
        "--dump",
        &format!("0={out}"),
        "--functional",
    ]);
    if code == 2 && err.contains("CUDA C input needs NVRTC") {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVRTC").is_err(), "NVRTC is required here: {err}");
        eprintln!("skipped: NVRTC is not installed");
        return;
    }
    assert_eq!(code, 0, "{err}");
    let b = reconverge_suite::npy::read(&std::fs::read(&out).expect("dump")).expect("npy");
    let set: Vec<u64> = (0..b.len()).map(|i| b.bits(i)).collect();
    assert_eq!(set, (0..32).map(|t| (t < 20) as u64).collect::<Vec<_>>());
}
