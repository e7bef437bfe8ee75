//! Seed 003 Figure 1 traced through the library, without the command line: for every per-warp
//! mechanism, `load` + `run` with a figure-mode [`TraceRecorder`] must give exactly the lines of the
//! committed golden trace (`reconverge-cli/tests/golden/figure1/`, which the command line's `trace
//! --blocks` is checked against too). The command line adds only its title line.

use reconverge_mechanism::{Mechanism, Scope};
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig};
use reconverge_report::trace::TraceRecorder;
use reconverge_sim::{load, run};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The trace's lines under `mech`: the column header, one line per issue, the outcome.
fn library_trace(mech: Mechanism) -> Vec<String> {
    let file = "kernels/ptx/sm_80/short_circuit.ptx";
    let src = std::fs::read_to_string(format!("{ROOT}/{file}")).expect("the kernel");
    let module = reconverge_ptx::parse(&src).expect("parses");
    let opts = DecodeOptions { file: file.into(), source: Some(src.clone()), ..Default::default() };
    let kernel = load(&module, None, mech, &opts).expect("loads");
    let cfg = LaunchConfig { block: [4, 1, 1], warp_size: 4, ..LaunchConfig::default() };
    let args = [Arg::Buffer(Buffer::zeros(Dtype::I32, 32))];
    let mut rec = TraceRecorder::new(kernel.program(), 0, Some(0), 4, 10_000).figure();
    let r = run(&kernel, &cfg, &args[..], &mut rec);
    assert!(!rec.truncated, "{mech}: the whole trace fits");
    let mut lines = vec![rec.header()];
    lines.extend(rec.lines.iter().cloned());
    lines.push(format!("outcome: {}", r.outcome()));
    lines
}

#[test]
fn figure1_traces_from_the_library_equal_the_goldens() {
    let per_warp: Vec<Mechanism> = Mechanism::ALL.into_iter().filter(|m| m.scope() == Scope::Warp).collect();
    assert!(per_warp.len() >= 10, "the per-warp mechanisms: {per_warp:?}");
    for m in per_warp {
        let path = format!("{ROOT}/crates/reconverge-cli/tests/golden/figure1/{}.txt", m.name().replace(':', "_"));
        let golden = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let want: Vec<&str> = golden.lines().skip(1).collect();
        let title = golden.lines().next().unwrap_or_default();
        assert!(title.starts_with("trace of CTA 0 warp 0 of kernel short_circuit under "), "{path}: {title}");
        assert_eq!(library_trace(m), want, "{m}: the library's trace differs from {path}");
    }
}
