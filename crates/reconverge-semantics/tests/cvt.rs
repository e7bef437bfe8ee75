//! `cvt`: saturation tables, all rounding modes against apfloat and exact integer arithmetic, known f16/bf16
//! bit patterns, `half` as an independent round-to-nearest oracle, round trips.

use proptest::prelude::*;
use reconverge_semantics::cvt::{self, CvtMode, CvtRounding, Tf32Rounding};
use reconverge_semantics::{FloatMode, FloatTy, IntRounding, IntTy, NumTy, Rounding};
use rustc_apfloat::ieee::{BFloat, Double, Half, Single};
use rustc_apfloat::{Float, FloatConvert, Round};

use FloatTy::{Bf16, F16, F32, F64};
use IntTy::*;

fn ap_rnd(r: Rounding) -> Round {
    match r {
        Rounding::Rn => Round::NearestTiesToEven,
        Rounding::Rz => Round::TowardZero,
        Rounding::Rm => Round::TowardNegative,
        Rounding::Rp => Round::TowardPositive,
    }
}

fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

fn b64(x: f64) -> u64 {
    x.to_bits()
}

fn f2i(dst: IntTy, rnd: IntRounding, x: f32) -> u64 {
    cvt::float_to_int(dst, F32, rnd, false, b32(x))
}

// ------------------------------------------------------------------------------------------------
// float → int
// ------------------------------------------------------------------------------------------------

#[test]
fn f32_to_int_saturation_table() {
    let z = IntRounding::Rzi;
    // NaN → 0 for every destination.
    for t in IntTy::ALL {
        assert_eq!(cvt::float_to_int(t, F32, z, false, 0x7FC0_0000), 0, "{t:?}");
        assert_eq!(cvt::float_to_int(t, F64, z, false, 0xFFF8_0000_0000_0001), 0, "{t:?}");
        assert_eq!(cvt::float_to_int(t, F16, z, false, 0x7E00), 0, "{t:?}");
    }
    assert_eq!(f2i(S32, z, f32::INFINITY), 0x7FFF_FFFF);
    assert_eq!(f2i(S32, z, f32::NEG_INFINITY), 0x8000_0000);
    assert_eq!(f2i(S32, z, 3.0e9), 0x7FFF_FFFF);
    assert_eq!(f2i(S32, z, -3.0e9), 0x8000_0000);
    assert_eq!(f2i(S32, z, -2147483648.0), 0x8000_0000);
    assert_eq!(f2i(U32, z, -1.0), 0);
    assert_eq!(f2i(U32, z, 5.0e9), 0xFFFF_FFFF);
    assert_eq!(f2i(U8, z, 255.9), 255);
    assert_eq!(f2i(U8, z, 256.0), 255);
    assert_eq!(f2i(U8, z, -0.5), 0);
    assert_eq!(f2i(U8, z, -1.5), 0);
    assert_eq!(f2i(U8, z, f32::INFINITY), 255);
    assert_eq!(f2i(U8, z, f32::NEG_INFINITY), 0);
    assert_eq!(f2i(S8, z, -200.0), 0x80);
    assert_eq!(f2i(S8, z, 200.0), 0x7F);
    assert_eq!(f2i(S16, z, -40000.0), 0x8000);
    assert_eq!(f2i(U64, z, f32::INFINITY), u64::MAX);
    assert_eq!(f2i(S64, z, -1.0e30), i64::MIN as u64);
    assert_eq!(f2i(S64, z, 9.3e18), i64::MAX as u64);
    // 255.5 rounds to 256 under rni, then clamps.
    assert_eq!(f2i(U8, IntRounding::Rni, 255.5), 255);
    assert_eq!(f2i(U8, IntRounding::Rni, 254.5), 254);
}

