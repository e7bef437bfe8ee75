//! Small `Copy` enums that name the operand types and modifiers the semantic functions take.
//!
//! They are deliberately tiny and independent of the IR so the simulator core can decode an instruction once
//! and call the per-lane functions with plain values. `TryFrom` conversions from
//! [`reconverge_ir::ScalarType`] and [`reconverge_ir::KnownModifier`] are provided; they fail with
//! [`UnsupportedType`] / [`UnsupportedModifier`] for anything that has no meaning here.

use std::fmt;

use reconverge_ir::{KnownModifier, ScalarType};

/// A PTX integer type (`.u8` .. `.s64`).
///
/// Bit types (`.b8` .. `.b64`) convert to the unsigned type of the same width: every instruction that accepts
/// a `.bN` type treats it as unsigned (zero fill on `shr`, unsigned compare for `eq`/`ne`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum IntTy {
    /// `.u8`
    U8,
    /// `.u16`
    U16,
    /// `.u32`
    U32,
    /// `.u64`
    U64,
    /// `.s8`
    S8,
    /// `.s16`
    S16,
    /// `.s32`
    S32,
    /// `.s64`
    S64,
}

impl IntTy {
    /// Every integer type.
    pub const ALL: [IntTy; 8] =
        [IntTy::U8, IntTy::U16, IntTy::U32, IntTy::U64, IntTy::S8, IntTy::S16, IntTy::S32, IntTy::S64];

    /// Width in bits (8, 16, 32 or 64).
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            IntTy::U8 | IntTy::S8 => 8,
            IntTy::U16 | IntTy::S16 => 16,
            IntTy::U32 | IntTy::S32 => 32,
            IntTy::U64 | IntTy::S64 => 64,
        }
    }

    /// Whether the type is signed.
    #[inline]
    pub const fn signed(self) -> bool {
        matches!(self, IntTy::S8 | IntTy::S16 | IntTy::S32 | IntTy::S64)
    }

    /// The unsigned type of the same width.
    #[inline]
    pub const fn to_unsigned(self) -> IntTy {
        match self {
            IntTy::U8 | IntTy::S8 => IntTy::U8,
            IntTy::U16 | IntTy::S16 => IntTy::U16,
            IntTy::U32 | IntTy::S32 => IntTy::U32,
            IntTy::U64 | IntTy::S64 => IntTy::U64,
        }
    }

    /// The signed type of the same width.
    #[inline]
    pub const fn to_signed(self) -> IntTy {
        match self {
            IntTy::U8 | IntTy::S8 => IntTy::S8,
            IntTy::U16 | IntTy::S16 => IntTy::S16,
            IntTy::U32 | IntTy::S32 => IntTy::S32,
            IntTy::U64 | IntTy::S64 => IntTy::S64,
        }
    }

    /// The unsigned (`signed == false`) or signed type of `bits` width, if `bits` is 8, 16, 32 or 64.
    #[inline]
    pub const fn from_bits(bits: u32, signed: bool) -> Option<IntTy> {
        Some(match (bits, signed) {
            (8, false) => IntTy::U8,
            (16, false) => IntTy::U16,
            (32, false) => IntTy::U32,
            (64, false) => IntTy::U64,
            (8, true) => IntTy::S8,
            (16, true) => IntTy::S16,
            (32, true) => IntTy::S32,
            (64, true) => IntTy::S64,
            _ => return None,
        })
    }

    /// All-ones mask of the type's width.
    #[inline]
    pub const fn mask(self) -> u64 {
        width_mask(self.bits())
    }

    /// Truncates `x` to the type's width (the canonical zero-extended register form).
    #[inline]
    pub const fn trunc(self, x: u64) -> u64 {
        x & self.mask()
    }

    /// Sign-extends the low `bits()` of `x` to an `i64`.
    #[inline]
    pub const fn sext(self, x: u64) -> i64 {
        let sh = 64 - self.bits();
        ((x << sh) as i64) >> sh
    }

    /// The value of the low `bits()` of `x` under this type's signedness, widened to `i128`.
    #[inline]
    pub const fn value(self, x: u64) -> i128 {
        if self.signed() {
            self.sext(x) as i128
        } else {
            self.trunc(x) as i128
        }
    }

    /// The value of the low `bits()` of `x` under this type's signedness, widened to `i64` (an unsigned
    /// 64-bit value above `i64::MAX` wraps; use [`IntTy::value`] when that matters).
    #[inline]
    pub const fn value64(self, x: u64) -> i64 {
        if self.signed() {
            self.sext(x)
        } else {
            self.trunc(x) as i64
        }
    }

    /// The smallest value of the type.
    #[inline]
    pub const fn min_value(self) -> i128 {
        if self.signed() {
            -(1i128 << (self.bits() - 1))
        } else {
            0
        }
    }

    /// The largest value of the type.
    #[inline]
    pub const fn max_value(self) -> i128 {
        if self.signed() {
            (1i128 << (self.bits() - 1)) - 1
        } else {
            (1i128 << self.bits()) - 1
        }
    }

    /// Clamps a mathematical value into the type's range and returns its bit pattern (`.sat`).
    #[inline]
    pub const fn saturate(self, v: i128) -> u64 {
        let lo = self.min_value();
        let hi = self.max_value();
        let c = if v < lo {
            lo
        } else if v > hi {
            hi
        } else {
            v
        };
        self.trunc(c as u64)
    }

    /// The PTX spelling without the dot.
    pub const fn as_str(self) -> &'static str {
        match self {
            IntTy::U8 => "u8",
            IntTy::U16 => "u16",
            IntTy::U32 => "u32",
            IntTy::U64 => "u64",
            IntTy::S8 => "s8",
            IntTy::S16 => "s16",
            IntTy::S32 => "s32",
            IntTy::S64 => "s64",
        }
    }
}

