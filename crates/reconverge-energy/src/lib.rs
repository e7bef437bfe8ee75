//! The energy of a timed launch.
//!
//! An *event* energy model, as GPUWattch (Leng et al., ISCA 2013) and AccelWattch (Kandiah et al., MICRO
//! 2021) are: every event the timing model counts — a warp instruction fetched, decoded and scheduled, a
//! register operand read by a datapath lane, a lane operation of the integer, floating-point or special
//! function units, a cache access by hit and miss, an interconnect flit, a DRAM burst or row activation — is
//! charged a fixed energy of the preset's technology ([`reconverge_timing::EnergyCoefficients`],
//! each value with its source in `docs/energy.md`), and an SM without work and the whole chip's constant
//! part (clock tree, leakage, the memory controllers' fixed part) are charged power × time.
//!
//! Masked lanes: on hardware that does not gate them (`register_file_gated = false`, GPGPU-Sim's
//! `-gpgpu_clock_gated_reg_file 0`), an issued instruction reads and writes its registers for every lane of
//! the datapath, and a masked lane of a functional unit costs `idle_lane_fraction` of an active one
//! (GPUWattch: one half); gated hardware charges active lanes only. A machine that issues a scalar
//! instruction to one lane (seed 004's scalar lane or unit) or runs threads one after another (temporal
//! SIMT) occupies one lane per operation, so it pays per operation actually done.
//!
//! The model prices counts; it never changes them: the same launch gives the same cycles and statistics
//! with or without it.
#![deny(missing_docs)]

use reconverge_timing::EnergyCoefficients;
use reconverge_timing::{GpuConfig, TimingStats};
use serde::Serialize;

/// The parts energy is reported in, in the order tables show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    /// Instruction fetch buffer, decode and the warp schedulers, per warp instruction.
    Instruction,
    /// The instruction cache, per fetch (hit or miss).
    InstructionCache,
    /// The register file: reads and writes per lane operand.
    RegisterFile,
    /// The integer units, per lane operation (masked lanes at the idle fraction).
    IntegerUnits,
    /// The floating-point units (single and double), per lane operation.
    FloatUnits,
    /// The special function units, per lane operation.
    SpecialFunctionUnits,
    /// The execution pipeline's registers and control, per lane operation.
    Pipeline,
    /// The L1 data cache, per line request.
    L1,
    /// Shared memory, per wavefront (one per bank-conflict pass).
    SharedMemory,
    /// The constant cache, per line access.
    ConstantCache,
    /// The texture cache, per line access.
    TextureCache,
    /// The L2, per 32-byte sector read or written.
    L2,
    /// The interconnect between SMs and L2, per flit.
    Interconnect,
    /// DRAM and its controller: bursts read and written, row activations.
    Dram,
    /// SMs without resident work, per SM-cycle.
    IdleSms,
    /// Static power of the SMs with work (by the mean active lanes per instruction), over their cycles.
    Static,
    /// The chip's constant power (clock, leakage, fixed memory-controller power) over the launch.
    Constant,
}

impl Component {
    /// Every component, in table order.
    pub const ALL: [Component; 17] = [
        Component::Instruction,
        Component::InstructionCache,
        Component::RegisterFile,
        Component::IntegerUnits,
        Component::FloatUnits,
        Component::SpecialFunctionUnits,
        Component::Pipeline,
        Component::L1,
        Component::SharedMemory,
        Component::ConstantCache,
        Component::TextureCache,
        Component::L2,
        Component::Interconnect,
        Component::Dram,
        Component::IdleSms,
        Component::Static,
        Component::Constant,
    ];

    /// The name used in JSON, CSV and tables.
    pub fn name(self) -> &'static str {
        match self {
            Component::Instruction => "instruction",
            Component::InstructionCache => "instruction_cache",
            Component::RegisterFile => "register_file",
            Component::IntegerUnits => "integer_units",
            Component::FloatUnits => "float_units",
            Component::SpecialFunctionUnits => "special_function_units",
            Component::Pipeline => "pipeline",
            Component::L1 => "l1",
            Component::SharedMemory => "shared_memory",
            Component::ConstantCache => "constant_cache",
            Component::TextureCache => "texture_cache",
            Component::L2 => "l2",
            Component::Interconnect => "interconnect",
            Component::Dram => "dram",
            Component::IdleSms => "idle_sms",
            Component::Static => "static",
            Component::Constant => "constant",
        }
    }

    /// Whether the component's energy grows with time rather than with events.
    pub fn is_static(self) -> bool {
        matches!(self, Component::IdleSms | Component::Static | Component::Constant)
    }
}

/// The energy of one launch (or a sum of launches), by component.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Energy {
    /// Joules per component, indexed as [`Component::ALL`].
    pub joules: [f64; 17],
    /// Seconds of the launch at the core clock.
    pub seconds: f64,
}

