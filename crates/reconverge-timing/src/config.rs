//! GPU configurations: every parameter of the timing model, named presets, and TOML files.
//!
//! A TOML file may start from a preset (`base = "gtx480"`) and override any subset of fields; without
//! `base` it starts from `gtx480`. Unknown keys are errors. The effective configuration is printed in
//! `--json` output, so a run is reproducible from its statistics alone.

use serde::{Deserialize, Serialize};

/// Warp scheduling policies.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerPolicy {
    /// Loose round-robin: the next ready warp after the one that issued last.
    Lrr,
    /// Greedy-then-oldest: keep issuing from the same warp while it is ready, else the oldest ready warp.
    Gto,
    /// Two-level: round-robin among an active set; warps that wait for memory drop to the pending pool and
    /// ready pending warps refill the active set (oldest first).
    TwoLevel,
}

/// How a scheduler dispatches an issued instruction to its functional units.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dispatch {
    /// Spatial SIMT: the active threads execute side by side on SIMD lanes; an instruction occupies its
    /// unit for the class's interval whatever its active-lane count.
    #[default]
    Spatial,
    /// Temporal SIMT (seed 004 §5.1, Figure 7c): each scheduler is one lane that runs its warps' threads
    /// one after another. An instruction occupies the lane for its class's interval once per active
    /// thread (diverged threads therefore cost only their own cycles, as independent MIMD threads); a
    /// scalar instruction of the scalarization plan dispatches once per warp, as do mechanism-inserted
    /// instructions; results are ready one latency after the last thread dispatched.
    Temporal,
}

impl Dispatch {
    /// Whether runs need seed 004's scalarization plan (to dispatch scalar instructions once).
    pub fn needs_scalar_plan(self) -> bool {
        self == Dispatch::Temporal
    }
}

/// The SM (streaming multiprocessor).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmConfig {
    /// Resident threads per SM.
    pub max_threads: u32,
    /// Resident warps per SM.
    pub max_warps: u32,
    /// Resident CTAs per SM.
    pub max_ctas: u32,
    /// 32-bit registers per SM.
    pub registers: u32,
    /// Shared memory per SM, bytes.
    pub shared_memory: u32,
    /// Registers a thread may use; the kernel's register demand is its PTX register count (64-bit registers
    /// count twice) capped at this value, unless `regs_per_thread` fixes it.
    pub max_regs_per_thread: u32,
    /// Fixed registers per thread (e.g. from `ptxas -v`); 0 = estimate from the PTX.
    pub regs_per_thread: u32,
    /// Warp schedulers per SM; warp `w` belongs to scheduler `w mod schedulers`; each issues at most one
    /// instruction per cycle.
    pub schedulers: u32,
    /// The scheduling policy.
    pub scheduler: SchedulerPolicy,
    /// Active-set size per scheduler for the two-level policy.
    pub two_level_active: u32,
    /// Seed 001's rule: a warp with an outstanding load miss leaves the active list until the data returns.
    /// When false, only instructions that use the loaded registers wait (scoreboard).
    pub miss_blocks_warp: bool,
    /// Spatial or temporal SIMT dispatch.
    #[serde(default)]
    pub dispatch: Dispatch,
}

/// Result latencies, in cycles from issue until a dependent instruction may issue.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latencies {
    /// Integer and logic.
    pub int: u64,
    /// Single-precision float.
    pub float: u64,
    /// Double precision.
    pub double: u64,
    /// Special functions (transcendentals, rcp, sqrt, division).
    pub sfu: u64,
    /// Branches, calls, returns, and the explicit stack instructions: cycles before the warp issues again.
    pub branch: u64,
    /// Shared-memory access (plus one cycle per extra bank-conflict wavefront).
    pub shared: u64,
    /// Constant and parameter access (plus one cycle per extra distinct address).
    pub constant: u64,
    /// Barrier: cycles from issuing `bar.sync` until the warp may issue again after release.
    pub barrier: u64,
    /// Warp-collective operations (shfl, vote, match, redux).
    pub warp_op: u64,
}

