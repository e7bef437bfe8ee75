//! Co-issue in one cycle: SBI's two paths of a warp ([`Tracker::CO_ISSUE_PATHS`]: at most one group
//! after the lead, of the lead's hardware warp, under the rules below), SWI's two warps
//! ([`Tracker::CO_ISSUE_WARPS`]: the one group may also come from another warp of the scheduler whose
//! shuffled lanes are disjoint from the lead's, see [`shuffled_lanes`]) and lane-packed issue
//! ([`Tracker::LANE_PACKED`]; the `mimd` bound, GPGPU-Sim 2.x's `shader_fetch_mimd`:
//! "each cycle, fill up to W pipeline slots with any available threads not at a barrier, at any PCs").
//!
//! After a scheduler issued its cycle's first group (the *lead*, chosen as for every mechanism), it goes
//! on through the rest of its candidates in the same order (its policy's: round robin from the last issued
//! under `lrr`) and issues every ready group whose active lanes still fit in the warp width W (the lanes
//! of all the cycle's groups sum to at most W) and that runs on the lead's functional unit with no longer
//! occupancy. Together they occupy that unit once, for the lead's occupancy, as one warp instruction
//! would: the same issue width as SIMD, any pcs. Memory instructions are not packed (neither as lead nor
//! as a later group): each memory access issues alone, so the memory pipeline and the memory system see
//! the accesses SIMD would. Each packed group is otherwise an ordinary issue: it executes, pays its
//! latency, is traced and counted. Temporal dispatch issues one group per cycle (its lanes already cost
//! one dispatch per thread).

use super::{Cause, EpochCtx, EpochOutcome, Known, Sm, Wait};
use crate::config::{Dispatch, SchedulerPolicy};
use reconverge_mechanism::{Group, Peek, Tracker};
use reconverge_program::program::InstClass;
use reconverge_sim::SimError;