impl Energy {
    /// Total joules.
    pub fn total(&self) -> f64 {
        self.joules.iter().sum()
    }

    /// Joules of one component.
    pub fn of(&self, c: Component) -> f64 {
        self.joules[c as usize]
    }

    /// Average power, watts (0 for a launch of no time).
    pub fn average_power(&self) -> f64 {
        if self.seconds > 0.0 {
            self.total() / self.seconds
        } else {
            0.0
        }
    }

    /// Energy-delay product, joule-seconds.
    pub fn edp(&self) -> f64 {
        self.total() * self.seconds
    }

    /// Adds another launch's energy and time.
    pub fn add(&mut self, o: &Energy) {
        for (a, b) in self.joules.iter_mut().zip(o.joules) {
            *a += b;
        }
        self.seconds += o.seconds;
    }
}

/// As JSON: `total_j`, `seconds`, `average_power_w`, `edp_js` and `components_j` (joules by
/// [`Component::name`], in table order).
impl Serialize for Energy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Components<'a>(&'a Energy);
        impl Serialize for Components<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(Component::ALL.len()))?;
                for c in Component::ALL {
                    m.serialize_entry(c.name(), &self.0.of(c))?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("total_j", &self.total())?;
        m.serialize_entry("seconds", &self.seconds)?;
        m.serialize_entry("average_power_w", &self.average_power())?;
        m.serialize_entry("edp_js", &self.edp())?;
        m.serialize_entry("components_j", &Components(self))?;
        m.end()
    }
}

/// The energy of a launch the timing model measured, under `gpu`'s coefficients; `None` when the
/// configuration has none (`[energy]` absent) or the launch was sampled by CTAs (its activity counters
/// cover only its timed part).
pub fn energy(t: &TimingStats, gpu: &GpuConfig) -> Option<Energy> {
    // A launch sampled by CTAs counts activity over its timed part only: no honest total exists.
    if t.sample.is_some() {
        return None;
    }
    let k = gpu.energy.as_ref()?;
    Some(price(t, gpu, k))
}

fn price(t: &TimingStats, gpu: &GpuConfig, k: &EnergyCoefficients) -> Energy {
    let d = &t.datapath;
    let m = &t.memory;
    let n = |x: u64| x as f64;
    let seconds = n(t.cycles) / (f64::from(gpu.clock_mhz.max(1)) * 1e6);
    let idle = k.idle_lane_fraction;
    let mut e = Energy { seconds, ..Energy::default() };
    let mut put = |c: Component, j: f64| e.joules[c as usize] += j;

    put(Component::Instruction, n(t.issued) * k.instruction_j);
    let hits = d.icache_fetches.saturating_sub(d.icache_misses);
    put(Component::InstructionCache, n(hits) * k.icache_hit_j + n(d.icache_misses) * k.icache_miss_j);
    let (reads, writes) = if k.register_file_gated {
        (d.register_reads, d.register_writes)
    } else {
        (d.register_reads + d.idle_register_reads, d.register_writes + d.idle_register_writes)
    };
    put(Component::RegisterFile, n(reads) * k.register_read_j + n(writes) * k.register_write_j);
    let lanes = |active: u64, masked: u64, j: f64| (n(active) + idle * n(masked)) * j;
    put(Component::IntegerUnits, lanes(d.int_lanes, d.idle_int_lanes, k.int_lane_j));
    put(
        Component::FloatUnits,
        lanes(d.float_lanes, d.idle_float_lanes, k.float_lane_j)
            + lanes(d.double_lanes, d.idle_double_lanes, k.double_lane_j),
    );
    put(Component::SpecialFunctionUnits, lanes(d.sfu_lanes, d.idle_sfu_lanes, k.sfu_lane_j));
    put(Component::Pipeline, n(t.lane_ops) * k.pipeline_lane_j);

    let l1_misses = m.l1_accesses.saturating_sub(m.l1_hits);
    put(
        Component::L1,
        n(m.l1_hits) * k.l1_read_hit_j + n(l1_misses) * k.l1_read_miss_j + n(m.store_transactions) * k.l1_write_j,
    );
    put(Component::SharedMemory, n(m.shared_wavefronts) * k.shared_wavefront_j);
    let const_misses = m.constant_accesses.saturating_sub(m.constant_hits);
    put(Component::ConstantCache, n(m.constant_hits) * k.constant_hit_j + n(const_misses) * k.constant_miss_j);
    let tex_misses = m.texture_accesses.saturating_sub(m.texture_hits);
    put(Component::TextureCache, n(m.texture_hits) * k.texture_hit_j + n(tex_misses) * k.texture_miss_j);
    put(
        Component::L2,
        n(m.l2_read_hit_sectors) * k.l2_read_hit_j
            + n(m.l2_read_miss_sectors) * k.l2_read_miss_j
            + n(m.l2_write_hit_sectors) * k.l2_write_hit_j
            + n(m.l2_write_miss_sectors) * k.l2_write_miss_j,
    );
    put(Component::Interconnect, n(m.noc_flits) * k.noc_flit_j);
    put(Component::Dram, dram_joules(t, k));

    let clock_hz = f64::from(gpu.clock_mhz.max(1)) * 1e6;
    let idle_sm_cycles: u64 = t.sm_cycles.iter().map(|&busy| t.cycles.saturating_sub(busy)).sum();
    let missing_sms = u64::from(gpu.num_sms).saturating_sub(t.sm_cycles.len() as u64);
    let idle_sm_cycles = idle_sm_cycles + missing_sms * t.cycles;
    put(Component::IdleSms, n(idle_sm_cycles) / clock_hz * k.idle_sm_w);
    let busy_sm_seconds = n(t.sm_cycles.iter().sum::<u64>()) / clock_hz / f64::from(gpu.num_sms.max(1));
    let mean_lanes = if t.issued == 0 { 1.0 } else { (n(t.lane_ops) / n(t.issued)).max(1.0) };
    put(Component::Static, busy_sm_seconds * (k.sm_static_w + (mean_lanes - 1.0) * k.lane_static_w));
    put(Component::Constant, seconds * k.constant_w);
    e
}

