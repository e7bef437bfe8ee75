//! Instruction family: barriers and warp-synchronous collectives.

use super::*;

/// Barriers and warp-level collectives.
#[inline(always)]
pub(super) fn collective<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, mask, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let w = cta.w;
    match op {
        Op::Bar { kind, id, count, d, p, c } => {
            let idv = fetch(cta, env, g, *id, &mut sc.a, None)[eff.trailing_zeros() as usize] as u32;
            if idv >= 16 {
                return Err(SimError::Trap {
                    what: format!("barrier id {idv} is not in 0..16"),
                    at: Box::new(location(prog, cta, pc, None)),
                });
            }
            let cnt = match count {
                Some(cs) => Some(fetch(cta, env, g, *cs, &mut sc.b, None)[eff.trailing_zeros() as usize] as u32),
                None => None,
            };
            let red = match kind {
                BarKind::RedPopc => Some((pred_src_mask(cta, g, *c) & eff, d.unwrap_or(0), false)),
                BarKind::RedAnd | BarKind::RedOr => Some((pred_src_mask(cta, g, *c) & eff, p.unwrap_or(0), true)),
                _ => None,
            };
            return Ok(Effects {
                flow: Flow::Next,
                barrier: Some(Box::new(BarrierArrival { id: idv, count: cnt, kind: *kind, lanes: eff, red })),
            });
        }
        // The member check of `split_by_members` is all `bar.warp.sync` does.
        Op::WarpSync { .. } => {}
        Op::Shfl { mode, d, p, a, b, c, .. } => {
            let av: SmallVec<[u64; 64]> = fetch(cta, env, g, *a, &mut sc.a, None).iter().copied().collect();
            let bv = fetch(cta, env, g, *b, &mut sc.b, None);
            let cv = fetch(cta, env, g, *c, &mut sc.c, None);
            let mut pm = 0u64;
            let mut read_inactive = None;
            for l in lanes(eff) {
                let (src, valid) = alu::shfl_lane(*mode, l as u32, bv[l] as u32, cv[l] as u32, w as u32);
                let src = src as usize;
                if valid && eff >> src & 1 == 0 {
                    read_inactive = Some((l, src));
                }
                sc.out[l] = if valid { av[src] } else { av[l] };
                pm |= (valid as u64) << l;
            }
            if let Some((l, src)) = read_inactive {
                return Err(SimError::Trap {
                    what: format!("shfl.sync in lane {l} reads lane {src}, which is not executing it"),
                    at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                });
            }
            if let Some(d) = d {
                write_reg(cta, env, g, *d, eff, &sc.out, false);
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
        }
        Op::Vote { mode, d, a, .. } => {
            let am = pred_src_mask(cta, g, *a) & eff;
            match (mode, d) {
                (VoteMode::Ballot, Src::Reg(r)) => {
                    sc.out[..w].fill(am);
                    write_reg(cta, env, g, *r, eff, &sc.out, false);
                }
                (_, Src::Pred(p)) => {
                    let r = match mode {
                        VoteMode::All => am == eff,
                        VoteMode::Any => am != 0,
                        _ => am == 0 || am == eff,
                    };
                    write_pred(cta, env, g, *p, eff, if r { u64::MAX } else { 0 });
                }
                _ => unreachable!("decoder checks vote destinations"),
            }
        }
        Op::Activemask { d } => {
            // The lanes of the thread's own (static) warp executing with it: the whole group for a
            // static warp; in a regrouped group, those of its part.
            match g.base() {
                Some(_) => sc.out[..w].fill(mask),
                None => {
                    for l in lanes(eff) {
                        let me = g.warp(l);
                        sc.out[l] = lanes(mask).filter(|&k| g.warp(k) == me).fold(0, |a, k| a | 1 << k);
                    }
                }
            }
            write_reg(cta, env, g, *d, eff, &sc.out, false);
        }
        Op::Match { all, ty, d, p, a, mask: m } => {
            let mv = fetch(cta, env, g, *m, &mut sc.b, None)[eff.trailing_zeros() as usize] & full_mask(w as u32);
            let vm = full_mask(ty.bits());
            let av = fetch(cta, env, g, *a, &mut sc.a, None);
            let members = mv & eff;
            let mut pm = 0u64;
            for l in lanes(eff) {
                let same = lanes(members).filter(|&k| av[k] & vm == av[l] & vm).fold(0u64, |acc, k| acc | 1 << k);
                if *all {
                    let ok = same == members;
                    sc.out[l] = if ok { members } else { 0 };
                    pm |= (ok as u64) << l;
                } else {
                    sc.out[l] = same;
                }
            }
            if let Some(d) = d {
                write_reg(cta, env, g, *d, eff, &sc.out, false);
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, pm);
            }
        }
        Op::Redux { op, ty, d, a, mask: m } => {
            let mv = fetch(cta, env, g, *m, &mut sc.b, None)[eff.trailing_zeros() as usize] & full_mask(w as u32);
            let av = fetch(cta, env, g, *a, &mut sc.a, None);
            let members = mv & eff;
            let r = alu::redux(*op, *ty, lanes(members).map(|k| av[k]));
            sc.out[..w].fill(r);
            write_reg(cta, env, g, *d, eff, &sc.out, false);
        }
        Op::Elect { d, p, mask: m } => {
            let mv = fetch(cta, env, g, *m, &mut sc.b, None)[eff.trailing_zeros() as usize] & full_mask(w as u32);
            let leader = (mv & eff).trailing_zeros() as usize;
            if let Some(d) = d {
                sc.out[..w].fill(leader as u64);
                write_reg(cta, env, g, *d, eff, &sc.out, false);
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, (mv & eff) & (1u64 << leader.min(63)));
            }
        }
        _ => unreachable!("execute dispatches only these instructions to `collective`"),
    }
    Ok(Effects::next())
}
