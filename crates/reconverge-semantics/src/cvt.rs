//! `cvt`: conversions between every pair of integer and floating-point types.
//!
//! PTX rules implemented here (PTX ISA, "Data Movement and Conversion Instructions: cvt"):
//! - **int → int** truncates or sign/zero-extends (by the *source* signedness); `.sat` clamps the source
//!   value to the destination range (`MININT..MAXINT`, for signed and unsigned destinations alike).
//! - **int → float** rounds with `.rn .rz .rm .rp` (64-bit integers, and 32-bit ones into `f16`/`bf16`/`f32`,
//!   can be inexact); directed modes are exact software rounding.
//! - **float → int** rounds with `.rni .rzi .rmi .rpi`, converts NaN to 0 and always saturates to the
//!   destination range (".sat is redundant"); `.ftz` flushes an `f32` subnormal source first.
//! - **float → float** is exact when widening; narrowing rounds with `.rn .rz .rm .rp`; the integer modes
//!   round to an integral value in the same type. `.ftz` applies only to `f32` sources and results; `.sat`
//!   clamps to `[0.0, 1.0]` (NaN → `+0.0`). A NaN source becomes the destination type's canonical NaN
//!   (PTX leaves the NaN unspecified; we never carry payloads across a conversion).
//!
//! [`cvt`] returns the destination bit pattern zero-extended from the destination width. A destination
//! *register* wider than the destination type receives the result extended "based on the destination
//! format" (PTX ISA, "Operand Size Exceeding Instruction-Type Size"): sign-extended for a signed integer
//! type, zero-extended otherwise; [`cvt_to_register`] gives that register value.

use crate::float;
use crate::soft::{self, Fmt, RMode};
use crate::types::{FloatMode, FloatTy, IntRounding, IntTy, NumTy, Rounding};

/// The rounding modifier present on a `cvt`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CvtRounding {
    /// No rounding modifier: `.rn` for a float destination, `.rzi` for an integer destination.
    #[default]
    Default,
    /// `.rn .rz .rm .rp`. On a float→int conversion this is treated as the matching integer mode.
    Float(Rounding),
    /// `.rni .rzi .rmi .rpi`. On a float→float conversion this rounds to an integral value; on an int→float
    /// conversion it is treated as the matching float mode.
    Int(IntRounding),
}

/// All modifiers of a `cvt`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CvtMode {
    /// The rounding modifier.
    pub rnd: CvtRounding,
    /// `.ftz`.
    pub ftz: bool,
    /// `.sat`.
    pub sat: bool,
}

#[inline]
fn to_int_rounding(r: Rounding) -> IntRounding {
    match r {
        Rounding::Rn => IntRounding::Rni,
        Rounding::Rz => IntRounding::Rzi,
        Rounding::Rm => IntRounding::Rmi,
        Rounding::Rp => IntRounding::Rpi,
    }
}

#[inline]
fn to_float_rounding(r: IntRounding) -> Rounding {
    match r {
        IntRounding::Rni => Rounding::Rn,
        IntRounding::Rzi => Rounding::Rz,
        IntRounding::Rmi => Rounding::Rm,
        IntRounding::Rpi => Rounding::Rp,
    }
}

/// `cvt{.rnd}{.ftz}{.sat}.dtype.atype d, a` for any pair of types.
#[inline]
pub fn cvt(dst: NumTy, src: NumTy, mode: CvtMode, a: u64) -> u64 {
    match (dst, src) {
        (NumTy::Int(d), NumTy::Int(s)) => int_to_int(d, s, mode.sat, a),
        (NumTy::Float(d), NumTy::Int(s)) => {
            let rnd = match mode.rnd {
                CvtRounding::Default => Rounding::Rn,
                CvtRounding::Float(r) => r,
                CvtRounding::Int(r) => to_float_rounding(r),
            };
            int_to_float(d, s, FloatMode { rnd, ftz: mode.ftz, sat: mode.sat }, a)
        }
        (NumTy::Int(d), NumTy::Float(s)) => {
            let rnd = match mode.rnd {
                CvtRounding::Default => IntRounding::Rzi,
                CvtRounding::Float(r) => to_int_rounding(r),
                CvtRounding::Int(r) => r,
            };
            float_to_int(d, s, rnd, mode.ftz, a)
        }
        (NumTy::Float(d), NumTy::Float(s)) => match mode.rnd {
            CvtRounding::Int(r) => {
                let x = round_to_integral(s, r, mode.ftz, false, a);
                float_to_float(d, s, FloatMode { rnd: Rounding::Rn, ftz: mode.ftz, sat: mode.sat }, x)
            }
            CvtRounding::Default => float_to_float(d, s, FloatMode { rnd: Rounding::Rn, ..float_mode(mode) }, a),
            CvtRounding::Float(r) => float_to_float(d, s, FloatMode { rnd: r, ..float_mode(mode) }, a),
        },
    }
}

