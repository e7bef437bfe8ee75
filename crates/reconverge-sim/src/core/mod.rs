//! The SM core: resident CTAs, the divergence mechanism's state, and the one path by which an issue group
//! is executed. The functional machine ([`crate::run`]) and the timing model drive the same core: they ask
//! what each issue context holds ([`SmCore::peek`], pure), decide which group issues (round robin in
//! functional mode; schedulers, scoreboards and latencies in the timing model), and issue it
//! ([`SmCore::issue`]: execute, count, update the mechanism, account barriers and exits, notify the
//! observer). Everything about a CTA's architectural state stays inside this module.

mod barrier;
mod cta;
mod deferred;
mod exec;
mod jit;
mod lanes;
mod report;
mod rounds;

pub use jit::{Jit, JitReport, HOT_RUNS};
pub use report::Watchdog;

use crate::access::{AccessLog, GlobalMemory};
use crate::error::SimError;
use crate::launch::LaunchConfig;
use crate::mechanism::{BarrierMode, CtaView, Delay, EntryView, Flow, Group, LaneMap, Peek, Tracker, UpdateCtx};
use crate::printf::{PrintfLog, PrintfRecord};
use crate::program::{InstClass, Program};
use crate::stats::Stats;
use crate::types::{LaneMask, Pc};
use cta::Cta;
use exec::{execute, location, Env, Fixed, Scratch};
use lanes::{Mixed, Whole};
use smallvec::SmallVec;
use std::borrow::Cow;

/// One issued instruction, as observers see it.
#[derive(Clone, Debug)]
pub struct IssueEvent<'a> {
    /// Linear CTA index.
    pub cta: u64,
    /// The issue context (the static warp for per-warp mechanisms).
    pub ctx: u32,
    /// The pc issued.
    pub pc: Pc,
    /// The lanes issued.
    pub mask: LaneMask,
    /// The threads the lanes hold.
    pub lanes: &'a LaneMap,
    /// What the instruction did to control flow.
    pub flow: &'a Flow,
    /// The mechanism's structure after the instruction (bottom first).
    pub entries: Vec<EntryView>,
    /// The size of the structure the issue's warp (or CTA, or SM) holds after the instruction, as the
    /// statistics count it (`max_stack_depth`, `max_paths`, `max_pool_warps`).
    pub structure: usize,
    /// Warp instructions issued before this one (by this core).
    pub seq: u64,
    /// The group held every live (not exited) thread of each static warp it draws from: the warp ran
    /// converged. `false` is a divergent execution.
    pub whole_warp: bool,
    /// The value registers the instruction wrote and, for each, the value in every issued lane (lane
    /// order), read after the instruction (for checks such as the variance analysis' soundness test).
    pub written: Vec<(u32, Vec<u64>)>,
}

/// Receives issued instructions (traces, visualisations).
pub trait Observer {
    /// Whether events of context `ctx` of CTA `cta` are wanted (events are only built for wanted ones).
    fn wants(&self, cta: u64, ctx: u32) -> bool;
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

/// What a driver provides for one issue.
pub struct IssueEnv<'e, G: GlobalMemory> {
    /// Device memory (or the timing model's per-SM view of it).
    pub mem: &'e mut G,
    /// The constant bank.
    pub consts: &'e [u8],
    /// The kernel parameter buffer.
    pub params: &'e [u8],
    /// The value `%clock` reads.
    pub clock: u64,
    /// The timing model's cycle (`None` in functional runs).
    pub cycle: Option<u64>,
    /// Watch register values for the livelock detector.
    pub track: bool,
    /// Record the instruction's memory accesses ([`SmCore::last_access`]).
    pub record_access: bool,
}

/// What issuing one group did, beyond the architectural state.
#[derive(Clone, Copy, Debug)]
pub struct Issued {
    /// The instruction was a barrier its lanes now wait at.
    pub barrier: bool,
    /// A barrier of the CTA released during this instruction (its arrival or an exit completed it).
    pub released: bool,
    /// Some thread exited.
    pub exited: bool,
    /// Memory, a barrier or (while tracking) a register or predicate changed.
    pub changed: bool,
    /// A delay of the mechanism's own logic (compaction, warp-pool insertion), paid by the threads
    /// [`SmCore::delayed`] names.
    pub delay: Option<Delay>,
    /// The size of the issuing warp's (or CTA's, or SM's) structure after the instruction.
    pub structure: usize,
}

struct Resident<C> {
    cta: Cta,
    st: C,
    contexts: u32,
    /// Instructions each thread slot issued while the livelock watchdog watched values
    /// ([`SmCore::quiet_threads`]); empty until then.
    quiet: Vec<u32>,
}

