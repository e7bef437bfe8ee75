//! The kernel suite: the manifest beside `kernels/`, `.npy` buffers, argument specifications, and running a
//! kernel against its expected outputs. File contents come in through a loader function; nothing here
//! touches the file system directly.
#![deny(missing_docs)]

pub mod args;
pub mod error;
pub mod grid;
pub mod manifest;
pub mod npy;
pub mod runner;
pub mod structs;

pub use args::{resolve_args, resolve_global, ArgSpec};
pub use error::{ArgError, Mismatch, NpyError, SuiteError};
pub use manifest::{KernelEntry, Manifest};
pub use runner::{
    judge, prepare_entry, prepare_entry_with, run_entry, run_prepared, EntryOutcome, Mode, OutputKey, PreparedEntry,
    Verdict,
};
pub use structs::{FieldSpec, Offset};

/// Reads a file named relative to some base (the kernels directory, or the current directory).
pub type Loader<'a> = dyn Fn(&str) -> std::io::Result<Vec<u8>> + 'a;
