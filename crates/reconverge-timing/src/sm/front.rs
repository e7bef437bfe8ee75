//! The SM's front end (GPGPU-Sim's fetch and decode stages): an instruction cache, one fetch per cycle for
//! the SM, and a small instruction buffer per issue context.
//!
//! A context can issue the instruction at `pc` only when its buffer holds `pc` and the decode of that fetch
//! is done. When the buffer is empty, or holds another pc (a taken branch, a divergence or a
//! reconvergence changed where the context goes next: the buffer is discarded, as GPGPU-Sim flushes it on a
//! control hazard), the context asks for a fetch: the fetch unit takes one request per cycle, in the order
//! the requests come; the instruction cache is looked up then; a hit fills the buffer with the instructions
//! from `pc` up to `fetch_bytes` (never past the line), ready `decode_latency + 1` cycles after the fetch; a
//! miss sends the line to the L2 (through the same path as data, at an address of its own) and the context
//! waits for it, as do the other contexts that miss on that line meanwhile. With a perfect instruction cache
//! (`icache_size = 0`) there is no front end: every instruction is always available.
//!
//! Requests are made when a context is found waiting for its next instruction (the scheduler asks every
//! context whose lasting conditions it checks), which is also when GPGPU-Sim's fetch stage would find the
//! warp's buffer empty; the difference is at most the cycles before the scheduler next looks at it.

use crate::config::GpuConfig;
use crate::memsys::Cache;
use smallvec::SmallVec;

/// Where instructions live in the address space the L2 sees (far above any data address).
const INST_BASE: u64 = 1 << 59;

/// One context's instruction buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Buffer {
    /// The pc of the first buffered instruction.
    pc: u32,
    /// Buffered instructions from `pc` on.
    count: u32,
    /// The cycle they may issue.
    ready: u64,
    /// Waiting for an instruction-cache miss.
    missing: bool,
}

/// The front end of one SM.
pub(crate) struct Front {
    icache: Option<Cache>,
    inst_bytes: u64,
    line_bytes: u64,
    fetch_insts: u64,
    decode: u64,
    buffers: Vec<Buffer>,
    /// The first cycle the fetch unit is free.
    fetch_free: u64,
    /// Fetches the SM's fetch unit takes per cycle: 1 (GPGPU-Sim's), 2 with SBI's second fetch path
    /// ([`reconverge_mechanism::Tracker::CO_ISSUE_PATHS`]), 0 when every context fetches for itself, any
    /// number in one cycle (a machine with a pc per thread, the lane-packed bound:
    /// [`reconverge_mechanism::Tracker::LANE_PACKED`]).
    fetches_per_cycle: u32,
    /// The fetches taken in the cycle `fetch_free` (when it still has room).
    fetches_in_cycle: u32,
    /// Lines in flight and the contexts waiting for each.
    pending: Vec<(u64, SmallVec<[u32; 4]>)>,
    /// Lines to request from the L2: (cycle, byte address).
    pub requests: Vec<(u64, u64)>,
    /// Fetches and instruction-cache misses.
    pub fetches: u64,
    /// Instruction-cache misses.
    pub misses: u64,
}

impl Front {
    /// The front end `gpu` describes (inactive with a perfect instruction cache), taking
    /// `fetches_per_cycle` fetches a cycle (0: each context fetches for itself, any number a cycle).
    pub(super) fn new(gpu: &GpuConfig, fetches_per_cycle: u32) -> Result<Front, crate::error::StructureError> {
        let f = &gpu.frontend;
        let icache = if f.enabled() { Some(Cache::new(gpu.icache_geometry())?) } else { None };
        Ok(Front {
            icache,
            inst_bytes: u64::from(f.inst_bytes.max(1)),
            line_bytes: u64::from(f.icache_line.max(1)),
            fetch_insts: u64::from(f.fetch_bytes / f.inst_bytes.max(1)).max(1),
            decode: f.decode_latency,
            buffers: Vec::new(),
            fetch_free: 0,
            fetches_per_cycle,
            fetches_in_cycle: 0,
            pending: Vec::new(),
            requests: Vec::new(),
            fetches: 0,
            misses: 0,
        })
    }

