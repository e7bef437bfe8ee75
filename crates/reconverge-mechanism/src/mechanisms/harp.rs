//! HARP: harnessing inactive threads (Lashgar, Khonsari & Baniasadi, ACM TECS 2014), mechanism `harp`.
//!
//! A warp's paths are sets of thread identifiers. Within one static warp a thread's identifier and its
//! lane name the same thread, so a set of identifiers carries exactly a lane mask's information; what
//! HARP's identifiers would add is paths whose threads come from several warps (as DWF's), which is not
//! modelled. Every path is an issue context of its own with its own scoreboard (parallel path
//! execution). Convergence is an associative lookup in a **convergence barrier table** (CBT) of entries
//! `{barrier pc, call depth, expected threads, arrived threads}`:
//! - a divergent branch allocates an entry at its reconvergence pc, or joins the entry already there
//!   (lookup by pc and depth): the diverging threads become expected;
//! - every path an issue produces looks its next pc up in the CBT; on a hit its expected threads park in
//!   the entry (arrive) and leave the path, the others go on;
//! - an entry whose live expected threads all arrived (exited threads are no longer expected) releases
//!   them as one path at its pc and is freed;
//! - paths that meet at one pc and depth anywhere else merge (the same associative match over the paths).
//!
//! If every live thread of a warp is parked (no path left, possible only on unstructured code), the entry
//! allocated last releases the threads it holds, so the warp always progresses.

use crate::adapters::parallel::held;
use crate::adapters::paths::{self, Path};
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{is_pseudo, LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{Counter, EntryView, Flow, MechError, SlotTracker, WarpCtx};

/// A convergence-barrier-table entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CbtEntry {
    /// The barrier pc (a divergent branch's reconvergence pc).
    pub pc: Pc,
    /// The call depth of the divergence.
    pub depth: u32,
    /// Threads that diverged and must arrive.
    pub expected: LaneMask,
    /// Threads parked here.
    pub arrived: LaneMask,
}

/// The paths and the convergence barrier table of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct HarpState {
    /// Path slots (an issue context each).
    pub paths: Vec<Option<Path>>,
    /// CBT entries, in allocation order.
    pub cbt: Vec<CbtEntry>,
}

/// HARP.
#[derive(Clone, Copy, Debug, Default)]
pub struct Harp;

counters! {
    /// Counter indices.
    pub(crate) enum HarpCounter {
        Lookups = sum("cbt_lookups", "associative lookups of a path's next pc in the convergence barrier table"),
        Hits = sum("cbt_hits", "lookups that found an entry at the path's pc and call depth"),
        MaxCbt = max("max_cbt_entries", "the most convergence-barrier-table entries one warp held"),
        Merges = sum("merges", "paths merged with a path at the same pc and depth outside the table"),
        Forced = sum(
            "cbt_forced_releases",
            "entries released before all their expected threads arrived because every live thread was parked",
        ),
    }
}

impl HarpState {
    /// Puts `p` in the lowest free slot, or merges it with a path at the same place (`true`).
    fn add(&mut self, p: Path) -> bool {
        if let Some(q) = self.paths.iter_mut().flatten().find(|q| q.same_place(&p)) {
            q.mask |= p.mask;
            return true;
        }
        match self.paths.iter().position(Option::is_none) {
            Some(k) => self.paths[k] = Some(p),
            None => self.paths.push(Some(p)),
        }
        false
    }

    /// A path produced by an issue: its next pc looked up in the CBT (expected threads park), the rest
    /// placed, merging with a path at the same place.
    fn place(&mut self, mut p: Path, ctx: &mut WarpCtx<'_>) {
        ctx.count(HarpCounter::Lookups, 1);
        if let Some(e) = self.cbt.iter_mut().find(|e| e.pc == p.pc && e.depth == p.depth) {
            ctx.count(HarpCounter::Hits, 1);
            e.arrived |= p.mask & e.expected;
            p.mask &= !e.expected;
        }
        if p.mask != 0 && self.add(p) {
            ctx.count(HarpCounter::Merges, 1);
        }
    }

