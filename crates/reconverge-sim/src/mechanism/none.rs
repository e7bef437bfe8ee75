//! No reconvergence (GPGPU-Sim 2.x `NO_RECONVERGE`): once a warp splits, its groups never merge again.
//!
//! The warp keeps a list of disjoint groups `{pc, mask}`. Groups take turns issuing one instruction each
//! (round-robin, as GPGPU-Sim's priority re-stamping does). A divergent branch replaces the group by its
//! fall-through and taken parts; exits remove lanes; groups at a barrier wait (per thread) until it
//! releases. Calls and returns need no structure: a group's lanes share one call site, so the per-thread
//! return pcs the core reports are uniform within a group (and split it if not).

use super::{next_groups, BarrierMode, EntryView, Flow, MechError, UpdateCtx, WarpMechanism};
use crate::types::{LaneMask, Pc, PC_NONE};

/// One group of lanes at one pc.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Group {
    /// Next pc.
    pub pc: Pc,
    /// Lanes.
    pub mask: LaneMask,
}

/// The groups of a warp and the round-robin position.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct NoneState {
    /// The groups, in creation order.
    pub groups: Vec<Group>,
    /// The group that issued last.
    pub current: usize,
}

/// The no-reconvergence mechanism.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoReconvergence;

impl WarpMechanism for NoReconvergence {
    type State = NoneState;

    fn name(&self) -> &'static str {
        "none"
    }

    const STRUCTURE: crate::stats::Structure = crate::stats::Structure::Paths;

    fn barrier_mode(&self) -> BarrierMode {
        BarrierMode::Thread
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Self::State {
        NoneState { groups: vec![Group { pc: entry, mask: live }], current: 0 }
    }

    fn select(&self, st: &mut Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        st.groups.retain_mut(|g| {
            g.mask &= live;
            g.mask != 0
        });
        let n = st.groups.len();
        for k in 1..=n {
            let i = (st.current + k) % n;
            let g = st.groups[i];
            if g.mask & blocked == 0 {
                st.current = i;
                return Some((g.pc, g.mask));
            }
        }
        None
    }

    fn update(
        &self,
        st: &mut Self::State,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &UpdateCtx<'_>,
    ) -> Result<(), MechError> {
        if matches!(flow, Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. }) {
            return Err(MechError("explicit stack instructions need the `ssy` mechanism".into()));
        }
        let i = st.current;
        let Some(g) = st.groups.get(i).copied() else {
            return Err(MechError("no current group".into()));
        };
        debug_assert_eq!(g.pc, pc);
        let groups = next_groups(pc, mask, flow);
        let new: Vec<Group> =
            groups.into_iter().filter(|(_, m)| m & ctx.live != 0).map(|(p, m)| Group { pc: p, mask: m }).collect();
        st.groups.splice(i..i + 1, new.iter().copied());
        // Keep round-robin fair: the next select moves past every part of the group that just issued.
        st.current = (i + new.len()).saturating_sub(1).min(st.groups.len().saturating_sub(1));
        let _ = g;
        Ok(())
    }

    fn depth(&self, st: &Self::State) -> usize {
        st.groups.len()
    }

    fn entries(&self, st: &Self::State) -> Vec<EntryView> {
        st.groups.iter().map(|g| EntryView { mask: g.mask, pc: g.pc, rpc: PC_NONE, kind: "group" }).collect()
    }
}