/// `cvt` as its result lands in a destination register of `reg_bits` bits (16, 32 or 64): [`cvt`]'s
/// result sign-extended to the register's width when the destination type is a signed integer narrower
/// than the register (`cvt.s8.s32 %r, 194` gives `0xffff_ffc2`), zero-extended otherwise; never wider than
/// the register.
#[inline]
pub fn cvt_to_register(dst: NumTy, src: NumTy, mode: CvtMode, a: u64, reg_bits: u32) -> u64 {
    let v = cvt(dst, src, mode, a);
    let reg_mask = crate::types::width_mask(reg_bits);
    match dst {
        NumTy::Int(d) if d.signed() && d.bits() < reg_bits => d.sext(v) as u64 & reg_mask,
        _ => v & reg_mask,
    }
}

#[inline]
fn float_mode(m: CvtMode) -> FloatMode {
    FloatMode { rnd: Rounding::Rn, ftz: m.ftz, sat: m.sat }
}

/// int → int: truncation/extension, or clamping to the destination range with `sat`.
#[inline]
pub fn int_to_int(dst: IntTy, src: IntTy, sat: bool, a: u64) -> u64 {
    let v = src.value(a);
    if sat {
        dst.saturate(v)
    } else {
        dst.trunc(v as u64)
    }
}

/// int → float with rounding `m.rnd` (`m.sat` clamps to `[0, 1]`; `m.ftz` is irrelevant: no integer converts
/// to an `f32` subnormal).
#[inline]
pub fn int_to_float(dst: FloatTy, src: IntTy, m: FloatMode, a: u64) -> u64 {
    let v = src.value64(a);
    let bits = match (dst, m.rnd) {
        (FloatTy::F32, Rounding::Rn) => {
            let f = if src.signed() { v as f32 } else { src.trunc(a) as f32 };
            f.to_bits() as u64
        }
        (FloatTy::F64, Rounding::Rn) => {
            let f = if src.signed() { v as f64 } else { src.trunc(a) as f64 };
            f.to_bits()
        }
        _ => {
            let (neg, mag) = if src.signed() { (v < 0, v.unsigned_abs()) } else { (false, src.trunc(a)) };
            soft::round_bits(Fmt::of(dst), neg, mag, 0, false, RMode::from(m.rnd))
        }
    };
    if m.sat {
        float::saturate(dst, bits)
    } else {
        bits
    }
}

/// Rounds an `f64` to an integral value.
#[inline]
fn round_int_f64(x: f64, r: IntRounding) -> f64 {
    match r {
        IntRounding::Rni => x.round_ties_even(),
        IntRounding::Rzi => x.trunc(),
        IntRounding::Rmi => x.floor(),
        IntRounding::Rpi => x.ceil(),
    }
}

/// float → int: round with `rnd`, NaN → 0, saturate to the destination range; `ftz` flushes an `f32`
/// subnormal source to zero first (so e.g. `.rpi` of a tiny positive value gives 0, not 1).
#[inline]
pub fn float_to_int(dst: IntTy, src: FloatTy, rnd: IntRounding, ftz: bool, a: u64) -> u64 {
    let a = if ftz && src == FloatTy::F32 { float::flush_subnormal(src, a & src.mask()) } else { a & src.mask() };
    let x = round_int_f64(soft::narrow_to_f64(src, a), rnd);
    // Rust float → int casts saturate and map NaN to 0, exactly PTX's rule.
    match dst {
        IntTy::U8 => (x as u8) as u64,
        IntTy::U16 => (x as u16) as u64,
        IntTy::U32 => (x as u32) as u64,
        IntTy::U64 => x as u64,
        IntTy::S8 => (x as i8) as u8 as u64,
        IntTy::S16 => (x as i16) as u16 as u64,
        IntTy::S32 => (x as i32) as u32 as u64,
        IntTy::S64 => (x as i64) as u64,
    }
}

