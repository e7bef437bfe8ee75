//! Tensor-core instructions: `mma.sync.aligned`, `ldmatrix`, `stmatrix`, `movmatrix` and `wmma`.
//!
//! This documentation is the specification: `scripts/mma_oracle.py` implements it a second time (from this
//! text, not from the code) and `tests/mma_oracle.rs` asks for bit-for-bit agreement. Section numbers are
//! those of the PTX ISA 9.0 ("Warp Level Matrix Multiply-Accumulate Instructions", 9.7.14).
//!
//! # `mma.sync.aligned` ([`mma`])
//! The executor gathers the 32 lanes' registers of each operand, lane-major (lane 0's registers first), and
//! calls [`mma`]; it computes `D = A·B + C` (A is M×K, B is K×N, C and D are M×N) and writes D's
//! registers. A register value is a zero-extended bit pattern in a `u64` (bits above the register's width
//! are ignored on input and zero on output); packed registers hold their lowest-numbered element in the low
//! bits (an `.f16x2` holds element `2r` in bits 0..16 and `2r + 1` in bits 16..32; a `.b32` of `.s8`/`.u8`
//! holds element `4r + q` in bits `8q..8q + 8`). `.f64` operands use 64-bit registers, all others 32-bit
//! registers. Only `.row.col` exists for these shapes (A row-major, B column-major), so no layout argument
//! is taken.
//!
//! Combinations ([`MmaKind::is_valid`]), as PTX ISA 8.x and `ptxas` for sm_80/sm_90 accept them:
//!
//! | shape | A, B | C = D | modifiers |
//! | --- | --- | --- | --- |
//! | `m16n8k8`, `m16n8k16` | `.f16` | `.f16` or `.f32` (C and D the same: `ptxas` rejects mixing them) | |
//! | `m16n8k8`, `m16n8k16` | `.bf16` | `.f32` | |
//! | `m16n8k4`, `m16n8k8` | `.tf32` | `.f32` | |
//! | `m8n8k4` | `.f64` | `.f64` | `.rn` (default), `.rz`, `.rm`, `.rp` |
//! | `m8n8k16`, `m16n8k16`, `m16n8k32` | `.s8`/`.u8` (each independently) | `.s32` | `.satfinite` |
//!
//! Not implemented (`is_valid` is false): `m8n8k4` with `.f16` (sm_70's four quad-pair products),
//! `.f64` `m16n8k4`/`m16n8k8`/`m16n8k16` (sm_90), `.e4m3`/`.e5m2` and the other 8/6/4-bit float types,
//! `.s4`/`.u4`, `.b1`, block scaling and sparse `mma.sp`.
//!
//! ## Fragment layouts ([`mma_element`])
//! With `g = laneid >> 2` ("groupID") and `t = laneid % 4` ("threadID_in_group"), element `i` of a lane's
//! fragment (`a_i`, `b_i`, `c_i`, numbered low to high through the lane's registers) is the matrix element
//! at (row, col) below, exactly as the ISA states it:
//!
//! - 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type" (`.f16`/`.bf16`):
//!   A (4 regs, a0..a7): row `g` for `i < 2 || 4 <= i < 6`, else `g + 8`; col `2t + (i & 1)` for `i < 4`,
//!   else `2t + (i & 1) + 8`. B (2 regs, b0..b3): row `2t + (i & 1)` for `i < 2`, else `2t + (i & 1) + 8`;
//!   col `g`.
//! - 9.7.14.5.7 "Matrix Fragments for mma.m16n8k8": `.f16`/`.bf16` A (2 regs, a0..a3): row `g` for a0, a1,
//!   `g + 8` for a2, a3; col `2t + (i & 1)`. B (1 reg, b0, b1): row `2t + i`; col `g`. `.tf32` A (4 regs):
//!   row `g` for a0, a2, `g + 8` for a1, a3; col `t` for a0, a1, `t + 4` for a2, a3. B (2 regs): row `t`
//!   for b0, `t + 4` for b1; col `g`.
//! - 9.7.14.5.6 "Matrix Fragments for mma.m16n8k4" (`.tf32`): A (2 regs): row `g` for a0, `g + 8` for a1;
//!   col `t`. B (1 reg): row `t`; col `g`.
//! - 9.7.14.5.2 "Matrix Fragments for mma.m8n8k4 with .f64 floating point type": A (1 reg): row `g`, col
//!   `t`. B (1 reg): row `t`, col `g`. C (2 regs): row `g`, col `2t + i`.
//! - 9.7.14.5.3 "Matrix Fragments for mma.m8n8k16" (`.s8`/`.u8`): A (1 reg, a0..a3): row `g`, col
//!   `4t + i`. B (1 reg): row `4t + i`, col `g`. C (2 regs): row `g`, col `2t + i`.
//! - 9.7.14.5.9 "Matrix Fragments for mma.m16n8k16 with integer type": A (2 regs, a0..a7): row `g` for
//!   `i < 4`, else `g + 8`; col `4t + (i & 3)`. B (1 reg, b0..b3): row `4t + i`, col `g`.
//! - 9.7.14.5.10 "Matrix Fragments for mma.m16n8k32" (`.s8`/`.u8`): A (4 regs, a0..a15): row `g` for
//!   `i < 4 || 8 <= i < 12`, else `g + 8`; col `4t + (i & 3)` for `i < 8`, else `4t + (i & 3) + 16`.
//!   B (2 regs, b0..b7): row `4t + (i & 3)` for `i < 4`, else `4t + (i & 3) + 16`; col `g`.
//! - Accumulators of every `m16n8*` shape (`.f32`, `.s32`: 4 regs; `.f16`: 2 `.f16x2` regs; c0..c3): row
//!   `g` for `i < 2`, else `g + 8`; col `2t + (i & 1)`. Of `m8n8*` shapes: row `g`, col `2t + i`.
//!
//! ## Numerics (a model: NVIDIA documents no rounding order)
//! The ISA says only that products are "performed with at least single precision" (`.f16`) or "with
//! specified precision" (`.bf16`, `.tf32`), that accumulation is at least single (or, for `.f16` C and D,
//! half) precision, and that "the accumulation order, rounding and handling of subnormal inputs are
//! unspecified". This module defines:
//!
//! - **`.f16`, `.bf16`, `.tf32` operands**: every product `a[i][k]·b[k][j]` is exact (it is, in binary64,
//!   for these formats). `d[i][j]` is computed in binary64 arithmetic (round to nearest even at every step)
//!   as `s = p_0; s = s + p_1; …; s = s + p_{K-1}; s = s + c[i][j]` (increasing k, starting from the first
//!   product, not from +0.0, so a sum of −0.0 terms is −0.0), then `s` is rounded once, to nearest even,
//!   to the destination type (`.f32`, or `.f16` for `.f16` accumulators; overflow gives ±∞). Subnormal
//!   inputs and results are kept (no flushing).
//! - **`.tf32` operands** are `.f32` bit patterns whose low 13 fraction bits are ignored: the value is that
//!   of `bits & 0xFFFF_E000`. Taken literally, a NaN whose payload lies only in those 13 bits reads as ±∞.
//! - **`.f64`** (`m8n8k4`): a chain of IEEE fused multiply-adds in increasing k starting from C,
//!   `d = fma(a[i][3], b[3][j], fma(a[i][2], b[2][j], fma(a[i][1], b[1][j], fma(a[i][0], b[0][j], c))))`,
//!   each rounded in the instruction's rounding mode ("Precision of the element-wise multiplication and
//!   addition operation is identical to that of .f64 precision fused multiply-add").
//! - **NaN**: a NaN result is the destination type's canonical NaN (`0x7FFF`, `0x7FFF_FFFF`,
//!   `0x7FFF_FFFF_FFFF_FFFF`, as [`crate::float`] and [`crate::cvt`] return for the narrow types; for
//!   `.f64` no payload is propagated either, since the ISA does not say what the tensor core does).
//! - **Integers**: `.s8`/`.u8` elements are sign- or zero-extended, the products are exact and summed in
//!   i64, C (`.s32`) is added, and the result is wrapped to 32 bits, or with `.satfinite` clamped to
//!   `[i32::MIN, i32::MAX]` ("on overflow, the accumulated value is limited to the range MIN_INT32..
//!   MAX_INT32 … If .satfinite is not specified, the accumulated value is wrapped instead").
//!
//! Real tensor cores do not behave like this exactly. Fasi, Higham, Mikaitis and Pranesh, "Numerical
//! behavior of NVIDIA tensor cores", PeerJ Computer Science 7:e330 (2021), doi:10.7717/peerj-cs.330,
//! measured the precision, rounding, accumulation order and normalization of V100, T4 and A100 tensor
//! cores and report that in some cases the sums are truncated (rounded toward zero) rather than rounded to
//! nearest, with intermediate results that are not normalized after each addition. This model does not
//! reproduce that: it is a reproducible, correctly-rounded reference, and its results may differ from a
//! GPU's in the last bits (or, for `.f16` accumulators and near-overflow, more).
//!
//! # `ldmatrix`, `stmatrix` ([`ldmatrix_source`], [`ldmatrix_address_lane`])
//! 9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix" (`.m8n8`, `.b16`, `.x1`/`.x2`/`.x4`): matrix
//! `m`'s row `r` starts at the address held by lane `8m + r` ("addresses addr0–addr7 correspond to the rows
//! of the first matrix, addresses addr8–addr15 correspond to the rows of the second matrix, and so on");
//! destination register `m` of every lane receives a fragment of matrix `m`. Without `.trans`, lane `l`
//! receives row `l >> 2`, elements `2(l % 4)` (low half) and `2(l % 4) + 1` (high half) ("a group of four
//! threads loads an entire row"). With `.trans` ("the matrix is loaded in column-major format") lane `l`
//! receives the elements at rows `2(l % 4)` (low half) and `2(l % 4) + 1` (high half) of column `l >> 2`,
//! i.e. the same fragment of the transposed matrix. `stmatrix` (9.7.14.5.16, sm_90) stores each lane's
//! register halves to the same positions; `.m16n16`, `.m8n16`, `.m16n8` and `.b8` (sm_100a+) are not
//! covered.
//!
//! # `movmatrix` ([`movmatrix`])
//! 9.7.14.5.17 "Warp-level matrix transpose instruction: movmatrix" (`.m8n8.trans.b16`): the source is an
//! 8×8 matrix `M` in the `ldmatrix` fragment layout (lane `l` holds `M[l >> 2][2(l % 4)]` low and
//! `M[l >> 2][2(l % 4) + 1]` high); the destination is `Mᵀ` in the same layout, so lane `l` receives
//! `M[2(l % 4)][l >> 2]` (low) and `M[2(l % 4) + 1][l >> 2]` (high).
//!
//! # `wmma` ([`wmma_mma`], [`wmma_element`], [`wmma_regs`])
//! 9.7.14.4.1 "Matrix Fragments for WMMA": "The distribution of fragments loaded by the threads in a warp is
//! unspecified and is target architecture dependent". Register counts are not: [`wmma_regs`] gives what
//! the ISA's tables say and what nvcc 13 (`-arch=sm_80 -ptx`, `nvcuda::wmma::fragment` from `<mma.h>`)
//! emits, per lane:
//!
//! | shape | A | B | C/D |
//! | --- | --- | --- | --- |
//! | `m16n16k16`, `m32n8k16`, `m8n32k16` `.f16` | 8 `.f16x2` | 8 `.f16x2` | `.f16`: 4 `.f16x2`; `.f32`: 8 |
//! | `m16n16k16` / `m32n8k16` / `m8n32k16` `.bf16` | 4 / 8 / 2 `.b32` | 4 / 2 / 8 `.b32` | `.f32`: 8 |
//! | `m16n16k16` / `m32n8k16` / `m8n32k16` `.s8`, `.u8` | 2 / 4 / 1 `.b32` | 2 / 1 / 4 `.b32` | `.s32`: 8 |
//! | `m16n16k8` `.tf32` | 4 `.b32` | 4 `.b32` | `.f32`: 8 |
//! | `m8n8k4` `.f64` | 1 `.f64` | 1 `.f64` | `.f64`: 2 (the ISA's table says "single", nvcc and `ptxas` use 2) |
//!
//! nvcc spells them `wmma.load.{a,b,c}.sync.aligned.{row,col}.SHAPE{.global,.shared,}.TYPE` (no state
//! space for `.bf16`, `.tf32`, `.f64` operands), `wmma.mma.sync.aligned.{row,col}.{row,col}.SHAPE.DTYPE.CTYPE`
//! for `.f16` A/B (`.f32.f32`, `.f16.f16`, and `ptxas` accepts the mixed `.f16.f32`, `.f32.f16`),
//! `…SHAPE.f32.bf16.bf16.f32`, `…m16n16k8.f32.tf32.tf32.f32`, `…SHAPE.s32.s8.s8.s32` (A and B of one
//! signedness; `.satfinite` optional), `…m8n8k4.f64.f64.f64.f64.rn` (rounding `.rn .rz .rm .rp`), and
//! `wmma.store.d.sync.aligned.{row,col}.SHAPE{.global,.shared,}.TYPE`.
//!
//! **The layout this simulator defines.** With `P` elements per register (4 for `.s8`/`.u8`, 2 for
//! `.f16`/`.bf16`, 1 otherwise), slot `s` of lane `l` (register `s / P`, part `s % P` from the low bits)
//! holds element number `e = ((s / P) · 32 + l) · P + s % P  (mod R·C)` of the R×C matrix (A: M×K, B: K×N,
//! C and D: M×N) in row-major order: row `e / C`, column `e % C`. Register `r` of all lanes thus holds the
//! elements `32·P·r … 32·P·(r + 1) − 1`, lane by lane, and when the fragments hold more slots than the matrix
//! has elements (`.f16` A/B: `m16n16k16` 512 slots for 256 elements, `m32n8k16` B and `m8n32k16` A 512 for
//! 128) the pattern repeats, so each element is held 2 or 4 times, as NVIDIA's fragments also duplicate.
//! The layout does not depend on `.row`/`.col`: those only say how `wmma.load`/`wmma.store` address memory
//! ([`wmma_offset`]). [`wmma_gather`] reads each element from its first holder (slot `e`), which is enough
//! because every legal fragment manipulation ("all matrix elements in the fragment are operated on uniformly
//! across threads") keeps the copies equal.
//!
//! [`wmma_mma`] works on whole matrices and has the numerics of [`mma`] (for `.f16` A/B, C and D are
//! `.f16` or `.f32` independently; `.f64` takes a rounding mode).
//!
//! # Guarantees
//! As for the whole crate: no function panics for any input (an invalid combination, a lane or index out of
//! range, or too short a slice gives `None`, `0` or `false` and leaves the output untouched), and nothing
//! allocates: [`mma`] and [`wmma_mma`] work in fixed-size stack arrays.

