//! Reading kernels: PTX files, or CUDA C compiled with NVRTC; parse errors become diagnostics.

use crate::Failure;
use reconverge_ir::Module;
use reconverge_nvrtc as nvrtc;

/// A parsed kernel file.
pub struct Source {
    /// The PTX text (compiled from CUDA C for `.cu` input).
    pub ptx: String,
    /// The parsed module.
    pub module: Module,
}

/// Reads and parses `path` (`.ptx`, or `.cu` through NVRTC with `nvrtc_options` added).
pub fn load(path: &str, nvrtc_options: &[String]) -> Result<Source, Failure> {
    let bytes = std::fs::read(path).map_err(|e| Failure::input(format!("cannot read `{path}`: {e}")))?;
    let text = utf8(path, bytes)?;
    let ptx = if path.ends_with(".cu") {
        let mut opts: Vec<String> = nvrtc::DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect();
        opts.extend(nvrtc::include_options());
        opts.extend(nvrtc_options.iter().cloned());
        nvrtc::compile(&text, path, &opts).map_err(|e| Failure::input(format!("{e:#}")))?
    } else {
        text
    };
    let module = reconverge_ptx::parse(&ptx)
        .map_err(|errs| Failure::input(reconverge_ptx::SourceError::new(path, ptx.clone(), errs).render_plain()))?;
    Ok(Source { ptx, module })
}

/// The text of a file, or an error naming the byte offset, line and column of the first byte that is not
/// UTF-8.
pub fn utf8(path: &str, bytes: Vec<u8>) -> Result<String, Failure> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
        let line_start = b[..at].iter().rposition(|&c| c == b'\n').map(|i| i + 1).unwrap_or(0);
        let col = String::from_utf8_lossy(&b[line_start..at]).chars().count() + 1;
        Failure::input(format!(
            "{path}:{line}:{col}: the file is not UTF-8 text: byte {at} (0x{:02x}) is not valid UTF-8",
            b[at]
        ))
    })
}
