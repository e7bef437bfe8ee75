//! Miss status holding registers: the outstanding misses of a cache, merged per line.
//!
//! Each entry tracks one line in flight and up to `max_merge` waiters (opaque `u64` ids, e.g. a warp and
//! register), the first being the request that allocated the entry. All storage is allocated at construction
//! (`capacity × max_merge` waiter slots); [`Mshr::add`] and [`Mshr::complete`] never allocate (except to grow
//! the caller's output vector). Lookup is a linear scan of the occupied entries, which is the fast choice for
//! the small capacities of real MSHR files; results depend only on the call sequence.

/// Outcome of [`Mshr::add`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MshrResult {
    /// The line already had an entry with room: the waiter was appended to it (no new memory request).
    Merged,
    /// A new entry was allocated for the line: the caller sends the miss to the next level.
    Allocated,
    /// No room: every entry is in use, or the line's entry already holds `max_merge` waiters. Retry later.
    Full,
}

/// Upper bound on capacity × max_merge, so that a mistyped configuration cannot exhaust memory.
const MAX_SLOTS: usize = 1 << 24;

/// Miss status holding registers: one entry per outstanding line, up to `max_merge` waiters per entry.
#[derive(Clone, Debug)]
pub struct Mshr {
    capacity: usize,
    max_merge: usize,
    /// Occupied entries: (line, slot), in no particular order (lines are unique).
    active: Vec<(u64, usize)>,
    /// Free slot indices, used as a stack.
    free: Vec<usize>,
    /// Waiter count of each slot.
    counts: Vec<usize>,
    /// `capacity × max_merge` waiters, slot-major.
    waiters: Vec<u64>,
}

impl Mshr {
    /// Checks, without building anything, that an MSHR file of `capacity` entries of `max_merge` waiters
    /// can be built: both ≥ 1 and their product at most 2^24. Returns the product (the waiter slots).
    pub fn check(capacity: usize, max_merge: usize) -> Result<usize, crate::error::StructureError> {
        use crate::error::StructureError;
        if capacity == 0 {
            return Err(StructureError::MshrCapacity);
        }
        if max_merge == 0 {
            return Err(StructureError::MshrMerge);
        }
        capacity.checked_mul(max_merge).filter(|&s| s <= MAX_SLOTS).ok_or(StructureError::MshrTooLarge {
            capacity,
            max_merge,
            max: MAX_SLOTS,
        })
    }

    /// Builds an empty MSHR file. Errors unless [`Mshr::check`] passes.
    pub fn new(capacity: usize, max_merge: usize) -> Result<Mshr, crate::error::StructureError> {
        let slots = Mshr::check(capacity, max_merge)?;
        Ok(Mshr {
            capacity,
            max_merge,
            active: Vec::with_capacity(capacity),
            // Popped from the end: slot 0 is used first.
            free: (0..capacity).rev().collect(),
            counts: vec![0; capacity],
            waiters: vec![0; slots],
        })
    }

    #[inline]
    fn position(&self, line: u64) -> Option<usize> {
        self.active.iter().position(|&(l, _)| l == line)
    }

    /// Registers a miss on `line` for `waiter` (an opaque id): Merged into an existing entry with room,
    /// Allocated a new entry, or Full (no entry free, or the entry has max_merge waiters).
    pub fn add(&mut self, line: u64, waiter: u64) -> MshrResult {
        if let Some(&(_, slot)) = self.position(line).and_then(|p| self.active.get(p)) {
            return if self.push_waiter(slot, waiter) { MshrResult::Merged } else { MshrResult::Full };
        }
        let Some(slot) = self.free.pop() else {
            return MshrResult::Full;
        };
        if let Some(c) = self.counts.get_mut(slot) {
            *c = 0;
        }
        if self.push_waiter(slot, waiter) {
            self.active.push((line, slot));
            MshrResult::Allocated
        } else {
            // Unreachable (a fresh slot has room); keep the structure consistent anyway.
            self.free.push(slot);
            MshrResult::Full
        }
    }

    /// Appends `waiter` to `slot` if it has room.
    fn push_waiter(&mut self, slot: usize, waiter: u64) -> bool {
        let Some(count) = self.counts.get_mut(slot) else {
            return false;
        };
        if *count >= self.max_merge {
            return false;
        }
        match self.waiters.get_mut(slot * self.max_merge + *count) {
            Some(w) => {
                *w = waiter;
                *count += 1;
                true
            }
            None => false,
        }
    }

