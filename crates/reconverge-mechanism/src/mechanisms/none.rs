//! No reconvergence (GPGPU-Sim 2.x `NO_RECONVERGE`): once a warp splits, its groups never merge again.
//!
//! The warp keeps a list of disjoint groups `{pc, mask}`. Groups take turns issuing one instruction each
//! (round-robin, as GPGPU-Sim's priority re-stamping does). A divergent branch replaces the group by its
//! fall-through and taken parts; exits remove lanes; groups at a barrier wait (per thread) until it
//! releases. Calls and returns need no structure: a group's lanes share one call site, so the per-thread
//! return pcs the core reports are uniform within a group (and split it if not).

use crate::interface::Done;
use crate::program::Program;
use crate::types::{LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::{next_groups, BarrierMode, EntryView, Flow, MechError, WarpCtx, WarpTracker};

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

impl WarpTracker for NoReconvergence {
    type State = NoneState;

    fn name(&self) -> &'static str {
        INFO.name
    }

    const STRUCTURE: crate::Structure = crate::Structure::Paths;

    const BARRIER: BarrierMode = BarrierMode::Thread;

    const ROUNDS: bool = true;

    fn init(&self, entry: Pc, live: LaneMask) -> Self::State {
        NoneState { groups: vec![Group { pc: entry, mask: live }], current: 0 }
    }

    fn select(&self, st: &Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        // Round robin from the group after the one that issued last; `update` drops exited lanes.
        let n = st.groups.len();
        (1..=n)
            .map(|k| st.groups[(st.current + k) % n])
            .find(|g| g.mask & live != 0 && g.mask & blocked == 0)
            .map(|g| (g.pc, g.mask & live))
    }

    fn update(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        if matches!(flow, Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. }) {
            return Err(MechError::NeedsSsy);
        }
        // The group that issued (the commit of `select`'s choice).
        let Some(i) = st.groups.iter().position(|g| g.pc == pc && g.mask & mask == mask) else {
            return Err(MechError::NotHeld("the list"));
        };
        if let Flow::Next = flow {
            // Straight-line code: the group moves on (without the lanes that exited before it issued).
            st.groups[i] = Group { pc: pc + 1, mask };
            st.current = i;
            return Ok(());
        }
        let groups = next_groups(pc, mask, flow);
        let new: smallvec::SmallVec<[Group; 4]> =
            groups.into_iter().filter(|(_, m)| m & ctx.live != 0).map(|(p, m)| Group { pc: p, mask: m }).collect();
        st.groups.splice(i..i + 1, new.iter().copied());
        // Keep round-robin fair: the next select moves past every part of the group that just issued.
        st.current = (i + new.len()).saturating_sub(1).min(st.groups.len().saturating_sub(1));
        Ok(())
    }

    fn straight_run(&self, st: &Self::State, _pc: Pc, _mask: LaneMask, max: u32) -> u32 {
        // Several groups take turns after every instruction; a lone group runs on.
        if st.groups.len() == 1 {
            max
        } else {
            1
        }
    }

    fn rotation(
        &self,
        st: &Self::State,
        _prog: &Program,
        (live, blocked): (LaneMask, LaneMask),
        out: &mut Vec<(Pc, LaneMask)>,
    ) -> bool {
        // Turns go round the list from the group after `current` while every group issues all its lanes
        // (none holds exited lanes or waits at a barrier): at a pure instruction `update` moves the group
        // on in place and gives it the turn.
        let n = st.groups.len();
        if n < 2 || !st.groups.iter().all(|g| g.mask != 0 && g.mask & !live == 0 && g.mask & blocked == 0) {
            return false;
        }
        out.extend((1..=n).map(|k| st.groups[(st.current + k) % n]).map(|g| (g.pc, g.mask)));
        true
    }

    fn advance_rounds(&self, st: &mut Self::State, rounds: u32, _ctx: &mut WarpCtx<'_>) -> Done {
        // After whole rounds every group moved `rounds` pcs on and the turn is where it was.
        for g in st.groups.iter_mut() {
            g.pc += rounds;
        }
        Ok(())
    }

    fn depth(&self, st: &Self::State) -> usize {
        st.groups.len()
    }

    fn entries(&self, st: &Self::State) -> Vec<EntryView> {
        st.groups.iter().map(|g| EntryView::warp(EntryKind::Group, g.mask, g.pc, PC_NONE)).collect()
    }
}

/// The registry's facts of `none`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "none",
    crate::Scope::Warp,
    "no reconvergence (GPGPU-Sim 2.x NO_RECONVERGE): split groups take turns until they exit",
)
.storage(STORAGE);

/// What `none` stores: a list of disjoint groups per warp, at most one per thread.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[Part::new("groups", Per::Warp, Cells::Sram, common::PATHS_ENTRIES, Size::Sum(&[Size::Pc, Size::W]), "{pc, mask}")]
};

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{at_join, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&NoReconvergence, &program(DIAMOND), 0b1111, 0b0001, 64);
        // The split groups take turns and never merge: the join and the exit issue once per group.
        assert_eq!(at_join(&t), vec![0b0001, 0b1110]);
        assert_eq!(t.iter().filter(|(pc, _)| *pc == 6).count(), 2);
    }

    #[test]
    fn rounds_go_round_the_groups_from_the_one_after_the_last_turn() {
        let prog = program(DIAMOND);
        let g = |pc, mask| Group { pc, mask };
        let st = NoneState { groups: vec![g(2, 0b0110), g(4, 0b0001), g(2, 0b1000)], current: 2 };
        let mut out = Vec::new();
        assert!(NoReconvergence.rotation(&st, &prog, (0b1111, 0), &mut out));
        assert_eq!(out, [(2, 0b0110), (4, 0b0001), (2, 0b1000)]);
        crate::testing::assert_rounds_are_turns(&NoReconvergence, &prog, &st, 0b1111, 4);
        // Not while a group holds lanes that exited or wait at a barrier.
        assert!(!NoReconvergence.rotation(&st, &prog, (0b0111, 0), &mut out));
        assert!(!NoReconvergence.rotation(&st, &prog, (0b1111, 0b0001), &mut out));
    }
}
