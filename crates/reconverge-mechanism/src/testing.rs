//! A one-warp driver for the mechanisms' unit tests: small kernels decoded with their reconvergence points,
//! and a loop that plays the core's part (each instruction's outcome as the executor would report it,
//! with a fixed set of lanes taking every conditional branch).

use crate::{Flow, WarpCtx, WarpTracker};
use reconverge_program::program::Op;
use reconverge_program::{decode, function_points, select_kernel, DecodeOptions, LaneMask, Pc, Program};

/// `if (lane in taken) { then } else { else; else } join; exit` on one warp: the fall-through side (pcs
/// 2–3) is longer and has lower pcs than the taken side (pc 4); the join is pc 5.
pub(crate) const DIAMOND: &str = r#"
.version 8.0
.target sm_80
.address_size 64
.visible .entry k()
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r1, %tid.x;
    @%p1 bra THEN;
    mov.u32 %r2, 2;
    bra.uni JOIN;
THEN:
    mov.u32 %r2, 1;
JOIN:
    add.u32 %r3, %r2, %r1;
    exit;
}
"#;

/// The join pc of [`DIAMOND`].
pub(crate) const DIAMOND_JOIN: Pc = 5;

/// `src` decoded, with every branch's reconvergence point.
pub(crate) fn program(src: &str) -> Program {
    let m = reconverge_ptx::parse(src).expect("test kernel parses");
    let k = select_kernel(&m, None).expect("one kernel");
    decode(&m, k, &|f| function_points(f, false), &DecodeOptions::default()).expect("decodes")
}

/// Runs one warp of `live` lanes under `t` until every lane exits (at most `steps` issues): the lanes in
/// `taken` take every conditional branch. Returns the issued groups in order.
pub(crate) fn issues<T: WarpTracker>(
    t: &T,
    prog: &Program,
    live: LaneMask,
    taken: LaneMask,
    steps: usize,
) -> Vec<(Pc, LaneMask)> {
    let mut st = t.init(0, live);
    let (mut live, mut out) = (live, Vec::new());
    let mut counters = vec![0u64; T::COUNTERS.len()];
    while live != 0 && out.len() < steps {
        let (pc, mask) = t.select(&st, live, 0).expect("a live warp always has a group to issue");
        let inst = &prog.insts[pc as usize];
        let flow = match inst.op {
            Op::Bra { target } if inst.guard.is_some() => Flow::Branch { target, taken: mask & taken },
            Op::Bra { target } => Flow::Branch { target, taken: mask },
            Op::Exit | Op::Ret => Flow::Exit { lanes: mask },
            _ => Flow::Next,
        };
        if let Flow::Exit { lanes } = flow {
            live &= !lanes;
        }
        let mut ctx = WarpCtx { prog, live, w: 32, counters: &mut counters, cycle: None, delay: None };
        t.update(&mut st, pc, mask, &flow, &mut ctx).expect("the mechanism follows the warp");
        out.push((pc, mask));
    }
    out
}

/// Asserts the order of the lowest-pc mechanisms on [`DIAMOND`] with lane 0 taking the branch: the
/// fall-through side (pcs 2-3, lanes 1-3) before the taken side (pc 4, lane 0), then every lane at the join
/// together.
pub(crate) fn assert_lower_pc_first_then_meet(t: &[(Pc, LaneMask)]) {
    assert_eq!(&t[2..5], &[(2, 0b1110), (3, 0b1110), (4, 0b0001)], "{t:?}");
    assert_eq!(at_join(t), vec![0b1111], "{t:?}");
}

/// The masks the join pc issued with, in order.
pub(crate) fn at_join(trace: &[(Pc, LaneMask)]) -> Vec<LaneMask> {
    trace.iter().filter(|(pc, _)| *pc == DIAMOND_JOIN).map(|&(_, m)| m).collect()
}

#[test]
fn the_diamond_decodes_as_its_comments_say() {
    let p = program(DIAMOND);
    assert!(matches!(p.insts[1].op, Op::Bra { target: 4 }) && p.insts[1].guard.is_some());
    assert_eq!(p.reconv[1], DIAMOND_JOIN);
    assert!(matches!(p.insts[6].op, Op::Exit));
}
