//! Simty's sorted context table (seed 003 §3.2), mechanism `simty`.
//!
//! The warp's paths are kept in `sorted:depth` order (maximum call depth, then minimum pc) by three
//! structures:
//! - two **hot context tables** (HCT): `x`, the executing path, and `y`, the next one;
//! - the **compact-sort unit** (CCS): after `x` issues, the branch unit gives up to two paths `a`
//!   (fall-through) and `b` (target); the CCS sorts them with `c = y`, merges paths at the same pc and
//!   call depth, and outputs one to three paths `x < y < z`;
//! - the **cold context table** (CCT), a stack sized for one thread per path: if `z` is valid it is
//!   inserted; if only `x` is valid, `y` is extracted from the CCT head.
//!
//! A **background sorter** keeps `y` ahead of every CCT path and the CCT head its best path: on every
//! step in which the CCT port is idle (no insertion or extraction) it compares and swaps one pair (`y`
//! with a better CCT path, otherwise one adjacent out-of-order CCT pair). A swap that falls on a step
//! with an insertion or extraction is cancelled and retried.
//!
//! Our model keeps the issued order *exactly* `sorted:depth`'s (a test checks the sequences are equal):
//! where the real unit would run ahead of its sorter, the warp waits instead — one step for a cancelled
//! swap of `y`, and one step per pair still to bubble when the CCT head is not its best path at an
//! extraction — and the wait is counted (`sort_stall_steps`) and charged in timed runs
//! (`sort_step_latency` cycles per step, `[mechanism]` in the GPU configuration). The seed does not say
//! what happens then.

use crate::adapters::path_list::Priority;
use crate::adapters::paths::{successors, Path};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, EntryView, Flow, MechError, WarpCtx, WarpTracker};
use smallvec::SmallVec;
use std::cmp::Ordering;

const ORDER: Priority = Priority::Depth;

/// The hot and cold context tables of a warp.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct SimtyState {
    /// HCT 0: the executing path (empty mask once every thread exited).
    pub x: Path,
    /// HCT 1: the next path.
    pub y: Option<Path>,
    /// The CCT, bottom first (the head, extracted next, is last), with the time each path entered.
    pub cct: Vec<(Path, u64, u64)>,
    /// Warp instructions issued so far (the step count).
    pub steps: u64,
    /// Sorter stall steps of the current update (charged to the timing model at its end).
    pub stalled: u32,
}

/// Simty's sorted context table.
#[derive(Clone, Copy, Debug, Default)]
pub struct Simty;

counters! {
    /// Counter indices.
    pub(crate) enum SimtyCounter {
        Insertions = sum("cct_insertions", "paths z the compact-sort unit pushed into the cold context table"),
        Extractions = sum("cct_extractions", "paths popped from the cold context table into the second hot table"),
        Swaps = sum("sorter_swaps", "swaps done by the background sorter (y with a CCT path, or two CCT paths)"),
        Cancelled = sum(
            "cancelled_swaps",
            "sorter swaps cancelled because an insertion or extraction used the CCT port",
        ),
        Stalls = sum("sort_stall_steps", "steps a warp waited for the sorter so that the sorted order holds"),
        MaxOcc = max("max_cct_occupancy", "the most paths in one warp's cold context table"),
        WaitSteps = sum(
            "cct_wait_instructions",
            "warp instructions issued while a path waited in the CCT, summed over paths",
        ),
        WaitCycles = cycles("cct_wait_cycles", "cycles paths waited in the cold context table, summed over paths"),
        Merges = sum("path_merges", "paths the compact-sort unit merged at an equal pc and depth"),
    }
}

fn better(a: &Path, b: &Path) -> bool {
    ORDER.cmp(a, b) == Ordering::Less
}

impl SimtyState {
    /// Every path in issue order: `x`, `y`, then the CCT by priority.
    fn ordered(&self) -> SmallVec<[Path; 8]> {
        let mut v: SmallVec<[Path; 8]> = SmallVec::new();
        if self.x.mask != 0 {
            v.push(self.x);
        }
        v.extend(self.y);
        let mut c: SmallVec<[Path; 8]> = self.cct.iter().map(|e| e.0).collect();
        c.sort_by(|a, b| ORDER.cmp(a, b));
        v.extend(c);
        v
    }

    fn insert(&mut self, p: Path, ctx: &mut WarpCtx<'_>) {
        self.cct.push((p, self.steps, ctx.cycle.unwrap_or(0)));
        ctx.count(SimtyCounter::Insertions, 1);
        ctx.max(SimtyCounter::MaxOcc, self.cct.len() as u64);
    }

    /// Extracts the best CCT path (bubbling it to the head first if the sorter has not).
    fn extract(&mut self, ctx: &mut WarpCtx<'_>) -> Option<Path> {
        let best = (0..self.cct.len()).min_by(|&i, &j| ORDER.cmp(&self.cct[i].0, &self.cct[j].0).then(j.cmp(&i)))?;
        let distance = (self.cct.len() - 1 - best) as u64;
        if distance > 0 {
            ctx.count(SimtyCounter::Swaps, distance);
            self.stall(distance, ctx);
        }
        let (p, step, cycle) = self.cct.remove(best);
        ctx.count(SimtyCounter::Extractions, 1);
        ctx.count(SimtyCounter::WaitSteps, self.steps - step);
        if let Some(c) = ctx.cycle {
            ctx.count(SimtyCounter::WaitCycles, c.saturating_sub(cycle));
        }
        Some(p)
    }

