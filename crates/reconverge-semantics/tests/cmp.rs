//! Comparisons, boolean combination, `set` values, selection and the IR conversions.

use proptest::prelude::*;
use reconverge_ir::{KnownModifier, ScalarType};
use reconverge_semantics::cmp::{self, compare, compare_ftz};
use reconverge_semantics::select;
use reconverge_semantics::{BoolOp, CmpOp, FloatTy, IntRounding, IntTy, NumTy, Rounding};

const F32: NumTy = NumTy::Float(FloatTy::F32);
const F64: NumTy = NumTy::Float(FloatTy::F64);

fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

#[test]
fn integer_signedness() {
    let m1 = 0xFFFF_FFFFu64;
    let s = NumTy::Int(IntTy::S32);
    let u = NumTy::Int(IntTy::U32);
    assert!(compare(CmpOp::Lt, s, m1, 0));
    assert!(!compare(CmpOp::Lt, u, m1, 0));
    assert!(compare(CmpOp::Gt, u, m1, 0));
    // lo/ls/hi/hs are unsigned even on a signed type.
    assert!(!compare(CmpOp::Lo, s, m1, 0));
    assert!(compare(CmpOp::Hi, s, m1, 0));
    assert!(compare(CmpOp::Hs, s, m1, m1));
    assert!(compare(CmpOp::Ls, s, 0, m1));
    assert!(compare(CmpOp::Eq, s, m1, 0xFFFF_FFFF_FFFF_FFFF)); // bits above the width are ignored
    assert!(compare(CmpOp::Ne, NumTy::Int(IntTy::U16), 1, 2));
    assert!(compare(CmpOp::Le, NumTy::Int(IntTy::S8), 0x80, 0x7F));
    assert!(compare(CmpOp::Ge, NumTy::Int(IntTy::S64), 0, i64::MIN as u64));
}

proptest! {
    #[test]
    fn integer_compare_matches_host(a in any::<i64>(), b in any::<i64>()) {
        let s = NumTy::Int(IntTy::S64);
        let u = NumTy::Int(IntTy::U64);
        let (x, y) = (a as u64, b as u64);
        prop_assert_eq!(compare(CmpOp::Lt, s, x, y), a < b);
        prop_assert_eq!(compare(CmpOp::Le, s, x, y), a <= b);
        prop_assert_eq!(compare(CmpOp::Gt, s, x, y), a > b);
        prop_assert_eq!(compare(CmpOp::Ge, s, x, y), a >= b);
        prop_assert_eq!(compare(CmpOp::Lt, u, x, y), x < y);
        prop_assert_eq!(compare(CmpOp::Lo, s, x, y), x < y);
        prop_assert_eq!(compare(CmpOp::Hs, s, x, y), x >= y);
        prop_assert_eq!(compare(CmpOp::Eq, s, x, y), a == b);
        prop_assert_eq!(compare(CmpOp::Ne, s, x, y), a != b);
    }
}

#[test]
fn float_operators_on_nan() {
    let nan = 0x7FC0_0000u64;
    let one = b32(1.0);
    // Ordered operators: false with a NaN operand (including ne).
    for op in [CmpOp::Eq, CmpOp::Ne, CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge] {
        assert!(!compare(op, F32, nan, one), "{op:?}");
        assert!(!compare(op, F32, one, nan), "{op:?}");
        assert!(!compare(op, F32, nan, nan), "{op:?}");
    }
    // Unordered operators: true with a NaN operand.
    for op in [CmpOp::Equ, CmpOp::Neu, CmpOp::Ltu, CmpOp::Leu, CmpOp::Gtu, CmpOp::Geu] {
        assert!(compare(op, F32, nan, one), "{op:?}");
        assert!(compare(op, F32, one, nan), "{op:?}");
    }
    assert!(!compare(CmpOp::Num, F32, nan, one));
    assert!(compare(CmpOp::Num, F32, one, one));
    assert!(compare(CmpOp::Nan, F32, one, nan));
    assert!(!compare(CmpOp::Nan, F32, one, one));
    // Without NaN, u-operators equal their ordered counterparts.
    assert!(compare(CmpOp::Ltu, F32, one, b32(2.0)));
    assert!(!compare(CmpOp::Gtu, F32, one, b32(2.0)));
    assert!(!compare(CmpOp::Neu, F32, one, one));
    // ±0 compare equal.
    assert!(compare(CmpOp::Eq, F32, 0, 0x8000_0000));
    assert!(!compare(CmpOp::Lt, F32, 0x8000_0000, 0));
    // f64, f16 and bf16.
    assert!(compare(CmpOp::Lt, F64, (-1.0f64).to_bits(), 0));
    assert!(!compare(CmpOp::Eq, F64, f64::NAN.to_bits(), f64::NAN.to_bits()));
    let h = NumTy::Float(FloatTy::F16);
    assert!(compare(CmpOp::Gt, h, 0x3C00, 0x3800));
    assert!(compare(CmpOp::Equ, h, 0x7E00, 0x3800));
    assert!(!compare(CmpOp::Lt, h, 0xFC00, 0xFE00));
    let bf = NumTy::Float(FloatTy::Bf16);
    assert!(compare(CmpOp::Lt, bf, 0xBF80, 0x3F80));
    assert!(compare(CmpOp::Nan, bf, 0x7FC1, 0));
}

