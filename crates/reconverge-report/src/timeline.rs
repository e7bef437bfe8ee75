//! What a run did over time and where: an [`Observer`] that keeps, for the report, the SIMD efficiency,
//! the issues by active-lane class and the structure size over issued instructions (in buckets that
//! coarsen as the run grows, so memory stays bounded) and per-pc execution counts; and [`CycleBuckets`],
//! the same over the cycles of a timed run, from its timeline.

use reconverge_program::program::InstClass;
use reconverge_program::Program;
use reconverge_sim::{IssueEvent, Observer};
pub use reconverge_timing::per_pc::PcCount;
use reconverge_timing::per_pc::PcCounter;
use reconverge_timing::{Timeline, TraceEvent};

/// The most buckets kept; past it adjacent buckets merge and the bucket width doubles.
const MAX_BUCKETS: usize = 4096;

/// The most active-lane classes of [`Bucket::by_lanes`] (AerialVision's warp-divergence breakdown: W1–4,
/// W5–8, ..., W29–32 at warp size 32).
pub const LANE_CLASSES: usize = 8;

/// The active-lane classes at warp size `w`: `min(8, w)` classes of `w / classes` lanes each, as the
/// `(first, last)` active-lane counts each holds.
pub fn lane_classes(w: u32) -> Vec<(u32, u32)> {
    let n = (LANE_CLASSES as u32).min(w.max(1));
    let per = w.max(1) / n;
    (0..n).map(|k| (k * per + 1, (k + 1) * per)).collect()
}

/// The class ([`lane_classes`]) of an issue with `lanes` active lanes at warp size `w`.
pub fn lane_class(lanes: u32, w: u32) -> usize {
    let n = (LANE_CLASSES as u32).min(w.max(1));
    ((lanes.clamp(1, w.max(1)) - 1) * n / w.max(1)) as usize
}

/// Issued instructions in one stretch of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Bucket {
    /// The kernel's own issued warp instructions.
    pub issues: u64,
    /// Their active lanes summed.
    pub lanes: u64,
    /// Mechanism-inserted issues.
    pub mechanism_issues: u64,
    /// The mechanism's structure size summed over every issue (kernel and mechanism).
    pub structure_sum: u64,
    /// The largest structure seen.
    pub structure_max: u64,
    /// The kernel's own issues by active-lane class ([`lane_classes`]).
    pub by_lanes: [u64; LANE_CLASSES],
}

impl Bucket {
    fn merge(&mut self, o: &Bucket) {
        self.issues += o.issues;
        self.lanes += o.lanes;
        self.mechanism_issues += o.mechanism_issues;
        self.structure_sum += o.structure_sum;
        self.structure_max = self.structure_max.max(o.structure_max);
        for (a, b) in self.by_lanes.iter_mut().zip(&o.by_lanes) {
            *a += b;
        }
    }

    /// Counts one issue of the kernel's own instructions with `lanes` active lanes of `w`.
    fn own_issue(&mut self, lanes: u32, w: u32) {
        self.issues += 1;
        self.lanes += u64::from(lanes);
        self.by_lanes[lane_class(lanes, w)] += 1;
    }

    /// All issues of the bucket.
    pub fn all_issues(&self) -> u64 {
        self.issues + self.mechanism_issues
    }
}

/// Records a whole run (every CTA and warp) for the report.
pub struct TimelineRecorder {
    /// Issues per bucket (a power of two).
    pub width: u64,
    /// The buckets, in issue order.
    pub buckets: Vec<Bucket>,
    /// Executions per pc of the program (the kernel's own instructions).
    pub pcs: PcCounter,
    /// Threads per warp.
    warp_size: u32,
    issued: u64,
}

impl TimelineRecorder {
    /// A recorder for runs of `prog` at warp size `warp_size`.
    pub fn new(prog: &Program, warp_size: u32) -> TimelineRecorder {
        TimelineRecorder { width: 1, buckets: Vec::new(), pcs: PcCounter::new(prog), warp_size, issued: 0 }
    }

    /// Merges adjacent buckets until at most `n` remain (for plotting).
    pub fn coarse(&self, n: usize) -> (u64, Vec<Bucket>) {
        let mut width = self.width;
        let mut b = self.buckets.clone();
        while b.len() > n.max(1) {
            b = halve(&b);
            width *= 2;
        }
        (width, b)
    }
}

fn halve(b: &[Bucket]) -> Vec<Bucket> {
    b.chunks(2)
        .map(|c| {
            let mut m = c[0];
            if let Some(x) = c.get(1) {
                m.merge(x);
            }
            m
        })
        .collect()
}

impl Observer for TimelineRecorder {
    fn wants(&self, _cta: u64, _ctx: u32) -> bool {
        true
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        let i = (self.issued / self.width) as usize;
        if i >= MAX_BUCKETS {
            self.buckets = halve(&self.buckets);
            self.width *= 2;
        }
        let i = (self.issued / self.width) as usize;
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        self.issued += 1;
        let b = &mut self.buckets[i];
        let size = ev.structure as u64;
        b.structure_sum += size;
        b.structure_max = b.structure_max.max(size);
        if self.pcs.count(ev.pc, ev.mask, ev.whole_warp) {
            b.own_issue(ev.mask.count_ones(), self.warp_size);
        } else {
            b.mechanism_issues += 1;
        }
    }
}