#[test]
fn float_to_int_rounding_modes() {
    let cases: [(f32, [i64; 4]); 8] = [
        // value, [rni, rzi, rmi, rpi]
        (2.5, [2, 2, 2, 3]),
        (3.5, [4, 3, 3, 4]),
        (-2.5, [-2, -2, -3, -2]),
        (-0.5, [0, 0, -1, 0]),
        (0.5, [0, 0, 0, 1]),
        (1.0e-40, [0, 0, 0, 1]), // subnormal
        (-1.0e-40, [0, 0, -1, 0]),
        (7.0, [7, 7, 7, 7]),
    ];
    for (x, want) in cases {
        for (r, w) in IntRounding::ALL.iter().zip(want) {
            assert_eq!(f2i(S32, *r, x), w as i32 as u32 as u64, "{x} {r:?}");
        }
    }
    // .ftz flushes the subnormal first: rpi of +1e-40 becomes 0.
    assert_eq!(cvt::float_to_int(S32, F32, IntRounding::Rpi, true, b32(1.0e-40)), 0);
    assert_eq!(cvt::float_to_int(S32, F32, IntRounding::Rmi, true, b32(-1.0e-40)), 0);
    // f16 and bf16 sources.
    assert_eq!(cvt::float_to_int(S32, F16, IntRounding::Rni, false, 0xC100), 0xFFFF_FFFE); // -2.5 → -2
    assert_eq!(cvt::float_to_int(U8, Bf16, IntRounding::Rzi, false, 0x4380), 255);
    // 256.0 → clamp
}

proptest! {
    #[test]
    fn f64_to_int_matches_reference(x in any::<u64>(), t in prop::sample::select(IntTy::ALL.to_vec()), r in prop::sample::select(IntRounding::ALL.to_vec())) {
        let v = f64::from_bits(x);
        let got = cvt::float_to_int(t, F64, r, false, x);
        if v.is_nan() {
            prop_assert_eq!(got, 0);
        } else {
            let rv = match r {
                IntRounding::Rni => v.round_ties_even(),
                IntRounding::Rzi => v.trunc(),
                IntRounding::Rmi => v.floor(),
                IntRounding::Rpi => v.ceil(),
            };
            let clamped = if rv <= t.min_value() as f64 { t.min_value() } else if rv >= t.max_value() as f64 { t.max_value() } else { rv as i128 };
            prop_assert_eq!(got, t.trunc(clamped as u64));
        }
    }
}

// ------------------------------------------------------------------------------------------------
// int → float
// ------------------------------------------------------------------------------------------------

/// Exact comparison of a finite f32 with an integer.
fn cmp_f32_int(f: u64, v: i128) -> std::cmp::Ordering {
    let x = f32::from_bits(f as u32) as f64;
    // Every f32 here is an integer or ±2^64-ish; compare through i128 when it fits.
    if x.abs() < 1.7e38 {
        (x as i128).cmp(&v).then_with(|| x.partial_cmp(&(x.trunc())).unwrap())
    } else if x > 0.0 {
        std::cmp::Ordering::Greater
    } else {
        std::cmp::Ordering::Less
    }
}

proptest! {
    #[test]
    fn u64_to_f32_all_modes(v in prop_oneof![any::<u64>(), (0u64..64).prop_map(|s| u64::MAX >> s), (0u64..64).prop_map(|s| (1u64 << s) + 1)]) {
        let res: Vec<u64> = Rounding::ALL.iter().map(|&r| cvt::int_to_float(F32, U64, FloatMode::new(r), v)).collect();
        for (i, &r) in Rounding::ALL.iter().enumerate() {
            let want = Single::from_u128_r(v as u128, ap_rnd(r)).value.to_bits() as u64;
            prop_assert_eq!(res[i], want, "{:?} {}", r, v);
        }
        let (rn, rz, rm, rp) = (res[0], res[1], res[2], res[3]);
        prop_assert_eq!(rn, b32(v as f32));
        prop_assert_eq!(rz, rm);
        prop_assert_ne!(cmp_f32_int(rm, v as i128), std::cmp::Ordering::Greater);
        prop_assert_ne!(cmp_f32_int(rp, v as i128), std::cmp::Ordering::Less);
        prop_assert!(rp == rm || rp == rm + 1);
        prop_assert_eq!(rp == rm, cmp_f32_int(rm, v as i128) == std::cmp::Ordering::Equal);
    }

    #[test]
    fn s64_to_f32_f64_f16_bf16_match_apfloat(v in any::<i64>(), r in prop::sample::select(Rounding::ALL.to_vec())) {
        let x = v as u64;
        let rr = ap_rnd(r);
        let m = FloatMode::new(r);
        prop_assert_eq!(cvt::int_to_float(F32, S64, m, x), Single::from_i128_r(v as i128, rr).value.to_bits() as u64);
        prop_assert_eq!(cvt::int_to_float(F64, S64, m, x), Double::from_i128_r(v as i128, rr).value.to_bits() as u64);
        prop_assert_eq!(cvt::int_to_float(F16, S64, m, x), Half::from_i128_r(v as i128, rr).value.to_bits() as u64);
        prop_assert_eq!(cvt::int_to_float(Bf16, S64, m, x), BFloat::from_i128_r(v as i128, rr).value.to_bits() as u64);
        let w = v as i32;
        prop_assert_eq!(cvt::int_to_float(F32, S32, m, w as u32 as u64), Single::from_i128_r(w as i128, rr).value.to_bits() as u64);
        prop_assert_eq!(cvt::int_to_float(F64, U32, m, x), b64((x as u32) as f64));
        prop_assert_eq!(cvt::int_to_float(F16, U16, m, x), Half::from_u128_r((x as u16) as u128, rr).value.to_bits() as u64);
    }

    #[test]
    fn int_to_f64_to_int_round_trips(v in any::<i32>(), u in any::<u32>()) {
        let f = cvt::int_to_float(F64, S32, FloatMode::RN, v as u32 as u64);
        prop_assert_eq!(cvt::float_to_int(S32, F64, IntRounding::Rzi, false, f), v as u32 as u64);
        let g = cvt::int_to_float(F64, U32, FloatMode::RN, u as u64);
        prop_assert_eq!(cvt::float_to_int(U32, F64, IntRounding::Rni, false, g), u as u64);
    }
}