/// DRAM: bursts read and written and row activations with banked DRAM; without banks each sector moved
/// is one burst and rows are not modelled.
fn dram_joules(t: &TimingStats, k: &EnergyCoefficients) -> f64 {
    let d = &t.memory.dram;
    let n = |x: u64| x as f64;
    if d.channel_cycles > 0 {
        n(d.read_bursts) * k.dram_read_burst_j
            + n(d.write_bursts) * k.dram_write_burst_j
            + n(d.activates) * k.dram_activate_j
    } else {
        n(t.memory.dram_reads) * k.dram_read_burst_j + n(t.memory.dram_writes) * k.dram_write_burst_j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A launch of 1000 cycles at 1000 MHz on a two-SM GPU with hand-picked counts.
    fn launch() -> (TimingStats, GpuConfig) {
        let mut gpu = GpuConfig::gtx480();
        gpu.clock_mhz = 1000;
        gpu.num_sms = 2;
        let mut t =
            TimingStats { cycles: 1000, issued: 10, lane_ops: 200, sm_cycles: vec![1000, 400], ..Default::default() };
        t.datapath.int_lanes = 200;
        t.datapath.idle_int_lanes = 120;
        t.datapath.register_reads = 400;
        t.datapath.idle_register_reads = 240;
        t.memory.noc_flits = 7;
        (t, gpu)
    }

    #[test]
    fn every_component_is_its_events_times_their_energy() {
        let (t, gpu) = launch();
        let k = EnergyCoefficients::gtx480();
        let e = energy(&t, &gpu).expect("gtx480 has coefficients");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-30);
        assert!(close(e.seconds, 1e-6));
        assert!(close(e.of(Component::Instruction), 10.0 * k.instruction_j));
        // Not gated: the masked lanes read their registers too; their units cost half.
        assert!(close(e.of(Component::RegisterFile), 640.0 * k.register_read_j));
        assert!(close(e.of(Component::IntegerUnits), (200.0 + 0.5 * 120.0) * k.int_lane_j));
        assert!(close(e.of(Component::Pipeline), 200.0 * k.pipeline_lane_j));
        assert!(close(e.of(Component::Interconnect), 7.0 * k.noc_flit_j));
        // One SM idle for 600 of the 1000 cycles.
        assert!(close(e.of(Component::IdleSms), 600e-9 * k.idle_sm_w));
        assert!(close(e.of(Component::Constant), 1e-6 * k.constant_w));
        assert!(close(e.total(), e.joules.iter().sum()));
        assert!(close(e.average_power(), e.total() / 1e-6));
        assert!(close(e.edp(), e.total() * 1e-6));
    }

    #[test]
    fn gated_lanes_cost_nothing_and_no_coefficients_mean_no_energy() {
        let (t, mut gpu) = launch();
        let mut k = EnergyCoefficients::gtx480();
        k.register_file_gated = true;
        k.idle_lane_fraction = 0.0;
        gpu.energy = Some(k.clone());
        let e = energy(&t, &gpu).expect("coefficients");
        assert_eq!(e.of(Component::RegisterFile), 400.0 * k.register_read_j);
        assert_eq!(e.of(Component::IntegerUnits), 200.0 * k.int_lane_j);
        gpu.energy = None;
        assert!(energy(&t, &gpu).is_none());
    }

    #[test]
    fn launches_add() {
        let (t, gpu) = launch();
        let one = energy(&t, &gpu).expect("coefficients");
        let mut two = one.clone();
        two.add(&one);
        assert!((two.total() - 2.0 * one.total()).abs() < 1e-18);
        assert!((two.seconds - 2e-6).abs() < 1e-18);
    }
}
