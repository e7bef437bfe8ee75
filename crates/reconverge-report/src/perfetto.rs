//! The Chrome trace-event format (opens in the Perfetto UI and chrome://tracing) of a timed run's
//! timeline: a process per SM; in it a track per scheduler (its stalls, by cause) and a track per warp
//! slot (its issued groups, with pc, source line, active lanes and structure size); a SIMD-efficiency
//! counter per SM. One trace microsecond is one simulated cycle.

use reconverge_program::Program;
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

/// Writes the trace of `timeline` (a run of `prog` under `mechanism`) to `out` as one JSON object, one
/// event at a time: memory stays that of the timeline itself (its events are bounded by
/// [`reconverge_timing::TraceSpec::max_events`]), however many events there are.
pub fn write_chrome_trace(
    timeline: &Timeline,
    prog: &Program,
    kernel: &str,
    mechanism: &str,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut first = true;
    let mut emit = |out: &mut dyn std::io::Write, v: Value| -> std::io::Result<()> {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        serde_json::to_writer(&mut *out, &v).map_err(std::io::Error::other)
    };
    out.write_all(b"{\"traceEvents\": [")?;
    let mut named: std::collections::BTreeSet<(u32, u64)> = std::collections::BTreeSet::new();
    let mut sms: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
    for e in &timeline.events {
        let (sm, tid, name) = match *e {
            TraceEvent::Issue { sm, sched, cta, warp, .. } => (
                sm,
                Some(WARP_TRACK + cta * 1000 + u64::from(warp)),
                format!("CTA {cta} warp {warp} (scheduler {sched})"),
            ),
            TraceEvent::Stall { sm, sched, .. } => {
                (sm, Some(u64::from(sched)), format!("scheduler {sched} (idle slots)"))
            }
            TraceEvent::Simd { sm, .. } => (sm, None, String::new()),
        };
        sms.insert(sm);
        if let Some(tid) = tid.filter(|&t| named.insert((sm, t))) {
            emit(out, json!({"ph": "M", "name": "thread_name", "pid": sm, "tid": tid, "args": {"name": name}}))?;
            emit(
                out,
                json!({"ph": "M", "name": "thread_sort_index", "pid": sm, "tid": tid, "args": {"sort_index": tid}}),
            )?;
        }
        emit(out, event_json(e, prog))?;
    }
    for sm in sms {
        emit(out, json!({"ph": "M", "name": "process_name", "pid": sm, "args": {"name": format!("SM {sm}")}}))?;
        emit(out, json!({"ph": "M", "name": "process_sort_index", "pid": sm, "args": {"sort_index": sm}}))?;
    }
    let spec = timeline.spec.unwrap_or_default();
    // JavaScript reads numbers as doubles: an open end of the window is `null`, not 2^64 - 1.
    let to = (spec.to != u64::MAX).then_some(spec.to);
    let other = json!({
        "kernel": kernel,
        "mechanism": mechanism,
        "time_unit": "1 trace microsecond = 1 simulated cycle",
        "window": [spec.from, to],
        "events_left_out": timeline.dropped,
    });
    write!(out, "\n], \"otherData\": ")?;
    serde_json::to_writer(&mut *out, &other).map_err(std::io::Error::other)?;
    out.write_all(b"}\n")
}

/// One timeline event as a trace event.
fn event_json(e: &TraceEvent, prog: &Program) -> Value {
    match *e {
        TraceEvent::Issue { sm, sched, cta, warp, pc, lanes, structure, start, dur } => {
            let tid = WARP_TRACK + cta * 1000 + u64::from(warp);
            let text = prog.info.get(pc as usize).map(|i| i.text.as_str()).unwrap_or("");
            // One cycle wide (the issue), so a warp's slices never overlap; how long the unit stays busy
            // is an argument.
            json!({
                "ph": "X", "pid": sm, "tid": tid, "ts": start, "dur": 1,
                "name": format!("pc {pc}: {text}"),
                "args": {"pc": pc, "line": line_of(prog, pc), "active_lanes": lanes, "structure": structure, "cta": cta, "scheduler": sched, "unit_busy_cycles": dur},
            })
        }
        TraceEvent::Stall { sm, sched, cause, start, dur } => {
            json!({"ph": "X", "pid": sm, "tid": u64::from(sched), "ts": start, "dur": dur, "name": format!("idle: {cause}"), "args": {"cause": cause}})
        }
        TraceEvent::Simd { sm, cycle, efficiency } => {
            json!({"ph": "C", "pid": sm, "ts": cycle, "name": "SIMD efficiency", "args": {"percent": (efficiency * 1000.0).round() / 10.0}})
        }
    }
}
