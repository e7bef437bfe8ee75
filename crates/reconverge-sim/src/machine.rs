//! Running a launch: device setup, CTA dispatch, the warp scheduling loop, barriers, deadlock and limit
//! detection, and collecting results.

use crate::cta::Cta;
use crate::device::DeviceState;
use crate::error::SimError;
use crate::exec::{execute, location, BarrierArrival, Env, GlobalMemory, Scratch};
use crate::launch::{Arg, Buffer, LaunchConfig};
use crate::mechanism::{
    BarrierMode, EntryView, Flow, Mechanism, NoReconvergence, PdomStack, SsyStack, UpdateCtx, WarpMechanism,
};
use crate::memory::DeviceMemory;
use crate::program::{BarKind, InstClass, Program};
use crate::stats::Stats;
use crate::types::{lanes, LaneMask, Pc};

/// One issued instruction, as observers see it.
#[derive(Clone, Debug)]
pub struct IssueEvent<'a> {
    /// Linear CTA index.
    pub cta: u64,
    /// Warp index in the CTA.
    pub warp: u32,
    /// The pc issued.
    pub pc: Pc,
    /// The lanes issued.
    pub mask: LaneMask,
    /// What the instruction did to control flow.
    pub flow: &'a Flow,
    /// The warp's reconvergence structure after the instruction (bottom first).
    pub entries: Vec<EntryView>,
    /// Warp instructions issued before this one (whole launch).
    pub seq: u64,
}

/// Receives issued instructions (traces, visualisations).
pub trait Observer {
    /// Whether events of this warp are wanted (events are only built for wanted warps).
    fn wants(&self, cta: u64, warp: u32) -> bool;
    /// Called after an instruction issued and the mechanism updated.
    fn on_issue(&mut self, ev: &IssueEvent<'_>);
}

/// An observer that wants nothing.
pub struct NoObserver;

impl Observer for NoObserver {
    fn wants(&self, _: u64, _: u32) -> bool {
        false
    }
    fn on_issue(&mut self, _: &IssueEvent<'_>) {}
}

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

    /// The result of a run that stopped with `error` before or during its start.
    pub fn failed(prog: &Program, stats: Stats, error: SimError, args: &[Arg]) -> RunResult {
        RunResult {
            stats,
            error: Some(error),
            buffers: args.iter().map(|_| None).collect(),
            branch_sites: crate::stats::branch_sites(prog),
            globals: Vec::new(),
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
        }
    }
}

/// A static warp's mechanism state and barrier status.
pub struct WarpSlot<S> {
    /// The mechanism's structure for this warp.
    pub st: S,
    /// Warp-mode barriers: the barrier this warp waits at.
    pub at_barrier: Option<u32>,
}

/// A resident CTA: its architectural state and its warps.
pub struct Resident<S> {
    /// The CTA.
    pub cta: Cta,
    /// Its static warps.
    pub warps: Vec<WarpSlot<S>>,
}

impl<S> Resident<S> {
    /// Launches CTA `linear` of `cfg` (all warps at the kernel entry).
    pub fn new<M: WarpMechanism<State = S>>(prog: &Program, mech: &M, cfg: &LaunchConfig, linear: u64) -> Resident<S> {
        let id = [
            (linear % cfg.grid[0] as u64) as u32,
            ((linear / cfg.grid[0] as u64) % cfg.grid[1] as u64) as u32,
            (linear / (cfg.grid[0] as u64 * cfg.grid[1] as u64)) as u32,
        ];
        let cta = Cta::new(prog, id, linear, cfg.block, cfg.warp_size, cfg.dynamic_shared);
        let entry = prog.functions[0].entry;
        let warps = cta.live.iter().map(|&m| WarpSlot { st: mech.init(entry, m), at_barrier: None }).collect();
        Resident { cta, warps }
    }

    /// Lanes of warp `wi` that wait at a thread-mode barrier.
    pub fn blocked_lanes(&self, wi: usize, mode: BarrierMode) -> LaneMask {
        if mode == BarrierMode::Thread {
            self.cta.barriers.iter().fold(0, |a, b| a | b.waiting.get(wi).copied().unwrap_or(0))
        } else {
            0
        }
    }

