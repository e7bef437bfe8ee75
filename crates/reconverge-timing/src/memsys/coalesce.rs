//! Global-memory coalescing: the cache-line transactions (and 32-byte sectors) of one warp access.
//!
//! Every active lane contributes one `(byte address, bytes)` access. An access touches every sector whose
//! bytes it overlaps, possibly in two (or more) lines when it straddles a line boundary. The result is one
//! [`LineRequest`] per distinct line, sorted by line number, with the sector masks of all lanes OR-ed.
//!
//! Degenerate parameters never panic: a `line_bytes` or `sector_bytes` of 0 is treated as 1, a sector larger
//! than the line is the whole line, and when a line would have more than 32 sectors (the width of the mask)
//! the sector size is raised to `ceil(line_bytes / 32)`. A zero-byte access is treated as a 1-byte access
//! (an active lane always touches its address). Addresses near `u64::MAX` saturate instead of wrapping.

/// One memory transaction: a cache line and the 32-byte sectors of it that lanes touched (bit i = sector i).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineRequest {
    /// Line number = byte address / line_bytes.
    pub line: u64,
    /// Sectors of the line touched by at least one lane (bit i = sector i).
    pub sectors: u32,
}

/// How byte addresses map to lines and sectors; monomorphized so that the power-of-two case is all shifts.
trait Layout: Copy {
    /// Line number of a byte address.
    fn line(self, addr: u64) -> u64;
    /// Sector index (≤ 31) of a byte address within its line.
    fn sector(self, addr: u64) -> u64;
}

/// Power-of-two line and sector sizes.
#[derive(Clone, Copy)]
struct Pow2 {
    line_shift: u32,
    line_mask: u64,
    sector_shift: u32,
}

impl Layout for Pow2 {
    #[inline]
    fn line(self, addr: u64) -> u64 {
        addr >> self.line_shift
    }

    #[inline]
    fn sector(self, addr: u64) -> u64 {
        (addr & self.line_mask) >> self.sector_shift
    }
}

/// Any line and sector sizes (≥ 1).
#[derive(Clone, Copy)]
struct General {
    line_bytes: u64,
    sector_bytes: u64,
}

impl Layout for General {
    #[inline]
    fn line(self, addr: u64) -> u64 {
        addr / self.line_bytes
    }

    #[inline]
    fn sector(self, addr: u64) -> u64 {
        (addr % self.line_bytes) / self.sector_bytes
    }
}

/// Mask with bits `lo..=hi` set (both clamped to 31).
#[inline]
fn bit_range(lo: u64, hi: u64) -> u32 {
    (u32::MAX >> (31 - hi.min(31))) & (u32::MAX << lo.min(31))
}

/// The line being accumulated (kept in registers) and whether the output is still strictly increasing.
struct Pending {
    line: u64,
    /// 0 = nothing pending (a real mask is never empty).
    sectors: u32,
    sorted: bool,
}

impl Pending {
    #[inline]
    fn add(&mut self, out: &mut Vec<LineRequest>, line: u64, sectors: u32) {
        if self.sectors != 0 {
            if self.line == line {
                self.sectors |= sectors;
                return;
            }
            self.sorted &= self.line < line;
            out.push(LineRequest { line: self.line, sectors: self.sectors });
        }
        self.line = line;
        self.sectors = sectors;
    }
}

fn coalesce_with<L: Layout>(layout: L, last_sector: u64, accesses: &[(u64, u32)], out: &mut Vec<LineRequest>) {
    let mut pending = Pending { line: 0, sectors: 0, sorted: true };
    for &(addr, bytes) in accesses {
        let last = addr.saturating_add(u64::from(bytes.max(1)) - 1);
        let first_line = layout.line(addr);
        let last_line = layout.line(last);
        if first_line == last_line {
            // Fast path: the access lies in one line.
            pending.add(out, first_line, bit_range(layout.sector(addr), layout.sector(last)));
            continue;
        }
        pending.add(out, first_line, bit_range(layout.sector(addr), last_sector));
        let mut line = first_line + 1; // first_line < last_line: no overflow
        while line < last_line {
            pending.add(out, line, bit_range(0, last_sector));
            line += 1;
        }
        pending.add(out, last_line, bit_range(0, layout.sector(last)));
    }
    if pending.sectors != 0 {
        out.push(LineRequest { line: pending.line, sectors: pending.sectors });
    }
    if pending.sorted {
        return;
    }
    out.sort_unstable_by_key(|r| r.line);
    out.dedup_by(|later, kept| {
        if later.line == kept.line {
            kept.sectors |= later.sectors;
            true
        } else {
            false
        }
    });
}

