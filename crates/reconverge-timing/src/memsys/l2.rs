//! The L2 cache shared by all SMs, and DRAM behind it: a sequential, deterministic timing model.
//!
//! Requests arrive one at a time, in the deterministic order the caller presents them (issue cycle, then SM,
//! then sequence); each returns the cycle its response is back at the SM. For a request of `n` sectors of line
//! `L` issued at cycle `c`:
//!
//! 1. **L2 pipe**: `t_pipe = pipe.serve(c, n)` — the L2's `sectors_per_cycle` bandwidth, FIFO.
//! 2. **Tag stage**: `t_tag = t_pipe + hit_latency`. The line's LRU position is updated if it is resident.
//! 3. **Sector check**: the L2 is *sectored* — each resident line keeps a mask of valid sectors. The request
//!    *hits* when all its sectors are valid, otherwise it *misses* (hit/miss counters are per request, for all
//!    kinds). A line present with some requested sectors missing is a **partial miss**: only the missing
//!    sectors are fetched.
//! 4. **Reads and atomics**: a miss fetches the missing sectors from DRAM, `t_dram = dram.serve(t_tag, bytes) +
//!    dram_latency` (`dram_bytes_per_cycle` bandwidth, FIFO, shared by reads and write-backs), and the response
//!    is at `t_dram`; a hit responds at `t_tag`. A missing line is allocated at once (at the request, not when
//!    the data returns) with the fetched sectors valid, its *ready* cycle set to `t_dram`; a later request to
//!    a line whose data is still in flight waits for it (`max(t_tag, ready)`) and counts as a hit — this is
//!    the L2's MSHR merging. Readiness is tracked per line, not per sector: a hit on a line with another
//!    sector in flight also waits for that sector (conservative, rare). An atomic adds `atomic_latency` (the
//!    read-modify-write at the L2) to that response and leaves the line dirty; atomics to one line are
//!    pipelined, not serialized.
//! 5. **Writes** (write-back, write-allocate, no fetch-on-write): the written sectors become valid and the line
//!    dirty; a write never reads DRAM (a write covers whole sectors, the coalescer's granularity). The
//!    response — the write being accepted — is at `t_tag`.
//! 6. **Evictions**: allocating a line evicts the LRU line of its set; a dirty victim costs a DRAM write of its
//!    valid sectors (all of them for a fully valid line, i.e. the line's bytes), issued at `t_tag` after the
//!    request's own fetch (reads have priority). Write-backs occupy DRAM bandwidth but delay no response
//!    directly.
//!
//! 7. **Banked DRAM** (`dram_banks` set): step 4's DRAM is [`Dram`] instead of one FIFO
//!    channel. Each missing sector (and each sector written back) becomes a [`DramRequest`] arriving at
//!    `t_tag` on the slice's channel, as GPGPU-Sim's sectored L2 sends them; [`L2Dram::submit`] returns a
//!    [`Pending`] response, and [`L2Dram::schedule_dram`] commits the queued requests no later arrival can
//!    overtake (FR-FCFS per channel: see [`dram`](super::dram)). [`L2Dram::resolve`] then gives a
//!    response's cycle — the end of its last sector's data plus `dram_latency`, or of the line's fetch it
//!    waits for — or `None` while that fetch is still queued. Until then the line's ready cycle is a marker
//!    naming its fetch.
//! 8. **No L2** (size 0, GPGPU-Sim 2.x's default `-gpgpu_cache:dl2 none`): the pipe and `hit_latency` stay
//!    (the interconnect and the memory controller's queue), every read misses to DRAM, and a write (or an
//!    atomic's write) goes to DRAM at `t_tag` as a DRAM write of its sectors.
//!
//! A request's sector mask is restricted to the line's sectors; an empty mask means the whole line. Stats count
//! DRAM traffic in sectors (`dram_reads`, `dram_writes`) and bytes (`dram_bytes`, both directions). All
//! arithmetic saturates; no input panics.

use super::bandwidth::Bandwidth;
#[cfg(test)]
use super::cache::SetIndex;
use super::cache::{Cache, CacheGeometry, Evicted};
use super::dram::{Dram, DramRequest, DramStats, DramTiming};
use crate::error::StructureError;

/// Configuration of the L2 and DRAM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct L2Config {
    /// The L2 cache (all slices together): size, line size, associativity.
    pub geometry: CacheGeometry,
    /// Sector size in bytes: a power of two dividing the line, at most 32 sectors a line.
    pub sector_bytes: u32,
    /// Cycles from leaving the L2 pipe to the response of a hit (tag + data + interconnect back to the SM).
    pub hit_latency: u64,
    /// L2 bandwidth in sectors per cycle, as a rational (num, den).
    pub sectors_per_cycle: (u64, u64),
    /// DRAM latency in cycles, added after the DRAM transfer.
    pub dram_latency: u64,
    /// DRAM bandwidth in bytes per cycle, as a rational (num, den): the one FIFO channel of the model
    /// without banks (unused when `dram_banks` is set).
    pub dram_bytes_per_cycle: (u64, u64),
    /// Banked DRAM (row buffers, timing constraints, FR-FCFS) instead of the one channel.
    pub dram_banks: Option<DramTiming>,
    /// Extra cycles of an atomic's read-modify-write at the L2.
    pub atomic_latency: u64,
    /// How lines spread over the L2's slices, each with its own pipe.
    pub slices: Slices,
}

