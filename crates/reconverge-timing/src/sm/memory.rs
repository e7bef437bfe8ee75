//! The memory side of an SM: coalescing, the L1 with its MSHRs, shared-memory banks, constant accesses,
//! outstanding loads and atomics, and the requests and responses exchanged with the L2 at epoch ends.

use crate::config::GpuConfig;
use crate::memsys::{coalesce, conflict_degree, Cache, LineRequest, Mshr, MshrResult, ReqKind};
use crate::stats::MemoryCounters;
use reconverge_program::program::Space;
use reconverge_program::LaneMask;
use reconverge_sim::access::{AccessKind, AccessLog};
use smallvec::SmallVec;
use std::collections::{BinaryHeap, VecDeque};

/// An L2 request from an SM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct L2Request {
    /// Cycle it leaves the SM.
    pub cycle: u64,
    /// Sequence within the SM.
    pub seq: u64,
    /// L2 line number.
    pub line: u64,
    /// Sector mask.
    pub sectors: u32,
    /// Read, write or atomic.
    pub kind: ReqKind,
    /// What the response completes: an L1 fill of a line, or one line of an atomic; `None` for writes.
    pub token: Option<u64>,
}

/// A response token that completes one line of an atomic (the rest of the bits: the load tracker).
const TOKEN_ATOMIC: u64 = 1 << 63;
/// A response to an instruction fetch: the token holds the line's byte address.
const TOKEN_INST: u64 = 1 << 62;
/// A response to a read-only cache's miss: the token holds the cache's line number, and bit 60 which cache
/// ([`ReadOnly`]).
const TOKEN_READ_ONLY: u64 = 1 << 61;
const TOKEN_TEXTURE: u64 = 1 << 60;
/// Where the constant bank and the parameter buffer live in the address space the L2 sees.
const CONST_BASE: u64 = 1 << 58;
const PARAM_BASE: u64 = 3 << 57;

/// The SM's read-only caches in front of the L2.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ReadOnly {
    /// The constant cache (`.const` and `.param` loads).
    Constant = 0,
    /// The texture cache (`tex`, `tld4`).
    Texture = 1,
}

/// A read-only cache: lines that hit are ready after its latency; a missing line is requested from the L2
/// once, and the loads waiting on it complete when it arrives.
struct ReadOnlyCache {
    cache: Cache,
    line_bytes: u64,
    /// Lines requested and the loads waiting on each.
    pending: Vec<(u64, SmallVec<[usize; 4]>)>,
}

impl ReadOnlyCache {
    /// The cache of `geometry`, or none when `size` is 0.
    fn new(
        geometry: crate::memsys::CacheGeometry,
        size: u64,
    ) -> Result<Option<ReadOnlyCache>, crate::error::StructureError> {
        if size == 0 {
            return Ok(None);
        }
        let line_bytes = u64::from(geometry.line_bytes.max(1));
        Ok(Some(ReadOnlyCache { cache: Cache::new(geometry)?, line_bytes, pending: Vec::new() }))
    }

    /// Load `id` waits for `line`; whether the line must be requested (no load waits for it yet).
    fn wait(&mut self, line: u64, id: usize) -> bool {
        match self.pending.iter_mut().find(|p| p.0 == line) {
            Some(p) => {
                p.1.push(id);
                false
            }
            None => {
                self.pending.push((line, smallvec::smallvec![id]));
                true
            }
        }
    }

    /// `line` arrived at `cycle`: fills it and returns the loads that waited for it.
    fn arrived(&mut self, line: u64, cycle: u64) -> SmallVec<[usize; 4]> {
        self.cache.fill(line, cycle);
        match self.pending.iter().position(|p| p.0 == line) {
            Some(i) => self.pending.swap_remove(i).1,
            None => SmallVec::new(),
        }
    }
}

