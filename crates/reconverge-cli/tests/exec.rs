//! `reconverge exec`: unmodified CUDA programs (crates/reconverge-cudart/tests/programs), compiled here by
//! NVIDIA's `nvcc` from the PyPI wheels, run on the simulated GPU through the drop-in `libcudart.so.13`.
//! Each program checks its own results against a host computation; these tests check its exit status and
//! output under pdom, tbc, its and ssy, functional and timed, and the statistics `exec` writes.
//!
//! Runs where `nvcc` is installed (CI installs it into `.tools/cuda`; `RECONVERGE_REQUIRE_NVCC=1` makes
//! its absence a failure) and the shim is built beside the `reconverge` binary.

#![allow(clippy::print_stderr, reason = "its helpers say on stderr what was skipped and why")]

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
            // Link against NVIDIA's own runtime, as a user would; the shim replaces it at run time. A
            // directory left by an earlier process with the same id may hold the link already.
            let link = out.join("libcudart.so");
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&cudart, &link).expect("link libcudart.so");
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
                "launches",
                "texture",
                "asm_expression",
                "misuse",
                "memory_limit",
                "badfatbin",
                "uninit",
                "pitched",
                "callbacks",
                "pointers",
                "host_register",
                "graphs",
            ];
            std::thread::scope(|s| {
                for chunk in names.chunks(6) {
                    let (bin, out) = (&bin, &out);
                    s.spawn(move || {
                        for n in chunk {
                            compile(bin, out, n, &["-gencode", "arch=compute_80,code=compute_80"], n);
                        }
                    });
                }
            });
            compile(&bin, &out, "bfs", &["-gencode", "arch=compute_80,code=sm_80"], "bfs_sass");
            // <cuda/barrier> and <cuda/pipeline> need C++17.
            compile(
                &bin,
                &out,
                "async_copy",
                &["-gencode", "arch=compute_80,code=compute_80", "-std=c++17"],
                "async_copy",
            );
            compile(&bin, &out, "tensor", &["-gencode", "arch=compute_80,code=compute_80"], "tensor");
            // A program for CUDA 11 (texture references), built as docs/cudart.md tells a user to: with the
            // compatibility header and against `reconverge cuda-lib`'s libcudart.so (listed before `out`'s).
            let (include, lib) = (cuda_dir("cuda-include", &out), cuda_dir("cuda-lib", &out));
            let header = format!("{include}/reconverge_compat.h");
            let flags = ["-gencode", "arch=compute_80,code=compute_80", "-include", &header, "-L", &lib];
            compile(&bin, &out, "legacy_texture", &flags, "legacy_texture");
            // Two translation units, each with device variables, built the same way.
            compile_units(&bin, &out, &["legacy_units", "legacy_units_b"], &flags, "legacy_units");
            compile(
                &bin,
                &out,
                "stencil",
                &["-gencode", "arch=compute_80,code=compute_80", "--compress-mode=none"],
                "stencil_plain",
            );
            // nvcc's default runtime: linked into the program, so the shim is never loaded.
            compile_with(
                &bin,
                &out,
                "launches",
                "static",
                &["-gencode", "arch=compute_80,code=compute_80"],
                "launches_static",
            );
            Some(out)
        })
        .as_deref()
}