/// A timed run's issues by cycle: SIMD efficiency, issues by active-lane class and structure size over the
/// cycles of the run (as AerialVision plots them), all SMs together.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CycleBuckets {
    /// Cycles per bucket.
    pub width: u64,
    /// Bucket `i` holds the issues of cycles `[i * width, (i + 1) * width)`; only buckets whose cycles
    /// the timeline covers whole.
    pub buckets: Vec<Bucket>,
    /// The cycles of the run.
    pub cycles: u64,
    /// The cycles from 0 in which the timeline holds every issue: all of them, or fewer when an SM's
    /// share of the timeline's event cap ran out (its later events were left out).
    pub covered: u64,
}

impl CycleBuckets {
    /// The issues of `timeline` (a timed run of `prog` at warp size `w` that took `cycles` cycles,
    /// recorded with at most `per_sm` events per SM) in at most `n` buckets of the run's cycles. An SM
    /// records its issues in cycle order until it holds `per_sm` events, so when events were left out the
    /// buckets stop at the earliest last issue of such an SM.
    pub fn from_timeline(
        timeline: &Timeline,
        (prog, w): (&Program, u32),
        cycles: u64,
        n: usize,
        per_sm: usize,
    ) -> CycleBuckets {
        let width = cycles.div_ceil(n.max(1) as u64).max(1);
        let mut buckets = vec![Bucket::default(); cycles.div_ceil(width) as usize];
        // Per SM: events recorded and the last issue cycle.
        let mut sms: std::collections::BTreeMap<u32, (usize, u64)> = std::collections::BTreeMap::new();
        for e in &timeline.events {
            let sm = match *e {
                TraceEvent::Issue { sm, .. } | TraceEvent::Stall { sm, .. } | TraceEvent::Simd { sm, .. } => sm,
            };
            let at = sms.entry(sm).or_default();
            at.0 += 1;
            let TraceEvent::Issue { pc, lanes, structure, start, .. } = *e else { continue };
            at.1 = at.1.max(start);
            let i = (start / width) as usize;
            if buckets.len() <= i {
                buckets.resize(i + 1, Bucket::default());
            }
            let b = &mut buckets[i];
            let size = u64::from(structure);
            b.structure_sum += size;
            b.structure_max = b.structure_max.max(size);
            if prog.info.get(pc as usize).is_none_or(|i| i.class == InstClass::Mechanism) {
                b.mechanism_issues += 1;
            } else {
                b.own_issue(lanes, w);
            }
        }
        let covered = if timeline.dropped == 0 {
            cycles
        } else {
            let full = sms.values().filter(|(count, _)| *count >= per_sm.max(1)).map(|(_, last)| *last).min();
            full.unwrap_or_else(|| sms.values().map(|(_, last)| *last).min().unwrap_or(0))
        };
        if covered < cycles {
            buckets.truncate((covered / width) as usize);
        }
        CycleBuckets { width, buckets, cycles, covered }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_timing::TraceSpec;

    fn program() -> Program {
        let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
        let module = reconverge_ptx::parse(ptx).expect("parses");
        let opts = reconverge_program::DecodeOptions::default();
        let kernel = reconverge_sim::load(&module, None, reconverge_mechanism::Mechanism::Pdom, &opts).expect("loads");
        kernel.into_program()
    }

    fn issue(start: u64, lanes: u32, structure: u32) -> TraceEvent {
        TraceEvent::Issue { sm: 0, sched: 0, cta: 0, warp: 0, pc: 0, lanes, structure, start, dur: 1 }
    }

    #[test]
    fn lane_classes_scale_with_the_warp_size() {
        assert_eq!(lane_classes(32)[0], (1, 4));
        assert_eq!(lane_classes(32)[7], (29, 32));
        assert_eq!(lane_classes(4), [(1, 1), (2, 2), (3, 3), (4, 4)]);
        assert_eq!(lane_classes(64)[1], (9, 16));
        assert_eq!((lane_class(1, 32), lane_class(4, 32), lane_class(5, 32), lane_class(32, 32)), (0, 0, 1, 7));
        assert_eq!((lane_class(3, 4), lane_class(64, 64), lane_class(0, 32)), (2, 7, 0));
    }

    /// Issues land in the bucket of their cycle, every SM together; when an SM's share of the event cap
    /// ran out, the buckets stop before its last recorded issue.
    #[test]
    fn cycle_buckets_hold_every_issue_by_its_cycle() {
        let prog = program();
        let events = vec![issue(0, 32, 1), issue(5, 16, 2), issue(10, 8, 3), issue(39, 32, 1)];
        let mut timeline = Timeline { events, dropped: 0, spec: Some(TraceSpec::default()) };
        let c = CycleBuckets::from_timeline(&timeline, (&prog, 32), 40, 4, 100);
        assert_eq!((c.width, c.cycles, c.covered), (10, 40, 40));
        assert_eq!(c.buckets.len(), 4);
        assert_eq!((c.buckets[0].issues, c.buckets[0].lanes, c.buckets[0].structure_sum), (2, 48, 3));
        assert_eq!(c.buckets[0].by_lanes, [0, 0, 0, 1, 0, 0, 0, 1], "16 lanes: W13–16; 32: W29–32");
        assert_eq!((c.buckets[1].issues, c.buckets[2].issues, c.buckets[3].issues), (1, 0, 1));
        // SM 0 held its 4 events and left later ones out: cycles from 39 on are not covered.
        timeline.dropped = 1;
        let c = CycleBuckets::from_timeline(&timeline, (&prog, 32), 40, 4, 4);
        assert_eq!((c.covered, c.buckets.len()), (39, 3));
    }
}
