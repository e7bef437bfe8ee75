//! Per-warp mechanisms: one structure per static warp, groups never leave their warp.
//!
//! [`WarpTracker`] is the small interface a per-warp mechanism (a stack, a path list, per-thread pcs)
//! implements; [`PerWarp`] turns it into a [`Tracker`] whose issue contexts are the CTA's static warps and
//! whose groups use the identity lane map, so the core's contiguous fast path applies.

use crate::interface::Done;
use crate::program::Program;
use crate::tracker::{
    Blocked, Counter, CtaView, Group, LaneMap, Peek, Position, PositionState, Ratio, Tracker, UpdateCtx,
};
use crate::types::{LaneMask, Pc};
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError};
use std::fmt;

/// Context a per-warp mechanism may consult when it updates.
pub struct WarpCtx<'a> {
    /// The program (for reconvergence points).
    pub prog: &'a Program,
    /// Live lanes of the warp after the instruction (exited lanes removed).
    pub live: LaneMask,
    /// Threads per warp.
    pub w: u32,
    /// The mechanism's counters ([`WarpTracker::COUNTERS`], by index).
    pub counters: &'a mut [u64],
    /// The timing model's cycle at issue (`None` in functional runs).
    pub cycle: Option<u64>,
    /// Out: a delay of the mechanism's own logic the warp's live threads pay before they issue again.
    pub delay: Option<crate::Delay>,
}

impl<'a> WarpCtx<'a> {
    /// The context of static warp `w` for an update `u`.
    #[inline]
    pub fn of(u: &'a mut crate::tracker::UpdateCtx<'_>, w: usize) -> WarpCtx<'a> {
        WarpCtx {
            prog: u.prog,
            live: u.view.live[w],
            w: u.view.w,
            counters: &mut *u.counters,
            cycle: u.cycle,
            delay: None,
        }
    }

    /// Adds `n` to counter `i` (an index into [`WarpTracker::COUNTERS`]).
    #[inline]
    pub fn count(&mut self, i: impl Into<usize>, n: u64) {
        self.counters[i.into()] += n;
    }

    /// Raises counter `i` to at least `v`.
    #[inline]
    pub fn max(&mut self, i: impl Into<usize>, v: u64) {
        let i = i.into();
        self.counters[i] = self.counters[i].max(v);
    }
}

/// A mechanism with one structure per static warp.
pub trait WarpTracker: Sync {
    /// The per-warp structure.
    type State: Clone + fmt::Debug + Send;

    /// What the structure's size is called in the statistics.
    const STRUCTURE: Structure = Structure::Stack;
    /// How barriers count under this mechanism.
    const BARRIER: BarrierMode = BarrierMode::Warp;
    /// Counters the mechanism keeps (summed or maximised over warps).
    const COUNTERS: &'static [Counter] = &[];
    /// Ratios of counters the mechanism reports.
    const RATIOS: &'static [Ratio] = &[];
    /// Whether a group whose warp-synchronous instruction misses member lanes waits for them
    /// ([`WarpTracker::await_members`]) instead of being a SIMT deadlock.
    const AWAITS_MEMBERS: bool = false;
    /// Whether the warp's groups take turns one instruction each ([`WarpTracker::rotation`]).
    const ROUNDS: bool = false;

    /// The name used on the command line and in statistics.
    fn name(&self) -> &'static str;

    /// The state of a warp whose `live` lanes start at `entry`.
    fn init(&self, entry: Pc, live: LaneMask) -> Self::State;

    /// The group to issue next: a pc and a non-empty mask of live lanes none of which is in `blocked`.
    /// `None` when nothing can issue now. Pure.
    fn select(&self, st: &Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)>;

