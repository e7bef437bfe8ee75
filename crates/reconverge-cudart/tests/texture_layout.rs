//! The structures of CUDA arrays and texture and surface objects (`cudaChannelFormatDesc`,
//! `cudaResourceDesc`, `cudaTextureDesc`, `cudaMemcpy3DParms`) as the shim reads and writes them match
//! CUDA 13's headers: every size and the offset and size of every field it uses, measured by the C
//! compiler. Runs where the CUDA 13 runtime headers are installed (CI installs them into `.tools/cuda`;
//! `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure).

use reconverge_cudart::api::texture::{LAYOUT, SIZES};
use std::path::{Path, PathBuf};
use std::process::Command;

fn headers() -> Option<PathBuf> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.tools/cuda/lib");
    std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| e.path().join("site-packages/nvidia/cu13/include"))
        .find(|p| p.is_dir())
}

#[test]
fn texture_structures_sit_where_cuda_13_puts_them() {
    let Some(include) = headers() else {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the CUDA 13 headers are required here");
        eprintln!("skipped: the CUDA 13 runtime headers are not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("reconverge-texture-layout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut c =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include <cuda_runtime_api.h>\nint main(void) {\n");
    for (name, _) in SIZES {
        c.push_str(&format!("  printf(\"{name} %zu\\n\", sizeof(struct {name}));\n"));
    }
    for (name, field, _, _) in LAYOUT {
        c.push_str(&format!(
            "  printf(\"{name}.{field} %zu %zu\\n\", offsetof(struct {name}, {field}), sizeof(((struct {name}*)0)->{field}));\n"
        ));
    }
    c.push_str("  return 0;\n}\n");
    std::fs::write(dir.join("layout.c"), c).expect("write");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(cc)
        .arg(format!("-I{}", include.display()))
        .arg(dir.join("layout.c"))
        .arg("-o")
        .arg(dir.join("layout"))
        .output()
        .expect("the C compiler runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = Command::new(dir.join("layout")).output().expect("runs");
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    let want: Vec<String> = SIZES
        .iter()
        .map(|(name, size)| format!("{name} {size}"))
        .chain(LAYOUT.iter().map(|(name, field, offset, size)| format!("{name}.{field} {offset} {size}")))
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), want);
}
