//! Instruction family: asynchronous copies (`cp.async`, done at issue here; the timing model times their
//! global reads and holds `cp.async.wait_*` until they complete) and the shared-memory barrier objects of
//! `mbarrier` ([`reconverge_semantics::mbarrier`]).

use super::*;
use reconverge_semantics::mbarrier;

/// One lane's `cp.async`: `size` bytes from `src` to `dst`, those from `src_size` on zero.
fn copy_lane<G: GlobalMemory>(
    env: &mut Env<G>,
    cta: &mut Cta,
    (pc, slot): (Pc, usize),
    (dst_space, dst): (Space, u64),
    (src_space, src): (Space, u64),
    (size, src_size): (u32, u64),
) -> Result<(), SimError> {
    for at in (0..size).step_by(4) {
        let v = if u64::from(at) + 4 <= src_size {
            mem_read(env, cta, slot, src_space, src + u64::from(at), 4).map_err(|f| mem_err(env, cta, pc, slot, f))?
        } else {
            let mut v = 0;
            for b in at..at + 4 {
                if u64::from(b) < src_size {
                    let byte = mem_read(env, cta, slot, src_space, src + u64::from(b), 1)
                        .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                    v |= byte << (8 * (b - at));
                }
            }
            v
        };
        mem_write(env, cta, slot, dst_space, dst + u64::from(at), 4, v).map_err(|f| mem_err(env, cta, pc, slot, f))?;
    }
    Ok(())
}

/// `cp.async`, `cp.async.wait_*`, `mbarrier`.
pub(super) fn asynchronous<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    match op {
        Op::CpAsync { dst_space, dst, src_space, src, size, src_size, .. } => {
            env.access.begin(AccessKind::Load, *size);
            for l in lanes(eff) {
                let slot = g.slot(l);
                let (d, s) = (lane_addr(cta, g, l, dst), lane_addr(cta, g, l, src));
                for (space, a) in [(*dst_space, d), (*src_space, s)] {
                    if !resolve(space, a).1.is_multiple_of(u64::from(*size)) {
                        let f = MemFault { kind: FaultKind::Misaligned, addr: a, size: *size, space };
                        return Err(mem_err(env, cta, pc, slot, f));
                    }
                }
                let n = src_size.map_or(u64::from(*size), |s| lane_value(cta, env, g, s, l).min(u64::from(*size)));
                env.access.record(l, *src_space, s);
                copy_lane(env, cta, (pc, slot), (*dst_space, d), (*src_space, s), (*size, n))?;
            }
        }
        Op::CpAsyncWait { .. } => {}
        Op::Mbarrier { op, space, addr, d, p, a } => {
            env.access.begin(AccessKind::Atomic, 8);
            let mut done = 0u64;
            for l in lanes(eff) {
                let slot = g.slot(l);
                let av = lane_value(cta, env, g, *a, l);
                let Some(addr) = addr else {
                    if let Some(d) = d {
                        write_lane(cta, env, g, *d, l, mbarrier::pending_count(av));
                    }
                    continue;
                };
                let at = lane_addr(cta, g, l, addr);
                if !resolve(*space, at).1.is_multiple_of(8) {
                    let f = MemFault { kind: FaultKind::Misaligned, addr: at, size: 8, space: *space };
                    return Err(mem_err(env, cta, pc, slot, f));
                }
                env.access.record(l, *space, at);
                let bits = mem_read(env, cta, slot, *space, at, 8).map_err(|f| mem_err(env, cta, pc, slot, f))?;
                let new = match op {
                    MbarrierOp::Init => Some(mbarrier::init(av)),
                    MbarrierOp::Inval => Some(0),
                    MbarrierOp::Arrive { drop, expect_tx } => {
                        let (count, tx) = if *expect_tx { (1, av) } else { (av, 0) };
                        let (new, token) = mbarrier::arrive(bits, count, tx, *drop);
                        if let Some(d) = d {
                            write_lane(cta, env, g, *d, l, token);
                        }
                        Some(new)
                    }
                    MbarrierOp::ExpectTx => Some(mbarrier::expect_tx(bits, av)),
                    MbarrierOp::CompleteTx => Some(mbarrier::complete_tx(bits, av)),
                    MbarrierOp::TestWait { parity } => {
                        let ok = if *parity { mbarrier::parity_done(bits, av) } else { mbarrier::phase_done(bits, av) };
                        done |= u64::from(ok) << l;
                        None
                    }
                    MbarrierOp::PendingCount => None,
                };
                if let Some(new) = new.filter(|n| *n != bits) {
                    mem_write(env, cta, slot, *space, at, 8, new).map_err(|f| mem_err(env, cta, pc, slot, f))?;
                }
            }
            if let Some(p) = p {
                write_pred(cta, env, g, *p, eff, done);
            }
        }
        _ => return Err(SimError::Internal("asynchronous() called for another family")),
    }
    Ok(Effects::next())
}