#[test]
fn int_to_float_known_values() {
    let m = |r| FloatMode::new(r);
    // 2^24 + 1 is not representable in f32.
    let v = (1u64 << 24) + 1;
    assert_eq!(cvt::int_to_float(F32, U32, m(Rounding::Rn), v), 0x4B80_0000);
    assert_eq!(cvt::int_to_float(F32, U32, m(Rounding::Rp), v), 0x4B80_0001);
    assert_eq!(cvt::int_to_float(F32, S32, m(Rounding::Rm), (-(v as i32)) as u32 as u64), 0xCB80_0001);
    assert_eq!(cvt::int_to_float(F32, U64, m(Rounding::Rz), u64::MAX), 0x5F7F_FFFF);
    assert_eq!(cvt::int_to_float(F32, U64, m(Rounding::Rn), u64::MAX), 0x5F80_0000);
    assert_eq!(cvt::int_to_float(F64, S64, m(Rounding::Rn), i64::MIN as u64), 0xC3E0_0000_0000_0000);
    assert_eq!(cvt::int_to_float(F64, U64, m(Rounding::Rp), (1 << 53) + 1), 0x4340_0000_0000_0001);
    // f16 overflow: 65520 rounds to +Inf under rn, stays at MAX under rz.
    assert_eq!(cvt::int_to_float(F16, U32, m(Rounding::Rn), 65520), 0x7C00);
    assert_eq!(cvt::int_to_float(F16, U32, m(Rounding::Rz), 65520), 0x7BFF);
    assert_eq!(cvt::int_to_float(F16, S32, m(Rounding::Rm), 0xFFFF_0000), 0xFC00); // -65536
    assert_eq!(cvt::int_to_float(F16, U32, m(Rounding::Rn), 65504), 0x7BFF);
    assert_eq!(cvt::int_to_float(Bf16, U32, m(Rounding::Rn), 257), 0x4380); // 256 (ties to even)
    assert_eq!(cvt::int_to_float(Bf16, U32, m(Rounding::Rp), 257), 0x4381);
    // .sat on an int → float conversion.
    assert_eq!(cvt::int_to_float(F32, S32, m(Rounding::Rn).with_sat(true), 5), 0x3F80_0000);
    assert_eq!(cvt::int_to_float(F32, S32, m(Rounding::Rn).with_sat(true), 0xFFFF_FFFF), 0);
}

// ------------------------------------------------------------------------------------------------
// int → int
// ------------------------------------------------------------------------------------------------

