//! What a run did over time and where: an [`Observer`] that keeps, for the report, the SIMD efficiency and
//! structure size over issued instructions (in buckets that coarsen as the run grows, so memory stays
//! bounded) and per-pc execution counts.

use reconverge_program::program::InstClass;
use reconverge_program::Program;
use reconverge_sim::{IssueEvent, Observer};

/// The most buckets kept; past it adjacent buckets merge and the bucket width doubles.
const MAX_BUCKETS: usize = 4096;

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
}

impl Bucket {
    fn merge(&mut self, o: &Bucket) {
        self.issues += o.issues;
        self.lanes += o.lanes;
        self.mechanism_issues += o.mechanism_issues;
        self.structure_sum += o.structure_sum;
        self.structure_max = self.structure_max.max(o.structure_max);
    }

    /// All issues of the bucket.
    pub fn all_issues(&self) -> u64 {
        self.issues + self.mechanism_issues
    }
}

/// Executions of one pc (the kernel's own instructions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcCount {
    /// Warp-level executions.
    pub executions: u64,
    /// Active lanes summed.
    pub lanes: u64,
    /// Executions by a group that did not hold its warp's live threads (divergent executions).
    pub divergent: u64,
}

/// Records a whole run (every CTA and warp) for the report.
pub struct TimelineRecorder {
    /// Per pc: a mechanism-inserted instruction.
    inserted: Vec<bool>,
    /// Issues per bucket (a power of two).
    pub width: u64,
    /// The buckets, in issue order.
    pub buckets: Vec<Bucket>,
    /// Per pc of the program.
    pub per_pc: Vec<PcCount>,
    issued: u64,
}

impl TimelineRecorder {
    /// A recorder for runs of `prog`.
    pub fn new(prog: &Program) -> TimelineRecorder {
        TimelineRecorder {
            inserted: prog.info.iter().map(|i| i.class == InstClass::Mechanism).collect(),
            width: 1,
            buckets: Vec::new(),
            per_pc: vec![PcCount::default(); prog.insts.len()],
            issued: 0,
        }
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
        if self.inserted.get(ev.pc as usize).copied().unwrap_or(true) {
            b.mechanism_issues += 1;
            return;
        }
        let lanes = u64::from(ev.mask.count_ones());
        b.issues += 1;
        b.lanes += lanes;
        if let Some(c) = self.per_pc.get_mut(ev.pc as usize) {
            c.executions += 1;
            c.lanes += lanes;
            c.divergent += u64::from(!ev.whole_warp);
        }
    }
}
