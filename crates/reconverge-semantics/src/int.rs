//! Integer, bit-manipulation, logic and shift instructions.
//!
//! Every value is a raw bit pattern zero-extended from its type's width; every result is truncated to the
//! destination width. Nothing here panics: overflow wraps (or saturates where `.sat` says so), shift amounts
//! are clamped as PTX specifies, and division by zero returns the values documented on [`div`] and [`rem`].
//!
//! Bit-width arguments named `bits` are the operand width in bits: 1 (`.pred`), 8, 16, 32 or 64.

use crate::types::{width_mask, IntTy};

// ---------------------------------------------------------------------------------------------------------
// add / sub / packed SIMD
// ---------------------------------------------------------------------------------------------------------

/// `add.type`: wrapping addition.
#[inline]
pub fn add(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.trunc(a.wrapping_add(b))
}

/// `add.sat.type`: addition clamped to the type's range (PTX allows `.s32` and, since PTX 9.2, `.u32`; every
/// type is accepted here).
#[inline]
pub fn add_sat(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.saturate(ty.value(a) + ty.value(b))
}

/// `sub.type`: wrapping subtraction.
#[inline]
pub fn sub(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.trunc(a.wrapping_sub(b))
}

/// `sub.sat.type`: subtraction clamped to the type's range (PTX allows `.s32`).
#[inline]
pub fn sub_sat(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.saturate(ty.value(a) - ty.value(b))
}

/// A packed SIMD integer type: two 16-bit or four 8-bit lanes in a 32-bit register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PackedInt {
    /// `.u16x2`
    U16x2,
    /// `.s16x2`
    S16x2,
    /// `.u8x4`
    U8x4,
    /// `.s8x4`
    S8x4,
}

impl PackedInt {
    /// The lane type.
    #[inline]
    pub const fn lane(self) -> IntTy {
        match self {
            PackedInt::U16x2 => IntTy::U16,
            PackedInt::S16x2 => IntTy::S16,
            PackedInt::U8x4 => IntTy::U8,
            PackedInt::S8x4 => IntTy::S8,
        }
    }
}

/// Applies `f` to each lane of the packed 32-bit operands `a` and `b`.
#[inline]
fn lanes(ty: PackedInt, a: u64, b: u64, f: impl Fn(IntTy, u64, u64) -> u64) -> u64 {
    let lane = ty.lane();
    let w = lane.bits();
    let n = 32 / w;
    let mut d = 0u64;
    for i in 0..n {
        let sh = i * w;
        d |= lane.trunc(f(lane, (a >> sh) & lane.mask(), (b >> sh) & lane.mask())) << sh;
    }
    d
}

/// `add{.sat}.{u16x2,s16x2,u8x4,s8x4}`: lane-wise addition, saturating per lane when `sat`.
#[inline]
pub fn add_packed(ty: PackedInt, sat: bool, a: u64, b: u64) -> u64 {
    lanes(ty, a, b, |t, x, y| if sat { add_sat(t, x, y) } else { add(t, x, y) })
}

/// `sub{.sat}.{u8x4,s8x4}` (and `x2` forms): lane-wise subtraction, saturating per lane when `sat`.
#[inline]
pub fn sub_packed(ty: PackedInt, sat: bool, a: u64, b: u64) -> u64 {
    lanes(ty, a, b, |t, x, y| if sat { sub_sat(t, x, y) } else { sub(t, x, y) })
}

/// `min{.relu}.{u16x2,s16x2,u8x4,s8x4}`: lane-wise minimum; `relu` clamps negative lanes to 0.
#[inline]
pub fn min_packed(ty: PackedInt, relu: bool, a: u64, b: u64) -> u64 {
    lanes(ty, a, b, |t, x, y| relu_if(t, relu, min(t, x, y)))
}

/// `max{.relu}.{u16x2,s16x2,u8x4,s8x4}`: lane-wise maximum; `relu` clamps negative lanes to 0.
#[inline]
pub fn max_packed(ty: PackedInt, relu: bool, a: u64, b: u64) -> u64 {
    lanes(ty, a, b, |t, x, y| relu_if(t, relu, max(t, x, y)))
}

