//! Printable results of reconverge.
//!
//! Every report is a plain-data struct with public fields (serializable to JSON) plus renderers that
//! return text; nothing here does IO. The command-line crate prints what these functions return.
#![deny(missing_docs)]

pub mod analyze;
pub mod cfg;
pub mod cost;
pub mod exec;
pub mod html;
pub mod lines;
pub mod path_export;
pub mod perfetto;
pub mod records;
pub mod run;
pub mod scalarization;
pub mod synth;
pub mod table;
pub mod timeline;
pub mod trace;

pub use analyze::{analyze_report, AnalyzeReport};
pub use cfg::{cfg_report, CfgReport};
pub use lines::LineIndex;