/// How the L2 is split into slices (GPGPU-Sim's memory sub-partitions), each serving its share of the
/// `sectors_per_cycle` with a pipe of its own, so that requests crowding into few slices queue (partition
/// camping). One slice (the default) is one pipe for the whole L2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Slices {
    /// Memory channels.
    pub channels: u32,
    /// Slices per channel.
    pub per_channel: u32,
    /// Bytes of consecutive address space per channel before the next channel (GPGPU-Sim: 256).
    pub interleave: u64,
    /// Spread channels by a hash of the higher address bits (GPGPU-Sim's IPOLY indexing) instead of by
    /// the address modulo the channels.
    pub hashed: bool,
}

impl Slices {
    /// One slice.
    pub const ONE: Slices = Slices { channels: 1, per_channel: 1, interleave: 256, hashed: false };

    fn count(&self) -> usize {
        (self.channels.max(1) * self.per_channel.max(1)) as usize
    }

    /// The slice of byte address `addr`: channel `q mod channels` of `q = addr / interleave` (or a hash of
    /// `q`), and within it slice `(q / channels) mod per_channel`.
    pub fn of(&self, addr: u64) -> usize {
        let (c, p) = (u64::from(self.channels.max(1)), u64::from(self.per_channel.max(1)));
        let q = addr / self.interleave.max(1);
        let n = c * p;
        let i = if self.hashed {
            // XOR-fold of the address bits above the interleave (a stand-in for IPOLY: every power-of-two
            // stride spreads over all slices).
            let mut h = q;
            let mut x = 0u64;
            while h != 0 {
                x ^= h;
                h /= n.next_power_of_two().max(2);
            }
            x % n
        } else {
            (q % c) * p + (q / c) % p
        };
        i as usize
    }
}

/// Checks that `sector`-byte sectors divide a `line`-byte line (a power of two) into at most 32 sectors, as
/// a cache's 32-bit sector masks hold them: `sector` a power of two no larger than the line. Returns the
/// sectors of a line.
pub fn check_sectors(line: u32, sector: u32) -> Result<u32, StructureError> {
    if sector == 0 || !sector.is_power_of_two() || sector > line || !line.is_multiple_of(sector) {
        return Err(StructureError::SectorSize { sector, line });
    }
    let sectors = line / sector;
    if sectors > 32 {
        return Err(StructureError::TooManySectors { line, sector, sectors });
    }
    Ok(sectors)
}

/// Kind of an L2 request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReqKind {
    /// A load (or the fill of an SM-side miss).
    Read,
    /// A store (write-back, write-allocate).
    Write,
    /// An atomic read-modify-write, performed at the L2.
    Atomic,
}

/// Counters of an [`L2Dram`].
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub struct L2Stats {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Atomic requests.
    pub atomics: u64,
    /// Requests of any kind whose sectors were all valid (including lines whose data was still in flight).
    pub hits: u64,
    /// Requests of any kind with at least one sector not valid (including partial misses).
    pub misses: u64,
    /// Hits that found the line's data still in flight from DRAM and waited for it (a subset of `hits`).
    pub pending_hits: u64,
    /// Sectors read (reads and atomics) that were valid.
    pub read_hit_sectors: u64,
    /// Sectors read that were not valid (fetched from DRAM).
    pub read_miss_sectors: u64,
    /// Sectors written (writes and atomics) to a resident line.
    pub write_hit_sectors: u64,
    /// Sectors written to a line the write allocated (or, without an L2, sent on to DRAM).
    pub write_miss_sectors: u64,
    /// Interconnect flits of the requests and their responses ([`flits`]).
    pub flits: u64,
    /// DRAM read transactions = sectors fetched.
    pub dram_reads: u64,
    /// DRAM write transactions = sectors written back.
    pub dram_writes: u64,
    /// DRAM bytes moved, reads and writes.
    pub dram_bytes: u64,
}

/// The L2 shared by all SMs plus DRAM. Requests MUST be presented in a deterministic order (the caller sorts
/// them by issue cycle, then SM, then sequence); the model is sequential.
#[derive(Clone, Debug)]
pub struct L2Dram {
    config: L2Config,
    cache: Cache,
    /// One pipe per slice.
    pipes: Vec<Bandwidth>,
    dram: Bandwidth,
    /// Banked DRAM, when configured.
    banked: Option<Dram>,
    /// Banked DRAM: the requests not yet forgotten, by identifier (`first_id` is the front's).
    fetches: std::collections::VecDeque<Fetch>,
    first_id: u64,
    /// Identifiers of requests done whose line readiness waits for an earlier fetch.
    unready: Vec<u64>,
    /// Scratch for the DRAM's completions.
    completions: Vec<(u64, u64)>,
    /// Sectors of a line.
    full_mask: u32,
    stats: L2Stats,
}

fn bump(counter: &mut u64, by: u64) {
    *counter = counter.saturating_add(by);
}

/// Bytes of an interconnect flit (GPGPU-Sim's `-icnt_flit_size` in the GTX480 and QV100 configurations).
pub const FLIT_BYTES: u64 = 40;
/// Bytes of a packet's header (GPGPU-Sim's `READ_PACKET_SIZE`/`WRITE_PACKET_SIZE` control part).
pub const HEADER_BYTES: u64 = 8;