/// `reconverge cuda-include` or `cuda-lib`: the directory it prints, made under `out` (its cache directory).
fn cuda_dir(command: &str, out: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .arg(command)
        .env("XDG_CACHE_HOME", out.join("cache"))
        .output()
        .expect("reconverge runs");
    assert!(o.status.success(), "{command}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn compile(bin: &Path, out: &Path, name: &str, gencode: &[&str], exe: &str) {
    compile_with(bin, out, name, "shared", gencode, exe)
}

/// Compiles `name.cu` into `exe` with the CUDA runtime `cudart` (`shared` or `static`).
fn compile_with(bin: &Path, out: &Path, name: &str, cudart: &str, gencode: &[&str], exe: &str) {
    let o = Command::new(bin.join("nvcc"))
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        .args(["-cudart", cudart, "-O2"])
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

/// Compiles the translation units `names` (`NAME.cu` each) into one program `exe`, with the shared runtime.
fn compile_units(bin: &Path, out: &Path, names: &[&str], flags: &[&str], exe: &str) {
    let o = Command::new(bin.join("nvcc"))
        .env("PATH", format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default()))
        .args(["-cudart", "shared", "-O2"])
        .args(flags)
        .arg("-L")
        .arg(out)
        .arg("-o")
        .arg(out.join(exe))
        .args(names.iter().map(|n| programs_dir().join(format!("{n}.cu"))))
        .output()
        .expect("nvcc runs");
    assert!(o.status.success(), "nvcc {names:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Runs `reconverge exec FLAGS -- PROGRAM`: (status, stdout, stderr).
fn exec(flags: &[&str], program: &str) -> (i32, String, String) {
    common::exec_program(built().expect("built"), flags, program)
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
fn pitched_2d_and_3d_memory_passes() {
    passes_everywhere("pitched");
}

/// CUDA arrays, texture objects (linear, pitched, 2-D, 3-D and layered arrays; point and linear
/// filtering; every address mode; normalized-float reads; gather) and surface objects, checked against
/// the host's evaluation of the fetch rules, and their misuse.
#[test]
fn texture_and_surface_objects_pass() {
    passes_everywhere("texture");
}

/// Issue 40: texture references of CUDA 11 programs, built with `reconverge cuda-include`'s header and
/// linked against `reconverge cuda-lib`.
#[test]
fn legacy_texture_references_pass() {
    passes_everywhere("legacy_texture");
}

/// A program of two translation units with device variables and texture references in each (refused as
/// overlapping before: every module's variables started at one address), variables named by a string
/// (CUDA before 5.0), a bind of CUDA's default size past the buffer, and the `cudaDeviceProp` fields CUDA
/// 13 removed, through the compatibility header.
#[test]
fn legacy_programs_of_several_units_pass() {
    passes_everywhere("legacy_units");
}

/// Issue 40: `cuda::pipeline` (cp.async) and `cuda::barrier` (mbarrier).
#[test]
fn asynchronous_copies_and_barrier_objects_pass() {
    passes_everywhere("async_copy");
}

/// Issue 40: pointer attributes and the peer calls of a one-device machine, as CUDA answers them.
#[test]
fn pointer_attributes_and_peer_calls_pass() {
    passes_everywhere("pointers");
}

/// Issue 40: wmma, ldmatrix + mma.sync (f16 and s8) and movmatrix, checked against the host.
#[test]
fn tensor_core_instructions_pass() {
    passes_everywhere("tensor");
}

/// The matrix instructions are warp-wide over 32 lanes: another warp size is refused, naming the
/// instruction (not run on a part of the fragments).
#[test]
fn tensor_core_instructions_need_32_thread_warps() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, _, err) = exec(&["--warp-size", "16"], "tensor");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("wmma.load") && err.contains("need 32-thread warps (this launch has 16)"), "{err}");
}

/// `cuda-include` holds the compatibility header; `cuda-lib` links `libcudart.so` to the shim the command
/// runs programs with; both are refreshed when called again.
#[test]
fn the_build_directories_hold_the_header_and_the_shim() {
    if !shim_built() {
        return;
    }
    let out = temp_dir("cuda-dirs");
    let include = PathBuf::from(cuda_dir("cuda-include", &out));
    let header = std::fs::read_to_string(include.join("reconverge_compat.h")).expect("the header");
    assert_eq!(
        header,
        std::fs::read_to_string(root().join("crates/reconverge-cli/cuda/reconverge_compat.h")).expect("source")
    );
    std::fs::write(include.join("reconverge_compat.h"), "stale").expect("write");
    assert_eq!(PathBuf::from(cuda_dir("cuda-include", &out)), include);
    assert_eq!(std::fs::read_to_string(include.join("reconverge_compat.h")).expect("header"), header);
    let lib = PathBuf::from(cuda_dir("cuda-lib", &out));
    for name in ["libcudart.so", "libcudart.so.13"] {
        let target = std::fs::read_link(lib.join(name)).expect("a link");
        assert!(target.ends_with("libreconverge_cudart.so"), "{}", target.display());
    }
}

/// Registered and mapped host memory: a kernel updates a `malloc`'d buffer through the pointer
/// `cudaHostGetDevicePointer` gives (the host pointer), `cudaHostAlloc`'d mapped memory and
/// `cudaMallocHost` memory through host pointers, a read-only registration, copies to and from registered
/// memory, and misuse with CUDA's codes (712, 713, 1).
#[test]
fn host_register_and_mapped_memory_pass() {
    passes_everywhere("host_register");
}

/// CUDA graphs: a stream-captured graph (memset, three kernels, a copy, a host function) launched 3 times,
/// an explicit diamond of memcpy, kernel, empty and memset nodes launched 3 times (once after
/// `cudaGraphExecKernelNodeSetParams`), a child graph node, a capture forked across two streams and
/// joined back through events, and what capture forbids (900, 901, 906).
#[test]
fn graphs_captured_and_built_node_by_node_pass() {
    passes_everywhere("graphs");
}

/// Each kernel node a graph launch runs goes through the launch path of `<<<...>>>`: one launch, with its
/// statistics line, per kernel node run. `graphs.cu` launches kernels only through graphs: 3 kernel nodes
/// of the captured graph x 3 launches, 3 of the diamond x 3, the captured graph's 3 once more as a child
/// graph, and 3 of a capture forked across two streams: 24.
#[test]
fn each_kernel_node_a_graph_runs_is_one_launch_in_the_statistics() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("exec-graph-stats");
    let stats = dir.join("graphs.jsonl");
    let s = stats.to_string_lossy().into_owned();
    let (code, out, err) = exec(&["--mechanism", "tbc", "--config", "gtx480", "--stats", &s], "graphs");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("kernel nodes run: 24"), "{out}");
    let lines = stats_lines(&stats);
    assert_eq!(lines.len(), 24, "{err}");
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["launch"], i as u64 + 1);
        assert_eq!(l["outcome"], "completed");
    }
    let launches = |k: &str| lines.iter().filter(|l| l["kernel"].as_str().is_some_and(|n| n.contains(k))).count();
    assert_eq!([launches("ramp"), launches("collatz"), launches("accumulate")], [6, 4, 5]);
    assert_eq!([launches("scale"), launches("square_mod"), launches("combine")], [3, 3, 3]);
    assert!(err.contains("24 launches of 6 kernels"), "{err}");
}