#[test]
fn int_to_int_truncation_extension_and_sat() {
    assert_eq!(cvt::int_to_int(U32, S8, false, 0x80), 0xFFFF_FF80);
    assert_eq!(cvt::int_to_int(U32, U8, false, 0x80), 0x80);
    assert_eq!(cvt::int_to_int(S8, U32, false, 0x1234_5681), 0x81);
    assert_eq!(cvt::int_to_int(U64, S32, false, 0xFFFF_FFFF), u64::MAX);
    assert_eq!(cvt::int_to_int(S64, U32, false, 0xFFFF_FFFF), 0xFFFF_FFFF);
    // .sat clamps to the destination range.
    assert_eq!(cvt::int_to_int(U8, S32, true, 0xFFFF_FFFF), 0);
    assert_eq!(cvt::int_to_int(U8, S32, true, 300), 255);
    assert_eq!(cvt::int_to_int(S8, S32, true, 300), 0x7F);
    assert_eq!(cvt::int_to_int(S8, S32, true, (-300i32) as u32 as u64), 0x80);
    assert_eq!(cvt::int_to_int(S32, U32, true, 0xFFFF_FFFF), 0x7FFF_FFFF);
    assert_eq!(cvt::int_to_int(U32, S64, true, (-1i64) as u64), 0);
    assert_eq!(cvt::int_to_int(U32, U64, true, u64::MAX), 0xFFFF_FFFF);
    assert_eq!(cvt::int_to_int(S16, U16, true, 0x8000), 0x7FFF);
    assert_eq!(cvt::int_to_int(U64, S64, true, i64::MIN as u64), 0);
    assert_eq!(cvt::int_to_int(S64, U64, true, u64::MAX), i64::MAX as u64);
}

proptest! {
    #[test]
    fn int_to_int_matches_i128(d in prop::sample::select(IntTy::ALL.to_vec()), s in prop::sample::select(IntTy::ALL.to_vec()), a in any::<u64>()) {
        let v = s.value(a);
        prop_assert_eq!(cvt::int_to_int(d, s, false, a), d.trunc(v as u64));
        prop_assert_eq!(d.value(cvt::int_to_int(d, s, true, a)), v.clamp(d.min_value(), d.max_value()));
    }
}

// ------------------------------------------------------------------------------------------------
// float → float
// ------------------------------------------------------------------------------------------------

#[test]
fn half_and_bfloat_known_patterns() {
    let rn = FloatMode::RN;
    let to16 = |x: f32| cvt::float_to_float(F16, F32, rn, b32(x));
    let tob = |x: f32| cvt::float_to_float(Bf16, F32, rn, b32(x));
    assert_eq!(to16(1.0), 0x3C00);
    assert_eq!(to16(-2.0), 0xC000);
    assert_eq!(to16(65504.0), 0x7BFF);
    assert_eq!(to16(65520.0), 0x7C00); // rounds up to +Inf
    assert_eq!(to16(65519.0), 0x7BFF);
    assert_eq!(to16(2f32.powi(-24)), 0x0001); // smallest subnormal
    assert_eq!(to16(2f32.powi(-25)), 0x0000); // tie → even (0)
    assert_eq!(to16(1.5 * 2f32.powi(-25)), 0x0001);
    assert_eq!(to16(2f32.powi(-14)), 0x0400); // smallest normal
    assert_eq!(to16(f32::INFINITY), 0x7C00);
    assert_eq!(to16(f32::NAN), 0x7FFF);
    assert_eq!(to16(-0.0), 0x8000);
    assert_eq!(to16(0.1), 0x2E66);
    assert_eq!(tob(1.0), 0x3F80);
    assert_eq!(tob(-1.0), 0xBF80);
    assert_eq!(cvt::float_to_float(Bf16, F32, rn, 0x3F80_8000), 0x3F80); // tie → even
    assert_eq!(cvt::float_to_float(Bf16, F32, rn, 0x3F81_8000), 0x3F82); // tie → even (up)
    assert_eq!(cvt::float_to_float(Bf16, F32, rn, 0x3F80_8001), 0x3F81);
    assert_eq!(tob(f32::MAX), 0x7F80); // overflow to +Inf under rn
    assert_eq!(cvt::float_to_float(Bf16, F32, FloatMode::new(Rounding::Rz), b32(f32::MAX)), 0x7F7F);
    assert_eq!(tob(f32::NAN), 0x7FFF);
    // Widening is exact.
    assert_eq!(cvt::float_to_float(F32, F16, rn, 0x0001), b32(2f32.powi(-24)));
    assert_eq!(cvt::float_to_float(F32, F16, rn, 0x7BFF), b32(65504.0));
    assert_eq!(cvt::float_to_float(F32, Bf16, rn, 0xC0A0), b32(-5.0));
    assert_eq!(cvt::float_to_float(F64, F16, rn, 0xFC00), b64(f64::NEG_INFINITY));
    assert_eq!(cvt::float_to_float(F32, F16, rn, 0xFE01), 0x7FFF_FFFF);
    assert_eq!(cvt::float_to_float(F64, F32, rn, 0x7FC0_0001), 0x7FFF_FFFF_FFFF_FFFF);
    // f16 ↔ bf16.
    assert_eq!(cvt::float_to_float(Bf16, F16, rn, 0x3C00), 0x3F80);
    assert_eq!(cvt::float_to_float(F16, Bf16, rn, 0x4780), 0x7C00); // 65536 → Inf
    assert_eq!(cvt::float_to_float(F16, Bf16, FloatMode::new(Rounding::Rz), 0x4780), 0x7BFF);
}