/// `neg.s8x4` (and the other packed types): lane-wise wrapping negation.
#[inline]
pub fn neg_packed(ty: PackedInt, a: u64) -> u64 {
    lanes(ty, a, 0, |t, x, _| neg(t, x))
}

#[inline]
fn relu_if(ty: IntTy, relu: bool, x: u64) -> u64 {
    if relu && ty.value64(x) < 0 {
        0
    } else {
        x
    }
}

// ---------------------------------------------------------------------------------------------------------
// mul / mad / mul24 / mad24
// ---------------------------------------------------------------------------------------------------------

/// The full `2·bits` product of `a` and `b` under the type's signedness, as a 128-bit two's complement value.
#[inline]
fn full_product(ty: IntTy, a: u64, b: u64) -> u128 {
    (ty.value(a) as u128).wrapping_mul(ty.value(b) as u128)
}

/// `mul.lo.type`: low half of the product (identical for signed and unsigned).
#[inline]
pub fn mul_lo(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.trunc(a.wrapping_mul(b))
}

/// `mul.hi.type`: high half of the `2n`-bit product.
#[inline]
pub fn mul_hi(ty: IntTy, a: u64, b: u64) -> u64 {
    ty.trunc((full_product(ty, a, b) >> ty.bits()) as u64)
}

/// `mul.wide.type`: the full `2n`-bit product, zero-extended from `2n` bits. PTX defines `.wide` only for
/// 16- and 32-bit types; for 64-bit types the low 64 bits of the product are returned.
#[inline]
pub fn mul_wide(ty: IntTy, a: u64, b: u64) -> u64 {
    let p = full_product(ty, a, b) as u64;
    width_mask(2 * ty.bits()) & p
}

/// `mad.lo.type`: `(a·b)<n-1..0> + c`, wrapping.
#[inline]
pub fn mad_lo(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    ty.trunc(a.wrapping_mul(b).wrapping_add(c))
}

/// `mad.hi.type`: `(a·b)<2n-1..n> + c`, wrapping.
#[inline]
pub fn mad_hi(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    ty.trunc(mul_hi(ty, a, b).wrapping_add(c))
}

/// `mad.hi.sat.s32`: `(a·b)<63..32> + c` with the addition clamped to the `s32` range.
#[inline]
pub fn mad_hi_sat_s32(a: u64, b: u64, c: u64) -> u64 {
    let t = IntTy::S32;
    t.saturate(t.value(mul_hi(t, a, b)) + t.value(c))
}

/// `mad.wide.type`: `a·b + c` with `c` and the result `2n` bits wide (low 64 bits for 64-bit types).
#[inline]
pub fn mad_wide(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    width_mask(2 * ty.bits()) & mul_wide(ty, a, b).wrapping_add(c)
}

/// The 48-bit product of the low 24 bits of `a` and `b` (sign-extended from bit 23 for `.s32`).
#[inline]
fn product24(ty: IntTy, a: u64, b: u64) -> i64 {
    let ext = |x: u64| -> i64 {
        if ty.signed() {
            ((x << 40) as i64) >> 40
        } else {
            (x & 0xFF_FFFF) as i64
        }
    };
    ext(a) * ext(b)
}

/// `mul24.lo.{u32,s32}`: low 32 bits of the 48-bit product of the low 24 bits of the operands.
#[inline]
pub fn mul24_lo(ty: IntTy, a: u64, b: u64) -> u64 {
    product24(ty, a, b) as u64 & 0xFFFF_FFFF
}

/// `mul24.hi.{u32,s32}`: bits 47..16 of the 48-bit product.
#[inline]
pub fn mul24_hi(ty: IntTy, a: u64, b: u64) -> u64 {
    (product24(ty, a, b) >> 16) as u64 & 0xFFFF_FFFF
}

/// `mad24.lo.{u32,s32}`: `mul24.lo + c`, wrapping.
#[inline]
pub fn mad24_lo(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    mul24_lo(ty, a, b).wrapping_add(c) & 0xFFFF_FFFF
}

