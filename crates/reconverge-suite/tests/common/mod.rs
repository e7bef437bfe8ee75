//! The built-in suite as the integration tests load it.
#![allow(dead_code)] // each test file uses part of it

use reconverge_suite::Manifest;
use std::path::PathBuf;

/// `kernels/` and its manifest.
pub struct Suite {
    /// The kernel directory.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Suite {
    /// Reads `kernels/manifest.toml`.
    pub fn load() -> Suite {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
        let text = std::fs::read_to_string(dir.join("manifest.toml")).expect("kernels/manifest.toml");
        let manifest = Manifest::parse(&text).expect("manifest parses");
        Suite { dir, manifest }
    }

    /// Reads a file named relative to `kernels/` (the suite's loader).
    pub fn read(&self, p: &str) -> std::io::Result<Vec<u8>> {
        std::fs::read(self.dir.join(p))
    }
}

/// `f` of every job, on one host thread per core (each takes the next job when it is done), in the jobs'
/// order: the large matrices of the tests use every core however long each job is.
pub fn in_parallel<T: Sync, R: Send>(jobs: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(jobs.len()).max(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let r = f(job);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results.into_inner().unwrap_or_else(|e| e.into_inner()).into_iter().map(|r| r.expect("every job ran")).collect()
}
