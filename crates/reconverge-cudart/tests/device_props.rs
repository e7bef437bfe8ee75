//! The `cudaDeviceProp` layout the shim writes matches CUDA 13's headers: every field's offset and size,
//! measured by the C compiler. Runs where the CUDA 13 runtime headers are installed (CI installs them
//! into `.tools/cuda`; `RECONVERGE_REQUIRE_NVCC=1` makes their absence a failure).

use reconverge_cudart::api::device::{DEVICE_PROP_SIZE, PROP_LAYOUT};

mod common;

#[test]
fn device_prop_fields_sit_where_cuda_13_puts_them() {
    let Some(include) = common::cuda13_headers() else {
        assert!(std::env::var("RECONVERGE_REQUIRE_NVCC").is_err(), "the CUDA 13 headers are required here");
        eprintln!("skipped: the CUDA 13 runtime headers are not installed");
        return;
    };
    let mut c = String::new();
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
    let text = common::run_c(&common::scratch("props"), &[format!("-I{}", include.display())], &c);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(format!("size {DEVICE_PROP_SIZE}").as_str()));
    for ((field, offset, size), line) in PROP_LAYOUT.iter().zip(lines) {
        assert_eq!(line, format!("{field} {offset} {size}"), "cudaDeviceProp.{field}");
    }
}
