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
use rustc_hash::FxHashMap;
use smallvec::SmallVec;

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
    perfect: FxHashMap<(u32, Pc), WarpRef>,
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
        Lut { geometry, perfect: FxHashMap::default(), sets, clock: 0 }
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
            if let std::collections::hash_map::Entry::Occupied(e) = self.perfect.entry((key, pc)) {
                if *e.get() == warp {
                    e.remove();
                }
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
    counts: PcCounts,
    /// Whether pool warps keep their threads' largest count of reconvergence points passed (the pdom
    /// heuristic's key).
    track_passed: bool,
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

/// Threads in the pool per pc: a count per pc (O(1) for the heuristics' keys) and the pcs that have an
/// entry, in order (for the drain choice). A pc keeps an entry, even at a count of 0, from the first
/// thread added until a subtraction leaves it at 0.
#[derive(Clone, Debug, Default)]
struct PcCounts {
    /// Per pc: 0 without an entry, else the count plus one.
    by_pc: Vec<u64>,
    /// The pcs with an entry, ascending.
    pcs: Vec<Pc>,
}

impl PcCounts {
    fn new(pcs: usize) -> PcCounts {
        PcCounts { by_pc: vec![0; pcs], pcs: Vec::new() }
    }

    /// The count of `pc` (0 without an entry).
    #[inline]
    fn get(&self, pc: Pc) -> u64 {
        self.by_pc.get(pc as usize).map_or(0, |c| c.saturating_sub(1))
    }

    /// Whether `pc` has an entry.
    #[inline]
    fn contains(&self, pc: Pc) -> bool {
        self.by_pc.get(pc as usize).is_some_and(|&c| c != 0)
    }

    /// The number of pcs with an entry.
    fn len(&self) -> usize {
        self.pcs.len()
    }

    /// The pcs with an entry and their counts, ascending by pc.
    fn iter(&self) -> impl Iterator<Item = (Pc, u64)> + '_ {
        self.pcs.iter().map(|&p| (p, self.get(p)))
    }

    #[inline]
    fn add(&mut self, pc: Pc, n: u64) {
        let i = pc as usize;
        if i >= self.by_pc.len() {
            self.by_pc.resize(i + 1, 0);
        }
        if self.by_pc[i] == 0 {
            let at = self.pcs.partition_point(|&p| p < pc);
            self.pcs.insert(at, pc);
            self.by_pc[i] = 1;
        }
        self.by_pc[i] += n;
    }

    #[inline]
    fn sub(&mut self, pc: Pc, n: u64) {
        let Some(c) = self.by_pc.get_mut(pc as usize).filter(|c| **c != 0) else { return };
        *c = (*c - 1).saturating_sub(n) + 1;
        if *c == 1 {
            *c = 0;
            let at = self.pcs.partition_point(|&p| p < pc);
            self.pcs.remove(at);
        }
    }
}

