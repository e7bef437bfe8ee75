//! Hardware cost: the storage and area of every mechanism, and the analytic cost of seed 003 §3's two
//! path-tracking units (`docs/storage-cost.md`, `docs/path-tracking-cost.md`).
//!
//! **Storage and area.** Each mechanism declares its structures in its own file
//! ([`reconverge_mechanism::storage`]); [`storage_cost`] evaluates them for a geometry, at the worst case
//! and at the depth a run reached, and [`AreaModel`] turns bits into mm² at 40 nm (the GTX 480's node)
//! with the constants and their derivation in one place ([`AreaModel::GF100_40NM`]). [`seed001_check`]
//! tests seed 001's "estimate 5% chip area for SIMT stack" against `pdom`'s stack.
//!
//! **The two path-tracking units** ([`unit_cost`]): storage bits (the `arbiter` and `simty`
//! mechanisms' declared storage at the worst case, so the two tables never disagree), comparators and
//! multiplexers as functions of the threads per warp W, the warps N, the pc width P and the call-depth
//! width D. These are counts of structures, not synthesis results (`docs/path-tracking-cost.md` gives
//! every formula).
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

use reconverge_mechanism::storage::{Cells, Geometry, Part, Reach};
use reconverge_mechanism::{Info, Mechanism};
use reconverge_records::RunRecord;
use std::collections::BTreeMap;

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

impl Unit {
    /// The mechanism whose declared storage the unit holds.
    pub fn mechanism(self) -> Mechanism {
        match self {
            Unit::Arbiter => Mechanism::Arbiter,
            Unit::SortedList => Mechanism::Simty,
        }
    }
}

impl CostParams {
    /// The storage model's geometry: W, N warps, P and D (the units have no CTA-wide or look-up table).
    pub fn geometry(self) -> Geometry {
        Geometry {
            warp_size: self.warp_size,
            warps: self.warps,
            cta_warps: 1,
            pc_bits: self.pc_bits,
            depth_bits: self.depth_bits,
            lut_entries: 0,
        }
    }
}

/// The cost of `unit` with parameters `p`: storage from the mechanism's declaration at the worst case
/// (SRAM parts are the RAM bits), logic counted here.
pub fn unit_cost(unit: Unit, p: CostParams) -> UnitCost {
    let g = p.geometry();
    let parts = unit.mechanism().info().storage;
    let storage_bits = parts.iter().map(|x| x.sm_bits(&g, None)).sum();
    let ram_bits = parts.iter().filter(|x| x.cells == Cells::Sram).map(|x| x.sm_bits(&g, None)).sum();
    let w = u64::from(p.warp_size);
    let (comparators, multiplexers) = match unit {
        Unit::Arbiter => ((w - 1) + w, w - 1),
        Unit::SortedList => (6 + 1, 3 + 2),
    };
    UnitCost { storage_bits, ram_bits, comparators, multiplexers }
}

/// Area per bit and the SM's area at one technology node. Every value is an assumption, documented
/// where it is defined ([`AreaModel::GF100_40NM`]) and in `docs/storage-cost.md`.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct AreaModel {
    /// The node, in nm.
    pub node_nm: u32,
    /// Area of one 6T SRAM cell, µm².
    pub sram_cell_um2: f64,
    /// Area of a small SRAM array over its cells' area (decoders, sense amplifiers, write drivers).
    pub sram_overhead: f64,
    /// Area of one flip-flop bit, µm².
    pub flip_flop_um2: f64,
    /// The die's area, mm².
    pub die_mm2: f64,
    /// SMs on the die.
    pub sms: u32,
    /// The share of the die the SMs cover together.
    pub sm_share: f64,
}

