//! Thread block compaction (Fung & Aamodt, HPCA'11; seed 002 §II.B and Fig. 3).
//!
//! A CTA-wide reconvergence stack ([`super::CtaStack`]) in which every warp that reaches a conditional
//! branch, call or divergent return stalls until all the warps of the CTA's top entry have arrived (the
//! entry's WCnt reaches zero); then the warp compaction unit forms the fewest warps the home-lane
//! constraint allows for each path, and again at the reconvergence point.

use super::cta_stack::{CompactionPolicy, Decision};
use crate::types::Pc;

/// TBC's policy: every arriving warp waits for the CTA.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tbc;

impl CompactionPolicy for Tbc {
    type Table = ();
    const PREDICTOR: bool = false;

    fn name(&self) -> &'static str {
        "tbc"
    }

    fn arrive(&self, _table: &mut (), _pc: Pc, _divergent: bool) -> Decision {
        Decision { stall: true, predicted: None }
    }

    fn learn(&self, _table: &mut (), _pc: Pc, _adequate: bool) {}
}