#[test]
fn host_functions_and_stream_callbacks_run_in_stream_order() {
    passes_everywhere("callbacks");
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
    assert!(err.contains("the CUDA runtime call `cudaLaunchCooperativeKernel` is not supported"), "{err}");
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
    let lines = stats_lines(&stats);
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
    // Each kernel's lines and CFG, its executions summed over its launches (the runtime sends them per pc
    // under --html): every one of Fan2's own instructions is on a PTX line (no -lineinfo), so the line
    // cells sum to its launches' kernel instructions.
    assert!(page.contains("<h2>Lines and control flow per kernel</h2>"), "the lines section");
    assert!(page.contains("CFG of Fan1") && page.contains("CFG of Fan2"), "a CFG per kernel");
    let fan2_kernel: u64 = lines
        .iter()
        .filter(|l| l["kernel"].as_str().is_some_and(|k| k.contains("Fan2")))
        .map(|l| l["kernel_instructions"].as_u64().expect("count"))
        .sum();
    let start = page.find("<h3>Fan2 (15 launches").expect("Fan2's lines");
    let section = &page[start..];
    let section = &section[..section.find("<details>").expect("its CFG")];
    let cells: Vec<(u64, u64)> = section
        .split("title=\"")
        .skip(1)
        .filter_map(|t| t.split_once(" executions divergent\"").map(|(c, _)| c))
        .map(|c| c.split_once(" of ").map(|(d, e)| (d.parse().expect("d"), e.parse().expect("e"))).expect("d of e"))
        .collect();
    assert!(cells.len() > 5, "{section}");
    assert_eq!(cells.iter().map(|c| c.1).sum::<u64>(), fan2_kernel, "Fan2's line cells: {cells:?}");
    assert!(cells.iter().all(|(d, e)| d <= e));
}