proptest! {
    #[test]
    fn float_compare_matches_host_semantics(a in any::<u32>(), b in any::<u32>()) {
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let (a, b) = (a as u64, b as u64);
        let un = x.is_nan() || y.is_nan();
        prop_assert_eq!(compare(CmpOp::Eq, F32, a, b), x == y);
        prop_assert_eq!(compare(CmpOp::Ne, F32, a, b), !un && x != y);
        prop_assert_eq!(compare(CmpOp::Lt, F32, a, b), x < y);
        prop_assert_eq!(compare(CmpOp::Ge, F32, a, b), x >= y);
        prop_assert_eq!(compare(CmpOp::Ltu, F32, a, b), un || x < y);
        prop_assert_eq!(compare(CmpOp::Geu, F32, a, b), un || x >= y);
        prop_assert_eq!(compare(CmpOp::Neu, F32, a, b), x != y);
        prop_assert_eq!(compare(CmpOp::Equ, F32, a, b), un || x == y);
        // Every operator and its complement partition the outcomes.
        prop_assert_eq!(compare(CmpOp::Lt, F32, a, b), !compare(CmpOp::Geu, F32, a, b));
        prop_assert_eq!(compare(CmpOp::Eq, F32, a, b), !compare(CmpOp::Neu, F32, a, b));
        prop_assert_eq!(compare(CmpOp::Num, F32, a, b), !compare(CmpOp::Nan, F32, a, b));
    }
}

#[test]
fn ftz_compare_and_packed() {
    // Two different subnormals are equal after flushing.
    assert!(!compare(CmpOp::Eq, F32, 1, 2));
    assert!(compare_ftz(CmpOp::Eq, F32, 1, 2));
    assert!(compare_ftz(CmpOp::Eq, F32, 0x8000_0001, 0));
    assert!(compare_ftz(CmpOp::Lt, NumTy::Int(IntTy::S32), 0xFFFF_FFFF, 0));
    // f16x2: low lane 1.0 < 2.0, high lane NaN < 2.0 is false.
    let a = (0x7E00u64 << 16) | 0x3C00;
    let b = (0x4000u64 << 16) | 0x4000;
    assert_eq!(cmp::compare_x2(CmpOp::Lt, FloatTy::F16, false, a, b), [true, false]);
    assert_eq!(cmp::compare_x2(CmpOp::Ltu, FloatTy::F16, false, a, b), [true, true]);
    assert_eq!(cmp::compare_x2(CmpOp::Eq, FloatTy::F16, true, 0x0001_0002, 0), [true, true]);
    assert_eq!(cmp::compare_x2(CmpOp::Eq, FloatTy::F16, false, 0x0001_0002, 0), [false, false]);
}

#[test]
fn bool_ops_and_setp_pairs() {
    for (a, b) in [(false, false), (false, true), (true, false), (true, true)] {
        assert_eq!(cmp::bool_op(BoolOp::And, a, b), a && b);
        assert_eq!(cmp::bool_op(BoolOp::Or, a, b), a || b);
        assert_eq!(cmp::bool_op(BoolOp::Xor, a, b), a != b);
    }
    assert_eq!(cmp::setp_pair(BoolOp::And, true, true), (true, false));
    assert_eq!(cmp::setp_pair(BoolOp::Or, false, false), (false, true));
    assert_eq!(cmp::setp_pair(BoolOp::Xor, true, true), (false, true));
}

#[test]
fn set_values() {
    assert_eq!(cmp::set_value(NumTy::Int(IntTy::U32), true), 0xFFFF_FFFF);
    assert_eq!(cmp::set_value(NumTy::Int(IntTy::S32), true), 0xFFFF_FFFF);
    assert_eq!(cmp::set_value(NumTy::Int(IntTy::U32), false), 0);
    assert_eq!(cmp::set_value(F32, true), 0x3F80_0000);
    assert_eq!(cmp::set_value(F32, false), 0);
    assert_eq!(cmp::set_value(NumTy::Float(FloatTy::F16), true), 0x3C00);
    assert_eq!(cmp::set_value(NumTy::Float(FloatTy::Bf16), true), 0x3F80);
    assert_eq!(cmp::set_value(F64, true), 1.0f64.to_bits());
    assert_eq!(cmp::set_value_x2(NumTy::Float(FloatTy::F16), [true, false]), 0x0000_3C00);
    assert_eq!(cmp::set_value_x2(NumTy::Int(IntTy::U16), [false, true]), 0xFFFF_0000);
}