impl AreaModel {
    /// NVIDIA GF100 (GTX 480) at TSMC 40 nm. Assumptions:
    /// - SRAM: TSMC's 40 nm high-density 6T cell, 0.242 µm², times 2 for the periphery of small arrays
    ///   (tens of entries: decoders and sense amplifiers cost about as much as the cells), so 0.484 µm²
    ///   per bit;
    /// - flip-flops: a standard-cell D flip-flop, Nangate's 45 nm open library `DFF_X1` (4.522 µm²)
    ///   scaled by (40/45)² to 3.57 µm² per bit (no enable or read multiplexer counted);
    /// - the SM: GF100 is 529 mm² with 16 SMs; we take the SMs to cover half of the die (the other half
    ///   is the L2, the memory controllers and PHYs, the raster and geometry engines and I/O, as die
    ///   photographs show), so 529 × 0.5 / 16 = 16.5 mm² per SM.
    pub const GF100_40NM: AreaModel = AreaModel {
        node_nm: 40,
        sram_cell_um2: 0.242,
        sram_overhead: 2.0,
        flip_flop_um2: 4.522 * (40.0 * 40.0) / (45.0 * 45.0),
        die_mm2: 529.0,
        sms: 16,
        sm_share: 0.5,
    };

    /// Area of one bit built of `cells`, µm².
    pub fn um2_per_bit(&self, cells: Cells) -> f64 {
        match cells {
            Cells::Sram => self.sram_cell_um2 * self.sram_overhead,
            Cells::FlipFlops => self.flip_flop_um2,
        }
    }

    /// Area of `bits` bits of `cells`, mm².
    pub fn mm2(&self, cells: Cells, bits: u64) -> f64 {
        bits as f64 * self.um2_per_bit(cells) * 1e-6
    }

    /// One SM's area, mm².
    pub fn sm_mm2(&self) -> f64 {
        self.die_mm2 * self.sm_share / f64::from(self.sms)
    }

    /// `mm2` per SM as a share of the SM (0..1).
    pub fn of_sm(&self, mm2: f64) -> f64 {
        mm2 / self.sm_mm2()
    }

    /// `mm2` per SM, in every SM, as a share of the die (0..1).
    pub fn of_chip(&self, mm2: f64) -> f64 {
        mm2 * f64::from(self.sms) / self.die_mm2
    }
}

/// The figures runs reached, which size a mechanism's structures at the depth reached: the largest
/// structure (`max_stack_depth`, `max_paths` or `max_pool_warps`) and the `max_...` counters, each the
/// maximum over the runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    /// The largest structure, if a run reported one.
    pub structure: Option<u64>,
    /// The mechanism's counters, by name (maximum over the runs).
    pub counters: BTreeMap<String, u64>,
    /// Runs the figures come from.
    pub runs: usize,
}

impl Reached {
    /// The figures of `runs` (all of one mechanism), whatever their outcome: a partial run's figures
    /// are what it reached until it stopped.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunRecord>) -> Reached {
        let mut r = Reached::default();
        for run in runs {
            r.runs += 1;
            if let Some(s) = run.max_stack_depth.or(run.max_paths).or(run.max_pool_warps) {
                r.structure = Some(r.structure.map_or(s, |x| x.max(s)));
            }
            for (k, v) in &run.mechanism_counters {
                if let Some(v) = v.as_u64() {
                    let e = r.counters.entry(k.clone()).or_insert(v);
                    *e = (*e).max(v);
                }
            }
        }
        r
    }

    /// The figure `key` names, if the runs reported it.
    pub fn get(&self, key: Reach) -> Option<u64> {
        match key {
            Reach::Structure => self.structure,
            Reach::Counter(c) => self.counters.get(c.name).copied(),
        }
    }
}

/// One structure of a mechanism, evaluated.
#[derive(Clone, Debug, PartialEq)]
pub struct PartCost {
    /// The structure.
    pub part: Part,
    /// Copies in one SM.
    pub copies: u64,
    /// Bits of one entry.
    pub entry_bits: u64,
    /// Entries of one copy at the worst case.
    pub entries_worst: u64,
    /// Entries of one copy at the depth reached (the worst case when no run reported the figure, or when
    /// the structure does not depend on the run).
    pub entries_reached: u64,
    /// The statistic that sizes it at the depth reached, if any, and whether the runs reported it.
    pub sized_by: Option<(Reach, bool)>,
    /// Bits per SM at the worst case.
    pub bits_worst: u64,
    /// Bits per SM at the depth reached.
    pub bits_reached: u64,
    /// mm² per SM at the worst case.
    pub mm2_worst: f64,
    /// mm² per SM at the depth reached.
    pub mm2_reached: f64,
}

