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
/// The smallest guard region on each side of a device allocation.
pub const MIN_GUARD: u64 = 1 << 20;
/// The largest guard region (keeps the sum of allocations and guards far below the shared window).
pub const MAX_GUARD: u64 = 1 << 40;

/// The guard region (unmapped addresses) on each side of a device allocation of `len` bytes: as large as
/// the allocation itself and at least [`MIN_GUARD`] (1 MiB), so that a kernel that runs past either end
/// of a buffer by up to its own size, or by up to 1 MiB, touches no allocation and faults (exit 2), as
/// compute-sanitizer's and AddressSanitizer's red zones make it. The guards cost no memory: they are
/// addresses only.
pub fn guard(len: u64) -> u64 {
    len.clamp(MIN_GUARD, MAX_GUARD)
}

/// Places a device allocation of `len` bytes aligned to `align` (at least 256) after `next`, the first
/// address past the previous allocation's trailing guard: returns its base and the new `next`. Between
/// two allocations lie both their guards.
pub fn place_allocation(next: u64, len: u64, align: u64) -> (u64, u64) {
    let g = guard(len);
    let base = align_up(next.saturating_add(g), align.max(256));
    (base, align_up(base.saturating_add(len.max(1)).saturating_add(g), 256))
}

/// Rounds `x` up to a multiple of `align` (a power of two or any positive number).
pub fn align_up(x: u64, align: u64) -> u64 {
    if align <= 1 {
        x
    } else {
        x.div_ceil(align) * align
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overruns_and_underruns_up_to_the_allocations_size_touch_no_other_allocation() {
        let mut next = GLOBAL_BASE;
        let mut placed = Vec::new();
        for len in [0u64, 4, 256, 1000, 1 << 20, 3 << 20, 17] {
            let (base, n) = place_allocation(next, len, 256);
            assert_eq!(base % 256, 0);
            placed.push((base, len.max(1)));
            next = n;
        }
        for (i, &(base, len)) in placed.iter().enumerate() {
            let reach = guard(len);
            assert!(reach >= len && reach >= MIN_GUARD);
            for (j, &(b, l)) in placed.iter().enumerate() {
                if i != j {
                    // [base - reach, base + len + reach) holds nothing of allocation j.
                    assert!(b + l <= base - reach || b >= base + len + reach, "{i} reaches {j}");
                }
            }
        }
    }
}
