//! What a mechanism's hardware stores: each mechanism declares its structures once, in its own file, as
//! a list of [`Part`]s in its [`Info`](crate::Info) (`.storage(&[...])`), and `reconverge cost` turns
//! them into bits and area (docs/storage-cost.md).
//!
//! A [`Part`] is one structure: a name, where one copy of it lives ([`Per`]: each thread, warp, CTA or
//! the SM), how many entries one copy holds and how many bits each entry has (both [`Size`]s: small
//! expressions over the [`Geometry`], printable as formulas), and how it is built ([`Cells`]: SRAM read
//! one entry per access, or flip-flops read whole every cycle). An entry count that depends on the run
//! is a [`Size::Reached`]: the figure a run reached ([`Reach`]: the mechanism's structure size,
//! `max_stack_depth` / `max_paths` / `max_pool_warps`, or one of its `max_...` counters) or, with no run,
//! the worst case for the geometry.
//!
//! Symbols of the formulas: W threads per warp, N warps per SM, C warps per CTA, P bits of a pc, D bits
//! of a call depth, L entries of DWF's look-up table.

use std::fmt;

/// The geometry a storage model is evaluated at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Geometry {
    /// Threads per warp (W).
    pub warp_size: u32,
    /// Warps per SM (N).
    pub warps: u32,
    /// Warps per CTA (C).
    pub cta_warps: u32,
    /// Bits of a pc (P).
    pub pc_bits: u32,
    /// Bits of a call depth (D).
    pub depth_bits: u32,
    /// Entries of DWF's look-up table (L); 0 is a perfect table, sized as the warp pool's worst case.
    pub lut_entries: u32,
}

impl Geometry {
    /// The GTX 480's SM (48 warps of 32 threads), CTAs of 8 warps, a 30-bit pc, an 8-bit call depth and a
    /// perfect look-up table: the defaults of `reconverge cost`.
    pub const GTX480: Geometry =
        Geometry { warp_size: 32, warps: 48, cta_warps: 8, pc_bits: 30, depth_bits: 8, lut_entries: 0 };

    /// Threads per SM (W × N).
    pub fn sm_threads(&self) -> u64 {
        u64::from(self.warp_size) * u64::from(self.warps)
    }

    /// CTAs per SM: N / C, at least one.
    pub fn ctas(&self) -> u64 {
        (u64::from(self.warps) / u64::from(self.cta_warps.max(1))).max(1)
    }
}

/// Bits to count `0..=n`.
pub fn count_bits(n: u64) -> u64 {
    u64::from(64 - n.leading_zeros()).max(1)
}

/// Bits to name one of `n` things: ⌈log2 n⌉, at least 1.
pub fn index_bits(n: u64) -> u64 {
    count_bits(n.saturating_sub(1))
}

/// Where one copy of a structure lives, which decides how many copies an SM holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Per {
    /// One per thread (W × N per SM).
    Thread,
    /// One per warp (N per SM).
    Warp,
    /// One per CTA (N / C per SM).
    Cta,
    /// One per SM.
    Sm,
}

impl Per {
    /// Copies in one SM of `g`.
    pub fn copies(self, g: &Geometry) -> u64 {
        match self {
            Per::Thread => g.sm_threads(),
            Per::Warp => u64::from(g.warps),
            Per::Cta => g.ctas(),
            Per::Sm => 1,
        }
    }

    /// The name tables print.
    pub fn name(self) -> &'static str {
        match self {
            Per::Thread => "thread",
            Per::Warp => "warp",
            Per::Cta => "CTA",
            Per::Sm => "SM",
        }
    }
}

/// How a structure is built, which decides its area per bit.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cells {
    /// An SRAM array: one entry is read per access (a stack's top, a table row).
    Sram,
    /// Flip-flops: read whole every cycle (the arbiter's pc vector, a hot context, a pointer).
    FlipFlops,
}

impl Cells {
    /// The name tables print.
    pub fn name(self) -> &'static str {
        match self {
            Cells::Sram => "SRAM",
            Cells::FlipFlops => "flip-flops",
        }
    }
}

/// The figure of a run that sizes a structure at the depth reached.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Reach {
    /// The mechanism's structure size: `max_stack_depth`, `max_paths` or `max_pool_warps`, whichever it
    /// reports.
    Structure,
    /// One of the mechanism's `max_...` counters (`mechanism_counters`), such as `max_rt_entries`.
    Counter(&'static crate::interface::Counter),
}

