//! The bridge from decoded operations to the scalar semantics crate: each function turns an operation
//! and its types into a per-lane closure (decided once per instruction, called per lane).

use crate::program::{
    AtomOp, BoolOp as POp, CarryOp, Cmp, FMode, FRound, FloatBinOp, FloatUnOp, IntBinOp, IntTerOp, IntUnOp, ReduxOp,
    ShflMode,
};
use reconverge_ir::{KnownModifier as K, ScalarType};
use reconverge_semantics::cvt::{CvtMode, CvtRounding};
use reconverge_semantics::float::{MinMaxMode, TestpOp};
use reconverge_semantics::int::{ClampWrap, PrmtMode};
use reconverge_semantics::{cmp, cvt, float, int, select, FloatMode, FloatTy, IntRounding, IntTy, NumTy, Rounding};

fn ity(ty: ScalarType) -> IntTy {
    IntTy::try_from(ty).unwrap_or(match ty.bits() {
        8 => IntTy::U8,
        16 => IntTy::U16,
        64 => IntTy::U64,
        _ => IntTy::U32,
    })
}

fn fty(ty: ScalarType) -> FloatTy {
    match ty {
        ScalarType::F16 | ScalarType::F16x2 => FloatTy::F16,
        ScalarType::Bf16 | ScalarType::Bf16x2 => FloatTy::Bf16,
        ScalarType::F64 => FloatTy::F64,
        _ => FloatTy::F32,
    }
}

fn is_x2(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::F16x2 | ScalarType::Bf16x2)
}

fn numty(ty: ScalarType) -> NumTy {
    if ty.is_float() {
        NumTy::Float(fty(ty))
    } else {
        NumTy::Int(ity(ty))
    }
}

fn fmode(m: FMode) -> FloatMode {
    let rnd = match m.rnd {
        FRound::Rz => Rounding::Rz,
        FRound::Rm => Rounding::Rm,
        FRound::Rp => Rounding::Rp,
        _ => Rounding::Rn,
    };
    FloatMode { rnd, ftz: m.ftz, sat: m.sat }
}

/// One-source integer/bit operations.
pub(crate) fn int_un(op: IntUnOp, ty: ScalarType) -> impl Fn(u64) -> u64 {
    let t = ity(ty);
    let bits = ty.bits();
    move |a| match op {
        IntUnOp::Abs => int::abs(t, a),
        IntUnOp::Neg => int::neg(t, a),
        IntUnOp::Not => int::not(bits, a),
        IntUnOp::Cnot => int::cnot(bits, a),
        IntUnOp::Popc => int::popc(bits, a),
        IntUnOp::Clz => int::clz(bits, a),
        IntUnOp::Brev => int::brev(bits, a),
        IntUnOp::Bfind => int::bfind(t, false, a),
        IntUnOp::BfindShiftAmt => int::bfind(t, true, a),
    }
}

/// Two-source integer/bit operations.
pub(crate) fn int_bin(op: IntBinOp, ty: ScalarType) -> impl Fn(u64, u64) -> u64 {
    let t = ity(ty);
    let bits = ty.bits();
    move |a, b| match op {
        IntBinOp::Add => int::add(t, a, b),
        IntBinOp::AddSat => int::add_sat(t, a, b),
        IntBinOp::Sub => int::sub(t, a, b),
        IntBinOp::SubSat => int::sub_sat(t, a, b),
        IntBinOp::MulLo => int::mul_lo(t, a, b),
        IntBinOp::MulHi => int::mul_hi(t, a, b),
        IntBinOp::MulWide => int::mul_wide(t, a, b),
        IntBinOp::Mul24Lo => int::mul24_lo(t, a, b),
        IntBinOp::Mul24Hi => int::mul24_hi(t, a, b),
        IntBinOp::Div => int::div(t, a, b),
        IntBinOp::Rem => int::rem(t, a, b),
        IntBinOp::Min => int::min(t, a, b),
        IntBinOp::Max => int::max(t, a, b),
        IntBinOp::And => int::and(bits, a, b),
        IntBinOp::Or => int::or(bits, a, b),
        IntBinOp::Xor => int::xor(bits, a, b),
        IntBinOp::Shl => int::shl(bits, a, b),
        IntBinOp::Shr => int::shr(t, a, b),
        IntBinOp::BmskClamp => int::bmsk(ClampWrap::Clamp, a, b),
        IntBinOp::BmskWrap => int::bmsk(ClampWrap::Wrap, a, b),
        IntBinOp::SzextClamp => int::szext(ClampWrap::Clamp, t.signed(), a, b),
        IntBinOp::SzextWrap => int::szext(ClampWrap::Wrap, t.signed(), a, b),
    }
}