/// Every structure of `info` at geometry `g`, at the worst case and at the depth `reached` (`None`:
/// no run, so the worst case), with its area under `area`.
pub fn storage_cost(info: &Info, g: &Geometry, reached: Option<&Reached>, area: &AreaModel) -> Vec<PartCost> {
    let lookup = |k: Reach| reached.and_then(|r| r.get(k));
    info.storage
        .iter()
        .map(|p| {
            let copies = p.per.copies(g);
            let entry_bits = p.bits.eval(g, None);
            let entries_worst = p.entries.eval(g, None);
            let entries_reached = p.entries.eval(g, Some(&lookup));
            let sized_by = p.entries.reach().map(|k| (k, lookup(k).is_some()));
            let (bits_worst, bits_reached) =
                (copies * entries_worst * entry_bits, copies * entries_reached * entry_bits);
            PartCost {
                part: *p,
                copies,
                entry_bits,
                entries_worst,
                entries_reached,
                sized_by,
                bits_worst,
                bits_reached,
                mm2_worst: area.mm2(p.cells, bits_worst),
                mm2_reached: area.mm2(p.cells, bits_reached),
            }
        })
        .collect()
}

/// The statistic [`Reach::Structure`] names for mechanism `m`: `max_stack_depth`, `max_paths` or
/// `max_pool_warps`.
pub fn structure_stat(m: Mechanism) -> &'static str {
    fn kind<T: reconverge_mechanism::Tracker>(_: &T) -> reconverge_mechanism::Structure {
        T::STRUCTURE
    }
    match reconverge_mechanism::with_tracker!(m, |t| kind(t)) {
        reconverge_mechanism::Structure::Stack => "max_stack_depth",
        reconverge_mechanism::Structure::Paths => "max_paths",
        reconverge_mechanism::Structure::Pool => "max_pool_warps",
    }
}

/// Bits per SM of a mechanism at the depth reached in one run (`compare`'s storage column).
pub fn run_storage_bits(info: &Info, g: &Geometry, run: &RunRecord) -> u64 {
    let reached = Reached::of([run]);
    storage_cost(info, g, Some(&reached), &AreaModel::GF100_40NM).iter().map(|c| c.bits_reached).sum()
}

/// Seed 001's "estimate 5% chip area for SIMT stack" (citing Fung et al., MICRO 2007), checked against a
/// mechanism's storage at the worst case and at the depth reached: shares of the SM and of the chip,
/// built as SRAM (as declared) and, for comparison, all of it as flip-flops. The seed reads it as the
/// stack's (`pdom`: the stack and its pointer); the paper's abstract attaches its area estimate to the
/// DWF hardware ("improves performance by an average of 20.7% for an estimated area increase of ..."),
/// so `cost` checks both.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seed001 {
    /// Bits per SM, worst case and reached.
    pub bits: [u64; 2],
    /// mm² per SM as declared (SRAM stack), worst case and reached.
    pub mm2: [f64; 2],
    /// mm² per SM if every bit were a flip-flop, worst case and reached.
    pub mm2_flip_flops: [f64; 2],
    /// The stack entries per warp, worst case and reached.
    pub depth: [u64; 2],
}

/// The claim: 5% of the chip.
pub const SEED001_SHARE: f64 = 0.05;

