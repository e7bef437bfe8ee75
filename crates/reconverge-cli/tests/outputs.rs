//! Output for scripts and statistics that mean what they say: tidy CSV/JSON with numbers as numbers,
//! partial runs marked the same way in tables and JSON, per-branch statistics, and counts that agree
//! across mechanisms.

mod common;

use common::{ok, reconverge};

use reconverge_mechanism::Mechanism;

/// CSV cells are numbers, booleans, names or empty: no `%`, `x`, `a/b` or `-` placeholders.
fn assert_tidy_csv(csv: &str, numeric: &[&str]) {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let mut rows = 0;
    for line in lines {
        rows += 1;
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{line}");
        for (h, c) in header.iter().zip(&cells) {
            assert!(*c != "-" && !c.ends_with('%') && !c.contains('/'), "column {h}: `{c}` is not tidy");
            if numeric.contains(h) && !c.is_empty() {
                assert!(c.parse::<f64>().is_ok(), "column {h}: `{c}` is not a number");
            }
        }
    }
    assert!(rows > 0);
}

#[test]
fn suite_and_compare_csv_and_json_hold_numbers() {
    let csv = ok(&["suite", "--kernel", "kern", "--kernel", "spinlock_naive", "--csv"]);
    assert!(
        csv.starts_with("kernel,config,warp_size,mechanism,outcome,partial,check,cycles,speedup_over_pdom,"),
        "{csv}"
    );
    assert_tidy_csv(&csv, &["warp_size", "warp_instructions", "simd_efficiency", "max_stack_depth", "max_paths"]);
    let csv = ok(&["compare", "--kernel", "kern", "--kernel", "fir", "--csv"]);
    assert_tidy_csv(&csv, &["cycles", "speedup_over_pdom", "ipc", "stall_memory", "l1_hit_rate"]);
    let json: serde_json::Value = serde_json::from_str(&ok(&["compare", "--kernel", "kern", "--json"])).expect("json");
    let rows = json.as_array().expect("an array of runs");
    assert_eq!(rows.len(), Mechanism::defaults().count());
    for r in rows {
        assert!(r["cycles"].is_u64() && r["simd_efficiency"].is_f64() && r["speedup_over_pdom"].is_f64(), "{r}");
        assert!(r["warp_size"].is_u64());
    }
    let none = rows.iter().find(|r| r["mechanism"] == "none").expect("none");
    assert!(none["max_stack_depth"].is_null() && none["max_paths"].is_u64(), "a list mechanism has paths, not a stack");
    let pdom = rows.iter().find(|r| r["mechanism"] == "pdom").expect("pdom");
    assert!(pdom["max_paths"].is_null() && pdom["max_stack_depth"].is_u64());
    let dwf = rows.iter().find(|r| r["mechanism"] == "dwf").expect("dwf");
    assert!(dwf["max_pool_warps"].is_u64() && dwf["max_stack_depth"].is_null(), "a pool, not a stack");
    assert!(dwf["mechanism_counters"]["merges"].is_u64(), "{dwf}");
    let tbc = rows.iter().find(|r| r["mechanism"] == "tbc").expect("tbc");
    assert!(tbc["mechanism_counters"]["sync_stall_cycles"].is_u64(), "cycle counters in timed runs: {tbc}");
    assert!(pdom["mechanism_counters"].as_object().is_some_and(|m| m.is_empty()));
    let bench = ok(&["bench", "--kernel", "kern", "--min-ms", "1", "--csv"]);
    assert_tidy_csv(&bench, &["functional_thread_instructions_per_s", "timed_warp_instructions_per_s"]);
    assert!(bench.lines().last().unwrap_or("").starts_with("ALL,"));
}

#[test]
fn partial_runs_are_marked_and_tables_agree_with_json() {
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["compare", "--kernel", "spinlock_naive", "--mechanism", "pdom", "--json"]))
            .expect("json");
    let r = &json[0];
    assert_eq!(r["outcome"], "deadlock");
    assert_eq!(r["partial"], true);
    let cycles = r["cycles"].as_u64().expect("a partial run still reports its cycles");
    assert!(r["speedup_over_pdom"].is_null(), "no speedup for a run that did not complete");
    let table = ok(&["compare", "--kernel", "spinlock_naive", "--mechanism", "pdom"]);
    assert!(table.contains(&format!(" {cycles}*")), "the table shows the same cycles, marked partial:\n{table}");
    assert!(table.contains("* partial:"), "{table}");
    let (code, out, _) = reconverge(&[
        "run",
        "kernels/ptx/sm_80/spinlock_naive.ptx",
        "--arg",
        "zeros:i32:1",
        "--arg",
        "zeros:i32:1",
        "--json",
    ]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["partial"], true);
    assert!(v["cycles"].as_u64().unwrap_or(0) > 0);
}

