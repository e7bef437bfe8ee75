//! The rules of the post-dominator reconvergence stack (GPGPU-Sim's), shared by every mechanism built on
//! it: the per-warp stack of `pdom`, the stacks of `dws`'s warp-splits, dual-path's reconvergence points
//! and the CTA-wide stack of [`crate::CtaStack`].
//!
//! Entries are `{pc, rpc, mask}` (plus a call marker). The warp issues the top entry. After a divergent
//! branch the top entry becomes the reconvergence entry (`pc = ipdom`) and one entry per path is pushed,
//! fall-through first, so the taken path runs first. A path whose next pc reaches its `rpc` is popped,
//! exposing the entry below, which already waits at the reconvergence point. A call pushes a call entry;
//! when the call entry's pc reaches the function's virtual exit (every lane returned) it is popped and
//! the caller's entry resumes after the call.

use crate::adapters::per_warp::WarpCtx;
use crate::interface::Done;
use crate::interface::{next_groups, EntryKind, EntryView, Flow, MechError};
use crate::types::{LaneMask, Pc, PC_EXIT, PC_NONE, PC_RET};

/// One stack entry. `M` is what the entry holds: a lane mask for the per-warp stack, a CTA-wide thread
/// set for the CTA-wide stack of TBC and CAPRI.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PdomEntry<M = LaneMask> {
    /// Next pc.
    pub pc: Pc,
    /// Reconvergence pc.
    pub rpc: Pc,
    /// The entry's threads.
    pub mask: M,
    /// A call entry (the callee runs in it; popped when the callee returns).
    pub call: bool,
}

/// The threads a stack entry holds, as far as the PDOM rules need to know.
pub(crate) trait EntryThreads {
    /// What says which threads are still alive.
    type Live: ?Sized;
    /// Whether none of the entry's threads is alive.
    fn none_live(&self, live: &Self::Live) -> bool;
}

impl EntryThreads for LaneMask {
    type Live = LaneMask;
    #[inline]
    fn none_live(&self, live: &LaneMask) -> bool {
        self & live == 0
    }
}

/// Pops finished entries off the top: no live thread, reconverged (`pc == rpc`), or a call entry whose
/// threads all returned. Returns how many were popped.
#[inline]
pub(crate) fn normalize<M: EntryThreads>(st: &mut Vec<PdomEntry<M>>, live: &M::Live) -> usize {
    let mut popped = 0;
    while let Some(top) = st.last() {
        let empty = top.mask.none_live(live) || top.pc == PC_EXIT;
        let reconverged = !top.call && top.pc == top.rpc;
        let returned = top.call && top.pc == PC_RET;
        if empty || reconverged || returned {
            st.pop();
            popped += 1;
        } else {
            break;
        }
    }
    popped
}

/// The PDOM rule at a divergent branch reconverging at `r`: the top entry becomes the reconvergence entry
/// (`pc = r`), or is popped when it already reconverges at `r` (its parent waits there); then one entry
/// per group whose pc is not `r` is pushed, in order, so the last group runs first. Returns whether the
/// top entry was popped.
#[inline]
pub(crate) fn diverge<M>(st: &mut Vec<PdomEntry<M>>, r: Pc, groups: impl IntoIterator<Item = (Pc, M)>) -> bool {
    let top = st.last_mut().expect("diverge on an empty stack");
    let popped = if r != top.rpc || top.call {
        top.pc = r;
        false
    } else {
        st.pop();
        true
    };
    for (gpc, gmask) in groups {
        if gpc != r {
            st.push(PdomEntry { pc: gpc, rpc: r, mask: gmask, call: false });
        }
    }
    popped
}

/// The PDOM rule at a call: the caller's entry resumes at `ret` (non-calling threads wait there) and a
/// call entry for `callers` starts at `target`.
#[inline]
pub(crate) fn call<M>(st: &mut Vec<PdomEntry<M>>, ret: Pc, target: Pc, callers: M) {
    if let Some(top) = st.last_mut() {
        top.pc = ret;
    }
    st.push(PdomEntry { pc: target, rpc: PC_NONE, mask: callers, call: true });
}

