//! Path traces for the hardware test benches (`trace --export-paths`, `hw/`): the inputs of seed 003's
//! path-tracking unit and the path it chose at every issue of one CTA's warps.
//!
//! The recorder is an [`Observer`]: it sees each issued group after the mechanism updated, tracks every
//! thread's call depth itself (calls deepen it, returns lessen it, as the mechanisms do) and writes, per
//! issue, the issued path, the successor paths the branch unit hands to the unit (what
//! [`successors`] computes for every path-list mechanism), and the path the mechanism runs next (the top
//! of its structure: HCT x for `simty`, the arbitration winner for `arbiter`). Nothing is recorded
//! unless this observer is used, so normal runs pay nothing.
//!
//! The format (`docs/hardware.md`), one record per line, numbers in decimal and masks in hexadecimal:
//!
//! ```text
//! # comment lines
//! h W WARPS               threads per warp, warps of the CTA
//! i WARP PC MASK          a warp starts: its threads MASK at PC, call depth 0
//! s WARP PC DEPTH MASK    a step: the issued path of WARP
//! p PC DEPTH MASK         one successor path of the step (zero or more lines)
//! n PC DEPTH MASK         the path the mechanism runs next in WARP (MASK 0: every thread exited)
//! ```

use reconverge_mechanism::Flow;
use reconverge_mechanism::{successors, Path};
use reconverge_program::{lanes, LaneMask, Pc};
use reconverge_sim::{IssueEvent, Observer};
use std::fmt::Write;

/// Records the path trace of every warp of one CTA.
pub struct PathRecorder {
    cta: u64,
    limit: usize,
    depth: Vec<[u32; 64]>,
    live: Vec<LaneMask>,
    next: Vec<Option<(Pc, LaneMask)>>,
    /// The records so far (after [`PathRecorder::header`]'s two lines).
    pub body: String,
    /// Steps recorded.
    pub steps: usize,
    /// Warps that started.
    pub warps_seen: usize,
    /// The most successor paths one step produced (the unit takes two per cycle).
    pub max_successors: usize,
    /// Steps whose issued group was not the path the mechanism had chosen (its path waited at a
    /// barrier, so another one issued): the hardware units do not model that.
    pub reorders: usize,
    /// Whether `limit` cut the trace.
    pub truncated: bool,
    /// Why recording stopped early, if it did (an outcome the path-list units cannot represent).
    pub error: Option<PathExportError>,
}

/// An outcome the path-list units of `hw/` cannot represent, which stops the recording.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum PathExportError {
    /// A group with no lanes issued.
    #[error("an empty group issued")]
    EmptyGroup,
    /// The issued threads of a warp are at different call depths.
    #[error("warp {0}: the issued threads are at different call depths")]
    MixedDepths(usize),
    /// The successor paths cannot be formed.
    #[error(transparent)]
    Successors(#[from] reconverge_mechanism::MechError),
}

impl PathRecorder {
    /// Records the warps of CTA `cta` (linear index), at most `limit` steps.
    pub fn new(cta: u64, limit: usize) -> PathRecorder {
        PathRecorder {
            cta,
            limit,
            depth: Vec::new(),
            live: Vec::new(),
            next: Vec::new(),
            body: String::new(),
            steps: 0,
            warps_seen: 0,
            max_successors: 0,
            reorders: 0,
            truncated: false,
            error: None,
        }
    }

    /// The file's first lines: a comment naming the run and the `h` record.
    pub fn header(kernel: &str, mechanism: &str, cta: u64, warp_size: u32, warps: u32) -> String {
        format!(
            "# reconverge path trace v1: kernel {kernel}, mechanism {mechanism}, CTA {cta}\nh {warp_size} {warps}\n"
        )
    }

    fn path_line(&mut self, tag: char, p: &Path) {
        let _ = writeln!(self.body, "{tag} {} {} {:x}", p.pc, p.depth, p.mask);
    }

