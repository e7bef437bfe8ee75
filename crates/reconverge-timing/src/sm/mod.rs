//! One SM in time: it drives the simulator's [`SmCore`] (resident CTAs, the divergence mechanism, the one
//! issue path) and decides *when* each issue context may issue: warp schedulers, per-thread pipeline and
//! scoreboard state, functional-unit intervals, the memory side (module `memory`). [`Sm::run_epoch`] advances
//! it over one epoch without touching anything shared but read-only device memory.

mod front;
mod memory;
mod memos;
mod packed;
mod times;

pub use memory::L2Request;

use crate::config::{Dispatch, GpuConfig, SchedulerPolicy};
use crate::gmem::{SmMemView, SmMemory};
use crate::opcode::{op_timings, OpTiming};
use crate::stats::{MemoryCounters, StallCounts};
use memory::{Issuer, LoadTrack, MemorySide};
use memos::Memos;
use reconverge_mechanism::{Blocked, Group, Peek, Tracker};
use reconverge_program::program::{InstClass, Op};
use reconverge_program::{LaneMask, LaunchConfig, Program};
use reconverge_sim::core::{IssueEnv, Jit, NoObserver, SmCore};
use reconverge_sim::memory::DeviceMemory;
use reconverge_sim::{SimError, Stats};
use smallvec::SmallVec;
use times::{row, CtaTimes};

/// Read-only context shared by all SMs during an epoch.
pub struct EpochCtx<'a> {
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

/// Why an issue context could not issue this cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Cause {
    Scoreboard,
    Memory,
    Pipeline,
    Mechanism,
    Barrier,
    Done,
}

/// Why a context cannot issue now, and until when.
#[derive(Clone, Copy, Debug)]
struct Wait {
    cause: Cause,
    /// The earliest cycle the condition may clear by itself (`u64::MAX`: only another event clears it).
    until: u64,
}

impl Wait {
    /// A wait of the lasting kind ([`Sm::lasting_checks`]): it holds until `until` unless an event of the
    /// context's CTA (an issue, a load's data) or of the mechanism's SM-wide state intervenes.
    fn lasting(cause: Cause, until: u64) -> Wait {
        Wait { cause, until }
    }
}

/// What the timing model remembers of a context's readiness (see [`Sm::asleep`]).
#[derive(Clone, Copy, Debug)]
enum Known {
    /// Nothing: ask.
    Unknown,
    /// It waits for `cause` until the cycle (a lasting [`Wait`]).
    Wait(u64, Cause),
    /// Its group's lasting conditions, each until when it holds: the first that holds at a cycle is the
    /// cause then; once none does, only its functional unit (and, for a memory instruction, the miss
    /// queue) remain to be checked.
    Lasting(Lasting),
}

/// The cycles until which each lasting condition of a context's group holds ([`Sm::lasting_checks`]),
/// in the order they are checked. They change only by the events that forget a [`Known`].
#[derive(Clone, Copy, Debug)]
struct Lasting {
    /// The mechanism holds a thread.
    mech: u64,
    /// A fence or barrier release holds a thread.
    fence: u64,
    /// The pipeline holds a thread.
    ready: u64,
    /// A thread has an outstanding miss (when misses block the warp).
    missing: bool,
    /// The group's registers and predicates are pending ([`Cause::Memory`] when one waits for data).
    regs: u64,
    /// The functional unit.
    unit: u8,
    /// A memory instruction.
    mem: bool,
    /// No condition held when they were last looked at: the context is known to wait only for its unit
    /// (and the front end). The first look at which none holds checks the front end before the unit.
    passed: bool,
}

impl Lasting {
    /// The first condition that holds at `now`, as a wait; `None` when none does.
    fn at(&self, now: u64) -> Option<Wait> {
        if self.mech > now {
            Some(Wait::lasting(Cause::Mechanism, self.mech))
        } else if self.fence > now {
            Some(Wait::lasting(Cause::Memory, self.fence))
        } else if self.ready > now {
            Some(Wait::lasting(Cause::Pipeline, self.ready))
        } else if self.missing {
            Some(Wait::lasting(Cause::Memory, u64::MAX))
        } else if self.regs > now {
            let cause = if self.regs == u64::MAX { Cause::Memory } else { Cause::Scoreboard };
            Some(Wait::lasting(cause, self.regs))
        } else {
            None
        }
    }
}

/// What a scheduler's last scan found when none of its contexts was ready ([`Sm::dozing`]): it finds the
/// same on every cycle before `until` unless an event changes what it saw.
#[derive(Clone, Copy, Debug)]
struct Doze {
    /// The earliest cycle one of its contexts may become ready by itself (`u64::MAX`: none may).
    until: u64,
    /// The idle cycles' cause.
    cause: Option<Cause>,
    /// The pc charged with them ([`Sm::pc_stalls`]).
    pc: u32,
    /// Whether the miss queue was full (a memory instruction's last check).
    full: bool,
}

/// What an epoch did.
#[derive(Debug, Default)]
pub struct EpochOutcome {
    /// Instructions issued.
    pub issued: u64,
    /// Whether any value changed (livelock detection).
    pub changed: bool,
    /// The first error and its cycle.
    pub error: Option<(u64, SimError)>,
    /// When nothing issued at the epoch's end: the earliest cycle at which a context may become ready by
    /// itself (a latency, a fence, a mechanism stall); `u64::MAX` when none can without a memory response
    /// or another thread's action (a barrier, a SIMT deadlock).
    pub wake: u64,
}

/// A resident CTA's resources and timing state.
struct CtaRes {
    threads: u32,
    warps: u32,
    regs: u32,
    shared: u32,
    /// Distinguishes successive CTAs of one slot (a late load response of a retired CTA is dropped).
    generation: u64,
    times: CtaTimes,
}

