//! The implicit per-warp reconvergence stack of GPGPU-Sim (post-dominator reconvergence).
//!
//! Entries are `{pc, rpc, mask}` (plus a call marker). The warp issues the top entry. After a divergent
//! branch the top entry becomes the reconvergence entry (`pc = ipdom`) and one entry per path is pushed,
//! fall-through first, so the taken path runs first. A path whose next pc reaches its `rpc` is popped,
//! exposing the entry below, which already waits at the reconvergence point. A call pushes a call entry;
//! when the call entry's pc reaches the function's virtual exit (every lane returned) it is popped and
//! the caller's entry resumes after the call.

use crate::adapters::pdom_rules::{self, PdomEntry};
use crate::adapters::per_warp::{WarpCtx, WarpTracker};
use crate::interface::Done;
use crate::interface::{EntryView, Flow};
use crate::types::{LaneMask, Pc};

/// The PDOM stack mechanism (its rules: the `pdom_rules` adapter).
#[derive(Clone, Copy, Debug, Default)]
pub struct PdomStack;

impl WarpTracker for PdomStack {
    type State = Vec<PdomEntry>;

    #[inline]
    fn name(&self) -> &'static str {
        INFO.name
    }

    #[inline]
    fn init(&self, entry: Pc, live: LaneMask) -> Self::State {
        pdom_rules::init(entry, live)
    }

    #[inline]
    fn select(&self, st: &Self::State, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        pdom_rules::select(st, live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &Self::State, pc: Pc, _mask: LaneMask, max: u32) -> u32 {
        pdom_rules::straight_run(st, pc, max)
    }

    #[inline]
    fn advance(&self, st: &mut Self::State, pc: Pc, _mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        pdom_rules::advance(st, pc, n, ctx.live)
    }

    #[inline]
    fn update(&self, st: &mut Self::State, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        pdom_rules::update(st, pc, mask, flow, ctx)
    }

    #[inline]
    fn depth(&self, st: &Self::State) -> usize {
        st.len()
    }

    #[inline]
    fn entries(&self, st: &Self::State) -> Vec<EntryView> {
        pdom_rules::entries(st)
    }
}

/// The registry's facts of `pdom`.
pub(crate) const INFO: crate::Info = crate::Info::new("pdom", crate::Scope::Warp, "the implicit per-warp reconvergence stack of GPGPU-Sim: reconverge at the immediate post-dominator of each divergent branch")
.storage(STORAGE);

/// What `pdom` stores: a stack per warp (a call entry is told apart by its rpc, the callee's virtual exit,
/// so an entry needs no type bit) and its pointer.
const STORAGE: &[crate::storage::Part] = {
    use crate::storage::{common, Cells, Part, Per};
    &[
        Part::new("stack", Per::Warp, Cells::Sram, common::STACK_ENTRIES, common::MASK_TWO_PCS, "{mask, pc, rpc}"),
        common::STACK_POINTER_PART,
    ]
};

#[cfg(test)]
mod diamond {
    use super::*;
    use crate::testing::{at_join, issues, program, DIAMOND};

    #[test]
    fn both_sides_run_then_the_warp_reconverges_at_the_join() {
        let t = issues(&PdomStack, &program(DIAMOND), 0b1111, 0b0001, 64);
        // GPGPU-Sim's order: the taken side (pushed last) first, then the fall-through side.
        assert_eq!(&t[2..5], &[(4, 0b0001), (2, 0b1110), (3, 0b1110)]);
        assert_eq!(at_join(&t), vec![0b1111]);
    }
}