/// Initiation intervals: cycles a scheduler's functional unit stays busy per warp instruction.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Intervals {
    /// Integer unit.
    pub int: u64,
    /// Float unit.
    pub float: u64,
    /// Double-precision unit.
    pub double: u64,
    /// Special-function unit.
    pub sfu: u64,
    /// Load/store unit (per transaction or bank wavefront).
    pub mem: u64,
}

/// The L1 data cache of each SM (global and local accesses; write-through, write-evict for global).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L1Config {
    /// Capacity, bytes.
    pub size: u64,
    /// Line size, bytes.
    pub line: u32,
    /// Sector size, bytes (coalescing granularity).
    pub sector: u32,
    /// Associativity.
    pub ways: u32,
    /// Miss status holding registers (outstanding lines).
    pub mshrs: u32,
    /// Requests merged into one MSHR entry at most.
    pub mshr_merge: u32,
    /// Hit latency, cycles.
    pub hit_latency: u64,
}

/// The L2 cache shared by all SMs.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Capacity, bytes.
    pub size: u64,
    /// Line size, bytes.
    pub line: u32,
    /// Associativity.
    pub ways: u32,
    /// Latency of an L2 hit as seen after the L1 (round trip), cycles.
    pub hit_latency: u64,
    /// Sectors the L2 serves per cycle (all SMs together).
    pub sectors_per_cycle: u64,
    /// Extra latency of an atomic operation at the L2.
    pub atomic_latency: u64,
}

/// Device memory.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Latency added to an L2 miss, cycles.
    pub latency: u64,
    /// Bandwidth, bytes per core cycle.
    pub bytes_per_cycle: u64,
}

/// Shared memory banks.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SharedConfig {
    /// Number of banks.
    pub banks: u32,
    /// Bank width, bytes.
    pub bank_bytes: u32,
}

/// Latencies of the divergence mechanisms' own hardware.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MechanismConfig {
    /// Cycles the warp compaction unit of TBC and CAPRI takes to form new warps; the threads of the new
    /// warps wait this long before they issue.
    pub compaction_latency: u64,
    /// Cycles from writeback until threads re-inserted into DWF's warp pool (look-up table, merge) may
    /// issue again.
    pub pool_latency: u64,
    /// Cycles per step a `simty` warp waits for its context table's sorter (`sort_stall_steps`).
    pub sort_step_latency: u64,
}

impl Default for MechanismConfig {
    fn default() -> Self {
        MechanismConfig { compaction_latency: 4, pool_latency: 2, sort_step_latency: 1 }
    }
}

/// A whole GPU.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuConfig {
    /// The configuration's name.
    pub name: String,
    /// Number of SMs.
    pub num_sms: u32,
    /// Core clock, MHz (only to convert cycles to time in reports).
    pub clock_mhz: u32,
    /// Default warp size (the command line's `--warp-size` overrides it).
    pub warp_size: u32,
    /// The SM.
    pub sm: SmConfig,
    /// Latencies.
    pub latency: Latencies,
    /// Initiation intervals.
    pub interval: Intervals,
    /// L1 data cache.
    pub l1: L1Config,
    /// L2 cache.
    pub l2: L2Config,
    /// DRAM.
    pub dram: DramConfig,
    /// Shared memory.
    pub shared: SharedConfig,
    /// The divergence mechanisms' own latencies.
    #[serde(default)]
    pub mechanism: MechanismConfig,
}

/// The names of the built-in presets.
pub const PRESETS: [&str; 4] = ["gtx480", "volta", "tiny", "temporal"];