use crate::float;
use crate::soft::{self, Fmt, RMode};
use crate::types::{FloatMode, FloatTy, Rounding};

/// The shape (M, N, K) of an `mma.sync.aligned` instruction.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Shape {
    /// `.m8n8k4` (here: `.f64` only).
    M8N8K4,
    /// `.m16n8k4` (`.tf32`).
    M16N8K4,
    /// `.m16n8k8` (`.f16`, `.bf16`, `.tf32`).
    M16N8K8,
    /// `.m16n8k16` (`.f16`, `.bf16`, `.s8`, `.u8`).
    M16N8K16,
    /// `.m8n8k16` (`.s8`, `.u8`).
    M8N8K16,
    /// `.m16n8k32` (`.s8`, `.u8`).
    M16N8K32,
}

impl Shape {
    /// Every shape.
    pub const ALL: [Shape; 6] =
        [Shape::M8N8K4, Shape::M16N8K4, Shape::M16N8K8, Shape::M16N8K16, Shape::M8N8K16, Shape::M16N8K32];

    /// `(M, N, K)`.
    #[inline]
    pub const fn mnk(self) -> (usize, usize, usize) {
        match self {
            Shape::M8N8K4 => (8, 8, 4),
            Shape::M16N8K4 => (16, 8, 4),
            Shape::M16N8K8 => (16, 8, 8),
            Shape::M16N8K16 => (16, 8, 16),
            Shape::M8N8K16 => (8, 8, 16),
            Shape::M16N8K32 => (16, 8, 32),
        }
    }

