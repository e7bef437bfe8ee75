//! Sampling a launch's CTAs: time a window of CTAs, run the next stretch of CTAs functionally, time the
//! next window, and so on, and estimate the cycles of the stretches not timed from the issue rates of the
//! windows around them (systematic sampling, as SMARTS samples instructions).
//!
//! The rule (docs/speed.md, "CTA sampling", gives the measurements behind it), for one CTA in `N` timed
//! ([`CtaSampling::one_in`]) on a GPU of `S` SMs that hold `C` CTAs each (a *wave* of `S × C` CTAs):
//!
//! 1. **Warm-up.** Nothing is measured or skipped until a wave of CTAs has finished: by then every SM has
//!    run CTAs from launch to exit, its caches hold the launch's data and its CTAs are at different phases.
//! 2. **Windows.** A window is timed until `w = S × max(1, C / 4)` more CTAs (whole rounds of one CTA per
//!    SM, [`WINDOW_PARTS`]) were dispatched in it and at least one epoch passed; its work and cycles give
//!    its issue rate. Work is warp instructions, or thread instructions under the mechanisms that form
//!    warps in issue order ([`WorkUnit`]).
//! 3. **Skips.** At the end of each window (an epoch's end, once its stores are merged), when at least
//!    `(N - 1) × w` CTAs and a wave more wait for dispatch, the next `(N - 1) × w` of them run
//!    functionally, at once, in launch order, on a core of their own that holds `C` of them at a time
//!    (`reconverge_sim::run_ctas_functional`); the timed SMs go on with the CTAs they hold and are
//!    dispatched the CTAs after the skipped ones, so no SM drains, and the launch's last wave, its tail, is
//!    always timed. Stretches are whole rounds, so the last round of dispatch fills the SMs as the full
//!    launch's does. The window after the last skip ends when the last CTA is dispatched.
//! 4. **Estimate.** A skipped stretch's cycles are its work over the issue rate of the windows
//!    before and after it together; the launch's cycles are the timed cycles plus those. Printed beside
//!    it is the *spread*: 1.96 times the windows' relative rate deviation (their standard deviation over
//!    their mean) times the skipped cycles, stretch by stretch, combined as independent errors (0 with
//!    fewer than two windows). It says how much the rate moved between windows; it is not a bound of the
//!    error, which comes mostly from elsewhere: CTAs that run long keep running into the timed tail when
//!    the CTAs around them were skipped, and the skipped CTAs' own rate differs from their neighbours'
//!    (docs/speed.md, "CTA sampling", measures both).
//!
//! The skipped CTAs run as the functional machine runs CTAs, `C` at a time: a launch whose CTAs wait for
//! CTAs launched after them (a flag spun on across CTAs, which CUDA does not promise to work) may be
//! reported as a livelock where timing every CTA was not.
//!
//! A launch too short to skip anything is timed in full and carries no sample, and so is every launch under
//! a mechanism whose warps mix the SM's CTAs (`dwf:sm`, `Tracker::SM_POOL`): which CTAs share its pool
//! decides the warps it forms, and skipping a stretch changes that (measured: −12% and −5% on the fractal
//! with one CTA in 10).
//!
//! Results (memory, `printf`) and the functional statistics cover every CTA (under the DWF family the
//! skipped CTAs' warps are those the functional machine forms, so its warp counts differ from a run that
//! times every CTA; its thread counts do not); the timing statistics other than `cycles` and `issued`
//! (stalls, memory counters, issue slots, per-SM cycles, per-pc records) cover the timed CTAs only, and
//! [`CtaSample`] says how much that was.

use serde::Serialize;

/// A window lasts until about this fraction of a wave of CTAs was dispatched in it (rounded down to
/// whole rounds of one CTA per SM, at least one round).
pub const WINDOW_PARTS: u64 = 4;

/// How a timed launch samples its CTAs ([`crate::TimedOptions::sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtaSampling {
    /// Time about one CTA in this many (at least 2); the others run functionally.
    pub one_in: u32,
}

impl Default for CtaSampling {
    fn default() -> CtaSampling {
        CtaSampling { one_in: 10 }
    }
}