    fn record(&mut self, ev: &IssueEvent<'_>) -> Result<(), PathExportError> {
        let w = ev.ctx as usize;
        if w >= self.depth.len() {
            self.depth.resize(w + 1, [0; 64]);
            self.live.resize(w + 1, 0);
            self.next.resize(w + 1, None);
        }
        if self.next[w].is_none() && self.live[w] == 0 {
            // The first issue of a warp holds all of its threads at the entry.
            let _ = writeln!(self.body, "i {w} {} {:x}", ev.pc, ev.mask);
            self.live[w] = ev.mask;
            self.warps_seen += 1;
        }
        if let Some((pc, mask)) = self.next[w] {
            if (pc, mask) != (ev.pc, ev.mask) {
                self.reorders += 1;
                let _ = writeln!(self.body, "# the path chosen was held at a barrier; another issued");
            }
        }
        let first = lanes(ev.mask).next().ok_or(PathExportError::EmptyGroup)?;
        let depth = self.depth[w][first];
        if lanes(ev.mask).any(|l| self.depth[w][l] != depth) {
            return Err(PathExportError::MixedDepths(w));
        }
        let issued = Path { pc: ev.pc, mask: ev.mask, depth };
        if let Flow::Exit { lanes } = ev.flow {
            self.live[w] &= !lanes;
        }
        let next = successors(&issued, ev.mask, ev.flow, self.live[w])?;
        let _ = writeln!(self.body, "s {w} {} {depth} {:x}", ev.pc, ev.mask);
        for p in &next {
            for l in lanes(p.mask) {
                self.depth[w][l] = p.depth;
            }
            self.path_line('p', p);
        }
        self.max_successors = self.max_successors.max(next.len());
        let chosen = match ev.entries.last() {
            Some(e) => {
                let mask = e.lanes.first().copied().unwrap_or(0);
                let depth = lanes(mask).next().map_or(0, |l| self.depth[w][l]);
                Path { pc: e.pc, mask, depth }
            }
            None => Path { pc: 0, mask: 0, depth: 0 },
        };
        self.path_line('n', &chosen);
        self.next[w] = Some((chosen.pc, chosen.mask));
        self.steps += 1;
        Ok(())
    }
}

impl Observer for PathRecorder {
    fn wants(&self, cta: u64, _ctx: u32) -> bool {
        cta == self.cta && self.error.is_none() && !self.truncated
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        if ev.cta != self.cta || self.error.is_some() || self.truncated {
            return;
        }
        if self.steps >= self.limit {
            self.truncated = true;
            return;
        }
        if let Err(e) = self.record(ev) {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_mechanism::LaneMap;

    fn ev<'a>(pc: Pc, mask: LaneMask, flow: &'a Flow, map: &'a LaneMap, next: (Pc, LaneMask)) -> IssueEvent<'a> {
        IssueEvent {
            cta: 0,
            ctx: 0,
            pc,
            mask,
            lanes: map,
            flow,
            entries: vec![reconverge_mechanism::EntryView::warp(
                reconverge_mechanism::EntryKind::HctX,
                next.1,
                next.0,
                reconverge_program::PC_NONE,
            )],
            structure: 1,
            seq: 0,
            whole_warp: true,
            written: Vec::new(),
        }
    }

    #[test]
    fn records_a_divergent_branch_and_a_call() {
        let map = LaneMap::warp(0, 4);
        let mut r = PathRecorder::new(0, 100);
        let br = Flow::Branch { target: 7, taken: 0b0011 };
        r.on_issue(&ev(2, 0b1111, &br, &map, (3, 0b1100)));
        let call = Flow::Call { target: 20, callers: 0b1100 };
        r.on_issue(&ev(3, 0b1100, &call, &map, (20, 0b1100)));
        assert_eq!(r.body, "i 0 2 f\ns 0 2 0 f\np 3 0 c\np 7 0 3\nn 3 0 c\ns 0 3 0 c\np 20 1 c\nn 20 1 c\n");
        assert_eq!((r.steps, r.max_successors, r.reorders), (2, 2, 0));
    }
}
