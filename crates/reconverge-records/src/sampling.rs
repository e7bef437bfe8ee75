//! Sampled timing of a whole program's launches (`reconverge exec --sample`): which launches the timing
//! model runs, and the cycles of the others, estimated with an error bound.
//!
//! Every launch is still simulated — its memory effects are exact — but a launch that does the same work
//! as launches already timed runs functionally, and its cycles are extrapolated from theirs. Launches
//! are grouped as principal-kernel analysis groups them (Baddouh et al., MICRO 2021), by a functional
//! signature, here within one [`LaunchKey`] (the kernel and its geometry):
//!
//! - the [`Signature`] of a launch is what a functional run counts: warp and thread instructions, the
//!   memory, arithmetic and control instructions among them and its divergent branches;
//! - a launch joins a [`cluster`](Sampler::record) when every count is within [`TOLERANCE`] of the
//!   cluster's first launch (its representative), or differs by less than a [`TOLERANCE`]-th of a tenth
//!   of the larger warp-instruction count (differences too small to matter to the launch's time);
//! - a cluster is *settled* once its last timed launches (at most [`WINDOW`]) number at least
//!   [`MIN_SAMPLES`] and agree on the cycles per thread instruction: the 95% confidence half-width of
//!   their mean is at most [`TARGET`] of it, or [`WINDOW`] of them are in it whatever they say;
//! - a launch that matches a settled cluster is [estimated](Sampler::estimate): its thread instructions
//!   times the mean cycles per thread instruction of the cluster's last [`WINDOW`] timed launches (a
//!   ratio estimator, as SMARTS and SimPoint extrapolate CPI), with a 95% prediction half-width
//!   `1.96 · s · T · √(1 + 1/n)` (s the standard deviation of those ratios, n their number, T the
//!   launch's thread instructions): the launch's own deviation and the error of the mean;
//! - one launch of every [`PERIOD`] of a key is timed even when a cluster could estimate it, as SMARTS
//!   samples systematically: a program's phases change the cycles of the same work (Rodinia's
//!   streamcluster: 11% more cycles per thread instruction late in the run than in its first launches),
//!   and only launches timed throughout the run, the estimate following the latest, see that.
//!
//! The half-widths of several launches are summed (never combined in quadrature), which bounds their
//! total whatever the correlation between launches; it is a statistical bound — the spread the timed
//! launches of a cluster showed — not a guarantee about launches unlike them.

use reconverge_sim::Stats;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// How far a count may differ from a cluster's representative, as a share of the larger.
pub const TOLERANCE: f64 = 0.05;

/// The relative 95% half-width of a cluster's mean cycles per thread instruction below which it is
/// settled.
pub const TARGET: f64 = 0.01;

/// The timed launches of a cluster its estimates are taken from: the latest this many. A cluster with
/// this many is settled whatever their spread.
pub const WINDOW: usize = 8;

/// Timed launches a cluster needs before it estimates anything.
pub const MIN_SAMPLES: usize = 3;

/// One launch of a key in this many is timed even when a cluster could estimate it.
pub const PERIOD: usize = 10;

/// The two-sided 95% quantile of the normal distribution.
const Z95: f64 = 1.96;

/// What must be equal for two launches to be compared at all: the kernel and its geometry.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaunchKey {
    /// The kernel (its PTX name, with the module that holds it).
    pub kernel: String,
    /// CTAs per grid dimension.
    pub grid: [u32; 3],
    /// Threads per CTA dimension.
    pub block: [u32; 3],
    /// Dynamic shared memory per CTA, in bytes.
    pub dynamic_shared: u64,
}

/// A launch's functional signature: the counts a functional run gives, the same in a timed run of the
/// same work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Signature {
    /// Warp instructions, thread instructions, memory, arithmetic (integer, float, double, special
    /// function) and control-and-synchronisation warp instructions, divergent branches.
    counts: [f64; 6],
}

impl Signature {
    /// The signature of a run's statistics.
    pub fn of(stats: &Stats) -> Signature {
        let c = &stats.by_class;
        let counts = [
            stats.warp_instructions,
            stats.thread_instructions,
            c.mem,
            c.int + c.float + c.double + c.sfu,
            c.control + c.sync,
            stats.divergent_branches,
        ];
        Signature { counts: counts.map(|n| n as f64) }
    }

