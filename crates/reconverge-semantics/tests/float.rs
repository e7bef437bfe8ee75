//! Floating-point semantics: all rounding modes against independent references, NaN/∞/±0/subnormal rules,
//! `.ftz`, `.sat`, min/max, `testp`, approximate instructions and packed forms.

use std::cmp::Ordering;

use proptest::prelude::*;
use reconverge_semantics::float::{self, MinMaxMode, TestpOp};
use reconverge_semantics::{FloatMode, FloatTy, Rounding};
use rustc_apfloat::ieee::{BFloat, Double, Half, Quad, Single};
use rustc_apfloat::{Float, FloatConvert, Round, Status};

const F32: FloatTy = FloatTy::F32;
const F64: FloatTy = FloatTy::F64;
const F16: FloatTy = FloatTy::F16;
const BF16: FloatTy = FloatTy::Bf16;
const QNAN32: u64 = 0x7FFF_FFFF;
const QNAN64: u64 = 0x7FFF_FFFF_FFFF_FFFF;

fn ap_rnd(r: Rounding) -> Round {
    match r {
        Rounding::Rn => Round::NearestTiesToEven,
        Rounding::Rz => Round::TowardZero,
        Rounding::Rm => Round::TowardNegative,
        Rounding::Rp => Round::TowardPositive,
    }
}

fn m(r: Rounding) -> FloatMode {
    FloatMode::new(r)
}

fn b32(x: f32) -> u64 {
    x.to_bits() as u64
}

fn f32b(x: u64) -> f32 {
    f32::from_bits(x as u32)
}

fn b64(x: f64) -> u64 {
    x.to_bits()
}

fn f64b(x: u64) -> f64 {
    f64::from_bits(x)
}

/// f32 bit patterns biased towards interesting values: specials, subnormals, values near 1 and arbitrary bits.
fn f32_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => any::<u32>().prop_map(|x| x as u64),
        2 => (0x3F00_0000u32..0x4080_0000).prop_map(|x| x as u64), // [0.5, 4)
        1 => (0u32..0x0100_0000).prop_map(|x| x as u64),           // subnormals and tiny normals
        1 => (0x8000_0000u32..0x8100_0000).prop_map(|x| x as u64),
        1 => prop::sample::select(vec![
            0u64, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000, 0x7F80_0001, 0xFFC0_1234, 0x7F7F_FFFF,
            0xFF7F_FFFF, 0x0000_0001, 0x8000_0001, 0x0080_0000, 0x3F80_0000, 0xBF80_0000, 0x007F_FFFF,
        ]),
    ]
}

fn f64_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => any::<u64>(),
        2 => 0x3FE0_0000_0000_0000u64..0x4010_0000_0000_0000,
        1 => 0u64..0x0020_0000_0000_0000,
        1 => prop::sample::select(vec![
            0u64, 1 << 63, 0x7FF0_0000_0000_0000, 0xFFF0_0000_0000_0000, 0x7FF8_0000_0000_0000,
            0x7FF0_0000_0000_0001, 0x7FEF_FFFF_FFFF_FFFF, 1, 0x3FF0_0000_0000_0000, 0x0010_0000_0000_0000,
        ]),
    ]
}

fn half_bits() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => any::<u16>().prop_map(|x| x as u64),
        1 => prop::sample::select(vec![0u64, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x3C00, 0x7BFF, 0x7F80, 0x0080]),
    ]
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop::sample::select(Rounding::ALL.to_vec())
}

#[derive(Clone, Copy, Debug)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
}

fn bin() -> impl Strategy<Value = Bin> {
    prop::sample::select(vec![Bin::Add, Bin::Sub, Bin::Mul, Bin::Div])
}

fn ours(ty: FloatTy, op: Bin, md: FloatMode, a: u64, b: u64) -> u64 {
    match op {
        Bin::Add => float::add(ty, md, a, b),
        Bin::Sub => float::sub(ty, md, a, b),
        Bin::Mul => float::mul(ty, md, a, b),
        Bin::Div => float::div(ty, md, a, b),
    }
}

fn ap_bin<F: Float>(op: Bin, a: F, b: F, r: Round) -> F {
    match op {
        Bin::Add => a.add_r(b, r).value,
        Bin::Sub => a.sub_r(b, r).value,
        Bin::Mul => a.mul_r(b, r).value,
        Bin::Div => a.div_r(b, r).value,
    }
}

/// Expected bits of an apfloat result under PTX's canonical-NaN rule for narrow types.
fn expect_narrow<F: Float>(ty: FloatTy, r: F) -> u64 {
    if r.is_nan() {
        ty.canonical_nan()
    } else {
        r.to_bits() as u64
    }
}

// ------------------------------------------------------------------------------------------------
// Directed rounding against apfloat (an independent soft-float) for f32, f16 and bf16
// ------------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, max_global_rejects: 1_000_000, ..ProptestConfig::default() })]

    #[test]
    fn f32_binops_match_apfloat(op in bin(), r in rounding(), a in f32_bits(), b in f32_bits()) {
        let want = expect_narrow(F32, ap_bin(op, Single::from_bits(a as u128), Single::from_bits(b as u128), ap_rnd(r)));
        prop_assert_eq!(ours(F32, op, m(r), a, b), want, "{:?} {:?} {:#x} {:#x}", op, r, a, b);
    }

    #[test]
    fn f32_fma_matches_apfloat(r in rounding(), a in f32_bits(), b in f32_bits(), c in f32_bits()) {
        let (x, y, z) = (Single::from_bits(a as u128), Single::from_bits(b as u128), Single::from_bits(c as u128));
        let want = expect_narrow(F32, x.mul_add_r(y, z, ap_rnd(r)).value);
        prop_assert_eq!(float::fma(F32, m(r), a, b, c), want, "{:?} {:#x} {:#x} {:#x}", r, a, b, c);
    }

    #[test]
    fn f32_fma_cancellation_matches_apfloat(r in rounding(), a in f32_bits(), b in f32_bits(), d in -3i32..3) {
        // c ≈ -(a·b) so the sum cancels heavily.
        let p = f32b(a) * f32b(b);
        let c = b32(-p).wrapping_add(d as i64 as u64) & 0xFFFF_FFFF;
        let (x, y, z) = (Single::from_bits(a as u128), Single::from_bits(b as u128), Single::from_bits(c as u128));
        let want = expect_narrow(F32, x.mul_add_r(y, z, ap_rnd(r)).value);
        prop_assert_eq!(float::fma(F32, m(r), a, b, c), want);
    }

    #[test]
    fn f16_and_bf16_ops_match_apfloat(op in bin(), r in rounding(), a in half_bits(), b in half_bits(), c in half_bits()) {
        let rr = ap_rnd(r);
        let (x, y, z) = (Half::from_bits(a as u128), Half::from_bits(b as u128), Half::from_bits(c as u128));
        prop_assert_eq!(ours(F16, op, m(r), a, b), expect_narrow(F16, ap_bin(op, x, y, rr)));
        prop_assert_eq!(float::fma(F16, m(r), a, b, c), expect_narrow(F16, x.mul_add_r(y, z, rr).value));
        let (x, y, z) = (BFloat::from_bits(a as u128), BFloat::from_bits(b as u128), BFloat::from_bits(c as u128));
        prop_assert_eq!(ours(BF16, op, m(r), a, b), expect_narrow(BF16, ap_bin(op, x, y, rr)));
        prop_assert_eq!(float::fma(BF16, m(r), a, b, c), expect_narrow(BF16, x.mul_add_r(y, z, rr).value));
    }
}

