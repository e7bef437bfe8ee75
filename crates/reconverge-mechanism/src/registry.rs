//! The registry: every mechanism's facts, declared once in the mechanism's own file ([`Info`]) and
//! listed here once ([`REGISTRY`]). Every list of mechanisms a user sees derives from it: the command
//! line's names, aliases, help and error messages ([`Mechanism::from_name`], [`known_names`]), the default
//! sets of `suite`, `compare` and `report --all` ([`Mechanism::defaults`]), the fuzzer and the tests
//! ([`Mechanism::ALL`]), and the Python package's `mechanisms()`.
//!
//! Adding a mechanism: its file (the tracker and its `Info`), one [`Mechanism`] variant, one registry line
//! and one arm of [`with_tracker!`](crate::with_tracker).

use crate::mechanisms::{arbiter, breadth, capri, dual_path, dwf, dws, forkjoin, frontier, harp, hybrid, its};
use crate::mechanisms::{
    maven, mimd, minpc, multi_path, none, pdom, runner_up, sbi, simty, sorted, ssy, stackless, tbc,
};
use crate::{Heuristic, LutGeometry, Pass, Priority, Scope};
use std::fmt;

/// The mechanisms the command line can choose.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, serde::Serialize)]
pub enum Mechanism {
    /// Implicit per-warp stack reconverging at the immediate post-dominator (GPGPU-Sim).
    Pdom,
    /// Explicit SSY/SYNC + PBK/BRK stack of seed 001 (the SSY pass inserts the instructions).
    Ssy,
    /// No reconvergence: split groups take turns until they exit.
    None,
    /// Dynamic warp formation: threads regrouped by pc in a warp pool, issued by a heuristic; the pool's
    /// look-up table has the geometry given (perfect unless set: [`Mechanism::with_lut`]).
    Dwf(Heuristic, LutGeometry),
    /// Dynamic warp formation with one warp pool for every CTA of the SM (Fung et al., MICRO'07): threads
    /// of different CTAs at one pc share warps; the majority heuristic; a look-up table of the geometry given.
    DwfSm(LutGeometry),
    /// Thread block compaction: a CTA-wide stack; warps wait at every sync point and are compacted.
    Tbc,
    /// CAPRI: thread block compaction where divergent warps wait only when compaction is predicted
    /// adequate.
    Capri,
    /// Thread block compaction with likely-convergence points (Fung & Aamodt's extension): threads that
    /// stay in a loop meet before the back edge instead of at the loop's exit.
    TbcLpc,
    /// CAPRI with likely-convergence points.
    CapriLpc,
    /// Depth-first path traversal, minimum pc first (seed 003 §2.1).
    MinPc,
    /// Breadth-first path traversal with synchronisation at safe points (seed 003 §2.3).
    Breadth,
    /// Structured control flow depth-first, unstructured breadth-first (seed 003 §2.3, the hybrid order of
    /// a patent application that may describe NVIDIA Volta).
    Hybrid,
    /// A path list sorted by a priority, convergence at the head (seed 003 §2.4).
    Sorted(Priority),
    /// Maven's systolic shift register sorting the path list by minimum pc (`1-stack`), or two of them,
    /// the second holding the paths that took a back edge (`2-stack`) (seed 003 §2.4).
    Maven {
        /// `2-stack`.
        two_stacks: bool,
    },
    /// Simty's hot and cold context tables with the compact-sort unit (seed 003 §3.2).
    Simty,
    /// Per-thread pcs and a reduction tree choosing maximum depth, then minimum pc (seed 003 §3.1).
    Arbiter,
    /// Per-thread pcs with a current and a runner-up execution position register (ARM's patent, seed 003
    /// §2.4).
    RunnerUp,
    /// Depth-first traversal with stack-depth minimisation: compiler fork/join regions, minority path
    /// first (seed 003 §2.2, AMD GCN).
    ForkJoin,
    /// Independent thread scheduling (Volta and later): per-thread pcs, compiler convergence barriers
    /// (`bssy`/`bsync`), yield for forward progress, warp-synchronous instructions that wait for members.
    Its,
    /// Thread frontiers: paths sorted by the compiler's block priority, merging wherever they meet
    /// (Diamos et al., MICRO'11; seed 003 §2.4).
    ThreadFrontiers,
    /// Dual-path execution: the PDOM stack's top entry holds two paths that both issue (Rhu & Erez,
    /// HPCA'13; seed 003 §2.5).
    DualPath,
    /// Multi-path IPDOM: a split table whose every path issues and a reconvergence table (ElTantawy et
    /// al., HPCA'14; seed 003 §2.5).
    MultiPath,
    /// Simultaneous branch interweaving with constraints: a sorted path list whose first two paths issue,
    /// convergence restricted to address intervals (Brunie, Collange & Diamos, ISCA'12; seed 003 §2.5).
    Sbi,
    /// SBI with simultaneous warp interweaving: the second instruction of a cycle may also come from
    /// another warp whose lanes, shuffled, are disjoint (Brunie, Collange & Diamos, ISCA'12).
    SbiSwi,
    /// HARP: every path issues; convergence by associative lookup in a convergence barrier table
    /// (Lashgar, Khonsari & Baniasadi, TECS 2014; seed 003 §2.5).
    Harp,
    /// Dynamic warp subdivision: divergent branches split a warp into independently scheduled warp-splits
    /// reconverging at the post-dominator (Meng, Tarjan & Skadron, ISCA'10).
    Dws,
    /// Stackless SIMT: per-thread pcs, compiler `syncwarp` at convergent blocks with a divergent
    /// predecessor, independent threads in between (seed 004 §5.2).
    Stackless,
    /// Stackless SIMT with dynamic convergence preservation: threads that branch alike stay together.
    StacklessDcp,
    /// The MIMD upper bound (Fung et al., MICRO'07): every thread its own pc; the timing model fills a
    /// cycle's W lanes with groups at any pcs. Not a mechanism: the ideal one is measured against.
    Mimd,
}

