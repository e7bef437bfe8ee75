//! `reconverge cuda-include` and `reconverge cuda-lib`: the directories a CUDA program is built with to run
//! under `reconverge exec`. `cuda-include` holds `reconverge_compat.h` (texture references and the calls
//! CUDA 12 removed, for older programs: `nvcc -include DIR/reconverge_compat.h`); `cuda-lib` holds
//! `libcudart.so`, a link to reconverge's runtime, for `nvcc -cudart shared -L DIR` on a machine without
//! NVIDIA's runtime library. Both live in the user's cache directory (`$XDG_CACHE_HOME/reconverge`, else
//! `~/.cache/reconverge`, else the temporary directory) and are refreshed on every call.

use crate::{outln, Failure};
use std::path::PathBuf;

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

/// The link directory: `libcudart.so` and `libcudart.so.13`, links to the shim this command would run
/// programs with.
pub(crate) fn lib_dir() -> Result<PathBuf, Failure> {
    let shim = crate::exec_cmd::find_shim()?;
    let target = shim.canonicalize().map_err(|e| fail(&shim, e))?;
    let dir = root().join("lib");
    std::fs::create_dir_all(&dir).map_err(|e| fail(&dir, e))?;
    for name in ["libcudart.so", "libcudart.so.13"] {
        let link = dir.join(name);
        if std::fs::read_link(&link).ok().as_ref() != Some(&target) {
            let _ = std::fs::remove_file(&link);
            std::os::unix::fs::symlink(&target, &link).map_err(|e| fail(&link, e))?;
        }
    }
    Ok(dir)
}

/// `reconverge cuda-include`.
pub(crate) fn include_cmd() -> Result<(), Failure> {
    outln!("{}", include_dir()?.display())
}

/// `reconverge cuda-lib`.
pub(crate) fn lib_cmd() -> Result<(), Failure> {
    outln!("{}", lib_dir()?.display())
}
