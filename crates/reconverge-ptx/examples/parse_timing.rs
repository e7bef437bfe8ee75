//! Times `parse` on one file (min of N runs): `cargo run --release -p reconverge-ptx --example parse_timing -- FILE [N]`.

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: parse_timing FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(10);
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let ok = reconverge_ptx::parse(&src).is_ok();
        let dt = t.elapsed().as_secs_f64();
        assert!(ok, "{path} does not parse");
        best = best.min(dt);
    }
    println!(
        "{path}: {} bytes, best of {runs}: {:.2} ms = {:.1} MB/s",
        src.len(),
        best * 1e3,
        src.len() as f64 / best / 1e6
    );
}
