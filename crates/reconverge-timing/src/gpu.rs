//! The whole GPU in time: SMs advanced in parallel epochs, the epoch-end merge (global writes, L2/DRAM,
//! CTA dispatch), termination, deadlock and limit detection, and statistics.

use crate::config::GpuConfig;
use crate::gmem::WriteOp;
use crate::memsys::{L2Dram, ReqKind};
use crate::sampling::{CtaSampling, Progress, Sampler, WorkUnit};
use crate::sm::{EpochCtx, EpochOutcome, L2Request, Sm};
use crate::stats::TimingStats;
use crate::trace::{self, SmTrace, Timeline, TraceSpec};
use rayon::prelude::*;
use reconverge_mechanism::Tracker;
use reconverge_program::launch::LaunchArgs;
use reconverge_program::{LaunchConfig, LaunchError, Program};
use reconverge_sim::access::GlobalMemory;
use reconverge_sim::core::{Jit, JitReport, SmCore};
use reconverge_sim::core::{QuietThreads, Watchdog};
use reconverge_sim::error::{DeadlockReport, LiveThreads};
use reconverge_sim::memory::DeviceMemory;
use reconverge_sim::{run_ctas_functional, DeviceState, Loaded, RunLimit, RunResult, SimError, Stats};
use std::sync::Arc;

/// The result of a timed run.
#[derive(Clone, Debug)]
pub struct TimedResult {
    /// The functional result (statistics, error, buffers).
    pub run: RunResult,
    /// What the timing model measured.
    pub timing: TimingStats,
    /// Per pc: the idle scheduler-cycles charged to it by cause, every SM together (`None` unless
    /// [`Record::pc_stalls`] asked; the rule is [`crate::per_pc::PcStalls`]'s). Per cause the pcs sum to
    /// [`TimingStats::stalls`], `no_ready_warp` excepted (charged to no pc).
    pub pc_stalls: Option<Vec<crate::stats::StallCounts>>,
    /// Per pc: the executions of the kernel's own instructions, every SM together (`None` unless
    /// [`Record::pc_counts`] asked).
    pub pc_counts: Option<Vec<crate::per_pc::PcCount>>,
}

/// What a timed run records beside its statistics, each only when asked (an ordinary run records
/// nothing and pays nothing for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The timeline ([`run_timed_traced`]).
    pub trace: Option<TraceSpec>,
    /// Idle scheduler-cycles per pc ([`TimedResult::pc_stalls`]).
    pub pc_stalls: bool,
    /// Executions per pc ([`TimedResult::pc_counts`]).
    pub pc_counts: bool,
}

/// How a timed run is carried out beyond the launch and the machine: its cycle limit and the host
/// threads it may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimedOptions {
    /// Stop with a `limit` error after this many simulated cycles (`None`: no limit).
    pub max_cycles: Option<u64>,
    /// Host threads to simulate SMs on (0 = all cores). Results and statistics do not depend on it.
    pub threads: usize,
    /// Time only a sample of the launch's CTAs and extrapolate the cycles ([`crate::sampling`]); `None`:
    /// time every CTA.
    pub sample: Option<CtaSampling>,
}

/// Runs `kernel` (its program under its mechanism) on the GPU `gpu`. Results and statistics do not
/// depend on `opts.threads`.
pub fn run_timed<'a>(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    args: impl Into<LaunchArgs<'a>>,
    opts: TimedOptions,
) -> TimedResult {
    run_timed_traced(kernel, launch, gpu, args, opts, None).0
}

/// [`run_timed`], recording the timeline `trace` asks for (empty when `None`); the timeline does not
/// depend on `opts.threads` either.
pub fn run_timed_traced<'a>(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    args: impl Into<LaunchArgs<'a>>,
    opts: TimedOptions,
    trace: Option<TraceSpec>,
) -> (TimedResult, Timeline) {
    run_timed_recorded(kernel, launch, gpu, args, opts, Record { trace, ..Record::default() })
}