/// All-ones mask of `bits` width (`bits` ≥ 64 gives all 64 ones; 0 gives 0).
#[inline]
pub const fn width_mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// A PTX scalar floating-point type.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FloatTy {
    /// `.f16`: IEEE binary16 (1.5.10).
    F16,
    /// `.bf16`: bfloat16 (1.8.7).
    Bf16,
    /// `.f32`: IEEE binary32 (1.8.23).
    F32,
    /// `.f64`: IEEE binary64 (1.11.52).
    F64,
}

impl FloatTy {
    /// Every float type.
    pub const ALL: [FloatTy; 4] = [FloatTy::F16, FloatTy::Bf16, FloatTy::F32, FloatTy::F64];

    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            FloatTy::F16 | FloatTy::Bf16 => 16,
            FloatTy::F32 => 32,
            FloatTy::F64 => 64,
        }
    }

    /// Number of explicit fraction (mantissa) bits.
    #[inline]
    pub const fn frac_bits(self) -> u32 {
        match self {
            FloatTy::F16 => 10,
            FloatTy::Bf16 => 7,
            FloatTy::F32 => 23,
            FloatTy::F64 => 52,
        }
    }

    /// Number of exponent bits.
    #[inline]
    pub const fn exp_bits(self) -> u32 {
        match self {
            FloatTy::F16 => 5,
            FloatTy::Bf16 | FloatTy::F32 => 8,
            FloatTy::F64 => 11,
        }
    }

    /// All-ones mask of the type's width.
    #[inline]
    pub const fn mask(self) -> u64 {
        width_mask(self.bits())
    }

    /// The sign bit.
    #[inline]
    pub const fn sign_bit(self) -> u64 {
        1u64 << (self.bits() - 1)
    }

    /// Mask of the exponent field.
    #[inline]
    pub const fn exp_mask(self) -> u64 {
        width_mask(self.exp_bits()) << self.frac_bits()
    }

    /// Mask of the fraction field.
    #[inline]
    pub const fn frac_mask(self) -> u64 {
        width_mask(self.frac_bits())
    }

    /// Bits of `+Inf`.
    #[inline]
    pub const fn inf(self) -> u64 {
        self.exp_mask()
    }

    /// Bits of the largest finite value.
    #[inline]
    pub const fn max_finite(self) -> u64 {
        self.exp_mask() - 1
    }

    /// Bits of `+1.0`.
    #[inline]
    pub const fn one(self) -> u64 {
        (width_mask(self.exp_bits() - 1)) << self.frac_bits()
    }

    /// The canonical NaN NVIDIA hardware produces for this type: all exponent and fraction bits set, sign
    /// clear (`0x7FFF`, `0x7FFF`, `0x7FFF_FFFF`, `0x7FFF_FFFF_FFFF_FFFF`).
    #[inline]
    pub const fn canonical_nan(self) -> u64 {
        self.mask() >> 1
    }

    /// Whether `x` (low `bits()` used) is a NaN.
    #[inline]
    pub const fn is_nan(self, x: u64) -> bool {
        (x & (self.mask() >> 1)) > self.exp_mask()
    }

    /// Whether `x` is ±Inf.
    #[inline]
    pub const fn is_inf(self, x: u64) -> bool {
        (x & (self.mask() >> 1)) == self.exp_mask()
    }

    /// Whether `x` is ±0.
    #[inline]
    pub const fn is_zero(self, x: u64) -> bool {
        (x & (self.mask() >> 1)) == 0
    }

    /// Whether `x` is a (nonzero) subnormal.
    #[inline]
    pub const fn is_subnormal(self, x: u64) -> bool {
        (x & self.exp_mask()) == 0 && (x & self.frac_mask()) != 0
    }

    /// Whether the sign bit of `x` is set.
    #[inline]
    pub const fn is_neg(self, x: u64) -> bool {
        (x & self.sign_bit()) != 0
    }

    /// The PTX spelling without the dot.
    pub const fn as_str(self) -> &'static str {
        match self {
            FloatTy::F16 => "f16",
            FloatTy::Bf16 => "bf16",
            FloatTy::F32 => "f32",
            FloatTy::F64 => "f64",
        }
    }
}

