//! Integer, bit-manipulation, logic, shift, `prmt` and carry-chain semantics.

use proptest::prelude::*;
use reconverge_semantics::int::{self, ClampWrap, PackedInt, PrmtMode};
use reconverge_semantics::IntTy::{self, *};

const ALL: [IntTy; 8] = IntTy::ALL;

fn any_ty() -> impl Strategy<Value = IntTy> {
    prop::sample::select(ALL.to_vec())
}

// ------------------------------------------------------------------------------------------------
// add / sub / sat / packed
// ------------------------------------------------------------------------------------------------

#[test]
fn add_sub_wrap_at_every_width() {
    assert_eq!(int::add(U8, 0xFF, 1), 0);
    assert_eq!(int::add(S16, 0x7FFF, 1), 0x8000);
    assert_eq!(int::add(U32, 0xFFFF_FFFF, 2), 1);
    assert_eq!(int::add(S64, i64::MAX as u64, 1), i64::MIN as u64);
    assert_eq!(int::sub(U32, 0, 1), 0xFFFF_FFFF);
    assert_eq!(int::sub(S8, 0x80, 1), 0x7F);
    // Garbage above the width is ignored.
    assert_eq!(int::add(U16, 0xABCD_0001, 0x1234_0001), 2);
}

#[test]
fn add_sat_s32_bounds() {
    let max = i32::MAX as u32 as u64;
    let min = i32::MIN as u32 as u64;
    assert_eq!(int::add_sat(S32, max, 1), max);
    assert_eq!(int::add_sat(S32, min, (-1i32) as u32 as u64), min);
    assert_eq!(int::add_sat(S32, max, min), 0xFFFF_FFFF); // -1
    assert_eq!(int::add_sat(S32, 5, 7), 12);
    assert_eq!(int::sub_sat(S32, min, 1), min);
    assert_eq!(int::sub_sat(S32, max, (-1i32) as u32 as u64), max);
    assert_eq!(int::add_sat(U32, 0xFFFF_FFFF, 1), 0xFFFF_FFFF);
    assert_eq!(int::sub_sat(U32, 0, 1), 0);
}

proptest! {
    #[test]
    fn add_sat_matches_clamped_i128(t in any_ty(), a in any::<u64>(), b in any::<u64>()) {
        let v = (t.value(a) + t.value(b)).clamp(t.min_value(), t.max_value());
        prop_assert_eq!(int::add_sat(t, a, b), t.trunc(v as u64));
        let w = (t.value(a) - t.value(b)).clamp(t.min_value(), t.max_value());
        prop_assert_eq!(int::sub_sat(t, a, b), t.trunc(w as u64));
    }
}

#[test]
fn packed_lanes_are_independent() {
    // u16x2: 0xFFFF + 1 wraps in the low lane without carrying into the high lane.
    assert_eq!(int::add_packed(PackedInt::U16x2, false, 0x0001_FFFF, 0x0001_0001), 0x0002_0000);
    assert_eq!(int::add_packed(PackedInt::U16x2, true, 0x0001_FFFF, 0x0001_0001), 0x0002_FFFF);
    // s8x4 saturating: 0x7F + 1 → 0x7F, 0x80 - 1 → 0x80.
    assert_eq!(int::add_packed(PackedInt::S8x4, true, 0x0000_007F, 0x0000_0001), 0x7F);
    assert_eq!(int::sub_packed(PackedInt::S8x4, true, 0x0000_8000, 0x0000_0100), 0x8000);
    assert_eq!(int::sub_packed(PackedInt::U8x4, true, 0x0102_0304, 0x0203_0201), 0x0000_0103);
    // s16x2 min with relu: lanes (-5, 3) vs (2, 7) → min (-5, 3) → relu (0, 3).
    let a = ((3u64) << 16) | 0xFFFB;
    let b = (7u64 << 16) | 2;
    assert_eq!(int::min_packed(PackedInt::S16x2, false, a, b), a);
    assert_eq!(int::min_packed(PackedInt::S16x2, true, a, b), 3 << 16);
    assert_eq!(int::max_packed(PackedInt::U16x2, false, a, b), (7 << 16) | 0xFFFB);
    assert_eq!(int::neg_packed(PackedInt::S8x4, 0x80FF_0102), 0x8001_FFFE);
}