/// [`run_timed`], recording what `record` asks for: the timeline (returned beside the result, empty
/// when not asked), idle cycles and executions per pc (in the result). Nothing recorded depends on
/// `opts.threads`.
pub fn run_timed_recorded<'a>(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    args: impl Into<LaunchArgs<'a>>,
    opts: TimedOptions,
    record: Record,
) -> (TimedResult, Timeline) {
    run_timed_args(kernel, launch, gpu, args.into(), opts, record)
}

/// [`run_timed_recorded`] once the arguments are converted. Not generic, so that the timing model is
/// compiled once, here, for every mechanism: a generic body would be compiled again, whole, in every crate
/// and test binary that starts a timed run.
fn run_timed_args(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    args: LaunchArgs<'_>,
    opts: TimedOptions,
    record: Record,
) -> (TimedResult, Timeline) {
    // The run stays on the caller's thread; only epochs with enough work hand their SMs to the pool, and
    // never more threads than SMs that can have work (a CTA each at least).
    let threads = host_threads(opts.threads, gpu, launch);
    let pool = if threads > 1 { pool(threads) } else { None };
    let bounds = Bounds { max_cycles: opts.max_cycles, pool, sample: opts.sample };
    let prog = kernel.program();
    let source = Source::Args(args);
    reconverge_mechanism::with_tracker!(kernel.mechanism(), |t| run_with(prog, t, launch, gpu, source, bounds, record))
}

/// [`run_timed`] on a device state the caller keeps between launches ([`DeviceState::resident`]): memory
/// is changed in place and the result carries no outputs (see [`reconverge_sim::run_resident`]).
pub fn run_timed_resident(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    dev: &mut DeviceState,
    opts: TimedOptions,
) -> TimedResult {
    run_timed_resident_recorded(kernel, launch, gpu, dev, opts, Record::default())
}

/// [`run_timed_resident`], recording per pc what `record` asks for (its timeline is not kept).
pub fn run_timed_resident_recorded(
    kernel: &Loaded,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    dev: &mut DeviceState,
    opts: TimedOptions,
    record: Record,
) -> TimedResult {
    let threads = host_threads(opts.threads, gpu, launch);
    let pool = if threads > 1 { pool(threads) } else { None };
    let bounds = Bounds { max_cycles: opts.max_cycles, pool, sample: opts.sample };
    let prog = kernel.program();
    let source = Source::Resident(dev);
    let record = Record { trace: None, ..record };
    reconverge_mechanism::with_tracker!(kernel.mechanism(), |t| run_with(prog, t, launch, gpu, source, bounds, record))
        .0
}

/// Where a timed run's device state comes from.
enum Source<'a, 'd> {
    /// Built from the launch's arguments, read back into the result's outputs.
    Args(LaunchArgs<'a>),
    /// The caller's, changed in place.
    Resident(&'d mut DeviceState),
}

/// The host threads a timed run uses: `requested` (0: one per core), at most the SMs that can have work
/// (`num_sms`, and no more than the launch's CTAs). More would only wait.
pub fn host_threads(requested: usize, gpu: &GpuConfig, launch: &LaunchConfig) -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let want = if requested == 0 { cores } else { requested };
    let busy = u64::from(gpu.num_sms).min(launch.num_ctas()).max(1);
    want.min(usize::try_from(busy).unwrap_or(usize::MAX)).max(1)
}

/// A pool of `threads` host threads (0: one per core), built once per size and kept: building one
/// costs more than a small launch takes to simulate.
fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    use std::sync::{Mutex, OnceLock};
    type Pools = Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>>;
    static POOLS: OnceLock<Pools> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().ok()?;
    if let Some((_, p)) = pools.iter().find(|(n, _)| *n == threads) {
        return Some(p.clone());
    }
    let p = Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build().ok()?);
    pools.push((threads, p.clone()));
    Some(p)
}

/// Warp instructions an epoch must have issued for the next to run its SMs on several host threads: below
/// it, handing SMs to threads costs more than simulating them one after another (the choice changes only
/// the speed, never a result).
const PARALLEL_EPOCH_MIN_ISSUED: u64 = 256;