/// Every mechanism, in the order tables list them.
pub const REGISTRY: &[Entry] = &[
    Entry { mechanism: Mechanism::Pdom, info: &pdom::INFO },
    Entry { mechanism: Mechanism::Ssy, info: &ssy::INFO },
    Entry { mechanism: Mechanism::None, info: &none::INFO },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Majority, LutGeometry::PERFECT), info: &dwf::MAJORITY },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Minority, LutGeometry::PERFECT), info: &dwf::MINORITY },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Pc, LutGeometry::PERFECT), info: &dwf::PC },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Pdom, LutGeometry::PERFECT), info: &dwf::PDOM },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Fifo, LutGeometry::PERFECT), info: &dwf::FIFO },
    Entry { mechanism: Mechanism::DwfSm(LutGeometry::PERFECT), info: &dwf::SM_POOL_INFO },
    Entry { mechanism: Mechanism::Tbc, info: &tbc::INFO },
    Entry { mechanism: Mechanism::Capri, info: &capri::INFO },
    Entry { mechanism: Mechanism::TbcLpc, info: &tbc::LIKELY_INFO },
    Entry { mechanism: Mechanism::CapriLpc, info: &capri::LIKELY_INFO },
    Entry { mechanism: Mechanism::MinPc, info: &minpc::INFO },
    Entry { mechanism: Mechanism::Breadth, info: &breadth::INFO },
    Entry { mechanism: Mechanism::Hybrid, info: &hybrid::INFO },
    Entry { mechanism: Mechanism::Sorted(Priority::MinPc), info: &sorted::MIN_PC },
    Entry { mechanism: Mechanism::Sorted(Priority::Depth), info: &sorted::DEPTH },
    Entry { mechanism: Mechanism::Sorted(Priority::Majority), info: &sorted::MAJORITY },
    Entry { mechanism: Mechanism::Sorted(Priority::Minority), info: &sorted::MINORITY },
    Entry { mechanism: Mechanism::Maven { two_stacks: false }, info: &maven::ONE_STACK },
    Entry { mechanism: Mechanism::Maven { two_stacks: true }, info: &maven::TWO_STACK },
    Entry { mechanism: Mechanism::Simty, info: &simty::INFO },
    Entry { mechanism: Mechanism::Arbiter, info: &arbiter::INFO },
    Entry { mechanism: Mechanism::RunnerUp, info: &runner_up::INFO },
    Entry { mechanism: Mechanism::ThreadFrontiers, info: &frontier::INFO },
    Entry { mechanism: Mechanism::ForkJoin, info: &forkjoin::INFO },
    Entry { mechanism: Mechanism::DualPath, info: &dual_path::INFO },
    Entry { mechanism: Mechanism::MultiPath, info: &multi_path::INFO },
    Entry { mechanism: Mechanism::Sbi, info: &sbi::INFO },
    Entry { mechanism: Mechanism::SbiSwi, info: &sbi::SWI_INFO },
    Entry { mechanism: Mechanism::Harp, info: &harp::INFO },
    Entry { mechanism: Mechanism::Dws, info: &dws::INFO },
    Entry { mechanism: Mechanism::Its, info: &its::INFO },
    Entry { mechanism: Mechanism::Stackless, info: &stackless::INFO },
    Entry { mechanism: Mechanism::StacklessDcp, info: &stackless::DCP },
    Entry { mechanism: Mechanism::Mimd, info: &mimd::INFO },
];

