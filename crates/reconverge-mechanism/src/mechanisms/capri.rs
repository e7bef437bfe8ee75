//! CAPRI, the compaction-adequacy predictor (Rhu & Erez, ISCA'12, as seed 002 describes it).
//!
//! Thread block compaction ([`crate::CtaStack`]) with a decision in front of the stall. A warp whose
//! lanes all go the same way at a sync point does not stall (its UMask bit is 0): it goes ahead. A warp
//! whose lanes split looks the branch up in the compaction-adequacy prediction table (CAPT): one entry
//! per branch pc with a 1-bit history, allocated "adequate" on a miss (the conservative policy). When it
//! says adequate, the warp stalls and is compacted with the CTA's other stalled warps (UMask 1);
//! otherwise it bypasses the synchronisation and goes ahead. When the instance resolves, the compaction
//! unit's result updates the entry: adequate iff compacting the instance's divergent threads forms fewer
//! warps than they occupied.

use crate::adapters::cta_stack::{CompactionPolicy, Decision};
use crate::types::Pc;
use std::collections::HashMap;

/// The compaction-adequacy prediction table of one SM: branch pc → last outcome (true = adequate).
#[derive(Clone, Debug, Default)]
pub struct Capt {
    entries: HashMap<Pc, bool>,
}

impl Capt {
    /// The prediction for the branch at `pc`, allocating an "adequate" entry on a miss.
    pub fn predict(&mut self, pc: Pc) -> bool {
        *self.entries.entry(pc).or_insert(true)
    }

    /// Records the outcome of an instance of the branch at `pc`.
    pub fn update(&mut self, pc: Pc, adequate: bool) {
        self.entries.insert(pc, adequate);
    }
}

/// CAPRI's policy. With `LIKELY` (`capri:lpc`), divergent branches that can leave their loop also
/// converge at their likely-convergence point (see [`crate::CtaStack`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct Capri<const LIKELY: bool = false>;

impl<const LIKELY: bool> CompactionPolicy for Capri<LIKELY> {
    type Table = Capt;
    const PREDICTOR: bool = true;
    const LIKELY: bool = LIKELY;

    fn name(&self) -> &'static str {
        if LIKELY {
            LIKELY_INFO.name
        } else {
            INFO.name
        }
    }

    fn arrive(&self, table: &mut Capt, pc: Pc, divergent: bool) -> Decision {
        if !divergent {
            return Decision { stall: false, predicted: None };
        }
        let adequate = table.predict(pc);
        Decision { stall: adequate, predicted: Some(adequate) }
    }

    fn learn(&self, table: &mut Capt, pc: Pc, adequate: bool) {
        table.update(pc, adequate);
    }
}

/// The registry's facts of `capri`.
pub(crate) const INFO: crate::Info = crate::Info::new(
    "capri",
    crate::Scope::Cta,
    "CAPRI (Rhu and Erez, ISCA 2012): thread block compaction where only branches predicted compaction-adequate wait",
)
.storage(&[
    crate::storage::common::CTA_STACK,
    crate::storage::common::CTA_STACK_POINTER,
    crate::storage::common::CTA_PENDING,
    crate::storage::common::WARP_THREADS,
    CAPT,
]);

/// The registry's facts of `capri:lpc`.
pub(crate) const LIKELY_INFO: crate::Info =
    crate::Info::new("capri:lpc", crate::Scope::Cta, "CAPRI with likely-convergence points")
        .outside_defaults()
        .storage(&[
            crate::storage::common::CTA_STACK_LPC,
            crate::storage::common::CTA_STACK_POINTER,
            crate::storage::common::CTA_PENDING,
            crate::storage::common::WARP_THREADS,
            CAPT,
        ]);

/// The compaction-adequacy prediction table beside TBC's structures: per SM, looked up by branch pc (a
/// fully associative tag match: flip-flops); 32 entries is our assumption (the model's table is
/// unbounded).
const CAPT: crate::storage::Part = {
    use crate::storage::{Cells, Part, Per, Size};
    Part::new(
        "CAPT",
        Per::Sm,
        Cells::FlipFlops,
        Size::Const(32),
        Size::Sum(&[Size::Const(1), Size::Pc, Size::Const(1)]),
        "{valid, branch pc, history}",
    )
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capt_starts_adequate_and_keeps_the_last_outcome() {
        let mut t = Capt::default();
        assert!(t.predict(7), "a miss allocates an adequate entry");
        t.update(7, false);
        assert!(!t.predict(7));
        assert!(t.predict(9), "entries are per branch pc");
        t.update(7, true);
        assert!(t.predict(7));
    }

    #[test]
    fn only_divergent_warps_consult_the_table() {
        let mut t = Capt::default();
        let d = Capri::<false>.arrive(&mut t, 3, false);
        assert_eq!(d, Decision { stall: false, predicted: None });
        assert!(t.entries.is_empty());
        assert_eq!(Capri::<false>.arrive(&mut t, 3, true), Decision { stall: true, predicted: Some(true) });
        Capri::<false>.learn(&mut t, 3, false);
        assert_eq!(Capri::<false>.arrive(&mut t, 3, true), Decision { stall: false, predicted: Some(false) });
    }
}
