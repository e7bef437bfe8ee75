//! Energy as `run --json` reports it (docs/energy.md): components that add up, the scalar lane's saving on
//! seed 004's FIR filter at equal cycles, configurations without coefficients reporting none, and banked
//! DRAM's counters.

mod common;

use serde_json::Value;

/// `run --json` of the suite's `fir` under `config`.
fn fir(config: &str) -> Value {
    let out = common::ok(&[
        "run",
        "kernels/ptx/sm_80-nofma/fir.ptx",
        "--kernel",
        "fir",
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
        "--config",
        config,
        "--json",
    ]);
    serde_json::from_str(&out).expect("JSON")
}

fn joules(v: &Value, component: &str) -> f64 {
    v["energy"]["components_j"][component].as_f64().unwrap_or_else(|| panic!("{component} in {v}"))
}

#[test]
fn the_components_add_up_to_the_total_and_power_and_edp_follow() {
    let v = fir("gtx480");
    let e = &v["energy"];
    let parts: f64 = e["components_j"].as_object().expect("components").values().filter_map(Value::as_f64).sum();
    let total = e["total_j"].as_f64().expect("total");
    assert!((parts - total).abs() <= 1e-12 * total.max(1.0), "{e}");
    let seconds = e["seconds"].as_f64().expect("seconds");
    let cycles = v["cycles"].as_f64().expect("cycles");
    assert!((seconds - cycles / 700e6).abs() < 1e-15, "{e}: the GTX 480's 700 MHz");
    assert!((e["average_power_w"].as_f64().expect("power") - total / seconds).abs() < 1e-9);
    assert!((e["edp_js"].as_f64().expect("edp") - total * seconds).abs() < 1e-18);
    // GPUWattch's constant 11 W over the launch's time.
    assert!((joules(&v, "constant") - 11.0 * seconds).abs() < 1e-15);
}

/// Seed 004 Figure 7(b): a scalar instruction occupies one lane, so the register file, the integer units
/// and the pipeline do less at the same cycles (done-when of issue 41).
#[test]
fn the_scalar_lane_uses_less_energy_than_the_simd_lanes_on_fir_at_equal_cycles() {
    let simd = fir("gtx480");
    let lane = fir("gtx480+scalar-lane");
    assert_eq!(simd["cycles"], lane["cycles"]);
    let total = |v: &Value| v["energy"]["total_j"].as_f64().expect("total");
    assert!(total(&lane) < total(&simd), "{} vs {}", total(&lane), total(&simd));
    for part in ["register_file", "integer_units", "pipeline"] {
        assert!(joules(&lane, part) < 0.7 * joules(&simd, part), "{part}");
    }
    for part in ["l1", "l2", "dram", "idle_sms", "constant"] {
        assert_eq!(joules(&lane, part), joules(&simd, part), "{part}: the same memory traffic and time");
    }
}

#[test]
fn a_configuration_without_coefficients_reports_no_energy() {
    let v = fir("tiny");
    assert!(v.get("energy").is_none(), "{v}");
    assert!(v["cycles"].as_u64().is_some());
}

#[test]
fn banked_dram_counts_rows_and_bursts() {
    let v = fir("gtx480");
    let d = &v["memory"]["dram"];
    let n = |k: &str| d[k].as_u64().unwrap_or_else(|| panic!("{k} in {d}"));
    assert_eq!(n("row_hits") + n("row_misses") + n("row_conflicts"), n("read_bursts") + n("write_bursts"), "{d}");
    assert_eq!(n("activates"), n("row_misses") + n("row_conflicts"));
    assert_eq!(n("data_bus_cycles"), 2 * (n("read_bursts") + n("write_bursts")), "2 command cycles a GDDR5 burst");
    assert!(n("channel_cycles") > 0);
    // Sectors read from DRAM are the L2's read misses, one request each.
    assert_eq!(n("read_bursts"), v["memory"]["dram_reads"].as_u64().expect("dram_reads"));
}
