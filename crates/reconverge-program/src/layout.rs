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

/// Rounds `x` up to a multiple of `align` (a power of two or any positive number), saturating at the largest
/// multiple below `u64::MAX` (a placement that far out is refused by whoever checks its limit, [`Placer`]).
pub fn align_up(x: u64, align: u64) -> u64 {
    if align <= 1 {
        x
    } else {
        x.checked_next_multiple_of(align).unwrap_or(u64::MAX - u64::MAX % align)
    }
}

/// The end of the addresses module `.global` variables may occupy (they start at [`GLOBAL_BASE`]; device
/// allocations follow them, managed memory starts here).
pub const GLOBAL_END: u64 = 0x0000_2000_0000_0000;

/// The largest `.global` variable a module may declare: the largest allocation the layout surrounds with
/// guards of its own size ([`MAX_GUARD`]).
pub const MAX_GLOBAL_VARIABLE: u64 = MAX_GUARD;

/// Places variables one after another in a space of at most `limit` bytes (a state space's window, a
/// thread's frame, the parameter buffer): each at the next offset aligned as it asks. Arithmetic is checked:
/// a variable that does not fit is refused, never wrapped into a smaller offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placer {
    next: u64,
    limit: u64,
}

impl Placer {
    /// An empty space of `limit` bytes whose first free offset is `start`.
    pub fn new(start: u64, limit: u64) -> Placer {
        Placer { next: start, limit }
    }

    /// The offset of a variable of `size` bytes aligned to `align` (0 and 1: none), or `None` when it does
    /// not fit before the limit (nothing is placed then).
    pub fn place(&mut self, size: u64, align: u64) -> Option<u64> {
        let at = if align <= 1 { self.next } else { self.next.checked_next_multiple_of(align)? };
        let end = at.checked_add(size).filter(|&e| e <= self.limit)?;
        self.next = end;
        Some(at)
    }

    /// The first free offset: the space used so far.
    pub fn used(&self) -> u64 {
        self.next
    }

    /// The space's size.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placer_aligns_and_refuses_what_does_not_fit_without_wrapping() {
        let mut p = Placer::new(0, 64);
        assert_eq!(p.place(3, 1), Some(0));
        assert_eq!(p.place(8, 8), Some(8));
        assert_eq!(p.used(), 16);
        assert_eq!(p.place(49, 1), None, "one byte past the limit");
        assert_eq!(p.used(), 16, "a refused variable takes nothing");
        assert_eq!(p.place(48, 1), Some(16));
        let mut huge = Placer::new(u64::MAX - 4, u64::MAX);
        assert_eq!(huge.place(1, 16), None, "aligning past the end of the address space");
        assert_eq!(huge.place(u64::MAX, 1), None, "an end that wraps");
        assert_eq!(align_up(u64::MAX - 2, 16), u64::MAX - 15, "align_up saturates instead of overflowing");
    }

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
