//! Dynamic warp formation (Fung, Sham, Yuan & Aamodt, MICRO'07 and TACO'09; GPGPU-Sim 2.x `dwf.cc`).
//!
//! There is no reconvergence structure: threads are grouped by pc alone. Each SM keeps a *warp pool*
//! and a PC-indexed *look-up table* (LUT). When a warp issues, its pool entry is freed at once; after it
//! executes, its threads are split by next pc and each group is written back into the pool: the LUT
//! names the warp being filled at that pc, and each thread joins it if its home lane (thread slot mod W,
//! the register-file bank it lives in) is free there; threads whose lane is taken start a new warp,
//! which the LUT then tracks (a *merge conflict*). A finite LUT (set-associative, LRU) can evict the
//! entry of a warp still being filled; a later lookup then misses although a mergeable warp exists
//! (a *real miss*: the aliasing the papers measure).
//!
//! The issue heuristic decides which pool warp issues next ([`Heuristic`]); threads released from a
//! barrier issue first. Threads that reach `bar.sync` skip the LUT: they are packed into fresh warps
//! that wait until the CTA's barrier releases and are never merged.
//!
//! Threads are grouped within their CTA (each CTA has its own pool of issue contexts; the LUT and the
//! heuristic's thread counts are SM-wide). Fung's pool may mix CTAs in one warp; reconverge's core
//! issues a group to one CTA, whose shared memory and barriers it uses.

use super::tracker::{Blocked, Counter, CtaView, Delay, Group, LaneMap, Peek, Position, Tracker, UpdateCtx};
use super::{next_groups, BarrierMode, EntryView, Flow, MechError};
use crate::launch::{LaunchConfig, LutGeometry};
use crate::program::Program;
use crate::stats::Structure;
use crate::types::{LaneMask, Pc, PC_NONE};
use std::collections::{BTreeMap, HashMap};

/// Which pool warp DWF issues next.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Heuristic {
    /// The pc with the most threads in the SM's pool (ties: lower pc); its warps are drained before the
    /// next choice.
    Majority,
    /// The pc with the fewest threads (ties: lower pc), drained likewise.
    Minority,
    /// The lowest pc first; ties: the fuller warp.
    Pc,
    /// Post-dominator priority: each thread counts the reconvergence points it has passed; a warp's
    /// priority is the largest count of its threads, plus one at a reconvergence point; lowest first,
    /// so laggards catch up.
    Pdom,
    /// The oldest warp first (pool allocation order).
    Fifo,
}

impl Heuristic {
    /// Every heuristic.
    pub const ALL: [Heuristic; 5] =
        [Heuristic::Majority, Heuristic::Minority, Heuristic::Pc, Heuristic::Pdom, Heuristic::Fifo];

    /// The command-line name of DWF under this heuristic.
    pub fn mechanism_name(self) -> &'static str {
        match self {
            Heuristic::Majority => "dwf",
            Heuristic::Minority => "dwf:minority",
            Heuristic::Pc => "dwf:pc",
            Heuristic::Pdom => "dwf:pdom",
            Heuristic::Fifo => "dwf:fifo",
        }
    }
}

/// Dynamic warp formation under a heuristic.
#[derive(Clone, Copy, Debug)]
pub struct Dwf(pub Heuristic);

/// One entry of a finite look-up table.
#[derive(Clone, Copy, Debug)]
struct LutEntry {
    cta: u32,
    pc: Pc,
    ctx: u32,
    used: u64,
}

/// The PC-indexed look-up table: which pool warp is being filled for `(CTA, pc)`.
#[derive(Clone, Debug)]
struct Lut {
    geometry: LutGeometry,
    perfect: HashMap<(u32, Pc), u32>,
    sets: Vec<Vec<Option<LutEntry>>>,
    clock: u64,
}

/// What a lookup found.
enum Lookup {
    Hit(u32),
    Miss,
}

impl Lut {
    fn new(geometry: LutGeometry) -> Lut {
        let sets = if geometry.is_perfect() {
            Vec::new()
        } else {
            vec![vec![None; geometry.ways as usize]; (geometry.entries / geometry.ways) as usize]
        };
        Lut { geometry, perfect: HashMap::new(), sets, clock: 0 }
    }

    fn set_of(&self, pc: Pc) -> usize {
        pc as usize % self.sets.len()
    }

