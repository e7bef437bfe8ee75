//! The compiled code against hand-computed lanes (the simulator's differential tests compare it with the
//! interpreter on every kernel and mechanism).

use super::*;
use reconverge_ir::ScalarType;
use reconverge_program::program::{BoolOp, Cmp, FMode, FRound, FloatBinOp, IntBinOp, IntTerOp, IntUnOp, PredSrc};

extern "C" fn value(op: *const Op, a: u64, _b: u64, _c: u64, _e: u64) -> u64 {
    // SAFETY: the code passes the address of an operation of the compiled segment.
    match unsafe { &*op } {
        Op::IntUn { op: IntUnOp::Not, .. } => !a & 0xFFFF_FFFF,
        _ => u64::MAX,
    }
}

extern "C" fn compare(_op: *const Op, a: u64, b: u64) -> u64 {
    u64::from(a as u16 == b as u16)
}

const EVAL: Evaluators = Evaluators { value, compare };

/// The segment of `insts`, compiled or from the cache.
fn compile(insts: &[DInst]) -> Segment {
    Cache::global().segment(insts, EVAL, &mut CompileReport::default()).expect("compiles")
}

fn inst(op: Op) -> DInst {
    DInst { guard: None, op }
}

fn mode(ftz: bool) -> FMode {
    FMode { rnd: FRound::Rn, ftz, sat: false, nan: false }
}

