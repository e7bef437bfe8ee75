//! A set-associative, tag-only cache of line numbers with true LRU replacement and dirty bits.
//!
//! Lines are identified by line number (byte address / line size); the set is `line % sets` (sets is a power
//! of two) and the whole line number is kept as the tag. Recency is the order of calls: every hit
//! ([`Cache::lookup`]) and every allocation stamps the line from an internal counter, so several accesses in
//! the same cycle are still ordered and replacement is exact LRU. The victim of a fill is an invalid way if the
//! set has one (lowest way first), else the least recently used way.
//!
//! Besides the tag, each line carries two small pieces of caller state, for sectored caches and fills that
//! complete in the future: a 32-bit *sector mask* (opaque to the cache; [`Cache::fill`] sets all 32 bits,
//! [`Cache::fill_sectors`] and [`Cache::add_sectors`] set chosen ones) and a *ready cycle* (the `now` given to
//! the fill: when the line's data is there). [`Cache::probe`] reads them without touching LRU.
//!
//! A geometry of size 0 is *no cache* (GPGPU-Sim's `none` and `-gpgpu_no_dl1`): nothing is ever resident,
//! every lookup misses and fills allocate nothing ([`Cache::is_absent`]).

use crate::error::StructureError;

/// Size and shape of a cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheGeometry {
    /// Total capacity in bytes (= sets × ways × line_bytes).
    pub size_bytes: u64,
    /// Line size in bytes (a power of two).
    pub line_bytes: u32,
    /// Associativity (≥ 1).
    pub ways: u32,
    /// The set index function.
    pub index: SetIndex,
}

impl CacheGeometry {
    /// Checks, without building anything, that a cache of this geometry can be built: `line_bytes` a power
    /// of two, `ways` ≥ 1, `size_bytes` 0 (no cache) or a multiple of `line_bytes × ways`, the resulting
    /// number of sets ≥ 1 and a power of two, and at most 2^22 lines in all. Returns the sets, the ways and
    /// the lines (all 0 for no cache).
    pub fn check(&self) -> Result<(u32, usize, usize), StructureError> {
        let g = self;
        if g.line_bytes == 0 || !g.line_bytes.is_power_of_two() {
            return Err(StructureError::LineSize(g.line_bytes));
        }
        if g.ways == 0 {
            return Err(StructureError::NoWays);
        }
        if g.size_bytes == 0 {
            return Ok((0, 0, 0));
        }
        let set_bytes = u64::from(g.line_bytes) * u64::from(g.ways);
        if g.size_bytes < set_bytes {
            return Err(StructureError::NoSet { size: g.size_bytes, ways: g.ways, line: g.line_bytes });
        }
        if !g.size_bytes.is_multiple_of(set_bytes) {
            return Err(StructureError::PartialSet { size: g.size_bytes, ways: g.ways, line: g.line_bytes });
        }
        let sets = g.size_bytes / set_bytes;
        if !sets.is_power_of_two() {
            return Err(StructureError::Sets { size: g.size_bytes, ways: g.ways, line: g.line_bytes, sets });
        }
        let lines = sets.saturating_mul(u64::from(g.ways));
        let too_large = || StructureError::TooManyLines { lines, max: MAX_LINES };
        if lines > MAX_LINES {
            return Err(too_large());
        }
        // All fit: sets × ways ≤ 2^22.
        let sets = u32::try_from(sets).map_err(|_| too_large())?;
        let ways = usize::try_from(g.ways).map_err(|_| too_large())?;
        Ok((sets, ways, usize::try_from(lines).map_err(|_| too_large())?))
    }
}

/// How a line number picks its set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetIndex {
    /// The low bits of the line number.
    #[default]
    Linear,
    /// GPGPU-Sim's Fermi L1 hash (`H`, after Nugteren et al., HPCA 2014): the line-number bits 7-11 of the
    /// byte address XOR bits 13-15, 17 and 19 (and bit 12 on top for 64 sets). Caches of other than 32 or 64
    /// sets index linearly.
    FermiHash,
}

/// The state of a resident line, as read by [`Cache::probe`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LineState {
    /// Valid sectors (bit i = sector i); all 32 bits after [`Cache::fill`].
    pub sectors: u32,
    /// Whether the line has been written since it was allocated.
    pub dirty: bool,
    /// Cycle the line's data is available (the `now` of the fill, raised by [`Cache::add_sectors`]).
    pub ready: u64,
}

/// A line evicted by [`Cache::fill_sectors`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Evicted {
    /// The evicted line number.
    pub line: u64,
    /// Whether it was dirty (the caller owes a write-back).
    pub dirty: bool,
    /// Its valid sectors at eviction.
    pub sectors: u32,
}

