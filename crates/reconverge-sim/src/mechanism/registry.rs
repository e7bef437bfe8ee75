//! The registry: every mechanism's facts, declared once in the mechanism's own file ([`Info`]) and
//! listed here once ([`REGISTRY`]). Every list of mechanisms a user sees derives from it: the command
//! line's names, aliases, help and error messages ([`Mechanism::from_name`], [`known_names`]), the default
//! sets of `suite`, `compare` and `report --all` ([`Mechanism::defaults`]), the fuzzer and the tests
//! ([`Mechanism::ALL`]), and the Python package's `mechanisms()`.
//!
//! Adding a mechanism: its file (the tracker and its `Info`), one [`Mechanism`] variant, one registry line
//! and one arm of [`with_tracker!`](crate::with_tracker).

use super::{arbiter, breadth, capri, dual_path, dwf, forkjoin, frontier, its, minpc, multi_path, none, pdom};
use super::{simty, sorted, ssy, stackless, tbc, Heuristic, Mechanism, Pass, Priority, Scope};

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
    /// SM-wide pool, the likely-convergence variants, `arbiter`, which issues exactly `sorted:depth`'s
    /// sequence) are left out to keep the default tables readable.
    pub default: bool,
    /// Whether it is one of seed 003's path-tracking units, whose per-warp path trace the hardware test
    /// benches replay (`trace --export-paths`).
    pub exports_paths: bool,
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
        }
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

/// A registry line: a mechanism and its facts.
#[derive(Debug)]
pub struct Entry {
    /// The mechanism.
    pub mechanism: Mechanism,
    /// Its facts.
    pub info: &'static Info,
}

/// Every mechanism, in the order tables list them.
pub const REGISTRY: [Entry; 28] = [
    Entry { mechanism: Mechanism::Pdom, info: &pdom::INFO },
    Entry { mechanism: Mechanism::Ssy, info: &ssy::INFO },
    Entry { mechanism: Mechanism::None, info: &none::INFO },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Majority), info: &dwf::MAJORITY },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Minority), info: &dwf::MINORITY },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Pc), info: &dwf::PC },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Pdom), info: &dwf::PDOM },
    Entry { mechanism: Mechanism::Dwf(Heuristic::Fifo), info: &dwf::FIFO },
    Entry { mechanism: Mechanism::DwfSm, info: &dwf::SM_POOL_INFO },
    Entry { mechanism: Mechanism::Tbc, info: &tbc::INFO },
    Entry { mechanism: Mechanism::Capri, info: &capri::INFO },
    Entry { mechanism: Mechanism::TbcLpc, info: &tbc::LIKELY_INFO },
    Entry { mechanism: Mechanism::CapriLpc, info: &capri::LIKELY_INFO },
    Entry { mechanism: Mechanism::MinPc, info: &minpc::INFO },
    Entry { mechanism: Mechanism::Breadth, info: &breadth::INFO },
    Entry { mechanism: Mechanism::Sorted(Priority::MinPc), info: &sorted::MIN_PC },
    Entry { mechanism: Mechanism::Sorted(Priority::Depth), info: &sorted::DEPTH },
    Entry { mechanism: Mechanism::Sorted(Priority::Majority), info: &sorted::MAJORITY },
    Entry { mechanism: Mechanism::Sorted(Priority::Minority), info: &sorted::MINORITY },
    Entry { mechanism: Mechanism::Simty, info: &simty::INFO },
    Entry { mechanism: Mechanism::Arbiter, info: &arbiter::INFO },
    Entry { mechanism: Mechanism::ThreadFrontiers, info: &frontier::INFO },
    Entry { mechanism: Mechanism::ForkJoin, info: &forkjoin::INFO },
    Entry { mechanism: Mechanism::DualPath, info: &dual_path::INFO },
    Entry { mechanism: Mechanism::MultiPath, info: &multi_path::INFO },
    Entry { mechanism: Mechanism::Its, info: &its::INFO },
    Entry { mechanism: Mechanism::Stackless, info: &stackless::INFO },
    Entry { mechanism: Mechanism::StacklessDcp, info: &stackless::DCP },
];

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
        match REGISTRY.iter().find(|e| e.mechanism == self) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_tracker_of_each_mechanism_answers_to_its_registry_name() {
        for m in Mechanism::ALL {
            crate::with_tracker!(m, |t| assert_eq!(crate::mechanism::Tracker::name(t), m.name()));
        }
    }
}
