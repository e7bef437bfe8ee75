//! Instruction family: comparisons, selects, conversions and moves.

use super::*;

/// Comparisons of `setp`, specialized per operator and type: integers by signedness and width, `f32` and
/// `f64` natively (the semantics crate's rules: ordered comparisons are false and unordered ones true when
/// an operand is NaN). `None` for other types (half precision), which take the generic path.
#[inline]
pub(super) fn fast_compare(
    cmp: Cmp,
    ty: reconverge_ir::ScalarType,
    eff: LaneMask,
    w: (usize, bool),
    a: &[u64],
    b: &[u64],
) -> Option<LaneMask> {
    use reconverge_ir::ScalarType as T;
    macro_rules! float_cmp {
        ($conv:expr) => {{
            let conv = $conv;
            macro_rules! f {
                ($e:expr) => {
                    mask2(eff, w, a, b, |x, y| {
                        let (x, y) = (conv(x), conv(y));
                        $e(x, y)
                    })
                };
            }
            match cmp {
                Cmp::Eq => f!(|x, y| x == y),
                Cmp::Ne => f!(|x: f64, y: f64| !(x.is_nan() || y.is_nan()) && x != y),
                Cmp::Lt | Cmp::Lo => f!(|x, y| x < y),
                Cmp::Le | Cmp::Ls => f!(|x, y| x <= y),
                Cmp::Gt | Cmp::Hi => f!(|x, y| x > y),
                Cmp::Ge | Cmp::Hs => f!(|x, y| x >= y),
                Cmp::Equ => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x == y),
                Cmp::Neu => f!(|x, y| x != y),
                Cmp::Ltu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x < y),
                Cmp::Leu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x <= y),
                Cmp::Gtu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x > y),
                Cmp::Geu => f!(|x: f64, y: f64| x.is_nan() || y.is_nan() || x >= y),
                Cmp::Num => f!(|x: f64, y: f64| !(x.is_nan() || y.is_nan())),
                Cmp::Nan => f!(|x: f64, y: f64| x.is_nan() || y.is_nan()),
            }
        }};
    }
    match ty {
        T::F32 => return Some(float_cmp!(|v: u64| f64::from(f32::from_bits(v as u32)))),
        T::F64 => return Some(float_cmp!(f64::from_bits)),
        _ => {}
    }
    if !(ty.is_integer() || ty.is_bits()) || ty.bits() > 64 {
        return None;
    }
    let sh = 64 - ty.bits();
    let s = move |x: u64| ((x << sh) as i64) >> sh;
    let u = move |x: u64| x << sh;
    macro_rules! int_cmp {
        ($conv:expr, $op:tt) => {{
            let conv = $conv;
            mask2(eff, w, a, b, |x, y| conv(x) $op conv(y))
        }};
    }
    Some(match (cmp, ty.is_signed()) {
        (Cmp::Eq | Cmp::Equ, _) => int_cmp!(u, ==),
        (Cmp::Ne | Cmp::Neu, _) => int_cmp!(u, !=),
        (Cmp::Lt | Cmp::Ltu, true) => int_cmp!(s, <),
        (Cmp::Le | Cmp::Leu, true) => int_cmp!(s, <=),
        (Cmp::Gt | Cmp::Gtu, true) => int_cmp!(s, >),
        (Cmp::Ge | Cmp::Geu, true) => int_cmp!(s, >=),
        (Cmp::Lt | Cmp::Ltu | Cmp::Lo, _) => int_cmp!(u, <),
        (Cmp::Le | Cmp::Leu | Cmp::Ls, _) => int_cmp!(u, <=),
        (Cmp::Gt | Cmp::Gtu | Cmp::Hi, _) => int_cmp!(u, >),
        (Cmp::Ge | Cmp::Geu | Cmp::Hs, _) => int_cmp!(u, >=),
        (Cmp::Num, _) => eff,
        (Cmp::Nan, _) => 0,
    })
}

/// Comparisons, selections, moves, predicate logic, packing and unpacking.
#[inline(always)]
pub(super) fn compare_move<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::Setp { cmp, ty, p, q, a, b, comb } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            let m = match fast_compare(*cmp, *ty, eff, (w, only.is_some()), av, bv) {
                Some(m) => m,
                None => {
                    let f = alu::compare(*cmp, *ty);
                    let mut m = 0u64;
                    for l in lanes(eff) {
                        m |= (f(av[l], bv[l]) as u64) << l;
                    }
                    m
                }
            };
            let (pm, qm) = match comb {
                None => (m, !m),
                Some((op, c)) => {
                    let cm = pred_src_mask(cta, g, *c);
                    (alu::bool_mask(*op, m, cm), alu::bool_mask(*op, !m, cm))
                }
            };
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
            if let Some(q) = q {
                write_pred(cta, env, g, *q, eff, qm);
            }
        }
        Op::Set { cmp, dty, sty, d, a, b, comb } => {
            let f = alu::compare(*cmp, *sty);
            let cm = comb.map(|(op, c)| (op, pred_src_mask(cta, g, c)));
            let one = if dty.is_float() { 0x3F80_0000 } else { 0xFFFF_FFFF };
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            for l in lanes(eff) {
                let mut r = f(av[l], bv[l]);
                if let Some((op, c)) = cm {
                    r = alu::bool_mask(op, r as u64, c >> l & 1) & 1 == 1;
                }
                sc.out[l] = if r { one } else { 0 };
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Selp { d, a, b, c } => {
            let cm = pred_src_mask(cta, g, *c);
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let bv = fetch(cta, env, g, *b, &mut sc.b, only);
            for l in lanes(eff) {
                sc.out[l] = if cm >> l & 1 == 1 { av[l] } else { bv[l] };
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Slct { sty, d, a, b, c } => {
            let f = alu::slct_cond(*sty);
            ter!((env, sc, cta, g, eff, w, direct, only), *d, *a, *b, *c, move |x, y, z| if f(z) { x } else { y })
        }
        Op::Mov { d, a, bits } => {
            let m = full_mask(*bits);
            un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x & m)
        }
        Op::PredOp { op, not, d, a, b } => {
            let am = pred_src_mask(cta, g, *a);
            let bm = pred_src_mask(cta, g, *b);
            let r = match op {
                None => am,
                Some(o) => alu::bool_mask(*o, am, bm),
            };
            write_pred(cta, env, g, *d, eff, if *not { !r } else { r });
        }
        Op::Pack { d, parts, elem_bits } => {
            let em = full_mask(*elem_bits);
            sc.out[..w].fill(0);
            for (k, p) in parts.iter().enumerate() {
                let pv = fetch(cta, env, g, *p, &mut sc.a, only);
                for l in lanes(eff) {
                    sc.out[l] |= (pv[l] & em) << (k as u32 * elem_bits);
                }
            }
            write_reg(cta, env, g, *d, eff, &sc.out, only.is_some());
        }
        Op::Unpack { parts, s, elem_bits } => {
            let em = full_mask(*elem_bits);
            let sv: SmallVec<[u64; 64]> = fetch(cta, env, g, *s, &mut sc.a, only).iter().copied().collect();
            for (k, p) in parts.iter().enumerate() {
                if let Some(r) = p {
                    for l in lanes(eff) {
                        sc.out[l] = (sv[l] >> (k as u32 * elem_bits)) & em;
                    }
                    write_reg(cta, env, g, *r, eff, &sc.out, only.is_some());
                }
            }
        }
        _ => unreachable!("execute dispatches only these instructions to `compare_move`"),
    }
    Ok(Effects::next())
}