    fn lookup(&mut self, cta: u32, pc: Pc) -> Lookup {
        if self.geometry.is_perfect() {
            return self.perfect.get(&(cta, pc)).map_or(Lookup::Miss, |&c| Lookup::Hit(c));
        }
        self.clock += 1;
        let clock = self.clock;
        let s = self.set_of(pc);
        match self.sets[s].iter_mut().flatten().find(|e| e.cta == cta && e.pc == pc) {
            Some(e) => {
                e.used = clock;
                Lookup::Hit(e.ctx)
            }
            None => Lookup::Miss,
        }
    }

    /// Points `(cta, pc)` at `ctx`; returns whether a valid entry of another key was evicted.
    fn insert(&mut self, cta: u32, pc: Pc, ctx: u32) -> bool {
        if self.geometry.is_perfect() {
            self.perfect.insert((cta, pc), ctx);
            return false;
        }
        self.clock += 1;
        let clock = self.clock;
        let s = self.set_of(pc);
        let set = &mut self.sets[s];
        let entry = LutEntry { cta, pc, ctx, used: clock };
        if let Some(e) = set.iter_mut().flatten().find(|e| e.cta == cta && e.pc == pc) {
            *e = entry;
            return false;
        }
        if let Some(slot) = set.iter_mut().find(|e| e.is_none()) {
            *slot = Some(entry);
            return false;
        }
        let victim = set.iter_mut().min_by_key(|e| e.map_or(0, |e| e.used)).expect("a set has ways");
        *victim = Some(entry);
        true
    }

    /// Forgets the entry of `(cta, pc)` if it names `ctx` (the warp issued).
    fn invalidate(&mut self, cta: u32, pc: Pc, ctx: u32) {
        if self.geometry.is_perfect() {
            if self.perfect.get(&(cta, pc)) == Some(&ctx) {
                self.perfect.remove(&(cta, pc));
            }
            return;
        }
        let s = self.set_of(pc);
        for e in self.sets[s].iter_mut() {
            if e.is_some_and(|e| e.cta == cta && e.pc == pc && e.ctx == ctx) {
                *e = None;
            }
        }
    }

    /// Forgets every entry of CTA slot `cta`.
    fn forget_cta(&mut self, cta: u32) {
        self.perfect.retain(|k, _| k.0 != cta);
        for set in self.sets.iter_mut() {
            for e in set.iter_mut() {
                if e.is_some_and(|e| e.cta == cta) {
                    *e = None;
                }
            }
        }
    }
}

/// The state DWF keeps per SM: the LUT and what the heuristics need.
#[derive(Clone, Debug)]
pub struct PoolSm {
    w: u32,
    lut: Lut,
    /// Threads in the pool per pc (barrier warps not counted).
    counts: BTreeMap<Pc, u64>,
    /// Majority and minority: the pc being drained.
    drain: Option<Pc>,
    next_uid: u64,
    /// Pool warps in the SM.
    warps: usize,
    /// Whether each pc is some branch's reconvergence point (pdom priority).
    reconv_point: Vec<bool>,
    /// Whether each pc is a warp-synchronous instruction (it has a member mask).
    warp_sync: Vec<bool>,
}

/// A warp of the pool.
#[derive(Clone, Debug)]
struct PoolWarp {
    pc: Pc,
    lanes: LaneMap,
    uid: u64,
    /// Packed at a barrier: not merged, not counted, issues first once the barrier releases.
    barrier: bool,
    /// At a warp-synchronous instruction: the static warp and its member lanes the instruction waits
    /// for (the lanes are free in this warp).
    awaiting: Option<(u32, LaneMask)>,
}

/// The pool warps of one CTA.
#[derive(Clone, Debug)]
pub struct PoolCta {
    warps: Vec<Option<PoolWarp>>,
    /// Reconvergence points each thread slot has passed (pdom priority).
    passed: Vec<u32>,
}

/// Counter indices.
mod c {
    pub const MERGES: usize = 0;
    pub const MERGE_CONFLICTS: usize = 1;
    pub const LUT_LOOKUPS: usize = 2;
    pub const LUT_MISSES: usize = 3;
    pub const LUT_EVICTIONS: usize = 4;
    pub const LUT_REAL_MISSES: usize = 5;
    pub const BARRIER_WARPS: usize = 6;
    pub const MAX_DISTINCT_PCS: usize = 7;
}