impl Reach {
    /// The name of the statistic.
    pub fn name(self) -> &'static str {
        match self {
            Reach::Structure => "structure",
            Reach::Counter(c) => c.name,
        }
    }
}

/// A number of entries or bits: an expression over the [`Geometry`] (and, for [`Size::Reached`], a run).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Size {
    /// A constant.
    Const(u64),
    /// Threads per warp (W).
    W,
    /// Warps per SM (N).
    Warps,
    /// Warps per CTA (C).
    CtaWarps,
    /// Threads per SM (W·N).
    SmThreads,
    /// Threads per CTA (W·C).
    CtaThreads,
    /// CTAs per SM (N/C, at least one).
    Ctas,
    /// Bits of a pc (P).
    Pc,
    /// Bits of a call depth (D).
    Depth,
    /// The look-up table's entries (L), or the size given for a perfect table.
    Lut(&'static Size),
    /// Bits to count 0..=x: ⌈log2(x + 1)⌉.
    CountBits(&'static Size),
    /// Bits to name one of x: ⌈log2 x⌉ (at least 1).
    IndexBits(&'static Size),
    /// A sum.
    Sum(&'static [Size]),
    /// A product.
    Product(&'static [Size]),
    /// What a run reached ([`Reach`]); the worst case given with no run.
    Reached(Reach, &'static Size),
}

impl Size {
    /// The value at geometry `g`; `reached` answers [`Size::Reached`] (`None`, or an answer `None`: the
    /// worst case).
    pub fn eval(&self, g: &Geometry, reached: Option<&dyn Fn(Reach) -> Option<u64>>) -> u64 {
        let e = |s: &Size| s.eval(g, reached);
        match self {
            Size::Const(n) => *n,
            Size::W => u64::from(g.warp_size),
            Size::Warps => u64::from(g.warps),
            Size::CtaWarps => u64::from(g.cta_warps),
            Size::SmThreads => g.sm_threads(),
            Size::CtaThreads => u64::from(g.warp_size) * u64::from(g.cta_warps),
            Size::Ctas => g.ctas(),
            Size::Pc => u64::from(g.pc_bits),
            Size::Depth => u64::from(g.depth_bits),
            Size::Lut(perfect) => match g.lut_entries {
                0 => e(perfect),
                n => u64::from(n),
            },
            Size::CountBits(x) => count_bits(e(x)),
            Size::IndexBits(x) => index_bits(e(x)),
            Size::Sum(xs) => xs.iter().map(e).sum(),
            Size::Product(xs) => xs.iter().map(e).product(),
            Size::Reached(key, worst) => reached.and_then(|f| f(*key)).unwrap_or_else(|| e(worst)),
        }
    }

    /// The statistic that sizes this expression at the depth reached, if any.
    pub fn reach(&self) -> Option<Reach> {
        match self {
            Size::Reached(key, _) => Some(*key),
            Size::Lut(x) | Size::CountBits(x) | Size::IndexBits(x) => x.reach(),
            Size::Sum(xs) | Size::Product(xs) => xs.iter().find_map(Size::reach),
            _ => None,
        }
    }

    /// Whether printing needs parentheses inside a product.
    fn compound(&self) -> bool {
        matches!(self, Size::Sum(xs) if xs.len() > 1)
    }
}

/// The formula, in the symbols of the module's documentation (a [`Size::Reached`] prints its worst case).
impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Size::Const(n) => write!(f, "{n}"),
            Size::W => f.write_str("W"),
            Size::Warps => f.write_str("N"),
            Size::CtaWarps => f.write_str("C"),
            Size::SmThreads => f.write_str("NW"),
            Size::CtaThreads => f.write_str("CW"),
            Size::Ctas => f.write_str("N/C"),
            Size::Pc => f.write_str("P"),
            Size::Depth => f.write_str("D"),
            Size::Lut(_) => f.write_str("L"),
            Size::CountBits(x) => write!(f, "log2({x}+1)"),
            Size::IndexBits(x) => write!(f, "log2({x})"),
            Size::Sum(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" + ")?;
                    }
                    write!(f, "{x}")?;
                }
                Ok(())
            }
            Size::Product(xs) => {
                for (i, x) in xs.iter().enumerate() {
                    let after_const = i > 0 && matches!(xs[i - 1], Size::Const(_));
                    if i > 0 && !(after_const && !x.compound() && !matches!(x, Size::Const(_))) {
                        f.write_str("·")?;
                    }
                    if x.compound() {
                        write!(f, "({x})")?;
                    } else {
                        write!(f, "{x}")?;
                    }
                }
                Ok(())
            }
            Size::Reached(_, worst) => write!(f, "{worst}"),
        }
    }
}

