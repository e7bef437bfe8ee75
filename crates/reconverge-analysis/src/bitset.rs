//! A fixed-size dense bit set over `u32` node indices.

use std::fmt;

/// A set of node indices drawn from `0..domain_size`, one bit per index.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct BitSet {
    words: Vec<u64>,
    domain: usize,
}

impl BitSet {
    /// The empty set over `0..domain`.
    pub fn new(domain: usize) -> BitSet {
        BitSet { words: vec![0; domain.div_ceil(64)], domain }
    }

    /// The set of every index in `0..domain`.
    pub fn full(domain: usize) -> BitSet {
        let mut s = BitSet { words: vec![u64::MAX; domain.div_ceil(64)], domain };
        s.trim();
        s
    }

    /// The set over `0..domain` holding `items`.
    ///
    /// # Panics
    /// If an item is not below `domain`.
    pub fn from_items(domain: usize, items: impl IntoIterator<Item = u32>) -> BitSet {
        let mut s = BitSet::new(domain);
        for i in items {
            s.insert(i);
        }
        s
    }

    fn trim(&mut self) {
        let rem = self.domain % 64;
        if rem != 0 {
            if let Some(last) = self.words.last_mut() {
                *last &= (1u64 << rem) - 1;
            }
        }
    }

    /// The size of the universe this set draws from (not the number of members).
    pub fn domain_size(&self) -> usize {
        self.domain
    }

    /// Whether `i` is a member (`false` for indices outside the domain).
    pub fn contains(&self, i: u32) -> bool {
        let i = i as usize;
        i < self.domain && self.words[i / 64] & (1 << (i % 64)) != 0
    }

    /// Adds `i`; returns whether it was newly added.
    ///
    /// # Panics
    /// If `i` is not below the domain size.
    pub fn insert(&mut self, i: u32) -> bool {
        let i = i as usize;
        assert!(i < self.domain, "bit {i} outside a set of {}", self.domain);
        let w = &mut self.words[i / 64];
        let m = 1 << (i % 64);
        let new = *w & m == 0;
        *w |= m;
        new
    }

    /// Removes `i`; returns whether it was a member.
    pub fn remove(&mut self, i: u32) -> bool {
        if !self.contains(i) {
            return false;
        }
        let i = i as usize;
        self.words[i / 64] &= !(1 << (i % 64));
        true
    }

    /// Removes every member.
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// The number of members.
    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Whether the set has no member.
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// `self ∪= other`; returns whether `self` changed.
    ///
    /// # Panics
    /// If the domains differ.
    pub fn union_with(&mut self, other: &BitSet) -> bool {
        assert_eq!(self.domain, other.domain, "bit sets over different domains");
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a | b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }

    /// `self ∩= other`; returns whether `self` changed.
    ///
    /// # Panics
    /// If the domains differ.
    pub fn intersect_with(&mut self, other: &BitSet) -> bool {
        assert_eq!(self.domain, other.domain, "bit sets over different domains");
        let mut changed = false;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            let n = *a & b;
            changed |= n != *a;
            *a = n;
        }
        changed
    }

    /// Whether every member of `self` is a member of `other`.
    pub fn is_subset(&self, other: &BitSet) -> bool {
        self.words.iter().zip(other.words.iter().chain(std::iter::repeat(&0))).all(|(a, b)| a & !b == 0)
    }

    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some((wi * 64) as u32 + b)
            })
        })
    }

    /// The members in increasing order, collected.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }
}

impl fmt::Debug for BitSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_iterate() {
        let mut s = BitSet::new(130);
        assert!(s.is_empty());
        assert!(s.insert(0));
        assert!(s.insert(64));
        assert!(s.insert(129));
        assert!(!s.insert(64));
        assert_eq!(s.to_vec(), vec![0, 64, 129]);
        assert_eq!(s.count(), 3);
        assert!(s.remove(64));
        assert!(!s.remove(64));
        assert!(!s.contains(64));
        assert!(!s.contains(1000));
        assert_eq!(format!("{s:?}"), "{0, 129}");
    }

    #[test]
    fn full_and_set_algebra() {
        let f = BitSet::full(70);
        assert_eq!(f.count(), 70);
        let mut a = BitSet::from_items(70, [1, 2, 3]);
        let b = BitSet::from_items(70, [2, 3, 4]);
        assert!(a.is_subset(&f));
        assert!(!a.is_subset(&b));
        let mut u = a.clone();
        assert!(u.union_with(&b));
        assert!(!u.union_with(&b));
        assert_eq!(u.to_vec(), vec![1, 2, 3, 4]);
        assert!(a.intersect_with(&b));
        assert_eq!(a.to_vec(), vec![2, 3]);
        a.clear();
        assert!(a.is_empty());
    }
}
