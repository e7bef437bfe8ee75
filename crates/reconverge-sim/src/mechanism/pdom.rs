//! The implicit per-warp reconvergence stack of GPGPU-Sim (post-dominator reconvergence).
//!
//! Entries are `{pc, rpc, mask}` (plus a call marker). The warp issues the top entry. After a divergent
//! branch the top entry becomes the reconvergence entry (`pc = ipdom`) and one entry per path is pushed,
//! fall-through first, so the taken path runs first. A path whose next pc reaches its `rpc` is popped,
//! exposing the entry below, which already waits at the reconvergence point. A call pushes a call entry;
//! when the call entry's pc reaches the function's virtual exit (every lane returned) it is popped and
//! the caller's entry resumes after the call.

use super::{next_groups, EntryView, Flow, MechError, WarpCtx, WarpTracker};
use crate::types::{LaneMask, Pc, PC_EXIT, PC_NONE, PC_RET};

/// One stack entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PdomEntry {
    /// Next pc.
    pub pc: Pc,
    /// Reconvergence pc.
    pub rpc: Pc,
    /// Lanes.
    pub mask: LaneMask,
    /// A call entry (the callee runs in it; popped when the callee returns).
    pub call: bool,
}

/// The PDOM stack mechanism.
#[derive(Clone, Copy, Debug, Default)]
pub struct PdomStack;

fn normalize(st: &mut Vec<PdomEntry>, live: LaneMask) {
    while let Some(top) = st.last() {
        let empty = top.mask & live == 0 || top.pc == PC_EXIT;
        let reconverged = !top.call && top.pc == top.rpc;
        let returned = top.call && top.pc == PC_RET;
        if empty || reconverged || returned {
            st.pop();
        } else {
            break;
        }
    }
}

impl WarpTracker for PdomStack {
    type State = Vec<PdomEntry>;

    fn name(&self) -> &'static str {
        "pdom"
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Self::State {
        let mut v = Vec::with_capacity(8);
        v.push(PdomEntry { pc: entry, rpc: PC_NONE, mask: live, call: false });
        v
    }

    fn select(&self, st: &Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        // `update` leaves the stack normalized for the warp's live lanes.
        let top = st.last()?;
        let mask = top.mask & live & !blocked;
        (mask != 0).then_some((top.pc, mask))
    }

    fn update(
        &self,
        st: &mut Self::State,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &WarpCtx<'_>,
    ) -> Result<(), MechError> {
        let Some(top) = st.last_mut() else {
            return Err(MechError("PDOM stack underflow".into()));
        };
        match flow {
            Flow::Call { target, callers } => {
                // The caller's entry resumes after the call; non-calling lanes wait there.
                top.pc = pc + 1;
                st.push(PdomEntry { pc: *target, rpc: PC_NONE, mask: mask & callers, call: true });
            }
            Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. } => {
                return Err(MechError("explicit stack instructions need the `ssy` mechanism".into()));
            }
            _ => {
                let mut groups = next_groups(pc, mask, flow);
                // Returning lanes wait at the function's virtual exit.
                if let Flow::Return { lanes, .. } = flow {
                    groups.retain(|(_, m)| *m & lanes == 0);
                    groups.push((PC_RET, mask & lanes));
                }
                groups.retain(|(_, m)| *m & ctx.live != 0);
                match groups.len() {
                    0 => top.mask &= ctx.live,
                    1 => top.pc = groups[0].0,
                    _ => {
                        let r = match ctx.prog.reconv.get(pc as usize) {
                            Some(&r) if r != PC_NONE => r,
                            _ => {
                                return Err(MechError(format!(
                                    "divergence at {} which has no reconvergence point",
                                    ctx.prog.describe_pc(pc)
                                )))
                            }
                        };
                        let old_r = top.rpc;
                        if r != old_r || top.call {
                            top.pc = r;
                        } else {
                            st.pop();
                        }
                        for (gpc, gmask) in groups {
                            if gpc != r {
                                st.push(PdomEntry { pc: gpc, rpc: r, mask: gmask, call: false });
                            }
                        }
                    }
                }
            }
        }
        normalize(st, ctx.live);
        Ok(())
    }

    fn depth(&self, st: &Self::State) -> usize {
        st.len()
    }

    fn entries(&self, st: &Self::State) -> Vec<EntryView> {
        st.iter().map(|e| EntryView::warp(if e.call { "call" } else { "div" }, e.mask, e.pc, e.rpc)).collect()
    }
}
