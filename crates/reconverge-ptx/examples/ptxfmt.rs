//! Parses a PTX file and prints it back through the IR printer (or the diagnostics, plain text).
//!
//! `cargo run -p reconverge-ptx --example ptxfmt -- FILE.ptx`

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: ptxfmt FILE.ptx");
        std::process::exit(2);
    };
    let src = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    match reconverge_ptx::parse(&src) {
        Ok(m) => print!("{}", reconverge_ir::print_module(&m)),
        Err(e) => {
            eprint!("{}", reconverge_ptx::SourceError::new(path, src, e).render_plain());
            std::process::exit(2);
        }
    }
}
