//! The interface every divergence mechanism implements ([`Tracker`]) and the issue groups it hands the
//! core.
//!
//! A mechanism tracks where each thread is (a stack, a path list, a CTA-wide stack, a warp pool) and
//! answers two questions: which issue group occupies each of its *issue contexts* now ([`Tracker::peek`],
//! a pure query the timing model may ask every cycle), and how its structure changes after a group issued
//! ([`Tracker::update`], the commit). Its state may live at three scopes: per SM ([`Tracker::Sm`], a
//! dynamic-warp-formation pool), per CTA ([`Tracker::Cta`], a CTA-wide stack; a per-warp mechanism's warps),
//! with the per-static-warp case written once as [`crate::PerWarp`].

use crate::launch::LaunchConfig;
use crate::program::Program;
use crate::types::{full_mask, lanes, LaneMask, Pc};
use crate::Structure;
use smallvec::SmallVec;
use std::fmt;

use crate::{BarrierMode, Done, EntryView, Flow};

/// Which threads an issue group holds: lane `l` holds the thread in CTA slot `warp * W + l` for the part
/// `(warp, lanes)` whose `lanes` contain `l`. A thread always sits in its home lane (slot mod W), the
/// register-file banking constraint of DWF, TBC and CAPRI. The parts are disjoint.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct LaneMap(SmallVec<[(u32, LaneMask); 2]>);

impl LaneMap {
    /// Every lane of static warp `warp` (the map of a static-warp mechanism).
    #[inline]
    pub fn warp(warp: u32, w: u32) -> LaneMap {
        LaneMap(smallvec::smallvec![(warp, full_mask(w))])
    }

    /// A map from parts; empty parts are dropped.
    #[inline]
    pub fn from_parts(parts: impl IntoIterator<Item = (u32, LaneMask)>) -> LaneMap {
        // Reserved once for the most parts the iterator may give (a filtered collect would grow 2, 4, 8, ...).
        let parts = parts.into_iter();
        let (least, most) = parts.size_hint();
        let mut v = SmallVec::with_capacity(most.unwrap_or(least));
        v.extend(parts.filter(|p| p.1 != 0));
        LaneMap(v)
    }

    /// Adds `lanes` of static warp `warp` (to its part, or as a new last part; nothing when empty).
    #[inline]
    pub fn add(&mut self, warp: u32, lanes: LaneMask) {
        if lanes == 0 {
            return;
        }
        match self.0.iter_mut().find(|p| p.0 == warp) {
            Some(p) => p.1 |= lanes,
            None => self.0.push((warp, lanes)),
        }
    }

    /// The `(static warp, lanes)` parts.
    #[inline]
    pub fn parts(&self) -> &[(u32, LaneMask)] {
        &self.0
    }

    /// The static warp when every lane of `mask` comes from one warp.
    #[inline]
    pub fn single_warp(&self, mask: LaneMask) -> Option<u32> {
        match self.0.as_slice() {
            [(w, _)] => Some(*w),
            parts => {
                let mut it = parts.iter().filter(|(_, m)| m & mask != 0);
                let first = it.next()?;
                it.next().is_none().then_some(first.0)
            }
        }
    }

    /// The lanes that hold a thread.
    #[inline]
    pub fn lanes(&self) -> LaneMask {
        self.0.iter().fold(0, |a, p| a | p.1)
    }

    /// The static warp of lane `l`, if the lane holds a thread.
    #[inline]
    pub fn warp_of(&self, l: usize) -> Option<u32> {
        self.0.iter().find(|p| p.1 >> l & 1 == 1).map(|p| p.0)
    }

    /// The CTA thread slot of lane `l`, if the lane holds a thread.
    #[inline]
    pub fn slot_of(&self, l: usize, w: u32) -> Option<usize> {
        self.warp_of(l).map(|warp| warp as usize * w as usize + l)
    }