/// What the threads of an SM did while the livelock watchdog watched values and nothing changed: how many
/// issued at all, and how many of those issued no more instructions than the program has (so they have not
/// provably repeated a state yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuietThreads {
    /// Threads that issued at least one instruction.
    pub issued: u64,
    /// Threads that issued at least one but at most as many instructions as the program holds.
    pub short: u64,
}

impl QuietThreads {
    /// Adds another SM's counts.
    pub fn plus(self, o: QuietThreads) -> QuietThreads {
        QuietThreads { issued: self.issued + o.issued, short: self.short + o.short }
    }

    /// Every thread that issued is provably in a cycle: it issued more instructions than the program
    /// has while nothing changed, so it executed some instruction twice in the same state.
    pub fn all_cycling(self) -> bool {
        self.issued > 0 && self.short == 0
    }
}

/// Counts one issue of `group` per thread while the watchdog watches (see [`QuietThreads`]).
fn count_quiet(
    total: &mut QuietThreads,
    counts: &mut Vec<u32>,
    cta: &Cta,
    threads: &LaneMap,
    mask: LaneMask,
    program_len: usize,
) {
    if counts.is_empty() {
        counts.resize(cta.padded, 0);
    }
    let limit = u32::try_from(program_len).unwrap_or(u32::MAX);
    for l in crate::types::lanes(mask) {
        let Some(n) = threads.slot_of(l, cta.w as u32).and_then(|slot| counts.get_mut(slot)) else { continue };
        *n = n.saturating_add(1);
        if *n == 1 {
            total.issued += 1;
            total.short += 1;
        }
        if *n == limit.saturating_add(1) {
            total.short -= 1;
        }
    }
}

/// One SM's resident CTAs under mechanism `T`.
pub struct SmCore<'a, T: Tracker> {
    prog: &'a Program,
    tracker: &'a T,
    launch: &'a LaunchConfig,
    mech: T::Sm,
    ctas: Vec<Option<Resident<T::Cta>>>,
    stats: Stats,
    scratch: Scratch,
    access: AccessLog,
    fixed: Fixed,
    delayed: Vec<(u32, LaneMask)>,
    scalar: Option<crate::scalarize::ScalarCounter>,
    quiet: QuietThreads,
    /// Static warps per CTA.
    wpc: u32,
    /// The CTA slots in which the last issue released a barrier.
    released: SmallVec<[usize; 2]>,
    /// The SM-wide view ([`Tracker::SM_POOL`] only).
    view: SmView,
    /// The output of the `printf` calls executed here.
    printf: PrintfLog,
    /// Pure lane instructions issued but executed later ([`SmCore::defer_pure_instructions`]).
    deferral: Option<deferred::Deferral<'a>>,
    /// Per pc, the pure lane instructions from it ([`jit::pure_runs`]), for mechanisms that issue rounds
    /// of turns ([`Tracker::ROUNDS`]; empty for the others).
    pure_run: Vec<u16>,
}

impl<'a, T: Tracker> SmCore<'a, T> {
    /// An empty SM `sm_index` of `nsm`.
    pub fn new(prog: &'a Program, tracker: &'a T, launch: &'a LaunchConfig, sm_index: u32, nsm: u32) -> Self {
        let mut stats = Stats::new(prog, launch.warp_size, T::STRUCTURE);
        stats.declare_mechanism::<T>();
        SmCore {
            prog,
            tracker,
            launch,
            mech: tracker.new_sm(prog, launch),
            ctas: Vec::new(),
            stats,
            scratch: Scratch::default(),
            access: AccessLog::default(),
            delayed: Vec::new(),
            scalar: prog.scalar.as_ref().map(|_| Default::default()),
            quiet: QuietThreads::default(),
            wpc: launch.threads_per_cta().div_ceil(launch.warp_size.max(1)),
            view: SmView::default(),
            released: SmallVec::new(),
            printf: PrintfLog::default(),
            deferral: None,
            pure_run: if T::ROUNDS { jit::pure_runs(prog) } else { Vec::new() },
            fixed: Fixed {
                grid: launch.grid,
                block: launch.block,
                sm: sm_index,
                nsm,
                local_limit: launch.local_bytes,
                dynamic_shared: launch.dynamic_shared,
            },
        }
    }

