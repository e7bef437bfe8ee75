//! `reconverge cfg` on one large function: linear in its size.
//!
//! A kernel of N instructions (a short if-then every five instructions, so N/5 branches and 2N/5 blocks)
//! goes through the control-flow analyses, the report, and its text, Graphviz and JSON renderings, for
//! N = 10k, 40k and 100k instructions; the time per instruction must stay flat. Before the fix the report
//! recomputed every block's label per printed instruction: 35 s at 40k and 236 s at 100k instructions.
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
}

criterion_group!(benches, bench);
criterion_main!(benches);