    /// Per static warp, the lanes of `mask` it contributes (for barrier and liveness bookkeeping).
    #[inline]
    pub fn split(&self, mask: LaneMask) -> impl Iterator<Item = (u32, LaneMask)> + '_ {
        self.0.iter().map(move |&(w, m)| (w, m & mask)).filter(|p| p.1 != 0)
    }
}

/// An issue group: the unit the core issues (a pc, its active lanes, and where their threads come from).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Group {
    /// The issue context it occupies in its CTA (a static warp, a hardware warp slot, a pool entry).
    pub ctx: u32,
    /// The pc.
    pub pc: Pc,
    /// The lanes that execute.
    pub mask: LaneMask,
    /// Where the lanes' threads come from.
    pub lanes: LaneMap,
    /// Lanes whose threads must all be ready before the group may issue in the timing model (a static
    /// warp's live lanes for static-warp mechanisms, whose pipeline is per warp; the group's own lanes for
    /// regrouped warps).
    pub hold: LaneMask,
    /// Issue priority, lower first (only for mechanisms with [`Tracker::ORDERED`]).
    pub prio: u64,
}

/// Why an issue context has no group ready.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Blocked {
    /// Its threads wait at a barrier.
    Barrier,
    /// The mechanism holds them (synchronisation for compaction, a reconvergence point).
    Mechanism,
}

/// What [`Tracker::peek`] sees in an issue context.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Peek {
    /// A group ready to issue.
    Ready(Group),
    /// Threads are there but cannot issue now.
    Blocked(Blocked),
    /// Nothing (no live thread uses the context).
    Empty,
}

/// What a mechanism may read of a CTA's architectural state.
#[derive(Clone, Copy, Debug)]
pub struct CtaView<'a> {
    /// Live (not exited) lanes per static warp.
    pub live: &'a [LaneMask],
    /// Lanes per static warp that cannot issue because they wait at a barrier (a whole warp in warp mode).
    pub blocked: &'a [LaneMask],
    /// Threads per warp.
    pub w: u32,
}

impl CtaView<'_> {
    /// Static warps.
    #[inline]
    pub fn nwarps(&self) -> u32 {
        self.live.len() as u32
    }
}

/// How a counter of a mechanism combines across SMs and CTAs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Agg {
    /// Summed.
    Sum,
    /// The maximum.
    Max,
}

/// One counter a mechanism keeps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Counter {
    /// The JSON key.
    pub name: &'static str,
    /// How it combines.
    pub agg: Agg,
    /// Counted only in timed runs (it is a number of cycles); functional runs do not report it.
    pub timed: bool,
    /// What it counts (for the README and reports).
    pub doc: &'static str,
}

impl Counter {
    /// A summed counter.
    pub const fn sum(name: &'static str, doc: &'static str) -> Counter {
        Counter { name, agg: Agg::Sum, timed: false, doc }
    }

    /// A maximum.
    pub const fn max(name: &'static str, doc: &'static str) -> Counter {
        Counter { name, agg: Agg::Max, timed: false, doc }
    }

    /// A summed number of cycles, counted only in timed runs.
    pub const fn cycles(name: &'static str, doc: &'static str) -> Counter {
        Counter { name, agg: Agg::Sum, timed: true, doc }
    }

    /// A summed number of events only the timing model produces (a load's lanes partly missing in the
    /// L1), counted only in timed runs.
    pub const fn timed(name: &'static str, doc: &'static str) -> Counter {
        Counter { name, agg: Agg::Sum, timed: true, doc }
    }
}

/// A ratio of two of a mechanism's counters it reports (for example CAPRI's prediction rate).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ratio {
    /// The JSON key.
    pub name: &'static str,
    /// The numerator counter.
    pub num: &'static str,
    /// The denominator counter.
    pub den: &'static str,
    /// What it means.
    pub doc: &'static str,
}