// ------------------------------------------------------------------------------------------------
// Directed rounding against the exact value (rational arithmetic in binary128, checked exact)
// ------------------------------------------------------------------------------------------------

fn q32(x: u64) -> Quad {
    let s = Single::from_bits(x as u128);
    let q: Quad = s.convert(&mut false).value;
    q
}

fn q64(x: u64) -> Quad {
    let d = Double::from_bits(x as u128);
    let q: Quad = d.convert(&mut false).value;
    q
}

/// Checks the four rounding results of one exact value: `rm ≤ exact ≤ rp`, `rp - rm ≤ 1 ulp` (equal iff
/// exact), `rz` is the one nearer zero, and `rn` is `host`. `cmp(x)` orders a finite result against the exact
/// value; `next_up` steps a bit pattern one ulp up.
fn check_bracket(
    res: [u64; 4],
    host: u64,
    cmp: impl Fn(u64) -> Ordering,
    next_up: impl Fn(u64) -> u64,
    exact_neg: bool,
) {
    let [rn, rz, rm, rp] = res;
    assert_eq!(rn, host, "rn must equal the host result");
    assert_ne!(cmp(rm), Ordering::Greater, "rm {rm:#x} above exact");
    assert_ne!(cmp(rp), Ordering::Less, "rp {rp:#x} below exact");
    if cmp(rm) == Ordering::Equal {
        assert_eq!(rm, rp, "exact result must not depend on the mode");
    } else {
        assert_eq!(next_up(rm), rp, "rm {rm:#x} and rp {rp:#x} must be adjacent");
    }
    assert_eq!(rz, if exact_neg { rp } else { rm }, "rz must be the result nearer zero");
    assert!(cmp(rn) != Ordering::Equal || rn == rm);
}

fn next_up32(x: u64) -> u64 {
    let f = f32b(x);
    if f == 0.0 {
        return 1;
    }
    if f.is_sign_negative() {
        x - 1
    } else {
        x + 1
    }
}

fn next_up64(x: u64) -> u64 {
    let f = f64b(x);
    if f == 0.0 {
        return 1;
    }
    if f.is_sign_negative() {
        x - 1
    } else {
        x + 1
    }
}

fn all_modes(f: impl Fn(Rounding) -> u64) -> [u64; 4] {
    [f(Rounding::Rn), f(Rounding::Rz), f(Rounding::Rm), f(Rounding::Rp)]
}

/// Finite, nonzero inputs in a moderate exponent window so the exact sum usually fits binary128.
fn f32_finite() -> impl Strategy<Value = u64> {
    (any::<bool>(), 60u32..190, any::<u32>())
        .prop_map(|(s, e, f)| ((s as u64) << 31) | ((e as u64) << 23) | (f & 0x7F_FFFF) as u64)
}

fn f64_finite() -> impl Strategy<Value = u64> {
    (any::<bool>(), 900u64..1150, any::<u64>())
        .prop_map(|(s, e, f)| ((s as u64) << 63) | (e << 52) | (f & ((1 << 52) - 1)))
}

/// A value within a factor `2^k` of `p`, with the sign and low fraction bits taken from `noise`.
fn near32(p: f32, noise: u64, k: i32) -> u64 {
    let v = (p.abs() * 2f32.powi(k)).to_bits() as u64;
    let v = (v ^ (noise & 0x3F_FFFF)) | (noise & 0x8000_0000);
    if f32b(v).is_finite() {
        v
    } else {
        noise
    }
}

fn near64(p: f64, noise: u64, k: i32) -> u64 {
    let v = (p.abs() * 2f64.powi(k)).to_bits();
    let v = (v ^ (noise & 0x7_FFFF_FFFF_FFFF)) | (noise & (1 << 63));
    if f64b(v).is_finite() {
        v
    } else {
        noise
    }
}

