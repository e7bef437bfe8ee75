//! Thread block compaction (Fung & Aamodt, HPCA'11; seed 002 §II.B and Fig. 3).
//!
//! A CTA-wide reconvergence stack ([`crate::CtaStack`]) in which every warp that reaches a conditional
//! branch, call or divergent return stalls until all the warps of the CTA's top entry have arrived (the
//! entry's WCnt reaches zero); then the warp compaction unit forms the fewest warps the home-lane
//! constraint allows for each path, and again at the reconvergence point. `tbc:lpc` adds the paper's
//! likely-convergence points.

use crate::cta_stack::{CompactionPolicy, Decision};
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
pub const INFO: crate::Info = crate::Info::new("tbc", crate::Scope::Cta, "thread block compaction (Fung and Aamodt, HPCA 2011): a CTA-wide stack; warps wait at every branch and are compacted");

/// The registry's facts of `tbc:lpc`.
pub const LIKELY_INFO: crate::Info = crate::Info::new(
    "tbc:lpc",
    crate::Scope::Cta,
    "thread block compaction with likely-convergence points: threads that stay in a loop meet at its continue point",
)
.outside_defaults();
