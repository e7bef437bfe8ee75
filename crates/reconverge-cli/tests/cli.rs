//! End-to-end tests of the `reconverge` command: golden outputs (re-bless with `UPDATE_EXPECT=1 cargo test
//! -p reconverge-cli`), exit statuses and error messages.

mod common;

use common::{ok, reconverge};

use expect_test::expect_file;
use reconverge_mechanism::Mechanism;

const KERN: &str = "kernels/ptx/sm_80/kern.ptx";
const KERN_ARGS: [&str; 6] = ["--arg", "zeros:i32:38", "--arg", "zeros:i32:38", "--arg", "zeros:i32:38"];

#[test]
fn cfg_of_seed_examples() {
    expect_file!["golden/cfg_kern.txt"].assert_eq(&ok(&["cfg", KERN]));
    expect_file!["golden/cfg_kern_ssy.txt"].assert_eq(&ok(&["cfg", KERN, "--mechanism", "ssy"]));
    expect_file!["golden/cfg_kern.dot"].assert_eq(&ok(&["cfg", KERN, "--format", "dot"]));
    expect_file!["golden/cfg_capri.txt"].assert_eq(&ok(&["cfg", "kernels/ptx/sm_80/capri.ptx"]));
    expect_file!["golden/cfg_short_circuit.txt"].assert_eq(&ok(&["cfg", "kernels/ptx/sm_80/short_circuit.ptx"]));
    expect_file!["golden/cfg_fir.txt"].assert_eq(&ok(&["cfg", "kernels/ptx/sm_80-nofma/fir.ptx"]));
    expect_file!["golden/cfg_seed004_fig2.txt"].assert_eq(&ok(&["cfg", "kernels/handwritten/seed004_fig2.ptx"]));
}

#[test]
fn cfg_of_kern_shows_the_branch_reconverging_at_its_post_dominator() {
    let out = ok(&["cfg", KERN]);
    // The if/else of seed 001: the branch in the entry block reconverges at the block of `a[6] = 99`.
    assert!(out.contains("branch (line 47): may diverge; reconverges at B4 $L__BB0_3 (line 73, kern.cu:37)"), "{out}");
    assert!(out.contains("B4 $L__BB0_3\n    succs: exit (exit)"), "{out}");
}