/// Interconnect flits of one request of `kind` moving `bytes` of data, both ways: a read sends a header and
/// receives the data, a write sends the data and receives a header, an atomic sends and receives data.
pub fn flits(kind: ReqKind, bytes: u64) -> u64 {
    let header = HEADER_BYTES.div_ceil(FLIT_BYTES);
    let data = (HEADER_BYTES + bytes).div_ceil(FLIT_BYTES);
    match kind {
        ReqKind::Read | ReqKind::Write => header + data,
        ReqKind::Atomic => 2 * data,
    }
}

impl L2Dram {
    /// Checks, without building anything, that [`L2Dram::new`] accepts `c`: a valid cache geometry (see
    /// [`CacheGeometry::check`]), a sector size that is a power of two dividing the line into at most 32
    /// sectors, and bandwidths with nonzero numerators and denominators. Returns the L2 pipe and the DRAM
    /// channel.
    pub fn check(c: &L2Config) -> Result<(Bandwidth, Bandwidth), StructureError> {
        c.geometry.check().map_err(|e| e.in_part("L2"))?;
        check_sectors(c.geometry.line_bytes, c.sector_bytes).map_err(|e| e.in_part("L2"))?;
        let n = c.slices.count() as u64;
        let pipe = Bandwidth::new(c.sectors_per_cycle.0, c.sectors_per_cycle.1.saturating_mul(n))
            .map_err(|e| e.in_part("L2 pipe"))?;
        let dram = Bandwidth::new(c.dram_bytes_per_cycle.0, c.dram_bytes_per_cycle.1).map_err(|e| e.in_part("DRAM"))?;
        if let Some(t) = &c.dram_banks {
            Dram::check(t).map_err(|e| e.in_part("DRAM"))?;
        }
        Ok((pipe, dram))
    }

    /// Builds an empty L2. Errors unless [`L2Dram::check`] passes.
    pub fn new(c: L2Config) -> Result<L2Dram, StructureError> {
        let (pipe, dram) = L2Dram::check(&c)?;
        let cache = Cache::new(c.geometry).map_err(|e| e.in_part("L2"))?;
        let sectors = c.geometry.line_bytes / c.sector_bytes;
        let full_mask = if sectors == 32 { u32::MAX } else { (1u32 << sectors) - 1 };
        let pipes = vec![pipe; c.slices.count()];
        let banked = match c.dram_banks {
            Some(t) => Some(Dram::new(t).map_err(|e| e.in_part("DRAM"))?),
            None => None,
        };
        Ok(L2Dram {
            config: c,
            cache,
            pipes,
            dram,
            banked,
            fetches: std::collections::VecDeque::new(),
            first_id: 0,
            unready: Vec::new(),
            completions: Vec::new(),
            full_mask,
            stats: L2Stats::default(),
        })
    }

    /// One transaction from an SM issued at `cycle` (line number in L2 line units, sector mask). Returns the
    /// cycle the response is back at the SM (for writes: when the write is accepted). Model: the L2 pipe
    /// (sectors_per_cycle bandwidth) then hit latency; a read miss fetches the missing sectors from DRAM
    /// (dram bandwidth in bytes, plus dram_latency) and allocates the line (write-back, write-allocate: writes
    /// mark dirty, evicting a dirty line costs a DRAM write of the line's bytes); atomics are performed at
    /// L2: read-modify-write latency atomic_latency on top of the hit/miss path.
    ///
    /// The details are in the [module documentation](self). With banked DRAM this schedules everything
    /// queued at once (no later request can overtake); the timing model uses [`L2Dram::submit`].
    pub fn request(&mut self, cycle: u64, line: u64, sectors: u32, kind: ReqKind) -> u64 {
        let p = self.submit(cycle, line, sectors, kind);
        self.schedule_dram(None);
        self.resolve(p).unwrap_or(cycle)
    }