/// A delay the mechanism's own hardware adds; [`MechanismLatencies`] says how many cycles it takes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Delay {
    /// The warp compaction unit forms new warps (TBC, CAPRI): `compaction_latency`.
    Compaction,
    /// Threads are written back into the warp pool and its look-up table (DWF): `pool_latency`.
    PoolInsert,
    /// A warp waits `steps` steps for its context table's sorter (Simty): `sort_step_latency` each.
    SortStall {
        /// Sorter steps.
        steps: u32,
    },
    /// A warp waits for sequential logic whose cycles the mechanism's model counts itself (Maven's
    /// shift-register insertions, the runner-up register's comparator-tree scan): `cycles`, whatever the
    /// configuration.
    Cycles {
        /// Cycles.
        cycles: u32,
    },
}

/// The cycles of each [`Delay`]: the latencies of the divergence mechanisms' own hardware (the
/// `[mechanism]` table of a GPU configuration). The timing model asks [`MechanismLatencies::cycles`].
#[derive(Clone, PartialEq, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MechanismLatencies {
    /// Cycles the warp compaction unit of TBC and CAPRI takes to form new warps; the threads of the new
    /// warps wait this long before they issue.
    pub compaction_latency: u64,
    /// Cycles from writeback until threads re-inserted into DWF's warp pool (look-up table, merge) may
    /// issue again.
    pub pool_latency: u64,
    /// Cycles per step a `simty` warp waits for its context table's sorter (`sort_stall_steps`).
    pub sort_step_latency: u64,
}

impl Default for MechanismLatencies {
    #[inline]
    fn default() -> Self {
        MechanismLatencies { compaction_latency: 4, pool_latency: 2, sort_step_latency: 1 }
    }
}

impl MechanismLatencies {
    /// The cycles `delay` takes.
    #[inline]
    pub fn cycles(&self, delay: Delay) -> u64 {
        match delay {
            Delay::Compaction => self.compaction_latency,
            Delay::PoolInsert => self.pool_latency,
            Delay::SortStall { steps } => u64::from(steps).saturating_mul(self.sort_step_latency),
            Delay::Cycles { cycles } => u64::from(cycles),
        }
    }
}

/// What the core hands a mechanism after a group issued, and what the mechanism hands back.
pub struct UpdateCtx<'a> {
    /// The program (reconvergence points, instruction classes).
    pub prog: &'a Program,
    /// The CTA's index in its SM.
    pub cta: u32,
    /// The CTA after the instruction (exited threads no longer live; barrier waits updated).
    pub view: CtaView<'a>,
    /// The instruction was a barrier the group's lanes now wait at.
    pub barrier: bool,
    /// A barrier of the CTA released during the instruction.
    pub released: bool,
    /// The timing model's cycle at issue (`None` in functional runs, where time is not modelled).
    pub cycle: Option<u64>,
    /// Out: the size of the structure the update touched (stack depth, list length, pool occupancy).
    pub size: usize,
    /// Out: a delay of the mechanism's own logic (compaction, warp-pool insertion), paid by the threads
    /// in `delayed` before they may issue again; the timing model charges it as `mechanism` stalls.
    pub delay: Option<Delay>,
    /// Out: the `(static warp, lanes)` that pay `delay` (empty on entry).
    pub delayed: &'a mut Vec<(u32, LaneMask)>,
    /// The mechanism's counters ([`Tracker::COUNTERS`], by index).
    pub counters: &'a mut [u64],
    /// The per-branch counters of every kernel branch: `branches[b * k + i]` for branch `b` and counter
    /// `i` of [`Tracker::BRANCH_COUNTERS`] (`k` of them).
    pub branches: &'a mut [u64],
    /// `k`: counters per branch.
    pub per_branch: usize,
    /// The index of the kernel branch this instruction is, if it is one.
    pub branch: Option<u32>,
}