/// A registry line: a mechanism and its facts.
#[derive(Debug)]
pub struct Entry {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Its facts.
    pub info: &'static Info,
}

/// Runs `$body` with `$t` bound to the [`Tracker`](crate::interface::Tracker) of mechanism `$m`: the one place a mechanism's name
/// becomes code. Each arm monomorphizes `$body` for one tracker, so the drivers' hot loops are generic
/// code with no dynamic dispatch.
#[macro_export]
macro_rules! with_tracker {
    ($m:expr, |$t:ident| $body:expr) => {{
        use $crate::{
            Arbiter, Breadth, Capri, CtaStack, DualPath, Dwf, ForkJoin, Its, Mechanism as M, MinPc, MultiPath,
            NoReconvergence, PathList, PdomStack, PerWarp, Simty, Slots, Sorted, SsyStack, Stackless, Tbc,
            ThreadFrontiers,
        };
        match $m {
            M::Pdom => {
                let $t = &PerWarp(PdomStack);
                $body
            }
            M::Ssy => {
                let $t = &PerWarp(SsyStack);
                $body
            }
            M::None => {
                let $t = &PerWarp(NoReconvergence);
                $body
            }
            M::Dwf(heuristic, lut) => {
                let $t = &Dwf::<false> { heuristic, lut };
                $body
            }
            M::DwfSm(lut) => {
                let $t = &Dwf::<true> { heuristic: $crate::Heuristic::Majority, lut };
                $body
            }
            M::Tbc => {
                let $t = &CtaStack(Tbc::<false>);
                $body
            }
            M::Capri => {
                let $t = &CtaStack(Capri::<false>);
                $body
            }
            M::TbcLpc => {
                let $t = &CtaStack(Tbc::<true>);
                $body
            }
            M::CapriLpc => {
                let $t = &CtaStack(Capri::<true>);
                $body
            }
            M::MinPc => {
                let $t = &PerWarp(PathList(MinPc));
                $body
            }
            M::Breadth => {
                let $t = &PerWarp(Breadth);
                $body
            }
            M::Hybrid => {
                let $t = &PerWarp($crate::Hybrid);
                $body
            }
            M::Maven { two_stacks: false } => {
                let $t = &PerWarp($crate::Maven::<false>);
                $body
            }
            M::Maven { two_stacks: true } => {
                let $t = &PerWarp($crate::Maven::<true>);
                $body
            }
            M::RunnerUp => {
                let $t = &PerWarp($crate::RunnerUp);
                $body
            }
            M::Sorted(p) => {
                let $t = &PerWarp(PathList(Sorted(p)));
                $body
            }
            M::Simty => {
                let $t = &PerWarp(Simty);
                $body
            }
            M::Arbiter => {
                let $t = &PerWarp(Arbiter);
                $body
            }
            M::ForkJoin => {
                let $t = &PerWarp(ForkJoin);
                $body
            }
            M::Its => {
                let $t = &PerWarp(Its);
                $body
            }
            M::ThreadFrontiers => {
                let $t = &PerWarp(PathList(ThreadFrontiers));
                $body
            }
            M::DualPath => {
                let $t = &Slots(DualPath);
                $body
            }
            M::MultiPath => {
                let $t = &Slots(MultiPath);
                $body
            }
            M::Sbi => {
                let $t = &Slots($crate::Sbi::<false>);
                $body
            }
            M::SbiSwi => {
                let $t = &Slots($crate::Sbi::<true>);
                $body
            }
            M::Harp => {
                let $t = &$crate::Harp;
                $body
            }
            M::Dws => {
                let $t = &Slots($crate::Dws);
                $body
            }
            M::Stackless => {
                let $t = &PerWarp(Stackless { dcp: false });
                $body
            }
            M::StacklessDcp => {
                let $t = &PerWarp(Stackless { dcp: true });
                $body
            }
            M::Mimd => {
                let $t = &$crate::Mimd;
                $body
            }
        }
    }};
}