/// The transactions of one warp access. `accesses` = (byte address, bytes) of each active lane, in lane order;
/// an access may straddle a line or sector boundary (touch every sector it covers). Output: sorted by line,
/// deduplicated, sector masks OR-ed. `out` is cleared first.
///
/// See the [module documentation](self) for the handling of degenerate sizes. Allocation-free once `out` has
/// grown to the number of distinct lines of a typical access.
pub fn coalesce(accesses: &[(u64, u32)], line_bytes: u32, sector_bytes: u32, out: &mut Vec<LineRequest>) {
    out.clear();
    let line_bytes = u64::from(line_bytes.max(1));
    // Effective sector size: at most the line, at least ceil(line / 32) so that sector indices fit the mask.
    let sector_bytes = u64::from(sector_bytes.max(1)).clamp(line_bytes.div_ceil(32), line_bytes);
    let last_sector = (line_bytes - 1) / sector_bytes;
    if line_bytes.is_power_of_two() && sector_bytes.is_power_of_two() {
        let layout = Pow2 {
            line_shift: line_bytes.trailing_zeros(),
            line_mask: line_bytes - 1,
            sector_shift: sector_bytes.trailing_zeros(),
        };
        coalesce_with(layout, last_sector, accesses, out);
    } else {
        coalesce_with(General { line_bytes, sector_bytes }, last_sector, accesses, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: u64 = 0x1000; // line 32 with 128-byte lines

    fn run(accesses: &[(u64, u32)]) -> Vec<LineRequest> {
        let mut out = vec![LineRequest { line: 999, sectors: 7 }]; // must be cleared
        coalesce(accesses, 128, 32, &mut out);
        out
    }

    fn lanes(n: u64, stride: u64, bytes: u32) -> Vec<(u64, u32)> {
        (0..n).map(|i| (BASE + i * stride, bytes)).collect()
    }

    fn lr(line: u64, sectors: u32) -> LineRequest {
        LineRequest { line, sectors }
    }

    fn total_sectors(out: &[LineRequest]) -> u32 {
        out.iter().map(|r| r.sectors.count_ones()).sum()
    }

    #[test]
    fn unit_stride_aligned_is_one_line_four_sectors() {
        assert_eq!(run(&lanes(32, 4, 4)), vec![lr(32, 0b1111)]);
    }

    #[test]
    fn misaligned_by_four_bytes_is_two_lines() {
        let acc: Vec<_> = (0..32).map(|i| (BASE + 4 + 4 * i, 4)).collect();
        // Bytes 0x1004..=0x1083: all of line 32, first sector of line 33.
        assert_eq!(run(&acc), vec![lr(32, 0b1111), lr(33, 0b0001)]);
    }

    #[test]
    fn stride_two_words_is_two_lines_eight_sectors() {
        let out = run(&lanes(32, 8, 4));
        assert_eq!(out, vec![lr(32, 0b1111), lr(33, 0b1111)]);
        assert_eq!(total_sectors(&out), 8);
    }

    #[test]
    fn stride_32_words_is_32_lines_one_sector_each() {
        let out = run(&lanes(32, 128, 4));
        let expect: Vec<_> = (0..32).map(|i| lr(32 + i, 0b0001)).collect();
        assert_eq!(out, expect);
    }

    #[test]
    fn broadcast_is_one_line_one_sector() {
        let acc = vec![(BASE + 0x44, 4); 32]; // offset 68 in the line: sector 2
        assert_eq!(run(&acc), vec![lr(32, 0b0100)]);
    }

    #[test]
    fn random_addresses_hand_checked() {
        let acc = [(0x0, 4), (0x7c, 4), (0x80, 4), (0x1f4, 4), (0x84, 4), (0x3, 4), (0x200, 4), (0x1e0, 4)];
        // 0x0 -> l0 s0; 0x7c (124) -> l0 s3; 0x80 -> l1 s0; 0x1f4 (500 = 384+116) -> l3 s3; 0x84 -> l1 s0;
        // 0x3 (bytes 3..=6) -> l0 s0; 0x200 (512) -> l4 s0; 0x1e0 (480 = 384+96) -> l3 s3.
        assert_eq!(run(&acc), vec![lr(0, 0b1001), lr(1, 0b0001), lr(3, 0b1000), lr(4, 0b0001)]);
    }

    #[test]
    fn eight_and_sixteen_byte_accesses() {
        assert_eq!(run(&lanes(32, 8, 8)), vec![lr(32, 0b1111), lr(33, 0b1111)]);
        assert_eq!(run(&lanes(32, 16, 16)), vec![lr(32, 0xf), lr(33, 0xf), lr(34, 0xf), lr(35, 0xf)]);
        // Vector loads with a 64-byte stride touch every other sector.
        assert_eq!(run(&lanes(4, 64, 16)), vec![lr(32, 0b0101), lr(33, 0b0101)]);
    }

    #[test]
    fn straddling_accesses() {
        // Bytes 126..=129: last sector of line 0 and first sector of line 1.
        assert_eq!(run(&[(0x7e, 4)]), vec![lr(0, 0b1000), lr(1, 0b0001)]);
        // Bytes 30..=33: sectors 0 and 1 of line 0.
        assert_eq!(run(&[(30, 4)]), vec![lr(0, 0b0011)]);
        // A 300-byte access from 100 covers bytes 100..=399: lines 0 (s3), 1 (all), 2 (all), 3 (s0).
        assert_eq!(run(&[(100, 300)]), vec![lr(0, 0b1000), lr(1, 0xf), lr(2, 0xf), lr(3, 0b0001)]);
    }

    #[test]
    fn small_warps_and_partial_masks() {
        // Warp size 4, unit stride: 16 bytes, sector 0 only.
        assert_eq!(run(&lanes(4, 4, 4)), vec![lr(32, 0b0001)]);
        // Warp size 8, 32-byte stride: 256 bytes, two full lines.
        assert_eq!(run(&lanes(8, 32, 4)), vec![lr(32, 0xf), lr(33, 0xf)]);
        // Lanes {0, 5, 17, 31} of a unit-stride warp: offsets 0, 20, 68, 124 -> sectors 0, 0, 2, 3.
        let acc: Vec<_> = [0u64, 5, 17, 31].iter().map(|&l| (BASE + 4 * l, 4)).collect();
        assert_eq!(run(&acc), vec![lr(32, 0b1101)]);
        // Lanes in descending address order are still sorted and merged.
        let acc: Vec<_> = (0..8u64).rev().map(|i| (BASE + 96 * i, 4)).collect();
        // Offsets 0, 96, 192, ..., 672: lines 32 (s0, s3), 33 (s2), 34 (s1), 35 (s0, s3), 36 (s2), 37 (s1).
        assert_eq!(
            run(&acc),
            vec![lr(32, 0b1001), lr(33, 0b0100), lr(34, 0b0010), lr(35, 0b1001), lr(36, 0b0100), lr(37, 0b0010)]
        );
    }

    #[test]
    fn empty_and_other_geometries() {
        assert!(run(&[]).is_empty());
        let mut out = Vec::new();
        // 64-byte lines with 32-byte sectors: two sectors a line.
        coalesce(&lanes(32, 4, 4), 64, 32, &mut out);
        assert_eq!(out, vec![lr(64, 0b11), lr(65, 0b11)]);
        // Non-power-of-two line (96) and sector (48): offsets 0..=127 from 0 -> line 0 (both), line 1 (s0).
        let acc: Vec<_> = (0..32u64).map(|i| (4 * i, 4)).collect();
        coalesce(&acc, 96, 48, &mut out);
        assert_eq!(out, vec![lr(0, 0b11), lr(1, 0b01)]);
    }

    #[test]
    fn degenerate_parameters_do_not_panic() {
        let mut out = Vec::new();
        // A 4096-byte line with 32-byte sectors would need 128 sectors: they become 128-byte sectors.
        coalesce(&[(0, 4), (4095, 1), (200, 4)], 4096, 32, &mut out);
        assert_eq!(out, vec![lr(0, (1 << 31) | 0b11)]);
        // Sector larger than the line: one sector per line.
        coalesce(&[(0, 4), (130, 4)], 128, 256, &mut out);
        assert_eq!(out, vec![lr(0, 1), lr(1, 1)]);
        // Zero sizes are treated as 1; zero-byte accesses as 1 byte.
        coalesce(&[(5, 0), (5, 1)], 0, 0, &mut out);
        assert_eq!(out, vec![lr(5, 1)]);
        // Saturating at the top of the address space.
        coalesce(&[(u64::MAX, 16)], 128, 32, &mut out);
        assert_eq!(out, vec![lr(u64::MAX / 128, 0b1000)]);
    }
}