/// What a launch sampled by CTAs timed and estimated ([`crate::TimingStats::sample`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CtaSample {
    /// CTAs of the launch.
    pub ctas: u64,
    /// CTAs not timed: run functionally, their cycles estimated.
    pub skipped_ctas: u64,
    /// Stretches of CTAs skipped.
    pub skips: u64,
    /// Windows measured.
    pub windows: u64,
    /// Warp instructions the timed CTAs issued.
    pub timed_warp_instructions: u64,
    /// Warp instructions the skipped CTAs issued.
    pub skipped_warp_instructions: u64,
    /// What the issue rates count.
    pub work: WorkUnit,
    /// The work done in the windows.
    pub measured_work: u64,
    /// Cycles of the windows.
    pub measured_cycles: u64,
    /// The work of the skipped CTAs.
    pub skipped_work: u64,
    /// The skipped CTAs' estimated cycles (in [`crate::TimingStats::cycles`]).
    pub skipped_cycles: u64,
    /// How far the windows' rates moved, in cycles of the estimate (±): 1.96 × their relative standard
    /// deviation × each stretch's estimated cycles, stretches combined as independent. It is not a bound
    /// of the error: the measured errors (docs/speed.md, "CTA sampling") are larger where CTAs differ.
    pub spread_cycles: u64,
}

impl CtaSample {
    /// The windows' issue rate: work ([`CtaSample::work`]) per cycle, whole GPU.
    pub fn rate(&self) -> f64 {
        self.measured_work as f64 / self.measured_cycles.max(1) as f64
    }

    /// Adds another sampled launch's sample (launches combined, as [`crate::TimingStats::merge`] does):
    /// counts and cycles summed, the spreads too (assuming nothing of how the launches' errors relate).
    pub fn merge(&mut self, o: &CtaSample) {
        let CtaSample {
            ctas,
            skipped_ctas,
            skips,
            windows,
            timed_warp_instructions,
            skipped_warp_instructions,
            work,
            measured_work,
            measured_cycles,
            skipped_work,
            skipped_cycles,
            spread_cycles,
        } = o;
        self.ctas += ctas;
        self.skipped_ctas += skipped_ctas;
        self.skips += skips;
        self.windows += windows;
        self.timed_warp_instructions += timed_warp_instructions;
        self.skipped_warp_instructions += skipped_warp_instructions;
        self.work = *work;
        self.measured_work += measured_work;
        self.measured_cycles += measured_cycles;
        self.skipped_work += skipped_work;
        self.skipped_cycles += skipped_cycles;
        self.spread_cycles += spread_cycles;
    }
}

/// What a sampled launch's issue rates count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkUnit {
    /// Warp instructions: the skipped CTAs' functional run issues the warp instructions a timed run
    /// would.
    #[default]
    WarpInstructions,
    /// Thread instructions (active lanes issued), for mechanisms that form warps in issue order (the DWF
    /// family): the skipped CTAs' functional run issues in another order, so it forms other warps, but
    /// it executes the same threads' instructions.
    ThreadInstructions,
}

impl WorkUnit {
    /// The unit for a mechanism that orders issue itself ([`reconverge_mechanism::Tracker::ORDERED`]) or
    /// not.
    pub fn for_mechanism(ordered: bool) -> WorkUnit {
        if ordered {
            WorkUnit::ThreadInstructions
        } else {
            WorkUnit::WarpInstructions
        }
    }

    /// The work of `stats` in this unit.
    pub fn of(self, stats: &reconverge_sim::Stats) -> u64 {
        match self {
            WorkUnit::WarpInstructions => stats.warp_instructions,
            WorkUnit::ThreadInstructions => stats.thread_instructions,
        }
    }

    /// The unit's name in text.
    pub fn name(self) -> &'static str {
        match self {
            WorkUnit::WarpInstructions => "warp instructions",
            WorkUnit::ThreadInstructions => "thread instructions",
        }
    }
}

/// The GPU at the end of an epoch, as the sampler sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Progress {
    /// The epoch's last cycle + 1.
    pub cycle: u64,
    /// The timed SMs' work so far ([`WorkUnit`]).
    pub issued: u64,
    /// CTAs finished on the timed SMs so far.
    pub finished: u64,
    /// CTAs dispatched to the timed SMs so far.
    pub dispatched: u64,
    /// CTAs neither dispatched nor skipped yet.
    pub waiting: u64,
}

