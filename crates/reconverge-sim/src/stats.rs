//! Run statistics.

use crate::program::InstClass;
use serde::Serialize;

/// Counters gathered while a kernel runs. Keys of the JSON contract (architecture.md §4) are fields here.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Issued issue groups.
    pub warp_instructions: u64,
    /// Active lanes summed over issued instructions.
    pub thread_instructions: u64,
    /// The largest reconvergence structure any warp held, in entries.
    pub max_stack_depth: usize,
    /// Conditional branches issued (guarded `bra`, `brx.idx`).
    pub branches: u64,
    /// Branches whose lanes went to more than one pc.
    pub divergent_branches: u64,
    /// Explicit reconvergence-stack instructions issued (`ssy`, `sync`, `pbk`, `brk`).
    pub stack_instructions: u64,
    /// Barrier instructions issued.
    pub barriers: u64,
    /// Issued instructions by active-lane count: `lane_histogram[k]` counts issues with k+1 lanes.
    pub lane_histogram: Vec<u64>,
    /// Issued warp instructions by class.
    pub by_class: ClassCounts,
    /// CTAs run.
    pub ctas: u64,
    /// Threads run.
    pub threads: u64,
}

/// Warp instructions per instruction class.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ClassCounts {
    /// Integer and logic.
    pub int: u64,
    /// Single precision.
    pub float: u64,
    /// Double precision.
    pub double: u64,
    /// Special functions.
    pub sfu: u64,
    /// Memory.
    pub mem: u64,
    /// Control.
    pub control: u64,
    /// Barriers and warp-collectives.
    pub sync: u64,
    /// Reconvergence-stack instructions.
    pub stack: u64,
    /// No-ops.
    pub nop: u64,
}

impl ClassCounts {
    /// Counts one instruction of class `c`.
    #[inline]
    pub fn add(&mut self, c: InstClass) {
        match c {
            InstClass::Int => self.int += 1,
            InstClass::Float => self.float += 1,
            InstClass::Double => self.double += 1,
            InstClass::Sfu => self.sfu += 1,
            InstClass::Mem => self.mem += 1,
            InstClass::Control => self.control += 1,
            InstClass::Sync => self.sync += 1,
            InstClass::Stack => self.stack += 1,
            InstClass::Nop => self.nop += 1,
        }
    }
}

impl ClassCounts {
    /// Adds another set of counts.
    pub fn merge(&mut self, o: &ClassCounts) {
        self.int += o.int;
        self.float += o.float;
        self.double += o.double;
        self.sfu += o.sfu;
        self.mem += o.mem;
        self.control += o.control;
        self.sync += o.sync;
        self.stack += o.stack;
        self.nop += o.nop;
    }
}

impl Stats {
    /// Adds the counts of `o` (max stack depth takes the maximum).
    pub fn merge(&mut self, o: &Stats) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.max_stack_depth = self.max_stack_depth.max(o.max_stack_depth);
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
        self.stack_instructions += o.stack_instructions;
        self.barriers += o.barriers;
        if self.lane_histogram.len() < o.lane_histogram.len() {
            self.lane_histogram.resize(o.lane_histogram.len(), 0);
        }
        for (a, b) in self.lane_histogram.iter_mut().zip(&o.lane_histogram) {
            *a += b;
        }
        self.by_class.merge(&o.by_class);
        self.ctas += o.ctas;
        self.threads += o.threads;
    }

    /// thread_instructions / (warp_instructions × warp_size).
    pub fn simd_efficiency(&self, warp_size: u32) -> f64 {
        if self.warp_instructions == 0 {
            0.0
        } else {
            self.thread_instructions as f64 / (self.warp_instructions as f64 * warp_size as f64)
        }
    }
}
