//! Instruction family: integer arithmetic, logic and bit manipulation.

use super::*;

/// Integer arithmetic, carries, bit fields, permutations, `lop3`, funnel shifts.
#[inline(always)]
pub(super) fn integer<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    let nw = cta.nwarps as usize;
    match op {
        Op::IntUn { op, ty, d, a } => {
            let f = alu::int_un(*op, *ty);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, f)
        }
        Op::IntBin { op, ty, d, a, b } => match (op, ty) {
            // The hottest cases inline; the rest go through a function pointer.
            (
                IntBinOp::Add,
                reconverge_ir::ScalarType::S32 | reconverge_ir::ScalarType::U32 | reconverge_ir::ScalarType::B32,
            ) => {
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| (x as u32)
                    .wrapping_add(y as u32)
                    as u64)
            }
            (
                IntBinOp::Add,
                reconverge_ir::ScalarType::S64 | reconverge_ir::ScalarType::U64 | reconverge_ir::ScalarType::B64,
            ) => {
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, |x: u64, y: u64| x.wrapping_add(y))
            }
            _ => {
                let f = alu::int_bin(*op, *ty);
                bin!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, f)
            }
        },
        Op::IntTer { op, ty, d, a, b, c } => {
            let f = alu::int_ter(*op, *ty);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Carry { op, ty, cin, cout, d, a, b, c } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let cv = fetch(cta, env, g, *c, &mut sc.c, only);
            let carry_in = g.gather(&cta.carry, 0, nw);
            let mut carry_out = 0u64;
            for l in lanes(eff) {
                let ci = *cin && (carry_in >> l & 1 == 1);
                let (v, co) = alu::carry(*op, *ty, av[l], bv[l], cv[l], ci);
                sc.out[l] = v;
                carry_out |= (co as u64) << l;
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
            if *cout {
                g.scatter(&mut cta.carry, 0, nw, eff, carry_out);
            }
        }
        Op::Bfi { ty, d, a, b, c, e } => {
            let bits = ty.bits();
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let cv = fetch(cta, env, g, *c, &mut sc.c, only);
            let ev = fetch(cta, env, g, *e, &mut sc.e, only);
            for l in lanes(eff) {
                sc.out[l] = alu::bfi(bits, av[l], bv[l], cv[l], ev[l]);
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Prmt { mode, d, a, b, c } => {
            let f = alu::prmt(*mode);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        Op::Lop3 { d, a, b, c, lut } => {
            let lut = *lut;
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, move |x, y, z| alu::lop3(x, y, z, lut))
        }
        Op::Shf { left, clamp, d, a, b, c } => {
            let f = alu::shf(*left, *clamp);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, f)
        }
        _ => unreachable!("execute dispatches only these instructions to `integer`"),
    }
    Ok(Effects::next())
}