    /// The PTX spelling without the dot (`"m16n8k16"`).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            Shape::M8N8K4 => "m8n8k4",
            Shape::M16N8K4 => "m16n8k4",
            Shape::M16N8K8 => "m16n8k8",
            Shape::M16N8K16 => "m16n8k16",
            Shape::M8N8K16 => "m8n8k16",
            Shape::M16N8K32 => "m16n8k32",
        }
    }
}

/// The element type of a matrix operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Elem {
    /// `.f16`: IEEE binary16, two to a 32-bit register.
    F16,
    /// `.bf16`: bfloat16, two to a 32-bit register.
    Bf16,
    /// `.tf32`: an `.f32` bit pattern of which the low 13 fraction bits are ignored.
    Tf32,
    /// `.f32`.
    F32,
    /// `.f64`, in a 64-bit register.
    F64,
    /// `.s8`, four to a 32-bit register.
    S8,
    /// `.u8`, four to a 32-bit register.
    U8,
    /// `.s32`.
    S32,
}

impl Elem {
    /// Every element type.
    pub const ALL: [Elem; 8] = [Elem::F16, Elem::Bf16, Elem::Tf32, Elem::F32, Elem::F64, Elem::S8, Elem::U8, Elem::S32];

    /// Width of one element in bits (`.tf32`: 32, its storage).
    #[inline]
    pub const fn bits(self) -> u32 {
        match self {
            Elem::S8 | Elem::U8 => 8,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::Tf32 | Elem::F32 | Elem::S32 => 32,
            Elem::F64 => 64,
        }
    }