// ------------------------------------------------------------------------------------------------
// mul / mad / mul24 / sad
// ------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn mul_hi_lo_wide_match_u128(t in any_ty(), a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
        let n = t.bits();
        let p = t.value(a).wrapping_mul(t.value(b)); // exact: |p| < 2^127
        let lo = t.trunc(p as u64);
        let hi = t.trunc((p >> n) as u64);
        prop_assert_eq!(int::mul_lo(t, a, b), lo);
        prop_assert_eq!(int::mul_hi(t, a, b), hi);
        if n < 64 {
            let wide_mask = (1u128 << (2 * n)) - 1;
            prop_assert_eq!(int::mul_wide(t, a, b) as u128, (p as u128) & wide_mask);
            prop_assert_eq!(int::mad_wide(t, a, b, c) as u128, (p as u128).wrapping_add(c as u128) & wide_mask);
        }
        prop_assert_eq!(int::mad_lo(t, a, b, c), t.trunc(lo.wrapping_add(c)));
        prop_assert_eq!(int::mad_hi(t, a, b, c), t.trunc(hi.wrapping_add(c)));
    }

    #[test]
    fn mad_hi_sat_s32_clamps(a in any::<i32>(), b in any::<i32>(), c in any::<i32>()) {
        let hi = ((a as i64 * b as i64) >> 32) as i128;
        let v = (hi + c as i128).clamp(i32::MIN as i128, i32::MAX as i128) as i32;
        prop_assert_eq!(int::mad_hi_sat_s32(a as u32 as u64, b as u32 as u64, c as u32 as u64), v as u32 as u64);
    }

    #[test]
    fn mul24_uses_low_24_bits(a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        let ua = (a & 0xFF_FFFF) as i64;
        let ub = (b & 0xFF_FFFF) as i64;
        let sa = ((a << 8) as i32 >> 8) as i64;
        let sb = ((b << 8) as i32 >> 8) as i64;
        let (a, b, c) = (a as u64, b as u64, c as u64);
        prop_assert_eq!(int::mul24_lo(U32, a, b), (ua * ub) as u64 & 0xFFFF_FFFF);
        prop_assert_eq!(int::mul24_hi(U32, a, b), ((ua * ub) >> 16) as u64 & 0xFFFF_FFFF);
        prop_assert_eq!(int::mul24_lo(S32, a, b), (sa * sb) as u64 & 0xFFFF_FFFF);
        prop_assert_eq!(int::mul24_hi(S32, a, b), ((sa * sb) >> 16) as u64 & 0xFFFF_FFFF);
        prop_assert_eq!(int::mad24_lo(U32, a, b, c), ((ua * ub) as u64).wrapping_add(c) & 0xFFFF_FFFF);
        prop_assert_eq!(int::mad24_hi(S32, a, b, c), (((sa * sb) >> 16) as u64).wrapping_add(c) & 0xFFFF_FFFF);
        let sat = ((((sa * sb) >> 16) as i32) as i64 + c as u32 as i32 as i64).clamp(i32::MIN as i64, i32::MAX as i64);
        prop_assert_eq!(int::mad24_hi_sat_s32(a, b, c), sat as u32 as u64);
    }

    #[test]
    fn sad_is_c_plus_abs_difference(t in any_ty(), a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
        let d = (t.value(a) - t.value(b)).unsigned_abs() as u64;
        prop_assert_eq!(int::sad(t, a, b, c), t.trunc(d.wrapping_add(c)));
    }
}

#[test]
fn mul24_hi_example() {
    // 0x800000 (= -2^23 as s24) squared = 2^46 → bits 47..16 = 2^30.
    assert_eq!(int::mul24_hi(S32, 0x80_0000, 0x80_0000), 1 << 30);
    assert_eq!(int::mul24_hi(U32, 0xFF_FFFF, 0xFF_FFFF), ((0xFF_FFFFu64 * 0xFF_FFFF) >> 16) & 0xFFFF_FFFF);
    // Bits above 24 are ignored.
    assert_eq!(int::mul24_lo(U32, 0xFF00_0003, 0xAB00_0005), 15);
}

// ------------------------------------------------------------------------------------------------
// div / rem / abs / neg / min / max
// ------------------------------------------------------------------------------------------------

#[test]
fn division_by_zero_is_defined() {
    assert_eq!(int::div(U32, 123, 0), 0xFFFF_FFFF);
    assert_eq!(int::div(U64, 0, 0), u64::MAX);
    assert_eq!(int::div(U16, 7, 0), 0xFFFF);
    assert_eq!(int::div(S32, 5, 0), 0xFFFF_FFFF); // -1
    assert_eq!(int::div(S32, 0, 0), 0xFFFF_FFFF); // -1
    assert_eq!(int::div(S32, (-5i32) as u32 as u64, 0), 1);
    assert_eq!(int::div(S64, (-1i64) as u64, 0), 1);
    assert_eq!(int::rem(U32, 123, 0), 123);
    assert_eq!(int::rem(S32, (-7i32) as u32 as u64, 0), (-7i32) as u32 as u64);
    assert_eq!(int::rem(S16, 0x8000, 0), 0x8000);
}

