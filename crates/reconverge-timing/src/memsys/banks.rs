//! Shared-memory bank conflicts: how many serialized wavefronts one warp access needs.
//!
//! Shared memory is `banks` banks of `bank_bytes`-wide words; bank word `w = address / bank_bytes` lives in
//! bank `w % banks`. One wavefront serves at most one word per bank, and every lane reading that word (a
//! broadcast / multicast). The degree is therefore the maximum, over banks, of the number of *distinct* words
//! accessed in the bank.
//!
//! Wide accesses: an access of `bytes` covers every word from `address / bank_bytes` to
//! `(address + bytes - 1) / bank_bytes`, i.e. consecutive banks. The rule is applied uniformly, with no
//! half-warp special case: a stride-1 warp of 8-byte accesses on 4-byte banks covers 64 consecutive words, two
//! per bank, degree 2 (which is also what hardware does: a 64-bit warp access is served as two half-warp
//! wavefronts); 16-byte accesses at stride 1 give degree 4.
//!
//! Degenerate parameters never panic: `banks` or `bank_bytes` of 0 are treated as 1, a zero-byte access as a
//! 1-byte access, and addresses near `u64::MAX` saturate.

/// Words handled without allocating on the general path (32 lanes × 16 bytes / 4-byte banks = 128).
const INLINE_WORDS: usize = 128;

/// Bank counts kept on the stack (the fast path and the counting of the general path).
const COUNTED_BANKS: u64 = 64;

/// Word and bank arithmetic, with shifts and masks for powers of two.
#[derive(Clone, Copy)]
struct Banking {
    banks: u64,
    bank_bytes: u64,
    pow2: bool,
}

impl Banking {
    #[inline]
    fn word(self, addr: u64) -> u64 {
        if self.pow2 {
            addr >> self.bank_bytes.trailing_zeros()
        } else {
            addr / self.bank_bytes
        }
    }

    #[inline]
    fn bank(self, word: u64) -> u64 {
        if self.pow2 {
            word & (self.banks - 1)
        } else {
            word % self.banks
        }
    }

    /// Words `first..=last` of an access.
    #[inline]
    fn words(self, addr: u64, bytes: u32) -> (u64, u64) {
        (self.word(addr), self.word(addr.saturating_add(u64::from(bytes.max(1)) - 1)))
    }
}

/// Shared-memory bank conflict degree: the number of serialized shared-memory wavefronts for one warp access:
/// max over banks of the number of DISTINCT bank words (address / bank_bytes) accessed in that bank (lanes
/// reading the same word are a broadcast: no conflict). An access wider than bank_bytes touches consecutive
/// banks (an 8-byte access covers 2 words). Returns 0 for no accesses, else ≥ 1.
///
/// Allocation-free when the words are non-decreasing in lane order (unit, strided, wide and broadcast
/// patterns) with at most 64 banks, and otherwise when the access touches at most 128 words in all.
pub fn conflict_degree(accesses: &[(u64, u32)], banks: u32, bank_bytes: u32) -> u32 {
    if accesses.is_empty() {
        return 0;
    }
    let banks = u64::from(banks.max(1));
    let bank_bytes = u64::from(bank_bytes.max(1));
    let b = Banking { banks, bank_bytes, pow2: banks.is_power_of_two() && bank_bytes.is_power_of_two() };
    if banks <= COUNTED_BANKS {
        if let Some(degree) = monotone_degree(b, accesses) {
            return degree;
        }
    }
    general_degree(b, accesses)
}

/// Fast path: when the words are non-decreasing in lane order, a word is new exactly when it differs from the
/// previous one, so distinct words can be counted per bank directly. `None` if the words go backwards.
fn monotone_degree(b: Banking, accesses: &[(u64, u32)]) -> Option<u32> {
    let mut counts = [0u32; COUNTED_BANKS as usize];
    let mut prev: Option<u64> = None;
    for &(addr, bytes) in accesses {
        let (first, last) = b.words(addr, bytes);
        if prev.is_some_and(|p| first < p) {
            return None;
        }
        let mut word = first;
        loop {
            if prev != Some(word) {
                if let Some(c) = usize::try_from(b.bank(word)).ok().and_then(|i| counts.get_mut(i)) {
                    *c += 1;
                }
                prev = Some(word);
            }
            if word >= last {
                break;
            }
            word += 1;
        }
    }
    counts.iter().copied().max()
}