/// Seed 001's check of mechanism `info` at geometry `g` with its `reached` figures.
pub fn seed001_check(info: &Info, g: &Geometry, reached: Option<&Reached>, area: &AreaModel) -> Seed001 {
    let rows = storage_cost(info, g, reached, area);
    let sum = |f: &dyn Fn(&PartCost) -> f64| rows.iter().map(f).sum::<f64>();
    let stack = rows.iter().find(|c| c.sized_by.is_some());
    Seed001 {
        bits: [rows.iter().map(|c| c.bits_worst).sum(), rows.iter().map(|c| c.bits_reached).sum()],
        mm2: [sum(&|c| c.mm2_worst), sum(&|c| c.mm2_reached)],
        mm2_flip_flops: [
            area.mm2(Cells::FlipFlops, rows.iter().map(|c| c.bits_worst).sum()),
            area.mm2(Cells::FlipFlops, rows.iter().map(|c| c.bits_reached).sum()),
        ],
        depth: stack.map_or([0, 0], |c| [c.entries_worst, c.entries_reached]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reconverge_mechanism::Counter;

    fn p(w: u32) -> CostParams {
        CostParams { warp_size: w, warps: 8, pc_bits: 30, depth_bits: 8 }
    }

    #[test]
    fn hand_computed_counts() {
        let a = unit_cost(Unit::Arbiter, p(4));
        assert_eq!(a, UnitCost { storage_bits: 8 * 4 * 39, ram_bits: 0, comparators: 7, multiplexers: 3 });
        let s = unit_cost(Unit::SortedList, p(4));
        // HCT 2*8*(1+38+4) = 688; CCT 8*(4*(38+4) + 3) = 1368 of which the 8*4*42 = 1344 bits of the
        // table are RAM (its 3-bit pointers are registers, as in hw/sorted_list.v); sorter 3 + 4 + 2 = 9.
        assert_eq!(s, UnitCost { storage_bits: 688 + 1368 + 9, ram_bits: 1344, comparators: 7, multiplexers: 5 });
    }

    #[test]
    fn the_area_constants_are_the_documented_ones() {
        let a = AreaModel::GF100_40NM;
        assert!((a.um2_per_bit(Cells::Sram) - 0.484).abs() < 1e-9);
        assert!((a.um2_per_bit(Cells::FlipFlops) - 3.573).abs() < 1e-3);
        assert!((a.sm_mm2() - 16.53).abs() < 0.01);
        assert!((a.mm2(Cells::Sram, 1_000_000) - 0.484).abs() < 1e-9);
        assert!((a.of_chip(a.sm_mm2()) - 16.0 * 16.53 / 529.0).abs() < 1e-3);
    }

    #[test]
    fn pdom_is_sized_by_the_depth_reached_and_scales_with_the_warp() {
        let g = Geometry::GTX480;
        let reached = Reached { structure: Some(4), ..Reached::default() };
        let rows = storage_cost(Mechanism::Pdom.info(), &g, Some(&reached), &AreaModel::GF100_40NM);
        let stack = &rows[0];
        // 48 warps × 64 entries × (32 + 2·30) bits; reached: 4 entries.
        assert_eq!((stack.bits_worst, stack.bits_reached), (48 * 64 * 92, 48 * 4 * 92));
        assert_eq!(stack.sized_by, Some((Reach::Structure, true)));
        let pointer = &rows[1];
        assert_eq!((pointer.bits_worst, pointer.bits_reached, pointer.sized_by), (48 * 7, 48 * 7, None));
        let g16 = Geometry { warp_size: 16, ..g };
        let w16 = storage_cost(Mechanism::Pdom.info(), &g16, None, &AreaModel::GF100_40NM);
        assert_eq!(w16[0].bits_worst, 48 * 32 * 76);
        let none = storage_cost(Mechanism::Pdom.info(), &g, Some(&Reached::default()), &AreaModel::GF100_40NM);
        assert_eq!(none[0].sized_by, Some((Reach::Structure, false)), "no figure: the worst case");
        assert_eq!(none[0].bits_reached, none[0].bits_worst);
    }

    #[test]
    fn seed001_compares_the_stack_with_the_sm_and_the_chip() {
        let a = AreaModel::GF100_40NM;
        let c = seed001_check(Mechanism::Pdom.info(), &Geometry::GTX480, None, &a);
        assert_eq!(c.depth, [64, 64]);
        assert_eq!(c.bits[0], 48 * (64 * 92 + 7));
        assert!(c.mm2_flip_flops[0] > 7.0 * c.mm2[0]);
        assert!(a.of_sm(c.mm2[0]) < SEED001_SHARE, "an SRAM stack is well under 5% of an SM");
    }

    #[test]
    fn reached_figures_are_maxima_over_the_runs() {
        let mut a = RunRecord { max_paths: Some(3), ..RunRecord::default() };
        a.mechanism_counters.insert("max_rt_entries".into(), 2.into());
        let mut b = RunRecord { max_paths: Some(5), ..RunRecord::default() };
        b.mechanism_counters.insert("max_rt_entries".into(), 1.into());
        let r = Reached::of([&a, &b]);
        const RT: Counter = Counter::max("max_rt_entries", "");
        const BARRIERS: Counter = Counter::max("max_barriers", "");
        assert_eq!((r.get(Reach::Structure), r.get(Reach::Counter(&RT)), r.runs), (Some(5), Some(2), 2));
        assert_eq!(r.get(Reach::Counter(&BARRIERS)), None);
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
