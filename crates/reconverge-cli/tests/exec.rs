//! `reconverge exec`: unmodified CUDA programs (crates/reconverge-cudart/tests/programs), compiled here by
//! NVIDIA's `nvcc` from the PyPI wheels, run on the simulated GPU through the drop-in `libcudart.so.13`.
//! Each program checks its own results against a host computation; these tests check its exit status and
//! output under pdom, tbc, its and ssy, functional and timed, and the statistics `exec` writes.
//!
//! Runs where `nvcc` is installed (CI installs it into `.tools/cuda`; `RECONVERGE_REQUIRE_NVCC=1` makes
//! its absence a failure) and the shim is built beside the `reconverge` binary.

mod common;

use common::{root, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn programs_dir() -> PathBuf {
    root().join("crates/reconverge-cudart/tests/programs")
}

/// `nvcc` of the CUDA 13 wheel: `RECONVERGE_NVCC`, or under `.tools/cuda`.
fn nvcc() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("RECONVERGE_NVCC") {
        return Some(PathBuf::from(p));
    }
    let lib = root().join(".tools/cuda/lib");
    for e in std::fs::read_dir(lib).ok()?.flatten() {
        let p = e.path().join("site-packages/nvidia/cu13/bin/nvcc");
        if p.is_file() {
            return Some(p);
        }
    }
    None
}

/// The compiled programs' directory, built once (`None`: no nvcc here).
fn built() -> Option<&'static Path> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let Some(nvcc) = nvcc() else {
                assert!(
                    std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(),
                    "nvcc is required here (pip install -r scripts/requirements-cuda.txt)"
                );
                eprintln!("skipped: nvcc (CUDA 13 wheel) is not installed");
                return None;
            };
            let bin = nvcc.parent().expect("nvcc's directory").to_path_buf();
            let cudart = bin.join("../lib/libcudart.so.13");
            let out = temp_dir("exec-programs");
            // Link against NVIDIA's own runtime, as a user would; the shim replaces it at run time.
            std::os::unix::fs::symlink(&cudart, out.join("libcudart.so")).expect("link libcudart.so");
            let names = [
                "bfs",
                "stencil",
                "gaussian",
                "constant",
                "struct_arg",
                "managed",
                "streams",
                "printf",
                "unsupported",
                "oob",
            ];
            std::thread::scope(|s| {
                for chunk in names.chunks(5) {
                    let (bin, out) = (&bin, &out);
                    s.spawn(move || {
                        for n in chunk {
                            compile(bin, out, n, &["-gencode", "arch=compute_80,code=compute_80"], n);
                        }
                    });
                }
            });
            compile(&bin, &out, "bfs", &["-gencode", "arch=compute_80,code=sm_80"], "bfs_sass");
            compile(
                &bin,
                &out,
                "stencil",
                &["-gencode", "arch=compute_80,code=compute_80", "--compress-mode=none"],
                "stencil_plain",
            );
            Some(out)
        })
        .as_deref()
}