/// One SM.
pub struct Sm<'a, T: Tracker> {
    /// SM index.
    pub id: u32,
    core: SmCore<'a, T>,
    gpu: &'a GpuConfig,
    res: Vec<Option<CtaRes>>,
    used: [u32; 4],
    regs_per_thread: u32,
    /// Issue contexts per CTA (every CTA of a launch has the same shape).
    nctx: u32,
    ages: Vec<u64>,
    next_age: u64,
    generation: u64,
    /// When each functional unit is next free ([`Units`]).
    fu: Units,
    last_issued: Vec<Option<u32>>,
    active: Vec<Vec<u32>>,
    /// Global writes of this epoch.
    pub mem: SmMemory,
    memory: MemorySide,
    /// Idle scheduler-cycles by cause.
    pub stalls: StallCounts,
    /// Issue slots while busy.
    pub issue_slots: u64,
    /// Issues from one path of a warp while another of its paths waited on latency.
    pub latency_hiding_issues: u64,
    /// Issues in a cycle after the scheduler's first, from another hardware warp (`Sm::pack`).
    pub warp_co_issues: u64,
    /// Thread-instructions that occupied a datapath lane ([`crate::TimingStats::lane_ops`]).
    pub lane_ops: u64,
    /// Lanes by unit and register-file accesses ([`crate::TimingStats::datapath`]; the instruction fetches
    /// are added by [`Sm::datapath`]).
    datapath: crate::stats::DatapathActivity,
    /// Cycles with resident work.
    pub busy_cycles: u64,
    /// The last cycle with resident work.
    pub last_busy: Option<u64>,
    /// The last cycle a store of this SM was accepted by the L2.
    pub last_store_ack: u64,
    /// CTAs that finished here.
    pub finished_ctas: u64,
    /// The SM's port to the interconnect (`l2.sm_port_sectors_per_cycle`), when limited.
    pub port: Option<crate::memsys::Bandwidth>,
    done_loads: Vec<LoadTrack>,
    /// Scratch for the occupied contexts of a CTA.
    occupied: std::cell::RefCell<Vec<u32>>,
    /// Per context (`cta * nctx + ctx`): what its last readiness check established that only time or an
    /// event can change ([`Known`]); cleared by every event that could change it (an issue or a load's
    /// data in the context's CTA, any issue when the mechanism keeps SM-wide state, launches,
    /// retirements, epochs).
    asleep: Memos,
    /// Per scheduler: what its last scan found when nothing was ready, while nothing it saw has changed
    /// (skipping the scan then changes no result). Kept only from a scan after which the next would ask
    /// every context the same way ([`Sm::remembered`] unchanged: no context was found past its lasting
    /// conditions for the first time), forgotten by every event that forgets a remembered readiness of one
    /// of its contexts and by every response delivered, and void once the miss queue fills or empties
    /// ([`Doze::full`]). A functional unit another scheduler takes meanwhile only changes when its
    /// contexts' unit waits end, never the cause: a scheduler woken early scans again.
    dozing: Vec<Option<Doze>>,
    /// Counts the memos that change how a context is checked next ([`Sm::remember`]): a group found past
    /// its lasting conditions checks its unit before the front end from then on. A memo of a lasting wait
    /// answers the next checks as the scan that made it was answered, until the wait's cycle, which ends a
    /// doze ([`Doze::until`]) anyway, and the front-end check that came before it (on a context's first
    /// look) is not repeated by a remembered answer either.
    remembered: u64,
    /// The scheduler of each context while [`Sm::fixed_candidates`] holds (a context's own issue then
    /// forgets only that scheduler's [`Sm::dozing`]).
    sched_of: Vec<u8>,
    /// Each scheduler's contexts in context order, while the set of contexts cannot change but by
    /// launches and retirements ([`Tracker::PER_WARP_CONTEXTS`]); rebuilt after those.
    fixed_candidates: Option<Vec<SmallVec<[u32; 64]>>>,
    /// Whether [`Sm::fixed_candidates`] are kept in the order of their ages (the oldest-first policies):
    /// sorting them again each cycle would change nothing.
    fixed_by_age: bool,
    /// Counts the rebuilds of [`Sm::fixed_candidates`] (a scheduler's order made from older lists is stale).
    candidates_version: u64,
    /// Whether two contexts of a resident CTA may share a hardware warp (paths of one warp under a
    /// parallel traversal): only then can an issue hide another path's latency ([`Sm::other_path_waits`]).
    shared_warps: bool,
    /// The timeline recorder, when one was asked for.
    pub trace: Option<crate::trace::SmTrace>,
    /// The idle scheduler-cycles charged to pcs, when asked for ([`crate::Record::pc_stalls`]).
    pub pc_stalls: Option<crate::per_pc::PcStalls>,
    /// Each pc's executions, when asked for ([`crate::Record::pc_counts`]).
    pub pc_counts: Option<crate::per_pc::PcCounter>,
    /// Each pc's latency, unit occupancy and unit ([`crate::opcode`]).
    timings: Vec<OpTiming>,
    /// Instruction fetch ([`front`]).
    front: front::Front,
    /// Static warps per CTA.
    wpc: usize,
    /// The timing state of every CTA's threads when the mechanism regroups threads across CTAs
    /// ([`Tracker::SM_POOL`]; each [`CtaRes`] then keeps none).
    sm_times: Option<CtaTimes>,
    /// Threads per warp: the lanes one lane-packed issue fills ([`Tracker::LANE_PACKED`]).
    warp_size: u32,
    /// A lane-packed issue is adding a group to the cycle's first: it occupies no functional unit of its
    /// own ([`Sm::pack`]).
    packing: bool,
    /// A thread exited since the last retirement: a CTA may have finished (only exits finish one).
    exited: bool,
}

/// Fetches the SM's front end takes per cycle under mechanism `T` ([`front::Front::new`]).
fn fetches_per_cycle<T: Tracker>() -> u32 {
    if T::LANE_PACKED {
        0
    } else if T::CO_ISSUE_PATHS || T::CO_ISSUE_WARPS {
        2
    } else {
        1
    }
}

