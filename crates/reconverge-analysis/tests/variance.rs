//! Seed 004's analyses on its own examples: Figure 2 (convergence with one variant branch), Figure 1's
//! FIR filter (what is invariant, affine and warp-sequential; registers per warp), §3.4's early exit.

use reconverge_analysis::{FunctionAnalysis, Variance, VarianceAnalysis};
use reconverge_ir::{EntityRef, Function, Module};

fn module(path: &str) -> Module {
    let p = format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"));
    reconverge_ptx::parse(&std::fs::read_to_string(&p).expect("file")).expect("parses")
}

fn analyse(m: &Module, name: &str) -> (Function, VarianceAnalysis) {
    let f = m.functions[m.function_by_name(name).expect("kernel")].clone();
    let fa = FunctionAnalysis::compute(&f);
    let va = VarianceAnalysis::compute(&f, &fa);
    (f, va)
}

#[test]
fn figure_2_exactly_n4_and_n4p_are_divergent() {
    let m = module("kernels/handwritten/seed004_fig2.ptx");
    let (f, va) = analyse(&m, "fig2");
    let block = |l: &str| f.block_by_label(l).expect("block").index();
    let divergent: Vec<&str> = ["N1", "N2", "N3", "N4", "N4p", "N5", "N3p", "N2p", "N6", "N7"]
        .into_iter()
        .filter(|l| !va.convergent_va[block(l)])
        .collect();
    assert_eq!(divergent, ["N4", "N4p"]);
    // CA alone: only the blocks without control-dependence predecessors.
    let ca: Vec<&str> = ["N1", "N2", "N3", "N4", "N4p", "N5", "N3p", "N2p", "N6", "N7"]
        .into_iter()
        .filter(|l| va.convergent_ca[block(l)])
        .collect();
    assert_eq!(ca, ["N1", "N2", "N2p", "N6", "N7"]);
}

#[test]
fn fir_invariants_and_warp_sequential_accesses() {
    let m = module("kernels/ptx/sm_80-nofma/fir.ptx");
    let (f, va) = analyse(&m, "fir");
    // Every block is convergent: every branch tests the kernel parameter flen or the loop counter.
    assert!(f.layout.iter().all(|b| va.convergent_exit[b.index()]));
    let mut ws = Vec::new();
    let mut variant_ops = Vec::new();
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            let inst = &f.insts[i];
            let name = inst.opcode.as_str().to_string();
            if va.warp_sequential[i.index()] {
                ws.push(name.clone());
            }
            if va.variance[i.index()] != Variance::Invariant {
                variant_ops.push(name);
            }
        }
    }
    // The samples[idx + i] load and the results[idx] store.
    assert_eq!(ws, ["ld", "st"]);
    // Branches, loop counter, bounds and the coefficient loads are invariant: what varies is idx and the
    // sample/result addresses (affine), the sample values and the products/sums.
    assert!(!variant_ops.contains(&"bra".to_string()), "{variant_ops:?}");
    assert!(!variant_ops.contains(&"setp".to_string()), "{variant_ops:?}");
    let (before, after) = va.registers_per_warp(32);
    assert!(after < before / 2, "{before} -> {after}");
}

/// §3.5's base addresses: FIR's two warp-sequential accesses each need one (the loop's sample pointer
/// advances every iteration); Figure 2's one store needs one.
#[test]
fn base_address_instructions_of_the_seed_examples() {
    let count = |path: &str, name: &str| {
        let m = module(path);
        let (f, va) = analyse(&m, name);
        let bases: Vec<String> = f
            .layout
            .iter()
            .flat_map(|&b| f.blocks[b].insts.iter())
            .filter(|i| va.base_address[i.index()])
            .map(|&i| f.insts[i].opcode.as_str().to_string())
            .collect();
        assert!(bases.len() <= va.warp_sequential.iter().filter(|&&w| w).count());
        bases
    };
    assert_eq!(count("kernels/ptx/sm_80-nofma/fir.ptx", "fir"), ["ld", "st"]);
    assert_eq!(count("kernels/handwritten/seed004_fig2.ptx", "fig2"), ["st"]);
}

/// Two warp-sequential accesses of one block through the same pointer value share a base; a later block
/// computes its own; a different pointer needs another.
#[test]
fn a_base_is_shared_within_a_block_only() {
    let src = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_a, .param .u64 k_b)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .f32 %f<6>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [k_a];
    ld.param.u64 %rd2, [k_b];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 4;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    ld.global.f32 %f2, [%rd4+128];
    st.global.f32 [%rd5], %f1;
    ld.param.u64 %rd6, [k_a];
    setp.eq.u64 %p1, %rd6, 0;
    @%p1 bra $L_end;
    ld.global.f32 %f3, [%rd4+256];
    st.global.f32 [%rd4], %f3;
$L_end:
    ret;
}
"#;
    let m = reconverge_ptx::parse(src).expect("parses");
    let (f, va) = analyse(&m, "k");
    let marks: Vec<(bool, bool)> = f
        .layout
        .iter()
        .flat_map(|&b| f.blocks[b].insts.iter())
        .filter(|i| va.warp_sequential[i.index()])
        .map(|i| (va.warp_sequential[i.index()], va.base_address[i.index()]))
        .collect();
    // ld [%rd4] yes, ld [%rd4+128] shares it, st [%rd5] another pointer; the next block: ld yes, st shares.
    assert_eq!(marks, [(true, true), (true, false), (true, true), (true, true), (true, false)]);
}

#[test]
fn early_exit_keeps_the_rest_convergent() {
    let m = module("kernels/handwritten/seed004_early_exit.ptx");
    let (f, va) = analyse(&m, "early_exit");
    let s1 = f.block_by_label("S1").expect("S1").index();
    assert!(!va.convergent_va[s1], "without the exit rule S1 is divergent");
    assert!(va.convergent_exit[s1], "with it S1 is convergent (§3.4)");
}
