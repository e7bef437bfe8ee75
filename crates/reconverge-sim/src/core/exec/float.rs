//! Instruction family: floating-point arithmetic and special functions.

use super::*;

/// Floating-point arithmetic (the hottest `f32` operations natively), `testp`, conversions.
#[inline(always)]
pub(super) fn float<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::FloatUn { op, ty, mode, d, a } => {
            let f = alu::float_un(*op, *ty, *mode);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        Op::FloatBin { op, ty: reconverge_ir::ScalarType::F32, mode, d, a, b }
            if mode.rnd == FRound::Rn
                && !mode.sat
                && matches!(op, FloatBinOp::Add | FloatBinOp::Sub | FloatBinOp::Mul) =>
        {
            // The hottest float operations natively (the semantics crate's f32 round-to-nearest path:
            // canonical NaN, `.ftz` flushing subnormal operands and results).
            macro_rules! f32_op {
                ($ftz:expr, $e:expr) => {{
                    let flush = move |x: u32| if $ftz && x & 0x7F80_0000 == 0 { x & 0x8000_0000 } else { x };
                    bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| {
                        let (x, y) = (f32::from_bits(flush(x as u32)), f32::from_bits(flush(y as u32)));
                        let r: f32 = $e(x, y);
                        if r.is_nan() {
                            0x7FFF_FFFF
                        } else {
                            u64::from(flush(r.to_bits()))
                        }
                    })
                }};
            }
            match (op, mode.ftz) {
                (FloatBinOp::Add, false) => f32_op!(false, |x, y| x + y),
                (FloatBinOp::Sub, false) => f32_op!(false, |x, y| x - y),
                (FloatBinOp::Mul, false) => f32_op!(false, |x, y| x * y),
                (FloatBinOp::Add, true) => f32_op!(true, |x, y| x + y),
                (FloatBinOp::Sub, true) => f32_op!(true, |x, y| x - y),
                _ => f32_op!(true, |x, y| x * y),
            }
        }
        Op::FloatBin { op, ty, mode, d, a, b } => {
            let f = alu::float_bin(*op, *ty, *mode);
            bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, f)
        }
        Op::Fma { ty, mode, d, a, b, c } => {
            let f = alu::fma(*ty, *mode);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Testp { test, ty, p, a, .. } => {
            let f = alu::testp(test.as_str(), *ty);
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let mut m = 0u64;
            for l in lanes(eff) {
                m |= (f(av[l]) as u64) << l;
            }
            write_pred(cta, env, g, *p, eff, m);
        }
        Op::Cvt { dty, sty, rnd, ftz, sat, dst_bits, d, a } => {
            let f = alu::cvt(*dty, *sty, *rnd, *ftz, *sat, *dst_bits);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        _ => unreachable!("execute dispatches only these instructions to `float`"),
    }
    Ok(Effects::next())
}