impl<'a, T: Tracker> Sm<'a, T> {
    /// An empty SM.
    pub fn new(
        id: u32,
        gpu: &'a GpuConfig,
        prog: &'a Program,
        tracker: &'a T,
        launch: &'a LaunchConfig,
    ) -> Result<Sm<'a, T>, crate::error::StructureError> {
        let nsched = gpu.sm.schedulers as usize;
        let regs_per_thread = gpu.launch_registers_per_thread(prog, launch.threads_per_cta(), launch.warp_size);
        let nthreads = launch.threads_per_cta();
        let nctx = tracker.contexts(nthreads.div_ceil(launch.warp_size), nthreads);
        let mut core = SmCore::new(prog, tracker, launch, id, gpu.num_sms);
        // Values through the functional mode's compiled segments: pure lane instructions execute when their
        // registers are next needed, which changes no result ([`SmCore::defer_pure_instructions`]).
        if let Some(jit) = Jit::for_policy(prog, (core.warps_per_cta(), launch.warp_size), launch.host.jit) {
            core.defer_pure_instructions(jit);
        }
        Ok(Sm {
            id,
            core,
            gpu,
            res: Vec::new(),
            used: [0; 4],
            regs_per_thread,
            nctx,
            ages: Vec::new(),
            next_age: 0,
            generation: 0,
            fu: Units::new(gpu),
            last_issued: vec![None; nsched],
            active: vec![Vec::new(); nsched],
            mem: SmMemory::default(),
            memory: MemorySide::new(gpu)?,
            stalls: StallCounts::default(),
            issue_slots: 0,
            latency_hiding_issues: 0,
            warp_co_issues: 0,
            lane_ops: 0,
            datapath: crate::stats::DatapathActivity::default(),
            busy_cycles: 0,
            last_busy: None,
            last_store_ack: 0,
            finished_ctas: 0,
            port: (gpu.l2.sm_port_sectors_per_cycle > 0)
                .then(|| crate::memsys::Bandwidth::new(gpu.l2.sm_port_sectors_per_cycle, 1))
                .transpose()?,
            done_loads: Vec::new(),
            occupied: Default::default(),
            asleep: Memos::default(),
            dozing: vec![None; nsched],
            sched_of: Vec::new(),
            remembered: 0,
            fixed_candidates: None,
            fixed_by_age: false,
            candidates_version: 0,
            shared_warps: true,
            trace: None,
            pc_stalls: None,
            pc_counts: None,
            timings: scalar_unit_timings(op_timings(prog, gpu), prog, gpu),
            front: front::Front::new(gpu, fetches_per_cycle::<T>())?,
            wpc: nthreads.div_ceil(launch.warp_size.max(1)) as usize,
            sm_times: T::SM_POOL
                .then(|| CtaTimes::new(0, launch.warp_size as usize, prog.nregs as usize, prog.npreds as usize)),
            warp_size: launch.warp_size,
            packing: false,
            exited: false,
        })
    }

    /// The functional core (for reports and statistics).
    pub fn core(&self) -> &SmCore<'a, T> {
        &self.core
    }

    /// The livelock watchdog started watching: forget the core's per-thread counts.
    pub fn reset_quiet(&mut self) {
        self.core.reset_quiet();
    }

    /// Functional statistics of the CTAs run here.
    pub fn stats(&self) -> &Stats {
        self.core.stats()
    }

    /// Memory counters.
    pub fn memory_counters(&self) -> &MemoryCounters {
        &self.memory.counters
    }

    /// Counts an issued instruction's lane operations ([`Sm::lane_ops`]), lanes by unit and register
    /// accesses ([`crate::stats::DatapathActivity`]): one
    /// issued spatially (to the warp-wide SIMD datapath, not one lane at a time: temporal SIMT, or a scalar
    /// instruction on a scalar unit or lane) leaves its masked lanes idle in the datapath.
    fn count_datapath(
        &mut self,
        info: &reconverge_program::program::InstInfo,
        mask: LaneMask,
        lanes: u64,
        scalar: bool,
    ) {
        let spatial = match self.gpu.sm.dispatch {
            Dispatch::Temporal => false,
            Dispatch::ScalarUnit | Dispatch::ScalarLane => !scalar,
            Dispatch::Spatial => true,
        };
        let idle = if spatial { u64::from(self.warp_size).saturating_sub(u64::from(mask.count_ones())) } else { 0 };
        self.lane_ops += lanes;
        self.datapath.issue(info.class, lanes, idle, info.reads.len() as u64, info.writes.len() as u64);
    }

    /// The datapath's activity, instruction fetches included.
    pub fn datapath(&self) -> crate::stats::DatapathActivity {
        let mut d = self.datapath.clone();
        d.icache_fetches = self.front.fetches;
        d.icache_misses = self.front.misses;
        d
    }

    /// Requests for the L2 made this epoch.
    pub fn take_outbox(&mut self) -> Vec<L2Request> {
        std::mem::take(&mut self.memory.outbox)
    }

    /// Registers per thread this SM assumes for the kernel.
    pub fn regs_per_thread(&self) -> u32 {
        self.regs_per_thread
    }

    /// Whether the SM holds any CTA.
    pub fn has_work(&self) -> bool {
        self.core.has_work()
    }

    /// Whether responses are still outstanding.
    pub fn has_pending_memory(&self) -> bool {
        self.memory.pending()
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
    pub fn fits(&self, prog: &Program, launch: &LaunchConfig) -> bool {
        let (t, w, r, s) = self.cta_demand(prog, launch);
        let sm = &self.gpu.sm;
        self.core.resident() < sm.max_ctas as usize
            && self.used[0] + t <= sm.max_threads
            && self.used[1] + w <= sm.max_warps
            && self.used[2] + r <= sm.registers
            && self.used[3] + s <= sm.shared_memory
    }

    /// Launches CTA `linear` here at cycle `now`.
    pub fn launch(&mut self, prog: &Program, launch: &LaunchConfig, linear: u64) {
        let (threads, warps, regs, shared) = self.cta_demand(prog, launch);
        let c = self.core.launch(linear);
        if self.res.len() <= c {
            self.res.resize_with(c + 1, || None);
        }
        self.generation += 1;
        let (w, nregs, npreds) = (launch.warp_size as usize, prog.nregs as usize, prog.npreds as usize);
        let times = match &mut self.sm_times {
            Some(t) => {
                t.cover((c + 1) * self.wpc, c * self.wpc..(c + 1) * self.wpc);
                CtaTimes::new(0, w, 0, 0)
            }
            None => CtaTimes::new(warps as usize, w, nregs, npreds),
        };
        self.res[c] = Some(CtaRes { threads, warps, regs, shared, generation: self.generation, times });
        let n = (c + 1) * self.nctx as usize;
        if self.ages.len() < n {
            self.ages.resize(n, u64::MAX);
        }
        for k in 0..self.nctx as usize {
            self.ages[c * self.nctx as usize + k] = self.next_age;
            self.next_age += 1;
        }
        for (u, x) in self.used.iter_mut().zip([threads, warps, regs, shared]) {
            *u += x;
        }
        let n = self.nctx as usize;
        self.front.reset(c * n..(c + 1) * n);
        if let Some(r) = self.pc_stalls.as_mut() {
            r.launched(c * n..(c + 1) * n);
        }
        self.refresh_candidates();
    }

    /// Writes an atomic's old value (applied at the epoch end) into the issuing thread's register.
    pub fn write_register(&mut self, cta_slot: u32, thread: u32, reg: u32, value: u64) -> Result<(), SimError> {
        self.core.write_register(cta_slot as usize, thread, reg, value)
    }

    /// Queues an L2 response arriving at `cycle`.
    pub fn deliver(&mut self, cycle: u64, token: u64) {
        self.memory.deliver(cycle, token);
    }

    /// Frees the slots of finished CTAs.
    pub fn retire(&mut self) {
        self.exited = false;
        let retired = self.core.retire();
        self.finished_ctas += retired.len() as u64;
        if !retired.is_empty() {
            self.refresh_candidates();
        }
        for c in retired {
            if let Some(r) = self.res.get_mut(c).and_then(Option::take) {
                for (u, x) in self.used.iter_mut().zip([r.threads, r.warps, r.regs, r.shared]) {
                    *u -= x;
                }
            }
            let nctx = self.nctx;
            for a in self.active.iter_mut() {
                a.retain(|&g| g / nctx != c as u32);
            }
        }
    }

    /// Delivers the responses due at `now` and completes the loads they finish and the instruction fetches
    /// they answer.
    fn deliver_due(&mut self, now: u64) {
        let mut done = std::mem::take(&mut self.done_loads);
        if self.memory.next_response().is_some_and(|c| c <= now) {
            // A response may change what any scheduler's scan finds (the miss queue, the caches).
            self.dozing.fill(None);
        }
        self.memory.deliver_due(now, self.gpu, &mut done);
        for t in done.drain(..) {
            self.finish_load(t);
        }
        self.done_loads = done;
        if !self.memory.inst_fills.is_empty() {
            let mut woken = Vec::new();
            for (cycle, addr) in std::mem::take(&mut self.memory.inst_fills) {
                self.front.fill(addr, cycle, &mut woken);
            }
            for g in woken {
                self.forget(g);
            }
        }
    }

    /// A load's data arrived: its destination registers are ready, its miss is over.
    fn finish_load(&mut self, t: LoadTrack) {
        let ready = t.ready;
        // Only threads whose CTA was resident when the load issued (its slot's CTA launched no later):
        // a late response for a retired CTA's threads is dropped.
        let current =
            |slot: usize| self.res.get(slot).and_then(Option::as_ref).is_some_and(|r| r.generation <= t.generation);
        let parts: SmallVec<[(u32, LaneMask); 2]> = if T::SM_POOL {
            t.parts.iter().copied().filter(|p| current(p.0 as usize / self.wpc.max(1))).collect()
        } else if current(t.cta) {
            t.parts.clone()
        } else {
            SmallVec::new()
        };
        if parts.is_empty() {
            return;
        }
        if T::PER_WARP_CONTEXTS && !T::SM_POOL && std::mem::size_of::<T::Sm>() == 0 {
            // Only the contexts of the load's warps (a per-warp mechanism's contexts are the static warps).
            let base = t.cta as u32 * self.nctx;
            for &(w, _) in &parts {
                self.forget(base + w);
            }
        } else {
            self.wake_cta(t.cta);
        }
        let Some(times) = self.times_mut(t.cta) else { return };
        let all: LaneMask = u64::MAX;
        for &reg in &t.regs {
            times.regs.set(reg as usize, &parts, all, ready);
            times.regs.refresh(reg as usize, &parts);
        }
        times.add_misses(&parts, all, false);
    }

    /// The timing state of CTA slot `c`'s threads (for an SM-wide mechanism, every CTA's, whether or not
    /// slot `c` still holds a CTA: a load of a retired CTA's pool warp may have been for other CTAs).
    fn times(&self, c: usize) -> Option<&CtaTimes> {
        match &self.sm_times {
            Some(t) => Some(t),
            None => self.res.get(c).and_then(Option::as_ref).map(|r| &r.times),
        }
    }

    /// [`Sm::times`], mutable.
    fn times_mut(&mut self, c: usize) -> Option<&mut CtaTimes> {
        times_in(&mut self.res, &mut self.sm_times, c)
    }

    /// The warps of CTA slot `c` in its timing state ([`Sm::times`]).
    fn own_warps(&self, c: usize) -> std::ops::Range<usize> {
        match &self.sm_times {
            Some(_) => c * self.wpc..(c + 1) * self.wpc,
            None => 0..self.times(c).map_or(0, CtaTimes::nwarps),
        }
    }

    /// Whether context `g` may issue at `now`: its group, or why not and when that may change.
    fn readiness(&self, g: u32, now: u64, sched: usize) -> Result<Group, Wait> {
        let (grp, unit, mem) = self.lasting_checks(g, now)?;
        self.unit_checks(sched, unit, mem, now)?;
        Ok(grp)
    }

    /// The checks whose outcome only time or an event of the context's CTA changes: the mechanism has a
    /// group; its threads are not held by the mechanism, a fence or the pipeline, have no outstanding miss
    /// (when misses block) and their registers are ready. Returns the group, its unit and whether it
    /// accesses memory.
    fn lasting_checks(&self, g: u32, now: u64) -> Result<(Group, usize, bool), Wait> {
        let (c, ctx) = ((g / self.nctx) as usize, g % self.nctx);
        self.lasting_checks_of(c, self.core.peek(c, ctx), now)
    }

    /// [`Sm::lasting_checks`] of a context of CTA slot `c` that holds `peek`.
    fn lasting_checks_of(&self, c: usize, peek: Peek, now: u64) -> Result<(Group, usize, bool), Wait> {
        let (grp, l) = self.lasting_of(c, peek, now)?;
        match l.at(now) {
            Some(w) => Err(w),
            None => Ok((grp, usize::from(l.unit), l.mem)),
        }
    }

    /// The lasting conditions of a context of CTA slot `c` that holds `peek`, each until when it holds
    /// ([`Lasting`]; a time not after `now` counts as 0, since it is asked about `now` and later); a
    /// context without a group waits until an event.
    fn lasting_of(&self, c: usize, peek: Peek, now: u64) -> Result<(Group, Lasting), Wait> {
        let grp = match peek {
            Peek::Ready(grp) => grp,
            Peek::Blocked(Blocked::Barrier) => return Err(Wait::lasting(Cause::Barrier, u64::MAX)),
            Peek::Blocked(Blocked::Mechanism) => return Err(Wait::lasting(Cause::Mechanism, u64::MAX)),
            Peek::Empty => return Err(Wait::lasting(Cause::Done, u64::MAX)),
        };
        let Some(t) = self.times(c) else {
            return Err(Wait::lasting(Cause::Done, u64::MAX));
        };
        let (parts, hold) = (grp.lanes.parts(), grp.hold);
        let row = |r: usize| t.threads.pending(r, parts, hold, now).unwrap_or(0);
        let mut l = Lasting {
            mech: row(row::MECH),
            fence: row(row::FENCE),
            ready: row(row::READY),
            missing: self.gpu.sm.miss_blocks_warp && t.missing(parts, hold),
            regs: 0,
            unit: self.timings[grp.pc as usize].unit,
            mem: false,
            passed: false,
        };
        let prog = self.core.program();
        let Some(info) = prog.info.get(grp.pc as usize) else { return Ok((grp, Lasting { unit: 0, ..l })) };
        for &reg in info.reads.iter().chain(info.writes.iter()) {
            l.regs = l.regs.max(t.regs.pending(reg as usize, parts, hold, now).unwrap_or(0));
        }
        for &p in info.pred_reads.iter().chain(info.pred_writes.iter()) {
            l.regs = l.regs.max(t.pred(p, parts));
        }
        l.mem = info.class == InstClass::Mem;
        Ok((grp, l))
    }

    /// The checks other contexts' issues change: scheduler `sched`'s functional unit `unit` is free, and
    /// for a memory instruction the miss queue has room.
    fn unit_checks(&self, sched: usize, unit: usize, mem: bool, now: u64) -> Result<(), Wait> {
        let free = self.fu.free_at(sched, unit);
        if free > now {
            return Err(Wait { cause: Cause::Pipeline, until: free });
        }
        if mem && self.memory.miss_queue_full() {
            return Err(Wait { cause: Cause::Memory, until: u64::MAX });
        }
        Ok(())
    }

    /// [`Sm::readiness`], answered from [`Sm::asleep`] as far as it holds (and remembered): a lasting
    /// wait until its cycle, a group that passed the lasting checks until an event of its CTA.
    fn readiness_cached(&mut self, g: u32, now: u64, sched: usize) -> Result<Group, Wait> {
        if let Some(w) = self.asleep.waiting(g, now) {
            return Err(w);
        }
        match self.asleep.get(g) {
            Known::Wait(until, cause) if until > now => {
                let w = Wait::lasting(cause, until);
                self.asleep.answered(g, w);
                return Err(w);
            }
            Known::Lasting(l) => {
                if let Some(w) = l.at(now) {
                    self.asleep.answered(g, w);
                    return Err(w);
                }
                let (c, ctx) = ((g / self.nctx) as usize, g % self.nctx);
                if !l.passed {
                    self.remember(g, Known::Lasting(Lasting { passed: true, ..l }));
                    if let Peek::Ready(grp) = self.core.peek(c, ctx) {
                        self.fetched(g, grp.pc, now)?;
                        self.unit_checks(sched, usize::from(l.unit), l.mem, now)?;
                        return Ok(grp);
                    }
                }
                self.unit_checks(sched, usize::from(l.unit), l.mem, now)?;
                if let Peek::Ready(grp) = self.core.peek(c, ctx) {
                    self.fetched(g, grp.pc, now)?;
                    return Ok(grp);
                }
            }
            _ => {}
        }
        // The front end first: a context waiting on a register still has its next instructions fetched.
        let (c, ctx) = ((g / self.nctx) as usize, g % self.nctx);
        let peek = self.core.peek(c, ctx);
        let fetched = match &peek {
            Peek::Ready(grp) if self.front.enabled() => self.fetched(g, grp.pc, now),
            _ => Ok(()),
        };
        match self.lasting_of(c, peek, now) {
            Ok((grp, l)) => {
                let wait = l.at(now);
                self.remember(g, Known::Lasting(Lasting { passed: wait.is_none(), ..l }));
                if let Some(w) = wait {
                    self.asleep.answered(g, w);
                    return Err(w);
                }
                fetched?;
                self.unit_checks(sched, usize::from(l.unit), l.mem, now)?;
                Ok(grp)
            }
            Err(w) => {
                self.remember(g, Known::Wait(w.until, w.cause));
                Err(w)
            }
        }
    }

    /// Whether context `g`'s instruction at `pc` is fetched and decoded ([`front::Front::check`]); a fetch
    /// it starts that misses goes to the memory system.
    fn fetched(&mut self, g: u32, pc: u32, now: u64) -> Result<(), Wait> {
        let r = self.front.check(g, pc, now);
        for (cycle, addr) in self.front.requests.drain(..) {
            self.memory.send_inst(cycle, addr);
        }
        r.map_err(|until| Wait { cause: Cause::Pipeline, until })
    }

    fn remember(&mut self, g: u32, k: Known) {
        if matches!(k, Known::Lasting(Lasting { passed: true, .. })) {
            self.remembered += 1;
        }
        self.asleep.set(g, k);
    }

    /// Forgets the remembered readiness of context `g`, and the remembered scan of its scheduler.
    fn forget(&mut self, g: u32) {
        self.asleep.forget(g);
        match self.sched_of.get(g as usize).and_then(|&s| self.dozing.get_mut(usize::from(s))) {
            Some(d) => *d = None,
            None => self.dozing.fill(None),
        }
    }

    /// Forgets the remembered readiness of CTA slot `c`'s contexts (of every context when the mechanism
    /// keeps SM-wide state, which an issue anywhere may change).
    fn wake_cta(&mut self, c: usize) {
        self.dozing.fill(None);
        if std::mem::size_of::<T::Sm>() != 0 {
            self.asleep.clear();
            return;
        }
        let n = self.nctx as usize;
        self.asleep.forget_range(c * n, (c + 1) * n);
    }

    /// Whether another context of `g`'s hardware warp (another path of the same warp, under a parallel
    /// traversal) has an instruction waiting on a register dependence or memory at `now`.
    fn other_path_waits(&self, g: u32, order: &[u32], now: u64, sched: usize) -> bool {
        if !self.shared_warps {
            return false;
        }
        let c = (g / self.nctx) as usize;
        let warp = self.core.hw_warp(c, g % self.nctx);
        order.iter().any(|&o| {
            o != g
                && (o / self.nctx) as usize == c
                && self.core.hw_warp(c, o % self.nctx) == warp
                && matches!(self.readiness(o, now, sched), Err(Wait { cause: Cause::Scoreboard | Cause::Memory, .. }))
        })
    }

    /// The contexts of scheduler `s`, in the order it considers them.
    fn candidates(&self, s: usize, nsched: usize, policy: SchedulerPolicy, out: &mut SmallVec<[u32; 64]>) {
        out.clear();
        match &self.fixed_candidates {
            Some(fixed) if self.fixed_by_age && policy == SchedulerPolicy::Gto => {
                // Already by age: the last issued first, then the others in order.
                out.extend_from_slice(&fixed[s]);
                if let Some(p) = self.last_issued[s].and_then(|l| out.iter().position(|&g| g == l)) {
                    out[..=p].rotate_right(1);
                }
                return;
            }
            Some(fixed) => out.extend_from_slice(&fixed[s]),
            None => self.occupied_contexts(s, nsched, out),
        }
        if out.is_empty() {
            return;
        }
        self.order_candidates(s, policy, out);
    }

    /// The contexts of scheduler `s` that may hold a group now, in context order.
    fn occupied_contexts(&self, s: usize, nsched: usize, out: &mut SmallVec<[u32; 64]>) {
        let mut occupied = std::mem::take(&mut *self.occupied.borrow_mut());
        // A context's scheduler is that of the hardware warp slot it occupies: CTA slot `c` owns warp
        // slots `c * warps_per_cta ..`, and its issue contexts (static warps, dynamic warps, pool
        // warps) fill them in order, so regrouped warps spread over the schedulers as warps do.
        let per_cta = self.core.warps_per_cta() as usize;
        for c in 0..self.core.cta_slots() {
            let base = c as u32 * self.nctx;
            occupied.clear();
            self.core.occupied(c, &mut occupied);
            for &k in &occupied {
                if (c * per_cta + self.core.hw_warp(c, k) as usize) % nsched == s {
                    out.push(base + k);
                }
            }
        }
        *self.occupied.borrow_mut() = occupied;
    }

    /// Recomputes [`Sm::fixed_candidates`] (after the resident CTAs changed).
    fn refresh_candidates(&mut self) {
        self.asleep.clear();
        self.dozing.fill(None);
        self.sched_of.clear();
        self.shared_warps = self.contexts_share_warps();
        if !T::PER_WARP_CONTEXTS {
            return;
        }
        let nsched = self.gpu.sm.schedulers as usize;
        // The oldest-first order of a greedy scheduler depends only on the ages, which change only here.
        let by_age = !T::ORDERED && self.gpu.sm.scheduler == SchedulerPolicy::Gto;
        let lists: Vec<SmallVec<[u32; 64]>> = (0..nsched)
            .map(|s| {
                let mut v = SmallVec::new();
                self.occupied_contexts(s, nsched, &mut v);
                if by_age {
                    v.sort_by_key(|&g| self.ages.get(g as usize).copied().unwrap_or(u64::MAX));
                }
                v
            })
            .collect();
        for (s, list) in lists.iter().enumerate() {
            for &g in list {
                if self.sched_of.len() <= g as usize {
                    self.sched_of.resize(g as usize + 1, u8::MAX);
                }
                self.sched_of[g as usize] = s as u8;
            }
        }
        self.fixed_candidates = Some(lists);
        self.fixed_by_age = by_age;
        self.candidates_version += 1;
    }

    /// Whether two contexts of one resident CTA occupy the same hardware warp ([`Sm::shared_warps`]; a
    /// CTA's mapping of contexts to hardware warps is fixed at its launch).
    fn contexts_share_warps(&self) -> bool {
        let mut seen = Vec::new();
        (0..self.core.cta_slots()).any(|c| {
            if self.res.get(c).and_then(Option::as_ref).is_none() {
                return false;
            }
            seen.clear();
            seen.extend((0..self.nctx).map(|k| self.core.hw_warp(c, k)));
            seen.sort_unstable();
            seen.windows(2).any(|w| w[0] == w[1])
        })
    }

    /// Orders scheduler `s`'s contexts as its policy considers them.
    fn order_candidates(&self, s: usize, policy: SchedulerPolicy, out: &mut SmallVec<[u32; 64]>) {
        if T::ORDERED {
            // The mechanism's issue order (DWF's heuristics); contexts without a ready group last.
            let key = |g: u32| match self.core.peek((g / self.nctx) as usize, g % self.nctx) {
                Peek::Ready(grp) => (0u8, grp.prio, g),
                _ => (1, 0, g),
            };
            out.sort_by_cached_key(|&g| key(g));
            return;
        }
        match policy {
            SchedulerPolicy::Lrr => {
                if let Some(l) = self.last_issued[s] {
                    let start = out.iter().position(|&g| g > l).unwrap_or(0);
                    out.rotate_left(start);
                }
            }
            SchedulerPolicy::Gto => {
                out.sort_by_key(|&g| self.ages.get(g as usize).copied().unwrap_or(u64::MAX));
                if let Some(l) = self.last_issued[s] {
                    if let Some(p) = out.iter().position(|&g| g == l) {
                        let x = out.remove(p);
                        out.insert(0, x);
                    }
                }
            }
            SchedulerPolicy::CtaOldest => {
                if let Some(l) = self.last_issued[s] {
                    let start = out.iter().position(|&g| g > l).unwrap_or(0);
                    out.rotate_left(start);
                }
                // Stable: round-robin order within a CTA; the CTA's age is its first context's.
                let n = self.nctx as usize;
                out.sort_by_key(|&g| self.ages.get(g as usize / n * n).copied().unwrap_or(u64::MAX));
            }
            SchedulerPolicy::TwoLevel => {
                // Active set first (round robin after the last issued), then the pending pool by age.
                let active = &self.active[s];
                let start = match self.last_issued[s] {
                    Some(l) => active.iter().position(|&g| g == l).map(|p| p + 1).unwrap_or(0),
                    None => 0,
                };
                let start = start.min(active.len());
                let mut order: SmallVec<[u32; 64]> =
                    active[start..].iter().chain(active[..start].iter()).copied().filter(|g| out.contains(g)).collect();
                let mut pending: SmallVec<[u32; 64]> = out.iter().copied().filter(|g| !order.contains(g)).collect();
                pending.sort_by_key(|&g| self.ages.get(g as usize).copied().unwrap_or(u64::MAX));
                order.extend(pending);
                *out = order;
            }
        }
    }

    /// Advances the SM over cycles `t0..t1`.
    pub fn run_epoch(&mut self, t0: u64, t1: u64, ctx: &EpochCtx<'_>) -> EpochOutcome {
        let mut out = EpochOutcome { wake: u64::MAX, ..EpochOutcome::default() };
        let nsched = self.gpu.sm.schedulers as usize;
        let policy = self.gpu.sm.scheduler;
        // Each scheduler's order of its contexts, and what it was made from when that alone decides it
        // (the fixed lists by age, and the last issued context of a greedy scheduler).
        let mut orders: SmallVec<[SchedulerOrder; 4]> = (0..nsched).map(|_| (SmallVec::new(), None)).collect();
        let mut cycle = SchedulerCycle::new(nsched);
        // Global writes and atomics were performed at the last epoch's end.
        self.asleep.clear();
        self.dozing.fill(None);
        let mut t = t0;
        while t < t1 {
            if let Some(max) = ctx.max_cycles {
                if t >= max {
                    out.error = Some((t, SimError::Limit(reconverge_sim::RunLimit::Cycles(max))));
                    return out;
                }
            }
            self.deliver_due(t);
            if !self.has_work() {
                // Idle: jump to the next response or the epoch end.
                t = self.memory.next_response().unwrap_or(t1).clamp(t + 1, t1);
                continue;
            }
            self.busy_cycles += 1;
            self.last_busy = Some(t);
            self.issue_slots += nsched as u64;
            cycle.reset();
            for (s, (order, made_for)) in orders.iter_mut().enumerate() {
                let full = self.memory.miss_queue_full();
                if let Some(d) = self.dozing[s].filter(|d| d.until > t && d.full == full) {
                    // Nothing this scheduler's last scan saw has changed since: it would find the same.
                    (cycle.causes[s], cycle.pcs[s], cycle.wake) = (d.cause, d.pc, cycle.wake.min(d.until));
                    continue;
                }
                let key = (self.fixed_by_age && policy == SchedulerPolicy::Gto)
                    .then_some((self.candidates_version, self.last_issued[s]));
                if key.is_none() || *made_for != key {
                    self.candidates(s, nsched, policy, order);
                    *made_for = key;
                }
                let order: &[u32] = order;
                let chosen = self.scan(s, order, t, &mut cycle);
                if let Some((g, grp)) = chosen {
                    if self.other_path_waits(g, order, t, s) {
                        self.latency_hiding_issues += 1;
                    }
                    match self.issue_one(g, &grp, s, t, ctx, &mut out) {
                        Ok((busy, structure)) => self.trace_issue(g, &grp, s, t, busy, structure),
                        Err(e) => {
                            out.error = Some((t, e));
                            return out;
                        }
                    }
                    cycle.issued[s] = true;
                    out.issued += 1;
                    self.last_issued[s] = Some(g);
                    if T::LANE_PACKED || T::CO_ISSUE_PATHS || T::CO_ISSUE_WARPS {
                        if let Err(e) = self.pack(order, (g, &grp), (s, t), ctx, &mut out) {
                            out.error = Some((t, e));
                            return out;
                        }
                    }
                    if policy == SchedulerPolicy::TwoLevel && !self.active[s].contains(&g) {
                        if self.active[s].len() >= self.gpu.sm.two_level_active as usize {
                            self.active[s].remove(0);
                        }
                        self.active[s].push(g);
                    }
                }
            }
            t = self.account_cycle(t, t1, &cycle, &mut out);
        }
        out
    }

    /// Scheduler `s`'s look at its contexts in `order` at `t`: the first ready one, or (none ready) the
    /// cycle's cause, pc and wake in `cycle`, remembered in [`Sm::dozing`] until something it saw changes.
    fn scan(&mut self, s: usize, order: &[u32], t: u64, cycle: &mut SchedulerCycle) -> Option<(u32, Group)> {
        let policy = self.gpu.sm.scheduler;
        // The cycle's cause and the first context that gave it, and the earliest wake of this scheduler.
        let mut best: Option<(Cause, u32)> = None;
        let mut wake = u64::MAX;
        let remembered = self.remembered;
        for &g in order {
            match self.readiness_cached(g, t, s) {
                Ok(grp) => {
                    self.dozing[s] = None;
                    return Some((g, grp));
                }
                Err(Wait { cause: Cause::Done, .. }) => {}
                Err(Wait { cause: c, until: when, .. }) => {
                    wake = wake.min(when);
                    if best.is_none_or(|(b, _)| c < b) {
                        best = Some((c, g));
                    }
                    if policy == SchedulerPolicy::TwoLevel && c == Cause::Memory {
                        self.active[s].retain(|&x| x != g);
                    }
                }
            }
        }
        cycle.wake = cycle.wake.min(wake);
        cycle.causes[s] = best.map(|(c, _)| c);
        if let (Some((_, g)), true) = (best, self.pc_stalls.is_some()) {
            cycle.pcs[s] = self.waiting_pc(g);
        }
        // A scan that learnt something may find otherwise next time (a context whose lasting conditions it
        // found passed checks its unit first from then on); the two-level scheduler's order changes as its
        // scans move contexts out of the active set.
        self.dozing[s] = (remembered == self.remembered && policy != SchedulerPolicy::TwoLevel).then_some(Doze {
            until: wake,
            cause: cycle.causes[s],
            pc: cycle.pcs[s],
            full: self.memory.miss_queue_full(),
        });
        None
    }

    /// Stall accounting after a cycle; returns the next cycle to simulate (skipping ahead when nothing
    /// issued).
    fn account_cycle(&mut self, t: u64, t1: u64, cycle: &SchedulerCycle, out: &mut EpochOutcome) -> u64 {
        let (nsched, wake) = (cycle.issued.len(), cycle.wake);
        let idle: SmallVec<[(usize, Option<Cause>); 8]> =
            (0..nsched).filter(|&s| !cycle.issued[s]).map(|s| (s, cycle.causes[s])).collect();
        if self.exited {
            self.retire();
        }
        if !self.has_work() {
            for &(s, c) in &idle {
                self.count_stall(s, (t, cycle.pcs[s]), c, 1);
            }
            return t + 1;
        }
        out.wake = if idle.len() == nsched { wake } else { t };
        if idle.len() == nsched {
            // Nothing issued: skip to the next event.
            let inbox_next = self.memory.next_response().unwrap_or(u64::MAX);
            let next = wake.min(inbox_next).min(t1).max(t + 1);
            let skipped = next - t;
            for &(s, c) in &idle {
                self.count_stall(s, (t, cycle.pcs[s]), c, skipped);
            }
            self.busy_cycles += skipped - 1;
            self.issue_slots += (skipped - 1) * nsched as u64;
            self.last_busy = Some(next - 1);
            next
        } else {
            for &(s, c) in &idle {
                self.count_stall(s, (t, cycle.pcs[s]), c, 1);
            }
            t + 1
        }
    }

    /// Records an issued group in the timeline.
    fn trace_issue(&mut self, g: u32, grp: &Group, sched: usize, t: u64, busy: u64, structure: usize) {
        let Some(tr) = self.trace.as_mut() else { return };
        let (c, ctx) = ((g / self.nctx) as usize, g % self.nctx);
        let cta = self.core.linear(c).unwrap_or(0);
        let warp = self.core.hw_warp(c, ctx);
        let own = self.core.class(grp.pc) != InstClass::Mechanism;
        let lanes = grp.mask.count_ones();
        tr.issue(
            sched,
            crate::trace::IssuedGroup { cta, warp, pc: grp.pc, lanes, structure, start: t, dur: busy },
            own,
        );
    }

    /// The pc context `g`, whose wait gave an idle cycle its cause, waits to issue: its group's, or for a
    /// context without one (at a barrier, held by its mechanism) the pc it issued last
    /// ([`crate::per_pc::PcStalls`]).
    fn waiting_pc(&self, g: u32) -> u32 {
        match self.core.peek((g / self.nctx) as usize, g % self.nctx) {
            Peek::Ready(grp) => grp.pc,
            _ => self.pc_stalls.as_ref().map_or(0, |r| r.last_issued(g)),
        }
    }

    /// Scheduler `sched` idled `n` cycles from `t` because of `c`, waiting to issue `pc` (`at`: `(t, pc)`).
    fn count_stall(&mut self, sched: usize, at: (u64, u32), c: Option<Cause>, n: u64) {
        let (t, pc) = at;
        let (counter, name) = stall_counter(&mut self.stalls, c);
        *counter += n;
        if let Some(per_pc) = self.pc_stalls.as_mut().filter(|_| !matches!(c, None | Some(Cause::Done))) {
            if let Some(s) = per_pc.at(pc) {
                *stall_counter(s, c).0 += n;
            }
        }
        if let Some(tr) = self.trace.as_mut() {
            tr.stall(sched, name, t, n);
        }
    }

    /// Issues `grp` (context `g`) at `now` on scheduler `sched` and records when its threads, registers
    /// and unit are next free.
    fn issue_one(
        &mut self,
        g: u32,
        grp: &Group,
        sched: usize,
        now: u64,
        ctx: &EpochCtx<'_>,
        out: &mut EpochOutcome,
    ) -> Result<(u64, usize), SimError> {
        let c = (g / self.nctx) as usize;
        self.mem.cycle = now;
        let writes_before = self.mem.log.len();
        let mut view = SmMemView { mem: ctx.mem, sm: &mut self.mem };
        let env = IssueEnv {
            mem: &mut view,
            consts: ctx.consts,
            params: ctx.params,
            clock: now,
            cycle: Some(now),
            track: ctx.track,
            record_access: true,
        };
        let observer: &mut dyn reconverge_sim::Observer = match self.pc_counts.as_mut() {
            Some(counter) => counter,
            None => &mut NoObserver,
        };
        let issued = self.core.issue(c, grp, env, observer)?;
        if let Some(r) = self.pc_stalls.as_mut() {
            r.issued(g, grp.pc);
        }
        out.changed |= issued.changed;
        self.exited |= issued.exited;
        // What the issue may have changed for other contexts' readiness: only its own warp's, under a
        // per-warp mechanism, unless barriers, exits or a mechanism delay are involved.
        let own_only = T::PER_WARP_CONTEXTS && !(issued.barrier || issued.released || issued.exited);
        if own_only && issued.delay.is_none() {
            self.forget(g);
        } else {
            self.wake_cta(c);
        }
        let wrote = self.mem.log.len() > writes_before;
        let prog = self.core.program();
        let info = &prog.info[grp.pc as usize];
        let gpu = self.gpu;
        let (lat, iv) = (&gpu.latency, &gpu.interval);
        self.front.consume(g);
        // Result latency, unit occupancy and unit of the opcode ([`crate::opcode`]).
        let op = self.timings[grp.pc as usize];
        let (mut latency, mut occupancy) = (op.latency, op.occupancy);
        let exec_parts: SmallVec<[(u32, LaneMask); 2]> = grp.lanes.split(grp.mask).collect();
        let mut pending = None;
        let access = self.core.last_access();
        let accessed = access.mask != 0;
        let (mut missed, mut hit_latency) = (0, 0);
        if accessed {
            let who = Issuer { cta: c, parts: &exec_parts, regs: &info.writes, lane_misses: T::SPLITS_ON_MISS };
            let timing = self.memory.access(access, &who, now, gpu);
            latency = timing.latency + gpu.frontend.operand_latency;
            occupancy = timing.occupancy;
            pending = timing.pending;
            missed = timing.missed & grp.mask;
            hit_latency = timing.latency.max(gpu.l1.hit_latency) + gpu.frontend.operand_latency;
        }
        // Lanes of a load that missed while others hit, which the mechanism separated (`dws`).
        let mut split_miss: Option<LaneMask> = None;
        if let Some(id) = pending.filter(|_| missed != 0 && missed != grp.mask) {
            if self.core.memory_divergence(c, grp, missed, now)? {
                self.memory.restrict_load(id, missed);
                self.wake_cta(c);
                latency = hit_latency;
                split_miss = Some(missed);
            }
        }
        let plan = prog.scalar.as_ref().and_then(|p| p.pcs.get(grp.pc as usize)).copied().unwrap_or_default();
        let nparts = exec_parts.len().max(1) as u64;
        // Base-address instructions of a warp-sequential access: once per static warp.
        let base = u64::from(plan.base_instructions) * nparts;
        let mut lane_ops = u64::from(grp.mask.count_ones());
        match gpu.sm.dispatch {
            Dispatch::Temporal => {
                // One lane runs the threads one after another: every unit of the lane is busy until the last
                // thread dispatched (after the access's base-address instructions, one dispatch each per
                // warp), and the result is ready one latency after that.
                let threads = temporal_threads(prog, grp.pc, info.class, grp.mask, exec_parts.len());
                let per_thread = match info.class {
                    InstClass::Mem | InstClass::Nop => iv.mem,
                    _ => occupancy,
                };
                let busy = (threads * per_thread).max(if accessed { occupancy } else { 0 }) + base * iv.int;
                latency += threads - 1;
                occupancy = busy;
                self.fu.occupy_all(sched, now + busy.max(1));
                lane_ops = threads + base;
            }
            Dispatch::ScalarUnit => {
                if plan.scalar {
                    lane_ops = nparts;
                    if usize::from(op.unit) == SCALAR_UNIT {
                        occupancy = nparts;
                    }
                }
                if base > 0 {
                    // The base-address instructions take the scheduler's next issue slots and the scalar unit.
                    self.fu.take_issue(sched, now + 1 + base);
                    lane_ops += base;
                }
            }
            Dispatch::ScalarLane if plan.scalar => lane_ops = nparts,
            Dispatch::ScalarLane | Dispatch::Spatial => {}
        }
        self.count_datapath(info, grp.mask, lane_ops, plan.scalar);
        if !self.packing {
            self.fu.occupy(sched, op.unit as usize, now, now + occupancy.max(1));
        }
        let done = (occupancy.max(1), issued.structure);
        let released: SmallVec<[std::ops::Range<usize>; 2]> =
            self.core.released_ctas().iter().map(|&s| self.own_warps(s)).collect();
        if let Some(id) = pending {
            self.memory.tag_generation(id, self.generation);
        }
        let Some(t) = times_in(&mut self.res, &mut self.sm_times, c) else { return Ok(done) };
        // The lanes waiting for a response: every lane of a pending load, unless the mechanism let the
        // lanes that hit go on.
        let waiting = if pending.is_some() { split_miss.unwrap_or(grp.mask) } else { 0 };
        if waiting != 0 {
            t.add_misses(&exec_parts, waiting, true);
        }
        for &reg in &info.writes {
            t.regs.set(reg as usize, &exec_parts, waiting, u64::MAX);
            t.regs.set(reg as usize, &exec_parts, grp.mask & !waiting, now + latency);
        }
        for &p in &info.pred_writes {
            t.set_pred(p, &exec_parts, now + latency);
        }
        let next = match info.class {
            InstClass::Control | InstClass::Mechanism => now + lat.branch,
            _ if issued.barrier => now + lat.barrier,
            _ => now + 1,
        };
        let parts = grp.lanes.parts();
        t.threads.raise(row::READY, parts, grp.hold, next);
        if let Some(d) = issued.delay {
            let cycles = gpu.mechanism.cycles(d);
            t.threads.raise(row::MECH, self.core.delayed(), u64::MAX, now + 1 + cycles);
        }
        order_memory(t, &exec_parts, grp.mask, wrote, &prog.insts[grp.pc as usize].op, &released, ctx.epoch_end);
        Ok(done)
    }
}

