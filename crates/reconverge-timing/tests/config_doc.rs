//! `docs/configuration.md`'s parameter and range tables are generated from the code: each parameter's
//! meaning is its doc comment in `src/config.rs` (or, for `[mechanism]`, in the mechanism crate), each value the preset's own (serialised as `--json`
//! prints it), each range `GpuConfig::ranges`. The test fails when the document differs from a fresh
//! rendering; `UPDATE_EXPECT=1 cargo test -p reconverge-timing --test config_doc` rewrites it.

use reconverge_timing::config::GpuConfig;

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md");
/// The sources the configuration's structs are defined in (the mechanisms' latencies live beside the
/// delays they price, in the mechanism crate).
const SOURCES: [&str; 3] = [
    include_str!("../src/config.rs"),
    include_str!("../../reconverge-mechanism/src/interface/tracker.rs"),
    include_str!("../src/energy.rs"),
];

/// The presets with a column, in order.
const COLUMNS: [&str; 4] = ["gtx480", "volta", "tiny", "ispass09"];

/// Each section of a configuration file: its key (empty: top level), the struct in `config.rs`, and a
/// sentence that introduces it.
const SECTIONS: [(&str, &str, &str); 16] = [
    ("", "GpuConfig", ""),
    ("sm", "SmConfig", ""),
    ("latency", "Latencies", "Result latencies, in cycles from issue until a dependent instruction may issue; with an `[opcode]` table only `branch`, `shared`, `constant`, `barrier` and `warp_op` apply (the table gives the arithmetic)."),
    ("interval", "Intervals", "Initiation intervals: cycles a unit stays busy per warp instruction (with an `[opcode]` table, only `mem` applies)."),
    ("l1", "L1Config", ""),
    ("l2", "L2Config", ""),
    ("dram", "DramConfig", ""),
    ("dram.banks", "DramBanks", "Optional section: banked DRAM (timing in DRAM command cycles; the model is in docs/energy.md's DRAM timing section). Without it DRAM is one channel of `dram.bytes_per_cycle`."),
    ("shared", "SharedConfig", ""),
    ("mechanism", "MechanismLatencies", "The divergence mechanisms' own hardware (optional section; the defaults apply when it is absent)."),
    ("opcode", "OpcodeConfig", "Optional section: without it every operation takes its class's `[latency]` and `[interval]`."),
    ("frontend", "FrontendConfig", "Optional section; its defaults are a perfect instruction supply."),
    ("constant_cache", "ConstCacheConfig", "Optional section; without it (size 0) a constant or parameter load costs `latency.constant` per distinct address."),
    ("texture_cache", "TextureCacheConfig", "Optional section; without it (size 0) a texture fetch is timed as a global load of each lane's first texel through the L1."),
    ("launch", "LaunchCostConfig", "Optional section; its defaults cost nothing."),
    ("energy", "EnergyCoefficients", "Optional section: energy per event and power (docs/energy.md cites every value); without it no energy is reported."),
];

/// The doc comment of every field of `struct name` in the source, joined into one line per field.
fn field_docs(name: &str) -> Vec<(String, String)> {
    let head = format!("pub struct {name} {{");
    let source = SOURCES.iter().find(|s| s.contains(&head)).unwrap_or_else(|| panic!("struct {name}"));
    let body = &source[source.find(&head).expect("found")..];
    let body = &body[..body.find("\n}").expect("end of struct")];
    let (mut out, mut doc) = (Vec::new(), Vec::new());
    for line in body.lines().skip(1).map(str::trim) {
        if let Some(text) = line.strip_prefix("///") {
            doc.push(text.trim().to_string());
        } else if let Some(rest) = line.strip_prefix("pub ") {
            let field = rest.split(':').next().expect("field").trim().to_string();
            out.push((field, doc.join(" ")));
            doc.clear();
        } else if !line.starts_with("#[") {
            doc.clear();
        }
    }
    out
}

