//! Software rounding core shared by the float and conversion modules.
//!
//! Everything here is exact integer arithmetic: a value is described as `(-1)^neg · mant · 2^exp` plus an
//! optional *sticky* flag meaning "the true value is strictly between `mant · 2^exp` and `(mant + 1) · 2^exp`"
//! (in magnitude). [`round_bits`] rounds such a description to any binary interchange format under any
//! rounding direction, handling subnormals and overflow. The host FPU rounding mode is never touched.
//!
//! Narrow formats (`f16`, `bf16`, `f32`, `tf32`) use an exact-or-sticky intermediate in `f64`: their
//! significands have at most 24 bits, so a product is exact in `f64`, and the rounding error of a sum,
//! quotient or square root computed in `f64` is recovered exactly with error-free transformations
//! (`two_sum`, a fused-multiply-add residual). Only the *sign* of that error matters, and because `f64` has
//! more than `p + 2` bits for every narrow format, "an `f64` value plus a sticky bit" rounds exactly like the
//! infinitely precise result in all four directions.

use crate::types::{FloatTy, Rounding};

/// Rounding direction including the ties-away mode only `cvt.rna.tf32` uses.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum RMode {
    /// Nearest, ties to even.
    Rn,
    /// Nearest, ties away from zero.
    Rna,
    /// Towards zero.
    Rz,
    /// Towards −∞.
    Rm,
    /// Towards +∞.
    Rp,
}

impl From<Rounding> for RMode {
    #[inline]
    fn from(r: Rounding) -> RMode {
        match r {
            Rounding::Rn => RMode::Rn,
            Rounding::Rz => RMode::Rz,
            Rounding::Rm => RMode::Rm,
            Rounding::Rp => RMode::Rp,
        }
    }
}

/// A binary floating-point format: `frac` explicit fraction bits and `exp` exponent bits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Fmt {
    pub frac: u32,
    pub exp: u32,
}

impl Fmt {
    pub(crate) const F16: Fmt = Fmt { frac: 10, exp: 5 };
    pub(crate) const BF16: Fmt = Fmt { frac: 7, exp: 8 };
    pub(crate) const TF32: Fmt = Fmt { frac: 10, exp: 8 };
    pub(crate) const F32: Fmt = Fmt { frac: 23, exp: 8 };
    pub(crate) const F64: Fmt = Fmt { frac: 52, exp: 11 };

    #[inline]
    pub(crate) const fn of(t: FloatTy) -> Fmt {
        match t {
            FloatTy::F16 => Fmt::F16,
            FloatTy::Bf16 => Fmt::BF16,
            FloatTy::F32 => Fmt::F32,
            FloatTy::F64 => Fmt::F64,
        }
    }

    #[inline]
    pub(crate) const fn bias(self) -> i64 {
        (1i64 << (self.exp - 1)) - 1
    }

    #[inline]
    pub(crate) const fn inf(self) -> u64 {
        ((1u64 << self.exp) - 1) << self.frac
    }

    #[inline]
    pub(crate) const fn sign(self) -> u64 {
        1u64 << (self.frac + self.exp)
    }
}

/// The result of an overflow in direction `mode`: ±Inf or ±MAX.
#[inline]
fn overflow(f: Fmt, neg: bool, mode: RMode) -> u64 {
    let to_inf = match mode {
        RMode::Rn | RMode::Rna => true,
        RMode::Rz => false,
        RMode::Rp => !neg,
        RMode::Rm => neg,
    };
    let mag = if to_inf { f.inf() } else { f.inf() - 1 };
    mag | if neg { f.sign() } else { 0 }
}

/// Rounds `(-1)^neg · (mant [+ sticky]) · 2^exp` to format `f` in direction `mode` and returns its bits.
///
/// `sticky` means the magnitude is strictly greater than `mant · 2^exp` and strictly less than
/// `(mant + 1) · 2^exp`. A zero `mant` gives a signed zero (and ignores `sticky`).
#[inline]
pub(crate) fn round_bits(f: Fmt, neg: bool, mant: u64, exp: i32, sticky: bool, mode: RMode) -> u64 {
    let sign = if neg { f.sign() } else { 0 };
    if mant == 0 {
        return sign;
    }
    let lz = mant.leading_zeros();
    let m = mant << lz; // most significant bit at bit 63
    let e = exp as i64 - lz as i64; // value = m · 2^e
    let emin = 1 - f.bias();
    let big_e = (e + 63).max(emin);
    if big_e > f.bias() {
        return overflow(f, neg, mode);
    }
    let shift = (big_e - f.frac as i64) - e; // ≥ 63 - frac ≥ 11
    let (q, gt_half, eq_half, inexact) = if shift >= 65 {
        // m < 2^64 ≤ half an ulp: below the midpoint, inexact.
        (0u64, false, false, true)
    } else {
        let s = shift as u32;
        let mm = m as u128;
        let q = (mm >> s) as u64;
        let rest = mm & ((1u128 << s) - 1);
        let half = 1u128 << (s - 1);
        (q, rest > half || (rest == half && sticky), rest == half && !sticky, rest != 0 || sticky)
    };
    let up = match mode {
        RMode::Rn => gt_half || (eq_half && (q & 1) == 1),
        RMode::Rna => gt_half || eq_half,
        RMode::Rz => false,
        RMode::Rp => inexact && !neg,
        RMode::Rm => inexact && neg,
    };
    let q = q + up as u64;
    // `q` carries the implicit bit; adding it to (biased exponent - 1) lets a mantissa carry, and a subnormal
    // rounding up to the smallest normal, fall out naturally.
    let bits = (((big_e + f.bias() - 1) as u64) << f.frac) + q;
    if bits >= f.inf() {
        return overflow(f, neg, mode);
    }
    sign | bits
}

