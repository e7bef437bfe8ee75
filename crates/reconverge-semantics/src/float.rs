//! Floating-point instructions on `.f16`, `.bf16`, `.f32`, `.f64` and the packed `x2` forms.
//!
//! # Rounding
//! `.rn` on `f32`/`f64` uses the host's IEEE round-to-nearest-even arithmetic (and `mul_add` for fused
//! operations). The directed modes `.rz .rm .rp`, and every mode for `f16`/`bf16`, are computed exactly in
//! software (see the crate's `soft` module): for `f32`/`f16`/`bf16` from an `f64` intermediate plus the sign
//! of its exactly recovered error, for `f64` add/sub/mul/fma/div with `rustc_apfloat`, and for `f64` sqrt
//! from the round-to-nearest root and its exact `fma` residual. The host rounding mode is never changed.
//!
//! # NaNs
//! PTX: "NaN payloads are supported for double-precision instructions … Single-precision instructions return
//! an unspecified NaN", and half-precision ones likewise. NVIDIA hardware returns the canonical NaN
//! `0x7FFF_FFFF` for `f32` (and `0x7FFF` for `f16`/`bf16`), which is what we return for every NaN result of
//! those types. For `f64` a NaN operand propagates: the result is the first NaN operand (in operand order)
//! with its quiet bit set; a NaN created by an invalid operation (`∞ − ∞`, `0 · ∞`, `√−1`, `0/0`) is
//! `0x7FFF_FFFF_FFFF_FFFF` (hardware's generated-NaN pattern is not documented; this is our choice).
//!
//! # Modifiers
//! `.ftz` flushes subnormal inputs, and results that are subnormal *after* rounding, to a zero of the same
//! sign; it is honoured for every type but `f64` (PTX only has it on `f32`, `f16`, `f16x2`). `.sat` clamps
//! the rounded result to `[+0.0, 1.0]` and maps NaN (and `-0.0`) to `+0.0`.
//!
//! # Approximate instructions
//! The `*_approx*` functions compute the mathematically expected value with host `f64` math and round it to
//! nearest, so they are *more* accurate than hardware; they reproduce PTX's special-value tables exactly.
//! Each documents the difference to expect against a real GPU.

use rustc_apfloat::ieee::Double;
use rustc_apfloat::{Float as _, Round};

use crate::soft::{self, Fmt, RMode};
use crate::types::{FloatMode, FloatTy, Rounding};

// ---------------------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------------------

/// Flushes a subnormal `x` to a zero of the same sign (other values unchanged).
#[inline]
pub fn flush_subnormal(ty: FloatTy, x: u64) -> u64 {
    if ty.is_subnormal(x) {
        x & ty.sign_bit()
    } else {
        x
    }
}

#[inline]
fn in_ftz(ty: FloatTy, ftz: bool, x: u64) -> u64 {
    let x = x & ty.mask();
    if ftz && ty != FloatTy::F64 {
        flush_subnormal(ty, x)
    } else {
        x
    }
}

/// `.sat`: clamps `x` to `[+0.0, 1.0]`; NaN, negative values and `-0.0` become `+0.0`.
#[inline]
pub fn saturate(ty: FloatTy, x: u64) -> u64 {
    if ty.is_nan(x) || ty.is_neg(x) {
        0
    } else if x > ty.one() {
        ty.one()
    } else {
        x
    }
}

/// `.relu` (`f16`/`bf16` `fma`, `min`, `max`, `cvt`): negative results (and `-0.0`) become `+0.0`, NaN becomes
/// the canonical NaN.
#[inline]
pub fn relu(ty: FloatTy, x: u64) -> u64 {
    if ty.is_nan(x) {
        ty.canonical_nan()
    } else if ty.is_neg(x) {
        0
    } else {
        x
    }
}

/// `.satfinite`: ±Inf becomes ±MAX of the type; NaN stays (canonical) NaN; finite values are unchanged.
#[inline]
pub fn satfinite(ty: FloatTy, x: u64) -> u64 {
    if ty.is_nan(x) {
        ty.canonical_nan()
    } else if ty.is_inf(x) {
        (x & ty.sign_bit()) | ty.max_finite()
    } else {
        x
    }
}