fn run_with<T: Tracker>(
    prog: &Program,
    tracker: &T,
    launch: &LaunchConfig,
    gpu: &GpuConfig,
    source: Source<'_, '_>,
    bounds: Bounds,
    record: Record,
) -> (TimedResult, Timeline) {
    let trace = record.trace;
    let nargs = match &source {
        Source::Args(args) => args.as_slice().len(),
        Source::Resident(_) => prog.params.len(),
    };
    let empty = |e: SimError| {
        let r = TimedResult {
            run: RunResult::failed(prog, Stats::new(prog, launch.warp_size, T::STRUCTURE), e, nargs),
            timing: TimingStats::default(),
            pc_stalls: None,
            pc_counts: None,
        };
        (r, Timeline { spec: trace, ..Timeline::default() })
    };
    if let Err(e) = launch.validate(prog).and_then(|_| gpu.validate().map_err(|e| LaunchError::Machine(e.to_string())))
    {
        return empty(e.into());
    }
    // A sampled launch's skipped CTAs are resident on a core of their own, as many as on an SM.
    let skipped_resident = if bounds.sample.is_some() { u64::from(gpu.sm.max_ctas) } else { 0 };
    let resident = gpu.num_sms as u64 * gpu.sm.max_ctas as u64 + skipped_resident;
    // The model's own structures count against the memory limit too (checked before anything is built).
    let recorded = trace
        .map_or(0, |t| t.max_events as u64)
        .saturating_mul(std::mem::size_of::<trace::TraceEvent>() as u64)
        .saturating_add(per_pc_bytes(prog, gpu, record));
    let model_bytes = gpu.model_bytes(prog.nregs as u64, launch).saturating_add(recorded);
    let mut owned: Option<DeviceState> = None;
    let dev: &mut DeviceState = match source {
        Source::Args(args) => match DeviceState::new(prog, args, launch, resident, model_bytes) {
            Ok(d) => owned.insert(d),
            Err(e) => return empty(e),
        },
        Source::Resident(d) => {
            if let Err(e) = d.check_resident(prog, launch, resident, model_bytes) {
                return empty(e);
            }
            d
        }
    };
    let mut sms: Vec<Sm<'_, T>> = match (0..gpu.num_sms).map(|i| Sm::new(i, gpu, prog, tracker, launch)).collect() {
        Ok(v) => v,
        Err(e) => return empty(LaunchError::Machine(e.to_string()).into()),
    };
    if let Some(spec) = trace {
        for sm in sms.iter_mut() {
            let nsched = gpu.sm.schedulers as usize;
            sm.trace = Some(SmTrace::new(spec, sm.id, gpu.num_sms, nsched, launch.warp_size));
        }
    }
    for sm in sms.iter_mut() {
        sm.pc_stalls = record.pc_stalls.then(|| crate::per_pc::PcStalls::new(prog));
        sm.pc_counts = record.pc_counts.then(|| crate::per_pc::PcCounter::new(prog));
    }
    let mut l2 = match gpu.l2_dram().and_then(L2Dram::new) {
        Ok(l) => l,
        Err(e) => return empty(LaunchError::Machine(format!("l2: {e}")).into()),
    };
    if gpu.l2.preload {
        for a in dev.mem.allocations() {
            l2.preload(a.base, a.data.len() as u64);
        }
    }
    // A CTA that fits no SM can never run.
    if !sms[0].fits(prog, launch) {
        let (t, w, r, s) = sms[0].cta_demand(prog, launch);
        return empty(SimError::Launch(LaunchError::Machine(format!(
            "one CTA needs {t} threads, {w} warps, {r} registers ({} per thread) and {s} bytes of shared memory; \
             an SM of `{}` offers {} threads, {} warps, {} registers and {} bytes",
            sms[0].regs_per_thread(),
            gpu.name,
            gpu.sm.max_threads,
            gpu.sm.max_warps,
            gpu.sm.registers,
            gpu.sm.shared_memory
        ))));
    }
    let epoch = (gpu.l1.hit_latency + gpu.l2.hit_latency).max(1);
    let mut timing =
        TimingStats { epoch_cycles: epoch, occupancy: occupancy(gpu, prog, launch), ..TimingStats::default() };
    let shape = (u64::from(gpu.num_sms), u64::from(timing.occupancy.resident_ctas));
    // A mechanism whose warps mix the SM's CTAs (`dwf:sm`) is timed in full: which CTAs share its pool
    // decides its warps, and a skipped stretch changes that (docs/speed.md, "CTA sampling").
    let sample = bounds.sample.filter(|_| !T::SM_POOL);
    let mut skipped = sample.map(|rule| Skipped::new(rule, gpu, shape, (prog, tracker, launch)));
    let error = epochs(&mut sms, &mut l2, dev, (launch, gpu), bounds, &mut timing, skipped.as_mut());
    // Write-backs still queued in DRAM count in its statistics.
    l2.schedule_dram(None);
    let mut stats = collect(&sms, &l2, gpu, launch, prog, &mut timing);
    if let Some(skip) = &skipped {
        stats.merge(skip.core.stats());
        timing.issued = stats.warp_instructions;
    }
    timing.sample = skipped.as_ref().and_then(|k| k.sampler.estimate(launch.num_ctas()));
    if let (Some(sample), Some(skip)) = (timing.sample.as_mut(), &skipped) {
        sample.skipped_warp_instructions = skip.instructions;
        sample.timed_warp_instructions = stats.warp_instructions - skip.instructions;
        timing.cycles += sample.skipped_cycles;
    }
    let timeline = match trace {
        Some(spec) => trace::merge(spec, sms.iter_mut().filter_map(|s| s.trace.take()).collect()),
        None => Timeline::default(),
    };
    let outputs = owned.map(|d| d.into_outputs(prog, launch)).unwrap_or_default();
    // `printf` output of every SM, in thread order (independent of the host threads).
    let skipped_core = skipped.iter().map(|k| &k.core);
    let printed = reconverge_sim::printf::gather(sms.iter().map(|s| s.core()).chain(skipped_core).map(|c| c.printf()));
    let pc_stalls = record.pc_stalls.then(|| {
        let parts = sms.iter().filter_map(|s| s.pc_stalls.as_ref().map(|p| &p.per_pc[..]));
        crate::per_pc::sum_by_pc(parts, crate::stats::StallCounts::merge)
    });
    let pc_counts = record.pc_counts.then(|| {
        let parts = sms.iter().filter_map(|s| s.pc_counts.as_ref().map(|p| &p.per_pc[..]));
        crate::per_pc::sum_by_pc(parts, crate::per_pc::PcCount::merge)
    });
    let jit = sms.iter().fold(JitReport::default(), |r, s| r.plus(s.core().jit_report()));
    let jit = skipped.iter().filter_map(|k| k.jit.as_ref()).fold(jit, |r, j| r.plus(j.report()));
    let run = RunResult { jit, ..RunResult::finished(prog, stats, error, outputs).with_printf(printed) };
    (TimedResult { run, timing, pc_stalls, pc_counts }, timeline)
}