#[test]
fn min_over_minus_one_wraps() {
    assert_eq!(int::div(S32, 0x8000_0000, 0xFFFF_FFFF), 0x8000_0000);
    assert_eq!(int::rem(S32, 0x8000_0000, 0xFFFF_FFFF), 0);
    assert_eq!(int::div(S64, i64::MIN as u64, u64::MAX), i64::MIN as u64);
    assert_eq!(int::rem(S64, i64::MIN as u64, u64::MAX), 0);
    assert_eq!(int::div(S8, 0x80, 0xFF), 0x80);
    assert_eq!(int::div(S16, 0x8000, 0xFFFF), 0x8000);
}

proptest! {
    #[test]
    fn div_rem_truncate_towards_zero(t in any_ty(), a in any::<u64>(), b in any::<u64>()) {
        let (x, y) = (t.value(a), t.value(b));
        prop_assume!(y != 0);
        let q = x / y; // i128 truncating division, no overflow in i128
        let r = x % y;
        prop_assert_eq!(int::div(t, a, b), t.trunc(q as u64));
        prop_assert_eq!(int::rem(t, a, b), t.trunc(r as u64));
        // q·b + r == a (mod 2^n)
        prop_assert_eq!(t.trunc((q as u64).wrapping_mul(b).wrapping_add(r as u64)), t.trunc(a));
    }

    #[test]
    fn min_max_abs_neg(t in any_ty(), a in any::<u64>(), b in any::<u64>()) {
        let (x, y) = (t.value(a), t.value(b));
        prop_assert_eq!(t.value(int::min(t, a, b)), x.min(y));
        prop_assert_eq!(t.value(int::max(t, a, b)), x.max(y));
        prop_assert_eq!(int::neg(t, a), t.trunc((-x) as u64));
        if t.signed() {
            prop_assert_eq!(int::abs(t, a), t.trunc(x.unsigned_abs() as u64));
        }
    }
}

#[test]
fn abs_and_neg_of_min_wrap() {
    assert_eq!(int::abs(S32, 0x8000_0000), 0x8000_0000);
    assert_eq!(int::neg(S32, 0x8000_0000), 0x8000_0000);
    assert_eq!(int::abs(S16, 0xFFFF), 1);
    assert_eq!(int::abs(S64, i64::MIN as u64), i64::MIN as u64);
}

#[test]
fn min_max_signedness_and_relu() {
    let m1 = 0xFFFF_FFFFu64; // -1 as s32, 4294967295 as u32
    assert_eq!(int::min(S32, m1, 1), m1);
    assert_eq!(int::min(U32, m1, 1), 1);
    assert_eq!(int::max(S32, m1, 1), 1);
    assert_eq!(int::max(U32, m1, 1), m1);
    assert_eq!(int::max_relu(S32, m1, (-7i32) as u32 as u64), 0);
    assert_eq!(int::min_relu(S32, m1, 5), 0);
    assert_eq!(int::min_relu(S32, 9, 5), 5);
}

// ------------------------------------------------------------------------------------------------
// popc / clz / brev / bfind / bfe / bfi / fns / szext / bmsk / dp
// ------------------------------------------------------------------------------------------------

#[test]
fn counting_and_reversal() {
    assert_eq!(int::popc(32, 0xF0F0_0001), 9);
    assert_eq!(int::popc(32, 0xFFFF_FFFF_0000_0000), 0);
    assert_eq!(int::popc(64, u64::MAX), 64);
    assert_eq!(int::clz(32, 0), 32);
    assert_eq!(int::clz(64, 0), 64);
    assert_eq!(int::clz(32, 1), 31);
    assert_eq!(int::clz(32, 0x8000_0000), 0);
    assert_eq!(int::clz(64, 1), 63);
    assert_eq!(int::brev(32, 1), 0x8000_0000);
    assert_eq!(int::brev(32, 0x0000_00F1), 0x8F00_0000);
    assert_eq!(int::brev(64, 1), 1 << 63);
}

#[test]
fn bfind_cases() {
    assert_eq!(int::bfind(U32, false, 0), 0xFFFF_FFFF);
    assert_eq!(int::bfind(U32, true, 0), 0xFFFF_FFFF);
    assert_eq!(int::bfind(U32, false, 1), 0);
    assert_eq!(int::bfind(U32, false, 0x8000_0000), 31);
    assert_eq!(int::bfind(U32, true, 0x8000_0000), 0);
    assert_eq!(int::bfind(U32, true, 1), 31);
    assert_eq!(int::bfind(S32, false, 0xFFFF_FFFF), 0xFFFF_FFFF); // -1: no non-sign bit
    assert_eq!(int::bfind(S32, false, 0xFFFF_FFFE), 0); // -2 = ...110: most significant 0 is bit 0
    assert_eq!(int::bfind(S32, false, 0x8000_0000), 30);
    assert_eq!(int::bfind(S32, false, 0x7FFF_FFFF), 30);
    assert_eq!(int::bfind(S64, true, 1), 63);
    assert_eq!(int::bfind(U64, false, 1 << 40), 40);
}

