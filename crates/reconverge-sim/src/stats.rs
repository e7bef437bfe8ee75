//! Run statistics.
//!
//! One definition per count: an issued instruction is either the kernel's own or one a mechanism's pass
//! inserted ([`InstClass::Mechanism`]); `simd_efficiency` is over the kernel's own instructions, so two
//! mechanisms running the same kernel are compared on the same work.

pub use crate::mechanism::Structure;
use crate::mechanism::{Agg, Counter, Flow, Ratio};
use crate::program::{InstClass, Program};
use crate::types::{LaneMask, Pc};
use serde::Serialize;

/// Counters of one of the kernel's conditional or indirect branches ([`Program::branches`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BranchCounts {
    /// Warp-level executions.
    pub executions: u64,
    /// Executions whose active lanes went to more than one place.
    pub divergent: u64,
    /// Active lanes summed over executions.
    pub active_lanes: u64,
}

/// Counters gathered while a kernel runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Issued issue groups: the kernel's own instructions plus mechanism-inserted ones.
    pub warp_instructions: u64,
    /// Active lanes summed over all issued instructions.
    pub thread_instructions: u64,
    /// Issued instructions a mechanism's pass inserted (`ssy`, `sync`, `pbk`, `brk`, ...).
    pub mechanism_instructions: u64,
    /// Active lanes summed over the mechanism-inserted instructions.
    pub mechanism_thread_instructions: u64,
    /// The kind of structure the mechanism keeps.
    pub structure: Structure,
    /// The largest structure any warp (or CTA, or SM) held, in entries.
    pub max_structure: usize,
    /// The kernel's conditional and indirect branches issued (the same instructions under every mechanism).
    pub branches: u64,
    /// Those of them whose active lanes went to more than one place.
    pub divergent_branches: u64,
    /// Barrier instructions issued.
    pub barriers: u64,
    /// The kernel's own issued instructions by active-lane count: `lane_histogram[k]` counts issues with k+1
    /// lanes.
    pub lane_histogram: Vec<u64>,
    /// Issued warp instructions by class (`mechanism` = `mechanism_instructions`).
    pub by_class: ClassCounts,
    /// CTAs run.
    pub ctas: u64,
    /// Threads run.
    pub threads: u64,
    /// Per-branch counters, indexed like [`Program::branches`].
    pub branch_counts: Vec<BranchCounts>,
    /// What the mechanism's own counters are ([`crate::mechanism::Tracker::COUNTERS`]).
    #[serde(skip)]
    pub mechanism_counter_defs: &'static [Counter],
    /// The mechanism's own counters, by index of `mechanism_counter_defs`.
    pub mechanism_counters: Vec<u64>,
    /// Ratios of the mechanism's counters it reports ([`crate::mechanism::Tracker::RATIOS`]).
    #[serde(skip)]
    pub mechanism_ratio_defs: &'static [Ratio],
    /// What the mechanism counts per branch ([`crate::mechanism::Tracker::BRANCH_COUNTERS`]).
    #[serde(skip)]
    pub branch_counter_defs: &'static [Counter],
    /// The mechanism's per-branch counters: `branch_mechanism[b * names + i]`.
    pub branch_mechanism: Vec<u64>,
    /// Gathered by the timing model (cycle counters are meaningful); functional runs leave it false.
    pub timed: bool,
    /// Seed 004's dynamic scalarization metrics, when the program carries a scalarization plan.
    pub scalarization: Option<crate::scalarize::ScalarizeStats>,
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
    /// Barriers, fences and warp-collectives.
    pub sync: u64,
    /// Mechanism-inserted instructions.
    pub mechanism: u64,
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
            InstClass::Mechanism => self.mechanism += 1,
            InstClass::Nop => self.nop += 1,
        }
    }

    /// Adds another set of counts.
    pub fn merge(&mut self, o: &ClassCounts) {
        self.int += o.int;
        self.float += o.float;
        self.double += o.double;
        self.sfu += o.sfu;
        self.mem += o.mem;
        self.control += o.control;
        self.sync += o.sync;
        self.mechanism += o.mechanism;
        self.nop += o.nop;
    }
}

impl Stats {
    /// Empty statistics for a run of `prog` at `warp_size` under a mechanism keeping a `structure`.
    pub fn new(prog: &Program, warp_size: u32, structure: Structure) -> Stats {
        Stats {
            structure,
            scalarization: prog.scalar.as_ref().map(|_| Default::default()),
            lane_histogram: vec![0; warp_size as usize],
            branch_counts: vec![BranchCounts::default(); prog.branches.len()],
            ..Stats::default()
        }
    }

