//! The `mimd` bound bounds: on the GTX 480 preset at warp size 32, every built-in kernel without atomics
//! or spinning (a volatile load polled in a loop) takes no more cycles under `mimd` than under `pdom` and
//! `dwf`. Kernels that contend on atomics or spin are left out: running more threads of a warp apart puts
//! more of them on the lock or flag at once, which a bound on issue does not bound
//! (docs/mechanism-reference.md, `mimd`).

mod common;

use reconverge_mechanism::Mechanism;
use reconverge_program::program::Op;
use reconverge_suite::{prepare_entry, run_prepared, Mode};
use reconverge_timing::GpuConfig;

/// Whether the program contends on memory: an atomic, or a volatile load (the built-in kernels poll
/// flags with volatile loads).
fn contends(p: &reconverge_program::Program) -> bool {
    p.insts.iter().any(|i| matches!(i.op, Op::Atom { .. } | Op::Ld { volatile: true, .. }))
}

#[test]
fn mimd_takes_no_more_cycles_than_pdom_or_dwf() {
    let suite = common::Suite::load();
    let load = |p: &str| suite.read(p);
    let gpu = GpuConfig::gtx480();
    let (mut compared, mut left_out) = (0, Vec::new());
    for e in &suite.manifest.kernels {
        let cycles = |mech: Mechanism| {
            let p = prepare_entry(e, mech, 32, &load, 20_000_000).expect("loads");
            let (r, t) = run_prepared(&p, Mode::Timed { gpu: &gpu, threads: 1 });
            assert!(r.error.is_none(), "{} under {mech}: {:?}", e.name, r.error);
            (contends(p.kernel.program()), t.expect("timed").cycles)
        };
        let (contending, mimd) = cycles(Mechanism::from_name("mimd").expect("registered"));
        if contending {
            left_out.push(e.name.clone());
            continue;
        }
        for base in ["pdom", "dwf"].map(|n| Mechanism::from_name(n).expect("registered")) {
            let (_, other) = cycles(base);
            assert!(mimd <= other, "{}: mimd {mimd} cycles, {base} {other}", e.name);
        }
        compared += 1;
    }
    // The filter keeps most of the suite and removes the spin locks and the flag hand-off.
    assert!(compared >= 12, "only {compared} kernels compared (left out: {left_out:?})");
    for spinning in ["spinlock_safe", "spinlock_naive", "flag_handoff"] {
        assert!(left_out.iter().any(|k| k == spinning), "{spinning} is not recognised as contending");
    }
}