/// The counter of `s` an idle cycle of cause `c` adds to, and the cause's name in timelines.
fn stall_counter(s: &mut StallCounts, c: Option<Cause>) -> (&mut u64, &'static str) {
    match c {
        None | Some(Cause::Done) => (&mut s.no_ready_warp, "no warp"),
        Some(Cause::Memory) => (&mut s.memory, "memory"),
        Some(Cause::Scoreboard) => (&mut s.scoreboard, "register dependency"),
        Some(Cause::Pipeline) => (&mut s.pipeline, "busy unit or branch"),
        Some(Cause::Mechanism) => (&mut s.mechanism, "mechanism"),
        Some(Cause::Barrier) => (&mut s.barrier, "barrier"),
    }
}

/// The timing state of CTA slot `c`'s threads: its own, or the SM-wide one (`sm_times`).
fn times_in<'t>(
    res: &'t mut [Option<CtaRes>],
    sm_times: &'t mut Option<CtaTimes>,
    c: usize,
) -> Option<&'t mut CtaTimes> {
    match sm_times {
        Some(t) => Some(t),
        None => res.get_mut(c).and_then(Option::as_mut).map(|r| &mut r.times),
    }
}

/// The scalar unit's index (seed 004 Figure 7a, [`Dispatch::ScalarUnit`]), after
/// [`crate::opcode::unit_of_class`]'s five SIMT kinds; one per scheduler, never shared.
const SCALAR_UNIT: usize = 6;

