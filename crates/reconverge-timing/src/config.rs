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

    /// Checks that every parameter is usable.
    pub fn validate(&self) -> Result<(), String> {
        let pos = |v: u64, what: &str| if v == 0 { Err(format!("{what} must be at least 1")) } else { Ok(()) };
        pos(self.num_sms as u64, "num_sms")?;
        pos(self.sm.max_threads as u64, "sm.max_threads")?;
        pos(self.sm.max_warps as u64, "sm.max_warps")?;
        pos(self.sm.max_ctas as u64, "sm.max_ctas")?;
        pos(self.sm.schedulers as u64, "sm.schedulers")?;
        pos(self.sm.two_level_active as u64, "sm.two_level_active")?;
        pos(self.sm.max_regs_per_thread as u64, "sm.max_regs_per_thread")?;
        pos(self.l1.mshrs as u64, "l1.mshrs")?;
        pos(self.l1.mshr_merge as u64, "l1.mshr_merge")?;
        pos(self.l2.sectors_per_cycle, "l2.sectors_per_cycle")?;
        pos(self.dram.bytes_per_cycle, "dram.bytes_per_cycle")?;
        pos(self.shared.banks as u64, "shared.banks")?;
        pos(self.shared.bank_bytes as u64, "shared.bank_bytes")?;
        for (v, w) in [
            (self.interval.int, "interval.int"),
            (self.interval.float, "interval.float"),
            (self.interval.double, "interval.double"),
            (self.interval.sfu, "interval.sfu"),
            (self.interval.mem, "interval.mem"),
        ] {
            pos(v, w)?;
        }
        if !self.warp_size.is_power_of_two() || self.warp_size > 64 {
            return Err(format!("warp_size {} is not a power of two in 1..=64", self.warp_size));
        }
        if self.l1.sector == 0 || self.l1.line % self.l1.sector != 0 || self.l1.line / self.l1.sector > 32 {
            return Err("l1.sector must divide l1.line into at most 32 sectors".into());
        }
        crate::memsys::Cache::new(self.l1_geometry()).map_err(|e| format!("l1: {e}"))?;
        crate::memsys::Cache::new(self.l2_geometry()).map_err(|e| format!("l2: {e}"))?;
        Ok(())
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