/// `mad24.hi.{u32,s32}`: `mul24.hi + c`, wrapping.
#[inline]
pub fn mad24_hi(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    mul24_hi(ty, a, b).wrapping_add(c) & 0xFFFF_FFFF
}

/// `mad24.hi.sat.s32`: `mul24.hi + c` clamped to the `s32` range.
#[inline]
pub fn mad24_hi_sat_s32(a: u64, b: u64, c: u64) -> u64 {
    let t = IntTy::S32;
    t.saturate(t.value(mul24_hi(t, a, b)) + t.value(c))
}

/// `sad.type`: `c + |a - b|` (the difference taken under the type's signedness), wrapping.
#[inline]
pub fn sad(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    let (x, y) = (ty.value(a), ty.value(b));
    let d = if x < y { y - x } else { x - y };
    ty.trunc((d as u64).wrapping_add(c))
}

// ---------------------------------------------------------------------------------------------------------
// div / rem / abs / neg / min / max
// ---------------------------------------------------------------------------------------------------------

/// `div.type`: quotient rounded towards zero.
///
/// PTX leaves division by zero "unspecified, machine-specific". We return what the division sequence ptxas
/// emits on NVIDIA GPUs yields (an unsigned reciprocal-based quotient that saturates, then a sign fix-up):
/// unsigned `x / 0` = all ones; signed `x / 0` = −1 (all ones) for `x ≥ 0` and +1 for `x < 0`.
/// `MIN / -1` wraps to `MIN`.
#[inline]
pub fn div(ty: IntTy, a: u64, b: u64) -> u64 {
    if ty.signed() {
        let (x, y) = (ty.sext(a), ty.sext(b));
        let q = if y == 0 {
            if x < 0 {
                1
            } else {
                -1
            }
        } else {
            x.wrapping_div(y)
        };
        ty.trunc(q as u64)
    } else {
        let (x, y) = (ty.trunc(a), ty.trunc(b));
        ty.trunc(x.checked_div(y).unwrap_or(u64::MAX))
    }
}

/// `rem.type`: remainder with the sign of the dividend (C semantics, consistent with [`div`]).
///
/// By zero: `x % 0 = x` for both signednesses (the remainder `a - q·b` of the division sequence).
/// `MIN % -1 = 0`.
#[inline]
pub fn rem(ty: IntTy, a: u64, b: u64) -> u64 {
    if ty.signed() {
        let (x, y) = (ty.sext(a), ty.sext(b));
        let r = if y == 0 { x } else { x.wrapping_rem(y) };
        ty.trunc(r as u64)
    } else {
        let (x, y) = (ty.trunc(a), ty.trunc(b));
        x.checked_rem(y).unwrap_or(x)
    }
}

/// `abs.type` (signed types): `|a|`; `abs(MIN)` wraps to `MIN`. Unsigned types return `a` unchanged.
#[inline]
pub fn abs(ty: IntTy, a: u64) -> u64 {
    if ty.signed() {
        ty.trunc(ty.sext(a).wrapping_abs() as u64)
    } else {
        ty.trunc(a)
    }
}

/// `neg.type`: two's complement negation, wrapping (`-MIN = MIN`).
#[inline]
pub fn neg(ty: IntTy, a: u64) -> u64 {
    ty.trunc(a.wrapping_neg())
}

/// `min.type`: the smaller operand under the type's signedness.
#[inline]
pub fn min(ty: IntTy, a: u64, b: u64) -> u64 {
    if ty.value(a) < ty.value(b) {
        ty.trunc(a)
    } else {
        ty.trunc(b)
    }
}

/// `max.type`: the larger operand under the type's signedness.
#[inline]
pub fn max(ty: IntTy, a: u64, b: u64) -> u64 {
    if ty.value(a) > ty.value(b) {
        ty.trunc(a)
    } else {
        ty.trunc(b)
    }
}

/// `min.relu.s32`: `max(min(a, b), 0)`.
#[inline]
pub fn min_relu(ty: IntTy, a: u64, b: u64) -> u64 {
    relu_if(ty, true, min(ty, a, b))
}

