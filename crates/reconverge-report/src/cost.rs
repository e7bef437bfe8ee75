//! Analytic hardware cost of seed 003 §3's two path-tracking units, derived from the structures the
//! `arbiter` and `simty` mechanisms model: storage bits, comparators and multiplexers as functions of the
//! threads per warp W, the warps N, the pc width P and the call-depth width D. These are counts of
//! structures, not synthesis results (`docs/path-tracking-cost.md` gives every formula).
//!
//! - **Arbiter** (per-thread pcs): a table of N × W entries `{valid, pc, depth}`; per warp selection a
//!   reduction tree over W keys `(!depth, pc)` (one (D+P)-bit magnitude comparator and one 2:1
//!   (D+P)-bit multiplexer per node, W − 1 nodes) and W (D+P)-bit equality comparators forming the mask.
//!   The simulator's `comparisons` counter counts the same 2W − 1 comparisons per selection.
//! - **Sorted list** (Simty): two hot context tables per warp `{valid, pc, depth, mask}`, a cold context
//!   table of W entries per warp `{pc, depth, mask}` with a stack pointer, the compact-sort unit (order
//!   and equality comparators for the 3 pairs of its 3 inputs; one 3:1 multiplexer per output x, y, z),
//!   and the background sorter shared by all warps (one comparator of y against a CCT entry, two 2:1
//!   multiplexers for the swap, a cursor and a warp counter).

/// Which unit.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
pub enum Unit {
    /// Per-thread pc arbitration.
    Arbiter,
    /// Simty's sorted context table (HCT + CCS + CCT).
    SortedList,
}

impl Unit {
    /// The name in tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Arbiter => "arbiter",
            Unit::SortedList => "sorted_list",
        }
    }
}

/// The parameters of a cost estimate.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CostParams {
    /// Threads per warp.
    pub warp_size: u32,
    /// Warps.
    pub warps: u32,
    /// Bits of a pc.
    pub pc_bits: u32,
    /// Bits of a call depth.
    pub depth_bits: u32,
}

/// The counted cost of one unit.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
pub struct UnitCost {
    /// Bits of state (registers or RAM).
    pub storage_bits: u64,
    /// The part of `storage_bits` in narrow tables read one entry at a time (the CCT), which an FPGA
    /// puts in RAM blocks; the rest is read whole every cycle and needs flip-flops.
    pub ram_bits: u64,
    /// Comparators (magnitude or equality, each over a whole key).
    pub comparators: u64,
    /// Multiplexers (one per selecting node or output, whatever its number of inputs).
    pub multiplexers: u64,
}

/// Bits to count `0..=n`.
fn bits_for(n: u64) -> u64 {
    u64::from(64 - n.leading_zeros()).max(1)
}

/// The cost of `unit` with parameters `p`.
pub fn unit_cost(unit: Unit, p: CostParams) -> UnitCost {
    let (w, n) = (u64::from(p.warp_size), u64::from(p.warps));
    let key = u64::from(p.pc_bits + p.depth_bits);
    match unit {
        Unit::Arbiter => {
            UnitCost { storage_bits: n * w * (1 + key), ram_bits: 0, comparators: (w - 1) + w, multiplexers: w - 1 }
        }
        Unit::SortedList => {
            let hct = 2 * n * (1 + key + w);
            let cct = n * (w * (key + w) + bits_for(w));
            let sorter = bits_for(w) + bits_for(n) + 2;
            UnitCost { storage_bits: hct + cct + sorter, ram_bits: cct, comparators: 6 + 1, multiplexers: 3 + 2 }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(w: u32) -> CostParams {
        CostParams { warp_size: w, warps: 8, pc_bits: 30, depth_bits: 8 }
    }

    #[test]
    fn hand_computed_counts() {
        let a = unit_cost(Unit::Arbiter, p(4));
        assert_eq!(a, UnitCost { storage_bits: 8 * 4 * 39, ram_bits: 0, comparators: 7, multiplexers: 3 });
        let s = unit_cost(Unit::SortedList, p(4));
        // HCT 2*8*(1+38+4) = 688; CCT 8*(4*(38+4) + 3) = 1368; sorter 3 + 4 + 2 = 9.
        assert_eq!(s, UnitCost { storage_bits: 688 + 1368 + 9, ram_bits: 1368, comparators: 7, multiplexers: 5 });
    }

    #[test]
    fn arbitration_logic_grows_with_w_and_the_sorted_list_logic_does_not() {
        let (a8, s8) = (unit_cost(Unit::Arbiter, p(8)), unit_cost(Unit::SortedList, p(8)));
        assert!(a8.comparators > s8.comparators, "from 8 threads per warp the arbiter needs more comparators");
        let (a2, s2) = (unit_cost(Unit::Arbiter, p(2)), unit_cost(Unit::SortedList, p(2)));
        assert!(a2.comparators < s2.comparators);
        assert_eq!(unit_cost(Unit::SortedList, p(64)).comparators, s2.comparators);
    }
}
