//! HARP: harnessing inactive threads (Lashgar, Khonsari & Baniasadi, ACM TECS 2014), mechanism `harp`.
//!
//! Each static warp keeps its *paths* (`{pc, call depth, threads}`) and a bounded **convergence barrier
//! table** (CBT) of entries `{barrier pc, call depth, expected threads, arrived threads}`:
//! - a divergent branch allocates an entry at its reconvergence pc, or joins the entry already there
//!   (lookup by pc and depth): the diverging threads become expected; when the warp's table is full
//!   ([`CBT_ENTRIES`]) no entry is allocated (`cbt_overflows`) and the threads meet only where their paths
//!   reach one pc;
//! - every path an issue produces looks its next pc up in the CBT; on a hit its expected threads park in
//!   the entry (arrive) and leave the path, the others go on;
//! - an entry whose live expected threads all arrived (exited threads are no longer expected) releases
//!   them as one path at its pc and is freed;
//! - paths of the warp that meet at one pc and depth anywhere else merge.
//!
//! What HARP's thread identifiers add over a lane mask is paths whose threads come from several warps: the
//! issue contexts are **issue groups**, each a set of paths of *different* warps at one pc and depth whose
//! threads sit in disjoint lanes (every thread stays in its home lane, so its registers stay in their
//! bank). A path an issue produces looks its pc up in the CTA's **merge table** ([`MERGE_ENTRIES`]
//! entries, one per group that can take threads: not a whole warp's lanes, not a warp-synchronous
//! instruction) and joins the first group there whose lanes it does not overlap (`cross_warp_merges` when
//! the group was there before the issue); otherwise it forms a group of its own, which takes a table
//! entry if one is free (`merge_table_overflows` when none is). A group issues the union of its paths'
//! threads; each warp then updates its own paths and CBT as above, and the group's paths that go on
//! together stay one group. Every group is its own issue context with its own scoreboard (parallel path
//! execution).
//!
//! If every live thread of a warp is parked (no path left, possible only on unstructured code), the entry
//! allocated last releases the threads it holds, so the warp always progresses.

use crate::adapters::paths::{self, Path};
use crate::interface::counters;
use crate::interface::Done;
use crate::launch::LaunchConfig;
use crate::program::{InstClass, Op, Program};
use crate::tracker::{Blocked, CtaView, Group, LaneMap, Peek, Position, PositionState, Tracker, UpdateCtx};
use crate::types::{full_mask, is_pseudo, LaneMask, Pc, PC_NONE};
use crate::{BarrierMode, Counter, EntryKind, EntryView, Flow, MechError, Structure, WarpCtx};
use smallvec::SmallVec;

/// Entries of a warp's convergence barrier table. The paper's size is not reachable here (only its
/// abstract is); 4 holds every divergence of the built-in kernels but `recursion`'s (8 at once) and
/// `sssp`'s (3 of 4 used).
pub const CBT_ENTRIES: usize = 4;

/// Entries of a CTA's merge table (issue groups that can take threads of other warps). The paper's size is
/// not reachable here; 8 is two per warp of a 128-thread CTA.
pub const MERGE_ENTRIES: usize = 8;

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
    /// Its paths: disjoint, never two at one pc and depth.
    pub paths: Vec<Path>,
    /// CBT entries, in allocation order (at most [`CBT_ENTRIES`]).
    pub cbt: Vec<CbtEntry>,
}

/// An issue group: paths of different warps at one pc and depth, in disjoint lanes.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct IssueGroup {
    /// The pc.
    pub pc: Pc,
    /// The call depth.
    pub depth: u32,
    /// `(static warp, lanes)` of each path, the first the group's leader (whose scheduler issues it).
    pub parts: SmallVec<[(u32, LaneMask); 2]>,
    /// It holds a merge-table entry (other warps' paths may join it).
    pub entry: bool,
    /// The CTA's update count when the group formed (a path joining a group formed in the same update
    /// stays with the threads it issued with; it is not a cross-warp merge).
    pub formed: u64,
}

impl IssueGroup {
    /// The lanes its paths occupy.
    fn lanes(&self) -> LaneMask {
        self.parts.iter().fold(0, |a, p| a | p.1)
    }
}

