//! Every kernel argument expressible on the command line: structs passed by value (`struct:`), pointers
//! into a buffer (`@FILE.npy+N`), suite kernels by name (`--suite-kernel`), a number for a larger module
//! variable (`--global NAME=N`), and the errors of each naming the argument.

mod common;

use common::{ok, reconverge};
use reconverge_program::{Buffer, Dtype};
use std::path::{Path, PathBuf};

const STRUCT_PTX: &str = "crates/reconverge-cli/tests/data/struct_arg.ptx";

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconverge-args-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn write_u32(path: &Path, values: &[u32]) {
    let b = Buffer { dtype: Dtype::U32, bytes: values.iter().flat_map(|v| v.to_le_bytes()).collect() };
    std::fs::write(path, reconverge_suite::npy::write(&b)).expect("write");
}

fn read(path: &Path) -> Buffer {
    reconverge_suite::npy::read(&std::fs::read(path).expect("dump written")).expect("npy")
}

fn bits(b: &Buffer) -> Vec<u64> {
    (0..b.len()).map(|i| b.bits(i)).collect()
}

/// `struct_arg.ptx` with row = [0 3 5 9], col = [10 .. 14] (the struct points 2 elements in), vals =
/// [5 6 7 8] (the third argument points 1 element in).
fn struct_run(dir: &Path, graph: &str, extra: &[&str]) -> (i32, String, String) {
    write_u32(&dir.join("row.npy"), &[0, 3, 5, 9]);
    write_u32(&dir.join("col.npy"), &[10, 11, 12, 13, 14]);
    write_u32(&dir.join("vals.npy"), &[5, 6, 7, 8]);
    let d = dir.display();
    let graph = graph.replace("DIR", &d.to_string());
    let vals = format!("@{d}/vals.npy+1");
    let args = [&["run", STRUCT_PTX, "--arg", "zeros:u64:8", "--arg", &graph, "--arg", &vals], extra];
    reconverge(&args.concat())
}

const GRAPH: &str =
    "struct:u32=2048,u32=15230,ptr=@DIR/row.npy,ptr=@DIR/col.npy+2,ptr=zeros:f32:4,ptr=0,f64=2.5,i16=-2";

#[test]
fn a_struct_passed_by_value_reaches_the_kernel_with_its_buffers() {
    let dir = temp_dir("struct");
    let p = |f: &str| format!("{}={}", f.split_once('=').unwrap().0, dir.join(f.split_once('=').unwrap().1).display());
    let dumps = [p("0=out.npy"), p("1.4=wt.npy"), p("1.2=row.npy"), p("2=vals_out.npy")];
    let extra: Vec<&str> = dumps.iter().flat_map(|d| ["--dump", d.as_str()]).collect();
    for mode in [["--functional"].as_slice(), ["--config", "tiny"].as_slice()] {
        let (code, _, err) = struct_run(&dir, GRAPH, &[&extra[..], mode].concat());
        assert_eq!(code, 0, "{err}");
        // nnodes, nedges, row[1], col[2] (the field points 2 elements in), the null pointer, 2.5, -2 and
        // the element before the third argument's pointer.
        let out = bits(&read(&dir.join("out.npy")));
        assert_eq!(out, vec![2048, 15230, 3, 12, 0, 2.5f64.to_bits(), (-2i64) as u64, 5], "{mode:?}");
        // The kernel wrote through the struct's `wt` pointer; the field's whole buffer comes back.
        let wt = read(&dir.join("wt.npy"));
        assert_eq!(wt.dtype, Dtype::F32);
        assert_eq!(bits(&wt), [0.0f32, 1.5, 3.0, 4.5].map(|f| f.to_bits() as u64));
        assert_eq!(bits(&read(&dir.join("row.npy"))), vec![0, 3, 5, 9]);
        // `@vals.npy+1`: the kernel stored at p[0]; the dump is the whole buffer.
        assert_eq!(bits(&read(&dir.join("vals_out.npy"))), vec![5, 77, 7, 8]);
    }
}