fn is_finite_result32(x: u64) -> bool {
    f32b(x).is_finite() && f32b(x) != 0.0
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, max_global_rejects: 1_000_000, max_local_rejects: 1_000_000, ..ProptestConfig::default() })]

    #[test]
    fn f32_add_mul_fma_bracket_exact(a in f32_finite(), b in f32_finite(), c in f32_finite(), which in 0u8..4, k in -30i32..30) {
        // For fma, put the addend near the product so the exact sum fits binary128 and often cancels.
        let c = if which == 3 { near32(f32b(a) * f32b(b), c, k) } else { c };
        let (qa, qb, qc) = (q32(a), q32(b), q32(c));
        let (exact, st) = match which {
            0 => { let r = qa.add_r(qb, Round::NearestTiesToEven); (r.value, r.status) }
            1 => { let r = qa.sub_r(qb, Round::NearestTiesToEven); (r.value, r.status) }
            2 => { let r = qa.mul_r(qb, Round::NearestTiesToEven); (r.value, r.status) }
            _ => { let r = qa.mul_add_r(qb, qc, Round::NearestTiesToEven); (r.value, r.status) }
        };
        prop_assume!(st == Status::OK && !exact.is_zero());
        let res = all_modes(|r| match which {
            0 => float::add(F32, m(r), a, b),
            1 => float::sub(F32, m(r), a, b),
            2 => float::mul(F32, m(r), a, b),
            _ => float::fma(F32, m(r), a, b, c),
        });
        prop_assume!(res.iter().all(|&x| is_finite_result32(x)));
        let host = b32(match which {
            0 => f32b(a) + f32b(b),
            1 => f32b(a) - f32b(b),
            2 => f32b(a) * f32b(b),
            _ => f32b(a).mul_add(f32b(b), f32b(c)),
        });
        check_bracket(res, host, |x| q32(x).partial_cmp(&exact).unwrap(), next_up32, exact.is_negative());
    }

    #[test]
    fn f32_div_sqrt_bracket_exact(a in f32_finite(), b in f32_finite()) {
        // Division: compare x·b with a exactly (x·b is exact in binary128).
        let res = all_modes(|r| float::div(F32, m(r), a, b));
        if res.iter().all(|&x| is_finite_result32(x)) {
            let bneg = f32b(b) < 0.0;
            let cmp = |x: u64| {
                let o = q32(x).mul_r(q32(b), Round::NearestTiesToEven).value.partial_cmp(&q32(a)).unwrap();
                if bneg { o.reverse() } else { o }
            };
            check_bracket(res, b32(f32b(a) / f32b(b)), cmp, next_up32, (f32b(a) < 0.0) != bneg);
        }
        // Square root of |a|.
        let pa = a & 0x7FFF_FFFF;
        let res = all_modes(|r| float::sqrt(F32, m(r), pa));
        let cmp = |x: u64| q32(x).mul_r(q32(x), Round::NearestTiesToEven).value.partial_cmp(&q32(pa)).unwrap();
        check_bracket(res, b32(f32b(pa).sqrt()), cmp, next_up32, false);
    }

    #[test]
    fn f64_bracket_exact(a in f64_finite(), b in f64_finite(), c in f64_finite(), which in 0u8..6, k in -30i32..30) {
        let c = if which == 3 { near64(f64b(a) * f64b(b), c, k) } else { c };
        let (qa, qb, qc) = (q64(a), q64(b), q64(c));
        let host;
        let res;
        let exact_neg;
        let cmp: Box<dyn Fn(u64) -> Ordering>;
        match which {
            0..=3 => {
                let r = match which {
                    0 => qa.add_r(qb, Round::NearestTiesToEven),
                    1 => qa.sub_r(qb, Round::NearestTiesToEven),
                    2 => qa.mul_r(qb, Round::NearestTiesToEven),
                    _ => qa.mul_add_r(qb, qc, Round::NearestTiesToEven),
                };
                prop_assume!(r.status == Status::OK && !r.value.is_zero());
                let exact = r.value;
                res = all_modes(|rr| match which {
                    0 => float::add(F64, m(rr), a, b),
                    1 => float::sub(F64, m(rr), a, b),
                    2 => float::mul(F64, m(rr), a, b),
                    _ => float::fma(F64, m(rr), a, b, c),
                });
                host = b64(match which {
                    0 => f64b(a) + f64b(b),
                    1 => f64b(a) - f64b(b),
                    2 => f64b(a) * f64b(b),
                    _ => f64b(a).mul_add(f64b(b), f64b(c)),
                });
                exact_neg = exact.is_negative();
                cmp = Box::new(move |x| q64(x).partial_cmp(&exact).unwrap());
            }
            4 => {
                res = all_modes(|rr| float::div(F64, m(rr), a, b));
                host = b64(f64b(a) / f64b(b));
                let bneg = f64b(b) < 0.0;
                exact_neg = (f64b(a) < 0.0) != bneg;
                cmp = Box::new(move |x| {
                    let o = q64(x).mul_r(qb, Round::NearestTiesToEven).value.partial_cmp(&qa).unwrap();
                    if bneg { o.reverse() } else { o }
                });
            }
            _ => {
                let pa = a & !(1u64 << 63);
                let qpa = q64(pa);
                res = all_modes(|rr| float::sqrt(F64, m(rr), pa));
                host = b64(f64b(pa).sqrt());
                exact_neg = false;
                cmp = Box::new(move |x| q64(x).mul_r(q64(x), Round::NearestTiesToEven).value.partial_cmp(&qpa).unwrap());
            }
        }
        prop_assume!(res.iter().all(|&x| f64b(x).is_finite() && f64b(x) != 0.0));
        check_bracket(res, host, cmp, next_up64, exact_neg);
    }

    #[test]
    fn f64_sqrt_directed_on_subnormals(f in 1u64..(1 << 52)) {
        let qa = q64(f);
        let res = all_modes(|rr| float::sqrt(F64, m(rr), f));
        let cmp = |x: u64| q64(x).mul_r(q64(x), Round::NearestTiesToEven).value.partial_cmp(&qa).unwrap();
        check_bracket(res, b64(f64b(f).sqrt()), cmp, next_up64, false);
    }

    #[test]
    fn rn_is_host_arithmetic(a in f32_bits(), b in f32_bits(), c in f32_bits()) {
        let canon = |x: f32| if x.is_nan() { QNAN32 } else { b32(x) };
        let (x, y, z) = (f32b(a), f32b(b), f32b(c));
        prop_assert_eq!(float::add(F32, FloatMode::RN, a, b), canon(x + y));
        prop_assert_eq!(float::sub(F32, FloatMode::RN, a, b), canon(x - y));
        prop_assert_eq!(float::mul(F32, FloatMode::RN, a, b), canon(x * y));
        prop_assert_eq!(float::div(F32, FloatMode::RN, a, b), canon(x / y));
        prop_assert_eq!(float::fma(F32, FloatMode::RN, a, b, c), canon(x.mul_add(y, z)));
        prop_assert_eq!(float::sqrt(F32, FloatMode::RN, a), canon(x.sqrt()));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, max_global_rejects: 1_000_000, max_local_rejects: 1_000_000, ..ProptestConfig::default() })]

    #[test]
    fn f64_ops_match_apfloat_with_payload_rule(op in bin(), r in rounding(), a in f64_bits(), b in f64_bits(), c in f64_bits()) {
        let t = F64;
        let quiet = |x: u64| x | (1 << 51);
        let first_nan = |xs: &[u64]| xs.iter().copied().find(|&x| t.is_nan(x)).map(quiet);
        let (x, y, z) = (Double::from_bits(a as u128), Double::from_bits(b as u128), Double::from_bits(c as u128));
        let canon = |v: Double| if v.is_nan() { QNAN64 } else { v.to_bits() as u64 };
        let want = first_nan(&[a, b]).unwrap_or_else(|| canon(ap_bin(op, x, y, ap_rnd(r))));
        prop_assert_eq!(ours(F64, op, m(r), a, b), want);
        let want = first_nan(&[a, b, c]).unwrap_or_else(|| canon(x.mul_add_r(y, z, ap_rnd(r)).value));
        prop_assert_eq!(float::fma(F64, m(r), a, b, c), want);
    }
}

