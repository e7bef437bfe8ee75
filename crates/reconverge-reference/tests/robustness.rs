//! The reference never panics: every kernel of every PTX file in the repository (the suite, and the
//! parser's test corpus, which has unusual constructs) runs with made-up arguments and small limits, and
//! must end with a result, whatever it is.

use reconverge_ir::FuncId;
use reconverge_reference::{run_reference_with, Arg, Buffer, Dtype, LaunchConfig, RefOptions};
use std::path::{Path, PathBuf};

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

#[test]
fn no_kernel_makes_the_reference_panic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    ptx_files(&root.join("kernels/ptx"), &mut files);
    ptx_files(&root.join("crates/reconverge-ptx/tests/data"), &mut files);
    files.sort();
    let opts = RefOptions { max_thread_instructions: 20_000, quantum: 1_000, max_resident_ctas: 4 };
    let mut runs = 0;
    for f in &files {
        let Ok(src) = std::fs::read_to_string(f) else { continue };
        let Ok(module) = reconverge_ptx::parse(&src) else { continue };
        let kernels: Vec<FuncId> = module.kernels().collect();
        for k in kernels {
            let params = &module.functions[k].params;
            for (variant, warp) in [(0u64, 32u32), (1, 4)] {
                let args: Vec<Arg> = params
                    .iter()
                    .map(|p| {
                        if p.size_bytes() == 8 && variant == 0 {
                            Arg::Buffer(Buffer::zeros(Dtype::U8, 4096))
                        } else {
                            Arg::Scalar(variant * 7 + 3)
                        }
                    })
                    .collect();
                let cfg = LaunchConfig {
                    grid: [2, 1, 1],
                    block: [8, 2, 1],
                    warp_size: warp,
                    dynamic_shared: 256,
                    ..LaunchConfig::default()
                };
                let r = std::panic::catch_unwind(|| run_reference_with(&module, k, &cfg, &args, &opts));
                assert!(r.is_ok(), "{} kernel `{}` panicked", f.display(), module.functions[k].name);
                runs += 1;
            }
        }
    }
    assert!(runs > 40, "only {runs} runs");
}