/// Literal transcription of PTX's `bfe` pseudo-code.
fn bfe_ref(t: IntTy, a: u64, b: u64, c: u64) -> u64 {
    let msb = t.bits() as u64 - 1;
    let pos = b & 0xFF;
    let len = c & 0xFF;
    let bit = |i: u64| (a >> i) & 1;
    let sbit = if !t.signed() || len == 0 { 0 } else { bit((pos + len - 1).min(msb)) };
    let mut d = 0u64;
    for i in 0..=msb {
        let v = if i < len && pos + i <= msb { bit(pos + i) } else { sbit };
        d |= v << i;
    }
    d
}

/// Literal transcription of PTX's `bfi` pseudo-code.
fn bfi_ref(bits: u32, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let msb = bits as u64 - 1;
    let pos = c & 0xFF;
    let len = d & 0xFF;
    let mut f = if bits == 64 { b } else { b & ((1 << bits) - 1) };
    let mut i = 0;
    while i < len && pos + i <= msb {
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
        i += 1;
    }
    f
}

fn field_arg() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..80, any::<u64>(), Just(0xFF), Just(0x100), Just(0x120)]
}

proptest! {
    #[test]
    fn bfe_matches_pseudocode(
        t in prop::sample::select(vec![U32, U64, S32, S64]),
        a in any::<u64>(), b in field_arg(), c in field_arg(),
    ) {
        prop_assert_eq!(int::bfe(t, a, b, c), bfe_ref(t, t.trunc(a), b, c));
    }

    #[test]
    fn bfi_matches_pseudocode(
        bits in prop::sample::select(vec![32u32, 64]),
        a in any::<u64>(), b in any::<u64>(), c in field_arg(), d in field_arg(),
    ) {
        prop_assert_eq!(int::bfi(bits, a, b, c, d), bfi_ref(bits, a, b, c, d));
    }
}

#[test]
fn bfe_bfi_edges() {
    // len = 0 → 0; pos ≥ 32 → sign fill.
    assert_eq!(int::bfe(S32, 0xFFFF_FFFF, 4, 0), 0);
    assert_eq!(int::bfe(U32, 0xFFFF_FFFF, 32, 8), 0);
    assert_eq!(int::bfe(S32, 0x8000_0000, 40, 8), 0xFFFF_FFFF); // sbit = a[31]
    assert_eq!(int::bfe(S32, 0x0000_00F0, 4, 4), 0xFFFF_FFFF); // 0b1111 sign-extended
    assert_eq!(int::bfe(U32, 0x0000_00F0, 4, 4), 0xF);
    assert_eq!(int::bfe(S32, 0x8000_0000, 28, 32), 0xFFFF_FFF8); // field runs past msb: sign = a[31]
                                                                 // Only the low 8 bits of pos/len count: 0x104 is pos 4.
    assert_eq!(int::bfe(U32, 0xF0, 0x104, 0x104), 0xF);
    assert_eq!(int::bfi(32, 0xF, 0, 4, 4), 0xF0);
    assert_eq!(int::bfi(32, 0xF, 0xAAAA_AAAA, 32, 4), 0xAAAA_AAAA);
    assert_eq!(int::bfi(32, 0xFFFF, 0, 30, 8), 0xC000_0000);
    assert_eq!(int::bfi(32, 0x1, 0x5, 0, 0), 0x5);
    assert_eq!(int::bfi(64, u64::MAX, 0, 60, 255), 0xF << 60);
}

#[test]
fn fns_examples_from_ptx() {
    assert_eq!(int::fns(0xAAAA_AAAA, 3, 1), 3);
    assert_eq!(int::fns(0xAAAA_AAAA, 3, (-1i32) as u32 as u64), 3);
    assert_eq!(int::fns(0xAAAA_AAAA, 2, 1), 3);
    assert_eq!(int::fns(0xAAAA_AAAA, 2, (-1i32) as u32 as u64), 1);
    assert_eq!(int::fns(0xAAAA_AAAA, 2, 0), 0xFFFF_FFFF);
    assert_eq!(int::fns(0xAAAA_AAAA, 1, 3), 5);
    assert_eq!(int::fns(0x1, 0, 2), 0xFFFF_FFFF);
    assert_eq!(int::fns(0xFFFF_FFFF, 40, 1), 0xFFFF_FFFF);
}