/// The pool warps held in one CTA slot's issue contexts, and the slot's threads' reconvergence counts.
/// Besides the warps, an index kept with them ([`Pool::put`], [`Pool::take`], [`Pool::move_to`]): each
/// context's pc, and the distinct pcs of the warps not packed at a barrier, so that a choice or a lookup
/// by pc reads a few words instead of every warp.
#[derive(Clone, Debug, Default)]
struct Pool {
    warps: Vec<Option<PoolWarp>>,
    /// No context below this one is free (where [`Pool::alloc`] starts looking).
    free_from: usize,
    /// Per context, its warp's pc ([`PC_NONE`] where it is free).
    pcs: Vec<Pc>,
    /// Per pc, how many warps not packed at a barrier are there (a pool holds at most a CTA's threads).
    warps_at: Vec<u16>,
    /// The pcs where `warps_at` is not 0, in no particular order.
    at: SmallVec<[Pc; 16]>,
    /// How many warps were packed at a barrier (they issue before every other warp).
    barrier_warps: u32,
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
    /// The most reconvergence points any of its threads passed (kept only under the pdom heuristic:
    /// a thread's count changes only when its warp issues, which takes the warp out of the pool).
    passed: u32,
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
        match self.heuristic {
            Heuristic::Majority | Heuristic::Minority => self.pc_priority(sm, w.pc),
            Heuristic::Pc => pack(2, w.pc as u64, 64 - w.lanes.lanes().count_ones()),
            Heuristic::Pdom => {
                debug_assert_eq!(
                    w.passed,
                    sm.passed_max(slot, w.lanes.parts().iter().copied()),
                    "cached reconvergence count"
                );
                let at_reconv = sm.reconv_point.get(w.pc as usize).copied().unwrap_or(false);
                pack(2, w.passed as u64 + at_reconv as u64, w.pc)
            }
            Heuristic::Fifo => (2 << 60) | w.uid.min((1 << 60) - 1),
        }
    }

    /// Majority and minority: the priority of every warp at `pc` not packed at a barrier (it depends on the
    /// pc alone).
    fn pc_priority(&self, sm: &PoolSm, pc: Pc) -> u64 {
        let count = sm.counts.get(pc);
        match self.heuristic {
            _ if sm.drain == Some(pc) => pack(1, 0, pc),
            Heuristic::Minority => pack(2, count, pc),
            _ => pack(2, u32::MAX as u64 - count.min(u32::MAX as u64), pc),
        }
    }

    /// [`Tracker::choose`] for majority and minority through the pool's index, when CTA slot `slot`'s pool
    /// holds no barrier warp: the warps of one pc share a priority, so the answer is the first ready warp
    /// at the pool's best pc. `None` where that does not apply or no warp there is ready (the full scan
    /// then decides).
    fn choose_by_pc(&self, sm: &PoolSm, slot: u32, view: &CtaView<'_>) -> Option<Group> {
        let pool = &sm.pools[slot as usize];
        if !matches!(self.heuristic, Heuristic::Majority | Heuristic::Minority) || pool.barrier_warps != 0 {
            return None;
        }
        let (prio, pc) = pool.at.iter().map(|&pc| (self.pc_priority(sm, pc), pc)).min()?;
        pool.at_pc(pc).find_map(|ctx| {
            let w = pool.warps[ctx].as_ref()?;
            let mask = w.ready(view).ok()?;
            Some(Group { ctx: ctx as u32, pc, mask, lanes: w.lanes.clone(), hold: mask, prio })
        })
    }

    /// Majority and minority choose the next pc to drain when the current one has no threads left.
    fn choose_drain(&self, sm: &mut PoolSm) {
        if sm.drain.is_some_and(|p| sm.counts.contains(p)) {
            return;
        }
        let pick = match self.heuristic {
            // Ties go to the lower pc: iteration is in pc order and only a strictly better count wins.
            Heuristic::Majority => sm.counts.iter().fold(None, |best: Option<(Pc, u64)>, (p, n)| match best {
                Some((_, b)) if b >= n => best,
                _ => Some((p, n)),
            }),
            Heuristic::Minority => sm.counts.iter().fold(None, |best: Option<(Pc, u64)>, (p, n)| match best {
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
        let (mut mask, mut blocked) = (0, 0);
        for &(sw, m) in self.lanes.parts() {
            mask |= m & view.live[sw as usize];
            blocked |= m & view.blocked[sw as usize];
        }
        if mask == 0 {
            return Err(Peek::Empty);
        }
        if blocked != 0 {
            return Err(Peek::Blocked(Blocked::Barrier));
        }
        if self.awaiting.is_some_and(|(sw, m)| m & view.live[sw as usize] != 0) {
            return Err(Peek::Blocked(Blocked::Mechanism));
        }
        Ok(mask)
    }
}

impl Pool {
    /// The lowest free context (a new one at the end if none is free).
    fn alloc(&mut self) -> u32 {
        let from = self.free_from.min(self.warps.len());
        let i = match self.warps[from..].iter().position(Option::is_none) {
            Some(i) => from + i,
            None => {
                self.warps.push(None);
                self.pcs.push(PC_NONE);
                self.warps.len() - 1
            }
        };
        self.free_from = i + 1;
        i as u32
    }

    /// Takes the warp out of context `ctx`, freeing it.
    fn take(&mut self, ctx: u32) -> Option<PoolWarp> {
        let w = self.warps.get_mut(ctx as usize).and_then(Option::take);
        if let Some(w) = &w {
            self.free_from = self.free_from.min(ctx as usize);
            self.pcs[ctx as usize] = PC_NONE;
            if w.barrier {
                self.barrier_warps -= 1;
            } else {
                self.leave(w.pc);
            }
        }
        w
    }

    /// Puts `w` in context `ctx` (one [`Pool::alloc`] gave).
    fn put(&mut self, ctx: u32, w: PoolWarp) {
        self.pcs[ctx as usize] = w.pc;
        if w.barrier {
            self.barrier_warps += 1;
        } else {
            self.arrive(w.pc);
        }
        self.warps[ctx as usize] = Some(w);
    }

    /// Moves the warp in context `ctx`, not packed at a barrier, to `pc`.
    fn move_to(&mut self, ctx: u32, pc: Pc) {
        let Some(w) = self.warps.get_mut(ctx as usize).and_then(Option::as_mut) else { return };
        let from = std::mem::replace(&mut w.pc, pc);
        self.pcs[ctx as usize] = pc;
        self.leave(from);
        self.arrive(pc);
    }

    fn arrive(&mut self, pc: Pc) {
        let i = pc as usize;
        if i >= self.warps_at.len() {
            self.warps_at.resize(i + 1, 0);
        }
        self.warps_at[i] += 1;
        if self.warps_at[i] == 1 {
            self.at.push(pc);
        }
    }

    fn leave(&mut self, pc: Pc) {
        let Some(n) = self.warps_at.get_mut(pc as usize).filter(|n| **n > 0) else { return };
        *n -= 1;
        if *n == 0 {
            if let Some(i) = self.at.iter().position(|&p| p == pc) {
                self.at.swap_remove(i);
            }
        }
    }

    /// Whether a warp not packed at a barrier is at `pc`.
    fn holds_pc(&self, pc: Pc) -> bool {
        self.warps_at.get(pc as usize).is_some_and(|&n| n > 0)
    }

    /// The contexts whose warps are at `pc`, ascending.
    fn at_pc(&self, pc: Pc) -> impl Iterator<Item = usize> + '_ {
        self.pcs.iter().enumerate().filter(move |&(_, &p)| p == pc).map(|(c, _)| c)
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
    fn threads<'l>(
        &'l self,
        slot: u32,
        parts: impl Iterator<Item = (u32, LaneMask)> + 'l,
    ) -> impl Iterator<Item = (u32, usize)> + 'l {
        let w = self.w as usize;
        parts.flat_map(move |(sw, m)| {
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
        self.counts.add(pc, n);
    }

    fn sub_count(&mut self, pc: Pc, n: u64) {
        self.counts.sub(pc, n);
    }

    /// The most reconvergence points any thread of the lanes `parts` (of a warp of slot `slot`'s pool)
    /// passed ([`PoolWarp::passed`]); 0 unless the heuristic needs it.
    fn passed_max(&self, slot: u32, parts: impl Iterator<Item = (u32, LaneMask)>) -> u32 {
        if !self.track_passed {
            return 0;
        }
        self.threads(slot, parts).map(|(s, t)| self.pools[s as usize].passed[t]).max().unwrap_or(0)
    }

    /// A new pool warp at `pc` in the pool of the CTA of its first thread.
    fn new_warp(&mut self, slot: u32, pc: Pc, lanes: LaneMap, barrier: bool) -> WarpRef {
        let home = lanes.parts().first().map_or(slot, |p| self.home(slot, p.0).0);
        if !barrier {
            self.add_count(pc, lanes.lanes().count_ones() as u64);
        }
        let passed = self.passed_max(slot, lanes.parts().iter().copied());
        let pool = &mut self.pools[home as usize];
        let ctx = pool.alloc();
        pool.put(ctx, PoolWarp { pc, lanes, uid: self.next_uid, barrier, awaiting: None, passed });
        self.next_uid += 1;
        self.warps += 1;
        WarpRef { slot: home, ctx }
    }

    /// Writes the threads `lanes` of a warp of CTA slot `slot`'s pool back into the pool at `pc` (a new
    /// warp takes the map itself when all of it goes there).
    fn insert(&mut self, slot: u32, pc: Pc, lanes: LaneMap, u: &mut UpdateCtx<'_>) {
        let incoming = lanes.lanes();
        if incoming == 0 {
            return;
        }
        if self.warp_sync.get(pc as usize).copied().unwrap_or(false) {
            self.insert_sync(slot, pc, lanes.parts());
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
            // Without threads counted at the pc no warp there could take them (the count is SM-wide).
            let free_lane = |p: &Pool, c: usize| {
                p.warps[c].as_ref().is_some_and(|w| !w.barrier && w.lanes.lanes() & incoming != incoming)
            };
            let mergeable = self.counts.get(pc) != 0
                && candidates.iter().any(|p| p.holds_pc(pc) && p.at_pc(pc).any(|c| free_lane(p, c)));
            if mergeable {
                u.count(DwfCounter::LutRealMisses, 1);
            }
            let r = self.new_warp(slot, pc, lanes, false);
            if self.lut.insert(key, pc, r) {
                u.count(DwfCounter::LutEvictions, 1);
            }
            return;
        };
        let occupied = self.pools[r.slot as usize].warps[r.ctx as usize].as_ref().expect("pool warp").lanes.lanes();
        let fit = incoming & !occupied;
        let conflict = incoming & occupied;
        if fit != 0 {
            // The warp's count already covers its own threads: only the joining ones can raise it.
            let joining = self.passed_max(slot, lanes.split(fit));
            let w = self.pools[r.slot as usize].warps[r.ctx as usize].as_mut().expect("pool warp");
            for &(sw, m) in lanes.parts() {
                w.lanes.add(sw, m & fit);
            }
            w.passed = w.passed.max(joining);
            self.add_count(pc, fit.count_ones() as u64);
            u.count(DwfCounter::Merges, 1);
            u.count_branch(DwfBranchCounter::Merges, 1);
        }
        if conflict != 0 {
            u.count(DwfCounter::MergeConflicts, 1);
            let rest = if fit == 0 { lanes } else { LaneMap::from_parts(lanes.split(conflict)) };
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
            let found = self.pools[home as usize].warps.iter().position(|w| {
                w.as_ref().is_some_and(|w| w.pc == pc && !w.barrier && matches!(w.lanes.parts(), [(x, _)] if *x == sw))
            });
            match found {
                Some(i) => {
                    let joining = self.passed_max(slot, std::iter::once((sw, m)));
                    if let Some(w) = self.pools[home as usize].warps[i].as_mut() {
                        // A one-part warp of static warp `sw`: the joining lanes merge into that part.
                        w.lanes.add(sw, m);
                        w.awaiting = w.awaiting.map(|(x, a)| (x, a & !m)).filter(|a| a.1 != 0);
                        w.passed = w.passed.max(joining);
                    }
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
            counts: PcCounts::new(prog.insts.len() + 1),
            track_passed: self.heuristic == Heuristic::Pdom,
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
        let passed = vec![0; (sm.wpc * sm.w) as usize];
        let warps_at = vec![0; sm.counts.by_pc.len()];
        sm.pools[cta as usize] = Pool { passed, warps_at, ..Pool::default() };
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
        // The ready warp of the lowest priority, the lowest context among equals; only it becomes a group
        // (the one `peek` would give).
        if let Some(g) = self.choose_by_pc(sm, st.slot, view) {
            return Some(g);
        }
        let warps = &sm.pools[st.slot as usize].warps;
        let mut best: Option<(u64, u32, LaneMask)> = None;
        for (ctx, w) in warps.iter().enumerate() {
            let Some(w) = w else { continue };
            // The priority is cheaper than readiness: only a warp that would win is checked.
            let prio = self.priority(sm, st.slot, w);
            if best.is_some_and(|b| prio >= b.0) {
                continue;
            }
            if let Ok(mask) = w.ready(view) {
                best = Some((prio, ctx as u32, mask));
            }
        }
        let (prio, ctx, mask) = best?;
        let w = warps[ctx as usize].as_ref()?;
        Some(Group { ctx, pc: w.pc, mask, lanes: w.lanes.clone(), hold: mask, prio })
    }

    fn update(&self, sm: &mut PoolSm, st: &mut PoolCta, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let slot = st.slot;
        let taken = sm.pools[slot as usize].take(group.ctx);
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
            let threads: smallvec::SmallVec<[(u32, usize); 64]> =
                sm.threads(slot, w.lanes.parts().iter().copied()).collect();
            for (s, t) in threads {
                sm.pools[s as usize].passed[t] += 1;
            }
        }
        // Write the threads back by next pc.
        let live: LaneMask = w.lanes.parts().iter().fold(0, |a, &(sw, m)| a | (m & u.view.live[sw as usize]));
        // Nothing below reads or writes the delay.
        u.delay(Delay::PoolInsert, w.lanes.split(live));
        if u.barrier {
            let parts: smallvec::SmallVec<[(u32, LaneMask); 4]> = w.lanes.split(live).collect();
            sm.pack_barrier(slot, group.pc + 1, &parts, u);
        } else {
            let groups = next_groups(group.pc, group.mask & live, flow);
            match groups.as_slice() {
                // The whole warp goes on to one pc: it is written back with its own lane map.
                &[(pc, m)] if m == w.lanes.lanes() => sm.insert(slot, pc, w.lanes, u),
                _ => {
                    for &(pc, m) in &groups {
                        sm.insert(slot, pc, LaneMap::from_parts(w.lanes.split(m)), u);
                    }
                }
            }
        }
        self.choose_drain(sm);
        u.max(DwfCounter::MaxDistinctPcs, sm.counts.len() as u64);
        u.size = sm.warps;
        Ok(())
    }

    fn straight_run(&self, sm: &PoolSm, st: &PoolCta, view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        // Exact where issuing one instruction at a time would write the warp back as it was and choose it
        // again: a perfect LUT (nothing is evicted), no other ready warp in the CTA's pool (the choice has
        // no alternative, and straight-line code changes no thread's liveness, barrier or member wait), a
        // warp of this CTA's threads only, and no other pool warp that a write-back could merge with at the
        // pcs the run passes, none of them a reconvergence point or a warp-synchronous instruction.
        let slot = st.slot;
        let Some(me) = sm.warp(WarpRef { slot, ctx: group.ctx }) else { return 1 };
        if !sm.lut.geometry.is_perfect() || me.barrier || me.pc != group.pc {
            return 1;
        }
        if me.lanes.parts().iter().any(|p| sm.home(slot, p.0).0 != slot) {
            return 1;
        }
        // Another ready warp of the CTA's pool (the common case) ends the question first.
        let warps = &sm.pools[slot as usize].warps;
        let ready = |(c, w): (usize, &Option<PoolWarp>)| {
            c as u32 != group.ctx && w.as_ref().is_some_and(|w| w.ready(view).is_ok())
        };
        if warps.iter().enumerate().any(ready) {
            return 1;
        }
        let clean = |pc: Pc| {
            !sm.reconv_point.get(pc as usize).copied().unwrap_or(true)
                && !sm.warp_sync.get(pc as usize).copied().unwrap_or(true)
        };
        let mut n = (1..max).find(|&k| !clean(group.pc + k)).unwrap_or(max);
        let pools = if sm.sm_pool { &sm.pools[..] } else { std::slice::from_ref(&sm.pools[slot as usize]) };
        for &pc in pools.iter().flat_map(|p| p.pcs.iter()) {
            if pc != PC_NONE && pc > group.pc {
                n = n.min(pc - group.pc);
            }
        }
        n.max(1)
    }

    fn advance(&self, sm: &mut PoolSm, st: &mut PoolCta, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        // The first and the last instruction update as usual; in between (see `straight_run`) each write-back
        // re-forms the warp alone at the next pc, in the context the first one chose: a LUT miss, a new
        // warp identity, the pool's count moving one pc on.
        self.update(sm, st, group, &Flow::Next, u)?;
        if n < 2 {
            return Ok(());
        }
        let (slot, key) = (st.slot, sm.key(st.slot));
        let Some(&r) = sm.lut.perfect.get(&(key, group.pc + 1)) else {
            return Err(MechError::EmptyContext("pool warp", group.ctx));
        };
        let Some(w) = sm.warp(r) else { return Err(MechError::EmptyContext("pool warp", r.ctx)) };
        let threads = u64::from(w.lanes.lanes().count_ones());
        let multi = w.lanes.parts().iter().any(|p| sm.home(slot, p.0).0 != slot);
        for q in group.pc + 1..group.pc + n - 1 {
            sm.sub_count(q, threads);
            sm.lut.invalidate(key, q, r);
            sm.add_count(q + 1, threads);
            sm.lut.insert(key, q + 1, r);
            sm.next_uid += 1;
            self.choose_drain(sm);
            u.max(DwfCounter::MaxDistinctPcs, sm.counts.len() as u64);
        }
        let middle = u64::from(n - 2);
        u.count(DwfCounter::LutLookups, middle);
        u.count(DwfCounter::LutMisses, middle);
        if multi {
            u.count(DwfCounter::MultiCtaWarps, middle);
        }
        let pool = &mut sm.pools[r.slot as usize];
        pool.move_to(r.ctx, group.pc + n - 1);
        if let Some(w) = pool.warps[r.ctx as usize].as_mut() {
            w.uid = sm.next_uid - 1;
        }
        let last = Group { ctx: r.ctx, pc: group.pc + n - 1, ..group.clone() };
        self.update(sm, st, &last, &Flow::Next, u)
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
    fn pc_counts_keep_an_entry_until_a_subtraction_empties_it() {
        let mut c = PcCounts::new(4);
        c.add(7, 3);
        c.add(2, 0);
        assert_eq!((c.len(), c.get(2), c.contains(2)), (2, 0, true), "an entry at a count of 0");
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![(2, 0), (7, 3)], "in pc order");
        c.sub(7, 1);
        assert_eq!(c.get(7), 2);
        c.sub(7, 5);
        assert!(!c.contains(7), "saturates at 0 and goes");
        c.sub(9, 1);
        c.sub(2, 0);
        assert_eq!(c.len(), 0, "a subtraction leaving 0 removes even a zero entry");
    }

    #[test]
    fn a_pool_allocates_its_lowest_free_context() {
        let warp = |pc| PoolWarp { pc, lanes: LaneMap::default(), uid: 0, barrier: false, awaiting: None, passed: 0 };
        let mut p = Pool::default();
        for k in 0..4 {
            assert_eq!(p.alloc(), k);
            p.put(k, warp(7));
        }
        assert!(p.take(2).is_some() && p.take(1).is_some());
        assert!(p.take(1).is_none(), "already free");
        assert_eq!(p.alloc(), 1);
        p.put(1, warp(9));
        assert_eq!(p.alloc(), 2);
        p.put(2, warp(7));
        assert_eq!(p.alloc(), 4, "none free: a new one at the end");
        // The index follows: contexts 0, 2 and 3 at pc 7, 1 at pc 9.
        assert_eq!((p.at.as_slice(), p.warps_at[7], p.warps_at[9]), (&[7, 9][..], 3, 1));
        assert_eq!(p.at_pc(7).collect::<Vec<_>>(), [0, 2, 3]);
        p.move_to(1, 7);
        assert_eq!((p.at.as_slice(), p.warps_at[7], p.warps_at[9]), (&[7][..], 4, 0));
        assert!(p.take(0).is_some() && !p.holds_pc(9) && p.holds_pc(7));
        assert_eq!(p.at_pc(7).collect::<Vec<_>>(), [1, 2, 3]);
    }

    #[test]
    fn priorities_order_classes_first() {
        assert!(pack(0, 1 << 40, 9) < pack(1, 0, 0));
        assert!(pack(1, 5, 9) < pack(2, 0, 0));
        assert!(pack(2, 3, 100) < pack(2, 4, 0));
        assert!(pack(2, 3, 1) < pack(2, 3, 2));
    }
}
