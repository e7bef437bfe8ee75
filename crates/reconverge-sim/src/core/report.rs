//! Deadlock detection and reports: the livelock watchdog both drivers use, and the description of where
//! every live thread is.

use super::SmCore;
use crate::error::{DeadlockReport, LiveThreads, WaitingGroup};
use crate::mechanism::Tracker;

/// The livelock watchdog both drivers use. Its rule, in two phases:
/// 1. It counts warp instructions without *progress* (a memory change, an exit, a call or a barrier
///    release). After `window` of them it starts *watching*: the executor then also reports every
///    register and predicate whose value changes (`track`), and the SM cores count per thread the
///    instructions it issued ([`QuietThreads`](super::QuietThreads)); any change ends the watch and the count starts again.
/// 2. A livelock is declared when at least another `window` warp instructions issued while watching
///    with no change of any register, predicate, memory location, barrier or thread, and either every
///    thread that issued meanwhile issued more instructions than the program holds — each then executed
///    some instruction twice in the same state, and since nothing changes, it repeats that cycle forever —
///    or the watch has lasted (program length + 1) × (threads that issued) warp instructions, which is
///    the same bound for a scheduler that shares issue among its runnable threads (threads that issued
///    once and then waited at a barrier do not hold the verdict back for ever).
///
/// So a kernel whose threads all advance, however slowly (one thread of 16k per turn under the stackless
/// mechanisms), is never declared livelocked; and a real livelock (a spin loop no thread can leave) is
/// reported after at most 2 × window + (program length + 1) × threads warp instructions.
#[derive(Clone, Debug, Default)]
pub struct Watchdog {
    since_progress: u64,
    /// Warp instructions since watching began (0 when not watching).
    watched: u64,
    started: bool,
    /// Whether the executor should watch register values.
    pub track: bool,
}

impl Watchdog {
    /// Records `issued` warp instructions, during which something changed or not; `true` when the
    /// machine made no progress for two windows (a livelock is then suspected: confirm it with
    /// [`Watchdog::livelocked`]).
    #[inline]
    pub fn observe(&mut self, issued: u64, changed: bool, window: u64) -> bool {
        if changed {
            self.since_progress = 0;
            self.watched = 0;
            self.track = false;
            return false;
        }
        self.since_progress += issued;
        if self.track {
            self.watched += issued;
            return self.watched >= window;
        }
        if self.since_progress >= window {
            self.track = true;
            self.started = true;
        }
        false
    }

    /// Records a run of `issued` warp instructions whose last `quiet` changed nothing (`quiet ==
    /// issued`: none did), exactly as recording them one at a time would; [`Watchdog::room`] bounds runs
    /// so that tracking never starts inside one.
    #[inline]
    pub fn observe_run(&mut self, issued: u64, quiet: u64, window: u64) -> bool {
        if quiet < issued {
            self.observe(1, true, window);
        }
        self.observe(quiet, false, window)
    }

    /// Whether watching began since the last call (the drivers then reset the cores' per-thread counts,
    /// [`super::SmCore::reset_quiet`]).
    pub fn take_started(&mut self) -> bool {
        std::mem::take(&mut self.started)
    }

    /// Confirms a suspected livelock (phase 2 of the rule above) from what the threads of every SM did
    /// while watching.
    pub fn livelocked(&self, quiet: super::QuietThreads, program_len: usize) -> bool {
        let bound = (program_len as u64 + 1).saturating_mul(quiet.issued);
        quiet.all_cycling() || (quiet.issued > 0 && self.watched >= bound)
    }

    /// How many warp instructions may issue as one run before the watchdog's state would change (it
    /// starts watching register values): runs are issued one at a time while it watches.
    #[inline]
    pub fn room(&self, window: u64) -> u64 {
        if self.track {
            1
        } else {
            window.saturating_sub(self.since_progress).max(1)
        }
    }

    /// Warp instructions since the last change.
    pub fn since_progress(&self) -> u64 {
        self.since_progress
    }

    /// The report of the livelock this watchdog declared under `mechanism`, with `live` the threads: no
    /// memory change, exit, call or barrier release in the last `quiet` warp instructions, and no register
    /// or predicate change either in the last `watched` of them.
    pub fn report(&self, mechanism: &'static str, live: LiveThreads) -> DeadlockReport {
        DeadlockReport::Livelock { mechanism, quiet: self.since_progress, watched: self.watched, live }
    }
}

impl<T: Tracker> SmCore<'_, T> {
    /// The groups of live threads of this SM (CTA, warp, lanes, first thread, what they do, pc), added to
    /// `live` while it lists fewer than `limit` lines; past it, one `  ...` line is added.
    pub fn where_threads(&self, limit: usize, live: &mut LiveThreads) {
        for r in self.ctas.iter().flatten() {
            let view = self.view_of(&r.cta);
            for p in self.tracker.positions(&self.mech, &r.st, &view) {
                if live.lines() >= limit {
                    live.elided += 1;
                    return;
                }
                // Under an SM-wide pool a position names an SM warp, whose threads may be another CTA's.
                let (cta, warp) = if T::SM_POOL {
                    let wpc = self.wpc.max(1);
                    match self.ctas.get((p.warp / wpc) as usize).and_then(Option::as_ref) {
                        Some(home) => (&home.cta, p.warp % wpc),
                        None => continue,
                    }
                } else {
                    (&r.cta, p.warp)
                };
                live.groups.push(WaitingGroup {
                    block: cta.id,
                    warp,
                    lanes: p.lanes,
                    first_thread: cta.thread_index(warp, p.lanes.trailing_zeros() as usize),
                    state: p.state,
                    pc: p.pc,
                    at: self.prog.describe_pc(p.pc),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::QuietThreads;
    use super::Watchdog;

    #[test]
    fn a_change_resets_and_watching_starts_after_one_window() {
        let mut w = Watchdog::default();
        assert!(!w.observe(999, false, 1000));
        assert!(!w.track);
        assert!(!w.observe(1, false, 1000));
        assert!(w.track && w.take_started() && !w.take_started());
        assert!(!w.observe(999, false, 1000), "a second window is needed");
        assert!(w.observe(1, false, 1000), "suspected after two windows");
        assert!(!w.observe(1, true, 1000));
        assert!(!w.track && w.since_progress() == 0);
    }

    #[test]
    fn a_suspect_is_confirmed_only_when_every_issuing_thread_repeats_a_state() {
        let mut w = Watchdog::default();
        w.observe(1000, false, 1000);
        assert!(w.observe(1000, false, 1000));
        let program_len = 40;
        // Threads that issued at most the program's length may still be advancing.
        assert!(!w.livelocked(QuietThreads { issued: 100, short: 3 }, program_len));
        assert!(w.livelocked(QuietThreads { issued: 100, short: 0 }, program_len));
        assert!(!w.livelocked(QuietThreads { issued: 0, short: 0 }, program_len), "nothing issued");
        // The fair-share bound: (program length + 1) x issuing threads warp instructions of watching.
        w.observe(41 * 100 - 1000, false, 1000);
        assert!(w.livelocked(QuietThreads { issued: 100, short: 3 }, program_len));
    }
}