/// A load or atomic whose lines are outstanding.
#[derive(Clone, Debug)]
pub(crate) struct LoadTrack {
    /// The CTA slot of the issuing group.
    pub cta: usize,
    /// The threads that executed it: (static warp, lanes).
    pub parts: SmallVec<[(u32, LaneMask); 2]>,
    /// Lines still outstanding.
    pub remaining: u32,
    /// When the data is ready at the earliest (hits, the latest response).
    pub ready: u64,
    /// Destination registers.
    pub regs: SmallVec<[u32; 4]>,
    /// The generation of the CTA that issued it (the slot may hold a newer CTA when it completes).
    pub generation: u64,
}

/// How an instruction's memory access is timed.
pub(crate) struct AccessTiming {
    /// Result latency when nothing is outstanding.
    pub latency: u64,
    /// Cycles the load/store unit stays busy.
    pub occupancy: u64,
    /// The result waits for a response (a miss or an atomic): the tracker finishing it.
    pub pending: Option<usize>,
    /// For a load that missed, when the issuer asked ([`Issuer::lane_misses`]): the lanes whose bytes lie
    /// in a line that missed in the L1 (0 otherwise).
    pub missed: LaneMask,
}

/// Who issued an access (for load tracking and local-memory interleaving).
pub(crate) struct Issuer<'p> {
    /// CTA slot.
    pub cta: usize,
    /// The group's threads.
    pub parts: &'p [(u32, LaneMask)],
    /// Destination registers of the instruction.
    pub regs: &'p [u32],
    /// Whether to work out which lanes of a load missed ([`AccessTiming::missed`]).
    pub lane_misses: bool,
}

/// The memory side of one SM.
pub(crate) struct MemorySide {
    l1: Cache,
    mshr: Mshr,
    loads: Vec<Option<LoadTrack>>,
    free_loads: Vec<usize>,
    miss_queue: VecDeque<(u64, u32, u64)>,
    /// Requests for the L2 made this epoch.
    pub outbox: Vec<L2Request>,
    inbox: BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    req_seq: u64,
    /// Memory counters.
    pub counters: MemoryCounters,
    accesses: Vec<(u64, u32)>,
    /// The lane of each of `accesses`.
    access_lanes: Vec<usize>,
    /// The lines of the last load that missed in the L1.
    missed_lines: Vec<u64>,
    lines: Vec<LineRequest>,
    waiters: Vec<u64>,
    /// The L1 line size (requests to the L2 name lines in these units).
    line_bytes: u64,
    /// The constant cache (`constant_cache.size > 0`) and the texture cache (`texture_cache.size > 0`),
    /// indexed by [`ReadOnly`].
    read_only: [Option<ReadOnlyCache>; 2],
    /// Instruction lines that arrived: (cycle, byte address), for the front end.
    pub inst_fills: Vec<(u64, u64)>,
}

impl MemorySide {
    /// The memory side of an SM of `gpu`.
    pub(super) fn new(gpu: &GpuConfig) -> Result<MemorySide, crate::error::StructureError> {
        Ok(MemorySide {
            l1: Cache::new(gpu.l1_geometry())?,
            mshr: Mshr::new(gpu.l1.mshrs as usize, gpu.l1.mshr_merge as usize)?,
            loads: Vec::new(),
            free_loads: Vec::new(),
            miss_queue: VecDeque::new(),
            outbox: Vec::new(),
            inbox: BinaryHeap::new(),
            req_seq: 0,
            counters: MemoryCounters::default(),
            accesses: Vec::with_capacity(64),
            access_lanes: Vec::with_capacity(64),
            missed_lines: Vec::new(),
            lines: Vec::with_capacity(64),
            waiters: Vec::new(),
            line_bytes: u64::from(gpu.l1.line.max(1)),
            read_only: [
                ReadOnlyCache::new(gpu.const_geometry(), gpu.constant_cache.size)?,
                ReadOnlyCache::new(gpu.texture_geometry(), gpu.texture_cache.size)?,
            ],
            inst_fills: Vec::new(),
        })
    }

    /// Whether responses are still outstanding.
    pub(super) fn pending(&self) -> bool {
        !self.inbox.is_empty() || !self.miss_queue.is_empty()
    }

    /// Whether loads wait for a free MSHR (memory instructions then stall).
    pub(super) fn miss_queue_full(&self) -> bool {
        !self.miss_queue.is_empty()
    }