impl Mechanism {
    /// Every mechanism, in the registry's order.
    pub const ALL: [Mechanism; REGISTRY.len()] = {
        let mut out = [Mechanism::Pdom; REGISTRY.len()];
        let mut i = 0;
        while i < REGISTRY.len() {
            out[i] = REGISTRY[i].mechanism;
            i += 1;
        }
        out
    };

    /// The mechanisms `suite`, `compare` and `report --all` run when none is named ([`Info::default`]).
    pub fn defaults() -> impl Iterator<Item = Mechanism> {
        REGISTRY.iter().filter(|e| e.info.default).map(|e| e.mechanism)
    }

    /// Its facts.
    pub fn info(self) -> &'static Info {
        let base = self.with_lut(LutGeometry::PERFECT);
        match REGISTRY.iter().find(|e| e.mechanism == base) {
            Some(e) => e.info,
            None => unreachable!("every mechanism has a registry line (checked by a test)"),
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Parses a command-line name or alias.
    pub fn from_name(s: &str) -> Option<Mechanism> {
        REGISTRY.iter().find(|e| e.info.name == s || e.info.aliases.contains(&s)).map(|e| e.mechanism)
    }

    /// This mechanism with its look-up table of `lut` (DWF's variants; every other mechanism has none and
    /// is returned as it is). The registry lists each mechanism with a perfect table.
    pub const fn with_lut(self, lut: LutGeometry) -> Mechanism {
        match self {
            Mechanism::Dwf(h, _) => Mechanism::Dwf(h, lut),
            Mechanism::DwfSm(_) => Mechanism::DwfSm(lut),
            m => m,
        }
    }

    /// The geometry of the mechanism's look-up table, if it has one.
    pub fn lut(self) -> Option<LutGeometry> {
        match self {
            Mechanism::Dwf(_, lut) | Mechanism::DwfSm(lut) => Some(lut),
            _ => None,
        }
    }

    /// Where the mechanism keeps its state: per static warp, per CTA, or per SM.
    pub fn scope(self) -> Scope {
        self.info().scope
    }

    /// Whether the mechanism reads seed 004's per-pc divergence flags (`Program::divergent`).
    pub fn needs_divergence(self) -> bool {
        self.info().reads_divergence
    }

    /// The compiler pass the program goes through before it runs under this mechanism, if any.
    pub fn pass(self) -> Option<Pass> {
        self.info().pass
    }
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a mechanism is, as the rest of the program needs to know it.
#[derive(Debug)]
pub struct Info {
    /// The command-line name (also the name in statistics, CSV and JSON).
    pub name: &'static str,
    /// Other names the command line and the Python package accept for it.
    pub aliases: &'static [&'static str],
    /// What it is, in one line.
    pub summary: &'static str,
    /// Where it keeps its state.
    pub scope: Scope,
    /// The compiler pass the program goes through first, if any.
    pub pass: Option<Pass>,
    /// Whether it reads seed 004's per-pc divergence flags (`Program::divergent`).
    pub reads_divergence: bool,
    /// Whether `suite`, `compare` and `report --all` run it when no mechanism is named. Variants that
    /// differ only in an issue heuristic, an extension or their hardware (DWF's other heuristics and its
    /// SM-wide pool, the likely-convergence variants, `arbiter` and `maven:1-stack`, which issue exactly
    /// `sorted:depth`'s and `sorted:minpc`'s sequences) are left out to keep the default tables readable.
    pub default: bool,
    /// Whether it is one of seed 003's path-tracking units, whose per-warp path trace the hardware test
    /// benches replay (`trace --export-paths`).
    pub exports_paths: bool,
    /// What its hardware stores ([`crate::storage`]): every structure, sized for a geometry. Empty only
    /// while a new mechanism's declaration is missing, which a test rejects.
    pub storage: &'static [crate::storage::Part],
}

impl Info {
    /// A mechanism in the default set with no aliases, no compiler pass, that reads no divergence flags
    /// and exports no path trace; the methods below say otherwise.
    pub const fn new(name: &'static str, scope: Scope, summary: &'static str) -> Info {
        Info {
            name,
            aliases: &[],
            summary,
            scope,
            pass: None,
            reads_divergence: false,
            default: true,
            exports_paths: false,
            storage: &[],
        }
    }

