//! Random kernels (work in progress).
