//! The `mimd` bound under the GTX 480 timing model: on a converged kernel it takes PDOM's cycles (one
//! group per warp, nothing to pack), on divergent kernels fewer (lane-packed issue fills the lanes PDOM
//! leaves idle), and its packed issues are counted.

mod common;

use common::ok;

/// The runs of `pdom` and `mimd` on `kernels` under the GTX 480 preset, with their counters.
fn runs(kernels: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["compare", "--config", "gtx480", "--mechanism", "pdom", "--mechanism", "mimd", "--json"];
    args.push("--counters");
    for k in kernels {
        args.extend(["--kernel", k]);
    }
    let v: serde_json::Value = serde_json::from_str(&ok(&args)).expect("JSON");
    v.as_array().expect("runs").clone()
}

fn run<'a>(runs: &'a [serde_json::Value], kernel: &str, mech: &str) -> &'a serde_json::Value {
    let r = runs.iter().find(|r| r["kernel"] == kernel && r["mechanism"] == mech);
    let r = r.unwrap_or_else(|| panic!("{kernel} under {mech}"));
    assert_eq!(r["outcome"], "completed", "{kernel} under {mech}");
    r
}

fn cycles(runs: &[serde_json::Value], kernel: &str, mech: &str) -> u64 {
    run(runs, kernel, mech)["cycles"].as_u64().expect("cycles")
}

#[test]
fn mimd_equals_pdom_on_converged_kernels_and_beats_it_on_divergent_ones() {
    let converged = ["fir", "spmv"];
    let divergent = ["capri", "nested_loops", "recursion", "irreducible", "switch_kernel", "bfs"];
    let all: Vec<&str> = converged.iter().chain(divergent.iter()).copied().collect();
    let r = runs(&all);
    for k in converged {
        // One group per warp: the same issues in the same cycles.
        assert_eq!(cycles(&r, k, "mimd"), cycles(&r, k, "pdom"), "{k}");
        assert_eq!(run(&r, k, "mimd")["mechanism_counters"]["packed_issues"], 0, "{k}");
    }
    for k in divergent {
        let (m, p) = (cycles(&r, k, "mimd"), cycles(&r, k, "pdom"));
        assert!(m < p, "{k}: mimd {m} cycles, pdom {p}");
        let c = &run(&r, k, "mimd")["mechanism_counters"];
        assert!(c["packed_issues"].as_u64().expect("packed_issues") > 0, "{k}: {c}");
        assert!(c["max_groups"].as_u64().expect("max_groups") >= 2, "{k}: {c}");
    }
    // The nested loops leave PDOM's lanes mostly idle: the bound is over ten times faster.
    assert!(cycles(&r, "nested_loops", "mimd") * 10 < cycles(&r, "nested_loops", "pdom"));
}
