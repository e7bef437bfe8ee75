//! One SM in time: resident CTAs, hardware warp slots, schedulers, scoreboard, functional units, the L1
//! and shared memory. [`Sm::run_epoch`] advances it over one epoch without touching anything shared but
//! read-only device memory.

use crate::config::{GpuConfig, SchedulerPolicy};
use crate::gmem::{SmMemView, SmMemory};
use crate::memsys::{coalesce, conflict_degree, Cache, LineRequest, Mshr, MshrResult, ReqKind};
use crate::stats::{MemoryCounters, StallCounts};
use reconverge_sim::exec::{AccessKind, Env, Scratch};
use reconverge_sim::machine::{issue, Resident};
use reconverge_sim::mechanism::WarpMechanism;
use reconverge_sim::memory::DeviceMemory;
use reconverge_sim::program::{InstClass, Op, Space};
use reconverge_sim::{LaneMask, LaunchConfig, NoObserver, Pc, Program, SimError, Stats};
use std::collections::{BinaryHeap, VecDeque};

/// Read-only context shared by all SMs during an epoch.
pub struct EpochCtx<'a, M: WarpMechanism> {
    /// The program.
    pub prog: &'a Program,
    /// The mechanism.
    pub mech: &'a M,
    /// The GPU.
    pub gpu: &'a GpuConfig,
    /// The launch.
    pub launch: &'a LaunchConfig,
    /// Device memory as of the epoch start.
    pub mem: &'a DeviceMemory,
    /// Constant bank.
    pub consts: &'a [u8],
    /// Kernel parameters.
    pub params: &'a [u8],
    /// Watch register values for the livelock detector.
    pub track: bool,
    /// Stop at this cycle (`--max-cycles`).
    pub max_cycles: Option<u64>,
    /// The cycle the epoch ends: global writes logged during the epoch are performed then.
    pub epoch_end: u64,
}

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
    /// What the response completes (see [`Token`]); `None` for writes.
    pub token: Option<u64>,
}

/// What an L2 response completes: an L1 fill of a line, or one line of an atomic.
const TOKEN_ATOMIC: u64 = 1 << 63;

#[derive(Clone, Debug)]
struct HwWarp {
    slot: u32,
    wi: u32,
    age: u64,
    next_issue: u64,
    mech_stall_until: u64,
    /// When the global writes this warp logged so far are performed (the end of the epoch of the latest).
    writes_done: u64,
    /// A fence or a barrier release holds the warp until this cycle (its earlier writes performed).
    fence_until: u64,
    pending_loads: u32,
    sb_regs: Vec<u64>,
    sb_preds: Vec<u64>,
}

struct CtaSlot<S> {
    res: Resident<S>,
    hw: Vec<usize>,
    threads: u32,
    warps: u32,
    regs: u32,
    shared: u32,
}

#[derive(Clone, Debug)]
struct LoadTrack {
    warp: usize,
    remaining: u32,
    ready: u64,
    regs: smallvec::SmallVec<[u32; 4]>,
}

/// Why a warp could not issue this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    Scoreboard,
    Memory,
    Pipeline,
    Mechanism,
    Barrier,
    Done,
}

/// A scheduler's candidate warps, in the order it considers them.
type Cands = smallvec::SmallVec<[usize; 64]>;

/// What an epoch did.
#[derive(Debug, Default)]
pub struct EpochOutcome {
    /// Instructions issued.
    pub issued: u64,
    /// Whether any value changed (livelock detection).
    pub changed: bool,
    /// The first error and its cycle.
    pub error: Option<(u64, SimError)>,
    /// When nothing issued at the epoch's end: the earliest cycle at which a warp may become ready by
    /// itself (a latency, a fence, a mechanism stall); `u64::MAX` when no warp can ever become ready
    /// without a memory response or another warp's action (a barrier, a SIMT deadlock).
    pub wake: u64,
}

