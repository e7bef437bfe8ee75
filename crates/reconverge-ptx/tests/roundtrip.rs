//! Printer round trip on every PTX file we have: `parse(print(parse(x))) == parse(x)` (spans stripped),
//! and printing is a fixed point: `print(parse(print(m))) == print(m)`.
//!
//! Files: `tests/data/*.ptx` (this crate's corpus) and every `*.ptx` under the workspace's `kernels/`
//! directory, recursively (skipped if the directory does not exist).

use reconverge_ir::{print_module, Module};
use reconverge_ptx::{parse, ParseErrors, SourceError};
use std::path::{Path, PathBuf};

fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if recursive {
                collect(&p, true, out);
            }
        } else if p.extension().is_some_and(|e| e == "ptx") {
            out.push(p);
        }
    }
}

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect(&root.join("tests/data"), false, &mut files);
    collect(&root.join("../../kernels"), true, &mut files);
    files
}

fn parse_or_report(name: &str, src: &str) -> Result<Module, String> {
    parse(src).map_err(|e: ParseErrors| SourceError::new(name, src, e).render_plain())
}

fn stripped(mut m: Module) -> Module {
    m.strip_spans();
    m
}

/// Checks one source; returns a description of the failure.
fn check(name: &str, src: &str) -> Result<(), String> {
    let m1 = parse_or_report(name, src)?;
    let printed = print_module(&m1);
    let m2 = parse_or_report(&format!("{name} (printed)"), &printed)
        .map_err(|e| format!("{e}\n--- printed text ---\n{printed}"))?;
    let printed2 = print_module(&m2);
    if stripped(m1) != stripped(m2) {
        return Err(format!("{name}: IR differs after print + parse\n--- printed text ---\n{printed}"));
    }
    if printed != printed2 {
        let line = printed.lines().zip(printed2.lines()).position(|(a, b)| a != b).unwrap_or(0);
        return Err(format!("{name}: printing is not a fixed point (first difference at line {})", line + 1));
    }
    Ok(())
}

#[test]
fn corpus_round_trips() {
    let files = corpus();
    assert!(files.len() >= 20, "expected the tests/data corpus, found {} files", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap_or_default();
        if let Err(e) = check(&f.display().to_string(), &src) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{} of {} files failed:\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn corpus_covers_the_constructs() {
    // The corpus must keep exercising what the front end claims to handle.
    let all: String = corpus()
        .iter()
        .filter(|p| p.starts_with(Path::new(env!("CARGO_MANIFEST_DIR"))))
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect();
    for needle in [
        "call.uni",
        ".extern .func",
        "vprintf",
        "__local_depot",
        "%SPL",
        "shfl.sync",
        "vote.sync",
        "match.any.sync",
        "redux.sync",
        "atom.global",
        "bar.sync",
        ".loc",
        ".file",
        ".section",
        "brx.idx",
        ".branchtargets",
        ".callprototype",
        ".pragma",
        ".weak",
        "generic(",
        ".const",
        "ld.global.nc",
        "ld.global.nc.v4",
        ".maxntid",
        "fma.rn.f64",
        ".ftz",
        "extern .shared",
    ] {
        assert!(all.contains(needle), "no corpus file contains `{needle}`");
    }
}

#[test]
fn scopes_are_flattened_with_renaming() {
    let src = ".version 8.0\n.target sm_80\n.address_size 64\n.func (.param .b32 r) f(.param .b32 a)\n{ ret; }\n\
        .entry k()\n{\n.reg .b32 %r<3>;\n\
        { .reg .b32 t; .param .b32 param0; st.param.b32 [param0], %r1; .param .b32 retval0;\n\
          call.uni (retval0), f, (param0); ld.param.b32 %r2, [retval0]; }\n\
        { .reg .b32 t; .param .b32 param0; st.param.b32 [param0], %r2; .param .b32 retval0;\n\
          call.uni (retval0), f, (param0); ld.param.b32 %r2, [retval0]; }\n\
        ret;\n}\n";
    let m = parse(src).unwrap();
    let k = &m.functions[m.function_by_name("k").unwrap()];
    let locals: Vec<&str> = k.locals.values().map(|v| v.name.as_str()).collect();
    assert_eq!(locals, ["param0", "retval0", "param0$1", "retval0$1"]);
    let regs: Vec<&str> = k.regs.values().map(|r| r.name.as_str()).collect();
    assert_eq!(regs, ["%r0", "%r1", "%r2", "t", "t$1"]);
    check("scopes", src).unwrap();
}