#[test]
fn directed_rounding_known_values() {
    let one = b32(1.0);
    let third = |r| float::div(F32, m(r), one, b32(3.0));
    assert_eq!(third(Rounding::Rn), 0x3EAA_AAAB);
    assert_eq!(third(Rounding::Rz), 0x3EAA_AAAA);
    assert_eq!(third(Rounding::Rm), 0x3EAA_AAAA);
    assert_eq!(third(Rounding::Rp), 0x3EAA_AAAB);
    let mthird = |r| float::div(F32, m(r), b32(-1.0), b32(3.0));
    assert_eq!(mthird(Rounding::Rz), 0xBEAA_AAAA);
    assert_eq!(mthird(Rounding::Rm), 0xBEAA_AAAB);
    assert_eq!(mthird(Rounding::Rp), 0xBEAA_AAAA);
    // 1 + 2^-30: rp bumps, the others do not.
    let tiny = b32(2f32.powi(-30));
    assert_eq!(float::add(F32, m(Rounding::Rp), one, tiny), 0x3F80_0001);
    assert_eq!(float::add(F32, m(Rounding::Rz), one, tiny), one);
    assert_eq!(float::add(F32, m(Rounding::Rm), b32(-1.0), b32(-(2f32.powi(-30)))), 0xBF80_0001);
    // Overflow: rz/rm of a positive overflow is MAX, rn/rp is +Inf.
    let big = b32(f32::MAX);
    assert_eq!(float::add(F32, m(Rounding::Rz), big, big), 0x7F7F_FFFF);
    assert_eq!(float::add(F32, m(Rounding::Rm), big, big), 0x7F7F_FFFF);
    assert_eq!(float::add(F32, m(Rounding::Rp), big, big), 0x7F80_0000);
    assert_eq!(float::add(F32, m(Rounding::Rn), big, big), 0x7F80_0000);
    assert_eq!(float::mul(F32, m(Rounding::Rp), b32(-f32::MAX), b32(2.0)), 0xFF7F_FFFF);
    // Underflow: the smallest subnormal squared.
    let min = 1u64;
    assert_eq!(float::mul(F32, m(Rounding::Rz), min, min), 0);
    assert_eq!(float::mul(F32, m(Rounding::Rp), min, min), 1);
    assert_eq!(float::mul(F32, m(Rounding::Rm), min | 0x8000_0000, min), 0x8000_0001);
    assert_eq!(float::mul(F32, m(Rounding::Rn), min | 0x8000_0000, min), 0x8000_0000);
    // f64 sqrt(2) in all modes.
    let two = b64(2.0);
    assert_eq!(float::sqrt(F64, m(Rounding::Rn), two), b64(2f64.sqrt()));
    assert_eq!(float::sqrt(F64, m(Rounding::Rz), two), 0x3FF6_A09E_667F_3BCC);
    assert_eq!(float::sqrt(F64, m(Rounding::Rp), two), 0x3FF6_A09E_667F_3BCD);
    assert_eq!(float::div(F64, m(Rounding::Rz), b64(1.0), b64(3.0)), 0x3FD5_5555_5555_5555);
    assert_eq!(float::div(F64, m(Rounding::Rp), b64(1.0), b64(3.0)), 0x3FD5_5555_5555_5556);
}

