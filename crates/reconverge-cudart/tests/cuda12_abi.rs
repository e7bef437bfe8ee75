//! CUDA 12's library (`reconverge-cudart12`, these sources with `--cfg cuda12`) against CUDA 12's headers
//! and NVIDIA's `libcudart.so.12` (the PyPI wheel `nvidia-cuda-runtime-cu12==12.9.79`):
//!
//! - `symbols12.txt` is exactly the wheel's exports;
//! - `abi12.txt` lists exactly the exports of `libcudart.so.12` whose C ABI differs from CUDA 13's, derived
//!   here from the two header sets (each preprocessed by the C compiler): a declaration whose text differs
//!   (parameters, their order or names), one that mentions a structure, union or typedef defined
//!   differently (directly or through another type), or an enumeration whose CUDA 12 values CUDA 13 does
//!   not keep; and the exports CUDA 12's headers no longer declare but CUDA 13's declare anew (their
//!   CUDA 12 ABI is CUDA 11's). `build.rs` checks the sources against the list's second column;
//! - the CUDA 12 structures the shim writes or reads sit where the CUDA 12 headers put them;
//! - `reconverge-cudart12` has `reconverge-cudart`'s dependencies.
//!
//! Runs where both header sets are installed (CI installs them into `.tools/cuda`;
//! `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure).

#![allow(clippy::print_stderr, reason = "its helper says on stderr what was skipped and why")]

use reconverge_cudart::abi::cuda12;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{cc, scratch};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `site-packages/nvidia` of the CUDA wheels under `.tools/cuda`, when CUDA 12's and CUDA 13's runtime
/// headers are both there.
fn wheels() -> Option<PathBuf> {
    let lib = crate_dir().join("../../.tools/cuda/lib");
    let found =
        std::fs::read_dir(lib).ok()?.flatten().map(|e| e.path().join("site-packages/nvidia")).find(|p| {
            p.join("cuda_runtime/include/cuda_runtime_api.h").is_file() && p.join("cu13/include/crt").is_dir()
        });
    if found.is_none() {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the CUDA 12 and 13 headers are required here");
        eprintln!("skipped: the CUDA 12 and CUDA 13 runtime headers are not both installed");
    }
    found
}

/// The include options of a header set: CUDA 13's wheel, or CUDA 12's runtime headers with the CUDA
/// compiler's own `crt/` headers (which the CUDA 12 runtime wheel leaves to the nvcc wheel; CUDA 13's
/// stand in: they define the host macros, no runtime declaration) in a directory of their own.
fn includes(nvidia: &Path, major: u32, dir: &Path) -> Vec<String> {
    if major == 13 {
        return vec![format!("-I{}", nvidia.join("cu13/include").display())];
    }
    let crt = dir.join("crt-only");
    std::fs::create_dir_all(&crt).expect("dir");
    let link = crt.join("crt");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(nvidia.join("cu13/include/crt"), &link).expect("link crt");
    vec![format!("-I{}", nvidia.join("cuda_runtime/include").display()), format!("-I{}", crt.display())]
}

/// `cuda_runtime_api.h` of a header set, preprocessed as C (`-P`), with per-thread default streams or not.
fn preprocessed(nvidia: &Path, major: u32, per_thread: bool) -> String {
    let dir = scratch(&format!("pp{major}{per_thread}"));
    std::fs::write(dir.join("h.c"), "#include <cuda_runtime_api.h>\n").expect("write");
    let mut c = Command::new(cc());
    c.args(["-E", "-P", "-x", "c"]).args(includes(nvidia, major, &dir)).arg(dir.join("h.c"));
    if per_thread {
        c.arg("-DCUDA_API_PER_THREAD_DEFAULT_STREAM");
    }
    let out = c.output().expect("the C compiler runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `text` without `__attribute__((...))`, with single spaces and none beside punctuation.
fn normalized(text: &str) -> String {
    let mut s = text.to_string();
    while let Some(at) = s.find("__attribute__") {
        let open = s[at..].find('(').map_or(s.len(), |i| at + i);
        let mut depth = 0;
        let mut end = s.len();
        for (i, ch) in s[open..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                end = open + i + 1;
                break;
            }
        }
        s.replace_range(at..end, " ");
    }
    let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out = String::new();
    let punct = |c: char| ",;(){}[]*=".contains(c);
    for (i, ch) in words.char_indices() {
        if ch == ' ' {
            let prev = words[..i].chars().next_back().is_some_and(punct);
            let next = words[i + 1..].chars().next().is_some_and(punct);
            if prev || next {
                continue;
            }
        }
        out.push(ch);
    }
    out
}

fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| !c.is_ascii_digit()))
}

