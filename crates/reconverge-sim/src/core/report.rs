//! Deadlock detection and reports: the livelock watchdog both drivers use, and the description of where
//! every live thread is.

use super::SmCore;
use crate::mechanism::Tracker;
use crate::types::{lanes, LaneMask};

/// Counts warp instructions without progress and declares a livelock after two windows: after the first,
/// the executor also watches register and predicate values (`track`); if a second window passes with no
/// change of any register, predicate, memory location, barrier or thread, the state repeats forever.
#[derive(Clone, Debug, Default)]
pub struct Watchdog {
    since_progress: u64,
    /// Whether the executor should watch register values.
    pub track: bool,
}

impl Watchdog {
    /// Records `issued` warp instructions, during which something changed or not; `true` when the
    /// machine made no progress for two windows.
    #[inline]
    pub fn observe(&mut self, issued: u64, changed: bool, window: u64) -> bool {
        if changed {
            self.since_progress = 0;
            self.track = false;
            return false;
        }
        self.since_progress += issued;
        if self.since_progress >= 2 * window && self.track {
            return true;
        }
        if self.since_progress >= window {
            self.track = true;
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

impl<T: Tracker> SmCore<'_, T> {
    /// One line per group of live threads of this SM: CTA, warp, lanes, first thread, what they do, pc.
    pub fn where_threads(&self, limit: usize, lines: &mut Vec<String>) {
        for r in self.ctas.iter().flatten() {
            let view = r.cta.view();
            let id = r.cta.id;
            for p in self.tracker.positions(&self.mech, &r.st, &view) {
                if lines.len() >= limit {
                    lines.push("  ...".into());
                    return;
                }
                let t0 = r.cta.thread_index(p.warp, p.lanes.trailing_zeros() as usize);
                lines.push(format!(
                    "  block ({},{},{}) warp {} lanes {} (first thread ({},{},{})) {} at {}",
                    id[0],
                    id[1],
                    id[2],
                    p.warp,
                    lane_ranges(p.lanes),
                    t0[0],
                    t0[1],
                    t0[2],
                    p.state,
                    self.prog.describe_pc(p.pc)
                ));
            }
        }
    }
}

/// The report of a livelock (no change of any register or memory for two windows).
pub fn livelock_report(mechanism: &str, window: u64, threads: &[String]) -> String {
    format!(
        "no thread changed any register, predicate or memory location in the last {window} warp instructions \
         under `{mechanism}`; the threads spin forever. Live threads:\n{}",
        threads.join("\n")
    )
}

/// The report of a stall deadlock (no group can issue).
pub fn stall_report(mechanism: &str, threads: &[String]) -> String {
    format!(
        "no warp can issue under `{mechanism}` (every live thread waits at a barrier or for threads that cannot \
         arrive). Live threads:\n{}",
        threads.join("\n")
    )
}