/// General path: sort and deduplicate the words, then count them per bank.
fn general_degree(b: Banking, accesses: &[(u64, u32)]) -> u32 {
    let mut inline = [0u64; INLINE_WORDS];
    let mut heap: Vec<u64> = Vec::new();
    let mut n = 0usize;
    for &(addr, bytes) in accesses {
        let (first, last) = b.words(addr, bytes);
        let mut word = first;
        loop {
            match inline.get_mut(n) {
                Some(slot) if heap.is_empty() => *slot = word,
                _ => {
                    if heap.is_empty() {
                        heap.extend_from_slice(&inline);
                    }
                    heap.push(word);
                }
            }
            n += 1;
            if word >= last {
                break;
            }
            word += 1;
        }
    }
    // `n` ≤ INLINE_WORDS whenever the heap is unused.
    let words: &mut [u64] = if heap.is_empty() { &mut inline[..n] } else { &mut heap };
    words.sort_unstable();
    // Deduplicate in place (`distinct` ≤ `i` < len).
    let mut distinct = 0usize;
    for i in 0..words.len() {
        if distinct == 0 || words[distinct - 1] != words[i] {
            words[distinct] = words[i];
            distinct += 1;
        }
    }
    let words = &mut words[..distinct];

    if b.banks <= COUNTED_BANKS {
        let mut counts = [0u32; COUNTED_BANKS as usize];
        for &w in words.iter() {
            if let Some(c) = usize::try_from(b.bank(w)).ok().and_then(|i| counts.get_mut(i)) {
                *c += 1;
            }
        }
        return counts.iter().copied().max().unwrap_or(0);
    }
    // Many banks: group the distinct words by bank; the longest run is the degree.
    words.sort_unstable_by_key(|&w| b.bank(w));
    let mut best = 0u32;
    let mut run = 0u32;
    let mut prev_bank = None;
    for &w in words.iter() {
        let bank = b.bank(w);
        run = if prev_bank == Some(bank) { run + 1 } else { 1 };
        prev_bank = Some(bank);
        best = best.max(run);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 32 lanes, lane i at `base + i * stride_words * 4`, `bytes` each, 32 banks of 4 bytes.
    fn strided(stride_words: u64, bytes: u32) -> u32 {
        let acc: Vec<_> = (0..32u64).map(|i| (0x400 + i * stride_words * 4, bytes)).collect();
        conflict_degree(&acc, 32, 4)
    }

    #[test]
    fn word_strides() {
        assert_eq!(strided(1, 4), 1);
        assert_eq!(strided(2, 4), 2);
        assert_eq!(strided(4, 4), 4);
        assert_eq!(strided(32, 4), 32);
        assert_eq!(strided(33, 4), 1, "padding trick: stride 33 maps lane i to bank i");
        assert_eq!(strided(3, 4), 1, "odd strides are conflict-free");
    }

    #[test]
    fn broadcast_and_multicast() {
        assert_eq!(conflict_degree(&[(0x80, 4); 32], 32, 4), 1);
        // Two groups of 16 lanes each reading one word of a different bank: still one wavefront.
        let acc: Vec<_> = (0..32u64).map(|i| (if i < 16 { 0 } else { 4 }, 4)).collect();
        assert_eq!(conflict_degree(&acc, 32, 4), 1);
        // Two words of the same bank, 16 lanes each: two wavefronts.
        let acc: Vec<_> = (0..32u64).map(|i| (if i < 16 { 0 } else { 128 }, 4)).collect();
        assert_eq!(conflict_degree(&acc, 32, 4), 2);
    }

    #[test]
    fn half_the_lanes_in_one_bank() {
        // Lanes 0..16 read words 0, 32, 64, ... (all bank 0, distinct words); lanes 16..32 read words 16..32
        // (banks 16..31, one each).
        let acc: Vec<_> = (0..32u64).map(|i| (if i < 16 { i * 32 * 4 } else { i * 4 }, 4)).collect();
        assert_eq!(conflict_degree(&acc, 32, 4), 16);
    }

    #[test]
    fn wide_accesses() {
        // 8-byte accesses at stride 1 (8 bytes apart): 64 consecutive words, two per bank.
        assert_eq!(strided(2, 8), 2);
        // 16-byte accesses at stride 1: 128 consecutive words, four per bank.
        assert_eq!(strided(4, 16), 4);
        // An 8-byte broadcast touches two words in two banks once each.
        assert_eq!(conflict_degree(&[(8, 8); 32], 32, 4), 1);
        // 8-byte banks (64-bit mode): 8-byte stride-1 accesses are conflict-free.
        let acc: Vec<_> = (0..32u64).map(|i| (i * 8, 8)).collect();
        assert_eq!(conflict_degree(&acc, 32, 8), 1);
        // An unaligned 4-byte access straddles two words of two banks.
        assert_eq!(conflict_degree(&[(2, 4), (130, 4)], 32, 4), 2);
    }

    #[test]
    fn many_words_fall_back_to_the_heap() {
        // 32 lanes × 64 bytes = 512 words over 32 banks: 16 per bank.
        let acc: Vec<_> = (0..32u64).map(|i| (i * 64, 64)).collect();
        assert_eq!(conflict_degree(&acc, 32, 4), 16);
    }

    #[test]
    fn lane_order_does_not_matter() {
        // The same patterns with lanes in reverse or shuffled order take the general (sorting) path.
        for (stride, bytes, expect) in [(1u64, 4u32, 1u32), (2, 4, 2), (32, 4, 32), (33, 4, 1), (2, 8, 2), (4, 16, 4)] {
            let mut acc: Vec<_> = (0..32u64).map(|i| (0x400 + i * stride * 4, bytes)).collect();
            acc.reverse();
            assert_eq!(conflict_degree(&acc, 32, 4), expect, "reversed stride {stride} × {bytes} B");
            let shuffled: Vec<_> = (0..32usize).map(|i| acc[(i * 7) % 32]).collect();
            assert_eq!(conflict_degree(&shuffled, 32, 4), expect, "shuffled stride {stride} × {bytes} B");
        }
        // A non-monotone broadcast mix: words 5, 37, 5, 37, ... (bank 5, two words).
        let acc: Vec<_> = (0..32u64).map(|i| (if i % 2 == 0 { 20 } else { 148 }, 4)).collect();
        assert_eq!(conflict_degree(&acc, 32, 4), 2);
    }

    #[test]
    fn other_bank_counts() {
        // 128 banks (more than the stack counters): stride 32 words puts 8 lanes in each of banks 0, 32, 64
        // and 96, in lane order and reversed.
        let acc: Vec<_> = (0..32u64).map(|i| (i * 128, 4)).collect();
        assert_eq!(conflict_degree(&acc, 128, 4), 8);
        let rev: Vec<_> = acc.iter().rev().copied().collect();
        assert_eq!(conflict_degree(&rev, 128, 4), 8);
        // 31 banks (not a power of two): stride 31 maps every lane to bank 0; stride 32 to distinct banks.
        let acc: Vec<_> = (0..32u64).map(|i| (i * 31 * 4, 4)).collect();
        assert_eq!(conflict_degree(&acc, 31, 4), 32);
        let acc: Vec<_> = (0..31u64).map(|i| (i * 32 * 4, 4)).collect();
        assert_eq!(conflict_degree(&acc, 31, 4), 1);
        // 12-byte banks: words are 12 bytes wide; lanes 0..3 at 0, 6, 12, 18 touch words 0, 0-1, 1, 1-2.
        assert_eq!(conflict_degree(&[(0, 4), (6, 8), (12, 4), (18, 8)], 2, 12), 2);
    }

    #[test]
    fn small_warps_and_edge_cases() {
        assert_eq!(conflict_degree(&[], 32, 4), 0);
        assert_eq!(conflict_degree(&[(0, 4), (128, 4), (256, 4), (384, 4)], 32, 4), 4);
        assert_eq!(conflict_degree(&[(0, 4), (4, 4), (8, 4), (12, 4)], 32, 4), 1);
        assert_eq!(conflict_degree(&[(0, 4), (128, 4)], 16, 4), 2);
        // Degenerate parameters: one bank of one byte, zero-byte accesses, the top of the address space.
        assert_eq!(conflict_degree(&[(0, 4), (10, 0)], 0, 0), 5);
        assert_eq!(conflict_degree(&[(u64::MAX, 8)], 32, 4), 1);
    }
}
