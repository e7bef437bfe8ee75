//! The Chrome trace-event format (opens in the Perfetto UI and chrome://tracing) of a timed run's
//! timeline: a process per SM; in it a track per scheduler (its stalls, by cause) and a track per warp
//! slot (its issued groups, with pc, source line, active lanes and structure size); a SIMD-efficiency
//! counter per SM. One trace microsecond is one simulated cycle.

use reconverge_sim::Program;
use reconverge_timing::{Timeline, TraceEvent};
use serde_json::{json, Value};

/// Warp-slot tracks are numbered after the scheduler tracks.
const WARP_TRACK: u64 = 1000;

fn line_of(prog: &Program, pc: u32) -> String {
    match prog.info.get(pc as usize) {
        Some(i) => match i.loc {
            Some(l) => format!("line {}", l.line),
            None => format!("ptx line {}", i.ptx_line),
        },
        None => String::new(),
    }
}

/// The trace of `timeline` (a run of `prog` under `mechanism`), as one JSON object.
pub fn chrome_trace(timeline: &Timeline, prog: &Program, kernel: &str, mechanism: &str) -> Value {
    let mut events: Vec<Value> = Vec::new();
    let mut named: std::collections::BTreeSet<(u32, u64)> = std::collections::BTreeSet::new();
    let mut sms: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    let mut name_track = |events: &mut Vec<Value>, sm: u32, tid: u64, name: String| {
        if named.insert((sm, tid)) {
            events.push(json!({"ph": "M", "name": "thread_name", "pid": sm, "tid": tid, "args": {"name": name}}));
            events.push(
                json!({"ph": "M", "name": "thread_sort_index", "pid": sm, "tid": tid, "args": {"sort_index": tid}}),
            );
        }
    };
    for e in &timeline.events {
        match *e {
            TraceEvent::Issue { sm, sched, cta, warp, pc, lanes, structure, start, dur } => {
                sms.insert(sm);
                let tid = WARP_TRACK + cta * 1000 + u64::from(warp);
                name_track(&mut events, sm, tid, format!("CTA {cta} warp {warp} (scheduler {sched})"));
                let text = prog.info.get(pc as usize).map(|i| i.text.as_str()).unwrap_or("");
                // One cycle wide (the issue), so a warp's slices never overlap; how long the unit stays
                // busy is an argument.
                events.push(json!({
                    "ph": "X", "pid": sm, "tid": tid, "ts": start, "dur": 1,
                    "name": format!("pc {pc}: {text}"),
                    "args": {"pc": pc, "line": line_of(prog, pc), "active_lanes": lanes, "structure": structure, "cta": cta, "scheduler": sched, "unit_busy_cycles": dur},
                }));
            }
            TraceEvent::Stall { sm, sched, cause, start, dur } => {
                sms.insert(sm);
                let tid = u64::from(sched);
                name_track(&mut events, sm, tid, format!("scheduler {sched} (idle slots)"));
                events.push(json!({"ph": "X", "pid": sm, "tid": tid, "ts": start, "dur": dur, "name": format!("idle: {cause}"), "args": {"cause": cause}}));
            }
            TraceEvent::Simd { sm, cycle, efficiency } => {
                sms.insert(sm);
                events.push(json!({"ph": "C", "pid": sm, "ts": cycle, "name": "SIMD efficiency", "args": {"percent": (efficiency * 1000.0).round() / 10.0}}));
            }
        }
    }
    for sm in sms {
        events.push(json!({"ph": "M", "name": "process_name", "pid": sm, "args": {"name": format!("SM {sm}")}}));
        events.push(json!({"ph": "M", "name": "process_sort_index", "pid": sm, "args": {"sort_index": sm}}));
    }
    let spec = timeline.spec.unwrap_or_default();
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "kernel": kernel,
            "mechanism": mechanism,
            "time_unit": "1 trace microsecond = 1 simulated cycle",
            "window": [spec.from, spec.to],
            "events_left_out": timeline.dropped,
        },
    })
}
