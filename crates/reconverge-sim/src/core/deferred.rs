//! Pure lane instructions deferred until their registers are next touched (timed mode with compiled
//! segments).
//!
//! The timing model issues one instruction at a time, so the functional mode's straight-line runs never
//! form there. A *pure lane instruction* (see [`Jit::is_pure`]) reads and writes only its own threads'
//! registers and predicates, so executing it later changes nothing as long as it executes before anything
//! else reads or writes those threads' registers. With deferral on ([`SmCore::defer_pure_instructions`]),
//! an issued pure instruction of a group whose threads are one static warp's is counted, and the mechanism
//! updated, as always, but its execution is only recorded: per static warp, one *pending run* of
//! consecutive pcs issued with the same lanes. The run executes, compiled when its segment is (the
//! functional mode's [`Jit`]), when anything else is about to touch the warp's registers:
//!
//! - any issue to the warp that does not extend its pending run (another pc, other lanes, an instruction
//!   that is not pure, or any instruction of a group drawing threads from several warps: shuffles and votes
//!   read other lanes of the warp, so the whole warp's run executes, not only the issued lanes');
//! - an atomic's old value written into one of its threads' registers ([`SmCore::write_register`]);
//! - an issue that an observer follows, or while the livelock watchdog tracks register values, or while
//!   the scalarization counter follows every instruction (nothing is deferred then).
//!
//! A barrier's release writes only the registers of threads waiting at it, which issued the barrier after
//! their last pure instruction and so have nothing pending. Pure instructions never fault, touch memory,
//! read `%clock` or change what the mechanism sees, so every result, statistic and cycle is the same with
//! and without deferral; the timed = functional and differential tests compare both (`--no-jit` turns it
//! off).

use super::cta::Cta;
use super::exec::{Env, Fixed, Scratch};
use super::{execute_lanes, Jit, SmCore};
use crate::access::{AccessLog, GlobalMemory};
use crate::error::SimError;
use crate::mechanism::{LaneMap, Tracker};
use crate::memory::{Allocation, FaultKind, MemFault};
use crate::printf::PrintfLog;
use crate::program::{Program, Space};
use crate::types::{LaneMask, Pc};

/// The pending runs of one SM core and the compiled segments that execute them.
pub(super) struct Deferral<'a> {
    jit: Jit<'a>,
    runs: PendingRuns,
}

impl<'a> Deferral<'a> {
    /// Deferral for CTAs of `wpc` static warps, executing through `jit`.
    pub(super) fn new(jit: Jit<'a>, wpc: u32) -> Deferral<'a> {
        Deferral { jit, runs: PendingRuns::new(wpc) }
    }

    /// Forgets every pending run of CTA slot `slot` (a CTA is launched into it).
    pub(super) fn clear_slot(&mut self, slot: usize) {
        self.runs.clear_slot(slot);
    }
}

/// Consecutive pure instructions `start..end` issued to the lanes `mask` of one static warp, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingRun {
    start: Pc,
    end: Pc,
    mask: LaneMask,
}

/// Per CTA slot × static warp of the CTA: the pure instructions issued to it and not executed yet.
#[derive(Debug)]
struct PendingRuns {
    runs: Vec<Option<PendingRun>>,
    /// Static warps per CTA.
    wpc: usize,
}

impl PendingRuns {
    fn new(wpc: u32) -> PendingRuns {
        PendingRuns { runs: Vec::new(), wpc: wpc.max(1) as usize }
    }

    fn index(&self, slot: usize, warp: u32) -> usize {
        slot * self.wpc + warp as usize
    }

    /// Whether issuing `pc` to the lanes `mask` of static warp `warp` of CTA slot `slot` extends its
    /// pending run.
    fn extends(&self, slot: usize, warp: u32, pc: Pc, mask: LaneMask) -> bool {
        matches!(self.runs.get(self.index(slot, warp)), Some(Some(run)) if run.end == pc && run.mask == mask)
    }

    /// Records the issue of the pure instruction `pc` to the lanes `mask` of static warp `warp` of CTA slot
    /// `slot` when it extends the warp's pending run or the warp has none; otherwise returns the pending
    /// run, which the caller executes, and starts a new one.
    fn record(&mut self, slot: usize, warp: u32, pc: Pc, mask: LaneMask) -> Option<PendingRun> {
        let i = self.index(slot, warp);
        if self.runs.len() <= i {
            self.runs.resize(i + 1, None);
        }
        match &mut self.runs[i] {
            Some(run) if run.end == pc && run.mask == mask => {
                run.end += 1;
                None
            }
            Some(run) => Some(std::mem::replace(run, PendingRun { start: pc, end: pc + 1, mask })),
            none => {
                *none = Some(PendingRun { start: pc, end: pc + 1, mask });
                None
            }
        }
    }

