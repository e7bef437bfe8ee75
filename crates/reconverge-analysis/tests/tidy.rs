//! Tidy checks run as tests (after rust-analyzer's `xtask/src/tidy.rs`): every source file starts with a
//! `//!` module doc, and no test is marked to expect a panic or to be skipped.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("readable directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn all_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    files.sort();
    files
}

#[test]
fn every_module_has_a_doc_header() {
    let files = all_files();
    assert!(files.len() >= 10, "found the sources: {files:?}");
    for f in files {
        let text = fs::read_to_string(&f).expect("readable source");
        assert!(text.starts_with("//!"), "{} does not start with a `//!` module doc", f.display());
    }
}

#[test]
fn no_should_panic_or_ignore() {
    // Spelled in pieces so this file does not match itself.
    let banned = [concat!("#[", "should_panic"), concat!("#[", "ignore")];
    for f in all_files() {
        let text = fs::read_to_string(&f).expect("readable source");
        for b in banned {
            assert!(!text.contains(b), "{} contains {b}]", f.display());
        }
    }
}