    /// Drops dead threads and releases every entry whose live expected threads all arrived.
    fn settle(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        for s in self.paths.iter_mut() {
            if s.is_some_and(|p| p.mask & live == 0) {
                *s = None;
            } else if let Some(p) = s {
                p.mask &= live;
            }
        }
        loop {
            for e in self.cbt.iter_mut() {
                e.expected &= live;
                e.arrived &= live;
            }
            let done = self.cbt.iter().position(|e| e.arrived == e.expected);
            let stuck = live != 0 && self.paths.iter().all(Option::is_none);
            let Some(i) = done.or_else(|| stuck.then(|| self.cbt.len().checked_sub(1)).flatten()) else { return };
            if done.is_none() {
                ctx.count(HarpCounter::Forced, 1);
            }
            let e = self.cbt.remove(i);
            if e.arrived != 0 {
                // Released threads form one path at the barrier pc (merging with a path already there).
                self.add(Path { pc: e.pc, mask: e.arrived, depth: e.depth });
            }
        }
    }
}

impl SlotTracker for Harp {
    type State = HarpState;

    const STRUCTURE: Structure = Structure::Paths;
    const COUNTERS: &'static [Counter] = HarpCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn slots(&self, w: u32) -> u32 {
        w
    }

    fn init(&self, entry: Pc, live: LaneMask, _w: u32) -> HarpState {
        HarpState { paths: vec![Some(Path { pc: entry, mask: live, depth: 0 })], cbt: Vec::new() }
    }

    fn slot(&self, st: &HarpState, k: u32) -> Option<(Pc, LaneMask)> {
        st.paths.get(k as usize).copied().flatten().map(|p| (p.pc, p.mask))
    }

    fn update(&self, st: &mut HarpState, k: u32, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let k = k as usize;
        let p = held(&st.paths, k as u32, "path")?;
        if p.pc != pc || p.mask & mask != mask {
            return Err(MechError::NotHeld("the path slot"));
        }
        let rest = p.mask & !mask & ctx.live;
        st.paths[k] = (rest != 0).then_some(Path { mask: rest, ..p });
        let next = paths::successors(&p, mask, flow, ctx.live)?;
        let branch = matches!(flow, Flow::Branch { .. } | Flow::Multi(_));
        if branch && next.len() > 1 {
            let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
            if !is_pseudo(r) {
                let m = mask & ctx.live;
                match st.cbt.iter_mut().find(|e| e.pc == r && e.depth == p.depth) {
                    Some(e) => e.expected |= m,
                    None => st.cbt.push(CbtEntry { pc: r, depth: p.depth, expected: m, arrived: 0 }),
                }
                ctx.max(HarpCounter::MaxCbt, st.cbt.len() as u64);
            }
        }
        for q in next {
            st.place(q, ctx);
        }
        st.settle(ctx.live, ctx);
        Ok(())
    }

    fn depth(&self, st: &HarpState) -> usize {
        st.paths.iter().flatten().count()
    }

    fn entries(&self, st: &HarpState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st
            .cbt
            .iter()
            .map(|e| {
                let mut x = EntryView::warp(EntryKind::Barrier, e.arrived, e.pc, PC_NONE);
                x.note = format!("expected {:#x}", e.expected);
                if e.depth != 0 {
                    x.note.push_str(&format!(" depth={}", e.depth));
                }
                x
            })
            .collect();
        v.extend(st.paths.iter().flatten().map(|p| p.view(EntryKind::Path)));
        v
    }
}

/// The registry's facts of `harp`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "harp",
    crate::Scope::Warp,
    "HARP (Lashgar, Khonsari and Baniasadi, TECS 2014): every path issues; convergence by associative lookup in a convergence barrier table",
)
.storage(STORAGE);

