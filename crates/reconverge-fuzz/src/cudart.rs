//! Fuzzing the CUDA runtime shim (`libreconverge_cudart.so`, crate `reconverge-cudart`): random
//! sequences of runtime calls with random sizes and pointers, and damaged fat binaries.
//!
//! Each sequence runs in a child process (the `reconverge-fuzz-cudart` binary re-executed with
//! `--child SEED`), which bounds its memory, `dlopen`s the shim and drives its `extern "C"` entry points
//! by symbol the way a program's static constructors and host code do ([`child`]): it registers a fat
//! binary ([`fatbin`]: the fuzzer's own PTX module, or a real `nvcc` fat binary, damaged for about a
//! third of the seeds), its kernels and variables, then makes 10 to 200 calls ([`plan`]). The parent
//! ([`campaign`]) classifies how each child ended: exit 0, or a documented status of the shim (2: bad
//! input such as a damaged fat binary or an unsupported call, 3: a deadlock, 4: a limit) are fine; a
//! signal, exit status 70 (the shim's internal error), any other status, or running past the timeout is a
//! crash, saved with its seed and call log and minimised to the calls it needs.

pub mod api;
pub mod campaign;
pub mod child;
pub mod fatbin;
pub mod plan;

use std::path::{Path, PathBuf};

/// The shim's file name as cargo builds it.
pub const SHIM: &str = "libreconverge_cudart.so";

/// The exit status of a child whose harness failed (the shim could not be loaded, a symbol is missing,
/// a buffer could not be mapped): the campaign stops, since every child would fail the same way.
pub const HARNESS_EXIT: i32 = 64;

/// Why the fuzzer itself cannot go on (never a finding about the shim).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The shim was not found.
    #[error(
        "the CUDA runtime shim {SHIM} is not beside {0} nor in its deps/ (build it with `cargo build -p \
         reconverge-cudart`, or pass --shim or RECONVERGE_CUDART)"
    )]
    NoShim(String),
    /// The shim could not be loaded.
    #[error("cannot load {path}: {detail}")]
    Load {
        /// The library.
        path: String,
        /// The loader's message.
        detail: String,
    },
    /// An entry point is missing.
    #[error("the shim has no entry point `{name}`: {detail}")]
    Symbol {
        /// The entry point.
        name: &'static str,
        /// The loader's message.
        detail: String,
    },
    /// A host buffer could not be mapped.
    #[error("cannot map a guarded host buffer of {0} bytes")]
    Map(u64),
    /// A file or process operation failed.
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// A child's harness failed (exit status [`HARNESS_EXIT`]).
    #[error("the child of seed {seed} could not run its plan:\n{output}")]
    Child {
        /// Its seed.
        seed: u64,
        /// The end of its output.
        output: String,
    },
}

/// Finds the shim as `reconverge exec` does: `explicit`, else `RECONVERGE_CUDART`, else the newest of
/// the copies beside `exe`, in its `deps/` and one directory up.
pub fn find_shim(explicit: Option<&Path>, exe: &Path) -> Result<PathBuf, HarnessError> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("RECONVERGE_CUDART") {
        return Ok(PathBuf::from(p));
    }
    let dir = exe.parent().unwrap_or(Path::new("."));
    [Some(dir.to_path_buf()), Some(dir.join("deps")), dir.parent().map(Path::to_path_buf)]
        .into_iter()
        .flatten()
        .map(|d| d.join(SHIM))
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p)
        .ok_or_else(|| HarnessError::NoShim(exe.display().to_string()))
}
