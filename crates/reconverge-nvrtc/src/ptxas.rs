//! Registers per thread from NVIDIA's `ptxas -v`, as GPGPU-Sim takes them.
//!
//! GPGPU-Sim 4.0 assembles every PTX file it loads with `ptxas --gpu-name=sm_N -v` and charges each
//! kernel the registers ptxas reports (`gpgpu_ptx_info_load_from_filename`); the PTX's own register
//! declarations count virtual registers, several times what ptxas allocates. This module does the same
//! for the timing model's occupancy: [`allocate`] runs ptxas on a module for one architecture and returns
//! each entry's registers.
//!
//! `ptxas` is found, in order: the path in `RECONVERGE_PTXAS`; the PyPI wheels (`nvidia-cuda-nvcc-cu11`
//! or `-cu12`: `nvidia/cuda_nvcc/bin/ptxas`; `nvidia-cuda-nvcc`, CUDA 13: `nvidia/cu13/bin/ptxas`) in
//! the repository's `.tools/cuda` environment or in the site-packages of `python3`; `ptxas` on `PATH`.
//! The first that assembles for the architecture answers (CUDA 13's ptxas no longer knows `sm_35`, 11.8's
//! does). The architecture is the module's own `.target sm_N`, as GPGPU-Sim passes it. `RECONVERGE_PTXAS=off`
//! turns ptxas off (the timing model then charges its estimate). Results are kept per module text for the
//! life of the process.

use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// What `ptxas` reported for one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// Registers per thread of each entry function, by name.
    pub registers: BTreeMap<String, u32>,
    /// The architecture assembled for (`sm_N`'s N).
    pub arch: u32,
    /// The ptxas release that answered (`11.8`).
    pub release: String,
}

/// Why no allocation came back.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PtxasError {
    /// No ptxas was found.
    #[error("ptxas was not found (RECONVERGE_PTXAS, the nvidia-cuda-nvcc wheels, PATH)")]
    NotFound,
    /// `RECONVERGE_PTXAS=off`.
    #[error("ptxas is turned off (RECONVERGE_PTXAS=off)")]
    Off,
    /// The module names no `sm_N` target.
    #[error("the module's .target names no sm_N architecture")]
    NoTarget,
    /// Every ptxas found refused the module or the architecture; the last one's first error line.
    #[error("ptxas could not assemble the module for sm_{arch}: {message}")]
    Refused {
        /// The architecture asked for.
        arch: u32,
        /// ptxas's first error line.
        message: String,
    },
    /// The module could not be written to a temporary file.
    #[error("writing the PTX for ptxas: {0}")]
    Io(String),
}

/// The ptxas candidates, in the order they are tried.
fn candidates() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Ok(p) = std::env::var("RECONVERGE_PTXAS") {
        v.push(PathBuf::from(p));
    }
    for site in crate::site_packages() {
        v.push(site.join("nvidia/cuda_nvcc/bin/ptxas"));
        v.push(site.join("nvidia/cu13/bin/ptxas"));
    }
    v.retain(|p| p.is_file());
    v.dedup();
    v.push(PathBuf::from("ptxas"));
    v
}

impl Allocation {
    /// Registers per thread of entry `kernel`, if ptxas reported it.
    pub fn of(&self, kernel: &str) -> Option<u32> {
        self.registers.get(kernel).copied()
    }
}

/// `(registers per thread, architecture, ptxas release)` of entry `kernel` of the PTX module `ptx`, when
/// a ptxas assembles it ([`allocate`]); `None` leaves the timing model its estimate.
pub fn kernel_registers(ptx: &str, kernel: &str) -> Option<(u32, u32, String)> {
    let a = allocate(ptx).ok()?;
    Some((a.of(kernel)?, a.arch, a.release))
}

/// The N of the module's `.target sm_N` (`sm_90a` gives 90).
pub fn target_arch(ptx: &str) -> Option<u32> {
    let line = ptx.lines().map(str::trim_start).find(|l| l.starts_with(".target"))?;
    let sm = line.split(|c: char| c == ',' || c.is_whitespace()).find_map(|t| t.strip_prefix("sm_"))?;
    sm.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()
}

