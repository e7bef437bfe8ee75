//! The CTA-wide reconvergence stack with warp compaction: the engine of thread block compaction
//! ([`crate::Tbc`]) and CAPRI ([`crate::Capri`]).
//!
//! **Structure.** One stack per CTA whose entries are PDOM entries (`pc`, `rpc`, call marker) over a
//! CTA-wide thread set, plus the *dynamic warps* the threads of the entries run in. A dynamic warp is an
//! issue context: a pc and, per lane, at most one thread whose home lane it is.
//!
//! **Sync points.** A conditional or indirect branch, a call and a divergent return are *sync points*:
//! the CTA's warps must agree on what the stack does there. Each dynamic warp of the top entry runs until
//! it reaches the sync point and *arrives* (its taken and not-taken threads are added to the entry's
//! pending instance; the count of warps still to arrive is TBC's WCnt). The [`CompactionPolicy`] decides
//! whether the arriving warp *stalls* (waits for the CTA and is compacted) or goes *ahead*: TBC always
//! stalls; CAPRI stalls a warp only when it diverged and the compaction-adequacy predictor says
//! "adequate". A warp that goes ahead keeps its lanes (split into one warp per target when it diverged)
//! and runs on until its next sync point or reconvergence point, where it waits for the stack to catch
//! up.
//!
//! **Resolution.** When every warp of the top entry has arrived, the instance resolves with the PDOM rule
//! (`adapters/pdom_rules.rs`) over the CTA-wide masks: a CTA-uniform outcome moves the entry on and releases the
//! same warps; a divergent one turns the entry into the reconvergence entry and pushes one entry per
//! path. An entry that becomes the top *activates*: the compaction unit forms warps from its threads
//! that are not already in a warp (lane `l` of new warp `k` takes the `k`-th thread, in static-warp order,
//! whose home lane is `l`), so a path needs as many warps as its fullest lane has threads. When every
//! warp of the top entry has reached the entry's reconvergence point the entry is popped and the entry
//! below activates: its threads are compacted again, which re-forms the static warps where no thread
//! has exited.
//!
//! **Likely-convergence points** (the `:lpc` variants, [`CompactionPolicy::LIKELY`]; Fung & Aamodt's
//! extension, `reconverge_analysis::likely_convergence`). When a divergent branch that can leave its loop
//! has a likely-convergence point `L`, the resolution pushes, between the reconvergence entry and the
//! path entries, an *LPC entry* (`pc = L`, `rpc` = the branch's reconvergence point) for the threads that
//! reach `L`; each path entry records `L` and the LPC entry's depth (the paper's `LPC` and `LPos`). A path
//! entry's warps stop at `L` as at its reconvergence point; when all of them have stopped, the threads at
//! `L` join the LPC entry, and the entry is popped. The LPC entry then activates, compacting every thread
//! that reached `L` from any path, and runs them together until the reconvergence point. Threads whose
//! branch target is `L` join the LPC entry at once. Warps that went ahead of an unresolved instance (CAPRI)
//! run to its reconvergence point as before.
//!
//! Barriers count threads ([`BarrierMode::Thread`]): regrouped warps have no static warp to count.

use crate::adapters::pdom_rules::{self as pdom, EntryThreads, PdomEntry};
use crate::interface::counters;
use crate::interface::Done;
use crate::program::{Op, Program};
use crate::tracker::{
    Blocked, Counter, CtaView, Delay, Group, LaneMap, Peek, Position, PositionState, Ratio, Tracker, UpdateCtx,
};
use crate::types::{lanes, LaneMask, Pc, PC_NONE, PC_RET};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, EntryView, Flow, MechError};
use smallvec::SmallVec;
use std::fmt;

/// A set of a CTA's threads: one lane mask per static warp (inline up to 8 warps, 256 threads of 32, so
/// that the sets an update builds and drops allocate nothing there).
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct CtaMask(pub SmallVec<[LaneMask; 8]>);

impl CtaMask {
    /// The empty set for a CTA of `nwarps` static warps.
    pub fn empty(nwarps: usize) -> CtaMask {
        CtaMask(smallvec::smallvec![0; nwarps])
    }

    /// Adds the `(static warp, lanes)` parts.
    pub fn add(&mut self, parts: impl IntoIterator<Item = (u32, LaneMask)>) {
        for (w, m) in parts {
            self.0[w as usize] |= m;
        }
    }

    /// Adds every thread of `o`.
    pub fn union(&mut self, o: &CtaMask) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }

    /// Keeps only the threads in `live`.
    pub fn retain(&mut self, live: &[LaneMask]) {
        for (a, b) in self.0.iter_mut().zip(live) {
            *a &= b;
        }
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&m| m == 0)
    }

    /// Static warps holding at least one of the threads (the warps a per-warp mechanism issues them in).
    pub fn warps(&self) -> u32 {
        self.0.iter().filter(|&&m| m != 0).count() as u32
    }

    /// The warps compaction forms: the largest number of threads sharing a home lane.
    pub fn compacted_warps(&self) -> u32 {
        let mut count = [0u32; 64];
        for &m in &self.0 {
            for l in lanes(m) {
                count[l] += 1;
            }
        }
        count.iter().copied().max().unwrap_or(0)
    }

    /// The `(static warp, lanes)` parts that are not empty.
    pub fn parts(&self) -> impl Iterator<Item = (u32, LaneMask)> + '_ {
        self.0.iter().enumerate().filter(|(_, &m)| m != 0).map(|(w, &m)| (w as u32, m))
    }

    /// The compaction unit: lane `l` of warp `k` takes the `k`-th thread of the set (in static-warp order)
    /// whose home lane is `l`.
    pub fn compact(&self) -> Vec<LaneMap> {
        let mut next = [0usize; 64];
        let mut warps: Vec<SmallVec<[(u32, LaneMask); 2]>> = Vec::new();
        for (w, &m) in self.0.iter().enumerate() {
            for l in lanes(m) {
                let k = next[l];
                next[l] += 1;
                if warps.len() <= k {
                    warps.resize_with(k + 1, SmallVec::new);
                }
                match warps[k].iter_mut().find(|p| p.0 == w as u32) {
                    Some(p) => p.1 |= 1 << l,
                    None => warps[k].push((w as u32, 1 << l)),
                }
            }
        }
        warps.into_iter().map(LaneMap::from_parts).collect()
    }
}

