//! `reconverge cost`: the storage and area of every mechanism (worst case and at the depth the built-in
//! suite reached, seed 001's 5% check); with `--units` the analytic cost of seed 003 §3's two
//! path-tracking units, and with `--synth` their RTL (`hw/`) synthesized by Yosys.

use crate::suite_cmd::{check_kernel_names, check_warp_sizes, default_kernels_dir, load_manifest, record_of};
use crate::{outln, Failure};
use clap::Args;
use rayon::prelude::*;
use reconverge_mechanism::storage::{Cells, Geometry, Reach};
use reconverge_mechanism::Mechanism;
use reconverge_report::cost::{
    seed001_check, storage_cost, structure_stat, unit_cost, AreaModel, CostParams, PartCost, Reached, Unit,
    SEED001_SHARE,
};
use reconverge_report::records::RunRecord;
use reconverge_report::synth::{parse_stat, svg, Stat, SynthRow};
use reconverge_report::table::Table;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Arguments of `reconverge cost`.
#[derive(Args, Debug)]
pub(crate) struct CostArgs {
    #[command(flatten)]
    warp_sizes: crate::launch_args::WarpSizes,
    /// Warps per SM (default 48, the GTX 480's; with --units or --synth 8, seed 003's Figure 4).
    #[arg(long)]
    warps: Option<u32>,
    /// Warps per CTA, for the CTA-wide structures of tbc and capri.
    #[arg(long = "cta-warps", default_value_t = 8)]
    cta_warps: u32,
    /// Bits of a pc (Simty: 30, a word-aligned 32-bit RISC-V pc).
    #[arg(long = "pc-bits", default_value_t = 30)]
    pc_bits: u32,
    /// Bits of a call depth.
    #[arg(long = "depth-bits", default_value_t = 8)]
    depth_bits: u32,
    /// Mechanisms (repeatable; default: every mechanism of the registry).
    #[arg(long = "mechanism", value_parser = crate::launch_args::mechanism_values())]
    mechanisms: Vec<String>,
    /// The kernel directory whose kernels give the depth reached (default: kernels/ of this repository).
    #[arg(long)]
    kernels: Option<PathBuf>,
    /// Only these kernels give the depth reached (repeatable; default: every kernel of the suite).
    #[arg(long = "kernel")]
    only: Vec<String>,
    /// Worst case only: run no kernel.
    #[arg(long = "no-runs")]
    no_runs: bool,
    /// Warp-instruction limit per run (a run stopped by it still gives the depth it reached; 0 = no limit).
    #[arg(long, default_value_t = 50_000_000)]
    max_instructions: u64,
    /// Host threads for the runs (0 = all cores, at most 1024); results do not depend on it.
    #[arg(long, default_value_t = 0, value_parser = crate::launch_args::host_threads)]
    threads: usize,
    /// Print seed 003 §3's two path-tracking units instead (arbiter, Simty's sorted list): storage bits,
    /// comparators and multiplexers per warp size.
    #[arg(long)]
    units: bool,
    /// Print CSV (one row per structure and a `total` row per mechanism and warp size; with --units
    /// columns unit, warp_size, warps, storage_bits, comparators, multiplexers; with --synth unit,
    /// warp_size, warps, logic_cells, flip_flops, memory_bits, tool).
    #[arg(long)]
    csv: bool,
    /// Synthesize the two units' RTL of hw/ with Yosys (Cyclone IV E when this Yosys has `synth_intel`,
    /// otherwise a generic 4-LUT mapping) for every warp size and print logic cells, flip-flops and memory
    /// bits beside the analytic counts (docs/hardware.md).
    #[arg(long)]
    synth: bool,
    /// With --synth: the directory of the RTL (default: hw/ beside the kernels directory).
    #[arg(long, value_name = "DIR")]
    hw: Option<PathBuf>,
    /// With --synth: also write the plot of cells against threads per warp as SVG.
    #[arg(long, value_name = "FILE.svg")]
    svg: Option<String>,
}

impl CostArgs {
    /// The warp sizes asked for, or the mode's default.
    fn warp_sizes(&self) -> Vec<u32> {
        if self.units || self.synth {
            self.warp_sizes.or(&[2, 4, 8, 16, 32, 64])
        } else {
            self.warp_sizes.or(&[32])
        }
    }