/// `max.relu.s32`: `max(max(a, b), 0)`.
#[inline]
pub fn max_relu(ty: IntTy, a: u64, b: u64) -> u64 {
    relu_if(ty, true, max(ty, a, b))
}

// ---------------------------------------------------------------------------------------------------------
// Bit manipulation
// ---------------------------------------------------------------------------------------------------------

/// `popc.b32`/`popc.b64`: number of one bits in the low `bits` of `a` (result is `.u32`).
#[inline]
pub fn popc(bits: u32, a: u64) -> u64 {
    (a & width_mask(bits)).count_ones() as u64
}

/// `clz.b32`/`clz.b64`: leading zeros of the `bits`-wide value (`bits` for zero; result is `.u32`).
#[inline]
pub fn clz(bits: u32, a: u64) -> u64 {
    let x = a & width_mask(bits);
    (x.leading_zeros() - (64 - bits.min(64))) as u64
}

/// `brev.b32`/`brev.b64`: bit reversal of the low `bits`.
#[inline]
pub fn brev(bits: u32, a: u64) -> u64 {
    let b = bits.clamp(1, 64);
    (a & width_mask(b)).reverse_bits() >> (64 - b)
}

/// `bfind{.shiftamt}.type` (`.u32 .u64 .s32 .s64`): position of the most significant non-sign bit, or
/// `0xFFFF_FFFF` if there is none; with `shiftamt`, the left shift that moves it to the msb instead.
#[inline]
pub fn bfind(ty: IntTy, shiftamt: bool, a: u64) -> u64 {
    let bits = ty.bits();
    let mut x = ty.trunc(a);
    if ty.signed() && (x >> (bits - 1)) & 1 == 1 {
        x = ty.trunc(!x);
    }
    if x == 0 {
        return 0xFFFF_FFFF;
    }
    let pos = 63 - x.leading_zeros() as u64;
    if shiftamt {
        (bits as u64 - 1) - pos
    } else {
        pos
    }
}

/// `bfe.type` (`.u32 .u64 .s32 .s64`): extract `len = c & 0xff` bits starting at `pos = b & 0xff`, zero- or
/// sign-extended. Per PTX: a zero length gives 0; bits beyond the msb read as the sign bit, which for signed
/// types is `a[min(pos+len-1, msb)]` and for unsigned types is 0.
#[inline]
pub fn bfe(ty: IntTy, a: u64, b: u64, c: u64) -> u64 {
    let bits = ty.bits() as u64;
    let msb = bits - 1;
    let pos = b & 0xFF;
    let len = c & 0xFF;
    let a = ty.trunc(a);
    let sbit = ty.signed() && len != 0 && (a >> (pos + len - 1).min(msb)) & 1 == 1;
    let fill = if sbit { u64::MAX } else { 0 };
    if pos > msb {
        return ty.trunc(fill);
    }
    let valid = len.min(bits - pos) as u32; // field bits that exist in `a`
    let m = width_mask(valid);
    ty.trunc(((a >> pos) & m) | (fill & !m))
}

/// `bfi.b32`/`bfi.b64`: insert the low `len = d & 0xff` bits of `a` into `b` at `pos = c & 0xff`. A zero
/// length or a start beyond the msb returns `b`; a field running past the msb is cut off.
#[inline]
pub fn bfi(bits: u32, a: u64, b: u64, c: u64, d: u64) -> u64 {
    let bits = bits.min(64);
    let w = bits as u64;
    let pos = c & 0xFF;
    let len = d & 0xFF;
    let b = b & width_mask(bits);
    if len == 0 || pos >= w {
        return b;
    }
    let n = len.min(w - pos) as u32;
    let m = width_mask(n) << pos;
    (b & !m) | ((a << pos) & m)
}

