//! A kernel's executions per pc over the launches of a whole program (`reconverge exec --html`), as plain
//! data that crosses the runtime shim's channel typed: once per kernel, where each of its pcs is
//! ([`KernelMap`]: the PTX of its module is the page's source input, the pcs' lines and blocks come with
//! it); per launch, the counts of the pcs that ran ([`LaunchPcs`]). `exec` sums them per kernel.

use reconverge_timing::per_pc::{PcCount, PcSite};
use serde::{Deserialize, Serialize};

/// A kernel as a page of its lines and CFG needs it, sent once per kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelMap {
    /// The kernel (PTX name).
    pub kernel: String,
    /// Its module (the shim's label, `program:moduleN.ptx`).
    pub module: String,
    /// The module's PTX text.
    pub ptx: String,
    /// Where each pc of the kernel's decoded program is, in pc order.
    pub sites: Vec<PcSite>,
    /// The CUDA files its `.loc` lines name: (`.file` index, path).
    pub cuda_files: Vec<(u32, String)>,
}

/// One launch's executions per pc of the kernel's own instructions (the pcs that ran, in pc order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchPcs {
    /// The launch's number (from 1).
    pub launch: u64,
    /// The kernel (PTX name).
    pub kernel: String,
    /// Its module ([`KernelMap::module`]).
    pub module: String,
    /// `(pc, counts)` of every pc that ran.
    pub counts: Vec<(u32, PcCount)>,
}

/// A kernel's map and its counts summed over the launches received.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPcs {
    /// The kernel.
    pub map: KernelMap,
    /// Launches summed.
    pub launches: u64,
    /// Per pc ([`KernelMap::sites`]' order).
    pub counts: Vec<PcCount>,
}

impl KernelPcs {
    /// A kernel without launches yet.
    pub fn new(map: KernelMap) -> KernelPcs {
        let counts = vec![PcCount::default(); map.sites.len()];
        KernelPcs { map, launches: 0, counts }
    }

    /// Adds one launch's counts; `false` (nothing added) when a pc is not the kernel's.
    pub fn add(&mut self, l: &LaunchPcs) -> bool {
        if l.counts.iter().any(|(pc, _)| *pc as usize >= self.counts.len()) {
            return false;
        }
        for (pc, c) in &l.counts {
            self.counts[*pc as usize].merge(c);
        }
        self.launches += 1;
        true
    }
}

/// The kernels of a program with their summed counts, in memory bounded however many kernels and launches
/// there are: the first `max` kernels whose map came are kept (their launches summed as they come);
/// other kernels' launches are only counted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramPcs {
    /// The kernels kept, in order of their first launch.
    pub kernels: Vec<KernelPcs>,
    /// Kernels whose map came once `max` were kept.
    pub kernels_left_out: u64,
    /// Launches whose counts were not added: of a kernel left out or whose map never came, or naming a
    /// pc its kernel does not have.
    pub launches_left_out: u64,
}

impl ProgramPcs {
    /// Takes a kernel's map, keeping it while fewer than `max` are kept.
    pub fn map(&mut self, m: KernelMap, max: usize) {
        if self.find(&m.module, &m.kernel).is_some() {
            return;
        }
        if self.kernels.len() < max {
            self.kernels.push(KernelPcs::new(m));
        } else {
            self.kernels_left_out += 1;
        }
    }

    /// Adds a launch's counts to its kernel's.
    pub fn launch(&mut self, l: &LaunchPcs) {
        let added = match self.find(&l.module, &l.kernel) {
            Some(i) => self.kernels[i].add(l),
            None => false,
        };
        self.launches_left_out += u64::from(!added);
    }

    fn find(&self, module: &str, kernel: &str) -> Option<usize> {
        self.kernels.iter().position(|k| k.map.module == module && k.map.kernel == kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kernel: &str, pcs: usize) -> KernelMap {
        KernelMap {
            kernel: kernel.into(),
            module: "p:module0.ptx".into(),
            ptx: String::new(),
            sites: vec![PcSite::default(); pcs],
            cuda_files: Vec::new(),
        }
    }

    fn launch(n: u64, kernel: &str, pc: u32) -> LaunchPcs {
        let c = PcCount { executions: 2, lanes: 40, divergent: 1 };
        LaunchPcs { launch: n, kernel: kernel.into(), module: "p:module0.ptx".into(), counts: vec![(pc, c)] }
    }

    #[test]
    fn launches_are_summed_per_kernel_and_the_kernels_kept_are_bounded() {
        let mut p = ProgramPcs::default();
        p.map(map("a", 3), 1);
        p.map(map("a", 3), 1);
        p.map(map("b", 3), 1);
        assert_eq!((p.kernels.len(), p.kernels_left_out), (1, 1));
        p.launch(&launch(1, "a", 2));
        p.launch(&launch(2, "a", 2));
        p.launch(&launch(3, "b", 0));
        p.launch(&launch(4, "a", 7));
        let a = &p.kernels[0];
        assert_eq!((a.launches, a.counts[2]), (2, PcCount { executions: 4, lanes: 80, divergent: 2 }));
        assert_eq!(p.launches_left_out, 2, "b's launch, and a pc past a's end");
        // The channel carries them as JSON and back.
        let text = serde_json::to_string(&launch(1, "a", 2)).expect("serializes");
        assert_eq!(serde_json::from_str::<LaunchPcs>(&text).expect("parses"), launch(1, "a", 2));
    }
}
