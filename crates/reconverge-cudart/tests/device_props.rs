//! The `cudaDeviceProp` layout the shim writes matches CUDA 13's headers: every field's offset and size,
//! measured by the C compiler. Runs where the CUDA 13 runtime headers are installed (CI installs them
//! into `.tools/cuda`; `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure).

use reconverge_cudart::api::device::{DEVICE_PROP_SIZE, PROP_LAYOUT};
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
fn device_prop_fields_sit_where_cuda_13_puts_them() {
    let Some(include) = headers() else {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the CUDA 13 headers are required here");
        eprintln!("skipped: the CUDA 13 runtime headers are not installed");
        return;
    };
    let dir = std::env::temp_dir().join(format!("reconverge-props-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut c =
        String::from("#include <stdio.h>\n#include <stddef.h>\n#include <cuda_runtime_api.h>\nint main(void) {\n");
    c.push_str("  printf(\"size %zu\\n\", sizeof(struct cudaDeviceProp));\n");
    for (field, _, _) in PROP_LAYOUT {
        let (base, index) = match field.split_once('[') {
            Some((b, i)) => (b, i.trim_end_matches(']').parse::<usize>().expect("an index")),
            None => (field, 0),
        };
        c.push_str(&format!(
            "  printf(\"{field} %zu %zu\\n\", offsetof(struct cudaDeviceProp, {base}) + {index} * sizeof(((struct cudaDeviceProp*)0)->{base}{sub}), sizeof(((struct cudaDeviceProp*)0)->{base}{sub}));\n",
            sub = if field.contains('[') { "[0]" } else { "" }
        ));
    }
    c.push_str("  return 0;\n}\n");
    std::fs::write(dir.join("props.c"), c).expect("write");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let built = Command::new(cc)
        .arg(format!("-I{}", include.display()))
        .arg(dir.join("props.c"))
        .arg("-o")
        .arg(dir.join("props"))
        .output()
        .expect("the C compiler runs");
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let out = Command::new(dir.join("props")).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(format!("size {DEVICE_PROP_SIZE}").as_str()));
    for ((field, offset, size), line) in PROP_LAYOUT.iter().zip(lines) {
        assert_eq!(line, format!("{field} {offset} {size}"), "cudaDeviceProp.{field}");
    }
}