/// Three-source integer operations.
pub(crate) fn int_ter(op: IntTerOp, ty: ScalarType) -> impl Fn(u64, u64, u64) -> u64 {
    let t = ity(ty);
    move |a, b, c| match op {
        IntTerOp::MadLo => int::mad_lo(t, a, b, c),
        IntTerOp::MadHi => int::mad_hi(t, a, b, c),
        IntTerOp::MadHiSat => int::mad_hi_sat_s32(a, b, c),
        IntTerOp::MadWide => int::mad_wide(t, a, b, c),
        IntTerOp::Mad24Lo => int::mad24_lo(t, a, b, c),
        IntTerOp::Mad24Hi => int::mad24_hi(t, a, b, c),
        IntTerOp::Bfe => int::bfe(t, a, b, c),
        IntTerOp::Sad => int::sad(t, a, b, c),
        IntTerOp::Dp4a(sa, sb) => int::dp4a(sa, sb, a, b, c),
        IntTerOp::Dp2a(sa, sb, hi) => int::dp2a(hi, sa, sb, a, b, c),
    }
}

/// Carry-chain operations: returns the result and the carry out.
#[inline]
pub(crate) fn carry(op: CarryOp, ty: ScalarType, a: u64, b: u64, c: u64, cin: bool) -> (u64, bool) {
    let t = ity(ty);
    match op {
        CarryOp::Add => int::add_cc(t, a, b, cin),
        CarryOp::Sub => int::sub_cc(t, a, b, cin),
        CarryOp::MadLo => int::mad_cc(t, false, a, b, c, cin),
        CarryOp::MadHi => int::mad_cc(t, true, a, b, c, cin),
    }
}

/// `bfi`.
#[inline]
pub(crate) fn bfi(bits: u32, a: u64, b: u64, c: u64, d: u64) -> u64 {
    int::bfi(bits, a, b, c, d)
}

/// `prmt` with an optional mode.
pub(crate) fn prmt(mode: Option<K>) -> impl Fn(u64, u64, u64) -> u64 {
    let m = match mode {
        Some(K::F4e) => PrmtMode::F4e,
        Some(K::B4e) => PrmtMode::B4e,
        Some(K::Rc8) => PrmtMode::Rc8,
        Some(K::Ecl) => PrmtMode::Ecl,
        Some(K::Ecr) => PrmtMode::Ecr,
        Some(K::Rc16) => PrmtMode::Rc16,
        _ => PrmtMode::Default,
    };
    move |a, b, c| int::prmt(m, a, b, c)
}

/// `lop3`.
#[inline]
pub(crate) fn lop3(a: u64, b: u64, c: u64, lut: u8) -> u64 {
    int::lop3(32, a, b, c, lut)
}

/// `shf.l` / `shf.r`.
pub(crate) fn shf(left: bool, clamp: bool) -> impl Fn(u64, u64, u64) -> u64 {
    let m = if clamp { ClampWrap::Clamp } else { ClampWrap::Wrap };
    move |a, b, c| if left { int::shf_l(m, a, b, c) } else { int::shf_r(m, a, b, c) }
}