proptest! {
    #[test]
    fn f32_to_f16_bf16_rn_matches_half_crate(x in any::<u32>()) {
        let f = f32::from_bits(x);
        prop_assume!(!f.is_nan());
        prop_assert_eq!(cvt::float_to_float(F16, F32, FloatMode::RN, x as u64), half::f16::from_f32(f).to_bits() as u64);
        prop_assert_eq!(cvt::float_to_float(Bf16, F32, FloatMode::RN, x as u64), half::bf16::from_f32(f).to_bits() as u64);
    }

    #[test]
    fn f64_to_f16_rn_matches_half_crate(x in any::<u64>()) {
        let f = f64::from_bits(x);
        prop_assume!(!f.is_nan());
        prop_assert_eq!(cvt::float_to_float(F16, F64, FloatMode::RN, x), half::f16::from_f64(f).to_bits() as u64);
    }

    #[test]
    fn narrowing_all_modes_match_apfloat(x in any::<u64>(), r in prop::sample::select(Rounding::ALL.to_vec())) {
        let rr = ap_rnd(r);
        let m = FloatMode::new(r);
        let d = Double::from_bits(x as u128);
        prop_assume!(!d.is_nan());
        let s: Single = d.convert_r(rr, &mut false).value;
        prop_assert_eq!(cvt::float_to_float(F32, F64, m, x), s.to_bits() as u64);
        let h: Half = d.convert_r(rr, &mut false).value;
        prop_assert_eq!(cvt::float_to_float(F16, F64, m, x), h.to_bits() as u64);
        let single = Single::from_bits((x & 0xFFFF_FFFF) as u128);
        if !single.is_nan() {
            let h: Half = single.convert_r(rr, &mut false).value;
            prop_assert_eq!(cvt::float_to_float(F16, F32, m, x & 0xFFFF_FFFF), h.to_bits() as u64);
            let b: BFloat = single.convert_r(rr, &mut false).value;
            prop_assert_eq!(cvt::float_to_float(Bf16, F32, m, x & 0xFFFF_FFFF), b.to_bits() as u64);
        }
    }

    #[test]
    fn f32_to_f64_widening_is_exact(x in any::<u32>()) {
        let f = f32::from_bits(x);
        prop_assume!(!f.is_nan());
        prop_assert_eq!(cvt::float_to_float(F64, F32, FloatMode::RN, x as u64), b64(f as f64));
        prop_assert_eq!(cvt::float_to_float(F32, F64, FloatMode::new(Rounding::Rz), b64(f as f64)), x as u64);
    }
}

#[test]
fn half_and_bfloat_round_trip_exhaustively() {
    for h in 0u64..=0xFFFF {
        for ty in [F16, Bf16] {
            if ty.is_nan(h) {
                continue;
            }
            let up = cvt::float_to_float(F32, ty, FloatMode::RN, h);
            for r in Rounding::ALL {
                assert_eq!(cvt::float_to_float(ty, F32, FloatMode::new(r), up), h, "{ty:?} {h:#x} {r:?}");
            }
            let up64 = cvt::float_to_float(F64, ty, FloatMode::RN, h);
            assert_eq!(cvt::float_to_float(ty, F64, FloatMode::RN, up64), h);
        }
        let f = half::f16::from_bits(h as u16);
        if !f.is_nan() {
            assert_eq!(cvt::float_to_float(F32, F16, FloatMode::RN, h), f.to_f32().to_bits() as u64);
        }
    }
}