    /// Elements per register: 4 for `.s8`/`.u8`, 2 for `.f16`/`.bf16`, 1 otherwise (`.f64` registers are
    /// 64-bit).
    #[inline]
    pub const fn per_register(self) -> usize {
        match self {
            Elem::S8 | Elem::U8 => 4,
            Elem::F16 | Elem::Bf16 => 2,
            _ => 1,
        }
    }

    /// The PTX spelling without the dot (`"bf16"`).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::Tf32 => "tf32",
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::S8 => "s8",
            Elem::U8 => "u8",
            Elem::S32 => "s32",
        }
    }
}

/// Which matrix a fragment belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Operand {
    /// The M×K multiplicand A.
    A,
    /// The K×N multiplicand B.
    B,
    /// The M×N accumulator C, and the result D (same layout).
    C,
}

impl Operand {
    /// `(rows, cols)` of this operand for a problem of size `(m, n, k)`.
    #[inline]
    const fn dims(self, (m, n, k): (usize, usize, usize)) -> (usize, usize) {
        match self {
            Operand::A => (m, k),
            Operand::B => (k, n),
            Operand::C => (m, n),
        }
    }
}

/// A decoded `mma.sync.aligned.SHAPE.row.col{.rnd}{.satfinite}.DTYPE.ATYPE.BTYPE.CTYPE`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MmaKind {
    /// The shape.
    pub shape: Shape,
    /// A's element type.
    pub a: Elem,
    /// B's element type.
    pub b: Elem,
    /// C's element type.
    pub c: Elem,
    /// D's element type.
    pub d: Elem,
    /// `.satfinite` (integer types only).
    pub satfinite: bool,
    /// The rounding mode (`.f64` only; `Rn` for every other type).
    pub rnd: Rounding,
}

impl MmaKind {
    /// A kind without `.satfinite`, rounding to nearest.
    #[inline]
    pub const fn new(shape: Shape, a: Elem, b: Elem, c: Elem, d: Elem) -> MmaKind {
        MmaKind { shape, a, b, c, d, satfinite: false, rnd: Rounding::Rn }
    }

    /// Whether PTX (ISA 8.x, sm_80/sm_90) has this combination and this module implements it (the table in
    /// the module documentation).
    pub fn is_valid(&self) -> bool {
        use Elem::*;
        use Shape::*;
        let (s, rn) = (self.shape, self.rnd == Rounding::Rn);
        let float = !self.satfinite && self.c == self.d;
        match (self.a, self.b) {
            (F16, F16) => float && rn && matches!(s, M16N8K8 | M16N8K16) && matches!(self.c, F16 | F32),
            (Bf16, Bf16) => float && rn && matches!(s, M16N8K8 | M16N8K16) && self.c == F32,
            (Tf32, Tf32) => float && rn && matches!(s, M16N8K4 | M16N8K8) && self.c == F32,
            (F64, F64) => float && s == M8N8K4 && self.c == F64,
            (S8 | U8, S8 | U8) => rn && matches!(s, M8N8K16 | M16N8K16 | M16N8K32) && self.c == S32 && self.d == S32,
            _ => false,
        }
    }

    /// Registers per lane of A, B, C and D (32-bit registers, except `.f64` operands: 64-bit registers);
    /// meaningful for valid kinds.
    pub fn regs(&self) -> [usize; 4] {
        let mnk = self.shape.mnk();
        let count = |which: Operand, e: Elem| {
            let (r, c) = which.dims(mnk);
            r * c / 32 / e.per_register()
        };
        [count(Operand::A, self.a), count(Operand::B, self.b), count(Operand::C, self.c), count(Operand::C, self.d)]
    }
}

/// The layout family of a multiplicand type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    Half,
    Tf32,
    F64,
    Int8,
}

