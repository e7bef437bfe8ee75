//! Parallel path traversal (seed 003 §2.5): per-warp mechanisms whose warp holds several paths that are
//! *each* eligible to issue, so the timing model can interleave them to hide latency.
//!
//! [`SlotTracker`] is the interface (a per-warp structure with a fixed number of path slots); [`Slots`]
//! turns it into a [`Tracker`] whose issue contexts are `warp × slots + slot`. Every context of a warp
//! occupies that warp's hardware warp slot (so its paths share the warp's scheduler), and a group must
//! wait only for its own lanes (`hold` = the path's lanes: the scoreboard is per path, as both papers
//! extend it).

use crate::interface::Done;
use crate::program::Program;
use crate::tracker::{Blocked, Counter, CtaView, Group, LaneMap, Peek, Position, PositionState, Tracker, UpdateCtx};
use crate::types::{LaneMask, Pc};
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError, WarpCtx};
use std::fmt;

/// A per-warp mechanism with several simultaneously issuable path slots.
pub trait SlotTracker: Sync {
    /// The per-warp structure.
    type State: Clone + fmt::Debug + Send;
    /// What the structure's size is called in the statistics.
    const STRUCTURE: Structure;
    /// Counters the mechanism keeps.
    const COUNTERS: &'static [Counter] = &[];
    /// [`Tracker::CO_ISSUE_PATHS`]: the timing model may issue two of the warp's slots in one cycle.
    const CO_ISSUE_PATHS: bool = false;
    /// [`Tracker::CO_ISSUE_WARPS`]: the timing model may pair a slot with a group of another warp.
    const CO_ISSUE_WARPS: bool = false;
    /// [`Tracker::SPLITS_ON_MISS`]: the mechanism separates a load's missing lanes from those that hit.
    const SPLITS_ON_MISS: bool = false;

    /// The name used on the command line and in statistics.
    fn name(&self) -> &'static str;
    /// Path slots per warp for warps of up to `w` threads (called with 64, the largest warp).
    fn slots(&self, w: u32) -> u32;
    /// The state of a warp whose `live` lanes start at `entry`.
    fn init(&self, entry: Pc, live: LaneMask, w: u32) -> Self::State;
    /// The path in slot `k` (its pc and lanes), if the slot may issue. Pure.
    fn slot(&self, st: &Self::State, k: u32) -> Option<(Pc, LaneMask)>;
    /// The path in slot `k` when the warp's `live` lanes are alive and its `blocked` lanes wait at a
    /// barrier: what the issue logic offers now. The default is [`SlotTracker::slot`]; a mechanism whose
    /// slots are *chosen* among its paths (`sbi`'s primary and secondary) skips paths that cannot issue.
    /// Pure.
    #[inline]
    fn slot_in(&self, st: &Self::State, k: u32, _live: LaneMask, _blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        self.slot(st, k)
    }
    /// Updates the structure after slot `k` issued (`pc`, `mask`) with outcome `flow`.
    fn update(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done;
    /// How many straight-line instructions from `pc` (at most `max`) slot `k`'s group (`pc`, `mask`) may
    /// issue back to back, one [`SlotTracker::advance`] standing for their updates (see
    /// [`crate::Tracker::straight_run`]): the slot must keep the same path, with the same lanes, after each
    /// of them. The default, 1, updates after every instruction. Pure.
    #[inline]
    fn straight_run(&self, _st: &Self::State, _k: u32, _pc: Pc, _mask: LaneMask, _max: u32) -> u32 {
        1
    }
    /// Slot `k`'s group (`pc`, `mask`) issued the `n` straight-line instructions that
    /// [`SlotTracker::straight_run`] allowed: update as `n` updates with [`Flow::Next`] would.
    #[inline]
    fn advance(&self, st: &mut Self::State, k: u32, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        for i in 0..n {
            self.update(st, k, pc + i, mask, &Flow::Next, ctx)?;
        }
        Ok(())
    }
    /// For mechanisms with [`SlotTracker::SPLITS_ON_MISS`]: the lanes `issued` of the load at `pc` (the
    /// update already ran) partly missed: `missed` wait for memory, the others hit. Returns whether the
    /// structure now holds the two sets in separate slots.
    #[inline]
    fn split_on_miss(
        &self,
        _st: &mut Self::State,
        _pc: Pc,
        _issued: LaneMask,
        _missed: LaneMask,
        _ctx: &mut WarpCtx<'_>,
    ) -> Result<bool, MechError> {
        Ok(false)
    }
    /// The current size of the structure.
    fn depth(&self, st: &Self::State) -> usize;
    /// The structure, bottom first, for traces.
    fn entries(&self, st: &Self::State) -> Vec<EntryView>;
}

/// A [`SlotTracker`] as a [`Tracker`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Slots<T>(pub T);

/// The per-CTA state: each warp's structure and the slots per warp.
#[derive(Clone, Debug)]
pub struct SlotCta<S> {
    /// Per static warp.
    pub warps: Vec<S>,
    /// Slots per warp.
    pub slots: u32,
}

impl<T: SlotTracker> Tracker for Slots<T> {
    type Sm = ();
    type Cta = SlotCta<T::State>;