    /// Like [`L2Dram::request`], but a response that needs banked DRAM is known only once DRAM has
    /// scheduled its fetch ([`L2Dram::schedule_dram`]): pass the returned [`Pending`] to
    /// [`L2Dram::resolve`] until it answers.
    pub fn submit(&mut self, cycle: u64, line: u64, sectors: u32, kind: ReqKind) -> Pending {
        let mut mask = sectors & self.full_mask;
        if mask == 0 {
            mask = self.full_mask;
        }
        match kind {
            ReqKind::Read => bump(&mut self.stats.reads, 1),
            ReqKind::Write => bump(&mut self.stats.writes, 1),
            ReqKind::Atomic => bump(&mut self.stats.atomics, 1),
        }
        let line_bytes = u64::from(self.cache.geometry().line_bytes);
        let slice = self.config.slices.of(line.saturating_mul(line_bytes));
        let t_pipe = self.pipes[slice].serve(cycle, u64::from(mask.count_ones()));
        let t_tag = t_pipe.saturating_add(self.config.hit_latency);

        let state = self.cache.probe(line);
        if state.is_some() {
            self.cache.lookup(line, cycle);
        }
        let (valid, ready) = state.map_or((0, 0), |s| (s.sectors & self.full_mask, s.ready));
        let wait = Wait::of(ready);
        let missing = mask & !valid;
        let sector_bytes = u64::from(self.config.sector_bytes);
        bump(&mut self.stats.flits, flits(kind, u64::from(mask.count_ones()) * sector_bytes));
        if kind != ReqKind::Write {
            bump(&mut self.stats.read_hit_sectors, u64::from((mask & valid).count_ones()));
            bump(&mut self.stats.read_miss_sectors, u64::from(missing.count_ones()));
        }
        if kind != ReqKind::Read {
            let into =
                if state.is_some() { &mut self.stats.write_hit_sectors } else { &mut self.stats.write_miss_sectors };
            bump(into, u64::from(mask.count_ones()));
        }
        if missing == 0 {
            bump(&mut self.stats.hits, 1);
            if ready > t_tag && kind != ReqKind::Write {
                bump(&mut self.stats.pending_hits, 1);
            }
        } else {
            bump(&mut self.stats.misses, 1);
        }

        if kind == ReqKind::Write {
            if self.cache.is_absent() {
                self.write_through(line, mask, t_tag, slice);
            } else if state.is_some() {
                self.cache.add_sectors(line, mask, t_tag);
            } else {
                let evicted = self.cache.fill_sectors(line, mask, t_tag);
                self.write_back(evicted, t_tag);
            }
            self.cache.mark_dirty(line);
            return Pending { at: t_tag, wait: None, add: 0 };
        }

        let mut pending = match wait {
            Wait::Fetch(i) => Pending { at: t_tag, wait: Some(i), add: 0 },
            Wait::Time(r) => Pending { at: t_tag.max(r), wait: None, add: 0 },
        };
        if missing != 0 && kind != ReqKind::Write {
            // The fetch below replaces the wait.
            pending.wait = None;
        }
        if missing != 0 {
            let n = u64::from(missing.count_ones());
            let bytes = n.saturating_mul(u64::from(self.config.sector_bytes));
            bump(&mut self.stats.dram_reads, n);
            bump(&mut self.stats.dram_bytes, bytes);
            let ready = if self.banked.is_some() {
                // One DRAM request per sector, as GPGPU-Sim's sectored L2 sends them; the line is ready when
                // the last of them (and anything it already waited for) is.
                let (mut after, mut last) = (wait, None);
                for sector in (0..32u32).filter(|b| missing >> b & 1 == 1) {
                    let addr = line.saturating_mul(line_bytes).saturating_add(u64::from(sector) * sector_bytes);
                    let i = self.push_dram(t_tag, addr, sector_bytes, false, slice, Some((line, after)));
                    (after, last) = (Wait::Fetch(i), Some(i));
                }
                pending = Pending { at: t_tag, wait: last, add: 0 };
                last.map_or(t_tag, |i| Wait::MARK | i)
            } else {
                let t_dram = self.dram.serve(t_tag, bytes).saturating_add(self.config.dram_latency);
                pending.at = pending.at.max(t_dram);
                t_dram
            };
            if state.is_some() {
                self.cache.add_sectors(line, missing, ready);
            } else {
                let evicted = self.cache.fill_sectors(line, missing, ready);
                self.write_back(evicted, t_tag);
            }
        }
        if kind == ReqKind::Atomic {
            if self.cache.is_absent() {
                // Banked DRAM: the write-through leaves at the tag stage (its data is not known earlier).
                self.write_through(line, mask, pending.at, slice);
            }
            self.cache.mark_dirty(line);
            pending.add = self.config.atomic_latency;
        }
        if let Some(f) = pending.wait.and_then(|i| self.fetch_mut(i)) {
            f.holders += 1;
        }
        pending
    }

    fn fetch_mut(&mut self, id: u64) -> Option<&mut Fetch> {
        let i = usize::try_from(id.checked_sub(self.first_id)?).ok()?;
        self.fetches.get_mut(i)
    }

    fn fetch(&self, id: u64) -> Option<&Fetch> {
        let i = usize::try_from(id.checked_sub(self.first_id)?).ok()?;
        self.fetches.get(i)
    }

    /// Queues a request in the banked DRAM; returns its identifier.
    fn push_dram(
        &mut self,
        at: u64,
        addr: u64,
        bytes: u64,
        write: bool,
        slice: usize,
        fills: Option<(u64, Wait)>,
    ) -> u64 {
        let channel = (slice / self.config.slices.per_channel.max(1) as usize) as u32;
        let bytes = u32::try_from(bytes).unwrap_or(u32::MAX);
        let id = self.first_id + self.fetches.len() as u64;
        if let Some((_, Wait::Fetch(j))) = fills {
            if let Some(f) = self.fetch_mut(j) {
                f.holders += 1;
            }
        }
        let (line, after) = match fills {
            Some((line, after)) => (Some(line), after),
            None => (None, Wait::Time(0)),
        };
        self.fetches.push_back(Fetch { line, after, write, done: None, ready: None, holders: 0 });
        if let Some(d) = self.banked.as_mut() {
            d.enqueue(id, &DramRequest { arrival: at, channel, addr, bytes, write });
        }
        id
    }