    /// The cycle of the next response, if any.
    pub(super) fn next_response(&self) -> Option<u64> {
        self.inbox.peek().map(|r| r.0 .0)
    }

    /// Records the generation of the CTA that issued load `id`.
    pub(super) fn tag_generation(&mut self, id: usize, generation: u64) {
        if let Some(Some(t)) = self.loads.get_mut(id) {
            t.generation = generation;
        }
    }

    /// Load `id` now finishes only the lanes `missed` of its threads (the others hit and were given their
    /// data at the hit latency).
    pub(super) fn restrict_load(&mut self, id: usize, missed: LaneMask) {
        if let Some(Some(t)) = self.loads.get_mut(id) {
            for p in &mut t.parts {
                p.1 &= missed;
            }
            t.parts.retain(|p| p.1 != 0);
        }
    }

    /// Queues an L2 response arriving at `cycle`.
    pub(super) fn deliver(&mut self, cycle: u64, token: u64) {
        self.inbox.push(std::cmp::Reverse((cycle, token)));
    }

    fn new_load(&mut self, who: &Issuer<'_>) -> usize {
        let t = LoadTrack {
            cta: who.cta,
            parts: who.parts.iter().copied().collect(),
            remaining: 0,
            ready: 0,
            regs: who.regs.iter().copied().collect(),
            generation: 0,
        };
        match self.free_loads.pop() {
            Some(i) => {
                self.loads[i] = Some(t);
                i
            }
            None => {
                self.loads.push(Some(t));
                self.loads.len() - 1
            }
        }
    }

    fn load_part_done(&mut self, id: usize, cycle: u64, done: &mut Vec<LoadTrack>) {
        let finished = match self.loads.get_mut(id).and_then(Option::as_mut) {
            Some(t) => {
                t.remaining = t.remaining.saturating_sub(1);
                t.ready = t.ready.max(cycle);
                t.remaining == 0
            }
            None => false,
        };
        if finished {
            if let Some(t) = self.loads.get_mut(id).and_then(Option::take) {
                self.free_loads.push(id);
                done.push(t);
            }
        }
    }

    /// Asks the L2 at `cycle` for the instruction line at byte address `addr` (its response goes to
    /// [`MemorySide::inst_fills`]).
    pub(super) fn send_inst(&mut self, cycle: u64, addr: u64) {
        self.send(cycle, addr / self.line_bytes, 0, ReqKind::Read, Some(TOKEN_INST | addr));
    }

    fn send(&mut self, cycle: u64, line: u64, sectors: u32, kind: ReqKind, token: Option<u64>) {
        self.req_seq += 1;
        self.outbox.push(L2Request { cycle, seq: self.req_seq, line, sectors, kind, token });
    }

    fn retry_misses(&mut self, now: u64, gpu: &GpuConfig) {
        while let Some(&(line, sectors, load)) = self.miss_queue.front() {
            match self.mshr.add(line, load) {
                MshrResult::Full => break,
                MshrResult::Merged => {
                    self.miss_queue.pop_front();
                }
                MshrResult::Allocated => {
                    self.miss_queue.pop_front();
                    let sectors = if gpu.l1.whole_line_fills { 0 } else { sectors };
                    self.send(now + gpu.l1.hit_latency, line, sectors, ReqKind::Read, Some(line));
                }
            }
        }
    }

