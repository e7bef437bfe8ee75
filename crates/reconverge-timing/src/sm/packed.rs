//! Co-issue in one cycle: SBI's two paths of a warp ([`Tracker::CO_ISSUE_PATHS`]: at most one group
//! after the lead, of the lead's hardware warp, under the rules below) and lane-packed issue
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
        // SBI co-issues one more path of the lead's own warp; the lane-packed bound any groups that fit.
        let (cta, nctx) = ((g / self.nctx) as usize, self.nctx);
        let lead_warp = self.core.hw_warp(cta, g % nctx);
        let mut extra = 0;
        // The lane-packed bound goes on after the lead in its policy's order; SBI looks at the whole order
        // for the lead warp's other path.
        let before: &[u32] = if T::CO_ISSUE_PATHS { &order[..pos] } else { &[] };
        for &o in order[pos + 1..].iter().chain(before) {
            if room == 0 || (T::CO_ISSUE_PATHS && extra == 1) {
                break;
            }
            if T::CO_ISSUE_PATHS && ((o / nctx) as usize != cta || self.core.hw_warp(cta, o % nctx) != lead_warp) {
                continue;
            }
            let Some(grp) = self.joiner(o, now, sched) else { continue };
            let op = self.timings[grp.pc as usize];
            let n = grp.mask.count_ones();
            let class = prog.info[grp.pc as usize].class;
            if n > room || op.unit != lead_op.unit || op.occupancy > lead_op.occupancy || class == InstClass::Mem {
                continue;
            }
            // SBI's pair runs on disjoint lanes of the warp (never the lead's lanes again).
            if T::CO_ISSUE_PATHS && grp.mask & lead.mask != 0 {
                continue;
            }
            self.packing = true;
            let issued = self.issue_one(o, &grp, sched, now, ctx, out);
            self.packing = false;
            let (busy, structure) = issued?;
            self.trace_issue(o, &grp, sched, now, busy, structure);
            out.issued += 1;
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

    /// Context `g`'s group, when it may join the cycle's packed issue at `now`: ready but for its unit,
    /// which the cycle's lead took (the caller checks that it is the lead's).
    fn joiner(&mut self, g: u32, now: u64, sched: usize) -> Option<Group> {
        match self.readiness_cached(g, now, sched) {
            Ok(grp) => Some(grp),
            Err(Wait { cause: Cause::Pipeline, .. }) => {
                // Only the unit (or the front end) failed when the lasting checks passed.
                if !matches!(self.asleep.get(g as usize), Some(Known::Ready { mem: false, .. })) {
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
