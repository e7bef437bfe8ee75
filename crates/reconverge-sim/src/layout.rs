//! Address-space layout: windows of the generic address space and variable placement.
//!
//! The simulated device uses one 64-bit generic address space. Device memory (buffers passed as kernel
//! arguments and module `.global` variables) lives at its own addresses; the other state spaces are
//! reached through fixed windows, so `cvta` is an addition and a generic access is resolved by range.

/// First device address: module `.global` variables, then launch buffers.
pub const GLOBAL_BASE: u64 = 0x0000_0001_0000_0000;
/// Generic window of the CTA's shared memory.
pub const SHARED_WINDOW: u64 = 0x0000_4000_0000_0000;
/// Generic window of the thread's local memory.
pub const LOCAL_WINDOW: u64 = 0x0000_5000_0000_0000;
/// Generic window of the constant bank.
pub const CONST_WINDOW: u64 = 0x0000_6000_0000_0000;
/// Generic window of the kernel parameter buffer.
pub const PARAM_WINDOW: u64 = 0x0000_7000_0000_0000;
/// Size of every window.
pub const WINDOW_SIZE: u64 = 0x0000_0001_0000_0000;
/// "Addresses" of functions (for indirect calls): base + function index.
pub const FUNC_ADDR_BASE: u64 = 0x0000_7F00_0000_0000;
/// Gap left between device allocations so that small overruns fault instead of hitting a neighbour.
pub const ALLOC_GAP: u64 = 256;

/// Rounds `x` up to a multiple of `align` (a power of two or any positive number).
pub fn align_up(x: u64, align: u64) -> u64 {
    if align <= 1 {
        x
    } else {
        x.div_ceil(align) * align
    }
}
