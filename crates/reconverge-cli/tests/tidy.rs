//! The tidy check over the whole workspace: the rules of `ARCHITECTURE.md` that a reader would otherwise
//! have to enforce by review. The crate map runs one way, libraries return typed errors, functions stay a
//! screen or two long, no lint is silenced where a struct would do, every library documents its public
//! items, and every mechanism file carries its own unit tests.

use std::path::{Path, PathBuf};

/// The longest function allowed outside tests, in lines.
const MAX_FUNCTION_LINES: usize = 150;

/// The crate map, bottom up: a crate may depend only on crates of lower layers.
const LAYERS: &[&[&str]] = &[
    &["reconverge-ir", "reconverge-nvrtc", "reconverge-workspace-hack"],
    &["reconverge-ptx", "reconverge-analysis", "reconverge-semantics"],
    &["reconverge-transform", "reconverge-program"],
    &["reconverge-mechanism", "reconverge-jit", "reconverge-reference", "reconverge-kernelgen"],
    &["reconverge-sim"],
    &["reconverge-timing"],
    &["reconverge-energy"],
    &["reconverge-records"],
    &["reconverge-report"],
    &["reconverge-suite", "reconverge-fuzz", "reconverge-cudart", "reconverge-cudart12"],
    &["reconverge-cli", "reconverge-py"],
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every workspace member's directory (from the root `Cargo.toml`).
fn members() -> Vec<PathBuf> {
    let text = std::fs::read_to_string(root().join("Cargo.toml")).expect("the workspace manifest");
    let manifest: toml::Table = text.parse().expect("the workspace manifest parses");
    let members = manifest["workspace"]["members"].as_array().expect("members");
    members.iter().map(|m| root().join(m.as_str().expect("a path"))).collect()
}

/// A member's package name and the workspace crates among its (non-dev) dependencies.
fn package(dir: &Path) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a member manifest");
    let manifest: toml::Table = text.parse().expect("a member manifest parses");
    let name = manifest["package"]["name"].as_str().expect("a package name").to_string();
    let deps = manifest.get("dependencies").and_then(|d| d.as_table());
    let ours = deps.into_iter().flat_map(|d| d.keys()).filter(|k| k.starts_with("reconverge-")).cloned().collect();
    (name, ours)
}

fn layer(name: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&name))
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// The lines of `file` with every item marked `#[cfg(test)]` (a test module, a test-only `use` or
/// function) blanked; everything else, before and after such items, stays for the checks to read, at its
/// own line number.
fn non_test_lines(file: &Path) -> Vec<String> {
    without_test_items(&std::fs::read_to_string(file).expect("a source file"))
}

/// [`non_test_lines`] of a text: an item after a `#[cfg(test)]` line ends at the `;` of a declaration or at
/// the brace that closes its body (strings, characters and comments do not count).
fn without_test_items(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim().starts_with("#[cfg(test)]") {
            i += 1;
            continue;
        }
        let (mut depth, mut started, mut j) = (0i64, false, i);
        'item: while j < lines.len() {
            let code = blank_literals(&lines[j]);
            // The attribute's own brackets are not the item's.
            let code = if j == i { code.trim_start().trim_start_matches("#[cfg(test)]").to_string() } else { code };
            for ch in code.chars() {
                match ch {
                    '{' => (depth, started) = (depth + 1, true),
                    '}' => depth -= 1,
                    ';' if !started && depth == 0 => break 'item,
                    _ => {}
                }
                if started && depth == 0 {
                    break 'item;
                }
            }
            j += 1;
        }
        let last = j.min(lines.len() - 1);
        for line in &mut lines[i..=last] {
            line.clear();
        }
        i = j + 1;
    }
    lines
}

/// The source files of every member's library or binary (not its tests).
fn sources() -> Vec<(String, PathBuf)> {
    members().iter().flat_map(|d| rust_files(&d.join("src")).into_iter().map(|f| (package(d).0, f))).collect()
}