/// What a CTA-wide stack entry holds.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct EntryState {
    /// Every thread of the entry.
    pub threads: CtaMask,
    /// Threads not yet in a dynamic warp: the compaction unit forms warps from them when the entry
    /// activates.
    pub unformed: CtaMask,
    /// The branch whose divergence made the entry a path or reconvergence entry (its compactions are
    /// that branch's).
    pub origin: Option<Pc>,
    /// A path entry's likely-convergence point ([`PC_NONE`] when it has none): its warps stop there too.
    pub lpc: Pc,
    /// The depth of the LPC entry the threads stopped at `lpc` join.
    pub lpos: usize,
}

impl EntryThreads for EntryState {
    type Live = [LaneMask];
    fn none_live(&self, live: &[LaneMask]) -> bool {
        self.threads.0.iter().zip(live).all(|(a, b)| a & b == 0)
    }
}

/// What a dynamic warp is doing.
#[derive(Clone, PartialEq, Eq, Debug)]
enum State {
    /// Issuing at its pc.
    Run,
    /// Waiting at a sync point for the CTA's other warps; arrived at `since` (a cycle, timed runs).
    Stalled { since: Option<u64> },
    /// Stopped at a sync point it cannot arrive at yet (it went ahead of an instance that has not
    /// resolved, or its entry is not the top): the lanes' next pcs.
    Pending(Arrival),
    /// Stopped at a pc where it must wait for the stack: its entry's reconvergence point, or the
    /// reconvergence point of the instance it went ahead of.
    Parked,
}

/// A warp's arrival at a sync point.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Arrival {
    /// The sync point.
    pc: Pc,
    /// The lanes' next pcs (lanes of the warp), fall-through first.
    groups: SmallVec<[(Pc, LaneMask); 4]>,
    /// For a call: the callee's first pc.
    call: Option<Pc>,
}

/// A dynamic warp.
#[derive(Clone, PartialEq, Eq, Debug)]
struct DynWarp {
    /// The stack entry it belongs to (depth, 0 = bottom).
    entry: usize,
    /// Its pc.
    pc: Pc,
    /// Its threads.
    lanes: LaneMap,
    /// What it is doing.
    state: State,
    /// It arrived at its entry's pending instance (and, if it went ahead, runs beyond it).
    arrived: bool,
    /// While ahead of an unresolved instance: the target it went ahead to and the instance's
    /// reconvergence point, where it stops.
    ahead: Option<(Pc, Pc)>,
}

/// An instance of a sync point being resolved: what the arrived warps bring.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Instance {
    pc: Pc,
    call: Option<Pc>,
    /// Every arrived thread, by next pc.
    groups: SmallVec<[(Pc, CtaMask); 2]>,
    /// The threads of warps that diverged, by next pc (what compaction-adequacy is judged on).
    divergent: SmallVec<[(Pc, CtaMask); 2]>,
    /// The prediction the instance's first divergent warp read (CAPRI).
    prediction: Option<bool>,
    /// Whether some warp stalled.
    stalled: bool,
}

/// The state of one CTA.
#[derive(Clone, Debug)]
pub struct CtaState {
    nwarps: usize,
    stack: Vec<PdomEntry<EntryState>>,
    /// The pending instance of each entry (only the top entry's can progress).
    instances: Vec<Option<Instance>>,
    warps: Vec<Option<DynWarp>>,
}

/// What a policy says about an arriving warp.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decision {
    /// The warp waits for the CTA and is compacted.
    pub stall: bool,
    /// The compaction-adequacy prediction it read (`None` when the policy has no predictor or was not
    /// asked).
    pub predicted: Option<bool>,
}

/// When a warp arriving at a sync point waits for the CTA: the difference between TBC and CAPRI.
pub trait CompactionPolicy: Sync {
    /// Per-SM state (CAPRI's prediction table).
    type Table: fmt::Debug + Send + Default;
    /// Whether the policy predicts compaction adequacy (reports the predictor's counters).
    const PREDICTOR: bool;
    /// Whether divergent branches that can leave their loop converge early at their likely-convergence
    /// point (the `:lpc` variants).
    const LIKELY: bool;
    /// The command-line name.
    fn name(&self) -> &'static str;
    /// A warp arrives at the sync point `pc`; `divergent` when its lanes split.
    fn arrive(&self, table: &mut Self::Table, pc: Pc, divergent: bool) -> Decision;
    /// An instance of `pc` in which some warp diverged resolved; `adequate` when compacting its divergent
    /// threads forms fewer warps than they occupied.
    fn learn(&self, table: &mut Self::Table, pc: Pc, adequate: bool);
}

counters! {
    /// Every counter of the CTA-wide stack; TBC reports the first nine, `tbc:lpc` ten, CAPRI all.
    pub(crate) enum CtaCounter {
        SyncInstances = sum(
            "sync_instances",
            "CTA-wide sync points resolved (every warp of the top entry arrived at a conditional branch, call or divergent return)",
        ),
        Arrivals = sum("arrivals", "warp arrivals at sync points"),
        StalledWarps = sum("stalled_warps", "arrivals that waited for the CTA's other warps (TBC: every arrival)"),
        Compactions = sum(
            "compactions",
            "times the compaction unit formed warps for a path, or again at its reconvergence point",
        ),
        WarpsBefore = sum(
            "warps_before",
            "summed over compactions: static warps holding the threads (the warps per-warp reconvergence issues them in)",
        ),
        WarpsAfter = sum("warps_after", "summed over compactions: warps formed"),
        DivergentInstances = sum("divergent_instances", "sync point instances in which some warp's lanes split"),
        UnnecessarySyncs = sum(
            "unnecessary_syncs",
            "divergent instances in which compacting the divergent threads forms no fewer warps than they occupy",
        ),
        SyncStallCycles = cycles(
            "sync_stall_cycles",
            "summed over stalled arrivals: cycles from the warp's arrival to the arrival of the last warp",
        ),
        LikelyMerges = sum(
            "likely_merges",
            "warps whose threads stopped at a likely-convergence point and joined its LPC entry (`:lpc` variants; 0 otherwise)",
        ),
        Predictions = sum(
            "predictions",
            "divergent instances: the compaction-adequacy prediction their first divergent warp read",
        ),
        PredictedAdequate = sum(
            "predicted_adequate",
            "predictions that said adequate (divergent warps stall and are compacted)",
        ),
        Mispredictions = sum(
            "mispredictions",
            "divergent instances whose adequacy differed from their prediction (each updates the table)",
        ),
        Bypassed = sum("bypassed", "divergent warps that did not stall (predicted inadequate)"),
        StallsAvoided = sum("stalls_avoided", "arrivals that did not stall (TBC stalls every one)"),
        UnnecessarySyncsAvoided = sum("unnecessary_syncs_avoided", "unnecessary syncs in which no warp stalled"),
    }
}