/// One-source float operations.
pub(crate) fn float_un(op: FloatUnOp, ty: ScalarType, m: FMode) -> impl Fn(u64) -> u64 {
    let t = fty(ty);
    let x2 = is_x2(ty);
    let fm = fmode(m);
    let approx = m.rnd == FRound::Approx;
    move |a| match op {
        FloatUnOp::Abs if x2 => float::abs_x2(t, m.ftz, a),
        FloatUnOp::Neg if x2 => float::neg_x2(t, m.ftz, a),
        FloatUnOp::Abs => float::abs(t, m.ftz, a),
        FloatUnOp::Neg => float::neg(t, m.ftz, a),
        FloatUnOp::Sqrt if approx && t == FloatTy::F32 => float::sqrt_approx_f32(m.ftz, a),
        FloatUnOp::Sqrt => float::sqrt(t, fm, a),
        FloatUnOp::Rcp if approx && t == FloatTy::F32 => float::rcp_approx_f32(m.ftz, a),
        FloatUnOp::Rcp if approx => float::rcp_approx_ftz_f64(a),
        FloatUnOp::Rcp => float::rcp(t, fm, a),
        FloatUnOp::Rsqrt if t == FloatTy::F64 && m.ftz => float::rsqrt_approx_ftz_f64(a),
        FloatUnOp::Rsqrt if t == FloatTy::F64 => float::rsqrt_approx_f64(a),
        FloatUnOp::Rsqrt => float::rsqrt_approx_f32(m.ftz, a),
        FloatUnOp::Sin => float::sin_approx_f32(m.ftz, a),
        FloatUnOp::Cos => float::cos_approx_f32(m.ftz, a),
        FloatUnOp::Ex2 if t == FloatTy::F32 => float::ex2_approx_f32(m.ftz, a),
        FloatUnOp::Ex2 => float::ex2_approx_half(t, m.ftz, a),
        FloatUnOp::Lg2 => float::lg2_approx_f32(m.ftz, a),
        FloatUnOp::Tanh if t == FloatTy::F32 => float::tanh_approx_f32(a),
        FloatUnOp::Tanh => float::tanh_approx_half(t, a),
    }
}

/// Two-source float operations.
pub(crate) fn float_bin(op: FloatBinOp, ty: ScalarType, m: FMode) -> impl Fn(u64, u64) -> u64 {
    let t = fty(ty);
    let x2 = is_x2(ty);
    let fm = fmode(m);
    let mm = MinMaxMode { ftz: m.ftz, nan: m.nan, abs: false, xorsign: false };
    move |a, b| match op {
        FloatBinOp::Add if x2 => float::add_x2(t, fm, a, b),
        FloatBinOp::Sub if x2 => float::sub_x2(t, fm, a, b),
        FloatBinOp::Mul if x2 => float::mul_x2(t, fm, a, b),
        FloatBinOp::Min if x2 => float::min_x2(t, mm, a, b),
        FloatBinOp::Max if x2 => float::max_x2(t, mm, a, b),
        FloatBinOp::Add => float::add(t, fm, a, b),
        FloatBinOp::Sub => float::sub(t, fm, a, b),
        FloatBinOp::Mul => float::mul(t, fm, a, b),
        FloatBinOp::Div => match m.rnd {
            FRound::Approx => float::div_approx_f32(m.ftz, a, b),
            FRound::Full => float::div_full_f32(m.ftz, a, b),
            _ => float::div(t, fm, a, b),
        },
        FloatBinOp::Min => float::min(t, mm, a, b),
        FloatBinOp::Max => float::max(t, mm, a, b),
        FloatBinOp::Copysign => float::copysign(t, a, b),
    }
}

/// `fma` / `mad` (fused).
pub(crate) fn fma(ty: ScalarType, m: FMode) -> impl Fn(u64, u64, u64) -> u64 {
    let t = fty(ty);
    let x2 = is_x2(ty);
    let fm = fmode(m);
    move |a, b, c| if x2 { float::fma_x2(t, fm, a, b, c) } else { float::fma(t, fm, a, b, c) }
}

