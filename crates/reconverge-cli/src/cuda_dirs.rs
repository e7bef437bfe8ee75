//! `reconverge cuda-include` and `reconverge cuda-lib`: the directories a CUDA program is built with to run
//! under `reconverge exec`. `cuda-include` holds `reconverge_compat.h` (texture references and the calls
//! CUDA 12 removed, for older programs: `nvcc -include DIR/reconverge_compat.h`); `cuda-lib` holds
//! `libcudart.so`, a link to reconverge's runtime, for `nvcc -cudart shared -L DIR` on a machine without
//! NVIDIA's runtime library (`cuda-lib --cuda 12`: to CUDA 12's `libcudart.so.12`, for programs compiled
//! with CUDA 12's headers). Both live in the user's cache directory (`$XDG_CACHE_HOME/reconverge`, else
//! `~/.cache/reconverge`, else the temporary directory) and are refreshed on every call.

use crate::{outln, Failure};
use clap::Args;
use std::path::PathBuf;

/// Arguments of `reconverge cuda-lib`.
#[derive(Args)]
pub(crate) struct LibArgs {
    /// The CUDA major version whose runtime `libcudart.so` links to: 13, or 12 for programs compiled with
    /// CUDA 12's headers (they then name `libcudart.so.12`).
    #[arg(long, default_value_t = 13, value_parser = clap::value_parser!(u32).range(12..=13))]
    cuda: u32,
}

/// The compatibility header, as shipped with this build.
pub(crate) const COMPAT_HEADER: &str = include_str!("../cuda/reconverge_compat.h");

/// The directory for this build's files (its version in the name, so two builds do not share one).
fn root() -> PathBuf {
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    cache.join("reconverge").join(env!("CARGO_PKG_VERSION"))
}

fn fail(what: &std::path::Path, e: std::io::Error) -> Failure {
    Failure::input(format!("{}: {e}", what.display()))
}

/// The include directory, with the header written (rewritten when it differs).
pub(crate) fn include_dir() -> Result<PathBuf, Failure> {
    let dir = root().join("include");
    std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
    let file = dir.join("reconverge_compat.h");
    if std::fs::read_to_string(&file).ok().as_deref() != Some(COMPAT_HEADER) {
        std::fs::write(&file, COMPAT_HEADER).map_err(|e| fail(&file, e))?;
    }
    Ok(dir)
}

/// The link directory of CUDA `major`'s runtime (`lib`, or `lib12` for CUDA 12): `libcudart.so`, a link to
/// that runtime, and `libcudart.so.13` and `libcudart.so.12`, links to the libraries this command would run
/// programs with (CUDA 12's when it is built).
pub(crate) fn lib_dir(major: u32) -> Result<PathBuf, Failure> {
    let shim = crate::exec_cmd::find_shim()?;
    let shim = shim.canonicalize().map_err(|e| fail(&shim, e))?;
    let shim12 = crate::exec_cmd::find_shim12();
    let shim12 = shim12.map(|s| s.canonicalize().map_err(|e| fail(&s, e))).transpose()?;
    let Some(linked) = (if major == 13 { Some(&shim) } else { shim12.as_ref() }) else {
        let why = "CUDA 12's runtime libreconverge_cudart12.so is not built beside this binary (`cargo build \
                   --release -p reconverge-cli` builds it), nor named by RECONVERGE_CUDART12";
        return Err(Failure::input(why.to_string()));
    };
    let dir = root().join(if major == 13 { "lib" } else { "lib12" });
    std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
    let mut links = vec![("libcudart.so", linked.as_path()), ("libcudart.so.13", shim.as_path())];
    links.extend(shim12.as_deref().map(|s| ("libcudart.so.12", s)));
    crate::exec_cmd::link_libraries(&dir, &links)?;
    Ok(dir)
}

/// `reconverge cuda-include`.
pub(crate) fn include_cmd() -> Result<(), Failure> {
    outln!("{}", include_dir()?.display())
}

/// `reconverge cuda-lib`.
pub(crate) fn lib_cmd(a: &LibArgs) -> Result<(), Failure> {
    outln!("{}", lib_dir(a.cuda)?.display())
}