/// The bytes the per-pc records `record` asks for take (every SM keeps its own).
fn per_pc_bytes(prog: &Program, gpu: &GpuConfig, record: Record) -> u64 {
    let stalls = if record.pc_stalls { std::mem::size_of::<crate::stats::StallCounts>() } else { 0 };
    let counts = if record.pc_counts { std::mem::size_of::<crate::per_pc::PcCount>() } else { 0 };
    ((stalls + counts) as u64).saturating_mul(prog.insts.len() as u64).saturating_mul(u64::from(gpu.num_sms))
}

/// How the epoch loop may run.
struct Bounds {
    /// `--max-cycles`.
    max_cycles: Option<u64>,
    /// The host threads SMs may run on.
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Whether and how the launch's CTAs are sampled.
    sample: Option<CtaSampling>,
}

/// The epoch loop: dispatch, run every SM over the epoch (on several host threads when the last epoch
/// had enough work), merge; until every CTA finished, a deadlock, a livelock, a limit or an error. A launch
/// sampled by CTAs runs stretches of its CTAs functionally on `skipped` when the sampler says so.
fn epochs<T: Tracker>(
    sms: &mut [Sm<'_, T>],
    l2: &mut L2Dram,
    dev: &mut DeviceState,
    (launch, gpu): (&LaunchConfig, &GpuConfig),
    bounds: Bounds,
    timing: &mut TimingStats,
    mut skipped: Option<&mut Skipped<'_, T>>,
) -> Option<SimError> {
    let (mem, consts, params) = (&mut dev.mem, &dev.consts[..], &dev.params[..]);
    let max_cycles = bounds.max_cycles;
    let mut last_issued = 0u64;
    let prog = sms[0].core().program();
    let total = launch.num_ctas();
    let mut next_cta = 0u64;
    let mut t0 = gpu.launch.kernel_latency;
    let mut watchdog = Watchdog::default();
    let mut total_issued = 0u64;
    let epoch = timing.epoch_cycles;
    let mut waiting = Waiting::new();
    loop {
        // Dispatch: fill SMs in order, one CTA per SM per round, while they have room.
        loop {
            let mut placed = false;
            for sm in sms.iter_mut() {
                if next_cta < total && sm.fits(prog, launch) {
                    sm.launch(prog, launch, next_cta);
                    next_cta += 1;
                    placed = true;
                }
            }
            if !placed || next_cta >= total {
                break;
            }
        }
        if next_cta >= total && sms.iter().all(|s| !s.has_work() && !s.has_pending_memory()) {
            return None;
        }
        let t1 = t0 + epoch;
        let ctx = EpochCtx { mem, consts, params, track: watchdog.track, max_cycles, epoch_end: t1 };
        let busy = sms.iter().filter(|s| s.has_work()).count();
        let outcomes: Vec<EpochOutcome> = match &bounds.pool {
            Some(pool) if busy > 1 && last_issued >= PARALLEL_EPOCH_MIN_ISSUED => {
                pool.install(|| sms.par_iter_mut().map(|sm| sm.run_epoch(t0, t1, &ctx)).collect())
            }
            _ => sms.iter_mut().map(|sm| sm.run_epoch(t0, t1, &ctx)).collect(),
        };
        timing.epochs += 1;
        // The earliest error (by cycle, then SM) wins.
        let first = outcomes
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.error.as_ref().map(|(c, e)| (*c, i, e.clone())))
            .min_by_key(|(c, i, _)| (*c, *i));
        if let Some((_, _, e)) = first {
            return Some(e);
        }
        let issued: u64 = outcomes.iter().map(|o| o.issued).sum();
        total_issued += issued;
        last_issued = issued;
        let mut changed = outcomes.iter().any(|o| o.changed);
        match merge_writes(sms, mem) {
            Ok(wrote) => changed |= wrote,
            Err(e) => return Some(e),
        }
        serve_l2(sms, l2, gpu, t1, &mut waiting);
        for sm in sms.iter_mut() {
            sm.retire();
        }
        let suspect = watchdog.observe(issued, changed, launch.limits.livelock_window);
        if watchdog.take_started() {
            for sm in sms.iter_mut() {
                sm.reset_quiet();
            }
        }
        let quiet = sms.iter().fold(QuietThreads::default(), |q, sm| q.plus(sm.core().quiet_threads()));
        if suspect && watchdog.livelocked(quiet, prog.insts.len()) {
            let name = sms[0].core().tracker_name();
            return Some(SimError::Deadlock { report: Box::new(watchdog.report(name, where_threads(sms))) });
        }
        // A stall deadlock: nothing issued, no memory response is on its way, and no context of any SM can
        // become ready by itself (every one waits at a barrier or for threads that cannot arrive). Long
        // latencies are not deadlocks: a context waiting for one has a wake-up cycle.
        let pending = sms.iter().any(|s| s.has_pending_memory()) || !waiting.is_empty();
        let wake = outcomes.iter().map(|o| o.wake).min().unwrap_or(u64::MAX);
        if issued == 0 && !pending && wake == u64::MAX && sms.iter().any(|s| s.has_work()) {
            let name = sms[0].core().tracker_name();
            let report = Box::new(DeadlockReport::Stall { mechanism: name, live: where_threads(sms) });
            return Some(SimError::Deadlock { report });
        }
        if launch.cancelled() {
            return Some(SimError::Interrupted);
        }
        if let Some(max) = launch.limits.max_instructions {
            if total_issued >= max {
                return Some(SimError::Limit(RunLimit::Instructions(max)));
            }
        }
        t0 = t1;
        if let Some(skip) = skipped.as_deref_mut() {
            let memory = (&mut *mem, consts, params);
            let at = (t1, &mut next_cta, &mut total_issued);
            if let Err(e) = skip.after_epoch(sms, at, launch, memory, timing.occupancy.resident_ctas) {
                return Some(e);
            }
        }
    }
}

