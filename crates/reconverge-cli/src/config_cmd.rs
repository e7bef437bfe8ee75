//! `reconverge config show PRESET`: a preset as an editable TOML file.

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
    }
}