#[test]
fn branches_count_the_kernels_own_branches_under_every_mechanism() {
    let csv = ok(&["suite", "--kernel", "fir", "--csv"]);
    let header: Vec<&str> = csv.lines().next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), Mechanism::defaults().count());
    for r in &rows {
        assert_eq!(r[col("branches")], "68", "fir issues 68 conditional branches under {}", r[col("mechanism")]);
        assert_eq!(r[col("divergent_branches")], "0");
        assert_eq!(r[col("kernel_instructions")], "664", "the same kernel work under {}", r[col("mechanism")]);
    }
    let ssy = rows.iter().find(|r| r[col("mechanism")] == "ssy").expect("ssy");
    assert!(ssy[col("mechanism_instructions")].parse::<u64>().unwrap_or(0) > 0);
    assert_eq!(ssy[col("simd_efficiency")], "1.0");
}

#[test]
fn branches_by_pc_in_json_and_as_a_table() {
    let args = ["run", "kernels/ptx/sm_80/short_circuit.ptx", "--arg", "zeros:i32:256", "--functional"];
    let v: serde_json::Value = serde_json::from_str(&ok(&[&args[..], &["--json"]].concat())).expect("json");
    let br = v["branches_by_pc"].as_array().expect("branches_by_pc");
    assert!(br.len() >= 2, "the A && B branches");
    let total: u64 = br.iter().map(|b| b["executions"].as_u64().unwrap_or(0)).sum();
    assert_eq!(total, v["branches"].as_u64().unwrap_or(u64::MAX), "per-branch executions add up");
    let div: u64 = br.iter().map(|b| b["divergent"].as_u64().unwrap_or(0)).sum();
    assert_eq!(div, v["divergent_branches"].as_u64().unwrap_or(u64::MAX));
    for b in br {
        for key in ["pc", "ptx_line", "executions", "divergent", "reconvergence_pc"] {
            assert!(b[key].is_u64(), "{key} in {b}");
        }
        assert!(b["cuda_line"].is_u64(), "the PTX has .loc, so CUDA lines are known: {b}");
        assert!(b["mean_active_lanes"].is_f64() && b["mechanism"].is_object());
        assert_eq!(b["function"], "short_circuit");
    }
    let table = ok(&[&args[..], &["--branches"]].concat());
    assert!(table.contains("branches, most divergent first:"), "{table}");
    let rows: Vec<&str> = table.lines().skip_while(|l| !l.starts_with("branches, most divergent")).skip(3).collect();
    let divs: Vec<u64> = rows.iter().filter_map(|l| l.split_whitespace().nth(9)?.parse().ok()).collect();
    assert!(divs.len() >= 2 && divs.windows(2).all(|w| w[0] >= w[1]), "sorted by divergent executions: {table}");
}

#[test]
fn cfg_marks_an_inserted_guarded_brk_as_a_branch_that_may_diverge() {
    // mandelbrot's loop exit depends on the pixel (thread-variant); fir's depends only on flen and is
    // reported uniform by the variance analysis.
    let fir = ok(&["cfg", "kernels/ptx/sm_80-nofma/fir.ptx", "--mechanism", "ssy"]);
    assert!(fir.contains("uniform (thread-invariant condition)") && fir.contains("0 may diverge"), "{fir}");
    let out = ok(&["cfg", "kernels/ptx/sm_80/mandelbrot.ptx", "--mechanism", "ssy"]);
    assert!(out.contains("@!%p") && out.contains("brk"), "{out}");
    for line in out.lines().filter(|l| l.contains("branch (line")) {
        assert!(!line.contains("uniform (.uni)") || !line.contains("brk"), "{line}");
    }
    let brk_blocks = out.split("\n\n").filter(|b| b.lines().any(|l| l.contains("brk") && l.contains("@"))).count();
    assert!(brk_blocks > 0);
    for block in out.split("\n\n").filter(|b| b.lines().any(|l| l.contains("brk") && l.contains("@"))) {
        assert!(block.contains("may diverge"), "a guarded brk splits lanes like a guarded bra:\n{block}");
    }
}
