//! The functional machine: one [`SmCore`] holding up to `max_resident_ctas` CTAs, issue contexts visited
//! round robin (each issues up to a quantum of instructions), deadlock and limit detection, and the result.

use crate::core::{IssueEnv, Jit, JitReport, Observer, SmCore, Watchdog};
use crate::device::DeviceState;
use crate::error::{DeadlockReport, LiveThreads, RunLimit, SimError};
use crate::launch::{Buffer, LaunchArgs, LaunchConfig};
use crate::mechanism::{Peek, Tracker};
use crate::memory::DeviceMemory;
use crate::printf::PrintfRecord;
use crate::program::Program;
use crate::stats::Stats;
use crate::Loaded;

/// The result of a run.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// Statistics (complete even when the run stopped early).
    pub stats: Stats,
    /// Why the run stopped early, if it did.
    pub error: Option<SimError>,
    /// Final contents of every buffer argument (`None` for scalars), in argument order.
    pub buffers: Vec<Option<Buffer>>,
    /// Where the kernel's branches are (indexed like [`Stats::branch_counts`]).
    pub branch_sites: Vec<crate::stats::BranchSite>,
    /// Final contents of the module variables named in [`LaunchConfig::dump_globals`].
    pub globals: Vec<(String, Buffer)>,
    /// Final contents of the buffers that struct arguments' pointer fields point into.
    pub fields: Vec<reconverge_program::FieldBuffer>,
    /// What the kernel's `printf` calls printed, one record per call of a thread: in execution order for
    /// a functional run, in thread order for a timed one (its SMs' records gathered,
    /// [`crate::printf::gather`]). [`RunResult::printf_in_thread_order`] gives the order to print.
    pub printf: Vec<PrintfRecord>,
    /// Whether `printf` output was dropped: a launch keeps at most [`crate::printf::OUTPUT_LIMIT`] bytes
    /// (CUDA's default printf FIFO size).
    pub printf_truncated: bool,
    /// What compiling straight-line segments did ([`reconverge_program::HostOptions::jit`]; in a timed run,
    /// every SM's together): segments, instructions and wall-clock time. Not a statistic: it depends on
    /// the host, never on the results.
    pub jit: JitReport,
}

impl RunResult {
    /// `completed`, `deadlock`, `limit` or `error`.
    pub fn outcome(&self) -> &'static str {
        match &self.error {
            None => "completed",
            Some(e) => e.outcome(),
        }
    }

    /// Whether the statistics cover only part of the run (it stopped early: deadlock, limit, error).
    pub fn partial(&self) -> bool {
        self.error.is_some()
    }

    /// The `printf` records in thread order: by linear CTA index, then linear thread index, then the
    /// order each thread printed them. CUDA leaves the order unspecified; this one is deterministic.
    pub fn printf_in_thread_order(&self) -> Vec<&PrintfRecord> {
        let mut out: Vec<&PrintfRecord> = self.printf.iter().collect();
        out.sort_by_key(|r| r.thread_key());
        out
    }

    /// This result with the `printf` output `(records, truncated)`.
    pub fn with_printf(self, (printf, printf_truncated): (Vec<PrintfRecord>, bool)) -> RunResult {
        RunResult { printf, printf_truncated, ..self }
    }

    /// The result of a run of a launch with `nargs` arguments that stopped with `error` before it started.
    pub fn failed(prog: &Program, stats: Stats, error: SimError, nargs: usize) -> RunResult {
        RunResult {
            stats,
            error: Some(error),
            buffers: vec![None; nargs],
            branch_sites: crate::stats::branch_sites(prog),
            globals: Vec::new(),
            fields: Vec::new(),
            printf: Vec::new(),
            printf_truncated: false,
            jit: JitReport::default(),
        }
    }

    /// The result of a run that got as far as `error` (or completed), with its outputs.
    pub fn finished(
        prog: &Program,
        stats: Stats,
        error: Option<SimError>,
        outputs: crate::device::Outputs,
    ) -> RunResult {
        RunResult {
            stats,
            error,
            buffers: outputs.buffers,
            branch_sites: crate::stats::branch_sites(prog),
            globals: outputs.globals,
            fields: outputs.fields,
            printf: Vec::new(),
            printf_truncated: false,
            jit: JitReport::default(),
        }
    }
}

/// Runs `kernel` (its program under its mechanism) with `args`. Pass the arguments by value (`args`) to let the device take the
/// buffers over instead of copying them ([`LaunchArgs`]).
pub fn run<'a>(
    kernel: &Loaded,
    cfg: &LaunchConfig,
    args: impl Into<LaunchArgs<'a>>,
    observer: &mut dyn Observer,
) -> RunResult {
    run_args(kernel, cfg, args.into(), observer)
}

