//! Shared by the layout tests: the CUDA headers under `.tools/cuda` and C programs compiled against them.
#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};
use std::process::Command;

/// `site-packages/nvidia/cu13/include` of the CUDA wheels under `.tools/cuda`, when installed.
pub(crate) fn cuda13_headers() -> Option<PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/cuda/lib");
    std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/include"))
        .find(|p| p.is_dir())
}

/// The C compiler (`$CC`, else `cc`).
pub(crate) fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

/// A scratch directory of this test process, named by `tag`.
pub(crate) fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("reconverge-cudart-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// Compiles in `dir` a C program whose `main` runs `body` after including `stdio.h`, `stddef.h` and
/// `cuda_runtime_api.h` (found through `includes`), runs it and returns its standard output; the
/// directory is removed after.
pub(crate) fn run_c(dir: &Path, includes: &[String], body: &str) -> String {
    let c = format!(
        "#include <stdio.h>\n#include <stddef.h>\n#include <cuda_runtime_api.h>\nint main(void) {{\n{body}  return 0;\n}}\n"
    );
    std::fs::write(dir.join("layout.c"), c).expect("write");
    let built = Command::new(cc())
        .args(includes)
        .arg(dir.join("layout.c"))
        .arg("-o")
        .arg(dir.join("layout"))
        .output()
        .expect("the C compiler runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = Command::new(dir.join("layout")).output().expect("runs");
    let _ = std::fs::remove_dir_all(dir);
    String::from_utf8_lossy(&out.stdout).into_owned()
}