    /// Swaps `y` with the best CCT path if that one comes first (a cancelled and retried swap when the
    /// CCT port is `busy` this step). Returns whether it swapped.
    fn fix_y(&mut self, busy: bool, ctx: &mut WarpCtx<'_>) -> bool {
        let Some(y) = self.y else { return false };
        let best = (0..self.cct.len())
            .filter(|&k| better(&self.cct[k].0, &y))
            .min_by(|&i, &j| ORDER.cmp(&self.cct[i].0, &self.cct[j].0));
        let Some(k) = best else { return false };
        if busy {
            ctx.count(SimtyCounter::Cancelled, 1);
            self.stall(1, ctx);
        }
        let (p, step, cycle) = self.cct[k];
        self.cct[k] = (y, self.steps, ctx.cycle.unwrap_or(0));
        ctx.count(SimtyCounter::WaitSteps, self.steps - step);
        if let Some(c) = ctx.cycle {
            ctx.count(SimtyCounter::WaitCycles, c.saturating_sub(cycle));
        }
        self.y = Some(p);
        ctx.count(SimtyCounter::Swaps, 1);
        true
    }

    /// The warp waits `n` steps for the sorter.
    fn stall(&mut self, n: u64, ctx: &mut WarpCtx<'_>) {
        ctx.count(SimtyCounter::Stalls, n);
        self.stalled = self.stalled.saturating_add(n as u32);
    }

    /// Whether the sorter has nothing left to do: `y` is ahead of every CCT path and the CCT is in order
    /// (or, without `y`, the CCT is empty). Then a step that only moves `x` on changes nothing else.
    fn sorted(&self) -> bool {
        match self.y {
            None => self.cct.is_empty(),
            Some(y) => {
                !self.cct.iter().any(|e| better(&e.0, &y)) && !self.cct.windows(2).any(|p| better(&p[0].0, &p[1].0))
            }
        }
    }

    /// One idle step of the background sorter.
    fn sort_step(&mut self, ctx: &mut WarpCtx<'_>) {
        let n = self.cct.len();
        if let Some(k) = (1..n).rev().find(|&k| better(&self.cct[k - 1].0, &self.cct[k].0)) {
            self.cct.swap(k - 1, k);
            ctx.count(SimtyCounter::Swaps, 1);
        }
    }
}

/// The compact-sort unit: merges inputs at the same place and sorts them.
fn compact_sort(inputs: &[Path], ctx: &mut WarpCtx<'_>) -> SmallVec<[Path; 4]> {
    let mut out: SmallVec<[Path; 4]> = SmallVec::new();
    for p in inputs {
        match out.iter_mut().find(|q| q.same_place(p)) {
            Some(q) => {
                q.mask |= p.mask;
                ctx.count(SimtyCounter::Merges, 1);
            }
            None => out.push(*p),
        }
    }
    out.sort_by(|a, b| ORDER.cmp(a, b));
    out
}

impl WarpTracker for Simty {
    type State = SimtyState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = SimtyCounter::COUNTERS;

