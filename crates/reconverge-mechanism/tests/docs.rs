//! Every counter and ratio a mechanism reports is defined in docs/mechanism-reference.md, and every
//! mechanism has a section there.

use reconverge_mechanism::Mechanism;
use reconverge_mechanism::Tracker;

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
    for m in Mechanism::ALL {
        if !doc.contains(&format!("`{}`", m.name())) {
            missing.push(format!("the mechanism `{}`", m.name()));
        }
        let counters = reconverge_mechanism::with_tracker!(m, |t| names(t));
        for c in counters {
            if !doc.contains(&format!("`{c}`")) {
                missing.push(format!("`{c}` of {}", m.name()));
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/mechanism-reference.md: {}", missing.join(", "));
}

/// The names in backticks of the first column of the README's "Mechanisms" table.
fn readme_table_names(readme: &str) -> Vec<String> {
    let section = readme.split("\n## Mechanisms\n").nth(1).expect("a Mechanisms section");
    let mut names = Vec::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')).take_while(|l| l.starts_with('|')).skip(2) {
        let first = line.split('|').nth(1).unwrap_or("");
        names.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}

#[test]
fn the_readme_lists_exactly_the_registry_and_says_which_run_by_default() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    let mut listed = readme_table_names(&readme);
    let mut registry: Vec<String> = reconverge_mechanism::REGISTRY
        .iter()
        .flat_map(|e| std::iter::once(e.info.name).chain(e.info.aliases.iter().copied()))
        .map(str::to_string)
        .collect();
    listed.sort();
    registry.sort();
    assert_eq!(listed, registry, "the README's mechanism table and the registry differ");
    // The sentence after the table names the mechanisms left out of the default set.
    let after = readme.split("\n## Mechanisms\n").nth(1).and_then(|s| s.split("\n\n").nth(1)).unwrap_or("");
    for m in Mechanism::ALL.into_iter().filter(|m| !m.info().default) {
        assert!(
            after.contains(&format!("`{}`", m.name())),
            "the README does not say that `{m}` is left out of the default set: {after}"
        );
    }
}