/// Upper bound on sets × ways, so that a mistyped geometry cannot exhaust memory.
const MAX_LINES: u64 = 1 << 22;

#[derive(Clone, Copy, Debug, Default)]
struct Way {
    line: u64,
    /// LRU stamp: larger = more recently used.
    stamp: u64,
    ready: u64,
    sectors: u32,
    valid: bool,
    dirty: bool,
}

/// A set-associative cache of line numbers with true LRU replacement (tags only, no data), dirty bits.
#[derive(Clone, Debug)]
pub struct Cache {
    geometry: CacheGeometry,
    sets: u32,
    ways: usize,
    /// `sets * ways` entries, set-major.
    entries: Vec<Way>,
    /// The next LRU stamp.
    clock: u64,
}

impl Cache {
    /// Builds an empty cache. Errors unless the geometry passes [`CacheGeometry::check`].
    pub fn new(g: CacheGeometry) -> Result<Cache, StructureError> {
        let (sets, ways, lines) = g.check()?;
        Ok(Cache { geometry: g, sets, ways, entries: vec![Way::default(); lines], clock: 0 })
    }

    /// Number of sets.
    pub fn sets(&self) -> u32 {
        self.sets
    }

    /// The geometry the cache was built with.
    pub fn geometry(&self) -> CacheGeometry {
        self.geometry
    }

    /// Whether this is no cache at all (size 0): nothing is ever resident.
    pub fn is_absent(&self) -> bool {
        self.entries.is_empty()
    }

    /// Index of the first way of `line`'s set.
    #[inline]
    fn set_base(&self, line: u64) -> usize {
        // sets is a power of two and ≤ 2^22, so the masked value fits in usize (0 sets: no cache, base 0).
        let linear = line & u64::from(self.sets.saturating_sub(1));
        let set = match self.geometry.index {
            SetIndex::FermiHash if self.sets == 32 || self.sets == 64 => {
                let addr = line << self.geometry.line_bytes.trailing_zeros();
                let upper = ((addr & 0xE000) >> 13) | ((addr & 0x20000) >> 14) | ((addr & 0x80000) >> 15);
                let mut s = (line & 0x1F) ^ upper;
                if self.sets == 64 {
                    s |= (addr & 0x1000) >> 7;
                }
                s
            }
            _ => linear,
        };
        set as usize * self.ways
    }

    /// Index into `entries` of `line` if resident.
    #[inline]
    fn find(&self, line: u64) -> Option<usize> {
        let base = self.set_base(line);
        self.entries.get(base..base + self.ways)?.iter().position(|w| w.valid && w.line == line).map(|i| base + i)
    }

    #[inline]
    fn tick(&mut self) -> u64 {
        self.clock = self.clock.wrapping_add(1);
        self.clock
    }

    /// Hit: updates LRU, returns true. Miss: returns false, allocates nothing.
    ///
    /// `now` is not needed for replacement (recency is call order, see the module documentation).
    pub fn lookup(&mut self, line: u64, now: u64) -> bool {
        let _ = now;
        match self.find(line) {
            Some(i) => {
                let stamp = self.tick();
                if let Some(w) = self.entries.get_mut(i) {
                    w.stamp = stamp;
                }
                true
            }
            None => false,
        }
    }

    /// Whether `line` is resident (no LRU update).
    pub fn contains(&self, line: u64) -> bool {
        self.find(line).is_some()
    }

    /// The state of `line` if resident (no LRU update).
    pub fn probe(&self, line: u64) -> Option<LineState> {
        let w = self.entries.get(self.find(line)?)?;
        Some(LineState { sectors: w.sectors, dirty: w.dirty, ready: w.ready })
    }

    /// Allocates `line` (LRU victim of its set); returns the evicted line and whether it was dirty. No-op if present.
    ///
    /// The new line is clean, most recently used, has all 32 sector bits valid and is ready at `now`.
    pub fn fill(&mut self, line: u64, now: u64) -> Option<(u64, bool)> {
        self.fill_sectors(line, u32::MAX, now).map(|e| (e.line, e.dirty))
    }

    /// Like [`Cache::fill`], with only `sectors` valid; returns the whole evicted line state. No-op (returns
    /// `None`) if `line` is present: use [`Cache::add_sectors`] to extend a resident line.
    pub fn fill_sectors(&mut self, line: u64, sectors: u32, now: u64) -> Option<Evicted> {
        if self.find(line).is_some() {
            return None;
        }
        let base = self.set_base(line);
        let stamp = self.tick();
        let set = self.entries.get_mut(base..base + self.ways)?;
        // An invalid way first (lowest index), else the least recently used one.
        let victim = match set.iter().position(|w| !w.valid) {
            Some(i) => i,
            None => set.iter().enumerate().min_by_key(|(_, w)| w.stamp).map_or(0, |(i, _)| i),
        };
        let slot = set.get_mut(victim)?;
        let evicted = slot.valid.then_some(Evicted { line: slot.line, dirty: slot.dirty, sectors: slot.sectors });
        *slot = Way { line, stamp, ready: now, sectors, valid: true, dirty: false };
        evicted
    }