#[inline]
const fn family(e: Elem) -> Option<Family> {
    match e {
        Elem::F16 | Elem::Bf16 => Some(Family::Half),
        Elem::Tf32 => Some(Family::Tf32),
        Elem::F64 => Some(Family::F64),
        Elem::S8 | Elem::U8 => Some(Family::Int8),
        Elem::F32 | Elem::S32 => None,
    }
}

/// The matrix position `(row, col)` of element `i` (numbered low to high through the lane's registers) of
/// lane `lane`'s fragment of `which` for an `mma` of this shape and operand type, as the PTX ISA's "Matrix
/// Fragments for mma.…" sections give it (module documentation). The accumulator layout is the same for
/// every accumulator type. `None` for a lane past 31, an `i` past the fragment, or a shape and multiplicand
/// type that have no such fragment here.
pub fn mma_element(shape: Shape, which: Operand, elem: Elem, lane: usize, i: usize) -> Option<(usize, usize)> {
    use Family::*;
    use Shape::*;
    let mnk = shape.mnk();
    let (rows, cols) = which.dims(mnk);
    if lane >= 32 || i >= rows * cols / 32 {
        return None;
    }
    let (g, t) = (lane >> 2, lane & 3);
    let pos = match which {
        Operand::C => match shape {
            M8N8K4 | M8N8K16 => (g, 2 * t + i),
            M16N8K4 | M16N8K8 | M16N8K16 | M16N8K32 => (g + 8 * (i >> 1), 2 * t + (i & 1)),
        },
        Operand::A => match (shape, family(elem)?) {
            (M16N8K16, Half) => (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >> 2)),
            (M16N8K8, Half) => (g + 8 * (i >> 1), 2 * t + (i & 1)),
            (M16N8K8, Tf32) => (g + 8 * (i & 1), t + 4 * (i >> 1)),
            (M16N8K4, Tf32) => (g + 8 * i, t),
            (M8N8K4, F64) => (g, t),
            (M8N8K16, Int8) => (g, 4 * t + i),
            (M16N8K16, Int8) => (g + 8 * (i >> 2), 4 * t + (i & 3)),
            (M16N8K32, Int8) => (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >> 3)),
            _ => return None,
        },
        Operand::B => match (shape, family(elem)?) {
            (M16N8K16, Half) => (2 * t + (i & 1) + 8 * (i >> 1), g),
            (M16N8K8, Half) => (2 * t + i, g),
            (M16N8K8, Tf32) => (t + 4 * i, g),
            (M16N8K4, Tf32) | (M8N8K4, F64) => (t, g),
            (M8N8K16 | M16N8K16, Int8) => (4 * t + i, g),
            (M16N8K32, Int8) => (4 * t + (i & 3) + 16 * (i >> 2), g),
            _ => return None,
        },
    };
    Some(pos)
}

/// Largest operand of any shape here, in elements (`m16n8k32` A, `m32n8k16` A, `m8n32k16` B).
const MAX_ELEMS: usize = 512;
/// Largest `mma` B (`m16n8k32`) and C/D (`m16n8*`), in elements.
const MMA_MAX_B: usize = 256;
const MMA_MAX_C: usize = 128;

/// Moves one operand's elements between lane-major registers and a row-major matrix, along a layout
/// `pos(lane, i)`. `to_matrix`: registers → matrix, else matrix → registers (OR-ed into zeroed registers).
#[inline]
fn shuffle(
    regs: usize,
    elem: Elem,
    cols: usize,
    frag_len: usize,
    pos: impl Fn(usize, usize) -> Option<(usize, usize)>,
    mut visit: impl FnMut(usize, usize, u32),
) {
    let per = elem.per_register();
    for lane in 0..32 {
        for i in 0..regs * per {
            if let Some((r, c)) = pos(lane, i) {
                let reg = lane * regs + i / per;
                if reg < frag_len {
                    visit(reg, r * cols + c, (i % per) as u32 * elem.bits());
                }
            }
        }
    }
}

#[inline]
const fn elem_mask(e: Elem) -> u64 {
    crate::types::width_mask(e.bits())
}

/// `mma.sync.aligned` for the whole warp: `a`, `b`, `c` are the lane-major register values (lane 0's
/// registers first, `32 · regs` of each operand, [`MmaKind::regs`]); the first `32 · regs` entries of `d`
/// receive D's registers. Returns `false`, writing nothing, when the kind is not valid or a slice is too
/// short.
pub fn mma(kind: &MmaKind, a: &[u64], b: &[u64], c: &[u64], d: &mut [u64]) -> bool {
    if !kind.is_valid() {
        return false;
    }
    let regs = kind.regs();
    if a.len() < 32 * regs[0] || b.len() < 32 * regs[1] || c.len() < 32 * regs[2] || d.len() < 32 * regs[3] {
        return false;
    }
    let shape = kind.shape;
    let (m, n, k) = shape.mnk();
    let mut am = [0u64; MAX_ELEMS];
    let mut bm = [0u64; MMA_MAX_B];
    let mut cm = [0u64; MMA_MAX_C];
    let mut dm = [0u64; MMA_MAX_C];
    let load = |which: Operand, e: Elem, nregs: usize, frag: &[u64], mat: &mut [u64], cols: usize| {
        let pos = |lane, i| mma_element(shape, which, e, lane, i);
        shuffle(nregs, e, cols, frag.len(), pos, |reg, idx, shift| {
            if let (Some(slot), Some(&v)) = (mat.get_mut(idx), frag.get(reg)) {
                *slot = (v >> shift) & elem_mask(e);
            }
        });
    };
    load(Operand::A, kind.a, regs[0], a, &mut am, k);
    load(Operand::B, kind.b, regs[1], b, &mut bm, n);
    load(Operand::C, kind.c, regs[2], c, &mut cm, n);
    let types = Types { a: kind.a, b: kind.b, c: kind.c, d: kind.d, satfinite: kind.satfinite, rnd: kind.rnd };
    compute(&types, (m, n, k), &am, &bm, &cm, &mut dm);
    let out = &mut d[..32 * regs[3]];
    out.fill(0);
    let pos = |lane, i| mma_element(shape, Operand::C, kind.d, lane, i);
    shuffle(regs[3], kind.d, n, out.len(), pos, |reg, idx, shift| {
        if let (Some(r), Some(&v)) = (out.get_mut(reg), dm.get(idx)) {
            *r |= (v & elem_mask(kind.d)) << shift;
        }
    });
    true
}