#[test]
fn cfg_json_is_valid_and_names_reconvergence_points() {
    let out = ok(&["cfg", KERN, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let br = &v["functions"][0]["branches"][0];
    assert_eq!(br["reconvergence"]["label"], "$L__BB0_3");
    assert_eq!(br["may_diverge"], true);
}

#[test]
fn traces_of_seed_001_kern() {
    let ssy = ok(&[&["trace", KERN, "--mechanism", "ssy"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_ssy.txt"].assert_eq(&ssy);
    // The notes' stack walk: SSY pops one entry and pushes two; the divergent BRA pops one and pushes the
    // not-taken then the taken entry; each SYNC pops one.
    assert!(ssy.contains("[ssy 0xffffffff 29 -] [0xffffffff 13 29]"));
    assert!(ssy.contains("[ssy 0xffffffff 29 -] [0xffffffe0 14 29] [0x0000001f 15 29]"));
    let pdom = ok(&[&["trace", KERN, "--mechanism", "pdom"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_pdom.txt"].assert_eq(&pdom);
    let none = ok(&[&["trace", KERN, "--mechanism", "none"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_none.txt"].assert_eq(&none);
    // One warp: the CTA-wide stack is the warp's stack; its compactions re-form the same warp.
    let tbc = ok(&[&["trace", KERN, "--mechanism", "tbc"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_tbc.txt"].assert_eq(&tbc);
    let capri = ok(&[&["trace", KERN, "--mechanism", "capri"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_capri.txt"].assert_eq(&capri);
    let dwf = ok(&[&["trace", KERN, "--mechanism", "dwf"][..], &KERN_ARGS].concat());
    expect_file!["golden/trace_kern_dwf.txt"].assert_eq(&dwf);
}

/// The launch of the CAPRI test case (seed 002's example) as `run`, `trace` and `compare FILE` take it.
const CAPRI_LAUNCH: [&str; 11] = [
    "kernels/ptx/sm_80/capri.ptx",
    "--block",
    "64",
    "--arg",
    "@kernels/data/capri/in1.npy",
    "--arg",
    "@kernels/data/capri/in2.npy",
    "--arg",
    "zeros:i32:2048",
    "--arg",
    "zeros:i32:2048",
];

#[test]
fn trace_of_the_capri_test_case() {
    let args = [&["trace"], &CAPRI_LAUNCH[..], &["--warp", "1"]].concat();
    expect_file!["golden/trace_capri_pdom.txt"].assert_eq(&ok(&args));
    // Seed 002 under the CTA-wide mechanisms: the first loop's branch and the compaction of its paths
    // (TBC), the second loop's first two instances (CAPRI learns "inadequate" and stops stalling), and
    // the warp pool of DWF.
    let cta = &args[..args.len() - 2];
    let tbc = ok(&[cta, &["--mechanism", "tbc", "--limit", "60"]].concat());
    expect_file!["golden/trace_capri_tbc.txt"].assert_eq(&tbc);
    assert!(tbc.contains("[cta w0:0xffff0000|w1:0x0000ffff 20 27 warps=0 wcnt=0 (to compact)]"));
    let capri = ok(&[cta, &["--mechanism", "capri", "--skip", "960", "--limit", "100"]].concat());
    expect_file!["golden/trace_capri_capri.txt"].assert_eq(&capri);
    let dwf = ok(&[cta, &["--mechanism", "dwf", "--limit", "80"]].concat());
    expect_file!["golden/trace_capri_dwf.txt"].assert_eq(&dwf);
    // HARP across warps: warp 0's lower-half path and warp 1's upper-half path meet at pc 21 in disjoint
    // home lanes and issue as one group of both warps (`w0,1`), all 32 lanes active.
    let harp = ok(&[cta, &["--mechanism", "harp", "--limit", "104"]].concat());
    expect_file!["golden/trace_capri_harp.txt"].assert_eq(&harp);
    assert!(
        harp.contains("   48   21    59 capri:38   0xffffffff w0,1             ld.global.u32 %r21, [%rd32];"),
        "{harp}"
    );
}

#[test]
fn trace_of_dwf_with_an_sm_wide_pool() {
    // Two CTAs of bitonic_sort on one SM under `dwf:sm`: after the first barrier, pool warps hold threads
    // of both CTAs (SM warps 4-7 are CTA 1's static warps 0-3).
    let args = [
        "trace",
        "kernels/ptx/sm_80/bitonic_sort.ptx",
        "--grid",
        "2",
        "--block",
        "128",
        "--dynamic-shared",
        "512",
        "--arg",
        "@kernels/data/bitonic_sort/data.npy",
        "--mechanism",
        "dwf:sm",
        "--skip",
        "240",
        "--limit",
        "16",
    ];
    let out = ok(&args);
    expect_file!["golden/trace_bitonic_dwf_sm.txt"].assert_eq(&out);
    assert!(out.contains(" w0,1,2,7,6,5 "), "a warp of CTA 0's and CTA 1's threads: {out}");
}

#[test]
fn run_reports_statistics_as_json() {
    let out = ok(&[&["run", KERN, "--json"][..], &KERN_ARGS].concat());
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    for key in [
        "outcome",
        "mechanism",
        "warp_size",
        "cycles",
        "warp_instructions",
        "thread_instructions",
        "simd_efficiency",
        "ipc",
        "max_stack_depth",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(v["outcome"], "completed");
    assert_eq!(v["thread_instructions"], 736);
    assert_eq!(v["warp_instructions"], 30);
}

#[test]
fn run_dumps_buffers() {
    let dir = std::env::temp_dir().join(format!("reconverge-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("a.npy");
    let fs = f.to_string_lossy().to_string();
    ok(&[&["run", KERN][..], &KERN_ARGS, &["--dump", &format!("0={fs}")]].concat());
    let bytes = std::fs::read(&f).unwrap();
    let b = reconverge_suite_npy(&bytes);
    assert_eq!(b[6], 99);
    assert_eq!(b[0], 1);
    assert_eq!(b[11], 5);
    std::fs::remove_dir_all(&dir).ok();
}

/// The int32 payload of a 1-D .npy (header skipped).
fn reconverge_suite_npy(bytes: &[u8]) -> Vec<i32> {
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    bytes[10 + hlen..].chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

#[test]
fn malformed_ptx_gives_exit_2_with_location() {
    for (file, loc) in [
        ("truncated.ptx", "truncated.ptx:11:1"),
        ("stray.ptx", "stray.ptx:8:"),
        ("unknown_directive.ptx", "unknown_directive.ptx:4:1"),
        ("operand_count.ptx", "operand_count.ptx:8:"),
        ("undefined_label.ptx", "undefined_label.ptx:11:"),
        ("undeclared_register.ptx", "undeclared_register.ptx:9:"),
    ] {
        let path = format!("crates/reconverge-cli/tests/data/{file}");
        let (code, _, err) = reconverge(&["cfg", &path]);
        assert_eq!(code, 2, "{file}: {err}");
        assert!(err.contains(loc), "{file}: expected `{loc}` in\n{err}");
        assert!(!err.contains("panicked"), "{file}: {err}");
    }
}

#[test]
fn exit_statuses() {
    // Missing file.
    let (code, _, err) = reconverge(&["cfg", "no/such/file.ptx"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/file.ptx"), "{err}");
    // Malformed arguments.
    let (code, _, err) = reconverge(&[&["run", KERN, "--grid", "0"][..], &KERN_ARGS].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--grid"), "{err}");
    let (code, _, err) = reconverge(&["run", KERN, "--arg", "zeros:i32:38"]);
    assert_eq!(code, 2);
    assert!(err.contains("takes 3 arguments"), "{err}");
    let (code, _, err) = reconverge(&[&["run", KERN, "--mechanism", "magic"][..], &KERN_ARGS].concat());
    assert_eq!(code, 2);
    assert!(err.contains("invalid value 'magic' for '--mechanism"), "{err}");
    // The message and every `--help` name every mechanism of the registry, with its aliases.
    for m in Mechanism::ALL {
        assert!(err.contains(m.name()), "{err} lacks {m}");
    }
    for cmd in ["run", "trace", "report", "suite", "compare", "bench", "cfg"] {
        let (code, help, _) = reconverge(&[cmd, "--help"]);
        assert_eq!(code, 0);
        for m in Mechanism::ALL {
            let line = format!("- {}:", m.name());
            assert!(help.lines().any(|l| l.contains(&line) && l.contains(m.info().summary)), "{cmd} --help lacks {m}");
        }
        assert!(help.contains("(also: dwf:majority)"), "{cmd} --help lacks the alias");
    }
    let (code, _, err) =
        reconverge(&[&["run", KERN, "--functional", "--mechanism", "dwf:majority"][..], &KERN_ARGS].concat());
    assert_eq!(code, 0, "an alias is accepted: {err}");
    let (code, _, err) = reconverge(&[&["run", KERN, "--warp-size", "24"][..], &KERN_ARGS].concat());
    assert_eq!(code, 2);
    assert!(err.contains("warp size"), "{err}");
    let (code, _, _) = reconverge(&["frobnicate"]);
    assert_eq!(code, 2);
}

#[test]
fn out_of_bounds_access_names_thread_pc_line_and_address() {
    let (code, _, err) = reconverge(&["run", "crates/reconverge-cli/tests/data/oob.ptx", "--arg", "zeros:i32:32"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("out-of-bounds 4-byte global memory access"), "{err}");
    assert!(err.contains("thread (0,0,0)"), "{err}");
    assert!(err.contains("oob.ptx:19"), "{err}");
    assert!(err.contains("kernel `oob`"), "{err}");
    assert!(err.contains("nearest allocation"), "{err}");
    let (code, _, err) =
        reconverge(&["run", "crates/reconverge-cli/tests/data/misaligned.ptx", "--arg", "zeros:i32:4"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("misaligned"), "{err}");
}

#[test]
fn an_overrun_into_the_next_buffer_is_caught_by_the_guard_gap() {
    // 2 KiB past a 256-byte buffer: the next argument buffer used to be there and changed silently.
    for mode in [&["--functional"][..], &[][..]] {
        let mut args = vec![
            "run",
            "crates/reconverge-cli/tests/data/overrun.ptx",
            "--block",
            "32",
            "--arg",
            "zeros:i32:64",
            "--arg",
            "zeros:i32:1024",
        ];
        args.extend_from_slice(mode);
        let (code, _, err) = reconverge(&args);
        assert_eq!(code, 2, "{mode:?}: {err}");
        assert!(err.contains("out-of-bounds 4-byte global memory access"), "{err}");
        assert!(err.contains("overrun.ptx:20"), "{err}");
        assert!(err.contains("nearest allocation: `argument 0 (over_param_0)`"), "{err}");
    }
}

#[test]
fn naive_spin_lock_deadlocks_under_pdom_and_completes_without_reconvergence() {
    let args = |m: &'static str| {
        vec![
            "run",
            "kernels/ptx/sm_80/spinlock_naive.ptx",
            "--arg",
            "zeros:i32:1",
            "--arg",
            "zeros:i32:2",
            "--mechanism",
            m,
        ]
    };
    for m in ["pdom", "ssy"] {
        let (code, _, err) = reconverge(&args(m));
        assert_eq!(code, 3, "{m}: {err}");
        assert!(err.contains("SIMT deadlock"), "{err}");
        assert!(err.contains("lanes 1-31"), "{err}");
        assert!(err.contains("waiting in the reconvergence structure"), "{err}");
    }
    let (code, _, err) = reconverge(&args("none"));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn runaway_kernels_stop_at_the_limit() {
    let (code, _, err) =
        reconverge(&["run", "crates/reconverge-cli/tests/data/forever.ptx", "--max-instructions", "1000"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("--max-instructions 1000"), "{err}");
}

#[test]
fn suite_passes() {
    let (code, out, err) = reconverge(&["suite"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Every kernel of the manifest under every default mechanism (the registry's default set).
    let manifest =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels/manifest.toml"))
            .expect("the kernel manifest");
    let kernels = manifest.lines().filter(|l| l.trim() == "[[kernel]]").count();
    let runs = kernels * Mechanism::defaults().count();
    assert!(kernels >= 20 && runs > kernels, "{kernels} kernels, {runs} runs");
    assert!(out.contains(&format!("{runs} of {runs} runs as expected ({kernels} kernels")), "{out}");
}

const HIST: [&str; 12] = [
    "run",
    "kernels/ptx/sm_80/histogram.ptx",
    "--grid",
    "4",
    "--block",
    "100",
    "--arg",
    "@kernels/data/histogram/data.npy",
    "--arg",
    "400",
    "--arg",
    "zeros:i32:64",
];

#[test]
fn timed_json_is_identical_for_any_thread_count_and_across_runs() {
    let run = |threads: &str| ok(&[&HIST[..], &["--json", "--threads", threads, "--config", "tiny"]].concat());
    let a = run("1");
    let b = run("2");
    let c = run("2");
    assert_eq!(a, b);
    assert_eq!(b, c);
    let v: serde_json::Value = serde_json::from_str(a.trim()).expect("json");
    assert!(v["cycles"].as_u64().unwrap_or(0) > 0);
    assert!(v["ipc"].as_f64().unwrap_or(0.0) > 0.0);
    for key in
        ["stall_cycles", "issue_utilization", "l1_hit_rate", "l2_hit_rate", "dram_transactions", "sm_cycles", "config"]
    {
        assert!(v.get(key).is_some(), "missing {key}");
    }
    assert_eq!(v["config"]["name"], "tiny");
    assert_eq!(v["lane_histogram"].as_array().map(|x| x.len()), Some(32));
}

#[test]
fn functional_mode_and_cycle_limit() {
    let out = ok(&[&HIST[..], &["--json", "--functional"]].concat());
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    assert!(v["cycles"].is_null());
    let (code, _, err) = reconverge(&[&HIST[..], &["--max-cycles", "100"]].concat());
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("--max-cycles 100"), "{err}");
    let (code, _, err) = reconverge(&[&HIST[..], &["--config", "no-such-preset"]].concat());
    assert_eq!(code, 2);
    assert!(err.contains("neither a preset"), "{err}");
}

/// The escape-time fractal over 64 × 512 pixels, one warp per CTA: 1024 CTAs, enough for CTA sampling on
/// the GTX 480's 15 SMs.
const FRACTAL: [&str; 22] = [
    "run",
    "kernels/ptx/sm_80-nofma/mandelbrot.ptx",
    "--grid",
    "2,512",
    "--block",
    "32",
    "--arg",
    "zeros:i32:32768",
    "--arg",
    "64",
    "--arg",
    "512",
    "--arg",
    "-2.0",
    "--arg",
    "-1.125",
    "--arg",
    "0.0390625",
    "--arg",
    "0.00439453125",
    "--arg",
    "64",
];

#[test]
fn sampled_ctas_are_estimated_and_say_so() {
    let out = ok(&[&FRACTAL[..], &["--sample-ctas", "4", "--threads", "1"]].concat());
    assert!(out.contains("(estimated: 450 of 1024 CTAs not timed)"), "{out}");
    assert!(out.contains("CTA sample             5 stretches not timed"), "{out}");
    assert!(out.contains("the counters below cover the timed CTAs"), "{out}");
    let json = ok(&[&FRACTAL[..], &["--sample-ctas", "--json", "--threads", "1"]].concat());
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("json");
    assert_eq!(v["cta_sample"]["ctas"], 1024);
    assert!(v["cta_sample"]["skipped_ctas"].as_u64().is_some_and(|n| n > 0), "{json}");
    // A sampled launch has no energy: its activity counters cover only the timed CTAs.
    assert!(v.get("energy").is_none(), "{json}");
    for bad in ["1", "0", "many"] {
        let (code, _, err) = reconverge(&[&FRACTAL[..], &["--sample-ctas", bad]].concat());
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--sample-ctas"), "{bad}: {err}");
    }
}

#[test]
fn compare_table_of_the_seed_kernels() {
    let out = ok(&[
        "compare",
        "--kernel",
        "kern",
        "--kernel",
        "capri",
        "--kernel",
        "short_circuit",
        "--kernel",
        "fir",
        "--threads",
        "2",
    ]);
    expect_file!["golden/compare_seed_kernels.txt"].assert_eq(&out);
    let csv = ok(&["compare", "--kernel", "kern", "--csv", "--warp-size", "8", "--warp-size", "32"]);
    assert_eq!(csv.lines().count(), 1 + 2 * Mechanism::defaults().count());
}

#[test]
fn cost_of_the_path_tracking_units() {
    expect_file!["golden/cost_units.txt"].assert_eq(&ok(&["cost", "--units"]));
    let csv = ok(&["cost", "--units", "--csv", "--warp-size", "4,8"]);
    assert_eq!(
        csv,
        "unit,warp_size,warps,storage_bits,comparators,multiplexers\narbiter,4,8,1248,7,3\n\
         sorted_list,4,8,2065,7,5\narbiter,8,8,2496,15,7\nsorted_list,8,8,3738,7,5\n"
    );
    let (code, _, err) = reconverge(&["cost", "--units", "--warp-size", "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("--warp-size 1"), "{err}");
}

/// The seed kernels `cost`'s golden and `compare`'s golden share: small, so the runs are quick.
const COST_KERNELS: [&str; 8] =
    ["--kernel", "kern", "--kernel", "capri", "--kernel", "short_circuit", "--kernel", "fir"];

#[test]
fn storage_and_area_of_every_mechanism() {
    expect_file!["golden/cost.txt"].assert_eq(&ok(&[&["cost"][..], &COST_KERNELS].concat()));
}

/// `cost --csv` rows: (mechanism, structure) → the row's cells by column name.
fn cost_csv(args: &[&str]) -> Vec<std::collections::BTreeMap<String, String>> {
    let out = ok(&[&["cost", "--csv"][..], args].concat());
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    lines.map(|l| header.iter().map(|h| h.to_string()).zip(csv_cells(l)).collect()).collect()
}

/// The cells of one CSV line (quoted cells may hold commas).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

#[test]
fn storage_rows_name_every_mechanism_and_scale_with_the_warp() {
    let rows = cost_csv(&["--no-runs", "--warp-size", "8,32"]);
    let total = |m: &str, w: &str| -> u64 {
        let r = rows.iter().find(|r| r["mechanism"] == m && r["structure"] == "total" && r["warp_size"] == w);
        r.unwrap_or_else(|| panic!("no total of {m} at W = {w}"))["bits_worst"].parse().expect("a number")
    };
    for e in reconverge_mechanism::REGISTRY {
        assert!(total(e.info.name, "32") > 0, "{}", e.info.name);
    }
    // pdom: 48 warps × 2W entries × (W + 2·30) bits, plus a log2(2W + 1)-bit pointer per warp.
    assert_eq!(total("pdom", "8"), 48 * (16 * (8 + 60) + 5));
    assert_eq!(total("pdom", "32"), 48 * (64 * (32 + 60) + 7));
    // The arbiter's pc table grows as W, the CTA-wide stack of tbc as W² (2CW entries of CW-bit masks).
    assert_eq!(total("arbiter", "32"), 4 * total("arbiter", "8"));
    assert!(total("tbc", "32") > 8 * total("tbc", "8"));
    // Without runs the depth reached is the worst case.
    assert!(rows.iter().all(|r| r["bits_reached"] == r["bits_worst"]));
}

#[test]
fn storage_at_the_depth_reached_comes_from_the_runs() {
    let rows = cost_csv(
        &[&["--mechanism", "pdom", "--mechanism", "multi-path", "--mechanism", "simty"][..], &COST_KERNELS].concat(),
    );
    let row = |m: &str, s: &str| rows.iter().find(|r| r["mechanism"] == m && r["structure"] == s).expect("row").clone();
    let stack = row("pdom", "stack");
    // The seed kernels nest at most 3 entries deep at W = 32 (compare's golden: `stack 3`).
    assert_eq!((stack["entries_reached"].as_str(), stack["sized_by"].as_str()), ("3", "max_stack_depth"));
    assert_eq!(stack["bits_reached"], (48 * 3 * 92).to_string());
    assert_eq!(row("multi-path", "reconvergence table")["sized_by"], "max_rt_entries");
    assert_eq!(row("simty", "cold context table")["sized_by"], "max_cct_occupancy");
    assert!(rows.iter().all(|r| !r["sized_by"].contains("worst")), "every figure was reported by a run");
    let (code, _, err) = reconverge(&["cost", "--units", "--mechanism", "pdom"]);
    assert_eq!(code, 2);
    assert!(err.contains("--mechanism"), "{err}");
}

#[test]
fn every_command_taking_several_warp_sizes_takes_a_list_or_the_flag_repeated() {
    let commands: [&[&str]; 3] = [
        &["compare", "--kernel", "kern", "--mechanism", "pdom", "--csv"],
        &["suite", "--kernel", "kern", "--mechanism", "pdom", "--csv"],
        &["cost", "--no-runs", "--mechanism", "pdom", "--csv"],
    ];
    for cmd in commands {
        let listed = ok(&[cmd, &["--warp-size", "8,32"]].concat());
        let repeated = ok(&[cmd, &["--warp-size", "8", "--warp-size", "32"]].concat());
        let mixed = ok(&[cmd, &["--warp-size", "8", "--warp-size", "32,8"]].concat());
        assert_eq!(listed, repeated, "{cmd:?}");
        assert_eq!(listed, mixed, "{cmd:?}: each warp size once");
        assert!(listed.contains(",8,") && listed.contains(",32,"), "{cmd:?}:\n{listed}");
        let (code, _, err) = reconverge(&[cmd, &["--warp-size", "8,x"]].concat());
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("`x` is not a warp size (a whole number from 1 to 64)"), "{cmd:?}: {err}");
    }
}

#[test]
fn the_help_says_what_cost_does() {
    let help = ok(&["--help"]);
    let cost = help.lines().find(|l| l.trim_start().starts_with("cost ")).expect("cost in --help");
    assert!(cost.contains("storage of every mechanism"), "{cost}");
}

#[test]
fn a_modified_preset_is_labelled_after_its_file() {
    let dir = common::temp_dir("labels");
    let name = |file: &str, text: &str| {
        let path = dir.join(file);
        std::fs::write(&path, text).expect("write");
        let path = path.to_str().expect("utf-8").to_string();
        let run = ok(&[&["run", KERN, "--json", "--config", &path][..], &KERN_ARGS].concat());
        let v: serde_json::Value = serde_json::from_str(&run).expect("json");
        v["config"]["name"].as_str().expect("a name").to_string()
    };
    assert_eq!(name("small.toml", "num_sms = 4\n"), "gtx480~small");
    assert_eq!(name("fast.toml", "base = \"volta\"\n[dram]\nlatency = 100\n"), "volta~fast");
    assert_eq!(name("mine.toml", "name = \"mine\"\nnum_sms = 4\n"), "mine");
    assert_eq!(name("plain.toml", "base = \"volta\"\n"), "volta", "a file that changes nothing is the preset");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn integer_conversions_count_as_integer_instructions() {
    // capri has no floating-point instruction; its index arithmetic widens with `cvt.s64.s32`.
    assert!(std::fs::read_to_string(common::root().join("kernels/ptx/sm_80/capri.ptx"))
        .expect("ptx")
        .contains("cvt.s64.s32"));
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["run", "--suite-kernel", "capri", "--functional", "--json"])).expect("json");
    let by_class = &v["by_class"];
    assert_eq!(by_class["float"], 0, "{by_class}");
    assert!(by_class["int"].as_u64().is_some_and(|n| n > 0), "{by_class}");
}

/// The repository paths a document names (`crates/.../x.rs`, `docs/x.md`, ...), placeholders left out.
fn named_paths(doc: &str) -> Vec<String> {
    const ROOTS: [&str; 7] = ["crates/", "docs/", "scripts/", "kernels/", "hw/", "python/", "native/"];
    let token = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for word in doc.split(|c: char| !token(c)) {
        let word = word.trim_end_matches(['.', '-', '/']);
        // `kernels/src/NAME.cu`, `gpgpusim-CONFIG.csv`: a word in capitals stands for any name.
        let placeholder = word.contains("..")
            || word.split(['/', '.', '-']).any(|w| ["NAME", "CONFIG", "PRESET", "FILE", "DIR"].contains(&w));
        let file = word.rsplit('/').next().is_some_and(|f| f.contains('.'));
        if ROOTS.iter().any(|r| word.starts_with(r)) && file && !placeholder {
            out.push(word.to_string());
        }
    }
    out
}

/// The targets of a Markdown text's relative links (`[text](../x.md#anchor)` gives `../x.md`); links
/// with a scheme and links to an anchor of the same page are left out.
fn relative_links(doc: &str) -> Vec<String> {
    doc.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|target| target.split('#').next().unwrap_or_default().to_string())
        .filter(|t| !t.is_empty() && !t.contains("://") && !t.starts_with("mailto:") && !t.contains(' '))
        .collect()
}

#[test]
fn relative_links_are_found_without_anchors_or_schemes() {
    let doc = "see [a](../a.md#x), [b](https://example.org/b.md), [c](#here) and [d](d/)";
    assert_eq!(relative_links(doc), ["../a.md", "d/"]);
}

#[test]
fn the_files_the_documents_name_exist() {
    let root = common::root();
    let mut docs = vec![root.join("README.md"), root.join("ARCHITECTURE.md"), root.join("kernels/README.md")];
    for dir in ["docs", "docs/commands"] {
        docs.extend(std::fs::read_dir(root.join(dir)).expect("docs/").flatten().map(|e| e.path()));
    }
    let mut missing = Vec::new();
    for doc in docs.iter().filter(|d| d.extension().is_some_and(|e| e == "md")) {
        let text = std::fs::read_to_string(doc).expect("reads");
        for p in named_paths(&text) {
            if !root.join(&p).exists() {
                missing.push(format!("{}: {p}", doc.display()));
            }
        }
        // Markdown links are relative to the document that holds them.
        for link in relative_links(&text) {
            if !doc.parent().expect("a directory").join(&link).exists() {
                missing.push(format!("{}: link {link}", doc.display()));
            }
        }
    }
    assert!(missing.is_empty(), "documents name files that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn the_kernel_readme_lists_every_kernel_of_the_manifest_with_its_geometry() {
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("kernels/README.md")).expect("kernels/README.md");
    let manifest: toml::Table =
        std::fs::read_to_string(root.join("kernels/manifest.toml")).expect("manifest").parse().expect("toml");
    let dims =
        |v: &toml::Value| -> Vec<i64> { v.as_array().expect("dims").iter().filter_map(|x| x.as_integer()).collect() };
    let shape = |d: &[i64]| {
        let used = d.iter().rposition(|&x| x != 1).map_or(1, |i| i + 1);
        d[..used].iter().map(i64::to_string).collect::<Vec<_>>().join("x")
    };
    let rows: Vec<Vec<&str>> = readme
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| l.split(" | ").map(|c| c.trim_matches(['|', ' '])).collect())
        .filter(|cells: &Vec<&str>| cells.len() == 6)
        .collect();
    let kernels = manifest["kernel"].as_array().expect("[[kernel]]");
    let mut listed: Vec<&str> = rows.iter().map(|r| r[0].trim_matches('`')).collect();
    let mut named: Vec<&str> = kernels.iter().map(|k| k["name"].as_str().expect("name")).collect();
    for k in kernels {
        let name = k["name"].as_str().expect("name");
        let row = rows.iter().find(|r| r[0] == format!("`{name}`"));
        let Some(row) = row else { continue };
        let want = format!("{} x {}", shape(&dims(&k["grid"])), shape(&dims(&k["block"])));
        assert!(row[3].starts_with(&want), "kernels/README.md: `{name}` runs {want}, the table says {}", row[3]);
        let threads: i64 = dims(&k["block"]).iter().product();
        assert!(threads <= 256, "`{name}`: {threads} threads per CTA, the README says at most 256");
    }
    listed.sort_unstable();
    named.sort_unstable();
    assert_eq!(listed, named, "kernels/README.md's table and kernels/manifest.toml list different kernels");
    // The packages the README lists for the CUDA tools are the requirements file's.
    let requirements = std::fs::read_to_string(root.join("scripts/requirements-cuda.txt")).expect("requirements");
    for package in requirements.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        assert!(readme.contains(package), "kernels/README.md does not list {package} of requirements-cuda.txt");
    }
}

#[test]
fn bench_native_says_the_jit_time_is_not_in_the_functional_median() {
    let out = ok(&["bench", "--native", "--functional", "--min-ms", "1", "--kernel", "kern", "--fractal-rows", "0"]);
    let head = out.lines().next().unwrap_or_default();
    assert!(head.contains("jit ms: compiling hot segments in the first functional run"), "{head}");
    assert!(head.contains("not part of functional ms") && !head.contains("included in functional ms"), "{head}");
}

/// A timed trace of `dws` splitting a warp at a load whose lanes partly miss
/// (`reconverge-timing/tests/data/memdiv.ptx`): the issue events of CTA 0's warp from `trace --perfetto`,
/// one line each (cycle, pc, active lanes, structure entries, instruction).
#[test]
fn timed_trace_of_a_dws_memory_split() {
    let dir = common::temp_dir("dws-split");
    let path = dir.join("memdiv.json");
    let path = path.to_str().expect("utf-8 path");
    let ptx = "crates/reconverge-timing/tests/data/memdiv.ptx";
    let args = ["trace", ptx, "--mechanism", "dws", "--arg", "zeros:u32:32", "--arg", "zeros:u32:1024"];
    ok(&[&args[..], &["--arg", "zeros:u32:32", "--perfetto", path]].concat());
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).expect("trace")).expect("json");
    let mut lines = String::from("cycle   pc lanes entries instruction\n");
    let mut issues = Vec::new();
    for e in v["traceEvents"].as_array().expect("events") {
        let a = &e["args"];
        if let (Some(pc), Some(lanes)) = (a["pc"].as_u64(), a["active_lanes"].as_u64()) {
            let name = e["name"].as_str().unwrap_or("");
            let ts = e["ts"].as_u64().unwrap_or(0);
            lines += &format!("{ts:>5} {pc:>4} {lanes:>5} {:>7} {name}\n", a["structure"]);
            issues.push((ts, pc, lanes));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    expect_file!["golden/trace_memdiv_dws_timed.txt"].assert_eq(&lines);
    // The load at pc 20 issues for all 32 lanes; then the 16 lanes that hit issue the second load (pc 24)
    // while the other 16 still wait for their first, which they pass later; both halves reach the store.
    let at = |pc: u64| issues.iter().filter(|i| i.1 == pc).copied().collect::<Vec<_>>();
    assert_eq!(at(20).iter().map(|i| i.2).collect::<Vec<_>>(), [32]);
    let (second, passes) = (at(24), at(21));
    assert_eq!(second.len(), 2, "the second load issues once per half: {second:?}");
    assert!(second.iter().all(|i| i.2 == 16));
    assert!(second[0].0 < passes[1].0, "the hit half's second load issues before the miss half passes pc 21");
    assert_eq!(at(28).iter().map(|i| i.2).sum::<u64>(), 32, "every lane stores");
}

/// `config show PRESET` prints a file that `--config` reads back to the preset: the same cycles and the
/// preset's name; an edited copy is labelled after its file; an unknown preset is exit 2.
#[test]
fn config_show_prints_a_preset_that_reads_back_to_the_same_cycles() {
    let dir = common::temp_dir("config-show");
    let cycles = |config: &str| -> (u64, String) {
        let out = ok(&["run", "--suite-kernel", "bfs", "--mechanism", "tbc", "--config", config, "--json"]);
        let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
        (v["cycles"].as_u64().expect("cycles"), v["config"]["name"].as_str().unwrap_or("").to_string())
    };
    for preset in ["gtx480", "ispass09"] {
        let text = ok(&["config", "show", preset]);
        assert!(text.contains(&format!("base = \"{preset}\"\n")), "{text}");
        let file = dir.join(format!("{preset}.toml"));
        std::fs::write(&file, &text).expect("writes");
        let path = file.to_str().expect("utf-8");
        assert_eq!(cycles(path), cycles(preset), "{preset}");
        let edited = dir.join("edited.toml");
        std::fs::write(&edited, text.replace("num_sms = ", "num_sms = 1\n# was ")).expect("writes");
        assert_eq!(cycles(edited.to_str().expect("utf-8")).1, format!("{preset}~edited"));
    }
    std::fs::remove_dir_all(&dir).ok();
    let (code, _, err) = reconverge(&["config", "show", "nope"]);
    assert_eq!(code, 2);
    assert!(err.starts_with("config show nope: not a preset (presets: gtx480,"), "{err}");
}

/// `config import` writes GPGPU-Sim's GTX 480 file as a `--config` file: it reads back (named after the
/// file), lists what it mapped and what it could not, and a file that is not a configuration is exit 2.
#[test]
fn config_import_turns_gpgpusim_s_file_into_a_config_file() {
    let src = "crates/reconverge-timing/tests/data/gpgpusim/SM2_GTX480.config";
    let text = ok(&["config", "import", src]);
    assert!(text.contains("# -gpgpu_cache:dl1 -> l1.size, l1.line, l1.ways"), "{text}");
    assert!(text.contains("# not modelled (no equivalent here):\n#"), "{text}");
    assert!(text.lines().all(|l| l.len() <= 240), "no unreadable lines");
    let dir = common::temp_dir("config-import");
    let file = dir.join("fermi.toml");
    std::fs::write(&file, &text).expect("writes");
    let out = ok(&["run", "--suite-kernel", "bfs", "--config", file.to_str().expect("utf-8"), "--json"]);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    assert_eq!(v["config"]["name"], "SM2_GTX480");
    assert_eq!(v["config"]["num_sms"], 15);
    assert_eq!(v["config"]["l2"]["hit_latency"], 120, "GPGPU-Sim's ROP latency, not the preset's fitted 160");
    std::fs::write(dir.join("bad.config"), "-gpgpu_shader_registers lots\n").expect("writes");
    let (code, _, err) = reconverge(&["config", "import", dir.join("bad.config").to_str().expect("utf-8")]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 2);
    assert!(err.ends_with("bad.config: line 1: -gpgpu_shader_registers lots: not a number\n"), "{err}");
}

/// Issue 40: `compare FILE` compares mechanisms on a user's own launch, without a manifest; the same launch
/// as a suite entry gives the same cycles and instructions under every mechanism, and a deadlock or a
/// missing argument is reported, not hidden.
#[test]
fn compare_takes_a_kernel_file_with_run_style_arguments() {
    let launch = CAPRI_LAUNCH;
    let mechs = ["--mechanism", "pdom", "--mechanism", "tbc", "--mechanism", "dwf", "--csv"];
    let from_file = ok(&[&["compare"], &launch[..], &mechs[..]].concat());
    let from_suite = ok(&[&["compare", "--kernel", "capri"], &mechs[..]].concat());
    let columns = |csv: &str| -> Vec<Vec<String>> {
        let mut lines = csv.lines();
        let head: Vec<&str> = lines.next().expect("header").split(',').collect();
        let at = |k: &str| head.iter().position(|h| *h == k).unwrap_or_else(|| panic!("column {k}"));
        let keep = [at("mechanism"), at("cycles"), at("warp_instructions"), at("outcome")];
        lines
            .map(|l| l.split(',').collect::<Vec<_>>())
            .map(|r| keep.iter().map(|&i| r[i].to_string()).collect())
            .collect()
    };
    let (f, s) = (columns(&from_file), columns(&from_suite));
    assert_eq!(f.len(), 3, "{from_file}");
    assert_eq!(f, s, "the file's launch and the suite entry differ");
    assert!(f.iter().all(|r| r[3] == "completed" && r[1].parse::<u64>().expect("cycles") > 0), "{f:?}");
    // A missing argument is the launch's error, naming the kernel's parameters.
    let (code, out, err) = reconverge(&["compare", launch[0], "--block", "64", "--mechanism", "pdom"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("capri / pdom / warp 32: kernel `capri` takes 4 arguments"), "{out}");
}
