//! A timeline of a timed run for trace viewers (Perfetto, chrome://tracing): what each scheduler issued
//! and when, why it idled, and the SIMD efficiency over time, per SM. Bounded: only a window of cycles is
//! recorded and at most a number of events; the result says how many were left out.

/// What to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceSpec {
    /// First cycle recorded.
    pub from: u64,
    /// One past the last cycle recorded.
    pub to: u64,
    /// The most events kept (split evenly over the SMs, so the result does not depend on host threads).
    pub max_events: usize,
    /// Cycles per SIMD-efficiency counter sample.
    pub bucket: u64,
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec { from: 0, to: u64::MAX, max_events: 1_000_000, bucket: 1000 }
    }
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq)]
pub enum TraceEvent {
    /// An issued group: it occupied its scheduler's unit from `start` for `dur` cycles.
    Issue {
        /// SM.
        sm: u32,
        /// Scheduler of the SM.
        sched: u32,
        /// Linear CTA index.
        cta: u64,
        /// Hardware warp slot of the CTA the group issued from.
        warp: u32,
        /// The pc.
        pc: u32,
        /// Active lanes.
        lanes: u32,
        /// The mechanism's structure size after the issue.
        structure: u32,
        /// Issue cycle.
        start: u64,
        /// Cycles the unit stayed busy (at least 1).
        dur: u64,
    },
    /// A scheduler idled for `dur` cycles from `start` because of `cause`.
    Stall {
        /// SM.
        sm: u32,
        /// Scheduler.
        sched: u32,
        /// `memory`, `register dependency`, `busy unit or branch`, `barrier`, `mechanism` or `no warp`.
        cause: &'static str,
        /// First idle cycle.
        start: u64,
        /// Idle cycles.
        dur: u64,
    },
    /// SIMD efficiency of the kernel's own instructions issued by one SM in `[cycle, cycle + bucket)`.
    Simd {
        /// SM.
        sm: u32,
        /// Start of the sample.
        cycle: u64,
        /// Active lanes / (issues × warp size).
        efficiency: f64,
    },
}

impl TraceEvent {
    /// The event's start cycle (the sort key of a merged timeline).
    pub fn start(&self) -> u64 {
        match self {
            TraceEvent::Issue { start, .. } | TraceEvent::Stall { start, .. } => *start,
            TraceEvent::Simd { cycle, .. } => *cycle,
        }
    }
}

/// The timeline of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Events, by start cycle then SM.
    pub events: Vec<TraceEvent>,
    /// Events left out by the cap.
    pub dropped: u64,
    /// What was asked.
    pub spec: Option<TraceSpec>,
}

/// One issued group as the timeline records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IssuedGroup {
    /// The CTA's linear index.
    pub cta: u64,
    /// The hardware warp within the CTA.
    pub warp: u32,
    /// The instruction's pc.
    pub pc: u32,
    /// Active lanes.
    pub lanes: u32,
    /// The warp's structure size (stack depth, paths) after the issue.
    pub structure: usize,
    /// The issue cycle.
    pub start: u64,
    /// Cycles the issue keeps the scheduler busy (at least 1 is recorded).
    pub dur: u64,
}

/// One SM's recorder.
#[derive(Debug)]
pub struct SmTrace {
    spec: TraceSpec,
    sm: u32,
    cap: usize,
    width: u64,
    /// Recorded events.
    pub events: Vec<TraceEvent>,
    /// Events left out by the cap.
    pub dropped: u64,
    /// Per scheduler, the stall being extended: (cause, start, cycles).
    open: Vec<Option<(&'static str, u64, u64)>>,
    /// The current SIMD sample: (start, issues, lanes).
    sample: (u64, u64, u64),
}

impl SmTrace {
    /// A recorder for SM `sm` of `nsm` with `nsched` schedulers and warps of `width` threads.
    pub fn new(spec: TraceSpec, sm: u32, nsm: u32, nsched: usize, width: u32) -> SmTrace {
        SmTrace {
            spec,
            sm,
            cap: spec.max_events / nsm.max(1) as usize,
            width: u64::from(width),
            events: Vec::new(),
            dropped: 0,
            open: vec![None; nsched],
            sample: (spec.from, 0, 0),
        }
    }

    fn push(&mut self, e: TraceEvent) {
        let t = e.start();
        if t < self.spec.from || t >= self.spec.to {
            return;
        }
        if self.events.len() >= self.cap {
            self.dropped += 1;
        } else {
            self.events.push(e);
        }
    }

    /// Scheduler `sched` issued `group` (`own`: one of the kernel's own instructions, counted in the SIMD
    /// samples).
    pub fn issue(&mut self, sched: usize, group: IssuedGroup, own: bool) {
        let IssuedGroup { cta, warp, pc, lanes, structure, start, dur } = group;
        self.close(sched);
        self.advance(start);
        if own {
            self.sample.1 += 1;
            self.sample.2 += u64::from(lanes);
        }
        let (sm, sched) = (self.sm, sched as u32);
        let structure = structure.min(u32::MAX as usize) as u32;
        self.push(TraceEvent::Issue { sm, sched, cta, warp, pc, lanes, structure, start, dur: dur.max(1) });
    }