/// Under [`Dispatch::ScalarUnit`], the scalarization plan's scalar instructions other than memory accesses
/// run on the scheduler's scalar unit, busy 1 cycle per static warp, with their class's latency.
fn scalar_unit_timings(mut t: Vec<OpTiming>, prog: &Program, gpu: &GpuConfig) -> Vec<OpTiming> {
    let Some(plan) = prog.scalar.as_ref().filter(|_| gpu.sm.dispatch == Dispatch::ScalarUnit) else { return t };
    for ((op, p), info) in t.iter_mut().zip(&plan.pcs).zip(&prog.info) {
        if p.scalar && info.class != InstClass::Mem {
            op.unit = SCALAR_UNIT as u8;
            op.occupancy = 1;
        }
    }
    t
}

/// The functional units of an SM and when each is next free: the SIMT units ([`Pools`]) and, per
/// scheduler, its scalar unit and the cycle its issue slot is next free (both used only by
/// [`Dispatch::ScalarUnit`]: the slot is taken by base-address instructions).
struct Units {
    pools: Pools,
    /// Per scheduler: `[scalar unit free at, issue slot free at]`.
    own: Vec<[u64; 2]>,
}

/// The SIMT units: one of each kind per scheduler, or pools of each kind that all the SM's schedulers
/// share (`sm.units`; a kind with no unit runs on the integer pool), with each pool's earliest free
/// cycle (asked on every readiness check, changed only by an issue).
enum Pools {
    PerScheduler(Vec<[u64; 6]>),
    Shared { units: [Vec<u64>; 6], first_free: [u64; 6] },
}