#[test]
fn struct_and_offset_errors_name_the_argument() {
    let dir = temp_dir("struct-errors");
    let fails = |graph: &str, extra: &[&str], want: &str| {
        let (code, _, err) = struct_run(&dir, graph, extra);
        assert_eq!(code, 2, "{graph}: {err}");
        assert!(err.contains(want), "{graph}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    fails(
        "struct:u32=2048,u32=15230,ptr=@DIR/row.npy",
        &[],
        "--arg 1 (graph_fields_param_1): the struct is 16 bytes (fields at offsets 0 4 8, aligned to 8) but \
         parameter `graph_fields_param_1` is 56 bytes",
    );
    fails(
        "struct:u32=1,u32=2,ptr=@DIR/nope.npy,ptr=0,ptr=0,ptr=0,f64=1,i16=1",
        &[],
        "--arg 1 (graph_fields_param_1): field 2: cannot read",
    );
    fails("struct:u32=1,u8=300", &[], "--arg 1 `struct:u32=1,u8=300`: field 1: `300` does not fit in .u8");
    fails("struct:u32=1,x=2", &[], "field 1: `x=2`: expected TYPE=VALUE");
    fails("struct:", &[], "needs at least one field");
    fails("7", &[], "--arg 1 (graph_fields_param_1): a number cannot fill the parameter: it is a 56-byte struct");
    // Explicit padding fills what the struct leaves out.
    let padded = "struct:u32=2048,u32=15230,ptr=@DIR/row.npy,ptr=@DIR/col.npy,ptr=zeros:f32:4,pad=24";
    let (code, _, err) = struct_run(&dir, padded, &["--functional"]);
    assert_eq!(code, 0, "{err}");
    // A pointer past its buffer's end, and dumps that name no buffer.
    let (code, _, err) =
        reconverge(&["run", STRUCT_PTX, "--arg", "zeros:u64:8", "--arg", "struct:pad=56", "--arg", "zeros:u32:4+5"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--arg 2 (graph_fields_param_2): an offset of 20 bytes is past the end of the 16-byte buffer"),
        "{err}"
    );
    let out = dir.join("x.npy").display().to_string();
    fails(
        GRAPH,
        &["--dump", &format!("1={out}")],
        "--dump 1: argument 1 is a struct; dump the buffer of one of its pointer fields (1.2, 1.3, 1.4)",
    );
    fails(GRAPH, &["--dump", &format!("1.5={out}")], "--dump 1.5: argument 1 is a struct");
    fails(GRAPH, &["--dump", &format!("0.1={out}")], "--dump 0.1: argument 0 is not a struct");
}

#[test]
fn suite_kernels_run_by_name() {
    let dir = temp_dir("suite");
    let dump = format!("4={}", dir.join("b4.npy").display());
    ok(&["run", "--suite-kernel", "bfs", "--functional", "--dump", &dump]);
    let want =
        reconverge_suite::npy::read(&std::fs::read(common::root().join("kernels/data/bfs/expected_4.npy")).unwrap());
    assert_eq!(read(&dir.join("b4.npy")), want.unwrap(), "the manifest's expected output");
    let t = ok(&["trace", "--suite-kernel", "kern", "--limit", "2"]);
    assert!(t.starts_with("trace of CTA 0 warp 0 of kernel kern under pdom"), "{t}");
    let html = dir.join("r.html").display().to_string();
    ok(&["report", "--suite-kernel", "kern", "--functional", "-o", &html]);
    assert!(std::fs::read_to_string(&html).unwrap().contains("kernels/ptx/sm_80/kern.ptx"));
    // The manifest's own launch conflicts with one given on the command line.
    for extra in [&["--arg", "1"][..], &["kernels/ptx/sm_80/bfs.ptx"], &["--grid", "2"], &["--block", "64"]] {
        let (code, _, err) = reconverge(&[&["run", "--suite-kernel", "bfs"][..], extra].concat());
        assert_eq!(code, 2, "{extra:?}");
        assert!(err.contains("cannot be used with"), "{extra:?}: {err}");
    }
    let (code, _, err) = reconverge(&["run", "--suite-kernel", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no kernel `nope` in the suite (kernels: kern,"), "{err}");
    let (code, _, err) = reconverge(&["run", "--suite-kernel", "bfs", "--kernels", &dir.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("manifest.toml"), "{err}");
    let (code, _, err) = reconverge(&["run", "--kernels", "kernels", "kernels/ptx/sm_80/kern.ptx"]);
    assert_eq!(code, 2, "--kernels needs --suite-kernel: {err}");
}

#[test]
fn a_number_sets_the_first_element_of_a_larger_variable() {
    let dir = temp_dir("globals");
    let input: Vec<u32> = (0..32).map(|i| i * 10).collect();
    write_u32(&dir.join("in.npy"), &input);
    let g_in = format!("g_in=@{}", dir.join("in.npy").display());
    let out = format!("0={}", dir.join("out.npy").display());
    let scale = format!("c_scale={}", dir.join("scale.npy").display());
    // c_scale is `.const .align 4 .b8 c_scale[16]` (nvcc's `__constant__ int c_scale[4]`): a number sets
    // its first 4-byte element and zeroes the rest.
    let args = [
        "run",
        "crates/reconverge-cli/tests/data/globals.ptx",
        "--functional",
        "--arg",
        "zeros:i32:32",
        "--global",
        &g_in,
        "--global",
        "c_scale=3",
        "--global",
        "g_count=-1",
        "--dump",
        &out,
        "--dump-global",
        &scale,
    ];
    ok(&args);
    let want: Vec<u64> = (0..32).map(|t| if t % 4 == 0 { (input[t] * 3) as u64 } else { 0 }).collect();
    assert_eq!(bits(&read(&dir.join("out.npy"))), want);
    let s = read(&dir.join("scale.npy"));
    assert_eq!(s.bytes, [3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // A pointer variable set to a pointer into a buffer: `g_in = in36 + 4`; its dump is the whole buffer.
    let in36: Vec<u32> = (0..36).map(|i| i * 10).collect();
    write_u32(&dir.join("in36.npy"), &in36);
    let g_in4 = format!("g_in=@{}+4", dir.join("in36.npy").display());
    let g_dump = format!("g_in={}", dir.join("g_in.npy").display());
    let shifted =
        [&args[..5], &["--global", &g_in4, "--global", "c_scale=1", "--dump", &out, "--dump-global", &g_dump]].concat();
    ok(&shifted);
    let want: Vec<u64> = (0..32).map(|t| if t % 4 == 0 { in36[t + 4] as u64 } else { 0 }).collect();
    assert_eq!(bits(&read(&dir.join("out.npy"))), want);
    assert_eq!(bits(&read(&dir.join("g_in.npy"))), in36.iter().map(|&v| v as u64).collect::<Vec<_>>());
    // A value that does not fit the element, or a float for an integer variable, is refused.
    let bad = |g: &str, want: &str| {
        let (code, _, err) = reconverge(&[
            "run",
            "crates/reconverge-cli/tests/data/globals.ptx",
            "--arg",
            "zeros:i32:32",
            "--global",
            &g_in,
            "--global",
            g,
        ]);
        assert_eq!(code, 2, "{g}");
        assert!(err.contains(want), "{g}: {err}");
    };
    bad("c_scale=5000000000", "--global `c_scale=5000000000`: `5000000000` does not fit in .b32");
    bad("g_count=1.5", "--global `g_count=1.5`: `1.5` is not an integer");
    bad("g_count=struct:u32=1", "a struct cannot set a module variable");
}

#[test]
fn help_shows_the_defaults_and_no_required_launch_shape() {
    for cmd in ["run", "trace", "report"] {
        let help = ok(&[cmd, "--help"]);
        let usage = help.lines().find(|l| l.starts_with("Usage:")).expect("usage line");
        assert!(!usage.contains("--grid") && !usage.contains("--block"), "{cmd}: {usage}");
        assert!(usage.contains("[FILE]"), "{cmd}: {usage}");
        assert!(help.contains("--grid <X[,Y[,Z]]>") && help.contains("[default: 1]"), "{cmd}");
        assert!(help.contains("--block <X[,Y[,Z]]>") && help.contains("[default: 32]"), "{cmd}");
        assert!(help.contains("--suite-kernel <NAME>") && help.contains("struct:TYPE=VALUE"), "{cmd}");
    }
}