    /// The warps per SM asked for, or the mode's default.
    fn warps(&self) -> u32 {
        self.warps.unwrap_or(if self.units || self.synth { 8 } else { 48 })
    }
}

/// Runs `reconverge cost`.
pub(crate) fn run(a: CostArgs) -> Result<(), Failure> {
    let warps = a.warps();
    if warps == 0 || warps > 1024 || a.pc_bits == 0 || a.pc_bits > 64 || a.depth_bits > 32 {
        return Err(Failure::input("--warps must be 1 to 1024, --pc-bits 1 to 64, --depth-bits 0 to 32".to_string()));
    }
    if a.units || a.synth {
        if !a.mechanisms.is_empty() || !a.only.is_empty() || a.no_runs || a.kernels.is_some() {
            return Err(Failure::input(
                "--mechanism, --kernel, --kernels and --no-runs apply to the storage table, not to --units or --synth",
            ));
        }
        if let Some(w) = a.warp_sizes().iter().find(|&&w| !(2..=64).contains(&w)) {
            return Err(Failure::input(format!("--warp-size {w}: warp sizes are 2 to 64")));
        }
        if a.synth {
            return synth_cmd(&a);
        }
    }
    if a.svg.is_some() || a.hw.is_some() {
        return Err(Failure::input("--svg and --hw apply to --synth"));
    }
    if a.units {
        return units_cmd(&a);
    }
    storage_cmd(&a)
}

/// `reconverge cost --units`: seed 003 §3's two path-tracking units.
fn units_cmd(a: &CostArgs) -> Result<(), Failure> {
    let warps = a.warps();
    let mut csv = Table::new(&["unit", "warp_size", "warps", "storage_bits", "comparators", "multiplexers"]);
    let mut text = Table::new(&[
        "unit",
        "warp_size",
        "warps",
        "storage_bits",
        "of which RAM",
        "comparators",
        "multiplexers",
        "comparators vs sorted list",
    ]);
    for w in a.warp_sizes() {
        let p = CostParams { warp_size: w, warps, pc_bits: a.pc_bits, depth_bits: a.depth_bits };
        let sorted = unit_cost(Unit::SortedList, p);
        for unit in [Unit::Arbiter, Unit::SortedList] {
            let c = unit_cost(unit, p);
            let base = [unit.name().to_string(), w.to_string(), warps.to_string(), c.storage_bits.to_string()];
            csv.row([&base[..], &[c.comparators.to_string(), c.multiplexers.to_string()]].concat());
            let ratio = format!("{:.2}x", c.comparators as f64 / sorted.comparators as f64);
            text.row(
                [&base[..], &[c.ram_bits.to_string(), c.comparators.to_string(), c.multiplexers.to_string(), ratio]]
                    .concat(),
            );
        }
    }
    if a.csv {
        outln!("{}", csv.render_csv().trim_end())?;
        return Ok(());
    }
    outln!(
        "path-tracking units of seed 003 §3, {} warps, {}-bit pc, {}-bit call depth: counted structures, not synthesis results",
        warps,
        a.pc_bits,
        a.depth_bits
    )?;
    outln!("{}", text.render().trim_end())?;
    outln!()?;
    outln!("Seed 003 Figure 4 (place and route, Cyclone IV, 8 warps): the arbiter's cost grows with the")?;
    outln!("threads per warp and dominates from 8 threads per warp (about 91,000 LEs estimated at 64, where")?;
    outln!("place and route fails); the sorted list's CCT control logic is 316 LEs at 2 threads per warp and")?;
    outln!("633 LEs at 64 (6% to 1% of the core). Here the arbiter's comparators and multiplexers grow as")?;
    outln!("2W - 1 and W - 1 and its pc table (read whole every cycle: flip-flops) as N x W; the sorted list's")?;
    outln!("logic is constant (7 comparators, 5 multiplexers) and its storage grows as W^2 per warp, mostly in")?;
    outln!("the CCT, a narrow table that goes into RAM blocks. Formulas: docs/path-tracking-cost.md.")?;
    Ok(())
}