    /// Takes the pending run of static warp `warp` of CTA slot `slot`, if any.
    fn take(&mut self, slot: usize, warp: u32) -> Option<PendingRun> {
        let i = self.index(slot, warp);
        self.runs.get_mut(i).and_then(Option::take)
    }

    /// Forgets every pending run of CTA slot `slot`.
    fn clear_slot(&mut self, slot: usize) {
        let (first, end) = (self.index(slot, 0), self.index(slot + 1, 0).min(self.runs.len()));
        if let Some(runs) = self.runs.get_mut(first..end) {
            runs.fill(None);
        }
    }
}

impl<'a, T: Tracker> SmCore<'a, T> {
    /// Defers pure lane instructions in [`SmCore::issue`] and executes them through `jit`'s compiled
    /// segments (the module documentation above says when and why the results are the same). For the
    /// timing model: the functional machine's runs reach the segments directly ([`SmCore::issue_run`]).
    /// Nothing is deferred when the compiler refuses this launch's warp size.
    pub fn defer_pure_instructions(&mut self, jit: Jit<'a>) {
        if jit.compiles() {
            self.deferral = Some(Deferral::new(jit, self.wpc));
        }
    }

    /// Defers the issue of `pc` to the lanes `mask` of `threads` in CTA slot `slot` when it can be; the
    /// caller then skips executing it. Otherwise executes the pending runs of every static warp the issue
    /// touches, so that its execution sees their registers as they would be without deferral. `defer` is
    /// whether nothing else (an observer, the watchdog, the scalarization counter) needs it executed now.
    pub(super) fn defer_or_settle(
        &mut self,
        slot: usize,
        threads: &LaneMap,
        mask: LaneMask,
        pc: Pc,
        defer: bool,
    ) -> Result<bool, SimError> {
        let Some(d) = self.deferral.as_mut() else { return Ok(false) };
        // A run starts only where a compiled segment may (one that could not would only be interpreted
        // later instead of now).
        if defer && d.jit.is_pure(pc) {
            if let Some(warp) = threads.single_warp(mask) {
                if d.runs.extends(slot, warp, pc, mask) || d.jit.starts_segment(pc) {
                    if let Some(run) = d.runs.record(slot, warp, pc, mask) {
                        self.execute_pending(slot, warp, run)?;
                    }
                    return Ok(true);
                }
            }
        }
        for &(warp, _) in threads.parts() {
            self.settle(slot, warp)?;
        }
        Ok(false)
    }

    /// Executes the pending run of static warp `warp` of CTA slot `slot`, if it has one.
    pub(super) fn settle(&mut self, slot: usize, warp: u32) -> Result<(), SimError> {
        match self.deferral.as_mut().and_then(|d| d.runs.take(slot, warp)) {
            Some(run) => self.execute_pending(slot, warp, run),
            None => Ok(()),
        }
    }

    /// Executes `run` for static warp `warp` of CTA slot `slot`: compiled segments where they are (or have
    /// become hot enough to compile), the interpreter for the rest.
    fn execute_pending(&mut self, slot: usize, warp: u32, run: PendingRun) -> Result<(), SimError> {
        let (Some(d), Some(Some(r))) = (self.deferral.as_mut(), self.ctas.get_mut(slot)) else {
            return Err(SimError::Internal("a deferred run of an empty CTA slot"));
        };
        let threads = LaneMap::from_parts([(warp, run.mask)]);
        let mut pc = run.start;
        while pc < run.end {
            let done = d.jit.run(pc, run.end - pc, &mut r.cta, &threads, run.mask)?;
            if done > 0 {
                pc += done;
                continue;
            }
            let logs = (&mut self.access, &mut self.printf);
            interpret(self.prog, &self.fixed, (&mut self.scratch, logs), &mut r.cta, (&threads, run.mask), pc)?;
            pc += 1;
        }
        Ok(())
    }

    /// What compiling the deferred instructions' segments did so far (nothing without deferral).
    pub fn jit_report(&self) -> super::JitReport {
        self.deferral.as_ref().map(|d| d.jit.report()).unwrap_or_default()
    }
}