/// What a header set declares: functions (name to declaration) and types (name to definition; a
/// typedef's aliases name their definition too).
#[derive(Default)]
struct Declarations {
    functions: BTreeMap<String, String>,
    types: BTreeMap<String, String>,
    enums: BTreeSet<String>,
}

/// The top-level items of preprocessed C: the text up to each `;` outside braces, a function's body left
/// out.
fn items(text: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth, mut body) = (Vec::new(), String::new(), 0i32, false);
    for ch in text.chars() {
        match ch {
            '{' if depth == 0 && cur.trim_end().ends_with(')') => body = true,
            _ => {}
        }
        match ch {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if body {
            if depth == 0 && ch == '}' {
                body = false;
                cur.clear();
            }
            continue;
        }
        if ch == ';' && depth == 0 {
            out.push(normalized(&cur));
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    out
}

impl Declarations {
    fn of(texts: &[String]) -> Declarations {
        let mut d = Declarations::default();
        for item in texts.iter().flat_map(|t| items(t)) {
            d.add(&item);
        }
        d
    }

    fn add(&mut self, item: &str) {
        let (typedef, rest) = match item.strip_prefix("typedef ") {
            Some(r) => (true, r),
            None => (false, item),
        };
        if let (Some(open), Some(close)) = (rest.find('{'), rest.rfind('}')) {
            // `struct TAG { ... } ALIASES` (a typedef's aliases, or none).
            let head: Vec<&str> = rest[..open].split_whitespace().collect();
            let body = rest[open + 1..close].to_string();
            let aliases: Vec<&str> = identifiers(&rest[close + 1..]).collect();
            let Some(tag) = head.get(1).copied().or(aliases.first().copied()) else { return };
            if head.first() == Some(&"enum") {
                self.enums.insert(tag.to_string());
            }
            self.types.insert(tag.to_string(), body);
            for a in aliases.into_iter().filter(|a| *a != tag) {
                self.types.insert(a.to_string(), tag.to_string());
            }
        } else if typedef {
            // `typedef X NAME`, `typedef R (*NAME)(...)`.
            let name = match rest.find("(*") {
                Some(at) => identifiers(&rest[at..]).next(),
                None => identifiers(rest).last(),
            };
            if let Some(n) = name {
                self.types.insert(n.to_string(), rest.to_string());
            }
        } else if let Some(decl) = rest.strip_prefix("extern ") {
            let Some(open) = decl.find('(') else { return };
            if let Some(name) = identifiers(&decl[..open]).last() {
                self.functions.insert(name.to_string(), decl.to_string());
            }
        }
    }
}

/// The value of an enumerator's expression, given the enumerators before it.
fn value(expr: &str, known: &BTreeMap<String, i64>) -> Option<i64> {
    let e = expr.trim().trim_start_matches('(').trim_end_matches(')').trim();
    if let Some((a, b)) = e.split_once("<<") {
        return Some(value(a, known)? << value(b, known)?);
    }
    if let Some((a, b)) = e.split_once('|') {
        return Some(value(a, known)? | value(b, known)?);
    }
    if let Some(n) = e.strip_prefix('-') {
        return value(n, known).map(|v| -v);
    }
    let digits = e.trim_end_matches(['u', 'U', 'l', 'L']);
    let parsed = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => digits.parse().ok(),
    };
    parsed.or_else(|| known.get(e).copied())
}

/// An enumeration's enumerators and values.
fn enumerators(body: &str) -> Vec<(String, Option<i64>)> {
    let (mut out, mut known, mut next) = (Vec::new(), BTreeMap::new(), Some(0i64));
    for e in body.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (name, v) = match e.split_once('=') {
            Some((n, x)) => (n.trim(), value(x, &known)),
            None => (e, next),
        };
        if let Some(v) = v {
            known.insert(name.to_string(), v);
        }
        next = v.map(|v| v + 1);
        out.push((name.to_string(), v));
    }
    out
}

/// Whether CUDA 13's enumeration keeps every enumerator of CUDA 12's with its value (a last `...Max` or
/// `...Count` sentinel may move).
fn enum_compatible(b12: &str, b13: &str) -> bool {
    let (e12, e13) = (enumerators(b12), enumerators(b13));
    let kept: BTreeMap<&str, Option<i64>> = e13.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    e12.iter().enumerate().all(|(i, (n, v))| {
        let sentinel = i + 1 == e12.len() && (n.ends_with("Max") || n.ends_with("Count"));
        sentinel || (kept.get(n.as_str()) == Some(v) && v.is_some())
    })
}