fn compile(bin: &Path, out: &Path, name: &str, gencode: &[&str], exe: &str) {
    let o = Command::new(bin.join("nvcc"))
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        .args(["-cudart", "shared", "-O2"])
        .args(gencode)
        .arg("-L")
        .arg(out)
        .arg("-o")
        .arg(out.join(exe))
        .arg(programs_dir().join(format!("{name}.cu")))
        .output()
        .expect("nvcc runs");
    assert!(o.status.success(), "nvcc {name}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Runs `reconverge exec FLAGS -- PROGRAM`: (status, stdout, stderr).
fn exec(flags: &[&str], program: &str) -> (i32, String, String) {
    let dir = built().expect("built");
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .arg("exec")
        .args(flags)
        .arg("--")
        .arg(dir.join(program))
        .output()
        .expect("reconverge runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// The shim beside the binary, or a skip note (it is built with the workspace).
fn shim_built() -> bool {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_reconverge"));
    let found = exe.parent().is_some_and(|d| {
        d.join("libreconverge_cudart.so").is_file() || d.join("deps/libreconverge_cudart.so").is_file()
    });
    if !found {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the shim is not built beside {}", exe.display());
        eprintln!("skipped: the shim is not built (cargo build -p reconverge-cudart)");
    }
    found
}

const MECHANISMS: [&str; 4] = ["pdom", "tbc", "its", "ssy"];

/// Runs `program` under every mechanism, functional and timed, and hands `check` the flags and
/// (status, stdout, stderr) of each run.
fn everywhere(program: &str, check: impl Fn(&[&str], (i32, String, String))) {
    for mech in MECHANISMS {
        for mode in [&["--functional"][..], &["--config", "gtx480"][..]] {
            let mut flags = vec!["--mechanism", mech];
            flags.extend_from_slice(mode);
            check(&flags, exec(&flags, program));
        }
    }
}

/// Runs `program` under every mechanism, functional and timed: exit 0 and `PASS` last.
fn passes_everywhere(program: &str) {
    if built().is_none() || !shim_built() {
        return;
    }
    everywhere(program, |flags, (code, out, err)| {
        assert_eq!(code, 0, "{program} {flags:?}:\n{out}\n{err}");
        assert_eq!(out.lines().last(), Some("PASS"), "{program} {flags:?}:\n{out}\n{err}");
    });
}

#[test]
fn bfs_host_loop_passes() {
    passes_everywhere("bfs");
}

#[test]
fn stencil_with_events_passes() {
    passes_everywhere("stencil");
}

#[test]
fn gaussian_two_kernels_per_step_passes() {
    passes_everywhere("gaussian");
}

#[test]
fn constant_tables_and_symbols_pass() {
    passes_everywhere("constant");
}

#[test]
fn struct_arguments_and_cuda_launch_kernel_pass() {
    passes_everywhere("struct_arg");
}

#[test]
fn managed_memory_passes() {
    passes_everywhere("managed");
}

#[test]
fn streams_and_device_queries_pass() {
    passes_everywhere("streams");
}

/// The fault surfaces at the next synchronising call, as CUDA's asynchronous launches report it; the
/// program handles it and exits 0, and `exec` still exits 2: a launch faulted.
#[test]
fn out_of_bounds_returns_illegal_address_to_the_program() {
    if built().is_none() || !shim_built() {
        return;
    }
    for mech in MECHANISMS {
        for mode in [&["--functional"][..], &["--config", "gtx480"][..]] {
            let mut flags = vec!["--mechanism", mech];
            flags.extend_from_slice(mode);
            let (code, out, err) = exec(&flags, "oob");
            assert_eq!(code, 2, "{out}\n{err}");
            assert_eq!(out.lines().collect::<Vec<_>>(), ["got cudaErrorIllegalAddress", "PASS"], "{err}");
            assert!(
                err.contains("out-of-bounds") && err.contains("thread (37,0,0)"),
                "the fault names the thread: {err}"
            );
            assert!(err.contains("oob.cu:") || err.contains("ptx:"), "and the line: {err}");
        }
    }
}

#[test]
fn device_printf_prints_in_thread_order() {
    if built().is_none() || !shim_built() {
        return;
    }
    let text = std::fs::read_to_string(programs_dir().join("printf.cu")).expect("printf.cu");
    let expected: Vec<&str> =
        text.lines().take_while(|l| l.starts_with("//")).filter_map(|l| l.strip_prefix("//   ")).collect();
    assert_eq!(expected.len(), 12, "the expected output in printf.cu's comment");
    for mech in MECHANISMS {
        let (code, out, err) = exec(&["--mechanism", mech, "--config", "gtx480"], "printf");
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "under {mech}");
    }
}

#[test]
fn an_unsupported_call_is_named_and_ends_the_program_with_status_2() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, out, err) = exec(&["--functional"], "unsupported");
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(out.contains("kernel ok"), "{out}");
    assert!(err.contains("the CUDA runtime call `cudaGraphCreate` is not supported"), "{err}");
}

#[test]
fn a_program_with_only_sass_is_refused_with_the_gencode_to_add() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, _, err) = exec(&["--functional"], "bfs_sass");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("code=compute_"), "{err}");
}

