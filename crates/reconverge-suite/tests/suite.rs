//! Every kernel of `kernels/` under every mechanism and warp sizes 4..32 matches its expected outputs.

use reconverge_sim::Mechanism;
use reconverge_suite::{run_entry, Manifest, Mode};

fn kernels_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels")
}

#[test]
fn every_kernel_every_mechanism_every_warp_size() {
    let dir = kernels_dir();
    let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("kernels/manifest.toml");
    let manifest = Manifest::parse(&text).expect("manifest parses");
    assert!(manifest.kernels.len() >= 14, "the suite has the seed kernels and ten workloads");
    let load = |p: &str| std::fs::read(dir.join(p)).map_err(|e| format!("{p}: {e}"));
    let mut failures = Vec::new();
    let mut runs = 0;
    for entry in &manifest.kernels {
        for mech in Mechanism::ALL {
            for ws in [4, 8, 16, 32] {
                if !entry.supports_warp_size(ws) {
                    continue;
                }
                let o = run_entry(entry, mech, ws, &load, 50_000_000, Mode::Functional);
                runs += 1;
                if !o.verdict.ok() {
                    failures.push(format!("{} / {} / warp {ws}: {:?}", entry.name, mech, o.verdict));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} of {runs} runs failed:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn every_kernel_every_mechanism_under_the_timing_model() {
    let dir = kernels_dir();
    let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("kernels/manifest.toml");
    let manifest = Manifest::parse(&text).expect("manifest parses");
    let load = |p: &str| std::fs::read(dir.join(p)).map_err(|e| format!("{p}: {e}"));
    let mut failures = Vec::new();
    for preset in ["gtx480", "tiny"] {
        let gpu = reconverge_timing::GpuConfig::preset(preset).expect("preset");
        for entry in &manifest.kernels {
            for mech in Mechanism::ALL {
                let o = run_entry(entry, mech, 32, &load, 50_000_000, Mode::Timed { gpu: &gpu, threads: 2 });
                if !o.verdict.ok() {
                    failures.push(format!("{preset} / {} / {}: {:?}", entry.name, mech, o.verdict));
                } else if o.result.as_ref().is_some_and(|r| r.error.is_none()) {
                    let t = o.timing.expect("timing statistics");
                    assert!(t.cycles > 0, "{} under {mech}: no cycles", entry.name);
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