/// Applies result `.ftz` and `.sat` to an already-rounded result.
#[inline]
fn finish(ty: FloatTy, m: FloatMode, r: u64) -> u64 {
    let r = in_ftz(ty, m.ftz, r);
    if m.sat {
        saturate(ty, r)
    } else {
        r
    }
}

/// The NaN result of an `f64` operation whose operands include a NaN: the first NaN operand, quieted.
#[inline]
fn f64_nan(ops: &[u64]) -> u64 {
    let t = FloatTy::F64;
    for &x in ops {
        if t.is_nan(x) {
            return x | (1u64 << 51);
        }
    }
    t.canonical_nan()
}

#[inline]
fn ap_round(r: Rounding) -> Round {
    match r {
        Rounding::Rn => Round::NearestTiesToEven,
        Rounding::Rz => Round::TowardZero,
        Rounding::Rm => Round::TowardNegative,
        Rounding::Rp => Round::TowardPositive,
    }
}

#[inline]
fn ap(x: u64) -> Double {
    Double::from_bits(x as u128)
}

/// The arithmetic operations shared by the generic paths.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Fma,
    Div,
    Sqrt,
}

/// `f16`/`bf16` `.rn` add/sub/mul/div/sqrt: computed in `f32` and rounded once more to the half type. The
/// double rounding is harmless because `f32` has at least `2p + 2` bits for both half types (Figueroa's
/// theorem for +, −, ·, /, √). `a`, `b` are already flushed.
#[inline]
fn half_rn(ty: FloatTy, m: FloatMode, op: Op, a: u64, b: u64) -> u64 {
    let x = soft::narrow_to_f64(ty, a) as f32;
    let y = soft::narrow_to_f64(ty, b) as f32;
    let r = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
        _ => x.sqrt(),
    };
    let bits = if ty == FloatTy::F16 { soft::f32_to_f16_rn(r.to_bits()) } else { soft::f32_to_bf16_rn(r.to_bits()) };
    finish(ty, m, bits)
}

/// `f16`/`bf16` (fused or directed) and `f32` (directed modes): exact-or-sticky `f64` intermediate, then
/// software rounding. `a`, `b`, `c` are already flushed.
#[inline]
fn narrow_op(ty: FloatTy, m: FloatMode, op: Op, a: u64, b: u64, c: u64) -> u64 {
    let x = soft::narrow_to_f64(ty, a);
    let y = soft::narrow_to_f64(ty, b);
    let z = soft::narrow_to_f64(ty, c);
    let (r, dir) = match op {
        Op::Add | Op::Sub => {
            let y = if op == Op::Sub { -y } else { y };
            let (s, e) = soft::two_sum(x, y);
            let s = zero_sum_sign(m.rnd, s, x, y);
            (s, if s.is_finite() { soft::sign_of(e) } else { 0 })
        }
        Op::Mul => (x * y, 0),
        Op::Fma => {
            let p = x * y; // exact: at most 2·24 significant bits
            let (s, e) = soft::two_sum(p, z);
            let s = zero_sum_sign(m.rnd, s, p, z);
            (s, if s.is_finite() { soft::sign_of(e) } else { 0 })
        }
        Op::Div => {
            let q = x / y;
            let dir = if q.is_finite() && q != 0.0 {
                let r = (-q).mul_add(y, x); // exact residual x - q·y
                soft::sign_of(r) * soft::sign_of(y)
            } else {
                0
            };
            (q, dir)
        }
        Op::Sqrt => {
            let q = x.sqrt();
            let dir = if q.is_finite() && q > 0.0 { soft::sign_of((-q).mul_add(q, x)) } else { 0 };
            (q, dir)
        }
    };
    if r.is_nan() {
        return finish(ty, m, ty.canonical_nan());
    }
    let bits = soft::round_f64(Fmt::of(ty), r, dir, RMode::from(m.rnd));
    finish(ty, m, bits)
}

/// IEEE sign of an exact zero sum: `+0` unless rounding towards −∞ (then `-0`), except that two zeros of the
/// same sign keep it. The host already returns the round-to-nearest sign.
#[inline]
fn zero_sum_sign(rnd: Rounding, s: f64, x: f64, y: f64) -> f64 {
    let both_pos_zero = x == 0.0 && y == 0.0 && !x.is_sign_negative() && !y.is_sign_negative();
    if s == 0.0 && rnd == Rounding::Rm && !both_pos_zero {
        -0.0
    } else {
        s
    }
}

