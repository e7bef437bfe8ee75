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
//! barrier issue first. Threads that reach `bar.sync` skip the LUT: they are packed into fresh warps of
//! their own CTA that wait until the CTA's barrier releases and are never merged.
//!
//! Two pool scopes ([`Dwf`]'s parameter):
//! - `dwf`, `dwf:<heuristic>`: threads are grouped within their CTA (the LUT is keyed by CTA and pc;
//!   the heuristic's thread counts are SM-wide).
//! - `dwf:sm`: one pool for every CTA of the SM, as in Fung's MICRO'07 design: the LUT is keyed by pc
//!   alone, so threads of different CTAs at one pc share a warp (each keeps its home lane). A pool warp
//!   is kept in the issue contexts of the CTA whose thread started it; it always still holds that thread,
//!   so a CTA whose threads all exited owns no pool warp and retires. The core executes a warp that draws
//!   from several CTAs once per CTA, each part with its CTA's shared memory, barriers and `%ctaid`.

use crate::interface::counters;
use crate::interface::Done;
use crate::launch::LaunchConfig;
use crate::program::Program;
use crate::tracker::{
    Blocked, Counter, CtaView, Delay, Group, LaneMap, Peek, Position, PositionState, Tracker, UpdateCtx,
};
use crate::types::{LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::Structure;
use crate::{next_groups, BarrierMode, EntryView, Flow, MechError};
use reconverge_program::ValueError;
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

    /// The registry's facts of DWF (with a per-CTA pool) under this heuristic.
    pub fn info(self) -> &'static crate::Info {
        match self {
            Heuristic::Majority => &MAJORITY,
            Heuristic::Minority => &MINORITY,
            Heuristic::Pc => &PC,
            Heuristic::Pdom => &PDOM,
            Heuristic::Fifo => &FIFO,
        }
    }
}

/// The geometry of a set-associative look-up table: `entries` in sets of `ways`; 0 entries = a perfect
/// table (every key has its own entry, nothing is ever evicted).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, serde::Serialize)]
pub struct LutGeometry {
    /// Entries in all (0 = perfect).
    pub entries: u32,
    /// Entries per set (associativity); `entries` must be a multiple of it.
    pub ways: u32,
}

impl LutGeometry {
    /// A perfect table.
    pub const PERFECT: LutGeometry = LutGeometry { entries: 0, ways: 0 };

    /// Parses `ENTRIES[:WAYS]` (`0` = perfect; without `:WAYS`, fully associative).
    pub fn parse(s: &str) -> Result<LutGeometry, ValueError> {
        let (e, w) = match s.split_once(':') {
            Some((e, w)) => (e, Some(w)),
            None => (s, None),
        };
        let entries: u32 = e.trim().parse().map_err(|_| ValueError::TableSyntax(s.to_string()))?;
        let ways: u32 = match w {
            Some(w) => w.trim().parse().map_err(|_| ValueError::TableWays(s.to_string()))?,
            None => entries,
        };
        if entries == 0 {
            return Ok(LutGeometry::PERFECT);
        }
        if ways == 0 || !entries.is_multiple_of(ways) {
            return Err(ValueError::TableSets { text: s.to_string(), entries, ways });
        }
        if entries > 1 << 20 {
            return Err(ValueError::TableSize { text: s.to_string(), max: 1 << 20 });
        }
        Ok(LutGeometry { entries, ways })
    }

    /// Whether the table is perfect.
    pub fn is_perfect(self) -> bool {
        self.entries == 0
    }
}

impl std::fmt::Display for LutGeometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_perfect() {
            f.write_str("perfect")
        } else {
            write!(f, "{}:{}", self.entries, self.ways)
        }
    }
}

/// Dynamic warp formation under a heuristic with a PC-indexed look-up table of a geometry; `SM_POOL`: one
/// warp pool for every CTA of the SM (`dwf:sm`) instead of one per CTA.
#[derive(Clone, Copy, Debug)]
pub struct Dwf<const SM_POOL: bool> {
    /// Which pool warp issues next.
    pub heuristic: Heuristic,
    /// The geometry of the look-up table that finds a pool warp for a pc.
    pub lut: LutGeometry,
}

