//! Numbers that compare: `compare`'s speedup summary is over one kernel set (every listed mechanism
//! completed), with the median beside the mean and the left-out kernels named; configurations are told
//! apart by content, not by name; `suite` ends with a per-mechanism summary and a legend.

mod common;
use common::{ok, reconverge, root};

#[test]
fn the_compare_summary_is_over_the_kernels_every_mechanism_completed() {
    let args =
        ["compare", "--kernel", "nw", "--kernel", "spinlock_naive", "--mechanism", "pdom", "--mechanism", "none"];
    let text = ok(&args);
    assert!(text.contains("speedup over pdom, gtx480 warp 32, over the 1 kernel every mechanism completed:"), "{text}");
    assert!(text.contains("mechanism  geomean  median  min"), "{text}");
    assert!(
        text.contains(
            "left out of every mean (a run without a speedup): spinlock_naive (pdom: deadlock, none: no baseline)"
        ),
        "{text}"
    );
    let csv = ok(&[&args[..], &["--csv", "--summary"]].concat());
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "config,warp_size,mechanism,geomean_speedup,median_speedup,min_speedup,max_speedup,\
             geomean_energy_speedup,geomean_edp_speedup,kernels,excluded"
        )
    );
    let none: Vec<&str> = lines.find(|l| l.contains(",none,")).expect("none's row").split(',').collect();
    assert_eq!(none[9], "1", "one kernel in the common set");
    // gtx480 prices energy: the energy and EDP means are over the same kernel.
    let energy: f64 = none[7].parse().expect("energy mean");
    let edp: f64 = none[8].parse().expect("EDP mean");
    let speedup: f64 = none[3].parse().expect("mean");
    assert!(energy > 0.0 && (edp - energy * speedup).abs() < 1e-9 * edp, "EDP = energy x time: {none:?}");
    let (mean, median): (f64, f64) = (none[3].parse().expect("mean"), none[4].parse().expect("median"));
    assert!((mean - median).abs() < 1e-12, "one kernel: the mean is the median");
    assert!(none[10].starts_with("\"spinlock_naive (pdom: deadlock"), "{none:?}");
    let json: serde_json::Value =
        serde_json::from_str(&ok(&[&args[..], &["--json", "--summary"]].concat())).expect("json");
    assert_eq!(json.as_array().map(Vec::len), Some(2));
    assert_eq!(json[0]["kernels"], 1);
}

#[test]
fn two_configurations_with_one_name_are_told_apart_and_the_same_one_twice_is_refused() {
    let dir = std::env::temp_dir().join(format!("reconverge-summary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let slow = dir.join("slow.toml");
    std::fs::write(&slow, "base = \"gtx480\"\n[dram]\nlatency = 600\n").expect("write");
    let slow = slow.to_str().expect("utf-8");
    let csv =
        ok(&["compare", "--kernel", "bfs", "--mechanism", "pdom", "--config", "gtx480", "--config", slow, "--csv"]);
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!((rows[0][1], rows[1][1]), ("gtx480", "gtx480~slow"));
    assert_eq!((rows[0][8], rows[1][8]), ("1.0", "1.0"), "each configuration's pdom is its own baseline");
    assert_ne!(rows[0][7], rows[1][7], "a 600-cycle DRAM changes the cycles");
    let same = dir.join("same.toml");
    std::fs::write(&same, "base = \"gtx480\"\n").expect("write");
    let (code, _, err) =
        reconverge(&["compare", "--kernel", "bfs", "--config", "gtx480", "--config", same.to_str().expect("utf-8")]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("are the same configuration: give it once"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_suite_ends_with_a_summary_per_mechanism_and_counts_only_the_kernels_it_ran() {
    let text =
        ok(&["suite", "--kernel", "kern", "--kernel", "spinlock_naive", "--mechanism", "pdom", "--mechanism", "none"]);
    assert!(text.contains("`deadlock ... ok` is an expected SIMT deadlock"), "{text}");
    assert!(text.contains("SIMD eff (mean over the 1 kernel × warp run every mechanism completed)"), "{text}");
    let pdom = text.lines().find(|l| l.starts_with("pdom ") && l.contains('%')).expect("pdom's summary line");
    let cells: Vec<&str> = pdom.split_whitespace().collect();
    assert_eq!(&cells[..6], ["pdom", "2", "2", "1", "1", "0"], "{pdom}");
    assert!(text.contains("4 of 4 runs as expected (2 kernels, 2 mechanisms)"), "{text}");
    assert!(root().join("docs/seeds.md").is_file(), "the seeds the help names are defined");
}