    /// Makes CTA `linear` of the launch resident; returns its index in this SM.
    pub fn launch(&mut self, linear: u64) -> usize {
        let g = self.launch.grid;
        let id = [
            (linear % g[0] as u64) as u32,
            ((linear / g[0] as u64) % g[1] as u64) as u32,
            (linear / (g[0] as u64 * g[1] as u64)) as u32,
        ];
        let cta = Cta::new(self.prog, id, linear, self.launch.block, self.launch.warp_size, self.launch.dynamic_shared);
        let index = match self.ctas.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.ctas.push(None);
                self.ctas.len() - 1
            }
        };
        let entry = self.prog.functions[0].entry;
        if T::SM_POOL {
            self.view.sync(index, Some(&cta), self.wpc);
        }
        let view = if T::SM_POOL { self.view.of(cta.w) } else { cta.view() };
        let st = self.tracker.launch(&mut self.mech, index as u32, &view, entry);
        let contexts = self.tracker.contexts(cta.nwarps, cta.nthreads);
        self.stats.ctas += 1;
        self.stats.threads += cta.nthreads as u64;
        if let Some(sc) = &mut self.scalar {
            sc.launch(index, &cta.live, cta.w);
        }
        self.ctas[index] = Some(Resident { cta, st, contexts, quiet: Vec::new() });
        if let Some(d) = &mut self.deferral {
            d.clear_slot(index);
        }
        index
    }

    /// CTA slots (some may be empty).
    pub fn cta_slots(&self) -> usize {
        self.ctas.len()
    }

    /// Whether CTA slot `cta` holds a CTA.
    pub fn is_resident(&self, cta: usize) -> bool {
        self.ctas.get(cta).is_some_and(Option::is_some)
    }

    /// Whether any CTA is resident.
    pub fn has_work(&self) -> bool {
        self.ctas.iter().any(Option::is_some)
    }

    /// Resident CTAs.
    pub fn resident(&self) -> usize {
        self.ctas.iter().flatten().count()
    }

    /// Issue contexts of CTA `cta` (0 if the slot is empty).
    pub fn contexts(&self, cta: usize) -> u32 {
        self.ctas.get(cta).and_then(Option::as_ref).map(|r| r.contexts).unwrap_or(0)
    }

    /// The linear index of CTA slot `cta`.
    pub fn linear(&self, cta: usize) -> Option<u64> {
        self.ctas.get(cta).and_then(Option::as_ref).map(|r| r.cta.linear)
    }

    /// Warps of a CTA of this launch (all CTAs have the same shape).
    pub fn warps_per_cta(&self) -> u32 {
        self.launch.threads_per_cta().div_ceil(self.launch.warp_size)
    }

    /// Appends the contexts of CTA `cta` that may hold a group now (increasing).
    pub fn occupied(&self, cta: usize, out: &mut Vec<u32>) {
        if let Some(r) = self.ctas.get(cta).and_then(Option::as_ref) {
            self.tracker.occupied(&self.mech, &r.st, r.contexts, out);
        }
    }

    /// The hardware warp slot of CTA `cta` that context `ctx` occupies (its scheduler's).
    pub fn hw_warp(&self, cta: usize, ctx: u32) -> u32 {
        match self.ctas.get(cta).and_then(Option::as_ref) {
            Some(r) => self.tracker.hw_warp(&r.st, ctx),
            None => ctx,
        }
    }

    /// What context `ctx` of CTA `cta` holds now. Pure.
    #[inline]
    pub fn peek(&self, cta: usize, ctx: u32) -> Peek {
        match self.ctas.get(cta).and_then(Option::as_ref) {
            Some(r) => self.tracker.peek(&self.mech, &r.st, &self.view_of(&r.cta), ctx),
            None => Peek::Empty,
        }
    }

    /// For mechanisms that order issue ([`Tracker::ORDERED`]): the ready group of CTA `cta` the mechanism
    /// would issue next. Pure.
    pub fn choose(&self, cta: usize) -> Option<Group> {
        let r = self.ctas.get(cta).and_then(Option::as_ref)?;
        self.tracker.choose(&self.mech, &r.st, &self.view_of(&r.cta))
    }

    /// What the mechanism sees of CTA `cta`: the CTA itself, or the SM for [`Tracker::SM_POOL`].
    #[inline]
    fn view_of<'s>(&'s self, cta: &'s Cta) -> CtaView<'s> {
        if T::SM_POOL {
            self.view.of(cta.w)
        } else {
            cta.view()
        }
    }

    /// The mechanism's name.
    pub fn tracker_name(&self) -> &'static str {
        self.tracker.name()
    }

    /// Issues `group` of CTA `cta`: executes it, counts it, updates the mechanism, accounts barriers and
    /// exits, and tells the observer. A group that draws threads from several CTAs ([`Tracker::SM_POOL`])
    /// executes once per CTA, each part with its own CTA's state; it is counted and updated once.
    pub fn issue<G: GlobalMemory>(
        &mut self,
        cta: usize,
        group: &Group,
        env: IssueEnv<'_, G>,
        observer: &mut dyn Observer,
    ) -> Result<Issued, SimError> {
        let prog = self.prog;
        let Some(owner) = self.ctas.get(cta).and_then(Option::as_ref) else {
            return Err(SimError::Internal("issue to an empty CTA slot"));
        };
        let pc = group.pc;
        if pc as usize >= prog.insts.len() {
            let last = prog.insts.len().saturating_sub(1) as u32;
            return Err(SimError::Trap {
                what: format!("control reached pc {pc}, past the end of the program"),
                at: Box::new(location(prog, &owner.cta, last, None)),
            });
        }
        let wants = observer.wants(owner.cta.linear, group.ctx);
        let subs = self.by_cta(cta, group);
        let (cycle, track) = (env.cycle, env.track);
        // A deferred pure instruction executes later ([`SmCore::defer_pure_instructions`]); anything else
        // first executes what is pending for the warps it touches.
        let mut deferred = false;
        if self.deferral.is_some() {
            let defer = subs.len() == 1 && !wants && !track && self.scalar.is_none();
            for sub in &subs {
                deferred |= self.defer_or_settle(sub.slot, &sub.lanes, sub.mask, pc, defer)?;
            }
            if deferred {
                self.access.mask = 0;
            }
        }
        let mut e = exec_env(prog, env, &self.fixed, (&mut self.access, &mut self.printf), T::AWAITS_MEMBERS);
        let mut merged = (subs.len() > 1 && e.access.enabled).then(AccessLog::default);
        let mut out = Executed::new(wants, prog.info[pc as usize].writes.len());
        for sub in subs.iter().filter(|_| !deferred) {
            let Some(r) = self.ctas.get_mut(sub.slot).and_then(Option::as_mut) else { continue };
            e.cta_slot = sub.slot as u32;
            e.changed = false;
            let fx = execute_lanes(&mut e, &mut self.scratch, &mut r.cta, &sub.lanes, sub.mask, pc);
            out.changed |= e.changed;
            let fx = fx?;
            if let Flow::Await { lanes } = fx.flow {
                // Nothing executed (a warp-synchronous group is one static warp's, so this is the only
                // part); the mechanism gathers the missing member lanes.
                let Some(o) = self.ctas.get_mut(cta).and_then(Option::as_mut) else { break };
                self.tracker.await_members(&mut self.mech, &mut o.st, group, lanes);
                let changed = out.changed;
                self.released.clear();
                return Ok(Issued {
                    barrier: false,
                    released: false,
                    exited: false,
                    changed,
                    delay: None,
                    structure: 0,
                });
            }
            if track {
                count_quiet(&mut self.quiet, &mut r.quiet, &r.cta, &sub.lanes, sub.mask, prog.insts.len());
            }
            out.account(sub, &fx, &mut r.cta, T::BARRIER, self.scalar.is_some());
            if wants {
                out.observe(prog, pc, sub, &r.cta);
            }
            if let Some(m) = &mut merged {
                m.absorb(e.access, sub.slot as u64 * r.cta.shared.len().next_multiple_of(SHARED_GRANULE) as u64);
            }
            out.flow = std::mem::replace(&mut out.flow, Flow::Next).merge(fx.flow);
        }
        if let Some(m) = merged {
            *e.access = m;
        }
        self.stats.count_issue(prog, pc, group.mask, &out.flow);
        self.stats.barriers += u64::from(out.arrived);
        self.released.clone_from(&out.released_in);
        if let (Some(sc), Some(plan), Some(st)) = (&mut self.scalar, &prog.scalar, &mut self.stats.scalarization) {
            sc.on_issue(st, &plan.pcs[pc as usize], pc, group.mask, &out.scalar_parts);
        }
        if T::SM_POOL {
            for sub in &subs {
                self.view.sync(sub.slot, self.ctas[sub.slot].as_ref().map(|r| &r.cta), self.wpc);
            }
        }
        // The mechanism.
        let Some(r) = self.ctas.get_mut(cta).and_then(Option::as_mut) else {
            return Err(SimError::Internal("issue to an empty CTA slot"));
        };
        let view = if T::SM_POOL { self.view.of(r.cta.w) } else { r.cta.view() };
        let mut u = update_ctx(prog, cta, view, cycle, &mut self.stats, &mut self.delayed);
        (u.barrier, u.released, u.branch) = (out.barrier, out.released, prog.info[pc as usize].branch);
        self.tracker
            .update(&mut self.mech, &mut r.st, group, &out.flow, &mut u)
            .map_err(|err| mechanism_error(self.tracker.name(), prog, &r.cta, pc, err))?;
        let (size, delay) = (u.size, u.delay);
        self.stats.max_structure = self.stats.max_structure.max(size);
        if wants {
            observer.on_issue(&IssueEvent {
                cta: r.cta.linear,
                ctx: group.ctx,
                pc,
                mask: group.mask,
                lanes: &group.lanes,
                flow: &out.flow,
                entries: self.tracker.entries(&self.mech, &r.st, group.ctx),
                structure: size,
                seq: self.stats.warp_instructions - 1,
                whole_warp: out.whole_warp,
                written: out.written(prog, pc, group.mask),
            });
        }
        let (barrier, released, exited, changed) = (out.barrier, out.released, out.exited, out.changed);
        Ok(Issued { barrier, released, exited, changed, delay, structure: size })
    }

    /// Tells the mechanism that the load `group` of CTA slot `cta` issued at `cycle` (the last issue)
    /// left its `missed` lanes waiting for memory while the others hit ([`Tracker::SPLITS_ON_MISS`]);
    /// returns whether it separated them.
    pub fn memory_divergence(
        &mut self,
        cta: usize,
        group: &Group,
        missed: LaneMask,
        cycle: u64,
    ) -> Result<bool, SimError> {
        let prog = self.prog;
        let Some(r) = self.ctas.get_mut(cta).and_then(Option::as_mut) else {
            return Err(SimError::Internal("memory divergence in an empty CTA slot"));
        };
        let view = if T::SM_POOL { self.view.of(r.cta.w) } else { r.cta.view() };
        let mut u = update_ctx(prog, cta, view, Some(cycle), &mut self.stats, &mut self.delayed);
        let split = self
            .tracker
            .memory_divergence(&mut self.mech, &mut r.st, group, missed, &mut u)
            .map_err(|err| mechanism_error(self.tracker.name(), prog, &r.cta, group.pc, err))?;
        let size = u.size;
        self.stats.max_structure = self.stats.max_structure.max(size);
        Ok(split)
    }

    /// The parts of `group` (of CTA slot `cta`) by the CTA their threads belong to: the group itself for
    /// a per-CTA mechanism; for an SM-wide pool, each CTA's lanes with SM warps turned into its static
    /// warps, in slot order.
    fn by_cta<'g>(&self, cta: usize, group: &'g Group) -> SmallVec<[Sub<'g>; 1]> {
        if !T::SM_POOL {
            return smallvec::smallvec![Sub { slot: cta, lanes: Cow::Borrowed(&group.lanes), mask: group.mask }];
        }
        let wpc = self.wpc.max(1);
        let mut slots: SmallVec<[u32; 4]> = group.lanes.split(group.mask).map(|(w, _)| w / wpc).collect();
        slots.sort_unstable();
        slots.dedup();
        slots
            .into_iter()
            .map(|s| {
                let lanes = LaneMap::from_parts(
                    group.lanes.split(group.mask).filter(|p| p.0 / wpc == s).map(|(w, m)| (w % wpc, m)),
                );
                let mask = lanes.lanes();
                Sub { slot: s as usize, lanes: Cow::Owned(lanes), mask }
            })
            .collect()
    }

    /// What the threads did since the livelock watchdog started watching values
    /// ([`SmCore::reset_quiet`]): the watchdog declares a livelock only when every thread that issued
    /// meanwhile is provably in a cycle ([`QuietThreads::all_cycling`]).
    pub fn quiet_threads(&self) -> QuietThreads {
        self.quiet
    }

    /// Forgets the per-thread counts of [`SmCore::quiet_threads`] (the watchdog starts watching anew).
    pub fn reset_quiet(&mut self) {
        self.quiet = QuietThreads::default();
        for r in self.ctas.iter_mut().flatten() {
            r.quiet.clear();
        }
    }

    /// How many instructions from `group.pc` [`SmCore::issue_run`] may issue at once (at most `max`): the
    /// straight-line run of the program ([`Program::straight`]) as far as the mechanism allows
    /// ([`Tracker::straight_run`]); 1 while the scalarization counter follows every instruction. Pure.
    #[inline]
    pub fn straight_run(&self, cta: usize, group: &Group, max: u32) -> u32 {
        let run = self.prog.straight.get(group.pc as usize).map_or(0, |&n| u32::from(n)).min(max);
        if run < 2 || self.scalar.is_some() {
            return 1;
        }
        // A group drawing threads from several CTAs executes once per CTA: one at a time.
        if T::SM_POOL && group.lanes.parts().iter().any(|p| p.0 / self.wpc.max(1) != cta as u32) {
            return 1;
        }
        match self.ctas.get(cta).and_then(Option::as_ref) {
            Some(r) => self.tracker.straight_run(&self.mech, &r.st, &self.view_of(&r.cta), group, run).clamp(1, run),
            None => 1,
        }
    }

    /// Issues the `n` straight-line instructions from `group.pc` that [`SmCore::straight_run`] allowed,
    /// one after another with the group's lanes (`%clock` reads `env.clock + k` in the `k`-th), counting
    /// each and updating the mechanism once. No observer sees them. With `jit`, segments of pure lane
    /// instructions run compiled once hot (not while the watchdog tracks values, since they change no
    /// memory and compiled code does not report register changes); the result is the same. On an error
    /// the instructions before the failing one are counted, as [`SmCore::issue`] one at a time would.
    /// Also returns how many of the last instructions changed nothing (for the livelock watchdog; `n`
    /// when none did).
    pub fn issue_run<G: GlobalMemory>(
        &mut self,
        cta: usize,
        group: &Group,
        n: u32,
        env: IssueEnv<'_, G>,
        jit: Option<&mut Jit<'a>>,
    ) -> Result<(Issued, u32), SimError> {
        let prog = self.prog;
        // Under an SM-wide pool the group names SM warps; [`SmCore::straight_run`] allowed the run only
        // when they are all this CTA's, so it is the one part `by_cta` gives, in the CTA's own warps.
        let subs = self.by_cta(cta, group);
        let [Sub { slot, lanes, .. }] = subs.as_slice() else {
            return Err(SimError::Internal("a straight-line run across CTAs"));
        };
        debug_assert_eq!(*slot, cta, "a run issues to the CTA it was allowed for");
        if self.deferral.is_some() {
            for &(warp, _) in lanes.parts() {
                self.settle(cta, warp)?;
            }
        }
        let Some(r) = self.ctas.get_mut(cta).and_then(Option::as_mut) else {
            return Err(SimError::Internal("issue to an empty CTA slot"));
        };
        let cycle = env.cycle;
        let mut e = exec_env(prog, env, &self.fixed, (&mut self.access, &mut self.printf), T::AWAITS_MEMBERS);
        e.cta_slot = cta as u32;
        let run = (lanes.as_ref(), group.mask, group.pc, n);
        let quiet = match execute_straight(&mut e, &mut self.scratch, &mut r.cta, run, jit) {
            Ok(quiet) => quiet,
            Err((k, err)) => {
                self.stats.count_run(prog, group.pc, k, group.mask);
                return Err(err);
            }
        };
        let changed = quiet < n;
        self.released.clear();
        self.stats.count_run(prog, group.pc, n, group.mask);
        let view = if T::SM_POOL { self.view.of(r.cta.w) } else { r.cta.view() };
        let mut u = update_ctx(prog, cta, view, cycle, &mut self.stats, &mut self.delayed);
        self.tracker
            .advance(&mut self.mech, &mut r.st, group, n, &mut u)
            .map_err(|err| mechanism_error(self.tracker.name(), prog, &r.cta, group.pc, err))?;
        let (size, delay) = (u.size, u.delay);
        self.stats.max_structure = self.stats.max_structure.max(size);
        Ok((Issued { barrier: false, released: false, exited: false, changed, delay, structure: size }, quiet))
    }

    /// The CTA slots in which the last issued instruction released a barrier ([`Issued::released`]).
    pub fn released_ctas(&self) -> &[usize] {
        &self.released
    }

    /// The threads that pay the delay of the last issued instruction ([`Issued::delay`]).
    pub fn delayed(&self) -> &[(u32, LaneMask)] {
        &self.delayed
    }

    /// The memory accesses of the last issued instruction (when it was issued with `record_access`).
    pub fn last_access(&self) -> &AccessLog {
        &self.access
    }

    /// Frees the slots of CTAs whose threads all exited; returns the slots freed.
    pub fn retire(&mut self) -> smallvec::SmallVec<[usize; 4]> {
        let mut out = smallvec::SmallVec::new();
        for i in 0..self.ctas.len() {
            if self.ctas[i].as_ref().is_some_and(|r| r.cta.done()) {
                self.ctas[i] = None;
                if T::SM_POOL {
                    self.view.sync(i, None, self.wpc);
                }
                self.tracker.retire(&mut self.mech, i as u32);
                out.push(i);
            }
        }
        out
    }

    /// Writes a value into register `reg` of thread slot `slot` of CTA `cta` (an atomic's old value,
    /// applied when the timing model performs the atomic), after the thread's deferred instructions.
    pub fn write_register(&mut self, cta: usize, slot: u32, reg: u32, value: u64) -> Result<(), SimError> {
        if self.deferral.is_some() && self.ctas.get(cta).is_some_and(Option::is_some) {
            self.settle(cta, slot / self.launch.warp_size.max(1))?;
        }
        if let Some(r) = self.ctas.get_mut(cta).and_then(Option::as_mut) {
            let i = reg as usize * r.cta.padded + slot as usize;
            if let Some(x) = r.cta.regs.get_mut(i) {
                *x = value;
            }
        }
        Ok(())
    }

    /// The output of the `printf` calls this core executed so far, in execution order.
    pub fn printf(&self) -> &PrintfLog {
        &self.printf
    }

    /// Takes the output of the `printf` calls out ([`PrintfLog::take`]): the records in execution order
    /// and whether the launch's output limit dropped some.
    pub fn take_printf(&mut self) -> (Vec<PrintfRecord>, bool) {
        self.printf.take()
    }

    /// The statistics gathered so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The program.
    pub fn program(&self) -> &'a Program {
        self.prog
    }

    /// The class of the instruction at `pc` (for latencies).
    pub fn class(&self, pc: Pc) -> InstClass {
        self.prog.info[pc as usize].class
    }
}