    /// Updates the structure after the group (`pc`, `mask`) issued with outcome `flow`.
    fn update(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done;

    /// How many straight-line instructions from `pc` (at most `max`) the group (`pc`, `mask`) may issue back
    /// to back with the same lanes, one [`WarpTracker::advance`] standing for their updates (see
    /// [`crate::Tracker::straight_run`]; `mask` matters where a path may hold lanes that wait at a barrier
    /// and do not issue). The default, 1, updates after every instruction. Pure.
    #[inline]
    fn straight_run(&self, _st: &Self::State, _pc: Pc, _mask: LaneMask, _max: u32) -> u32 {
        1
    }

    /// With [`WarpTracker::ROUNDS`]: the warp's groups `(pc, lanes)` in the order of their coming turns,
    /// the one [`WarpTracker::select`] gives first, written to `out`; `true` where those turns are certain
    /// while every group issues pure lane instructions ([`crate::Tracker::rotation`]). `ready` is the
    /// warp's live and blocked lanes, as `select` receives them. The default: `false`. Pure.
    #[inline]
    fn rotation(
        &self,
        _st: &Self::State,
        _prog: &Program,
        _ready: (LaneMask, LaneMask),
        _out: &mut Vec<(Pc, LaneMask)>,
    ) -> bool {
        false
    }

    /// Every group of [`WarpTracker::rotation`] issued `rounds` pure lane instructions from its pc, turn
    /// by turn: update as those updates with [`Flow::Next`] would.
    #[inline]
    fn advance_rounds(&self, _st: &mut Self::State, _rounds: u32, _ctx: &mut WarpCtx<'_>) -> Done {
        Err(MechError::NoRounds)
    }

    /// The group (`pc`, `mask`) issued the `n` straight-line instructions that
    /// [`WarpTracker::straight_run`] allowed: update as `n` updates with [`Flow::Next`] would.
    #[inline]
    fn advance(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        for k in 0..n {
            self.update(st, pc + k, mask, &Flow::Next, ctx)?;
        }
        Ok(())
    }

    /// The group (`pc`, `mask`) did not execute its warp-synchronous instruction: its member lanes
    /// `missing` are elsewhere. Only called when [`WarpTracker::AWAITS_MEMBERS`].
    #[inline]
    fn await_members(&self, _st: &mut Self::State, _pc: Pc, _mask: LaneMask, _missing: LaneMask) {}

    /// The current size of the structure (stack depth, number of paths).
    fn depth(&self, st: &Self::State) -> usize;

    /// The structure, bottom first, for traces.
    fn entries(&self, st: &Self::State) -> Vec<EntryView>;
}

/// [`WarpTracker::advance`] for a run of `n` straight-line instructions from `pc` whose middle updates
/// (all but the first and the last) would each change nothing but what `skip` does at once: the first and
/// the last instruction update as usual (so whatever the first changes, such as a path's place in a list,
/// and whatever the last changes, such as a merge at the next pc, happens exactly), and `skip` moves the
/// group's state from `pc + 1` to `pc + n - 1` in one step (its pcs, and any per-update counter `n - 2`
/// times).
#[inline]
pub(crate) fn advance_ends<T: WarpTracker + ?Sized>(
    t: &T,
    st: &mut T::State,
    (pc, mask, n): (Pc, LaneMask, u32),
    ctx: &mut WarpCtx<'_>,
    skip: impl FnOnce(&mut T::State, &mut WarpCtx<'_>) -> Done,
) -> Done {
    t.update(st, pc, mask, &Flow::Next, ctx)?;
    if n >= 2 {
        if n >= 3 {
            skip(st, ctx)?;
        }
        t.update(st, pc + n - 1, mask, &Flow::Next, ctx)?;
    }
    Ok(())
}

/// A [`WarpTracker`] as a [`Tracker`]: the CTA's static warps are its issue contexts.
#[derive(Clone, Copy, Debug, Default)]
pub struct PerWarp<T>(pub T);

impl<T: WarpTracker> Tracker for PerWarp<T> {
    type Sm = ();
    type Cta = Vec<T::State>;

    const STRUCTURE: Structure = T::STRUCTURE;
    const BARRIER: BarrierMode = T::BARRIER;
    const PER_WARP_CONTEXTS: bool = true;
    const COUNTERS: &'static [Counter] = T::COUNTERS;
    const RATIOS: &'static [Ratio] = T::RATIOS;
    const AWAITS_MEMBERS: bool = T::AWAITS_MEMBERS;
    const ROUNDS: bool = T::ROUNDS;

    #[inline]
    fn name(&self) -> &'static str {
        self.0.name()
    }

    #[inline]
    fn new_sm(&self, _prog: &Program, _launch: &crate::launch::LaunchConfig) {}

    #[inline]
    fn contexts(&self, nwarps: u32, _nthreads: u32) -> u32 {
        nwarps
    }

    #[inline]
    fn launch(&self, _sm: &mut (), _cta: u32, view: &CtaView<'_>, entry: Pc) -> Vec<T::State> {
        view.live.iter().map(|&m| self.0.init(entry, m)).collect()
    }

    #[inline]
    fn peek(&self, _sm: &(), st: &Vec<T::State>, view: &CtaView<'_>, ctx: u32) -> Peek {
        let w = ctx as usize;
        let live = view.live[w];
        if live == 0 {
            return Peek::Empty;
        }
        let blocked = view.blocked[w];
        match self.0.select(&st[w], live, blocked) {
            Some((pc, mask)) => {
                Peek::Ready(Group { ctx, pc, mask, lanes: LaneMap::warp(ctx, view.w), hold: live, prio: 0 })
            }
            None if blocked & live != 0 => Peek::Blocked(Blocked::Barrier),
            None => Peek::Blocked(Blocked::Mechanism),
        }
    }

    #[inline]
    fn update(&self, _sm: &mut (), st: &mut Vec<T::State>, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let w = group.ctx as usize;
        let warp = &mut st[w];
        let mut ctx = WarpCtx::of(u, w);
        self.0.update(warp, group.pc, group.mask, flow, &mut ctx)?;
        if let Some(d) = ctx.delay {
            u.delay(d, [(w as u32, u.view.live[w])]);
        }
        u.size = self.0.depth(warp);
        Ok(())
    }

    #[inline]
    fn straight_run(&self, _sm: &(), st: &Vec<T::State>, _view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        st.get(group.ctx as usize).map_or(1, |s| self.0.straight_run(s, group.pc, group.mask, max))
    }

    #[inline]
    fn rotation(
        &self,
        _sm: &(),
        st: &Vec<T::State>,
        (prog, view): (&Program, &CtaView<'_>),
        group: &Group,
        out: &mut Vec<(Pc, LaneMask)>,
    ) -> bool {
        let w = group.ctx as usize;
        match (st.get(w), view.live.get(w), view.blocked.get(w)) {
            (Some(s), Some(&live), Some(&blocked)) => {
                out.clear();
                self.0.rotation(s, prog, (live, blocked), out) && out.first() == Some(&(group.pc, group.mask))
            }
            _ => false,
        }
    }

    #[inline]
    fn advance_rounds(
        &self,
        _sm: &mut (),
        st: &mut Vec<T::State>,
        group: &Group,
        rounds: u32,
        u: &mut UpdateCtx<'_>,
    ) -> Done {
        let w = group.ctx as usize;
        let warp = st.get_mut(w).ok_or(MechError::EmptyContext("warp", group.ctx))?;
        let mut ctx = WarpCtx::of(u, w);
        self.0.advance_rounds(warp, rounds, &mut ctx)?;
        u.size = self.0.depth(warp);
        Ok(())
    }

    #[inline]
    fn advance(&self, _sm: &mut (), st: &mut Vec<T::State>, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        let w = group.ctx as usize;
        let warp = &mut st[w];
        let mut ctx = WarpCtx::of(u, w);
        self.0.advance(warp, group.pc, group.mask, n, &mut ctx)?;
        if let Some(d) = ctx.delay {
            u.delay(d, [(w as u32, u.view.live[w])]);
        }
        u.size = self.0.depth(warp);
        Ok(())
    }

    #[inline]
    fn await_members(&self, _sm: &mut (), st: &mut Vec<T::State>, group: &Group, lanes: LaneMask) {
        if let Some(warp) = st.get_mut(group.ctx as usize) {
            self.0.await_members(warp, group.pc, group.mask, lanes);
        }
    }

    #[inline]
    fn entries(&self, _sm: &(), st: &Vec<T::State>, ctx: u32) -> Vec<EntryView> {
        st.get(ctx as usize).map(|s| self.0.entries(s)).unwrap_or_default()
    }

    #[inline]
    fn positions(&self, _sm: &(), st: &Vec<T::State>, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for (w, s) in st.iter().enumerate() {
            let live = view.live[w];
            if live == 0 {
                continue;
            }
            // Each lane belongs to the topmost entry holding it.
            let mut seen = 0;
            let mut first = true;
            for e in self.0.entries(s).iter().rev() {
                let m = e.lanes.first().copied().unwrap_or(0) & live & !seen;
                if m == 0 {
                    continue;
                }
                seen |= m;
                let state = if view.blocked[w] & m != 0 {
                    PositionState::AtBarrier
                } else if first {
                    PositionState::Issuing
                } else {
                    PositionState::InStructure
                };
                first = false;
                out.push(Position { warp: w as u32, lanes: m, pc: e.pc, state });
            }
        }
        out
    }
}