impl UpdateCtx<'_> {
    /// Adds `n` to counter `i` (an index into [`Tracker::COUNTERS`]).
    #[inline]
    pub fn count(&mut self, i: impl Into<usize>, n: u64) {
        self.counters[i.into()] += n;
    }

    /// Raises counter `i` to at least `v`.
    #[inline]
    pub fn max(&mut self, i: impl Into<usize>, v: u64) {
        let i = i.into();
        self.counters[i] = self.counters[i].max(v);
    }

    /// Adds `n` to per-branch counter `i` of the executing branch.
    #[inline]
    pub fn count_branch(&mut self, i: impl Into<usize>, n: u64) {
        if let Some(b) = self.branch {
            self.count_branch_at(b, i, n);
        }
    }

    /// Adds `n` to per-branch counter `i` of kernel branch `b` (an index into [`Program::branches`]).
    #[inline]
    pub fn count_branch_at(&mut self, b: u32, i: impl Into<usize>, n: u64) {
        let i = i.into();
        let k = self.per_branch;
        if i < k {
            if let Some(x) = self.branches.get_mut(b as usize * k + i) {
                *x += n;
            }
        }
    }

    /// Asks the timing model to delay the threads `parts` by `delay`.
    #[inline]
    pub fn delay(&mut self, delay: Delay, parts: impl IntoIterator<Item = (u32, LaneMask)>) {
        self.delay = Some(delay);
        self.delayed.extend(parts.into_iter().filter(|p| p.1 != 0));
    }
}

/// Where some threads are, for deadlock reports.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Position {
    /// The static warp.
    pub warp: u32,
    /// Its lanes that are there.
    pub lanes: LaneMask,
    /// The pc they will execute next.
    pub pc: Pc,
    /// What they are doing.
    pub state: PositionState,
}

/// What threads at a [`Position`] are doing, for deadlock reports ([`PositionState::as_str`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PositionState {
    /// `issuing`: the group issues (or would, were it chosen).
    Issuing,
    /// `waiting at a barrier`: its threads wait at a barrier.
    AtBarrier,
    /// `waiting in the reconvergence structure`: waiting in a per-warp reconvergence structure (below the entry that issues).
    InStructure,
    /// `waiting for the member lanes of a warp-synchronous instruction`: a group waiting for the member lanes of a warp-synchronous instruction (`mimd`).
    AwaitingMembers,
    /// `waiting at a barrier (barrier warp)`: a pool warp of threads arrived at a barrier (DWF).
    BarrierWarp,
    /// `waiting for the rest of its warp at a warp-synchronous instruction`: a pool warp waiting for the rest of its static warp at a warp-synchronous instruction (DWF).
    AwaitingWarp,
    /// `in the warp pool`: a warp of DWF's pool.
    InPool,
    /// `issuing (a dynamic warp)`: a dynamic warp of a CTA-wide stack that issues.
    IssuingDynamicWarp,
    /// `waiting at a branch for the CTA's other warps`: a dynamic warp stalled at a branch until the CTA's other warps arrive.
    StalledAtBranch,
    /// `waiting at a sync point for the CTA-wide stack`: a dynamic warp at a sync point the CTA-wide stack has not resolved.
    AtSyncPoint,
    /// `waiting at a reconvergence point for the CTA's other warps`: a dynamic warp parked at a reconvergence point.
    ParkedAtReconvergence,
    /// `waiting in the CTA-wide stack`: threads held by an entry of the CTA-wide stack.
    InCtaStack,
    /// `waiting to reconverge`: threads of a parallel traversal's structure waiting to reconverge.
    WaitingToReconverge,
}

impl PositionState {
    /// The words a deadlock report prints.
    #[inline]
    pub fn as_str(self) -> &'static str {
        match self {
            PositionState::Issuing => "issuing",
            PositionState::AtBarrier => "waiting at a barrier",
            PositionState::InStructure => "waiting in the reconvergence structure",
            PositionState::AwaitingMembers => "waiting for the member lanes of a warp-synchronous instruction",
            PositionState::BarrierWarp => "waiting at a barrier (barrier warp)",
            PositionState::AwaitingWarp => "waiting for the rest of its warp at a warp-synchronous instruction",
            PositionState::InPool => "in the warp pool",
            PositionState::IssuingDynamicWarp => "issuing (a dynamic warp)",
            PositionState::StalledAtBranch => "waiting at a branch for the CTA's other warps",
            PositionState::AtSyncPoint => "waiting at a sync point for the CTA-wide stack",
            PositionState::ParkedAtReconvergence => "waiting at a reconvergence point for the CTA's other warps",
            PositionState::InCtaStack => "waiting in the CTA-wide stack",
            PositionState::WaitingToReconverge => "waiting to reconverge",
        }
    }
}