const COUNTERS: [Counter; 8] = [
    Counter::sum("merges", "thread groups written into a pool warp that already held threads"),
    Counter::sum(
        "merge_conflicts",
        "write-backs in which some thread's home lane was taken, so a new warp was started",
    ),
    Counter::sum("lut_lookups", "look-up table lookups (one per thread group written back)"),
    Counter::sum("lut_misses", "lookups that found no warp being filled at the pc"),
    Counter::sum("lut_evictions", "entries of a finite look-up table evicted for another pc (aliasing)"),
    Counter::sum("lut_real_misses", "misses although the CTA had a warp at the pc with a free lane for the group"),
    Counter::sum("barrier_warps", "warps packed from threads arriving at a barrier"),
    Counter::max("max_distinct_pcs", "the most distinct pcs among one SM's pool warps at once"),
];

const BRANCH_COUNTERS: [Counter; 1] =
    [Counter::sum("merges", "thread groups leaving the branch that were merged into an existing warp")];

/// Packs an issue priority: a class (0 = released barrier warps), then a primary key, then a pc.
fn pack(class: u64, primary: u64, low: Pc) -> u64 {
    (class << 60) | (primary.min((1 << 28) - 1) << 32) | low as u64
}

impl Dwf {
    /// The issue priority of `w` (lower first). Pure.
    fn priority(&self, sm: &PoolSm, st: &PoolCta, w: &PoolWarp) -> u64 {
        if w.barrier {
            return pack(0, 0, w.pc);
        }
        let count = || sm.counts.get(&w.pc).copied().unwrap_or(0);
        match self.0 {
            Heuristic::Majority | Heuristic::Minority if sm.drain == Some(w.pc) => pack(1, 0, w.pc),
            Heuristic::Majority => pack(2, u32::MAX as u64 - count().min(u32::MAX as u64), w.pc),
            Heuristic::Minority => pack(2, count(), w.pc),
            Heuristic::Pc => pack(2, w.pc as u64, 64 - w.lanes.lanes().count_ones()),
            Heuristic::Pdom => {
                let passed = slots(&w.lanes, sm.w).map(|s| st.passed[s]).max().unwrap_or(0);
                let at_reconv = sm.reconv_point.get(w.pc as usize).copied().unwrap_or(false);
                pack(2, passed as u64 + at_reconv as u64, w.pc)
            }
            Heuristic::Fifo => (2 << 60) | w.uid.min((1 << 60) - 1),
        }
    }

    /// Majority and minority choose the next pc to drain when the current one has no threads left.
    fn choose_drain(&self, sm: &mut PoolSm) {
        if sm.drain.is_some_and(|p| sm.counts.contains_key(&p)) {
            return;
        }
        let pick = match self.0 {
            // Ties go to the lower pc: iteration is in pc order and only a strictly better count wins.
            Heuristic::Majority => sm.counts.iter().fold(None, |best: Option<(Pc, u64)>, (&p, &n)| match best {
                Some((_, b)) if b >= n => best,
                _ => Some((p, n)),
            }),
            Heuristic::Minority => sm.counts.iter().fold(None, |best: Option<(Pc, u64)>, (&p, &n)| match best {
                Some((_, b)) if b <= n => best,
                _ => Some((p, n)),
            }),
            _ => None,
        };
        sm.drain = pick.map(|p| p.0);
    }
}

/// The CTA thread slots of a lane map.
fn slots(lanes: &LaneMap, w: u32) -> impl Iterator<Item = usize> + '_ {
    lanes.parts().iter().flat_map(move |&(sw, m)| crate::types::lanes(m).map(move |l| (sw * w) as usize + l))
}

impl PoolCta {
    fn alloc(&mut self) -> u32 {
        match self.warps.iter().position(Option::is_none) {
            Some(i) => i as u32,
            None => {
                self.warps.push(None);
                (self.warps.len() - 1) as u32
            }
        }
    }
}

impl PoolSm {
    fn add_count(&mut self, pc: Pc, n: u64) {
        *self.counts.entry(pc).or_insert(0) += n;
    }

    fn sub_count(&mut self, pc: Pc, n: u64) {
        if let Some(c) = self.counts.get_mut(&pc) {
            *c = c.saturating_sub(n);
            if *c == 0 {
                self.counts.remove(&pc);
            }
        }
    }

