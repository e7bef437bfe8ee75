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
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["argument 0", "too large"]);
    let a = run("zeros:f64:18446744073709551616");
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["too large"]);
    let a = run("zeros:i32:99999999999");
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["argument 0", "memory limit", "--max-memory"]);
    let mut a = run("zeros:i32:1000000");
    a.extend(["--max-memory".to_string(), "1M".to_string()]);
    input_error(&a.iter().map(String::as_str).collect::<Vec<_>>(), &["argument 0", "memory limit of 1048576"]);
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
    while (10 + h.len() + 1) % 64 != 0 {
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
        &["argument 0", "more elements than can exist"],
    );
    // A header claiming 10 elements over 8 bytes of data.
    let header = "{'descr': '<i4', 'fortran_order': False, 'shape': (10,), }";
    let mut h = header.to_string();
    while (10 + h.len() + 1) % 64 != 0 {
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
