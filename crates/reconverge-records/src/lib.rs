//! The tidy results of reconverge, as plain data: one flat [`RunRecord`] per run (kernel × mechanism ×
//! warp size × configuration), the suite's [`Check`] of a run, speedups over the [`BASELINE`] mechanism and
//! their [summary] over the kernels every mechanism completed, and the JSON objects of a run's
//! mechanism counters and seed 004's scalarization metrics.
//!
//! The suite builds these records and the report renders them; neither owns them, so the suite does not
//! depend on the renderers and the renderers do not depend on the suite. [`aggregate`] combines the
//! statistics of several launches (`run --json` objects) into one, each key by its kind; [`per_pc`] sums
//! a program's launches per pc of each kernel (`exec --html`); [`sampling`] decides which of a
//! program's launches `exec --sample` times and estimates the cycles of the others.
#![deny(missing_docs)]

pub mod aggregate;
pub mod per_pc;
pub mod run;
pub mod sampling;
pub mod scalarization;
pub mod summary;

pub use aggregate::{accumulate, AggregateError};
pub use run::{fill_speedups, mechanism_counters, Check, RunRecord, BASELINE};
pub use scalarization::{scalarization_json, ScalarizationJson};
pub use summary::{speedup_summaries, summary_rows, Excluded, MechanismSpeedup, SpeedupSummary, SummaryRow};