/// One structure of a mechanism's hardware.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Part {
    /// Its name in tables.
    pub name: &'static str,
    /// Where one copy lives.
    pub per: Per,
    /// How it is built.
    pub cells: Cells,
    /// Entries of one copy.
    pub entries: Size,
    /// Bits of one entry.
    pub bits: Size,
    /// The fields of an entry, for readers (`{mask, pc, rpc}`).
    pub fields: &'static str,
}

impl Part {
    /// A structure: `entries` entries of `bits` bits (fields named by `fields`) per copy, one copy per
    /// `per`, built of `cells`.
    pub const fn new(
        name: &'static str,
        per: Per,
        cells: Cells,
        entries: Size,
        bits: Size,
        fields: &'static str,
    ) -> Part {
        Part { name, per, cells, entries, bits, fields }
    }

    /// Bits in one SM of `g`: copies × entries × bits per entry (`reached`: see [`Size::eval`]).
    pub fn sm_bits(&self, g: &Geometry, reached: Option<&dyn Fn(Reach) -> Option<u64>>) -> u64 {
        self.per.copies(g) * self.entries.eval(g, reached) * self.bits.eval(g, reached)
    }
}

/// Bits in one SM of `g` of every part of `parts`.
pub fn sm_bits(parts: &[Part], g: &Geometry, reached: Option<&dyn Fn(Reach) -> Option<u64>>) -> u64 {
    parts.iter().map(|p| p.sm_bits(g, reached)).sum()
}

/// Formulas shared by several mechanisms' declarations.
pub mod common {
    use super::{Cells, Part, Per, Reach, Size};

    /// The worst case of a per-warp reconvergence stack: at most W nested reconvergence entries (each
    /// mask strictly inside the one below) and at most W pending paths (disjoint masks). Call entries
    /// come on top (recursion is unbounded; real GPUs spill the stack to memory).
    pub const STACK_WORST: Size = Size::Product(&[Size::Const(2), Size::W]);
    /// A per-warp stack sized by `max_stack_depth`.
    pub const STACK_ENTRIES: Size = Size::Reached(Reach::Structure, &STACK_WORST);
    /// A per-warp list of disjoint paths: at most one per thread.
    pub const PATHS_ENTRIES: Size = Size::Reached(Reach::Structure, &Size::W);
    /// A path `{pc, depth, mask}`: P + D + W bits.
    pub const PATH_BITS: Size = Size::Sum(&[Size::Pc, Size::Depth, Size::W]);
    /// One entry per copy.
    pub const ONE: Size = Size::Const(1);
    /// A stack entry `{mask, pc, rpc}`: W + 2P bits.
    pub const MASK_TWO_PCS: Size = Size::Sum(&[Size::W, Size::Product(&[Size::Const(2), Size::Pc])]);
    /// A per-warp list of paths `{pc, depth, mask}` sized by `max_paths` (`minpc`, the `sorted:` orders,
    /// `thread-frontiers`).
    pub const PATH_LIST: &[Part] =
        &[Part::new("path list", Per::Warp, Cells::Sram, PATHS_ENTRIES, PATH_BITS, "{pc, depth, mask}")];
    /// The worst case of a CTA-wide stack (TBC, CAPRI): the per-warp bound over the CTA's threads.
    pub const CTA_STACK_WORST: Size = Size::Product(&[Size::Const(2), Size::CtaThreads]);
    /// A CTA-wide stack entry: pc, rpc, the block-wide mask and the count of warps still to arrive.
    const CTA_ENTRY: &[Size] =
        &[Size::Product(&[Size::Const(2), Size::Pc]), Size::CtaThreads, Size::CountBits(&Size::CtaWarps)];
    /// The CTA-wide stack of thread block compaction (TBC, CAPRI), sized by `max_stack_depth`.
    pub const CTA_STACK: Part = Part::new(
        "CTA-wide stack",
        Per::Cta,
        Cells::Sram,
        Size::Reached(Reach::Structure, &CTA_STACK_WORST),
        Size::Sum(CTA_ENTRY),
        "{pc, rpc, block-wide mask, WCnt}",
    );
    /// The CTA-wide stack with likely-convergence points (`tbc:lpc`, `capri:lpc`): each entry adds the
    /// LPC and the depth of its LPC entry (LPos).
    pub const CTA_STACK_LPC: Part = Part::new(
        "CTA-wide stack",
        Per::Cta,
        Cells::Sram,
        Size::Reached(Reach::Structure, &CTA_STACK_WORST),
        Size::Sum(&[Size::Sum(CTA_ENTRY), Size::Pc, Size::CountBits(&CTA_STACK_WORST)]),
        "{pc, rpc, block-wide mask, WCnt, LPC, LPos}",
    );
    /// The CTA-wide stack's pointer.
    pub const CTA_STACK_POINTER: Part =
        Part::new("stack pointer", Per::Cta, Cells::FlipFlops, ONE, Size::CountBits(&CTA_STACK_WORST), "{top}");
    /// The taken and not-taken threads the CTA's warps gather at a sync point.
    pub const CTA_PENDING: Part =
        Part::new("pending masks", Per::Cta, Cells::FlipFlops, Size::Const(2), Size::CtaThreads, "{taken | not taken}");
    /// The thread of each lane of each dynamic warp the compaction unit formed (an index in the CTA).
    pub const WARP_THREADS: Part = Part::new(
        "compacted warps",
        Per::Sm,
        Cells::Sram,
        Size::Warps,
        Size::Product(&[Size::W, Size::IndexBits(&Size::CtaThreads)]),
        "{thread of each lane}",
    );
    /// A pointer into a per-warp stack of the worst-case depth.
    pub const STACK_POINTER: Size = Size::CountBits(&STACK_WORST);

