//! A pipelined, FIFO, fixed-bandwidth channel with exact rational timing.
//!
//! The rate is `num/den` units per cycle, reduced by their gcd. Time is kept in *ticks* of `1/num` cycle, so
//! one unit takes exactly `den` ticks and no rounding ever accumulates: a transfer of `u` units arriving at
//! cycle `c` starts at `max(c × num, free)` ticks, ends `u × den` ticks later, and the channel is free from
//! then on. The returned completion cycle is the end rounded up to a whole cycle. Transfers are served in call
//! order (FIFO), whatever their arrival cycles; an idle channel does not bank unused capacity. The channel only
//! models occupancy: latency is the caller's to add. Arithmetic is 128-bit and saturating, so no input panics.

/// A pipelined channel serving `units_per_cycle` units (sectors, bytes) per cycle, FIFO; fixed-point exact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bandwidth {
    /// Ticks per cycle (the reduced numerator).
    num: u128,
    /// Ticks per unit (the reduced denominator).
    den: u128,
    /// Tick at which the channel is free.
    free: u128,
    /// Total busy ticks.
    busy: u128,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Bandwidth {
    /// `units_per_cycle` given as a rational num/den (e.g. 177 GB/s at 1.4 GHz = 126/1 bytes per cycle), both > 0.
    pub fn new(num: u64, den: u64) -> Result<Bandwidth, crate::error::StructureError> {
        if num == 0 || den == 0 {
            return Err(crate::error::StructureError::Bandwidth { num, den });
        }
        let g = gcd(num, den);
        Ok(Bandwidth { num: u128::from(num / g), den: u128::from(den / g), free: 0, busy: 0 })
    }

    /// Ticks to whole cycles, rounded up, saturating.
    #[inline]
    fn to_cycles(&self, ticks: u128) -> u64 {
        u64::try_from(ticks.div_ceil(self.num)).unwrap_or(u64::MAX)
    }

    /// Serves a transfer of `units` arriving at `cycle`: it starts at max(cycle, when the channel frees) and the
    /// returned value is the cycle the last unit has passed (≥ cycle; a transfer smaller than one cycle's
    /// capacity still occupies its fraction, so many small transfers queue correctly).
    ///
    /// A transfer of 0 units occupies nothing and returns `cycle`.
    pub fn serve(&mut self, cycle: u64, units: u64) -> u64 {
        if units == 0 {
            return cycle;
        }
        let duration = u128::from(units).saturating_mul(self.den);
        let start = (u128::from(cycle).saturating_mul(self.num)).max(self.free);
        let end = start.saturating_add(duration);
        self.free = end;
        self.busy = self.busy.saturating_add(duration);
        self.to_cycles(end)
    }

    /// Cycles the channel was busy so far (rounded up).
    pub fn busy_cycles(&self) -> u64 {
        self.to_cycles(self.busy)
    }

    /// The first cycle at which the channel could start a new transfer with no queueing (rounded up).
    pub fn free_at(&self) -> u64 {
        self.to_cycles(self.free)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bw(num: u64, den: u64) -> Bandwidth {
        match Bandwidth::new(num, den) {
            Ok(b) => b,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn integer_rate() {
        let mut b = bw(2, 1);
        assert_eq!(b.serve(0, 4), 2);
        assert_eq!(b.serve(0, 4), 4, "queued behind the first");
        assert_eq!(b.serve(1, 2), 5);
        assert_eq!(b.busy_cycles(), 5);
        assert_eq!(b.free_at(), 5);
    }

    #[test]
    fn small_transfers_share_a_cycle() {
        let mut b = bw(4, 1);
        // Quarter-cycle transfers: four fit in cycle 10, the fifth spills into cycle 11.
        assert_eq!(b.serve(10, 1), 11);
        assert_eq!(b.serve(10, 1), 11);
        assert_eq!(b.serve(10, 1), 11);
        assert_eq!(b.serve(10, 1), 11);
        assert_eq!(b.serve(10, 1), 12);
        assert_eq!(b.busy_cycles(), 2); // 5/4 rounded up
                                        // 126 bytes per cycle: a 128-byte line takes just over one cycle.
        let mut d = bw(126, 1);
        assert_eq!(d.serve(0, 128), 2);
        assert_eq!(d.serve(0, 124), 2, "exactly fills the rest of cycle 1");
        assert_eq!(d.serve(0, 1), 3);
    }

    #[test]
    fn fractional_rates() {
        // One unit every three cycles.
        let mut b = bw(1, 3);
        assert_eq!(b.serve(0, 1), 3);
        assert_eq!(b.serve(0, 1), 6);
        assert_eq!(b.serve(0, 2), 12);
        // 3/2 units per cycle: a unit takes 2/3 cycle; 1, 2, 3, 4 units end at 2/3, 4/3, 2, 8/3.
        let mut b = bw(3, 2);
        assert_eq!(b.serve(0, 1), 1);
        assert_eq!(b.serve(0, 1), 2);
        assert_eq!(b.serve(0, 1), 2);
        assert_eq!(b.serve(0, 1), 3);
        assert_eq!(b.busy_cycles(), 3);
        // Rates are reduced: 6/4 behaves like 3/2, with no drift over many transfers.
        let mut a = bw(6, 4);
        let mut c = bw(3, 2);
        for i in 0..1000 {
            assert_eq!(a.serve(i / 3, 1 + i % 5), c.serve(i / 3, 1 + i % 5));
        }
        // 3000 units at 3/2 per cycle: exactly 2000 cycles, no rounding drift.
        let mut e = bw(3, 2);
        for _ in 0..3000 {
            e.serve(0, 1);
        }
        assert_eq!(e.busy_cycles(), 2000);
        assert_eq!(e.free_at(), 2000);
    }

    #[test]
    fn idle_gaps_are_not_banked() {
        let mut b = bw(1, 1);
        assert_eq!(b.serve(0, 3), 3);
        // Arrives after the channel is free: starts on arrival.
        assert_eq!(b.serve(10, 3), 13);
        // Arrives while busy: waits.
        assert_eq!(b.serve(11, 1), 14);
        // Fractional free time then a gap: starts at the arrival cycle exactly.
        let mut h = bw(2, 1);
        assert_eq!(h.serve(0, 1), 1); // free at 0.5
        assert_eq!(h.serve(5, 2), 6);
        assert_eq!(h.busy_cycles(), 2); // 1.5 rounded up
    }

    #[test]
    fn edge_cases() {
        assert!(Bandwidth::new(0, 1).is_err());
        assert!(Bandwidth::new(1, 0).is_err());
        let mut b = bw(1, 1);
        assert_eq!(b.serve(7, 0), 7, "empty transfer");
        assert_eq!(b.busy_cycles(), 0);
        // Saturation instead of overflow.
        let mut s = bw(1, u64::MAX);
        assert_eq!(s.serve(u64::MAX, u64::MAX), u64::MAX);
        assert_eq!(s.serve(u64::MAX, u64::MAX), u64::MAX);
        let mut f = bw(u64::MAX, 1);
        assert_eq!(f.serve(u64::MAX - 1, 1), u64::MAX);
    }
}