impl Units {
    fn new(gpu: &GpuConfig) -> Units {
        let pools = if gpu.sm.units.len() >= 5 {
            let pool = |k: usize| vec![0u64; gpu.sm.units.get(k).copied().unwrap_or(0) as usize];
            Pools::Shared { units: [pool(0), pool(1), pool(2), pool(3), pool(4), pool(5)], first_free: [0; 6] }
        } else {
            Pools::PerScheduler(vec![[0; 6]; gpu.sm.schedulers as usize])
        };
        Units { pools, own: vec![[0; 2]; gpu.sm.schedulers as usize] }
    }

    fn pool(pools: &[Vec<u64>; 6], unit: usize) -> usize {
        if pools[unit].is_empty() {
            0
        } else {
            unit
        }
    }

    /// When a unit of kind `unit` is next free for scheduler `sched` (and its issue slot is free).
    fn free_at(&self, sched: usize, unit: usize) -> u64 {
        let own = self.own[sched];
        let unit_free = match &self.pools {
            _ if unit == SCALAR_UNIT => own[0],
            Pools::PerScheduler(f) => f[sched][unit],
            Pools::Shared { units, first_free } => first_free[Self::pool(units, unit)],
        };
        unit_free.max(own[1])
    }

    /// Scheduler `sched` takes the first free unit of kind `unit` at `now` until `until`.
    fn occupy(&mut self, sched: usize, unit: usize, now: u64, until: u64) {
        match &mut self.pools {
            _ if unit == SCALAR_UNIT => self.own[sched][0] = until,
            Pools::PerScheduler(f) => f[sched][unit] = until,
            Pools::Shared { units, first_free } => {
                let k = Self::pool(units, unit);
                let pool = &mut units[k];
                let i = pool.iter().position(|&u| u <= now).or_else(|| (0..pool.len()).min_by_key(|&i| pool[i]));
                if let Some(i) = i {
                    pool[i] = until;
                }
                first_free[k] = pool.iter().copied().min().unwrap_or(0);
            }
        }
    }