counters! {
    /// Per-branch counters; TBC reports the first four, CAPRI all.
    pub(crate) enum CtaBranchCounter {
        Compactions = sum("compactions", "compactions of the branch's paths and at its reconvergence point"),
        WarpsBefore = sum("warps_before", "static warps holding the compacted threads, summed"),
        WarpsAfter = sum("warps_after", "warps the compactions formed, summed"),
        StallCycles = cycles("stall_cycles", "cycles warps waited at the branch for the CTA, summed"),
        PredictedAdequate = sum("predicted_adequate", "instances predicted compaction-adequate"),
        Bypassed = sum("bypassed", "divergent warps that went ahead without stalling"),
        Mispredictions = sum("mispredictions", "instances whose adequacy differed from the prediction"),
    }
}

/// CAPRI's ratio: seed 002's "average prediction rate".
pub(crate) const RATIOS: [Ratio; 1] = [Ratio {
    name: "prediction_rate",
    num: "unnecessary_syncs_avoided",
    den: "unnecessary_syncs",
    doc: "the fraction of TBC's unnecessary synchronisations CAPRI avoided (seed 002's average prediction rate)",
}];

/// The CTA-wide stack mechanism under policy `P`.
#[derive(Clone, Copy, Debug, Default)]
pub struct CtaStack<P>(pub P);

impl<P: CompactionPolicy> Tracker for CtaStack<P> {
    type Sm = P::Table;
    type Cta = CtaState;

    const STRUCTURE: Structure = Structure::Stack;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = if P::PREDICTOR {
        CtaCounter::COUNTERS
    } else if P::LIKELY {
        CtaCounter::COUNTERS.split_at(CtaCounter::Predictions as usize).0
    } else {
        CtaCounter::COUNTERS.split_at(CtaCounter::LikelyMerges as usize).0
    };
    const RATIOS: &'static [Ratio] = if P::PREDICTOR { &RATIOS } else { &[] };
    const BRANCH_COUNTERS: &'static [Counter] = if P::PREDICTOR {
        CtaBranchCounter::COUNTERS
    } else {
        CtaBranchCounter::COUNTERS.split_at(CtaBranchCounter::PredictedAdequate as usize).0
    };

    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn new_sm(&self, _prog: &Program, _launch: &crate::launch::LaunchConfig) -> P::Table {
        P::Table::default()
    }

    fn contexts(&self, _nwarps: u32, nthreads: u32) -> u32 {
        // Every dynamic warp holds at least one thread.
        nthreads.max(1)
    }

    fn occupied(&self, _sm: &P::Table, st: &CtaState, _contexts: u32, out: &mut Vec<u32>) {
        out.extend(st.warps.iter().enumerate().filter(|(_, w)| w.is_some()).map(|(i, _)| i as u32));
    }

    fn launch(&self, _sm: &mut P::Table, _cta: u32, view: &CtaView<'_>, entry: Pc) -> CtaState {
        let nwarps = view.live.len();
        let threads = CtaMask(SmallVec::from_slice(view.live));
        let warps = threads
            .parts()
            .map(|(w, m)| {
                Some(DynWarp {
                    entry: 0,
                    pc: entry,
                    lanes: LaneMap::from_parts([(w, m)]),
                    state: State::Run,
                    arrived: false,
                    ahead: None,
                })
            })
            .collect();
        let base = EntryState { threads, unformed: CtaMask::empty(nwarps), origin: None, lpc: PC_NONE, lpos: 0 };
        CtaState {
            nwarps,
            stack: vec![PdomEntry { pc: entry, rpc: PC_NONE, mask: base, call: false }],
            instances: vec![None],
            warps,
        }
    }

    fn peek(&self, _sm: &P::Table, st: &CtaState, view: &CtaView<'_>, ctx: u32) -> Peek {
        let Some(Some(w)) = st.warps.get(ctx as usize) else { return Peek::Empty };
        let mask = live_lanes(&w.lanes, view.live);
        if mask == 0 {
            return Peek::Empty;
        }
        if w.state != State::Run {
            return Peek::Blocked(Blocked::Mechanism);
        }
        if w.lanes.parts().iter().any(|&(sw, m)| view.blocked[sw as usize] & m != 0) {
            return Peek::Blocked(Blocked::Barrier);
        }
        Peek::Ready(Group { ctx, pc: w.pc, mask, lanes: w.lanes.clone(), hold: mask, prio: 0 })
    }

    fn update(&self, sm: &mut P::Table, st: &mut CtaState, group: &Group, flow: &Flow, u: &mut UpdateCtx<'_>) -> Done {
        let ctx = group.ctx as usize;
        let Some(w) = st.warps.get_mut(ctx).and_then(Option::as_mut) else {
            return Err(MechError::EmptyContext("dynamic warp", ctx as u32));
        };
        if matches!(flow, Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. }) {
            return Err(MechError::NeedsSsy);
        }
        // Exited threads leave the warp.
        let live = live_lanes(&w.lanes, u.view.live);
        let exits = live != w.lanes.lanes();
        if exits {
            w.lanes = LaneMap::from_parts(w.lanes.parts().iter().map(|&(sw, m)| (sw, m & u.view.live[sw as usize])));
        }
        if live == 0 {
            st.warps[ctx] = None;
        } else if let Some(arrival) = sync_point(u.prog, group.pc, group.mask & live, flow) {
            st.arrive(&self.0, sm, ctx, arrival, u)?;
        } else {
            let groups = pdom::successors(group.pc, group.mask & live, flow);
            let next = groups.first().map(|g| g.0).unwrap_or(group.pc + 1);
            st.move_to(ctx, next);
            // A running warp that moved on without parking and without losing a thread leaves the settled
            // CTA settled (settling reads no running warp's pc; what `advance` relies on as well).
            if !exits && st.warps[ctx].as_ref().is_some_and(|w| w.state == State::Run) {
                u.size = st.stack.len();
                return Ok(());
            }
        }
        st.settle(&self.0, sm, u)?;
        u.size = st.stack.len();
        Ok(())
    }

    #[inline]
    fn straight_run(&self, _sm: &P::Table, st: &CtaState, _view: &CtaView<'_>, group: &Group, max: u32) -> u32 {
        st.clear_run(group.ctx as usize, group.pc, max)
    }

    fn advance(&self, sm: &mut P::Table, st: &mut CtaState, group: &Group, n: u32, u: &mut UpdateCtx<'_>) -> Done {
        // The middle updates each move the running warp one pc on and leave the settled stack as it is
        // (settling reads no running warp's pc): the first and the last update as usual.
        self.update(sm, st, group, &Flow::Next, u)?;
        if n >= 2 {
            let last = Group { pc: group.pc + n - 1, ..group.clone() };
            if n >= 3 {
                st.move_to(group.ctx as usize, last.pc);
            }
            self.update(sm, st, &last, &Flow::Next, u)?;
        }
        Ok(())
    }

    fn entries(&self, _sm: &P::Table, st: &CtaState, _ctx: u32) -> Vec<EntryView> {
        st.views()
    }

    fn positions(&self, _sm: &P::Table, st: &CtaState, view: &CtaView<'_>) -> Vec<Position> {
        st.positions(view)
    }
}

