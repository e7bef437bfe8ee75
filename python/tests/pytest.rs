//! Runs the Python package's tests (`python/tests/*.py`) from `cargo test --workspace`: builds the
//! package with maturin into the virtual environment `.tools/py` (created when missing, with maturin,
//! NumPy, pandas, pytest, pyarrow and Ray; `.ci/run` creates it) and runs pytest there. The build uses its own target
//! directory (`target/python`), so it never waits for the cargo that runs this test.

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

#[test]
fn the_python_package_passes_its_tests() {
    let root = root();
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
            "maturin>=1.5,<2",
            "numpy",
            "pandas",
            "pytest",
            "pyarrow",
            "ray",
        ]),
        "pip install maturin numpy pandas pytest pyarrow ray",
    );
    run(
        Command::new(venv.join("bin/maturin"))
            .args(["develop", "--profile", "pyext", "--manifest-path"])
            .arg(root.join("python/Cargo.toml"))
            .env("VIRTUAL_ENV", &venv)
            .env("CARGO_TARGET_DIR", root.join("target/python")),
        "maturin develop",
    );
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/debug/reconverge");
    let mut pytest = Command::new(&python);
    pytest.args(["-m", "pytest", "-q", "python/tests"]).current_dir(&root);
    if bin.exists() {
        pytest.env("RECONVERGE_BIN", bin);
    }
    run(&mut pytest, "pytest python/tests");
}