/// A pool warp: the CTA slot whose issue contexts hold it, and the context.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct WarpRef {
    slot: u32,
    ctx: u32,
}

/// One entry of a finite look-up table.
#[derive(Clone, Copy, Debug)]
struct LutEntry {
    key: u32,
    pc: Pc,
    warp: WarpRef,
    used: u64,
}

/// The PC-indexed look-up table: which pool warp is being filled for `(key, pc)`; the key is the CTA slot
/// for a per-CTA pool and 0 for an SM-wide one.
#[derive(Clone, Debug)]
struct Lut {
    geometry: LutGeometry,
    perfect: HashMap<(u32, Pc), WarpRef>,
    sets: Vec<Vec<Option<LutEntry>>>,
    clock: u64,
}

/// What a lookup found.
enum Lookup {
    Hit(WarpRef),
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

    fn lookup(&mut self, key: u32, pc: Pc) -> Lookup {
        if self.geometry.is_perfect() {
            return self.perfect.get(&(key, pc)).map_or(Lookup::Miss, |&c| Lookup::Hit(c));
        }
        self.clock += 1;
        let clock = self.clock;
        let s = self.set_of(pc);
        match self.sets[s].iter_mut().flatten().find(|e| e.key == key && e.pc == pc) {
            Some(e) => {
                e.used = clock;
                Lookup::Hit(e.warp)
            }
            None => Lookup::Miss,
        }
    }

