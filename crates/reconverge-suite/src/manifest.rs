//! `kernels/manifest.toml`: what each suite kernel is launched with and what it must produce.

use serde::Deserialize;
use std::collections::BTreeMap;

/// One argument of a kernel as the manifest writes it: a number, or a string spec (`@file.npy`,
/// `zeros:i32:16`, `@file.npy+1`, `struct:u32=4,ptr=@row.npy`: [`crate::ArgSpec`]).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ManifestArg {
    /// An integer scalar.
    Int(i64),
    /// A float scalar.
    Float(f64),
    /// A string spec.
    Text(String),
}

impl ManifestArg {
    /// The spec as command-line text.
    pub fn text(&self) -> String {
        match self {
            ManifestArg::Int(i) => i.to_string(),
            ManifestArg::Float(f) => format!("{f:?}"),
            ManifestArg::Text(s) => s.clone(),
        }
    }
}

/// One kernel of the suite.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct KernelEntry {
    /// The entry point (and the source file stem).
    pub name: String,
    /// The PTX variant to run, relative to the kernels directory.
    pub ptx: String,
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// One per kernel parameter.
    pub args: Vec<ManifestArg>,
    /// Argument index (or `ARG.FIELD`: the buffer a struct argument's pointer field points into) → `.npy`
    /// with the expected final contents ([`crate::OutputKey`]).
    #[serde(default)]
    pub expected: BTreeMap<String, String>,
    /// Module `.global`/`.const` variables set before the launch: name → value (as for `--global`).
    #[serde(default)]
    pub globals: BTreeMap<String, ManifestArg>,
    /// Module variable → `.npy` with its expected final contents.
    #[serde(default)]
    pub expected_globals: BTreeMap<String, String>,
    /// Dynamic shared memory in bytes.
    #[serde(default)]
    pub dynamic_shared: u32,
    /// Expected outcome (`completed` unless overridden per mechanism).
    #[serde(default = "completed")]
    pub outcome: String,
    /// Mechanism → expected outcome; `a|b` accepts either (a mechanism whose issue order depends on
    /// timing may starve a thread in one mode and not in the other).
    #[serde(default)]
    pub outcome_by_mechanism: BTreeMap<String, String>,
    /// The warp sizes the expectations hold for (absent: any).
    #[serde(default)]
    pub warp_sizes: Option<Vec<u32>>,
    /// What the kernel is.
    #[serde(default)]
    pub description: String,
}

fn completed() -> String {
    "completed".into()
}

impl KernelEntry {
    /// The outcome expected under `mechanism` (`a|b`: either).
    pub fn expected_outcome(&self, mechanism: &str) -> &str {
        self.outcome_by_mechanism.get(mechanism).map(String::as_str).unwrap_or(&self.outcome)
    }

    /// Whether `outcome` is an expected outcome under `mechanism`.
    pub fn accepts_outcome(&self, mechanism: &str, outcome: &str) -> bool {
        self.expected_outcome(mechanism).split('|').any(|o| o == outcome)
    }

    /// Whether the expectations hold at `warp_size`.
    pub fn supports_warp_size(&self, warp_size: u32) -> bool {
        self.warp_sizes.as_ref().is_none_or(|v| v.contains(&warp_size))
    }
}

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Manifest {
    /// The kernels, in manifest order.
    #[serde(rename = "kernel")]
    pub kernels: Vec<KernelEntry>,
}

impl Manifest {
    /// Parses the manifest text.
    pub fn parse(text: &str) -> Result<Manifest, crate::SuiteError> {
        toml::from_str(text).map_err(crate::SuiteError::Manifest)
    }
}
