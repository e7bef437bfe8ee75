//! Selection: `selp` and `slct`.

use crate::types::FloatTy;

/// `selp.type d, a, b, c`: `c ? a : b`.
#[inline]
pub fn selp(c: bool, a: u64, b: u64) -> u64 {
    if c {
        a
    } else {
        b
    }
}

/// `slct.dtype.s32 d, a, b, c`: `a` if the `s32` value of `c` is `>= 0`, else `b`.
#[inline]
pub fn slct_s32(a: u64, b: u64, c: u64) -> u64 {
    selp(c as u32 as i32 >= 0, a, b)
}

/// `slct{.ftz}.dtype.f32 d, a, b, c`: `a` if the `f32` `c >= 0.0` (true for `-0.0`; a NaN `c` selects `b`),
/// else `b`. With `ftz` a subnormal `c` counts as a zero of its sign (so it selects `a`).
#[inline]
pub fn slct_f32(ftz: bool, a: u64, b: u64, c: u64) -> u64 {
    let t = FloatTy::F32;
    let c = c & t.mask();
    let c = if ftz { crate::float::flush_subnormal(t, c) } else { c };
    selp(f32::from_bits(c as u32) >= 0.0, a, b)
}