#[test]
fn szext_and_bmsk_examples() {
    assert_eq!(int::szext(ClampWrap::Wrap, false, 0xFFFF_FFFF, 0), 0);
    assert_eq!(int::szext(ClampWrap::Clamp, false, 0xFFFF_FFFF, 0), 0);
    assert_eq!(int::szext(ClampWrap::Clamp, true, 0x0000_0080, 8), 0xFFFF_FF80);
    assert_eq!(int::szext(ClampWrap::Clamp, false, 0x1234_5680, 8), 0x80);
    assert_eq!(int::szext(ClampWrap::Clamp, true, 0x1234_5678, 40), 0x1234_5678);
    assert_eq!(int::szext(ClampWrap::Wrap, true, 0x0000_0080, 40), 0xFFFF_FF80); // 40 mod 32 = 8
    assert_eq!(int::bmsk(ClampWrap::Wrap, 1, 2), 0x6);
    assert_eq!(int::bmsk(ClampWrap::Clamp, 0, 32), 0xFFFF_FFFF);
    assert_eq!(int::bmsk(ClampWrap::Clamp, 32, 4), 0);
    assert_eq!(int::bmsk(ClampWrap::Wrap, 0, 0), 0);
    assert_eq!(int::bmsk(ClampWrap::Clamp, 28, 8), 0xF000_0000);
    assert_eq!(int::bmsk(ClampWrap::Wrap, 4, 36), 0xF0); // width 36 wraps to 4
}

proptest! {
    #[test]
    fn szext_clamp_is_sign_extension(a in any::<u32>(), n in 1u32..32) {
        let s = ((a << (32 - n)) as i32 >> (32 - n)) as u32;
        let z = a & ((1u32 << n) - 1);
        prop_assert_eq!(int::szext(ClampWrap::Clamp, true, a as u64, n as u64), s as u64);
        prop_assert_eq!(int::szext(ClampWrap::Clamp, false, a as u64, n as u64), z as u64);
    }

    #[test]
    fn bmsk_is_a_run_of_ones(a in 0u32..32, b in 0u32..32) {
        let expect = if a + b >= 32 { u32::MAX << a } else { ((1u32 << b) - 1) << a };
        prop_assert_eq!(int::bmsk(ClampWrap::Wrap, a as u64, b as u64), expect as u64);
    }

    #[test]
    fn dp4a_dp2a_match_reference(a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), sa: bool, sb: bool, hi: bool) {
        let byte = |x: u32, i: u32, s: bool| -> i64 {
            let v = (x >> (8 * i)) & 0xFF;
            if s { v as u8 as i8 as i64 } else { v as i64 }
        };
        let half = |x: u32, i: u32, s: bool| -> i64 {
            let v = (x >> (16 * i)) & 0xFFFF;
            if s { v as u16 as i16 as i64 } else { v as i64 }
        };
        let mut d = c as i64;
        for i in 0..4 { d += byte(a, i, sa) * byte(b, i, sb); }
        prop_assert_eq!(int::dp4a(sa, sb, a as u64, b as u64, c as u64), d as u64 & 0xFFFF_FFFF);
        let sel = if hi { 2 } else { 0 };
        let mut e = c as i64;
        for i in 0..2 { e += half(a, i, sa) * byte(b, sel + i, sb); }
        prop_assert_eq!(int::dp2a(hi, sa, sb, a as u64, b as u64, c as u64), e as u64 & 0xFFFF_FFFF);
    }
}

// ------------------------------------------------------------------------------------------------
// Logic and shifts
// ------------------------------------------------------------------------------------------------

#[test]
fn logic_ops_including_predicates() {
    assert_eq!(int::and(32, 0xF0F0, 0xFF00), 0xF000);
    assert_eq!(int::or(16, 0xF0F0_0000, 0x000F), 0x000F);
    assert_eq!(int::xor(64, u64::MAX, 1), u64::MAX - 1);
    assert_eq!(int::not(32, 0), 0xFFFF_FFFF);
    assert_eq!(int::not(1, 1), 0);
    assert_eq!(int::not(1, 0), 1);
    assert_eq!(int::and(1, 1, 1), 1);
    assert_eq!(int::xor(1, 1, 1), 0);
    assert_eq!(int::cnot(32, 0), 1);
    assert_eq!(int::cnot(32, 0x1_0000_0000), 1); // only the low 32 bits count
    assert_eq!(int::cnot(16, 5), 0);
}

proptest! {
    #[test]
    fn lop3_matches_truth_table(a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), lut in any::<u8>()) {
        let mut expect = 0u32;
        for i in 0..32 {
            let idx = (((a >> i) & 1) << 2) | (((b >> i) & 1) << 1) | ((c >> i) & 1);
            expect |= (((lut as u32) >> idx) & 1) << i;
        }
        prop_assert_eq!(int::lop3(32, a as u64, b as u64, c as u64, lut), expect as u64);
    }
}

