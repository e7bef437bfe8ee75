//! Bad input gets a clear error and a documented exit status, bounded in time and memory: each case was
//! found by fuzzing or by trying the tool as a new user would.

mod common;

use common::{reconverge, root};

use std::io::Read;
use std::process::{Command, Stdio};

/// Asserts exit 2 with every `needles` in the message and no panic.
fn input_error(args: &[&str], needles: &[&str]) {
    let (code, _, err) = reconverge(args);
    assert_eq!(code, 2, "reconverge {args:?}: expected exit 2, got {code}: {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "reconverge {args:?}: the message does not mention `{n}`:\n{err}");
    }
}

fn temp(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("reconverge-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p.to_string_lossy().into_owned()
}

const KERN: &str = "kernels/ptx/sm_80/kern.ptx";
const KERN_ARGS: [&str; 6] = ["--arg", "zeros:i32:38", "--arg", "zeros:i32:38", "--arg", "zeros:i32:38"];

#[test]
fn an_error_flood_prints_a_bounded_report() {
    // 8,000 errors on one 128 KB line.
    let mut src = String::from(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n");
    src.push_str(&"` ".repeat(8000));
    src.push_str(&"x".repeat(112_000));
    src.push_str("\n}\n");
    let f = temp("flood.ptx", src.as_bytes());
    let (code, out, err) = reconverge(&["cfg", &f]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.len() < 16_000, "{} bytes of diagnostics", err.len());
    assert!(err.contains("more error"), "{err}");
    assert!(err.contains("..."), "long lines are cut in excerpts: {err}");
    // 40,000 undefined labels and registers on 40,000 lines.
    let mut src = String::from(".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n");
    for i in 0..40_000 {
        src.push_str(&format!("bra L{i}; add.u32 %q{i}, %q{i}, 1;\n"));
    }
    src.push_str("}\n");
    let f = temp("flood2.ptx", src.as_bytes());
    let (code, _, err) = reconverge(&["cfg", &f]);
    assert_eq!(code, 2);
    assert!(err.len() < 16_000, "{} bytes of diagnostics", err.len());
    assert!(err.contains("and 119980 more errors (the first 20 are shown)"), "{err}");
}

#[test]
fn oversize_buffers_are_refused_before_allocation() {
    let run = |arg: &str| {
        vec!["run", KERN, "--arg", arg, "--arg", "zeros:i32:38", "--arg", "zeros:i32:38", "--functional"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>()
    };
    let a = run("zeros:f64:18446744073709551615");
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["--arg 0 (kern_param_0)", "too large"]);
    let a = run("zeros:f64:18446744073709551616");
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["too large"]);
    let a = run("zeros:i32:99999999999");
    input_error(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &["--arg 0 (kern_param_0)", "memory limit", "--max-memory"],
    );
    let mut a = run("zeros:i32:1000000");
    a.extend(["--max-memory".to_string(), "1M".to_string()]);
    input_error(
        &a.iter().map(String::as_str).collect::<Vec<_>>(),
        &["--arg 0 (kern_param_0)", "memory limit of 1048576"],
    );
    input_error(&[&["run", KERN, "--max-memory", "lots"][..], &KERN_ARGS].concat(), &["--max-memory"]);
}

#[test]
fn launch_geometry_is_checked_without_overflow() {
    input_error(&[&["run", KERN, "--block", "65536,65536,1"][..], &KERN_ARGS].concat(), &["at most 1024"]);
    input_error(&[&["run", KERN, "--grid", "4294967296"][..], &KERN_ARGS].concat(), &["--grid", "too large"]);
    input_error(&[&["run", KERN, "--grid", "1,65536"][..], &KERN_ARGS].concat(), &["grid dimension y"]);
    input_error(&[&["run", KERN, "--livelock-window", "2"][..], &KERN_ARGS].concat(), &["livelock window", "1000"]);
}

#[test]
fn an_npy_header_must_match_its_data() {
    // shape (2^32, 2^32, 2^32): the product overflows; it used to be read as an empty array.
    let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }";
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    let f = temp("overflow.npy", &bytes);
    let at = format!("@{f}");
    input_error(
        &["run", KERN, "--arg", &at, "--arg", "zeros:i32:38", "--arg", "zeros:i32:38", "--functional"],
        &["--arg 0 (kern_param_0)", "more elements than can exist"],
    );
    // A header claiming 10 elements over 8 bytes of data.
    let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (10,), }";
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(&[0; 8]);
    let f = temp("short.npy", &bytes);
    let at = format!("@{f}");
    input_error(
        &["run", KERN, "--arg", &at, "--arg", "zeros:i32:38", "--arg", "zeros:i32:38", "--functional"],
        &["does not match the 8 data bytes"],
    );
}

