//! Snapshots of the decoded `Program` of a few kernels: per pc the class, the reconvergence pc of a branch,
//! the source line, and the decoded operation with its resolved registers, addresses and targets. A change
//! to the decoder that changes what any of these kernels runs shows up here as a diff. Re-bless with
//! `UPDATE_EXPECT=1 cargo test -p reconverge-program --test decoded`.

use reconverge_program::{decode, function_points, select_kernel, DecodeOptions, Program, PC_NONE};
use std::fmt::Write;

fn decoded(name: &str) -> Program {
    let path = format!("{}/../../kernels/ptx/sm_80/{name}.ptx", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).expect("kernel PTX");
    let m = reconverge_ptx::parse(&src).expect("parses");
    let k = select_kernel(&m, None).expect("one kernel");
    let opts = DecodeOptions { file: format!("{name}.ptx"), source: Some(src.clone()), ..Default::default() };
    decode(&m, k, &|f| function_points(f, false), &opts).expect("decodes")
}

/// One line per pc.
fn render(p: &Program) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} pcs, {} registers, {} predicates, {} parameter bytes",
        p.insts.len(),
        p.nregs,
        p.npreds,
        p.param_size
    );
    for (pc, (inst, info)) in p.insts.iter().zip(&p.info).enumerate() {
        let rpc = p.reconv[pc];
        let reconv = if rpc == PC_NONE { String::new() } else { format!(" -> {}", reconverge_program::pc_string(rpc)) };
        let _ = writeln!(
            out,
            "{pc:>4} {:<9} line {:>3}{reconv}  {:?} guard={:?}",
            format!("{:?}", info.class),
            info.ptx_line,
            inst.op,
            inst.guard
        );
    }
    out
}

fn check(name: &str) {
    let got = render(&decoded(name));
    let path = format!("{}/tests/golden/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, &got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(got == want, "decoded {name} differs from {path} (UPDATE_EXPECT=1 re-blesses):\n{got}");
}

#[test]
fn a_divergent_kernel_decodes_as_before() {
    check("kern");
}

#[test]
fn a_recursive_kernel_with_calls_decodes_as_before() {
    check("recursion");
}

#[test]
fn a_kernel_with_warp_collectives_decodes_as_before() {
    check("warp_reduce");
}

/// The program of a PTX text (its only kernel).
fn decoded_text(src: &str) -> Program {
    let m = reconverge_ptx::parse(src).expect("parses");
    let k = select_kernel(&m, None).expect("one kernel");
    decode(&m, k, &|f| function_points(f, false), &DecodeOptions::default()).expect("decodes")
}

/// The operations at the pcs whose PTX text mentions `vprintf` (the call), or names `callee`.
fn calls(p: &Program, callee: &str) -> Vec<reconverge_program::program::Op> {
    p.insts.iter().zip(&p.info).filter(|(_, i)| i.text.contains(callee)).map(|(d, _)| d.op.clone()).collect()
}

#[test]
fn a_call_of_vprintf_decodes_to_printf() {
    use reconverge_program::program::{InstClass, Op};
    let path = format!("{}/../reconverge-ptx/tests/data/nvrtc_printf.ptx", env!("CARGO_MANIFEST_DIR"));
    let p = decoded_text(&std::fs::read_to_string(path).expect("PTX"));
    let ops = calls(&p, "vprintf");
    assert_eq!(ops.len(), 2, "{ops:?}");
    for op in &ops {
        let Op::Printf { format, args, ret: Some(ret) } = op else { panic!("not a printf: {op:?}") };
        // Three distinct frame slots: two 8-byte pointers and the 4-byte result.
        assert!(format != args && format != ret && args != ret, "{op:?}");
        assert_eq!((format % 8, args % 8, ret % 4), (0, 0, 0), "{op:?}");
    }
    let pc = p.info.iter().position(|i| i.text.contains("vprintf")).expect("the call");
    assert_eq!(p.info[pc].class, InstClass::Control);
    assert!(p.info[pc].reads.is_empty() && p.info[pc].writes.is_empty());
}

#[test]
fn other_external_calls_and_foreign_vprintfs_stay_unsupported() {
    use reconverge_program::program::Op;
    let kernel = |decl: &str, call: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n{decl}\n.visible .entry k()\n{{\n.reg .b64 %rd<3>;\n\
             {{ .param .b64 param0; st.param.b64 [param0], %rd1; .param .b64 param1; st.param.b64 [param1], %rd2;\n\
             .param .b32 retval0;\n{call}\nld.param.b32 %rd1, [retval0]; }}\nret;\n}}\n"
        )
    };
    let unsupported = |src: String, want: &str| {
        let p = decoded_text(&src);
        let ops = calls(&p, "call");
        assert!(matches!(&ops[..], [Op::Unsupported(why)] if why.contains(want)), "{ops:?}");
    };
    let ext = ".extern .func (.param .b32 r) NAME(.param .b64 a, .param .b64 b);";
    unsupported(
        kernel(&ext.replace("NAME", "malloc2"), "call.uni (retval0), malloc2, (param0, param1);"),
        "call to `malloc2`, which has no body",
    );
    // A `vprintf` with another signature is not CUDA's.
    unsupported(
        kernel(".extern .func (.param .b32 r) vprintf(.param .b64 a);", "call.uni (retval0), vprintf, (param0);"),
        "must be declared as CUDA's",
    );
    // (A call with the wrong number of arguments is the parser's error.)
    // Declared without the result.
    let p = decoded_text(&kernel(
        ".extern .func vprintf(.param .b64 a, .param .b64 b);",
        "call.uni vprintf, (param0, param1);",
    ));
    assert!(matches!(&calls(&p, "call")[..], [Op::Printf { ret: None, .. }]));
}

