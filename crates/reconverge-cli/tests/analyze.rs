//! `reconverge analyze` on seed 004's examples: golden text, the JSON contract, errors.

mod common;

use common::{ok, reconverge};

use expect_test::expect_file;

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

/// `run --scalarize` on Figure 2 (two warps of 4): the inner loop's exit branch is the only divergent one,
/// so the oracle can only run the first inner iteration of each outer iteration converged.
#[test]
fn scalarization_metrics_of_figure_2_as_golden_text() {
    let fig2 = [
        "run",
        "kernels/handwritten/seed004_fig2.ptx",
        "--grid",
        "1",
        "--block",
        "8",
        "--arg",
        "zeros:i32:8",
        "--arg",
        "1",
        "--warp-size",
        "4",
        "--functional",
        "--scalarize",
        "--mechanism",
    ];
    let run = |m: &str| ok(&[&fig2[..], &[m]].concat());
    expect_file!["golden/scalarize_fig2_stackless_dcp.txt"].assert_eq(&run("stackless-dcp"));
    expect_file!["golden/scalarize_fig2_stackless.txt"].assert_eq(&run("stackless"));
    expect_file!["golden/scalarize_fig2_pdom.txt"].assert_eq(&run("pdom"));
}

/// The `scalarization` object of `run --scalarize --json` (the contract in docs/scalarization.md), on the
/// FIR filter, whose loop is fully convergent: the coefficient loads are scalar (one address and one data
/// element per warp) and the sample loads warp-sequential (one address per warp, data per thread).
#[test]
fn the_scalarization_json_contract() {
    let args = [
        "run",
        "kernels/ptx/sm_80-nofma/fir.ptx",
        "--grid",
        "2",
        "--block",
        "64",
        "--arg",
        "@kernels/data/fir/samples.npy",
        "--arg",
        "@kernels/data/fir/coeffs.npy",
        "--arg",
        "16",
        "--arg",
        "zeros:f32:128",
        "--functional",
        "--scalarize",
        "--json",
    ];
    let v: serde_json::Value = serde_json::from_str(&ok(&args)).expect("json");
    let s = &v["scalarization"];
    assert_eq!(s["warp_size"], 32);
    for k in ["ca", "ca_va", "exit", "dcp", "oracle"] {
        assert!(s["convergent_share"][k].is_f64(), "convergent_share.{k}");
    }
    for k in ["scalar", "converged", "dcp", "diverged"] {
        assert!(s["issued"][k].is_u64(), "issued.{k}");
    }
    for side in ["baseline", "scalarized"] {
        for k in ["operations", "register_reads", "register_writes", "address_counts", "data_accesses"] {
            assert!(s[side][k].is_u64(), "{side}.{k}");
        }
    }
    // Every block of the FIR filter is convergent once the variance analysis sees that the loop bound
    // is a kernel parameter.
    assert_eq!(s["convergent_share"]["exit"], 1.0);
    assert_eq!(s["issued"]["dcp"], 0);
    assert_eq!(s["issued"]["diverged"], 0);
    // 4 warps of 32: scalar and warp-sequential accesses present one address per warp.
    let (b, z) = (&s["baseline"], &s["scalarized"]);
    assert_eq!(b["address_counts"].as_u64().unwrap(), 32 * z["address_counts"].as_u64().unwrap());
    assert_eq!(b["operations"], v["kernel_thread_instructions"]);
    assert!(z["data_accesses"].as_u64().unwrap() < b["data_accesses"].as_u64().unwrap());
}