    /// Takes the responses due at `now`: fills the L1, completes loads (appended to `done`), and retries
    /// misses that waited for an MSHR.
    pub(super) fn deliver_due(&mut self, now: u64, gpu: &GpuConfig, done: &mut Vec<LoadTrack>) {
        while let Some(&std::cmp::Reverse((cycle, token))) = self.inbox.peek() {
            if cycle > now {
                break;
            }
            self.inbox.pop();
            if token & TOKEN_ATOMIC != 0 {
                self.load_part_done((token & !TOKEN_ATOMIC) as usize, cycle, done);
            } else if token & TOKEN_INST != 0 {
                self.inst_fills.push((cycle, token & !TOKEN_INST));
            } else if token & TOKEN_READ_ONLY != 0 {
                let which = if token & TOKEN_TEXTURE != 0 { ReadOnly::Texture } else { ReadOnly::Constant };
                let line = token & !(TOKEN_READ_ONLY | TOKEN_TEXTURE);
                let ids = self.read_only[which as usize].as_mut().map(|c| c.arrived(line, cycle)).unwrap_or_default();
                for id in ids {
                    self.load_part_done(id, cycle, done);
                }
            } else {
                let line = token;
                if let Some((victim, dirty)) = self.l1.fill(line, cycle) {
                    if dirty {
                        self.send(cycle, victim, 0, ReqKind::Write, None);
                    }
                }
                let mut waiters = std::mem::take(&mut self.waiters);
                waiters.clear();
                self.mshr.complete(line, &mut waiters);
                for &wid in &waiters {
                    self.load_part_done(wid as usize, cycle, done);
                }
                self.waiters = waiters;
            }
        }
        self.retry_misses(now, gpu);
    }

    /// Times the memory access `a` of the instruction just issued at `now` by `who`.
    pub(super) fn access(&mut self, a: &AccessLog, who: &Issuer<'_>, now: u64, gpu: &GpuConfig) -> AccessTiming {
        if a.kind == AccessKind::Texture {
            if let Some(t) = self.texture(a, who, now, gpu) {
                return t;
            }
        }
        let lanes = || reconverge_program::lanes(a.mask);
        let mut latency = 0u64;
        let mut occupancy = gpu.interval.mem;
        // Which spaces the lanes reach: most accesses reach global memory alone, and gathering the lanes of
        // a space they do not reach would cost a copy of a whole warp's worth of slots each.
        let (mut any_shared, mut any_const) = (false, false);
        for l in lanes() {
            any_shared |= a.space[l] == Space::Shared;
            any_const |= matches!(a.space[l], Space::Const | Space::KernelParam);
        }
        // Shared memory: bank conflicts.
        if any_shared {
            let shared: SmallVec<[(u64, u32); 64]> =
                lanes().filter(|&l| a.space[l] == Space::Shared).map(|l| (a.addr[l], a.bytes)).collect();
            let d = conflict_degree(&shared, gpu.shared.banks, gpu.shared.bank_bytes).max(1) as u64;
            self.counters.shared_instructions += 1;
            self.counters.shared_wavefronts += d;
            latency = latency.max(gpu.latency.shared + d - 1);
            occupancy = occupancy.max(d * gpu.interval.mem);
        }
        // Constant and parameter memory: one access per distinct address.
        let mut pending_const = None;
        if any_const {
            let mut konst: SmallVec<[u64; 64]> = lanes()
                .filter(|&l| matches!(a.space[l], Space::Const | Space::KernelParam))
                .map(|l| a.addr[l])
                .collect();
            konst.sort_unstable();
            konst.dedup();
            let d = konst.len() as u64;
            latency = latency.max(gpu.latency.constant + d - 1);
            occupancy = occupancy.max(d * gpu.interval.mem);
            let param = lanes().any(|l| a.space[l] == Space::KernelParam);
            pending_const = self.const_misses(&konst, param, who, now);
        }
        // Global and local: through the L1.
        self.accesses.clear();
        self.access_lanes.clear();
        for l in lanes() {
            match a.space[l] {
                Space::Global => {
                    self.accesses.push((a.addr[l], a.bytes));
                    self.access_lanes.push(l);
                }
                Space::Local => {
                    // NVIDIA interleaves local memory so that one offset of a warp's lanes is contiguous.
                    let warp = who.parts.iter().find(|p| p.1 >> l & 1 == 1).map(|p| p.0).unwrap_or(0) as u64;
                    let off = a.addr[l];
                    let key = (1u64 << 62)
                        | ((who.cta as u64) << 48)
                        | (warp << 36)
                        | ((off & !3) * gpu.warp_size as u64 + (l as u64) * 4 + (off & 3));
                    self.accesses.push((key, a.bytes));
                    self.access_lanes.push(l);
                }
                _ => {}
            }
        }
        if self.accesses.is_empty() {
            return AccessTiming { latency: latency.max(1), occupancy, pending: pending_const, missed: 0 };
        }
        let mut lines = std::mem::take(&mut self.lines);
        coalesce(&self.accesses, gpu.l1.line, gpu.l1.sector, &mut lines);
        self.counters.global_instructions += 1;
        self.counters.transactions += lines.len() as u64;
        self.counters.sectors += lines.iter().map(|r| r.sectors.count_ones() as u64).sum::<u64>();
        occupancy = occupancy.max(lines.len() as u64 * gpu.interval.mem);
        let is_local = self.accesses.first().is_some_and(|x| x.0 >> 62 == 1);
        let pending = match a.kind {
            AccessKind::Load | AccessKind::Texture => self.load(&lines, who, now, gpu, &mut latency),
            AccessKind::Store => {
                self.counters.store_transactions += if self.l1.is_absent() { 0 } else { lines.len() as u64 };
                self.store(&lines, is_local, now, gpu);
                latency = latency.max(1);
                None
            }
            AccessKind::Atomic => Some(self.atomic(&lines, who, now, gpu)),
        };
        self.lines = lines;
        let missed = match a.kind {
            AccessKind::Load | AccessKind::Texture if pending.is_some() && who.lane_misses => self.missed_lanes(),
            _ => 0,
        };
        AccessTiming { latency: latency.max(1), occupancy, pending, missed }
    }

