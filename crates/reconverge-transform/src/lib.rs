//! IR-to-IR passes: each takes a module and returns a new one (the analyses never mutate the IR).
//!
//! - [`insert_ssy`]: seed 001's explicit reconvergence-stack instructions (`ssy`/`sync`, `pbk`/`brk`) for
//!   the `ssy` mechanism;
//! - [`insert_regions`]: the structured-region instructions of fork/join (`join`), independent thread
//!   scheduling (`bssy`/`bsync`) and the stackless mechanisms (`syncwarp` points).
//!
//! A mechanism names the pass it needs in its registry entry; `reconverge_mechanism::Pass` applies it.
#![deny(missing_docs)]

pub mod region_pass;
pub mod ssy_pass;

pub use region_pass::{insert_regions, RegionPass, RegionReport};
pub use ssy_pass::{insert_ssy, SsyFunctionReport, SsyReport};
