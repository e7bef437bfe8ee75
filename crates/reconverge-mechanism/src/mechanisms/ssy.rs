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

use crate::interface::Done;
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
fn remove_above(st: &mut [SsyEntry], lanes: LaneMask, kind: SsyKind) -> Done {
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

    fn straight_run(&self, _st: &Self::State, _pc: Pc, _mask: LaneMask, max: u32) -> u32 {
        // Straight-line code only moves the top entry's npc; normalising does not look at it.
        max
    }

    fn advance(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        self.update(st, pc + n - 1, mask, &Flow::Next, ctx)
    }

    fn update(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
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
pub(crate) const INFO: crate::Info = crate::Info::new(
    "ssy",
    crate::Scope::Warp,
    "the explicit SSY/SYNC, PBK/BRK stack of seed 001, whose instructions a compiler pass inserts",
)
.pass(crate::Pass::Ssy)
.storage(STORAGE);

/// What `ssy` stores: a stack per warp whose entries carry their type (divergence, ssy and pbk tokens,
/// call tokens), and its pointer.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[
        Part::new(
            "stack",
            Per::Warp,
            Cells::Sram,
            common::STACK_ENTRIES,
            Size::Sum(&[Size::Const(2), common::MASK_TWO_PCS]),
            "{type, mask, npc, rpc}",
        ),
        common::STACK_POINTER_PART,
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, at_join, issues, nested_preds, prepared, program, run_warp, taking, trips};
    use crate::testing::{Preds, Run, DIAMOND, LOOP, NESTED};
    use crate::Mechanism;

    const ALL: LaneMask = 0b1111;

    /// An entry as a trace shows it.
    fn entry(kind: EntryKind, mask: LaneMask, npc: Pc, rpc: Pc) -> EntryView {
        EntryView::warp(kind, mask, npc, rpc)
    }

    /// The run of one 4-lane warp on `src` after the ssy pass.
    fn run(src: &str, preds: Preds<'_>) -> Run {
        run_warp(&SsyStack, &prepared(src, Mechanism::Ssy), ALL, preds, 64)
    }

    #[test]
    fn ssy_pushes_a_reconvergence_entry_and_each_sync_pops_a_path() {
        // After the pass: ssy JOIN (1), @%p1 bra THEN (2), else 3 + sync (4), then 5 + sync (6), JOIN 7, exit 8.
        let r = run(DIAMOND, &taking(0b0001));
        // The taken path runs first, then the not-taken one, and the warp meets again at JOIN.
        let order =
            [(0, ALL), (1, ALL), (2, ALL), (5, 0b0001), (6, 0b0001), (3, 0b1110), (4, 0b1110), (7, ALL), (8, ALL)];
        assert_eq!(r.pcs(), order);
        let ssy = entry(EntryKind::Ssy, ALL, 7, PC_NONE);
        assert_eq!(r.entries[1], [ssy.clone(), entry(EntryKind::Div, ALL, 2, 7)], "after ssy");
        let paths = [entry(EntryKind::Div, 0b1110, 3, 7), entry(EntryKind::Div, 0b0001, 5, 7)];
        assert_eq!(r.entries[2], [ssy.clone(), paths[0].clone(), paths[1].clone()], "after the branch");
        assert_eq!(r.entries[4], [ssy, paths[0].clone()], "the taken path's sync popped it");
        assert_eq!(r.entries[6], [entry(EntryKind::Div, ALL, 7, PC_NONE)], "the reconvergence entry surfaced");
    }

    #[test]
    fn a_uniform_branch_moves_the_path_and_its_sync_still_pops_it() {
        let r = run(DIAMOND, &taking(ALL));
        assert_eq!(r.pcs(), [(0, ALL), (1, ALL), (2, ALL), (5, ALL), (6, ALL), (7, ALL), (8, ALL)]);
        assert_eq!(r.entries[2], [entry(EntryKind::Ssy, ALL, 7, PC_NONE), entry(EntryKind::Div, ALL, 5, 7)]);
        assert_eq!(r.entries[4], [entry(EntryKind::Div, ALL, 7, PC_NONE)]);
    }

    #[test]
    fn nested_regions_push_one_reconvergence_entry_each() {
        // After the pass: ssy JOIN (2), outer branch (3), else 4 + sync (5); ssy INNER_JOIN (6), inner branch
        // (7), else 8 + sync (9), then 10 + sync (11); INNER_JOIN 12 + sync JOIN (13); JOIN 14, exit 15.
        let r = run(NESTED, &nested_preds);
        let p = r.pcs();
        let inner = [(6, 0b0011), (7, 0b0011), (10, 0b0001), (11, 0b0001), (8, 0b0010), (9, 0b0010)];
        assert_eq!(p[4..10], inner, "the taken side first at each level");
        assert_eq!(p[10..14], [(12, 0b0011), (13, 0b0011), (4, 0b1100), (5, 0b1100)]);
        assert_eq!(at(&p, 14), [ALL]);
        assert_eq!(r.sizes.iter().max(), Some(&5), "two reconvergence entries under three paths");
    }

    #[test]
    fn brk_leaves_the_loop_and_the_break_token_brings_the_lanes_back() {
        // After the pass: pbk EXIT (1), LOOP: 2-3, @!%p1 brk (4), bra LOOP (5); EXIT: 6, exit 7.
        let r = run(LOOP, &trips(&[1, 2, 3, 1]));
        let token = entry(EntryKind::Pbk, ALL, 6, PC_NONE);
        assert_eq!(r.entries[1], [token.clone(), entry(EntryKind::Div, ALL, 2, 6)], "after pbk");
        // Lanes 0 and 3 break after one iteration, lane 1 after two, lane 2 after three.
        assert_eq!(at(&r.pcs(), 4), [ALL, 0b0110, 0b0100]);
        assert_eq!(r.entries[4], [token, entry(EntryKind::Div, 0b0110, 5, 6)], "the breaking lanes left");
        assert_eq!(at(&r.pcs(), 6), [ALL]);
    }

    #[test]
    fn without_the_pass_there_is_no_reconvergence() {
        // Seed 001: threads meet only where the pass put sync/brk; the plain diamond has neither.
        let t = issues(&SsyStack, &program(DIAMOND), ALL, 0b0001, 64);
        assert_eq!(at_join(&t), [0b0001, 0b1110]);
    }

    #[test]
    fn other_mechanisms_instructions_and_a_stray_brk_are_errors() {
        let p = program(DIAMOND);
        let mut st = SsyStack.init(0, ALL);
        let mut ctx = WarpCtx { prog: &p, live: ALL, w: 32, counters: &mut [], cycle: None, delay: None };
        let join = SsyStack.update(&mut st, 0, ALL, &Flow::Join, &mut ctx);
        assert_eq!(join, Err(MechError::ForeignInstruction("join")));
        let brk = SsyStack.update(&mut st, 0, ALL, &Flow::Brk { lanes: 0b0001 }, &mut ctx);
        assert_eq!(brk, Err(MechError::Unmatched("brk", "an enclosing pbk")));
    }
}