/// An integer or floating-point type: the operand type of `cvt`, `setp` and `set`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NumTy {
    /// An integer (or bit) type.
    Int(IntTy),
    /// A floating-point type.
    Float(FloatTy),
}

impl NumTy {
    /// Width in bits.
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            NumTy::Int(t) => t.bits(),
            NumTy::Float(t) => t.bits(),
        }
    }
}

/// Floating-point rounding modifier (`.rn .rz .rm .rp`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Rounding {
    /// `.rn`: to nearest, ties to even (the default).
    #[default]
    Rn,
    /// `.rz`: towards zero.
    Rz,
    /// `.rm`: towards −∞.
    Rm,
    /// `.rp`: towards +∞.
    Rp,
}

impl Rounding {
    /// All four modes.
    pub const ALL: [Rounding; 4] = [Rounding::Rn, Rounding::Rz, Rounding::Rm, Rounding::Rp];
}

/// Integer rounding modifier (`.rni .rzi .rmi .rpi`) used by float→integer `cvt` and by same-type
/// float→float `cvt` that rounds to an integral value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum IntRounding {
    /// `.rni`: to nearest integer, ties to even.
    Rni,
    /// `.rzi`: towards zero (truncation; what a C cast does).
    #[default]
    Rzi,
    /// `.rmi`: towards −∞ (floor).
    Rmi,
    /// `.rpi`: towards +∞ (ceil).
    Rpi,
}

impl IntRounding {
    /// All four modes.
    pub const ALL: [IntRounding; 4] = [IntRounding::Rni, IntRounding::Rzi, IntRounding::Rmi, IntRounding::Rpi];
}