    /// Thread instructions: what a launch's cycles are extrapolated from.
    pub fn thread_instructions(&self) -> f64 {
        self.counts[1]
    }

    /// How far `other` is from this signature: the largest relative difference of a count that matters
    /// (`None` when one differs by more than [`TOLERANCE`]).
    fn distance(&self, other: &Signature) -> Option<f64> {
        let scale = self.counts[0].max(other.counts[0]) * TOLERANCE * 0.1;
        let mut worst = 0.0f64;
        for (a, b) in self.counts.iter().zip(&other.counts) {
            let diff = (a - b).abs();
            if diff <= scale {
                continue;
            }
            let relative = diff / a.max(*b);
            if relative > TOLERANCE {
                return None;
            }
            worst = worst.max(relative);
        }
        Some(worst)
    }
}

/// Launches of one key whose signatures are alike, and the cycles per thread instruction of those timed.
#[derive(Clone, Debug)]
struct Cluster {
    /// Its number, unique in the program.
    id: usize,
    /// The signature of its first launch.
    representative: Signature,
    /// Cycles per thread instruction of each timed launch, oldest first.
    ratios: Vec<f64>,
}

impl Cluster {
    /// The ratios estimates are taken from: the latest [`WINDOW`].
    fn window(&self) -> &[f64] {
        &self.ratios[self.ratios.len().saturating_sub(WINDOW)..]
    }

    fn mean(&self) -> f64 {
        let w = self.window();
        w.iter().sum::<f64>() / w.len() as f64
    }

    /// The sample standard deviation of the window's ratios (0 for fewer than two).
    fn deviation(&self) -> f64 {
        let w = self.window();
        if w.len() < 2 {
            return 0.0;
        }
        let m = self.mean();
        (w.iter().map(|r| (r - m) * (r - m)).sum::<f64>() / (w.len() - 1) as f64).sqrt()
    }

    fn settled(&self) -> bool {
        let n = self.window().len();
        if n < MIN_SAMPLES {
            return false;
        }
        let half_width = Z95 * self.deviation() / (n as f64).sqrt();
        n >= WINDOW || half_width <= TARGET * self.mean()
    }
}

/// A key's clusters, and its launches since the last one timed.
#[derive(Clone, Debug, Default)]
struct KeyClusters {
    clusters: Vec<Cluster>,
    since_timed: usize,
}

/// What the sampler says about a launch before it runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Run it timed: no cluster of its key could estimate it.
    Time,
    /// Run it functionally first: a settled cluster of its key may match its signature.
    TryEstimate,
}

/// A launch's cycles as the sampled run reports them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampled {
    /// The cluster it belongs to.
    pub cluster: usize,
    /// Timed launches in the cluster (this one included when it was timed).
    pub samples: usize,
    /// Its cycles: measured, or estimated.
    pub cycles: u64,
    /// The 95% half-width of the estimate, in cycles (0 for a timed launch).
    pub error: u64,
    /// Whether the cycles are an estimate.
    pub estimated: bool,
}

impl Sampled {
    /// The launch line's `sampled` object (`exec --sample`; [`SampledCycles::of`] reads it back): the
    /// cycles, the estimate's 95% half-width (0 when timed), and 1 in `timed_launches` or in
    /// `estimated_launches`, so that a total of lines counts them.
    pub fn json(&self) -> Value {
        let estimated = u64::from(self.estimated);
        serde_json::json!({"cycles": self.cycles, "cycles_error": self.error,
            "timed_launches": 1 - estimated, "estimated_launches": estimated})
    }
}

/// The clusters of a program's launches so far.
#[derive(Clone, Debug, Default)]
pub struct Sampler {
    keys: HashMap<LaunchKey, KeyClusters>,
    next_id: usize,
}

impl Sampler {
    /// No launches yet.
    pub fn new() -> Sampler {
        Sampler::default()
    }