#[test]
fn float_to_float_ftz_and_sat() {
    let ftz = FloatMode::RN.with_ftz(true);
    // f32 subnormal source flushed.
    assert_eq!(cvt::float_to_float(F64, F32, ftz, 0x8000_0001), 1 << 63);
    assert_eq!(cvt::float_to_float(F64, F32, FloatMode::RN, 0x0000_0001), b64(2f64.powi(-149)));
    // f32 subnormal result flushed.
    assert_eq!(cvt::float_to_float(F32, F64, ftz, b64(1e-40)), 0);
    assert_eq!(cvt::float_to_float(F32, F64, FloatMode::RN, b64(1e-40)), b32(1e-40));
    // f16 results are not flushed by .ftz (it applies to f32 only).
    assert_eq!(cvt::float_to_float(F16, F32, ftz, b32(2f32.powi(-24))), 0x0001);
    let sat = FloatMode::RN.with_sat(true);
    assert_eq!(cvt::float_to_float(F32, F64, sat, b64(2.5)), b32(1.0));
    assert_eq!(cvt::float_to_float(F32, F64, sat, b64(-2.5)), 0);
    assert_eq!(cvt::float_to_float(F32, F64, sat, b64(f64::NAN)), 0);
    assert_eq!(cvt::float_to_float(F16, F32, sat, b32(0.5)), 0x3800);
}

#[test]
fn round_to_integral_in_same_type() {
    let cases: [(f32, [f32; 4]); 6] = [
        (2.5, [2.0, 2.0, 2.0, 3.0]),
        (-2.5, [-2.0, -2.0, -3.0, -2.0]),
        (-0.3, [-0.0, -0.0, -1.0, -0.0]),
        (0.7, [1.0, 0.0, 0.0, 1.0]),
        (1.0e20, [1.0e20, 1.0e20, 1.0e20, 1.0e20]),
        (f32::NEG_INFINITY, [f32::NEG_INFINITY; 4]),
    ];
    for (x, want) in cases {
        for (r, w) in IntRounding::ALL.iter().zip(want) {
            assert_eq!(cvt::round_to_integral(F32, *r, false, false, b32(x)), b32(w), "{x} {r:?}");
            assert_eq!(cvt::round_to_integral(F64, *r, false, false, b64(x as f64)), b64(w as f64), "{x} {r:?}");
        }
    }
    assert_eq!(cvt::round_to_integral(F32, IntRounding::Rni, false, false, 0x7F80_0001), 0x7FFF_FFFF);
    assert_eq!(cvt::round_to_integral(F32, IntRounding::Rpi, false, false, 1), b32(1.0));
    assert_eq!(cvt::round_to_integral(F32, IntRounding::Rpi, true, false, 1), 0); // ftz first
    assert_eq!(cvt::round_to_integral(F32, IntRounding::Rpi, false, true, b32(3.2)), b32(1.0)); // sat
    assert_eq!(cvt::round_to_integral(F16, IntRounding::Rni, false, false, 0x4100), 0x4000); // 2.5 → 2
    assert_eq!(cvt::round_to_integral(Bf16, IntRounding::Rpi, false, false, 0x3FC0), 0x4000); // 1.5 → 2
    assert_eq!(cvt::round_to_integral(F16, IntRounding::Rmi, false, false, 0xB800), 0xBC00);
    // -0.5 → -1
}

#[test]
fn tf32_conversions() {
    // 1 + 2^-11 is halfway between two tf32 values: rna rounds away, rn to even.
    let tie = 0x3F80_1000u64;
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, false, false, tie), 0x3F80_2000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rn, false, false, tie), 0x3F80_0000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rz, false, false, 0x3F80_1FFF), 0x3F80_0000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, false, false, 0xBF80_1000), 0xBF80_2000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, false, false, 0x7F7F_FFFF), 0x7F80_0000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, true, false, 0x7F7F_FFFF), 0x7F7F_E000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, true, false, 0xFF80_0000), 0xFF7F_E000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, false, false, 0x7FC0_0001), 0x7FFF_E000);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rn, false, true, 0xBF80_0000), 0);
    assert_eq!(cvt::f32_to_tf32(Tf32Rounding::Rna, false, false, 0x0000_1000), 0x0000_2000);
    // subnormal tie
}