    /// Scheduler `sched` issues nothing before `until`, and its scalar unit is busy until then (base-address
    /// instructions, one issue slot each).
    fn take_issue(&mut self, sched: usize, until: u64) {
        let own = &mut self.own[sched];
        own[0] = own[0].max(until);
        own[1] = own[1].max(until);
    }

    /// Every unit of scheduler `sched` is busy until `until` (a temporal-SIMT lane).
    fn occupy_all(&mut self, sched: usize, until: u64) {
        match &mut self.pools {
            Pools::PerScheduler(f) => f[sched].iter_mut().for_each(|u| *u = until),
            Pools::Shared { units, first_free } => {
                units.iter_mut().flatten().for_each(|u| *u = (*u).max(until));
                for (k, pool) in units.iter().enumerate() {
                    first_free[k] = pool.iter().copied().min().unwrap_or(0);
                }
            }
        }
    }
}

/// Dispatches of one issued group on a temporal-SIMT lane: one per active thread, once per static warp
/// for a scalar instruction of the program's scalarization plan and for mechanism-inserted instructions.
fn temporal_threads(prog: &Program, pc: u32, class: InstClass, mask: LaneMask, warps: usize) -> u64 {
    let scalar = prog.scalar.as_ref().is_some_and(|p| p.pcs[pc as usize].scalar);
    if scalar || class == InstClass::Mechanism {
        warps.max(1) as u64
    } else {
        u64::from(mask.count_ones())
    }
}

