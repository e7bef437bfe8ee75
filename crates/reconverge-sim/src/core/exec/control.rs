//! Instruction family: branches, calls, returns, exits and the divergence mechanisms' instructions.

use super::*;

/// Branches, calls, returns, exits and traps: the instructions that change where threads go.
#[inline(always)]
pub(super) fn control<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let nw = cta.nwarps as usize;
    match op {
        Op::Bra { target } => Ok(Effects { flow: Flow::Branch { target: *target, taken: eff }, barrier: None }),
        Op::Brx { index, targets } => {
            let iv = fetch(cta, env, g, *index, &mut sc.a, None);
            let mut groups: SmallVec<[(Pc, LaneMask); 4]> = SmallVec::new();
            for l in lanes(eff) {
                let i = iv[l] as u32 as usize;
                let Some(&t) = targets.get(i) else {
                    return Err(SimError::Trap {
                        what: format!("brx.idx index {i} is outside its {}-entry target list", targets.len()),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                };
                match groups.iter_mut().find(|(p, _)| *p == t) {
                    Some(g) => g.1 |= 1 << l,
                    None => groups.push((t, 1 << l)),
                }
            }
            Ok(Effects { flow: Flow::Multi(groups.into_vec().into_boxed_slice()), barrier: None })
        }
        Op::Call { callee, args, .. } => {
            let cf = &prog.functions[*callee as usize];
            let caller = &prog.functions[prog.info[pc as usize].func as usize];
            for l in lanes(eff) {
                let t = g.slot(l);
                let caller_base = cta.frame_base[t];
                let new_base = crate::layout::align_up(caller_base as u64 + caller.frame_size as u64, 16) as u32;
                let top = new_base as u64 + cf.frame_size as u64;
                if top > env.fixed.local_limit as u64 {
                    return Err(SimError::Trap {
                        what: format!(
                            "local memory stack overflow calling `{}` (call depth {}, {} bytes per thread; \
                             raise it with --local-bytes)",
                            cf.name,
                            cta.calls[t].len() + 1,
                            env.fixed.local_limit
                        ),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                }
                let local = cta.local_mut(t);
                if local.len() < top as usize {
                    local.resize(top as usize, 0);
                }
                for pcpy in args {
                    let from = (caller_base + pcpy.from) as usize;
                    let to = (new_base + pcpy.to) as usize;
                    let size = pcpy.size as usize;
                    local.copy_within(from..from + size, to);
                }
                let saved_regs = (0..cf.nregs).map(|r| cta.regs[(cf.reg_base + r) as usize * cta.padded + t]).collect();
                let saved_preds = (0..cf.npreds).map(|p| pred_mask(cta, g, cf.pred_base + p) >> l & 1 == 1).collect();
                cta.calls[t].push(CallFrame { ret_pc: pc + 1, call_pc: pc, caller_base, saved_regs, saved_preds });
                cta.frame_base[t] = new_base;
            }
            env.changed = true;
            Ok(Effects { flow: Flow::Call { target: cf.entry, callers: eff }, barrier: None })
        }
        Op::Ret if prog.info[pc as usize].func == 0 => {
            g.scatter(&mut cta.live, 0, nw, eff, 0);
            env.changed = true;
            Ok(Effects { flow: Flow::Exit { lanes: eff }, barrier: None })
        }
        Op::Ret => {
            let fi = prog.info[pc as usize].func as usize;
            let cf = &prog.functions[fi];
            let mut to: SmallVec<[(Pc, LaneMask); 2]> = SmallVec::new();
            for l in lanes(eff) {
                let t = g.slot(l);
                let Some(frame) = cta.calls[t].pop() else {
                    return Err(SimError::Trap {
                        what: "ret without a matching call".into(),
                        at: Box::new(location(prog, cta, pc, Some(g.slot(l)))),
                    });
                };
                if let Op::Call { rets, .. } = &prog.insts[frame.call_pc as usize].op {
                    let callee_base = cta.frame_base[t];
                    for r in rets {
                        let from = (callee_base + r.from) as usize;
                        let dst = (frame.caller_base + r.to) as usize;
                        cta.local_mut(t).copy_within(from..from + r.size as usize, dst);
                    }
                }
                for (k, v) in frame.saved_regs.iter().enumerate() {
                    cta.regs[(cf.reg_base + k as u32) as usize * cta.padded + t] = *v;
                }
                for (k, b) in frame.saved_preds.iter().enumerate() {
                    let slot = &mut cta.preds[(cf.pred_base + k as u32) as usize * nw + g.warp(l) as usize];
                    *slot = (*slot & !(1 << l)) | ((*b as u64) << l);
                }
                cta.frame_base[t] = frame.caller_base;
                match to.iter_mut().find(|(p, _)| *p == frame.ret_pc) {
                    Some(g) => g.1 |= 1 << l,
                    None => to.push((frame.ret_pc, 1 << l)),
                }
            }
            env.changed = true;
            Ok(Effects { flow: Flow::Return { lanes: eff, to: to.into_vec().into_boxed_slice() }, barrier: None })
        }
        Op::Exit => {
            g.scatter(&mut cta.live, 0, nw, eff, 0);
            env.changed = true;
            Ok(Effects { flow: Flow::Exit { lanes: eff }, barrier: None })
        }
        Op::FellOff => {
            let name = &prog.functions[prog.info[pc as usize].func as usize].name;
            Err(SimError::Trap {
                what: format!("control fell off the end of `{name}` (its last instruction is not ret, exit or a jump)"),
                at: Box::new(location(prog, cta, pc, Some(g.slot(eff.trailing_zeros() as usize)))),
            })
        }
        Op::Trap => Err(SimError::Trap {
            what: "trap".into(),
            at: Box::new(location(prog, cta, pc, Some(g.slot(eff.trailing_zeros() as usize)))),
        }),
        _ => unreachable!("execute dispatches only these instructions to `control`"),
    }
}