    /// The lanes of the last load whose bytes touch a line that missed.
    fn missed_lanes(&self) -> LaneMask {
        let line_of = |addr: u64| addr / self.line_bytes;
        let mut missed = 0;
        for (&(addr, bytes), &l) in self.accesses.iter().zip(&self.access_lanes) {
            let (first, last) = (line_of(addr), line_of(addr.saturating_add(u64::from(bytes.max(1)) - 1)));
            if self.missed_lines.iter().any(|&m| (first..=last).contains(&m)) {
                missed |= 1 << l;
            }
        }
        missed
    }

    /// Looks up the constant cache for the distinct constant or parameter addresses `addrs`; misses go to
    /// the L2. Returns the pending load when some line missed.
    fn const_misses(&mut self, addrs: &[u64], param: bool, who: &Issuer<'_>, now: u64) -> Option<usize> {
        let line_bytes = self.read_only[ReadOnly::Constant as usize].as_ref()?.line_bytes;
        let base = if param { PARAM_BASE } else { CONST_BASE };
        let mut lines: SmallVec<[u64; 8]> = addrs.iter().map(|&a| (base + a) / line_bytes).collect();
        lines.dedup();
        self.read_only_misses(ReadOnly::Constant, &lines, who, now).1
    }

    /// Looks up the read-only cache `which` for the distinct `lines` (in its line units); misses go to the
    /// L2. Returns the number of hits and the pending load when some line missed.
    fn read_only_misses(&mut self, which: ReadOnly, lines: &[u64], who: &Issuer<'_>, now: u64) -> (u64, Option<usize>) {
        let Some(c) = self.read_only[which as usize].as_mut() else { return (0, None) };
        let missing: SmallVec<[u64; 8]> = lines.iter().copied().filter(|&l| !c.cache.lookup(l, now)).collect();
        let hits = (lines.len() - missing.len()) as u64;
        if which == ReadOnly::Constant {
            self.counters.constant_accesses += lines.len() as u64;
            self.counters.constant_hits += hits;
        }
        if missing.is_empty() {
            return (hits, None);
        }
        let line_bytes = c.line_bytes;
        let id = self.new_load(who);
        for &l in &missing {
            let Some(c) = self.read_only[which as usize].as_mut() else { break };
            if c.wait(l, id) {
                let token = TOKEN_READ_ONLY | if which == ReadOnly::Texture { TOKEN_TEXTURE } else { 0 } | l;
                self.send(now + 1, l * line_bytes / self.line_bytes, 0, ReqKind::Read, Some(token));
            }
        }
        if let Some(Some(t)) = self.loads.get_mut(id) {
            t.remaining = missing.len() as u32;
            t.ready = now;
        }
        (hits, Some(id))
    }