/// One SM.
pub struct Sm<S> {
    /// SM index.
    pub id: u32,
    ctas: Vec<Option<CtaSlot<S>>>,
    warps: Vec<Option<HwWarp>>,
    used_threads: u32,
    used_warps: u32,
    used_regs: u32,
    used_shared: u32,
    regs_per_thread: u32,
    l1: Cache,
    mshr: Mshr,
    loads: Vec<Option<LoadTrack>>,
    free_loads: Vec<usize>,
    miss_queue: VecDeque<(u64, u32, u64)>,
    /// Requests for the L2 made this epoch.
    pub outbox: Vec<L2Request>,
    inbox: BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    inbox_seq: u64,
    req_seq: u64,
    fu_free: Vec<[u64; 5]>,
    last_issued: Vec<Option<usize>>,
    active: Vec<Vec<usize>>,
    /// Global writes of this epoch.
    pub mem: SmMemory,
    sc: Scratch,
    next_age: u64,
    /// Functional statistics of the CTAs run here.
    pub stats: Stats,
    /// Idle scheduler-cycles by cause.
    pub stalls: StallCounts,
    /// Memory counters.
    pub memc: MemoryCounters,
    /// Issue slots while busy.
    pub issue_slots: u64,
    /// Cycles with resident work.
    pub busy_cycles: u64,
    /// The last cycle with resident work.
    pub last_busy: Option<u64>,
    accesses: Vec<(u64, u32)>,
    lines: Vec<LineRequest>,
    waiters: Vec<u64>,
}

fn unit(class: InstClass) -> usize {
    match class {
        InstClass::Float => 1,
        InstClass::Double => 2,
        InstClass::Sfu => 3,
        InstClass::Mem => 4,
        _ => 0,
    }
}

impl<S> Sm<S> {
    /// An empty SM.
    pub fn new(
        id: u32,
        gpu: &GpuConfig,
        prog: &Program,
        launch: &LaunchConfig,
        structure: reconverge_sim::stats::Structure,
    ) -> Result<Sm<S>, String> {
        let nsched = gpu.sm.schedulers as usize;
        let est = prog.functions[0].reg_words.clamp(1, gpu.sm.max_regs_per_thread);
        let regs_per_thread = if gpu.sm.regs_per_thread > 0 { gpu.sm.regs_per_thread } else { est };
        let _ = launch;
        Ok(Sm {
            id,
            ctas: Vec::new(),
            warps: Vec::new(),
            used_threads: 0,
            used_warps: 0,
            used_regs: 0,
            used_shared: 0,
            regs_per_thread,
            l1: Cache::new(gpu.l1_geometry())?,
            mshr: Mshr::new(gpu.l1.mshrs as usize, gpu.l1.mshr_merge as usize)?,
            loads: Vec::new(),
            free_loads: Vec::new(),
            miss_queue: VecDeque::new(),
            outbox: Vec::new(),
            inbox: BinaryHeap::new(),
            inbox_seq: 0,
            req_seq: 0,
            fu_free: vec![[0; 5]; nsched],
            last_issued: vec![None; nsched],
            active: vec![Vec::new(); nsched],
            mem: SmMemory::default(),
            sc: Scratch::default(),
            next_age: 0,
            stats: Stats::new(prog, launch.warp_size, structure),
            stalls: StallCounts::default(),
            memc: MemoryCounters::default(),
            issue_slots: 0,
            busy_cycles: 0,
            last_busy: None,
            accesses: Vec::with_capacity(64),
            lines: Vec::with_capacity(64),
            waiters: Vec::new(),
        })
    }

    /// The resident CTAs (for deadlock reports).
    pub fn residents(&self) -> impl Iterator<Item = &Resident<S>> {
        self.ctas.iter().flatten().map(|c| &c.res)
    }

    /// Registers per thread this SM assumes for the kernel.
    pub fn regs_per_thread(&self) -> u32 {
        self.regs_per_thread
    }

    /// Whether the SM holds any CTA.
    pub fn has_work(&self) -> bool {
        self.ctas.iter().any(Option::is_some)
    }

    /// Whether responses are still outstanding.
    pub fn has_pending_memory(&self) -> bool {
        !self.inbox.is_empty() || !self.miss_queue.is_empty()
    }

    /// The resources one CTA of `launch` needs: (threads, warps, registers, shared bytes).
    pub fn cta_demand(&self, prog: &Program, launch: &LaunchConfig) -> (u32, u32, u32, u32) {
        let threads = launch.threads_per_cta();
        let warps = threads.div_ceil(launch.warp_size);
        let regs = self.regs_per_thread * warps * launch.warp_size;
        let shared = prog.static_shared + launch.dynamic_shared;
        (threads, warps, regs, shared)
    }

