//! Prints the kernel of a seed: `cargo run -p reconverge-kernelgen --example dump -- SEED [COUNT DIR]`.
//! With COUNT and DIR, writes seeds SEED.. SEED+COUNT-1 to DIR/seed-N.ptx instead.
#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
fn main() {
    let mut args = std::env::args().skip(1);
    let seed: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let opts = reconverge_kernelgen::GenOptions::default();
    match (args.next().and_then(|s| s.parse::<u64>().ok()), args.next()) {
        (Some(count), Some(dir)) => {
            std::fs::create_dir_all(&dir).expect("output directory");
            for s in seed..seed + count {
                let k = reconverge_kernelgen::generate(s, &opts);
                std::fs::write(format!("{dir}/seed-{s}.ptx"), k.ptx).expect("write");
            }
        }
        _ => {
            let k = reconverge_kernelgen::generate(seed, &opts);
            println!("{}", k.ptx);
            eprintln!("grid {:?} block {:?} args {:?}", k.grid, k.block, k.args.get(2));
        }
    }
}
