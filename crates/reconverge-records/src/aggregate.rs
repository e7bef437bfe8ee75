//! The statistics of several launches as one: [`accumulate`] adds one launch's statistics object (the
//! JSON of `reconverge run --json`, which the Python package's launches return too) to a running total,
//! each key by its [`Kind`] as the table [`KINDS`] declares it: counts are summed, maxima take the
//! largest value, ratios are recomputed from their summed numerator and denominator, nested objects are
//! merged member by member with the same rules. The members of objects of counts (`by_class`,
//! `stall_cycles`, `memory`, ...: [`COUNT_OBJECTS`]) are the fields of their statistics types, each
//! summed; the mechanism's counters combine as the mechanism declares them. A key that neither the table
//! nor a type knows is an error ([`AggregateError::UnknownKey`]), so a statistic added later cannot be
//! summed by accident.
//!
//! Some ratios' numerators or denominators are not statistics of their own (`ipc` is issued instructions
//! over cycles, `issue_utilization` issued instructions over issue slots, seed 004's convergent shares
//! convergent thread instructions over thread instructions). A front end that aggregates adds them to each
//! launch's object under the hidden key [`HIDDEN`] ([`hidden_counts`] builds it); they are summed like
//! any count. The per-key rules are documented in `docs/python.md` ("How `Device.stats` combines
//! launches").

use reconverge_mechanism::{Agg, Mechanism, Tracker};
use reconverge_sim::Stats;
use reconverge_timing::TimingStats;
use serde_json::{Map, Value};
use std::fmt;

/// The key of the hidden counts ([`hidden_counts`]) in a launch's statistics and in a total.
pub const HIDDEN: &str = "_counts";

/// The key [`accumulate`] counts the launches of a total under.
pub const LAUNCHES: &str = "launches";

/// A sum of statistics (paths from the root of the object, `.` between levels), optionally multiplied by
/// the total's `warp_size` (lane slots: `kernel_instructions × warp_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The statistics summed.
    pub paths: &'static [&'static str],
    /// Multiplied by `warp_size`.
    pub per_lane: bool,
}

/// How a statistic combines over launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A count: summed (`null` plus a number is the number).
    Sum,
    /// A physical quantity (joules, seconds): summed as a real number.
    Quantity,
    /// `num / den` of two [`Kind::Quantity`] statistics, recomputed from the totals (0 where `den` is 0):
    /// average power.
    Quotient {
        /// The numerator's path.
        num: &'static str,
        /// The denominator's path.
        den: &'static str,
    },
    /// `a × b` of two [`Kind::Quantity`] statistics, recomputed from the totals: the energy-delay product.
    Product {
        /// One factor's path.
        a: &'static str,
        /// The other's.
        b: &'static str,
    },
    /// A maximum: the largest value (`null` where no launch has one).
    Max,
    /// Equal in every launch (the mechanism, the warp size): a launch that differs is an error.
    Same,
    /// A description (the kernel, the configuration): the last launch's.
    Last,
    /// `true` when any launch's is (`partial`).
    Any,
    /// The outcome: `completed` while every launch completed, else the first launch's that did not.
    Outcome,
    /// The first launch's that is not `null` (`error`).
    First,
    /// `num / den` recomputed from the totals; `zero` where `den` is 0.
    Ratio {
        /// The numerator.
        num: Operand,
        /// The denominator.
        den: Operand,
        /// The value when the denominator is 0.
        zero: Zero,
    },
    /// `1 − part / whole` recomputed from the totals, `null` where `whole` is 0 (seed 004's reductions).
    Saving {
        /// The scalarized count.
        part: Operand,
        /// The baseline count.
        whole: Operand,
    },
    /// A nested object: every member by its own kind (`parent.member` in the table, or a field of the
    /// object's type for [`COUNT_OBJECTS`]).
    Object,
    /// A list of counts, summed index by index (the longer list's length).
    Elementwise,
    /// The mechanism's counters: each by the aggregation the mechanism declares for it (summed or the
    /// maximum), its ratios recomputed from the totals of their counters (`null` where the denominator
    /// is 0).
    MechanismCounters,
    /// `branches_by_pc`: entries of the same branch (function, pc and PTX line) merged by
    /// [`BRANCH_KINDS`], other branches appended in order.
    Branches,
}

/// What a ratio is when its denominator is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zero {
    /// `0.0` (the statistics that are numbers in every run).
    Naught,
    /// `null`.
    Null,
}

