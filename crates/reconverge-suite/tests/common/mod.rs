//! The built-in suite as the integration tests load it.
#![allow(dead_code)] // each test file uses part of it

use reconverge_suite::Manifest;
use std::path::PathBuf;

/// `kernels/` and its manifest.
pub(crate) struct Suite {
    /// The kernel directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Suite {
    /// Reads `kernels/manifest.toml`.
    pub(crate) fn load() -> Suite {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("kernels/manifest.toml");
        let manifest = Manifest::parse(&text).expect("manifest parses");
        Suite { dir, manifest }
    }

    /// Reads a file named relative to `kernels/` (the suite's loader).
    pub(crate) fn read(&self, p: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.dir.join(p))
    }
}