/// The lanes of `lanes` whose threads are alive.
fn live_lanes(lanes: &LaneMap, live: &[LaneMask]) -> LaneMask {
    lanes.parts().iter().fold(0, |a, &(w, m)| a | (m & live[w as usize]))
}

/// The arrival a group makes when its instruction is a sync point: a conditional or indirect branch, a
/// conditional return (the kernel's conditional instructions have a reconvergence point), or a call.
/// Whether an instruction is a sync point depends on the instruction alone, never on the lanes' outcome,
/// so every warp of an entry stops at the same sync points.
fn sync_point(prog: &Program, pc: Pc, mask: LaneMask, flow: &Flow) -> Option<Arrival> {
    let conditional = prog.reconv.get(pc as usize).is_some_and(|&r| r != PC_NONE);
    let call = match &prog.insts[pc as usize].op {
        Op::Call { callee, .. } => Some(prog.functions[*callee as usize].entry),
        Op::Bra { .. } | Op::Brx { .. } | Op::Ret if conditional => None,
        _ => return None,
    };
    Some(Arrival { pc, groups: pdom::successors(pc, mask, flow), call })
}

impl CtaState {
    fn top(&self) -> usize {
        self.stack.len() - 1
    }

    /// The pc at which the warps of entry `e` stop: its reconvergence point, or the function's virtual
    /// exit for a call entry.
    fn stop_pc(&self, e: usize) -> Pc {
        let entry = &self.stack[e];
        if entry.call {
            PC_RET
        } else {
            entry.rpc
        }
    }

    /// Whether entry `e` is the top and all its threads are in warps (it may resolve sync points).
    fn active(&self, e: usize) -> bool {
        e == self.top() && self.stack[e].mask.unformed.is_empty()
    }

    /// The pcs at which warp `w` parks ([`CtaState::move_to`]): its entry's stop, the function's virtual
    /// exit, the reconvergence point of the instance it went ahead of, or else its entry's
    /// likely-convergence point (a warp that went ahead is not part of the path entry's merge until
    /// adopted). An absent one repeats the virtual exit.
    fn parks(&self, w: &DynWarp) -> [Pc; 4] {
        let (ahead, lpc) = match w.ahead {
            Some((_, r)) => (r, PC_RET),
            None => (PC_RET, self.stack[w.entry].mask.lpc),
        };
        [self.stop_pc(w.entry), PC_RET, ahead, lpc]
    }

    /// How many straight-line instructions from `pc` (at most `max`) running warp `ctx` may issue with one
    /// update standing for them: up to the nearest pc ahead where it would park (it may park on the run's
    /// last instruction). Moving a running warp's pc changes nothing else of a settled CTA.
    fn clear_run(&self, ctx: usize, pc: Pc, max: u32) -> u32 {
        let Some(Some(w)) = self.warps.get(ctx) else { return 1 };
        if w.state != State::Run || w.pc != pc {
            return 1;
        }
        self.parks(w).into_iter().filter(|&p| p > pc).fold(max, |n, p| n.min(p - pc)).max(1)
    }

    /// Warp `ctx` continues at `pc` (not a sync point): it runs on, or parks at a stop.
    fn move_to(&mut self, ctx: usize, pc: Pc) {
        let Some(w) = self.warps[ctx].as_ref() else { return };
        let parked = self.parks(w).contains(&pc);
        let w = self.warps[ctx].as_mut().expect("warp");
        w.pc = pc;
        w.state = if parked { State::Parked } else { State::Run };
    }

    /// Warp `ctx` reached a sync point.
    fn arrive<P: CompactionPolicy>(
        &mut self,
        policy: &P,
        table: &mut P::Table,
        ctx: usize,
        a: Arrival,
        u: &mut UpdateCtx<'_>,
    ) -> Done {
        let w = self.warps[ctx].as_mut().expect("warp");
        w.pc = a.pc;
        let (e, arrived) = (w.entry, w.arrived);
        if arrived || !self.active(e) {
            self.warps[ctx].as_mut().expect("warp").state = State::Pending(a);
            return Ok(());
        }
        self.contribute(policy, table, ctx, a, u)
    }

