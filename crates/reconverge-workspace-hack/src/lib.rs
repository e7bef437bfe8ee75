//! No code. The crate exists for its dependencies: it enables, in the command line's build, the features
//! that the Python module's dependencies enable on crates both builds use, so that cargo compiles each
//! shared crate once for both (see this crate's `Cargo.toml`, and `tests/features.rs` of `reconverge-cli`,
//! which checks that the two builds agree).

#![deny(missing_docs)]