    /// Commits the banked DRAM's queued requests whose first column command comes before core cycle
    /// `horizon` (all with `None`; nothing to do without banks), then settles the lines whose fetches are
    /// done: afterwards [`L2Dram::resolve`] answers their [`Pending`] responses.
    pub fn schedule_dram(&mut self, horizon: Option<u64>) {
        let Some(dram) = self.banked.as_mut() else { return };
        let mut done = std::mem::take(&mut self.completions);
        done.clear();
        dram.schedule(horizon, &mut done);
        let latency = self.config.dram_latency;
        for &(id, t) in &done {
            if let Some(f) = self.fetch_mut(id) {
                f.done = Some(if f.write { t } else { t.saturating_add(latency) });
            }
            self.unready.push(id);
        }
        self.completions = done;
        // A line is ready when its fetch and every earlier fetch of the line are: earlier ones have smaller
        // identifiers, so one pass in identifier order settles every chain that can be.
        self.unready.sort_unstable();
        let mut still = Vec::new();
        for id in std::mem::take(&mut self.unready) {
            let Some(f) = self.fetch(id) else { continue };
            let (Some(done), after) = (f.done, f.after) else { continue };
            let before = match after {
                Wait::Time(t) => Some(t),
                Wait::Fetch(j) => self.fetch(j).and_then(|g| g.ready),
            };
            let Some(before) = before else {
                still.push(id);
                continue;
            };
            let ready = done.max(before);
            let line = f.line;
            if let Some(f) = self.fetch_mut(id) {
                f.ready = Some(ready);
            }
            if let Wait::Fetch(j) = after {
                if let Some(g) = self.fetch_mut(j) {
                    g.holders = g.holders.saturating_sub(1);
                }
            }
            if let Some(line) = line {
                self.cache.settle(line, Wait::MARK | id, ready);
            }
        }
        self.unready = still;
        while self.fetches.front().is_some_and(|f| f.ready.is_some() && f.holders == 0) {
            self.fetches.pop_front();
            self.first_id += 1;
        }
    }

    /// The response cycle of a [`Pending`] response, or `None` while the DRAM fetch it waits for is still
    /// queued ([`L2Dram::schedule_dram`]). A response is answered once.
    pub fn resolve(&mut self, p: Pending) -> Option<u64> {
        let dram = match p.wait {
            None => 0,
            Some(i) => {
                let f = self.fetch_mut(i)?;
                let ready = f.ready?;
                f.holders = f.holders.saturating_sub(1);
                ready
            }
        };
        Some(p.at.max(dram).saturating_add(p.add))
    }

    /// Places the bytes `[addr, addr + len)` in the L2 before the launch, as the host's copy to the device
    /// leaves them in GPGPU-Sim (`-gpgpu_perf_sim_memcpy`): their sectors valid and clean, most recently
    /// used last (a buffer larger than the L2 leaves its end). `line_bytes` is the size of the line numbers
    /// the SMs use; nothing is counted.
    pub fn preload(&mut self, addr: u64, len: u64) {
        let line_bytes = u64::from(self.cache.geometry().line_bytes);
        let sector = u64::from(self.config.sector_bytes);
        let mut a = addr - addr % sector;
        let end = addr.saturating_add(len);
        while a < end {
            let line = a / line_bytes;
            let mut mask = 0u32;
            while a < end && a / line_bytes == line {
                mask |= 1 << ((a % line_bytes) / sector);
                a += sector;
            }
            if self.cache.probe(line).is_some() {
                self.cache.add_sectors(line, mask, 0);
                self.cache.lookup(line, 0);
            } else {
                let _ = self.cache.fill_sectors(line, mask, 0);
            }
        }
    }

    /// Writes an evicted dirty line's valid sectors back to DRAM at `cycle`.
    fn write_back(&mut self, evicted: Option<Evicted>, cycle: u64) {
        let Some(ev) = evicted.filter(|e| e.dirty) else {
            return;
        };
        let addr = ev.line.saturating_mul(u64::from(self.cache.geometry().line_bytes));
        self.write_through(ev.line, ev.sectors, cycle, self.config.slices.of(addr));
    }

    /// Writes the sectors `mask` of `line` (in L2 slice `slice`) to DRAM at `cycle` (bandwidth and
    /// counters only).
    fn write_through(&mut self, line: u64, mask: u32, cycle: u64, slice: usize) {
        let mask = mask & self.full_mask;
        let n = u64::from(mask.count_ones());
        let bytes = n.saturating_mul(u64::from(self.config.sector_bytes));
        if self.banked.is_some() {
            let sector_bytes = u64::from(self.config.sector_bytes);
            let base = line.saturating_mul(u64::from(self.cache.geometry().line_bytes));
            for sector in (0..32u32).filter(|b| mask >> b & 1 == 1) {
                self.push_dram(
                    cycle,
                    base.saturating_add(u64::from(sector) * sector_bytes),
                    sector_bytes,
                    true,
                    slice,
                    None,
                );
            }
        } else {
            self.dram.serve(cycle, bytes);
        }
        bump(&mut self.stats.dram_writes, n);
        bump(&mut self.stats.dram_bytes, bytes);
    }

    /// The counters so far.
    pub fn stats(&self) -> &L2Stats {
        &self.stats
    }

    /// The configuration the model was built with.
    pub fn config(&self) -> &L2Config {
        &self.config
    }

    /// The L2 tag array (for inspection).
    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// Cycles the busiest L2 slice's pipe was busy so far (rounded up).
    pub fn pipe_busy_cycles(&self) -> u64 {
        self.pipes.iter().map(Bandwidth::busy_cycles).max().unwrap_or(0)
    }

