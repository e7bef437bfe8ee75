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