/// A `setp`/`set` comparison operator.
///
/// For integers, `eq ne lt le gt ge` use the type's signedness and `lo ls hi hs` are always unsigned. For
/// floats, `eq ne lt le gt ge` are ordered (false if either operand is NaN), `equ neu ltu leu gtu geu` are
/// unordered (true if either operand is NaN), `num` is "neither is NaN" and `nan` is "either is NaN".
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    /// `.eq`
    Eq,
    /// `.ne`
    Ne,
    /// `.lt`
    Lt,
    /// `.le`
    Le,
    /// `.gt`
    Gt,
    /// `.ge`
    Ge,
    /// `.lo` (unsigned `<`)
    Lo,
    /// `.ls` (unsigned `<=`)
    Ls,
    /// `.hi` (unsigned `>`)
    Hi,
    /// `.hs` (unsigned `>=`)
    Hs,
    /// `.equ`
    Equ,
    /// `.neu`
    Neu,
    /// `.ltu`
    Ltu,
    /// `.leu`
    Leu,
    /// `.gtu`
    Gtu,
    /// `.geu`
    Geu,
    /// `.num`
    Num,
    /// `.nan`
    Nan,
}

impl CmpOp {
    /// Every operator.
    pub const ALL: [CmpOp; 18] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Lo,
        CmpOp::Ls,
        CmpOp::Hi,
        CmpOp::Hs,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];
}

/// The combining operator of `setp.cmp.bool` / `set.cmp.bool`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BoolOp {
    /// `.and`
    And,
    /// `.or`
    Or,
    /// `.xor`
    Xor,
}

/// Rounding, flush-to-zero and saturation modifiers of a floating-point instruction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct FloatMode {
    /// Rounding mode (`.rn` when the instruction has none).
    pub rnd: Rounding,
    /// `.ftz`: flush subnormal inputs and results to a sign-preserving zero. PTX has it on `.f32`, `.f16` and
    /// `.f16x2`; it is honoured for every type except `.f64` (where it is ignored).
    pub ftz: bool,
    /// `.sat`: clamp the result to `[0.0, 1.0]`, NaN becomes `+0.0`.
    pub sat: bool,
}

impl FloatMode {
    /// Round to nearest even, no `.ftz`, no `.sat`.
    pub const RN: FloatMode = FloatMode { rnd: Rounding::Rn, ftz: false, sat: false };

    /// The given rounding mode, no `.ftz`, no `.sat`.
    #[inline]
    pub const fn new(rnd: Rounding) -> FloatMode {
        FloatMode { rnd, ftz: false, sat: false }
    }

    /// Returns a copy with `.ftz` set to `ftz`.
    #[inline]
    pub const fn with_ftz(self, ftz: bool) -> FloatMode {
        FloatMode { ftz, ..self }
    }

    /// Returns a copy with `.sat` set to `sat`.
    #[inline]
    pub const fn with_sat(self, sat: bool) -> FloatMode {
        FloatMode { sat, ..self }
    }
}

/// A `ScalarType` with no meaning for the requested semantic type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UnsupportedType(pub ScalarType);

impl fmt::Display for UnsupportedType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "type .{} is not supported here", self.0)
    }
}

impl std::error::Error for UnsupportedType {}

/// A `KnownModifier` that does not name the requested semantic modifier.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct UnsupportedModifier(pub KnownModifier);

impl fmt::Display for UnsupportedModifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "modifier .{} is not supported here", self.0)
    }
}

impl std::error::Error for UnsupportedModifier {}

impl TryFrom<ScalarType> for IntTy {
    type Error = UnsupportedType;

    /// `.uN`/`.sN` map to themselves, `.bN` (N ≤ 64) to `.uN`.
    fn try_from(t: ScalarType) -> Result<IntTy, UnsupportedType> {
        Ok(match t {
            ScalarType::U8 | ScalarType::B8 => IntTy::U8,
            ScalarType::U16 | ScalarType::B16 => IntTy::U16,
            ScalarType::U32 | ScalarType::B32 => IntTy::U32,
            ScalarType::U64 | ScalarType::B64 => IntTy::U64,
            ScalarType::S8 => IntTy::S8,
            ScalarType::S16 => IntTy::S16,
            ScalarType::S32 => IntTy::S32,
            ScalarType::S64 => IntTy::S64,
            other => return Err(UnsupportedType(other)),
        })
    }
}

