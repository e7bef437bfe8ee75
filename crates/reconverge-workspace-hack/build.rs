//! Empty: the crate has a build script only so that its build dependencies (see Cargo.toml) take part in
//! the feature resolution of host crates.

fn main() {}