/// `testp.op`.
pub(crate) fn testp(test: &str, ty: ScalarType) -> impl Fn(u64) -> bool {
    let op = match test {
        "finite" => TestpOp::Finite,
        "infinite" => TestpOp::Infinite,
        "number" => TestpOp::Number,
        "notanumber" => TestpOp::NotANumber,
        "normal" => TestpOp::Normal,
        _ => TestpOp::Subnormal,
    };
    let t = fty(ty);
    move |a| float::testp(op, t, a)
}

/// `cvt` into a destination register of `dst_bits` bits (a signed integer result is sign-extended to it).
pub(crate) fn cvt(
    dty: ScalarType,
    sty: ScalarType,
    rnd: Option<K>,
    ftz: bool,
    sat: bool,
    dst_bits: u32,
) -> impl Fn(u64) -> u64 {
    let r = match rnd {
        Some(K::Rn) => CvtRounding::Float(Rounding::Rn),
        Some(K::Rz) => CvtRounding::Float(Rounding::Rz),
        Some(K::Rm) => CvtRounding::Float(Rounding::Rm),
        Some(K::Rp) => CvtRounding::Float(Rounding::Rp),
        Some(K::Rni) => CvtRounding::Int(IntRounding::Rni),
        Some(K::Rzi) => CvtRounding::Int(IntRounding::Rzi),
        Some(K::Rmi) => CvtRounding::Int(IntRounding::Rmi),
        Some(K::Rpi) => CvtRounding::Int(IntRounding::Rpi),
        _ => CvtRounding::Default,
    };
    let mode = CvtMode { rnd: r, ftz, sat };
    let (d, s) = (numty(dty), numty(sty));
    move |a| cvt::cvt_to_register(d, s, mode, a, dst_bits)
}

/// A comparison of `setp`/`set`.
pub(crate) fn compare(c: Cmp, ty: ScalarType) -> impl Fn(u64, u64) -> bool {
    let op = c;
    let t = numty(ty);
    move |a, b| cmp::compare(op, t, a, b)
}

/// Combines two predicate masks.
#[inline]
pub(crate) fn bool_mask(op: POp, a: u64, b: u64) -> u64 {
    match op {
        POp::And => a & b,
        POp::Or => a | b,
        POp::Xor => a ^ b,
    }
}

/// The condition of `slct` (`c >= 0`) for the comparison type.
pub(crate) fn slct_cond(sty: ScalarType) -> impl Fn(u64) -> bool {
    let is_f = sty.is_float();
    move |c| {
        if is_f {
            select::slct_f32(false, 1, 0, c) == 1
        } else {
            (c as u32 as i32) >= 0
        }
    }
}

/// The new memory value of an atomic.
#[inline]
pub(crate) fn atom(op: AtomOp, ty: ScalarType, old: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits();
    let m = crate::types::full_mask(bits);
    if ty.is_float() {
        let t = fty(ty);
        let fm = FloatMode { rnd: Rounding::Rn, ftz: false, sat: false };
        let mm = MinMaxMode { ftz: false, nan: false, abs: false, xorsign: false };
        return match op {
            AtomOp::Add => float::add(t, fm, old, b),
            AtomOp::Min => float::min(t, mm, old, b),
            AtomOp::Max => float::max(t, mm, old, b),
            AtomOp::Exch => b & m,
            AtomOp::Cas => {
                if old == b & m {
                    c & m
                } else {
                    old
                }
            }
            _ => old,
        };
    }
    let t = ity(ty);
    match op {
        AtomOp::Add => int::add(t, old, b),
        AtomOp::Min => int::min(t, old, b),
        AtomOp::Max => int::max(t, old, b),
        AtomOp::Inc => {
            if old & m >= b & m {
                0
            } else {
                (old + 1) & m
            }
        }
        AtomOp::Dec => {
            if old & m == 0 || old & m > b & m {
                b & m
            } else {
                (old - 1) & m
            }
        }
        AtomOp::And => old & b & m,
        AtomOp::Or => (old | b) & m,
        AtomOp::Xor => (old ^ b) & m,
        AtomOp::Exch => b & m,
        AtomOp::Cas => {
            if old & m == b & m {
                c & m
            } else {
                old
            }
        }
    }
}