    /// Whether a CTA fits now.
    pub fn fits(&self, gpu: &GpuConfig, prog: &Program, launch: &LaunchConfig) -> bool {
        let (t, w, r, s) = self.cta_demand(prog, launch);
        self.ctas.iter().filter(|c| c.is_some()).count() < gpu.sm.max_ctas as usize
            && self.used_threads + t <= gpu.sm.max_threads
            && self.used_warps + w <= gpu.sm.max_warps
            && self.used_regs + r <= gpu.sm.registers
            && self.used_shared + s <= gpu.sm.shared_memory
    }

    /// Launches CTA `linear` here.
    pub fn launch<M: WarpMechanism<State = S>>(
        &mut self,
        prog: &Program,
        mech: &M,
        launch: &LaunchConfig,
        linear: u64,
        now: u64,
    ) {
        let (threads, warps, regs, shared) = self.cta_demand(prog, launch);
        let res = Resident::new(prog, mech, launch, linear);
        self.stats.ctas += 1;
        self.stats.threads += res.cta.nthreads as u64;
        let slot = match self.ctas.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.ctas.push(None);
                self.ctas.len() - 1
            }
        };
        let mut hw = Vec::with_capacity(res.warps.len());
        for wi in 0..res.warps.len() {
            let w = HwWarp {
                slot: slot as u32,
                wi: wi as u32,
                age: self.next_age,
                next_issue: now,
                mech_stall_until: 0,
                writes_done: 0,
                fence_until: 0,
                pending_loads: 0,
                sb_regs: vec![0; prog.nregs as usize],
                sb_preds: vec![0; prog.npreds as usize],
            };
            self.next_age += 1;
            let i = match self.warps.iter().position(Option::is_none) {
                Some(i) => i,
                None => {
                    self.warps.push(None);
                    self.warps.len() - 1
                }
            };
            self.warps[i] = Some(w);
            hw.push(i);
        }
        self.used_threads += threads;
        self.used_warps += warps;
        self.used_regs += regs;
        self.used_shared += shared;
        self.ctas[slot] = Some(CtaSlot { res, hw, threads, warps, regs, shared });
    }

    /// Writes an atomic's old value (applied at the epoch end) into the issuing thread's register.
    pub fn write_register(&mut self, cta_slot: u32, thread: u32, reg: u32, value: u64) {
        if let Some(Some(c)) = self.ctas.get_mut(cta_slot as usize) {
            let i = reg as usize * c.res.cta.padded + thread as usize;
            if let Some(r) = c.res.cta.regs.get_mut(i) {
                *r = value;
            }
        }
    }

    /// Queues an L2 response arriving at `cycle`.
    pub fn deliver(&mut self, cycle: u64, token: u64) {
        self.inbox_seq += 1;
        let _ = self.inbox_seq;
        self.inbox.push(std::cmp::Reverse((cycle, token)));
    }

    fn new_load(&mut self, warp: usize, regs: &[u32]) -> usize {
        let t = LoadTrack { warp, remaining: 0, ready: 0, regs: regs.iter().copied().collect() };
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

    fn finish_load(&mut self, id: usize, cycle: u64) {
        let Some(t) = self.loads.get_mut(id).and_then(Option::take) else { return };
        self.free_loads.push(id);
        if let Some(Some(w)) = self.warps.get_mut(t.warp) {
            let ready = cycle.max(t.ready);
            for &r in &t.regs {
                if let Some(s) = w.sb_regs.get_mut(r as usize) {
                    *s = ready;
                }
            }
            w.pending_loads = w.pending_loads.saturating_sub(1);
        }
    }

    fn load_part_done(&mut self, id: usize, cycle: u64) {
        let done = match self.loads.get_mut(id).and_then(Option::as_mut) {
            Some(t) => {
                t.remaining = t.remaining.saturating_sub(1);
                t.ready = t.ready.max(cycle);
                t.remaining == 0
            }
            None => false,
        };
        if done {
            self.finish_load(id, cycle);
        }
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
                    self.send(now + gpu.l1.hit_latency, line, sectors, ReqKind::Read, Some(line));
                }
            }
        }
    }

    fn deliver_due(&mut self, now: u64, gpu: &GpuConfig) {
        while let Some(&std::cmp::Reverse((cycle, token))) = self.inbox.peek() {
            if cycle > now {
                break;
            }
            self.inbox.pop();
            if token & TOKEN_ATOMIC != 0 {
                self.load_part_done((token & !TOKEN_ATOMIC) as usize, cycle);
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
                    self.load_part_done(wid as usize, cycle);
                }
                self.waiters = waiters;
            }
        }
        self.retry_misses(now, gpu);
    }

    /// Frees the slots of finished CTAs; returns how many finished.
    pub fn retire(&mut self) -> u32 {
        let mut n = 0;
        for i in 0..self.ctas.len() {
            let done = self.ctas[i].as_ref().is_some_and(|c| c.res.cta.done());
            if done {
                if let Some(c) = self.ctas[i].take() {
                    for &h in &c.hw {
                        self.warps[h] = None;
                    }
                    self.used_threads -= c.threads;
                    self.used_warps -= c.warps;
                    self.used_regs -= c.regs;
                    self.used_shared -= c.shared;
                    n += 1;
                }
            }
        }
        for a in self.active.iter_mut() {
            a.retain(|&h| self.warps.get(h).is_some_and(Option::is_some));
        }
        n
    }

    /// Whether warp `h` may issue at `now`: its group, or why not and when that may change.
    fn readiness<M: WarpMechanism<State = S>>(
        &mut self,
        h: usize,
        now: u64,
        ctx: &EpochCtx<'_, M>,
        sched: usize,
    ) -> Result<(Pc, LaneMask), (Cause, u64)> {
        let Some(w) = self.warps[h].as_ref() else { return Err((Cause::Done, u64::MAX)) };
        let (slot, wi) = (w.slot as usize, w.wi as usize);
        if w.mech_stall_until > now {
            return Err((Cause::Mechanism, w.mech_stall_until));
        }
        if w.fence_until > now {
            return Err((Cause::Memory, w.fence_until));
        }
        if w.next_issue > now {
            return Err((Cause::Pipeline, w.next_issue));
        }
        if ctx.gpu.sm.miss_blocks_warp && w.pending_loads > 0 {
            return Err((Cause::Memory, u64::MAX));
        }
        let Some(c) = self.ctas[slot].as_mut() else { return Err((Cause::Done, u64::MAX)) };
        if c.res.cta.live[wi] == 0 {
            return Err((Cause::Done, u64::MAX));
        }
        let Some((pc, mask)) = c.res.next_group(wi, ctx.mech) else {
            return Err((Cause::Barrier, u64::MAX));
        };
        let Some(info) = ctx.prog.info.get(pc as usize) else { return Ok((pc, mask)) };
        let w = self.warps[h].as_ref().unwrap_or_else(|| unreachable!());
        let mut worst = 0u64;
        for &r in info.reads.iter().chain(info.writes.iter()) {
            worst = worst.max(w.sb_regs.get(r as usize).copied().unwrap_or(0));
        }
        for &p in info.pred_reads.iter().chain(info.pred_writes.iter()) {
            worst = worst.max(w.sb_preds.get(p as usize).copied().unwrap_or(0));
        }
        if worst > now {
            return Err(if worst == u64::MAX { (Cause::Memory, u64::MAX) } else { (Cause::Scoreboard, worst) });
        }
        let u = unit(info.class);
        if self.fu_free[sched][u] > now {
            return Err((Cause::Pipeline, self.fu_free[sched][u]));
        }
        if info.class == InstClass::Mem && !self.miss_queue.is_empty() {
            return Err((Cause::Memory, u64::MAX));
        }
        Ok((pc, mask))
    }

    /// The order in which scheduler `s` considers its warps.
    fn candidates(&mut self, s: usize, nsched: usize, policy: SchedulerPolicy) -> Cands {
        let mine: Cands = (0..self.warps.len()).filter(|&h| h % nsched == s && self.warps[h].is_some()).collect();
        if mine.is_empty() {
            return mine;
        }
        match policy {
            SchedulerPolicy::Lrr => {
                let start = match self.last_issued[s] {
                    Some(l) => mine.iter().position(|&h| h > l).unwrap_or(0),
                    None => 0,
                };
                let mut v: Cands = mine[start..].iter().copied().collect();
                v.extend_from_slice(&mine[..start]);
                v
            }
            SchedulerPolicy::Gto => {
                let mut by_age = mine;
                by_age.sort_by_key(|&h| self.warps[h].as_ref().map(|w| w.age).unwrap_or(u64::MAX));
                if let Some(l) = self.last_issued[s] {
                    if let Some(p) = by_age.iter().position(|&h| h == l) {
                        let x = by_age.remove(p);
                        by_age.insert(0, x);
                    }
                }
                by_age
            }
            SchedulerPolicy::TwoLevel => {
                // Active set first (round-robin after the last issued), then the pending pool by age.
                let active = &self.active[s];
                let start = match self.last_issued[s] {
                    Some(l) => active.iter().position(|&h| h == l).map(|p| p + 1).unwrap_or(0),
                    None => 0,
                };
                let mut order: Cands = active[start.min(active.len())..]
                    .iter()
                    .chain(active[..start.min(active.len())].iter())
                    .copied()
                    .collect();
                let mut pending: Cands = mine.into_iter().filter(|h| !order.contains(h)).collect();
                pending.sort_by_key(|&h| self.warps[h].as_ref().map(|w| w.age).unwrap_or(u64::MAX));
                order.extend(pending);
                order
            }
        }
    }

    /// Advances the SM over cycles `t0..t1`.
    pub fn run_epoch<M: WarpMechanism<State = S>>(&mut self, t0: u64, t1: u64, ctx: &EpochCtx<'_, M>) -> EpochOutcome {
        let mut out = EpochOutcome { wake: u64::MAX, ..EpochOutcome::default() };
        let nsched = ctx.gpu.sm.schedulers as usize;
        let policy = ctx.gpu.sm.scheduler;
        let mut t = t0;
        while t < t1 {
            if let Some(max) = ctx.max_cycles {
                if t >= max {
                    out.error = Some((t, SimError::Limit { what: format!("--max-cycles {max}") }));
                    return out;
                }
            }
            self.deliver_due(t, ctx.gpu);
            if !self.has_work() {
                // Idle: jump to the next response or the epoch end.
                let next = self.inbox.peek().map(|r| r.0 .0).unwrap_or(t1).clamp(t + 1, t1);
                t = next;
                continue;
            }
            self.busy_cycles += 1;
            self.last_busy = Some(t);
            self.issue_slots += nsched as u64;
            let mut wake = u64::MAX;
            let mut causes: smallvec::SmallVec<[Option<Cause>; 8]> = smallvec::smallvec![None; nsched];
            let mut issued_s: smallvec::SmallVec<[bool; 8]> = smallvec::smallvec![false; nsched];
            for s in 0..nsched {
                let order = self.candidates(s, nsched, policy);
                if order.is_empty() {
                    causes[s] = None;
                    continue;
                }
                let mut best: Option<Cause> = None;
                let mut chosen = None;
                for &h in &order {
                    match self.readiness(h, t, ctx, s) {
                        Ok(g) => {
                            chosen = Some((h, g));
                            break;
                        }
                        Err((c, when)) => {
                            wake = wake.min(when);
                            best = Some(best.map_or(c, |b| b.min(c)));
                            if policy == SchedulerPolicy::TwoLevel && c == Cause::Memory {
                                self.active[s].retain(|&x| x != h);
                            }
                        }
                    }
                }
                match chosen {
                    Some((h, (pc, mask))) => {
                        if let Err(e) = self.issue_one(h, s, pc, mask, t, ctx, &mut out) {
                            out.error = Some((t, e));
                            return out;
                        }
                        issued_s[s] = true;
                        out.issued += 1;
                        self.last_issued[s] = Some(h);
                        if policy == SchedulerPolicy::TwoLevel && !self.active[s].contains(&h) {
                            if self.active[s].len() >= ctx.gpu.sm.two_level_active as usize {
                                self.active[s].remove(0);
                            }
                            self.active[s].push(h);
                        }
                    }
                    None => causes[s] = best,
                }
            }
            // Stall accounting for schedulers that issued nothing.
            let idle_scheds: smallvec::SmallVec<[Option<Cause>; 8]> =
                (0..nsched).filter(|&s| !issued_s[s]).map(|s| causes[s]).collect();
            self.retire();
            if !self.has_work() {
                for c in &idle_scheds {
                    self.count_stall(*c, 1);
                }
                t += 1;
                continue;
            }
            out.wake = if idle_scheds.len() == nsched { wake } else { t };
            if idle_scheds.len() == nsched {
                // Nothing issued: skip to the next event.
                let inbox_next = self.inbox.peek().map(|r| r.0 .0).unwrap_or(u64::MAX);
                let next = wake.min(inbox_next).min(t1).max(t + 1);
                let skipped = next - t;
                for c in &idle_scheds {
                    self.count_stall(*c, skipped);
                }
                self.busy_cycles += skipped - 1;
                self.issue_slots += (skipped - 1) * nsched as u64;
                self.last_busy = Some(next - 1);
                t = next;
            } else {
                for c in &idle_scheds {
                    self.count_stall(*c, 1);
                }
                t += 1;
            }
        }
        out
    }

    fn count_stall(&mut self, c: Option<Cause>, n: u64) {
        let s = &mut self.stalls;
        match c {
            None | Some(Cause::Done) => s.no_ready_warp += n,
            Some(Cause::Memory) => s.memory += n,
            Some(Cause::Scoreboard) => s.scoreboard += n,
            Some(Cause::Pipeline) => s.pipeline += n,
            Some(Cause::Mechanism) => s.mechanism += n,
            Some(Cause::Barrier) => s.barrier += n,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn issue_one<M: WarpMechanism<State = S>>(
        &mut self,
        h: usize,
        sched: usize,
        pc: Pc,
        mask: LaneMask,
        now: u64,
        ctx: &EpochCtx<'_, M>,
        out: &mut EpochOutcome,
    ) -> Result<(), SimError> {
        let gpu = ctx.gpu;
        let (slot, wi) = match self.warps[h].as_ref() {
            Some(w) => (w.slot as usize, w.wi as usize),
            None => return Ok(()),
        };
        if pc as usize >= ctx.prog.insts.len() {
            let c = self.ctas[slot].as_ref().map(|c| &c.res.cta);
            let last = ctx.prog.insts.len().saturating_sub(1) as u32;
            return Err(SimError::Trap {
                what: format!("control reached pc {pc}, past the end of the program"),
                at: Box::new(match c {
                    Some(c) => reconverge_sim::exec::location(ctx.prog, c, wi as u32, last, None),
                    None => Default::default(),
                }),
            });
        }
        self.mem.cycle = now;
        self.mem.cta_slot = slot as u32;
        let Some(c) = self.ctas[slot].as_mut() else { return Ok(()) };
        let mut view = SmMemView { mem: ctx.mem, sm: &mut self.mem };
        let mut env = Env {
            prog: ctx.prog,
            mem: &mut view,
            consts: ctx.consts,
            params: ctx.params,
            grid: ctx.launch.grid,
            block: ctx.launch.block,
            sm: self.id,
            nsm: gpu.num_sms,
            clock: now,
            local_limit: ctx.launch.local_bytes,
            dynamic_shared: ctx.launch.dynamic_shared,
            track: ctx.track,
            changed: false,
            access: Default::default(),
        };
        env.access.enabled = true;
        let writes_before = env.mem.sm.log.len();
        let issued =
            issue(&mut c.res, wi, pc, mask, ctx.mech, &mut env, &mut self.sc, &mut self.stats, &mut NoObserver)?;
        out.changed |= env.changed;
        let wrote = env.mem.sm.log.len() > writes_before;
        let access = env.access;
        let mech_stall = ctx.mech.stall_cycles(&c.res.warps[wi].st, &issued.flow) as u64;
        let info = &ctx.prog.info[pc as usize];
        let lat = &gpu.latency;
        let iv = &gpu.interval;
        let w = gpu.warp_size.max(1);
        let _ = w;
        // Result latency and unit occupancy by class.
        let (mut latency, mut occupancy) = match info.class {
            InstClass::Int => (lat.int, iv.int),
            InstClass::Float => (lat.float, iv.float),
            InstClass::Double => (lat.double, iv.double),
            InstClass::Sfu => (lat.sfu, iv.sfu),
            InstClass::Control | InstClass::Mechanism => (lat.branch, iv.int),
            InstClass::Sync => (lat.warp_op, iv.int),
            InstClass::Mem | InstClass::Nop => (lat.int, iv.mem),
        };
        let mut pending = false;
        let mut load_id = None;
        if access.mask != 0 {
            let (lt, oc, pend, lid) = self.memory_access(h, &access, now, ctx, info.writes.as_slice());
            latency = lt;
            occupancy = oc;
            pending = pend;
            load_id = lid;
        }
        let _ = load_id;
        let u = unit(info.class);
        self.fu_free[sched][u] = now + occupancy.max(1);
        let Some(wp) = self.warps[h].as_mut() else { return Ok(()) };
        let ready = if pending { u64::MAX } else { now + latency };
        for &r in &info.writes {
            if let Some(s) = wp.sb_regs.get_mut(r as usize) {
                if !pending || *s != u64::MAX {
                    *s = ready;
                }
            }
        }
        for &p in &info.pred_writes {
            if let Some(s) = wp.sb_preds.get_mut(p as usize) {
                *s = now + latency;
            }
        }
        wp.next_issue = match info.class {
            InstClass::Control | InstClass::Mechanism => now + lat.branch,
            _ if issued.barrier => now + lat.barrier,
            _ => now + 1,
        };
        if mech_stall > 0 {
            wp.mech_stall_until = now + 1 + mech_stall;
        }
        self.order_memory(h, slot, wrote, &ctx.prog.insts[pc as usize].op, issued.released, ctx.epoch_end);
        Ok(())
    }

    /// Memory ordering in the epoch model. A global write is performed (visible to every later load, an
    /// atomic's effect applied) at the end of the epoch in which it was logged. A fence makes the issuing
    /// warp wait until its own earlier writes are performed; a barrier release (`bar.sync` orders memory
    /// like `membar.cta`) makes every warp of the CTA wait until the writes of all of them are performed.
    /// The wait is the write round trip of real hardware: a write logged at cycle c is performed at the
    /// epoch end, at most E = L1 + L2 hit latency after c.
    fn order_memory(&mut self, h: usize, slot: usize, wrote: bool, op: &Op, released: bool, epoch_end: u64) {
        if let Some(Some(w)) = self.warps.get_mut(h) {
            if wrote {
                w.writes_done = epoch_end;
            }
            if matches!(op, Op::Fence { .. }) {
                w.fence_until = w.fence_until.max(w.writes_done);
            }
        }
        if released {
            let Some(c) = self.ctas[slot].as_ref() else { return };
            let done = c.hw.iter().filter_map(|&x| self.warps[x].as_ref()).map(|w| w.writes_done).max().unwrap_or(0);
            for &x in &c.hw {
                if let Some(w) = self.warps[x].as_mut() {
                    w.fence_until = w.fence_until.max(done);
                }
            }
        }
    }

    /// Times the memory access of the instruction just executed: (latency, unit occupancy, result pending on
    /// memory, load tracker).
    fn memory_access<M: WarpMechanism<State = S>>(
        &mut self,
        h: usize,
        a: &reconverge_sim::exec::AccessLog,
        now: u64,
        ctx: &EpochCtx<'_, M>,
        dst: &[u32],
    ) -> (u64, u64, bool, Option<usize>) {
        let gpu = ctx.gpu;
        let (slot, wi) = match self.warps[h].as_ref() {
            Some(w) => (w.slot as u64, w.wi as u64),
            None => return (1, 1, false, None),
        };
        let lanes: smallvec::SmallVec<[usize; 64]> = reconverge_sim::lanes(a.mask).collect();
        let space_of = |l: usize| a.space[l];
        // Shared memory: bank conflicts.
        let shared: smallvec::SmallVec<[(u64, u32); 64]> =
            lanes.iter().filter(|&&l| space_of(l) == Space::Shared).map(|&l| (a.addr[l], a.bytes)).collect();
        let konst: smallvec::SmallVec<[u64; 64]> = lanes
            .iter()
            .filter(|&&l| matches!(space_of(l), Space::Const | Space::KernelParam))
            .map(|&l| a.addr[l])
            .collect();
        let mut latency = 0u64;
        let mut occupancy = gpu.interval.mem;
        if !shared.is_empty() {
            let d = conflict_degree(&shared, gpu.shared.banks, gpu.shared.bank_bytes).max(1) as u64;
            self.memc.shared_instructions += 1;
            self.memc.shared_wavefronts += d;
            latency = latency.max(gpu.latency.shared + d - 1);
            occupancy = occupancy.max(d * gpu.interval.mem);
        }
        if !konst.is_empty() {
            let mut k = konst;
            k.sort_unstable();
            k.dedup();
            let d = k.len() as u64;
            latency = latency.max(gpu.latency.constant + d - 1);
            occupancy = occupancy.max(d * gpu.interval.mem);
        }
        // Global and local: through the L1.
        self.accesses.clear();
        let line_bytes = gpu.l1.line as u64;
        for &l in &lanes {
            match space_of(l) {
                Space::Global => self.accesses.push((a.addr[l], a.bytes)),
                Space::Local => {
                    // NVIDIA interleaves local memory so that one offset of a warp's lanes is contiguous.
                    let off = a.addr[l];
                    let key = (1u64 << 62)
                        | (slot << 48)
                        | (wi << 36)
                        | ((off & !3) * gpu.warp_size as u64 + (l as u64) * 4 + (off & 3));
                    self.accesses.push((key, a.bytes));
                }
                _ => {}
            }
        }
        if self.accesses.is_empty() {
            return (latency.max(1), occupancy, false, None);
        }
        let mut lines = std::mem::take(&mut self.lines);
        coalesce(&self.accesses, gpu.l1.line, gpu.l1.sector, &mut lines);
        self.memc.global_instructions += 1;
        self.memc.transactions += lines.len() as u64;
        self.memc.sectors += lines.iter().map(|r| r.sectors.count_ones() as u64).sum::<u64>();
        occupancy = occupancy.max(lines.len() as u64 * gpu.interval.mem);
        let is_local = self.accesses.first().is_some_and(|x| x.0 >> 62 == 1);
        let _ = line_bytes;
        let mut pending = false;
        let mut load = None;
        match a.kind {
            AccessKind::Load => {
                let mut ready = now + gpu.l1.hit_latency;
                let id = self.new_load(h, dst);
                let mut remaining = 0;
                for r in &lines {
                    self.memc.l1_accesses += 1;
                    if self.l1.lookup(r.line, now) {
                        self.memc.l1_hits += 1;
                        ready = ready.max(now + gpu.l1.hit_latency);
                        continue;
                    }
                    remaining += 1;
                    match self.mshr.add(r.line, id as u64) {
                        MshrResult::Merged => self.memc.l1_mshr_merges += 1,
                        MshrResult::Allocated => {
                            self.send(now + gpu.l1.hit_latency, r.line, r.sectors, ReqKind::Read, Some(r.line))
                        }
                        MshrResult::Full => {
                            self.memc.l1_mshr_full += 1;
                            self.miss_queue.push_back((r.line, r.sectors, id as u64));
                        }
                    }
                }
                if remaining == 0 {
                    self.loads[id] = None;
                    self.free_loads.push(id);
                    latency = latency.max(ready - now);
                } else {
                    if let Some(Some(t)) = self.loads.get_mut(id) {
                        t.remaining = remaining;
                        t.ready = ready;
                    }
                    if let Some(Some(w)) = self.warps.get_mut(h) {
                        w.pending_loads += 1;
                    }
                    pending = true;
                    load = Some(id);
                }
            }
            AccessKind::Store => {
                for r in &lines {
                    if is_local {
                        // Local memory is write-back cached in the L1.
                        if !self.l1.lookup(r.line, now) {
                            if let Some((victim, true)) = self.l1.fill(r.line, now) {
                                self.send(now, victim, 0, ReqKind::Write, None);
                            }
                        }
                        self.l1.mark_dirty(r.line);
                    } else {
                        // Global stores write through to the L2 and evict the L1 copy.
                        self.l1.invalidate(r.line);
                        self.send(now + gpu.l1.hit_latency, r.line, r.sectors, ReqKind::Write, None);
                    }
                }
                latency = latency.max(1);
            }
            AccessKind::Atomic => {
                let id = self.new_load(h, dst);
                for r in &lines {
                    self.l1.invalidate(r.line);
                    self.send(
                        now + gpu.l1.hit_latency,
                        r.line,
                        r.sectors,
                        ReqKind::Atomic,
                        Some(TOKEN_ATOMIC | id as u64),
                    );
                }
                if let Some(Some(t)) = self.loads.get_mut(id) {
                    t.remaining = lines.len() as u32;
                    t.ready = now;
                }
                if let Some(Some(w)) = self.warps.get_mut(h) {
                    w.pending_loads += 1;
                }
                pending = true;
                load = Some(id);
            }
        }
        self.lines = lines;
        (latency.max(1), occupancy, pending, load)
    }
}
