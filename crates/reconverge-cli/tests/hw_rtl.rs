//! The RTL of hw/ against the simulator: path traces exported from the `simty` and `arbiter` mechanisms on
//! suite kernels must equal the committed ones (hw/traces/), and both units' test benches (Icarus
//! Verilog) must choose the recorded next path at every step of every trace; `cost --synth` (Yosys) must
//! give its CSV. Without iverilog or yosys these parts print why and pass, unless RECONVERGE_REQUIRE_HW=1
//! (CI). RECONVERGE_BLESS_HW=1 rewrites the committed traces.

#![allow(clippy::print_stderr, reason = "its helpers say on stderr what was skipped and why")]

mod common;

use common::{reconverge, root};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The committed traces: kernel, mechanism, warp size, steps recorded.
const TRACES: &[(&str, &str, u32, usize)] = &[
    ("short_circuit", "simty", 4, 1000),
    ("recursion", "simty", 4, 1000),
    ("switch_kernel", "arbiter", 4, 1000),
    ("bfs", "simty", 8, 1000),
    ("nested_loops", "arbiter", 8, 1000),
    ("irreducible", "simty", 8, 1000),
    ("switch_kernel", "simty", 32, 1000),
    ("bfs", "simty", 32, 1000),
    ("recursion", "arbiter", 64, 1000),
];

fn trace_name(kernel: &str, mech: &str, w: u32) -> String {
    format!("{kernel}_w{w}_{mech}.txt")
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconverge-hw-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn required() -> bool {
    std::env::var("RECONVERGE_REQUIRE_HW").is_ok_and(|v| v == "1")
}

/// Whether `tool` runs; if not, fails under RECONVERGE_REQUIRE_HW=1 and otherwise says why it skips.
fn have(tool: &str, arg: &str) -> bool {
    let ok = Command::new(tool).arg(arg).output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(!required(), "{tool} is missing and RECONVERGE_REQUIRE_HW=1 (apt-get install iverilog yosys)");
        eprintln!("skipped: {tool} is not installed (apt-get install iverilog yosys; RECONVERGE_REQUIRE_HW=1 makes this fail)");
    }
    ok
}

