//! The explicit reconvergence stack of seed 001 (pre-Volta NVIDIA SSY/SYNC, PBK/BRK).
//!
//! Entries are `{mask, npc, rpc}`; the warp issues the top entry, whose `npc` advances as it executes.
//! - `SSY addr` pops the top entry and pushes the reconvergence entry `{mask, addr, rpc}` then the
//!   divergent-region entry `{mask, npc+1, addr}`.
//! - A divergent `BRA` pops the top entry and pushes the not-taken entry `{nt, npc+1, rpc}` then the
//!   taken entry `{t, target, rpc}`, so the taken path runs first. A uniform `BRA` only moves `npc`.
//! - `SYNC` pops the top entry: the next path runs, or the reconvergence entry resumes.
//! - `PBK addr` is `SSY` for loops: its entry is a break token. `BRK` removes the breaking lanes from every
//!   entry above the nearest break token; when the token surfaces, the loop's lanes resume at `addr`.
//! - A call pushes a return token and the callee's entry; `ret` removes the returning lanes from every
//!   entry above the token, and when the token surfaces the caller resumes after the call.
//! - Exited lanes are removed from every entry; empty entries are popped.
//!
//! There is no implicit reconvergence: threads meet only where the SSY pass put `SYNC`/`BRK`.

use crate::types::{LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::{EntryView, Flow, MechError, WarpCtx, WarpTracker};

/// The kind of an entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SsyKind {
    /// A path (or a surfaced reconvergence entry).
    Div,
    /// The reconvergence entry pushed by `SSY`.
    Ssy,
    /// The break token pushed by `PBK`.
    Pbk,
    /// The return token pushed by a call.
    Cal,
}

/// One stack entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SsyEntry {
    /// Lanes.
    pub mask: LaneMask,
    /// Next pc.
    pub npc: Pc,
    /// Reconvergence pc.
    pub rpc: Pc,
    /// Kind.
    pub kind: SsyKind,
}

/// The explicit-stack mechanism.
#[derive(Clone, Copy, Debug, Default)]
pub struct SsyStack;

fn normalize(st: &mut Vec<SsyEntry>, live: LaneMask) {
    while let Some(top) = st.last() {
        if top.mask & live == 0 || top.kind == SsyKind::Cal {
            st.pop();
        } else {
            break;
        }
    }
    // A reconvergence entry or break token that surfaces becomes the running path.
    if let Some(top) = st.last_mut() {
        if matches!(top.kind, SsyKind::Ssy | SsyKind::Pbk) {
            top.kind = SsyKind::Div;
        }
    }
}

/// Removes `lanes` from every entry above the nearest entry of `kind`.
fn remove_above(st: &mut [SsyEntry], lanes: LaneMask, kind: SsyKind) -> Result<(), MechError> {
    for e in st.iter_mut().rev() {
        if e.kind == kind {
            return Ok(());
        }
        e.mask &= !lanes;
    }
    Err(match kind {
        SsyKind::Pbk => MechError::Unmatched("brk", "an enclosing pbk"),
        _ => MechError::Unmatched("ret", "a call"),
    })
}

impl WarpTracker for SsyStack {
    type State = Vec<SsyEntry>;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> Self::State {
        let mut v = Vec::with_capacity(8);
        v.push(SsyEntry { mask: live, npc: entry, rpc: PC_NONE, kind: SsyKind::Div });
        v
    }

    fn select(&self, st: &Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        // `update` leaves the stack normalized for the warp's live lanes.
        let top = st.last()?;
        let mask = top.mask & live & !blocked;
        (mask != 0).then_some((top.npc, mask))
    }

    fn straight_run(&self, _st: &Self::State, _pc: Pc, max: u32) -> u32 {
        // Straight-line code only moves the top entry's npc; normalising does not look at it.
        max
    }

    fn advance(
        &self,
        st: &mut Self::State,
        pc: Pc,
        mask: LaneMask,
        n: u32,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        self.update(st, pc + n - 1, mask, &Flow::Next, ctx)
    }

