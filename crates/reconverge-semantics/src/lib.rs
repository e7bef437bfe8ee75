//! Scalar PTX instruction semantics for the reconverge SIMT simulator.
//!
//! The simulator core executes whole warps and calls the pure functions of this crate once per active lane.
//! They are bit-exact models of what the PTX ISA specifies (and, where PTX says "unspecified", of what NVIDIA
//! hardware is documented or known to do; every such choice is written on the function).
//!
//! # Value convention
//! Every operand and result is a raw bit pattern in a `u64`, **zero-extended** from the operand width:
//! an `.s32` value `-1` is `0x0000_0000_FFFF_FFFF`, an `.f32` is its IEEE bits in the low 32 bits, an
//! `.f16` its bits in the low 16, a `.pred` is 0 or 1. Functions ignore bits above the operand width and
//! return results zero-extended from the destination width. Packed types (`.f16x2`, `.u16x2`, ...) hold
//! lane 0 in the low bits.
//!
//! # Guarantees
//! - No function panics, for any input: integer overflow wraps (or saturates under `.sat`), division by
//!   zero and oversized shifts return documented values, NaN/∞/subnormals follow IEEE 754 and PTX.
//! - No allocation, no dynamic dispatch, no global state; the host floating-point environment is never
//!   modified. Directed rounding (`.rz .rm .rp`) is exact software rounding, not `fesetround`.
//! - Functions are `#[inline]`, take the decoded type/modifier enums by value, and branch on them in ways a
//!   caller that decodes once per instruction makes perfectly predictable.
//!
//! # Modules
//! - [`types`]: [`IntTy`], [`FloatTy`], [`NumTy`], [`Rounding`], [`IntRounding`], [`CmpOp`], [`BoolOp`],
//!   [`FloatMode`] and conversions from `reconverge_ir`.
//! - [`int`]: integer arithmetic, bit manipulation, logic, shifts, `prmt`, carry chains.
//! - [`float`]: IEEE arithmetic in all rounding modes, approximate transcendental functions, min/max,
//!   `testp`, packed `x2` forms.
//! - [`cvt`]: conversions between all integer and float types.
//! - [`cmp`]: `setp`/`set` comparisons and boolean combination.
//! - [`select`]: `selp`, `slct`.
//! - [`mbarrier`]: the shared-memory barrier objects of `mbarrier.*` (`cuda::barrier`).
//! - [`mma`]: tensor-core instructions: `mma.sync.aligned` (fragment layouts and a correctly-rounded model of
//!   the arithmetic), `ldmatrix`/`stmatrix`/`movmatrix` layouts, and `wmma` with a simulator-defined fragment
//!   layout.
//! - [`texture`]: texture and surface objects (their descriptor in device memory), `tex`, `tld4`, `txq`,
//!   `suld.b`, `sust.b`: addressing, filtering, formats and read modes.
#![deny(missing_docs)]

pub mod cmp;
pub mod cvt;
pub mod float;
pub mod int;
pub mod mbarrier;
pub mod mma;
pub mod select;
mod soft;
pub mod texture;
pub mod types;

pub use types::{
    width_mask, BoolOp, CmpOp, FloatMode, FloatTy, IntRounding, IntTy, NumTy, Rounding, UnsupportedModifier,
    UnsupportedType,
};