    /// Whether there is a front end at all.
    pub(super) fn enabled(&self) -> bool {
        self.icache.is_some()
    }

    fn line_of(&self, pc: u32) -> u64 {
        (INST_BASE + u64::from(pc) * self.inst_bytes) / self.line_bytes
    }

    /// Instructions from `pc` to the end of its line, at most one fetch's worth.
    fn fetch_count(&self, pc: u32) -> u32 {
        let per_line = self.line_bytes / self.inst_bytes;
        let offset = (INST_BASE / self.inst_bytes + u64::from(pc)) % per_line.max(1);
        (per_line - offset).clamp(1, self.fetch_insts) as u32
    }

    fn buffer(&mut self, g: u32) -> &mut Buffer {
        let g = g as usize;
        if self.buffers.len() <= g {
            self.buffers.resize(g + 1, Buffer::default());
        }
        &mut self.buffers[g]
    }

    /// Whether context `g` has the instruction at `pc` ready to issue at `now`: `Ok`, or the cycle it may
    /// (`u64::MAX`: when an instruction-cache miss returns). Asks for a fetch when the buffer does not hold
    /// `pc`.
    pub(super) fn check(&mut self, g: u32, pc: u32, now: u64) -> Result<(), u64> {
        if self.icache.is_none() {
            return Ok(());
        }
        let b = *self.buffer(g);
        if b.missing && b.pc == pc {
            return Err(u64::MAX);
        }
        if b.count > 0 && b.pc == pc {
            return if b.ready <= now { Ok(()) } else { Err(b.ready) };
        }
        self.fetch(g, pc, now)
    }

    /// A fetch of `pc` for context `g`, asked at `now`.
    fn fetch(&mut self, g: u32, pc: u32, now: u64) -> Result<(), u64> {
        let at = self.fetch_slot(now);
        self.fetches += 1;
        let line = self.line_of(pc);
        let hit = self.icache.as_mut().is_some_and(|c| c.lookup(line, at));
        if hit {
            let ready = at + self.decode + 1;
            *self.buffer(g) = Buffer { pc, count: self.fetch_count(pc), ready, missing: false };
            return Err(ready);
        }
        self.misses += 1;
        *self.buffer(g) = Buffer { pc, count: 0, ready: u64::MAX, missing: true };
        match self.pending.iter_mut().find(|p| p.0 == line) {
            Some(p) => p.1.push(g),
            None => {
                self.pending.push((line, smallvec::smallvec![g]));
                self.requests.push((at + 1, line * self.line_bytes));
            }
        }
        Err(u64::MAX)
    }

    /// The cycle a fetch asked at `now` is taken in, and the fetch unit's room after it.
    fn fetch_slot(&mut self, now: u64) -> u64 {
        if self.fetches_per_cycle == 0 {
            return now;
        }
        if self.fetch_free < now {
            (self.fetch_free, self.fetches_in_cycle) = (now, 0);
        }
        let at = self.fetch_free;
        self.fetches_in_cycle += 1;
        if self.fetches_in_cycle >= self.fetches_per_cycle {
            (self.fetch_free, self.fetches_in_cycle) = (at + 1, 0);
        }
        at
    }

    /// The line at byte address `addr` arrived at `cycle`: fills the cache and the waiting contexts'
    /// buffers; appends the contexts whose readiness changed to `woken`.
    pub(super) fn fill(&mut self, addr: u64, cycle: u64, woken: &mut Vec<u32>) {
        let line = addr / self.line_bytes;
        if let Some(c) = self.icache.as_mut() {
            c.fill(line, cycle);
        }
        let Some(i) = self.pending.iter().position(|p| p.0 == line) else { return };
        let (_, waiters) = self.pending.swap_remove(i);
        for g in waiters {
            let b = *self.buffer(g);
            if b.missing {
                let count = self.fetch_count(b.pc);
                *self.buffer(g) = Buffer { pc: b.pc, count, ready: cycle + self.decode + 1, missing: false };
                woken.push(g);
            }
        }
    }