/// The element types and modifiers the arithmetic needs.
struct Types {
    a: Elem,
    b: Elem,
    c: Elem,
    d: Elem,
    satfinite: bool,
    rnd: Rounding,
}

/// The exact value of a float element (`.f16`, `.bf16`, `.tf32`, `.f32`) as binary64.
#[inline]
fn to_f64(e: Elem, bits: u64) -> f64 {
    match e {
        Elem::F16 => soft::f16_bits_to_f32(bits as u16) as f64,
        Elem::Bf16 => f32::from_bits(((bits as u32) & 0xFFFF) << 16) as f64,
        Elem::Tf32 => f32::from_bits(bits as u32 & 0xFFFF_E000) as f64,
        _ => f32::from_bits(bits as u32) as f64,
    }
}

/// Rounds a binary64 value once to the destination (`.f32` or `.f16`), NaN becoming the canonical NaN.
#[inline]
fn round_to(e: Elem, s: f64) -> u64 {
    match e {
        Elem::F16 if s.is_nan() => FloatTy::F16.canonical_nan(),
        Elem::F16 => soft::round_f64(Fmt::F16, s, 0, RMode::Rn),
        _ if s.is_nan() => FloatTy::F32.canonical_nan(),
        _ => (s as f32).to_bits() as u64,
    }
}