fn relative(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

#[test]
fn the_crate_map_runs_one_way() {
    let mut wrong = Vec::new();
    for dir in members() {
        let (name, deps) = package(&dir);
        let Some(mine) = layer(&name) else {
            wrong.push(format!("{name} is not on the crate map (LAYERS in this file and ARCHITECTURE.md)"));
            continue;
        };
        for d in deps {
            match layer(&d) {
                Some(l) if l < mine => {}
                _ => wrong.push(format!("{name} (layer {mine}) depends on {d} (layer {:?})", layer(&d))),
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies that run back up the crate map:\n{}", wrong.join("\n"));
}

#[test]
fn libraries_return_typed_errors() {
    let mut wrong = Vec::new();
    for (name, file) in sources() {
        if name == "reconverge-cli" {
            continue; // the binary renders errors; it is not a library
        }
        for (i, l) in non_test_lines(&file).iter().enumerate() {
            let code = l.split("//").next().unwrap_or("");
            let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
            if compact.contains(",String>") && compact.contains("Result<") {
                wrong.push(format!("{}:{}: {}", relative(&file), i + 1, l.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "library functions returning `Result<_, String>`:\n{}", wrong.join("\n"));
}

/// `(name, first line, lines)` of every function with a body in `lines`, by brace matching (strings,
/// characters and comments blanked first).
fn functions(lines: &[String]) -> Vec<(String, usize, usize)> {
    let code: Vec<String> = lines.iter().map(|l| blank_literals(l)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let Some(name) = fn_name(&code[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut started, mut j) = (0i64, false, i);
        'scan: while j < code.len() {
            for ch in code[j].chars() {
                match ch {
                    '{' => (depth, started) = (depth + 1, true),
                    '}' => depth -= 1,
                    ';' if !started && depth == 0 => break 'scan, // a declaration without a body
                    _ => {}
                }
                if started && depth == 0 {
                    break 'scan;
                }
            }
            j += 1;
        }
        if started {
            out.push((name, i + 1, j - i + 1));
        }
        i = j.max(i) + 1;
    }
    out
}

/// The name of the function a line declares, if it does.
fn fn_name(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "fn")?;
    let qualifiers = ["pub", "const", "unsafe", "async", "extern", "\"C\"", "pub(crate)", "pub(super)"];
    if !words[..at].iter().all(|w| qualifiers.contains(w)) {
        return None;
    }
    let name: String = words.get(at + 1)?.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// `line` with string and character literals emptied and any `//` comment cut.
fn blank_literals(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push_str("\"\"");
            }
            '\'' if matches!(chars.clone().nth(1), Some('\'')) || chars.peek() == Some(&'\\') => {
                // A character literal ('x' or '\n'); a lifetime has no closing quote.
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                }
                out.push_str("''");
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

#[test]
fn functions_stay_a_screen_or_two_long() {
    let mut long = Vec::new();
    for (_, file) in sources() {
        for (name, line, n) in functions(&non_test_lines(&file)) {
            if n > MAX_FUNCTION_LINES {
                long.push(format!("{}:{line}: `{name}` is {n} lines", relative(&file)));
            }
        }
    }
    assert!(long.is_empty(), "functions over {MAX_FUNCTION_LINES} lines outside tests:\n{}", long.join("\n"));
}

#[test]
fn the_function_scanner_measures_what_it_should() {
    let src = "fn a() {\n    let s = \"}\";\n    let c = '{';\n}\npub(crate) fn b<'x>(v: &'x str) -> &'x str { v }\nfn decl();\n";
    let lines: Vec<String> = src.lines().map(str::to_string).collect();
    assert_eq!(functions(&lines), vec![("a".into(), 1, 4), ("b".into(), 5, 1)]);
}

#[test]
fn the_test_item_scanner_skips_test_items_only() {
    let src =
        "use a;\n#[cfg(test)]\nuse b;\nfn c() {\n}\n#[cfg(test)]\nmod tests {\n    fn d() { \"}\" }\n}\nfn e() {}\n";
    let kept = without_test_items(src);
    assert_eq!(kept, vec!["use a;", "", "", "fn c() {", "}", "", "", "", "", "fn e() {}"]);
}

#[test]
fn no_lint_is_silenced_where_a_struct_would_do() {
    let mut wrong = Vec::new();
    for (_, file) in sources() {
        for (i, l) in std::fs::read_to_string(&file).expect("a source file").lines().enumerate() {
            if l.contains("clippy::too_many_arguments") || l.contains("clippy::type_complexity") {
                wrong.push(format!("{}:{}: {}", relative(&file), i + 1, l.trim()));
            }
        }
    }
    assert!(wrong.is_empty(), "silenced lints (introduce the struct or type they point at):\n{}", wrong.join("\n"));
}

#[test]
fn every_library_documents_its_public_items() {
    let mut wrong = Vec::new();
    for dir in members() {
        let lib = dir.join("src/lib.rs");
        if !lib.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&lib).expect("lib.rs");
        if !text.contains("#![deny(missing_docs)]") && !text.contains("#![warn(missing_docs)]") {
            wrong.push(relative(&lib));
        }
    }
    assert!(wrong.is_empty(), "libraries without `#![deny(missing_docs)]`:\n{}", wrong.join("\n"));
}

#[test]
fn every_mechanism_file_has_its_own_unit_tests() {
    let dir = root().join("crates/reconverge-mechanism/src/mechanisms");
    let files = rust_files(&dir);
    assert!(files.len() >= 17, "the mechanism files are where ARCHITECTURE.md says: {}", dir.display());
    let untested: Vec<String> = files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n != "mod.rs"))
        .filter(|f| !std::fs::read_to_string(f).expect("a mechanism file").contains("#[cfg(test)]"))
        .map(|f| relative(f))
        .collect();
    assert!(untested.is_empty(), "mechanism files without unit tests:\n{}", untested.join("\n"));
}

/// Whether the code `code` (comments removed) names the module `m`: a path through it (`m::...`,
/// `crate::m`, `super::m`, `crate::mechanisms::m`) or an import of it in a `use` group of `crate` or
/// `super`. A field or method of the same name (`st.breadth`) does not count.
fn names_module(code: &str, m: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(k) = code[from..].find(m) {
        let (i, j) = (from + k, from + k + m.len());
        from = j;
        let (before, after) = (&code[..i], &code[j..]);
        if before.ends_with(ident) || after.starts_with(ident) {
            continue;
        }
        let through = after.starts_with("::") && !before.ends_with('.');
        let under = ["crate::", "super::", "mechanisms::"].iter().any(|p| before.ends_with(p));
        if through || under {
            return true;
        }
    }
    code.split(';').any(|stmt| {
        let stmt = stmt.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
        let Some(path) = stmt.strip_prefix("use ") else { return false };
        (path.starts_with("crate::") || path.starts_with("super::"))
            && path.split(|c: char| !ident(c)).any(|word| word == m)
    })
}

#[test]
fn no_mechanism_file_names_another() {
    let dir = root().join("crates/reconverge-mechanism/src/mechanisms");
    let files = rust_files(&dir);
    let stem = |f: &PathBuf| f.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
    let modules: Vec<String> = files.iter().map(stem).filter(|m| m != "mod").collect();
    assert!(modules.len() >= 17, "the mechanism files are where ARCHITECTURE.md says: {}", dir.display());
    let mut wrong = Vec::new();
    for f in &files {
        let own = stem(f);
        let code: String =
            non_test_lines(f).iter().map(|l| l.split("//").next().unwrap_or_default().to_string() + "\n").collect();
        for m in modules.iter().filter(|m| **m != own) {
            if names_module(&code, m) {
                wrong.push(format!("{} names the mechanism module `{m}`", relative(f)));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "mechanism files reach each other (share through crate::adapters or crate::interface):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_mechanism_wall_check_sees_what_it_should() {
    assert!(names_module("use crate::pdom::{self, PdomEntry};", "pdom"));
    assert!(names_module("use crate::{arbiter, breadth};", "breadth"));
    assert!(names_module("use super::sorted;", "sorted"));
    assert!(names_module("x = crate::mechanisms::minpc::place(a);", "minpc"));
    assert!(names_module("let s = sorted::step(o);", "sorted"));
    assert!(!names_module("let sorted = st.breadth.queue.len();", "breadth"));
    assert!(!names_module("let sorted = true;", "sorted"));
    assert!(!names_module("use crate::adapters::pdom_rules::{self, PdomEntry};", "pdom"));
    assert!(!names_module("Info::new(\"sorted:minpc\", Scope::Warp)", "sorted"));
}
