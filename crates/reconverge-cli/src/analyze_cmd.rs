//! `reconverge analyze`: seed 004's convergence, variance and affine analyses.

use crate::cfg_cmd::{resolve_function, Format};
use crate::{source, Failure};
use clap::Args;

/// Arguments of `reconverge analyze`.
#[derive(Args)]
pub(crate) struct AnalyzeArgs {
    /// The kernel file (.ptx, or .cu when NVRTC is installed).
    pub file: String,
    /// Only this function (kernel or device function).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Output format (JSON: the contract of docs/scalarization.md).
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Extra NVRTC option for .cu input (repeatable).
    #[arg(long = "nvrtc-opt")]
    pub nvrtc_opts: Vec<String>,
}

/// Runs `reconverge analyze`.
pub(crate) fn run(a: AnalyzeArgs) -> Result<(), Failure> {
    let loaded = source::load(&a.file, &a.nvrtc_opts)?;
    let only = resolve_function(&loaded.module, &a.file, a.kernel.as_deref())?;
    let report = reconverge_report::analyze_report(&loaded.module, &loaded.ptx, only);
    let out = match a.format {
        Format::Text => report.text(),
        Format::Dot => report.dot(),
        Format::Json => serde_json::to_string_pretty(&report).map(|s| s + "\n").unwrap_or_default(),
    };
    crate::out::write(&out)
}