#[test]
fn exact_zero_sums_follow_ieee_signs() {
    for ty in [F32, F64, F16, BF16] {
        let one = ty.one();
        let mone = one | ty.sign_bit();
        let nz = ty.sign_bit();
        for r in Rounding::ALL {
            let expect = if r == Rounding::Rm { nz } else { 0 };
            assert_eq!(float::add(ty, m(r), one, mone), expect, "{ty:?} {r:?} 1 + -1");
            assert_eq!(float::sub(ty, m(r), one, one), expect, "{ty:?} {r:?} 1 - 1");
            assert_eq!(float::fma(ty, m(r), one, one, mone), expect, "{ty:?} {r:?} 1·1 - 1");
            assert_eq!(float::add(ty, m(r), 0, nz), expect, "{ty:?} {r:?} +0 + -0");
            assert_eq!(float::add(ty, m(r), nz, nz), nz, "{ty:?} {r:?} -0 + -0");
            assert_eq!(float::add(ty, m(r), 0, 0), 0, "{ty:?} {r:?} +0 + +0");
            assert_eq!(float::mul(ty, m(r), nz, one), nz);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// NaN, infinities, ftz, sat
// ------------------------------------------------------------------------------------------------

#[test]
fn f32_nan_results_are_canonical() {
    let payload = 0x7FC0_1234u64;
    let snan = 0xFF80_0001u64;
    for r in Rounding::ALL {
        assert_eq!(float::add(F32, m(r), payload, b32(1.0)), QNAN32);
        assert_eq!(float::mul(F32, m(r), b32(2.0), snan), QNAN32);
        assert_eq!(float::add(F32, m(r), b32(f32::INFINITY), b32(f32::NEG_INFINITY)), QNAN32);
        assert_eq!(float::mul(F32, m(r), 0, b32(f32::INFINITY)), QNAN32);
        assert_eq!(float::div(F32, m(r), 0, 0x8000_0000), QNAN32);
        assert_eq!(float::sqrt(F32, m(r), b32(-1.0)), QNAN32);
        assert_eq!(float::fma(F32, m(r), b32(1.0), b32(1.0), payload), QNAN32);
        assert_eq!(float::add(F16, m(r), 0x7E01, 0x3C00), 0x7FFF);
        assert_eq!(float::add(BF16, m(r), 0xFFC1, 0x3F80), 0x7FFF);
    }
    assert_eq!(float::abs(F32, false, 0xFFC0_0001), QNAN32);
    assert_eq!(float::neg(F32, false, 0x7FC0_0001), QNAN32);
    assert_eq!(float::abs(F16, false, 0xFE01), 0x7FFF);
}

#[test]
fn f64_nan_payloads_propagate() {
    let pa = 0x7FF8_0000_0000_0ABCu64;
    let pb = 0xFFF0_0000_0000_0DEFu64; // signalling, negative
    let one = b64(1.0);
    for r in Rounding::ALL {
        assert_eq!(float::add(F64, m(r), pa, one), pa);
        assert_eq!(float::add(F64, m(r), one, pb), pb | (1 << 51)); // quieted
        assert_eq!(float::mul(F64, m(r), pb, pa), pb | (1 << 51)); // first NaN operand wins
        assert_eq!(float::fma(F64, m(r), one, one, pa), pa);
        assert_eq!(float::sqrt(F64, m(r), pa), pa);
        assert_eq!(float::add(F64, m(r), b64(f64::INFINITY), b64(f64::NEG_INFINITY)), QNAN64);
        assert_eq!(float::div(F64, m(r), 0, 0), QNAN64);
        assert_eq!(float::sqrt(F64, m(r), b64(-2.0)), QNAN64);
        assert_eq!(float::fma(F64, m(r), 0, b64(f64::INFINITY), one), QNAN64);
    }
    assert_eq!(float::abs(F64, false, pb), pb); // passed through unchanged
    assert_eq!(float::neg(F64, false, pa), pa);
}

#[test]
fn infinities_and_signed_zeros() {
    for r in Rounding::ALL {
        assert_eq!(float::div(F32, m(r), b32(1.0), 0), 0x7F80_0000);
        assert_eq!(float::div(F32, m(r), b32(1.0), 0x8000_0000), 0xFF80_0000);
        assert_eq!(float::div(F32, m(r), b32(-3.0), b32(f32::INFINITY)), 0x8000_0000);
        assert_eq!(float::sqrt(F32, m(r), 0x8000_0000), 0x8000_0000);
        assert_eq!(float::sqrt(F32, m(r), 0x7F80_0000), 0x7F80_0000);
        assert_eq!(float::rcp(F32, m(r), 0x8000_0000), 0xFF80_0000);
        assert_eq!(float::rcp(F64, m(r), b64(f64::NEG_INFINITY)), 1 << 63);
        assert_eq!(float::mul(F64, m(r), b64(-0.0), b64(5.0)), 1 << 63);
        assert_eq!(float::add(F16, m(r), 0x7C00, 0x3C00), 0x7C00);
    }
}

#[test]
fn ftz_flushes_inputs_and_results() {
    let ftz = FloatMode::RN.with_ftz(true);
    let sub = 0x0000_0010u64; // positive subnormal
    let nsub = 0x8000_0010u64;
    assert_eq!(float::add(F32, ftz, sub, sub), 0);
    assert_eq!(float::add(F32, FloatMode::RN, sub, sub), 0x20);
    assert_eq!(float::mul(F32, ftz, nsub, b32(1.0)), 0x8000_0000);
    assert_eq!(float::mul(F32, FloatMode::RN, nsub, b32(1.0)), nsub);
    // A normal result is kept, a subnormal result is flushed (sign preserved).
    let small = b32(2f32.powi(-70));
    assert_eq!(float::mul(F32, FloatMode::RN, small, small), b32(2f32.powi(-140)));
    assert_eq!(float::mul(F32, ftz, small, small), 0);
    assert_eq!(float::mul(F32, ftz.with_sat(false), small | 0x8000_0000, small), 0x8000_0000);
    assert_eq!(float::mul(F32, FloatMode::new(Rounding::Rp).with_ftz(true), small, small), 0);
    // f64 ignores ftz.
    assert_eq!(float::add(F64, ftz, 1, 1), 2);
    // f16 honours it.
    assert_eq!(float::add(F16, ftz, 0x0001, 0x0001), 0);
    assert_eq!(float::add(F16, FloatMode::RN, 0x0001, 0x0001), 0x0002);
    // min/max/abs/neg with ftz.
    let mm = MinMaxMode { ftz: true, ..Default::default() };
    assert_eq!(float::max(F32, mm, nsub, 0x8000_0000), 0x8000_0000);
    assert_eq!(float::abs(F32, true, nsub), 0);
    assert_eq!(float::neg(F32, true, sub), 0x8000_0000);
    assert_eq!(float::abs(F32, false, nsub), sub);
}

#[test]
fn sat_clamps_to_unit_interval() {
    let sat = FloatMode::RN.with_sat(true);
    assert_eq!(float::add(F32, sat, b32(0.75), b32(0.75)), b32(1.0));
    assert_eq!(float::add(F32, sat, b32(0.25), b32(0.25)), b32(0.5));
    assert_eq!(float::sub(F32, sat, b32(0.25), b32(0.75)), 0);
    assert_eq!(float::mul(F32, sat, b32(-0.0), b32(1.0)), 0); // -0 → +0
    assert_eq!(float::add(F32, sat, b32(f32::INFINITY), b32(f32::NEG_INFINITY)), 0); // NaN → +0
    assert_eq!(float::fma(F32, sat.with_ftz(true), b32(2.0), b32(2.0), b32(1.0)), b32(1.0));
    assert_eq!(float::add(F16, sat, 0x3C00, 0x3C00), 0x3C00);
    assert_eq!(float::add(F16, sat, 0xBC00, 0x3800), 0);
    assert_eq!(float::mul(F32, FloatMode::new(Rounding::Rp).with_sat(true), b32(1.0), b32(1.5)), b32(1.0));
}

// ------------------------------------------------------------------------------------------------
// min / max / copysign / testp
// ------------------------------------------------------------------------------------------------

#[test]
fn min_max_nan_and_zero_rules() {
    let d = MinMaxMode::default();
    let nan = MinMaxMode { nan: true, ..d };
    let one = b32(1.0);
    let q = 0x7FC0_0123u64;
    assert_eq!(float::min(F32, d, q, one), one);
    assert_eq!(float::min(F32, d, one, q), one);
    assert_eq!(float::max(F32, d, q, one), one);
    assert_eq!(float::min(F32, d, q, q), QNAN32);
    assert_eq!(float::min(F32, nan, q, one), QNAN32);
    assert_eq!(float::max(F32, nan, one, q), QNAN32);
    assert_eq!(float::max(F32, nan, one, b32(2.0)), b32(2.0));
    // -0 < +0 in both argument orders.
    assert_eq!(float::min(F32, d, 0, 0x8000_0000), 0x8000_0000);
    assert_eq!(float::min(F32, d, 0x8000_0000, 0), 0x8000_0000);
    assert_eq!(float::max(F32, d, 0, 0x8000_0000), 0);
    assert_eq!(float::max(F32, d, 0x8000_0000, 0), 0);
    assert_eq!(float::min(F64, d, 0, 1 << 63), 1 << 63);
    assert_eq!(float::max(F16, d, 0x8000, 0), 0);
    assert_eq!(float::min(F32, d, b32(f32::NEG_INFINITY), b32(-1e30)), b32(f32::NEG_INFINITY));
    // f64: two NaNs give the first, quieted.
    assert_eq!(float::max(F64, d, 0x7FF0_0000_0000_0001, 0x7FF8_0000_0000_0002), 0x7FF8_0000_0000_0001);
    // .xorsign.abs: magnitude min/max, sign = xor of the original signs.
    let xa = MinMaxMode { abs: true, xorsign: true, ..d };
    assert_eq!(float::min(F32, xa, b32(-3.0), b32(2.0)), b32(-2.0));
    assert_eq!(float::max(F32, xa, b32(-3.0), b32(-2.0)), b32(3.0));
    assert_eq!(float::max(F32, MinMaxMode { abs: true, ..d }, b32(-3.0), b32(2.0)), b32(3.0));
    assert_eq!(float::min(F32, xa, q, q), QNAN32); // NaN result ignores xorsign/abs
    assert_eq!(float::max3(F32, d, b32(1.0), q, b32(-5.0)), b32(1.0));
    assert_eq!(float::min3(F32, nan, b32(1.0), b32(0.5), q), QNAN32);
    assert_eq!(float::min3(F32, d, b32(1.0), b32(0.5), b32(0.75)), b32(0.5));
}

proptest! {
    #[test]
    fn min_max_agree_with_ieee_minimum_maximum_on_numbers(a in f32_bits(), b in f32_bits()) {
        let (x, y) = (f32b(a), f32b(b));
        prop_assume!(!x.is_nan() && !y.is_nan());
        let d = MinMaxMode::default();
        let lo = float::min(F32, d, a, b);
        let hi = float::max(F32, d, a, b);
        prop_assert!(f32b(lo) <= x && f32b(lo) <= y);
        prop_assert!(f32b(hi) >= x && f32b(hi) >= y);
        prop_assert!(lo == a || lo == b);
        prop_assert!(hi == a || hi == b);
        // The results are the two operands, in order.
        prop_assert_eq!([lo, hi].iter().filter(|&&v| v == a).count() + [lo, hi].iter().filter(|&&v| v == b).count() >= 2, true);
    }
}

#[test]
fn copysign_and_testp() {
    assert_eq!(float::copysign(F32, b32(-1.0), b32(2.5)), b32(-2.5));
    assert_eq!(float::copysign(F32, b32(1.0), b32(-2.5)), b32(2.5));
    assert_eq!(float::copysign(F64, 1 << 63, 0x7FF8_0000_0000_0001), 0xFFF8_0000_0000_0001);
    let cases: [(u64, [bool; 6]); 8] = [
        // finite, infinite, number, notanumber, normal, subnormal
        (0, [true, false, true, false, true, false]),
        (0x8000_0000, [true, false, true, false, true, false]),
        (b32(1.5), [true, false, true, false, true, false]),
        (1, [true, false, true, false, false, true]),
        (0x8000_0001, [true, false, true, false, false, true]),
        (0x7F80_0000, [false, true, true, false, false, false]),
        (0xFF80_0000, [false, true, true, false, false, false]),
        (0x7FC0_0000, [false, false, false, true, false, false]),
    ];
    let ops =
        [TestpOp::Finite, TestpOp::Infinite, TestpOp::Number, TestpOp::NotANumber, TestpOp::Normal, TestpOp::Subnormal];
    for (x, want) in cases {
        for (op, w) in ops.iter().zip(want) {
            assert_eq!(float::testp(*op, F32, x), w, "{op:?} {x:#x}");
        }
    }
    assert!(float::testp(TestpOp::Subnormal, F64, 1));
    assert!(float::testp(TestpOp::Normal, F64, b64(-1e300)));
    assert!(float::testp(TestpOp::NotANumber, F64, 0xFFF0_0000_0000_0001));
}

// ------------------------------------------------------------------------------------------------
// Approximate instructions
// ------------------------------------------------------------------------------------------------

fn ulp_diff32(a: u64, b: u64) -> u64 {
    let key = |x: u64| -> i64 {
        let x = x as u32;
        if x >> 31 == 1 {
            -((x & 0x7FFF_FFFF) as i64)
        } else {
            x as i64
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

#[test]
fn approx_special_value_tables() {
    let (ninf, nz, pz, pinf, nan) = (0xFF80_0000u64, 0x8000_0000u64, 0u64, 0x7F80_0000u64, 0x7FC0_0000u64);
    let one = b32(1.0);
    // rcp.approx: -Inf→-0, -0→-Inf, +0→+Inf, +Inf→+0, NaN→NaN
    for (i, o) in [(ninf, nz), (nz, ninf), (pz, pinf), (pinf, pz), (nan, QNAN32)] {
        assert_eq!(float::rcp_approx_f32(false, i), o, "rcp {i:#x}");
    }
    // sqrt.approx: -Inf→NaN, -normal→NaN, -0→-0, +0→+0, +Inf→+Inf
    for (i, o) in [(ninf, QNAN32), (b32(-2.0), QNAN32), (nz, nz), (pz, pz), (pinf, pinf), (nan, QNAN32)] {
        assert_eq!(float::sqrt_approx_f32(false, i), o, "sqrt {i:#x}");
    }
    // rsqrt.approx: -Inf→NaN, -normal→NaN, -0→-Inf, +0→+Inf, +Inf→+0
    for (i, o) in [(ninf, QNAN32), (b32(-2.0), QNAN32), (nz, ninf), (pz, pinf), (pinf, pz), (nan, QNAN32)] {
        assert_eq!(float::rsqrt_approx_f32(false, i), o, "rsqrt {i:#x}");
    }
    // ex2: -Inf→+0, ±0→1, +Inf→+Inf
    for (i, o) in [(ninf, pz), (nz, one), (pz, one), (pinf, pinf), (nan, QNAN32)] {
        assert_eq!(float::ex2_approx_f32(false, i), o, "ex2 {i:#x}");
    }
    // lg2: -Inf→NaN, -normal→NaN, ±0→-Inf, +Inf→+Inf
    for (i, o) in [(ninf, QNAN32), (b32(-1.0), QNAN32), (nz, ninf), (pz, ninf), (pinf, pinf), (nan, QNAN32)] {
        assert_eq!(float::lg2_approx_f32(false, i), o, "lg2 {i:#x}");
    }
    // sin: ±Inf→NaN, ±0→±0; cos: ±Inf→NaN, ±0→1
    for (i, s, c) in
        [(ninf, QNAN32, QNAN32), (nz, nz, one), (pz, pz, one), (pinf, QNAN32, QNAN32), (nan, QNAN32, QNAN32)]
    {
        assert_eq!(float::sin_approx_f32(false, i), s, "sin {i:#x}");
        assert_eq!(float::cos_approx_f32(false, i), c, "cos {i:#x}");
    }
    // tanh: -Inf→-1, ±0→±0, +Inf→1, subnormals pass through
    for (i, o) in [(ninf, b32(-1.0)), (nz, nz), (pz, pz), (pinf, one), (nan, QNAN32), (0x0000_0123, 0x0000_0123)] {
        assert_eq!(float::tanh_approx_f32(i), o, "tanh {i:#x}");
    }
    // ftz variants flush subnormal inputs and results.
    assert_eq!(float::rcp_approx_f32(true, 0x0000_0001), pinf);
    assert_eq!(float::rcp_approx_f32(false, 0x0000_0001), pinf); // 2^149 overflows anyway
    assert_eq!(float::rcp_approx_f32(true, b32(2f32.powi(127))), 0);
    assert_eq!(float::rcp_approx_f32(false, b32(2f32.powi(127))), b32(2f32.powi(-127)));
    assert_eq!(float::ex2_approx_f32(true, b32(-130.0)), 0);
    assert_eq!(float::ex2_approx_f32(false, b32(-130.0)), b32(2f32.powi(-130)));
    assert_eq!(float::lg2_approx_f32(true, 0x0000_0100), ninf);
    assert_eq!(float::sin_approx_f32(true, 0x8000_0100), nz);
}

#[test]
fn approx_f64_hi_word_instructions() {
    let canon = 0x7FFF_FFFF_0000_0000u64;
    let inf = b64(f64::INFINITY);
    let ninf = b64(f64::NEG_INFINITY);
    let cases_rcp = [
        (ninf, 1u64 << 63),
        (0x8000_0000_0000_0001, ninf), // -subnormal
        (1u64 << 63, ninf),
        (0, inf),
        (0x000F_FFFF_FFFF_FFFF, inf), // +subnormal
        (inf, 0),
        (0x7FF8_0000_0000_0001, canon),
    ];
    for (i, o) in cases_rcp {
        assert_eq!(float::rcp_approx_ftz_f64(i), o, "rcp64 {i:#x}");
    }
    let cases_rsqrt = [
        (ninf, canon),
        (0x8000_0000_0000_0001, ninf),
        (1u64 << 63, ninf),
        (0, inf),
        (1, inf),
        (inf, 0),
        (b64(-4.0), canon),
    ];
    for (i, o) in cases_rsqrt {
        assert_eq!(float::rsqrt_approx_ftz_f64(i), o, "rsqrt64 {i:#x}");
    }
    // Results have a zero low word and are close to the true value; the low input word is ignored.
    for x in [3.0f64, 0.1, 1e-300, 7e200, -2.5] {
        let r = float::rcp_approx_ftz_f64(b64(x) | 0xFFFF);
        assert_eq!(r & 0xFFFF_FFFF, 0);
        assert!(((f64b(r) - 1.0 / x) / (1.0 / x)).abs() < 2f64.powi(-19), "rcp64 {x}");
        if x > 0.0 {
            let s = float::rsqrt_approx_ftz_f64(b64(x));
            assert_eq!(s & 0xFFFF_FFFF, 0);
            assert!(((f64b(s) - 1.0 / x.sqrt()) * x.sqrt()).abs() < 2f64.powi(-19), "rsqrt64 {x}");
        }
    }
    assert_eq!(float::rsqrt_approx_f64(b64(4.0)), b64(0.5));
    assert_eq!(float::rsqrt_approx_f64(1 << 63), ninf);
    assert_eq!(float::rsqrt_approx_f64(b64(-1.0)), QNAN64);
}

proptest! {
    #[test]
    fn approx_accuracy_within_ptx_bounds(a in f32_bits()) {
        let x = f32b(a);
        prop_assume!(x.is_finite());
        // rcp: ≤ 1 ulp of the host reciprocal
        let r = float::rcp_approx_f32(false, a);
        prop_assert!(ulp_diff32(r, b32(1.0 / x)) <= 1);
        // ex2: ≤ 2 ulp of host exp2
        let e = float::ex2_approx_f32(false, a);
        let he = x.exp2();
        if he.is_finite() && he != 0.0 {
            prop_assert!(ulp_diff32(e, b32(he)) <= 2, "ex2 {} {:#x} {:#x}", x, e, b32(he));
        }
        if x > 0.0 {
            let l = f32b(float::lg2_approx_f32(false, a)) as f64;
            let tl = (x as f64).log2();
            if x > 0.5 && x < 2.0 {
                prop_assert!((l - tl).abs() <= 2f64.powi(-22));
            } else {
                prop_assert!(((l - tl) / tl).abs() <= 2f64.powi(-22));
            }
            let rs = f32b(float::rsqrt_approx_f32(false, a)) as f64;
            prop_assert!(((rs - 1.0 / (x as f64).sqrt()) * (x as f64).sqrt()).abs() <= 2f64.powf(-22.9));
        }
        if x.abs() <= 2.0 * std::f32::consts::PI {
            prop_assert!((f32b(float::sin_approx_f32(false, a)) as f64 - (x as f64).sin()).abs() <= 2f64.powf(-20.5));
            prop_assert!((f32b(float::cos_approx_f32(false, a)) as f64 - (x as f64).cos()).abs() <= 2f64.powf(-20.5));
        }
        let t = f32b(float::tanh_approx_f32(a)) as f64;
        let tt = (x as f64).tanh();
        prop_assert!(tt == 0.0 || ((t - tt) / tt).abs() <= 2f64.powi(-11));
    }
}

#[test]
fn div_approx_and_full() {
    let a = b32(1.0);
    assert_eq!(float::div_full_f32(false, a, b32(3.0)), 0x3EAA_AAAB);
    assert!(ulp_diff32(float::div_approx_f32(false, a, b32(3.0)), 0x3EAA_AAAB) <= 2);
    // 2^126 < |b| < 2^128: finite a gives a signed zero, infinite a gives NaN.
    let big = b32(2f32.powi(127));
    assert_eq!(float::div_approx_f32(false, b32(5.0), big), 0);
    assert_eq!(float::div_approx_f32(false, b32(-5.0), big), 0x8000_0000);
    assert_eq!(float::div_approx_f32(false, b32(f32::INFINITY), big), QNAN32);
    assert_eq!(float::div_approx_f32(false, b32(6.0), b32(2.0)), b32(3.0));
    assert_eq!(float::div_approx_f32(false, b32(1.0), 0), 0x7F80_0000);
}

#[test]
fn half_approx_functions() {
    assert_eq!(float::ex2_approx_half(F16, false, 0x3C00), 0x4000); // 2^1 = 2
    assert_eq!(float::ex2_approx_half(BF16, false, 0xBF80), 0x3F00); // 2^-1 = 0.5
    assert_eq!(float::tanh_approx_half(F16, 0x7C00), 0x3C00);
    assert_eq!(float::tanh_approx_half(BF16, 0xFF80), 0xBF80);
    assert_eq!(float::ex2_approx_half(F16, false, 0x7E00), 0x7FFF);
}

// ------------------------------------------------------------------------------------------------
// Packed x2 forms
// ------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn packed_lanes_equal_scalar_ops(ty in prop::sample::select(vec![F16, BF16]), r in rounding(), a in any::<u32>(), b in any::<u32>(), c in any::<u32>(), ftz: bool) {
        let md = FloatMode::new(r).with_ftz(ftz);
        let (a, b, c) = (a as u64, b as u64, c as u64);
        let lo = |x: u64| x & 0xFFFF;
        let hi = |x: u64| x >> 16;
        let join = |l: u64, h: u64| l | (h << 16);
        prop_assert_eq!(float::add_x2(ty, md, a, b), join(float::add(ty, md, lo(a), lo(b)), float::add(ty, md, hi(a), hi(b))));
        prop_assert_eq!(float::sub_x2(ty, md, a, b), join(float::sub(ty, md, lo(a), lo(b)), float::sub(ty, md, hi(a), hi(b))));
        prop_assert_eq!(float::mul_x2(ty, md, a, b), join(float::mul(ty, md, lo(a), lo(b)), float::mul(ty, md, hi(a), hi(b))));
        prop_assert_eq!(float::fma_x2(ty, md, a, b, c), join(float::fma(ty, md, lo(a), lo(b), lo(c)), float::fma(ty, md, hi(a), hi(b), hi(c))));
        let mm = MinMaxMode { ftz, ..Default::default() };
        prop_assert_eq!(float::min_x2(ty, mm, a, b), join(float::min(ty, mm, lo(a), lo(b)), float::min(ty, mm, hi(a), hi(b))));
        prop_assert_eq!(float::max_x2(ty, mm, a, b), join(float::max(ty, mm, lo(a), lo(b)), float::max(ty, mm, hi(a), hi(b))));
        prop_assert_eq!(float::neg_x2(ty, ftz, a), join(float::neg(ty, ftz, lo(a)), float::neg(ty, ftz, hi(a))));
        prop_assert_eq!(float::abs_x2(ty, ftz, a), join(float::abs(ty, ftz, lo(a)), float::abs(ty, ftz, hi(a))));
    }

    #[test]
    fn f32x2_lanes(a in any::<u64>(), b in any::<u64>()) {
        let lo = float::add(F32, FloatMode::RN, a & 0xFFFF_FFFF, b & 0xFFFF_FFFF);
        let hi = float::add(F32, FloatMode::RN, a >> 32, b >> 32);
        prop_assert_eq!(float::add_x2(F32, FloatMode::RN, a, b), lo | (hi << 32));
    }
}

#[test]
fn relu_and_satfinite() {
    assert_eq!(float::relu(F16, 0xBC00), 0);
    assert_eq!(float::relu(F16, 0x3C00), 0x3C00);
    assert_eq!(float::relu(BF16, 0xFFC1), 0x7FFF);
    assert_eq!(float::relu_x2(F16, 0xBC00_3C00), 0x0000_3C00);
    assert_eq!(float::satfinite(F16, 0xFC00), 0xFBFF);
    assert_eq!(float::satfinite(F32, 0x7F80_0000), 0x7F7F_FFFF);
    assert_eq!(float::satfinite(F32, 0x3F80_0000), 0x3F80_0000);
}

// ------------------------------------------------------------------------------------------------
// Totality: nothing panics and results fit their width
// ------------------------------------------------------------------------------------------------

proptest! {
    #[test]
    fn every_float_function_is_total(ty in prop::sample::select(FloatTy::ALL.to_vec()), r in rounding(), ftz: bool, sat: bool,
                                     a in any::<u64>(), b in any::<u64>(), c in any::<u64>()) {
        let md = FloatMode { rnd: r, ftz, sat };
        let mm = MinMaxMode { ftz, nan: sat, abs: ftz, xorsign: ftz };
        let mask = ty.mask();
        for x in [
            float::add(ty, md, a, b), float::sub(ty, md, a, b), float::mul(ty, md, a, b), float::fma(ty, md, a, b, c),
            float::div(ty, md, a, b), float::rcp(ty, md, a), float::sqrt(ty, md, a), float::abs(ty, ftz, a),
            float::neg(ty, ftz, a), float::min(ty, mm, a, b), float::max(ty, mm, a, b), float::copysign(ty, a, b),
            float::min3(ty, mm, a, b, c), float::relu(ty, a & mask), float::satfinite(ty, a & mask),
        ] {
            prop_assert_eq!(x & !mask, 0);
        }
        if sat {
            let s = float::add(ty, md, a, b);
            prop_assert!(s <= ty.one());
        }
        let m32 = 0xFFFF_FFFFu64;
        for x in [
            float::div_approx_f32(ftz, a, b), float::div_full_f32(ftz, a, b), float::rcp_approx_f32(ftz, a),
            float::sqrt_approx_f32(ftz, a), float::rsqrt_approx_f32(ftz, a), float::ex2_approx_f32(ftz, a),
            float::lg2_approx_f32(ftz, a), float::sin_approx_f32(ftz, a), float::cos_approx_f32(ftz, a),
            float::tanh_approx_f32(a),
        ] {
            prop_assert_eq!(x & !m32, 0);
        }
        let _ = (float::rcp_approx_ftz_f64(a), float::rsqrt_approx_ftz_f64(a), float::rsqrt_approx_f64(a));
    }
}

#[test]
fn half_arithmetic_strided_sweep_matches_apfloat() {
    let rn = Round::NearestTiesToEven;
    for a in (0u64..0x10000).step_by(61) {
        for b in (0u64..0x10000).step_by(509) {
            let (x, y) = (Half::from_bits(a as u128), Half::from_bits(b as u128));
            assert_eq!(float::add(F16, FloatMode::RN, a, b), expect_narrow(F16, x.add_r(y, rn).value), "{a:#x}+{b:#x}");
            assert_eq!(float::div(F16, FloatMode::RN, a, b), expect_narrow(F16, x.div_r(y, rn).value), "{a:#x}/{b:#x}");
            let (x, y) = (BFloat::from_bits(a as u128), BFloat::from_bits(b as u128));
            assert_eq!(
                float::mul(BF16, FloatMode::RN, a, b),
                expect_narrow(BF16, x.mul_r(y, rn).value),
                "{a:#x}*{b:#x}"
            );
            assert_eq!(
                float::sub(BF16, FloatMode::RN, a, b),
                expect_narrow(BF16, x.sub_r(y, rn).value),
                "{a:#x}-{b:#x}"
            );
        }
    }
}

#[test]
fn half_sqrt_exhaustive_all_modes() {
    // Every non-negative finite f16/bf16: rm² ≤ a ≤ rp² (exact in f64), adjacency, rz = rm, and rn picks the
    // side of the midpoint the exact root lies on.
    for ty in [F16, BF16] {
        let to_f64 = |x: u64| {
            if ty == F16 {
                half::f16::from_bits(x as u16).to_f64()
            } else {
                half::bf16::from_bits(x as u16).to_f64()
            }
        };
        for a in 0u64..ty.inf() {
            let r = all_modes(|rr| float::sqrt(ty, m(rr), a));
            let [rn, rz, rm, rp] = r;
            let (x, lo, hi) = (to_f64(a), to_f64(rm), to_f64(rp));
            assert!(lo * lo <= x && x <= hi * hi, "{ty:?} {a:#x}");
            assert!(rp == rm || rp == rm + 1, "{ty:?} {a:#x}");
            assert_eq!(rz, rm);
            if rp != rm {
                let mid = (lo + hi) / 2.0;
                assert_eq!(rn, if x < mid * mid { rm } else { rp }, "{ty:?} {a:#x}");
            } else {
                assert_eq!(rn, rm);
            }
        }
        assert_eq!(float::sqrt(ty, FloatMode::RN, ty.sign_bit()), ty.sign_bit());
        assert_eq!(float::sqrt(ty, FloatMode::RN, ty.one() | ty.sign_bit()), ty.canonical_nan());
    }
}
