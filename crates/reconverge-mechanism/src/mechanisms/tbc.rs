//! Thread block compaction (Fung & Aamodt, HPCA'11; seed 002 §II.B and Fig. 3).
//!
//! A CTA-wide reconvergence stack ([`crate::CtaStack`]) in which every warp that reaches a conditional
//! branch, call or divergent return stalls until all the warps of the CTA's top entry have arrived (the
//! entry's WCnt reaches zero); then the warp compaction unit forms the fewest warps the home-lane
//! constraint allows for each path, and again at the reconvergence point. `tbc:lpc` adds the paper's
//! likely-convergence points.

use crate::adapters::cta_stack::{CompactionPolicy, Decision};
use crate::types::Pc;

/// TBC's policy: every arriving warp waits for the CTA. With `LIKELY` (`tbc:lpc`), divergent branches
/// that can leave their loop also converge at their likely-convergence point (see [`crate::CtaStack`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Tbc<const LIKELY: bool = false>;

impl<const LIKELY: bool> CompactionPolicy for Tbc<LIKELY> {
    type Table = ();
    const PREDICTOR: bool = false;
    const LIKELY: bool = LIKELY;

    fn name(&self) -> &'static str {
        if LIKELY {
            LIKELY_INFO.name
        } else {
            INFO.name
        }
    }

    fn arrive(&self, _table: &mut (), _pc: Pc, _divergent: bool) -> Decision {
        Decision { stall: true, predicted: None }
    }

    fn learn(&self, _table: &mut (), _pc: Pc, _adequate: bool) {}
}

/// The registry's facts of `tbc`.
pub(crate) const INFO: crate::Info = crate::Info::new("tbc", crate::Scope::Cta, "thread block compaction (Fung and Aamodt, HPCA 2011): a CTA-wide stack; warps wait at every branch and are compacted")
.storage(&[
    crate::storage::common::CTA_STACK,
    crate::storage::common::CTA_STACK_POINTER,
    crate::storage::common::CTA_PENDING,
    crate::storage::common::WARP_THREADS,
]);

/// The registry's facts of `tbc:lpc`.
pub(crate) const LIKELY_INFO: crate::Info = crate::Info::new(
    "tbc:lpc",
    crate::Scope::Cta,
    "thread block compaction with likely-convergence points: threads that stay in a loop meet at its continue point",
)
.outside_defaults()
.storage(&[
    crate::storage::common::CTA_STACK_LPC,
    crate::storage::common::CTA_STACK_POINTER,
    crate::storage::common::CTA_PENDING,
    crate::storage::common::WARP_THREADS,
]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{program, run_cta, trips, Pick, Run, DIAMOND, LOOP};
    use crate::types::LaneMask;
    use crate::CtaStack;

    /// Every issue's pc and the `(static warp, lanes)` its threads come from.
    fn groups(r: &Run) -> Vec<(Pc, Vec<(u32, LaneMask)>)> {
        r.trace.iter().map(|i| (i.pc, i.parts.clone())).collect()
    }

    /// Two warps of 4 threads on DIAMOND: the CTA threads in `taken` take the branch.
    fn diamond(taken: &[usize]) -> Run {
        let preds = |_, t, _| taken.contains(&t);
        run_cta(&CtaStack(Tbc::<false>), &program(DIAMOND), &[0b1111, 0b1111], 4, &preds, Pick::Lowest, 64)
    }

    #[test]
    fn a_warp_waits_at_the_branch_for_the_other_warps_of_its_cta() {
        // Context 0 is the lowest, yet after its branch the other warp issues: warp 0 is stalled until
        // warp 1 arrives.
        let r = diamond(&[0, 1, 6, 7]);
        let first: Vec<(u32, Pc)> = r.trace[..4].iter().map(|i| (i.ctx, i.pc)).collect();
        assert_eq!(first, [(0, 0), (0, 1), (1, 0), (1, 1)]);
    }

    #[test]
    fn complementary_halves_of_two_warps_are_compacted_into_one_warp_per_path() {
        // Seed 002's loop 1 in miniature: the taken side is lanes 0-1 of warp 0 and lanes 2-3 of warp 1.
        let r = diamond(&[0, 1, 6, 7]);
        let (taken, fall) = (vec![(0, 0b0011), (1, 0b1100)], vec![(0, 0b1100), (1, 0b0011)]);
        assert_eq!(groups(&r)[4..7], [(4, taken), (2, fall.clone()), (3, fall)]);
        // At the reconvergence point the static warps are formed again.
        let (w0, w1) = (vec![(0, 0b1111)], vec![(1, 0b1111)]);
        assert_eq!(groups(&r)[7..], [(5, w0.clone()), (6, w0), (5, w1.clone()), (6, w1)]);
        let counters = [("sync_instances", 1), ("arrivals", 2), ("stalled_warps", 2), ("compactions", 3)];
        assert_eq!(r.counters[..4], counters);
        let warps = [("warps_before", 6), ("warps_after", 4), ("divergent_instances", 1), ("unnecessary_syncs", 0)];
        assert_eq!(r.counters[4..8], warps);
        assert_eq!((r.branch_counter(1, "warps_before"), r.branch_counter(1, "warps_after")), (6, 4));
    }

    #[test]
    fn threads_of_the_same_home_lane_cannot_share_a_warp() {
        // Seed 002's loop 2 in miniature: lane 0 of each warp takes the branch; nothing can be compacted.
        let r = diamond(&[0, 4]);
        assert_eq!(groups(&r)[4..6], [(4, vec![(0, 0b0001)]), (4, vec![(1, 0b0001)])]);
        assert_eq!((r.counter("warps_after"), r.counter("unnecessary_syncs")), (6, 1));
    }

    #[test]
    fn a_cta_uniform_branch_releases_the_same_warps() {
        let r = diamond(&[0, 1, 2, 3, 4, 5, 6, 7]);
        assert!(r.sizes.iter().all(|&s| s <= 1), "nothing pushed: {:?}", r.sizes);
        assert_eq!(groups(&r)[4..6], [(4, vec![(0, 0b1111)]), (5, vec![(0, 0b1111)])]);
        assert_eq!((r.counter("sync_instances"), r.counter("compactions")), (1, 0));
    }

    #[test]
    fn the_threads_that_stay_in_a_loop_are_compacted_and_synchronise_every_iteration() {
        // Lanes 1 and 3 of warp 0 and lanes 0 and 2 of warp 1 run a second iteration: one warp.
        let preds = trips(&[1, 2, 1, 2, 2, 1, 2, 1]);
        let r = run_cta(&CtaStack(Tbc::<false>), &program(LOOP), &[0b1111, 0b1111], 4, &preds, Pick::Lowest, 64);
        assert!(groups(&r).contains(&(1, vec![(0, 0b1010), (1, 0b0101)])), "{:?}", groups(&r));
        // The back edge synchronises the CTA at each iteration, uniform or not.
        assert_eq!((r.counter("sync_instances"), r.counter("arrivals")), (2, 3));
    }
}