/// Executes the pure instruction `pc` for `mask` of `threads` in the interpreter, outside any issue: it
/// touches no memory (a stand-in without any), records no access (the log's lanes are cleared, as before
/// every instruction) and prints nothing.
fn interpret(
    prog: &Program,
    fixed: &Fixed,
    (scratch, (access, printf)): (&mut Scratch, (&mut AccessLog, &mut PrintfLog)),
    cta: &mut Cta,
    (threads, mask): (&LaneMap, LaneMask),
    pc: Pc,
) -> Result<(), SimError> {
    let mut e = Env {
        prog,
        mem: &mut NoMemory,
        consts: &[],
        params: &[],
        fixed,
        clock: 0,
        track: false,
        changed: false,
        access,
        cta_slot: 0,
        await_members: false,
        printf,
    };
    execute_lanes(&mut e, scratch, cta, threads, mask, pc).map(|_| ())
}

/// The memory of a deferred pure instruction: it has none (every access would be a fault).
struct NoMemory;

fn no_memory(addr: u64, size: u32) -> MemFault {
    MemFault { kind: FaultKind::OutOfBounds, addr, size, space: Space::Global }
}

impl GlobalMemory for NoMemory {
    fn read(&self, addr: u64, size: u32) -> Result<u64, MemFault> {
        Err(no_memory(addr, size))
    }
    fn write(&mut self, addr: u64, size: u32, _: u64) -> Result<bool, MemFault> {
        Err(no_memory(addr, size))
    }
    fn atomic(&mut self, a: crate::access::AtomicRequest) -> Result<(Option<u64>, bool), MemFault> {
        Err(no_memory(a.addr, 0))
    }
    fn allocations(&self) -> &[Allocation] {
        &[]
    }
}

#[cfg(test)]
mod tests {
    use super::{PendingRun, PendingRuns};

    #[test]
    fn consecutive_pcs_with_the_same_lanes_extend_the_run() {
        let mut p = PendingRuns::new(4);
        assert_eq!(p.record(1, 2, 10, 0b1111), None);
        assert_eq!(p.record(1, 2, 11, 0b1111), None);
        assert_eq!(p.record(1, 2, 12, 0b1111), None);
        // Another warp's run is its own.
        assert_eq!(p.record(1, 3, 12, 0b1), None);
        assert_eq!(p.take(1, 2), Some(PendingRun { start: 10, end: 13, mask: 0b1111 }));
        assert_eq!(p.take(1, 2), None);
        assert_eq!(p.take(1, 3), Some(PendingRun { start: 12, end: 13, mask: 0b1 }));
    }

    #[test]
    fn another_pc_or_other_lanes_hand_back_the_run_and_start_anew() {
        let mut p = PendingRuns::new(2);
        assert_eq!(p.record(0, 1, 5, 0b11), None);
        assert_eq!(p.record(0, 1, 6, 0b01), Some(PendingRun { start: 5, end: 6, mask: 0b11 }));
        assert_eq!(p.record(0, 1, 9, 0b01), Some(PendingRun { start: 6, end: 7, mask: 0b01 }));
        // The same pc again (a loop of one instruction is not straight-line): a new run.
        assert_eq!(p.record(0, 1, 9, 0b01), Some(PendingRun { start: 9, end: 10, mask: 0b01 }));
        assert_eq!(p.take(0, 1), Some(PendingRun { start: 9, end: 10, mask: 0b01 }));
    }

    #[test]
    fn only_the_next_pc_with_the_same_lanes_extends() {
        let mut p = PendingRuns::new(2);
        assert!(!p.extends(0, 0, 3, 1), "no run yet");
        assert_eq!(p.record(0, 0, 3, 1), None);
        assert!(p.extends(0, 0, 4, 1));
        assert!(!p.extends(0, 0, 5, 1) && !p.extends(0, 0, 4, 3) && !p.extends(0, 1, 4, 1));
    }

    #[test]
    fn a_launch_clears_only_its_slot() {
        let mut p = PendingRuns::new(2);
        for slot in 0..3 {
            for warp in 0..2 {
                assert_eq!(p.record(slot, warp, 7, 1), None);
            }
        }
        p.clear_slot(1);
        p.clear_slot(9);
        assert_eq!((p.take(1, 0), p.take(1, 1)), (None, None));
        assert!(p.take(0, 1).is_some() && p.take(2, 0).is_some());
    }
}
