//! The structures of CUDA arrays and texture and surface objects (`cudaChannelFormatDesc`,
//! `cudaResourceDesc`, `cudaTextureDesc`, `cudaMemcpy3DParms`) as the shim reads and writes them match
//! CUDA 13's headers: every size and the offset and size of every field it uses, measured by the C
//! compiler. Runs where the CUDA 13 runtime headers are installed (CI installs them into `.tools/cuda`;
//! `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure).

use reconverge_cudart::api::texture::{LAYOUT, SIZES};

mod common;

#[test]
fn texture_structures_sit_where_cuda_13_puts_them() {
    let Some(include) = common::cuda13_headers() else {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the CUDA 13 headers are required here");
        eprintln!("skipped: the CUDA 13 runtime headers are not installed");
        return;
    };
    let mut c = String::new();
    for (name, _) in SIZES {
        c.push_str(&format!("  printf(\"{name} %zu\\n\", sizeof(struct {name}));\n"));
    }
    for (name, field, _, _) in LAYOUT {
        c.push_str(&format!(
            "  printf(\"{name}.{field} %zu %zu\\n\", offsetof(struct {name}, {field}), sizeof(((struct {name}*)0)->{field}));\n"
        ));
    }
    let text = common::run_c(&common::scratch("texture-layout"), &[format!("-I{}", include.display())], &c);
    let want: Vec<String> = SIZES
        .iter()
        .map(|(name, size)| format!("{name} {size}"))
        .chain(LAYOUT.iter().map(|(name, field, offset, size)| format!("{name}.{field} {offset} {size}")))
        .collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), want);
}