/// float → float: exact widening, or narrowing rounded with `m.rnd`; `m.ftz` flushes `f32` subnormal sources
/// and results; `m.sat` clamps to `[0, 1]`. NaN → the destination's canonical NaN.
#[inline]
pub fn float_to_float(dst: FloatTy, src: FloatTy, m: FloatMode, a: u64) -> u64 {
    let a = a & src.mask();
    let a = if m.ftz && src == FloatTy::F32 { float::flush_subnormal(src, a) } else { a };
    let bits = if src.is_nan(a) {
        dst.canonical_nan()
    } else if src.is_inf(a) {
        dst.inf() | if src.is_neg(a) { dst.sign_bit() } else { 0 }
    } else {
        match (dst, src, m.rnd) {
            (FloatTy::F64, FloatTy::F32, _) => (f32::from_bits(a as u32) as f64).to_bits(),
            (FloatTy::F32, FloatTy::F64, Rounding::Rn) => (f64::from_bits(a) as f32).to_bits() as u64,
            (FloatTy::F16, FloatTy::F32, Rounding::Rn) => soft::f32_to_f16_rn(a as u32),
            (FloatTy::Bf16, FloatTy::F32, Rounding::Rn) => soft::f32_to_bf16_rn(a as u32),
            _ => {
                let (neg, mant, exp) = soft::decode(Fmt::of(src), a);
                soft::round_bits(Fmt::of(dst), neg, mant, exp, false, RMode::from(m.rnd))
            }
        }
    };
    let bits = if m.ftz && dst == FloatTy::F32 { float::flush_subnormal(dst, bits) } else { bits };
    if m.sat {
        float::saturate(dst, bits)
    } else {
        bits
    }
}

/// `cvt.rni/rzi/rmi/rpi{.ftz}{.sat}.ftype.ftype`: round to an integral value in the same type (`-0.3` with
/// `.rni` gives `-0.0`). NaN → canonical NaN.
#[inline]
pub fn round_to_integral(ty: FloatTy, rnd: IntRounding, ftz: bool, sat: bool, a: u64) -> u64 {
    let a = a & ty.mask();
    let a = if ftz && ty == FloatTy::F32 { float::flush_subnormal(ty, a) } else { a };
    let bits = if ty.is_nan(a) {
        ty.canonical_nan()
    } else {
        match ty {
            FloatTy::F64 => round_int_f64(f64::from_bits(a), rnd).to_bits(),
            FloatTy::F32 => (round_int_f64(f32::from_bits(a as u32) as f64, rnd) as f32).to_bits() as u64,
            FloatTy::F16 | FloatTy::Bf16 => {
                // Integral results of a half-precision value are representable; the re-encoding is exact.
                let x = round_int_f64(soft::narrow_to_f64(ty, a), rnd);
                soft::round_f64(Fmt::of(ty), x, 0, RMode::Rn)
            }
        }
    };
    if sat {
        float::saturate(ty, bits)
    } else {
        bits
    }
}

/// Rounding modes of `cvt.*.tf32.f32`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Tf32Rounding {
    /// `.rna`: nearest, ties away from zero.
    Rna,
    /// `.rn`: nearest, ties to even.
    Rn,
    /// `.rz`: towards zero.
    Rz,
}

/// `cvt.{rna,rn,rz}{.satfinite}{.relu}.tf32.f32`: round an `f32` to TensorFloat-32 (10 fraction bits), returned
/// in a 32-bit container with the low 13 bits zero. NaN → `0x7FFF_E000`; `satfinite` turns ±∞ (from the
/// input or from overflow) into ±MAX (`0x7F7F_E000`); `relu` turns negative results into `+0`.
#[inline]
pub fn f32_to_tf32(rnd: Tf32Rounding, satfinite: bool, relu: bool, a: u64) -> u64 {
    let t = FloatTy::F32;
    let a = a & t.mask();
    if t.is_nan(a) {
        return 0x7FFF_E000;
    }
    let bits = if t.is_inf(a) {
        a
    } else {
        let mode = match rnd {
            Tf32Rounding::Rna => RMode::Rna,
            Tf32Rounding::Rn => RMode::Rn,
            Tf32Rounding::Rz => RMode::Rz,
        };
        let (neg, mant, exp) = soft::decode(Fmt::F32, a);
        let r = soft::round_bits(Fmt::TF32, neg, mant, exp, false, mode);
        // TF32 and F32 share sign and exponent layout: widen the fraction back to 23 bits.
        r << 13
    };
    let bits = if satfinite && t.is_inf(bits) { (bits & t.sign_bit()) | 0x7F7F_E000 } else { bits };
    if relu && t.is_neg(bits) {
        0
    } else {
        bits
    }
}

/// `cvt.frnd2{.relu}{.satfinite}.{f16,bf16}x2.f32 d, a, b`: `a` converted into the upper half, `b` into the
/// lower half.
#[inline]
pub fn f32_pair_to_x2(dst: FloatTy, rnd: Rounding, relu: bool, satfinite: bool, a: u64, b: u64) -> u64 {
    let one = |x: u64| -> u64 {
        let mut r = float_to_float(dst, FloatTy::F32, FloatMode::new(rnd), x);
        if satfinite {
            r = float::satfinite(dst, r);
        }
        if relu {
            r = float::relu(dst, r);
        }
        r
    };
    one(a).checked_shl(dst.bits()).unwrap_or(0) | one(b)
}
