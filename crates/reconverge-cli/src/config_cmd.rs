//! `reconverge config show PRESET`: a preset as an editable TOML file; `reconverge config import FILE`: a
//! GPGPU-Sim `gpgpusim.config` as one.

use crate::{outln, Failure};
use clap::{Args, Subcommand};

/// `config` arguments.
#[derive(Args, Debug)]
pub(crate) struct ConfigArgs {
    #[command(subcommand)]
    action: ConfigAction,
}

/// What `config` does.
#[derive(Subcommand, Debug)]
enum ConfigAction {
    /// Print a preset (`gtx480`, `volta`, ... or `PRESET+DISPATCH`) as a TOML file with every parameter:
    /// edit it and pass it to --config (unchanged, it gives the preset's cycles to the cycle).
    Show {
        /// The preset.
        preset: String,
    },
    /// Read a GPGPU-Sim `gpgpusim.config` and print it as a TOML file for --config: every option the
    /// model has an equivalent for set on the `gtx480` preset, the others listed as not modelled.
    Import {
        /// The GPGPU-Sim configuration file.
        file: String,
    },
}

pub(crate) fn run(a: ConfigArgs) -> Result<(), Failure> {
    match a.action {
        ConfigAction::Show { preset } => {
            let text = reconverge_timing::GpuConfig::preset_toml(&preset).ok_or_else(|| {
                Failure::input(format!(
                    "config show {preset}: not a preset (presets: {}, or PRESET+DISPATCH)",
                    reconverge_timing::PRESETS.join(", ")
                ))
            })?;
            outln!("{}", text.trim_end())?;
            Ok(())
        }
        ConfigAction::Import { file } => import(&file),
    }
}

/// `config import FILE`: the TOML file, with what was mapped and what was not as comments.
fn import(file: &str) -> Result<(), Failure> {
    let text = std::fs::read_to_string(file).map_err(|e| Failure::input(format!("config import {file}: {e}")))?;
    let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or("imported");
    let name = if stem == "gpgpusim" { "imported" } else { stem };
    let i = reconverge_timing::import::import_gpgpusim(&text, name)
        .map_err(|e| Failure::input(format!("config import {file}: {e}")))?;
    i.config.validate().map_err(|e| Failure::input(format!("config import {file}: the result is invalid: {e}")))?;
    let body = i.config.file_toml("gtx480", true).ok_or_else(|| Failure::input("config import: cannot write TOML"))?;
    outln!("# Imported from {file} by `reconverge config import` onto the gtx480 preset.")?;
    let mut seen = std::collections::BTreeSet::new();
    for (option, keys) in &i.mapped {
        if !keys.is_empty() && seen.insert(option) {
            outln!("# {option} -> {keys}")?;
        }
    }
    for n in &i.notes {
        outln!("# note: {n}")?;
    }
    if !i.not_modelled.is_empty() {
        outln!("# not modelled (no equivalent here):")?;
        let mut line = String::from("#");
        for o in &i.not_modelled {
            if line.len() + o.len() > 100 {
                outln!("{line}")?;
                line = String::from("#");
            }
            line = format!("{line} {o}");
        }
        outln!("{line}")?;
    }
    outln!("{}", body.trim_end())?;
    Ok(())
}
