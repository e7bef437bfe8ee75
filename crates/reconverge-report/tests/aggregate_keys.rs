//! Every statistic a real launch reports has an aggregation rule of the right kind. The statistics are
//! combined from JSON lines (`reconverge exec` reads them from the child's channel, `Device.stats` from
//! each launch), by the table of `reconverge_records::aggregate`; the unit tests of that table run on
//! frozen fixtures, which a new statistic never reaches. Here a kernel is launched under every mechanism
//! of the registry, functional (with and without seed 004's scalarization) and timed, its statistics are
//! serialised as the command line and the Python package serialise them (`run_json_timed` plus the
//! hidden counts), and every key of that live JSON must be known to the aggregation with a kind its value
//! fits; every rule of the table must be reached by some launch; and a launch added to itself must
//! aggregate.

use reconverge_mechanism::{Counter, Mechanism, Ratio, Tracker, REGISTRY};
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, LaunchConfig, RunLimits};
use reconverge_records::aggregate::{self, Kind, BRANCH_KINDS, HIDDEN, KINDS, LAUNCHES};
use reconverge_records::sampling::Sampled;
use reconverge_timing::{GpuConfig, TimedOptions};
use serde_json::{Map, Value};
use std::collections::BTreeSet;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// The counters, ratios and per-branch counters a mechanism declares.
type Declared = (&'static [Counter], &'static [Ratio], &'static [Counter]);

fn declared_by<T: Tracker>(_: &T) -> Declared {
    (T::COUNTERS, T::RATIOS, T::BRANCH_COUNTERS)
}

/// What the walk found: problems, and the table's paths it reached.
#[derive(Default)]
struct Walk {
    problems: Vec<String>,
    reached: BTreeSet<String>,
}

impl Walk {
    fn fail(&mut self, what: String) {
        self.problems.push(what);
    }

    /// Every member of `obj`, whose paths start with `prefix`.
    fn object(&mut self, obj: &Map<String, Value>, prefix: &str, d: Declared) {
        for (k, v) in obj {
            let path = format!("{prefix}{k}");
            match aggregate::kind_of(&path) {
                None => self.fail(format!("`{path}` has no aggregation rule")),
                Some(kind) => {
                    self.reached.insert(path.clone());
                    self.value(&path, kind, v, d);
                }
            }
        }
    }

    /// Whether `v` fits `kind`.
    fn value(&mut self, path: &str, kind: Kind, v: &Value, d: Declared) {
        let count = |x: &Value| x.is_u64() || x.is_null();
        let fits = match kind {
            Kind::Sum | Kind::Max => count(v),
            Kind::Any => v.is_boolean(),
            Kind::Ratio { .. } | Kind::Saving { .. } => v.is_f64() || v.is_u64() || v.is_null(),
            Kind::Quantity | Kind::Quotient { .. } | Kind::Product { .. } => v.is_number() || v.is_null(),
            // Descriptions (`config` is an object) and the outcome: any value.
            Kind::Same | Kind::Last | Kind::First | Kind::Outcome => true,
            Kind::Elementwise => v.as_array().is_some_and(|a| a.iter().all(Value::is_u64)),
            Kind::Object => match v.as_object() {
                Some(o) => {
                    self.object(o, &format!("{path}."), d);
                    true
                }
                None => false,
            },
            Kind::MechanismCounters => match v.as_object() {
                Some(o) => {
                    self.counters(path, o, d.0, d.1);
                    true
                }
                None => false,
            },
            Kind::Branches => match v.as_array() {
                Some(a) => {
                    a.iter().for_each(|e| self.branch(path, e, d));
                    true
                }
                None => false,
            },
        };
        if !fits {
            self.fail(format!("`{path}` is {v}, which its kind {kind:?} cannot combine"));
        }
    }

    /// A mechanism's counters: only those it declares, counts for counters, numbers for ratios.
    fn counters(&mut self, path: &str, o: &Map<String, Value>, counters: &[Counter], ratios: &[Ratio]) {
        let want: BTreeSet<&str> = counters.iter().map(|c| c.name).chain(ratios.iter().map(|r| r.name)).collect();
        let have: BTreeSet<&str> = o.keys().map(String::as_str).collect();
        // Counters of the timing model only are absent from functional runs.
        if !have.is_subset(&want) {
            self.fail(format!("`{path}` holds {have:?}, the mechanism declares {want:?}"));
        }
        for (k, v) in o {
            let ok = if counters.iter().any(|c| c.name == k) { v.is_u64() } else { v.is_number() || v.is_null() };
            if !ok {
                self.fail(format!("`{path}.{k}` is {v}"));
            }
        }
    }

    /// One `branches_by_pc` entry: members of [`BRANCH_KINDS`], its `mechanism` the declared per-branch
    /// counters.
    fn branch(&mut self, path: &str, e: &Value, d: Declared) {
        let Some(e) = e.as_object() else {
            return self.fail(format!("`{path}` holds {e}, not a branch object"));
        };
        for (k, v) in e {
            let at = format!("{path}[].{k}");
            match BRANCH_KINDS.iter().find(|(n, _)| n == k) {
                None => self.fail(format!("`{at}` has no aggregation rule")),
                Some((_, Kind::Object)) => match v.as_object() {
                    Some(o) => self.counters(&at, o, d.2, &[]),
                    None => self.fail(format!("`{at}` is {v}, not an object")),
                },
                Some((_, kind)) => {
                    self.reached.insert(at.clone());
                    self.value(&at, *kind, v, d);
                }
            }
        }
    }
}

/// A launch's statistics as `reconverge exec`'s channel and `Device.stats` receive them.
fn stats_json(
    name: &str,
    mech: Mechanism,
    cfg: &LaunchConfig,
    r: &reconverge_sim::RunResult,
    timed: Option<(&reconverge_timing::TimingStats, &GpuConfig)>,
) -> Map<String, Value> {
    let (timing, gpu) = (timed.map(|t| t.0), timed.map(|t| t.1));
    let v = reconverge_report::run::run_json_timed(name, mech.name(), cfg.warp_size, r, timing, gpu);
    let Value::Object(mut obj) = v else { panic!("{mech}: the statistics are not an object: {v}") };
    obj.insert(HIDDEN.into(), aggregate::hidden_counts(&r.stats, timing).into());
    obj
}

/// The launches of one mechanism: `short_circuit` functional (plain and scalarized) and timed on two GPUs,
/// and the naive spinlock (a deadlock or livelock under some mechanisms: the `error` statistic).
fn launches(mech: Mechanism) -> Vec<(String, Map<String, Value>)> {
    let mut out = Vec::new();
    for (file, kernel) in [("short_circuit", "short_circuit"), ("spinlock_naive", "")] {
        let path = format!("kernels/ptx/sm_80/{file}.ptx");
        let src = std::fs::read_to_string(format!("{ROOT}/{path}")).expect("the kernel");
        let module = reconverge_ptx::parse(&src).expect("parses");
        let cfg = LaunchConfig {
            grid: [2, 1, 1],
            block: [64, 1, 1],
            limits: RunLimits { max_instructions: Some(200_000), livelock_window: 1000, ..RunLimits::default() },
            ..LaunchConfig::default()
        };
        let args = || vec![Arg::Buffer(Buffer::zeros(Dtype::I32, 1024)), Arg::Buffer(Buffer::zeros(Dtype::I32, 1024))];
        let name = if kernel.is_empty() { None } else { Some(kernel) };
        for scalarize in [false, true] {
            let opts = DecodeOptions { file: path.clone(), source: Some(src.clone()), scalarize, ..Default::default() };
            let Ok(loaded) = reconverge_sim::load(&module, name, mech, &opts) else { continue };
            let program = loaded.program();
            let args: Vec<Arg> = args().into_iter().take(program.params.len()).collect();
            let r = reconverge_sim::run(&loaded, &cfg, &args[..], &mut reconverge_sim::NoObserver);
            let kname = program.kernel_name().to_string();
            out.push((format!("{file} functional scalarize={scalarize}"), stats_json(&kname, mech, &cfg, &r, None)));
            if file != "short_circuit" {
                continue;
            }
            for preset in ["gtx480", "volta+scalar-unit"] {
                let gpu = GpuConfig::preset(preset).expect("a preset");
                let opts = TimedOptions { max_cycles: Some(1_000_000), threads: 1, sample: None };
                let t = reconverge_timing::run_timed(&loaded, &cfg, &gpu, &args[..], opts);
                let json = stats_json(&kname, mech, &cfg, &t.run, Some((&t.timing, &gpu)));
                // The same launch as `exec --sample` reports a timed one, and an estimated one: a
                // functional run's statistics with the estimate.
                let timed = Sampled { cluster: 0, samples: 3, cycles: t.timing.cycles, error: 0, estimated: false };
                let mut sampled = json.clone();
                sampled.insert("sampled".into(), timed.json());
                out.push((format!("{file} on {preset} sampled scalarize={scalarize}"), sampled));
                let mut estimated = stats_json(&kname, mech, &cfg, &r, None);
                let guess = Sampled { error: 7, estimated: true, ..timed };
                estimated.insert("sampled".into(), guess.json());
                out.push((format!("{file} estimated on {preset} scalarize={scalarize}"), estimated));
                out.push((format!("{file} on {preset} scalarize={scalarize}"), json));
            }
        }
    }
    if matches!(mech.name(), "pdom" | "dwf") {
        out.push(sampled_by_ctas(mech));
    }
    out
}

/// A launch timed with CTA sampling (`TimedOptions::sample`: the `cta_sample` statistic): the escape-time
/// fractal, 128 one-warp CTAs on a GTX 480 of two SMs, one CTA in 4 timed.
fn sampled_by_ctas(mech: Mechanism) -> (String, Map<String, Value>) {
    let src = std::fs::read_to_string(format!("{ROOT}/kernels/ptx/sm_80-nofma/mandelbrot.ptx")).expect("the kernel");
    let loaded =
        reconverge_sim::load(&reconverge_ptx::parse(&src).expect("parses"), None, mech, &DecodeOptions::default())
            .expect("decodes");
    let cfg = LaunchConfig { grid: [2, 64, 1], block: [32, 1, 1], ..LaunchConfig::default() };
    let scalar = |x: u64| Arg::Scalar(x);
    let float = |x: f32| Arg::Scalar(u64::from(x.to_bits()));
    let args = vec![
        Arg::Buffer(Buffer::zeros(Dtype::I32, 64 * 64)),
        scalar(64),
        scalar(64),
        float(-2.0),
        float(-1.125),
        float(2.5 / 64.0),
        float(2.25 / 64.0),
        scalar(64),
    ];
    let mut gpu = GpuConfig::gtx480();
    gpu.num_sms = 2;
    let opts =
        TimedOptions { max_cycles: None, threads: 1, sample: Some(reconverge_timing::CtaSampling { one_in: 4 }) };
    let t = reconverge_timing::run_timed(&loaded, &cfg, &gpu, args, opts);
    assert!(t.timing.sample.is_some(), "{mech}: no CTA was skipped");
    let json = stats_json(loaded.program().kernel_name(), mech, &cfg, &t.run, Some((&t.timing, &gpu)));
    (format!("mandelbrot on two SMs, one CTA in 4 timed, {mech}"), json)
}

#[test]
fn every_live_statistic_of_every_mechanism_has_a_rule_of_its_kind() {
    let mut reached = BTreeSet::new();
    let mut problems = Vec::new();
    assert!(REGISTRY.len() >= 10, "the registry: {} mechanisms", REGISTRY.len());
    for entry in REGISTRY {
        let mech = entry.mechanism;
        let d: Declared = reconverge_mechanism::with_tracker!(mech, |t| declared_by(t));
        let runs = launches(mech);
        assert!(runs.len() >= 4, "{mech}: {} launches", runs.len());
        for (what, json) in runs {
            let mut walk = Walk::default();
            walk.object(&json, "", d);
            problems.extend(walk.problems.into_iter().map(|p| format!("{mech}, {what}: {p}")));
            reached.extend(walk.reached);
            // The production check, and a launch added to itself.
            let mut total = Map::new();
            for _ in 0..2 {
                if let Err(e) = aggregate::accumulate(&mut total, &json) {
                    problems.push(format!("{mech}, {what}: {e}"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    // Every rule describes a statistic some launch reports (the launch count is the total's own).
    let rules = KINDS.iter().map(|(p, _)| p.to_string());
    let branch_rules =
        BRANCH_KINDS.iter().filter(|(_, k)| *k != Kind::Object).map(|(p, _)| format!("branches_by_pc[].{p}"));
    let unreached: Vec<String> = rules.chain(branch_rules).filter(|p| p != LAUNCHES && !reached.contains(p)).collect();
    assert!(unreached.is_empty(), "rules no live statistic reached: {unreached:?}");
}

/// Where `a` and `b` differ (numbers within a relative 1e-12: ratios recomputed in another order).
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => differences(u, v, &p, out),
                    (u, v) => out.push(format!("{p}: {u:?} / {v:?}")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            x.iter().zip(y).enumerate().for_each(|(i, (u, v))| differences(u, v, &format!("{path}[{i}]"), out))
        }
        (Value::Number(x), Value::Number(y)) => {
            let (u, v) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
            if x != y && (u - v).abs() > 1e-12 * u.abs().max(v.abs()) {
                out.push(format!("{path}: {x} / {y}"));
            }
        }
        _ if a != b => out.push(format!("{path}: {a} / {b}")),
        _ => {}
    }
}

#[test]
fn the_typed_merge_of_two_launches_is_their_json_aggregation() {
    let path = "kernels/ptx/sm_80/short_circuit.ptx";
    let src = std::fs::read_to_string(format!("{ROOT}/{path}")).expect("the kernel");
    let module = reconverge_ptx::parse(&src).expect("parses");
    let gpu = GpuConfig::preset("gtx480").expect("a preset");
    let mut problems = Vec::new();
    for entry in REGISTRY {
        let mech = entry.mechanism;
        for scalarize in [false, true] {
            let opts = DecodeOptions { file: path.into(), source: Some(src.clone()), scalarize, ..Default::default() };
            let Ok(loaded) = reconverge_sim::load(&module, None, mech, &opts) else { continue };
            let name = loaded.program().kernel_name().to_string();
            let args = [Arg::Buffer(Buffer::zeros(Dtype::I32, 1 << 16))];
            let opts = TimedOptions { max_cycles: Some(1_000_000), threads: 1, sample: None };
            let runs: Vec<_> = [[2, 1, 1], [3, 1, 1]]
                .into_iter()
                .map(|grid| {
                    let cfg = LaunchConfig { grid, block: [48, 1, 1], ..LaunchConfig::default() };
                    (reconverge_timing::run_timed(&loaded, &cfg, &gpu, &args[..], opts), cfg)
                })
                .collect();
            let mut total = Map::new();
            for (t, cfg) in &runs {
                let json = stats_json(&name, mech, cfg, &t.run, Some((&t.timing, &gpu)));
                aggregate::accumulate(&mut total, &json).expect("aggregates");
            }
            total.remove(LAUNCHES);
            let (first, cfg) = &runs[0];
            let mut merged = first.clone();
            merged.run.stats.merge(&runs[1].0.run.stats);
            merged.timing.merge(&runs[1].0.timing);
            let typed = stats_json(&name, mech, cfg, &merged.run, Some((&merged.timing, &gpu)));
            let mut diff = Vec::new();
            differences(&Value::Object(total), &Value::Object(typed), "", &mut diff);
            problems.extend(diff.into_iter().map(|d| format!("{mech} scalarize={scalarize}: {d}")));
        }
    }
    assert!(problems.is_empty(), "aggregation / typed merge:\n{}", problems.join("\n"));
}