/// The source lane of a shuffle and whether it is in range (PTX `shfl` pseudo-code with `c` =
/// `(segmask << 8) | clamp`).
#[inline]
pub(crate) fn shfl_lane(mode: ShflMode, lane: u32, b: u32, c: u32, w: u32) -> (u32, bool) {
    let clamp = c & 0x1F;
    let segmask = (c >> 8) & 0x1F;
    let lane32 = lane & 31;
    let max_lane = (lane32 & segmask) | (clamp & !segmask);
    let min_lane = lane32 & segmask;
    let (j, valid) = match mode {
        ShflMode::Up => {
            let j = lane32 as i64 - b as i64;
            (j, j >= max_lane as i64)
        }
        ShflMode::Down => {
            let j = lane32 as i64 + b as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Bfly => {
            let j = (lane32 ^ b) as i64;
            (j, j <= max_lane as i64)
        }
        ShflMode::Idx => {
            let j = (min_lane | (b & !segmask)) as i64;
            (j, j <= max_lane as i64)
        }
    };
    if !valid || j < 0 || j >= w.min(32) as i64 {
        (lane, false)
    } else {
        ((j as u32) | (lane & !31), true)
    }
}

/// A `redux.sync` reduction over the member lanes' values.
pub(crate) fn redux(op: ReduxOp, ty: ScalarType, vals: impl Iterator<Item = u64>) -> u64 {
    let t = ity(ty);
    let mut acc: Option<u64> = None;
    for v in vals {
        let v = v & 0xFFFF_FFFF;
        acc = Some(match acc {
            None => v,
            Some(a) => match op {
                ReduxOp::Add => int::add(IntTy::U32, a, v),
                ReduxOp::Min => int::min(t, a, v),
                ReduxOp::Max => int::max(t, a, v),
                ReduxOp::And => a & v,
                ReduxOp::Or => a | v,
                ReduxOp::Xor => a ^ v,
            },
        });
    }
    acc.unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_lanes_follow_ptx() {
        // shfl.down by 1, clamp 31: lane 31 keeps its own value.
        assert_eq!(shfl_lane(ShflMode::Down, 3, 1, 31, 32), (4, true));
        assert_eq!(shfl_lane(ShflMode::Down, 31, 1, 31, 32), (31, false));
        // shfl.up by 2, clamp 0: lanes 0 and 1 keep their own values.
        assert_eq!(shfl_lane(ShflMode::Up, 1, 2, 0, 32), (1, false));
        assert_eq!(shfl_lane(ShflMode::Up, 5, 2, 0, 32), (3, true));
        // bfly xor 16.
        assert_eq!(shfl_lane(ShflMode::Bfly, 5, 16, 31, 32), (21, true));
        // idx with a sub-warp width of 8: c = ((32-8) << 8) | 31.
        let c = (24 << 8) | 31;
        assert_eq!(shfl_lane(ShflMode::Idx, 13, 2, c, 32), (10, true));
        // Lanes beyond a small warp are out of range.
        assert_eq!(shfl_lane(ShflMode::Down, 3, 1, 31, 4), (3, false));
    }

    #[test]
    fn atomics() {
        assert_eq!(atom(AtomOp::Inc, ScalarType::U32, 5, 5, 0), 0);
        assert_eq!(atom(AtomOp::Inc, ScalarType::U32, 4, 5, 0), 5);
        assert_eq!(atom(AtomOp::Dec, ScalarType::U32, 0, 7, 0), 7);
        assert_eq!(atom(AtomOp::Cas, ScalarType::B32, 0, 0, 1), 1);
        assert_eq!(atom(AtomOp::Cas, ScalarType::B32, 1, 0, 1), 1);
        assert_eq!(atom(AtomOp::Min, ScalarType::S32, 0xFFFF_FFFF, 3, 0), 0xFFFF_FFFF);
        assert_eq!(
            atom(AtomOp::Add, ScalarType::F32, 1.5f32.to_bits() as u64, 2.0f32.to_bits() as u64, 0),
            3.5f32.to_bits() as u64
        );
    }
}