#[test]
fn lop3_named_functions() {
    let (a, b, c) = (0x1234_5678u64, 0x0F0F_F0F0u64, 0xCAFE_BABEu64);
    assert_eq!(int::lop3(32, a, b, c, 0xF0), a);
    assert_eq!(int::lop3(32, a, b, c, 0xCC), b);
    assert_eq!(int::lop3(32, a, b, c, 0xAA), c);
    assert_eq!(int::lop3(32, a, b, c, 0x96), a ^ b ^ c);
    assert_eq!(int::lop3(32, a, b, c, 0xE8), (a & b) | (a & c) | (b & c));
    assert_eq!(int::lop3(32, a, b, c, 0x80), a & b & c);
    assert_eq!(int::lop3(32, a, b, c, 0x00), 0);
    assert_eq!(int::lop3(32, a, b, c, 0xFF), 0xFFFF_FFFF);
}

#[test]
fn shifts_clamp_at_the_width() {
    assert_eq!(int::shl(32, 1, 31), 0x8000_0000);
    assert_eq!(int::shl(32, 1, 32), 0);
    assert_eq!(int::shl(32, 1, 1000), 0);
    assert_eq!(int::shl(32, 1, 0xFFFF_FFFF), 0); // "-1" read as unsigned
    assert_eq!(int::shl(16, 0x8001, 1), 0x0002);
    assert_eq!(int::shl(64, 1, 63), 1 << 63);
    assert_eq!(int::shl(64, 1, 64), 0);
    assert_eq!(int::shr(U32, 0x8000_0000, 31), 1);
    assert_eq!(int::shr(U32, 0x8000_0000, 32), 0);
    assert_eq!(int::shr(U32, 0x8000_0000, 0xFFFF_FFFF), 0);
    assert_eq!(int::shr(S32, 0x8000_0000, 31), 0xFFFF_FFFF);
    assert_eq!(int::shr(S32, 0x8000_0000, 32), 0xFFFF_FFFF);
    assert_eq!(int::shr(S32, 0x8000_0000, 0xFFFF_FFFF), 0xFFFF_FFFF);
    assert_eq!(int::shr(S32, 0x7FFF_FFFF, 100), 0);
    assert_eq!(int::shr(S16, 0x8000, 4), 0xF800);
    assert_eq!(int::shr(U16, 0x8000, 4), 0x0800);
    assert_eq!(int::shr(S64, 1 << 63, 64), u64::MAX);
    assert_eq!(int::shr(U64, 1 << 63, 64), 0);
    // Only the low 32 bits of the amount are read.
    assert_eq!(int::shl(32, 1, 0x1_0000_0001), 2);
}

proptest! {
    #[test]
    fn shifts_match_checked_host_shifts(a in any::<u32>(), n in any::<u32>()) {
        prop_assert_eq!(int::shl(32, a as u64, n as u64), a.checked_shl(n).unwrap_or(0) as u64);
        prop_assert_eq!(int::shr(U32, a as u64, n as u64), a.checked_shr(n).unwrap_or(0) as u64);
        let s = (a as i32).checked_shr(n).unwrap_or((a as i32) >> 31);
        prop_assert_eq!(int::shr(S32, a as u64, n as u64), s as u32 as u64);
    }

    #[test]
    fn shf_funnel_and_rotate(a in any::<u32>(), b in any::<u32>(), c in any::<u32>()) {
        let v = ((b as u64) << 32) | a as u64;
        let nc = c.min(32);
        let nw = c & 31;
        prop_assert_eq!(int::shf_l(ClampWrap::Clamp, a as u64, b as u64, c as u64), ((v << nc) >> 32) & 0xFFFF_FFFF);
        prop_assert_eq!(int::shf_r(ClampWrap::Clamp, a as u64, b as u64, c as u64), (v >> nc) & 0xFFFF_FFFF);
        prop_assert_eq!(int::shf_l(ClampWrap::Wrap, a as u64, a as u64, c as u64), a.rotate_left(nw) as u64);
        prop_assert_eq!(int::shf_r(ClampWrap::Wrap, a as u64, a as u64, c as u64), a.rotate_right(nw) as u64);
    }
}

#[test]
fn shf_clamp_at_32() {
    assert_eq!(int::shf_l(ClampWrap::Clamp, 0x1111_1111, 0x2222_2222, 40), 0x1111_1111);
    assert_eq!(int::shf_r(ClampWrap::Clamp, 0x1111_1111, 0x2222_2222, 40), 0x2222_2222);
    assert_eq!(int::shf_l(ClampWrap::Wrap, 0x1111_1111, 0x2222_2222, 32), 0x2222_2222);
}

// ------------------------------------------------------------------------------------------------
// prmt
// ------------------------------------------------------------------------------------------------

/// Source bytes 0..7 are 0x10..0x17 (a = bytes 0..3, b = bytes 4..7).
const PA: u64 = 0x1312_1110;
const PB: u64 = 0x1716_1514;