/// `--sample`: the stencil's 20 sweeps do the same work, so 4 are timed (3, then one in ten) and 16 are
/// estimated exactly; BFS's levels differ, so most are timed and the estimate stays within 1% (and its
/// bound). Every launch's functional statistics are those of the full timed run, and the program's
/// results are right.
#[test]
fn sampling_times_a_few_launches_and_estimates_the_others() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("exec-sample");
    let read = |p: &Path| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(p).expect("stats");
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    };
    for (program, estimated) in [("stencil", 16), ("bfs", 6)] {
        let (full, sampled) = (dir.join(format!("{program}.jsonl")), dir.join(format!("{program}-s.jsonl")));
        let (f, s) = (full.to_string_lossy().into_owned(), sampled.to_string_lossy().into_owned());
        let (code, out, _) = exec(&["--stats", &f], program);
        assert_eq!((code, out.lines().last()), (0, Some("PASS")), "{program} timed");
        let (code, out, err) = exec(&["--sample", "--stats", &s], program);
        assert_eq!((code, out.lines().last()), (0, Some("PASS")), "{program} sampled: {err}");
        let (full, sampled) = (read(&full), read(&sampled));
        assert_eq!(full.len(), sampled.len());
        let (mut truth, mut estimate, mut bound, mut n) = (0, 0, 0, 0);
        for (a, b) in full.iter().zip(&sampled) {
            for key in ["kernel", "warp_instructions", "thread_instructions", "divergent_branches", "by_class"] {
                assert_eq!(a[key], b[key], "{program} launch {}: {key}", a["launch"]);
            }
            let s = &b["sampled"];
            let est = s["estimated_launches"].as_u64().expect("0 or 1");
            if est == 0 {
                assert_eq!(s["cycles"], a["cycles"], "a timed launch's cycles are measured");
                assert_eq!(b["cycles"], a["cycles"]);
            } else {
                assert!(b["cycles"].is_null() && b["energy"].is_null(), "an estimated launch ran functionally");
            }
            truth += a["cycles"].as_u64().expect("cycles");
            estimate += s["cycles"].as_u64().expect("cycles");
            bound += s["cycles_error"].as_u64().expect("bound");
            n += est;
        }
        assert_eq!(n, estimated, "{program}: estimated launches");
        let off = truth.abs_diff(estimate);
        assert!(off <= bound && off * 100 <= truth, "{program}: {estimate} ± {bound} for {truth}");
        if program == "stencil" {
            assert_eq!((estimate, bound), (truth, 0), "identical sweeps are estimated exactly");
        }
        let line = format!("--sample timed {} of {} completed launches", full.len() as u64 - n, full.len());
        assert!(err.contains(&line), "{err}");
    }
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

/// Runs `reconverge exec FLAGS -- COMMAND...` (a program path and its arguments): (status, stdout, stderr).
fn exec_command(flags: &[&str], command: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .arg("exec")
        .args(flags)
        .arg("--")
        .args(command)
        .output()
        .expect("reconverge runs");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into(),
        String::from_utf8_lossy(&o.stderr).into(),
    )
}

/// The launches' statistics lines `exec --stats` wrote to `path`.
fn stats_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("stats")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A compiled test program's path, as text.
fn program(name: &str) -> String {
    built().expect("built").join(name).to_string_lossy().into_owned()
}