/// Executes the instruction at `pc` for the lanes `mask` of `threads`: the contiguous fast path when
/// they are one static warp's, per-lane gather and scatter otherwise.
#[inline]
/// Executes the `n` straight-line instructions from `pc` for the lanes `mask` of `threads`, one after
/// another (`%clock` reads `e.clock + k` in the `k`-th): segments of pure lane instructions compiled
/// where `jit` has them (not while the watchdog tracks values: they change no memory, and compiled code
/// does not report register changes), the interpreter otherwise. Returns how many of the last
/// instructions changed nothing (`n` when none did); on an error, how many executed before it.
fn execute_straight<'p, G: GlobalMemory>(
    e: &mut Env<'_, G>,
    scratch: &mut Scratch,
    cta: &mut Cta,
    (threads, mask, pc, n): (&LaneMap, LaneMask, Pc, u32),
    mut jit: Option<&mut Jit<'p>>,
) -> Result<u32, (u32, SimError)> {
    let clock = e.clock;
    let mut quiet = 0;
    let mut k = 0;
    while k < n {
        if let Some(jit) = jit.as_deref_mut().filter(|_| !e.track) {
            // Pure lane instructions change no memory, barrier or (untracked) state the watchdog sees.
            let done = jit.run(pc + k, n - k, cta, threads, mask).map_err(|err| (k, err))?;
            if done > 0 {
                (k, quiet) = (k + done, quiet + done);
                continue;
            }
        }
        e.clock = clock + u64::from(k);
        e.changed = false;
        execute_lanes(e, scratch, cta, threads, mask, pc + k).map_err(|err| (k, err))?;
        quiet = if e.changed { 0 } else { quiet + 1 };
        k += 1;
    }
    e.clock = clock;
    Ok(quiet)
}