    /// Cycles DRAM was busy transferring so far (rounded up): the one channel's, or (banked) the data buses'
    /// command cycles over all channels.
    pub fn dram_busy_cycles(&self) -> u64 {
        match &self.banked {
            Some(d) => d.stats().data_bus_cycles,
            None => self.dram.busy_cycles(),
        }
    }

    /// The banked DRAM's counters (`None` without banks).
    pub fn dram_stats(&self) -> Option<&DramStats> {
        self.banked.as_ref().map(Dram::stats)
    }

    /// DRAM command cycles × channels of `core_cycles` core cycles (the denominator of the data buses'
    /// utilisation); 0 without banks.
    pub fn dram_channel_cycles(&self, core_cycles: u64) -> u64 {
        self.banked.as_ref().map_or(0, |d| d.dram_cycles(core_cycles).saturating_mul(u64::from(d.timing().channels)))
    }
}

/// A response of [`L2Dram::submit`]: at `max(at, ready cycle of DRAM request wait) + add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    at: u64,
    wait: Option<u64>,
    add: u64,
}

/// A banked-DRAM request the L2 still tracks.
#[derive(Clone, Copy, Debug)]
struct Fetch {
    /// The line a read fills (`None` for writes).
    line: Option<u64>,
    /// What the line waited for before this fetch.
    after: Wait,
    write: bool,
    /// Its data's end plus `dram_latency` (reads), once scheduled.
    done: Option<u64>,
    /// When its line is ready: `done` and `after`.
    ready: Option<u64>,
    /// Responses and later fetches that still need `ready`.
    holders: u32,
}

/// What a line's data waits for: a cycle, or a banked-DRAM request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Time(u64),
    Fetch(u64),
}

impl Wait {
    /// The ready cycles of lines whose fetch is queued or unsettled: this bit plus the request's identifier.
    const MARK: u64 = 1 << 63;