/// Issue 37: exec kept every launch line (~15 KB each) until the program ended. The summary is now folded
/// launch by launch from the runtime's channel; the page keeps the first 1000 launches and says how many
/// it leaves out. The totals still count every launch.
#[test]
fn many_launches_are_summarised_launch_by_launch() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("exec-many");
    let (stats, html) = (dir.join("many.jsonl"), dir.join("many.html"));
    let (s, h) = (stats.to_string_lossy().into_owned(), html.to_string_lossy().into_owned());
    let (code, out, err) =
        exec_command(&["--functional", "--stats", &s, "--html", &h], &[&program("launches"), "1200"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["launches 1200", "PASS"], "{err}");
    assert!(err.contains("1200 launches of 1 kernel"), "{err}");
    let text = std::fs::read_to_string(&stats).expect("stats");
    let per_launch: Vec<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line")["warp_instructions"].as_u64())
        .map(|w| w.expect("a count"))
        .collect();
    assert_eq!(per_launch.len(), 1200);
    let row = err.lines().find(|l| l.starts_with("tick")).expect("a row for tick");
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[1], "1200", "launches: {row}");
    assert_eq!(cells[2], "-", "no cycles when functional: {row}");
    assert_eq!(cells[3], per_launch.iter().sum::<u64>().to_string(), "summed warp instructions: {row}");
    assert!(cells[4].ends_with('%') && cells[4] != "100.0%", "SIMD efficiency as a percentage: {row}");
    let page = std::fs::read_to_string(&html).expect("html");
    assert!(page.contains("1200 launches of 1 kernel"), "the page counts every launch");
    assert!(page.contains("leaves out the other 200") && page.contains("--stats FILE"), "and says what it leaves out");
}

/// Issue 37: the status and the summary came from re-reading the user's `--stats` file: `/dev/null` turned
/// a launch that hit a limit into exit 0 and an empty summary, `/dev/stdout` into a pipe hung.
#[test]
fn the_status_and_summary_never_come_from_the_stats_file() {
    if built().is_none() || !shim_built() {
        return;
    }
    let launches = program("launches");
    let flags = ["--functional", "--max-instructions", "3", "--stats", "/dev/null"];
    let (code, out, err) = exec_command(&flags, &[&launches, "2"]);
    assert_eq!(code, 4, "a limit: {out}{err}");
    assert!(err.contains("1 launch of 1 kernel") && err.contains("limit"), "{err}");
    let (code, out, err) = exec_command(&["--functional", "--stats", "/dev/stdout"], &[&launches, "3"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with('{')).count(), 3, "the lines went to the pipe: {out}");
    assert!(out.ends_with("PASS\n") && err.contains("3 launches of 1 kernel"), "{out}{err}");
    let (code, _, err) = exec_command(&["--functional", "--stats", "/dev/null"], &[&program("oob")]);
    assert_eq!(code, 2, "a launch faulted although the program exited 0: {err}");
}

/// Issue 37: `exec --max-instructions 0` stopped every launch at once; 0 means no limit, as for `run`.
#[test]
fn zero_max_instructions_means_no_limit() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, out, err) = exec_command(&["--functional", "--max-instructions", "0"], &[&program("launches"), "3"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("PASS\n") && err.contains("completed"), "{out}{err}");
}

/// Issue 37: exec's flags are checked by exec, before the program starts, in messages that name the flag.
#[test]
fn flags_are_checked_before_the_program_starts() {
    if built().is_none() || !shim_built() {
        return;
    }
    let launches = program("launches");
    let (code, out, err) = exec_command(&["--warp-size", "3"], &[&launches, "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("--warp-size 3:") && !err.contains("RECONVERGE_"), "{err}");
    assert!(out.is_empty() && !err.contains("pid "), "the program did not start: {err}");
    let (code, _, err) = exec_command(&["--config", "nope"], &[&launches, "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--config `nope` is neither a preset"), "{err}");
    let (code, out, err) = exec_command(&["--functional", "--max-memory", "100M"], &[&launches, "1"]);
    assert_eq!(code, 0, "the suffix reaches the runtime: {out}{err}");
}

/// Issue 37: SIGTERM to exec left the program running and exec's directory behind. It is forwarded; exec
/// waits for the program, removes its directory and exits 128 + 15.
#[test]
fn sigterm_is_forwarded_and_the_private_directory_removed() {
    use std::io::{BufRead, Read};
    if built().is_none() || !shim_built() {
        return;
    }
    let tmp = temp_dir("exec-sigterm");
    let mut child = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["exec", "--functional", "--"])
        .arg(program("launches"))
        .arg("0") // launches until it is stopped
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("exec starts");
    let mut err = std::io::BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    let pid: i32 = loop {
        line.clear();
        assert!(err.read_line(&mut line).expect("reads") > 0, "the program ended before printing its pid");
        if let Some(p) = line.trim().strip_prefix("pid ") {
            break p.parse().expect("a pid");
        }
    };
    let private = tmp.join(format!("reconverge-exec-{}", child.id()));
    assert!(private.is_dir(), "exec's directory while the program runs");
    // SAFETY: signalling the exec process this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().expect("exec ends");
    let mut rest = String::new();
    err.read_to_string(&mut rest).expect("the rest of stderr");
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{rest}");
    assert!(rest.contains("SIGTERM"), "{rest}");
    assert!(!private.exists(), "the directory is removed");
    assert!(!Path::new(&format!("/proc/{pid}")).exists(), "the program is gone (not running, not a zombie)");
}

/// Issue 37: a program killed by a signal, or one that never loaded the shim, got no word from exec.
#[test]
fn a_signal_or_a_program_without_the_shim_is_named() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, _, err) = exec_command(&[], &["/bin/sh", "-c", "kill -SEGV $$"]);
    assert_eq!(code, 128 + libc::SIGSEGV, "{err}");
    assert!(err.contains("the program was killed by signal 11 (SIGSEGV)"), "{err}");
    let (code, _, err) = exec_command(&["--functional"], &[&program("launches_static"), "1"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("did not load reconverge's libcudart.so.13") && err.contains("-cudart shared"), "{err}");
    let (code, _, err) = exec_command(&[], &["/bin/true"]);
    assert_eq!(code, 2, "nothing was simulated: {err}");
    assert!(err.contains("did not load"), "{err}");
}