    /// Scheduler `sched` idled `n` cycles from `start` because of `cause`.
    pub fn stall(&mut self, sched: usize, cause: &'static str, start: u64, n: u64) {
        match &mut self.open[sched] {
            Some((c, s, d)) if *c == cause && *s + *d == start => *d += n,
            _ => {
                self.close(sched);
                self.open[sched] = Some((cause, start, n));
            }
        }
    }

    /// Ends the stall of `sched`.
    pub fn close(&mut self, sched: usize) {
        if let Some((cause, start, dur)) = self.open[sched].take() {
            let sm = self.sm;
            self.push(TraceEvent::Stall { sm, sched: sched as u32, cause, start, dur });
        }
    }

    /// Emits the SIMD samples that end before `cycle`.
    fn advance(&mut self, cycle: u64) {
        let b = self.spec.bucket.max(1);
        while cycle >= self.sample.0 + b {
            let (start, issues, lanes) = self.sample;
            if issues > 0 {
                let efficiency = lanes as f64 / (issues * self.width) as f64;
                let sm = self.sm;
                self.push(TraceEvent::Simd { sm, cycle: start, efficiency });
            }
            let next = if issues > 0 { start + b } else { start + (cycle - start) / b * b };
            self.sample = (next, 0, 0);
        }
    }

    /// Closes every open stall and the last sample.
    pub fn finish(&mut self) {
        for s in 0..self.open.len() {
            self.close(s);
        }
        let end = self.sample.0 + self.spec.bucket.max(1);
        self.advance(end);
    }
}

/// Merges the SMs' recordings into one timeline.
pub fn merge(spec: TraceSpec, sms: Vec<SmTrace>) -> Timeline {
    let mut events = Vec::new();
    let mut dropped = 0;
    for mut s in sms {
        s.finish();
        dropped += s.dropped;
        events.append(&mut s.events);
    }
    events.sort_by_key(|e| {
        let sm = match e {
            TraceEvent::Issue { sm, .. } | TraceEvent::Stall { sm, .. } | TraceEvent::Simd { sm, .. } => *sm,
        };
        (e.start(), sm)
    });
    Timeline { events, dropped, spec: Some(spec) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_merge_and_samples_and_caps_apply() {
        let spec = TraceSpec { from: 0, to: 100, max_events: 6, bucket: 10 };
        let mut t = SmTrace::new(spec, 0, 1, 1, 4);
        t.stall(0, "memory", 0, 3);
        t.stall(0, "memory", 3, 2);
        t.issue(0, IssuedGroup { cta: 0, warp: 0, pc: 7, lanes: 2, structure: 1, start: 5, dur: 1 }, true);
        t.issue(0, IssuedGroup { cta: 0, warp: 0, pc: 8, lanes: 4, structure: 1, start: 12, dur: 1 }, true);
        t.stall(0, "barrier", 13, 200);
        let tl = merge(spec, vec![t]);
        assert_eq!(tl.events[0], TraceEvent::Stall { sm: 0, sched: 0, cause: "memory", start: 0, dur: 5 });
        assert!(tl.events.contains(&TraceEvent::Simd { sm: 0, cycle: 0, efficiency: 0.5 }));
        assert!(tl.events.contains(&TraceEvent::Simd { sm: 0, cycle: 10, efficiency: 1.0 }));
        assert!(tl.events.iter().any(|e| matches!(e, TraceEvent::Stall { cause: "barrier", dur: 200, .. })));
        // A cycle window: nothing before `from` or from `to` on.
        let spec = TraceSpec { from: 10, to: 20, max_events: 100, bucket: 10 };
        let mut t = SmTrace::new(spec, 0, 1, 1, 4);
        for c in 0..30 {
            t.issue(0, IssuedGroup { cta: 0, warp: 0, pc: 1, lanes: 4, structure: 1, start: c, dur: 1 }, true);
        }
        let tl = merge(spec, vec![t]);
        assert_eq!(tl.events.iter().filter(|e| matches!(e, TraceEvent::Issue { .. })).count(), 10);
        // The cap.
        let spec = TraceSpec { from: 0, to: u64::MAX, max_events: 3, bucket: 1000 };
        let mut t = SmTrace::new(spec, 0, 1, 1, 4);
        for c in 0..10 {
            t.issue(0, IssuedGroup { cta: 0, warp: 0, pc: 1, lanes: 4, structure: 1, start: c, dur: 1 }, true);
        }
        let tl = merge(spec, vec![t]);
        assert_eq!((tl.events.len(), tl.dropped), (3, 8));
    }
}