/// `f32` `.rn` on the host FPU.
#[inline]
fn f32_rn(m: FloatMode, op: Op, a: u64, b: u64, c: u64) -> u64 {
    let x = f32::from_bits(a as u32);
    let y = f32::from_bits(b as u32);
    let z = f32::from_bits(c as u32);
    let r = match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Fma => x.mul_add(y, z),
        Op::Div => x / y,
        Op::Sqrt => x.sqrt(),
    };
    let bits = if r.is_nan() { FloatTy::F32.canonical_nan() } else { r.to_bits() as u64 };
    finish(FloatTy::F32, m, bits)
}

/// `f64` in any mode.
#[inline]
fn f64_op(rnd: Rounding, op: Op, a: u64, b: u64, c: u64) -> u64 {
    let t = FloatTy::F64;
    let any_nan = match op {
        Op::Sqrt => t.is_nan(a),
        Op::Fma => t.is_nan(a) || t.is_nan(b) || t.is_nan(c),
        _ => t.is_nan(a) || t.is_nan(b),
    };
    if any_nan {
        return match op {
            Op::Sqrt => f64_nan(&[a]),
            Op::Fma => f64_nan(&[a, b, c]),
            _ => f64_nan(&[a, b]),
        };
    }
    let r = if rnd == Rounding::Rn {
        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        let r = match op {
            Op::Add => x + y,
            Op::Sub => x - y,
            Op::Mul => x * y,
            Op::Fma => x.mul_add(y, z),
            Op::Div => x / y,
            Op::Sqrt => x.sqrt(),
        };
        r.to_bits()
    } else {
        let k = ap_round(rnd);
        match op {
            Op::Add => ap(a).add_r(ap(b), k).value.to_bits() as u64,
            Op::Sub => ap(a).sub_r(ap(b), k).value.to_bits() as u64,
            Op::Mul => ap(a).mul_r(ap(b), k).value.to_bits() as u64,
            Op::Fma => ap(a).mul_add_r(ap(b), ap(c), k).value.to_bits() as u64,
            Op::Div => ap(a).div_r(ap(b), k).value.to_bits() as u64,
            Op::Sqrt => f64_sqrt_directed(f64::from_bits(a), rnd).to_bits(),
        }
    };
    if t.is_nan(r) {
        t.canonical_nan()
    } else {
        r
    }
}

/// Correctly rounded `f64` square root in a directed mode (`a` is not NaN).
#[inline]
fn f64_sqrt_directed(a: f64, rnd: Rounding) -> f64 {
    if a < 0.0 {
        return f64::NAN;
    }
    if a == 0.0 || a.is_infinite() {
        return a;
    }
    // Scale tiny inputs by an even power of two so the residual below is exact.
    let tiny = a < f64::from_bits(0x0830_0000_0000_0000); // 2^-892
    let s = if tiny { a * f64::from_bits(0x4C70_0000_0000_0000) } else { a }; // · 2^200
    let q = s.sqrt();
    let dir = soft::sign_of((-q).mul_add(q, s)); // sign of sqrt(s) - q
    let q = match rnd {
        Rounding::Rn => q,
        Rounding::Rz | Rounding::Rm => {
            if dir < 0 {
                soft::next_down(q)
            } else {
                q
            }
        }
        Rounding::Rp => {
            if dir > 0 {
                soft::next_up(q)
            } else {
                q
            }
        }
    };
    if tiny {
        q * f64::from_bits(0x39B0_0000_0000_0000) // · 2^-100, exact (the root is a normal number)
    } else {
        q
    }
}