/// Every key of a run's statistics and how it combines, parents before their members. Ratios name the
/// statistics they are recomputed from.
pub static KINDS: &[(&str, Kind)] = &[
    ("outcome", Kind::Outcome),
    ("partial", Kind::Any),
    ("mechanism", Kind::Same),
    ("warp_size", Kind::Same),
    ("cycles", Kind::Sum),
    ("warp_instructions", Kind::Sum),
    ("thread_instructions", Kind::Sum),
    ("kernel_instructions", Kind::Sum),
    ("kernel_thread_instructions", Kind::Sum),
    ("mechanism_instructions", Kind::Sum),
    ("mechanism_thread_instructions", Kind::Sum),
    ("simd_efficiency", ratio(&["kernel_thread_instructions"], &["kernel_instructions"], true, Zero::Naught)),
    ("simd_efficiency_all", ratio(&["thread_instructions"], &["warp_instructions"], true, Zero::Naught)),
    ("ipc", ratio(&["_counts.issued"], &["cycles"], false, Zero::Naught)),
    ("max_stack_depth", Kind::Max),
    ("max_paths", Kind::Max),
    ("max_pool_warps", Kind::Max),
    ("branches", Kind::Sum),
    ("divergent_branches", Kind::Sum),
    ("barriers", Kind::Sum),
    ("lane_histogram", Kind::Elementwise),
    ("by_class", Kind::Object),
    ("ctas", Kind::Sum),
    ("threads", Kind::Sum),
    ("kernel", Kind::Last),
    ("error", Kind::First),
    ("mechanism_counters", Kind::MechanismCounters),
    ("branches_by_pc", Kind::Branches),
    ("scalarization", Kind::Object),
    ("scalarization.warp_size", Kind::Same),
    ("scalarization.thread_instructions", Kind::Sum),
    ("scalarization.convergent_share", Kind::Object),
    ("scalarization.convergent_share.ca", share(&["_counts.convergent.ca"])),
    ("scalarization.convergent_share.ca_va", share(&["_counts.convergent.ca_va"])),
    ("scalarization.convergent_share.exit", share(&["_counts.convergent.exit"])),
    ("scalarization.convergent_share.dcp", share(&["_counts.convergent.dcp"])),
    ("scalarization.convergent_share.oracle", share(&["_counts.convergent.oracle"])),
    ("scalarization.oracle_exact", ratio(&["_counts.oracle_exact"], &["_counts.divergent"], false, Zero::Null)),
    ("scalarization.oracle_over_budget", Kind::Sum),
    ("scalarization.issued", Kind::Object),
    ("scalarization.baseline", Kind::Object),
    ("scalarization.scalarized", Kind::Object),
    ("scalarization.reduction", Kind::Object),
    (
        "scalarization.reduction.operations",
        saving(&["scalarization.scalarized.operations"], &["scalarization.baseline.operations"]),
    ),
    (
        "scalarization.reduction.register_reads",
        saving(&["scalarization.scalarized.register_reads"], &["scalarization.baseline.register_reads"]),
    ),
    (
        "scalarization.reduction.register_writes",
        saving(&["scalarization.scalarized.register_writes"], &["scalarization.baseline.register_writes"]),
    ),
    (
        "scalarization.reduction.register_accesses",
        saving(
            &["scalarization.scalarized.register_reads", "scalarization.scalarized.register_writes"],
            &["scalarization.baseline.register_reads", "scalarization.baseline.register_writes"],
        ),
    ),
    (
        "scalarization.reduction.address_counts",
        saving(&["scalarization.scalarized.address_counts"], &["scalarization.baseline.address_counts"]),
    ),
    (
        "scalarization.reduction.data_accesses",
        saving(&["scalarization.scalarized.data_accesses"], &["scalarization.baseline.data_accesses"]),
    ),
    ("issue_utilization", ratio(&["_counts.issued_in_slots"], &["_counts.issue_slots"], false, Zero::Naught)),
    ("latency_hiding_issues", Kind::Sum),
    ("warp_co_issues", Kind::Sum),
    ("lane_ops", Kind::Sum),
    ("stall_cycles", Kind::Object),
    ("l1_hit_rate", ratio(&["memory.l1_hits"], &["memory.l1_accesses"], false, Zero::Naught)),
    ("l2_hit_rate", ratio(&["memory.l2_hits"], &["memory.l2_accesses"], false, Zero::Naught)),
    ("dram_transactions", Kind::Sum),
    ("memory", Kind::Object),
    ("memory.dram", Kind::Object),
    ("datapath", Kind::Object),
    ("energy", Kind::Object),
    ("energy.total_j", Kind::Quantity),
    ("energy.seconds", Kind::Quantity),
    ("energy.average_power_w", Kind::Quotient { num: "energy.total_j", den: "energy.seconds" }),
    ("energy.edp_js", Kind::Product { a: "energy.total_j", b: "energy.seconds" }),
    ("energy.components_j", Kind::Object),
    ("sm_cycles", Kind::Elementwise),
    ("sampled", Kind::Object),
    ("sampled.cycles", Kind::Sum),
    ("sampled.cycles_error", Kind::Sum),
    ("sampled.timed_launches", Kind::Sum),
    ("sampled.estimated_launches", Kind::Sum),
    ("cta_sample", Kind::Object),
    ("cta_sample.ctas", Kind::Sum),
    ("cta_sample.skipped_ctas", Kind::Sum),
    ("cta_sample.skips", Kind::Sum),
    ("cta_sample.windows", Kind::Sum),
    ("cta_sample.timed_warp_instructions", Kind::Sum),
    ("cta_sample.skipped_warp_instructions", Kind::Sum),
    ("cta_sample.work", Kind::Last),
    ("cta_sample.measured_work", Kind::Sum),
    ("cta_sample.measured_cycles", Kind::Sum),
    ("cta_sample.skipped_work", Kind::Sum),
    ("cta_sample.skipped_cycles", Kind::Sum),
    ("cta_sample.spread_cycles", Kind::Sum),
    ("epochs", Kind::Sum),
    ("epoch_cycles", Kind::Last),
    ("occupancy", Kind::Last),
    ("config", Kind::Last),
    (LAUNCHES, Kind::Sum),
    (HIDDEN, Kind::Object),
    ("_counts.issued", Kind::Sum),
    ("_counts.issue_slots", Kind::Sum),
    ("_counts.issued_in_slots", Kind::Sum),
    ("_counts.divergent", Kind::Sum),
    ("_counts.oracle_exact", Kind::Sum),
    ("_counts.convergent", Kind::Object),
];

/// The members of a `branches_by_pc` entry. `function`, `pc` and `ptx_line` say which branch it is;
/// `mean_active_lanes` is recomputed from the active lanes (`mean_active_lanes × executions`, an exact
/// integer) over the summed executions.
pub static BRANCH_KINDS: &[(&str, Kind)] = &[
    ("pc", Kind::Same),
    ("ptx_line", Kind::Same),
    ("function", Kind::Same),
    ("cuda_file", Kind::Last),
    ("cuda_line", Kind::Last),
    ("executions", Kind::Sum),
    ("divergent", Kind::Sum),
    ("mean_active_lanes", Kind::Last),
    ("reconvergence_pc", Kind::Last),
    ("mechanism", Kind::Object),
];

/// A ratio of sums.
const fn ratio(num: &'static [&'static str], den: &'static [&'static str], per_lane: bool, zero: Zero) -> Kind {
    Kind::Ratio { num: Operand { paths: num, per_lane: false }, den: Operand { paths: den, per_lane }, zero }
}

/// A share of seed 004's thread instructions.
const fn share(num: &'static [&'static str]) -> Kind {
    ratio(num, &["scalarization.thread_instructions"], false, Zero::Naught)
}

/// `1 − part / whole`.
const fn saving(part: &'static [&'static str], whole: &'static [&'static str]) -> Kind {
    Kind::Saving { part: Operand { paths: part, per_lane: false }, whole: Operand { paths: whole, per_lane: false } }
}

/// Objects of counts whose members are the fields of a statistics type, each summed: the type declares
/// them, so they need no rule of their own in [`KINDS`] (which lists the object itself, as
/// [`Kind::Object`]). A key the type lacks is still unknown.
pub static COUNT_OBJECTS: &[(&str, Counts)] = &[
    ("by_class", Counts::Class),
    ("scalarization.issued", Counts::Issued),
    ("scalarization.baseline", Counts::Activity),
    ("scalarization.scalarized", Counts::Activity),
    ("stall_cycles", Counts::Stalls),
    ("memory", Counts::Memory),
    ("memory.dram", Counts::Dram),
    ("datapath", Counts::Datapath),
    ("_counts.convergent", Counts::Convergent),
];