    /// Warp `ctx` arrives at its entry's pending instance: its threads join the instance's masks, and it
    /// stalls or goes ahead as the policy decides.
    fn contribute<P: CompactionPolicy>(
        &mut self,
        policy: &P,
        table: &mut P::Table,
        ctx: usize,
        a: Arrival,
        u: &mut UpdateCtx<'_>,
    ) -> Done {
        let nwarps = self.nwarps;
        let w = self.warps[ctx].as_ref().expect("warp");
        let e = w.entry;
        let inst = self.instances[e].get_or_insert_with(|| Instance {
            pc: a.pc,
            call: a.call,
            groups: SmallVec::new(),
            divergent: SmallVec::new(),
            prediction: None,
            stalled: false,
        });
        if inst.pc != a.pc {
            return Err(MechError::SplitSyncPoint(u.prog.describe_pc(inst.pc), u.prog.describe_pc(a.pc)));
        }
        let divergent = a.groups.len() > 1;
        // At a branch with a likely-convergence point every warp waits for the CTA (`capri:lpc` as `tbc:lpc`):
        // the early merge gathers the instance's threads, and no warp may run ahead of it.
        let decision = if P::LIKELY && a.call.is_none() && u.prog.likely_convergence(a.pc).is_some() {
            Decision { stall: true, predicted: None }
        } else {
            policy.arrive(table, a.pc, divergent)
        };
        let branch = u.prog.info[a.pc as usize].branch;
        u.count(CtaCounter::Arrivals, 1);
        for &(pc, m) in &a.groups {
            add_group(&mut inst.groups, pc, w.lanes.split(m), nwarps);
            if divergent {
                add_group(&mut inst.divergent, pc, w.lanes.split(m), nwarps);
            }
        }
        if divergent && inst.prediction.is_none() {
            inst.prediction = decision.predicted;
        }
        if decision.stall {
            inst.stalled = true;
            u.count(CtaCounter::StalledWarps, 1);
        } else if P::PREDICTOR {
            u.count(CtaCounter::StallsAvoided, 1);
            if divergent {
                u.count(CtaCounter::Bypassed, 1);
                if let Some(b) = branch {
                    u.count_branch_at(b, CtaBranchCounter::Bypassed, 1);
                }
            }
        }
        let w = self.warps[ctx].as_mut().expect("warp");
        w.arrived = true;
        if decision.stall {
            w.state = State::Stalled { since: u.cycle };
            return Ok(());
        }
        // Ahead: one warp per target, each running until the instance's reconvergence point.
        let r = match a.call {
            Some(_) => a.pc + 1,
            None if divergent => pdom::reconvergence_point(u.prog, a.pc)?,
            None => u.prog.reconv[a.pc as usize],
        };
        let lanes = w.lanes.clone();
        for (i, &(pc, m)) in a.groups.iter().enumerate() {
            let part = LaneMap::from_parts(lanes.split(m));
            let slot = if i == 0 { ctx } else { self.free_slot() };
            self.warps[slot] =
                Some(DynWarp { entry: e, pc, lanes: part, state: State::Run, arrived: true, ahead: Some((pc, r)) });
            self.move_to(slot, pc);
        }
        Ok(())
    }

    /// The lowest free context.
    fn free_slot(&mut self) -> usize {
        match self.warps.iter().position(Option::is_none) {
            Some(i) => i,
            None => {
                self.warps.push(None);
                self.warps.len() - 1
            }
        }
    }