/// Two warps of 4 lanes; registers r0..r3, predicates p0..p5.
fn files() -> (Vec<u64>, Vec<u64>) {
    ((0..32).collect(), vec![0b0101, 0b0011, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
}

#[test]
fn integer_lanes_run_only_where_active_and_guarded() {
    let shape = Shape { w: 4, padded: 8, nwarps: 2 };
    let add = Op::IntBin { op: IntBinOp::Add, ty: ScalarType::U32, d: 2, a: Src::Reg(0), b: Src::Imm(0xFFFF_FFFF) };
    let mut guarded =
        inst(Op::IntBin { op: IntBinOp::MulLo, ty: ScalarType::S64, d: 3, a: Src::Reg(2), b: Src::Reg(1) });
    guarded.guard = Some((0, false));
    let insts = [inst(add), guarded];
    let seg = compile(&insts);
    let (mut regs, mut preds) = files();
    let before = regs.clone();
    seg.run(&insts, (&mut regs, &mut preds), shape, (0, 0b0110)).expect("runs");
    // Lanes 1 and 2 of warp 0: r2 = (r0 + 0xFFFFFFFF) mod 2^32 = r0 - 1; r3 = r2 * r1 only where p0 (0b0101).
    assert_eq!(regs[16 + 1], 0, "lane 1: r0 = 1");
    assert_eq!(regs[16 + 2], 1, "lane 2: r0 = 2");
    assert_eq!(regs[24 + 1], before[24 + 1], "lane 1's guard is false");
    assert_eq!(regs[24 + 2], 10, "lane 2: r2 (1) × r1 (10)");
    for i in [16, 16 + 3, 24, 24 + 3] {
        assert_eq!(regs[i], before[i], "inactive lane {i} untouched");
    }
    let mut again = CompileReport::default();
    Cache::global().segment(&insts, EVAL, &mut again).expect("cached");
    assert_eq!(again.segments, 0, "the second request is served from the cache");
}

#[test]
fn setp_and_predicate_logic_write_the_lanes_bits() {
    let shape = Shape { w: 4, padded: 8, nwarps: 2 };
    let setp = Op::Setp {
        cmp: Cmp::Lt,
        ty: ScalarType::S32,
        p: Some(2),
        q: Some(4),
        a: Src::Reg(0),
        b: Src::Imm(6),
        comb: Some((BoolOp::And, PredSrc::Reg(1, false))),
    };
    let pred_op =
        Op::PredOp { op: Some(BoolOp::Xor), not: true, d: 5, a: PredSrc::Reg(2, false), b: PredSrc::Const(true) };
    let insts = [inst(setp), inst(pred_op)];
    let seg = compile(&insts);
    let (mut regs, mut preds) = files();
    // Warp 1: r0 = 4..8 in lanes 0..4; p1 row of warp 1 = preds[1*2+1] = 0.
    preds[3] = 0b1111;
    seg.run(&insts, (&mut regs, &mut preds), shape, (1, 0b1111)).expect("runs");
    // r0 < 6 in lanes 0, 1; and p1 (all): p2 = 0b0011, p4 = !(lt) & p1 = 0b1100, p5 = !(p2 ^ 1) = p2.
    assert_eq!(preds[2 * 2 + 1], 0b0011);
    assert_eq!(preds[4 * 2 + 1], 0b1100);
    assert_eq!(preds[5 * 2 + 1], 0b0011);
    assert_eq!(preds[2 * 2], 0, "warp 0's row untouched");
}

#[test]
fn f32_arithmetic_is_the_interpreters() {
    let shape = Shape { w: 4, padded: 4, nwarps: 1 };
    let mul = Op::FloatBin {
        op: FloatBinOp::Mul,
        ty: ScalarType::F32,
        mode: mode(false),
        d: 2,
        a: Src::Reg(0),
        b: Src::Reg(1),
    };
    let ftz = Op::FloatBin {
        op: FloatBinOp::Add,
        ty: ScalarType::F32,
        mode: mode(true),
        d: 3,
        a: Src::Reg(0),
        b: Src::Reg(1),
    };
    let insts = [inst(mul), inst(ftz)];
    let seg = compile(&insts);
    let f = |x: f32| u64::from(x.to_bits());
    let sub = 0x0000_0001u64; // the smallest subnormal
    let mut regs = vec![f(1.5), f(f32::INFINITY), sub, f(-2.0), f(2.0), f(0.0), f(3.0), sub, 0, 0, 0, 0, 0, 0, 0, 0];
    let mut preds = vec![0];
    seg.run(&insts, (&mut regs, &mut preds), shape, (0, 0b1111)).expect("runs");
    assert_eq!(regs[8], f(3.0));
    assert_eq!(regs[9], 0x7FFF_FFFF, "inf × 0 is the canonical NaN");
    assert_eq!(regs[10], 3, "no flush without .ftz: 3 × the smallest subnormal");
    assert_eq!(regs[11], 0x8000_0002, "-2 × the smallest subnormal");
    assert_eq!(regs[12], f(3.5));
    assert_eq!(regs[13], f(f32::INFINITY));
    assert_eq!(regs[14], f(3.0), "ftz: the subnormal operand is flushed");
    assert_eq!(regs[15], f(-2.0), "ftz: -2 + flushed subnormal");
}

#[test]
fn other_operations_call_the_evaluator_and_unsupported_ones_are_refused() {
    let shape = Shape { w: 4, padded: 4, nwarps: 1 };
    let not = Op::IntUn { op: IntUnOp::Not, ty: ScalarType::B32, d: 1, a: Src::Reg(0) };
    let setp16 = Op::Setp {
        cmp: Cmp::Eq,
        ty: ScalarType::F16,
        p: Some(0),
        q: None,
        a: Src::Reg(0),
        b: Src::Imm(0x10000),
        comb: None,
    };
    let insts = [inst(not), inst(setp16)];
    let bra = [DInst { guard: None, op: Op::Bra { target: 0 } }];
    let seg = compile(&insts);
    let mut regs = vec![0, 1, 2, 3, 0, 0, 0, 0];
    let mut preds = vec![0];
    seg.run(&insts, (&mut regs, &mut preds), shape, (0, 0b1011)).expect("runs");
    assert_eq!(&regs[4..], &[0xFFFF_FFFF, 0xFFFF_FFFE, 0, 0xFFFF_FFFC]);
    assert_eq!(preds[0], 0b0001, "evaluator: low 16 bits equal only in lane 0");
    let mut report = CompileReport::default();
    assert!(matches!(Cache::global().segment(&bra, EVAL, &mut report), Err(JitError::Unsupported { index: 0 })));
    assert_eq!(seg.run(&insts, (&mut regs[..2], &mut preds), shape, (0, 1)), Err(CallError::Shape));
    assert_eq!(seg.run(&insts, (&mut regs, &mut preds), shape, (1, 1)), Err(CallError::Shape), "no warp 1");
    assert_eq!(
        seg.run(&insts, (&mut regs, &mut preds), shape, (0, 0b1_0000)),
        Err(CallError::Shape),
        "lane 4 of a 4-lane warp"
    );
    let odd = Shape { w: 3, padded: 3, nwarps: 1 };
    assert_eq!(seg.run(&insts, (&mut regs, &mut preds), odd, (0, 1)), Err(CallError::Shape), "odd warp size");
    assert_eq!(
        seg.run(&insts[..1], (&mut regs, &mut preds), shape, (0, 1)),
        Err(CallError::Shape),
        "other instructions"
    );
}

#[test]
fn vector_forms_of_fma_conversions_wide_products_and_comparisons() {
    let shape = Shape { w: 4, padded: 4, nwarps: 1 };
    let f = |x: f32| u64::from(x.to_bits());
    let s32 = |x: i32| u64::from(x as u32);
    let fma = Op::Fma { ty: ScalarType::F32, mode: mode(false), d: 3, a: Src::Reg(0), b: Src::Reg(1), c: Src::Reg(2) };
    let cvt = Op::Cvt {
        dty: ScalarType::F32,
        sty: ScalarType::S32,
        rnd: Some(reconverge_ir::KnownModifier::Rn),
        ftz: false,
        sat: false,
        dst_bits: 32,
        d: 4,
        a: Src::Reg(5),
    };
    let wide = Op::IntBin { op: IntBinOp::MulWide, ty: ScalarType::S32, d: 6, a: Src::Reg(5), b: Src::Imm(s32(-3)) };
    let mad =
        Op::IntTer { op: IntTerOp::MadLo, ty: ScalarType::U32, d: 7, a: Src::Reg(5), b: Src::Imm(2), c: Src::Imm(1) };
    let lt_s32 =
        Op::Setp { cmp: Cmp::Lt, ty: ScalarType::S32, p: Some(0), q: None, a: Src::Reg(5), b: Src::Imm(0), comb: None };
    let lt_u32 =
        Op::Setp { cmp: Cmp::Lt, ty: ScalarType::U32, p: Some(1), q: None, a: Src::Reg(5), b: Src::Imm(0), comb: None };
    let nan_le = Op::Setp {
        cmp: Cmp::Le,
        ty: ScalarType::F32,
        p: Some(2),
        q: Some(3),
        a: Src::Reg(3),
        b: Src::Reg(0),
        comb: None,
    };
    let sel = Op::Selp { d: 8, a: Src::Imm(7), b: Src::Imm(9), c: PredSrc::Reg(0, false) };
    let insts = [fma, cvt, wide, mad, lt_s32, lt_u32, nan_le, sel].map(inst);
    let seg = compile(&insts);
    // Registers 0..=8, four lanes each.
    let mut regs = vec![0u64; 36];
    let near_one = 1.0 + 2f32.powi(-12);
    regs[0..4].copy_from_slice(&[f(2.0), f(0.0), f(near_one), f(-1.5)]);
    regs[4..8].copy_from_slice(&[f(3.0), f(f32::INFINITY), f(near_one), f(2.0)]);
    regs[8..12].copy_from_slice(&[f(1.0), f(1.0), f(-1.0), f(0.25)]);
    regs[20..24].copy_from_slice(&[s32(-7), s32(16_777_217), 0, s32(i32::MIN)]);
    let mut preds = vec![0u64; 4];
    seg.run(&insts, (&mut regs, &mut preds), shape, (0, 0b1111)).expect("runs");
    let once = 2f32.powi(-11) + 2f32.powi(-24);
    assert_eq!(
        &regs[12..16],
        &[f(7.0), 0x7FFF_FFFF, f(once), f(-2.75)],
        "fma: 0 × ∞ is the canonical NaN; one rounding"
    );
    assert_eq!(&regs[16..20], &[f(-7.0), f(16_777_216.0), f(0.0), f(-2_147_483_648.0)], "cvt.rn.f32.s32");
    assert_eq!(&regs[24..28], &[21, (16_777_217u64 * 3).wrapping_neg(), 0, 6_442_450_944], "mul.wide.s32 by -3");
    assert_eq!(&regs[28..32], &[s32(-13), 33_554_435, 1, 1], "mad.lo.u32 wraps at 32 bits");
    assert_eq!(preds[0], 0b1001, "s32 < 0");
    assert_eq!(preds[1], 0, "u32 < 0 never");
    assert_eq!(preds[2], 0b1100, "fma result <= a: NaN compares false");
    assert_eq!(preds[3], 0b0011, "q is the negation (a NaN lane included)");
    assert_eq!(&regs[32..36], &[7, 9, 9, 7], "selp on p0");
}