/// Registers per thread of every entry of the PTX module `ptx`, assembled for its own target by the
/// first ptxas that can (module doc). Remembered per module.
pub fn allocate(ptx: &str) -> Result<Allocation, PtxasError> {
    if std::env::var("RECONVERGE_PTXAS").is_ok_and(|v| v == "off") {
        return Err(PtxasError::Off);
    }
    let arch = target_arch(ptx).ok_or(PtxasError::NoTarget)?;
    type Cache = Mutex<HashMap<(u64, u32), Result<Allocation, PtxasError>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ptx.hash(&mut h);
    let key = (h.finish(), arch);
    // Held while ptxas runs: threads asking for the same module wait for one answer (and never share
    // the temporary file).
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    cache.entry(key).or_insert_with(|| run_candidates(ptx, key)).clone()
}

/// Runs the candidates on `ptx` (whose hash and architecture are `(hash, arch)`) until one assembles it.
fn run_candidates(ptx: &str, (hash, arch): (u64, u32)) -> Result<Allocation, PtxasError> {
    let dir = std::env::temp_dir().join(format!("reconverge-ptxas-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| PtxasError::Io(e.to_string()))?;
    let file = dir.join(format!("{hash:x}.ptx"));
    std::fs::write(&file, ptx).map_err(|e| PtxasError::Io(e.to_string()))?;
    let mut last = PtxasError::NotFound;
    for exe in candidates() {
        let out = std::process::Command::new(&exe)
            .arg(format!("--gpu-name=sm_{arch}"))
            .arg("-v")
            .arg(&file)
            .args(["--output-file", "/dev/null"])
            .output();
        let Ok(out) = out else { continue };
        let log = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let release = std::process::Command::new(&exe)
                .arg("--version")
                .output()
                .map(|v| release_of(&String::from_utf8_lossy(&v.stdout)))
                .unwrap_or_default();
            remove(&file);
            return Ok(Allocation { registers: parse_registers(&log), arch, release });
        }
        let message = log.lines().find(|l| l.contains("fatal") || l.contains("error")).unwrap_or("").trim();
        last = PtxasError::Refused { arch, message: message.chars().take(200).collect() };
    }
    remove(&file);
    Err(last)
}

/// Removes the temporary module and, when nothing else is in it, its directory.
fn remove(file: &std::path::Path) {
    std::fs::remove_file(file).ok();
    if let Some(dir) = file.parent() {
        std::fs::remove_dir(dir).ok();
    }
}

/// The release in `ptxas --version`'s output ("... release 11.8, V11.8.89" gives `11.8`).
fn release_of(version: &str) -> String {
    version.split("release ").nth(1).and_then(|s| s.split(',').next()).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Per entry function, the registers of ptxas's `-v` report: a `Compiling entry function 'NAME'` line,
/// then `Used N registers` for it.
fn parse_registers(log: &str) -> BTreeMap<String, u32> {
    let mut out = BTreeMap::new();
    let mut entry: Option<String> = None;
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            entry = rest.split('\'').next().map(str::to_string);
        } else if let Some(rest) = line.split("Used ").nth(1) {
            let n = rest.split(' ').next().and_then(|n| n.parse::<u32>().ok());
            if let (Some(name), Some(n), true) = (entry.take(), n, rest.contains("registers")) {
                out.insert(name, n);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verbose_report_gives_each_entrys_registers() {
        let log = "ptxas info    : 0 bytes gmem\n\
                   ptxas info    : Compiling entry function 'bfs' for 'sm_35'\n\
                   ptxas info    : Function properties for bfs\n    0 bytes stack frame, 0 bytes spill stores\n\
                   ptxas info    : Used 20 registers, used 1 barriers, 3076 bytes smem\n\
                   ptxas info    : Compiling entry function 'k2' for 'sm_35'\n\
                   ptxas info    : Function properties for helper\n\
                   ptxas info    : Used 7 registers, 352 bytes cmem[0]\n";
        let r = parse_registers(log);
        assert_eq!(r.get("bfs"), Some(&20));
        assert_eq!(r.get("k2"), Some(&7));
        assert_eq!(r.len(), 2);
    }

    #[test]
    fn the_architecture_is_the_modules_target() {
        assert_eq!(target_arch(".version 7.8\n.target sm_35\n.address_size 64\n"), Some(35));
        assert_eq!(target_arch("  .target sm_90a, texmode_independent\n"), Some(90));
        assert_eq!(target_arch(".target compute_80\n"), None);
        assert_eq!(target_arch(".version 8.0\n"), None);
    }

    #[test]
    fn the_release_comes_from_the_version_banner() {
        let v = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 11.8, V11.8.89\n";
        assert_eq!(release_of(v), "11.8");
        assert_eq!(release_of("nonsense"), "");
    }
}