fn execute_lanes<G: GlobalMemory>(
    e: &mut Env<'_, G>,
    scratch: &mut Scratch,
    cta: &mut Cta,
    threads: &LaneMap,
    mask: LaneMask,
    pc: Pc,
) -> Result<exec::Effects, SimError> {
    let w = cta.w;
    match threads.single_warp(mask) {
        Some(warp) => execute(e, scratch, cta, Whole { warp, base: warp as usize * w }, pc, mask),
        None => {
            let slots = Mixed::slot_table(threads.parts(), w);
            let lanes = Mixed { parts: threads.parts(), slots: &slots, w };
            execute(e, scratch, cta, lanes, pc, mask)
        }
    }
}

/// The executor's environment for one issue.
fn exec_env<'e, G: GlobalMemory>(
    prog: &'e Program,
    env: IssueEnv<'e, G>,
    fixed: &'e Fixed,
    (access, printf): (&'e mut AccessLog, &'e mut PrintfLog),
    await_members: bool,
) -> Env<'e, G> {
    access.enabled = env.record_access;
    Env {
        prog,
        mem: env.mem,
        consts: env.consts,
        params: env.params,
        fixed,
        clock: env.clock,
        track: env.track,
        changed: false,
        access,
        await_members,
        cta_slot: 0,
        printf,
    }
}

