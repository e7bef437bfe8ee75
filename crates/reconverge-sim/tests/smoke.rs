use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_sim::*;

fn load_kernel(path: &str, mech: Mechanism) -> Loaded {
    let src = std::fs::read_to_string(format!("{}/../../kernels/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let m = reconverge_ptx::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    load(&m, None, mech, &DecodeOptions { file: path.into(), source: Some(src.clone()), ..Default::default() }).unwrap()
}

#[test]
fn kern_runs_under_every_mechanism() {
    for mech in Mechanism::ALL {
        let p = load_kernel("ptx/sm_80/kern.ptx", mech);
        let cfg = LaunchConfig { block: [32, 1, 1], ..LaunchConfig::default() };
        let args: Vec<Arg> = (0..3).map(|_| Arg::Buffer(Buffer::zeros(Dtype::I32, 38))).collect();
        let r = run(&p, &cfg, &args, &mut NoObserver);
        assert!(r.error.is_none(), "{mech}: {:?}", r.error.map(|e| e.to_string()));
        let a = r.buffers[0].as_ref().unwrap();
        let vals: Vec<String> = (0..a.len()).map(|i| a.format(i)).collect();
        eprintln!(
            "{mech}: a = {}  stats {:?}",
            vals.join(" "),
            (r.stats.warp_instructions, r.stats.thread_instructions, r.stats.max_structure)
        );
        assert_eq!(a.format(6), "99");
        assert_eq!(a.format(0), "1");
        assert_eq!(a.format(11), "5");
    }
}

/// Mechanism-inserted instructions are counted apart: on seed 001's `kern` pdom and ssy run the same
/// kernel instructions with the same lanes, and only ssy issues mechanism instructions.
#[test]
fn kernel_work_is_the_same_under_pdom_and_ssy() {
    let mut seen = Vec::new();
    for mech in [Mechanism::Pdom, Mechanism::Ssy] {
        let p = load_kernel("ptx/sm_80/kern.ptx", mech);
        let cfg = LaunchConfig { block: [32, 1, 1], ..LaunchConfig::default() };
        let args: Vec<Arg> = (0..3).map(|_| Arg::Buffer(Buffer::zeros(Dtype::I32, 38))).collect();
        let r = run(&p, &cfg, &args, &mut NoObserver);
        assert!(r.error.is_none());
        let s = r.stats;
        assert_eq!(s.mechanism_instructions, s.by_class.mechanism, "{mech}: one definition, one count");
        assert_eq!(s.kernel_instructions() + s.mechanism_instructions, s.warp_instructions);
        seen.push((mech, s));
    }
    let (pdom, ssy) = (&seen[0].1, &seen[1].1);
    assert_eq!(pdom.mechanism_instructions, 0);
    assert!(ssy.mechanism_instructions > 0);
    assert_eq!(pdom.kernel_instructions(), ssy.kernel_instructions());
    assert_eq!(pdom.kernel_thread_instructions(), ssy.kernel_thread_instructions());
    assert_eq!(pdom.simd_efficiency(32), ssy.simd_efficiency(32));
    assert!(ssy.simd_efficiency_all(32) != ssy.simd_efficiency(32));
    assert_eq!((pdom.branches, pdom.divergent_branches), (ssy.branches, ssy.divergent_branches));
    assert_eq!(pdom.divergent_branches, 1, "the `if (t < 5)` branch splits once");
}