    const STRUCTURE: Structure = T::STRUCTURE;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = T::COUNTERS;
    const CO_ISSUE_PATHS: bool = T::CO_ISSUE_PATHS;
    const SPLITS_ON_MISS: bool = T::SPLITS_ON_MISS;
    const CO_ISSUE_WARPS: bool = T::CO_ISSUE_WARPS;

    #[inline]
    fn name(&self) -> &'static str {
        self.0.name()
    }

    #[inline]
    fn new_sm(&self, _prog: &Program, _launch: &crate::launch::LaunchConfig) {}

    #[inline]
    fn contexts(&self, nwarps: u32, _nthreads: u32) -> u32 {
        nwarps * self.0.slots(64)
    }

    #[inline]
    fn hw_warp(&self, st: &SlotCta<T::State>, ctx: u32) -> u32 {
        ctx / st.slots
    }

    #[inline]
    fn occupied(&self, _sm: &(), st: &SlotCta<T::State>, _contexts: u32, out: &mut Vec<u32>) {
        for (w, s) in st.warps.iter().enumerate() {
            for k in 0..st.slots {
                if self.0.slot(s, k).is_some() {
                    out.push(w as u32 * st.slots + k);
                }
            }
        }
    }

    #[inline]
    fn launch(&self, _sm: &mut (), _cta: u32, view: &CtaView<'_>, entry: Pc) -> SlotCta<T::State> {
        SlotCta { warps: view.live.iter().map(|&m| self.0.init(entry, m, view.w)).collect(), slots: self.0.slots(64) }
    }

    #[inline]
    fn peek(&self, _sm: &(), st: &SlotCta<T::State>, view: &CtaView<'_>, ctx: u32) -> Peek {
        let (w, k) = ((ctx / st.slots) as usize, ctx % st.slots);
        let Some(s) = st.warps.get(w) else { return Peek::Empty };
        let live = view.live[w];
        match self.0.slot_in(s, k, live, view.blocked[w]) {
            None => Peek::Empty,
            Some((pc, m)) => {
                let mask = m & live & !view.blocked[w];
                if mask != 0 {
                    Peek::Ready(Group {
                        ctx,
                        pc,
                        mask,
                        lanes: LaneMap::warp(w as u32, view.w),
                        hold: m & live,
                        prio: 0,
                    })
                } else if m & live & view.blocked[w] != 0 {
                    Peek::Blocked(Blocked::Barrier)
                } else {
                    Peek::Empty
                }
            }
        }
    }

    #[inline]
    fn update(
        &self,
        _sm: &mut (),
        st: &mut SlotCta<T::State>,
        group: &Group,
        flow: &Flow,
        u: &mut UpdateCtx<'_>,
    ) -> Done {
        let (w, k) = ((group.ctx / st.slots) as usize, group.ctx % st.slots);
        let warp = &mut st.warps[w];
        let mut ctx = WarpCtx::of(u, w);
        self.0.update(warp, k, group.pc, group.mask, flow, &mut ctx)?;
        u.size = self.0.depth(warp);
        Ok(())
    }

