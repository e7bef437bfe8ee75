//! Progress bars of long commands (`suite`, `compare`, `bench`): drawn on standard error only when both
//! standard output and standard error are terminals and the output is a text table (never in pipes, CSV
//! or JSON).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar over `len` runs; hidden when `machine_output` (CSV/JSON) or when not on a terminal.
pub(crate) fn bar(len: u64, machine_output: bool) -> ProgressBar {
    let visible = !machine_output && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    if !visible {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {elapsed} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}