/// [`run`] once the arguments are converted. Not generic, so that the machine is compiled once, here, for
/// every mechanism: a generic body would be compiled again, whole, in every crate and test binary that
/// calls [`run`].
fn run_args(kernel: &Loaded, cfg: &LaunchConfig, args: LaunchArgs<'_>, observer: &mut dyn Observer) -> RunResult {
    let prog = kernel.program();
    reconverge_mechanism::with_tracker!(kernel.mechanism(), |t| run_with(prog, t, cfg, args, observer))
}

fn run_with<T: Tracker>(
    prog: &Program,
    tracker: &T,
    cfg: &LaunchConfig,
    args: LaunchArgs<'_>,
    observer: &mut dyn Observer,
) -> RunResult {
    let empty = || Stats::new(prog, cfg.warp_size, T::STRUCTURE);
    let resident = cfg.limits.max_resident_ctas as u64;
    let nargs = args.as_slice().len();
    let mut dev =
        match cfg.validate(prog).map_err(SimError::from).and_then(|_| DeviceState::new(prog, args, cfg, resident, 0)) {
            Ok(d) => d,
            Err(e) => return RunResult::failed(prog, empty(), e, nargs),
        };
    let (stats, error, printed, jit) = execute(prog, tracker, cfg, &mut dev, observer);
    RunResult { jit, ..RunResult::finished(prog, stats, error, dev.into_outputs(prog, cfg)).with_printf(printed) }
}

/// Runs `kernel` on a device state the caller keeps between launches ([`DeviceState::resident`]): device
/// memory, the constant bank and the parameter buffer as the caller built them, changed in place. The
/// result carries statistics and the error, no outputs (the caller reads its memory itself). This is how
/// a whole program's launches share one device (`reconverge-cudart`).
pub fn run_resident(
    kernel: &Loaded,
    cfg: &LaunchConfig,
    dev: &mut DeviceState,
    observer: &mut dyn Observer,
) -> RunResult {
    let prog = kernel.program();
    reconverge_mechanism::with_tracker!(kernel.mechanism(), |t| run_resident_with(prog, t, cfg, dev, observer))
}

fn run_resident_with<T: Tracker>(
    prog: &Program,
    tracker: &T,
    cfg: &LaunchConfig,
    dev: &mut DeviceState,
    observer: &mut dyn Observer,
) -> RunResult {
    let checked = cfg
        .validate(prog)
        .map_err(SimError::from)
        .and_then(|_| dev.check_resident(prog, cfg, cfg.limits.max_resident_ctas as u64, 0));
    match checked {
        Ok(()) => {
            let (stats, error, printed, jit) = execute(prog, tracker, cfg, dev, observer);
            let done = RunResult::finished(prog, stats, error, crate::device::Outputs::default());
            RunResult { jit, ..done.with_printf(printed) }
        }
        Err(e) => RunResult::failed(prog, Stats::new(prog, cfg.warp_size, T::STRUCTURE), e, prog.params.len()),
    }
}

/// Runs the launch on one core over `dev`: the statistics, why it stopped early, if it did, the
/// `printf` output (execution order; whether some was dropped) and what compiling did.
fn execute<T: Tracker>(
    prog: &Program,
    tracker: &T,
    cfg: &LaunchConfig,
    dev: &mut DeviceState,
    observer: &mut dyn Observer,
) -> (Stats, Option<SimError>, (Vec<PrintfRecord>, bool), JitReport) {
    let mut core = SmCore::new(prog, tracker, cfg, 0, 1);
    let mut jit = Jit::for_policy(prog, (core.warps_per_cta(), cfg.warp_size), cfg.host.jit);
    let span = Span { ctas: 0..cfg.num_ctas(), resident: cfg.limits.max_resident_ctas as usize, issued_before: 0 };
    let error = simulate(&mut core, cfg, (&mut dev.mem, &dev.consts, &dev.params), span, jit.as_mut(), observer).err();
    let report = jit.as_ref().map(Jit::report).unwrap_or_default();
    (core.stats().clone(), error, core.take_printf(), report)
}

/// Runs CTAs `ctas` of a launch functionally on `core`, at most `resident` of them at once (with any
/// CTAs already resident on it), after `issued_before` warp instructions of the launch (they count
/// against `--max-instructions`), compiling hot segments when `jit` is given. This is how a timed launch
/// sampled by CTAs runs the CTAs it does not time (`reconverge-timing`, `CtaSampling`). Returns the warp
/// instructions issued here, or why the run stopped.
pub fn run_ctas_functional<'p, T: Tracker>(
    core: &mut SmCore<'p, T>,
    cfg: &LaunchConfig,
    memory: (&mut DeviceMemory, &[u8], &[u8]),
    (ctas, resident, issued_before): (std::ops::Range<u64>, usize, u64),
    jit: Option<&mut Jit<'p>>,
) -> Result<u64, SimError> {
    let before = core.stats().warp_instructions;
    let span = Span { ctas, resident, issued_before };
    simulate(core, cfg, memory, span, jit, &mut crate::NoObserver)?;
    Ok(core.stats().warp_instructions - before)
}