    /// Declares mechanism `T`'s own counters (all zero).
    pub fn declare_mechanism<T: crate::mechanism::Tracker>(&mut self) {
        self.mechanism_counter_defs = T::COUNTERS;
        self.mechanism_counters = vec![0; T::COUNTERS.len()];
        self.mechanism_ratio_defs = T::RATIOS;
        self.branch_counter_defs = T::BRANCH_COUNTERS;
        self.branch_mechanism = vec![0; T::BRANCH_COUNTERS.len() * self.branch_counts.len()];
    }

    /// The mechanism's counters and the per-branch table (`k` counters per branch).
    pub fn mechanism_counters_mut(&mut self) -> (&mut [u64], &mut [u64], usize) {
        (&mut self.mechanism_counters, &mut self.branch_mechanism, self.branch_counter_defs.len())
    }

    /// Whether a counter is reported by this run (cycle counters only in timed runs).
    fn reported(&self, c: &Counter) -> bool {
        !c.timed || self.timed
    }

    /// The mechanism's counters of branch `b`, named (cycle counters only in timed runs).
    pub fn branch_mechanism_counters(&self, b: usize) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        let k = self.branch_counter_defs.len();
        self.branch_counter_defs
            .iter()
            .enumerate()
            .filter(|(_, c)| self.reported(c))
            .map(move |(i, c)| (c.name, self.branch_mechanism[b * k + i]))
    }

    /// Counts one issued instruction: totals, the kernel's own versus mechanism-inserted instructions, the
    /// active-lane histogram and the kernel's branches.
    #[inline]
    pub fn count_issue(&mut self, prog: &Program, pc: Pc, mask: LaneMask, flow: &Flow) {
        let info = &prog.info[pc as usize];
        let active = mask.count_ones() as u64;
        self.warp_instructions += 1;
        self.thread_instructions += active;
        self.by_class.add(info.class);
        if info.class == InstClass::Mechanism {
            self.mechanism_instructions += 1;
            self.mechanism_thread_instructions += active;
            return;
        }
        self.lane_histogram[active as usize - 1] += 1;
        if let Some(b) = info.branch {
            let split = crate::mechanism::splits(mask, flow);
            self.branches += 1;
            self.divergent_branches += split as u64;
            let c = &mut self.branch_counts[b as usize];
            c.executions += 1;
            c.divergent += split as u64;
            c.active_lanes += active;
        }
    }

    /// Counts `n` straight-line instructions from `pc` issued with `mask` (none of them a branch or a
    /// mechanism's instruction), as `n` calls of [`Stats::count_issue`] would.
    pub fn count_run(&mut self, prog: &Program, pc: Pc, n: u32, mask: LaneMask) {
        if n == 0 {
            return;
        }
        let active = mask.count_ones() as u64;
        self.warp_instructions += u64::from(n);
        self.thread_instructions += active * u64::from(n);
        for info in &prog.info[pc as usize..(pc + n) as usize] {
            self.by_class.add(info.class);
        }
        self.lane_histogram[active as usize - 1] += u64::from(n);
    }

    /// Adds the counts of `o` (the largest structure takes the maximum).
    pub fn merge(&mut self, o: &Stats) {
        self.warp_instructions += o.warp_instructions;
        self.thread_instructions += o.thread_instructions;
        self.mechanism_instructions += o.mechanism_instructions;
        self.mechanism_thread_instructions += o.mechanism_thread_instructions;
        self.max_structure = self.max_structure.max(o.max_structure);
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
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
        if self.branch_counts.len() < o.branch_counts.len() {
            self.branch_counts.resize(o.branch_counts.len(), BranchCounts::default());
        }
        for (a, b) in self.branch_counts.iter_mut().zip(&o.branch_counts) {
            a.executions += b.executions;
            a.divergent += b.divergent;
            a.active_lanes += b.active_lanes;
        }
        if self.mechanism_counters.len() < o.mechanism_counters.len() {
            self.mechanism_counter_defs = o.mechanism_counter_defs;
            self.mechanism_counters.resize(o.mechanism_counters.len(), 0);
        }
        for (i, (a, b)) in self.mechanism_counters.iter_mut().zip(&o.mechanism_counters).enumerate() {
            match o.mechanism_counter_defs.get(i).map(|d| d.agg) {
                Some(Agg::Max) => *a = (*a).max(*b),
                _ => *a += b,
            }
        }
        self.mechanism_ratio_defs = o.mechanism_ratio_defs;
        self.timed |= o.timed;
        if self.branch_mechanism.len() < o.branch_mechanism.len() {
            self.branch_counter_defs = o.branch_counter_defs;
            self.branch_mechanism.resize(o.branch_mechanism.len(), 0);
        }
        for (a, b) in self.branch_mechanism.iter_mut().zip(&o.branch_mechanism) {
            *a += b;
        }
        if let Some(b) = &o.scalarization {
            self.scalarization.get_or_insert_with(Default::default).merge(b);
        }
    }

    /// The mechanism's counters, named (cycle counters only in timed runs).
    pub fn mechanism_counters(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.mechanism_counter_defs
            .iter()
            .zip(&self.mechanism_counters)
            .filter(|(d, _)| self.reported(d))
            .map(|(d, v)| (d.name, *v))
    }

    /// A mechanism counter by name.
    pub fn mechanism_counter(&self, name: &str) -> Option<u64> {
        self.mechanism_counter_defs.iter().position(|d| d.name == name).map(|i| self.mechanism_counters[i])
    }

    /// The mechanism's ratios, named (`None` when the denominator is zero or a counter is not reported).
    pub fn mechanism_ratios(&self) -> impl Iterator<Item = (&'static str, Option<f64>)> + '_ {
        self.mechanism_ratio_defs.iter().map(|r| {
            let num = self.mechanism_counter(r.num);
            let den = self.mechanism_counter(r.den);
            let v = match (num, den) {
                (Some(n), Some(d)) if d > 0 => Some(n as f64 / d as f64),
                _ => None,
            };
            (r.name, v)
        })
    }

    /// The kernel's own issued instructions (warp-level).
    pub fn kernel_instructions(&self) -> u64 {
        self.warp_instructions - self.mechanism_instructions
    }

    /// Active lanes summed over the kernel's own issued instructions.
    pub fn kernel_thread_instructions(&self) -> u64 {
        self.thread_instructions - self.mechanism_thread_instructions
    }

    /// SIMD efficiency of the kernel's own instructions: kernel thread instructions / (kernel
    /// instructions × warp size).
    pub fn simd_efficiency(&self, warp_size: u32) -> f64 {
        ratio(self.kernel_thread_instructions(), self.kernel_instructions() * warp_size as u64)
    }

    /// SIMD efficiency of everything issued, mechanism instructions included.
    pub fn simd_efficiency_all(&self, warp_size: u32) -> f64 {
        ratio(self.thread_instructions, self.warp_instructions * warp_size as u64)
    }

    /// `max_stack_depth`: the largest stack, for mechanisms that keep one.
    pub fn max_stack_depth(&self) -> Option<usize> {
        (self.structure == Structure::Stack).then_some(self.max_structure)
    }

    /// `max_paths`: the largest path list or group set, for mechanisms that keep one.
    pub fn max_paths(&self) -> Option<usize> {
        (self.structure == Structure::Paths).then_some(self.max_structure)
    }

    /// `max_pool_warps`: the most warps in one SM's warp pool, for mechanisms that keep one.
    pub fn max_pool_warps(&self) -> Option<usize> {
        (self.structure == Structure::Pool).then_some(self.max_structure)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Where one of the kernel's branches is, for per-branch reports.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BranchSite {
    /// Its pc in the decoded program.
    pub pc: crate::types::Pc,
    /// Its line in the PTX file (0 if unknown).
    pub ptx_line: u32,
    /// The CUDA source file from `.loc`, if any.
    pub cuda_file: Option<String>,
    /// The CUDA source line from `.loc`, if any.
    pub cuda_line: Option<u32>,
    /// The function containing it.
    pub function: String,
    /// The pc where its paths reconverge (the immediate post-dominator); `None` when they meet only at the
    /// function's exit.
    pub reconvergence_pc: Option<crate::types::Pc>,
}

/// The sites of the kernel's branches of `prog`, indexed like [`Program::branches`].
pub fn branch_sites(prog: &Program) -> Vec<BranchSite> {
    prog.branches
        .iter()
        .map(|&pc| {
            let info = &prog.info[pc as usize];
            let loc = info.loc.filter(|l| l.line > 0);
            let r = prog.reconv.get(pc as usize).copied().unwrap_or(crate::types::PC_NONE);
            BranchSite {
                pc,
                ptx_line: info.ptx_line,
                cuda_file: loc.and_then(|l| prog.src_files.iter().find(|(n, _)| *n == l.file).map(|(_, f)| f.clone())),
                cuda_line: loc.map(|l| l.line),
                function: prog.functions[info.func as usize].name.clone(),
                reconvergence_pc: (!crate::types::is_pseudo(r)).then_some(r),
            }
        })
        .collect()
}