    /// The warps of entry `e`.
    fn members(&self, e: usize) -> impl Iterator<Item = (usize, &DynWarp)> + '_ {
        self.warps.iter().enumerate().filter_map(move |(i, w)| w.as_ref().filter(|w| w.entry == e).map(|w| (i, w)))
    }

    /// Resolves, pops and activates until nothing changes.
    fn settle<P: CompactionPolicy>(&mut self, policy: &P, table: &mut P::Table, u: &mut UpdateCtx<'_>) -> Done {
        loop {
            if self.stack.is_empty() {
                return Ok(());
            }
            let top = self.top();
            // Warps stopped at the top entry's likely-convergence point leave it for the LPC entry at once,
            // so that the entry's other warps (one adopted from ahead of an instance may be past that
            // point, in the loop's next iteration) resolve their sync points without them.
            self.merge_at_likely(top, u);
            // Pop entries without live threads, and entries whose warps all reached the reconvergence point.
            let done = self.instances[top].is_none()
                && self.stack[top].mask.unformed.is_empty()
                && self.members(top).all(|(_, w)| w.state == State::Parked && !w.arrived);
            if done {
                let stop = self.stop_pc(top);
                self.stack[top].pc = stop;
            }
            let popped = pdom::normalize(&mut self.stack, u.view.live);
            if popped > 0 {
                self.drop_above();
                continue;
            }
            let top = self.top();
            if !self.stack[top].mask.unformed.is_empty() {
                self.activate(top, u);
                continue;
            }
            // Pending arrivals of the top entry's warps.
            let pending = self.members(top).find_map(|(i, w)| match &w.state {
                State::Pending(a) if !w.arrived => Some((i, a.clone())),
                _ => None,
            });
            if let Some((ctx, a)) = pending {
                self.contribute(policy, table, ctx, a, u)?;
                continue;
            }
            // Resolution: every warp of the top entry arrived.
            if self.instances[top].is_some() && self.members(top).all(|(_, w)| w.arrived) {
                self.resolve(policy, table, u)?;
                continue;
            }
            return Ok(());
        }
    }

    /// Removes the instances and warps of entries that no longer exist.
    fn drop_above(&mut self) {
        let n = self.stack.len();
        self.instances.truncate(n);
        for w in self.warps.iter_mut() {
            if w.as_ref().is_some_and(|w| w.entry >= n) {
                *w = None;
            }
        }
    }

    /// The top entry becomes active: the compaction unit forms warps from its unformed threads.
    fn activate(&mut self, e: usize, u: &mut UpdateCtx<'_>) {
        let mut threads = std::mem::take(&mut self.stack[e].mask.unformed);
        threads.retain(u.view.live);
        self.stack[e].mask.unformed = CtaMask::empty(self.nwarps);
        if threads.is_empty() {
            return;
        }
        let formed = threads.compact();
        if let Some(origin) = self.stack[e].mask.origin.take() {
            let (before, after) = (threads.warps() as u64, formed.len() as u64);
            u.count(CtaCounter::Compactions, 1);
            u.count(CtaCounter::WarpsBefore, before);
            u.count(CtaCounter::WarpsAfter, after);
            if let Some(b) = u.prog.info[origin as usize].branch {
                u.count_branch_at(b, CtaBranchCounter::Compactions, 1);
                u.count_branch_at(b, CtaBranchCounter::WarpsBefore, before);
                u.count_branch_at(b, CtaBranchCounter::WarpsAfter, after);
            }
        }
        u.delay(Delay::Compaction, threads.parts());
        let pc = self.stack[e].pc;
        for lanes in formed {
            let slot = self.free_slot();
            self.warps[slot] = Some(DynWarp { entry: e, pc, lanes, state: State::Run, arrived: false, ahead: None });
            self.move_to(slot, pc);
        }
    }

    /// Every warp of the top entry arrived at its instance: apply the PDOM rule CTA-wide.
    ///
    /// A CTA-uniform outcome moves the entry to the common target and releases the same warps. Otherwise
    /// the entry becomes the reconvergence entry (or the call's return entry) and will re-form all its
    /// threads when it is the top again; stalled warps dissolve into the path entries, whose compaction
    /// forms their warps; warps that went ahead move to the entry of their target, or dissolve when
    /// their target is the reconvergence point.
    fn resolve<P: CompactionPolicy>(&mut self, policy: &P, table: &mut P::Table, u: &mut UpdateCtx<'_>) -> Done {
        let e = self.top();
        let mut inst = self.instances[e].take().expect("instance");
        for (_, m) in inst.groups.iter_mut().chain(inst.divergent.iter_mut()) {
            m.retain(u.view.live);
        }
        inst.groups.retain(|(_, m)| !m.is_empty());
        inst.divergent.retain(|(_, m)| !m.is_empty());
        self.account(policy, table, e, &inst, u);
        let reconverge_at = match inst.call {
            Some(_) => inst.pc + 1,
            None if inst.groups.len() > 1 => pdom::reconvergence_point(u.prog, inst.pc)?,
            None => {
                let t = inst.groups.first().map(|g| g.0).unwrap_or(inst.pc + 1);
                self.release(e, t);
                return Ok(());
            }
        };
        let likely = match inst.call {
            None if P::LIKELY => u.prog.likely_convergence(inst.pc).filter(|&l| l != reconverge_at),
            _ => None,
        };
        // The entry re-forms all its threads when it is the top again.
        let entry = &mut self.stack[e].mask;
        entry.unformed = entry.threads.clone();
        let base = match inst.call {
            Some(target) => {
                let Some(callers) = inst.groups.iter().find(|g| g.0 == target).map(|g| g.1.clone()) else {
                    // Nobody called: everyone continues after the call.
                    self.stack[e].pc = reconverge_at;
                    self.dissolve(e, &inst.groups, &[]);
                    return Ok(());
                };
                pdom::call(&mut self.stack, reconverge_at, target, path_state(callers, None));
                e + 1
            }
            None => {
                self.stack[e].mask.origin = Some(inst.pc);
                let paths = self.paths(&inst, reconverge_at, likely, e);
                let popped = pdom::diverge(&mut self.stack, reconverge_at, paths);
                if popped {
                    e
                } else {
                    e + 1
                }
            }
        };
        self.instances.truncate(base.min(self.instances.len()));
        self.instances.resize(self.stack.len(), None);
        let dest: SmallVec<[(Pc, usize); 2]> = match (inst.call, likely) {
            (Some(target), _) => smallvec::smallvec![(target, base)],
            (None, None) => inst.groups.iter().map(|g| g.0).filter(|&pc| pc != reconverge_at).zip(base..).collect(),
            (None, Some(l)) => std::iter::once(l)
                .chain(inst.groups.iter().map(|g| g.0).filter(|&pc| pc != reconverge_at && pc != l))
                .zip(base..)
                .collect(),
        };
        self.dissolve(e, &inst.groups, &dest);
        Ok(())
    }

    /// The entries a divergent instance pushes above its reconvergence entry `e`, in push order: one per
    /// target (PDOM), or, with a likely-convergence point `l`, first the LPC entry (holding the threads
    /// whose target is `l`) and then one per other target, each stopping at `l` too.
    fn paths(&self, inst: &Instance, r: Pc, likely: Option<Pc>, e: usize) -> SmallVec<[(Pc, EntryState); 3]> {
        let Some(l) = likely else {
            return inst.groups.iter().map(|(pc, m)| (*pc, path_state(m.clone(), Some(inst.pc)))).collect();
        };
        // The LPC entry's depth: the first entry pushed (above `e`, or in its place when `e` reconverges at
        // `r` already and is popped).
        let lpos = if self.stack[e].rpc != r || self.stack[e].call { e + 1 } else { e };
        let mut at_l = CtaMask::empty(self.nwarps);
        for (_, m) in inst.groups.iter().filter(|g| g.0 == l) {
            at_l.union(m);
        }
        let mut out: SmallVec<[(Pc, EntryState); 3]> = smallvec::smallvec![(l, path_state(at_l, Some(inst.pc)))];
        for (pc, m) in inst.groups.iter().filter(|g| g.0 != l) {
            let mut state = path_state(m.clone(), Some(inst.pc));
            (state.lpc, state.lpos) = (l, lpos);
            out.push((*pc, state));
        }
        out
    }

    /// The warps of path entry `e` stopped at its likely-convergence point end; their threads join the LPC
    /// entry (to be compacted when it activates).
    fn merge_at_likely(&mut self, e: usize, u: &mut UpdateCtx<'_>) {
        let (lpc, lpos) = (self.stack[e].mask.lpc, self.stack[e].mask.lpos);
        if lpc == PC_NONE {
            return;
        }
        for i in 0..self.warps.len() {
            let parked = |w: &&DynWarp| w.entry == e && w.pc == lpc && w.ahead.is_none() && w.state == State::Parked;
            let Some(w) = self.warps[i].as_ref().filter(parked) else {
                continue;
            };
            let parts: SmallVec<[(u32, LaneMask); 4]> =
                w.lanes.parts().iter().map(|&(sw, m)| (sw, m & u.view.live[sw as usize])).collect();
            // The threads leave entry `e` (it must not re-form them if it becomes a reconvergence entry).
            for &(sw, m) in &parts {
                self.stack[e].mask.threads.0[sw as usize] &= !m;
            }
            let target = &mut self.stack[lpos].mask;
            target.threads.add(parts.iter().copied());
            target.unformed.add(parts);
            self.warps[i] = None;
            u.count(CtaCounter::LikelyMerges, 1);
        }
    }

    /// A CTA-uniform outcome: entry `e` continues at `t` with the same warps.
    fn release(&mut self, e: usize, t: Pc) {
        self.stack[e].pc = t;
        for i in 0..self.warps.len() {
            let Some(w) = self.warps[i].as_mut().filter(|w| w.entry == e) else { continue };
            w.arrived = false;
            w.ahead = None;
            let resume = match w.state {
                State::Stalled { .. } => Some(t),
                State::Parked => Some(w.pc),
                _ => None,
            };
            if let Some(pc) = resume {
                self.move_to(i, pc);
            }
        }
    }

    /// After a divergence or call resolved: the warps of entry `e` leave it. Stalled warps dissolve, their
    /// threads joining the unformed threads of their path's entry (`dest`: target pc → entry); warps that
    /// went ahead move to the entry of their target, or dissolve when it has none (the reconvergence or
    /// return point, where entry `e` re-forms every thread).
    fn dissolve(&mut self, e: usize, groups: &[(Pc, CtaMask)], dest: &[(Pc, usize)]) {
        for i in 0..self.warps.len() {
            let Some(w) = self.warps[i].as_ref().filter(|w| w.entry == e) else { continue };
            if let Some((target, _)) = w.ahead {
                match dest.iter().find(|d| d.0 == target) {
                    Some(&(_, d)) => self.adopt(i, d),
                    None => self.warps[i] = None,
                }
                continue;
            }
            // A stalled warp: each of its threads goes where its group goes.
            let parts: SmallVec<[(u32, LaneMask); 4]> = w.lanes.parts().iter().copied().collect();
            for &(pc, d) in dest {
                let Some((_, m)) = groups.iter().find(|g| g.0 == pc) else { continue };
                let mine = parts.iter().map(|&(sw, l)| (sw, l & m.0[sw as usize]));
                self.stack[d].mask.unformed.add(mine);
            }
            self.warps[i] = None;
        }
    }

    /// Warp `i` becomes a warp of entry `d`.
    fn adopt(&mut self, i: usize, d: usize) {
        let w = self.warps[i].as_mut().expect("warp");
        w.entry = d;
        w.arrived = false;
        w.ahead = None;
        if w.state == State::Parked {
            let pc = w.pc;
            self.move_to(i, pc);
        }
    }

    /// Counts a resolved instance and lets the policy learn from it.
    fn account<P: CompactionPolicy>(
        &self,
        policy: &P,
        table: &mut P::Table,
        e: usize,
        inst: &Instance,
        u: &mut UpdateCtx<'_>,
    ) {
        u.count(CtaCounter::SyncInstances, 1);
        let branch = u.prog.info[inst.pc as usize].branch;
        if let Some(now) = u.cycle {
            let waited: u64 = self
                .members(e)
                .filter_map(|(_, w)| match w.state {
                    State::Stalled { since: Some(t) } => Some(now.saturating_sub(t)),
                    _ => None,
                })
                .sum();
            u.count(CtaCounter::SyncStallCycles, waited);
            if let Some(b) = branch {
                u.count_branch_at(b, CtaBranchCounter::StallCycles, waited);
            }
        }
        if inst.divergent.is_empty() {
            return;
        }
        u.count(CtaCounter::DivergentInstances, 1);
        let before: u32 = inst.divergent.iter().map(|(_, m)| m.warps()).sum();
        let after: u32 = inst.divergent.iter().map(|(_, m)| m.compacted_warps()).sum();
        let adequate = after < before;
        if !adequate {
            u.count(CtaCounter::UnnecessarySyncs, 1);
            if P::PREDICTOR && !inst.stalled {
                u.count(CtaCounter::UnnecessarySyncsAvoided, 1);
            }
        }
        if P::PREDICTOR {
            if let Some(p) = inst.prediction {
                u.count(CtaCounter::Predictions, 1);
                let miss = p != adequate;
                if p {
                    u.count(CtaCounter::PredictedAdequate, 1);
                }
                if miss {
                    u.count(CtaCounter::Mispredictions, 1);
                }
                if let Some(b) = branch {
                    u.count_branch_at(b, CtaBranchCounter::PredictedAdequate, p as u64);
                    u.count_branch_at(b, CtaBranchCounter::Mispredictions, miss as u64);
                }
            }
        }
        policy.learn(table, inst.pc, adequate);
    }

    /// The structure for traces: the stack bottom first, then the dynamic warps.
    fn views(&self) -> Vec<EntryView> {
        let mut out = Vec::with_capacity(self.stack.len() + self.warps.len());
        for (d, e) in self.stack.iter().enumerate() {
            let wcnt = self.members(d).filter(|(_, w)| !w.arrived).count();
            let mut note = format!("warps={} wcnt={wcnt}", self.members(d).count());
            if e.mask.lpc != PC_NONE {
                note.push_str(&format!(" lpc={}", e.mask.lpc));
            }
            if !e.mask.unformed.is_empty() {
                note.push_str(" (to compact)");
            }
            out.push(EntryView {
                kind: if e.call { EntryKind::Call } else { EntryKind::Cta },
                lanes: e.mask.threads.0.to_vec(),
                pc: e.pc,
                rpc: e.rpc,
                note,
            });
        }
        for (i, w) in self.warps.iter().enumerate() {
            let Some(w) = w else { continue };
            let mut lanes = vec![0; self.nwarps];
            for &(sw, m) in w.lanes.parts() {
                lanes[sw as usize] |= m;
            }
            out.push(EntryView {
                kind: EntryKind::Warp,
                lanes,
                pc: w.pc,
                rpc: PC_NONE,
                note: format!("#{i} {}", w.describe()),
            });
        }
        out
    }

    /// Where the live threads are, for deadlock reports.
    fn positions(&self, view: &CtaView<'_>) -> Vec<Position> {
        let mut out = Vec::new();
        let mut placed = CtaMask::empty(self.nwarps);
        for w in self.warps.iter().flatten() {
            let state = match &w.state {
                State::Run => PositionState::IssuingDynamicWarp,
                State::Stalled { .. } => PositionState::StalledAtBranch,
                State::Pending(_) => PositionState::AtSyncPoint,
                State::Parked => PositionState::ParkedAtReconvergence,
            };
            for &(sw, m) in w.lanes.parts() {
                let m = m & view.live[sw as usize];
                if m != 0 {
                    placed.0[sw as usize] |= m;
                    out.push(Position { warp: sw, lanes: m, pc: w.pc, state });
                }
            }
        }
        for e in self.stack.iter().rev() {
            for (sw, m) in e.mask.threads.parts() {
                let m = m & view.live[sw as usize] & !placed.0[sw as usize];
                if m != 0 {
                    placed.0[sw as usize] |= m;
                    out.push(Position { warp: sw, lanes: m, pc: e.pc, state: PositionState::InCtaStack });
                }
            }
        }
        out
    }
}