/// A window: its cycles and the warp instructions issued in it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Window {
    cycles: u64,
    issued: u64,
}

/// The sampler's state over one launch.
#[derive(Debug)]
pub(crate) struct Sampler {
    /// CTAs skipped at a time.
    stretch: u64,
    /// CTAs dispatched in a window.
    window: u64,
    /// CTAs the GPU holds at once.
    wave: u64,
    /// Where the current window started (`None` during the warm-up).
    start: Option<Progress>,
    /// The windows measured, in order.
    windows: Vec<Window>,
    /// Per skip: the window it followed, and the warp instructions of its CTAs.
    skips: Vec<(usize, u64)>,
    /// CTAs skipped.
    skipped_ctas: u64,
    /// Whether the last window was closed at the last dispatch.
    closed: bool,
    /// What the rates count.
    work: WorkUnit,
}

impl Sampler {
    /// A sampler for a launch on `sms` SMs that hold `per_sm` CTAs each, its rates counting `work`.
    ///
    /// Windows and stretches are whole rounds of one CTA per SM: the CTAs timed after the last skip then
    /// fill the SMs' last round of dispatch as the launch's last CTAs would (a stretch of another size
    /// leaves the tail short of CTAs on some SMs, which the estimate would count as time saved).
    pub(crate) fn new(rule: CtaSampling, (sms, per_sm): (u64, u64), work: WorkUnit) -> Sampler {
        let (sms, per_sm) = (sms.max(1), per_sm.max(1));
        let wave = sms * per_sm;
        let window = sms * (per_sm / WINDOW_PARTS).max(1);
        Sampler {
            stretch: u64::from(rule.one_in.max(2) - 1) * window,
            window,
            wave,
            start: None,
            windows: Vec::new(),
            skips: Vec::new(),
            skipped_ctas: 0,
            closed: false,
            work,
        }
    }

    /// Records the epoch that ended at `p`; returns how many of the waiting CTAs to skip now (0: none).
    pub(crate) fn observe(&mut self, p: Progress) -> u64 {
        let Some(start) = self.start else {
            if p.finished >= self.wave {
                self.start = Some(p);
            }
            return 0;
        };
        if self.closed {
            return 0;
        }
        let window = Window { cycles: p.cycle - start.cycle, issued: p.issued - start.issued };
        if p.waiting == 0 {
            // The last CTA was dispatched: what follows is the tail, timed in full, not a window.
            self.closed = true;
            if window.cycles > 0 {
                self.windows.push(window);
            }
            return 0;
        }
        if p.dispatched - start.dispatched < self.window || window.cycles == 0 || p.waiting < self.stretch + self.wave {
            return 0;
        }
        self.windows.push(window);
        self.start = Some(p);
        self.skipped_ctas += self.stretch;
        self.stretch
    }

    /// Records the work of the stretch just skipped.
    pub(crate) fn skipped(&mut self, work: u64) {
        self.skips.push((self.windows.len() - 1, work));
    }

    /// The estimate, once the launch ended (`None` when nothing was skipped); `ctas`: the launch's CTAs.
    pub(crate) fn estimate(&self, ctas: u64) -> Option<CtaSample> {
        if self.skips.is_empty() {
            return None;
        }
        let rel = self.relative_deviation();
        let (mut cycles, mut var) = (0.0f64, 0.0f64);
        for &(w, instructions) in &self.skips {
            let around = &self.windows[w..self.windows.len().min(w + 2)];
            let (c, i) = around.iter().fold((0u64, 0u64), |(c, i), x| (c + x.cycles, i + x.issued));
            let rate = i as f64 / c.max(1) as f64;
            let part = if rate > 0.0 { instructions as f64 / rate } else { 0.0 };
            cycles += part;
            var += (part * rel).powi(2);
        }
        let (mc, mi) = self.windows.iter().fold((0u64, 0u64), |(c, i), x| (c + x.cycles, i + x.issued));
        Some(CtaSample {
            ctas,
            skipped_ctas: self.skipped_ctas,
            skips: self.skips.len() as u64,
            windows: self.windows.len() as u64,
            timed_warp_instructions: 0,
            skipped_warp_instructions: 0,
            skipped_work: self.skips.iter().map(|s| s.1).sum(),
            work: self.work,
            measured_work: mi,
            measured_cycles: mc,
            skipped_cycles: cycles.round() as u64,
            spread_cycles: (1.96 * var.sqrt()).round() as u64,
        })
    }