/// The lanes' next pcs after `flow`, grouped as [`next_groups`] does, except that returning lanes go to
/// the function's virtual exit [`PC_RET`]: in a reconvergence stack they wait there for the call entry to
/// pop.
#[inline]
pub(crate) fn successors(pc: Pc, mask: LaneMask, flow: &Flow) -> smallvec::SmallVec<[(Pc, LaneMask); 4]> {
    let mut groups = next_groups(pc, mask, flow);
    if let Flow::Return { lanes, .. } = flow {
        groups.retain(|(_, m)| *m & lanes == 0);
        groups.push((PC_RET, mask & lanes));
    }
    groups
}

/// The reconvergence point of the divergent instruction at `pc`, or an error naming it.
#[inline]
pub(crate) fn reconvergence_point(prog: &crate::program::Program, pc: Pc) -> Result<Pc, MechError> {
    match prog.reconv.get(pc as usize) {
        Some(&r) if r != PC_NONE => Ok(r),
        _ => Err(MechError::NoReconvergence(prog.describe_pc(pc))),
    }
}

/// A per-warp stack whose `live` lanes start at `entry`.
#[inline]
pub(crate) fn init(entry: Pc, live: LaneMask) -> Vec<PdomEntry> {
    let mut v = Vec::with_capacity(8);
    v.push(PdomEntry { pc: entry, rpc: PC_NONE, mask: live, call: false });
    v
}

/// The top entry's lanes that may issue (live, not blocked), if any.
#[inline]
pub(crate) fn select(st: &[PdomEntry], live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
    // `update` leaves the stack normalized for the warp's live lanes.
    let top = st.last()?;
    let mask = top.mask & live & !blocked;
    (mask != 0).then_some((top.pc, mask))
}

/// How many straight-line instructions from `pc` (at most `max`) the top entry may run back to back.
#[inline]
pub(crate) fn straight_run(st: &[PdomEntry], pc: Pc, max: u32) -> u32 {
    // Straight-line code changes only the top entry's pc, until it reaches the entry's reconvergence
    // point (a block start, or the return point of a call entry's caller).
    match st.last() {
        Some(top) if !top.call => run_before(top.rpc, pc, max),
        _ => max,
    }
}

/// The instructions from `pc` (at most `max`) a path may run before it reaches `stop`, where its last
/// instruction's update may act: up to `stop` when it lies ahead, else `max` (straight-line code only
/// moves forward). The stack's top entry and the parallel paths' splits share it.
#[inline]
pub(crate) fn run_before(stop: Pc, pc: Pc, max: u32) -> u32 {
    if stop > pc {
        max.min(stop - pc)
    } else {
        max
    }
}

/// The top entry ran `n` straight-line instructions from `pc`.
#[inline]
pub(crate) fn advance(st: &mut Vec<PdomEntry>, pc: Pc, n: u32, live: LaneMask) -> Done {
    let Some(top) = st.last_mut() else {
        return Err(MechError::Underflow("PDOM"));
    };
    top.pc = pc + n;
    if top.pc == top.rpc || top.mask & live == 0 {
        normalize(st, &live);
    }
    Ok(())
}

/// The PDOM rules after the top entry's lanes `mask` issued at `pc` with outcome `flow`.
#[inline]
pub(crate) fn update(st: &mut Vec<PdomEntry>, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
    let Some(top) = st.last_mut() else {
        return Err(MechError::Underflow("PDOM"));
    };
    if let Flow::Next = flow {
        // The common case: straight-line code.
        top.pc = pc + 1;
        if top.pc == top.rpc || top.mask & ctx.live == 0 {
            normalize(st, &ctx.live);
        }
        return Ok(());
    }
    match flow {
        Flow::Call { target, callers } => call(st, pc + 1, *target, mask & callers),
        Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. } => {
            return Err(MechError::NeedsSsy);
        }
        _ => {
            let mut groups = successors(pc, mask, flow);
            groups.retain(|(_, m)| *m & ctx.live != 0);
            match groups.len() {
                0 => top.mask &= ctx.live,
                1 => top.pc = groups[0].0,
                _ => {
                    let r = reconvergence_point(ctx.prog, pc)?;
                    diverge(st, r, groups);
                }
            }
        }
    }
    normalize(st, &ctx.live);
    Ok(())
}

/// The stack for traces, bottom first.
#[inline]
pub(crate) fn entries(st: &[PdomEntry]) -> Vec<EntryView> {
    st.iter()
        .map(|e| EntryView::warp(if e.call { EntryKind::Call } else { EntryKind::Div }, e.mask, e.pc, e.rpc))
        .collect()
}