/// A launch sampled by CTAs: the sampler, and the core its skipped CTAs run on, functionally.
struct Skipped<'a, T: Tracker> {
    sampler: Sampler,
    core: SmCore<'a, T>,
    jit: Option<Jit<'a>>,
    /// CTAs skipped so far.
    ctas: u64,
    /// Their warp instructions.
    instructions: u64,
    /// What the sampler's rates count.
    work: WorkUnit,
}

impl<'a, T: Tracker> Skipped<'a, T> {
    /// The skipped CTAs run as on SM 0 of `gpu` (`%smid`, `%nsmid`).
    fn new(
        rule: CtaSampling,
        gpu: &GpuConfig,
        shape: (u64, u64),
        (prog, tracker, launch): (&'a Program, &'a T, &'a LaunchConfig),
    ) -> Self {
        let core = SmCore::new(prog, tracker, launch, 0, gpu.num_sms);
        let jit = Jit::for_policy(prog, (core.warps_per_cta(), launch.warp_size), launch.host.jit);
        let work = WorkUnit::for_mechanism(T::ORDERED);
        Skipped { sampler: Sampler::new(rule, shape, work), core, jit, ctas: 0, instructions: 0, work }
    }

    /// Shows the sampler the GPU at the end of the epoch that ended at cycle `t1`, and runs the stretch
    /// it skips, if any: CTAs from `next_cta` on, `resident` at a time (as many as share a timed SM),
    /// after `total_issued` warp instructions; both advance past it. Called once the epoch's stores are
    /// merged, so the stretch runs after the CTAs before it and before those after it.
    fn after_epoch(
        &mut self,
        sms: &[Sm<'_, T>],
        (t1, next_cta, total_issued): (u64, &mut u64, &mut u64),
        launch: &LaunchConfig,
        memory: (&mut DeviceMemory, &[u8], &[u8]),
        resident: u32,
    ) -> Result<(), SimError> {
        let work = self.work;
        let at = Progress {
            cycle: t1,
            issued: sms.iter().map(|s| work.of(s.core().stats())).sum(),
            finished: sms.iter().map(|s| s.finished_ctas).sum(),
            dispatched: *next_cta - self.ctas,
            waiting: launch.num_ctas() - *next_cta,
        };
        let n = self.sampler.observe(at);
        if n == 0 {
            return Ok(());
        }
        let before = work.of(self.core.stats());
        let stretch = (*next_cta..*next_cta + n, resident.max(1) as usize, *total_issued);
        let issued = run_ctas_functional(&mut self.core, launch, memory, stretch, self.jit.as_mut())?;
        self.sampler.skipped(work.of(self.core.stats()) - before);
        (self.instructions, self.ctas) = (self.instructions + issued, self.ctas + n);
        *total_issued += issued;
        *next_cta += n;
        Ok(())
    }
}

fn where_threads<T: Tracker>(sms: &[Sm<'_, T>]) -> LiveThreads {
    let mut live = LiveThreads::default();
    for sm in sms {
        sm.core().where_threads(24, &mut live);
    }
    live
}

/// Applies the epoch's global stores and atomics of every SM in (cycle, SM, sequence) order; returns
/// whether memory changed.
fn merge_writes<T: Tracker>(sms: &mut [Sm<'_, T>], mem: &mut DeviceMemory) -> Result<bool, SimError> {
    let mut changed = false;
    let mut writes: Vec<(u64, usize, u64, WriteOp)> = Vec::new();
    for (i, sm) in sms.iter_mut().enumerate() {
        for e in sm.mem.log.drain(..) {
            writes.push((e.cycle, i, e.seq, e.op));
        }
        sm.mem.clear();
    }
    writes.sort_by_key(|(c, i, q, _)| (*c, *i, *q));
    for (_, i, _, op) in writes {
        match op {
            WriteOp::Store { addr, size, value } => {
                if let Ok(true) = GlobalMemory::write(mem, addr, size, value) {
                    changed = true;
                }
            }
            WriteOp::Atomic { req, cta_slot } => {
                if let Ok((Some(old), ch)) = GlobalMemory::atomic(mem, req) {
                    changed |= ch;
                    if let Some(r) = req.dst {
                        sms[i].write_register(cta_slot, req.thread, r, old)?;
                    }
                }
            }
        }
    }
    Ok(changed)
}

/// Serves the epoch's L2 requests of every SM in (cycle, SM, sequence) order and schedules the responses
/// (always after the epoch's end `t1`).
fn serve_l2<T: Tracker>(sms: &mut [Sm<'_, T>], l2: &mut L2Dram, gpu: &GpuConfig, t1: u64, waiting: &mut Waiting) {
    let mut reqs: Vec<(usize, L2Request)> = Vec::new();
    for (i, sm) in sms.iter_mut().enumerate() {
        reqs.extend(sm.take_outbox().into_iter().map(|r| (i, r)));
    }
    reqs.sort_by_key(|(i, r)| (r.cycle, *i, r.seq));
    let line_ratio = (gpu.l2.line / gpu.l1.line.max(1)).max(1) as u64;
    let mut responses = Vec::with_capacity(reqs.len());
    for (i, r) in reqs {
        let l2line = r.line / line_ratio;
        let sectors = if line_ratio == 1 { r.sectors } else { 0 };
        // The SM's port: the request waits for its share of the port's bandwidth (its data, or the data it
        // will bring back).
        let data = if r.sectors == 0 {
            u64::from(gpu.l1.line / gpu.l1.sector.max(1))
        } else {
            u64::from(r.sectors.count_ones())
        };
        let sent = match sms[i].port.as_mut() {
            Some(p) => p.serve(r.cycle, data),
            None => r.cycle,
        };
        responses.push((i, r.token, r.kind, l2.submit(sent, l2line, sectors, r.kind)));
    }
    // Banked DRAM commits the requests no later one can overtake: a request of the next epoch reaches it
    // no earlier than an L2 hit latency after this epoch's end. Responses still waiting for a queued fetch
    // are answered at a later merge.
    l2.schedule_dram(Some(t1.saturating_add(gpu.l2.hit_latency)));
    waiting.extend(responses);
    waiting.retain(|&(i, token, kind, pending)| {
        let Some(done) = l2.resolve(pending) else { return true };
        match token {
            Some(tok) => sms[i].deliver(done.max(t1), tok),
            None if kind == ReqKind::Write => sms[i].last_store_ack = sms[i].last_store_ack.max(done),
            None => {}
        }
        false
    });
}

/// L2 responses waiting for a banked-DRAM fetch: (SM, token, kind, the response).
type Waiting = Vec<(usize, Option<u64>, ReqKind, crate::memsys::Pending)>;

/// The launch's occupancy: CTAs per SM and the registers behind it.
fn occupancy(gpu: &GpuConfig, prog: &Program, launch: &LaunchConfig) -> crate::stats::Occupancy {
    let threads = launch.block.iter().product::<u32>();
    let source = gpu.register_source(prog);
    let ptxas = match (&prog.allocated_registers, source) {
        (Some(a), crate::config::RegisterSource::Ptxas) => format!("{} sm_{}", a.release, a.arch),
        _ => String::new(),
    };
    crate::stats::Occupancy {
        resident_ctas: gpu.resident_ctas(prog, threads, launch.warp_size, launch.dynamic_shared),
        registers_per_thread: gpu.launch_registers_per_thread(prog, threads, launch.warp_size),
        registers_from: source,
        ptxas,
    }
}

/// Statistics, in SM order.
fn collect<T: Tracker>(
    sms: &[Sm<'_, T>],
    l2: &L2Dram,
    gpu: &GpuConfig,
    launch: &LaunchConfig,
    prog: &Program,
    timing: &mut TimingStats,
) -> Stats {
    let mut stats = Stats::new(prog, launch.warp_size, T::STRUCTURE);
    stats.declare_mechanism::<T>();
    stats.timed = true;
    for sm in sms {
        stats.merge(sm.stats());
        let s = &sm.stalls;
        let t = &mut timing.stalls;
        t.memory += s.memory;
        t.scoreboard += s.scoreboard;
        t.pipeline += s.pipeline;
        t.barrier += s.barrier;
        t.mechanism += s.mechanism;
        t.no_ready_warp += s.no_ready_warp;
        let m = sm.memory_counters();
        let tm = &mut timing.memory;
        tm.l1_accesses += m.l1_accesses;
        tm.l1_hits += m.l1_hits;
        tm.l1_mshr_merges += m.l1_mshr_merges;
        tm.l1_mshr_full += m.l1_mshr_full;
        tm.global_instructions += m.global_instructions;
        tm.transactions += m.transactions;
        tm.sectors += m.sectors;
        tm.shared_instructions += m.shared_instructions;
        tm.shared_wavefronts += m.shared_wavefronts;
        tm.texture_instructions += m.texture_instructions;
        tm.texture_accesses += m.texture_accesses;
        tm.texture_hits += m.texture_hits;
        tm.store_transactions += m.store_transactions;
        tm.constant_accesses += m.constant_accesses;
        tm.constant_hits += m.constant_hits;
        timing.datapath.merge(&sm.datapath());
        timing.issue_slots += sm.issue_slots;
        timing.latency_hiding_issues += sm.latency_hiding_issues;
        timing.warp_co_issues += sm.warp_co_issues;
        timing.lane_ops += sm.lane_ops;
        timing.sm_cycles.push(sm.busy_cycles);
        timing.cycles = timing.cycles.max(sm.last_busy.map(|c| c + 1).unwrap_or(0));
        if gpu.launch.drain_stores && sm.last_store_ack > 0 {
            // The kernel ends when its last store is accepted.
            timing.cycles = timing.cycles.max(sm.last_store_ack + 1);
        }
    }
    timing.issued = stats.warp_instructions;
    let l2s = l2.stats();
    timing.memory.l2_accesses = l2s.reads + l2s.writes + l2s.atomics;
    timing.memory.l2_hits = l2s.hits;
    timing.memory.dram_reads = l2s.dram_reads;
    timing.memory.dram_writes = l2s.dram_writes;
    timing.memory.dram_bytes = l2s.dram_bytes;
    timing.memory.l2_read_hit_sectors = l2s.read_hit_sectors;
    timing.memory.l2_read_miss_sectors = l2s.read_miss_sectors;
    timing.memory.l2_write_hit_sectors = l2s.write_hit_sectors;
    timing.memory.l2_write_miss_sectors = l2s.write_miss_sectors;
    timing.memory.noc_flits = l2s.flits;
    if let Some(d) = l2.dram_stats() {
        timing.memory.dram = d.clone();
        timing.memory.dram.channel_cycles = l2.dram_channel_cycles(timing.cycles);
    }
    stats
}