/// The types whose CUDA 12 definition differs from CUDA 13's, directly or through a type they mention.
fn differing_types(d12: &Declarations, d13: &Declarations) -> BTreeSet<String> {
    let mut differ: BTreeSet<String> = d12
        .types
        .iter()
        .filter(|(n, b12)| match d13.types.get(*n) {
            None => false,
            Some(b13) if d12.enums.contains(*n) => !enum_compatible(b12, b13),
            Some(b13) => b12 != &b13,
        })
        .map(|(n, _)| n.clone())
        .collect();
    loop {
        let more: Vec<String> = d12
            .types
            .iter()
            .filter(|(n, body)| !differ.contains(*n) && identifiers(body).any(|w| differ.contains(w)))
            .map(|(n, _)| n.clone())
            .collect();
        if more.is_empty() {
            return differ;
        }
        differ.extend(more);
    }
}

/// The exports of `libcudart.so.12` whose C ABI differs from CUDA 13's, each with what differs.
fn derived(nvidia: &Path) -> BTreeMap<String, String> {
    let d12 = Declarations::of(&[preprocessed(nvidia, 12, false), preprocessed(nvidia, 12, true)]);
    let d13 = Declarations::of(&[preprocessed(nvidia, 13, false), preprocessed(nvidia, 13, true)]);
    let types = differing_types(&d12, &d13);
    let exports = std::fs::read_to_string(crate_dir().join("symbols12.txt")).expect("symbols12.txt");
    let mut out = BTreeMap::new();
    for name in exports.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let Some(f13) = d13.functions.get(name) else { continue };
        let why = match d12.functions.get(name) {
            None => "legacy: CUDA 12's headers do not declare it (CUDA 11's programs' call); CUDA 13's declare anew"
                .to_string(),
            Some(f12) if f12 != f13 => "signature".to_string(),
            Some(f12) => {
                let mut ts: Vec<&str> = identifiers(f12).filter(|w| types.contains(*w)).collect();
                ts.dedup();
                if ts.is_empty() {
                    continue;
                }
                ts.join(", ")
            }
        };
        out.insert(name.to_string(), why);
    }
    out
}

#[test]
fn abi12_lists_every_export_whose_cuda_12_abi_differs() {
    let Some(nvidia) = wheels() else { return };
    let want = derived(&nvidia);
    let listed = std::fs::read_to_string(crate_dir().join("abi12.txt")).expect("abi12.txt");
    let names: BTreeSet<String> = listed
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    let derived_names: BTreeSet<String> = want.keys().cloned().collect();
    let lines: Vec<String> = want.iter().map(|(n, why)| format!("{n} ? # {why}")).collect();
    assert_eq!(names, derived_names, "abi12.txt should list (HOW as build.rs reads it):\n{}", lines.join("\n"));
    for must in
        ["cudaGetDeviceProperties", "cudaMemPrefetchAsync", "cudaGraphAddDependencies", "cudaPointerGetAttributes"]
    {
        assert!(names.contains(must), "{must}");
    }
}

/// The offset and size of each `(struct, member)` under a header set, by the C compiler, and each
/// struct's size (member `""`).
fn measured(nvidia: &Path, major: u32, members: &[(&str, &str)]) -> Vec<(usize, usize)> {
    let dir = scratch(&format!("layout{major}"));
    let mut c = String::new();
    for (s, m) in members {
        if m.is_empty() {
            c.push_str(&format!("  printf(\"0 %zu\\n\", sizeof(struct {s}));\n"));
        } else {
            c.push_str(&format!(
                "  printf(\"%zu %zu\\n\", offsetof(struct {s}, {m}), sizeof(((struct {s}*)0)->{m}));\n"
            ));
        }
    }
    let includes = includes(nvidia, major, &dir);
    common::run_c(&dir, &includes, &c)
        .lines()
        .map(|l| {
            let (a, b) = l.split_once(' ').expect("two numbers");
            (a.parse().expect("a number"), b.parse().expect("a number"))
        })
        .collect()
}