/// The per-CTA state of `harp`: every warp's paths and CBT, and the issue groups.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct HarpCta {
    /// Per static warp.
    pub warps: Vec<HarpState>,
    /// Issue groups by issue context.
    pub groups: Vec<Option<IssueGroup>>,
    /// Threads per warp.
    pub w: u32,
    /// Updates so far (stamps [`IssueGroup::formed`]).
    pub updates: u64,
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
        Merges = sum("merges", "paths of one warp merged with a path at the same pc and depth outside the table"),
        Forced = sum(
            "cbt_forced_releases",
            "entries released before all their expected threads arrived because every live thread was parked",
        ),
        CbtOverflows = sum(
            "cbt_overflows",
            "divergent branches that found their warp's convergence barrier table full and allocated no entry",
        ),
        CrossWarpMerges = sum(
            "cross_warp_merges",
            "paths that joined an issue group of other warps' threads at their pc through the merge table",
        ),
        MergeTableOverflows = sum(
            "merge_table_overflows",
            "issue groups that could have taken other warps' threads but found the merge table full",
        ),
        MaxGroups = max("max_issue_groups", "the most issue groups one CTA held"),
    }
}

impl HarpState {
    /// A warp whose `live` threads start at `entry`.
    fn start(entry: Pc, live: LaneMask) -> HarpState {
        let paths = if live != 0 { vec![Path { pc: entry, mask: live, depth: 0 }] } else { Vec::new() };
        HarpState { paths, cbt: Vec::new() }
    }