    /// The data of `line` arrived: removes the entry, appends its waiters (in arrival order) to `out`.
    /// Returns false (and leaves `out` alone) if `line` has no entry.
    pub fn complete(&mut self, line: u64, out: &mut Vec<u64>) -> bool {
        let Some(p) = self.position(line) else {
            return false;
        };
        let (_, slot) = self.active.swap_remove(p);
        let count = self.counts.get(slot).copied().unwrap_or(0);
        let start = slot * self.max_merge;
        if let Some(ws) = self.waiters.get(start..start + count) {
            out.extend_from_slice(ws);
        }
        if let Some(c) = self.counts.get_mut(slot) {
            *c = 0;
        }
        self.free.push(slot);
        true
    }

    /// Number of entries in use.
    pub fn occupancy(&self) -> usize {
        self.active.len()
    }

    /// Number of entries.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Whether every entry is in use (a miss on a new line would be [`MshrResult::Full`]).
    pub fn is_full(&self) -> bool {
        self.active.len() >= self.capacity
    }

    /// Whether `line` has an entry (a miss on it is in flight).
    pub fn contains(&self, line: u64) -> bool {
        self.position(line).is_some()
    }

    /// The maximum number of waiters per entry.
    pub fn max_merge(&self) -> usize {
        self.max_merge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mshr(capacity: usize, max_merge: usize) -> Mshr {
        match Mshr::new(capacity, max_merge) {
            Ok(m) => m,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn merge_until_max_merge_then_full() {
        let mut m = mshr(4, 3);
        assert_eq!(m.add(10, 1), MshrResult::Allocated);
        assert_eq!(m.add(10, 2), MshrResult::Merged);
        assert_eq!(m.add(10, 3), MshrResult::Merged);
        assert_eq!(m.add(10, 4), MshrResult::Full);
        assert_eq!(m.occupancy(), 1);
        assert!(!m.is_full());
        // Other lines are unaffected.
        assert_eq!(m.add(11, 5), MshrResult::Allocated);
        assert_eq!(m.occupancy(), 2);
        // max_merge = 1: no merging at all.
        let mut m = mshr(2, 1);
        assert_eq!(m.add(7, 1), MshrResult::Allocated);
        assert_eq!(m.add(7, 2), MshrResult::Full);
    }

    #[test]
    fn capacity_full() {
        let mut m = mshr(2, 4);
        assert_eq!(m.capacity(), 2);
        assert_eq!(m.add(1, 100), MshrResult::Allocated);
        assert_eq!(m.add(2, 200), MshrResult::Allocated);
        assert!(m.is_full());
        assert_eq!(m.add(3, 300), MshrResult::Full);
        assert!(!m.contains(3));
        // Merging into an existing entry still works when full.
        assert_eq!(m.add(2, 201), MshrResult::Merged);
        assert_eq!(m.occupancy(), 2);
    }

    #[test]
    fn complete_returns_waiters_in_order() {
        let mut m = mshr(4, 8);
        for (line, w) in [(5, 50), (6, 60), (5, 51), (5, 52), (6, 61)] {
            assert_ne!(m.add(line, w), MshrResult::Full);
        }
        let mut out = vec![1];
        assert!(m.complete(5, &mut out));
        assert_eq!(out, vec![1, 50, 51, 52], "appended, in arrival order");
        assert!(!m.contains(5));
        assert!(m.contains(6));
        out.clear();
        assert!(!m.complete(5, &mut out));
        assert!(out.is_empty());
        assert!(m.complete(6, &mut out));
        assert_eq!(out, vec![60, 61]);
        assert_eq!(m.occupancy(), 0);
    }

    #[test]
    fn reallocate_after_complete() {
        let mut m = mshr(1, 2);
        assert_eq!(m.add(9, 1), MshrResult::Allocated);
        assert_eq!(m.add(9, 2), MshrResult::Merged);
        assert_eq!(m.add(8, 3), MshrResult::Full);
        let mut out = Vec::new();
        assert!(m.complete(9, &mut out));
        assert_eq!(out, vec![1, 2]);
        assert!(!m.is_full());
        // The freed entry serves another line, starting with an empty waiter list.
        assert_eq!(m.add(8, 3), MshrResult::Allocated);
        assert_eq!(m.add(8, 4), MshrResult::Merged);
        assert_eq!(m.add(8, 5), MshrResult::Full);
        out.clear();
        assert!(m.complete(8, &mut out));
        assert_eq!(out, vec![3, 4]);
        // And the same line again.
        assert_eq!(m.add(9, 6), MshrResult::Allocated);
        out.clear();
        assert!(m.complete(9, &mut out));
        assert_eq!(out, vec![6]);
    }

    #[test]
    fn construction_errors() {
        assert!(Mshr::new(0, 4).is_err());
        assert!(Mshr::new(4, 0).is_err());
        assert!(Mshr::new(usize::MAX, 2).is_err());
        assert!(Mshr::new(1 << 20, 1 << 10).is_err());
        assert_eq!(Mshr::new(32, 8).map(|m| (m.capacity(), m.max_merge(), m.occupancy())), Ok((32, 8, 0)));
    }
}