#[test]
fn out_of_range_selections_name_the_valid_range() {
    input_error(&[&["trace", KERN, "--warp", "99"][..], &KERN_ARGS].concat(), &["--warp 99", "valid: 0..=0"]);
    input_error(&[&["trace", KERN, "--cta", "99"][..], &KERN_ARGS].concat(), &["--cta 99", "valid: 0..=0"]);
    input_error(&["bench", "--kernel", "nope"], &["no kernel `nope`", "kernels: kern"]);
    input_error(&["compare", "--warp-size", "3", "--kernel", "kern"], &["--warp-size 3"]);
    input_error(&["suite", "--warp-size", "3", "--kernel", "kern"], &["--warp-size 3"]);
}

#[test]
fn a_call_with_the_wrong_arguments_is_rejected_at_load() {
    for cmd in ["cfg", "run"] {
        input_error(
            &[cmd, "crates/reconverge-cli/tests/data/bad_call.ptx"],
            &["bad_call.ptx:18:", "call to `twice` passes 0 arguments", "takes 1"],
        );
    }
}

#[test]
fn non_utf8_input_names_the_first_bad_byte() {
    let mut bytes = b".version 7.0\n.target sm_80\n// caf".to_vec();
    bytes.push(0xE9);
    bytes.extend_from_slice(b"\n");
    let f = temp("latin1.ptx", &bytes);
    input_error(&["cfg", &f], &["latin1.ptx:3:7", "byte 33 (0xe9)", "not UTF-8"]);
}

/// A function of `n` straight-line blocks with a branch each (large `cfg` output).
fn big_ptx(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry big()\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n\
         mov.u32 %r1, %tid.x;\n",
    );
    for k in 0..n {
        s.push_str(&format!(
            "setp.lt.u32 %p1, %r1, {};\n@%p1 bra L{k};\nadd.u32 %r2, %r2, 1;\nL{k}:\nxor.b32 %r2, %r2, %r1;\n",
            k % 32
        ));
    }
    s.push_str("ret;\n}\n");
    s
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // Several megabytes of output: far more than a pipe holds, so writing meets a closed pipe.
    let f = temp("big.ptx", big_ptx(20_000).as_bytes());
    let mut child = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["cfg", &f])
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut first = [0u8; 16];
    child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("some output");
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.as_mut().expect("stderr").read_to_string(&mut err).expect("stderr");
    let status = child.wait().expect("exits");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.is_empty(), "a closed pipe is not an error: {err}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn control_falling_off_a_function_is_an_error() {
    for mode in ["--functional", "--config=tiny"] {
        for m in ["pdom", "ssy", "none"] {
            input_error(
                &[
                    "run",
                    "crates/reconverge-cli/tests/data/fell_off.ptx",
                    "--arg",
                    "zeros:u32:4",
                    "--mechanism",
                    m,
                    mode,
                ],
                &["control fell off the end of `store`", "thread (0,0,0)"],
            );
        }
    }
}