#[test]
fn selection() {
    assert_eq!(select::selp(true, 1, 2), 1);
    assert_eq!(select::selp(false, 1, 2), 2);
    assert_eq!(select::slct_s32(1, 2, 0), 1);
    assert_eq!(select::slct_s32(1, 2, 0x7FFF_FFFF), 1);
    assert_eq!(select::slct_s32(1, 2, 0x8000_0000), 2);
    assert_eq!(select::slct_s32(1, 2, 0xFFFF_FFFF), 2);
    assert_eq!(select::slct_f32(false, 1, 2, b32(0.5)), 1);
    assert_eq!(select::slct_f32(false, 1, 2, 0x8000_0000), 1); // -0 >= 0
    assert_eq!(select::slct_f32(false, 1, 2, b32(-0.5)), 2);
    assert_eq!(select::slct_f32(false, 1, 2, 0x7FC0_0000), 2); // NaN selects b
    assert_eq!(select::slct_f32(false, 1, 2, 0x8000_0001), 2); // -subnormal < 0
    assert_eq!(select::slct_f32(true, 1, 2, 0x8000_0001), 1); // flushed to -0
}

#[test]
fn ir_conversions() {
    assert_eq!(IntTy::try_from(ScalarType::S32), Ok(IntTy::S32));
    assert_eq!(IntTy::try_from(ScalarType::B64), Ok(IntTy::U64));
    assert!(IntTy::try_from(ScalarType::F32).is_err());
    assert!(IntTy::try_from(ScalarType::Pred).is_err());
    assert_eq!(FloatTy::try_from(ScalarType::Bf16), Ok(FloatTy::Bf16));
    assert!(FloatTy::try_from(ScalarType::F16x2).is_err());
    assert_eq!(NumTy::try_from(ScalarType::B16), Ok(NumTy::Int(IntTy::U16)));
    assert_eq!(NumTy::try_from(ScalarType::F64), Ok(F64));
    assert!(NumTy::try_from(ScalarType::B128).is_err());
    assert_eq!(Rounding::try_from(KnownModifier::Rz), Ok(Rounding::Rz));
    assert!(Rounding::try_from(KnownModifier::Rzi).is_err());
    assert_eq!(IntRounding::try_from(KnownModifier::Rmi), Ok(IntRounding::Rmi));
    assert_eq!(CmpOp::try_from(KnownModifier::Geu), Ok(CmpOp::Geu));
    assert_eq!(CmpOp::try_from(KnownModifier::Hs), Ok(CmpOp::Hs));
    assert!(CmpOp::try_from(KnownModifier::NaN).is_err()); // `.NaN` is the min/max modifier, not `.nan`
    assert_eq!(BoolOp::try_from(KnownModifier::Xor), Ok(BoolOp::Xor));
    // Every IR comparison spelling maps onto a distinct operator.
    let mut seen = Vec::new();
    for op in CmpOp::ALL {
        let name = format!("{op:?}").to_lowercase();
        let m = KnownModifier::from_word(&name).expect("known modifier");
        let back = CmpOp::try_from(m).unwrap();
        assert_eq!(back, op);
        assert!(!seen.contains(&back));
        seen.push(back);
    }
}

#[test]
fn type_helpers() {
    assert_eq!(IntTy::S16.sext(0x8000), -32768);
    assert_eq!(IntTy::U16.value(0xFFFF_8000), 0x8000);
    assert_eq!(IntTy::S8.saturate(1000), 0x7F);
    assert_eq!(IntTy::U64.max_value(), u64::MAX as i128);
    assert_eq!(IntTy::from_bits(32, true), Some(IntTy::S32));
    assert_eq!(IntTy::from_bits(24, false), None);
    assert_eq!(FloatTy::F32.one(), 0x3F80_0000);
    assert_eq!(FloatTy::F64.one(), 0x3FF0_0000_0000_0000);
    assert_eq!(FloatTy::F16.canonical_nan(), 0x7FFF);
    assert_eq!(FloatTy::F64.canonical_nan(), 0x7FFF_FFFF_FFFF_FFFF);
    assert_eq!(FloatTy::Bf16.max_finite(), 0x7F7F);
    assert!(FloatTy::F32.is_nan(0xFF80_0001));
    assert!(!FloatTy::F32.is_nan(0xFF80_0000));
    assert!(FloatTy::F16.is_subnormal(0x83FF));
}

#[test]
fn packed_helpers_with_64_bit_lanes_do_not_panic() {
    assert_eq!(cmp::compare_x2(CmpOp::Eq, FloatTy::F64, false, 0, 0), [true, true]);
    assert_eq!(cmp::set_value_x2(F64, [true, true]), 1.0f64.to_bits());
    assert_eq!(
        reconverge_semantics::cvt::f32_pair_to_x2(FloatTy::F64, Rounding::Rn, false, false, 0, b32(1.0)),
        1.0f64.to_bits()
    );
}