/// A statistics type whose every field is a count ([`COUNT_OBJECTS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counts {
    /// [`reconverge_sim::stats::ClassCounts`]: warp instructions by class.
    Class,
    /// [`reconverge_sim::scalarize::IssuedSplit`]: seed 004's issued groups by kind.
    Issued,
    /// [`reconverge_sim::scalarize::Activity`]: seed 004's operations, register and memory accesses.
    Activity,
    /// [`reconverge_timing::stats::StallCounts`]: stall cycles by cause.
    Stalls,
    /// [`reconverge_timing::stats::MemoryCounters`]: the memory hierarchy's counters.
    Memory,
    /// [`reconverge_sim::scalarize::ConvergentCounts`]: seed 004's convergent thread instructions.
    Convergent,
    /// [`reconverge_timing::memsys::DramStats`]: banked DRAM's row-buffer and command counters.
    Dram,
    /// [`reconverge_timing::DatapathActivity`]: lanes by unit, register-file accesses, fetches.
    Datapath,
}

impl Counts {
    /// The members: the type's fields, as its statistics name them (its serialised default's keys).
    pub fn members(self) -> &'static [String] {
        use reconverge_sim::scalarize::{Activity, ConvergentCounts, IssuedSplit};
        use reconverge_timing::stats::{MemoryCounters, StallCounts};
        fn names<T: serde::Serialize + Default>() -> Vec<String> {
            match serde_json::to_value(T::default()) {
                Ok(Value::Object(m)) => m.keys().cloned().collect(),
                _ => Vec::new(),
            }
        }
        static MEMBERS: std::sync::OnceLock<[Vec<String>; 8]> = std::sync::OnceLock::new();
        let all = MEMBERS.get_or_init(|| {
            [
                names::<reconverge_sim::stats::ClassCounts>(),
                names::<IssuedSplit>(),
                names::<Activity>(),
                names::<StallCounts>(),
                names::<MemoryCounters>(),
                names::<ConvergentCounts>(),
                names::<reconverge_timing::memsys::DramStats>(),
                names::<reconverge_timing::DatapathActivity>(),
            ]
        });
        &all[self as usize]
    }
}

/// The kind of the statistic at `path` (`stall_cycles.memory`), if the table has it or it is a member
/// of a count object ([`COUNT_OBJECTS`], then a [`Kind::Sum`]).
pub fn kind_of(path: &str) -> Option<Kind> {
    if let Some((_, k)) = KINDS.iter().find(|(p, _)| *p == path) {
        return Some(*k);
    }
    let (parent, member) = path.rsplit_once('.')?;
    if parent == "energy.components_j" {
        let known = reconverge_energy::Component::ALL.iter().any(|c| c.name() == member);
        return known.then_some(Kind::Quantity);
    }
    let (_, counts) = COUNT_OBJECTS.iter().find(|(p, _)| *p == parent)?;
    counts.members().iter().any(|m| m == member).then_some(Kind::Sum)
}

/// Why statistics cannot be combined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AggregateError {
    /// A key [`KINDS`] (or the mechanism's counters) does not list.
    UnknownKey(String),
    /// A statistic of kind [`Kind::Same`] differs between the total and the launch.
    Mismatch {
        /// The statistic.
        key: String,
        /// The total's value.
        total: String,
        /// The launch's value.
        launch: String,
    },
    /// A statistic that is not of the type its kind needs.
    Type {
        /// The statistic.
        key: String,
        /// What its kind needs.
        expected: &'static str,
        /// What it is.
        found: String,
    },
    /// A ratio whose numerator or denominator the statistics lack (a launch without [`HIDDEN`]).
    MissingOperand {
        /// The ratio.
        key: String,
        /// The statistic it needs.
        operand: String,
    },
    /// A `mechanism` that names no mechanism (its counters cannot be combined).
    UnknownMechanism(String),
}

impl fmt::Display for AggregateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AggregateError::UnknownKey(k) => write!(
                f,
                "statistic `{k}` has no aggregation rule (add it to the table of reconverge_records::aggregate)"
            ),
            AggregateError::Mismatch { key, total, launch } => {
                write!(f, "statistic `{key}` differs between launches ({total} and {launch}): they cannot be combined")
            }
            AggregateError::Type { key, expected, found } => {
                write!(f, "statistic `{key}` is {found}, expected {expected}")
            }
            AggregateError::MissingOperand { key, operand } => {
                write!(f, "statistic `{key}` is recomputed from `{operand}`, which the statistics lack")
            }
            AggregateError::UnknownMechanism(m) => write!(f, "statistics of an unknown mechanism `{m}`"),
        }
    }
}

impl std::error::Error for AggregateError {}

/// The counters a mechanism declares: its own, their ratios, and those it keeps per branch.
#[derive(Clone, Copy, Debug)]
struct Declared {
    counters: &'static [reconverge_mechanism::Counter],
    ratios: &'static [reconverge_mechanism::Ratio],
    branch: &'static [reconverge_mechanism::Counter],
}

fn declared_by<T: Tracker>(_: &T) -> Declared {
    Declared { counters: T::COUNTERS, ratios: T::RATIOS, branch: T::BRANCH_COUNTERS }
}

fn declared(name: &str) -> Result<Declared, AggregateError> {
    let m = Mechanism::from_name(name).ok_or_else(|| AggregateError::UnknownMechanism(name.to_string()))?;
    Ok(reconverge_mechanism::with_tracker!(m, |t| declared_by(t)))
}

/// Adds one launch's statistics (or another total) to `total`, each key by its [`Kind`], and counts the
/// launches under [`LAUNCHES`] (a launch's object counts 1, a total its own `launches`). On an error
/// `total` is left as it was.
pub fn accumulate(total: &mut Map<String, Value>, launch: &Map<String, Value>) -> Result<(), AggregateError> {
    let declared = match launch.get("mechanism") {
        Some(Value::String(m)) => Some(declared(m)?),
        _ => None,
    };
    let mut next = total.clone();
    merge_object(&mut next, launch, "", declared)?;
    let before = total.get(LAUNCHES).and_then(Value::as_u64).unwrap_or(0);
    let added = launch.get(LAUNCHES).and_then(Value::as_u64).unwrap_or(1);
    next.insert(LAUNCHES.into(), (before + added).into());
    recompute(&mut next)?;
    *total = next;
    Ok(())
}