    /// ORs `sectors` into a resident line's valid sectors and raises its ready cycle to at least `ready`
    /// (no LRU update). Returns false (and does nothing) if `line` is not resident.
    pub fn add_sectors(&mut self, line: u64, sectors: u32, ready: u64) -> bool {
        match self.find(line).and_then(|i| self.entries.get_mut(i)) {
            Some(w) => {
                w.sectors |= sectors;
                w.ready = w.ready.max(ready);
                true
            }
            None => false,
        }
    }

    /// Sets a resident line's ready cycle to `ready` if it is still `expected` (no LRU update): how the L2
    /// replaces the marker of a fetch in flight by its cycle once DRAM has scheduled it. Returns whether it
    /// did.
    pub fn settle(&mut self, line: u64, expected: u64, ready: u64) -> bool {
        match self.find(line).and_then(|i| self.entries.get_mut(i)) {
            Some(w) if w.ready == expected => {
                w.ready = ready;
                true
            }
            _ => false,
        }
    }

    /// Marks a resident line dirty (no LRU update). Returns false if `line` is not resident.
    pub fn mark_dirty(&mut self, line: u64) -> bool {
        match self.find(line).and_then(|i| self.entries.get_mut(i)) {
            Some(w) => {
                w.dirty = true;
                true
            }
            None => false,
        }
    }