/// Splits finite bits of format `f` into `(neg, mant, exp)` with value `(-1)^neg · mant · 2^exp`.
#[inline]
pub(crate) fn decode(f: Fmt, bits: u64) -> (bool, u64, i32) {
    let neg = bits & f.sign() != 0;
    let ef = ((bits >> f.frac) & ((1u64 << f.exp) - 1)) as i64;
    let fr = bits & ((1u64 << f.frac) - 1);
    let emin = 1 - f.bias();
    if ef == 0 {
        (neg, fr, (emin - f.frac as i64) as i32)
    } else {
        (neg, fr | (1u64 << f.frac), (ef - f.bias() - f.frac as i64) as i32)
    }
}

/// Rounds the exact value `x + δ` to format `f`, where `x` is a finite or infinite `f64` and `dir` is the
/// sign of the (tiny) error `δ` (−1, 0 or +1). `|δ|` must be below one `f64` ulp of `x`, and `x` must be
/// nonzero when `dir` is nonzero. NaN is not handled here.
#[inline]
pub(crate) fn round_f64(f: Fmt, x: f64, dir: i8, mode: RMode) -> u64 {
    let b = x.to_bits();
    let neg = (b >> 63) != 0;
    if x.is_infinite() {
        return f.inf() | if neg { f.sign() } else { 0 };
    }
    let (_, m, e) = decode(Fmt::F64, b);
    let mag_dir = if neg { -dir } else { dir };
    let (m, sticky) = match mag_dir {
        0 => (m, false),
        d if d > 0 => (m, true),
        // Below `m`: the true magnitude is in (m - 1, m) ulps (m ≥ 2 for every caller).
        _ => ((m.saturating_sub(1)).max(1), true),
    };
    round_bits(f, neg, m, e, sticky, mode)
}

/// Sign of an `f64` as −1, 0 or +1 (0 for zero and NaN).
#[inline]
pub(crate) fn sign_of(x: f64) -> i8 {
    (x > 0.0) as i8 - (x < 0.0) as i8
}

/// Error-free sum: `a + b == s + err` exactly (barring overflow).
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// Converts finite-or-special bits of a narrow float type to `f64` exactly (NaNs map to an `f64` NaN).
#[inline]
pub(crate) fn narrow_to_f64(t: FloatTy, bits: u64) -> f64 {
    match t {
        FloatTy::F32 => f32::from_bits(bits as u32) as f64,
        FloatTy::Bf16 => f32::from_bits((bits as u32 & 0xFFFF) << 16) as f64,
        FloatTy::F16 => f16_bits_to_f32(bits as u16) as f64,
        FloatTy::F64 => f64::from_bits(bits),
    }
}

/// Exact `f16` → `f32` widening (NaN payloads are kept, shifted).
#[inline]
pub(crate) fn f16_bits_to_f32(h: u16) -> f32 {
    let h = h as u32;
    let sign = (h & 0x8000) << 16;
    let exp = (h >> 10) & 0x1F;
    let frac = h & 0x3FF;
    if exp == 0x1F {
        f32::from_bits(sign | 0x7F80_0000 | (frac << 13))
    } else if exp == 0 {
        // Subnormal or zero: frac · 2^-24, exact in f32.
        let v = frac as f32 * (1.0 / 16_777_216.0);
        f32::from_bits(v.to_bits() | sign)
    } else {
        f32::from_bits(sign | ((exp + 112) << 23) | (frac << 13))
    }
}

/// The next `f64` towards +∞ of a finite value.
#[inline]
pub(crate) fn next_up(x: f64) -> f64 {
    let b = x.to_bits();
    if x == 0.0 {
        f64::from_bits(1)
    } else if b >> 63 == 0 {
        f64::from_bits(b + 1)
    } else {
        f64::from_bits(b - 1)
    }
}

/// The next `f64` towards −∞ of a finite value.
#[inline]
pub(crate) fn next_down(x: f64) -> f64 {
    -next_up(-x)
}

/// `f32` → `f16` bits, round to nearest even (NaN → canonical `0x7FFF`). Fast path for `.rn`; uses the host's
/// round-to-nearest addition for the subnormal range.
#[inline]
pub(crate) fn f32_to_f16_rn(x: u32) -> u64 {
    let sign = ((x >> 16) & 0x8000) as u64;
    let a = x & 0x7FFF_FFFF;
    if a > 0x7F80_0000 {
        return 0x7FFF;
    }
    let o = if a >= 0x4780_0000 {
        // ≥ 65536 (or ∞): overflow to ∞.
        0x7C00
    } else if a < 0x3880_0000 {
        // Below the smallest normal f16 (2^-14): let the FPU round at the f16 subnormal grid by adding 0.5,
        // whose ulp is 2^-24.
        let f = f32::from_bits(a) + 0.5;
        (f.to_bits() - 0x3F00_0000) as u64
    } else {
        let odd = (a >> 13) & 1;
        let r = a.wrapping_add(((15u32.wrapping_sub(127)) << 23).wrapping_add(0xFFF)).wrapping_add(odd);
        (r >> 13) as u64
    };
    sign | o
}

/// `f32` → `bf16` bits, round to nearest even (NaN → canonical `0x7FFF`).
#[inline]
pub(crate) fn f32_to_bf16_rn(x: u32) -> u64 {
    if x & 0x7FFF_FFFF > 0x7F80_0000 {
        return 0x7FFF;
    }
    ((x as u64 + 0x7FFF + ((x as u64 >> 16) & 1)) >> 16) & 0xFFFF
}