/// What the mechanism sees after an issue in CTA slot `slot` (no barrier, no release, not a branch: the
/// caller sets those); clears the delayed threads of the last issue.
fn update_ctx<'u>(
    prog: &'u Program,
    slot: usize,
    view: CtaView<'u>,
    cycle: Option<u64>,
    stats: &'u mut Stats,
    delayed: &'u mut Vec<(u32, LaneMask)>,
) -> UpdateCtx<'u> {
    delayed.clear();
    let (counters, branches, per_branch) = stats.mechanism_counters_mut();
    UpdateCtx {
        prog,
        cta: slot as u32,
        view,
        barrier: false,
        released: false,
        cycle,
        size: 0,
        delay: None,
        delayed,
        counters,
        branches,
        per_branch,
        branch: None,
    }
}

/// A mechanism's refusal of an issue at `pc`, as a simulation error.
fn mechanism_error(name: &str, prog: &Program, cta: &Cta, pc: Pc, err: crate::mechanism::MechError) -> SimError {
    SimError::Trap { what: format!("{name} mechanism: {err}"), at: Box::new(location(prog, cta, pc, None)) }
}

/// Shared memory is allocated to CTAs in granules of this many bytes (the banks' width times 32), so
/// each CTA's shared memory starts in bank 0.
const SHARED_GRANULE: usize = 128;