    /// Drops `line` (its dirty data too: check [`Cache::probe`] first if a write-back is owed). Returns whether
    /// it was resident.
    pub fn invalidate(&mut self, line: u64) -> bool {
        match self.find(line).and_then(|i| self.entries.get_mut(i)) {
            Some(w) => {
                *w = Way::default();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 sets × 2 ways of 128-byte lines: even lines in set 0, odd lines in set 1.
    fn toy() -> Cache {
        match Cache::new(CacheGeometry { size_bytes: 512, line_bytes: 128, ways: 2, index: SetIndex::Linear }) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn geometry() {
        let c = toy();
        assert_eq!(c.sets(), 2);
        assert_eq!(c.geometry(), CacheGeometry { size_bytes: 512, line_bytes: 128, ways: 2, index: SetIndex::Linear });
        let big = Cache::new(CacheGeometry { size_bytes: 4 << 20, line_bytes: 128, ways: 16, index: SetIndex::Linear });
        assert_eq!(big.map(|c| c.sets()), Ok(2048));
        let one_set = Cache::new(CacheGeometry { size_bytes: 256, line_bytes: 128, ways: 2, index: SetIndex::Linear });
        assert_eq!(one_set.map(|c| c.sets()), Ok(1));
    }

    #[test]
    fn lru_step_by_step() {
        let mut c = toy();
        assert!(!c.lookup(0, 0), "cold miss");
        assert_eq!(c.fill(0, 0), None);
        assert!(!c.lookup(2, 1));
        assert_eq!(c.fill(2, 1), None); // set 0 = {0, 2}, LRU = 0
        assert!(c.lookup(0, 2)); // set 0 LRU = 2
        assert_eq!(c.fill(4, 3), Some((2, false))); // evicts 2; set 0 = {0, 4}, LRU = 0
        assert!(!c.contains(2));
        assert!(c.contains(0) && c.contains(4));
        assert!(!c.lookup(2, 4));
        assert_eq!(c.fill(2, 4), Some((0, false))); // evicts 0; set 0 = {4, 2}, LRU = 4
        assert!(c.lookup(4, 5)); // LRU = 2
        assert!(c.lookup(2, 6)); // LRU = 4
        assert_eq!(c.fill(6, 7), Some((4, false)));
        // Set 1 is independent of all this.
        assert_eq!(c.fill(1, 8), None);
        assert_eq!(c.fill(3, 9), None);
        assert_eq!(c.fill(5, 10), Some((1, false)));
        assert!(c.contains(2) && c.contains(6) && c.contains(3) && c.contains(5));
        // A fill of a resident line is a no-op: no eviction, no LRU change (3 stays LRU of set 1).
        assert_eq!(c.fill(5, 11), None);
        assert_eq!(c.fill(7, 12), Some((3, false)));
    }

    #[test]
    fn same_cycle_accesses_are_ordered() {
        let mut c = toy();
        c.fill(0, 0);
        c.fill(2, 0);
        assert!(c.lookup(0, 0));
        assert_eq!(c.fill(4, 0), Some((2, false)));
    }

    #[test]
    fn invalidate_frees_a_way() {
        let mut c = toy();
        c.fill(0, 0);
        c.fill(2, 1);
        assert!(c.invalidate(0));
        assert!(!c.invalidate(0));
        assert!(!c.contains(0));
        assert!(!c.lookup(0, 2));
        // The invalid way is used before evicting anything.
        assert_eq!(c.fill(4, 3), None);
        assert!(c.contains(2) && c.contains(4));
        assert!(!c.invalidate(9));
    }

    #[test]
    fn dirty_eviction_reporting() {
        let mut c = toy();
        assert!(!c.mark_dirty(0), "not resident");
        c.fill(0, 0);
        c.fill(2, 1);
        assert!(c.mark_dirty(0)); // does not touch LRU: 0 is still LRU
        assert_eq!(c.probe(0).map(|s| s.dirty), Some(true));
        assert_eq!(c.fill(4, 2), Some((0, true)));
        assert_eq!(c.fill(6, 3), Some((2, false)));
        // Re-allocated lines are clean.
        assert_eq!(c.fill(0, 4), Some((4, false)));
        assert_eq!(c.probe(0).map(|s| s.dirty), Some(false));
        // An invalidated dirty line is dropped silently.
        assert!(c.mark_dirty(6));
        assert!(c.invalidate(6));
        assert_eq!(c.fill(8, 5), None);
    }

    #[test]
    fn sectors_and_ready() {
        let mut c = toy();
        assert_eq!(c.fill_sectors(0, 0b0010, 100), None);
        assert_eq!(c.probe(0), Some(LineState { sectors: 0b0010, dirty: false, ready: 100 }));
        assert!(c.add_sectors(0, 0b0100, 90)); // ready never decreases
        assert_eq!(c.probe(0), Some(LineState { sectors: 0b0110, dirty: false, ready: 100 }));
        assert!(c.add_sectors(0, 0b0001, 150));
        assert_eq!(c.probe(0), Some(LineState { sectors: 0b0111, dirty: false, ready: 150 }));
        assert!(!c.add_sectors(2, 1, 0));
        assert_eq!(c.fill_sectors(0, 0b1000, 0), None, "present: no-op");
        assert_eq!(c.probe(0).map(|s| s.sectors), Some(0b0111));
        c.fill(2, 0);
        c.mark_dirty(0);
        assert_eq!(c.fill_sectors(4, 1, 0), Some(Evicted { line: 0, dirty: true, sectors: 0b0111 }));
        assert_eq!(c.probe(2).map(|s| s.sectors), Some(u32::MAX));
        assert_eq!(c.probe(1), None);
    }

    #[test]
    fn size_zero_is_no_cache() {
        let g = CacheGeometry { size_bytes: 0, line_bytes: 128, ways: 4, index: SetIndex::FermiHash };
        assert_eq!(g.check(), Ok((0, 0, 0)));
        let mut c = Cache::new(g).unwrap();
        assert!(c.is_absent());
        assert_eq!(c.fill(3, 0), None);
        assert_eq!(c.fill_sectors(4, 0b11, 0), None);
        assert!(!c.lookup(3, 1) && !c.contains(4) && c.probe(4).is_none());
        assert!(!c.add_sectors(4, 1, 2) && !c.mark_dirty(3) && !c.invalidate(3));
        assert!(!Cache::new(CacheGeometry { size_bytes: 1 << 14, ..g }).unwrap().is_absent());
    }

    #[test]
    fn geometry_validation_errors() {
        let err = |size_bytes, line_bytes, ways| {
            Cache::new(CacheGeometry { size_bytes, line_bytes, ways, index: SetIndex::Linear })
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(err(512, 96, 2).contains("line size 96 bytes is not a power of two"));
        assert!(err(512, 0, 2).contains("not a power of two"));
        assert!(err(512, 128, 0).contains("ways"));
        assert!(err(128, 128, 2).contains("smaller than one set"));
        assert!(err(64, 128, 2).contains("smaller than one set"));
        assert!(err(640, 128, 2).contains("not a multiple"));
        assert!(err(384, 128, 1).contains("3 sets, not a power of two"));
        assert!(err(3 << 20, 128, 16).contains("1536 sets, not a power of two"));
        assert!(err(1 << 40, 128, 1).contains("too large"));
        assert!(err(u64::MAX, 1 << 31, u32::MAX).contains("not a multiple"));
    }
}