impl<T: Tracker> Sm<'_, T> {
    /// Scheduler `sched` issued the lead group `lead.1` of context `lead.0` (one of `order`) at `now`:
    /// issues the ready groups after it in `order` that fit in the rest of the warp width on the lead's
    /// unit (module doc). Under a round-robin policy the last group issued becomes the scheduler's last
    /// issued.
    pub(super) fn pack(
        &mut self,
        order: &[u32],
        lead: (u32, &Group),
        (sched, now): (usize, u64),
        ctx: &EpochCtx<'_>,
        out: &mut EpochOutcome,
    ) -> Result<(), SimError> {
        let (g, lead) = lead;
        let prog = self.core.program();
        if self.gpu.sm.dispatch != Dispatch::Spatial || prog.info[lead.pc as usize].class == InstClass::Mem {
            return Ok(());
        }
        let Some(pos) = order.iter().position(|&x| x == g) else { return Ok(()) };
        let lead_op = self.timings[lead.pc as usize];
        let mut room = self.warp_size.saturating_sub(lead.mask.count_ones());
        let mut last = None;
        // SBI co-issues one more path of the lead's own warp, SWI one more group of any warp; the
        // lane-packed bound any groups that fit.
        let pair = T::CO_ISSUE_PATHS || T::CO_ISSUE_WARPS;
        let lead_warp = self.sm_warp(g);
        let lead_lanes = shuffled_lanes(lead.mask, lead_warp, self.warp_size);
        let mut extra = 0;
        // The lane-packed bound goes on after the lead in its policy's order; a pair looks at the whole
        // order for its second group, first among the lead warp's paths (SBI), then (SWI) other warps'.
        let before: &[u32] = if pair { &order[..pos] } else { &[] };
        let passes: &[bool] = if T::CO_ISSUE_WARPS { &[true, false] } else { &[T::CO_ISSUE_PATHS] };
        let candidates = passes.iter().flat_map(|&own| order[pos + 1..].iter().chain(before).map(move |&o| (own, o)));
        for (own, o) in candidates {
            if room == 0 || (pair && extra == 1) {
                break;
            }
            let warp = self.sm_warp(o);
            if pair && own != (warp == lead_warp) {
                continue;
            }
            let Some(grp) = self.joiner(o, now, sched) else { continue };
            let op = self.timings[grp.pc as usize];
            let n = grp.mask.count_ones();
            let class = prog.info[grp.pc as usize].class;
            if n > room || op.unit != lead_op.unit || op.occupancy > lead_op.occupancy || class == InstClass::Mem {
                continue;
            }
            // A pair runs on disjoint lanes of the SIMD row (never the lead's lanes again).
            if pair && shuffled_lanes(grp.mask, warp, self.warp_size) & lead_lanes != 0 {
                continue;
            }
            self.packing = true;
            let issued = self.issue_one(o, &grp, sched, now, ctx, out);
            self.packing = false;
            let (busy, structure) = issued?;
            self.trace_issue(o, &grp, sched, now, busy, structure);
            out.issued += 1;
            if warp != lead_warp {
                self.warp_co_issues += 1;
            }
            room -= n;
            extra += 1;
            last = Some(o);
        }
        let round_robin = matches!(self.gpu.sm.scheduler, SchedulerPolicy::Lrr | SchedulerPolicy::CtaOldest);
        if let (Some(l), true) = (last, round_robin) {
            self.last_issued[sched] = Some(l);
        }
        Ok(())
    }

    /// The SM-wide index of context `g`'s hardware warp (CTA slot × warps per CTA + its warp).
    fn sm_warp(&self, g: u32) -> u32 {
        let cta = g / self.nctx;
        cta * self.core.warps_per_cta() + self.core.hw_warp(cta as usize, g % self.nctx)
    }

    /// Context `g`'s group, when it may join the cycle's packed issue at `now`: ready but for its unit,
    /// which the cycle's lead took (the caller checks that it is the lead's).
    fn joiner(&mut self, g: u32, now: u64, sched: usize) -> Option<Group> {
        match self.readiness_cached(g, now, sched) {
            Ok(grp) => Some(grp),
            Err(Wait { cause: Cause::Pipeline, .. }) => {
                // Only the unit (or the front end) failed when the lasting checks passed.
                if !matches!(self.asleep.get(g), Known::Lasting(l) if !l.mem && l.passed && l.at(now).is_none()) {
                    return None;
                }
                let Peek::Ready(grp) = self.core.peek((g / self.nctx) as usize, g % self.nctx) else { return None };
                self.fetched(g, grp.pc, now).ok()?;
                Some(grp)
            }
            Err(_) => None,
        }
    }
}

/// The SIMD lanes a group of SM warp `warp` with active lanes `mask` occupies under SWI's lane shuffle
/// (Brunie et al. "propose a lane shuffling technique to allow [co-issue from different warps] to benefit
/// from inter-warp correlations in divergence patterns", ISCA'12, abstract; the paper's permutation is not
/// reachable): even warps keep their lanes, odd warps mirror them (thread `l` in lane `w - 1 - l`), so that
/// two warps whose first threads are active occupy the two ends of the row. A thread keeps its lane for
/// the whole run (its registers stay in one bank), and groups of one warp compare unshuffled.
pub(super) fn shuffled_lanes(mask: u64, warp: u32, w: u32) -> u64 {
    if warp.is_multiple_of(2) || w == 0 {
        return mask;
    }
    mask.reverse_bits() >> (64 - w.min(64))
}

#[cfg(test)]
mod tests {
    use super::shuffled_lanes;

    #[test]
    fn odd_warps_mirror_their_lanes() {
        assert_eq!(shuffled_lanes(0b0011, 0, 4), 0b0011);
        assert_eq!(shuffled_lanes(0b0011, 1, 4), 0b1100);
        assert_eq!(shuffled_lanes(0x0000_ffff, 3, 32), 0xffff_0000);
        assert_eq!(shuffled_lanes(u64::MAX, 1, 64), u64::MAX);
        // Two warps with their first half active fit one row once one is mirrored.
        assert_eq!(shuffled_lanes(0xffff, 0, 32) & shuffled_lanes(0xffff, 1, 32), 0);
    }
}