/// One kernel's launches combined: its name and the total ([`accumulate`] over its launches).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTotal {
    /// The kernel (as the launches name it).
    pub kernel: String,
    /// Its launches' statistics combined by kind, with the launch count under [`LAUNCHES`].
    pub stats: Map<String, Value>,
}

/// The keys a whole program's launch lines add to a run's statistics (`reconverge exec`): they say which
/// launch it was (and, under `--sample`, which cluster of launches it belongs to) and are not statistics,
/// so totals leave them out.
pub const LAUNCH_KEYS: [&str; 6] = ["launch", "grid", "block", "dynamic_shared", "stream", "sample_cluster"];

/// Per-kernel totals built one launch at a time, in memory that depends on the kernels (and their
/// branches), never on the number of launches: what `reconverge exec` keeps while a program runs.
#[derive(Clone, Debug, Default)]
pub struct PerKernel {
    /// The totals, in order of first launch.
    totals: Vec<KernelTotal>,
    /// Each kernel's index in `totals`.
    index: std::collections::HashMap<String, usize>,
}

impl PerKernel {
    /// No launches yet.
    pub fn new() -> PerKernel {
        PerKernel::default()
    }

    /// Adds one launch line (a run's statistics plus [`LAUNCH_KEYS`], which are left out) to its
    /// kernel's total (a launch without `kernel` counts for the kernel `?`). On an error the totals are
    /// left as they were.
    pub fn add(&mut self, mut launch: Map<String, Value>) -> Result<(), AggregateError> {
        let name = launch.get("kernel").and_then(Value::as_str).unwrap_or("?").to_string();
        for k in LAUNCH_KEYS {
            launch.remove(k);
        }
        let i = match self.index.get(&name) {
            Some(&i) => i,
            None => {
                let mut stats = Map::new();
                accumulate(&mut stats, &launch)?;
                self.index.insert(name.clone(), self.totals.len());
                self.totals.push(KernelTotal { kernel: name, stats });
                return Ok(());
            }
        };
        accumulate(&mut self.totals[i].stats, &launch)
    }

    /// The totals so far, in order of first launch.
    pub fn totals(&self) -> &[KernelTotal] {
        &self.totals
    }

    /// The totals, in order of first launch.
    pub fn into_totals(self) -> Vec<KernelTotal> {
        self.totals
    }
}

/// Per kernel, in order of first launch: its launches' statistics combined by kind ([`PerKernel`] over
/// `launches`).
pub fn per_kernel(launches: &[Map<String, Value>]) -> Result<Vec<KernelTotal>, AggregateError> {
    let mut p = PerKernel::new();
    for l in launches {
        p.add(l.clone())?;
    }
    Ok(p.into_totals())
}

/// Checks that every key of `stats` has a rule (the check [`accumulate`] makes before it combines).
pub fn check_keys(stats: &Map<String, Value>) -> Result<(), AggregateError> {
    let declared = match stats.get("mechanism") {
        Some(Value::String(m)) => Some(declared(m)?),
        _ => None,
    };
    merge_object(&mut Map::new(), stats, "", declared)
}

