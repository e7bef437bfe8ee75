//! `reconverge cfg` on one large function: linear in its size.
//!
//! A kernel of N instructions (a short if-then every five instructions, so N/5 branches and 2N/5 blocks)
//! goes through the control-flow analyses, the report, and its text, Graphviz and JSON renderings, for
//! N = 10k, 40k and 100k instructions; the time per instruction must stay flat. Before the fix the report
//! recomputed every block's label per printed instruction: 35 s at 40k and 236 s at 100k instructions.
//!
//! The second group is a `brx.idx` with T targets that fall through into one another (T = 5k, 10k, 20k):
//! the last target is control dependent on the branch through every target, so the labelled relation is
//! quadratic. It took 1.06 GB at 10k targets and 2 GB at 14k when the relation was stored with its labels;
//! now the time and memory per target stay flat (0.3 s and 93 MB for `reconverge cfg` at 40k targets).
//!
//! `cargo bench -p reconverge-report --bench cfg -- --quick`

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;

/// A kernel of about `n` instructions.
fn kernel(n: usize) -> String {
    let mut s = String::from(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry big(.param .u64 out)\n{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\n",
    );
    for k in 0..n / 5 {
        s.push_str(&format!(
            "setp.lt.u32 %p1, %r1, {};\n@%p1 bra L{k};\nadd.u32 %r2, %r2, 1;\nL{k}:\nadd.u32 %r2, %r2, 2;\nxor.b32 %r2, %r2, %r1;\n",
            k % 32
        ));
    }
    s.push_str("st.global.u32 [%rd1], %r2;\nret;\n}\n");
    s
}

/// A kernel whose `brx.idx` has `t` targets, each falling through into the next.
fn switch_chain(t: usize) -> String {
    let mut s = String::from(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry chain(.param .u64 out)\n{\n\
         .reg .b32 %r<4>;\n.reg .b64 %rd<4>;\nld.param.u64 %rd1, [out];\nmov.u32 %r1, %tid.x;\nmov.u32 %r3, 0;\n",
    );
    s.push_str(&format!("rem.u32 %r2, %r1, {t};\nts: .branchtargets "));
    s.push_str(&(0..t).map(|i| format!("L{i}")).collect::<Vec<_>>().join(", "));
    s.push_str(";\nbrx.idx %r2, ts;\n");
    for i in 0..t {
        s.push_str(&format!("L{i}:\nadd.u32 %r3, %r3, {i};\n"));
    }
    s.push_str("st.global.u32 [%rd1], %r3;\nret;\n}\n");
    s
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("cfg");
    g.sample_size(10);
    for n in [10_000, 40_000, 100_000] {
        let src = kernel(n);
        let module = reconverge_ptx::parse(&src).expect("the generated kernel parses");
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("report+render", n), &module, |b, m| {
            b.iter(|| {
                let r = reconverge_report::cfg_report(m, "big.ptx", &src, None, None);
                black_box((r.render_text().len(), r.render_dot().len(), r.render_json().len()))
            })
        });
    }
    g.finish();
    let mut g = c.benchmark_group("brx-chain");
    g.sample_size(10);
    for t in [5_000, 10_000, 20_000] {
        let src = switch_chain(t);
        let module = reconverge_ptx::parse(&src).expect("the generated kernel parses");
        g.throughput(Throughput::Elements(t as u64));
        g.bench_with_input(BenchmarkId::new("report", t), &module, |b, m| {
            b.iter(|| black_box(reconverge_report::cfg_report(m, "chain.ptx", &src, None, None).render_text().len()))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