    /// Whether a launch of `key` could be estimated: a cluster of the key is settled, and the launch is
    /// not the one of [`PERIOD`] that is timed anyway.
    pub fn plan(&self, key: &LaunchKey) -> Plan {
        match self.keys.get(key) {
            Some(k) if k.since_timed + 1 < PERIOD && k.clusters.iter().any(Cluster::settled) => Plan::TryEstimate,
            _ => Plan::Time,
        }
    }

    /// The cycles of a launch of `key` with signature `sig`, from the nearest settled cluster it
    /// matches (`None`: none matches, so it must be timed).
    pub fn estimate(&mut self, key: &LaunchKey, sig: &Signature) -> Option<Sampled> {
        let k = self.keys.get_mut(key)?;
        let c = &k.clusters[nearest(&k.clusters, sig, true)?];
        let n = c.window().len() as f64;
        let t = sig.thread_instructions();
        let error = Z95 * c.deviation() * t * (1.0 + 1.0 / n).sqrt();
        let sampled = Sampled {
            cluster: c.id,
            samples: c.ratios.len(),
            cycles: (c.mean() * t).round() as u64,
            error: error.round() as u64,
            estimated: true,
        };
        k.since_timed += 1;
        Some(sampled)
    }

    /// Records a timed launch: it joins the nearest cluster of its key it matches, or starts one.
    pub fn record(&mut self, key: &LaunchKey, sig: &Signature, cycles: u64) -> Sampled {
        let ratio = cycles as f64 / sig.thread_instructions().max(1.0);
        let k = self.keys.entry(key.clone()).or_default();
        k.since_timed = 0;
        let i = nearest(&k.clusters, sig, false).unwrap_or_else(|| {
            k.clusters.push(Cluster { id: self.next_id, representative: *sig, ratios: Vec::new() });
            self.next_id += 1;
            k.clusters.len() - 1
        });
        let cluster = &mut k.clusters[i];
        cluster.ratios.push(ratio);
        Sampled { cluster: cluster.id, samples: cluster.ratios.len(), cycles, error: 0, estimated: false }
    }
}

/// The index of the cluster nearest `sig` among those it matches (only settled ones if `settled`).
fn nearest(clusters: &[Cluster], sig: &Signature, settled: bool) -> Option<usize> {
    let mut best: Option<(f64, usize)> = None;
    for (i, c) in clusters.iter().enumerate().filter(|(_, c)| !settled || c.settled()) {
        if let Some(d) = c.representative.distance(sig) {
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, i));
            }
        }
    }
    best.map(|(_, i)| i)
}

/// Both together (two kernels' totals, say).
impl std::ops::Add for SampledCycles {
    type Output = SampledCycles;

    fn add(self, o: SampledCycles) -> SampledCycles {
        SampledCycles {
            cycles: self.cycles + o.cycles,
            error: self.error + o.error,
            timed: self.timed + o.timed,
            estimated: self.estimated + o.estimated,
        }
    }
}

/// The `sampled` object of a launch line or of a total of lines (`exec --sample`): the cycles, measured
/// and estimated, the sum of the estimates' 95% half-widths, and the launches timed and estimated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampledCycles {
    /// Cycles: the timed launches' measured, the others' estimated.
    pub cycles: u64,
    /// The sum of the estimates' 95% half-widths.
    pub error: u64,
    /// Launches timed.
    pub timed: u64,
    /// Launches estimated.
    pub estimated: u64,
}

impl SampledCycles {
    /// The `sampled` object of `stats` (`None` when it has none: the launches were not sampled).
    pub fn of(stats: &Map<String, Value>) -> Option<SampledCycles> {
        let o = stats.get("sampled")?;
        let n = |k: &str| o.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(SampledCycles {
            cycles: n("cycles"),
            error: n("cycles_error"),
            timed: n("timed_launches"),
            estimated: n("estimated_launches"),
        })
    }