    /// The windows' rates' standard deviation over their mean (0 with fewer than two windows).
    fn relative_deviation(&self) -> f64 {
        let rates: Vec<f64> = self.windows.iter().map(|w| w.issued as f64 / w.cycles.max(1) as f64).collect();
        let n = rates.len();
        if n < 2 {
            return 0.0;
        }
        let mean = rates.iter().sum::<f64>() / n as f64;
        let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        if mean > 0.0 {
            var.sqrt() / mean
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cycle: u64, issued: u64, finished: u64, dispatched: u64, waiting: u64) -> Progress {
        Progress { cycle, issued, finished, dispatched, waiting }
    }

    #[test]
    fn windows_and_skips_alternate_and_the_last_wave_is_never_skipped() {
        // A GPU of 4 CTAs, one CTA in 3 timed: stretches of 8 CTAs; 40 CTAs in all.
        let mut s = Sampler::new(CtaSampling { one_in: 3 }, (4, 1), WorkUnit::WarpInstructions);
        assert_eq!(s.observe(at(100, 200, 2, 6, 34)), 0, "warming up");
        assert_eq!(s.observe(at(200, 400, 4, 8, 32)), 0, "warm: the first window starts");
        assert_eq!(s.observe(at(300, 600, 6, 10, 30)), 0, "two CTAs dispatched in the window");
        assert_eq!(s.observe(at(400, 800, 8, 12, 28)), 8, "four dispatched: skip a stretch");
        s.skipped(1600);
        assert_eq!(s.observe(at(600, 1000, 12, 16, 12)), 8, "a window of 200 cycles at rate 1");
        s.skipped(800);
        // 4 wait: no stretch fits before the last wave.
        assert_eq!(s.observe(at(700, 1200, 14, 18, 2)), 0);
        assert_eq!(s.observe(at(800, 1400, 16, 20, 0)), 0, "all dispatched: the window closes");
        assert_eq!(s.observe(at(900, 1600, 20, 20, 0)), 0, "the tail");
        let e = s.estimate(40).unwrap();
        assert_eq!((e.skipped_ctas, e.skips, e.windows), (16, 2, 3));
        assert_eq!(e.measured_cycles, 200 + 200 + 200);
        // Rates: windows 2.0, 1.0, 2.0. The first stretch at (400 + 200) / 400 = 1.5 per cycle: 1067
        // cycles; the second at (200 + 400) / 400: 533.
        assert_eq!(e.skipped_work, 2400);
        assert_eq!(e.skipped_cycles, 1600);
        // Deviation 0.5774 / mean 1.6667 = 0.3464; spread 1.96 * 0.3464 * sqrt(1066.7^2 + 533.3^2) = 810.
        assert_eq!(e.spread_cycles, 810);
    }

    #[test]
    fn a_launch_too_short_to_skip_has_no_sample() {
        let mut s = Sampler::new(CtaSampling::default(), (4, 1), WorkUnit::WarpInstructions);
        for k in 1..=20u64 {
            assert_eq!(s.observe(at(100 * k, 200 * k, 2 * k, 4 + 2 * k, 40u64.saturating_sub(2 * k))), 0);
        }
        assert_eq!(s.estimate(44), None);
    }

    #[test]
    fn merged_samples_sum_and_weigh_their_rates_by_cycles() {
        let a = CtaSample { ctas: 10, measured_cycles: 100, measured_work: 200, ..Default::default() };
        let b = CtaSample { ctas: 5, measured_cycles: 300, measured_work: 300, ..Default::default() };
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!((m.ctas, m.measured_cycles), (15, 400));
        assert_eq!(m.rate(), 1.25);
    }
}