/// Memory ordering in the epoch model. A global write is performed (visible to every later load, an
/// atomic's effect applied) at the end of the epoch in which it was logged. A fence makes the issuing
/// threads wait until their own earlier writes are performed; a barrier release (`bar.sync` orders memory
/// like `membar.cta`) makes every thread of the CTA wait until the writes of all of them are performed
/// (`released`: the warps of each CTA in which a barrier released). The
/// wait is the write round trip of real hardware: a write logged at cycle c is performed at the epoch end,
/// at most E = L1 + L2 hit latency after c.
fn order_memory(
    t: &mut CtaTimes,
    parts: &[(u32, LaneMask)],
    mask: LaneMask,
    wrote: bool,
    op: &Op,
    released: &[std::ops::Range<usize>],
    epoch_end: u64,
) {
    if wrote {
        t.threads.raise(row::WRITES, parts, mask, epoch_end);
    }
    if matches!(op, Op::Fence { .. }) {
        let done = t.threads.pending(row::WRITES, parts, mask, 0).unwrap_or(0);
        t.threads.raise(row::FENCE, parts, mask, done);
    }
    for warps in released {
        let done = t.threads.max_row(row::WRITES, warps.clone());
        t.threads.raise_all(row::FENCE, warps.clone(), done);
    }
}

/// A scheduler's order of its contexts, and what it was made from ([`Sm::candidates_version`] and the
/// last issued context) when it may be kept from one cycle to the next.
type SchedulerOrder = (SmallVec<[u32; 64]>, Option<(u64, Option<u32>)>);

/// What an SM's schedulers did in one cycle: which issued, why each of the others could not, and the
/// earliest cycle a waiting group becomes ready.
struct SchedulerCycle {
    /// Per scheduler: it issued a group.
    issued: SmallVec<[bool; 8]>,
    /// Per scheduler that did not issue: the most telling reason (`None`: no group at all).
    causes: SmallVec<[Option<Cause>; 8]>,
    /// Per scheduler that did not issue for a cause: the pc its waiting context waits to issue (only
    /// while [`Sm::pc_stalls`] records).
    pcs: SmallVec<[u32; 8]>,
    /// The earliest cycle a waiting group becomes ready (`u64::MAX`: none known).
    wake: u64,
}

impl SchedulerCycle {
    /// A cycle of `nsched` schedulers before any issued.
    fn new(nsched: usize) -> SchedulerCycle {
        SchedulerCycle {
            issued: smallvec::smallvec![false; nsched],
            causes: smallvec::smallvec![None; nsched],
            pcs: smallvec::smallvec![0; nsched],
            wake: u64::MAX,
        }
    }

    /// The same schedulers at the start of another cycle.
    fn reset(&mut self) {
        self.issued.fill(false);
        self.causes.fill(None);
        self.wake = u64::MAX;
    }
}

#[cfg(test)]
mod tests {
    use super::{Cause, Lasting};

    /// The cause and wake of a remembered context over time: each condition in the order of the checks
    /// takes over when the one before it ends, exactly as checking them afresh at each cycle would.
    #[test]
    fn remembered_conditions_answer_in_check_order_as_time_passes() {
        let l = Lasting { mech: 10, fence: 0, ready: 14, missing: false, regs: 30, unit: 0, mem: false, passed: false };
        let at = |t| l.at(t).map(|w| (w.cause, w.until));
        assert_eq!(at(5), Some((Cause::Mechanism, 10)));
        assert_eq!(at(10), Some((Cause::Pipeline, 14)), "the mechanism's hold ended at 10");
        assert_eq!(at(14), Some((Cause::Scoreboard, 30)));
        assert_eq!(at(30), None);
        let data = Lasting { regs: u64::MAX, ..l };
        assert_eq!(
            data.at(20).map(|w| (w.cause, w.until)),
            Some((Cause::Memory, u64::MAX)),
            "a register waiting for data waits for an event"
        );
        let missing = Lasting { missing: true, ..l };
        assert_eq!(
            missing.at(14).map(|w| (w.cause, w.until)),
            Some((Cause::Memory, u64::MAX)),
            "an outstanding miss comes before registers"
        );
        let fence = Lasting { fence: 12, ..l };
        assert_eq!(
            fence.at(11).map(|w| (w.cause, w.until)),
            Some((Cause::Memory, 12)),
            "a fence comes before the pipeline"
        );
    }
}