impl DynWarp {
    fn describe(&self) -> &'static str {
        match (&self.state, self.ahead.is_some()) {
            (State::Run, false) => "run",
            (State::Run, true) => "ahead",
            (State::Stalled { .. }, _) => "stalled",
            (State::Pending(_), _) => "at-sync",
            (State::Parked, _) => "at-rpc",
        }
    }
}

/// The state of a path (or call) entry for `threads`: its warps are formed when it activates.
fn path_state(threads: CtaMask, origin: Option<Pc>) -> EntryState {
    let nwarps = threads.0.len();
    EntryState { threads, unformed: CtaMask::empty(nwarps), origin, lpc: PC_NONE, lpos: 0 }
}

/// Adds `parts` to the group of `pc`.
fn add_group(
    groups: &mut SmallVec<[(Pc, CtaMask); 2]>,
    pc: Pc,
    parts: impl Iterator<Item = (u32, LaneMask)>,
    nwarps: usize,
) {
    let i = match groups.iter().position(|g| g.0 == pc) {
        Some(i) => i,
        None => {
            groups.push((pc, CtaMask::empty(nwarps)));
            groups.len() - 1
        }
    };
    groups[i].1.add(parts);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compaction_packs_threads_of_disjoint_lanes_into_one_warp() {
        // Seed 002, loop 1: the then-arm is lanes 0-15 of warp 0 and lanes 16-31 of warp 1.
        let then_arm = CtaMask(smallvec::smallvec![0x0000_ffff, 0xffff_0000]);
        assert_eq!((then_arm.warps(), then_arm.compacted_warps()), (2, 1));
        let formed = then_arm.compact();
        assert_eq!(formed.len(), 1);
        assert_eq!(formed[0].parts(), &[(0, 0x0000_ffff), (1, 0xffff_0000)]);
    }

    #[test]
    fn compaction_cannot_merge_threads_of_the_same_lane() {
        // Seed 002, loop 2: even lanes of both warps.
        let even = CtaMask(smallvec::smallvec![0x5555_5555, 0x5555_5555]);
        assert_eq!((even.warps(), even.compacted_warps()), (2, 2));
        let formed = even.compact();
        assert_eq!(formed.len(), 2);
        assert_eq!(formed[0].parts(), &[(0, 0x5555_5555)], "warp k takes the k-th thread of each lane");
        assert_eq!(formed[1].parts(), &[(1, 0x5555_5555)]);
    }

    #[test]
    fn compaction_of_a_full_block_re_forms_the_static_warps() {
        let full = CtaMask(smallvec::smallvec![0xff, 0xff, 0xff]);
        let formed = full.compact();
        assert_eq!(formed.len(), 3);
        for (k, w) in formed.iter().enumerate() {
            assert_eq!(w.parts(), &[(k as u32, 0xff)]);
        }
    }

    #[test]
    fn compaction_fills_holes_lane_by_lane() {
        // Lane 0 only in warp 2, lane 1 in warps 0 and 1: two warps; the first takes the first thread of
        // each lane in static-warp order.
        let m = CtaMask(smallvec::smallvec![0b10, 0b10, 0b01]);
        let formed = m.compact();
        assert_eq!(formed.len(), 2);
        assert_eq!(formed[0].parts(), &[(0, 0b10), (2, 0b01)]);
        assert_eq!(formed[1].parts(), &[(1, 0b10)]);
    }

    #[test]
    fn tbc_reports_the_first_nine_counters_and_capri_all() {
        use crate::{Capri, Tbc};
        assert_eq!(<CtaStack<Tbc> as Tracker>::COUNTERS.len(), 9);
        assert_eq!(
            <CtaStack<Tbc> as Tracker>::COUNTERS[CtaCounter::SyncStallCycles as usize].name,
            "sync_stall_cycles"
        );
        assert_eq!(<CtaStack<Capri> as Tracker>::COUNTERS.len(), CtaCounter::COUNTERS.len());
        assert_eq!(
            CtaCounter::COUNTERS[CtaCounter::UnnecessarySyncsAvoided as usize].name,
            "unnecessary_syncs_avoided"
        );
        assert_eq!(CtaCounter::COUNTERS[CtaCounter::Predictions as usize].name, "predictions");
        assert_eq!(CtaBranchCounter::COUNTERS[CtaBranchCounter::Mispredictions as usize].name, "mispredictions");
        assert_eq!(<CtaStack<Tbc> as Tracker>::BRANCH_COUNTERS.len(), 4);
        assert_eq!(CtaBranchCounter::COUNTERS[CtaBranchCounter::StallCycles as usize].name, "stall_cycles");
    }
}