/// The pcs of the conditional branches of `p` and whether each is structured.
fn structured_branches(p: &Program) -> Vec<(u32, bool)> {
    (0..p.insts.len() as u32).filter(|&pc| p.is_conditional_branch(pc)).map(|pc| (pc, p.is_structured(pc))).collect()
}

#[test]
fn short_circuit_branches_are_unstructured_and_if_else_nests_structured() {
    // Seed 003's Figure 1, `if (A && B) C; else D;`: D is entered from A and from B.
    let p = decoded("short_circuit");
    let b = structured_branches(&p);
    assert_eq!(b.len(), 2, "{b:?}");
    assert!(b.iter().all(|&(_, s)| !s), "{b:?}");
    // An irreducible loop (entered at two blocks): its branches are unstructured.
    let b = structured_branches(&decoded("irreducible"));
    assert!(b.iter().any(|&(_, s)| !s), "{b:?}");
    // `kern` (seed 001): an if/else; `nested_loops`: loops entered at their header, whose exits (breaks and
    // early returns included) meet at one block.
    for name in ["kern", "nested_loops"] {
        let p = decoded(name);
        let b = structured_branches(&p);
        assert!(!b.is_empty() && b.iter().all(|&(_, s)| s), "{name}: {b:?}");
        // Only conditional branches are marked.
        assert_eq!(p.structured.iter().filter(|&&s| s).count(), b.len());
    }
}

/// Variables too large for their state space (found by fuzzing the runtime with re-declared arrays) are
/// decode errors naming the variable, never an arithmetic overflow (a panic) or a wrapped offset.
#[test]
fn variables_too_large_for_their_space_are_errors_naming_them() {
    let kernel = |module: &str, body: &str| {
        format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n{module}\n.visible .entry k(PARAMS)\n{{\n{body}\nret;\n}}\n"
        )
    };
    let cases = [
        (kernel(".global .b8 g[18446744073709551615];", ""), "`g`", "each"),
        (kernel(".global .b8 g[1099511627777];", ""), "`g`", "each"),
        (kernel(".global .b8 a[1099511627776];\n.global .b8 b[1099511627776];\n.global .b8 c[1099511627776];\n.global .b8 d[1099511627776];\n.global .b8 e[1099511627776];\n.global .b8 f[1099511627776];\n.global .b8 g[1099511627776];\n.global .b8 h[1099511627776];\n.global .b8 i[1099511627776];\n.global .b8 j[1099511627776];\n.global .b8 k2[1099511627776];", ""), "", "end before"),
        (kernel(".const .b8 c[4294967297];", ""), "`c`", ".const bank"),
        (kernel(".const .b8 c[18446744073709551615];", ""), "`c`", ".const bank"),
        (kernel(".shared .b8 s[18446744073709551615];", ""), "`s`", ".shared space"),
        (kernel(".shared .align 16 .b8 s[4294967290];", ""), "dynamic shared memory", ".shared space"),
        (kernel("", ".local .b8 l[18446744073709551615];"), "`l`", "local frame"),
        (kernel("", ".local .b64 l[2305843009213693952];"), "`l`", "local frame"),
    ];
    for (src, name, why) in cases {
        let src = src.replace("PARAMS", "");
        let m = reconverge_ptx::parse(&src).unwrap_or_else(|e| panic!("parses: {e}\n{src}"));
        let k = select_kernel(&m, None).expect("one kernel");
        let e = decode(&m, k, &|f| function_points(f, false), &DecodeOptions::default())
            .expect_err("a variable too large for its space");
        let text = e.to_string();
        assert!(text.contains(name) && text.contains(why), "{src}\n{text}");
    }
    // Kernel parameters: the buffer is 32-bit.
    let src = kernel("", "").replace("PARAMS", ".param .align 8 .b8 p[4294967296]");
    let m = reconverge_ptx::parse(&src).expect("parses");
    let k = select_kernel(&m, None).expect("one kernel");
    let e = decode(&m, k, &|f| function_points(f, false), &DecodeOptions::default()).expect_err("too large");
    assert!(e.to_string().contains("parameter buffer"), "{e}");
}