/// Issue 37: PTX that does not parse (then a texture fetch; now a constant expression as an operand,
/// `asm_expression.cu`) was reported as "rebuild for compute_80" to a compute_80 program; the parser's
/// message names the PTX's line and column and shows the instruction.
#[test]
fn ptx_that_does_not_parse_is_reported_by_the_parser() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, out, err) = exec_command(&["--functional"], &[&program("asm_expression")]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("PTX for compute_80 is not PTX reconverge can run"), "{err}");
    assert!(err.contains("asm_expression:module0.sm_80.ptx:"), "{err}");
    assert!(err.contains("shl.b32 %r1, %r2, (32 - 27);"), "{err}");
    assert!(!err.contains("rebuild"), "{err}");
}

/// Issue 37: every misuse of the runtime gets CUDA's error code, never a signal or a panic; refused
/// launches run nothing, write no statistics, say why on one line, and are the program's business: it
/// handles them and exits 0, and so does `exec`.
#[test]
fn misuse_returns_cudas_error_codes() {
    if built().is_none() || !shim_built() {
        return;
    }
    let text = std::fs::read_to_string(programs_dir().join("misuse.cu")).expect("misuse.cu");
    let expected: Vec<&str> =
        text.lines().take_while(|l| l.starts_with("//")).filter_map(|l| l.strip_prefix("//   ")).collect();
    assert!(expected.len() > 30 && expected.last() == Some(&"PASS"), "the expected output in misuse.cu's comment");
    let dir = temp_dir("exec-misuse");
    for mode in ["--functional", "--config=gtx480"] {
        let stats = dir.join("misuse.jsonl");
        let s = stats.to_string_lossy().into_owned();
        let (code, out, err) = exec_command(&[mode, "--stats", &s], &[&program("misuse")]);
        assert_eq!(code, 0, "{mode}: {out}{err}");
        assert_eq!(out.lines().collect::<Vec<_>>(), expected, "{mode}: {err}");
        let refused: Vec<&str> = err.lines().filter(|l| l.contains("refused")).collect();
        assert_eq!(refused.len(), 7, "one line per refused launch: {err}");
        assert!(refused.iter().all(|l| l.contains("launch of `_Z4markPii` (grid ")), "{err}");
        assert!(err.contains("block 1024,2,1, 0 bytes of dynamic shared memory) refused: the block has 2048 threads"));
        assert!(err.contains("8589934592 bytes asked") && !err.contains("4294967295"), "{err}");
        assert!(err.contains("(cudaErrorInvalidConfiguration)") && !err.contains("invalid launch: invalid"), "{err}");
        let lines = std::fs::read_to_string(&stats).expect("stats");
        assert_eq!(lines.lines().count(), 1, "only the launch that ran is recorded: {lines}");
        assert!(err.contains("1 launch of 1 kernel"), "{err}");
    }
}

