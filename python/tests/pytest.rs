//! Runs the Python package's tests (`python/tests/*.py`) from `cargo test --workspace`, on the extension
//! module this same `cargo test` built: the library is a `cdylib` and an `rlib`, so cargo builds
//! `lib_core.so` beside this test's executable (in `deps/`) with the rest of the workspace, in the same
//! profile. The test stages the package (`python/reconverge/*.py` and the module as `_core.so`) under the
//! target directory, puts it first on `PYTHONPATH` and runs pytest in the virtual environment `.tools/py`
//! (created when missing, with NumPy, pandas, pytest, pyarrow and Ray; `.ci/run` creates it). Releases are
//! built with maturin (`pip install ./python`); this test needs no second build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The package as Python imports it: `DIR/reconverge/{*.py, _core.so}`; returns `DIR`.
fn stage_package(deps: &Path) -> PathBuf {
    let module = deps.join("lib_core.so");
    assert!(module.is_file(), "the extension module was not built beside this test: {}", module.display());
    let dir = deps.parent().expect("the profile directory").join("python-package");
    let package = dir.join("reconverge");
    let _ = std::fs::remove_dir_all(&package);
    std::fs::create_dir_all(&package).expect("create the staged package");
    let sources = root().join("python/reconverge");
    for entry in std::fs::read_dir(&sources).expect("python/reconverge").flatten() {
        let p = entry.path();
        if p.extension().is_some_and(|e| e == "py") {
            std::fs::copy(&p, package.join(entry.file_name())).expect("copy a Python source");
        }
    }
    // A copy, not a link: a later build rewrites lib_core.so while pytest may still hold it.
    std::fs::copy(&module, package.join("_core.so")).expect("copy the extension module");
    dir
}

#[test]
fn the_python_package_passes_its_tests() {
    let root = root();
    let exe = std::env::current_exe().expect("this test's path");
    let deps = exe.parent().expect("the deps directory");
    let staged = stage_package(deps);
    let venv = root.join(".tools/py");
    let python = venv.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv), "python3 -m venv .tools/py");
    }
    run(
        Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "numpy",
            "pandas",
            "pytest",
            "pyarrow",
            "ray",
        ]),
        "pip install numpy pandas pytest pyarrow ray",
    );
    let bin = deps.parent().expect("the profile directory").join("reconverge");
    let mut pytest = Command::new(&python);
    pytest
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "python/tests"])
        .current_dir(&root)
        .env("PYTHONPATH", &staged)
        // The staged module, not an installed one (a `pip install ./python` in the same environment).
        .env("PYTHONNOUSERSITE", "1");
    if bin.exists() {
        pytest.env("RECONVERGE_BIN", bin);
    }
    run(&mut pytest, "pytest python/tests");
}