/// `stats` without the hidden counts ([`HIDDEN`]), as a user sees them.
pub fn visible(stats: &Map<String, Value>) -> Map<String, Value> {
    stats.iter().filter(|(k, _)| k.as_str() != HIDDEN).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// The hidden counts ([`HIDDEN`]) of a run: the numerators and denominators of its ratios that are not
/// statistics of their own (issued instructions, issue slots and the instructions issued in them, of a
/// timed run; seed 004's convergent, divergent and exactly solved thread instructions).
pub fn hidden_counts(stats: &Stats, timing: Option<&TimingStats>) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(t) = timing {
        m.insert("issued".into(), t.issued.into());
        m.insert("issue_slots".into(), t.issue_slots.into());
        // A launch sampled by CTAs had issue slots only while timed.
        let skipped = t.sample.as_ref().map_or(0, |s| s.skipped_warp_instructions);
        m.insert("issued_in_slots".into(), (t.issued - skipped).into());
    }
    if let Some(z) = &stats.scalarization {
        m.insert("divergent".into(), z.divergent.into());
        m.insert("oracle_exact".into(), z.oracle_exact.into());
        m.insert("convergent".into(), serde_json::to_value(z.convergent).unwrap_or_default());
    }
    m
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => format!("the string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn type_error(key: &str, expected: &'static str, found: &Value) -> AggregateError {
    AggregateError::Type { key: key.to_string(), expected, found: describe(found) }
}

/// `a + b` for counts (`null` counts nothing).
fn add(key: &str, a: Option<&Value>, b: &Value) -> Result<Value, AggregateError> {
    let count = |v: &Value| match v {
        Value::Null => Ok(None),
        _ => v.as_u64().map(Some).ok_or_else(|| type_error(key, "a count", v)),
    };
    let a = a.map_or(Ok(None), count)?;
    Ok(match (a, count(b)?) {
        (None, None) => Value::Null,
        (x, y) => x.unwrap_or(0).saturating_add(y.unwrap_or(0)).into(),
    })
}

/// `a + b` as real numbers (`null` plus a number is the number).
fn add_real(key: &str, a: Option<&Value>, b: &Value) -> Result<Value, AggregateError> {
    let real = |v: &Value| match v {
        Value::Null => Ok(None),
        _ => v.as_f64().map(Some).ok_or_else(|| type_error(key, "a number", v)),
    };
    let a = a.map_or(Ok(None), real)?;
    Ok(match (a, real(b)?) {
        (None, None) => Value::Null,
        (x, y) => (x.unwrap_or(0.0) + y.unwrap_or(0.0)).into(),
    })
}

/// The larger of `a` and `b` (`null` is smaller than every number).
fn max(key: &str, a: Option<&Value>, b: &Value) -> Result<Value, AggregateError> {
    let count = |v: &Value| match v {
        Value::Null => Ok(None),
        _ => v.as_u64().map(Some).ok_or_else(|| type_error(key, "a whole number", v)),
    };
    let a = a.map_or(Ok(None), count)?;
    Ok(match a.max(count(b)?) {
        None => Value::Null,
        Some(x) => x.into(),
    })
}

/// Merges `launch` into `total` by the kinds of `prefix` + key.
fn merge_object(
    total: &mut Map<String, Value>,
    launch: &Map<String, Value>,
    prefix: &str,
    declared: Option<Declared>,
) -> Result<(), AggregateError> {
    for (key, v) in launch {
        let path = format!("{prefix}{key}");
        if path == LAUNCHES {
            continue;
        }
        let kind = kind_of(&path).ok_or_else(|| AggregateError::UnknownKey(path.clone()))?;
        let old = total.get(key);
        let new = match kind {
            Kind::Sum => add(&path, old, v)?,
            Kind::Quantity => add_real(&path, old, v)?,
            Kind::Max => max(&path, old, v)?,
            Kind::Same => match old {
                Some(o) if !o.is_null() && o != v => {
                    return Err(AggregateError::Mismatch { key: path, total: o.to_string(), launch: v.to_string() })
                }
                _ => v.clone(),
            },
            Kind::Last => v.clone(),
            Kind::Any => {
                let b = |x: &Value| x.as_bool().ok_or_else(|| type_error(&path, "a boolean", x));
                Value::Bool(old.map_or(Ok(false), b)? || b(v)?)
            }
            Kind::Outcome => match old {
                Some(o) if o.as_str().is_some_and(|s| s != "completed") => o.clone(),
                _ => v.clone(),
            },
            Kind::First => match old {
                Some(o) if !o.is_null() => o.clone(),
                _ => v.clone(),
            },
            // Recomputed once everything is merged.
            Kind::Ratio { .. } | Kind::Saving { .. } | Kind::Quotient { .. } | Kind::Product { .. } => match old {
                Some(o) if !o.is_null() => o.clone(),
                _ => v.clone(),
            },
            Kind::Object => {
                let from = v.as_object().ok_or_else(|| type_error(&path, "an object", v))?;
                let mut into = match old {
                    Some(Value::Object(o)) => o.clone(),
                    _ => Map::new(),
                };
                merge_object(&mut into, from, &format!("{path}."), declared)?;
                into.into()
            }
            Kind::Elementwise => elementwise(&path, old, v)?,
            Kind::MechanismCounters => {
                let d = declared
                    .ok_or_else(|| AggregateError::MissingOperand { key: path.clone(), operand: "mechanism".into() })?;
                merge_counters(&path, old, v, d)?
            }
            Kind::Branches => merge_branches(&path, old, v, declared)?,
        };
        total.insert(key.clone(), new);
    }
    Ok(())
}

/// Two lists of counts summed index by index.
fn elementwise(key: &str, old: Option<&Value>, v: &Value) -> Result<Value, AggregateError> {
    let counts = |x: &Value| -> Result<Vec<u64>, AggregateError> {
        let list = x.as_array().ok_or_else(|| type_error(key, "a list of counts", x))?;
        list.iter().map(|e| e.as_u64().ok_or_else(|| type_error(key, "a count", e))).collect()
    };
    let mut a = match old {
        Some(o) => counts(o)?,
        None => Vec::new(),
    };
    let b = counts(v)?;
    if a.len() < b.len() {
        a.resize(b.len(), 0);
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x = x.saturating_add(y);
    }
    Ok(a.into())
}

/// The mechanism's counters: summed or the maximum as it declares them, then its ratios.
fn merge_counters(key: &str, old: Option<&Value>, v: &Value, d: Declared) -> Result<Value, AggregateError> {
    let from = v.as_object().ok_or_else(|| type_error(key, "an object", v))?;
    let mut into = match old {
        Some(Value::Object(o)) => o.clone(),
        _ => Map::new(),
    };
    for (name, x) in from {
        let path = format!("{key}.{name}");
        let new = if let Some(c) = d.counters.iter().find(|c| c.name == name) {
            match c.agg {
                Agg::Sum => add(&path, into.get(name), x)?,
                Agg::Max => max(&path, into.get(name), x)?,
            }
        } else if d.ratios.iter().any(|r| r.name == name) {
            x.clone()
        } else {
            return Err(AggregateError::UnknownKey(path));
        };
        into.insert(name.clone(), new);
    }
    for r in d.ratios {
        if !into.contains_key(r.name) {
            continue;
        }
        let count = |n: &str| into.get(n).and_then(Value::as_u64);
        let value = match (count(r.num), count(r.den)) {
            (Some(n), Some(d)) if d > 0 => (n as f64 / d as f64).into(),
            _ => Value::Null,
        };
        into.insert(r.name.to_string(), value);
    }
    Ok(into.into())
}

/// The identity of a `branches_by_pc` entry: function, pc, PTX line.
fn branch_id(e: &Map<String, Value>) -> (Option<&Value>, Option<&Value>, Option<&Value>) {
    (e.get("function"), e.get("pc"), e.get("ptx_line"))
}

/// `branches_by_pc`: entries of the same branch merged, others appended.
fn merge_branches(
    key: &str,
    old: Option<&Value>,
    v: &Value,
    declared: Option<Declared>,
) -> Result<Value, AggregateError> {
    let list = |x: &Value| -> Result<Vec<Map<String, Value>>, AggregateError> {
        let items = x.as_array().ok_or_else(|| type_error(key, "a list of branches", x))?;
        items.iter().map(|e| e.as_object().cloned().ok_or_else(|| type_error(key, "a branch object", e))).collect()
    };
    let mut into = match old {
        Some(o) => list(o)?,
        None => Vec::new(),
    };
    for e in list(v)? {
        match into.iter().position(|t| branch_id(t) == branch_id(&e)) {
            Some(i) => into[i] = merge_branch(key, &into[i], &e, declared)?,
            None => into.push(merge_branch(key, &Map::new(), &e, declared)?),
        }
    }
    Ok(Value::Array(into.into_iter().map(Value::Object).collect()))
}

/// The active lanes of a branch entry: `mean_active_lanes × executions` (an integer, exact below 2^52).
fn active_lanes(e: &Map<String, Value>) -> f64 {
    let executions = e.get("executions").and_then(Value::as_u64).unwrap_or(0) as f64;
    (e.get("mean_active_lanes").and_then(Value::as_f64).unwrap_or(0.0) * executions).round()
}

/// One branch's entry merged from the total's `a` (empty for a new branch) and the launch's `b`.
fn merge_branch(
    key: &str,
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    declared: Option<Declared>,
) -> Result<Map<String, Value>, AggregateError> {
    let mut out = a.clone();
    for (name, x) in b {
        let path = format!("{key}[].{name}");
        let kind = BRANCH_KINDS
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| AggregateError::UnknownKey(path.clone()))?;
        let new = match kind {
            Kind::Sum => add(&path, a.get(name), x)?,
            Kind::Object => {
                let from = x.as_object().ok_or_else(|| type_error(&path, "an object", x))?;
                let mut counters = a.get(name).and_then(Value::as_object).cloned().unwrap_or_default();
                for (c, n) in from {
                    let known = declared.is_none_or(|d| d.branch.iter().any(|k| k.name == c));
                    if !known {
                        return Err(AggregateError::UnknownKey(format!("{path}.{c}")));
                    }
                    counters.insert(c.clone(), add(&format!("{path}.{c}"), counters.get(c), n)?);
                }
                counters.into()
            }
            _ => x.clone(),
        };
        out.insert(name.clone(), new);
    }
    let executions = out.get("executions").and_then(Value::as_u64).unwrap_or(0);
    if out.contains_key("mean_active_lanes") {
        let lanes = active_lanes(a) + active_lanes(b);
        let mean = if executions > 0 { Value::from(lanes / executions as f64) } else { Value::Null };
        out.insert("mean_active_lanes".into(), mean);
    }
    Ok(out)
}

