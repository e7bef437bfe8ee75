//! Generates the entry points the shim does not implement (every export of NVIDIA's `libcudart.so.13`,
//! listed in `symbols.txt`, that no file under `src/api/` defines) and links the library as
//! `libcudart.so.13` with every entry point versioned `libcudart.so.13`, as programs linked against
//! NVIDIA's library import them.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

fn implemented(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        println!("cargo:rerun-if-changed={}", e.path().display());
        let Ok(text) = std::fs::read_to_string(e.path()) else { continue };
        for line in text.lines() {
            let line = line.trim_start();
            if let Some(rest) = line.strip_prefix("pub unsafe extern \"C\" fn ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                out.insert(name);
            }
            // Entry points a macro defines: `launch_entry!(a, b, c);`.
            if let Some(rest) = line.strip_prefix("launch_entry!(") {
                out.extend(rest.trim_end_matches(");").split(',').map(|n| n.trim().to_string()));
            }
        }
    }
    out
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let out_dir = std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest);
    println!("cargo:rerun-if-changed=symbols.txt");
    let symbols = std::fs::read_to_string(root.join("symbols.txt")).unwrap_or_default();
    let have = implemented(&root.join("src/api"));
    let mut stubs = String::new();
    for name in symbols.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if have.contains(name) {
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
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.13");
}
