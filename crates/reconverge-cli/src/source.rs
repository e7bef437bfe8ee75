//! Reading kernels: PTX files, or CUDA C compiled with NVRTC; parse errors become diagnostics.

use crate::Failure;
use reconverge_ir::Module;
use reconverge_nvrtc as nvrtc;
use std::path::{Path, PathBuf};

/// A parsed kernel file.
pub(crate) struct Source {
    /// The PTX text (compiled from CUDA C for `.cu` input).
    pub ptx: String,
    /// The parsed module.
    pub module: Module,
}

/// Reads and parses `path` (`.ptx`, or `.cu` through NVRTC with `nvrtc_options` added).
pub(crate) fn load(path: &str, nvrtc_options: &[String]) -> Result<Source, Failure> {
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
    let mut module = reconverge_ptx::parse(&ptx)
        .map_err(|errs| Failure::input(reconverge_ptx::SourceError::new(path, ptx.clone(), errs).render_plain()))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    for f in &mut module.files {
        f.path = local_source_path(&f.path, Path::new(path), &cwd);
    }
    Ok(Source { ptx, module })
}

/// Where the `.loc` file `recorded` (a path on the machine that generated the PTX) is on this machine, for
/// messages and source views: the path itself when it exists, else the first file found by joining the
/// longest tail of its components to the input's directory or one of its ancestors (at most four levels
/// up), e.g. `/build/kernels/src/bfs.cu` for input `kernels/ptx/bfs.ptx` → `kernels/src/bfs.cu`. The
/// result is shown relative to `cwd` when it lies inside it; a file that is found nowhere keeps its
/// recorded path.
pub(crate) fn local_source_path(recorded: &str, input: &Path, cwd: &Path) -> String {
    let rec = Path::new(recorded);
    let abs = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) };
    let found = if rec.exists() {
        Some(abs(rec))
    } else {
        let parts: Vec<&std::ffi::OsStr> = rec.iter().filter(|c| *c != "/").collect();
        let dir = abs(input.parent().unwrap_or(Path::new("")));
        (0..parts.len()).find_map(|skip| {
            let tail: PathBuf = parts[skip..].iter().collect();
            dir.ancestors().take(5).map(|d| d.join(&tail)).find(|c| c.is_file())
        })
    };
    match found {
        Some(p) => p.strip_prefix(cwd).map(|r| r.display().to_string()).unwrap_or_else(|_| p.display().to_string()),
        None => recorded.to_string(),
    }
}

/// The text of a file, or an error naming the byte offset, line and column of the first byte that is not
/// UTF-8.
pub(crate) fn utf8(path: &str, bytes: Vec<u8>) -> Result<String, Failure> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_path_is_found_beside_the_input_and_shown_relative() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root");
        let input = Path::new("kernels/ptx/sm_80/warp_reduce.ptx");
        assert_eq!(local_source_path("/kernels/src/warp_reduce.cu", input, &root), "kernels/src/warp_reduce.cu");
        assert_eq!(
            local_source_path("/elsewhere/build/kernels/src/warp_reduce.cu", input, &root),
            "kernels/src/warp_reduce.cu"
        );
        assert_eq!(local_source_path("/no/such/file_at_all.cu", input, &root), "/no/such/file_at_all.cu");
        let outside = root.join("crates");
        assert_eq!(
            local_source_path("/kernels/src/warp_reduce.cu", &root.join(input), &outside),
            root.join("kernels/src/warp_reduce.cu").display().to_string(),
            "outside the working directory the path stays absolute"
        );
    }
}