    /// A new pool warp of CTA `st` at `pc`.
    fn new_warp(&mut self, st: &mut PoolCta, pc: Pc, lanes: LaneMap, barrier: bool) -> u32 {
        let ctx = st.alloc();
        if !barrier {
            self.add_count(pc, lanes.lanes().count_ones() as u64);
        }
        st.warps[ctx as usize] = Some(PoolWarp { pc, lanes, uid: self.next_uid, barrier, awaiting: None });
        self.next_uid += 1;
        self.warps += 1;
        ctx
    }

    /// Writes the threads `parts` back into CTA `cta`'s pool at `pc`.
    fn insert(&mut self, st: &mut PoolCta, cta: u32, pc: Pc, parts: &[(u32, LaneMask)], u: &mut UpdateCtx<'_>) {
        let incoming = parts.iter().fold(0, |a, p| a | p.1);
        if incoming == 0 {
            return;
        }
        if self.warp_sync.get(pc as usize).copied().unwrap_or(false) {
            self.insert_sync(st, pc, parts);
            return;
        }
        u.count(c::LUT_LOOKUPS, 1);
        let found = match self.lut.lookup(cta, pc) {
            Lookup::Hit(ctx) => {
                st.warps.get(ctx as usize).and_then(Option::as_ref).filter(|w| w.pc == pc && !w.barrier).map(|_| ctx)
            }
            Lookup::Miss => None,
        };
        let Some(ctx) = found else {
            u.count(c::LUT_MISSES, 1);
            let mergeable =
                st.warps.iter().flatten().any(|w| w.pc == pc && !w.barrier && w.lanes.lanes() & incoming != incoming);
            if mergeable {
                u.count(c::LUT_REAL_MISSES, 1);
            }
            let ctx = self.new_warp(st, pc, LaneMap::from_parts(parts.iter().copied()), false);
            if self.lut.insert(cta, pc, ctx) {
                u.count(c::LUT_EVICTIONS, 1);
            }
            return;
        };
        let w = st.warps[ctx as usize].as_mut().expect("pool warp");
        let occupied = w.lanes.lanes();
        let fit = incoming & !occupied;
        let conflict = incoming & occupied;
        if fit != 0 {
            let mut merged: Vec<(u32, LaneMask)> = w.lanes.parts().to_vec();
            for &(sw, m) in parts {
                let m = m & fit;
                match merged.iter_mut().find(|p| p.0 == sw) {
                    Some(p) => p.1 |= m,
                    None => merged.push((sw, m)),
                }
            }
            w.lanes = LaneMap::from_parts(merged);
            self.add_count(pc, fit.count_ones() as u64);
            u.count(c::MERGES, 1);
            u.count_branch(0, 1);
        }
        if conflict != 0 {
            u.count(c::MERGE_CONFLICTS, 1);
            let rest = LaneMap::from_parts(parts.iter().map(|&(sw, m)| (sw, m & conflict)));
            let new = self.new_warp(st, pc, rest, false);
            if self.lut.insert(cta, pc, new) {
                u.count(c::LUT_EVICTIONS, 1);
            }
        }
    }
}

impl PoolSm {
    /// Threads reaching a warp-synchronous instruction (one with a member mask) bypass the LUT and join
    /// the warp of their own static warp at that pc: the instruction's member lanes are lanes of the
    /// thread's static warp, so it must run on static warps. A warp there that waits for missing members
    /// ([`Tracker::await_members`]) issues once they joined.
    fn insert_sync(&mut self, st: &mut PoolCta, pc: Pc, parts: &[(u32, LaneMask)]) {
        for &(sw, m) in parts {
            let found = st
                .warps
                .iter_mut()
                .flatten()
                .find(|w| w.pc == pc && !w.barrier && matches!(w.lanes.parts(), [(x, _)] if *x == sw));
            match found {
                Some(w) => {
                    let lanes = w.lanes.parts()[0].1 | m;
                    w.lanes = LaneMap::from_parts([(sw, lanes)]);
                    w.awaiting = w.awaiting.map(|(x, a)| (x, a & !m)).filter(|a| a.1 != 0);
                    self.add_count(pc, m.count_ones() as u64);
                }
                None => {
                    self.new_warp(st, pc, LaneMap::from_parts([(sw, m)]), false);
                }
            }
        }
    }
}

impl Tracker for Dwf {
    type Sm = PoolSm;
    type Cta = PoolCta;

