//! Every counter and ratio a mechanism reports is defined in docs/mechanism-reference.md, and every
//! mechanism has a section there.

use reconverge_sim::mechanism::Tracker;
use reconverge_sim::Mechanism;

fn names<T: Tracker>(_: &T) -> Vec<&'static str> {
    let mut v: Vec<&'static str> = T::COUNTERS.iter().chain(T::BRANCH_COUNTERS).map(|c| c.name).collect();
    v.extend(T::RATIOS.iter().map(|r| r.name));
    v
}

#[test]
fn the_mechanism_reference_defines_every_counter() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/mechanism-reference.md");
    let doc = std::fs::read_to_string(path).expect("docs/mechanism-reference.md");
    let mut missing = Vec::new();
    for m in Mechanism::EVERY {
        if !doc.contains(&format!("`{}`", m.name())) {
            missing.push(format!("the mechanism `{}`", m.name()));
        }
        let counters = reconverge_sim::with_tracker!(m, |t| names(t));
        for c in counters {
            if !doc.contains(&format!("`{c}`")) {
                missing.push(format!("`{c}` of {}", m.name()));
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/mechanism-reference.md: {}", missing.join(", "));
}