#[test]
fn statistics_are_one_line_per_launch_and_the_summary_aggregates_them() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("exec-stats");
    let stats = dir.join("gauss.jsonl");
    let html = dir.join("gauss.html");
    let (s, h) = (stats.to_string_lossy().into_owned(), html.to_string_lossy().into_owned());
    let (code, out, err) = exec(&["--mechanism", "tbc", "--stats", &s, "--html", &h], "gaussian");
    assert_eq!(code, 0, "{out}{err}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&stats)
        .expect("stats")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // 16x16 system: 15 steps of Fan1 + Fan2.
    assert_eq!(lines.len(), 30, "{err}");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["launch"], i as u64 + 1);
        assert_eq!(l["mechanism"], "tbc");
        assert_eq!(l["outcome"], "completed");
        assert!(l["cycles"].as_u64().is_some_and(|c| c > 0), "timed: {l}");
    }
    let fan2: u64 = lines
        .iter()
        .filter(|l| l["kernel"].as_str().is_some_and(|k| k.contains("Fan2")))
        .map(|l| l["warp_instructions"].as_u64().expect("count"))
        .sum();
    let row = err.lines().find(|l| l.starts_with("Fan2")).expect("a summary row for Fan2");
    assert!(row.split_whitespace().any(|c| c == fan2.to_string()), "summed warp instructions {fan2}: {row}");
    assert!(err.contains("30 launches of 2 kernels"), "{err}");
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("Per kernel") && page.contains("Fan1") && page.contains("<svg"), "the page");
}

#[test]
fn results_do_not_depend_on_host_threads_or_compression() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("exec-determinism");
    let mut runs = Vec::new();
    for (prog, threads) in [("stencil", "1"), ("stencil", "2"), ("stencil_plain", "2")] {
        let stats = dir.join(format!("{prog}{threads}.jsonl"));
        let s = stats.to_string_lossy().into_owned();
        let (code, _, err) = exec(&["--threads", threads, "--stats", &s], prog);
        assert_eq!(code, 0, "{err}");
        let text = std::fs::read_to_string(&stats).expect("stats");
        runs.push(text.replace("stencil_plain", "stencil"));
    }
    assert_eq!(runs[0], runs[1], "1 vs 2 host threads");
    assert_eq!(runs[1], runs[2], "compressed vs plain PTX");
}

/// Every entry point of NVIDIA's `libcudart.so.13` (`symbols.txt`) is exported, versioned as NVIDIA
/// versions it, so a program never fails to load or to bind a call.
#[test]
fn the_shim_exports_every_entry_point_under_nvidias_version() {
    if !shim_built() {
        return;
    }
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_reconverge"));
    let dir = exe.parent().expect("the binary's directory");
    // The copy cargo refreshed with the binary (`exec` picks the newest too).
    let shim = [dir.join("libreconverge_cudart.so"), dir.join("deps/libreconverge_cudart.so")]
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
        .expect("the shim");
    let out = Command::new("objdump").arg("-T").arg(&shim).output().expect("objdump runs");
    let table = String::from_utf8_lossy(&out.stdout);
    let exported: std::collections::HashSet<&str> = table
        .lines()
        .filter(|l| l.contains(" .text") && l.contains("libcudart.so.13"))
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    let symbols = std::fs::read_to_string(root().join("crates/reconverge-cudart/symbols.txt")).expect("symbols.txt");
    let missing: Vec<&str> = symbols.lines().filter(|s| !s.is_empty() && !exported.contains(s)).collect();
    assert!(symbols.lines().count() > 400 && missing.is_empty(), "not exported as @libcudart.so.13: {missing:?}");
    let soname = Command::new("objdump").arg("-p").arg(&shim).output().expect("objdump runs");
    assert!(String::from_utf8_lossy(&soname.stdout).contains("SONAME               libcudart.so.13"));
}