/// Builds the expected word from byte indices [b3, b2, b1, b0] as PTX's tables list them.
fn from_idx(idx: [u64; 4]) -> u64 {
    (0x10 + idx[0]) << 24 | (0x10 + idx[1]) << 16 | (0x10 + idx[2]) << 8 | (0x10 + idx[3])
}

#[test]
fn prmt_default_mode() {
    assert_eq!(int::prmt(PrmtMode::Default, PA, PB, 0x3210), PA);
    assert_eq!(int::prmt(PrmtMode::Default, PA, PB, 0x7654), PB);
    assert_eq!(int::prmt(PrmtMode::Default, PA, PB, 0x0123), 0x1011_1213);
    // Upper selector bits are ignored.
    assert_eq!(int::prmt(PrmtMode::Default, PA, PB, 0xFFFF_3210), PA);
    // Bit 3 replicates the sign of the selected byte.
    assert_eq!(int::prmt(PrmtMode::Default, 0x0000_8000, 0, 0x9898), 0xFF00_FF00);
    assert_eq!(int::prmt(PrmtMode::Default, 0x0000_7F80, 0, 0x0009), 0x8080_8000);
    assert_eq!(int::prmt(PrmtMode::Default, 0x0000_7F80, 0, 0x9998), 0x0000_00FF);
    // FasterTransformer's int8 → f16 trick: {0x64646464, i8s}.
    assert_eq!(int::prmt(PrmtMode::Default, 0xD3C2_B1A0, 0x6464_6464, 0x5250), 0x64C2_64A0);
}

#[test]
fn prmt_modes_match_ptx_tables() {
    let table: [(PrmtMode, [[u64; 4]; 4]); 6] = [
        (PrmtMode::F4e, [[3, 2, 1, 0], [4, 3, 2, 1], [5, 4, 3, 2], [6, 5, 4, 3]]),
        (PrmtMode::B4e, [[5, 6, 7, 0], [6, 7, 0, 1], [7, 0, 1, 2], [0, 1, 2, 3]]),
        (PrmtMode::Rc8, [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]]),
        (PrmtMode::Ecl, [[3, 2, 1, 0], [3, 2, 1, 1], [3, 2, 2, 2], [3, 3, 3, 3]]),
        (PrmtMode::Ecr, [[0, 0, 0, 0], [1, 1, 1, 0], [2, 2, 1, 0], [3, 2, 1, 0]]),
        (PrmtMode::Rc16, [[1, 0, 1, 0], [3, 2, 3, 2], [1, 0, 1, 0], [3, 2, 3, 2]]),
    ];
    for (mode, rows) in table {
        for (sel, idx) in rows.iter().enumerate() {
            // Only c[1:0] matters in the special modes.
            let c = sel as u64 | 0xFFF0;
            assert_eq!(int::prmt(mode, PA, PB, c), from_idx(*idx), "{mode:?} selector {sel}");
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Carry chains
// ------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn add_cc_addc_builds_u64_from_u32(x in any::<u64>(), y in any::<u64>()) {
        let (lo, c) = int::add_cc(U32, x & 0xFFFF_FFFF, y & 0xFFFF_FFFF, false);
        let (hi, c2) = int::add_cc(U32, x >> 32, y >> 32, c);
        prop_assert_eq!((hi << 32) | lo, x.wrapping_add(y));
        prop_assert_eq!(c2, x.checked_add(y).is_none());
    }

    #[test]
    fn add_cc_chain_builds_u128_from_u64(x in any::<u128>(), y in any::<u128>()) {
        let (w0, c) = int::add_cc(U64, x as u64, y as u64, false);
        let (w1, _) = int::add_cc(S64, (x >> 64) as u64, (y >> 64) as u64, c);
        prop_assert_eq!(((w1 as u128) << 64) | w0 as u128, x.wrapping_add(y));
    }

    #[test]
    fn sub_cc_subc_builds_u64_from_u32(x in any::<u64>(), y in any::<u64>()) {
        let (lo, b) = int::sub_cc(U32, x & 0xFFFF_FFFF, y & 0xFFFF_FFFF, false);
        let (hi, b2) = int::sub_cc(S32, x >> 32, y >> 32, b);
        prop_assert_eq!((hi << 32) | lo, x.wrapping_sub(y));
        prop_assert_eq!(b2, x < y);
    }

    #[test]
    fn four_word_add_matches_u128(x in any::<u128>(), y in any::<u128>()) {
        let mut carry = false;
        let mut out = 0u128;
        for i in 0..4 {
            let (w, c) = int::add_cc(U32, (x >> (32 * i)) as u64 & 0xFFFF_FFFF, (y >> (32 * i)) as u64 & 0xFFFF_FFFF, carry);
            out |= (w as u128) << (32 * i);
            carry = c;
        }
        prop_assert_eq!(out, x.wrapping_add(y));
    }

    #[test]
    fn mad_cc_chain_multiplies_u64_by_u32(a in any::<u64>(), b in any::<u32>()) {
        let (a0, a1, b) = (a & 0xFFFF_FFFF, a >> 32, b as u64);
        let p0 = int::mul_lo(U32, a0, b);
        let t = int::mul_hi(U32, a0, b);
        let (p1, c) = int::mad_cc(U32, false, a1, b, t, false); // mad.lo.cc
        let (p2, c2) = int::mad_cc(U32, true, a1, b, 0, c); // madc.hi
        let got = (p2 as u128) << 64 | (p1 as u128) << 32 | p0 as u128;
        prop_assert_eq!(got, a as u128 * b as u128);
        prop_assert!(!c2);
    }
}

