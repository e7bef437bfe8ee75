//! Parser throughput (MB/s).
//!
//! - `corpus`: every `tests/data/*.ptx` and `kernels/**/*.ptx` file, each parsed as its own module.
//! - `synthetic`: one large module made of the corpus repeated with module-level names renamed per copy
//!   (a few MB, like a big NVRTC translation unit).
//! - `lex`: the lexer alone on the synthetic module.
//!
//! `cargo bench -p reconverge-ptx -- --quick` gives a fast estimate. With `RECONVERGE_BENCH_DUMP=FILE` the
//! synthetic module is also written to `FILE` (for profiling with `examples/parse_timing.rs`).

#![allow(clippy::print_stdout, clippy::print_stderr)] // a front end: printing is its job
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use reconverge_ptx::lexer::{lex, TokenKind};
use std::collections::HashSet;
use std::hint::black_box;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

/// The corpus files that parse.
fn corpus() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    collect(&root.join("tests/data"), &mut paths);
    collect(&root.join("../../kernels"), &mut paths);
    paths.iter().filter_map(|p| std::fs::read_to_string(p).ok()).filter(|s| reconverge_ptx::parse(s).is_ok()).collect()
}

/// `src` with its header directives removed and every module-level name suffixed with `suffix`.
fn renamed(src: &str, suffix: &str) -> String {
    let Ok(m) = reconverge_ptx::parse(src) else { return String::new() };
    let names: HashSet<&str> =
        m.globals.values().map(|g| g.name.as_str()).chain(m.functions.values().map(|f| f.name.as_str())).collect();
    let Ok(tokens) = lex(src) else { return String::new() };
    let mut out = String::with_capacity(src.len() + 1024);
    let mut last = 0;
    for t in tokens {
        let text = &src[t.span.range()];
        if t.kind == TokenKind::Ident && names.contains(text) {
            out.push_str(&src[last..t.span.end as usize]);
            out.push_str(suffix);
            last = t.span.end as usize;
        }
    }
    out.push_str(&src[last..]);
    out.lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.starts_with(".version") || l.starts_with(".target") || l.starts_with(".address_size"))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

fn synthetic(corpus: &[String], target_bytes: usize) -> String {
    let mut out = String::from(".version 8.8\n.target sm_90\n.address_size 64\n");
    let mut rep = 0;
    while out.len() < target_bytes && !corpus.is_empty() {
        for (i, src) in corpus.iter().enumerate() {
            out.push_str(&renamed(src, &format!("__{rep}_{i}")));
        }
        rep += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let corpus = corpus();
    let big = synthetic(&corpus, 4 << 20);
    assert!(reconverge_ptx::parse(&big).is_ok(), "the synthetic module must parse");
    if let Ok(path) = std::env::var("RECONVERGE_BENCH_DUMP") {
        // For profiling outside criterion.
        let _ = std::fs::write(path, &big);
    }

    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Bytes(corpus.iter().map(|s| s.len() as u64).sum()));
    g.bench_function("corpus", |b| {
        b.iter(|| {
            for s in &corpus {
                black_box(reconverge_ptx::parse(black_box(s)).ok());
            }
        })
    });
    g.throughput(Throughput::Bytes(big.len() as u64));
    g.sample_size(20);
    g.bench_function("synthetic", |b| b.iter(|| black_box(reconverge_ptx::parse(black_box(&big)).ok())));
    g.bench_function("lex", |b| b.iter(|| black_box(lex(black_box(&big)).ok())));
    g.bench_function("ast", |b| b.iter(|| black_box(reconverge_ptx::parse_ast(black_box(&big)).ok())));
    g.finish();
}

fn config() -> Criterion {
    // Criterion writes its reports under the current directory (the package) by default; keep them in the
    // workspace's target directory instead.
    Criterion::default().output_directory(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/criterion"))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