    /// Whether warp `wi` may issue now (live and not held at a warp-mode barrier), and its next group.
    pub fn next_group<M: WarpMechanism<State = S>>(&mut self, wi: usize, mech: &M) -> Option<(Pc, LaneMask)> {
        let live = self.cta.live[wi];
        if live == 0 || self.warps[wi].at_barrier.is_some() {
            return None;
        }
        let blocked = self.blocked_lanes(wi, mech.barrier_mode());
        mech.select(&mut self.warps[wi].st, live, blocked)
    }
}

/// What issuing one instruction did, beyond the architectural state.
pub struct Issued {
    /// The control flow reported to the mechanism.
    pub flow: Flow,
    /// Whether the instruction was a barrier the warp now waits at.
    pub barrier: bool,
    /// Whether a barrier of the CTA released during this instruction (its arrival or an exit completed it).
    pub released: bool,
    /// Whether some thread of the warp exited.
    pub exited: bool,
}

/// Issues the group (`pc`, `mask`) of warp `wi`: executes it, updates statistics and the mechanism,
/// handles barriers and exits, and tells the observer.
#[allow(clippy::too_many_arguments)]
pub fn issue<M: WarpMechanism, G: GlobalMemory>(
    r: &mut Resident<M::State>,
    wi: usize,
    pc: Pc,
    mask: LaneMask,
    mech: &M,
    env: &mut Env<G>,
    sc: &mut Scratch,
    stats: &mut Stats,
    observer: &mut dyn Observer,
) -> Result<Issued, SimError> {
    let prog = env.prog;
    let live = r.cta.live[wi];
    let fx = execute(env, sc, &mut r.cta, wi as u32, pc, mask)?;
    count_issue(stats, prog, pc, mask, &fx.flow);
    let live_after = r.cta.live[wi];
    mech.update(&mut r.warps[wi].st, pc, mask, &fx.flow, &UpdateCtx { prog, live: live_after }).map_err(|e| {
        SimError::Trap {
            what: format!("{} mechanism: {e}", mech.name()),
            at: Box::new(location(prog, &r.cta, wi as u32, pc, None)),
        }
    })?;
    stats.max_structure = stats.max_structure.max(mech.depth(&r.warps[wi].st));
    let mode = mech.barrier_mode();
    let mut barrier = false;
    let mut released = false;
    if let Some(arr) = &fx.barrier {
        stats.barriers += 1;
        barrier = arr.kind != BarKind::Arrive;
        released |= arrive(r, wi, mode, arr, &mut env.changed);
    }
    if live_after != live {
        // Exits may complete a barrier the exited threads no longer hold up.
        released |= try_release(r, mode, &mut env.changed);
    }
    if observer.wants(r.cta.linear, wi as u32) {
        observer.on_issue(&IssueEvent {
            cta: r.cta.linear,
            warp: wi as u32,
            pc,
            mask,
            flow: &fx.flow,
            entries: mech.entries(&r.warps[wi].st),
            seq: stats.warp_instructions - 1,
        });
    }
    Ok(Issued { flow: fx.flow, barrier, released, exited: live_after != live })
}

/// Counts one issued instruction: totals, the kernel's own versus mechanism-inserted instructions, the
/// active-lane histogram and the kernel's branches.
#[inline]
fn count_issue(stats: &mut Stats, prog: &Program, pc: Pc, mask: LaneMask, flow: &Flow) {
    let info = &prog.info[pc as usize];
    let active = mask.count_ones() as u64;
    stats.warp_instructions += 1;
    stats.thread_instructions += active;
    stats.by_class.add(info.class);
    if info.class == InstClass::Mechanism {
        stats.mechanism_instructions += 1;
        stats.mechanism_thread_instructions += active;
        return;
    }
    stats.lane_histogram[active as usize - 1] += 1;
    if let Some(b) = info.branch {
        let split = crate::mechanism::splits(mask, flow);
        stats.branches += 1;
        stats.divergent_branches += split as u64;
        let c = &mut stats.branch_counts[b as usize];
        c.executions += 1;
        c.divergent += split as u64;
        c.active_lanes += active;
    }
}

/// Counts warp instructions without progress and declares a livelock after two windows (the second one
/// watching register values too).
#[derive(Clone, Debug, Default)]
pub struct Watchdog {
    since_progress: u64,
}

impl Watchdog {
    /// Records one issued instruction; `true` when the machine has made no progress for too long.
    #[inline]
    pub fn tick<G: GlobalMemory>(&mut self, env: &mut Env<G>, window: u64) -> bool {
        if env.changed {
            self.since_progress = 0;
            env.track = false;
            env.changed = false;
        } else {
            self.since_progress += 1;
            if self.since_progress == window {
                env.track = true;
            } else if self.since_progress >= 2 * window {
                return true;
            }
        }
        false
    }
}

/// Runs `prog` with `args` under `mech`.
pub fn run(
    prog: &Program,
    mech: Mechanism,
    cfg: &LaunchConfig,
    args: &[Arg],
    observer: &mut dyn Observer,
) -> RunResult {
    match mech {
        Mechanism::Pdom => run_with(prog, &PdomStack, cfg, args, observer),
        Mechanism::Ssy => run_with(prog, &SsyStack, cfg, args, observer),
        Mechanism::None => run_with(prog, &NoReconvergence, cfg, args, observer),
    }
}

fn run_with<M: WarpMechanism>(
    prog: &Program,
    mech: &M,
    cfg: &LaunchConfig,
    args: &[Arg],
    observer: &mut dyn Observer,
) -> RunResult {
    let mut stats = Stats::new(prog, cfg.warp_size, M::STRUCTURE);
    let resident = cfg.max_resident_ctas as u64;
    let mut dev = match cfg.validate(prog).and_then(|_| DeviceState::new(prog, args, cfg, resident)) {
        Ok(d) => d,
        Err(e) => return RunResult::failed(prog, stats, e, args),
    };
    let error = simulate(prog, mech, cfg, &mut dev.mem, &dev.consts, &dev.params, &mut stats, observer).err();
    RunResult::finished(prog, stats, error, dev.outputs(prog, args, cfg))
}

/// Instructions a warp issues before the scheduler moves to the next warp (functional mode).
const QUANTUM: u32 = 64;

#[allow(clippy::too_many_arguments)]
fn simulate<M: WarpMechanism>(
    prog: &Program,
    mech: &M,
    cfg: &LaunchConfig,
    mem: &mut DeviceMemory,
    consts: &[u8],
    params: &[u8],
    stats: &mut Stats,
    observer: &mut dyn Observer,
) -> Result<(), SimError> {
    let total = cfg.num_ctas();
    let mut next_cta: u64 = 0;
    let mut resident: Vec<Resident<M::State>> = Vec::new();
    let mut env = Env {
        prog,
        mem,
        consts,
        params,
        grid: cfg.grid,
        block: cfg.block,
        sm: 0,
        nsm: 1,
        clock: 0,
        local_limit: cfg.local_bytes,
        dynamic_shared: cfg.dynamic_shared,
        track: false,
        changed: false,
        access: Default::default(),
    };
    let mut sc = Scratch::default();
    let mut watchdog = Watchdog::default();
    loop {
        while resident.len() < cfg.max_resident_ctas as usize && next_cta < total {
            let r = Resident::new(prog, mech, cfg, next_cta);
            stats.ctas += 1;
            stats.threads += r.cta.nthreads as u64;
            resident.push(r);
            next_cta += 1;
        }
        if resident.is_empty() {
            return Ok(());
        }
        let mut issued_round = 0u64;
        for ri in 0..resident.len() {
            for wi in 0..resident[ri].warps.len() {
                let mut n = 0;
                while n < QUANTUM {
                    let r = &mut resident[ri];
                    let Some((pc, mask)) = r.next_group(wi, mech) else { break };
                    if pc as usize >= prog.insts.len() {
                        return Err(SimError::Trap {
                            what: format!("control reached pc {pc}, past the end of the program"),
                            at: Box::new(location(prog, &r.cta, wi as u32, pc.min(prog.insts.len() as u32 - 1), None)),
                        });
                    }
                    env.clock = stats.warp_instructions;
                    issue(r, wi, pc, mask, mech, &mut env, &mut sc, stats, observer)?;
                    if watchdog.tick(&mut env, cfg.livelock_window) {
                        return Err(SimError::Deadlock {
                            report: livelock_report(prog, mech, &resident_view(&resident), cfg.livelock_window),
                        });
                    }
                    if let Some(max) = cfg.max_instructions {
                        if stats.warp_instructions >= max {
                            return Err(SimError::Limit {
                                what: format!("--max-instructions {max} warp instructions"),
                            });
                        }
                    }
                    n += 1;
                    issued_round += 1;
                }
            }
        }
        resident.retain(|r| !r.cta.done());
        if issued_round == 0 && !resident.is_empty() {
            return Err(SimError::Deadlock { report: stall_report(prog, mech, &resident_view(&resident)) });
        }
    }
}

/// Accounts a barrier arrival of warp `wi` (and releases the barrier when complete); `true` when a barrier
/// released.
pub fn arrive<S>(r: &mut Resident<S>, wi: usize, mode: BarrierMode, arr: &BarrierArrival, changed: &mut bool) -> bool {
    let nwarps = r.cta.nwarps as usize;
    let b = &mut r.cta.barriers[arr.id as usize];
    if b.waiting.len() != nwarps {
        b.waiting = vec![0; nwarps];
    }
    if arr.count.is_some() {
        b.expected = arr.count;
    }
    if let Some((vals, dst, is_pred)) = arr.red {
        if b.red_kind.is_none() {
            b.red_and = true;
            b.red_or = false;
            b.red_count = 0;
        }
        b.red_kind = Some(arr.kind);
        b.red_count += vals.count_ones();
        b.red_and &= vals == arr.lanes;
        b.red_or |= vals != 0;
        b.red_dst.push((wi as u32, arr.lanes, dst, is_pred));
    }
    let waits = arr.kind != BarKind::Arrive;
    match mode {
        BarrierMode::Warp => {
            b.arrived += 1;
            if waits {
                r.warps[wi].at_barrier = Some(arr.id);
                b.waiting[wi] = arr.lanes;
            }
        }
        BarrierMode::Thread => {
            b.arrived += arr.lanes.count_ones();
            if waits {
                b.waiting[wi] |= arr.lanes;
            }
        }
    }
    try_release(r, mode, changed)
}

/// Releases every barrier whose expected arrivals are complete; `true` when one released.
pub fn try_release<S>(r: &mut Resident<S>, mode: BarrierMode, changed: &mut bool) -> bool {
    let w = r.cta.w as u32;
    let mut released = false;
    for id in 0..r.cta.barriers.len() {
        let b = &r.cta.barriers[id];
        if b.arrived == 0 {
            continue;
        }
        let needed = match (mode, b.expected) {
            (BarrierMode::Warp, Some(c)) => c.div_ceil(w),
            (BarrierMode::Warp, None) => r.cta.live_warps(),
            (BarrierMode::Thread, Some(c)) => c,
            (BarrierMode::Thread, None) => r.cta.live_threads(),
        };
        if b.arrived < needed {
            continue;
        }
        let b = &mut r.cta.barriers[id];
        let result_count = b.red_count;
        let (rand, ror) = (b.red_and, b.red_or);
        let kind = b.red_kind.take();
        let dsts = std::mem::take(&mut b.red_dst);
        b.arrived = 0;
        b.expected = None;
        b.waiting.iter_mut().for_each(|m| *m = 0);
        for slot in r.warps.iter_mut() {
            if slot.at_barrier == Some(id as u32) {
                slot.at_barrier = None;
            }
        }
        for (wi, lanes_m, dst, is_pred) in dsts {
            if is_pred {
                let v = if kind == Some(BarKind::RedAnd) { rand } else { ror };
                let slot = &mut r.cta.preds[dst as usize * r.cta.nwarps as usize + wi as usize];
                *slot = (*slot & !lanes_m) | if v { lanes_m } else { 0 };
            } else {
                for l in lanes(lanes_m) {
                    r.cta.regs[dst as usize * r.cta.padded + wi as usize * r.cta.w + l] = result_count as u64;
                }
            }
        }
        *changed = true;
        released = true;
    }
    released
}

/// A warp's mechanism state and the barrier it waits at.
type WarpView<'a, S> = (&'a S, Option<u32>);