impl TryFrom<ScalarType> for FloatTy {
    type Error = UnsupportedType;

    /// `.f16 .bf16 .f32 .f64`; packed and 8-bit float types are rejected.
    fn try_from(t: ScalarType) -> Result<FloatTy, UnsupportedType> {
        Ok(match t {
            ScalarType::F16 => FloatTy::F16,
            ScalarType::Bf16 => FloatTy::Bf16,
            ScalarType::F32 => FloatTy::F32,
            ScalarType::F64 => FloatTy::F64,
            other => return Err(UnsupportedType(other)),
        })
    }
}

impl TryFrom<ScalarType> for NumTy {
    type Error = UnsupportedType;

    /// Integer and bit types become [`NumTy::Int`], scalar floats [`NumTy::Float`].
    fn try_from(t: ScalarType) -> Result<NumTy, UnsupportedType> {
        match IntTy::try_from(t) {
            Ok(i) => Ok(NumTy::Int(i)),
            Err(_) => FloatTy::try_from(t).map(NumTy::Float),
        }
    }
}

impl TryFrom<KnownModifier> for Rounding {
    type Error = UnsupportedModifier;

    fn try_from(m: KnownModifier) -> Result<Rounding, UnsupportedModifier> {
        Ok(match m {
            KnownModifier::Rn => Rounding::Rn,
            KnownModifier::Rz => Rounding::Rz,
            KnownModifier::Rm => Rounding::Rm,
            KnownModifier::Rp => Rounding::Rp,
            other => return Err(UnsupportedModifier(other)),
        })
    }
}

impl TryFrom<KnownModifier> for IntRounding {
    type Error = UnsupportedModifier;

    fn try_from(m: KnownModifier) -> Result<IntRounding, UnsupportedModifier> {
        Ok(match m {
            KnownModifier::Rni => IntRounding::Rni,
            KnownModifier::Rzi => IntRounding::Rzi,
            KnownModifier::Rmi => IntRounding::Rmi,
            KnownModifier::Rpi => IntRounding::Rpi,
            other => return Err(UnsupportedModifier(other)),
        })
    }
}

impl TryFrom<KnownModifier> for CmpOp {
    type Error = UnsupportedModifier;

    fn try_from(m: KnownModifier) -> Result<CmpOp, UnsupportedModifier> {
        Ok(match m {
            KnownModifier::Eq => CmpOp::Eq,
            KnownModifier::Ne => CmpOp::Ne,
            KnownModifier::Lt => CmpOp::Lt,
            KnownModifier::Le => CmpOp::Le,
            KnownModifier::Gt => CmpOp::Gt,
            KnownModifier::Ge => CmpOp::Ge,
            KnownModifier::Lo => CmpOp::Lo,
            KnownModifier::Ls => CmpOp::Ls,
            KnownModifier::Hi => CmpOp::Hi,
            KnownModifier::Hs => CmpOp::Hs,
            KnownModifier::Equ => CmpOp::Equ,
            KnownModifier::Neu => CmpOp::Neu,
            KnownModifier::Ltu => CmpOp::Ltu,
            KnownModifier::Leu => CmpOp::Leu,
            KnownModifier::Gtu => CmpOp::Gtu,
            KnownModifier::Geu => CmpOp::Geu,
            KnownModifier::Num => CmpOp::Num,
            KnownModifier::Nan => CmpOp::Nan,
            other => return Err(UnsupportedModifier(other)),
        })
    }
}

impl TryFrom<KnownModifier> for BoolOp {
    type Error = UnsupportedModifier;

    fn try_from(m: KnownModifier) -> Result<BoolOp, UnsupportedModifier> {
        Ok(match m {
            KnownModifier::And => BoolOp::And,
            KnownModifier::Or => BoolOp::Or,
            KnownModifier::Xor => BoolOp::Xor,
            other => return Err(UnsupportedModifier(other)),
        })
    }
}