/// The statistic at `path` (`a.b.c`).
fn lookup<'a>(stats: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut v = stats.get(parts.next()?)?;
    for p in parts {
        v = v.as_object()?.get(p)?;
    }
    Some(v)
}

/// The object holding the statistic at `path`, and its last key.
fn parent_mut<'a>(stats: &'a mut Map<String, Value>, path: &'a str) -> Option<(&'a mut Map<String, Value>, &'a str)> {
    let (head, last) = match path.rsplit_once('.') {
        Some((h, l)) => (Some(h), l),
        None => (None, path),
    };
    let mut obj = stats;
    for p in head.into_iter().flat_map(|h| h.split('.')) {
        obj = obj.get_mut(p)?.as_object_mut()?;
    }
    Some((obj, last))
}

/// The value of `op` in `stats`, `None` where a statistic it sums is missing or `null`.
fn operand(stats: &Map<String, Value>, op: &Operand) -> Option<u64> {
    let mut sum = 0u64;
    for p in op.paths {
        sum = sum.saturating_add(lookup(stats, p)?.as_u64()?);
    }
    if op.per_lane {
        sum = sum.saturating_mul(stats.get("warp_size")?.as_u64()?);
    }
    Some(sum)
}

/// Recomputes every ratio present in `stats` from the counts it holds.
fn recompute(stats: &mut Map<String, Value>) -> Result<(), AggregateError> {
    for (path, kind) in KINDS {
        if let Kind::Quotient { num: a, den: b } | Kind::Product { a, b } = kind {
            let real = |p: &str| lookup(stats, p).and_then(Value::as_f64);
            let (Some(x), Some(y)) = (real(a), real(b)) else { continue };
            let value = match kind {
                Kind::Quotient { .. } if y == 0.0 => 0.0,
                Kind::Quotient { .. } => x / y,
                _ => x * y,
            };
            if let Some((obj, last)) = parent_mut(stats, path) {
                obj.insert(last.to_string(), value.into());
            }
            continue;
        }
        let (num, den) = match kind {
            Kind::Ratio { num, den, .. } => (num, den),
            Kind::Saving { part, whole } => (part, whole),
            _ => continue,
        };
        let Some(current) = lookup(stats, path) else { continue };
        let value = match (operand(stats, num), operand(stats, den)) {
            (Some(n), Some(d)) => match kind {
                Kind::Saving { .. } if d == 0 => Value::Null,
                Kind::Saving { .. } => (1.0 - n as f64 / d as f64).into(),
                Kind::Ratio { zero: Zero::Null, .. } if d == 0 => Value::Null,
                _ if d == 0 => 0.0.into(),
                _ => (n as f64 / d as f64).into(),
            },
            // A ratio the launches do not have (`ipc` of a functional run) stays `null`.
            _ if current.is_null() => continue,
            _ => {
                let missing = num.paths.iter().chain(den.paths).find(|p| lookup(stats, p).is_none_or(Value::is_null));
                let operand = missing.map_or("warp_size", |p| p).to_string();
                return Err(AggregateError::MissingOperand { key: path.to_string(), operand });
            }
        };
        if let Some((obj, last)) = parent_mut(stats, path) {
            obj.insert(last.to_string(), value);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Statistics of real runs of seed 004's Figure 2 kernel (40 threads) as the Python package's launch
    /// returns them (`run --json`'s keys plus the hidden counts): timed TBC with `scalarize=True` on
    /// gtx480, timed CAPRI (a mechanism ratio), functional DWF (a maximum among the mechanism counters).
    /// `python/tests/test_api.py` checks the statistics of every mechanism the same way, from live runs.
    fn fixture(name: &str) -> Map<String, Value> {
        let text = match name {
            "tbc" => include_str!("../tests/data/run-json-tbc.json"),
            "capri" => include_str!("../tests/data/run-json-capri.json"),
            _ => include_str!("../tests/data/run-json-dwf.json"),
        };
        serde_json::from_str(text).expect("a fixture is a JSON object")
    }

    /// Every key path of `v` below `prefix`, list entries as `[]`.
    fn paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    out.push(p.clone());
                    if k != "config" {
                        paths(x, &p, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|x| paths(x, &format!("{prefix}[]"), out)),
            _ => {}
        }
    }

    fn get(m: &Map<String, Value>, path: &str) -> Value {
        lookup(m, path).cloned().unwrap_or_else(|| panic!("no `{path}`"))
    }

    fn set(m: &mut Map<String, Value>, path: &str, v: Value) {
        let (obj, last) = parent_mut(m, path).unwrap_or_else(|| panic!("no parent of `{path}`"));
        obj.insert(last.to_string(), v);
    }

    /// `exec --sample`'s lines: the sampled cycles, bounds and launch counts sum; the cluster is a launch
    /// key, left out of totals.
    #[test]
    fn sampled_cycles_sum_and_the_cluster_is_left_out() {
        let line = |cycles: u64, error: u64, estimated: u64, cluster: u64| {
            let v = json!({"kernel": "k", "warp_instructions": 10, "sample_cluster": cluster,
                "sampled": {"cycles": cycles, "cycles_error": error, "timed_launches": 1 - estimated,
                    "estimated_launches": estimated}});
            v.as_object().cloned().expect("an object")
        };
        let mut p = PerKernel::new();
        for l in [line(100, 0, 0, 0), line(110, 0, 0, 0), line(105, 7, 1, 0), line(300, 0, 0, 1)] {
            p.add(l).expect("known keys");
        }
        let total = &p.totals()[0].stats;
        assert_eq!(
            total["sampled"],
            json!({"cycles": 615, "cycles_error": 7, "timed_launches": 3, "estimated_launches": 1})
        );
        assert!(!total.contains_key("sample_cluster"));
    }

    #[test]
    fn every_key_of_real_statistics_has_a_kind() {
        for name in ["tbc", "capri", "dwf"] {
            let stats = fixture(name);
            assert_eq!(check_keys(&stats), Ok(()), "{name}");
            let mut all = Vec::new();
            paths(&Value::Object(stats.clone()), "", &mut all);
            for p in &all {
                let dynamic = p.starts_with("mechanism_counters.") || p.starts_with("branches_by_pc[]");
                assert!(dynamic || kind_of(p).is_some(), "{name}: `{p}` has no kind");
            }
            assert!(all.len() > 50, "{name}: {} keys", all.len());
        }
        let mut stats = fixture("tbc");
        stats.insert("new_statistic".into(), json!(3));
        assert_eq!(check_keys(&stats), Err(AggregateError::UnknownKey("new_statistic".into())));
        let mut stats = fixture("tbc");
        set(&mut stats, "memory.new_counter", json!(1));
        assert_eq!(check_keys(&stats), Err(AggregateError::UnknownKey("memory.new_counter".into())));
        let mut stats = fixture("dwf");
        set(&mut stats, "mechanism_counters.invented", json!(1));
        assert_eq!(check_keys(&stats), Err(AggregateError::UnknownKey("mechanism_counters.invented".into())));
    }

    #[test]
    fn counts_are_summed_maxima_kept_and_ratios_recomputed_from_the_sums() {
        let a = fixture("tbc");
        let mut b = a.clone();
        // A second launch whose kernel instructions are all fully active, with a shallower stack and
        // every L1 access a hit.
        let ki = get(&a, "kernel_instructions").as_u64().unwrap();
        set(&mut b, "kernel_thread_instructions", json!(ki * 32));
        set(&mut b, "max_stack_depth", json!(1));
        set(&mut b, "memory.l1_accesses", json!(10));
        set(&mut b, "memory.l1_hits", json!(10));
        let mut total = Map::new();
        accumulate(&mut total, &a).unwrap();
        accumulate(&mut total, &b).unwrap();
        let kti = get(&a, "kernel_thread_instructions").as_u64().unwrap() + ki * 32;
        assert_eq!(get(&total, "simd_efficiency"), json!(kti as f64 / (2 * ki * 32) as f64));
        assert_eq!(get(&total, "max_stack_depth"), get(&a, "max_stack_depth"), "a maximum, not a sum");
        assert_eq!(get(&total, "warp_instructions"), json!(2 * get(&a, "warp_instructions").as_u64().unwrap()));
        assert_eq!(get(&total, "stall_cycles.memory"), json!(2 * get(&a, "stall_cycles.memory").as_u64().unwrap()));
        let l1 = get(&a, "memory.l1_accesses").as_u64().unwrap();
        let hits = get(&a, "memory.l1_hits").as_u64().unwrap();
        assert_eq!(get(&total, "l1_hit_rate"), json!((hits + 10) as f64 / (l1 + 10) as f64));
        assert_eq!(get(&total, "ipc"), get(&a, "ipc"), "twice the instructions in twice the cycles");
        assert_eq!(get(&total, "issue_utilization"), get(&a, "issue_utilization"));
        assert_eq!(get(&total, "scalarization.convergent_share.dcp"), get(&a, "scalarization.convergent_share.dcp"));
        assert_eq!(get(&total, "scalarization.reduction.operations"), get(&a, "scalarization.reduction.operations"));
        let hist = |m: &Map<String, Value>| get(m, "lane_histogram").as_array().unwrap()[39 % 32].as_u64().unwrap();
        assert_eq!(hist(&total), 2 * hist(&a));
        assert_eq!(get(&total, LAUNCHES), json!(2));
        assert_eq!(get(&total, "config"), get(&a, "config"));
        for _ in 0..5 {
            accumulate(&mut total, &a).unwrap();
        }
        assert_eq!(get(&total, LAUNCHES), json!(7));
        let all = get(&total, "simd_efficiency_all").as_f64().unwrap();
        assert!(all > 0.0 && all <= 1.0, "simd_efficiency_all after 7 launches: {all}");
        assert_eq!(get(&total, "simd_efficiency_all"), get(&a, "simd_efficiency_all"));
    }

    #[test]
    fn mechanism_counters_combine_as_the_mechanism_declares_them() {
        let a = fixture("dwf");
        let mut total = Map::new();
        accumulate(&mut total, &a).unwrap();
        accumulate(&mut total, &a).unwrap();
        let merges = get(&a, "mechanism_counters.merges").as_u64().unwrap();
        assert!(merges > 0);
        assert_eq!(get(&total, "mechanism_counters.merges"), json!(2 * merges));
        assert_eq!(get(&total, "mechanism_counters.max_distinct_pcs"), get(&a, "mechanism_counters.max_distinct_pcs"));
        // CAPRI's prediction rate: unnecessary_syncs_avoided / unnecessary_syncs over both launches.
        let c = fixture("capri");
        assert_eq!(get(&c, "mechanism_counters.prediction_rate"), Value::Null);
        let mut d = c.clone();
        set(&mut d, "mechanism_counters.unnecessary_syncs", json!(4));
        set(&mut d, "mechanism_counters.unnecessary_syncs_avoided", json!(3));
        set(&mut d, "mechanism_counters.prediction_rate", json!(0.75));
        let mut total = Map::new();
        accumulate(&mut total, &c).unwrap();
        assert_eq!(get(&total, "mechanism_counters.prediction_rate"), Value::Null);
        accumulate(&mut total, &d).unwrap();
        assert_eq!(get(&total, "mechanism_counters.prediction_rate"), json!(0.75));
        set(&mut d, "mechanism_counters.unnecessary_syncs", json!(1));
        set(&mut d, "mechanism_counters.unnecessary_syncs_avoided", json!(0));
        accumulate(&mut total, &d).unwrap();
        assert_eq!(get(&total, "mechanism_counters.prediction_rate"), json!(0.6));
    }

    #[test]
    fn branches_merge_by_identity_and_their_mean_lanes_are_recomputed() {
        let a = fixture("tbc");
        let mut b = a.clone();
        let first = |m: &mut Map<String, Value>| -> Map<String, Value> {
            m["branches_by_pc"].as_array().unwrap()[0].as_object().unwrap().clone()
        };
        let e = first(&mut b);
        let (executions, mean) = (e["executions"].as_u64().unwrap(), e["mean_active_lanes"].as_f64().unwrap());
        let mut changed = e.clone();
        changed.insert("mean_active_lanes".into(), json!(1.0));
        changed.insert("executions".into(), json!(executions));
        let mut other = e.clone();
        other.insert("function".into(), json!("another_kernel"));
        let list = b["branches_by_pc"].as_array_mut().unwrap();
        list[0] = Value::Object(changed);
        list.push(Value::Object(other));
        let mut total = Map::new();
        accumulate(&mut total, &a).unwrap();
        accumulate(&mut total, &b).unwrap();
        let branches = total["branches_by_pc"].as_array().unwrap();
        assert_eq!(branches.len(), a["branches_by_pc"].as_array().unwrap().len() + 1);
        assert_eq!(branches[0]["executions"], json!(2 * executions));
        assert_eq!(branches[0]["mean_active_lanes"], json!((mean + 1.0) / 2.0));
        let stall = |m: &Value| m["mechanism"]["stall_cycles"].as_u64().unwrap();
        assert_eq!(stall(&branches[0]), 2 * stall(&a["branches_by_pc"][0]));
    }

    #[test]
    fn what_cannot_be_combined_is_an_error_that_leaves_the_total_unchanged() {
        let a = fixture("tbc");
        let mut total = Map::new();
        accumulate(&mut total, &a).unwrap();
        let before = total.clone();
        let mut w = a.clone();
        w.insert("warp_size".into(), json!(16));
        let e = accumulate(&mut total, &w).unwrap_err();
        assert!(matches!(&e, AggregateError::Mismatch { key, .. } if key == "warp_size"), "{e}");
        assert_eq!(total, before);
        let mut bare = a.clone();
        bare.remove(HIDDEN);
        let e = accumulate(&mut Map::new(), &bare).unwrap_err();
        assert_eq!(e, AggregateError::MissingOperand { key: "ipc".into(), operand: "_counts.issued".into() });
        assert!(e.to_string().contains("`ipc`"), "{e}");
        let mut m = a.clone();
        m.insert("mechanism".into(), json!("nope"));
        assert_eq!(accumulate(&mut total, &m), Err(AggregateError::UnknownMechanism("nope".into())));
        let mut s = a.clone();
        s.insert("cycles".into(), json!("many"));
        assert!(matches!(accumulate(&mut total, &s), Err(AggregateError::Type { .. })));
        assert_eq!(total, before);
    }

    #[test]
    fn outcomes_errors_and_partial_statistics_stick() {
        let a = fixture("dwf");
        let mut stopped = a.clone();
        stopped.insert("outcome".into(), json!("deadlock"));
        stopped.insert("partial".into(), json!(true));
        stopped.insert("error".into(), json!("SIMT deadlock: ..."));
        let mut total = Map::new();
        accumulate(&mut total, &a).unwrap();
        accumulate(&mut total, &stopped).unwrap();
        accumulate(&mut total, &a).unwrap();
        assert_eq!(total["outcome"], json!("deadlock"));
        assert_eq!(total["partial"], json!(true));
        assert_eq!(total["error"], json!("SIMT deadlock: ..."));
        // A functional run's timed statistics stay null.
        assert_eq!(total["cycles"], Value::Null);
        assert_eq!(total["ipc"], Value::Null);
        // A total added to a total counts its launches.
        let mut sum = total.clone();
        accumulate(&mut sum, &total).unwrap();
        assert_eq!(sum[LAUNCHES], json!(6));
        assert_eq!(sum["warp_instructions"], json!(6 * a["warp_instructions"].as_u64().unwrap()));
        assert!(!visible(&fixture("tbc")).contains_key(HIDDEN));
    }

    /// Launch lines as `reconverge exec` receives them: statistics plus the launch keys.
    fn launch_line(name: &str, kernel: &str, n: u64) -> Map<String, Value> {
        let mut l = fixture(name);
        l.insert("kernel".into(), json!(kernel));
        l.insert("launch".into(), json!(n));
        l.insert("grid".into(), json!([1, 1, 1]));
        l.insert("block".into(), json!([40, 1, 1]));
        l.insert("dynamic_shared".into(), json!(0));
        l.insert("stream".into(), json!(0));
        l
    }

    /// The streaming form keeps one total per kernel however many launches it adds, and the batch form
    /// is the same computation.
    #[test]
    fn per_kernel_totals_are_built_one_launch_at_a_time() {
        let lines: Vec<_> = (1..=7).map(|n| launch_line("dwf", if n % 3 == 0 { "b" } else { "a" }, n)).collect();
        let mut p = PerKernel::new();
        for l in &lines {
            p.add(l.clone()).expect("combines");
        }
        let names: Vec<&str> = p.totals().iter().map(|k| k.kernel.as_str()).collect();
        assert_eq!(names, ["a", "b"], "in order of first launch");
        let one = fixture("dwf")["warp_instructions"].as_u64().expect("count");
        assert_eq!(p.totals()[0].stats[LAUNCHES], json!(5));
        assert_eq!(p.totals()[1].stats[LAUNCHES], json!(2));
        assert_eq!(p.totals()[0].stats["warp_instructions"], json!(5 * one));
        assert!(LAUNCH_KEYS.iter().all(|k| !p.totals()[0].stats.contains_key(*k)), "launch keys left out");
        assert_eq!(per_kernel(&lines).expect("batch"), p.clone().into_totals());
        // A launch that cannot be combined leaves the totals as they were.
        let mut bad = launch_line("dwf", "a", 8);
        bad.insert("cycles".into(), json!("many"));
        let before = p.totals().to_vec();
        assert!(p.add(bad).is_err());
        assert_eq!(p.totals(), &before[..]);
    }
}