    fn update(
        &self,
        st: &mut Self::State,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<(), MechError> {
        let Some(&top) = st.last() else {
            return Err(MechError::Underflow("SSY"));
        };
        let set_npc = |st: &mut Vec<SsyEntry>, npc: Pc| {
            if let Some(t) = st.last_mut() {
                t.npc = npc;
            }
        };
        match flow {
            Flow::Next | Flow::Exit { .. } => set_npc(st, pc + 1),
            Flow::Await { .. } => return Err(MechError::NoAwait),
            Flow::Join | Flow::Bssy { .. } | Flow::Bsync { .. } | Flow::Yield | Flow::SyncWarp => {
                return Err(MechError::ForeignInstruction(flow.mnemonic()));
            }
            Flow::Branch { target, taken } => {
                let t = mask & taken & ctx.live;
                let nt = top.mask & ctx.live & !t;
                if t == 0 {
                    set_npc(st, pc + 1);
                } else if nt == 0 {
                    set_npc(st, *target);
                } else {
                    st.pop();
                    st.push(SsyEntry { mask: nt, npc: pc + 1, rpc: top.rpc, kind: SsyKind::Div });
                    st.push(SsyEntry { mask: t, npc: *target, rpc: top.rpc, kind: SsyKind::Div });
                }
            }
            Flow::Multi(groups) => {
                let listed = groups.iter().fold(0, |a, (_, m)| a | m);
                let mut parts: Vec<(Pc, LaneMask)> = vec![(pc + 1, top.mask & ctx.live & !listed)];
                parts.extend(groups.iter().map(|(p, m)| (*p, *m & ctx.live)));
                parts.retain(|(_, m)| *m != 0);
                if parts.len() == 1 {
                    set_npc(st, parts[0].0);
                } else {
                    st.pop();
                    for (p, m) in parts {
                        st.push(SsyEntry { mask: m, npc: p, rpc: top.rpc, kind: SsyKind::Div });
                    }
                }
            }
            Flow::Ssy { target } | Flow::Pbk { target } => {
                let kind = if matches!(flow, Flow::Ssy { .. }) { SsyKind::Ssy } else { SsyKind::Pbk };
                st.pop();
                st.push(SsyEntry { mask: top.mask, npc: *target, rpc: top.rpc, kind });
                st.push(SsyEntry { mask: top.mask, npc: pc + 1, rpc: *target, kind: SsyKind::Div });
            }
            Flow::Sync => {
                st.pop();
            }
            Flow::Brk { lanes } => {
                remove_above(st, *lanes, SsyKind::Pbk)?;
                set_npc(st, pc + 1);
            }
            Flow::Call { target, callers } => {
                set_npc(st, pc + 1);
                let c = mask & callers;
                st.push(SsyEntry { mask: c, npc: PC_NONE, rpc: PC_NONE, kind: SsyKind::Cal });
                st.push(SsyEntry { mask: c, npc: *target, rpc: PC_NONE, kind: SsyKind::Div });
            }
            Flow::Return { lanes, .. } => {
                remove_above(st, *lanes, SsyKind::Cal)?;
                set_npc(st, pc + 1);
                // Pop emptied paths; a surfacing return token is popped by `normalize`.
                while st.last().is_some_and(|e| e.kind != SsyKind::Cal && e.mask & ctx.live == 0) {
                    st.pop();
                }
            }
        }
        // Pop emptied entries (but a return token only surfaces once every path above it returned).
        loop {
            match st.last() {
                Some(e) if e.kind != SsyKind::Cal && e.mask & ctx.live == 0 => {
                    st.pop();
                }
                Some(e) if e.kind == SsyKind::Cal => {
                    st.pop();
                }
                _ => break,
            }
        }
        normalize(st, ctx.live);
        Ok(())
    }

    fn depth(&self, st: &Self::State) -> usize {
        st.len()
    }

    fn entries(&self, st: &Self::State) -> Vec<EntryView> {
        st.iter()
            .map(|e| {
                let kind = match e.kind {
                    SsyKind::Div => EntryKind::Div,
                    SsyKind::Ssy => EntryKind::Ssy,
                    SsyKind::Pbk => EntryKind::Pbk,
                    SsyKind::Cal => EntryKind::Cal,
                };
                EntryView::warp(kind, e.mask, e.npc, e.rpc)
            })
            .collect()
    }
}

/// The registry's facts of `ssy`.
pub const INFO: crate::Info = crate::Info::new(
    "ssy",
    crate::Scope::Warp,
    "the explicit SSY/SYNC, PBK/BRK stack of seed 001, whose instructions a compiler pass inserts",
)
.pass(crate::Pass::Ssy);