#[test]
fn packed_f32_pair_conversion() {
    let d = cvt::f32_pair_to_x2(F16, Rounding::Rn, false, false, b32(1.0), b32(-2.0));
    assert_eq!(d, 0x3C00_C000);
    let d = cvt::f32_pair_to_x2(F16, Rounding::Rn, true, true, b32(-1.0), b32(1.0e6));
    assert_eq!(d, 0x0000_7BFF);
    let d = cvt::f32_pair_to_x2(Bf16, Rounding::Rz, false, false, b32(1.0), 0x3F80_FFFF);
    assert_eq!(d, 0x3F80_3F80);
}

// ------------------------------------------------------------------------------------------------
// Dispatcher
// ------------------------------------------------------------------------------------------------

#[test]
fn cvt_dispatcher_routes_every_kind() {
    let i = NumTy::Int;
    let f = NumTy::Float;
    let md = CvtMode::default();
    assert_eq!(cvt::cvt(i(S32), f(F32), md, b32(-2.7)), (-2i32) as u32 as u64); // default .rzi
    assert_eq!(
        cvt::cvt(i(S32), f(F32), CvtMode { rnd: CvtRounding::Int(IntRounding::Rni), ..md }, b32(-2.7)),
        (-3i32) as u32 as u64
    );
    assert_eq!(cvt::cvt(i(S32), f(F32), CvtMode { rnd: CvtRounding::Float(Rounding::Rm), ..md }, b32(2.7)), 2);
    assert_eq!(cvt::cvt(f(F32), i(S32), md, 3), b32(3.0));
    assert_eq!(cvt::cvt(f(F16), i(U32), CvtMode { rnd: CvtRounding::Float(Rounding::Rz), ..md }, 65520), 0x7BFF);
    assert_eq!(cvt::cvt(f(F32), f(F64), md, b64(0.1)), b32(0.1));
    assert_eq!(cvt::cvt(f(F32), f(F32), CvtMode { rnd: CvtRounding::Int(IntRounding::Rpi), ..md }, b32(1.2)), b32(2.0));
    assert_eq!(cvt::cvt(f(F32), f(F32), CvtMode { ftz: true, ..md }, 1), 0);
    assert_eq!(cvt::cvt(f(F32), f(F32), md, 1), 1);
    assert_eq!(cvt::cvt(i(U8), i(S32), CvtMode { sat: true, ..md }, 0xFFFF_FFFF), 0);
    assert_eq!(cvt::cvt(i(U8), i(S32), md, 0xFFFF_FFFF), 0xFF);
    assert_eq!(cvt::cvt(f(F32), f(F16), md, 0x3C00), b32(1.0));
}

proptest! {
    #[test]
    fn cvt_is_total_and_fits(d in prop_oneof![prop::sample::select(IntTy::ALL.to_vec()).prop_map(NumTy::Int), prop::sample::select(FloatTy::ALL.to_vec()).prop_map(NumTy::Float)],
                             s in prop_oneof![prop::sample::select(IntTy::ALL.to_vec()).prop_map(NumTy::Int), prop::sample::select(FloatTy::ALL.to_vec()).prop_map(NumTy::Float)],
                             a in any::<u64>(), ftz: bool, sat: bool, k in 0u8..9) {
        let rnd = match k {
            0 => CvtRounding::Default,
            1..=4 => CvtRounding::Float(Rounding::ALL[(k - 1) as usize]),
            _ => CvtRounding::Int(IntRounding::ALL[(k - 5) as usize]),
        };
        let r = cvt::cvt(d, s, CvtMode { rnd, ftz, sat }, a);
        let mask = if d.bits() == 64 { u64::MAX } else { (1u64 << d.bits()) - 1 };
        prop_assert_eq!(r & !mask, 0);
    }
}

#[test]
fn f32_to_half_rn_strided_sweep() {
    // ~1M f32 patterns across the whole encoding space, against the `half` crate.
    for x in (0..=u32::MAX).step_by(4093).chain([0x3880_0000, 0x387F_FFFF, 0x477F_EFFF, 0x477F_F000, 0x3300_0001]) {
        let f = f32::from_bits(x);
        if f.is_nan() {
            continue;
        }
        assert_eq!(
            cvt::float_to_float(F16, F32, FloatMode::RN, x as u64),
            half::f16::from_f32(f).to_bits() as u64,
            "{x:#x}"
        );
        assert_eq!(
            cvt::float_to_float(Bf16, F32, FloatMode::RN, x as u64),
            half::bf16::from_f32(f).to_bits() as u64,
            "{x:#x}"
        );
    }
}
