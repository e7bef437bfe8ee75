//! The shim's settings, read once from the environment (`reconverge exec` sets them from its flags).

use reconverge_mechanism::Mechanism;
use reconverge_timing::GpuConfig;

/// One environment variable the shim reads: its name and what it sets.
pub const VARIABLES: &[(&str, &str)] = &[
    ("RECONVERGE_MECHANISM", "the divergence mechanism (default pdom)"),
    ("RECONVERGE_CONFIG", "a GPU preset or TOML file (default gtx480); `functional` for no timing model"),
    ("RECONVERGE_WARP_SIZE", "threads per warp (default: the configuration's)"),
    ("RECONVERGE_STATS", "write one JSON line per launch to this file"),
    ("RECONVERGE_MAX_INSTRUCTIONS", "warp instructions one launch may issue (default 1000000000)"),
    ("RECONVERGE_MAX_CYCLES", "cycles one launch may take (default: no limit)"),
    ("RECONVERGE_MAX_MEMORY", "bytes of simulated device memory and model state (default 8 GiB)"),
    ("RECONVERGE_THREADS", "host threads of the timing model (default 0: all cores)"),
];

/// What the shim runs kernels under.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The divergence mechanism.
    pub mechanism: Mechanism,
    /// The GPU configuration (`None`: functional simulation).
    pub gpu: Option<GpuConfig>,
    /// Threads per warp.
    pub warp_size: u32,
    /// Where the per-launch statistics go.
    pub stats: Option<String>,
    /// Warp instructions one launch may issue.
    pub max_instructions: u64,
    /// Cycles one launch may take.
    pub max_cycles: Option<u64>,
    /// Bytes of simulated memory.
    pub max_memory: u64,
    /// Host threads of the timing model.
    pub threads: usize,
}

/// A setting that does not parse: the variable and why.
#[derive(Debug, thiserror::Error)]
#[error("{var}={value}: {why}")]
pub struct SettingError {
    /// The environment variable.
    pub var: &'static str,
    /// Its value.
    pub value: String,
    /// Why it was refused.
    pub why: String,
}

impl Settings {
    /// The settings from `get` (the environment, or a map in tests).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Settings, SettingError> {
        let err = |var: &'static str, value: &str, why: String| SettingError { var, value: value.to_string(), why };
        let number = |var: &'static str| -> Result<Option<u64>, SettingError> {
            get(var).map(|v| v.trim().parse::<u64>().map_err(|e| err(var, &v, e.to_string()))).transpose()
        };
        let mech_name = get("RECONVERGE_MECHANISM").unwrap_or_else(|| "pdom".into());
        let mechanism = Mechanism::from_name(&mech_name).ok_or_else(|| {
            let known: Vec<&str> = Mechanism::ALL.iter().map(|m| m.name()).collect();
            err("RECONVERGE_MECHANISM", &mech_name, format!("unknown mechanism (known: {})", known.join(", ")))
        })?;
        let config = get("RECONVERGE_CONFIG").unwrap_or_else(|| "gtx480".into());
        let gpu = match config.as_str() {
            "functional" => None,
            c => Some(GpuConfig::resolve(c).map_err(|e| err("RECONVERGE_CONFIG", c, e.to_string()))?),
        };
        let warp_size = match number("RECONVERGE_WARP_SIZE")? {
            Some(w) if (1..=64).contains(&w) && w.is_power_of_two() => w as u32,
            Some(w) => return Err(err("RECONVERGE_WARP_SIZE", &w.to_string(), "a power of two, 1..64".into())),
            None => gpu.as_ref().map_or(32, |g| g.warp_size),
        };
        Ok(Settings {
            mechanism,
            gpu,
            warp_size,
            stats: get("RECONVERGE_STATS").filter(|s| !s.is_empty()),
            max_instructions: number("RECONVERGE_MAX_INSTRUCTIONS")?.unwrap_or(1_000_000_000),
            max_cycles: number("RECONVERGE_MAX_CYCLES")?,
            max_memory: number("RECONVERGE_MAX_MEMORY")?.unwrap_or(reconverge_program::launch::DEFAULT_MAX_MEMORY),
            threads: number("RECONVERGE_THREADS")?.unwrap_or(0).min(1024) as usize,
        })
    }

    /// The settings from the process environment.
    pub fn from_env() -> Result<Settings, SettingError> {
        Settings::from_vars(|k| std::env::var(k).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(pairs: &[(&str, &str)]) -> Result<Settings, SettingError> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_are_pdom_on_gtx480_at_its_warp_size() {
        let s = with(&[]).expect("defaults");
        assert_eq!(s.mechanism.name(), "pdom");
        assert_eq!(s.gpu.as_ref().map(|g| g.name.as_str()), Some("gtx480"));
        assert_eq!(s.warp_size, 32);
    }

    #[test]
    fn bad_values_name_the_variable() {
        let e = with(&[("RECONVERGE_MECHANISM", "nope")]).expect_err("unknown");
        assert!(e.to_string().starts_with("RECONVERGE_MECHANISM=nope: unknown mechanism"), "{e}");
        let e = with(&[("RECONVERGE_WARP_SIZE", "48")]).expect_err("not a power of two");
        assert!(e.to_string().contains("RECONVERGE_WARP_SIZE=48"), "{e}");
        let s = with(&[("RECONVERGE_CONFIG", "functional"), ("RECONVERGE_WARP_SIZE", "8")]).expect("functional");
        assert!(s.gpu.is_none() && s.warp_size == 8);
    }
}
