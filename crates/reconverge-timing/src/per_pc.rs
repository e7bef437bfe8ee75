//! What a run did per pc, recorded only when asked ([`crate::Record`]): each pc's executions (an
//! [`Observer`], [`PcCounter`], usable by functional runs too) and, in a timed run, the idle
//! scheduler-cycles charged to each pc by cause ([`PcStalls`]). Neither costs an ordinary run anything.
//! [`PcSite`] says where each pc is in the source, for pages that sum the counts by line or block.

use crate::stats::StallCounts;
use reconverge_program::program::InstClass;
use reconverge_program::{LaneMask, Program};
use reconverge_sim::{IssueEvent, Observer};
use serde::{Deserialize, Serialize};

/// Executions of one pc (the kernel's own instructions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcCount {
    /// Warp-level executions.
    pub executions: u64,
    /// Active lanes summed.
    pub lanes: u64,
    /// Executions by a group that did not hold its warp's live threads (divergent executions).
    pub divergent: u64,
}

impl PcCount {
    /// Adds the counts of `o`.
    pub fn merge(&mut self, o: &PcCount) {
        let PcCount { executions, lanes, divergent } = o;
        self.executions += executions;
        self.lanes += lanes;
        self.divergent += divergent;
    }
}

/// Where one pc of a decoded kernel is in its source: what a page groups the pc's counts by (its lines,
/// its CFG block). Plain data, so a kernel's pcs can cross a process boundary typed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PcSite {
    /// The function (index into [`Program::functions`]; 0 is the kernel).
    pub func: u32,
    /// The IR block (index) of the instruction (as the CFG report numbers blocks).
    pub block: u32,
    /// Its 1-based PTX line (0: unknown, as for instructions a mechanism's pass inserted).
    pub ptx_line: u32,
    /// Its CUDA file (the `.loc` file index), when the kernel has line information.
    pub cuda_file: Option<u32>,
    /// Its 1-based CUDA line, when the kernel has line information.
    pub cuda_line: Option<u32>,
    /// A mechanism-inserted instruction.
    pub inserted: bool,
}

impl PcSite {
    /// The site of every pc of `prog`, in pc order.
    pub fn of_program(prog: &Program) -> Vec<PcSite> {
        prog.info
            .iter()
            .map(|i| PcSite {
                func: i.func,
                block: i.block,
                ptx_line: i.ptx_line,
                cuda_file: i.loc.map(|l| l.file),
                cuda_line: i.loc.map(|l| l.line),
                inserted: i.class == InstClass::Mechanism,
            })
            .collect()
    }

    /// The line a page files the pc under: its CUDA line in `.loc` file `cuda_file`, or with `None` its
    /// PTX line; `None` when it has none (line 0, or no line of that file).
    pub fn line(&self, cuda_file: Option<u32>) -> Option<u32> {
        let line = match cuda_file {
            Some(f) if self.cuda_file == Some(f) => self.cuda_line?,
            Some(_) => return None,
            None => self.ptx_line,
        };
        (line > 0).then_some(line)
    }
}

/// Counts the executions of every pc of a program's kernel instructions (mechanism-inserted ones are
/// left out, as the SIMD efficiency leaves them out): an observer of every CTA and context.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PcCounter {
    /// Per pc: a mechanism-inserted instruction.
    inserted: Vec<bool>,
    /// Per pc of the program.
    pub per_pc: Vec<PcCount>,
}

impl PcCounter {
    /// A counter for runs of `prog`.
    pub fn new(prog: &Program) -> PcCounter {
        PcCounter {
            inserted: prog.info.iter().map(|i| i.class == InstClass::Mechanism).collect(),
            per_pc: vec![PcCount::default(); prog.insts.len()],
        }
    }

    /// Counts one issue of `pc` with active lanes `mask` (`whole_warp`: it held its warps' live threads);
    /// returns whether `pc` is one of the kernel's own instructions (a mechanism-inserted one is not
    /// counted).
    pub fn count(&mut self, pc: u32, mask: LaneMask, whole_warp: bool) -> bool {
        if self.inserted.get(pc as usize).copied().unwrap_or(true) {
            return false;
        }
        if let Some(c) = self.per_pc.get_mut(pc as usize) {
            c.executions += 1;
            c.lanes += u64::from(mask.count_ones());
            c.divergent += u64::from(!whole_warp);
        }
        true
    }

    /// The pcs executed at least once, with their counts ([`executed`]).
    pub fn executed(&self) -> Vec<(u32, PcCount)> {
        executed(&self.per_pc)
    }
}

impl Observer for PcCounter {
    fn wants(&self, _cta: u64, _ctx: u32) -> bool {
        true
    }

    fn on_issue(&mut self, ev: &IssueEvent<'_>) {
        self.count(ev.pc, ev.mask, ev.whole_warp);
    }
}

/// The pcs of `per_pc` executed at least once, with their counts (what a launch sends `reconverge exec`).
pub fn executed(per_pc: &[PcCount]) -> Vec<(u32, PcCount)> {
    let pcs = per_pc.iter().enumerate();
    pcs.filter(|(_, c)| c.executions > 0).map(|(pc, c)| (pc as u32, *c)).collect()
}