impl GpuConfig {
    /// A GTX 480-class (Fermi) GPU, as configured in GPGPU-Sim for the DWF/TBC/CAPRI studies: 15 SMs,
    /// 32-wide warps, 1536 threads and 48 warps per SM, 8 CTAs, 32768 registers, 48 KB shared memory,
    /// 16 KB 4-way L1 with 32 MSHRs, 768 KB 6-way L2, 177 GB/s GDDR5 at a 1.4 GHz shader clock.
    pub fn gtx480() -> GpuConfig {
        GpuConfig {
            name: "gtx480".into(),
            num_sms: 15,
            clock_mhz: 1401,
            warp_size: 32,
            sm: SmConfig {
                max_threads: 1536,
                max_warps: 48,
                max_ctas: 8,
                registers: 32768,
                shared_memory: 48 * 1024,
                max_regs_per_thread: 63,
                regs_per_thread: 0,
                schedulers: 2,
                scheduler: SchedulerPolicy::Lrr,
                two_level_active: 8,
                miss_blocks_warp: true,
                dispatch: Dispatch::Spatial,
            },
            latency: Latencies {
                int: 4,
                float: 4,
                double: 8,
                sfu: 20,
                branch: 4,
                shared: 24,
                constant: 8,
                barrier: 4,
                warp_op: 8,
            },
            interval: Intervals { int: 2, float: 2, double: 16, sfu: 8, mem: 1 },
            l1: L1Config { size: 16 * 1024, line: 128, sector: 32, ways: 4, mshrs: 32, mshr_merge: 8, hit_latency: 28 },
            l2: L2Config {
                size: 768 * 1024,
                line: 128,
                // GPGPU-Sim's 12 partitions x 64 sets x 8 ways, as one cache: 1024 sets x 6 ways.
                ways: 6,
                hit_latency: 120,
                sectors_per_cycle: 6,
                atomic_latency: 16,
            },
            dram: DramConfig { latency: 100, bytes_per_cycle: 126 },
            shared: SharedConfig { banks: 32, bank_bytes: 4 },
            mechanism: MechanismConfig::default(),
        }
    }

    /// A Volta-class (V100) GPU: 80 SMs, 2048 threads, 64 warps and 32 CTAs per SM, 65536 registers, 96 KB
    /// shared memory, 4 schedulers, 32 KB L1 with 256 MSHRs, 6 MB L2, 900 GB/s HBM2 at 1.53 GHz.
    pub fn volta() -> GpuConfig {
        GpuConfig {
            name: "volta".into(),
            num_sms: 80,
            clock_mhz: 1530,
            warp_size: 32,
            sm: SmConfig {
                max_threads: 2048,
                max_warps: 64,
                max_ctas: 32,
                registers: 65536,
                shared_memory: 96 * 1024,
                max_regs_per_thread: 255,
                regs_per_thread: 0,
                schedulers: 4,
                scheduler: SchedulerPolicy::Gto,
                two_level_active: 8,
                miss_blocks_warp: false,
                dispatch: Dispatch::Spatial,
            },
            latency: Latencies {
                int: 4,
                float: 4,
                double: 8,
                sfu: 20,
                branch: 4,
                shared: 20,
                constant: 8,
                barrier: 4,
                warp_op: 8,
            },
            interval: Intervals { int: 2, float: 2, double: 4, sfu: 8, mem: 1 },
            l1: L1Config {
                size: 32 * 1024,
                line: 128,
                sector: 32,
                ways: 4,
                mshrs: 256,
                mshr_merge: 8,
                hit_latency: 28,
            },
            l2: L2Config {
                size: 6 * 1024 * 1024,
                line: 128,
                // 2048 sets x 24 ways.
                ways: 24,
                hit_latency: 190,
                sectors_per_cycle: 40,
                atomic_latency: 16,
            },
            dram: DramConfig { latency: 200, bytes_per_cycle: 588 },
            shared: SharedConfig { banks: 32, bank_bytes: 4 },
            mechanism: MechanismConfig::default(),
        }
    }

    /// A deliberately small GPU for tests and teaching: 2 SMs, tiny caches, short latencies.
    pub fn tiny() -> GpuConfig {
        let mut c = GpuConfig::gtx480();
        c.name = "tiny".into();
        c.num_sms = 2;
        c.l1 = L1Config { size: 1024, line: 128, sector: 32, ways: 2, mshrs: 8, mshr_merge: 4, hit_latency: 8 };
        c.l2 =
            L2Config { size: 8 * 1024, line: 128, ways: 4, hit_latency: 40, sectors_per_cycle: 4, atomic_latency: 4 };
        c.dram = DramConfig { latency: 60, bytes_per_cycle: 32 };
        c
    }