/// `fns.b32`: position of the `offset`-th set bit of `mask` counting from `base` (upwards for a positive,
/// downwards for a negative offset; offset 0 tests bit `base`), or `0xFFFF_FFFF` if none.
///
/// PTX leaves `base > 31` undefined; we return `0xFFFF_FFFF` for it.
#[inline]
pub fn fns(mask: u64, base: u64, offset: u64) -> u64 {
    let mask = mask as u32;
    let offset = offset as u32 as i32;
    let base = base as u32;
    if base > 31 {
        return 0xFFFF_FFFF;
    }
    if offset == 0 {
        return if (mask >> base) & 1 == 1 { base as u64 } else { 0xFFFF_FFFF };
    }
    let mut count = offset.unsigned_abs() - 1;
    if offset > 0 {
        let mut m = mask & (u32::MAX << base);
        while m != 0 {
            let p = m.trailing_zeros();
            if count == 0 {
                return p as u64;
            }
            count -= 1;
            m &= m - 1;
        }
    } else {
        let mut m = mask & (u32::MAX >> (31 - base));
        while m != 0 {
            let p = 31 - m.leading_zeros();
            if count == 0 {
                return p as u64;
            }
            count -= 1;
            m &= !(1u32 << p);
        }
    }
    0xFFFF_FFFF
}

/// Shift-amount handling of `shf`, `szext` and `bmsk`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ClampWrap {
    /// `.clamp`: amounts past the limit saturate.
    Clamp,
    /// `.wrap`: amounts are taken modulo 32.
    Wrap,
}

/// `szext.mode.{u32,s32}`: sign- (`signed`) or zero-extend the low `N = b` bits of `a` to 32 bits. `N = 0`
/// gives 0; `N ≥ 32` returns `a` with `.clamp` and uses `N mod 32` with `.wrap` (PTX pseudo-code).
#[inline]
pub fn szext(mode: ClampWrap, signed: bool, a: u64, b: u64) -> u64 {
    let a = a as u32;
    let b = b as u32;
    let b1 = b & 0x1F;
    let too_large = b >= 32 && mode == ClampWrap::Clamp;
    let mask = if too_large { 0 } else { u32::MAX << b1 };
    let sign_pos = b1.wrapping_sub(1) & 0x1F;
    let sign_bit = !(b1 == 0 || too_large || !signed) && (a >> sign_pos) & 1 == 1;
    ((a & !mask) | if sign_bit { mask } else { 0 }) as u64
}

/// `bmsk.mode.b32`: a mask of `b` ones starting at bit `a` (PTX pseudo-code, including its `.clamp`/`.wrap`
/// overflow rules).
#[inline]
pub fn bmsk(mode: ClampWrap, a: u64, b: u64) -> u64 {
    let (a, b) = (a as u32, b as u32);
    let a1 = a & 0x1F;
    let mut mask0 = u32::MAX << a1;
    let b1 = b & 0x1F;
    let sum = a1 + b1;
    let mut mask1 = if sum >= 32 { 0 } else { u32::MAX << sum };
    let mut pos_ovf = false;
    let mut width_ovf = false;
    if mode == ClampWrap::Clamp {
        if a >= 32 {
            pos_ovf = true;
            mask0 = 0;
        }
        if b >= 32 {
            width_ovf = true;
        }
    }
    if sum >= 32 || pos_ovf || width_ovf {
        mask1 = 0;
    } else if b1 == 0 {
        mask1 = u32::MAX;
    }
    (mask0 & !mask1) as u64
}

/// Sign- or zero-extends each byte (or halfword) lane.
#[inline]
fn ext_lane(x: u64, lane: u32, bits: u32, signed: bool) -> i64 {
    let v = (x >> (lane * bits)) & width_mask(bits);
    if signed {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    } else {
        v as i64
    }
}

/// `dp4a.atype.btype`: `c + Σ a.byte[i] · b.byte[i]` over four byte lanes (each lane sign- or
/// zero-extended per its type), wrapping in 32 bits.
#[inline]
pub fn dp4a(a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let mut d = c as u32 as i64;
    for i in 0..4 {
        d = d.wrapping_add(ext_lane(a, i, 8, a_signed) * ext_lane(b, i, 8, b_signed));
    }
    d as u64 & 0xFFFF_FFFF
}