/// The part of a launch one run loop simulates: the CTAs it launches, how many may be resident at once,
/// and the warp instructions issued before it started (by a timed run that skipped these CTAs).
struct Span {
    ctas: std::ops::Range<u64>,
    resident: usize,
    issued_before: u64,
}

/// Instructions an issue context issues before the machine moves to the next (functional mode).
const QUANTUM: u32 = 64;

/// The run loop: keep CTAs resident, visit every issue context in turn, stop at a deadlock or a limit.
fn simulate<'p, T: Tracker>(
    core: &mut SmCore<'p, T>,
    cfg: &LaunchConfig,
    (mem, consts, params): (&mut DeviceMemory, &[u8], &[u8]),
    span: Span,
    mut jit: Option<&mut Jit<'p>>,
    observer: &mut dyn Observer,
) -> Result<(), SimError> {
    let total = span.ctas.end;
    let mut next_cta: u64 = span.ctas.start;
    let mut watchdog = Watchdog::default();
    let mut issued_total = span.issued_before;
    let mut contexts = Vec::new();
    let mut rotation = Vec::new();
    loop {
        while core.resident() < span.resident && next_cta < total {
            core.launch(next_cta);
            next_cta += 1;
        }
        if !core.has_work() {
            return Ok(());
        }
        let mut issued_round = 0u64;
        for c in 0..core.cta_slots() {
            contexts.clear();
            if T::ORDERED {
                contexts.push(0);
            } else {
                core.occupied(c, &mut contexts);
            }
            for &ctx in &contexts {
                let mut n = 0;
                while n < QUANTUM {
                    let Peek::Ready(group) = next_group::<T>(core, c, ctx) else { break };
                    let env = IssueEnv {
                        mem,
                        consts,
                        params,
                        clock: issued_total,
                        cycle: None,
                        track: watchdog.track,
                        record_access: false,
                    };
                    // Straight-line code issues as one run, unless an observer follows this context.
                    let left = cfg.limits.max_instructions.map_or(u64::MAX, |m| m.saturating_sub(issued_total));
                    let room = u64::from(QUANTUM - n).min(watchdog.room(cfg.limits.livelock_window)).min(left);
                    let alone = room >= 2 && !core.linear(c).is_some_and(|l| observer.wants(l, group.ctx));
                    let mut run = if alone { core.straight_run(c, &group, room as u32) } else { 1 };
                    // Groups taking turns: whole rounds of pure lane instructions at once.
                    let rounds = if alone && run < 2 { core.rounds(c, &group, room as u32, &mut rotation) } else { 0 };
                    let (_, quiet) = if rounds > 0 {
                        run = rounds * rotation.len() as u32;
                        // Pure lane instructions: none changes anything the watchdog counts.
                        (core.issue_rounds(c, &group, (rounds, &rotation), env, jit.as_deref_mut())?, run)
                    } else if run >= 2 {
                        core.issue_run(c, &group, run, env, jit.as_deref_mut())?
                    } else {
                        let issued = core.issue(c, &group, env, observer)?;
                        (issued, u32::from(!issued.changed))
                    };
                    issued_total += u64::from(run);
                    let suspect = watchdog.observe_run(u64::from(run), u64::from(quiet), cfg.limits.livelock_window);
                    if watchdog.take_started() {
                        core.reset_quiet();
                    }
                    if suspect && watchdog.livelocked(core.quiet_threads(), core.program().insts.len()) {
                        let mut live = LiveThreads::default();
                        core.where_threads(24, &mut live);
                        return Err(SimError::Deadlock { report: Box::new(watchdog.report(core_name(core), live)) });
                    }
                    if let Some(max) = cfg.limits.max_instructions {
                        if issued_total >= max {
                            return Err(SimError::Limit(RunLimit::Instructions(max)));
                        }
                    }
                    n += run;
                    issued_round += u64::from(run);
                }
            }
        }
        core.retire();
        if cfg.cancelled() {
            return Err(SimError::Interrupted);
        }
        if issued_round == 0 && core.has_work() {
            let mut live = LiveThreads::default();
            core.where_threads(24, &mut live);
            let report = Box::new(DeadlockReport::Stall { mechanism: core_name(core), live });
            return Err(SimError::Deadlock { report });
        }
    }
}

/// The group context `ctx` of CTA `c` issues next. For mechanisms that order issue (DWF), context 0
/// stands for "the CTA's turn" and the mechanism's choice issues.
fn next_group<T: Tracker>(core: &SmCore<'_, T>, c: usize, ctx: u32) -> Peek {
    if !T::ORDERED {
        return core.peek(c, ctx);
    }
    if ctx != 0 {
        return Peek::Empty;
    }
    core.choose(c).map(Peek::Ready).unwrap_or(Peek::Empty)
}

fn core_name<T: Tracker>(core: &SmCore<'_, T>) -> &'static str {
    core.tracker_name()
}