impl fmt::Display for PositionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A divergence mechanism: which threads run which pc next and where they meet again.
pub trait Tracker: Sync {
    /// State per SM.
    type Sm: fmt::Debug + Send;
    /// State per resident CTA.
    type Cta: fmt::Debug + Send;

    /// The kind of structure whose size the statistics report.
    const STRUCTURE: Structure;
    /// How `bar.sync` counts arrivals.
    const BARRIER: BarrierMode;
    /// Whether groups carry an issue priority the core follows (DWF's issue heuristics); otherwise the
    /// core's scheduler chooses among ready contexts.
    const ORDERED: bool = false;
    /// Whether the mechanism gathers the member lanes of a warp-synchronous instruction into the issuing
    /// group when some are missing ([`Tracker::await_members`]); otherwise a missing member lane is a
    /// SIMT deadlock.
    const AWAITS_MEMBERS: bool = false;
    /// Whether the issue contexts are the CTA's static warps, each with a structure of its own: every
    /// context is always occupied ([`Tracker::occupied`] lists them all, so a scheduler's candidate list
    /// changes only when CTAs come and go), and an issue changes no other context's group unless it is
    /// a barrier, releases one or exits (so the timing model keeps other warps' readiness).
    const PER_WARP_CONTEXTS: bool = false;
    /// Whether groups draw threads from every CTA of the SM (DWF's SM-wide warp pool). A group's lane
    /// parts then name *SM warps* — CTA slot × static warps per CTA + static warp — and every
    /// [`CtaView`] the mechanism receives is the SM's: the live and blocked lanes of every SM warp, an
    /// empty CTA slot's all zero. The core executes such a group once per CTA it draws from.
    const SM_POOL: bool = false;
    /// Whether a context's groups take turns one instruction each and the mechanism can say so
    /// ([`Tracker::rotation`], [`Tracker::advance_rounds`]): the functional machine then issues rounds of
    /// pure lane instructions at once.
    const ROUNDS: bool = false;
    /// Whether the timing model issues the mechanism's groups *lane-packed*: in one cycle a scheduler may
    /// issue several ready groups (of any of its warps, in its policy's order after the last issued) while
    /// their active lanes sum to at most the warp size and they go to the same functional unit, which they
    /// occupy once, as one warp instruction would (GPGPU-Sim 2.x's MIMD idealisation: the same issue
    /// width, any pcs), and every group fetches its own instructions, any number in one cycle (a pc per
    /// thread fetches per thread). Only the `mimd` bound sets it; every other mechanism issues one group
    /// per scheduler per cycle through the SM's one fetch a cycle.
    const LANE_PACKED: bool = false;
    /// Whether the timing model co-issues the two path slots of one warp (`sbi`, simultaneous branch
    /// interweaving: "two distinct instructions ... scheduled to disjoint subsets of the same row of
    /// execution units", Brunie et al., ISCA'12, abstract): after a scheduler issued a group, it may issue
    /// in the same cycle one more ready group of the same hardware warp (another path: disjoint lanes) on
    /// the same functional unit with no longer occupancy, not a memory instruction; the front end has a
    /// second fetch path (two fetches a cycle for the SM).
    const CO_ISSUE_PATHS: bool = false;
    /// Whether the timing model co-issues groups of two hardware warps (`sbi:swi`, simultaneous warp
    /// interweaving: "co-issuing instructions from different warps", Brunie et al., ISCA'12, abstract):
    /// after a scheduler issued a group, it may issue in the same cycle one more ready group of another of
    /// its warps whose lanes, after the timing model's lane shuffle, are disjoint from the first's, under
    /// the rules of [`Tracker::CO_ISSUE_PATHS`] (same unit, no longer occupancy, not memory; one extra group
    /// a cycle, the front end's second fetch path).
    const CO_ISSUE_WARPS: bool = false;
    /// Whether the mechanism separates the lanes of a load that partly missed in the L1 (`dws`'s
    /// memory-divergence subdivision): the timing model then tells it which lanes of each such load miss
    /// ([`Tracker::memory_divergence`]), and when it separates them, the lanes that hit have their data
    /// after the hit latency while the others wait for the response (otherwise every lane of a load waits
    /// for its last line). Functional runs, which model no caches, never call it.
    const SPLITS_ON_MISS: bool = false;
    /// Counters the mechanism keeps.
    const COUNTERS: &'static [Counter] = &[];
    /// Ratios of counters the mechanism reports.
    const RATIOS: &'static [Ratio] = &[];
    /// Counters kept per kernel branch (the `mechanism` object of `branches_by_pc`).
    const BRANCH_COUNTERS: &'static [Counter] = &[];