/// Dispatches a two/three-operand arithmetic op on any type.
#[inline]
fn arith(ty: FloatTy, m: FloatMode, op: Op, a: u64, b: u64, c: u64) -> u64 {
    match ty {
        FloatTy::F64 => {
            let r = f64_op(m.rnd, op, a, b, c);
            if m.sat {
                saturate(ty, r)
            } else {
                r
            }
        }
        FloatTy::F32 => {
            let (a, b, c) = (in_ftz(ty, m.ftz, a), in_ftz(ty, m.ftz, b), in_ftz(ty, m.ftz, c));
            if m.rnd == Rounding::Rn {
                f32_rn(m, op, a, b, c)
            } else {
                narrow_op(ty, m, op, a, b, c)
            }
        }
        FloatTy::F16 | FloatTy::Bf16 => {
            let (a, b, c) = (in_ftz(ty, m.ftz, a), in_ftz(ty, m.ftz, b), in_ftz(ty, m.ftz, c));
            if m.rnd == Rounding::Rn && op != Op::Fma {
                half_rn(ty, m, op, a, b)
            } else {
                narrow_op(ty, m, op, a, b, c)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// IEEE arithmetic
// ---------------------------------------------------------------------------------------------------------

/// `add{.rnd}{.ftz}{.sat}.type`: `a + b`, correctly rounded.
#[inline]
pub fn add(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    arith(ty, m, Op::Add, a, b, 0)
}

/// `sub{.rnd}{.ftz}{.sat}.type`: `a - b`, correctly rounded.
#[inline]
pub fn sub(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    arith(ty, m, Op::Sub, a, b, 0)
}

/// `mul{.rnd}{.ftz}{.sat}.type`: `a · b`, correctly rounded.
#[inline]
pub fn mul(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    arith(ty, m, Op::Mul, a, b, 0)
}

/// `fma.rnd{.ftz}{.sat}.type` and `mad.rnd.{f32,f64}` (identical on sm_20+): `a · b + c` with a single
/// rounding.
#[inline]
pub fn fma(ty: FloatTy, m: FloatMode, a: u64, b: u64, c: u64) -> u64 {
    arith(ty, m, Op::Fma, a, b, c)
}

/// `div.rnd{.ftz}.type`: IEEE-correct `a / b` (`x/±0` = ±∞, `0/0` and `∞/∞` = NaN).
#[inline]
pub fn div(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    arith(ty, m, Op::Div, a, b, 0)
}

/// `div.full{.ftz}.f32`: PTX guarantees at most 2 ulp error over the full range. We return the correctly
/// rounded (`.rn`) quotient, which satisfies that bound; a GPU may differ from it by up to 2 ulp.
#[inline]
pub fn div_full_f32(ftz: bool, a: u64, b: u64) -> u64 {
    div(FloatTy::F32, FloatMode::RN.with_ftz(ftz), a, b)
}

/// `div.approx{.ftz}.f32`: computed as PTX describes, `a · (1/b)` with both steps rounded to nearest, and
/// with `1/b` flushed to a signed zero for `2^126 < |b| < 2^128` (so `∞ / b` is NaN and any finite `a / b` a
/// signed zero there). Within PTX's 2-ulp bound; a GPU may differ by up to 2 ulp.
#[inline]
pub fn div_approx_f32(ftz: bool, a: u64, b: u64) -> u64 {
    let t = FloatTy::F32;
    let (a, b) = (in_ftz(t, ftz, a), in_ftz(t, ftz, b));
    let y = f32::from_bits(b as u32);
    let r = if y.is_finite() && y.abs() > f32::from_bits(0x7E80_0000) {
        f32::from_bits(b as u32 & 0x8000_0000) // ±0
    } else {
        1.0 / y
    };
    let q = f32::from_bits(a as u32) * r;
    let bits = if q.is_nan() { t.canonical_nan() } else { q.to_bits() as u64 };
    in_ftz(t, ftz, bits)
}

/// `rcp.rnd{.ftz}.type`: IEEE-correct `1 / a`.
#[inline]
pub fn rcp(ty: FloatTy, m: FloatMode, a: u64) -> u64 {
    div(ty, m, ty.one(), a)
}

/// `rcp.approx{.ftz}.f32`: `1 / a` rounded to nearest (PTX bound: 1 ulp; a GPU may differ by 1 ulp).
/// Special values as PTX's table: `±0 → ±∞`, `±∞ → ±0`, NaN → NaN.
#[inline]
pub fn rcp_approx_f32(ftz: bool, a: u64) -> u64 {
    rcp(FloatTy::F32, FloatMode::RN.with_ftz(ftz), a)
}

/// `rcp.approx.ftz.f64`: PTX's "gross approximation": the reciprocal of the upper 32 bits of `a` (1.11.20
/// format), returned in the upper 32 bits with the lower 32 bits zero. We round the true reciprocal of the
/// truncated input to 20 fraction bits (nearest); hardware uses a table estimate of similar (~20-bit)
/// accuracy. Subnormal inputs give ±∞, subnormal results ±0, NaN gives `0x7FFF_FFFF_0000_0000`.
#[inline]
pub fn rcp_approx_ftz_f64(a: u64) -> u64 {
    approx_hi_f64(a, |x| 1.0 / x)
}

/// `sqrt.rnd{.ftz}.type`: IEEE-correct square root (`√-0 = -0`, negative → NaN).
#[inline]
pub fn sqrt(ty: FloatTy, m: FloatMode, a: u64) -> u64 {
    arith(ty, m, Op::Sqrt, a, 0, 0)
}

/// `sqrt.approx{.ftz}.f32`: the correctly rounded root (PTX bound: relative error 2^-23; a GPU may differ
/// by about 1 ulp). Special values per PTX's table.
#[inline]
pub fn sqrt_approx_f32(ftz: bool, a: u64) -> u64 {
    sqrt(FloatTy::F32, FloatMode::RN.with_ftz(ftz), a)
}

/// Runs a unary `f32` approximation through `f64` math with input/result `.ftz` and canonical NaN.
#[inline]
fn approx_f32(ftz: bool, a: u64, f: impl Fn(f64) -> f64) -> u64 {
    let t = FloatTy::F32;
    let a = in_ftz(t, ftz, a);
    let x = f32::from_bits(a as u32) as f64;
    let r = f(x) as f32; // round to nearest
    let bits = if r.is_nan() { t.canonical_nan() } else { r.to_bits() as u64 };
    in_ftz(t, ftz, bits)
}

/// `rsqrt.approx{.ftz}.f32`: `1/√a` rounded to nearest (PTX bound: relative error 2^-22.9; a GPU may differ
/// by a few ulp). `-0 → -∞`, `+0 → +∞`, `+∞ → +0`, negative → NaN.
#[inline]
pub fn rsqrt_approx_f32(ftz: bool, a: u64) -> u64 {
    approx_f32(ftz, a, |x| 1.0 / x.sqrt())
}

/// `rsqrt.approx.f64`: `1/√a` as `1.0 / sqrt(a)` in `f64` (two roundings; within about 1 ulp).
#[inline]
pub fn rsqrt_approx_f64(a: u64) -> u64 {
    let t = FloatTy::F64;
    if t.is_nan(a) {
        return f64_nan(&[a]);
    }
    let r = 1.0 / f64::from_bits(a).sqrt();
    if r.is_nan() {
        t.canonical_nan()
    } else {
        r.to_bits()
    }
}

/// `rsqrt.approx.ftz.f64`: like [`rcp_approx_ftz_f64`] but for `1/√x`; negative inputs (and `-∞`) give
/// NaN, `±0` and ±subnormals give ±∞.
#[inline]
pub fn rsqrt_approx_ftz_f64(a: u64) -> u64 {
    approx_hi_f64(a, |x| 1.0 / x.sqrt())
}

/// Shared body of the `.approx.ftz.f64` instructions that work on the upper word of `a`.
#[inline]
fn approx_hi_f64(a: u64, f: impl Fn(f64) -> f64) -> u64 {
    const CANON: u64 = 0x7FFF_FFFF_0000_0000;
    let t = FloatTy::F64;
    if t.is_nan(a) {
        return CANON;
    }
    let hi = a & 0xFFFF_FFFF_0000_0000;
    let hi = flush_subnormal(t, hi);
    let r = f(f64::from_bits(hi));
    if r.is_nan() {
        return CANON;
    }
    if r.is_infinite() {
        return r.to_bits();
    }
    let rounded = soft::round_f64(Fmt { frac: 20, exp: 11 }, r, 0, RMode::Rn);
    // Re-expand the 1.11.20 pattern into the upper word of an f64; flush a subnormal result.
    let bits = rounded << 32;
    flush_subnormal(t, bits)
}

/// `ex2.approx{.ftz}.f32`: `2^a` via host `f64::exp2`, rounded to nearest (PTX bound: 2 ulp; a GPU may
/// differ by up to 2 ulp). `-∞ → +0`, `±0 → 1`, `+∞ → +∞`.
#[inline]
pub fn ex2_approx_f32(ftz: bool, a: u64) -> u64 {
    approx_f32(ftz, a, f64::exp2)
}

/// `lg2.approx{.ftz}.f32`: `log2(a)` via host `f64::log2`, rounded to nearest (PTX bound: absolute error
/// 2^-22 on (0.5, 2), relative 2^-22 elsewhere; a GPU may differ by that much). `±0 → -∞`, `+∞ → +∞`,
/// negative → NaN.
#[inline]
pub fn lg2_approx_f32(ftz: bool, a: u64) -> u64 {
    approx_f32(ftz, a, f64::log2)
}

/// `sin.approx{.ftz}.f32`: `sin(a)` via host `f64::sin`, rounded to nearest. Hardware's absolute error is up
/// to 2^-20.5 on [-2π, 2π] and 2^-14.7 on [-100π, 100π] (unbounded beyond), so expect differences of that
/// size. `±0 → ±0`, `±∞ → NaN`.
#[inline]
pub fn sin_approx_f32(ftz: bool, a: u64) -> u64 {
    approx_f32(ftz, a, f64::sin)
}

/// `cos.approx{.ftz}.f32`: `cos(a)` via host `f64::cos`, rounded to nearest; same accuracy caveats as
/// [`sin_approx_f32`]. `±0 → 1`, `±∞ → NaN`.
#[inline]
pub fn cos_approx_f32(ftz: bool, a: u64) -> u64 {
    approx_f32(ftz, a, f64::cos)
}

/// `tanh.approx.f32`: `tanh(a)` via host `f64::tanh`, rounded to nearest. Hardware's relative error is up to
/// 2^-11, so expect differences of that size. Subnormals pass through (as PTX notes), `±∞ → ±1`.
#[inline]
pub fn tanh_approx_f32(a: u64) -> u64 {
    approx_f32(false, a, f64::tanh)
}

/// `ex2.approx{.ftz}.{f16,bf16}` (and each lane of the `x2` forms): `2^a` computed in `f64`, rounded to
/// nearest in the type.
#[inline]
pub fn ex2_approx_half(ty: FloatTy, ftz: bool, a: u64) -> u64 {
    approx_half(ty, ftz, a, f64::exp2)
}

/// `tanh.approx.{f16,bf16}` (and each lane of the `x2` forms): `tanh(a)` computed in `f64`, rounded to
/// nearest in the type.
#[inline]
pub fn tanh_approx_half(ty: FloatTy, a: u64) -> u64 {
    approx_half(ty, false, a, f64::tanh)
}

#[inline]
fn approx_half(ty: FloatTy, ftz: bool, a: u64, f: impl Fn(f64) -> f64) -> u64 {
    let a = in_ftz(ty, ftz, a);
    let r = f(soft::narrow_to_f64(ty, a));
    if r.is_nan() {
        return ty.canonical_nan();
    }
    // Double rounding f64 → narrow is harmless for an approximation.
    in_ftz(ty, ftz, soft::round_f64(Fmt::of(ty), r, 0, RMode::Rn))
}

// ---------------------------------------------------------------------------------------------------------
// Sign manipulation, min/max, testp
// ---------------------------------------------------------------------------------------------------------

/// `abs{.ftz}.type`: clears the sign. NaN: `f64` passes the input through unchanged (PTX), the other types
/// return the canonical NaN (PTX: "unspecified NaN"; hardware implements `abs.f32` as an `FADD`, which
/// canonicalizes).
#[inline]
pub fn abs(ty: FloatTy, ftz: bool, a: u64) -> u64 {
    let a = in_ftz(ty, ftz, a);
    if ty.is_nan(a) {
        return if ty == FloatTy::F64 { a } else { ty.canonical_nan() };
    }
    a & !ty.sign_bit() & ty.mask()
}

/// `neg{.ftz}.type`: flips the sign. NaN: `f64` passes the input through unchanged, the other types return
/// the canonical NaN (PTX: "unspecified NaN").
#[inline]
pub fn neg(ty: FloatTy, ftz: bool, a: u64) -> u64 {
    let a = in_ftz(ty, ftz, a);
    if ty.is_nan(a) {
        return if ty == FloatTy::F64 { a } else { ty.canonical_nan() };
    }
    a ^ ty.sign_bit()
}

/// `copysign.type`: `b` with the sign bit of `a` (pure bit operation, NaNs included).
#[inline]
pub fn copysign(ty: FloatTy, a: u64, b: u64) -> u64 {
    let s = ty.sign_bit();
    ((b & !s) | (a & s)) & ty.mask()
}

/// Modifiers of floating-point `min`/`max`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct MinMaxMode {
    /// `.ftz`: flush subnormal inputs (not for `f64`).
    pub ftz: bool,
    /// `.NaN`: any NaN operand makes the result the canonical NaN (otherwise NaN operands are ignored).
    pub nan: bool,
    /// `.abs`: compare and return magnitudes.
    pub abs: bool,
    /// `.xorsign` (requires `.abs`): the result's sign is the XOR of the operands' original signs.
    pub xorsign: bool,
}

/// Orders non-NaN bit patterns like the reals with `-0 < +0`.
#[inline]
fn order_key(ty: FloatTy, x: u64) -> u64 {
    if ty.is_neg(x) {
        !x & ty.mask()
    } else {
        x | ty.sign_bit()
    }
}

#[inline]
fn minmax(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64, want_max: bool) -> u64 {
    let (a, b) = (in_ftz(ty, mode.ftz, a), in_ftz(ty, mode.ftz, b));
    let sign = ty.sign_bit();
    let xs = (a ^ b) & sign;
    let (a, b) = if mode.abs { (a & !sign, b & !sign) } else { (a, b) };
    let (an, bn) = (ty.is_nan(a), ty.is_nan(b));
    let r = if an || bn {
        if mode.nan {
            return ty.canonical_nan();
        }
        if an && bn {
            return if ty == FloatTy::F64 { f64_nan(&[a, b]) } else { ty.canonical_nan() };
        }
        if an {
            b
        } else {
            a
        }
    } else {
        let (ka, kb) = (order_key(ty, a), order_key(ty, b));
        let pick_a = if want_max { ka > kb } else { ka < kb };
        if pick_a {
            a
        } else {
            b
        }
    };
    if mode.xorsign {
        (r & !sign) | xs
    } else {
        r
    }
}

/// `min{.ftz}{.NaN}{.xorsign.abs}.type`: the smaller operand, with `-0 < +0`. Without `.NaN`, a NaN operand
/// is ignored (the other operand is returned) and two NaNs give NaN; with `.NaN` any NaN operand gives the
/// canonical NaN. The NaN of two NaN operands is canonical, except for `f64` where it is the first,
/// quieted.
#[inline]
pub fn min(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64) -> u64 {
    minmax(ty, mode, a, b, false)
}

/// `max{.ftz}{.NaN}{.xorsign.abs}.type`: the larger operand, with `+0 > -0`; NaN rules as [`min`].
#[inline]
pub fn max(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64) -> u64 {
    minmax(ty, mode, a, b, true)
}

/// Three-input `min{.ftz}{.NaN}{.abs}.f32 d, a, b, c` = `min(min(a, b), c)` (`xorsign` is not allowed and
/// is ignored).
#[inline]
pub fn min3(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64, c: u64) -> u64 {
    let mode = MinMaxMode { xorsign: false, ..mode };
    min(ty, mode, min(ty, mode, a, b), c)
}

/// Three-input `max{.ftz}{.NaN}{.abs}.f32 d, a, b, c` = `max(max(a, b), c)`.
#[inline]
pub fn max3(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64, c: u64) -> u64 {
    let mode = MinMaxMode { xorsign: false, ..mode };
    max(ty, mode, max(ty, mode, a, b), c)
}

/// The property tested by `testp`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TestpOp {
    /// `.finite`: not infinite and not NaN.
    Finite,
    /// `.infinite`: ±∞.
    Infinite,
    /// `.number`: not NaN.
    Number,
    /// `.notanumber`: NaN.
    NotANumber,
    /// `.normal`: a normal number; PTX counts ±0 as normal.
    Normal,
    /// `.subnormal`: a nonzero subnormal.
    Subnormal,
}

/// `testp.op.type`.
#[inline]
pub fn testp(op: TestpOp, ty: FloatTy, a: u64) -> bool {
    let a = a & ty.mask();
    let e = a & ty.exp_mask();
    match op {
        TestpOp::Finite => e != ty.exp_mask(),
        TestpOp::Infinite => ty.is_inf(a),
        TestpOp::Number => !ty.is_nan(a),
        TestpOp::NotANumber => ty.is_nan(a),
        TestpOp::Normal => e != ty.exp_mask() && (e != 0 || ty.is_zero(a)),
        TestpOp::Subnormal => ty.is_subnormal(a),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Packed x2 forms
// ---------------------------------------------------------------------------------------------------------

/// Applies `f` to the two lanes of packed operands: 16-bit lanes of a 32-bit register for `f16`/`bf16`
/// (`.f16x2`, `.bf16x2`), 32-bit lanes of a 64-bit register for `f32` (`.f32x2`). Lane 0 is the low half.
/// `f64` has no packed form: `f` is applied to the whole operands.
#[inline]
pub fn lanes2(ty: FloatTy, a: u64, b: u64, c: u64, f: impl Fn(u64, u64, u64) -> u64) -> u64 {
    if ty == FloatTy::F64 {
        return f(a, b, c);
    }
    let w = ty.bits();
    let m = ty.mask();
    let lo = f(a & m, b & m, c & m) & m;
    let hi = f((a >> w) & m, (b >> w) & m, (c >> w) & m) & m;
    lo | (hi << w)
}

/// `add{.rnd}{.ftz}{.sat}.{f16x2,bf16x2,f32x2}`.
#[inline]
pub fn add_x2(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    lanes2(ty, a, b, 0, |x, y, _| add(ty, m, x, y))
}

/// `sub{.rnd}{.ftz}{.sat}.{f16x2,bf16x2,f32x2}`.
#[inline]
pub fn sub_x2(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    lanes2(ty, a, b, 0, |x, y, _| sub(ty, m, x, y))
}

/// `mul{.rnd}{.ftz}{.sat}.{f16x2,bf16x2,f32x2}`.
#[inline]
pub fn mul_x2(ty: FloatTy, m: FloatMode, a: u64, b: u64) -> u64 {
    lanes2(ty, a, b, 0, |x, y, _| mul(ty, m, x, y))
}

/// `fma.rnd{.ftz}{.sat}.{f16x2,bf16x2,f32x2}`.
#[inline]
pub fn fma_x2(ty: FloatTy, m: FloatMode, a: u64, b: u64, c: u64) -> u64 {
    lanes2(ty, a, b, c, |x, y, z| fma(ty, m, x, y, z))
}

/// `min{.ftz}{.NaN}{.xorsign.abs}.{f16x2,bf16x2}`.
#[inline]
pub fn min_x2(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64) -> u64 {
    lanes2(ty, a, b, 0, |x, y, _| min(ty, mode, x, y))
}

/// `max{.ftz}{.NaN}{.xorsign.abs}.{f16x2,bf16x2}`.
#[inline]
pub fn max_x2(ty: FloatTy, mode: MinMaxMode, a: u64, b: u64) -> u64 {
    lanes2(ty, a, b, 0, |x, y, _| max(ty, mode, x, y))
}

/// `neg{.ftz}.{f16x2,bf16x2}`.
#[inline]
pub fn neg_x2(ty: FloatTy, ftz: bool, a: u64) -> u64 {
    lanes2(ty, a, 0, 0, |x, _, _| neg(ty, ftz, x))
}

/// `abs{.ftz}.{f16x2,bf16x2}`.
#[inline]
pub fn abs_x2(ty: FloatTy, ftz: bool, a: u64) -> u64 {
    lanes2(ty, a, 0, 0, |x, _, _| abs(ty, ftz, x))
}

/// `.relu` applied lane-wise to a packed result.
#[inline]
pub fn relu_x2(ty: FloatTy, a: u64) -> u64 {
    lanes2(ty, a, 0, 0, |x, _, _| relu(ty, x))
}