    /// Points `(key, pc)` at `warp`; returns whether a valid entry of another key was evicted.
    fn insert(&mut self, key: u32, pc: Pc, warp: WarpRef) -> bool {
        if self.geometry.is_perfect() {
            self.perfect.insert((key, pc), warp);
            return false;
        }
        self.clock += 1;
        let clock = self.clock;
        let s = self.set_of(pc);
        let set = &mut self.sets[s];
        let entry = LutEntry { key, pc, warp, used: clock };
        if let Some(e) = set.iter_mut().flatten().find(|e| e.key == key && e.pc == pc) {
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

    /// Forgets the entry of `(key, pc)` if it names `warp` (the warp issued).
    fn invalidate(&mut self, key: u32, pc: Pc, warp: WarpRef) {
        if self.geometry.is_perfect() {
            if self.perfect.get(&(key, pc)) == Some(&warp) {
                self.perfect.remove(&(key, pc));
            }
            return;
        }
        let s = self.set_of(pc);
        for e in self.sets[s].iter_mut() {
            if e.is_some_and(|e| e.key == key && e.pc == pc && e.warp == warp) {
                *e = None;
            }
        }
    }

    /// Forgets every entry that names a warp of CTA slot `slot`.
    fn forget_slot(&mut self, slot: u32) {
        self.perfect.retain(|_, w| w.slot != slot);
        for set in self.sets.iter_mut() {
            for e in set.iter_mut() {
                if e.is_some_and(|e| e.warp.slot == slot) {
                    *e = None;
                }
            }
        }
    }
}

/// The state DWF keeps per SM: the LUT, the pool warps of every CTA slot and what the heuristics need.
#[derive(Clone, Debug)]
pub struct PoolSm {
    w: u32,
    /// Static warps per CTA (an SM warp is CTA slot × this + static warp).
    wpc: u32,
    /// One pool for every CTA of the SM ([`Dwf`]'s `SM_POOL`).
    sm_pool: bool,
    lut: Lut,
    /// The pool warps each CTA slot's issue contexts hold.
    pools: Vec<Pool>,
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

/// The pool warps held in one CTA slot's issue contexts, and the slot's threads' reconvergence counts.
#[derive(Clone, Debug, Default)]
struct Pool {
    warps: Vec<Option<PoolWarp>>,
    /// Reconvergence points each thread slot of the CTA has passed (pdom priority).
    passed: Vec<u32>,
}

/// A warp of the pool.
#[derive(Clone, Debug)]
struct PoolWarp {
    pc: Pc,
    /// Its threads: `(static warp, lanes)` for a per-CTA pool, `(SM warp, lanes)` for an SM-wide one.
    lanes: LaneMap,
    uid: u64,
    /// Packed at a barrier: not merged, not counted, issues first once the barrier releases.
    barrier: bool,
    /// At a warp-synchronous instruction: the warp and its member lanes the instruction waits for (the
    /// lanes are free in this warp).
    awaiting: Option<(u32, LaneMask)>,
}

/// DWF's state of one CTA: which slot's pool warps are its issue contexts (the warps live in [`PoolSm`],
/// where an SM-wide pool can reach every CTA's).
#[derive(Clone, Debug)]
pub struct PoolCta {
    slot: u32,
}

counters! {
    /// Counter indices.
    pub(crate) enum DwfCounter {
        Merges = sum("merges", "thread groups written into a pool warp that already held threads"),
        MergeConflicts = sum(
            "merge_conflicts",
            "write-backs in which some thread's home lane was taken, so a new warp was started",
        ),
        LutLookups = sum("lut_lookups", "look-up table lookups (one per thread group written back)"),
        LutMisses = sum("lut_misses", "lookups that found no warp being filled at the pc"),
        LutEvictions = sum("lut_evictions", "entries of a finite look-up table evicted for another pc (aliasing)"),
        LutRealMisses = sum(
            "lut_real_misses",
            "misses although the CTA had a warp at the pc with a free lane for the group",
        ),
        BarrierWarps = sum("barrier_warps", "warps packed from threads arriving at a barrier"),
        MaxDistinctPcs = max("max_distinct_pcs", "the most distinct pcs among one SM's pool warps at once"),
        MultiCtaWarps = sum(
            "multi_cta_warps",
            "issued pool warps whose threads belong to more than one CTA (only an SM-wide pool, `dwf:sm`, forms them)",
        ),
    }
}

counters! {
    /// Per-branch counter indices.
    pub(crate) enum DwfBranchCounter {
        Merges = sum("merges", "thread groups leaving the branch that were merged into an existing warp"),
    }
}

/// Packs an issue priority: a class (0 = released barrier warps), then a primary key, then a pc.
fn pack(class: u64, primary: u64, low: Pc) -> u64 {
    (class << 60) | (primary.min((1 << 28) - 1) << 32) | low as u64
}

impl<const SM_POOL: bool> Dwf<SM_POOL> {
    /// The issue priority of `w`, a warp of CTA slot `slot`'s pool (lower first). Pure.
    fn priority(&self, sm: &PoolSm, slot: u32, w: &PoolWarp) -> u64 {
        if w.barrier {
            return pack(0, 0, w.pc);
        }
        let count = || sm.counts.get(&w.pc).copied().unwrap_or(0);
        match self.heuristic {
            Heuristic::Majority | Heuristic::Minority if sm.drain == Some(w.pc) => pack(1, 0, w.pc),
            Heuristic::Majority => pack(2, u32::MAX as u64 - count().min(u32::MAX as u64), w.pc),
            Heuristic::Minority => pack(2, count(), w.pc),
            Heuristic::Pc => pack(2, w.pc as u64, 64 - w.lanes.lanes().count_ones()),
            Heuristic::Pdom => {
                let passed = sm.threads(slot, &w.lanes).map(|(s, t)| sm.pools[s as usize].passed[t]).max().unwrap_or(0);
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
        let pick = match self.heuristic {
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

impl PoolWarp {
    /// The live lanes if the warp may issue now; otherwise what [`Tracker::peek`] sees.
    #[inline]
    fn ready(&self, view: &CtaView<'_>) -> Result<LaneMask, Peek> {
        let mask = self.lanes.parts().iter().fold(0, |a, &(sw, m)| a | (m & view.live[sw as usize]));
        if mask == 0 {
            return Err(Peek::Empty);
        }
        if self.lanes.parts().iter().any(|&(sw, m)| view.blocked[sw as usize] & m != 0) {
            return Err(Peek::Blocked(Blocked::Barrier));
        }
        if self.awaiting.is_some_and(|(sw, m)| m & view.live[sw as usize] != 0) {
            return Err(Peek::Blocked(Blocked::Mechanism));
        }
        Ok(mask)
    }
}

impl Pool {
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
    /// The CTA slot and static warp of the threads a lane part names, in a warp of slot `slot`'s pool.
    fn home(&self, slot: u32, warp: u32) -> (u32, u32) {
        if self.sm_pool {
            (warp / self.wpc.max(1), warp % self.wpc.max(1))
        } else {
            (slot, warp)
        }
    }

    /// The CTA slot and CTA thread slot of every thread of `lanes`, a warp of slot `slot`'s pool.
    fn threads<'l>(&'l self, slot: u32, lanes: &'l LaneMap) -> impl Iterator<Item = (u32, usize)> + 'l {
        let w = self.w as usize;
        lanes.parts().iter().flat_map(move |&(sw, m)| {
            let (s, local) = self.home(slot, sw);
            crate::types::lanes(m).map(move |l| (s, local as usize * w + l))
        })
    }

    /// The LUT key of threads of CTA slot `slot`.
    fn key(&self, slot: u32) -> u32 {
        if self.sm_pool {
            0
        } else {
            slot
        }
    }

    /// The pool warp `r`, if it exists.
    fn warp(&self, r: WarpRef) -> Option<&PoolWarp> {
        self.pools.get(r.slot as usize)?.warps.get(r.ctx as usize)?.as_ref()
    }

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

    /// A new pool warp at `pc` in the pool of the CTA of its first thread.
    fn new_warp(&mut self, slot: u32, pc: Pc, lanes: LaneMap, barrier: bool) -> WarpRef {
        let home = lanes.parts().first().map_or(slot, |p| self.home(slot, p.0).0);
        if !barrier {
            self.add_count(pc, lanes.lanes().count_ones() as u64);
        }
        let pool = &mut self.pools[home as usize];
        let ctx = pool.alloc();
        pool.warps[ctx as usize] = Some(PoolWarp { pc, lanes, uid: self.next_uid, barrier, awaiting: None });
        self.next_uid += 1;
        self.warps += 1;
        WarpRef { slot: home, ctx }
    }

    /// Writes the threads `parts` of a warp of CTA slot `slot`'s pool back into the pool at `pc`.
    fn insert(&mut self, slot: u32, pc: Pc, parts: &[(u32, LaneMask)], u: &mut UpdateCtx<'_>) {
        let incoming = parts.iter().fold(0, |a, p| a | p.1);
        if incoming == 0 {
            return;
        }
        if self.warp_sync.get(pc as usize).copied().unwrap_or(false) {
            self.insert_sync(slot, pc, parts);
            return;
        }
        u.count(DwfCounter::LutLookups, 1);
        let key = self.key(slot);
        let found = match self.lut.lookup(key, pc) {
            Lookup::Hit(r) => self.warp(r).filter(|w| w.pc == pc && !w.barrier).map(|_| r),
            Lookup::Miss => None,
        };
        let Some(r) = found else {
            u.count(DwfCounter::LutMisses, 1);
            let candidates =
                if self.sm_pool { &self.pools[..] } else { std::slice::from_ref(&self.pools[slot as usize]) };
            let mergeable = candidates
                .iter()
                .flat_map(|p| p.warps.iter().flatten())
                .any(|w| w.pc == pc && !w.barrier && w.lanes.lanes() & incoming != incoming);
            if mergeable {
                u.count(DwfCounter::LutRealMisses, 1);
            }
            let r = self.new_warp(slot, pc, LaneMap::from_parts(parts.iter().copied()), false);
            if self.lut.insert(key, pc, r) {
                u.count(DwfCounter::LutEvictions, 1);
            }
            return;
        };
        let w = self.pools[r.slot as usize].warps[r.ctx as usize].as_mut().expect("pool warp");
        let occupied = w.lanes.lanes();
        let fit = incoming & !occupied;
        let conflict = incoming & occupied;
        if fit != 0 {
            let mut merged: Vec<(u32, LaneMask)> = w.lanes.parts().to_vec();
            for &(sw, m) in parts {
                let m = m & fit;
                if m == 0 {
                    continue;
                }
                match merged.iter_mut().find(|p| p.0 == sw) {
                    Some(p) => p.1 |= m,
                    None => merged.push((sw, m)),
                }
            }
            w.lanes = LaneMap::from_parts(merged);
            self.add_count(pc, fit.count_ones() as u64);
            u.count(DwfCounter::Merges, 1);
            u.count_branch(DwfBranchCounter::Merges, 1);
        }
        if conflict != 0 {
            u.count(DwfCounter::MergeConflicts, 1);
            let rest = LaneMap::from_parts(parts.iter().map(|&(sw, m)| (sw, m & conflict)).filter(|p| p.1 != 0));
            let new = self.new_warp(slot, pc, rest, false);
            if self.lut.insert(key, pc, new) {
                u.count(DwfCounter::LutEvictions, 1);
            }
        }
    }

    /// Threads reaching a warp-synchronous instruction (one with a member mask) bypass the LUT and join
    /// the warp of their own static warp at that pc: the instruction's member lanes are lanes of the
    /// thread's static warp, so it must run on static warps. A warp there that waits for missing members
    /// ([`Tracker::await_members`]) issues once they joined.
    fn insert_sync(&mut self, slot: u32, pc: Pc, parts: &[(u32, LaneMask)]) {
        for &(sw, m) in parts {
            let home = self.home(slot, sw).0;
            let found = self.pools[home as usize]
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
                    self.new_warp(home, pc, LaneMap::from_parts([(sw, m)]), false);
                }
            }
        }
    }

    /// Packs the live threads `parts` that arrived at a barrier into barrier warps at `pc`, one per CTA.
    fn pack_barrier(&mut self, slot: u32, pc: Pc, parts: &[(u32, LaneMask)], u: &mut UpdateCtx<'_>) {
        let mut homes: smallvec::SmallVec<[u32; 2]> = parts.iter().map(|p| self.home(slot, p.0).0).collect();
        homes.sort_unstable();
        homes.dedup();
        for h in homes {
            let mine = LaneMap::from_parts(parts.iter().copied().filter(|p| self.home(slot, p.0).0 == h));
            if mine.lanes() != 0 {
                self.new_warp(h, pc, mine, true);
                u.count(DwfCounter::BarrierWarps, 1);
            }
        }
    }
}

impl<const SM_POOL: bool> Tracker for Dwf<SM_POOL> {
    type Sm = PoolSm;
    type Cta = PoolCta;

    const STRUCTURE: Structure = Structure::Pool;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const ORDERED: bool = true;
    const AWAITS_MEMBERS: bool = true;
    const SM_POOL: bool = SM_POOL;
    const COUNTERS: &'static [Counter] = DwfCounter::COUNTERS;
    const BRANCH_COUNTERS: &'static [Counter] = DwfBranchCounter::COUNTERS;

    fn name(&self) -> &'static str {
        if SM_POOL {
            SM_POOL_INFO.name
        } else {
            self.heuristic.info().name
        }
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
            wpc: launch.threads_per_cta().div_ceil(launch.warp_size.max(1)),
            sm_pool: SM_POOL,
            lut: Lut::new(self.lut),
            pools: Vec::new(),
            counts: BTreeMap::new(),
            drain: None,
            next_uid: 0,
            warps: 0,
            reconv_point,
            warp_sync: prog.insts.iter().map(|i| i.op.member_mask().is_some()).collect(),
        }
    }

    fn contexts(&self, _nwarps: u32, nthreads: u32) -> u32 {
        // The worst case: one thread per warp (every pool warp holds a thread of the CTA that started it).
        nthreads.max(1)
    }

    fn occupied(&self, sm: &PoolSm, st: &PoolCta, _contexts: u32, out: &mut Vec<u32>) {
        let warps = &sm.pools[st.slot as usize].warps;
        out.extend(warps.iter().enumerate().filter(|(_, w)| w.is_some()).map(|(i, _)| i as u32));
    }

    fn launch(&self, sm: &mut PoolSm, cta: u32, view: &CtaView<'_>, entry: Pc) -> PoolCta {
        if sm.pools.len() <= cta as usize {
            sm.pools.resize_with(cta as usize + 1, Pool::default);
        }
        sm.pools[cta as usize] = Pool { warps: Vec::new(), passed: vec![0; (sm.wpc * sm.w) as usize] };
        let base = if SM_POOL { cta * sm.wpc } else { 0 };
        for w in base..base + sm.wpc {
            let m = view.live.get(w as usize).copied().unwrap_or(0);
            if m != 0 {
                sm.new_warp(cta, entry, LaneMap::from_parts([(w, m)]), false);
            }
        }
        self.choose_drain(sm);
        PoolCta { slot: cta }
    }

    fn await_members(&self, sm: &mut PoolSm, st: &mut PoolCta, group: &Group, lanes: LaneMask) {
        let Some(sw) = group.lanes.single_warp(group.mask) else { return };
        let pool = &mut sm.pools[st.slot as usize];
        if let Some(w) = pool.warps.get_mut(group.ctx as usize).and_then(Option::as_mut) {
            let before = w.awaiting.map_or(0, |a| a.1);
            w.awaiting = Some((sw, before | lanes));
        }
    }

    fn retire(&self, sm: &mut PoolSm, cta: u32) {
        sm.lut.forget_slot(cta);
    }

    fn peek(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>, ctx: u32) -> Peek {
        let Some(w) = sm.warp(WarpRef { slot: st.slot, ctx }) else { return Peek::Empty };
        match w.ready(view) {
            Ok(mask) => {
                let prio = self.priority(sm, st.slot, w);
                Peek::Ready(Group { ctx, pc: w.pc, mask, lanes: w.lanes.clone(), hold: mask, prio })
            }
            Err(p) => p,
        }
    }

    fn choose(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>) -> Option<Group> {
        // The ready warp of the lowest priority, the lowest context among equals; only it becomes a group.
        let mut best: Option<(u64, u32)> = None;
        for (ctx, w) in sm.pools[st.slot as usize].warps.iter().enumerate() {
            let Some(w) = w.as_ref().filter(|w| w.ready(view).is_ok()) else { continue };
            let prio = self.priority(sm, st.slot, w);
            if best.is_none_or(|b| prio < b.0) {
                best = Some((prio, ctx as u32));
            }
        }
        match self.peek(sm, st, view, best?.1) {
            Peek::Ready(g) => Some(g),
            _ => None,
        }
    }

    fn update(&self, sm: &mut PoolSm, st: &mut PoolCta, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let slot = st.slot;
        let taken = sm.pools[slot as usize].warps.get_mut(group.ctx as usize).and_then(Option::take);
        let Some(w) = taken else {
            return Err(MechError::EmptyContext("pool warp", group.ctx));
        };
        if matches!(flow, Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. }) {
            return Err(MechError::NeedsSsy);
        }
        // The issued warp leaves the pool at once.
        sm.warps -= 1;
        if !w.barrier {
            sm.sub_count(w.pc, w.lanes.lanes().count_ones() as u64);
        }
        sm.lut.invalidate(sm.key(slot), w.pc, WarpRef { slot, ctx: group.ctx });
        if w.lanes.parts().iter().any(|p| sm.home(slot, p.0).0 != slot) {
            u.count(DwfCounter::MultiCtaWarps, 1);
        }
        if sm.reconv_point.get(group.pc as usize).copied().unwrap_or(false) {
            let threads: smallvec::SmallVec<[(u32, usize); 64]> = sm.threads(slot, &w.lanes).collect();
            for (s, t) in threads {
                sm.pools[s as usize].passed[t] += 1;
            }
        }
        // Write the threads back by next pc.
        let live: LaneMask = w.lanes.parts().iter().fold(0, |a, &(sw, m)| a | (m & u.view.live[sw as usize]));
        if u.barrier {
            let parts: smallvec::SmallVec<[(u32, LaneMask); 4]> = w.lanes.split(live).collect();
            sm.pack_barrier(slot, group.pc + 1, &parts, u);
        } else {
            for (pc, m) in next_groups(group.pc, group.mask & live, flow) {
                let parts: smallvec::SmallVec<[(u32, LaneMask); 4]> = w.lanes.split(m).collect();
                sm.insert(slot, pc, &parts, u);
            }
        }
        u.delay(Delay::PoolInsert, w.lanes.split(live));
        self.choose_drain(sm);
        u.max(DwfCounter::MaxDistinctPcs, sm.counts.len() as u64);
        u.size = sm.warps;
        Ok(())
    }

    fn entries(&self, sm: &PoolSm, st: &PoolCta, _ctx: u32) -> Vec<EntryView> {
        let pool = &sm.pools[st.slot as usize];
        let mut out = Vec::new();
        for (i, w) in pool.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            let nwarps = w.lanes.parts().iter().map(|p| p.0 as usize + 1).max().unwrap_or(0).max(sm.wpc as usize);
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
            out.push(EntryView { kind: EntryKind::Warp, lanes, pc: w.pc, rpc: PC_NONE, note });
        }
        out
    }

    fn positions(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        for w in sm.pools[st.slot as usize].warps.iter().flatten() {
            let state = if w.barrier {
                PositionState::BarrierWarp
            } else if w.awaiting.is_some() {
                PositionState::AwaitingWarp
            } else {
                PositionState::InPool
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

/// The registry's facts of `dwf`.
pub(crate) const MAJORITY: crate::Info = crate::Info::new("dwf", crate::Scope::Sm, "dynamic warp formation (Fung et al., MICRO 2007): threads regrouped by pc in a warp pool per CTA, majority heuristic").aliases(&["dwf:majority"])
.storage(STORAGE);

/// The registry's facts of `dwf:minority`.
pub(crate) const MINORITY: crate::Info = crate::Info::new(
    "dwf:minority",
    crate::Scope::Sm,
    "dynamic warp formation, the pc with the fewest threads issues first",
)
.outside_defaults()
.storage(STORAGE);

/// The registry's facts of `dwf:pc`.
pub(crate) const PC: crate::Info =
    crate::Info::new("dwf:pc", crate::Scope::Sm, "dynamic warp formation, the lowest pc issues first")
        .outside_defaults()
        .storage(STORAGE);

/// The registry's facts of `dwf:pdom`.
pub(crate) const PDOM: crate::Info = crate::Info::new(
    "dwf:pdom",
    crate::Scope::Sm,
    "dynamic warp formation, post-dominator priority: threads that passed fewer reconvergence points first",
)
.outside_defaults()
.storage(PDOM_STORAGE);

/// The registry's facts of `dwf:fifo`.
pub(crate) const FIFO: crate::Info =
    crate::Info::new("dwf:fifo", crate::Scope::Sm, "dynamic warp formation, the oldest pool warp issues first")
        .outside_defaults()
        .storage(STORAGE);

/// The registry's facts of `dwf:sm`.
pub(crate) const SM_POOL_INFO: crate::Info = crate::Info::new(
    "dwf:sm",
    crate::Scope::Sm,
    "dynamic warp formation with one warp pool for all the CTAs of an SM: threads of different CTAs share warps",
)
.outside_defaults()
.storage(SM_STORAGE);

/// The pool warps (per SM: at most one per thread, every thread alone at its pc): a pc and, per lane, a
/// valid bit and the thread's index in the SM.
const POOL: crate::storage::Part = {
    use crate::storage::{Cells, Part, Per, Reach, Size};
    Part::new(
        "warp pool",
        Per::Sm,
        Cells::Sram,
        Size::Reached(Reach::Structure, &Size::SmThreads),
        Size::Sum(&[
            Size::Pc,
            Size::Product(&[Size::W, Size::Sum(&[Size::Const(1), Size::IndexBits(&Size::SmThreads)])]),
        ]),
        "{pc, W x (valid, thread)}",
    )
};

/// Each thread's next pc, which the branch unit writes and the write-back into the pool reads (a lane's
/// threads in one bank).
const THREAD_PCS: crate::storage::Part = {
    use crate::storage::{common, Cells, Part, Per, Size};
    Part::new("thread pcs", Per::Thread, Cells::Sram, common::ONE, Size::Pc, "{next pc}")
};

/// The look-up table (L entries, or with a perfect table one per pool warp being filled, which the pool
/// bounds): a tag, the pool warp it names and the lanes that warp has taken. `key` is the tag beside the
/// pc: the CTA under `dwf` (its LUT is keyed by CTA and pc), nothing under `dwf:sm`.
const fn lut(key: &'static [crate::storage::Size], fields: &'static str) -> crate::storage::Part {
    use crate::storage::{Cells, Part, Per, Reach, Size};
    Part::new(
        "look-up table",
        Per::Sm,
        Cells::Sram,
        Size::Lut(&Size::Reached(Reach::Structure, &Size::SmThreads)),
        Size::Sum(key),
        fields,
    )
}

/// What `dwf` and its heuristics store.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::Size;
    &[
        POOL,
        lut(
            &[Size::Const(1), Size::Pc, Size::IndexBits(&Size::Ctas), Size::IndexBits(&Size::SmThreads), Size::W],
            "{valid, pc, CTA, pool warp, lanes taken}",
        ),
        THREAD_PCS,
    ]
};

/// What `dwf:pdom` stores: `dwf`'s structures and each thread's count of reconvergence points passed
/// (D bits).
const PDOM_STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Size};
    &[
        STORAGE[0],
        STORAGE[1],
        STORAGE[2],
        Part::new(
            "thread priorities",
            Per::Thread,
            Cells::Sram,
            common::ONE,
            Size::Depth,
            "{reconvergence points passed}",
        ),
    ]
};

/// What `dwf:sm` stores: its look-up table is keyed by pc alone.
const SM_STORAGE: &[crate::storage::Part] = {
    use crate::storage::Size;
    &[
        POOL,
        lut(
            &[Size::Const(1), Size::Pc, Size::IndexBits(&Size::SmThreads), Size::W],
            "{valid, pc, pool warp, lanes taken}",
        ),
        THREAD_PCS,
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    fn r(slot: u32, ctx: u32) -> WarpRef {
        WarpRef { slot, ctx }
    }

    #[test]
    fn a_finite_lut_evicts_the_least_recently_used_entry_of_a_set() {
        let mut lut = Lut::new(LutGeometry { entries: 4, ways: 2 });
        // pcs 0, 2, 4 share set 0 of 2.
        assert!(!lut.insert(0, 0, r(0, 10)));
        assert!(!lut.insert(0, 2, r(0, 11)));
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(x) if x.ctx == 10));
        assert!(lut.insert(0, 4, r(0, 12)), "the set is full: pc 2 (least recently used) goes");
        assert!(matches!(lut.lookup(0, 2), Lookup::Miss));
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(x) if x.ctx == 10));
        lut.invalidate(0, 0, r(0, 99));
        assert!(matches!(lut.lookup(0, 0), Lookup::Hit(x) if x.ctx == 10), "invalidation names the warp");
        lut.invalidate(0, 0, r(0, 10));
        assert!(matches!(lut.lookup(0, 0), Lookup::Miss));
        lut.forget_slot(0);
        assert!(matches!(lut.lookup(0, 4), Lookup::Miss));
    }

    #[test]
    fn a_perfect_lut_keys_by_cta_and_pc() {
        let mut lut = Lut::new(LutGeometry::PERFECT);
        assert!(!lut.insert(0, 5, r(0, 1)));
        assert!(!lut.insert(1, 5, r(1, 2)));
        assert!(matches!(lut.lookup(0, 5), Lookup::Hit(x) if x.ctx == 1));
        assert!(matches!(lut.lookup(1, 5), Lookup::Hit(x) if x.ctx == 2));
        lut.forget_slot(0);
        assert!(matches!(lut.lookup(0, 5), Lookup::Miss));
        assert!(matches!(lut.lookup(1, 5), Lookup::Hit(x) if x.ctx == 2));
    }

    #[test]
    fn priorities_order_classes_first() {
        assert!(pack(0, 1 << 40, 9) < pack(1, 0, 0));
        assert!(pack(1, 5, 9) < pack(2, 0, 0));
        assert!(pack(2, 3, 100) < pack(2, 4, 0));
        assert!(pack(2, 3, 1) < pack(2, 3, 2));
    }
}