    /// The name used on the command line and in statistics.
    fn name(&self) -> &'static str;

    /// The state of an SM running `prog` with `launch`.
    fn new_sm(&self, prog: &Program, launch: &LaunchConfig) -> Self::Sm;

    /// Issue contexts a CTA of `nwarps` static warps and `nthreads` threads may use (context indices are
    /// below this).
    fn contexts(&self, nwarps: u32, nthreads: u32) -> u32;

    /// The contexts of a CTA that may hold a group now, in increasing order (all of them unless the
    /// mechanism knows better: a warp pool or a set of dynamic warps uses few of its many contexts).
    #[inline]
    fn occupied(&self, _sm: &Self::Sm, _st: &Self::Cta, contexts: u32, out: &mut Vec<u32>) {
        out.extend(0..contexts);
    }

    /// The state of CTA `cta` (its SM index) whose threads start at `entry`.
    fn launch(&self, sm: &mut Self::Sm, cta: u32, view: &CtaView<'_>, entry: Pc) -> Self::Cta;

    /// CTA `cta` finished (every thread exited).
    #[inline]
    fn retire(&self, _sm: &mut Self::Sm, _cta: u32) {}

    /// The hardware warp slot (within the CTA's slots) whose scheduler issues context `ctx`: the
    /// context itself, unless several contexts are paths of one warp (parallel traversals).
    #[inline]
    fn hw_warp(&self, _st: &Self::Cta, ctx: u32) -> u32 {
        ctx
    }

    /// What issue context `ctx` of a CTA holds now. Pure: asking changes nothing.
    fn peek(&self, sm: &Self::Sm, st: &Self::Cta, view: &CtaView<'_>, ctx: u32) -> Peek;

    /// For mechanisms with [`Tracker::ORDERED`]: the ready group of the CTA the mechanism issues next.
    #[inline]
    fn choose(&self, _sm: &Self::Sm, _st: &Self::Cta, _view: &CtaView<'_>) -> Option<Group> {
        None
    }

    /// Updates the structure after `group` issued with outcome `flow`.
    fn update(&self, sm: &mut Self::Sm, st: &mut Self::Cta, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done;

    /// How many instructions from `group.pc` the group may issue back to back, each with the same lanes,
    /// with one [`Tracker::advance`] standing for their updates: at most `max`, which the core computed as
    /// the run of straight-line instructions from the pc ([`Program::straight`]: none transfers control,
    /// waits at a barrier, synchronises a warp or exits, and none but the first starts a block). The
    /// default, 1, consults the mechanism after every instruction; a mechanism returns more only where
    /// issuing one instruction at a time would pick the same context's next pc with the same lanes and
    /// change nothing that its [`Tracker::advance`] does not account for (counters, delays, other
    /// contexts). `view` is the CTA (the SM under [`Tracker::SM_POOL`]) as [`Tracker::choose`] sees it.
    /// Pure.
    #[inline]
    fn straight_run(&self, _sm: &Self::Sm, _st: &Self::Cta, _view: &CtaView<'_>, _group: &Group, _max: u32) -> u32 {
        1
    }

    /// The group issued the `n` straight-line instructions from `group.pc` that
    /// [`Tracker::straight_run`] allowed: update as `n` updates with [`Flow::Next`] would.
    #[inline]
    fn advance(&self, sm: &mut Self::Sm, st: &mut Self::Cta, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        let mut g = group.clone();
        for _ in 0..n {
            self.update(sm, st, &g, &Flow::Next, u)?;
            g.pc += 1;
        }
        Ok(())
    }

    /// For mechanisms with [`Tracker::ROUNDS`], whose groups of one context take turns issuing one
    /// instruction each: writes to `out` the context's groups `(pc, lanes)` in the order of their coming
    /// turns, `group` (the one issuing now) first, and returns `true`, where those turns are certain for as
    /// long as every group issues *pure lane instructions* (which change no group, liveness, barrier or
    /// memory): every group issues all its lanes, none waits for anything, and none would split or meet
    /// another at such an instruction. The core may then issue `k` rounds at once, each group `k`
    /// instructions from its pc, and call [`Tracker::advance_rounds`]. `false` (the default): one
    /// instruction at a time. `at` is the program and the CTA as [`Tracker::peek`] sees it. Pure.
    #[inline]
    fn rotation(
        &self,
        _sm: &Self::Sm,
        _st: &Self::Cta,
        _at: (&Program, &CtaView<'_>),
        _group: &Group,
        _out: &mut Vec<(Pc, LaneMask)>,
    ) -> bool {
        false
    }

    /// Every group of [`Tracker::rotation`] issued `rounds` pure lane instructions from its pc, turn by
    /// turn: update as those `rounds` × groups updates with [`Flow::Next`] would, in turn order.
    #[inline]
    fn advance_rounds(
        &self,
        _sm: &mut Self::Sm,
        _st: &mut Self::Cta,
        _group: &Group,
        _rounds: u32,
        _u: &mut UpdateCtx<'_>,
    ) -> Done {
        Err(crate::MechError::NoRounds)
    }

    /// For mechanisms with [`Tracker::SPLITS_ON_MISS`]: `group`, just issued and updated, was a load
    /// whose `missed` lanes (a non-empty proper subset of `group.mask`) wait for memory while the others
    /// hit. Returns whether the mechanism put the two sets of lanes in separate issue contexts (only then
    /// may the hit lanes run ahead).
    #[inline]
    fn memory_divergence(
        &self,
        _sm: &mut Self::Sm,
        _st: &mut Self::Cta,
        _group: &Group,
        _missed: LaneMask,
        _u: &mut UpdateCtx<'_>,
    ) -> Result<bool, crate::MechError> {
        Ok(false)
    }

    /// For mechanisms with [`Tracker::AWAITS_MEMBERS`]: `group` did not execute its warp-synchronous
    /// instruction because the live member `lanes` of its static warp are elsewhere; hold it until they
    /// join.
    #[inline]
    fn await_members(&self, _sm: &mut Self::Sm, _st: &mut Self::Cta, _group: &Group, _lanes: LaneMask) {}

    /// The structure for traces, bottom first: the stack of context `ctx` for per-warp mechanisms, the
    /// CTA-wide or SM-wide structure otherwise.
    fn entries(&self, sm: &Self::Sm, st: &Self::Cta, ctx: u32) -> Vec<EntryView>;

    /// Where the CTA's live threads are, for deadlock reports.
    fn positions(&self, sm: &Self::Sm, st: &Self::Cta, view: &CtaView<'_>) -> Vec<Position>;
}

/// Splits `mask` by per-lane next pcs: `(pc, lanes)` for each distinct pc in `next`.
#[inline]
pub fn by_pc(mask: LaneMask, next: &[Pc; 64]) -> SmallVec<[(Pc, LaneMask); 4]> {
    let mut out: SmallVec<[(Pc, LaneMask); 4]> = SmallVec::new();
    for l in lanes(mask) {
        match out.iter_mut().find(|(p, _)| *p == next[l]) {
            Some(e) => e.1 |= 1 << l,
            None => out.push((next[l], 1 << l)),
        }
    }
    out
}