#[test]
fn the_scalarization_oracle_keeps_to_its_budget_and_says_so() {
    // Thousands of divergent regions: 15.6 s and 166 MB before the oracle had a per-launch budget.
    #[rustfmt::skip]
    let args = [
        "run", "crates/reconverge-cli/tests/data/nested_loops_back_edge.ptx", "--grid", "2", "--block", "100",
        "--arg", "@kernels/data/nested_loops/data.npy", "--arg", "190", "--arg", "420", "--arg", "zeros:i32:190",
        "--functional", "--scalarize",
    ];
    let (code, out, err) = reconverge(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("the oracle's work budget ran out"), "{out}");
    let (code, out, err) = reconverge(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let s = &v["scalarization"];
    assert!(s["oracle_over_budget"].as_u64().is_some_and(|n| n > 0), "{s}");
    // A lower bound never below the mechanism's own convergence.
    let share = &s["convergent_share"];
    assert!(share["oracle"].as_f64() >= share["dcp"].as_f64(), "{share}");
}

#[test]
fn threads_beyond_the_documented_maximum_are_refused() {
    input_error(&[&["run", KERN][..], &KERN_ARGS, &["--threads", "10000"]].concat(), &["at most 1024"]);
}

#[test]
fn configuration_values_out_of_range_name_the_file_and_key() {
    for (text, key) in [
        ("num_sms = 2147483647\n", "num_sms = 2147483647"),
        ("[sm]\nschedulers = 4294967295\n", "[sm] schedulers = 4294967295"),
        ("[l2]\nline = 16\n", "[l2] line = 16"),
        ("[l1]\nmshrs = 4000000\n", "[l1] mshrs = 4000000"),
    ] {
        let f = temp("range.toml", text.as_bytes());
        input_error(&[&["run", KERN][..], &KERN_ARGS, &["--config", &f]].concat(), &["range.toml", key, "range"]);
    }
    // In range, but the model's structures exceed the memory limit: refused before anything is built.
    let f = temp("huge.toml", b"num_sms = 1024\n[sm]\nmax_threads = 65536\nmax_ctas = 1024\n");
    input_error(
        &[&["run", KERN][..], &KERN_ARGS, &["--config", &f, "--max-memory", "1G"]].concat(),
        &["timing model", "memory limit"],
    );
}

#[test]
fn a_configuration_is_checked_whole_when_it_is_read() {
    // Each key within its range, but the L2 built with the L1's 1-byte sectors cannot be (128 sectors a
    // line): refused when the file is read, naming the file, the tables and the keys, not at the launch.
    let cases = [
        ("[l1]\nline = 32\nsector = 1\n", "[l1] sector = 1, [l2] line = 128: the L2, whose sectors are the L1's"),
        ("[l1]\nmshrs = 65536\nmshr_merge = 65536\n", "[l1] mshrs = 65536, mshr_merge = 65536: the L1's MSHR file"),
    ];
    for (text, says) in cases {
        let f = temp("structure.toml", text.as_bytes());
        for cmd in [&["run", KERN][..], &["trace", KERN]] {
            let args = [cmd, &KERN_ARGS, &["--config", &f]].concat();
            input_error(&args, &[&format!("structure.toml: {says}")]);
        }
        let args = ["compare", "--kernel", "kern", "--mechanism", "pdom", "--config", &f];
        input_error(&args, &[&format!("structure.toml: {says}")]);
    }
}

#[test]
fn a_long_configuration_line_is_quoted_in_a_bounded_excerpt() {
    let mut text = b"num_sms = 4\nname = \"".to_vec();
    text.extend(std::iter::repeat_n(b'x', 400_000));
    text.push(b'\n');
    let f = temp("long.toml", &text);
    input_error(
        &[&["run", KERN][..], &KERN_ARGS, &["--config", &f]].concat(),
        &["long.toml: invalid TOML: line 2, column"],
    );
    let (_, _, err) = reconverge(&[&["run", KERN][..], &KERN_ARGS, &["--config", &f]].concat());
    assert!(err.len() < 1000, "{} bytes: {}", err.len(), &err[..1000.min(err.len())]);
}

#[test]
fn a_struct_padding_too_large_says_so() {
    let ptx = "crates/reconverge-cli/tests/data/struct_arg.ptx";
    for (pad, says) in [
        ("4294967296", "field 0: `pad=4294967296`: 4294967296 zero bytes is too large (at most 4294967295)"),
        ("x", "field 0: `pad=x`: `x` is not a number of bytes"),
    ] {
        let spec = format!("struct:pad={pad}");
        let args = ["run", ptx, "--functional", "--arg", "zeros:u64:8", "--arg", &spec, "--arg", "0"];
        input_error(&args, &[says]);
    }
}

#[test]
fn a_native_compiler_that_fails_silently_is_reported_with_its_status() {
    let out = Command::new(env!("CARGO_BIN_EXE_reconverge"))
        .args(["bench", "--native", "--functional", "--min-ms", "1", "--kernel", "kern", "--fractal-rows", "0"])
        .env("CXX", "/bin/false")
        .current_dir(root())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/bin/false exited with status 1 and printed nothing (compiling "), "{err}");
    assert!(err.trim_end().ends_with("kern.cu)"), "{err}");
}

/// Runs `reconverge` under an address-space limit of `kib` KiB (`ulimit -v`).
fn reconverge_limited(kib: u64, args: &[&str]) -> (i32, String, String) {
    let mut script = format!("ulimit -v {kib} && exec \"$0\"");
    for i in 1..=args.len() {
        script.push_str(&format!(" \"${{{i}}}\""));
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_reconverge"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_failed_host_allocation_is_an_error_not_an_abort() {
    // 500 MB of zeros under a 400 MB address-space limit: exit 2 with a message, not SIGABRT.
    let args = [&["run", KERN, "--functional", "--arg", "zeros:i32:125000000"][..], &KERN_ARGS[2..]].concat();
    let (code, _, err) = reconverge_limited(400_000, &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("out of memory") && err.contains("500000000 bytes"), "{err}");
}

#[test]
fn a_large_buffer_is_held_once() {
    // 400 MB of zeros and its dump fit a 700 MB address space: the launch takes the buffer over and the
    // results move out of device memory (the buffer used to be held three times).
    let out = temp("big.npy", b"");
    let dump = format!("0={out}");
    let args =
        [&["run", KERN, "--functional", "--arg", "zeros:i32:100000000"][..], &KERN_ARGS[2..], &["--dump", &dump]]
            .concat();
    let (code, _, err) = reconverge_limited(700_000, &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0), 400_000_128);
    let _ = std::fs::remove_file(&out);
}

#[test]
fn thousands_of_brx_targets_take_linear_memory() {
    // A `brx.idx` with 10,000 targets falling through into one another: 1.06 GB before (the labelled
    // control dependence relation is quadratic); now well inside a 400 MB address space.
    let t = 10_000;
    let mut s = String::from(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry chain(.param .u64 out)\n{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\ncvta.to.global.u64 %rd2, %rd1;\n\
         mov.u32 %r1, %tid.x;\nmov.u32 %r3, 0;\n",
    );
    s.push_str(&format!("rem.u32 %r2, %r1, {t};\nts: .branchtargets "));
    s.push_str(&(0..t).map(|i| format!("L{i}")).collect::<Vec<_>>().join(", "));
    s.push_str(";\nbrx.idx %r2, ts;\n");
    for i in 0..t {
        s.push_str(&format!("L{i}:\nadd.u32 %r3, %r3, {i};\n"));
    }
    s.push_str("st.global.u32 [%rd2], %r3;\nret;\n}\n");
    let f = temp("chain.ptx", s.as_bytes());
    for args in [vec!["cfg", &f], vec!["analyze", &f], vec!["run", &f, "--arg", "zeros:i32:1", "--functional"]] {
        let (code, _, err) = reconverge_limited(400_000, &args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

#[test]
fn a_plain_run_has_a_default_instruction_budget() {
    // A mistyped grid (a hundred million CTAs) ends with exit 4 instead of a hung terminal: the default
    // budget is in the help, and the limit is exit 4 with the flag named.
    let (code, out, _) = reconverge(&["run", "--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("[default: 1000000000]"), "{out}");
    let (code, _, err) = reconverge(
        &[&["run", KERN, "--functional", "--grid", "100000000", "--max-instructions", "5000"][..], &KERN_ARGS].concat(),
    );
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("--max-instructions 5000"), "{err}");
}
