//! The Chrome trace-event format (opens in the Perfetto UI and chrome://tracing) of a timed run's
//! timeline: a process per SM; in it a track per scheduler (its stalls, by cause) and a track per warp
//! slot (its issued groups, with pc, source line, active lanes and structure size); a SIMD-efficiency
//! counter per SM.
//!
//! Time: the format's timestamps are microseconds, and this file writes cycles there, so one
//! microsecond in the viewer is one simulated cycle (one millisecond, a thousand cycles). The file sets
//! no `displayTimeUnit` (which would only change how the viewer prints those microseconds) and says so in
//! its `otherData`. Numbers: JavaScript reads them as doubles, so no integer above 2^53 - 1 is written
//! (an open end of the cycle window, or any such value, is `null`).

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
        serde_json::to_writer(&mut *out, &js_safe(v)).map_err(std::io::Error::other)
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
    // An open end of the window is `null` (not 2^64 - 1, which JavaScript cannot hold).
    let other = json!({
        "kernel": kernel,
        "mechanism": mechanism,
        "time_unit": "cycle",
        "time_note": "ts and dur are simulated cycles written where the format expects microseconds: 1 µs in the viewer is 1 cycle, 1 ms is 1000 cycles",
        "window": [spec.from, spec.to],
        "events_left_out": timeline.dropped,
    });
    write!(out, "\n], \"otherData\": ")?;
    serde_json::to_writer(&mut *out, &js_safe(other)).map_err(std::io::Error::other)?;
    out.write_all(b"}\n")
}

/// The largest integer JavaScript holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `v` with every integer above [`MAX_SAFE_INTEGER`] (or below its negative) replaced by `null`.
fn js_safe(v: Value) -> Value {
    match v {
        Value::Number(n) if n.as_u64().is_some_and(|x| x > MAX_SAFE_INTEGER) => Value::Null,
        Value::Number(n) if n.as_i64().is_some_and(|x| x.unsigned_abs() > MAX_SAFE_INTEGER) => Value::Null,
        Value::Array(a) => Value::Array(a.into_iter().map(js_safe).collect()),
        Value::Object(o) => Value::Object(o.into_iter().map(|(k, x)| (k, js_safe(x))).collect()),
        v => v,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_timing::{TraceEvent, TraceSpec};

    /// Nothing above 2^53 - 1 reaches the file: the open window end (`u64::MAX`) and any huge value
    /// become `null`; the time unit is spelled out and no `displayTimeUnit` says otherwise.
    #[test]
    fn the_file_holds_only_safe_integers_and_says_what_a_microsecond_is() {
        let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n";
        let module = reconverge_ptx::parse(ptx).expect("parses");
        let opts = reconverge_program::DecodeOptions::default();
        let kernel = reconverge_sim::load(&module, None, reconverge_mechanism::Mechanism::Pdom, &opts).expect("loads");
        let prog = kernel.program();
        let timeline = Timeline {
            events: vec![TraceEvent::Stall { sm: 0, sched: 0, cause: "memory", start: 3, dur: u64::MAX - 3 }],
            dropped: 0,
            spec: Some(TraceSpec::default()),
        };
        let mut out = Vec::new();
        write_chrome_trace(&timeline, prog, "k", "pdom", &mut out).expect("writes");
        let v: Value = serde_json::from_slice(&out).expect("json");
        assert!(v.get("displayTimeUnit").is_none());
        assert!(v["otherData"]["window"][1].is_null(), "{}", v["otherData"]);
        assert_eq!(v["otherData"]["time_unit"], "cycle");
        let stall = v["traceEvents"].as_array().expect("events").iter().find(|e| e["ph"] == "X").expect("stall");
        assert_eq!(stall["ts"], 3);
        assert!(stall["dur"].is_null(), "{stall}");
        let text = String::from_utf8(out).expect("utf-8");
        assert!(!text.contains(&u64::MAX.to_string()));
    }
}