/// One mechanism's evaluated structures at one warp size.
struct MechCost {
    mechanism: Mechanism,
    parts: Vec<PartCost>,
}

/// The figures every mechanism of `mechs` reached on the suite at warp size `w` (functional runs, in
/// parallel), and the number of kernels run.
fn reached_on_suite(a: &CostArgs, mechs: &[Mechanism], w: u32) -> Result<(Vec<Reached>, usize), Failure> {
    let dir = a
        .kernels
        .clone()
        .or_else(default_kernels_dir)
        .ok_or_else(|| Failure::input("cannot find kernels/; pass --kernels DIR or --no-runs"))?;
    let manifest = load_manifest(&dir)?;
    check_kernel_names(&manifest, &a.only)?;
    let jobs = reconverge_suite::grid::jobs(&manifest, &a.only, 0, &[w], mechs);
    let load = |p: &str| std::fs::read(dir.join(p));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if a.threads == 0 { cores } else { a.threads }.min(jobs.len().max(1));
    let pool =
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Failure::input(e.to_string()))?;
    let records: Vec<(Mechanism, RunRecord)> = pool.install(|| {
        jobs.par_iter()
            .map(|j| {
                let o = reconverge_suite::grid::run_job(&manifest, j, &[], &load, a.max_instructions, false);
                (j.mech, record_of(&o, None))
            })
            .collect()
    });
    let mut kernels: Vec<&str> = records.iter().map(|(_, r)| r.kernel.as_str()).collect();
    kernels.dedup();
    let reached = mechs.iter().map(|m| Reached::of(records.iter().filter(|(x, _)| x == m).map(|(_, r)| r))).collect();
    Ok((reached, kernels.len()))
}

/// `reconverge cost`: every mechanism's storage and area.
fn storage_cmd(a: &CostArgs) -> Result<(), Failure> {
    let warp_sizes = a.warp_sizes();
    check_warp_sizes(&warp_sizes)?;
    if a.cta_warps == 0 || a.cta_warps > a.warps() {
        return Err(Failure::input(format!("--cta-warps must be 1 to --warps ({})", a.warps())));
    }
    let mechs: Vec<Mechanism> = if a.mechanisms.is_empty() {
        Mechanism::ALL.to_vec()
    } else {
        a.mechanisms.iter().map(|m| crate::launch_args::mechanism(m)).collect::<Result<_, _>>()?
    };
    let area = AreaModel::GF100_40NM;
    let mut csv = Table::new(&CSV_COLUMNS);
    for (i, &w) in warp_sizes.iter().enumerate() {
        let g = Geometry {
            warp_size: w,
            warps: a.warps(),
            cta_warps: a.cta_warps,
            pc_bits: a.pc_bits,
            depth_bits: a.depth_bits,
            lut_entries: 0,
        };
        let (reached, kernels) = if a.no_runs { (Vec::new(), 0) } else { reached_on_suite(a, &mechs, w)? };
        let costs: Vec<MechCost> = mechs
            .iter()
            .enumerate()
            .map(|(k, &m)| MechCost { mechanism: m, parts: storage_cost(m.info(), &g, reached.get(k), &area) })
            .collect();
        if a.csv {
            csv_rows(&mut csv, &g, &costs, &area);
            continue;
        }
        if i > 0 {
            outln!()?;
        }
        print_storage(&g, &costs, kernels, &area)?;
        let reached_of = |m: &str| {
            let m = Mechanism::from_name(m)?;
            mechs.iter().position(|&x| x == m).and_then(|k| reached.get(k))
        };
        print_seed001(&g, [reached_of("pdom"), reached_of("dwf")], kernels, &area)?;
    }
    if a.csv {
        outln!("{}", csv.render_csv().trim_end())?;
    }
    Ok(())
}

/// The columns of `cost --csv`.
const CSV_COLUMNS: [&str; 20] = [
    "mechanism",
    "structure",
    "per",
    "cells",
    "fields",
    "warp_size",
    "warps",
    "cta_warps",
    "pc_bits",
    "depth_bits",
    "copies",
    "entries_worst",
    "entries_reached",
    "sized_by",
    "entry_bits",
    "bits_worst",
    "bits_reached",
    "mm2_worst",
    "mm2_reached",
    "sm_share_reached",
];

