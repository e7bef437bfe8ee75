//! Reading kernels: PTX files, or CUDA C compiled with NVRTC; parse errors become diagnostics.

use crate::{nvrtc, Failure};
use reconverge_ir::Module;

/// A parsed kernel file.
pub struct Loaded {
    /// The PTX text (compiled from CUDA C for `.cu` input).
    pub ptx: String,
    /// The parsed module.
    pub module: Module,
}

/// Reads and parses `path` (`.ptx`, or `.cu` through NVRTC with `nvrtc_options` added).
pub fn load(path: &str, nvrtc_options: &[String]) -> Result<Loaded, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::input(format!("cannot read `{path}`: {e}")))?;
    let ptx = if path.ends_with(".cu") {
        let mut opts: Vec<String> = nvrtc::DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect();
        opts.extend(nvrtc_options.iter().cloned());
        nvrtc::compile(&text, path, &opts).map_err(|e| Failure::input(format!("{e:#}")))?
    } else {
        text
    };
    let module = reconverge_ptx::parse(&ptx)
        .map_err(|errs| Failure::input(reconverge_ptx::SourceError::new(path, ptx.clone(), errs).render_plain()))?;
    Ok(Loaded { ptx, module })
}