fn value_text(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "—".into(),
        Some(serde_json::Value::Array(a)) if a.is_empty() => "[]".into(),
        Some(serde_json::Value::Array(a)) => {
            format!("[{}]", a.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
        }
        Some(v) => v.to_string(),
    }
}

fn render() -> String {
    let presets: Vec<serde_json::Value> = COLUMNS
        .iter()
        .map(|p| serde_json::to_value(GpuConfig::preset(p).expect("preset")).expect("serialises"))
        .collect();
    let mut out = String::new();
    for (key, strukt, intro) in SECTIONS {
        out += &if key.is_empty() { "### (top level)\n\n".to_string() } else { format!("### [{key}]\n\n") };
        if !intro.is_empty() {
            out += &format!("{intro}\n\n");
        }
        out += &format!(
            "| parameter | meaning | {} |\n| --- | --- |{}\n",
            COLUMNS.join(" | "),
            " --- |".repeat(COLUMNS.len())
        );
        for (field, doc) in field_docs(strukt) {
            let section = |p: &serde_json::Value| {
                if key.is_empty() {
                    return Some(p.clone());
                }
                key.split('.').try_fold(p.clone(), |v, k| v.get(k).cloned())
            };
            if section(&presets[0]).and_then(|s| s.get(&field).cloned()).is_some_and(|v| v.is_object()) {
                continue; // a section of its own
            }
            let values: Vec<String> =
                presets.iter().map(|p| value_text(section(p).as_ref().and_then(|s| s.get(&field)))).collect();
            out += &format!("| `{field}` | {doc} | {} |\n", values.join(" | "));
        }
        out += "\n";
    }
    out += "### Ranges\n\nEvery numeric parameter must lie in its range, `warp_size` must be a power of two, and \
every structure the model builds from the configuration must be buildable: each cache's size a power-of-two \
number of sets of its ways (at most 2^22 lines), `l1.sector` a power of two dividing `l1.line` and `l2.line` \
into at most 32 sectors each (the L2's sectors are the L1's), `l2.line` at least `l1.line`, and `l1.mshrs` × \
`l1.mshr_merge` at most 2^24. A file that breaks a rule is refused when it is read, before any launch, \
naming the file, the table and the keys (`small.toml: [l1] sector = 1, [l2] line = 128: the L2, whose \
sectors are the L1's: 128-byte lines of 1-byte sectors have 128 sectors, more than 32`); a configuration \
that is read never fails when a launch builds the model. The ranges keep every structure the model builds \
from a configuration small enough to check against `--max-memory` first (the timing model's own structures \
count against it: see the README).\n\n| key | least | most |\n| --- | ---: | ---: |\n";
    for (key, _, lo, hi) in GpuConfig::gtx480().ranges() {
        out += &format!("| `{key}` | {lo} | {hi} |\n");
    }
    out
}

#[test]
fn the_parameter_tables_are_the_code_s() {
    let (begin, end) = ("<!-- parameters -->\n", "<!-- /parameters -->");
    let doc = std::fs::read_to_string(DOC).expect("docs/configuration.md");
    let i = doc.find(begin).expect("docs/configuration.md has the parameters markers") + begin.len();
    let j = doc.find(end).expect("end marker");
    let fresh = render();
    if doc[i..j] == fresh {
        return;
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(DOC, format!("{}{}{}", &doc[..i], fresh, &doc[j..])).expect("writes");
        return;
    }
    panic!(
        "docs/configuration.md's parameter tables differ from the code; run \
         `UPDATE_EXPECT=1 cargo test -p reconverge-timing --test config_doc`"
    );
}

#[test]
fn every_field_has_a_doc_comment() {
    for (_, strukt, _) in SECTIONS {
        for (field, doc) in field_docs(strukt) {
            assert!(!doc.is_empty(), "{strukt}::{field} has no doc comment");
        }
    }
}