/// `dp2a.mode.atype.btype`: `c + Σ a.half[i] · b.byte[sel + i]` with `sel` = 0 (`.lo`) or 2 (`.hi`),
/// wrapping in 32 bits.
#[inline]
pub fn dp2a(hi: bool, a_signed: bool, b_signed: bool, a: u64, b: u64, c: u64) -> u64 {
    let sel = if hi { 2 } else { 0 };
    let mut d = c as u32 as i64;
    for i in 0..2 {
        d = d.wrapping_add(ext_lane(a, i, 16, a_signed) * ext_lane(b, sel + i, 8, b_signed));
    }
    d as u64 & 0xFFFF_FFFF
}

// ---------------------------------------------------------------------------------------------------------
// Logic and shifts
// ---------------------------------------------------------------------------------------------------------

/// `and.bN` / `and.pred`.
#[inline]
pub fn and(bits: u32, a: u64, b: u64) -> u64 {
    a & b & width_mask(bits)
}

/// `or.bN` / `or.pred`.
#[inline]
pub fn or(bits: u32, a: u64, b: u64) -> u64 {
    (a | b) & width_mask(bits)
}

/// `xor.bN` / `xor.pred`.
#[inline]
pub fn xor(bits: u32, a: u64, b: u64) -> u64 {
    (a ^ b) & width_mask(bits)
}

/// `not.bN` / `not.pred`: bitwise complement within the width (so `not.pred 1 = 0`).
#[inline]
pub fn not(bits: u32, a: u64) -> u64 {
    !a & width_mask(bits)
}

/// `cnot.bN`: 1 if `a` is zero, else 0.
#[inline]
pub fn cnot(bits: u32, a: u64) -> u64 {
    (a & width_mask(bits) == 0) as u64
}

/// `lop3.b32` (any width up to 64): bit `i` of the result is `lut[a_i·4 + b_i·2 + c_i]`, i.e. the PTX
/// truth-table encoding where `a = 0xF0`, `b = 0xCC`, `c = 0xAA`.
#[inline]
pub fn lop3(bits: u32, a: u64, b: u64, c: u64, lut: u8) -> u64 {
    let mut r = 0u64;
    for i in 0..8u32 {
        let take = 0u64.wrapping_sub(((lut >> i) & 1) as u64);
        let sa = if i & 4 != 0 { a } else { !a };
        let sb = if i & 2 != 0 { b } else { !b };
        let sc = if i & 1 != 0 { c } else { !c };
        r |= take & sa & sb & sc;
    }
    r & width_mask(bits)
}

/// `shl.bN`: left shift by the unsigned 32-bit amount `b`; amounts ≥ `bits` give 0.
#[inline]
pub fn shl(bits: u32, a: u64, b: u64) -> u64 {
    let bits = bits.min(64);
    let n = b as u32;
    if n >= bits {
        0
    } else {
        (a << n) & width_mask(bits)
    }
}

/// `shr.type`: right shift by the unsigned 32-bit amount `b`, zero fill for unsigned (and `.bN`, pass the
/// unsigned type) and sign fill for signed types. Amounts ≥ the width clamp to the width (0 or all sign).
#[inline]
pub fn shr(ty: IntTy, a: u64, b: u64) -> u64 {
    let n = (b as u32).min(ty.bits());
    if ty.signed() {
        ty.trunc((ty.sext(a) >> n.min(63)) as u64)
    } else if n >= 64 {
        0
    } else {
        ty.trunc(a) >> n
    }
}

/// `shf.l.mode.b32`: the upper 32 bits of `[b:a] << n`, `n = min(c, 32)` (`.clamp`) or `c & 31` (`.wrap`).
#[inline]
pub fn shf_l(mode: ClampWrap, a: u64, b: u64, c: u64) -> u64 {
    let n = shf_amount(mode, c);
    let v = ((b as u32 as u64) << 32) | a as u32 as u64;
    ((v << n) >> 32) & 0xFFFF_FFFF
}

/// `shf.r.mode.b32`: the lower 32 bits of `[b:a] >> n`, `n = min(c, 32)` (`.clamp`) or `c & 31` (`.wrap`).
#[inline]
pub fn shf_r(mode: ClampWrap, a: u64, b: u64, c: u64) -> u64 {
    let n = shf_amount(mode, c);
    let v = ((b as u32 as u64) << 32) | a as u32 as u64;
    (v >> n) & 0xFFFF_FFFF
}