/// What `harp` stores per warp: the path slots (at most one per thread; a path is a set of thread
/// identifiers, W bits within a static warp) and the convergence barrier table (at most W entries).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        Part::new("paths", Per::Warp, Cells::Sram, common::PATHS_ENTRIES, common::PATH_BITS, "{pc, depth, thread ids}"),
        Part::new(
            "convergence barrier table",
            Per::Warp,
            Cells::FlipFlops,
            Size::Reached(Reach::Counter(HarpCounter::MaxCbt.counter()), &Size::W),
            Size::Sum(&[Size::Pc, Size::Depth, Size::Product(&[Size::Const(2), Size::W])]),
            "{pc, depth, expected, arrived}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};
    use crate::MultiPath;

    const ALL: LaneMask = 0b1111;

    #[test]
    fn the_diverging_threads_park_in_the_table_and_leave_as_one_path() {
        let r = run_slots(&Harp, &program(DIAMOND), ALL, &taking(0b0001), Pick::Lowest, 64);
        // The released path takes the lowest free slot.
        let order = [(0, 2, 0b1110), (0, 3, 0b1110), (1, 4, 0b0001), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[2..], order);
        let entry = |arrived| EntryView {
            note: "expected 0xf".into(),
            ..EntryView::warp(EntryKind::Barrier, arrived, 5, PC_NONE)
        };
        assert_eq!(
            r.entries[1],
            [
                entry(0),
                Path { pc: 2, mask: 0b1110, depth: 0 }.view(EntryKind::Path),
                Path { pc: 4, mask: 1, depth: 0 }.view(EntryKind::Path)
            ]
        );
        assert_eq!(r.entries[3], [entry(0b1110), Path { pc: 4, mask: 1, depth: 0 }.view(EntryKind::Path)]);
        // Lookups: the branch's two paths, pc 3 → 5 (hit), pc 4 → 5 (hit), and the straight-line paths.
        assert_eq!((r.counter("cbt_hits"), r.counter("max_cbt_entries"), r.counter("merges")), (2, 1, 0));
        assert_eq!(r.counter("cbt_lookups"), 7);
    }

    #[test]
    fn nested_divergences_interleave_like_multi_path() {
        let r = run_slots(&Harp, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        let m = run_slots(&MultiPath, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        assert_eq!(r.pcs(), m.pcs(), "structured code: the same (pc, mask) order");
        assert_eq!((r.counter("max_cbt_entries"), r.counter("cbt_hits")), (2, 4));
    }

    #[test]
    fn loop_iterations_join_one_entry() {
        let r = run_slots(&Harp, &program(LOOP), ALL, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        assert_eq!(r.counter("max_cbt_entries"), 1);
    }

    /// Two paths reach pc 8 (not the IPDOM, pc 9) from different branches: the outer taken side (pc 7) and
    /// the inner branch's taken side (pc 4).
    const SHARED_TAIL: &str = r#"
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    setp.lt.u32 %p1, %tid.x, 2;
    setp.eq.u32 %p2, %tid.x, 2;
    @%p1 bra A;
    mov.u32 %r2, 3;
    @%p2 bra L;
    mov.u32 %r2, 5;
    bra.uni JOIN;
A:
    mov.u32 %r2, 1;
L:
    add.u32 %r2, %r2, 4;
JOIN:
    add.u32 %r3, %r2, 1;
    exit;
}
"#;

    #[test]
    fn paths_meeting_before_the_post_dominator_merge_unlike_multi_path() {
        let preds = |p, t: usize, _| if p == 1 { t < 2 } else { t == 2 };
        let prog = program(SHARED_TAIL);
        assert_eq!((prog.reconv[2], prog.reconv[4]), (9, 9));
        let r = run_slots(&Harp, &prog, ALL, &preds, Pick::Lowest, 64);
        let m = run_slots(&MultiPath, &prog, ALL, &preds, Pick::Lowest, 64);
        // HARP: lanes 0-1 (pc 7) arrive at pc 8 while lane 2 waits to issue there, and the two paths merge.
        assert_eq!(at(&r.pcs(), 8), [0b0111]);
        assert_eq!(r.counter("merges"), 1);
        // Multi-path keeps the two splits apart until the reconvergence point.
        assert_eq!(at(&m.pcs(), 8).len(), 2, "{:?}", m.pcs());
        assert_eq!((at(&r.pcs(), 9), at(&m.pcs(), 9)), (vec![ALL], vec![ALL]));
        assert!(r.trace.len() < m.trace.len());
    }
}