/// Issue 37: managed memory counts against `--max-memory` at allocation, and copies need no temporary
/// buffer of their size (the program checks its peak resident memory).
#[test]
fn managed_memory_counts_against_the_limit_and_copies_stage_nothing() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, out, err) = exec_command(&["--functional", "--max-memory", "64M"], &[&program("memory_limit")]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().filter(|l| l.ends_with(": yes")).count(), 5, "{out}{err}");
    assert!(
        out.ends_with(
            "PASS
"
        ),
        "{out}{err}"
    );
}

/// Issue 37: a fat binary whose header sizes lie is refused with exit status 2 and a message naming the
/// problem, instead of a slice over unmapped memory (a crash before `main`).
#[test]
fn a_damaged_fat_binary_is_refused_with_status_2() {
    if built().is_none() || !shim_built() {
        return;
    }
    let (code, out, err) = exec_command(&["--functional"], &[&program("badfatbin"), "1"]);
    assert_eq!((code, out.as_str()), (2, "registering\n"), "{err}");
    assert!(err.contains("the fat binary's header claims 268369936 bytes, but only"), "{err}");
    let (code, out, err) = exec_command(&["--functional"], &[&program("badfatbin"), "2"]);
    assert_eq!((code, out.as_str()), (2, "registering\n"), "{err}");
    assert!(err.contains("8388608 bytes"), "{err}");
}

/// Issue 37: the runtime parsed the program's PTX on the program's own `malloc` heap before `main`, so
/// memory the program allocated and never wrote held the runtime's freed bytes, different on every run.
/// Its registration now allocates from an arena of its own: the program's first mallocs are zero pages.
#[test]
fn registration_leaves_the_programs_heap_untouched() {
    if built().is_none() || !shim_built() {
        return;
    }
    for _ in 0..3 {
        let (code, out, err) = exec_command(&["--functional"], &[&program("uninit")]);
        assert_eq!(code, 0, "{out}{err}");
        assert_eq!(out, "nonzero bytes in fresh mallocs: 0\nPASS\n", "{err}");
    }
}

/// Issue 42: `bench -- PROGRAM` measures a whole program under `exec`, functional and timed, and reports
/// the work the launches' statistics lines give (the same as `exec --stats` of one run).
#[test]
fn bench_measures_a_whole_program_under_exec() {
    if built().is_none() || !shim_built() {
        return;
    }
    let dir = temp_dir("bench-exec");
    let stats = dir.join("bfs.jsonl");
    let s = stats.to_string_lossy().into_owned();
    let (code, out, err) = exec(&["--stats", &s], "bfs");
    assert_eq!(code, 0, "{out}{err}");
    let lines = stats_lines(&stats);
    let sum = |key: &str| lines.iter().map(|l| l[key].as_u64().expect("a count")).sum::<u64>();
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["bench", "--json", "--min-ms", "1", "--"])
        .arg(program("bfs"))
        .output()
        .expect("reconverge runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let row = &rows[0];
    assert_eq!(row["program"], "bfs");
    assert_eq!(row["launches"], lines.len() as u64);
    assert_eq!(row["warp_instructions"], sum("warp_instructions"));
    assert_eq!(row["thread_instructions"], sum("thread_instructions"));
    assert_eq!(row["cycles"], sum("cycles"));
    assert_eq!(row["config"], "gtx480");
    for key in ["functional_ms", "timed_ms", "functional_warp_instructions_per_s", "timed_warp_instructions_per_s"] {
        assert!(row[key].as_f64().is_some_and(|x| x > 0.0), "{key}: {row}");
    }
    // A program that fails is the command's error, with what it printed.
    let o = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["bench", "--functional", "--min-ms", "1", "--"])
        .arg(program("oob"))
        .output()
        .expect("reconverge runs");
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stderr).contains("under exec failed"), "{}", String::from_utf8_lossy(&o.stderr));
}