/// `D = A·B + C` on row-major matrices of elements (one zero-extended element per `u64`); the caller has
/// checked the types and that every slice holds its matrix.
fn compute(t: &Types, (m, n, k): (usize, usize, usize), a: &[u64], b: &[u64], c: &[u64], d: &mut [u64]) {
    match t.a {
        Elem::F16 | Elem::Bf16 | Elem::Tf32 => {
            let mut af = [0f64; MAX_ELEMS];
            let mut bf = [0f64; MAX_ELEMS];
            for (x, &v) in af.iter_mut().zip(&a[..m * k]) {
                *x = to_f64(t.a, v);
            }
            for (x, &v) in bf.iter_mut().zip(&b[..k * n]) {
                *x = to_f64(t.b, v);
            }
            for i in 0..m {
                let row = &af[i * k..i * k + k];
                for j in 0..n {
                    let mut s = row[0] * bf[j];
                    for (kk, &x) in row.iter().enumerate().skip(1) {
                        s += x * bf[kk * n + j];
                    }
                    s += to_f64(t.c, c[i * n + j]);
                    d[i * n + j] = round_to(t.d, s);
                }
            }
        }
        Elem::F64 => {
            let mode = FloatMode::new(t.rnd);
            for i in 0..m {
                for j in 0..n {
                    let mut acc = c[i * n + j];
                    for kk in 0..k {
                        acc = float::fma(FloatTy::F64, mode, a[i * k + kk], b[kk * n + j], acc);
                    }
                    d[i * n + j] = if FloatTy::F64.is_nan(acc) { FloatTy::F64.canonical_nan() } else { acc };
                }
            }
        }
        _ => {
            let int = |e: Elem, v: u64| if e == Elem::S8 { v as u8 as i8 as i64 } else { v as u8 as i64 };
            for i in 0..m {
                for j in 0..n {
                    let mut s = c[i * n + j] as u32 as i32 as i64;
                    for kk in 0..k {
                        s += int(t.a, a[i * k + kk]) * int(t.b, b[kk * n + j]);
                    }
                    let r = if t.satfinite { s.clamp(i32::MIN as i64, i32::MAX as i64) } else { s };
                    d[i * n + j] = r as u32 as u64;
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// ldmatrix / stmatrix / movmatrix
// ---------------------------------------------------------------------------------------------------------

/// `ldmatrix.sync.aligned.m8n8.NUM{.trans}.b16` (and `stmatrix`, which stores the same positions): which
/// matrix, row and column destination register `reg` of lane `lane` receives. The result `(matrix, row,
/// col)` names the element in the register's low half, where row `row` of matrix `matrix` is the 8 `.b16`
/// elements at the address lane `8 · matrix + row` supplied ([`ldmatrix_address_lane`]). The high half holds
/// `(row, col + 1)` without `.trans` and `(row + 1, col)` with it. `None` unless `num` is 1, 2 or 4,
/// `reg < num` and `lane < 32`.
#[inline]
pub fn ldmatrix_source(num: usize, trans: bool, lane: usize, reg: usize) -> Option<(usize, usize, usize)> {
    if !matches!(num, 1 | 2 | 4) || reg >= num || lane >= 32 {
        return None;
    }
    let (g, t) = (lane >> 2, lane & 3);
    Some(if trans { (reg, 2 * t, g) } else { (reg, g, 2 * t) })
}

/// The lane whose address operand gives the start of row `row` of matrix `matrix` in `ldmatrix` and
/// `stmatrix` (`8 · matrix + row`); `None` unless `matrix < 4` and `row < 8`.
#[inline]
pub fn ldmatrix_address_lane(matrix: usize, row: usize) -> Option<usize> {
    (matrix < 4 && row < 8).then_some(8 * matrix + row)
}

/// `movmatrix.sync.aligned.m8n8.trans.b16` over the warp: `a[l]` is lane `l`'s source register, the result
/// its destination register (the transpose, module documentation).
#[inline]
pub fn movmatrix(a: &[u32; 32]) -> [u32; 32] {
    // M[r][c] is half c % 2 of lane 4r + c / 2.
    let elem = |r: usize, c: usize| (a[4 * r + c / 2] >> (16 * (c % 2))) & 0xFFFF;
    std::array::from_fn(|l| {
        let (g, t) = (l >> 2, l & 3);
        elem(2 * t, g) | (elem(2 * t + 1, g) << 16)
    })
}

// ---------------------------------------------------------------------------------------------------------
// wmma
// ---------------------------------------------------------------------------------------------------------

/// The shape of a `wmma` operation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum WmmaShape {
    /// `.m16n16k16` (`.f16`, `.bf16`, `.s8`, `.u8`).
    M16N16K16,
    /// `.m32n8k16` (`.f16`, `.bf16`, `.s8`, `.u8`).
    M32N8K16,
    /// `.m8n32k16` (`.f16`, `.bf16`, `.s8`, `.u8`).
    M8N32K16,
    /// `.m16n16k8` (`.tf32`).
    M16N16K8,
    /// `.m8n8k4` (`.f64`).
    M8N8K4,
}

impl WmmaShape {
    /// Every shape.
    pub const ALL: [WmmaShape; 5] =
        [WmmaShape::M16N16K16, WmmaShape::M32N8K16, WmmaShape::M8N32K16, WmmaShape::M16N16K8, WmmaShape::M8N8K4];

    /// `(M, N, K)`.
    #[inline]
    pub const fn mnk(self) -> (usize, usize, usize) {
        match self {
            WmmaShape::M16N16K16 => (16, 16, 16),
            WmmaShape::M32N8K16 => (32, 8, 16),
            WmmaShape::M8N32K16 => (8, 32, 16),
            WmmaShape::M16N16K8 => (16, 16, 8),
            WmmaShape::M8N8K4 => (8, 8, 4),
        }
    }

    /// The PTX spelling without the dot (`"m16n16k16"`).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            WmmaShape::M16N16K16 => "m16n16k16",
            WmmaShape::M32N8K16 => "m32n8k16",
            WmmaShape::M8N32K16 => "m8n32k16",
            WmmaShape::M16N16K8 => "m16n16k8",
            WmmaShape::M8N8K4 => "m8n8k4",
        }
    }

    #[inline]
    const fn k16(self) -> bool {
        matches!(self, WmmaShape::M16N16K16 | WmmaShape::M32N8K16 | WmmaShape::M8N32K16)
    }
}

/// A decoded `wmma.mma.sync.aligned.ALAYOUT.BLAYOUT.SHAPE{.rnd}.DTYPE{.ATYPE.BTYPE}.CTYPE{.satfinite}` (the
/// layouts do not matter here: fragments are layout-independent).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WmmaKind {
    /// The shape.
    pub shape: WmmaShape,
    /// A's element type.
    pub a: Elem,
    /// B's element type.
    pub b: Elem,
    /// C's element type.
    pub c: Elem,
    /// D's element type.
    pub d: Elem,
    /// `.satfinite` (integer types only).
    pub satfinite: bool,
    /// The rounding mode (`.f64` only; `Rn` for every other type).
    pub rnd: Rounding,
}

impl WmmaKind {
    /// A kind without `.satfinite`, rounding to nearest.
    #[inline]
    pub const fn new(shape: WmmaShape, a: Elem, b: Elem, c: Elem, d: Elem) -> WmmaKind {
        WmmaKind { shape, a, b, c, d, satfinite: false, rnd: Rounding::Rn }
    }

    /// Whether PTX has this combination: `.f16` A/B with `.f16`/`.f32` C and D (independently), `.bf16` with
    /// `.f32`, `.s8`×`.s8` or `.u8`×`.u8` with `.s32` (`.satfinite` allowed) for `m16n16k16`, `m32n8k16`,
    /// `m8n32k16`; `.tf32` with `.f32` for `m16n16k8`; `.f64` (any rounding) for `m8n8k4`.
    pub fn is_valid(&self) -> bool {
        use Elem::*;
        let (s, rn, sat) = (self.shape, self.rnd == Rounding::Rn, self.satfinite);
        match (self.a, self.b) {
            (F16, F16) => rn && !sat && s.k16() && matches!(self.c, F16 | F32) && matches!(self.d, F16 | F32),
            (Bf16, Bf16) => rn && !sat && s.k16() && self.c == F32 && self.d == F32,
            (S8, S8) | (U8, U8) => rn && s.k16() && self.c == S32 && self.d == S32,
            (Tf32, Tf32) => rn && !sat && s == WmmaShape::M16N16K8 && self.c == F32 && self.d == F32,
            (F64, F64) => !sat && s == WmmaShape::M8N8K4 && self.c == F64 && self.d == F64,
            _ => false,
        }
    }

    /// Registers per lane of A, B, C and D ([`wmma_regs`]).
    #[inline]
    pub fn regs(&self) -> [usize; 4] {
        let s = self.shape;
        [
            wmma_regs(s, Operand::A, self.a),
            wmma_regs(s, Operand::B, self.b),
            wmma_regs(s, Operand::C, self.c),
            wmma_regs(s, Operand::C, self.d),
        ]
    }
}

/// Registers per lane of a `wmma` fragment, as nvcc emits them (table in the module documentation); 0 for a
/// fragment PTX does not have.
pub fn wmma_regs(shape: WmmaShape, which: Operand, elem: Elem) -> usize {
    use Elem::*;
    use WmmaShape::*;
    let (rows, cols) = which.dims(shape.mnk());
    let exact = rows * cols / 32 / elem.per_register();
    match (which, elem) {
        (Operand::A | Operand::B, F16) if shape.k16() => 8,
        (Operand::A | Operand::B, Bf16 | S8 | U8) if shape.k16() => exact,
        (Operand::A | Operand::B, Tf32) if shape == M16N16K8 => exact,
        (Operand::A | Operand::B, F64) if shape == M8N8K4 => exact,
        (Operand::C, F16 | S32) if shape.k16() => exact,
        (Operand::C, F32) if shape.k16() || shape == M16N16K8 => exact,
        (Operand::C, F64) if shape == M8N8K4 => exact,
        _ => 0,
    }
}

/// The matrix position `(row, col)` that slot `slot` (register `slot / P`, part `slot % P`, `P` elements per
/// register) of lane `lane`'s `wmma` fragment of `which` holds, in the layout this simulator defines
/// (module documentation). `None` for a fragment PTX does not have, a lane past 31 or a slot past the
/// fragment.
pub fn wmma_element(shape: WmmaShape, which: Operand, elem: Elem, lane: usize, slot: usize) -> Option<(usize, usize)> {
    let regs = wmma_regs(shape, which, elem);
    let per = elem.per_register();
    if regs == 0 || lane >= 32 || slot >= regs * per {
        return None;
    }
    let (rows, cols) = which.dims(shape.mnk());
    let e = ((slot / per * 32 + lane) * per + slot % per) % (rows * cols);
    Some((e / cols, e % cols))
}

/// The element offset of `(row, col)` in memory for `wmma.load`/`wmma.store` with layout `.row`
/// (`row_major`) or `.col` and stride `stride` (in elements): `row · stride + col` or `col · stride + row`.
#[inline]
pub fn wmma_offset(row_major: bool, stride: usize, row: usize, col: usize) -> usize {
    if row_major {
        row.wrapping_mul(stride).wrapping_add(col)
    } else {
        col.wrapping_mul(stride).wrapping_add(row)
    }
}

/// Reads a `wmma` fragment (lane-major registers, `32 · wmma_regs` of them) into the row-major matrix
/// `matrix` (one zero-extended element per entry), taking each element from its first holder. `false`,
/// writing nothing, for a fragment PTX does not have or too short a slice.
pub fn wmma_gather(shape: WmmaShape, which: Operand, elem: Elem, frag: &[u64], matrix: &mut [u64]) -> bool {
    let regs = wmma_regs(shape, which, elem);
    let (rows, cols) = which.dims(shape.mnk());
    if regs == 0 || frag.len() < 32 * regs || matrix.len() < rows * cols {
        return false;
    }
    let per = elem.per_register();
    for (e, out) in matrix[..rows * cols].iter_mut().enumerate() {
        // Element e's first holder is slot number e in (register, lane, part) order.
        let (reg, lane, part) = (e / (32 * per), e / per % 32, e % per);
        *out = (frag[lane * regs + reg] >> (part as u32 * elem.bits())) & elem_mask(elem);
    }
    true
}

/// Writes the row-major matrix `matrix` into a `wmma` fragment (lane-major registers, `32 · wmma_regs` of
/// them), every copy of every element. `false`, writing nothing, for a fragment PTX does not have or too
/// short a slice.
pub fn wmma_scatter(shape: WmmaShape, which: Operand, elem: Elem, matrix: &[u64], frag: &mut [u64]) -> bool {
    let regs = wmma_regs(shape, which, elem);
    let (rows, cols) = which.dims(shape.mnk());
    if regs == 0 || frag.len() < 32 * regs || matrix.len() < rows * cols {
        return false;
    }
    let out = &mut frag[..32 * regs];
    out.fill(0);
    let pos = |lane, i| wmma_element(shape, which, elem, lane, i);
    shuffle(regs, elem, cols, out.len(), pos, |reg, idx, shift| {
        if let (Some(r), Some(&v)) = (out.get_mut(reg), matrix.get(idx)) {
            *r |= (v & elem_mask(elem)) << shift;
        }
    });
    true
}

/// `wmma.mma` on whole row-major matrices of elements (one zero-extended element bit pattern per entry:
/// A M×K, B K×N, C and D M×N), with the numerics of [`mma`]. Returns `false`, writing nothing, when the kind
/// is not valid or a slice is too short.
pub fn wmma_mma(kind: &WmmaKind, a: &[u64], b: &[u64], c: &[u64], d: &mut [u64]) -> bool {
    let (m, n, k) = kind.shape.mnk();
    if !kind.is_valid() || a.len() < m * k || b.len() < k * n || c.len() < m * n || d.len() < m * n {
        return false;
    }
    let types = Types { a: kind.a, b: kind.b, c: kind.c, d: kind.d, satfinite: kind.satfinite, rnd: kind.rnd };
    compute(&types, (m, n, k), a, b, c, d);
    true
}
