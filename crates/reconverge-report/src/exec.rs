//! The HTML page of a whole program's launches (`reconverge exec --html`): per-kernel totals, cycles and
//! SIMD efficiency launch by launch, and every launch in a table.

use crate::html::chart::{self, Series, Size, Spec};
use crate::html::{esc, page};
use reconverge_records::aggregate::KernelTotal;
use serde_json::{Map, Value};
use std::fmt::Write;

/// A launch's or a total's number `key`, formatted (`–` when absent).
fn num(s: &Map<String, Value>, key: &str) -> String {
    match s.get(key) {
        Some(Value::Number(n)) if n.is_u64() => n.to_string(),
        Some(Value::Number(n)) => n.as_f64().map_or("–".into(), |v| format!("{v:.3}")),
        _ => "–".into(),
    }
}

/// The largest structure a run held, whichever kind the mechanism has.
fn structure(s: &Map<String, Value>) -> String {
    ["max_stack_depth", "max_paths", "max_pool_warps"]
        .iter()
        .find_map(|k| s.get(*k).and_then(Value::as_u64).map(|v| v.to_string()))
        .unwrap_or_else(|| "–".into())
}

/// Text of a dimension array (`[4, 1, 1]` as `4×1×1`).
fn dims(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        Some(a) => a.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("×"),
        None => "–".into(),
    }
}

/// The page: `program` is the command line, `launches` the shim's lines, `kernels` the per-kernel totals
/// (in order of first launch).
pub fn exec_html(program: &str, launches: &[Map<String, Value>], kernels: &[KernelTotal]) -> String {
    let first = launches.first();
    let field = |k: &str| first.and_then(|l| l.get(k)).and_then(Value::as_str).unwrap_or("–").to_string();
    let config = first.and_then(|l| l.get("config")).and_then(|c| c.get("name")).and_then(Value::as_str);
    let mut body = String::new();
    let _ = write!(
        body,
        "<h1>{}</h1><p class=\"meta\">{} launch{} of {} kernel{} under <b>{}</b>, warp size {}, {}</p>",
        esc(program),
        launches.len(),
        if launches.len() == 1 { "" } else { "es" },
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        esc(&field("mechanism")),
        first.map_or("–".into(), |l| num(l, "warp_size")),
        config.map_or("functional simulation (no cycles)".to_string(), |c| format!("configuration {}", esc(c)))
    );
    body.push_str("<h2>Per kernel</h2><table><tr><th>kernel</th><th>launches</th><th>cycles</th><th>warp instructions</th><th>SIMD efficiency</th><th>divergent branches</th><th>max structure</th><th>outcome</th></tr>");
    for KernelTotal { kernel: name, stats: s } in kernels {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&reconverge_ir::names::short_name(name)),
            num(s, "launches"),
            num(s, "cycles"),
            num(s, "warp_instructions"),
            num(s, "simd_efficiency"),
            num(s, "divergent_branches"),
            structure(s),
            esc(s.get("outcome").and_then(Value::as_str).unwrap_or("–"))
        );
    }
    body.push_str("</table><p class=\"note\">Totals combine launches by kind: counts are summed, structure sizes are maxima, ratios are recomputed from the summed parts.</p>");
    body.push_str(&plots(launches, kernels));
    body.push_str(&launch_table(launches));
    page(&format!("reconverge exec {program}"), &body)
}

/// Cycles (or warp instructions in functional mode) and SIMD efficiency per launch, a line per kernel.
fn plots(launches: &[Map<String, Value>], kernels: &[KernelTotal]) -> String {
    let timed = launches.iter().any(|l| l.get("cycles").is_some_and(|c| !c.is_null()));
    let (key, label) = if timed { ("cycles", "cycles") } else { ("warp_instructions", "warp instructions") };
    let names: Vec<String> = kernels.iter().map(|k| reconverge_ir::names::short_name(&k.kernel)).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let styles = chart::styles(&refs);
    let series = |stat: &str| -> Vec<Series> {
        kernels
            .iter()
            .zip(&names)
            .zip(&styles)
            .map(|((k, name), style)| Series {
                name: name.clone(),
                points: launches
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.get("kernel").and_then(Value::as_str) == Some(k.kernel.as_str()))
                    .filter_map(|(i, l)| Some(((i + 1) as f64, l.get(stat)?.as_f64()?)))
                    .collect(),
                style: *style,
            })
            .collect()
    };
    let spec = |title, y_label, percent| Spec {
        title,
        x_label: "launch",
        y_label,
        percent,
        y_max: if percent { Some(1.0) } else { None },
        x_max: None,
        reference: None,
        size: Size::Wide,
    };
    let title = format!("{label} per launch");
    let mut out = String::from("<h2>Launch by launch</h2>");
    out.push_str(&chart::lines(&spec(&title, label, false), &series(key)));
    out.push_str(&chart::lines(
        &spec("SIMD efficiency per launch", "SIMD efficiency", true),
        &series("simd_efficiency"),
    ));
    out
}

/// Every launch, in a collapsed table.
fn launch_table(launches: &[Map<String, Value>]) -> String {
    let mut out = format!(
        "<details><summary>All {} launches</summary><table><tr><th>launch</th><th>kernel</th><th>grid</th><th>block</th><th>cycles</th><th>warp instructions</th><th>SIMD efficiency</th><th>divergent branches</th><th>outcome</th></tr>",
        launches.len()
    );
    for l in launches {
        let kernel = l.get("kernel").and_then(Value::as_str).unwrap_or("–");
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            num(l, "launch"),
            esc(&reconverge_ir::names::short_name(kernel)),
            dims(l.get("grid")),
            dims(l.get("block")),
            num(l, "cycles"),
            num(l, "warp_instructions"),
            num(l, "simd_efficiency"),
            num(l, "divergent_branches"),
            esc(l.get("outcome").and_then(Value::as_str).unwrap_or("–"))
        );
    }
    out.push_str("</table></details>");
    out
}
