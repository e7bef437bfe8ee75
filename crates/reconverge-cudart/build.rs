//! The build script of both drop-in runtimes, which compile the same sources (`src/`): `reconverge-cudart`
//! as `libcudart.so.13` and `reconverge-cudart12` as `libcudart.so.12` (with `--cfg cuda12`). For the
//! library it builds, it generates the entry points the shim does not implement (every export of NVIDIA's
//! library, listed in `symbols.txt` or `symbols12.txt`, that no file under `src/api/` defines for that
//! library) and links the library under NVIDIA's soname with every entry point versioned by it
//! (`cudaMalloc@@libcudart.so.12`), as programs linked against NVIDIA's library import them.
//!
//! An entry point under `src/api/` is defined for both libraries unless it (or its file, `#![cfg(...)]`)
//! is marked `#[cfg(cuda12)]` (CUDA 12's only) or `#[cfg(not(cuda12))]` (CUDA 13's only). Building CUDA
//! 12's library also checks the sources against `abi12.txt`, the exports whose C ABI differs between the
//! two header sets and how CUDA 12's library serves each, so that a definition written for CUDA 13 never
//! reaches a CUDA 12 program with the wrong signature or structure.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::Path;

/// Which of the two libraries a definition is compiled into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Scope {
    /// No cfg: both.
    Both,
    /// `#[cfg(cuda12)]`.
    Cuda12,
    /// `#[cfg(not(cuda12))]`.
    Cuda13,
}

/// The scope an attribute line (`#[...]` or `#![...]`, a comment after it) sets, if it is one of the two
/// cfgs.
fn scope_of(line: &str) -> Option<Scope> {
    let code = line.split("//").next().unwrap_or_default();
    let compact: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    match compact.trim_start_matches("#!").trim_start_matches('#') {
        "[cfg(cuda12)]" => Some(Scope::Cuda12),
        "[cfg(not(cuda12))]" => Some(Scope::Cuda13),
        _ => None,
    }
}

/// The entry points a source line defines: `pub unsafe extern "C" fn NAME` or a `launch_entry!(a, b)`.
fn defined(line: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let names = if let Some(rest) = line.strip_prefix("pub unsafe extern \"C\" fn ") {
        vec![ident(rest)]
    } else if let Some(rest) = line.strip_prefix("launch_entry!(") {
        rest.trim_end_matches(");").split(',').map(|n| ident(n.trim())).collect()
    } else {
        Vec::new()
    };
    names.into_iter().filter(|n| !n.is_empty()).collect()
}

/// Every entry point the files of `dir` define, with the scope of each definition.
fn entry_points(dir: &Path) -> BTreeMap<String, BTreeSet<Scope>> {
    let mut out: BTreeMap<String, BTreeSet<Scope>> = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for file in files {
        println!("cargo:rerun-if-changed={}", file.display());
        let Ok(text) = std::fs::read_to_string(&file) else { continue };
        let (mut whole_file, mut pending) = (Scope::Both, None);
        for line in text.lines().map(str::trim_start) {
            if line.starts_with("#![") {
                whole_file = scope_of(line).unwrap_or(whole_file);
            } else if line.starts_with("#[") {
                pending = scope_of(line).or(pending);
            } else if !(line.is_empty() || line.starts_with("//")) {
                for name in defined(line) {
                    out.entry(name).or_default().insert(pending.unwrap_or(whole_file));
                }
                pending = None;
            }
        }
    }
    out
}

/// The names of a list file (one a line; `#` starts a comment).
fn list(text: &str) -> Vec<&str> {
    text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).filter(|l| !l.is_empty()).collect()
}

/// How `abi12.txt` says CUDA 12's library serves an export whose C ABI differs from CUDA 13's, checked
/// against the definitions of `have`: the messages of every disagreement.
fn abi12_disagreements(abi12: &str, have: &BTreeMap<String, BTreeSet<Scope>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for line in list(abi12) {
        let mut words = line.split_whitespace();
        let (Some(name), Some(how)) = (words.next(), words.next()) else {
            wrong.push(format!("abi12.txt: `{line}`: NAME HOW expected"));
            continue;
        };
        let scopes = have.get(name).cloned().unwrap_or_default();
        let (both, twelve) = (scopes.contains(&Scope::Both), scopes.contains(&Scope::Cuda12));
        let fine = match how {
            "shared" => both && !twelve,
            "cuda12" => twelve && !both,
            "stub" => !both && !twelve,
            _ => false,
        };
        if !fine {
            let what = match (both, twelve) {
                (true, _) => "src/api/ defines it for both libraries",
                (false, true) => "src/api/ defines it for CUDA 12's library (#[cfg(cuda12)])",
                (false, false) => "CUDA 12's library has no definition of it (the stub)",
            };
            wrong.push(format!(
                "{name}: abi12.txt says `{how}`, but {what}. Its C signature or a structure it takes differs \
                 between CUDA 12's and CUDA 13's headers (abi12.txt says what). Mark a definition written for \
                 CUDA 13 #[cfg(not(cuda12))] (CUDA 12's library then has the unsupported stub: `stub`), or add \
                 CUDA 12's own in src/api/cuda12.rs (`cuda12`), or, when one definition is right for both \
                 (it reads nothing whose layout differs, or adapts through crate::abi::ABI), say `shared`"
            ));
        }
    }
    wrong
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    // Both packages build the sources of this one (reconverge-cudart12 has only its manifest).
    let root = Path::new(&manifest).join("../reconverge-cudart");
    let cuda12 = package == "reconverge-cudart12";
    let (major, symbols_file) = if cuda12 { (12, "symbols12.txt") } else { (13, "symbols.txt") };
    println!("cargo:rustc-check-cfg=cfg(cuda12)");
    if cuda12 {
        println!("cargo:rustc-cfg=cuda12");
    }
    for f in [symbols_file, "abi12.txt", "src/api"] {
        println!("cargo:rerun-if-changed={}", root.join(f).display());
    }
    let symbols = std::fs::read_to_string(root.join(symbols_file)).unwrap_or_default();
    let have = entry_points(&root.join("src/api"));
    if cuda12 {
        let abi12 = std::fs::read_to_string(root.join("abi12.txt")).unwrap_or_default();
        let wrong = abi12_disagreements(&abi12, &have);
        assert!(wrong.is_empty(), "CUDA 12's library (abi12.txt):\n{}", wrong.join("\n"));
    }
    let mine = if cuda12 { Scope::Cuda12 } else { Scope::Cuda13 };
    let mut stubs = String::new();
    for name in list(&symbols) {
        if have.get(name).is_some_and(|s| s.contains(&Scope::Both) || s.contains(&mine)) {
            continue;
        }
        let _ = writeln!(
            stubs,
            "/// `{name}`: not supported; ends the process with status 2, naming the call.\n\
             #[no_mangle]\npub extern \"C\" fn {name}() -> ! {{\n    crate::api::unsupported(\"{name}\")\n}}\n"
        );
    }
    let _ = std::fs::write(Path::new(&out_dir).join("unsupported.rs"), stubs);
    // rustc's own version script exports exactly the `#[no_mangle]` entry points; GNU ld's
    // `--default-symver` gives each the soname as its version (`cudaMalloc@@libcudart.so.13`), as NVIDIA's
    // library has them (rust-lld, rustc's default linker here, has no such option).
    println!("cargo:rustc-cdylib-link-arg=-fuse-ld=bfd");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--default-symver");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.{major}");
}