/// One SM's idle scheduler-cycles charged to pcs ([`crate::TimedResult::pc_stalls`]).
///
/// An idle scheduler-cycle whose cause is a waiting warp is charged to the pc of the instruction that
/// warp is waiting to issue: of the scheduler's contexts, the first (in the scheduler's order) whose wait
/// gave the cycle its cause. A context with a group (waiting for a register, memory, its unit, the
/// fetch, a fence or a mechanism delay) waits to issue its group's pc; a context without one (its threads
/// wait at a barrier, or the mechanism holds them) is charged the pc it issued last (the `bar.sync` it
/// waits behind, the branch or reconvergence point where its mechanism holds it), or the kernel's entry
/// before it issued. Cycles without a waiting warp (`no_ready_warp`) are charged to no pc, so per cause
/// the pcs sum to the run's [`StallCounts`] and their total to every cause but `no_ready_warp`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PcStalls {
    /// Per pc: the idle scheduler-cycles charged to it, by cause (`no_ready_warp` always 0).
    pub per_pc: Vec<StallCounts>,
    /// Per issue context (`cta slot * contexts + context`): the pc it issued last.
    last: Vec<u32>,
    /// The kernel's entry pc (a context's before its first issue).
    entry: u32,
}

impl PcStalls {
    /// A recorder for runs of `prog`.
    pub fn new(prog: &Program) -> PcStalls {
        let entry = prog.functions.first().map_or(0, |f| f.entry);
        PcStalls { per_pc: vec![StallCounts::default(); prog.insts.len()], last: Vec::new(), entry }
    }

    /// Contexts `range` belong to a CTA that has just been launched: none has issued.
    pub fn launched(&mut self, range: std::ops::Range<usize>) {
        if self.last.len() < range.end {
            self.last.resize(range.end, self.entry);
        }
        self.last[range].fill(self.entry);
    }

    /// Context `g` issued `pc`.
    pub fn issued(&mut self, g: u32, pc: u32) {
        if let Some(x) = self.last.get_mut(g as usize) {
            *x = pc;
        }
    }

    /// The pc context `g` issued last (the entry before its first issue).
    pub fn last_issued(&self, g: u32) -> u32 {
        self.last.get(g as usize).copied().unwrap_or(self.entry)
    }

    /// The counts of `pc` (`None` past the program's end).
    pub fn at(&mut self, pc: u32) -> Option<&mut StallCounts> {
        self.per_pc.get_mut(pc as usize)
    }
}

/// Sums per-pc records of several SMs index by index, each pair with `merge`.
pub fn sum_by_pc<'a, T: Clone + Default + 'a>(
    parts: impl IntoIterator<Item = &'a [T]>,
    merge: impl Fn(&mut T, &T),
) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for p in parts {
        if out.len() < p.len() {
            out.resize(p.len(), T::default());
        }
        for (a, b) in out.iter_mut().zip(p) {
            merge(a, b);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nbar.sync 0;\nret;\n}\n";
        let module = reconverge_ptx::parse(ptx).expect("parses");
        let opts = reconverge_program::DecodeOptions { source: Some(ptx.into()), ..Default::default() };
        let kernel = reconverge_sim::load(&module, None, reconverge_mechanism::Mechanism::Pdom, &opts).expect("loads");
        kernel.into_program()
    }

    #[test]
    fn counts_skip_inserted_pcs_and_keep_divergence() {
        let prog = program();
        let mut c = PcCounter::new(&prog);
        assert!(c.count(0, 0b1111, true));
        assert!(c.count(0, 0b0011, false));
        assert!(!c.count(99, 1, true), "past the end");
        assert_eq!(c.per_pc[0], PcCount { executions: 2, lanes: 6, divergent: 1 });
        assert_eq!(c.executed(), vec![(0, PcCount { executions: 2, lanes: 6, divergent: 1 })]);
    }

    #[test]
    fn sites_name_ptx_and_cuda_lines() {
        let prog = program();
        let sites = PcSite::of_program(&prog);
        assert_eq!(sites.len(), prog.insts.len());
        assert_eq!(sites[0].line(None), Some(6), "bar.sync is on PTX line 6");
        assert_eq!(sites[0].line(Some(1)), None, "no .loc");
        let s = PcSite { ptx_line: 3, cuda_file: Some(1), cuda_line: Some(9), ..PcSite::default() };
        assert_eq!((s.line(Some(1)), s.line(Some(2)), s.line(None)), (Some(9), None, Some(3)));
    }

    #[test]
    fn contexts_start_at_the_entry_and_remember_their_last_issue() {
        let prog = program();
        let mut s = PcStalls::new(&prog);
        s.launched(0..4);
        assert_eq!(s.last_issued(3), 0);
        s.issued(3, 1);
        assert_eq!(s.last_issued(3), 1);
        s.launched(2..4);
        assert_eq!(s.last_issued(3), 0, "a new CTA in the slot");
        assert_eq!(s.last_issued(40), 0, "a context never launched");
        let a = [StallCounts { memory: 1, ..Default::default() }];
        let b = [StallCounts { memory: 2, ..Default::default() }, StallCounts { barrier: 5, ..Default::default() }];
        let sum = sum_by_pc([&a[..], &b[..]], StallCounts::merge);
        assert_eq!((sum[0].memory, sum[1].barrier), (3, 5));
    }
}