#[inline]
fn shf_amount(mode: ClampWrap, c: u64) -> u32 {
    let c = c as u32;
    match mode {
        ClampWrap::Clamp => c.min(32),
        ClampWrap::Wrap => c & 31,
    }
}

/// The byte-selection mode of `prmt.b32`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum PrmtMode {
    /// No mode: four 4-bit selectors in `c[15:0]`; selector bit 3 replicates the selected byte's sign.
    #[default]
    Default,
    /// `.f4e`: forward 4 extract.
    F4e,
    /// `.b4e`: backward 4 extract.
    B4e,
    /// `.rc8`: replicate 8.
    Rc8,
    /// `.ecl`: edge clamp left.
    Ecl,
    /// `.ecr`: edge clamp right.
    Ecr,
    /// `.rc16`: replicate 16.
    Rc16,
}

/// `prmt.b32{.mode}`: pick four bytes from the eight bytes of `{b, a}` (`a` holds bytes 0–3, `b` bytes 4–7).
#[inline]
pub fn prmt(mode: PrmtMode, a: u64, b: u64, c: u64) -> u64 {
    let src = ((b as u32 as u64) << 32) | a as u32 as u64;
    let c = c as u32;
    let s = c & 3;
    let mut d = 0u64;
    for i in 0..4u32 {
        let sel = match mode {
            PrmtMode::Default => (c >> (4 * i)) & 0xF,
            PrmtMode::F4e => (s + i) & 7,
            PrmtMode::B4e => (s + 8 - i) & 7,
            PrmtMode::Rc8 => s,
            PrmtMode::Ecl => i.max(s),
            PrmtMode::Ecr => i.min(s),
            PrmtMode::Rc16 => ((s & 1) << 1) | (i & 1),
        };
        let byte = (src >> ((sel & 7) * 8)) & 0xFF;
        let byte = if sel & 8 != 0 { 0u64.wrapping_sub(byte >> 7) & 0xFF } else { byte };
        d |= byte << (8 * i);
    }
    d
}

// ---------------------------------------------------------------------------------------------------------
// Extended-precision carry chains
// ---------------------------------------------------------------------------------------------------------

/// `add.cc` (`carry_in = false`), `addc` and `addc.cc` (`carry_in = CC.CF`): `a + b + carry_in` and the
/// carry out of the unsigned `n`-bit addition (identical for signed and unsigned types).
#[inline]
pub fn add_cc(ty: IntTy, a: u64, b: u64, carry_in: bool) -> (u64, bool) {
    let m = ty.mask() as u128;
    let s = (a as u128 & m) + (b as u128 & m) + carry_in as u128;
    ((s & m) as u64, s > m)
}

/// `sub.cc` (`borrow_in = false`), `subc` and `subc.cc` (`borrow_in = CC.CF`): `a - (b + borrow_in)` and the
/// borrow out of the unsigned `n`-bit subtraction, which PTX writes to `CC.CF`.
#[inline]
pub fn sub_cc(ty: IntTy, a: u64, b: u64, borrow_in: bool) -> (u64, bool) {
    let m = ty.mask() as u128;
    let x = a as u128 & m;
    let y = (b as u128 & m) + borrow_in as u128;
    (ty.trunc(x.wrapping_sub(y) as u64), x < y)
}

/// `mad.lo.cc`/`mad.hi.cc` (`carry_in = false`), `madc.{lo,hi}{.cc}` (`carry_in = CC.CF`): the low (`hi =
/// false`) or high half of `a·b` plus `c` plus `carry_in`, and the carry out of that addition.
#[inline]
pub fn mad_cc(ty: IntTy, hi: bool, a: u64, b: u64, c: u64, carry_in: bool) -> (u64, bool) {
    let t = if hi { mul_hi(ty, a, b) } else { mul_lo(ty, a, b) };
    add_cc(ty, t, c, carry_in)
}