/// The lanes of an issue group that belong to one CTA, with that CTA's static warps.
struct Sub<'g> {
    slot: usize,
    lanes: Cow<'g, LaneMap>,
    mask: LaneMask,
}

/// The live and blocked lanes of every SM warp (CTA slot × static warps per CTA + static warp): the view
/// of a mechanism whose groups draw threads from several CTAs ([`Tracker::SM_POOL`]). Kept only for such
/// mechanisms; an empty slot's rows are zero.
#[derive(Default)]
struct SmView {
    live: Vec<LaneMask>,
    blocked: Vec<LaneMask>,
}

impl SmView {
    /// Copies the rows of CTA slot `slot` (`None`: empty).
    fn sync(&mut self, slot: usize, cta: Option<&Cta>, wpc: u32) {
        let wpc = wpc as usize;
        let end = (slot + 1) * wpc;
        if self.live.len() < end {
            self.live.resize(end, 0);
            self.blocked.resize(end, 0);
        }
        for k in 0..wpc {
            let (live, blocked) =
                cta.map_or((0, 0), |c| (c.live.get(k).copied().unwrap_or(0), c.blocked.get(k).copied().unwrap_or(0)));
            self.live[slot * wpc + k] = live;
            self.blocked[slot * wpc + k] = blocked;
        }
    }