    #[inline]
    fn straight_run(&self, _sm: &(), st: &SlotCta<T::State>, _view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        let (w, k) = ((group.ctx / st.slots) as usize, group.ctx % st.slots);
        st.warps.get(w).map_or(1, |s| self.0.straight_run(s, k, group.pc, group.mask, max))
    }

    #[inline]
    fn advance(&self, _sm: &mut (), st: &mut SlotCta<T::State>, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        let (w, k) = ((group.ctx / st.slots) as usize, group.ctx % st.slots);
        let warp = &mut st.warps[w];
        let mut ctx = WarpCtx::of(u, w);
        self.0.advance(warp, k, group.pc, group.mask, n, &mut ctx)?;
        u.size = self.0.depth(warp);
        Ok(())
    }

    #[inline]
    fn memory_divergence(
        &self,
        _sm: &mut (),
        st: &mut SlotCta<T::State>,
        group: &Group,
        missed: LaneMask,
        u: &mut UpdateCtx<'_>,
    ) -> Result<bool, MechError> {
        let w = (group.ctx / st.slots.max(1)) as usize;
        let Some(warp) = st.warps.get_mut(w) else { return Ok(false) };
        let mut ctx = WarpCtx::of(u, w);
        let split = self.0.split_on_miss(warp, group.pc, group.mask, missed, &mut ctx)?;
        u.size = self.0.depth(warp);
        Ok(split)
    }

    #[inline]
    fn entries(&self, _sm: &(), st: &SlotCta<T::State>, ctx: u32) -> Vec<EntryView> {
        st.warps.get((ctx / st.slots.max(1)) as usize).map(|s| self.0.entries(s)).unwrap_or_default()
    }

    #[inline]
    fn positions(&self, _sm: &(), st: &SlotCta<T::State>, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for (w, s) in st.warps.iter().enumerate() {
            let live = view.live[w];
            let mut seen = 0;
            for k in 0..st.slots {
                if let Some((pc, m)) = self.0.slot(s, k) {
                    let m = m & live & !seen;
                    if m != 0 {
                        seen |= m;
                        let state =
                            if view.blocked[w] & m != 0 { PositionState::AtBarrier } else { PositionState::Issuing };
                        out.push(Position { warp: w as u32, lanes: m, pc, state });
                    }
                }
            }
            for e in self.0.entries(s).iter().rev() {
                let m = e.lanes.first().copied().unwrap_or(0) & live & !seen;
                if m != 0 {
                    seen |= m;
                    out.push(Position {
                        warp: w as u32,
                        lanes: m,
                        pc: e.pc,
                        state: PositionState::WaitingToReconverge,
                    });
                }
            }
        }
        out
    }
}

/// [`SlotTracker::advance`] for a run of `n` straight-line instructions of slot `k` from `pc` whose middle
/// updates would each only move the slot's path: the first and the last instruction update as usual, and
/// `skip` moves the path from `pc + 1` to `pc + n - 1` at once (and counts what the middle updates count).
#[inline]
pub(crate) fn advance_ends<T: SlotTracker + ?Sized>(
    t: &T,
    st: &mut T::State,
    (k, pc, mask, n): (u32, Pc, LaneMask, u32),
    ctx: &mut WarpCtx<'_>,
    skip: impl FnOnce(&mut T::State, &mut WarpCtx<'_>) -> Done,
) -> Done {
    t.update(st, k, pc, mask, &Flow::Next, ctx)?;
    if n >= 2 {
        if n >= 3 {
            skip(st, ctx)?;
        }
        t.update(st, k, pc + n - 1, mask, &Flow::Next, ctx)?;
    }
    Ok(())
}

/// The occupant of slot `k` of `slots` (a path, a split): the issued slot every slot mechanism's update
/// starts from, or the error naming `what` when the slot is empty.
#[inline]
pub(crate) fn held<T: Copy>(slots: &[Option<T>], k: u32, what: &'static str) -> Result<T, MechError> {
    slots.get(k as usize).copied().flatten().ok_or(MechError::InvalidSlot(what))
}