    /// Times a texture fetch: the distinct lines of its texels through the texture cache (or, without one,
    /// each lane's first texel as a global load through the L1).
    fn texture(&mut self, a: &AccessLog, who: &Issuer<'_>, now: u64, gpu: &GpuConfig) -> Option<AccessTiming> {
        let line_bytes = self.read_only[ReadOnly::Texture as usize].as_ref()?.line_bytes;
        let mut lines: SmallVec<[u64; 64]> = a.texels.iter().map(|&t| t / line_bytes).collect();
        lines.sort_unstable();
        lines.dedup();
        let (hits, pending) = self.read_only_misses(ReadOnly::Texture, &lines, who, now);
        self.counters.texture_instructions += 1;
        self.counters.texture_accesses += lines.len() as u64;
        self.counters.texture_hits += hits;
        let occupancy = gpu.interval.mem.max(lines.len() as u64 * gpu.interval.mem);
        Some(AccessTiming { latency: gpu.texture_cache.hit_latency.max(1), occupancy, pending, missed: 0 })
    }

    fn load(
        &mut self,
        lines: &[LineRequest],
        who: &Issuer<'_>,
        now: u64,
        gpu: &GpuConfig,
        latency: &mut u64,
    ) -> Option<usize> {
        let ready = now + gpu.l1.hit_latency;
        let id = self.new_load(who);
        let mut remaining = 0;
        self.missed_lines.clear();
        let has_l1 = !self.l1.is_absent();
        for r in lines {
            self.counters.l1_accesses += u64::from(has_l1);
            if self.l1.lookup(r.line, now) {
                self.counters.l1_hits += 1;
                continue;
            }
            remaining += 1;
            if who.lane_misses {
                self.missed_lines.push(r.line);
            }
            match self.mshr.add(r.line, id as u64) {
                MshrResult::Merged => self.counters.l1_mshr_merges += 1,
                MshrResult::Allocated => {
                    let sectors = if gpu.l1.whole_line_fills { 0 } else { r.sectors };
                    self.send(now + gpu.l1.hit_latency, r.line, sectors, ReqKind::Read, Some(r.line))
                }
                MshrResult::Full => {
                    self.counters.l1_mshr_full += 1;
                    self.miss_queue.push_back((r.line, r.sectors, id as u64));
                }
            }
        }
        if remaining == 0 {
            self.loads[id] = None;
            self.free_loads.push(id);
            *latency = (*latency).max(ready - now);
            return None;
        }
        if let Some(Some(t)) = self.loads.get_mut(id) {
            t.remaining = remaining;
            t.ready = ready;
        }
        Some(id)
    }

    fn store(&mut self, lines: &[LineRequest], is_local: bool, now: u64, gpu: &GpuConfig) {
        for r in lines {
            if is_local && !self.l1.is_absent() {
                // Local memory is write-back cached in the L1.
                if !self.l1.lookup(r.line, now) {
                    if let Some((victim, true)) = self.l1.fill(r.line, now) {
                        self.send(now, victim, 0, ReqKind::Write, None);
                    }
                }
                self.l1.mark_dirty(r.line);
            } else {
                // Global stores (and every store without an L1) write through to the L2 and evict the L1 copy.
                self.l1.invalidate(r.line);
                self.send(now + gpu.l1.hit_latency, r.line, r.sectors, ReqKind::Write, None);
            }
        }
    }

    fn atomic(&mut self, lines: &[LineRequest], who: &Issuer<'_>, now: u64, gpu: &GpuConfig) -> usize {
        let id = self.new_load(who);
        for r in lines {
            self.l1.invalidate(r.line);
            self.send(now + gpu.l1.hit_latency, r.line, r.sectors, ReqKind::Atomic, Some(TOKEN_ATOMIC | id as u64));
        }
        if let Some(Some(t)) = self.loads.get_mut(id) {
            t.remaining = lines.len() as u32;
            t.ready = now;
        }
        id
    }
}
