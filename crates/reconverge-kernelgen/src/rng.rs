//! A tiny seeded PRNG (SplitMix64).
//!
//! Written here instead of taken from `rand`: the generated kernels must stay identical for a given seed
//! forever (failure reports name a seed), and a crate's algorithm or its range-sampling code may change
//! between versions. SplitMix64 (Steele, Lea, Flood 2014; the seeding generator of `java.util.SplittableRandom`
//! and xoshiro) is a handful of lines, passes BigCrush, and is more than random enough for test programs.

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed ^ 0x005E_ED0F_C0DE_u64.rotate_left(17) }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `lo..=hi` (`lo` if `hi < lo`).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Multiply-shift: unbiased enough for test generation, and exactly reproducible.
        lo + ((self.next_u64() as u128 * span as u128) >> 64) as u64
    }

    /// A uniform `i64` in `lo..=hi`.
    pub fn range_i(&mut self, lo: i64, hi: i64) -> i64 {
        lo.wrapping_add(self.range(0, hi.wrapping_sub(lo) as u64) as i64)
    }

    /// `true` with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64) < p
    }

    /// A uniformly chosen element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len().saturating_sub(1) as u64) as usize]
    }

    /// An index chosen with probability proportional to `weights` (all zero: index 0).
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        if total == 0 {
            return 0;
        }
        let mut x = self.range(0, total - 1);
        for (i, &w) in weights.iter().enumerate() {
            if x < w as u64 {
                return i;
            }
            x -= w as u64;
        }
        weights.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducible_and_in_range() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..1000 {
            let x = a.range(3, 9);
            assert_eq!(x, b.range(3, 9));
            assert!((3..=9).contains(&x));
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
        assert_eq!(Rng::new(5).range(4, 4), 4);
        let w = Rng::new(3).weighted(&[0, 5, 0]);
        assert_eq!(w, 1);
    }
}