/// The CSV rows of one warp size: every structure, then a `total` row per mechanism.
fn csv_rows(csv: &mut Table, g: &Geometry, costs: &[MechCost], area: &AreaModel) {
    let geo = [g.warp_size, g.warps, g.cta_warps, g.pc_bits, g.depth_bits].map(|x| x.to_string());
    for c in costs {
        let name = c.mechanism.name().to_string();
        for p in &c.parts {
            let sized = sized_by(c.mechanism, p);
            csv.row(
                [
                    &[name.clone(), p.part.name.into(), p.part.per.name().into(), p.part.cells.name().into()][..],
                    &[p.part.fields.into()],
                    &geo[..],
                    &[p.copies.to_string(), p.entries_worst.to_string(), p.entries_reached.to_string(), sized],
                    &[p.entry_bits.to_string(), p.bits_worst.to_string(), p.bits_reached.to_string()],
                    &[format!("{:.6}", p.mm2_worst), format!("{:.6}", p.mm2_reached)],
                    &[format!("{:.6}", area.of_sm(p.mm2_reached))],
                ]
                .concat(),
            );
        }
        let t = totals(&c.parts);
        let blank = || String::new();
        csv.row(
            [
                &[name, "total".into(), blank(), blank(), blank()][..],
                &geo[..],
                &[blank(), blank(), blank(), blank(), blank()],
                &[t.bits[0].to_string(), t.bits[1].to_string()],
                &[format!("{:.6}", t.mm2[0]), format!("{:.6}", t.mm2[1]), format!("{:.6}", area.of_sm(t.mm2[1]))],
            ]
            .concat(),
        );
    }
}

/// What sizes a structure at the depth reached: the statistic, `(worst)` after it when no run reported
/// it, empty for a structure fixed by the geometry.
fn sized_by(m: Mechanism, p: &PartCost) -> String {
    match p.sized_by {
        None => String::new(),
        Some((key, found)) => {
            let name = match key {
                Reach::Structure => structure_stat(m),
                Reach::Counter(c) => c.name,
            };
            if found {
                name.to_string()
            } else {
                format!("{name} (worst)")
            }
        }
    }
}

/// A mechanism's totals: bits and mm², worst case and reached.
struct Totals {
    bits: [u64; 2],
    mm2: [f64; 2],
}

fn totals(parts: &[PartCost]) -> Totals {
    Totals {
        bits: [parts.iter().map(|p| p.bits_worst).sum(), parts.iter().map(|p| p.bits_reached).sum()],
        mm2: [parts.iter().fold(0.0, |a, p| a + p.mm2_worst), parts.iter().fold(0.0, |a, p| a + p.mm2_reached)],
    }
}

/// A share as a percentage with two decimals.
fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