    /// Adds `p`, merging it with a path at the same place (`true`).
    fn add(&mut self, p: Path) -> bool {
        if let Some(q) = self.paths.iter_mut().find(|q| q.same_place(&p)) {
            q.mask |= p.mask;
            return true;
        }
        self.paths.push(p);
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

    /// The threads `mask` of the path at (`pc`, `depth`) issued with outcome `flow`.
    fn issue(&mut self, pc: Pc, depth: u32, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let k = self.paths.iter().position(|p| p.pc == pc && p.depth == depth && p.mask & mask == mask);
        let k = k.ok_or(MechError::NotHeld("the path"))?;
        let p = self.paths[k];
        let rest = p.mask & !mask & ctx.live;
        if rest != 0 {
            self.paths[k].mask = rest;
        } else {
            self.paths.remove(k);
        }
        let next = paths::successors(&p, mask, flow, ctx.live)?;
        if matches!(flow, Flow::Branch { .. } | Flow::Multi(_)) && next.len() > 1 {
            self.diverge(pc, p.depth, mask & ctx.live, ctx);
        }
        for q in next {
            self.place(q, ctx);
        }
        self.settle(ctx.live, ctx);
        Ok(())
    }

    /// The lanes `m` diverged at the branch `pc`: they are expected at its reconvergence point, in an
    /// entry already there or a new one if the table has room.
    fn diverge(&mut self, pc: Pc, depth: u32, m: LaneMask, ctx: &mut WarpCtx<'_>) {
        let r = ctx.prog.reconv.get(pc as usize).copied().unwrap_or(PC_NONE);
        if is_pseudo(r) {
            return;
        }
        let full = self.cbt.len() >= CBT_ENTRIES;
        match self.cbt.iter_mut().find(|e| e.pc == r && e.depth == depth) {
            Some(e) => e.expected |= m,
            None if !full => {
                self.cbt.push(CbtEntry { pc: r, depth, expected: m, arrived: 0 });
            }
            None => ctx.count(HarpCounter::CbtOverflows, 1),
        }
        ctx.max(HarpCounter::MaxCbt, self.cbt.len() as u64);
    }

    /// Drops dead threads and releases every entry whose live expected threads all arrived.
    fn settle(&mut self, live: LaneMask, ctx: &mut WarpCtx<'_>) {
        self.paths.retain_mut(|p| {
            p.mask &= live;
            p.mask != 0
        });
        loop {
            for e in self.cbt.iter_mut() {
                e.expected &= live;
                e.arrived &= live;
            }
            let done = self.cbt.iter().position(|e| e.arrived == e.expected);
            let stuck = live != 0 && self.paths.is_empty();
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

/// Whether the instruction at `pc` must run with the threads of one warp only: barriers, fences and warp
/// collectives (their lanes are one warp's).
fn warp_bound(prog: &Program, pc: Pc) -> bool {
    let class = prog.info.get(pc as usize).map(|i| i.class);
    let op = prog.insts.get(pc as usize).map(|i| &i.op);
    class == Some(InstClass::Sync)
        || op.is_some_and(|op| op.member_mask().is_some() || matches!(op, Op::Vote { .. } | Op::Activemask { .. }))
}

/// What placing a path in the issue groups did.
enum Placed {
    /// It joined group `usize`.
    Joined(usize),
    /// It formed a group; `false` when it could have taken a table entry but the table was full.
    Formed(bool),
}

impl HarpCta {
    /// Whether warp `w`'s path `p` is a part of a group.
    fn grouped(&self, w: u32, p: &Path) -> bool {
        self.groups.iter().flatten().any(|g| g.pc == p.pc && g.depth == p.depth && g.parts.contains(&(w, p.mask)))
    }

    /// Puts warp `w`'s path `p` in a group: the first table entry at its pc and depth whose lanes it does not
    /// overlap, or a new group (with a table entry if it could take other warps' threads and one is free).
    fn place(&mut self, w: u32, p: Path, prog: &Program) -> Placed {
        let sync = warp_bound(prog, p.pc);
        let fits = |g: &IssueGroup| {
            g.entry && g.pc == p.pc && g.depth == p.depth && g.lanes() & p.mask == 0 && g.parts.iter().all(|q| q.0 != w)
        };
        if !sync {
            if let Some(i) = self.groups.iter().position(|g| g.as_ref().is_some_and(fits)) {
                if let Some(g) = self.groups[i].as_mut() {
                    g.parts.push((w, p.mask));
                }
                return Placed::Joined(i);
            }
        }
        let wants = !sync && p.mask != full_mask(self.w);
        let room = self.groups.iter().flatten().filter(|g| g.entry).count() < MERGE_ENTRIES;
        let g = IssueGroup {
            pc: p.pc,
            depth: p.depth,
            parts: smallvec::smallvec![(w, p.mask)],
            entry: wants && room,
            formed: self.updates,
        };
        match self.groups.iter().position(Option::is_none) {
            Some(i) => self.groups[i] = Some(g),
            None => self.groups.push(Some(g)),
        }
        Placed::Formed(!wants || room)
    }

    /// After the warps `touched` changed their paths: drops the parts that are no longer a path, then places
    /// every path not in a group. Counts into `u` when given.
    fn regroup(&mut self, touched: &[u32], prog: &Program, mut u: Option<&mut UpdateCtx<'_>>) {
        let warps = &self.warps;
        for s in self.groups.iter_mut() {
            if let Some(g) = s {
                g.parts.retain(|&mut (w, m)| {
                    !touched.contains(&w)
                        || warps[w as usize].paths.iter().any(|p| p.pc == g.pc && p.depth == g.depth && p.mask == m)
                });
                if g.parts.is_empty() {
                    *s = None;
                }
            }
        }
        for &w in touched {
            for i in 0..self.warps[w as usize].paths.len() {
                let p = self.warps[w as usize].paths[i];
                if self.grouped(w, &p) {
                    continue;
                }
                let placed = self.place(w, p, prog);
                let Some(u) = u.as_deref_mut() else { continue };
                match placed {
                    Placed::Joined(g) if self.groups[g].as_ref().is_some_and(|g| g.formed < self.updates) => {
                        u.count(HarpCounter::CrossWarpMerges, 1)
                    }
                    Placed::Formed(false) => u.count(HarpCounter::MergeTableOverflows, 1),
                    _ => {}
                }
            }
        }
        if let Some(u) = u {
            u.max(HarpCounter::MaxGroups, self.groups.iter().flatten().count() as u64);
        }
    }
}

impl Tracker for Harp {
    type Sm = ();
    type Cta = HarpCta;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = HarpCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn new_sm(&self, _prog: &Program, _launch: &LaunchConfig) {}

    fn contexts(&self, _nwarps: u32, nthreads: u32) -> u32 {
        nthreads.max(1)
    }

    fn occupied(&self, _sm: &(), st: &HarpCta, _contexts: u32, out: &mut Vec<u32>) {
        out.extend(st.groups.iter().enumerate().filter(|g| g.1.is_some()).map(|g| g.0 as u32));
    }

    fn launch(&self, _sm: &mut (), _cta: u32, view: &CtaView<'_>, entry: Pc) -> HarpCta {
        let warps = view.live.iter().map(|&m| HarpState::start(entry, m)).collect();
        let mut st = HarpCta { warps, groups: Vec::new(), w: view.w, updates: 0 };
        // Each warp starts as one group at the entry (whole warps: nothing to merge).
        for (w, s) in st.warps.iter().enumerate() {
            for p in &s.paths {
                let g = IssueGroup {
                    pc: p.pc,
                    depth: p.depth,
                    parts: smallvec::smallvec![(w as u32, p.mask)],
                    entry: false,
                    formed: 0,
                };
                st.groups.push(Some(g));
            }
        }
        st
    }

    fn hw_warp(&self, st: &HarpCta, ctx: u32) -> u32 {
        st.groups.get(ctx as usize).and_then(Option::as_ref).and_then(|g| g.parts.first()).map_or(0, |p| p.0)
    }

    fn peek(&self, _sm: &(), st: &HarpCta, view: &CtaView<'_>, ctx: u32) -> Peek {
        let Some(g) = st.groups.get(ctx as usize).and_then(Option::as_ref) else { return Peek::Empty };
        let (mut mask, mut hold) = (0, 0);
        for &(w, m) in &g.parts {
            let live = m & view.live[w as usize];
            hold |= live;
            mask |= live & !view.blocked[w as usize];
        }
        if mask != 0 {
            let lanes = LaneMap::from_parts(g.parts.iter().map(|&(w, m)| (w, m & view.live[w as usize])));
            Peek::Ready(Group { ctx, pc: g.pc, mask, lanes, hold, prio: 0 })
        } else if hold != 0 {
            Peek::Blocked(Blocked::Barrier)
        } else {
            Peek::Empty
        }
    }

    fn update(&self, _sm: &mut (), st: &mut HarpCta, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let g = st.groups.get_mut(group.ctx as usize).and_then(Option::take);
        let g = g.ok_or(MechError::EmptyContext("issue group", group.ctx))?;
        if g.pc != group.pc {
            return Err(MechError::NotHeld("the issue group"));
        }
        st.updates += 1;
        let mut touched: SmallVec<[u32; 4]> = SmallVec::new();
        for &(w, m) in &g.parts {
            touched.push(w);
            let issued = m & group.mask;
            if issued != 0 {
                let mut ctx = WarpCtx::of(u, w as usize);
                st.warps[w as usize].issue(g.pc, g.depth, issued, flow, &mut ctx)?;
            }
        }
        // Barriers and exits change no other warp's paths; a released barrier does not either.
        touched.sort_unstable();
        st.regroup(&touched, u.prog, Some(u));
        u.size = touched.iter().map(|&w| st.warps[w as usize].paths.len()).max().unwrap_or(0);
        Ok(())
    }

    /// A group whose every thread issues, whose parts are in warp order and with every lower context taken
    /// (an update takes the group out and forms it again at the lowest free context, parts in warp order)
    /// runs up to the nearest pc ahead where another group is or one of its warps has a convergence-barrier
    /// entry: until then each update moves its paths' pcs and forms the same group again.
    fn straight_run(&self, _sm: &(), st: &HarpCta, _view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        let ctx = group.ctx as usize;
        let Some(Some(g)) = st.groups.get(ctx) else { return 1 };
        let ordered = g.parts.windows(2).all(|p| p[0].0 < p[1].0);
        if g.pc != group.pc || group.mask != g.lanes() || !ordered || st.groups[..ctx].iter().any(Option::is_none) {
            return 1;
        }
        let others =
            st.groups.iter().enumerate().filter(|&(i, _)| i != ctx).filter_map(|(_, o)| o.as_ref().map(|o| o.pc));
        let barriers = g.parts.iter().flat_map(|&(w, _)| st.warps[w as usize].cbt.iter().map(|e| e.pc));
        others.chain(barriers).filter(|&q| q > g.pc).fold(max, |n, q| n.min(q - g.pc)).max(1)
    }

    fn advance(&self, sm: &mut (), st: &mut HarpCta, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        self.update(sm, st, group, &Flow::Next, u)?;
        if n >= 2 {
            if n >= 3 {
                let middle = u64::from(n - 2);
                let to = group.pc + n - 1;
                let g = st.groups.get_mut(group.ctx as usize).and_then(Option::as_mut);
                let g = g.ok_or(MechError::EmptyContext("issue group", group.ctx))?;
                for &(w, m) in &g.parts {
                    let path = st.warps[w as usize]
                        .paths
                        .iter_mut()
                        .find(|p| p.pc == g.pc && p.depth == g.depth && p.mask == m);
                    path.ok_or(MechError::NotHeld("the path"))?.pc = to;
                }
                g.pc = to;
                st.updates += middle;
                // What each middle update counts: a table lookup per path, and a merge-table overflow when the
                // group could take other warps' threads but holds no entry (the table was full when it formed).
                u.count(HarpCounter::Lookups, middle * g.parts.len() as u64);
                if !g.entry && g.lanes() != full_mask(st.w) {
                    u.count(HarpCounter::MergeTableOverflows, middle);
                }
            }
            self.update(sm, st, &Group { pc: group.pc + n - 1, ..group.clone() }, &Flow::Next, u)?;
        }
        Ok(())
    }

    fn entries(&self, _sm: &(), st: &HarpCta, _ctx: u32) -> Vec<EntryView> {
        let n = st.warps.len();
        let spread = |w: u32, m: LaneMask| {
            let mut lanes = vec![0; n];
            lanes[w as usize] = m;
            lanes
        };
        let mut v = Vec::new();
        for (w, s) in st.warps.iter().enumerate() {
            for e in &s.cbt {
                let mut note = format!("warp {w} expected {:#x}", e.expected);
                if e.depth != 0 {
                    note.push_str(&format!(" depth={}", e.depth));
                }
                v.push(EntryView {
                    kind: EntryKind::Barrier,
                    lanes: spread(w as u32, e.arrived),
                    pc: e.pc,
                    rpc: PC_NONE,
                    note,
                });
            }
        }
        for (i, g) in st.groups.iter().enumerate() {
            let Some(g) = g else { continue };
            let mut lanes = vec![0; n];
            for &(w, m) in &g.parts {
                lanes[w as usize] |= m;
            }
            let mut note = format!("group {i}");
            if g.depth != 0 {
                note.push_str(&format!(" depth={}", g.depth));
            }
            if g.entry {
                note.push_str(" table");
            }
            v.push(EntryView { kind: EntryKind::Path, lanes, pc: g.pc, rpc: PC_NONE, note });
        }
        v
    }

    fn positions(&self, _sm: &(), st: &HarpCta, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for g in st.groups.iter().flatten() {
            for &(w, m) in &g.parts {
                let m = m & view.live[w as usize];
                if m != 0 {
                    let state = if view.blocked[w as usize] & m != 0 {
                        PositionState::AtBarrier
                    } else {
                        PositionState::Issuing
                    };
                    out.push(Position { warp: w, lanes: m, pc: g.pc, state });
                }
            }
        }
        for (w, s) in st.warps.iter().enumerate() {
            for e in &s.cbt {
                let m = e.arrived & view.live[w];
                if m != 0 {
                    let state = PositionState::WaitingToReconverge;
                    out.push(Position { warp: w as u32, lanes: m, pc: e.pc, state });
                }
            }
        }
        out
    }
}

/// The registry's facts of `harp`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "harp",
    crate::Scope::Cta,
    "HARP (Lashgar, Khonsari and Baniasadi, TECS 2014): every path issues, paths of different warps at one pc share an issue group in disjoint lanes; convergence by associative lookup in a bounded convergence barrier table",
)
.storage(STORAGE);

/// What `harp` stores: per warp, the paths (at most one per thread; a path is a set of thread identifiers,
/// W bits within a static warp) and the convergence barrier table ([`CBT_ENTRIES`] entries); per CTA, the
/// merge table ([`MERGE_ENTRIES`] entries: a pc, a depth and the group it names).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[
        Part::new("paths", Per::Warp, Cells::Sram, common::PATHS_ENTRIES, common::PATH_BITS, "{pc, depth, thread ids}"),
        Part::new(
            "convergence barrier table",
            Per::Warp,
            Cells::FlipFlops,
            Size::Const(CBT_ENTRIES as u64),
            Size::Sum(&[Size::Pc, Size::Depth, Size::Product(&[Size::Const(2), Size::W])]),
            "{pc, depth, expected, arrived}",
        ),
        Part::new(
            "merge table",
            Per::Cta,
            Cells::FlipFlops,
            Size::Const(MERGE_ENTRIES as u64),
            Size::Sum(&[Size::Pc, Size::Depth, Size::IndexBits(&Size::W)]),
            "{pc, depth, group}",
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{at, nested_preds, program, run_cta, run_slots, taking, trips, Pick, DIAMOND, LOOP, NESTED};
    use crate::MultiPath;

    const ALL: LaneMask = 0b1111;

    /// A group's trace entry: `(warp, lanes)` of each of `warps` static warps.
    fn group(pc: Pc, lanes: Vec<LaneMask>, note: &str) -> EntryView {
        EntryView { kind: EntryKind::Path, lanes, pc, rpc: PC_NONE, note: note.into() }
    }

    #[test]
    fn the_diverging_threads_park_in_the_table_and_leave_as_one_path() {
        let r = run_cta(&Harp, &program(DIAMOND), &[ALL], 4, &taking(0b0001), Pick::Lowest, 64);
        // The released path takes the lowest free group.
        let order = [(0, 2, 0b1110), (0, 3, 0b1110), (1, 4, 0b0001), (0, 5, ALL), (0, 6, ALL)];
        assert_eq!(r.ctx_pcs()[2..], order);
        let entry = |arrived| EntryView {
            kind: EntryKind::Barrier,
            lanes: vec![arrived],
            pc: 5,
            rpc: PC_NONE,
            note: "warp 0 expected 0xf".into(),
        };
        // Each side is a group with a merge-table entry (it does not fill the warp).
        let sides = [group(2, vec![0b1110], "group 0 table"), group(4, vec![0b0001], "group 1 table")];
        assert_eq!(r.entries[1], [entry(0), sides[0].clone(), sides[1].clone()]);
        assert_eq!(r.entries[3], [entry(0b1110), sides[1].clone()]);
        // Lookups: the branch's two paths, pc 3 → 5 (hit), pc 4 → 5 (hit), and the straight-line paths.
        assert_eq!((r.counter("cbt_hits"), r.counter("max_cbt_entries"), r.counter("merges")), (2, 1, 0));
        assert_eq!(r.counter("cbt_lookups"), 7);
        assert_eq!((r.counter("cross_warp_merges"), r.counter("cbt_overflows")), (0, 0));
    }

    #[test]
    fn nested_divergences_interleave_like_multi_path() {
        let r = run_cta(&Harp, &program(NESTED), &[ALL], 4, &nested_preds, Pick::RoundRobin, 64);
        let m = run_slots(&MultiPath, &program(NESTED), ALL, &nested_preds, Pick::RoundRobin, 64);
        assert_eq!(r.pcs(), m.pcs(), "structured code: the same (pc, mask) order");
        assert_eq!((r.counter("max_cbt_entries"), r.counter("cbt_hits")), (2, 4));
    }

    #[test]
    fn loop_iterations_join_one_entry() {
        let r = run_cta(&Harp, &program(LOOP), &[ALL], 4, &trips(&[1, 2, 3, 1]), Pick::Lowest, 64);
        assert_eq!(at(&r.pcs(), 4), [ALL]);
        assert_eq!(r.counter("max_cbt_entries"), 1);
    }

    #[test]
    fn paths_of_two_warps_at_one_pc_in_disjoint_lanes_issue_as_one_group() {
        // Warp 0: lane 0 takes the branch; warp 1: lanes 1-3 (threads 5-7). Each side's two paths fill
        // complementary lanes.
        let r = run_cta(&Harp, &program(DIAMOND), &[ALL, ALL], 4, &|_, t, _| t == 0 || t >= 5, Pick::RoundRobin, 64);
        for pc in [2, 3, 4] {
            assert_eq!(at(&r.pcs(), pc), [ALL], "pc {pc} issued once for both warps: {:?}", r.pcs());
        }
        let taken = r.trace.iter().find(|i| i.pc == 4).expect("the taken side issued");
        assert_eq!(taken.parts, [(0, 0b0001), (1, 0b1110)]);
        // Warp 1's two paths each joined warp 0's group; the group of both warps then stayed one.
        assert_eq!(r.counter("cross_warp_merges"), 2);
        // Each warp reconverges in its own table; the two warps' whole paths never merge.
        assert_eq!(at(&r.pcs(), 5), [ALL, ALL]);
        assert_eq!(r.trace.len(), 2 * 2 + 3 + 2 * 2, "pcs 0-1 and 5-6 per warp, pcs 2-4 once");
    }

    #[test]
    fn a_full_convergence_table_allocates_nothing_and_counts_the_overflow() {
        let prog = program(DIAMOND);
        let mut st = HarpState::start(0, ALL);
        st.cbt = (0..CBT_ENTRIES as u32).map(|i| CbtEntry { pc: 100 + i, depth: 0, expected: 1, arrived: 0 }).collect();
        let mut counters = [0u64; HarpCounter::COUNTERS.len()];
        let mut ctx = WarpCtx { prog: &prog, live: ALL, w: 4, counters: &mut counters, cycle: None, delay: None };
        st.paths = vec![Path { pc: 1, mask: ALL, depth: 0 }];
        st.issue(1, 0, ALL, &Flow::Branch { target: 4, taken: 0b0001 }, &mut ctx).expect("issues");
        assert_eq!(st.cbt.len(), CBT_ENTRIES, "no entry at the join");
        assert_eq!(counters[HarpCounter::CbtOverflows as usize], 1);
        // Without an entry the two sides are plain paths, which merge where they meet.
        assert_eq!(st.paths, [Path { pc: 2, mask: 0b1110, depth: 0 }, Path { pc: 4, mask: 0b0001, depth: 0 }]);
    }

    #[test]
    fn the_merge_table_is_bounded_and_warp_collectives_stay_in_their_warp() {
        let prog = program(DIAMOND);
        let mut st = HarpCta { warps: Vec::new(), groups: Vec::new(), w: 4, updates: 0 };
        // MERGE_ENTRIES partial groups at pcs 2..: every entry taken.
        for i in 0..MERGE_ENTRIES as u32 {
            assert!(matches!(st.place(i, Path { pc: 2 + i, mask: 0b0001, depth: 0 }, &prog), Placed::Formed(true)));
        }
        // A path that could take other warps' threads finds no entry; a whole warp needs none.
        assert!(matches!(st.place(20, Path { pc: 50, mask: 0b0011, depth: 0 }, &prog), Placed::Formed(false)));
        assert!(matches!(st.place(21, Path { pc: 51, mask: ALL, depth: 0 }, &prog), Placed::Formed(true)));
        // An entry at pc 2 takes another warp's disjoint lanes, not overlapping ones.
        assert!(matches!(st.place(30, Path { pc: 2, mask: 0b0110, depth: 0 }, &prog), Placed::Joined(0)));
        assert!(matches!(st.place(31, Path { pc: 2, mask: 0b0100, depth: 0 }, &prog), Placed::Formed(false)));
        let shfl = program("{ .reg .b32 %r<4>; mov.u32 %r1, 1; shfl.sync.idx.b32 %r2, %r1, 0, 31, 0xffffffff; exit; }");
        let mut st = HarpCta { warps: Vec::new(), groups: Vec::new(), w: 4, updates: 0 };
        assert!(matches!(st.place(0, Path { pc: 1, mask: 0b0011, depth: 0 }, &shfl), Placed::Formed(true)));
        assert!(matches!(st.place(1, Path { pc: 1, mask: 0b1100, depth: 0 }, &shfl), Placed::Formed(true)));
        assert_eq!(st.groups.iter().flatten().filter(|g| g.entry).count(), 0, "a collective takes no entry");
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
        let r = run_cta(&Harp, &prog, &[ALL], 4, &preds, Pick::Lowest, 64);
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