    /// What its hardware stores: its structures ([`crate::storage::Part`]).
    pub const fn storage(mut self, parts: &'static [crate::storage::Part]) -> Info {
        self.storage = parts;
        self
    }

    /// Other names the command line accepts.
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Info {
        self.aliases = aliases;
        self
    }

    /// The compiler pass the program goes through first.
    pub const fn pass(mut self, pass: Pass) -> Info {
        self.pass = Some(pass);
        self
    }

    /// It reads seed 004's per-pc divergence flags.
    pub const fn reads_divergence(mut self) -> Info {
        self.reads_divergence = true;
        self
    }

    /// Not in the default set ([`Info::default`]).
    pub const fn outside_defaults(mut self) -> Info {
        self.default = false;
        self
    }

    /// A path-tracking unit of seed 003 whose path trace the hardware test benches replay.
    pub const fn exports_paths(mut self) -> Info {
        self.exports_paths = true;
        self
    }
}

/// Every name the command line accepts, aliases in parentheses after their mechanism's name (for help
/// and error messages).
pub fn known_names() -> String {
    REGISTRY
        .iter()
        .map(|e| match e.info.aliases {
            [] => e.info.name.to_string(),
            aliases => format!("{} ({})", e.info.name, aliases.join(", ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_up_table_is_a_parameter_of_dwf_only() {
        let lut = LutGeometry { entries: 64, ways: 4 };
        let dwf = Mechanism::from_name("dwf:sm").expect("registered").with_lut(lut);
        assert_eq!((dwf.lut(), dwf.name()), (Some(lut), "dwf:sm"));
        assert_eq!(Mechanism::Tbc.with_lut(lut), Mechanism::Tbc);
        assert_eq!(Mechanism::Tbc.lut(), None);
    }

    #[test]
    fn every_mechanism_has_one_line_and_every_name_is_unique() {
        for (i, e) in REGISTRY.iter().enumerate() {
            assert_eq!(Mechanism::ALL[i], e.mechanism);
            assert_eq!(REGISTRY.iter().filter(|x| x.mechanism == e.mechanism).count(), 1, "{}", e.info.name);
            assert!(!e.info.summary.is_empty() && !e.info.summary.contains('\n'), "{}", e.info.name);
        }
        let mut names: Vec<&str> =
            REGISTRY.iter().flat_map(|e| std::iter::once(e.info.name).chain(e.info.aliases.iter().copied())).collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a name or alias is used twice");
        for name in names {
            let m = Mechanism::from_name(name).expect("parses");
            assert!(m.name() == name || m.info().aliases.contains(&name));
        }
    }

    #[test]
    fn every_mechanism_declares_its_storage() {
        let g = crate::storage::Geometry::GTX480;
        for e in REGISTRY {
            assert!(!e.info.storage.is_empty(), "{} declares no storage (`.storage(&[...])` in its file)", e.info.name);
            for p in e.info.storage {
                assert!(p.sm_bits(&g, None) > 0, "{}: {} has no bits", e.info.name, p.name);
                assert!(!p.name.is_empty() && p.fields.starts_with('{'), "{}: {}", e.info.name, p.name);
            }
        }
    }

    /// The names of `T`'s counters, per-branch counters and ratios, each list in order.
    fn counter_names<T: crate::Tracker>(_: &T) -> [Vec<&'static str>; 3] {
        [
            T::COUNTERS.iter().map(|c| c.name).collect(),
            T::BRANCH_COUNTERS.iter().map(|c| c.name).collect(),
            T::RATIOS.iter().map(|r| r.name).collect(),
        ]
    }

    #[test]
    fn each_mechanism_s_counter_names_are_unique() {
        for m in Mechanism::ALL {
            for list in crate::with_tracker!(m, |t| counter_names(t)) {
                let mut names = list.clone();
                names.sort_unstable();
                names.dedup();
                assert_eq!(names.len(), list.len(), "{m}: a counter name is used twice in {list:?}");
            }
        }
    }

    #[test]
    fn the_tracker_of_each_mechanism_answers_to_its_registry_name() {
        for m in Mechanism::ALL {
            crate::with_tracker!(m, |t| assert_eq!(crate::Tracker::name(t), m.name()));
        }
    }
}