/// The text report of one warp size: the totals per mechanism, then every structure.
fn print_storage(g: &Geometry, costs: &[MechCost], kernels: usize, area: &AreaModel) -> Result<(), Failure> {
    outln!(
        "storage per SM: W = {} threads per warp, N = {} warps, C = {} warps per CTA ({} CTAs), P = {}-bit pc, D = {}-bit call depth",
        g.warp_size,
        g.warps,
        g.cta_warps,
        g.ctas(),
        g.pc_bits,
        g.depth_bits
    )?;
    if kernels > 0 {
        outln!(
            "worst: the bound for this geometry; reached: each structure sized to the largest one of the {} reached (functional, W = {})",
            crate::suite_cmd::plural(kernels, "kernel"),
            g.warp_size
        )?;
    } else {
        outln!("worst: the bound for this geometry; reached: no runs (--no-runs), so the worst case")?;
    }
    outln!(
        "area at {} nm: SRAM {:.3} um2/bit, flip-flops {:.2} um2/bit; % of an SM of {:.2} mm2 (assumptions: docs/storage-cost.md)",
        area.node_nm,
        area.um2_per_bit(Cells::Sram),
        area.um2_per_bit(Cells::FlipFlops),
        area.sm_mm2()
    )?;
    let mut t =
        Table::new(&["mechanism", "worst bits", "worst mm2", "% of SM", "reached bits", "reached mm2", "% of SM"]);
    for c in costs {
        let s = totals(&c.parts);
        t.row(vec![
            c.mechanism.name().to_string(),
            s.bits[0].to_string(),
            format!("{:.3}", s.mm2[0]),
            pct(area.of_sm(s.mm2[0])),
            s.bits[1].to_string(),
            format!("{:.3}", s.mm2[1]),
            pct(area.of_sm(s.mm2[1])),
        ]);
    }
    outln!("{}", t.render().trim_end())?;
    outln!()?;
    outln!("structures (bits per SM = copies x entries x bits per entry; formulas of W, N, C, P, D, L):")?;
    let mut t = Table::new(&[
        "mechanism",
        "structure",
        "per",
        "cells",
        "entries",
        "worst",
        "reached",
        "sized by",
        "bits per entry",
        "worst bits",
        "reached bits",
    ]);
    for (k, c) in costs.iter().enumerate() {
        // Variants with the same structures (heuristics, the likely-convergence and dcp variants) are
        // named once.
        let same = |d: &MechCost| std::ptr::eq(d.mechanism.info().storage, c.mechanism.info().storage);
        if let Some(first) = costs[..k].iter().find(|d| same(d)) {
            t.row(vec![c.mechanism.name().to_string(), format!("as {}", first.mechanism.name())]);
            continue;
        }
        for (i, p) in c.parts.iter().enumerate() {
            t.row(vec![
                if i == 0 { c.mechanism.name().to_string() } else { String::new() },
                p.part.name.to_string(),
                p.part.per.name().to_string(),
                p.part.cells.name().to_string(),
                p.part.entries.to_string(),
                p.entries_worst.to_string(),
                p.entries_reached.to_string(),
                sized_by(c.mechanism, p),
                format!("{} = {}", p.part.bits, p.entry_bits),
                p.bits_worst.to_string(),
                p.bits_reached.to_string(),
            ]);
        }
    }
    outln!("{}", t.render().trim_end())
}

/// Seed 001's "estimate 5% chip area for SIMT stack" against `pdom`'s stacks, as the seed reads it, and
/// against DWF's hardware, to which the cited paper's abstract attaches its area estimate; `reached` are
/// pdom's and dwf's figures on the suite.
fn print_seed001(
    g: &Geometry,
    reached: [Option<&Reached>; 2],
    kernels: usize,
    area: &AreaModel,
) -> Result<(), Failure> {
    let c = seed001_check(Mechanism::Pdom.info(), g, reached[0], area);
    outln!()?;
    outln!("seed 001: \"estimate 5% chip area for simt-stack\" (Fung et al., MICRO 2007), against pdom's stacks:")?;
    let mut t =
        Table::new(&["pdom stacks", "entries/warp", "bits/SM", "mm2/SM", "% of SM", "% of chip", "as flip-flops"]);
    let labels = ["worst case", if kernels > 0 { "reached" } else { "reached (no runs)" }];
    for (k, label) in labels.iter().enumerate() {
        t.row(vec![
            label.to_string(),
            c.depth[k].to_string(),
            c.bits[k].to_string(),
            format!("{:.3}", c.mm2[k]),
            pct(area.of_sm(c.mm2[k])),
            pct(area.of_chip(c.mm2[k])),
            format!(
                "{} of SM, {} of chip",
                pct(area.of_sm(c.mm2_flip_flops[k])),
                pct(area.of_chip(c.mm2_flip_flops[k]))
            ),
        ]);
    }
    outln!("{}", t.render().trim_end())?;
    let verdict = |x: f64| if x >= SEED001_SHARE { "holds" } else { "does not hold" };
    let (sm, chip) = (area.of_sm(c.mm2[0]), area.of_chip(c.mm2[0]));
    let (ff_sm, ff_chip) = (area.of_sm(c.mm2_flip_flops[0]), area.of_chip(c.mm2_flip_flops[0]));
    outln!(
        "5% of the chip {}: worst-case SRAM stacks are {} of the chip ({} of an SM); 5% needs {:.1}x their area.",
        verdict(chip),
        pct(chip),
        pct(sm),
        SEED001_SHARE / chip
    )?;
    outln!(
        "Built of flip-flops ({:.1}x the area of an SRAM bit) they are {} of the chip and {} of an SM:",
        area.um2_per_bit(Cells::FlipFlops) / area.um2_per_bit(Cells::Sram),
        pct(ff_chip),
        pct(ff_sm)
    )?;
    outln!(
        "5% of the chip {}, 5% of an SM {}. At the depth reached ({} entries per warp) the stacks are {} of the chip.",
        verdict(ff_chip),
        verdict(ff_sm),
        c.depth[1],
        pct(area.of_chip(c.mm2[1]))
    )?;
    print_seed001_dwf(g, reached[1], area)
}