    fn name(&self) -> &'static str {
        INFO.name
    }

    fn init(&self, entry: Pc, live: LaneMask) -> SimtyState {
        SimtyState { x: Path { pc: entry, mask: live, depth: 0 }, y: None, cct: Vec::new(), steps: 0, stalled: 0 }
    }

    #[inline]
    fn select(&self, st: &SimtyState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        let m = st.x.mask & live & !blocked;
        if m != 0 {
            return Some((st.x.pc, m));
        }
        // The executing path waits at a barrier: the next path that can issue, in order.
        st.ordered().iter().map(|p| (p.pc, p.mask & live & !blocked)).find(|(_, m)| *m != 0)
    }

    #[inline]
    fn straight_run(&self, st: &SimtyState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // All of `x` moves on, no CCT port use, no sorter work, while `x` stays ahead of `y` (it may merge
        // with it on the run's last instruction).
        if st.x.pc != pc || st.x.mask != mask || !st.sorted() {
            return 1;
        }
        match st.y {
            Some(y) if y.depth == st.x.depth && y.pc > pc => max.min(y.pc - pc),
            Some(y) if y.depth >= st.x.depth => 1,
            _ => max,
        }
    }

    fn advance(&self, st: &mut SimtyState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        // The middle updates each move `x` one pc on and count one step.
        advance_ends(self, st, (pc, mask, n), ctx, |st, _| {
            st.x.pc = pc + n - 1;
            st.steps += u64::from(n - 2);
            Ok(())
        })
    }

    fn update(&self, st: &mut SimtyState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        st.steps += 1;
        let live = ctx.live;
        let mut busy = false;
        if !(st.x.pc == pc && st.x.mask & mask == mask) {
            // The executing path waits at a barrier and another one issued: swap them through the CCT.
            let old = st.x;
            let found = if st.y.is_some_and(|y| y.pc == pc && y.mask & mask == mask) {
                st.y.take()
            } else {
                let k = st.cct.iter().rposition(|e| e.0.pc == pc && e.0.mask & mask == mask);
                k.map(|k| st.cct.remove(k).0)
            };
            st.x = found.ok_or(MechError::NotHeld("the context tables"))?;
            if old.mask & live != 0 {
                st.insert(old, ctx);
            }
            busy = true;
        }
        let x = st.x;
        let mut inputs: SmallVec<[Path; 4]> = successors(&x, mask, flow, live)?;
        let rest = x.mask & !mask & live;
        if rest != 0 {
            inputs.push(Path { mask: rest, ..x });
        }
        inputs.extend(st.y.take().map(|y| Path { mask: y.mask & live, ..y }).filter(|y| y.mask != 0));
        for e in st.cct.iter_mut() {
            e.0.mask &= live;
        }
        st.cct.retain(|e| e.0.mask != 0);
        let out = compact_sort(&inputs, ctx);
        let mut it = out.into_iter();
        st.x = it.next().unwrap_or(Path { pc, mask: 0, depth: x.depth });
        st.y = it.next();
        for z in it {
            st.insert(z, ctx);
            busy = true;
        }
        // Refill and order: while only x is valid, extract y; y must stay ahead of every CCT path (the
        // sorter's job); the compact-sort unit merges y into x when they meet.
        let mut sorted = false;
        loop {
            if st.x.mask == 0 {
                match st.extract(ctx) {
                    Some(p) => st.x = p,
                    None => break,
                }
                busy = true;
            }
            if st.y.is_none() {
                st.y = st.extract(ctx);
                busy |= st.y.is_some();
            }
            sorted |= st.fix_y(busy, ctx);
            match st.y {
                Some(y) if y.same_place(&st.x) => {
                    st.x.mask |= y.mask;
                    st.y = None;
                    ctx.count(SimtyCounter::Merges, 1);
                    st.stall(1, ctx);
                }
                _ => break,
            }
        }
        if !busy && !sorted {
            st.sort_step(ctx);
        }
        if st.stalled > 0 {
            ctx.delay = Some(crate::Delay::SortStall { steps: std::mem::take(&mut st.stalled) });
        }
        Ok(())
    }

    fn depth(&self, st: &SimtyState) -> usize {
        usize::from(st.x.mask != 0) + usize::from(st.y.is_some()) + st.cct.len()
    }

    fn entries(&self, st: &SimtyState) -> Vec<EntryView> {
        let mut v: Vec<EntryView> = st.cct.iter().map(|e| e.0.view(EntryKind::Cct)).collect();
        v.extend(st.y.map(|y| y.view(EntryKind::HctY)));
        if st.x.mask != 0 {
            v.push(st.x.view(EntryKind::HctX));
        }
        v
    }
}

/// The registry's facts of `simty`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "simty",
    crate::Scope::Warp,
    "Simty's hot and cold context tables with the compact-sort unit (seed 003, section 3.2)",
)
.exports_paths()
.storage(STORAGE);

/// What `simty` stores (seed 003 §3.2; `reconverge cost`'s sorted-list unit counts these bits): two hot
/// contexts per warp, read every cycle; the cold context table, a stack of W paths per warp read one
/// entry at a time, and its pointer; the background sorter shared by the warps (a cursor into the CCT, a
/// warp counter and a 2-bit state).
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per, Reach, Size};
    &[
        Part::new(
            "hot contexts x, y",
            Per::Warp,
            Cells::FlipFlops,
            Size::Const(2),
            Size::Sum(&[Size::Const(1), Size::Pc, Size::Depth, Size::W]),
            "{valid, pc, depth, mask}",
        ),
        Part::new(
            "cold context table",
            Per::Warp,
            Cells::Sram,
            Size::Reached(Reach::Counter(SimtyCounter::MaxOcc.counter()), &Size::W),
            common::PATH_BITS,
            "{pc, depth, mask}",
        ),
        Part::new("CCT pointer", Per::Warp, Cells::FlipFlops, common::ONE, Size::CountBits(&Size::W), "{top}"),
        Part::new(
            "background sorter",
            Per::Sm,
            Cells::FlipFlops,
            common::ONE,
            Size::Sum(&[Size::CountBits(&Size::W), Size::CountBits(&Size::Warps), Size::Const(2)]),
            "{cursor, warp, state}",
        ),
    ]
};

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{assert_lower_pc_first_then_meet, issues, program, DIAMOND};

    #[test]
    fn the_diamond_example() {
        let t = issues(&Simty, &program(DIAMOND), 0b1111, 0b0001, 64);
        // The context table sorted by pc: the lower-pc path runs until it reaches the other's pc range,
        // and the two merge at the join (equal pc and depth at the head).
        assert_lower_pc_first_then_meet(&t);
    }
}