    fn of(&self, w: usize) -> CtaView<'_> {
        CtaView { live: &self.live, blocked: &self.blocked, w: w as u32 }
    }
}

/// What the parts of one issued group did, gathered over the CTAs it draws from.
struct Executed {
    flow: Flow,
    changed: bool,
    /// A barrier instruction executed (counted once per issue).
    arrived: bool,
    /// Its lanes now wait at the barrier (not `bar.arrive`).
    barrier: bool,
    released: bool,
    /// The CTA slots in which a barrier released.
    released_in: SmallVec<[usize; 2]>,
    exited: bool,
    /// The group held every live thread of each static warp it draws from.
    whole_warp: bool,
    /// The scalarization counter's parts (only while it runs).
    scalar_parts: SmallVec<[crate::scalarize::Part; 2]>,
    /// Per written register, each issued lane's value after the instruction (only while observed).
    values: Vec<[u64; 64]>,
    /// The lanes `values` holds.
    filled: LaneMask,
}

impl Executed {
    fn new(observed: bool, writes: usize) -> Executed {
        Executed {
            flow: Flow::Next,
            changed: false,
            arrived: false,
            barrier: false,
            released: false,
            released_in: SmallVec::new(),
            exited: false,
            whole_warp: true,
            scalar_parts: SmallVec::new(),
            values: if observed { vec![[0; 64]; writes] } else { Vec::new() },
            filled: 0,
        }
    }

    /// Accounts the barrier arrival and the exits of the part `sub`, executed with effects `fx` on `cta`.
    fn account(&mut self, sub: &Sub<'_>, fx: &exec::Effects, cta: &mut Cta, mode: BarrierMode, scalar: bool) {
        let mut released = false;
        if let Some(arr) = &fx.barrier {
            self.arrived = true;
            self.barrier = arr.kind != crate::program::BarKind::Arrive;
            released |= cta.arrive(mode, arr, sub.lanes.parts(), &mut self.changed);
        }
        // Threads leave only through `exit` or a kernel-level `ret`, which report `Flow::Exit`.
        if matches!(fx.flow, Flow::Exit { .. }) {
            self.exited = true;
            released |= cta.try_release(mode, &mut self.changed);
            cta.refresh_blocked();
        }
        if released {
            self.released = true;
            self.released_in.push(sub.slot);
        }
        if scalar {
            self.scalar_parts.extend(sub.lanes.split(sub.mask).map(|(warp, lanes)| crate::scalarize::Part {
                cta: sub.slot,
                warp,
                lanes,
                live_after: cta.live.get(warp as usize).copied().unwrap_or(0),
            }));
        }
    }

    /// Records what an observer sees of the part `sub`: whether it ran converged, its written values.
    fn observe(&mut self, prog: &Program, pc: Pc, sub: &Sub<'_>, cta: &Cta) {
        // Issued lanes are live before the issue and exiting ones are among them, so the group held its
        // warps' live threads iff it covers those still live after it.
        self.whole_warp &= sub
            .lanes
            .split(sub.mask)
            .all(|(w, lanes)| cta.live.get(w as usize).is_some_and(|&live| live & !lanes == 0));
        for (i, &reg) in prog.info[pc as usize].writes.iter().enumerate() {
            for l in crate::types::lanes(sub.mask) {
                if let Some(slot) = sub.lanes.slot_of(l, cta.w as u32) {
                    self.values[i][l] = cta.regs[reg as usize * cta.padded + slot];
                    self.filled |= 1 << l;
                }
            }
        }
    }

    /// The written registers and their values in every issued lane (lane order).
    fn written(&self, prog: &Program, pc: Pc, mask: LaneMask) -> Vec<(u32, Vec<u64>)> {
        let writes = &prog.info[pc as usize].writes;
        writes
            .iter()
            .zip(&self.values)
            .map(|(&reg, vals)| (reg, crate::types::lanes(mask & self.filled).map(|l| vals[l]).collect()))
            .collect()
    }
}