    /// The pointer of a per-warp stack of the worst-case depth.
    pub const STACK_POINTER_PART: Part =
        Part::new("stack pointer", Per::Warp, Cells::FlipFlops, ONE, STACK_POINTER, "{top}");

    /// A per-thread pc table in flip-flops (every thread's entry read each cycle to form the next group):
    /// `bits` per thread, holding `fields`.
    pub const fn thread_pcs(bits: Size, fields: &'static str) -> Part {
        Part::new("thread pcs", Per::Thread, Cells::FlipFlops, ONE, bits, fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: Geometry = Geometry { warp_size: 8, warps: 4, cta_warps: 2, pc_bits: 30, depth_bits: 8, lut_entries: 0 };

    #[test]
    fn expressions_evaluate_and_print_as_formulas() {
        let e = Size::Sum(&[Size::W, Size::Product(&[Size::Const(2), Size::Pc])]);
        assert_eq!((e.eval(&G, None), e.to_string().as_str()), (68, "W + 2P"));
        let p = Size::Product(&[Size::Warps, Size::Sum(&[Size::Const(1), Size::Pc])]);
        assert_eq!((p.eval(&G, None), p.to_string().as_str()), (124, "N·(1 + P)"));
        assert_eq!(Size::CountBits(&Size::W).eval(&G, None), 4);
        assert_eq!(Size::IndexBits(&Size::SmThreads).eval(&G, None), 5);
        assert_eq!(Size::Lut(&Size::Const(9)).eval(&G, None), 9);
        assert_eq!(Size::Lut(&Size::Const(9)).eval(&Geometry { lut_entries: 64, ..G }, None), 64);
        assert_eq!(G.ctas(), 2);
    }

    #[test]
    fn a_reached_size_takes_the_run_s_figure_or_the_worst_case() {
        let s = common::STACK_ENTRIES;
        assert_eq!(s.eval(&G, None), 16);
        let run = |r: Reach| (r == Reach::Structure).then_some(3);
        assert_eq!(s.eval(&G, Some(&run)), 3);
        let none = |_: Reach| None;
        assert_eq!(s.eval(&G, Some(&none)), 16, "no figure: the worst case");
        let part = Part::new("stack", Per::Warp, Cells::Sram, s, Size::W, "{mask}");
        assert_eq!(part.sm_bits(&G, Some(&run)), 4 * 3 * 8);
        assert_eq!(part.entries.reach(), Some(Reach::Structure));
        assert_eq!(part.bits.reach(), None);
    }
}