    /// `cycles ± error`, or the cycles alone when every launch was timed.
    pub fn text(&self) -> String {
        if self.estimated == 0 {
            self.cycles.to_string()
        } else {
            format!("{} ± {}", self.cycles, self.error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kernel: &str) -> LaunchKey {
        LaunchKey { kernel: kernel.into(), grid: [4, 1, 1], block: [128, 1, 1], dynamic_shared: 0 }
    }

    fn sig(warp: f64, threads: f64, mem: f64) -> Signature {
        Signature { counts: [warp, threads, mem, warp - mem - 10.0, 10.0, 2.0] }
    }

    #[test]
    fn a_launch_is_timed_until_its_cluster_has_three_agreeing_samples() {
        let mut s = Sampler::new();
        let k = key("a");
        let g = sig(1000.0, 30000.0, 200.0);
        assert_eq!(s.plan(&k), Plan::Time);
        assert_eq!(s.record(&k, &g, 3000).samples, 1);
        assert_eq!(s.record(&k, &g, 3000).samples, 2);
        assert_eq!(s.plan(&k), Plan::Time, "two samples are not yet enough");
        assert!(s.estimate(&k, &g).is_none());
        let third = s.record(&k, &sig(1010.0, 30000.0, 202.0), 3000);
        assert_eq!((third.cluster, third.samples), (0, 3), "within the tolerance: the same cluster");
        assert_eq!(s.plan(&k), Plan::TryEstimate);
        let e = s.estimate(&k, &sig(990.0, 29700.0, 198.0)).expect("settled");
        assert!(e.estimated);
        assert_eq!((e.cycles, e.error), (2970, 0), "equal ratios (0.1 cycles per thread instruction)");
        assert_eq!(s.plan(&key("b")), Plan::Time, "another kernel has no samples");
    }

    #[test]
    fn one_launch_in_a_period_is_timed_and_estimates_follow_the_latest_samples() {
        let mut s = Sampler::new();
        let k = key("a");
        let g = sig(1000.0, 10000.0, 100.0);
        for _ in 0..MIN_SAMPLES {
            s.record(&k, &g, 1000);
        }
        for _ in 1..PERIOD {
            assert_eq!(s.plan(&k), Plan::TryEstimate);
            assert_eq!(s.estimate(&k, &g).expect("settled").cycles, 1000);
        }
        assert_eq!(s.plan(&k), Plan::Time, "the tenth launch is timed");
        // The program's phase changed: once the window holds only the new samples, so do the estimates.
        for _ in 0..WINDOW {
            s.record(&k, &g, 1100);
        }
        assert_eq!(s.estimate(&k, &g).expect("settled").cycles, 1100);
    }

    #[test]
    fn unlike_work_starts_a_cluster_of_its_own() {
        let mut s = Sampler::new();
        let k = key("a");
        for _ in 0..MIN_SAMPLES {
            s.record(&k, &sig(1000.0, 30000.0, 200.0), 3000);
        }
        let bigger = sig(1200.0, 36000.0, 240.0);
        assert!(s.estimate(&k, &bigger).is_none(), "20% more work matches no cluster");
        assert_eq!(s.record(&k, &bigger, 3700).cluster, 1);
        // A small count may differ by far more than the tolerance when the difference is negligible.
        let mut few_more = sig(1000.0, 30000.0, 200.0);
        few_more.counts[5] = 4.0;
        assert!(s.estimate(&k, &few_more).is_some(), "2 divergent branches more of 1,000 instructions");
    }

    #[test]
    fn spread_samples_keep_a_cluster_open_and_widen_the_bound() {
        let mut s = Sampler::new();
        let k = key("a");
        let g = sig(1000.0, 10000.0, 100.0);
        s.record(&k, &g, 1000);
        s.record(&k, &g, 1200);
        s.record(&k, &g, 1100);
        assert_eq!(s.plan(&k), Plan::Time, "ratios 0.10, 0.12 and 0.11: half-width far above 1%");
        for _ in 3..WINDOW {
            s.record(&k, &g, 1100);
        }
        assert_eq!(s.plan(&k), Plan::TryEstimate, "settled with a full window whatever the spread");
        let e = s.estimate(&k, &g).expect("settled");
        let ratios = [0.10, 0.12, 0.11, 0.11, 0.11, 0.11, 0.11, 0.11];
        let mean = ratios.iter().sum::<f64>() / 8.0;
        let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / 7.0).sqrt();
        assert_eq!(e.cycles, (mean * 10000.0).round() as u64);
        assert_eq!(e.error, (1.96 * sd * 10000.0 * (1.0f64 + 1.0 / 8.0).sqrt()).round() as u64);
        assert!(e.error > 0);
    }
}
