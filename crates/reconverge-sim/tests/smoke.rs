use reconverge_sim::*;

fn load_kernel(path: &str, mech: Mechanism) -> Program {
    let src = std::fs::read_to_string(format!("{}/../../kernels/{path}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let m = reconverge_ptx::parse(&src).unwrap_or_else(|e| panic!("{e}"));
    load(&m, None, mech, &DecodeOptions { file: path.into(), source: Some(src.clone()) }).unwrap()
}

#[test]
fn kern_runs_under_every_mechanism() {
    for mech in Mechanism::ALL {
        let p = load_kernel("ptx/sm_80/kern.ptx", mech);
        let cfg = LaunchConfig { block: [32, 1, 1], ..LaunchConfig::default() };
        let args: Vec<Arg> = (0..3).map(|_| Arg::Buffer(Buffer::zeros(Dtype::I32, 38))).collect();
        let r = run(&p, mech, &cfg, &args, &mut NoObserver);
        assert!(r.error.is_none(), "{mech}: {:?}", r.error.map(|e| e.to_string()));
        let a = r.buffers[0].as_ref().unwrap();
        let vals: Vec<String> = (0..a.len()).map(|i| a.format(i)).collect();
        eprintln!(
            "{mech}: a = {}  stats {:?}",
            vals.join(" "),
            (r.stats.warp_instructions, r.stats.thread_instructions, r.stats.max_stack_depth)
        );
        assert_eq!(a.format(6), "99");
        assert_eq!(a.format(0), "1");
        assert_eq!(a.format(11), "5");
    }
}
