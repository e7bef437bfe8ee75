//! The passes on small kernels: what they insert, where, and that the result is still a valid module that
//! prints and parses again.

use reconverge_ir::{print_module, Opcode};
use reconverge_transform::{insert_regions, insert_ssy, RegionPass};

/// `if (tid < 5) { a; } else { b; }` then a store after the join: one divergent branch reconverging at a
/// block; a loop `for (i = 0; i < tid; i++)` with one exit.
const DIAMOND_AND_LOOP: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<3>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    setp.lt.s32 %p1, %r1, 5;
    @%p1 bra THEN;
    mov.u32 %r2, 2;
    bra.uni JOIN;
THEN:
    mov.u32 %r2, 1;
JOIN:
    mov.u32 %r3, 0;
LOOP:
    setp.ge.s32 %p2, %r3, %r1;
    @%p2 bra DONE;
    add.s32 %r2, %r2, %r3;
    add.s32 %r3, %r3, 1;
    bra.uni LOOP;
DONE:
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd2, %rd1, %rd2;
    st.global.u32 [%rd2], %r2;
    ret;
}
"#;

fn count(m: &reconverge_ir::Module, op: Opcode) -> usize {
    m.functions.values().flat_map(|f| f.insts.values()).filter(|i| i.opcode == op).count()
}

#[test]
fn the_ssy_pass_brackets_the_diamond_and_the_loop() {
    let m = reconverge_ptx::parse(DIAMOND_AND_LOOP).expect("parses");
    let (out, rep) = insert_ssy(&m);
    let f = &rep.functions[0];
    assert_eq!((f.ssy, f.sync, f.pbk, f.brk), (1, 2, 1, 1), "{rep:?}");
    // The loop's own exit branch gets no ssy (its region is a cycle): the loop's pbk/brk handle it.
    assert_eq!(f.fallback.len(), 1, "{:?}", f.fallback);
    assert!(f.fallback[0].contains("loop branch"), "{:?}", f.fallback);
    // Each inserted instruction is in the module, and the input is untouched (analyses never mutate).
    assert_eq!((count(&out, Opcode::Ssy), count(&out, Opcode::Pbk)), (1, 1));
    assert_eq!(count(&m, Opcode::Ssy) + count(&m, Opcode::Sync), 0);
    // `ssy` comes right before the divergent branch of its block.
    let text = print_module(&out);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let ssy = lines.iter().position(|l| l.starts_with("ssy ")).expect("an ssy");
    assert!(lines[ssy + 1].starts_with("@%p1 bra"), "{text}");
    // The result prints and parses again to the same structure.
    let again = reconverge_ptx::parse(&text).expect("the transformed module parses");
    assert_eq!(print_module(&again), text);
}

#[test]
fn the_region_passes_insert_their_own_instructions_only() {
    let m = reconverge_ptx::parse(DIAMOND_AND_LOOP).expect("parses");
    let (join, _) = insert_regions(&m, RegionPass::Join);
    assert!(count(&join, Opcode::Join) >= 1);
    assert_eq!(count(&join, Opcode::Bssy) + count(&join, Opcode::Ssy), 0);
    let (its, _) = insert_regions(&m, RegionPass::ConvergenceBarrier);
    assert!(count(&its, Opcode::Bssy) >= 1 && count(&its, Opcode::Bsync) >= count(&its, Opcode::Bssy));
    assert_eq!(count(&its, Opcode::Join), 0);
}
