//! `reconverge analyze` on seed 004's examples: golden text, the JSON contract, errors.

use expect_test::expect_file;
use std::process::Command;

fn reconverge(args: &[&str]) -> (i32, String, String) {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let out = Command::new(env!("CARGO_BIN_EXE_reconverge")).args(args).current_dir(root).output().expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, out, err) = reconverge(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn seed_004_examples_as_golden_text() {
    expect_file!["golden/analyze_fig2.txt"].assert_eq(&ok(&["analyze", "kernels/handwritten/seed004_fig2.ptx"]));
    expect_file!["golden/analyze_fir.txt"].assert_eq(&ok(&["analyze", "kernels/ptx/sm_80-nofma/fir.ptx"]));
    expect_file!["golden/analyze_early_exit.txt"]
        .assert_eq(&ok(&["analyze", "kernels/handwritten/seed004_early_exit.ptx"]));
}

#[test]
fn the_json_contract() {
    let out = ok(&["analyze", "kernels/ptx/sm_80-nofma/fir.ptx", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let f = &v["functions"][0];
    assert_eq!(f["name"], "fir");
    for b in f["blocks"].as_array().expect("blocks") {
        for k in ["label", "convergent_ca", "convergent_va", "convergent_exit"] {
            assert!(b.get(k).is_some(), "block key {k}");
        }
    }
    let insts = f["instructions"].as_array().expect("instructions");
    for i in insts {
        for k in ["pc", "ptx_line", "cuda_line", "text", "variance", "scalar", "warp_sequential"] {
            assert!(i.get(k).is_some(), "instruction key {k}");
        }
        assert!(["invariant", "affine", "variant"].contains(&i["variance"].as_str().expect("string")));
    }
    let ws: Vec<&str> =
        insts.iter().filter(|i| i["warp_sequential"] == true).map(|i| i["text"].as_str().unwrap_or("")).collect();
    assert_eq!(ws, ["ld.global.f32 %f6, [%rd15];", "st.global.f32 [%rd14], %f10;"]);
    let dot = ok(&["analyze", "kernels/ptx/sm_80-nofma/fir.ptx", "--format", "dot"]);
    assert!(dot.starts_with("digraph") && dot.contains("->"), "{dot}");
}

#[test]
fn missing_functions_and_files_are_input_errors() {
    let (code, _, err) = reconverge(&["analyze", "kernels/ptx/sm_80-nofma/fir.ptx", "--kernel", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no function named `nope`"), "{err}");
    let (code, _, _) = reconverge(&["analyze", "no/such/file.ptx"]);
    assert_eq!(code, 2);
}

#[test]
fn stackless_puts_syncwarp_exactly_at_n5_of_figure_2() {
    let out = ok(&["cfg", "kernels/handwritten/seed004_fig2.ptx", "--mechanism", "stackless"]);
    expect_file!["golden/cfg_seed004_fig2_stackless.txt"].assert_eq(&out);
    let blocks_with_syncwarp: Vec<&str> =
        out.split("\n\n").filter(|b| b.contains("syncwarp;")).filter_map(|b| b.lines().next()).map(str::trim).collect();
    assert_eq!(blocks_with_syncwarp, ["B5 N5"]);
}