/// Exports the path trace of `kernel` (CTA 0) under `mech` at warp size `w` to `out`.
fn export(kernel: &str, mech: &str, w: u32, limit: usize, out: &Path) {
    let text = std::fs::read_to_string(root().join("kernels/manifest.toml")).expect("manifest");
    let manifest = reconverge_suite::Manifest::parse(&text).expect("manifest parses");
    let e = manifest.kernels.iter().find(|k| k.name == kernel).expect("kernel in the manifest");
    let dims = |d: [u32; 3]| d.map(|x| x.to_string()).join(",");
    let mut args: Vec<String> = vec![
        "trace".into(),
        format!("kernels/{}", e.ptx),
        "--kernel".into(),
        kernel.into(),
        "--grid".into(),
        dims(e.grid),
        "--block".into(),
        dims(e.block),
        "--mechanism".into(),
        mech.into(),
        "--warp-size".into(),
        w.to_string(),
        "--functional".into(),
        "--limit".into(),
        limit.to_string(),
        "--export-paths".into(),
        out.display().to_string(),
    ];
    for a in &e.args {
        let t = a.text();
        let t = match t.strip_prefix('@') {
            Some(p) => format!("@kernels/{p}"),
            None => t,
        };
        args.push(format!("--arg={t}"));
    }
    let (code, stdout, err) = reconverge(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{args:?}: {err}");
    assert!(!stdout.contains("held at a barrier"), "{kernel}: {stdout}");
}

#[test]
fn exported_traces_equal_the_committed_ones_and_the_rtl_follows_them() {
    let dir = temp_dir();
    let bless = std::env::var("RECONVERGE_BLESS_HW").is_ok_and(|v| v == "1");
    let mut files = Vec::new();
    for &(kernel, mech, w, limit) in TRACES {
        let name = trace_name(kernel, mech, w);
        let fresh = dir.join(&name);
        export(kernel, mech, w, limit, &fresh);
        let committed = root().join("hw/traces").join(&name);
        let new = std::fs::read_to_string(&fresh).expect("exported");
        if bless {
            std::fs::write(&committed, &new).expect("bless");
        }
        let old = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            old == new,
            "hw/traces/{name} differs from a fresh export; rerun with RECONVERGE_BLESS_HW=1 and review"
        );
        files.push((committed, w, new));
    }
    if !have("iverilog", "-V") {
        return;
    }
    // One bench build per unit, warp size and warp count; each trace through both units.
    for (path, w, text) in &files {
        let warps: u32 = text
            .lines()
            .find_map(|l| l.strip_prefix("h "))
            .and_then(|h| h.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .expect("h record");
        let nwarps = warps.next_power_of_two().max(2);
        for (tb, sources) in
            [("tb_arbiter", &["hw/arbiter.v"][..]), ("tb_sorted_list", &["hw/sorted_list.v", "hw/ccs.v"][..])]
        {
            let vvp = dir.join(format!("{tb}_{w}_{nwarps}.vvp"));
            if !vvp.exists() {
                let out = Command::new("iverilog")
                    .current_dir(root())
                    .args(["-g2005", "-Wall", "-Wno-timescale", "-I", "hw/tb", "-o"])
                    .arg(&vvp)
                    .arg("-P")
                    .arg(format!("{tb}.W={w}"))
                    .arg("-P")
                    .arg(format!("{tb}.NWARPS={nwarps}"))
                    .arg(format!("hw/tb/{tb}.v"))
                    .args(sources)
                    .output()
                    .expect("iverilog runs");
                let log = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success() && log.trim().is_empty(), "iverilog {tb} W={w}: {log}");
            }
            let out = Command::new("vvp").arg("-n").arg(&vvp).arg(format!("+trace={}", path.display())).output();
            let out = out.expect("vvp runs");
            let log = String::from_utf8_lossy(&out.stdout);
            let verdict = log.lines().find(|l| l.starts_with("PASS") || l.starts_with("FAIL"));
            assert!(verdict.is_some_and(|v| v.starts_with("PASS")), "{tb} on {}:\n{log}", path.display());
            eprintln!("{}: {}", path.file_name().and_then(|f| f.to_str()).unwrap_or("?"), verdict.unwrap_or(""));
        }
    }
}

#[test]
fn export_paths_needs_a_path_tracking_mechanism() {
    let (code, _, err) = reconverge(&[
        "trace",
        "kernels/ptx/sm_80/short_circuit.ptx",
        "--arg",
        "zeros:i32:256",
        "--mechanism",
        "pdom",
        "--export-paths",
        "/dev/null",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--mechanism simty or arbiter"), "{err}");
}

#[test]
fn synthesis_gives_cells_for_both_units() {
    if !have("yosys", "-V") {
        return;
    }
    let (code, out, err) = reconverge(&["cost", "--synth", "--warp-size", "4", "--csv"]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("unit,warp_size,warps,logic_cells,flip_flops,memory_bits,tool"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for (r, unit) in rows.iter().zip(["arbiter", "sorted_list"]) {
        assert_eq!((r[0], r[1], r[2]), (unit, "4", "8"), "{out}");
        let n = |i: usize| r[i].parse::<u64>().unwrap_or(0);
        assert!(n(3) > 0 && n(4) > 0, "{out}");
        assert!(r[6].starts_with("Yosys"), "{out}");
    }
    // The sorted list's cold context table is a RAM when the flow maps memories (Cyclone IV E M9K).
    if rows[1][6].contains("cycloneive") {
        assert_eq!(rows[1][5], (8 * 4 * (38 + 4)).to_string(), "{out}");
    }
    let (code, _, err) = reconverge(&["cost", "--synth", "--warp-size", "6"]);
    assert_eq!(code, 2);
    assert!(err.contains("power of two"), "{err}");
}