/// The paper's own attachment of the estimate: DWF's storage (warp pool, look-up table, per-thread
/// state) as a share of the SM and the chip, worst case and at the occupancy the suite reached.
fn print_seed001_dwf(g: &Geometry, reached: Option<&Reached>, area: &AreaModel) -> Result<(), Failure> {
    let Some(dwf) = Mechanism::from_name("dwf") else { return Ok(()) };
    let d = seed001_check(dwf.info(), g, reached, area);
    outln!(
        "The paper's abstract attaches its estimate to the DWF hardware (\"20.7% for an estimated area increase of\"):"
    )?;
    outln!(
        "dwf's storage is {} of the chip ({} of an SM) in the worst case, {} as flip-flops; {} at the occupancy reached.",
        pct(area.of_chip(d.mm2[0])),
        pct(area.of_sm(d.mm2[0])),
        pct(area.of_chip(d.mm2_flip_flops[0])),
        pct(area.of_chip(d.mm2[1]))
    )
}

/// The directory of the RTL: `hw/` in the first ancestor of the working directory or of the executable
/// that has `hw/sorted_list.v`.
fn default_hw_dir() -> Option<PathBuf> {
    let starts = [std::env::current_dir().ok(), std::env::current_exe().ok()];
    starts.into_iter().flatten().find_map(|s| {
        s.ancestors().map(|d| d.join("hw")).find(|h| h.join("sorted_list.v").is_file() && h.join("arbiter.v").is_file())
    })
}

/// The Yosys flow: Cyclone IV E (the family of seed 003's EP4CE115) when `synth_intel` knows it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    CycloneIvE,
    Generic,
}