    const STRUCTURE: Structure = Structure::Pool;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const ORDERED: bool = true;
    const AWAITS_MEMBERS: bool = true;
    const COUNTERS: &'static [Counter] = &COUNTERS;
    const BRANCH_COUNTERS: &'static [Counter] = &BRANCH_COUNTERS;

    fn name(&self) -> &'static str {
        self.0.mechanism_name()
    }

    fn new_sm(&self, prog: &Program, launch: &LaunchConfig) -> PoolSm {
        let mut reconv_point = vec![false; prog.insts.len()];
        for &r in &prog.reconv {
            if let Some(x) = reconv_point.get_mut(r as usize) {
                *x = true;
            }
        }
        PoolSm {
            w: launch.warp_size,
            lut: Lut::new(launch.dwf_lut),
            counts: BTreeMap::new(),
            drain: None,
            next_uid: 0,
            warps: 0,
            reconv_point,
            warp_sync: prog.insts.iter().map(|i| i.op.member_mask().is_some()).collect(),
        }
    }

    fn contexts(&self, _nwarps: u32, nthreads: u32) -> u32 {
        // The worst case: one thread per warp.
        nthreads.max(1)
    }

    fn occupied(&self, _sm: &PoolSm, st: &PoolCta, _contexts: u32, out: &mut Vec<u32>) {
        out.extend(st.warps.iter().enumerate().filter(|(_, w)| w.is_some()).map(|(i, _)| i as u32));
    }

    fn launch(&self, sm: &mut PoolSm, _cta: u32, view: &CtaView<'_>, entry: Pc) -> PoolCta {
        let mut st = PoolCta { warps: Vec::new(), passed: vec![0; view.live.len() * view.w as usize] };
        for (w, &m) in view.live.iter().enumerate() {
            if m != 0 {
                sm.new_warp(&mut st, entry, LaneMap::from_parts([(w as u32, m)]), false);
            }
        }
        self.choose_drain(sm);
        st
    }

    fn await_members(&self, _sm: &mut PoolSm, st: &mut PoolCta, group: &Group, lanes: LaneMask) {
        let Some(sw) = group.lanes.single_warp(group.mask) else { return };
        if let Some(w) = st.warps.get_mut(group.ctx as usize).and_then(Option::as_mut) {
            let before = w.awaiting.map_or(0, |a| a.1);
            w.awaiting = Some((sw, before | lanes));
        }
    }

    fn retire(&self, sm: &mut PoolSm, cta: u32) {
        sm.lut.forget_cta(cta);
    }

    fn peek(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>, ctx: u32) -> Peek {
        let Some(Some(w)) = st.warps.get(ctx as usize) else { return Peek::Empty };
        let mask = w.lanes.parts().iter().fold(0, |a, &(sw, m)| a | (m & view.live[sw as usize]));
        if mask == 0 {
            return Peek::Empty;
        }
        if w.lanes.parts().iter().any(|&(sw, m)| view.blocked[sw as usize] & m != 0) {
            return Peek::Blocked(Blocked::Barrier);
        }
        if w.awaiting.is_some_and(|(sw, m)| m & view.live[sw as usize] != 0) {
            return Peek::Blocked(Blocked::Mechanism);
        }
        let prio = self.priority(sm, st, w);
        Peek::Ready(Group { ctx, pc: w.pc, mask, lanes: w.lanes.clone(), hold: mask, prio })
    }

    fn choose(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>) -> Option<Group> {
        let mut best: Option<Group> = None;
        for ctx in 0..st.warps.len() as u32 {
            if let Peek::Ready(g) = self.peek(sm, st, view, ctx) {
                if best.as_ref().is_none_or(|b| g.prio < b.prio) {
                    best = Some(g);
                }
            }
        }
        best
    }

    fn update(
        &self,
        sm: &mut PoolSm,
        st: &mut PoolCta,
        group: &Group,
        flow: &Flow,
        u: &mut UpdateCtx<'_>,
    ) -> Result<(), MechError> {
        let Some(w) = st.warps.get_mut(group.ctx as usize).and_then(Option::take) else {
            return Err(MechError(format!("no pool warp in context {}", group.ctx)));
        };
        if matches!(flow, Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. }) {
            return Err(MechError("explicit stack instructions need the `ssy` mechanism".into()));
        }
        // The issued warp leaves the pool at once.
        sm.warps -= 1;
        if !w.barrier {
            sm.sub_count(w.pc, w.lanes.lanes().count_ones() as u64);
        }
        sm.lut.invalidate(u.cta, w.pc, group.ctx);
        if sm.reconv_point.get(group.pc as usize).copied().unwrap_or(false) {
            for s in slots(&w.lanes, sm.w) {
                st.passed[s] += 1;
            }
        }
        // Write the threads back by next pc.
        let live: LaneMask = w.lanes.parts().iter().fold(0, |a, &(sw, m)| a | (m & u.view.live[sw as usize]));
        if u.barrier {
            let parts = LaneMap::from_parts(w.lanes.split(live));
            if parts.lanes() != 0 {
                sm.new_warp(st, group.pc + 1, parts, true);
                u.count(c::BARRIER_WARPS, 1);
            }
        } else {
            for (pc, m) in next_groups(group.pc, group.mask & live, flow) {
                let parts: smallvec::SmallVec<[(u32, LaneMask); 4]> = w.lanes.split(m).collect();
                sm.insert(st, u.cta, pc, &parts, u);
            }
        }
        u.delay(Delay::PoolInsert, w.lanes.split(live));
        self.choose_drain(sm);
        u.max(c::MAX_DISTINCT_PCS, sm.counts.len() as u64);
        u.size = sm.warps;
        Ok(())
    }

    fn entries(&self, sm: &PoolSm, st: &PoolCta, _ctx: u32) -> Vec<EntryView> {
        let nwarps = st.passed.len() / sm.w.max(1) as usize;
        let mut out = Vec::new();
        for (i, w) in st.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            let mut lanes = vec![0; nwarps];
            for &(sw, m) in w.lanes.parts() {
                lanes[sw as usize] |= m;
            }
            let mut note = format!("#{i} uid={}", w.uid);
            if w.barrier {
                note.push_str(" barrier");
            } else if w.awaiting.is_some() {
                note.push_str(" awaiting");
            } else if sm.drain == Some(w.pc) {
                note.push_str(" draining");
            }
            out.push(EntryView { kind: "warp", lanes, pc: w.pc, rpc: PC_NONE, note });
        }
        out
    }

    fn positions(&self, _sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for w in st.warps.iter().flatten() {
            let state = if w.barrier {
                "waiting at a barrier (barrier warp)"
            } else if w.awaiting.is_some() {
                "waiting for the rest of its warp at a warp-synchronous instruction"
            } else {
                "in the warp pool"
            };
            for &(sw, m) in w.lanes.parts() {
                let m = m & view.live[sw as usize];
                if m != 0 {
                    out.push(Position { warp: sw, lanes: m, pc: w.pc, state });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finite_lut_evicts_the_least_recently_used_entry_of_a_set() {
        let mut lut = Lut::new(LutGeometry { entries: 4, ways: 2 });
        // pcs 0, 2, 4 share set 0 of 2.
        assert!(!lut.insert(0, 0, 10));
        assert!(!lut.insert(0, 2, 11));
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(10)));
        assert!(lut.insert(0, 4, 12), "the set is full: pc 2 (least recently used) goes");
        assert!(matches!(lut.lookup(0, 2), Lookup::Miss));
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(10)));
        lut.invalidate(0, 0, 99);
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(10)), "invalidation names the warp");
        lut.invalidate(0, 0, 10);
        assert!(matches!(lut.lookup(0, 0), Lookup::Miss));
        lut.forget_cta(0);
        assert!(matches!(lut.lookup(0, 4), Lookup::Miss));
    }

    #[test]
    fn a_perfect_lut_keys_by_cta_and_pc() {
        let mut lut = Lut::new(LutGeometry::PERFECT);
        assert!(!lut.insert(0, 5, 1));
        assert!(!lut.insert(1, 5, 2));
        assert!(matches!(lut.lookup(0, 5), Lookup::Hit(1)));
        assert!(matches!(lut.lookup(1, 5), Lookup::Hit(2)));
        lut.forget_cta(0);
        assert!(matches!(lut.lookup(0, 5), Lookup::Miss));
        assert!(matches!(lut.lookup(1, 5), Lookup::Hit(2)));
    }

    #[test]
    fn priorities_order_classes_first() {
        assert!(pack(0, 1 << 40, 9) < pack(1, 0, 0));
        assert!(pack(1, 5, 9) < pack(2, 0, 0));
        assert!(pack(2, 3, 100) < pack(2, 4, 0));
        assert!(pack(2, 3, 1) < pack(2, 3, 2));
    }
}