    /// Context `g` issued the instruction at the head of its buffer.
    pub(super) fn consume(&mut self, g: u32) {
        if self.icache.is_none() {
            return;
        }
        let b = self.buffer(g);
        if b.count > 0 {
            b.count -= 1;
            b.pc += 1;
        }
    }

    /// Contexts `range` belong to a new (or no) CTA: empty buffers.
    pub(super) fn reset(&mut self, range: std::ops::Range<usize>) {
        let end = range.end.min(self.buffers.len());
        for b in self.buffers.get_mut(range.start.min(end)..end).into_iter().flatten() {
            *b = Buffer::default();
        }
        for p in self.pending.iter_mut() {
            p.1.retain(|g| !(range.start..range.end).contains(&(*g as usize)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front() -> Front {
        let mut gpu = GpuConfig::gtx480();
        gpu.frontend.icache_size = 2048;
        Front::new(&gpu, 1).expect("front")
    }

    #[test]
    fn a_miss_waits_for_the_line_then_two_instructions_issue() {
        let mut f = front();
        assert_eq!(f.check(0, 0, 10), Err(u64::MAX), "a cold miss");
        assert_eq!(f.requests.len(), 1);
        // A second context missing on the same line merges.
        assert_eq!(f.check(1, 3, 10), Err(u64::MAX));
        assert_eq!(f.requests.len(), 1);
        let mut woken = Vec::new();
        let (_, addr) = f.requests[0];
        assert!(addr >= INST_BASE);
        f.fill(addr, 100, &mut woken);
        assert_eq!(woken, vec![0, 1]);
        assert_eq!(f.check(0, 0, 101), Err(102), "decode, then issue");
        assert_eq!(f.check(0, 0, 102), Ok(()));
        f.consume(0);
        assert_eq!(f.check(0, 1, 102), Ok(()), "the second instruction of the fetch");
        f.consume(0);
        // The buffer is empty: a hit now (one fetch per cycle for the SM).
        assert_eq!(f.check(0, 2, 103), Err(105));
        assert_eq!(f.check(1, 3, 103), Ok(()));
        // A taken branch: the buffer holds pc 2, the context goes to pc 40 (another line: a miss).
        assert_eq!(f.check(0, 40, 105), Err(u64::MAX));
    }

    #[test]
    fn the_fetch_unit_takes_one_two_or_any_number_of_fetches_a_cycle() {
        let mut gpu = GpuConfig::gtx480();
        gpu.frontend.icache_size = 2048;
        let (mut shared, mut own) = (front(), Front::new(&gpu, 0).expect("front"));
        let mut two = Front::new(&gpu, 2).expect("front");
        let mut woken = Vec::new();
        for f in [&mut shared, &mut own, &mut two] {
            assert!(f.check(0, 0, 10).is_err(), "a cold miss");
            let (_, addr) = f.requests[0];
            f.fill(addr, 100, &mut woken);
            f.check(0, 0, 101).ok();
        }
        // Three contexts ask at cycle 200 for pcs of the cached line.
        let ready = |f: &mut Front| [1u32, 2, 3].map(|g| f.check(g, g, 200));
        assert_eq!(ready(&mut shared), [Err(202), Err(203), Err(204)], "one fetch per cycle for the SM");
        assert_eq!(ready(&mut own), [Err(202), Err(202), Err(202)], "every context fetches for itself");
        assert_eq!(ready(&mut two), [Err(202), Err(202), Err(203)], "two fetches a cycle (SBI)");
    }

    #[test]
    fn a_fetch_never_crosses_its_line() {
        let mut f = front();
        let mut woken = Vec::new();
        assert!(f.check(0, 15, 0).is_err());
        let (_, addr) = f.requests[0];
        f.fill(addr, 50, &mut woken);
        assert_eq!(f.buffers[0].count, 1, "pc 15 is the last of a 16-instruction line");
    }
}