    fn of(ready: u64) -> Wait {
        if ready & Wait::MARK != 0 {
            Wait::Fetch(ready & !Wait::MARK)
        } else {
            Wait::Time(ready)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: u32 = 0b1111;

    /// 128-byte lines of four 32-byte sectors; hit 10, L2 pipe 4 sectors/cycle, DRAM 32 B/cycle + 100 cycles,
    /// atomics +20.
    fn config(size_bytes: u64, ways: u32) -> L2Config {
        L2Config {
            geometry: CacheGeometry { size_bytes, line_bytes: 128, ways, index: SetIndex::Linear },
            sector_bytes: 32,
            hit_latency: 10,
            sectors_per_cycle: (4, 1),
            dram_latency: 100,
            dram_bytes_per_cycle: (32, 1),
            dram_banks: None,
            atomic_latency: 20,
            slices: Slices::ONE,
        }
    }

    fn l2(size_bytes: u64, ways: u32) -> L2Dram {
        match L2Dram::new(config(size_bytes, ways)) {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    /// The L2 of [`config`] with banked DRAM at the core's clock (GTX 480 timing, one channel).
    fn banked() -> L2Dram {
        let mut c = config(64 << 10, 8);
        c.dram_banks = Some(super::super::dram::equal_clock_gtx480());
        match L2Dram::new(c) {
            Ok(l) => l,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn banked_dram_answers_once_the_fetch_is_scheduled_and_a_second_reader_waits_for_it() {
        let mut l = banked();
        // Two sectors miss: pipe 1, tag 11; two DRAM requests arrive at 11.
        let first = l.submit(0, 5, 0b0011, ReqKind::Read);
        // The same line's sector 0 again while its fetch is queued: a pending hit on the fetch.
        let second = l.submit(1, 5, 0b0001, ReqKind::Read);
        assert_eq!((l.stats().pending_hits, l.stats().dram_reads), (1, 2));
        // Horizon 20: the first column command (activate at 11, read at 23) is not before it.
        l.schedule_dram(Some(20));
        assert_eq!(l.resolve(first), None);
        l.schedule_dram(None);
        // Reads at 23 and 26 (ccdl 3 within the bank group), data of the second ends at 26 + 12 + 2 = 40;
        // + dram_latency 100.
        assert_eq!(l.resolve(first), Some(140));
        assert_eq!(l.resolve(second), Some(140), "the pending hit waits for the whole line's fetch");
        let d = l.dram_stats().cloned().unwrap_or_default();
        assert_eq!((d.read_bursts, d.row_misses, d.row_hits), (2, 1, 1));
        // The line is settled: a later read hits at the tag stage.
        assert_eq!(l.request(500, 5, 0b0001, ReqKind::Read), 511);
    }

    #[test]
    fn flits_count_a_header_and_the_data_each_way() {
        assert_eq!(flits(ReqKind::Read, 32), 2);
        assert_eq!(flits(ReqKind::Read, 128), 5);
        assert_eq!(flits(ReqKind::Write, 128), 5);
        assert_eq!(flits(ReqKind::Atomic, 32), 2);
    }

    #[test]
    fn without_an_l2_every_read_goes_to_dram_and_every_write_too() {
        let mut l = l2(0, 8);
        assert!(l.cache().is_absent());
        assert_eq!(l.request(0, 5, FULL, ReqKind::Read), 115);
        // The same line again: no L2 keeps it, DRAM again (its bandwidth busy until 8, +100).
        assert_eq!(l.request(200, 5, FULL, ReqKind::Read), 200 + 1 + 10 + 4 + 100);
        // A write is accepted at the tag stage and moves its 128 bytes to DRAM.
        assert_eq!(l.request(400, 6, FULL, ReqKind::Write), 400 + 1 + 10);
        l.preload(0, 4096);
        assert_eq!(l.request(500, 0, FULL, ReqKind::Read), 500 + 1 + 10 + 4 + 100, "a preload keeps nothing");
        let s = l.stats().clone();
        assert_eq!((s.hits, s.misses, s.dram_reads, s.dram_writes, s.dram_bytes), (0, 4, 12, 4, 512));
        // An atomic reads its sectors and writes them back.
        l.request(600, 7, 0b0001, ReqKind::Atomic);
        assert_eq!((l.stats().dram_reads, l.stats().dram_writes), (13, 5));
    }

    #[test]
    fn read_miss_then_hit() {
        let mut l = l2(64 << 10, 8);
        // Pipe: 4 sectors at 4/cycle -> 1; tag: +10 -> 11; DRAM: 128 B at 32 B/cycle -> 15; +100 -> 115.
        assert_eq!(l.request(0, 5, FULL, ReqKind::Read), 115);
        let expect = L2Stats {
            reads: 1,
            misses: 1,
            read_miss_sectors: 4,
            flits: 1 + 4,
            dram_reads: 4,
            dram_bytes: 128,
            ..L2Stats::default()
        };
        assert_eq!(l.stats(), &expect);
        // Second read of the line, after the data arrived: 200 + 1 + 10.
        assert_eq!(l.request(200, 5, FULL, ReqKind::Read), 211);
        assert_eq!(l.stats().hits, 1);
        assert_eq!(l.stats().dram_reads, 4);
        // A one-sector hit still takes a pipe cycle.
        assert_eq!(l.request(300, 5, 0b0100, ReqKind::Read), 311);
        assert_eq!(l.stats().reads, 3);
    }

    #[test]
    fn read_while_the_fill_is_in_flight_waits_for_it() {
        let mut l = l2(64 << 10, 8);
        assert_eq!(l.request(0, 5, FULL, ReqKind::Read), 115);
        // Tag at 51 + 10 = 61, but the data is ready only at 115; no second DRAM read.
        assert_eq!(l.request(50, 5, 0b0010, ReqKind::Read), 115);
        assert_eq!((l.stats().hits, l.stats().pending_hits, l.stats().dram_reads), (1, 1, 4));
    }

    #[test]
    fn sector_partial_miss() {
        let mut l = l2(64 << 10, 8);
        // One sector: pipe 1, tag 11, DRAM 32 B -> 12, +100 -> 112.
        assert_eq!(l.request(0, 7, 0b0001, ReqKind::Read), 112);
        assert_eq!(l.cache().probe(7).map(|s| s.sectors), Some(0b0001));
        // Sectors 0 and 1: only sector 1 is fetched. Pipe 1001, tag 1011, DRAM 1012, +100.
        assert_eq!(l.request(1000, 7, 0b0011, ReqKind::Read), 1112);
        assert_eq!((l.stats().misses, l.stats().hits, l.stats().dram_reads, l.stats().dram_bytes), (2, 0, 2, 64));
        // Now both are valid: a hit.
        assert_eq!(l.request(2000, 7, 0b0011, ReqKind::Read), 2011);
        assert_eq!(l.stats().hits, 1);
        // The other two sectors: a partial miss of 64 bytes (2 DRAM cycles): 3001, 3011, 3013, 3113.
        assert_eq!(l.request(3000, 7, 0b1100, ReqKind::Read), 3113);
        assert_eq!(l.stats().dram_reads, 4);
        assert_eq!(l.cache().probe(7).map(|s| s.sectors), Some(FULL));
    }

    #[test]
    fn writes_allocate_dirty_and_evictions_write_back() {
        // One set of two ways.
        let mut l = l2(256, 2);
        // Writes never read DRAM; accepted after pipe + hit latency.
        assert_eq!(l.request(0, 0, FULL, ReqKind::Write), 11);
        assert_eq!(l.request(0, 1, 0b0011, ReqKind::Write), 12); // pipe: 2 sectors after 4 -> 1.5 -> 2
        assert_eq!(l.stats().dram_bytes, 0);
        assert_eq!((l.stats().writes, l.stats().misses), (2, 2));
        assert_eq!(l.cache().probe(1).map(|s| (s.sectors, s.dirty)), Some((0b0011, true)));
        // A write of valid sectors is a hit.
        assert_eq!(l.request(20, 1, 0b0001, ReqKind::Write), 31);
        assert_eq!(l.stats().hits, 1);
        // Reading line 2 evicts line 0 (LRU, dirty, 4 sectors): the fetch goes first (pipe 101, tag 111,
        // DRAM 111..115, +100 -> 215), then the 128-byte write-back (DRAM busy 115..119).
        assert_eq!(l.request(100, 2, FULL, ReqKind::Read), 215);
        assert_eq!((l.stats().dram_reads, l.stats().dram_writes, l.stats().dram_bytes), (4, 4, 256));
        // The write-back delays the next fetch: line 3 evicts line 1 (dirty, 2 valid sectors: 64 bytes).
        // Pipe 101 + 1 = 102, tag 112, DRAM starts at 119, ends 123, +100 -> 223.
        assert_eq!(l.request(100, 3, FULL, ReqKind::Read), 223);
        assert_eq!((l.stats().dram_writes, l.stats().dram_bytes), (6, 256 + 128 + 64));
        assert_eq!(l.dram_busy_cycles(), 4 + 4 + 4 + 2);
        // Evicting a clean line costs nothing.
        assert_eq!(l.request(1000, 4, 0b0001, ReqKind::Read), 1112);
        assert_eq!(l.stats().dram_writes, 6);
    }

    #[test]
    fn write_then_partial_read_fetches_only_unwritten_sectors() {
        let mut l = l2(64 << 10, 8);
        assert_eq!(l.request(0, 9, 0b0001, ReqKind::Write), 11);
        // Sector 0 is valid (written), sectors 1..3 fetched: 96 bytes = 3 DRAM cycles. 1001, 1011, 1014, 1114.
        assert_eq!(l.request(1000, 9, FULL, ReqKind::Read), 1114);
        assert_eq!((l.stats().dram_reads, l.stats().dram_bytes), (3, 96));
        assert_eq!(l.cache().probe(9).map(|s| (s.sectors, s.dirty)), Some((FULL, true)));
    }

    #[test]
    fn bandwidth_saturation_raises_completion_times() {
        let mut l = l2(64 << 10, 8);
        // Sixteen full-line misses at cycle 0 to distinct lines: DRAM (4 cycles a line) is the bottleneck.
        // Request i: pipe i + 1, tag i + 11, DRAM ends 15 + 4i, response 115 + 4i.
        let mut last = 0;
        for i in 0..16u64 {
            let t = l.request(0, 100 + i, FULL, ReqKind::Read);
            assert_eq!(t, 115 + 4 * i);
            assert!(t > last);
            last = t;
        }
        assert_eq!(l.dram_busy_cycles(), 64);
        assert_eq!(l.pipe_busy_cycles(), 16);
        // Hits are limited by the L2 pipe: 64 one-sector hits at cycle 1000 take 16 cycles of pipe.
        let mut times = Vec::new();
        for i in 0..64u64 {
            times.push(l.request(1000, 100 + i % 16, 1 << (i % 4), ReqKind::Read));
        }
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(times.first(), Some(&1011));
        assert_eq!(times.last(), Some(&1026));
    }

    #[test]
    fn atomics() {
        let mut l = l2(64 << 10, 8);
        // Miss: 115 + 20.
        assert_eq!(l.request(0, 3, 0b0001, ReqKind::Atomic), 112 + 20);
        assert_eq!(l.stats().atomics, 1);
        assert_eq!(l.stats().misses, 1);
        assert_eq!(l.stats().dram_reads, 1);
        assert_eq!(l.cache().probe(3).map(|s| s.dirty), Some(true));
        // Hit: 1001 + 10 + 20.
        assert_eq!(l.request(1000, 3, 0b0001, ReqKind::Atomic), 1031);
        assert_eq!((l.stats().atomics, l.stats().hits, l.stats().reads), (2, 1, 0));
    }

    #[test]
    fn masks_are_normalized() {
        let mut l = l2(64 << 10, 8);
        // Bits beyond the line's 4 sectors are ignored; an empty mask is the whole line.
        assert_eq!(l.request(0, 1, 0xf0, ReqKind::Read), 115);
        assert_eq!(l.stats().dram_reads, 4);
        assert_eq!(l.request(1000, 2, 0xffff_fff1, ReqKind::Read), 1112);
        assert_eq!(l.stats().dram_reads, 5);
    }

    #[test]
    fn deterministic_replay() {
        let run = || {
            let mut l = l2(4 << 10, 4);
            let mut out = Vec::new();
            for i in 0..500u64 {
                let kind = match i % 7 {
                    0 => ReqKind::Write,
                    1 => ReqKind::Atomic,
                    _ => ReqKind::Read,
                };
                out.push(l.request(i / 3, (i * 37) % 97, (1 << (i % 4)) | 1, kind));
            }
            (out, l.stats().clone())
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn config_validation() {
        let bad = |f: fn(&mut L2Config)| {
            let mut c = config(64 << 10, 8);
            f(&mut c);
            L2Dram::new(c).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert!(bad(|c| c.geometry.ways = 3).contains("L2: "));
        assert!(bad(|c| c.sector_bytes = 0).contains("sector size"));
        assert!(bad(|c| c.sector_bytes = 24).contains("sector size"));
        assert!(bad(|c| c.sector_bytes = 256).contains("sector size"));
        assert!(bad(|c| c.sector_bytes = 2).contains("64 sectors, more than 32"));
        assert!(bad(|c| c.sectors_per_cycle = (0, 1)).contains("L2 pipe"));
        assert!(bad(|c| c.dram_bytes_per_cycle = (32, 0)).contains("DRAM"));
        assert!(L2Dram::new(config(64 << 10, 8)).is_ok());
        // 32 sectors of 4 bytes is the limit, and works.
        let mut c = config(64 << 10, 8);
        c.sector_bytes = 4;
        let Ok(mut l) = L2Dram::new(c) else { panic!("32 sectors is valid") };
        l.request(0, 0, 0, ReqKind::Read);
        assert_eq!(l.stats().dram_reads, 32);
    }
}
