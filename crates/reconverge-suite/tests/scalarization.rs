//! Seed 004's dynamic scalarization metrics on every kernel of `kernels/`: the counts obey their
//! definitions under every kind of mechanism (per-warp stack, stackless with dynamic convergence
//! preservation, cross-warp regrouping) and the oracle does not depend on the mechanism.

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_sim::scalarize::ScalarizeStats;
use reconverge_suite::{run_entry, Mode};

/// The definitions, checked on one run.
fn check(s: &ScalarizeStats, kernel_instructions: u64, kernel_threads: u64) -> Result<(), String> {
    let c = &s.convergent;
    let t = s.thread_instructions;
    let i = &s.issued;
    let (b, z) = (&s.baseline, &s.scalarized);
    let checks: [(&str, bool); 12] = [
        ("thread instructions = the kernel's own", t == kernel_threads),
        (
            "issued split sums to the kernel's instructions",
            i.scalar + i.converged + i.dcp + i.diverged == kernel_instructions,
        ),
        ("CA <= CA+VA <= +exit", c.ca <= c.ca_va && c.ca_va <= c.exit),
        ("+exit <= +dcp <= all", c.exit <= c.dcp && c.dcp <= t),
        ("+exit <= oracle <= all", c.exit <= c.oracle && c.oracle <= t),
        ("divergent = all - exit", s.divergent == t - c.exit),
        ("oracle exact part <= divergent", s.oracle_exact <= s.divergent),
        ("baseline operations = thread instructions", b.operations == t),
        ("scalarization never adds operations", z.operations <= b.operations),
        (
            "scalarization never adds register accesses",
            z.register_reads <= b.register_reads && z.register_writes <= b.register_writes,
        ),
        (
            "scalarization never adds memory activity",
            z.address_counts <= b.address_counts && z.data_accesses <= b.data_accesses,
        ),
        ("addresses <= data elements", b.address_counts <= b.data_accesses && z.address_counts <= b.data_accesses),
    ];
    match checks.iter().find(|(_, ok)| !ok) {
        Some((what, _)) => Err(format!("{what}: {s:?}")),
        None => Ok(()),
    }
}

#[test]
fn the_metrics_keep_their_definitions_on_every_kernel() {
    let suite = common::Suite::load();
    let (manifest, load) = (&suite.manifest, |p: &str| suite.read(p));
    let mut failures = Vec::new();
    let mut runs = 0;
    for entry in &manifest.kernels {
        for ws in [4, 32] {
            if !entry.supports_warp_size(ws) {
                continue;
            }
            let mut oracles = Vec::new();
            for mech in [Mechanism::Pdom, Mechanism::StacklessDcp, Mechanism::from_name("dwf").expect("registered")] {
                let o = run_entry(entry, mech, ws, &load, 50_000_000, Mode::Functional, true);
                let what = format!("{} / {mech} / warp {ws}", entry.name);
                let Some(r) = o.result.as_ref().filter(|r| r.error.is_none()) else { continue };
                let st = &r.stats;
                let Some(s) = &st.scalarization else {
                    failures.push(format!("{what}: no scalarization statistics"));
                    continue;
                };
                runs += 1;
                if let Err(e) = check(s, st.kernel_instructions(), st.kernel_thread_instructions()) {
                    failures.push(format!("{what}: {e}"));
                }
                oracles.push((mech, s.thread_instructions, s.convergent.oracle, s.convergent.exit));
            }
            // The same work (a kernel without spin loops runs the same thread instructions under every
            // mechanism) has the same oracle and the same analysis shares.
            if let Some(&(m0, t0, o0, e0)) = oracles.first() {
                for &(m, t, o, e) in &oracles[1..] {
                    if t == t0 && (o, e) != (o0, e0) {
                        failures.push(format!(
                            "{} / warp {ws}: oracle/exit {o}/{e} under {m}, {o0}/{e0} under {m0}",
                            entry.name
                        ));
                    }
                }
            }
        }
    }
    assert!(runs >= 100, "only {runs} runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