/// A read-only view of the resident CTAs for reports.
pub struct View<'a, S> {
    ctas: Vec<(&'a Cta, Vec<WarpView<'a, S>>)>,
}

/// The view of `resident` for deadlock reports.
pub fn resident_view<S>(resident: &[Resident<S>]) -> View<'_, S> {
    View::of(resident.iter())
}

impl<'a, S> View<'a, S> {
    /// The view of some resident CTAs.
    pub fn of(residents: impl Iterator<Item = &'a Resident<S>>) -> View<'a, S> {
        View { ctas: residents.map(|r| (&r.cta, r.warps.iter().map(|w| (&w.st, w.at_barrier)).collect())).collect() }
    }
}

fn lane_ranges(mask: LaneMask) -> String {
    let mut parts = Vec::new();
    let mut it = lanes(mask).peekable();
    while let Some(start) = it.next() {
        let mut end = start;
        while it.peek() == Some(&(end + 1)) {
            end = it.next().unwrap_or(end);
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
    }
    parts.join(",")
}

fn where_threads<M: WarpMechanism>(prog: &Program, mech: &M, view: &View<'_, M::State>, limit: usize) -> String {
    let mut lines = Vec::new();
    'outer: for (cta, warps) in &view.ctas {
        for (wi, (st, at_bar)) in warps.iter().enumerate() {
            let live = cta.live[wi];
            if live == 0 {
                continue;
            }
            // Each lane belongs to the topmost entry holding it.
            let entries = mech.entries(st);
            let mut seen = 0u64;
            let mut first = true;
            for e in entries.iter().rev() {
                let m = e.mask & live & !seen;
                if m == 0 {
                    continue;
                }
                seen |= m;
                let state = if let Some(b) = at_bar {
                    format!("waiting at barrier {b}")
                } else if first {
                    "running (issuing)".to_string()
                } else {
                    "waiting in the reconvergence structure".to_string()
                };
                first = false;
                let t0 = cta.thread_index(wi as u32, m.trailing_zeros() as usize);
                lines.push(format!(
                    "  block ({},{},{}) warp {wi} lanes {} (first thread ({},{},{})) {state} at {}",
                    cta.id[0],
                    cta.id[1],
                    cta.id[2],
                    lane_ranges(m),
                    t0[0],
                    t0[1],
                    t0[2],
                    prog.describe_pc(e.pc)
                ));
                if lines.len() >= limit {
                    lines.push("  ...".into());
                    break 'outer;
                }
            }
            for b in &cta.barriers {
                let m = b.waiting.get(wi).copied().unwrap_or(0) & live & !seen;
                if m != 0 {
                    lines.push(format!(
                        "  block ({},{},{}) warp {wi} lanes {} waiting at a barrier",
                        cta.id[0],
                        cta.id[1],
                        cta.id[2],
                        lane_ranges(m)
                    ));
                }
            }
        }
    }
    lines.join("\n")
}

/// The report of a livelock (no change of any register or memory for two windows).
pub fn livelock_report<M: WarpMechanism>(prog: &Program, mech: &M, view: &View<'_, M::State>, window: u64) -> String {
    format!(
        "no thread changed any register, predicate or memory location in the last {window} warp instructions \
         under `{}`; the threads spin forever. Live threads:\n{}",
        mech.name(),
        where_threads(prog, mech, view, 24)
    )
}

/// The report of a stall deadlock (no warp can issue).
pub fn stall_report<M: WarpMechanism>(prog: &Program, mech: &M, view: &View<'_, M::State>) -> String {
    format!(
        "no warp can issue under `{}` (every live thread waits at a barrier or for threads that cannot arrive). \
         Live threads:\n{}",
        mech.name(),
        where_threads(prog, mech, view, 24)
    )
}