#[test]
fn carry_edge_values() {
    assert_eq!(int::add_cc(U32, 0xFFFF_FFFF, 0, true), (0, true));
    assert_eq!(int::add_cc(U32, 0xFFFF_FFFF, 0xFFFF_FFFF, true), (0xFFFF_FFFF, true));
    assert_eq!(int::add_cc(U64, u64::MAX, 1, false), (0, true));
    assert_eq!(int::sub_cc(U32, 0, 0, true), (0xFFFF_FFFF, true));
    assert_eq!(int::sub_cc(U32, 5, 5, false), (0, false));
    assert_eq!(int::sub_cc(U32, 5, 0xFFFF_FFFF, true), (5, true));
    // mad.hi.cc.s32 uses the signed high half.
    let (d, c) = int::mad_cc(S32, true, 0xFFFF_FFFF, 1, 1, false); // hi(-1·1) = -1; -1 + 1 = 0, carry
    assert_eq!((d, c), (0, true));
}

// ------------------------------------------------------------------------------------------------
// No panics anywhere, results always fit their width
// ------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn every_int_function_is_total(t in any_ty(), a in any::<u64>(), b in any::<u64>(), c in any::<u64>(), d in any::<u64>(), lut in any::<u8>()) {
        let m = t.mask();
        for r in [
            int::add(t, a, b), int::add_sat(t, a, b), int::sub(t, a, b), int::sub_sat(t, a, b),
            int::mul_lo(t, a, b), int::mul_hi(t, a, b), int::mad_lo(t, a, b, c), int::mad_hi(t, a, b, c),
            int::div(t, a, b), int::rem(t, a, b), int::abs(t, a), int::neg(t, a), int::min(t, a, b),
            int::max(t, a, b), int::min_relu(t, a, b), int::max_relu(t, a, b), int::sad(t, a, b, c),
            int::shr(t, a, b), int::bfe(t, a, b, c),
        ] {
            prop_assert_eq!(r & !m, 0);
        }
        let bits = t.bits();
        for r in [int::shl(bits, a, b), int::bfi(bits, a, b, c, d), int::lop3(bits, a, b, c, lut),
                  int::not(bits, a), int::brev(bits, a)] {
            prop_assert_eq!(r & !m, 0);
        }
        prop_assert!(int::popc(bits, a) <= bits as u64);
        prop_assert!(int::clz(bits, a) <= bits as u64);
        let b32 = 0xFFFF_FFFFu64;
        for r in [
            int::mul24_lo(t, a, b), int::mul24_hi(t, a, b), int::mad24_hi_sat_s32(a, b, c),
            int::mad_hi_sat_s32(a, b, c), int::fns(a, b, c), int::szext(ClampWrap::Wrap, true, a, b),
            int::bmsk(ClampWrap::Clamp, a, b), int::dp4a(true, false, a, b, c), int::dp2a(true, true, false, a, b, c),
            int::shf_l(ClampWrap::Clamp, a, b, c), int::shf_r(ClampWrap::Wrap, a, b, c),
            int::prmt(PrmtMode::Default, a, b, c), int::prmt(PrmtMode::B4e, a, b, c),
            int::bfind(t, lut & 1 == 1, a),
        ] {
            prop_assert_eq!(r & !b32, 0);
        }
    }
}

#[test]
fn odd_widths_do_not_panic() {
    for bits in [0u32, 1, 7, 65, 128, u32::MAX] {
        let w = bits.min(64);
        let m = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        for r in [
            int::shl(bits, u64::MAX, 70),
            int::shl(bits, 1, 3),
            int::bfi(bits, u64::MAX, 0, 100, 200),
            int::bfi(bits, 1, 0, 0, 1),
            int::popc(bits, u64::MAX),
            int::and(bits, u64::MAX, u64::MAX),
            int::not(bits, 0),
            int::lop3(bits, 1, 2, 3, 0xFE),
        ] {
            assert_eq!(r & !m.max(0x7F), 0, "bits {bits}");
        }
        assert!(int::clz(bits, u64::MAX) <= 64);
        let _ = int::brev(bits, 1);
    }
}