#[test]
fn cuda_12_structures_sit_where_cuda_12_puts_them() {
    let Some(nvidia) = wheels() else { return };
    // cudaDeviceProp: every field's offset, and the size.
    let mut members: Vec<(&str, &str)> = vec![("cudaDeviceProp", "")];
    members.extend(cuda12::DEVICE_PROP_FIELDS.iter().map(|(f, _)| ("cudaDeviceProp", *f)));
    let got = measured(&nvidia, 12, &members);
    assert_eq!(got[0].1, cuda12::DEVICE_PROP_SIZE, "sizeof(cudaDeviceProp)");
    for ((field, offset), (at, _)) in cuda12::DEVICE_PROP_FIELDS.iter().zip(&got[1..]) {
        assert_eq!(offset, at, "cudaDeviceProp.{field}");
    }
    // cudaPointerAttributes and cudaResourceDesc: CUDA 12's size; the members the shim writes and reads
    // (CUDA 13's texture::LAYOUT of cudaResourceDesc, but `flags` and the widened union) where CUDA 13 has them.
    let pointer = ["type", "device", "devicePointer", "hostPointer"].map(|m| ("cudaPointerAttributes", m));
    let resource: Vec<(&str, &str)> = reconverge_cudart::api::texture::LAYOUT
        .iter()
        .filter(|(s, m, _, _)| *s == "cudaResourceDesc" && *m != "flags" && *m != "res")
        .map(|(s, m, _, _)| (*s, *m))
        .collect();
    // cudaFuncAttributes: the fields cudaFuncGetAttributes writes (one definition serves both ABIs).
    let func = [
        "sharedSizeBytes",
        "constSizeBytes",
        "localSizeBytes",
        "maxThreadsPerBlock",
        "numRegs",
        "ptxVersion",
        "binaryVersion",
        "maxDynamicSharedSizeBytes",
    ]
    .map(|m| ("cudaFuncAttributes", m));
    let mut shared: Vec<(&str, &str)> =
        vec![("cudaPointerAttributes", ""), ("cudaResourceDesc", ""), ("cudaFuncAttributes", "")];
    shared.extend(pointer);
    shared.extend(resource);
    shared.extend(func);
    let (m12, m13) = (measured(&nvidia, 12, &shared), measured(&nvidia, 13, &shared));
    assert_eq!(m12[0].1, cuda12::POINTER_ATTRIBUTES_SIZE, "sizeof(cudaPointerAttributes)");
    assert_eq!(m12[1].1, cuda12::RESOURCE_DESC_SIZE, "sizeof(cudaResourceDesc)");
    assert_eq!((m12[2].1, m13[2].1), (144, 144), "sizeof(cudaFuncAttributes)");
    for (i, (s, m)) in shared.iter().enumerate().skip(3) {
        assert_eq!(m12[i], m13[i], "{s}.{m}: the same in CUDA 12 and 13");
        if *s != "cudaFuncAttributes" {
            let size = if *s == "cudaPointerAttributes" {
                cuda12::POINTER_ATTRIBUTES_SIZE
            } else {
                cuda12::RESOURCE_DESC_SIZE
            };
            assert!(m12[i].0 + m12[i].1 <= size, "{s}.{m} within CUDA 12's structure");
        }
    }
}

#[test]
fn symbols12_are_the_exports_of_nvidias_library() {
    let Some(nvidia) = wheels() else { return };
    let lib = nvidia.join("cuda_runtime/lib/libcudart.so.12");
    let out = Command::new("nm").args(["-D", "--defined-only"]).arg(&lib).output().expect("nm runs");
    assert!(out.status.success(), "nm {}: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    let mut exports: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let (_, kind, name) = (w.next(), w.next()?, w.next()?);
            (kind == "T").then(|| name.split('@').next().unwrap_or(name).to_string())
        })
        .collect();
    exports.sort();
    exports.dedup();
    let listed = std::fs::read_to_string(crate_dir().join("symbols12.txt")).expect("symbols12.txt");
    assert_eq!(listed.lines().collect::<Vec<_>>(), exports, "symbols12.txt");
}

/// `reconverge-cudart12` compiles these sources, so it needs exactly their dependencies.
#[test]
fn the_cuda_12_package_has_this_packages_dependencies() {
    let deps = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a manifest");
        text.lines()
            .map(str::trim)
            .skip_while(|l| *l != "[dependencies]")
            .skip(1)
            .take_while(|l| !l.starts_with('['))
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect::<BTreeSet<_>>()
    };
    let mine = deps(&crate_dir());
    assert!(mine.len() > 5, "the dependencies of {}: {mine:?}", crate_dir().display());
    assert_eq!(deps(&crate_dir().join("../reconverge-cudart12")), mine);
}