/// Runs Yosys with `script`; its log on success.
fn yosys(script: &str, dir: &Path) -> Result<String, Failure> {
    let out = Command::new("yosys")
        .arg("-q")
        .arg("-p")
        .arg(script)
        .current_dir(dir)
        .output()
        .map_err(|e| Failure::input(format!("cannot run yosys ({e}): install it (apt-get install yosys)")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let log = String::from_utf8_lossy(&out.stdout);
        return Err(Failure::input(format!("yosys failed:\n{}{}", log.trim_end(), err.trim_end())));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Synthesizes `unit` at parameters `p`; the stat reports go through files in `tmp`.
fn synth_one(unit: Unit, p: CostParams, flow: Flow, hw: &Path, tmp: &Path) -> Result<(Stat, Stat), Failure> {
    let (top, files) = match unit {
        Unit::Arbiter => ("arbiter", "arbiter.v"),
        Unit::SortedList => ("sorted_list", "sorted_list.v ccs.v"),
    };
    let f = |n: &str| tmp.join(format!("{top}_{}_{n}.txt", p.warp_size));
    let (pre, post) = (f("pre"), f("post"));
    let read = format!(
        "read_verilog {files}; chparam -set W {} -set NWARPS {} -set PC_BITS {} -set DEPTH_BITS {} {top}",
        p.warp_size, p.warps, p.pc_bits, p.depth_bits
    );
    // The memories are counted after `proc` (before they become cells); only the CCT is one.
    let script = match flow {
        Flow::CycloneIvE => {
            let s = format!("synth_intel -family cycloneive -top {top}");
            format!(
                "{read}; {s} -run :coarse; tee -q -o {} stat; {s} -run coarse:; tee -q -o {} stat",
                pre.display(),
                post.display()
            )
        }
        Flow::Generic => format!(
            "{read}; hierarchy -top {top}; proc; tee -q -o {} stat; synth -top {top} -lut 4; tee -q -o {} stat",
            pre.display(),
            post.display()
        ),
    };
    yosys(&script, hw)?;
    let parse = |path: &Path| -> Result<Stat, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::input(format!("cannot read yosys' report `{}`: {e}", path.display())))?;
        parse_stat(&text).ok_or_else(|| Failure::input(format!("no statistics in yosys' report `{}`", path.display())))
    };
    let r = (parse(&pre)?, parse(&post)?);
    for path in [pre, post] {
        let _ = std::fs::remove_file(path);
    }
    Ok(r)
}

/// `reconverge cost --synth`.
fn synth_cmd(a: &CostArgs) -> Result<(), Failure> {
    if let Some(w) = a.warp_sizes().iter().find(|w| !w.is_power_of_two()) {
        return Err(Failure::input(format!("--warp-size {w}: the RTL needs a power of two")));
    }
    if !a.warps().is_power_of_two() {
        return Err(Failure::input(format!("--warps {}: the RTL needs a power of two", a.warps())));
    }
    if a.depth_bits == 0 {
        return Err(Failure::input("--depth-bits must be at least 1 for the RTL"));
    }
    let hw = match a.hw.clone().or_else(default_hw_dir) {
        Some(d) => d,
        None => return Err(Failure::input("cannot find hw/sorted_list.v; pass --hw DIR")),
    };
    if !hw.join("sorted_list.v").is_file() || !hw.join("arbiter.v").is_file() {
        return Err(Failure::input(format!("{}: no arbiter.v and sorted_list.v there", hw.display())));
    }
    let version = Command::new("yosys")
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .ok_or_else(|| Failure::input("yosys not found: install it (apt-get install yosys) to use --synth"))?;
    let version = version.split(" (").next().unwrap_or(&version).to_string();
    let has_intel = Command::new("yosys")
        .args(["-p", "help synth_intel"])
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).contains("cycloneive"));
    let flow = if has_intel { Flow::CycloneIvE } else { Flow::Generic };
    let tool = match flow {
        Flow::CycloneIvE => format!("{version} synth_intel -family cycloneive"),
        Flow::Generic => format!("{version} synth -lut 4 (generic 4-LUT; memories as flip-flops)"),
    };
    let tmp = std::env::temp_dir().join(format!("reconverge-synth-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|e| Failure::input(format!("cannot create {}: {e}", tmp.display())))?;
    let mut rows: Vec<(SynthRow, CostParams)> = Vec::new();
    let mut result = Ok(());
    'outer: for &w in &a.warp_sizes() {
        let p = CostParams { warp_size: w, warps: a.warps(), pc_bits: a.pc_bits, depth_bits: a.depth_bits };
        for unit in [Unit::Arbiter, Unit::SortedList] {
            let t0 = std::time::Instant::now();
            let (pre, post) = match synth_one(unit, p, flow, &hw, &tmp) {
                Ok(r) => r,
                Err(e) => {
                    result = Err(e);
                    break 'outer;
                }
            };
            let (logic, ffs, ram) = match flow {
                Flow::CycloneIvE => (
                    post.count(|n| n == "cycloneive_lcell_comb"),
                    post.count(|n| n == "dffeas"),
                    post.count(|n| n == "altsyncram"),
                ),
                Flow::Generic => (
                    post.count(|n| n == "$lut"),
                    post.count(|n| n.starts_with("$_DFF") || n.starts_with("$_SDFF") || n.starts_with("$_ALDFF")),
                    0,
                ),
            };
            rows.push((
                SynthRow {
                    unit: unit.name().to_string(),
                    warp_size: w,
                    warps: a.warps(),
                    logic_cells: logic,
                    flip_flops: ffs,
                    memory_bits: if ram > 0 { pre.memory_bits } else { 0 },
                    ram_blocks: ram,
                    tool: tool.clone(),
                    seconds: t0.elapsed().as_secs_f64(),
                },
                p,
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    result?;
    if a.csv {
        let mut csv = Table::new(&["unit", "warp_size", "warps", "logic_cells", "flip_flops", "memory_bits", "tool"]);
        for (r, _) in &rows {
            csv.row(vec![
                r.unit.clone(),
                r.warp_size.to_string(),
                r.warps.to_string(),
                r.logic_cells.to_string(),
                r.flip_flops.to_string(),
                r.memory_bits.to_string(),
                r.tool.clone(),
            ]);
        }
        outln!("{}", csv.render_csv().trim_end())?;
    } else {
        print_synth_table(a, &rows, &tool)?;
    }
    if let Some(path) = &a.svg {
        let plain: Vec<SynthRow> = rows.iter().map(|(r, _)| r.clone()).collect();
        let title = format!(
            "Path tracking, {} warps: Yosys {}",
            a.warps(),
            if flow == Flow::CycloneIvE { "Cyclone IV E" } else { "generic 4-LUT" }
        );
        std::fs::write(path, svg(&plain, &title)).map_err(|e| Failure::input(format!("cannot write `{path}`: {e}")))?;
    }
    Ok(())
}

/// The text report of `--synth`: the synthesis beside the analytic counts and seed 003's Figure 4.
fn print_synth_table(a: &CostArgs, rows: &[(SynthRow, CostParams)], tool: &str) -> Result<(), Failure> {
    let mut t = Table::new(&[
        "unit",
        "warp_size",
        "warps",
        "logic_cells",
        "flip_flops",
        "memory_bits",
        "RAM blocks",
        "analytic storage bits",
        "analytic RAM bits",
        "analytic comparators",
        "yosys seconds",
    ]);
    for (r, p) in rows {
        let unit = if r.unit == "arbiter" { Unit::Arbiter } else { Unit::SortedList };
        let c = unit_cost(unit, *p);
        t.row(vec![
            r.unit.clone(),
            r.warp_size.to_string(),
            r.warps.to_string(),
            r.logic_cells.to_string(),
            r.flip_flops.to_string(),
            r.memory_bits.to_string(),
            r.ram_blocks.to_string(),
            c.storage_bits.to_string(),
            c.ram_bits.to_string(),
            c.comparators.to_string(),
            format!("{:.1}", r.seconds),
        ]);
    }
    outln!(
        "RTL of hw/ synthesized by {tool}, {} warps, {}-bit pc, {}-bit call depth (logic cells: 4-input LUTs; flip-flops; memory bits: in block RAM)",
        a.warps(),
        a.pc_bits,
        a.depth_bits
    )?;
    outln!("{}", t.render().trim_end())?;
    let cell = |unit: &str, w: u32| rows.iter().find(|(r, _)| r.unit == unit && r.warp_size == w).map(|(r, _)| r);
    let mut ratios = Vec::new();
    let mut crossover = None;
    for &w in &a.warp_sizes() {
        if let (Some(x), Some(s)) = (cell("arbiter", w), cell("sorted_list", w)) {
            let (xa, sa) = (x.logic_cells + x.flip_flops, s.logic_cells + s.flip_flops);
            ratios.push(format!("W={w}: {:.2}x", xa as f64 / sa.max(1) as f64));
            if crossover.is_none() && xa > sa {
                crossover = Some(w);
            }
        }
    }
    outln!()?;
    outln!("arbiter / sorted list, logic cells + flip-flops: {}", ratios.join(", "))?;
    match crossover {
        Some(w) => outln!("the arbiter is the larger unit from {w} threads per warp on (among the sizes synthesized)")?,
        None => outln!("the arbiter is not the larger unit at any size synthesized")?,
    }
    outln!()?;
    outln!("Seed 003 Figure 4 (whole Simty core, place and route, Cyclone IV EP4CE115, 8 warps): the arbiter")?;
    outln!("dominates from 8 threads per warp; at 64 its place and route fails (about 91,000 LEs estimated);")?;
    outln!("the sorted list's CCT control logic is 316 LEs at 2 threads per warp and 633 LEs at 64. Our numbers")?;
    outln!("are the path-tracking units alone, after synthesis (no place and route): docs/hardware.md.")?;
    Ok(())
}