    /// Seed 004's temporal-SIMT machine (§5.1, Figure 7c) with the GTX 480's memory system and
    /// resources: each SM has 32 lanes (the GTX 480's 32 cores), each lane a scheduler running its warps'
    /// threads one per cycle; per-thread intervals keep the GTX 480's per-SM throughput (double 8 cycles
    /// and special functions 4 cycles per thread). Scalar instructions dispatch once per warp.
    pub fn temporal() -> GpuConfig {
        let mut c = GpuConfig::gtx480();
        c.name = "temporal".into();
        c.sm.schedulers = 32;
        c.sm.dispatch = Dispatch::Temporal;
        c.interval = Intervals { int: 1, float: 1, double: 8, sfu: 4, mem: 1 };
        c
    }

    /// A preset by name.
    pub fn preset(name: &str) -> Option<GpuConfig> {
        match name {
            "gtx480" => Some(GpuConfig::gtx480()),
            "volta" => Some(GpuConfig::volta()),
            "tiny" => Some(GpuConfig::tiny()),
            "temporal" => Some(GpuConfig::temporal()),
            _ => None,
        }
    }

    /// Parses a TOML configuration: `base = "PRESET"` (default `gtx480`) plus overrides.
    pub fn from_toml(text: &str) -> Result<GpuConfig, String> {
        let mut value: toml::Table = text.parse().map_err(|e| format!("invalid TOML: {e}"))?;
        let base = match value.remove("base") {
            Some(toml::Value::String(b)) => b,
            Some(other) => return Err(format!("`base` must be a preset name, found {other}")),
            None => "gtx480".into(),
        };
        let preset = GpuConfig::preset(&base)
            .ok_or_else(|| format!("unknown base preset `{base}` (presets: {})", PRESETS.join(", ")))?;
        let mut merged = toml::Table::try_from(&preset).map_err(|e| e.to_string())?;
        merge(&mut merged, value);
        let cfg: GpuConfig = merged.try_into().map_err(|e: toml::de::Error| format!("invalid configuration: {e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Resolves `--config`: a preset name or a TOML file's contents (read by the caller).
    pub fn resolve(name_or_toml: &str) -> Result<GpuConfig, String> {
        match GpuConfig::preset(name_or_toml) {
            Some(c) => Ok(c),
            None => GpuConfig::from_toml(name_or_toml),
        }
    }

    /// Every numeric parameter with its documented range (`docs/configuration.md`): (key, value, least,
    /// most). Ranges keep every structure the model builds from a configuration small enough to check
    /// against the memory limit before it is built, and exclude values that mean nothing (0 SMs).
    pub fn ranges(&self) -> Vec<(&'static str, u64, u64, u64)> {
        const CYCLES: u64 = 1_000_000;
        let s = &self.sm;
        vec![
            ("num_sms", self.num_sms.into(), 1, 1024),
            ("clock_mhz", self.clock_mhz.into(), 1, 100_000),
            ("warp_size", self.warp_size.into(), 1, 64),
            ("sm.max_threads", s.max_threads.into(), 1, 1 << 16),
            ("sm.max_warps", s.max_warps.into(), 1, 4096),
            ("sm.max_ctas", s.max_ctas.into(), 1, 1024),
            ("sm.registers", s.registers.into(), 1, 1 << 24),
            ("sm.shared_memory", s.shared_memory.into(), 0, 1 << 24),
            ("sm.max_regs_per_thread", s.max_regs_per_thread.into(), 1, 1 << 16),
            ("sm.regs_per_thread", s.regs_per_thread.into(), 0, 1 << 16),
            ("sm.schedulers", s.schedulers.into(), 1, 64),
            ("sm.two_level_active", s.two_level_active.into(), 1, 4096),
            ("latency.int", self.latency.int, 0, CYCLES),
            ("latency.float", self.latency.float, 0, CYCLES),
            ("latency.double", self.latency.double, 0, CYCLES),
            ("latency.sfu", self.latency.sfu, 0, CYCLES),
            ("latency.branch", self.latency.branch, 0, CYCLES),
            ("latency.shared", self.latency.shared, 0, CYCLES),
            ("latency.constant", self.latency.constant, 0, CYCLES),
            ("latency.barrier", self.latency.barrier, 0, CYCLES),
            ("latency.warp_op", self.latency.warp_op, 0, CYCLES),
            ("interval.int", self.interval.int, 1, CYCLES),
            ("interval.float", self.interval.float, 1, CYCLES),
            ("interval.double", self.interval.double, 1, CYCLES),
            ("interval.sfu", self.interval.sfu, 1, CYCLES),
            ("interval.mem", self.interval.mem, 1, CYCLES),
            ("l1.size", self.l1.size, 32, 1 << 30),
            ("l1.line", self.l1.line.into(), 32, 4096),
            ("l1.sector", self.l1.sector.into(), 1, 4096),
            ("l1.ways", self.l1.ways.into(), 1, 1 << 16),
            ("l1.mshrs", self.l1.mshrs.into(), 1, 1 << 16),
            ("l1.mshr_merge", self.l1.mshr_merge.into(), 1, 1 << 16),
            ("l1.hit_latency", self.l1.hit_latency, 0, CYCLES),
            ("l2.size", self.l2.size, 32, 1 << 34),
            ("l2.line", self.l2.line.into(), 32, 4096),
            ("l2.ways", self.l2.ways.into(), 1, 1 << 16),
            ("l2.hit_latency", self.l2.hit_latency, 0, CYCLES),
            ("l2.sectors_per_cycle", self.l2.sectors_per_cycle, 1, 1 << 20),
            ("l2.atomic_latency", self.l2.atomic_latency, 0, CYCLES),
            ("dram.latency", self.dram.latency, 0, CYCLES),
            ("dram.bytes_per_cycle", self.dram.bytes_per_cycle, 1, 1 << 24),
            ("shared.banks", self.shared.banks.into(), 1, 1024),
            ("shared.bank_bytes", self.shared.bank_bytes.into(), 1, 1024),
            ("mechanism.compaction_latency", self.mechanism.compaction_latency, 0, CYCLES),
            ("mechanism.pool_latency", self.mechanism.pool_latency, 0, CYCLES),
            ("mechanism.sort_step_latency", self.mechanism.sort_step_latency, 0, CYCLES),
        ]
    }

    /// Checks that every parameter is usable: each within its range ([`GpuConfig::ranges`]) and the
    /// combinations the model needs (power-of-two warp size, cache geometries). The message names the key.
    pub fn validate(&self) -> Result<(), String> {
        for (key, v, lo, hi) in self.ranges() {
            if v < lo || v > hi {
                return Err(format!("`{key}` = {v} is outside its range {lo}..={hi}"));
            }
        }
        if !self.warp_size.is_power_of_two() {
            return Err(format!("`warp_size` = {} is not a power of two in 1..=64", self.warp_size));
        }
        if self.l1.line % self.l1.sector != 0 || self.l1.line / self.l1.sector > 32 {
            return Err(format!(
                "`l1.sector` = {} must divide `l1.line` = {} into at most 32 sectors",
                self.l1.sector, self.l1.line
            ));
        }
        crate::memsys::Cache::new(self.l1_geometry()).map_err(|e| format!("`l1` geometry: {e}"))?;
        crate::memsys::Cache::new(self.l2_geometry()).map_err(|e| format!("`l2` geometry: {e}"))?;
        Ok(())
    }

    /// An upper bound of the bytes the timing model's own structures take for a launch whose kernel has
    /// `nregs` registers (the caches' tags, MSHRs, and per resident thread its scoreboard and timing rows),
    /// counted against the launch's memory limit before anything is built.
    pub fn model_bytes(&self, nregs: u64, launch: &reconverge_sim::LaunchConfig) -> u64 {
        const TAG: u64 = 24;
        let l1 = (self.l1.size / u64::from(self.l1.line.max(1))).saturating_mul(TAG);
        let mshrs = u64::from(self.l1.mshrs).saturating_mul(32 + 16 * u64::from(self.l1.mshr_merge));
        let w = u64::from(launch.warp_size.max(1));
        let threads = u64::from(self.sm.max_threads)
            .min(launch.threads_per_cta_u64().div_ceil(w) * w * u64::from(self.sm.max_ctas));
        let per_thread = (nregs + 8).saturating_mul(8);
        let per_sm = l1
            .saturating_add(mshrs)
            .saturating_add(threads.saturating_mul(per_thread))
            .saturating_add(u64::from(self.sm.max_warps).saturating_mul(128));
        let l2 = (self.l2.size / u64::from(self.l2.line.max(1))).saturating_mul(TAG);
        per_sm.saturating_mul(u64::from(self.num_sms)).saturating_add(l2)
    }

    /// The L1 cache geometry.
    pub fn l1_geometry(&self) -> crate::memsys::CacheGeometry {
        crate::memsys::CacheGeometry { size_bytes: self.l1.size, line_bytes: self.l1.line, ways: self.l1.ways }
    }

    /// The L2 cache geometry.
    pub fn l2_geometry(&self) -> crate::memsys::CacheGeometry {
        crate::memsys::CacheGeometry { size_bytes: self.l2.size, line_bytes: self.l2.line, ways: self.l2.ways }
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}

fn merge(into: &mut toml::Table, from: toml::Table) {
    for (k, v) in from {
        match (into.get_mut(&k), v) {
            (Some(toml::Value::Table(a)), toml::Value::Table(b)) => merge(a, b),
            (_, v) => {
                into.insert(k, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_and_round_trip_through_toml() {
        for p in PRESETS {
            let c = GpuConfig::preset(p).unwrap();
            c.validate().unwrap();
            let again = GpuConfig::from_toml(&format!("base = \"{p}\"\n{}", c.to_toml())).unwrap();
            assert_eq!(again, c);
        }
    }

    #[test]
    fn overrides_and_errors() {
        let c = GpuConfig::from_toml("base = \"volta\"\nnum_sms = 4\n[sm]\nscheduler = \"two-level\"\n").unwrap();
        assert_eq!(c.num_sms, 4);
        assert_eq!(c.sm.scheduler, SchedulerPolicy::TwoLevel);
        assert_eq!(c.sm.max_threads, 2048);
        assert!(GpuConfig::from_toml("num_smz = 4").unwrap_err().contains("num_smz"));
        assert!(GpuConfig::from_toml("base = \"nope\"").unwrap_err().contains("nope"));
        assert!(GpuConfig::from_toml("[l1]\nways = 3").is_err());
        assert!(GpuConfig::from_toml("num_sms = 0").unwrap_err().contains("num_sms"));
    }
}

#[cfg(test)]
mod range_tests {
    use super::*;

    #[test]
    fn every_range_is_documented_and_the_presets_lie_inside() {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/configuration.md"))
            .expect("docs/configuration.md");
        for (key, _, lo, hi) in GpuConfig::gtx480().ranges() {
            let row = format!("| `{key}` | {lo} | {hi} |");
            assert!(doc.contains(&row), "docs/configuration.md lacks `{row}`");
        }
        for p in PRESETS {
            GpuConfig::preset(p).expect("preset").validate().expect(p);
        }
    }

    #[test]
    fn a_value_outside_its_range_names_the_key() {
        let e = GpuConfig::from_toml("num_sms = 2147483647\n").unwrap_err();
        assert!(e.contains("`num_sms`") && e.contains("1..=1024"), "{e}");
        let e = GpuConfig::from_toml("[l2]\nline = 16\n").unwrap_err();
        assert!(e.contains("`l2.line`"), "{e}");
    }
}
