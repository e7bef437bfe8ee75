//! Instruction family: loads, stores, atomics and address conversions.

use super::*;

/// Loads, stores, atomics and address-space conversions and queries.
#[inline(always)]
pub(super) fn memory<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, direct, only, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let w = cta.w;
    match op {
        Op::Ld { space: space @ (Space::KernelParam | Space::Const), ty, d, addr, dst_bits, .. }
            if matches!(addr.base, AddrBase::Const(_)) && d.len() == 1 =>
        {
            // A load of one constant address (a kernel parameter, a constant): every lane reads the same
            // value, so it is read once (a fault is the first lane's, as lane by lane).
            let size = ty.bytes();
            env.access.begin(AccessKind::Load, size);
            let first = eff.trailing_zeros() as usize;
            let a = lane_addr(cta, g, first, addr);
            for l in lanes(eff) {
                env.access.record(l, *space, a);
            }
            let v = mem_read(env, cta, g.slot(first), *space, a, size)
                .map_err(|f| mem_err(env, cta, pc, g.slot(first), f))?;
            if let Some(r) = d[0] {
                let v = if ty.is_signed() { sign_extend(v, size * 8, *dst_bits) } else { v };
                sc.out[..w].fill(v);
                write_reg(cta, env, g, r, eff, &sc.out, only.is_some());
            }
        }
        Op::Ld { space, ty, d, addr, dst_bits, .. } => {
            let size = ty.bytes();
            let signed = ty.is_signed();
            env.access.begin(AccessKind::Load, size * d.len() as u32);
            if sc.warp_memory && load_warp(env, sc, cta, g, eff, only, (*space, *ty, d, addr, *dst_bits)) {
                return Ok(Effects::next());
            }
            for l in lanes(eff) {
                let a0 = lane_addr(cta, g, l, addr);
                env.access.record(l, *space, a0);
                for (k, dr) in d.iter().enumerate() {
                    let a = a0.wrapping_add(k as u64 * size as u64);
                    let v = mem_read(env, cta, g.slot(l), *space, a, size)
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                    if let Some(r) = dr {
                        let v = if signed { sign_extend(v, size * 8, *dst_bits) } else { v };
                        write_lane(cta, env, g, *r, l, v);
                    }
                }
            }
        }
        Op::St { space, ty, s, addr } => {
            let size = ty.bytes();
            env.access.begin(AccessKind::Store, size * s.len() as u32);
            if sc.warp_memory && store_warp(env, sc, cta, g, eff, only, (*space, size, s, addr)) {
                return Ok(Effects::next());
            }
            for (k, src) in s.iter().enumerate() {
                let vals = fetch(cta, env, g, *src, &mut sc.a, only);
                sc.out[..w].copy_from_slice(vals);
                for l in lanes(eff) {
                    let a0 = lane_addr(cta, g, l, addr);
                    if k == 0 {
                        env.access.record(l, *space, a0);
                    }
                    let a = a0.wrapping_add(k as u64 * size as u64);
                    mem_write(env, cta, g.slot(l), *space, a, size, sc.out[l])
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                }
            }
        }
        Op::Atom { space, op, ty, d, addr, b, c } => {
            let size = ty.bytes();
            env.access.begin(AccessKind::Atomic, size);
            let bv: SmallVec<[u64; 64]> = fetch(cta, env, g, *b, &mut sc.b, only).iter().copied().collect();
            let cv: SmallVec<[u64; 64]> = fetch(cta, env, g, *c, &mut sc.c, only).iter().copied().collect();
            for l in lanes(eff) {
                let a = lane_addr(cta, g, l, addr);
                env.access.record(l, *space, a);
                let (sp, ra) = resolve(*space, a);
                if sp == Space::Global {
                    if ra % size as u64 != 0 {
                        let f = MemFault { kind: FaultKind::Misaligned, addr: a, size, space: sp };
                        return Err(mem_err(env, cta, pc, g.slot(l), f));
                    }
                    let req = AtomicRequest {
                        addr: ra,
                        op: *op,
                        ty: *ty,
                        b: bv[l],
                        c: cv[l],
                        cta_slot: env.cta_slot,
                        thread: (g.slot(l)) as u32,
                        dst: *d,
                    };
                    let (old, changed) = env.mem.atomic(req).map_err(|mut f| {
                        f.addr = a;
                        mem_err(env, cta, pc, g.slot(l), f)
                    })?;
                    env.changed |= changed;
                    if let (Some(r), Some(old)) = (d, old) {
                        write_lane(cta, env, g, *r, l, old);
                    }
                    continue;
                }
                let old =
                    mem_read(env, cta, g.slot(l), *space, a, size).map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                let new = alu::atom(*op, *ty, old, bv[l], cv[l]);
                if new != old {
                    mem_write(env, cta, g.slot(l), *space, a, size, new)
                        .map_err(|f| mem_err(env, cta, pc, g.slot(l), f))?;
                }
                if let Some(r) = d {
                    write_lane(cta, env, g, *r, l, old);
                }
            }
        }
        Op::Cvta { to_generic, space, d, a } => {
            let window = match space {
                Space::Shared => SHARED_WINDOW,
                Space::Local => LOCAL_WINDOW,
                Space::Const => CONST_WINDOW,
                Space::KernelParam => PARAM_WINDOW,
                _ => 0,
            };
            if *to_generic {
                un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x.wrapping_add(window))
            } else {
                un!((env, sc, cta, g, eff, w, direct, only), *d, *a, move |x: u64| x.wrapping_sub(window))
            }
        }
        Op::Isspacep { space, p, a } => {
            let av = fetch(cta, env, g, *a, &mut sc.a, only);
            let mut m = 0u64;
            for l in lanes(eff) {
                let (sp, _) = resolve(Space::Generic, av[l]);
                m |= ((sp == *space) as u64) << l;
            }
            write_pred(cta, env, g, *p, eff, m);
        }
        _ => unreachable!("execute dispatches only these instructions to `memory`"),
    }
    Ok(Effects::next())
}
