//! Comparisons: `setp`, `set` and their boolean combining operators.
//!
//! Integer comparisons use the type's signedness for `eq ne lt le gt ge` and are always unsigned for
//! `lo ls hi hs`; bit types are passed as the unsigned type of the same width. Float comparisons follow PTX
//! ("Floating Point Comparisons"): the ordered operators are false when either operand is NaN, the `u`
//! operators are true, `num` is "neither is NaN" and `nan` "either is NaN". `-0 == +0`.
//!
//! Operators PTX does not define for a type are still total here: on integers the unordered operators
//! behave like their ordered counterparts, `num` is always true and `nan` always false; on floats
//! `lo ls hi hs` behave like `lt le gt ge`.

use crate::float::flush_subnormal;
use crate::soft;
use crate::types::{BoolOp, CmpOp, FloatTy, IntTy, NumTy};

/// Compares two integers of type `ty`.
#[inline]
pub fn compare_int(op: CmpOp, ty: IntTy, a: u64, b: u64) -> bool {
    let (x, y) = (ty.value(a), ty.value(b));
    let (ux, uy) = (ty.trunc(a), ty.trunc(b));
    match op {
        CmpOp::Eq | CmpOp::Equ => ux == uy,
        CmpOp::Ne | CmpOp::Neu => ux != uy,
        CmpOp::Lt | CmpOp::Ltu => x < y,
        CmpOp::Le | CmpOp::Leu => x <= y,
        CmpOp::Gt | CmpOp::Gtu => x > y,
        CmpOp::Ge | CmpOp::Geu => x >= y,
        CmpOp::Lo => ux < uy,
        CmpOp::Ls => ux <= uy,
        CmpOp::Hi => ux > uy,
        CmpOp::Hs => ux >= uy,
        CmpOp::Num => true,
        CmpOp::Nan => false,
    }
}

/// Compares two `f64` values (every float type widens to `f64` exactly).
#[inline]
fn compare_f64(op: CmpOp, x: f64, y: f64) -> bool {
    let un = x.is_nan() || y.is_nan();
    match op {
        CmpOp::Eq => x == y,
        CmpOp::Ne => !un && x != y,
        CmpOp::Lt | CmpOp::Lo => x < y,
        CmpOp::Le | CmpOp::Ls => x <= y,
        CmpOp::Gt | CmpOp::Hi => x > y,
        CmpOp::Ge | CmpOp::Hs => x >= y,
        CmpOp::Equ => un || x == y,
        CmpOp::Neu => x != y,
        CmpOp::Ltu => un || x < y,
        CmpOp::Leu => un || x <= y,
        CmpOp::Gtu => un || x > y,
        CmpOp::Geu => un || x >= y,
        CmpOp::Num => !un,
        CmpOp::Nan => un,
    }
}

/// Compares two floats of type `ty`.
#[inline]
pub fn compare_float(op: CmpOp, ty: FloatTy, a: u64, b: u64) -> bool {
    compare_f64(op, soft::narrow_to_f64(ty, a & ty.mask()), soft::narrow_to_f64(ty, b & ty.mask()))
}

/// `setp.op.type` / `set.op.dtype.type`: the comparison of `a` and `b` as values of `ty`.
#[inline]
pub fn compare(op: CmpOp, ty: NumTy, a: u64, b: u64) -> bool {
    match ty {
        NumTy::Int(t) => compare_int(op, t, a, b),
        NumTy::Float(t) => compare_float(op, t, a, b),
    }
}

/// `setp.op.ftz.type`: as [`compare`], with subnormal float operands flushed to signed zero first (so two
/// different subnormals compare equal). Integer types ignore the flush.
#[inline]
pub fn compare_ftz(op: CmpOp, ty: NumTy, a: u64, b: u64) -> bool {
    match ty {
        NumTy::Int(t) => compare_int(op, t, a, b),
        NumTy::Float(t) => compare_float(op, t, flush_subnormal(t, a & t.mask()), flush_subnormal(t, b & t.mask())),
    }
}

/// `setp.op{.ftz}.{f16x2,bf16x2}`: the lane-wise comparisons `[low lane, high lane]` (PTX writes the low
/// lane's result to the first destination predicate and the high lane's to the second).
#[inline]
pub fn compare_x2(op: CmpOp, ty: FloatTy, ftz: bool, a: u64, b: u64) -> [bool; 2] {
    let w = ty.bits();
    let m = ty.mask();
    let f = |x: u64, y: u64| {
        if ftz {
            compare_ftz(op, NumTy::Float(ty), x, y)
        } else {
            compare_float(op, ty, x, y)
        }
    };
    let hi = |x: u64| x.checked_shr(w).unwrap_or(0) & m;
    [f(a & m, b & m), f(hi(a), hi(b))]
}

/// The combining operator of `setp.op.bop` / `set.op.bop`.
#[inline]
pub fn bool_op(op: BoolOp, a: bool, b: bool) -> bool {
    match op {
        BoolOp::And => a & b,
        BoolOp::Or => a | b,
        BoolOp::Xor => a ^ b,
    }
}

/// The two results of `setp.op.bop.type p|q, a, b, {!}c`: `p = t bop c`, `q = !t bop c`, where `t` is the
/// comparison result and `c` the (possibly negated) predicate operand.
#[inline]
pub fn setp_pair(op: BoolOp, t: bool, c: bool) -> (bool, bool) {
    (bool_op(op, t, c), bool_op(op, !t, c))
}

/// The value `set` writes for a comparison result: for an integer destination all ones of its width for
/// true (`0xFFFF_FFFF` for `.u32`/`.s32`), for a float destination `1.0` (`0x3F80_0000` for `.f32`); 0 for
/// false.
#[inline]
pub fn set_value(dst: NumTy, t: bool) -> u64 {
    if !t {
        return 0;
    }
    match dst {
        NumTy::Int(i) => i.mask(),
        NumTy::Float(f) => f.one(),
    }
}

/// `set.op.{f16x2,bf16x2,u32,s32}.{f16x2,bf16x2}`: packs lane results `[low, high]`, each as `1.0` in
/// `lane_dst` (float) or all ones (integer lanes of the same 16-bit width).
#[inline]
pub fn set_value_x2(lane_dst: NumTy, t: [bool; 2]) -> u64 {
    let w = lane_dst.bits();
    set_value(lane_dst, t[0]) | set_value(lane_dst, t[1]).checked_shl(w).unwrap_or(0)
}
