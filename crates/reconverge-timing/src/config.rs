//! GPU configurations: every parameter of the timing model, named presets, and TOML files.
//!
//! A TOML file may start from a preset (`base = "gtx480"`) and override any subset of fields; without
//! `base` it starts from `gtx480`. Unknown keys are errors. The effective configuration is printed in
//! `--json` output, so a run is reproducible from its statistics alone.

use crate::error::StructureError;
use crate::error::{ConfigError, TomlError};
use crate::memsys::{L2Dram, Mshr};
use reconverge_mechanism::MechanismLatencies;
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
    /// Block-age priority: the warps of the oldest resident CTA first, loose round-robin among a CTA's
    /// warps; a younger CTA issues only when no warp of an older one is ready. The warp scheduling the
    /// thread block compaction paper pairs with TBC (a CTA's warps reach its next branch together, so they
    /// stall there for each other less), usable with every mechanism.
    CtaOldest,
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
    /// Spatial SIMT with a separate scalar unit (seed 004 §5.1, Figure 7a): a scalar instruction of the
    /// scalarization plan (other than a memory access, which keeps the load/store unit) executes once per
    /// static warp on the scheduler's own 1-wide scalar unit, busy 1 cycle per dispatch, with its class's
    /// latency, instead of on the SIMT unit of its kind, so another warp's SIMT instruction may use that
    /// unit meanwhile; issue stays one instruction per scheduler per cycle. A warp-sequential access's
    /// base-address instructions take the scheduler's next issue slots (one per base instruction). Scalar
    /// registers live in the scalar unit's register file: the SIMT register file holds only the other
    /// registers ([`GpuConfig::registers_per_thread`]).
    ScalarUnit,
    /// Spatial SIMT executing scalar instructions on one SIMT lane (seed 004 §5.1, Figure 7b): cycles and
    /// registers exactly as [`Dispatch::Spatial`]; only the lane operations count one per static warp
    /// for a scalar instruction.
    ScalarLane,
}

impl Dispatch {
    /// Whether runs need seed 004's scalarization plan (to dispatch scalar instructions once).
    pub fn needs_scalar_plan(self) -> bool {
        self != Dispatch::Spatial
    }

    /// The configuration name (`sm.dispatch`, and the suffix of `PRESET+DISPATCH` in [`GpuConfig::preset`]).
    pub fn name(self) -> &'static str {
        match self {
            Dispatch::Spatial => "spatial",
            Dispatch::Temporal => "temporal",
            Dispatch::ScalarUnit => "scalar-unit",
            Dispatch::ScalarLane => "scalar-lane",
        }
    }

    /// The dispatch named `name` ([`Dispatch::name`]).
    pub fn from_name(name: &str) -> Option<Dispatch> {
        [Dispatch::Spatial, Dispatch::Temporal, Dispatch::ScalarUnit, Dispatch::ScalarLane]
            .into_iter()
            .find(|d| d.name() == name)
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
    /// Registers a thread may use; the kernel's register demand is what `ptxas -v` allocated when a front
    /// end asked it, else its PTX register count (64-bit registers count twice), capped at this value,
    /// unless `regs_per_thread` fixes it.
    pub max_regs_per_thread: u32,
    /// Fixed registers per thread for every kernel; 0 = the kernel's own (ptxas's, else the estimate).
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
    /// How instructions dispatch (seed 004 Figure 7): `spatial`, `scalar-unit` (7a), `scalar-lane` (7b) or `temporal` (7c).
    #[serde(default)]
    pub dispatch: Dispatch,
    /// Functional units per SM shared by its schedulers, by kind: integer (with an `[opcode]` table: every
    /// integer, single-precision and other ALU operation, GPGPU-Sim's SP units), float, double, special
    /// function (GPGPU-Sim's SFU units), load/store, and optionally tensor (`-gpgpu_num_tensor_core_units`;
    /// without it, matrix operations run on the integer pool). Empty (the default): each scheduler has one
    /// unit of each kind of its own. An issued instruction takes the unit of its kind that is free first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<u32>,
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
    /// Branches, calls (`printf`, whose reads of its strings and arguments are not modelled), returns, and
    /// the explicit stack instructions: cycles before the warp issues again.
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
    /// Capacity, bytes; 0: no L1 data cache (GPGPU-Sim's `-gpgpu_no_dl1`): loads go to the L2 through the
    /// MSHRs, stores (local ones too) write through.
    pub size: u64,
    /// Line size, bytes.
    pub line: u32,
    /// Sector size, bytes (coalescing granularity).
    pub sector: u32,
    /// Associativity.
    pub ways: u32,
    /// Miss status holding registers (outstanding lines; GPGPU-Sim's `-gpgpu_cache:dl1` MSHR field).
    pub mshrs: u32,
    /// Requests merged into one MSHR entry at most.
    pub mshr_merge: u32,
    /// Hit latency, cycles (GPGPU-Sim's `-gpgpu_l1_latency`).
    pub hit_latency: u64,
    /// How a line picks its set (`linear`, or `fermi-hash`: GPGPU-Sim's Fermi L1 hash).
    #[serde(default)]
    pub set_index: crate::memsys::SetIndex,
    /// A load miss fetches the whole line from the L2, not only the sectors the access touched: a
    /// non-sectored L1 (GPGPU-Sim's cache type `N`, e.g. `-gpgpu_cache:dl1 N:32:128:4,...`).
    #[serde(default)]
    pub whole_line_fills: bool,
}

/// The L2 cache shared by all SMs.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct L2Config {
    /// Capacity, bytes; 0: no L2 (GPGPU-Sim 2.x's default): every read goes to DRAM, every write too; the
    /// slices' pipes and `hit_latency` remain as the path to the memory controllers.
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
    /// The launch's buffers and module variables start in the L2 (as far as they fit), as the host's copies
    /// to the device leave them in GPGPU-Sim (`-gpgpu_perf_sim_memcpy 1`); otherwise the L2 starts empty.
    #[serde(default)]
    pub preload: bool,
    /// Memory channels the L2 is sliced by (GPGPU-Sim's `-gpgpu_n_mem`); 0 (the default): one slice, one
    /// pipe. With channels, each slice serves `sectors_per_cycle / slices` sectors per cycle on its own.
    #[serde(default)]
    pub channels: u32,
    /// Slices per channel (GPGPU-Sim's `-gpgpu_n_sub_partition_per_mchannel`).
    #[serde(default = "one")]
    pub slices_per_channel: u32,
    /// Bytes of address space per channel before the next (GPGPU-Sim's `dramid@8`: 256).
    #[serde(default = "interleave")]
    pub interleave: u64,
    /// Channels by a hash of the address (GPGPU-Sim's IPOLY `-gpgpu_memory_partition_indexing 2`) instead of
    /// the address modulo the channels.
    #[serde(default)]
    pub slice_hash: bool,
    /// Sectors per cycle an SM's port to the interconnect carries, counting the data of its reads (which
    /// comes back through it), writes and atomics (GPGPU-Sim: one 40-byte flit per cycle, about a 32-byte
    /// sector); 0 (the default): unlimited.
    #[serde(default)]
    pub sm_port_sectors_per_cycle: u64,
}

fn one() -> u32 {
    1
}

fn interleave() -> u64 {
    256
}

/// Device memory.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramConfig {
    /// Latency added to an L2 miss, cycles: with `banks`, on top of the DRAM's own timing (GPGPU-Sim's
    /// `-dram_latency` plus the way to and from the memory controller).
    pub latency: u64,
    /// Bandwidth, bytes per core cycle, of the one FIFO channel DRAM is without `banks` (with them, the
    /// peak follows from the banks' clock, bursts and channels, and this is not used).
    pub bytes_per_cycle: u64,
    /// Banked DRAM with row buffers and GPGPU-Sim's timing constraints (`[dram.banks]`); absent: one
    /// channel of `bytes_per_cycle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub banks: Option<DramBanks>,
    /// Whether `banks` is used (default `true`): `false` models DRAM as the one channel of
    /// `bytes_per_cycle` while keeping the bank parameters (how the validation's ablation turns DRAM
    /// timing off on top of a preset).
    #[serde(default = "yes", skip_serializing_if = "is_yes")]
    pub use_banks: bool,
}

fn yes() -> bool {
    true
}

fn is_yes(b: &bool) -> bool {
    *b
}

/// Banked DRAM (`[dram.banks]`): GPGPU-Sim's `-gpgpu_dram_timing_opt` (timing in DRAM command cycles),
/// its burst, clock and address mapping. The channels are the L2's (`l2.channels`, at least one). The
/// model is described in the timing crate's `memsys::dram`.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramBanks {
    /// DRAM command clock, MHz (the fourth of GPGPU-Sim's `-gpgpu_clock_domains`).
    pub clock_mhz: u32,
    /// Banks per channel (`nbk`).
    pub banks: u32,
    /// Bank groups per channel (`nbkgrp`; 1: none).
    pub bank_groups: u32,
    /// Bytes one burst moves: bus width × burst length × chips per channel (`-gpgpu_dram_buswidth` ×
    /// `-gpgpu_dram_burst_length` × `-gpgpu_n_mem_per_ctrlr`).
    pub burst_bytes: u32,
    /// Command cycles a burst holds the data bus: `-gpgpu_dram_burst_length` /
    /// `-dram_data_command_freq_ratio`.
    pub burst_cycles: u32,
    /// `CCD`: column to column of the channel.
    pub ccd: u32,
    /// `CCDL`: column to column of one bank group.
    pub ccdl: u32,
    /// `RRD`: activate to activate of the channel.
    pub rrd: u32,
    /// `RCD`: activate to read.
    pub rcd: u32,
    /// `RAS`: activate to precharge.
    pub ras: u32,
    /// `RP`: precharge to activate.
    pub rp: u32,
    /// `RC`: activate to activate of one bank.
    pub rc: u32,
    /// `CL`: read command to data.
    pub cl: u32,
    /// `WL`: write command to data.
    pub wl: u32,
    /// `CDLR`: last write data to a read.
    pub cdlr: u32,
    /// `WR`: write recovery before a precharge.
    pub wr: u32,
    /// `RTPL`: read to precharge of one bank group.
    pub rtpl: u32,
    /// GPGPU-Sim's `-gpgpu_mem_addr_mapping` (`dramid@8;` then 64 bit letters: B bank, R row, C/S column).
    pub address_mapping: String,
}

impl DramBanks {
    /// The timing model's parameters, with the core clock and channel count of `gpu`; errors on a bad
    /// address mapping.
    pub fn timing(&self, gpu: &GpuConfig) -> Result<crate::memsys::DramTiming, StructureError> {
        Ok(crate::memsys::DramTiming {
            core_mhz: gpu.clock_mhz,
            dram_mhz: self.clock_mhz,
            channels: gpu.l2.channels.max(1),
            banks: self.banks,
            bank_groups: self.bank_groups,
            burst_bytes: self.burst_bytes,
            burst_cycles: self.burst_cycles,
            ccd: self.ccd,
            ccdl: self.ccdl,
            rrd: self.rrd,
            rcd: self.rcd,
            ras: self.ras,
            rp: self.rp,
            rc: self.rc,
            cl: self.cl,
            wl: self.wl,
            cdlr: self.cdlr,
            wr: self.wr,
            rtpl: self.rtpl,
            mapping: crate::memsys::AddressMapping::parse(&self.address_mapping)?,
        })
    }

    /// GPGPU-Sim's `SM2_GTX480` (`configs/tested-cfgs/SM2_GTX480/gpgpusim.config`): GDDR5 timing of the
    /// Hynix H5GQ1H24AFR at 924 MHz, 16 banks in 4 groups, 64-byte bursts (2 chips × 4 bytes × BL 8, QDR).
    pub fn gtx480() -> DramBanks {
        DramBanks {
            clock_mhz: 924,
            banks: 16,
            bank_groups: 4,
            burst_bytes: 64,
            burst_cycles: 2,
            ccd: 2,
            ccdl: 3,
            rrd: 6,
            rcd: 12,
            ras: 28,
            rp: 12,
            rc: 40,
            cl: 12,
            wl: 4,
            cdlr: 5,
            wr: 12,
            rtpl: 2,
            address_mapping: "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.BBBCCCCB.CCSSSSSS".into(),
        }
    }

    /// GPGPU-Sim's `SM7_QV100`: HBM at 850 MHz, 16 banks in 4 groups, 32-byte bursts (16 bytes × BL 2,
    /// DDR).
    pub fn qv100() -> DramBanks {
        DramBanks {
            clock_mhz: 850,
            banks: 16,
            bank_groups: 4,
            burst_bytes: 32,
            burst_cycles: 1,
            ccd: 1,
            ccdl: 2,
            rrd: 3,
            rcd: 12,
            ras: 28,
            rp: 12,
            rc: 40,
            cl: 12,
            wl: 2,
            cdlr: 3,
            wr: 10,
            rtpl: 3,
            address_mapping: "dramid@8;00000000.00000000.00000000.00000000.0000RRRR.RRRRRRRR.RBBBCCCB.CCCSSSSS".into(),
        }
    }
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

/// Per-opcode result latencies and initiation intervals, as GPGPU-Sim's `-ptx_opcode_latency_{int,fp,dp,sfu}`
/// and `-ptx_opcode_initiation_*` give them. The arithmetic slots are, in order, ADD/SUB, MAX/MIN, MUL, MAD,
/// DIV (and SHFL for `int`); an operation of none of these kinds (moves, logic, shifts, comparisons,
/// selects, conversions, and `fma`, which GPGPU-Sim 4.0 does not list) takes `other`. Without this table
/// (`[opcode]` absent) every operation takes its class's `[latency]` and `[interval]`.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpcodeConfig {
    /// Integer ADD, MAX, MUL, MAD, DIV, SHFL latencies.
    pub int_latency: [u64; 6],
    /// Integer ADD, MAX, MUL, MAD, DIV, SHFL initiation intervals.
    pub int_initiation: [u64; 6],
    /// Single-precision ADD, MAX, MUL, MAD, DIV latencies.
    pub fp_latency: [u64; 5],
    /// Single-precision initiation intervals.
    pub fp_initiation: [u64; 5],
    /// Double-precision ADD, MAX, MUL, MAD, DIV latencies.
    pub dp_latency: [u64; 5],
    /// Double-precision initiation intervals.
    pub dp_initiation: [u64; 5],
    /// Special functions (`sqrt`, `rsqrt`, `rcp`, `sin`, `cos`, `ex2`, `lg2`): latency.
    pub sfu_latency: u64,
    /// Special functions: initiation interval.
    pub sfu_initiation: u64,
    /// Every other operation: latency.
    pub other_latency: u64,
    /// Every other operation: initiation interval.
    pub other_initiation: u64,
    /// Double-precision operations run on the special-function unit (GPGPU-Sim when `-gpgpu_num_dp_units`
    /// is 0, as for the GTX 480).
    pub dp_on_sfu: bool,
    /// The tensor cores' matrix multiply-accumulates (`mma`, `wmma.mma`): latency (GPGPU-Sim's
    /// `-ptx_opcode_latency_tesnor`, sic, 64 in `SM7_QV100`, the default).
    #[serde(default = "tensor_default")]
    pub tensor_latency: u64,
    /// Tensor operations: initiation interval (`-ptx_opcode_initiation_tensor`, 64 in `SM7_QV100`, the
    /// default).
    #[serde(default = "tensor_default")]
    pub tensor_initiation: u64,
}

/// GPGPU-Sim's tensor latency and initiation interval in `SM7_QV100`.
fn tensor_default() -> u64 {
    64
}

/// The SM's front end and pipeline around the functional units: instruction fetch through an instruction
/// cache into a small per-warp instruction buffer, and the operand collector. The defaults (a perfect
/// instruction cache, no buffer limits, no extra pipeline latency) are the model without a front end.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FrontendConfig {
    /// Instruction cache per SM, bytes (GPGPU-Sim's `-gpgpu_cache:il1`; 0: perfect, and every instruction is
    /// always fetched: no front end).
    pub icache_size: u64,
    /// Instruction cache line, bytes.
    pub icache_line: u32,
    /// Instruction cache associativity.
    pub icache_ways: u32,
    /// Bytes of one instruction (GPGPU-Sim: 8 per PTX instruction).
    pub inst_bytes: u32,
    /// Bytes one fetch brings into a warp's instruction buffer (GPGPU-Sim: 16, two instructions, never past
    /// the line's end). The SM fetches for one warp per cycle, round-robin among warps whose buffer is
    /// empty; a fetched instruction can issue `decode_latency + 1` cycles later; a taken branch or any change
    /// of the warp's next pc discards the buffer.
    pub fetch_bytes: u32,
    /// Cycles from a fetch until its instructions are in the buffer (GPGPU-Sim's fetch-decode stage).
    pub decode_latency: u64,
    /// Cycles added to every result between issue and the functional unit (the operand collector's register
    /// reads and dispatch) and after it (write-back), as seen by a dependent instruction (GPGPU-Sim's
    /// operand collector and pipeline registers, `-gpgpu_operand_collector_num_units_*`).
    pub operand_latency: u64,
}

impl Default for FrontendConfig {
    fn default() -> Self {
        FrontendConfig {
            icache_size: 0,
            icache_line: 128,
            icache_ways: 4,
            inst_bytes: 8,
            fetch_bytes: 16,
            decode_latency: 1,
            operand_latency: 0,
        }
    }
}

impl FrontendConfig {
    /// Whether instructions come through a fetch stage at all.
    pub fn enabled(&self) -> bool {
        self.icache_size > 0
    }
}

/// A per-SM constant cache for `.const` and `.param` loads (GPGPU-Sim's `-gpgpu_const_cache:l1`); misses
/// go to the L2 like data loads. Size 0 (the default): a fixed `latency.constant` per distinct address.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ConstCacheConfig {
    /// Capacity, bytes (GPGPU-Sim's `-gpgpu_const_cache:l1`; 0: no cache model).
    pub size: u64,
    /// Line size, bytes.
    pub line: u32,
    /// Associativity.
    pub ways: u32,
}

impl Default for ConstCacheConfig {
    fn default() -> Self {
        ConstCacheConfig { size: 0, line: 64, ways: 2 }
    }
}

/// A per-SM read-only texture cache for `tex`/`tld4` fetches (GPGPU-Sim's `-gpgpu_tex_cache:l1`); misses go
/// to the L2 like data loads. Size 0 (the default): fetches go through the L1 as loads of their first
/// texel.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TextureCacheConfig {
    /// Capacity, bytes (GPGPU-Sim's `-gpgpu_tex_cache:l1` sets x line x ways; 0: no texture cache).
    pub size: u64,
    /// Line size, bytes.
    pub line: u32,
    /// Associativity.
    pub ways: u32,
    /// Cycles from issue to the data of a fetch whose lines all hit. GPGPU-Sim has no parameter for it (its
    /// texture cache returns hits in order through a fragment FIFO, `tex_cache::cycle` in
    /// `gpu-cache.cc`, inside the load/store unit's pipeline); the presets use their L1 hit latency.
    pub hit_latency: u64,
}

impl Default for TextureCacheConfig {
    fn default() -> Self {
        TextureCacheConfig { size: 0, line: 128, ways: 4, hit_latency: 1 }
    }
}

/// Costs of a launch as a whole.
#[derive(Clone, PartialEq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaunchCostConfig {
    /// Cycles from the launch until the first CTA is dispatched (GPGPU-Sim's
    /// `-gpgpu_kernel_launch_latency`).
    pub kernel_latency: u64,
    /// The kernel ends when every store has been accepted by the L2 (GPGPU-Sim counts a CTA done only when
    /// its stores are acknowledged), not at the last issue.
    pub drain_stores: bool,
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
    pub mechanism: MechanismLatencies,
    /// Per-opcode latencies (absent: per class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opcode: Option<OpcodeConfig>,
    /// Instruction fetch and operand collection.
    #[serde(default)]
    pub frontend: FrontendConfig,
    /// The constant cache.
    #[serde(default)]
    pub constant_cache: ConstCacheConfig,
    /// The texture cache.
    #[serde(default)]
    pub texture_cache: TextureCacheConfig,
    /// Launch costs.
    #[serde(default)]
    pub launch: LaunchCostConfig,
    /// Energy per event (`[energy]`); absent: energy is not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::EnergyCoefficients>,
}

/// The names of the built-in presets.
pub const PRESETS: [&str; 5] = ["gtx480", "volta", "tiny", "temporal", "ispass09"];

impl GpuConfig {
    /// GPGPU-Sim's GTX 480 model (`configs/tested-cfgs/SM2_GTX480`, which its authors correlated with the
    /// real GTX 480), option by option where the concept exists here: 15 SMs at the 700 MHz core clock that
    /// GPGPU-Sim counts cycles in, 1536 threads, 48 warps and 8 CTAs per SM, 32768 registers, 48 KB shared
    /// memory, two greedy-then-oldest schedulers sharing two SP units, one SFU (which also runs doubles:
    /// the GTX480 configuration has no double unit) and one load/store unit; GPGPU-Sim's per-opcode
    /// latency and initiation tables; a 2 KB instruction cache with two-instruction fetches; the operand
    /// collector as 4 cycles on every result; a 16 KB 4-way L1 with GPGPU-Sim's Fermi set hash, 35-cycle
    /// hits and 32 MSHRs; an 8 KB constant cache; a 768 KB L2 in 12 slices (6 channels x 2, 256-byte
    /// interleave) holding the launch's buffers at the start (`-gpgpu_perf_sim_memcpy`); 177 GB/s DRAM.
    /// Latencies of the memory path are fitted to GPGPU-Sim's cycles on the validation set
    /// (docs/validation.md).
    pub fn gtx480() -> GpuConfig {
        GpuConfig {
            name: "gtx480".into(),
            num_sms: 15,
            clock_mhz: 700,
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
                scheduler: SchedulerPolicy::Gto,
                two_level_active: 8,
                miss_blocks_warp: false,
                dispatch: Dispatch::Spatial,
                units: vec![2, 0, 0, 1, 1],
            },
            latency: Latencies {
                int: 1,
                float: 1,
                double: 8,
                sfu: 8,
                branch: 1,
                shared: 26,
                constant: 10,
                barrier: 4,
                warp_op: 8,
            },
            interval: Intervals { int: 1, float: 1, double: 8, sfu: 8, mem: 1 },
            l1: L1Config {
                size: 16 * 1024,
                line: 128,
                sector: 32,
                ways: 4,
                mshrs: 32,
                mshr_merge: 8,
                hit_latency: 35,
                set_index: crate::memsys::SetIndex::FermiHash,
                // -gpgpu_cache:dl1 N:32:128:4,...: a non-sectored L1.
                whole_line_fills: true,
            },
            l2: L2Config {
                size: 768 * 1024,
                line: 128,
                // GPGPU-Sim's 12 slices x 64 sets x 8 ways, as one cache: 1024 sets x 6 ways.
                ways: 6,
                // -gpgpu_l2_rop_latency 120 plus 40 cycles of interconnect round trip.
                hit_latency: 160,
                sectors_per_cycle: 12,
                atomic_latency: 16,
                preload: true,
                channels: 6,
                slices_per_channel: 2,
                interleave: 256,
                slice_hash: false,
                sm_port_sectors_per_cycle: 1,
            },
            dram: DramConfig { latency: 180, bytes_per_cycle: 253, banks: Some(DramBanks::gtx480()), use_banks: true },
            shared: SharedConfig { banks: 32, bank_bytes: 4 },
            mechanism: MechanismLatencies::default(),
            opcode: Some(OpcodeConfig {
                int_latency: [4, 13, 4, 5, 145, 32],
                int_initiation: [1, 2, 2, 1, 8, 4],
                fp_latency: [4, 13, 4, 5, 39],
                fp_initiation: [1, 2, 1, 1, 4],
                dp_latency: [8, 19, 8, 8, 330],
                dp_initiation: [8, 16, 8, 8, 130],
                sfu_latency: 8,
                sfu_initiation: 8,
                other_latency: 1,
                other_initiation: 1,
                dp_on_sfu: true,
                tensor_latency: 64,
                tensor_initiation: 64,
            }),
            frontend: FrontendConfig {
                icache_size: 2048,
                icache_line: 128,
                icache_ways: 4,
                inst_bytes: 8,
                fetch_bytes: 16,
                decode_latency: 1,
                operand_latency: 4,
            },
            constant_cache: ConstCacheConfig { size: 8192, line: 64, ways: 2 },
            // -gpgpu_tex_cache:l1 N:4:128:24: 4 sets x 128-byte lines x 24 ways; hits as the L1's.
            texture_cache: TextureCacheConfig { size: 4 * 128 * 24, line: 128, ways: 24, hit_latency: 35 },
            launch: LaunchCostConfig::default(),
            energy: Some(crate::energy::EnergyCoefficients::gtx480()),
        }
    }

    /// GPGPU-Sim's Volta model (`configs/tested-cfgs/SM7_QV100`, a Quadro V100), option by option where the
    /// concept exists here: 80 SMs at 1132 MHz, 2048 threads, 64 warps and 32 CTAs per SM, 65536
    /// registers, 96 KB shared memory, four greedy-then-oldest schedulers with four SP, four double and four
    /// SFU units and one load/store unit per SM, GPGPU-Sim's per-opcode tables, a perfect instruction cache
    /// (`-gpgpu_perfect_inst_const_cache`), the operand collector as 4 cycles, a 32 KB L1 with 20-cycle hits
    /// and 256 MSHRs, a 6 MB L2 in 64 hashed slices (32 channels x 2) holding the launch's buffers at the
    /// start, 900 GB/s HBM2, the 5000-cycle kernel launch latency (`-gpgpu_kernel_launch_latency`) and the
    /// kernel's end at its last store's acceptance. Latencies of the memory path are fitted to GPGPU-Sim's
    /// cycles on the validation set (docs/validation.md).
    pub fn volta() -> GpuConfig {
        GpuConfig {
            name: "volta".into(),
            num_sms: 80,
            clock_mhz: 1132,
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
                // -gpgpu_num_tensor_core_units 4.
                units: vec![4, 0, 4, 4, 1, 4],
            },
            latency: Latencies {
                int: 1,
                float: 1,
                double: 8,
                sfu: 8,
                branch: 1,
                shared: 20,
                constant: 10,
                barrier: 4,
                warp_op: 8,
            },
            interval: Intervals { int: 1, float: 1, double: 4, sfu: 8, mem: 1 },
            l1: L1Config {
                size: 32 * 1024,
                line: 128,
                sector: 32,
                ways: 4,
                mshrs: 256,
                mshr_merge: 8,
                hit_latency: 20,
                set_index: crate::memsys::SetIndex::Linear,
                whole_line_fills: false,
            },
            l2: L2Config {
                size: 6 * 1024 * 1024,
                line: 128,
                // 2048 sets x 24 ways.
                ways: 24,
                // GPGPU-Sim's -gpgpu_l2_rop_latency 160 plus the interconnect's round trip (as in gtx480:
                // 120 + 40); fitted on docs/validation.md's launches (180: 15.5% error without the launch
                // latency, 200: 13.0%, 240: 15.3%).
                hit_latency: 200,
                sectors_per_cycle: 64,
                atomic_latency: 16,
                preload: true,
                channels: 32,
                slices_per_channel: 2,
                interleave: 256,
                slice_hash: true,
                sm_port_sectors_per_cycle: 1,
            },
            dram: DramConfig { latency: 180, bytes_per_cycle: 795, banks: Some(DramBanks::qv100()), use_banks: true },
            shared: SharedConfig { banks: 32, bank_bytes: 4 },
            mechanism: MechanismLatencies::default(),
            opcode: Some(OpcodeConfig {
                int_latency: [4, 13, 4, 5, 145, 21],
                int_initiation: [2, 2, 2, 2, 8, 4],
                fp_latency: [4, 13, 4, 5, 39],
                fp_initiation: [2, 2, 2, 2, 4],
                dp_latency: [8, 19, 8, 8, 330],
                dp_initiation: [4, 4, 4, 4, 130],
                sfu_latency: 100,
                sfu_initiation: 8,
                other_latency: 1,
                other_initiation: 1,
                dp_on_sfu: false,
                tensor_latency: 64,
                tensor_initiation: 64,
            }),
            frontend: FrontendConfig { operand_latency: 4, ..FrontendConfig::default() },
            constant_cache: ConstCacheConfig::default(),
            // -gpgpu_tex_cache:l1 N:4:128:256: 4 sets x 128-byte lines x 256 ways; hits as the L1's.
            texture_cache: TextureCacheConfig { size: 4 * 128 * 256, line: 128, ways: 256, hit_latency: 20 },
            launch: LaunchCostConfig { kernel_latency: 5000, drain_stores: true },
            energy: Some(crate::energy::EnergyCoefficients::qv100()),
        }
    }

    /// A deliberately small GPU for tests and teaching: 2 SMs, tiny caches, short latencies.
    pub fn tiny() -> GpuConfig {
        let mut c = GpuConfig::gtx480();
        c.name = "tiny".into();
        c.num_sms = 2;
        // The GTX 480's per-event energies and constant power describe that chip, not a 2-SM test machine.
        c.energy = None;
        c.l1 = L1Config {
            size: 1024,
            line: 128,
            sector: 32,
            ways: 2,
            mshrs: 8,
            mshr_merge: 4,
            hit_latency: 8,
            set_index: crate::memsys::SetIndex::Linear,
            whole_line_fills: false,
        };
        c.l2 = L2Config {
            size: 8 * 1024,
            line: 128,
            ways: 4,
            hit_latency: 40,
            sectors_per_cycle: 4,
            atomic_latency: 4,
            preload: false,
            channels: 0,
            slices_per_channel: 1,
            interleave: 256,
            slice_hash: false,
            sm_port_sectors_per_cycle: 0,
        };
        c.dram = DramConfig { latency: 60, bytes_per_cycle: 32, banks: None, use_banks: true };
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
        // Each lane has its own units and its own (perfect) instruction supply; latencies per class.
        c.sm.units = Vec::new();
        c.opcode = None;
        c.frontend = FrontendConfig::default();
        c
    }

    /// GPGPU-Sim 2.1.1b's ISPASS-2009 machine (`configs/ISPASS-2009/gpgpusim.config` of that release, the
    /// configuration shipped with the ISPASS-2009 benchmarks; the release's README names it the simulator
    /// line of Fung et al.'s MICRO'07 dynamic warp formation paper), option by option, with the release's
    /// option defaults (`src/gpgpu-sim/gpu-sim.c`, `shader.c`) and manual (`doc/GPGPU-Sim_Manual.html`)
    /// where the file is silent: 28 shaders at the 500 MHz core clock (`-gpgpu_clock_domains
    /// 500:2000:2000:2000`), 1024 threads, 32 warps and 8 CTAs per SM, 16768 registers, 16 KB shared memory in
    /// 16 banks, a 32-wide pipeline (`1024:32:32`: one warp instruction per cycle) with one loose round-robin
    /// scheduler (`-gpgpu_pdom_sched_type 8`), the manual's six-stage pipeline as the latency of every
    /// instruction, a warp held back while its load is outstanding (the manual: "the entire warp is prevented
    /// from beginning execution"), no instruction cache, no L1 data cache (`-gpgpu_no_dl1`) and no L2 (the
    /// default `-gpgpu_cache:dl2` none), one MSHR per thread merging 6 requests, an 8 KB constant cache, and 8
    /// memory controllers of 2 chips with 4-byte DDR buses at 2000 MHz: 512 bytes per core cycle. The
    /// unloaded memory latency (interconnect, memory-controller queue and DRAM row access) is derived from
    /// the mesh and DRAM timing options, not measured: `docs/configuration.md` gives the derivation.
    pub fn ispass09() -> GpuConfig {
        let pipeline = 6;
        GpuConfig {
            name: "ispass09".into(),
            num_sms: 28,
            clock_mhz: 500,
            warp_size: 32,
            sm: SmConfig {
                max_threads: 1024,
                max_warps: 32,
                max_ctas: 8,
                registers: 16768,
                shared_memory: 16 * 1024,
                max_regs_per_thread: 128,
                regs_per_thread: 0,
                schedulers: 1,
                scheduler: SchedulerPolicy::Lrr,
                two_level_active: 8,
                miss_blocks_warp: true,
                dispatch: Dispatch::Spatial,
                units: Vec::new(),
            },
            latency: Latencies {
                int: pipeline,
                float: pipeline,
                double: pipeline,
                sfu: pipeline,
                branch: pipeline,
                shared: pipeline,
                constant: pipeline,
                barrier: pipeline,
                warp_op: pipeline,
            },
            interval: Intervals { int: 1, float: 1, double: 1, sfu: 1, mem: 1 },
            l1: L1Config {
                size: 0,
                line: 64,
                sector: 32,
                ways: 4,
                mshrs: 1024,
                mshr_merge: 6,
                hit_latency: 1,
                set_index: crate::memsys::SetIndex::Linear,
                whole_line_fills: false,
            },
            l2: L2Config {
                size: 0,
                line: 64,
                ways: 1,
                hit_latency: 6,
                sectors_per_cycle: 16,
                atomic_latency: 0,
                preload: false,
                channels: 8,
                slices_per_channel: 1,
                interleave: 256,
                slice_hash: false,
                sm_port_sectors_per_cycle: 2,
            },
            dram: DramConfig { latency: 11, bytes_per_cycle: 512, banks: None, use_banks: true },
            shared: SharedConfig { banks: 16, bank_bytes: 4 },
            mechanism: MechanismLatencies::default(),
            opcode: None,
            frontend: FrontendConfig::default(),
            constant_cache: ConstCacheConfig { size: 8192, line: 64, ways: 2 },
            // -gpgpu_tex_cache:l1 512:64:2:L: 512 sets x 64-byte lines x 2 ways; hits as the L1's.
            texture_cache: TextureCacheConfig { size: 512 * 64 * 2, line: 64, ways: 2, hit_latency: 1 },
            launch: LaunchCostConfig::default(),
            energy: None,
        }
    }

    /// A preset by name; `PRESET+DISPATCH` (e.g. `gtx480+scalar-unit`) is a spatial preset (`gtx480`,
    /// `volta`, `tiny`) with `sm.dispatch` set to `spatial`, `scalar-unit` or `scalar-lane`, named so.
    pub fn preset(name: &str) -> Option<GpuConfig> {
        if let Some((base, dispatch)) = name.split_once('+') {
            let d = Dispatch::from_name(dispatch).filter(|&d| d != Dispatch::Temporal)?;
            let mut c = GpuConfig::preset(base).filter(|c| c.sm.dispatch == Dispatch::Spatial)?;
            c.sm.dispatch = d;
            c.name = name.into();
            return Some(c);
        }
        match name {
            "gtx480" => Some(GpuConfig::gtx480()),
            "volta" => Some(GpuConfig::volta()),
            "tiny" => Some(GpuConfig::tiny()),
            "temporal" => Some(GpuConfig::temporal()),
            "ispass09" => Some(GpuConfig::ispass09()),
            _ => None,
        }
    }

    /// Parses a TOML configuration: `base = "PRESET"` (default `gtx480`) plus overrides, validated
    /// ([`GpuConfig::validate`]). Its name is the file's own `name`, else the base preset's when the file
    /// changes nothing, else `BASE~HASH` (16 hex digits of [`GpuConfig::content_hash`]), so that a modified
    /// preset is never labelled as the preset; [`GpuConfig::from_toml_file`] names it after its file.
    pub fn from_toml(text: &str) -> Result<GpuConfig, ConfigError> {
        GpuConfig::parse_toml(text, None)
    }

    /// [`GpuConfig::from_toml`] for the contents of the file `path`: a file that changes its base preset
    /// without a `name` of its own is named `BASE~STEM` (`gtx480~small` for `small.toml`).
    pub fn from_toml_file(text: &str, path: &str) -> Result<GpuConfig, ConfigError> {
        GpuConfig::parse_toml(text, Some(path))
    }

    fn parse_toml(text: &str, path: Option<&str>) -> Result<GpuConfig, ConfigError> {
        let mut value: toml::Table = text.parse().map_err(|e| ConfigError::Toml(TomlError::new(&e, text)))?;
        let base = match value.remove("base") {
            Some(toml::Value::String(b)) => b,
            Some(other) => return Err(ConfigError::Base(other.to_string())),
            None => "gtx480".into(),
        };
        let preset = GpuConfig::preset(&base).ok_or(ConfigError::UnknownPreset(base))?;
        let named = value.contains_key("name");
        let mut merged = toml::Table::try_from(&preset).map_err(ConfigError::Serialize)?;
        merge(&mut merged, value);
        let mut cfg: GpuConfig = merged.clone().try_into().map_err(|e| invalid(e, &merged))?;
        cfg.validate()?;
        if !named && cfg != preset {
            let stem = path.and_then(|p| std::path::Path::new(p).file_stem()).map(|s| s.to_string_lossy());
            cfg.name = match stem {
                Some(stem) => format!("{}~{stem}", preset.name),
                None => format!("{}~{:016x}", preset.name, cfg.content_hash()),
            };
        }
        Ok(cfg)
    }

    /// Gives every configuration of one comparison a name of its own, so that records, speedups and
    /// tables never match two configurations by a shared `name`. `given[i]` is how `configs[i]` was named
    /// (a preset or a file path). A configuration whose name an earlier one already has is renamed
    /// `NAME~STEM` (the stem of its file), or `NAME~HASH` (16 hex digits of a hash of its contents) when
    /// that is taken too. The same contents given twice is an error ([`ConfigError::Repeated`]).
    pub fn distinct_names(configs: &mut [GpuConfig], given: &[String]) -> Result<(), ConfigError> {
        for i in 1..configs.len() {
            if let Some(j) = (0..i).find(|&j| configs[j] == configs[i]) {
                let name = |k: usize| given.get(k).cloned().unwrap_or_else(|| configs[k].name.clone());
                return Err(ConfigError::Repeated { first: name(j), second: name(i) });
            }
            let taken = |n: &str, cs: &[GpuConfig]| cs[..i].iter().any(|c| c.name == n);
            if !taken(&configs[i].name, configs) {
                continue;
            }
            let stem = given.get(i).and_then(|g| std::path::Path::new(g).file_stem()).map(|s| s.to_string_lossy());
            let by_stem = stem.map(|s| format!("{}~{s}", configs[i].name));
            configs[i].name = match by_stem {
                Some(n) if !taken(&n, configs) => n,
                _ => format!("{}~{:016x}", configs[i].name, configs[i].content_hash()),
            };
        }
        Ok(())
    }

    /// A hash of the configuration's contents (its TOML form, FNV-1a 64), stable across runs and hosts.
    pub fn content_hash(&self) -> u64 {
        let text = toml::to_string(self).unwrap_or_default();
        text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
    }

    /// The configuration a front end's `--config NAME` (`RECONVERGE_CONFIG`, Python's `config=`) names: a
    /// preset, or else the path of a TOML file, which `read` reads (the caller's IO; its file stem labels
    /// a modified preset, [`GpuConfig::from_toml_file`]).
    pub fn named(
        name: &str,
        read: impl FnOnce(&str) -> std::io::Result<String>,
    ) -> Result<GpuConfig, crate::error::ConfigSourceError> {
        use crate::error::ConfigSourceError;
        if let Some(c) = GpuConfig::preset(name) {
            return Ok(c);
        }
        let text = read(name).map_err(|error| ConfigSourceError::Unreadable { name: name.to_string(), error })?;
        GpuConfig::from_toml_file(&text, name)
            .map_err(|error| ConfigSourceError::Invalid { name: name.to_string(), error: Box::new(error) })
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
            ("sm.units (each)", s.units.iter().copied().max().unwrap_or(0).into(), 0, 64),
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
            ("l1.size", self.l1.size, 0, 1 << 30),
            ("l1.line", self.l1.line.into(), 32, 4096),
            ("l1.sector", self.l1.sector.into(), 1, 4096),
            ("l1.ways", self.l1.ways.into(), 1, 1 << 16),
            ("l1.mshrs", self.l1.mshrs.into(), 1, 1 << 16),
            ("l1.mshr_merge", self.l1.mshr_merge.into(), 1, 1 << 16),
            ("l1.hit_latency", self.l1.hit_latency, 0, CYCLES),
            ("l2.size", self.l2.size, 0, 1 << 34),
            ("l2.line", self.l2.line.into(), 32, 4096),
            ("l2.ways", self.l2.ways.into(), 1, 1 << 16),
            ("l2.hit_latency", self.l2.hit_latency, 0, CYCLES),
            ("l2.sectors_per_cycle", self.l2.sectors_per_cycle, 1, 1 << 20),
            ("l2.atomic_latency", self.l2.atomic_latency, 0, CYCLES),
            ("l2.channels", self.l2.channels.into(), 0, 256),
            ("l2.slices_per_channel", self.l2.slices_per_channel.into(), 1, 16),
            ("l2.interleave", self.l2.interleave, 32, 1 << 20),
            ("l2.sm_port_sectors_per_cycle", self.l2.sm_port_sectors_per_cycle, 0, 1 << 20),
            ("dram.latency", self.dram.latency, 0, CYCLES),
            ("dram.bytes_per_cycle", self.dram.bytes_per_cycle, 1, 1 << 24),
            ("shared.banks", self.shared.banks.into(), 1, 1024),
            ("shared.bank_bytes", self.shared.bank_bytes.into(), 1, 1024),
            ("mechanism.compaction_latency", self.mechanism.compaction_latency, 0, CYCLES),
            ("mechanism.pool_latency", self.mechanism.pool_latency, 0, CYCLES),
            ("mechanism.sort_step_latency", self.mechanism.sort_step_latency, 0, CYCLES),
            ("frontend.icache_size", self.frontend.icache_size, 0, 1 << 24),
            ("frontend.icache_line", self.frontend.icache_line.into(), 8, 4096),
            ("frontend.icache_ways", self.frontend.icache_ways.into(), 1, 1 << 10),
            ("frontend.inst_bytes", self.frontend.inst_bytes.into(), 1, 64),
            ("frontend.fetch_bytes", self.frontend.fetch_bytes.into(), 1, 4096),
            ("frontend.decode_latency", self.frontend.decode_latency, 0, 1000),
            ("frontend.operand_latency", self.frontend.operand_latency, 0, 1000),
            ("constant_cache.size", self.constant_cache.size, 0, 1 << 24),
            ("constant_cache.line", self.constant_cache.line.into(), 4, 4096),
            ("constant_cache.ways", self.constant_cache.ways.into(), 1, 1 << 10),
            ("texture_cache.size", self.texture_cache.size, 0, 1 << 24),
            ("texture_cache.line", self.texture_cache.line.into(), 4, 4096),
            ("texture_cache.ways", self.texture_cache.ways.into(), 1, 1 << 10),
            ("texture_cache.hit_latency", self.texture_cache.hit_latency, 1, CYCLES),
            ("launch.kernel_latency", self.launch.kernel_latency, 0, CYCLES),
        ]
    }

    /// Checks that every parameter is usable: each within its range ([`GpuConfig::ranges`]) and the
    /// combinations the model needs (power-of-two warp size, and every structure the model builds from the
    /// configuration: [`GpuConfig::check_structures`]), so that a configuration that passes never fails
    /// when a launch builds the model. The message names the table and the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (key, v, lo, hi) in self.ranges() {
            if v < lo || v > hi {
                return Err(ConfigError::OutOfRange { key, value: v, least: lo, most: hi });
            }
        }
        if !self.sm.units.is_empty() && (!matches!(self.sm.units.len(), 5 | 6) || self.sm.units[4] == 0) {
            return Err(ConfigError::Units);
        }
        if !self.warp_size.is_power_of_two() {
            return Err(ConfigError::WarpSize(self.warp_size));
        }
        if let Some(key) = self.energy.as_ref().and_then(|e| e.check().err()) {
            return Err(ConfigError::Energy(key));
        }
        self.check_structures()?;
        if let Some(o) = &self.opcode {
            let all = o.int_initiation.iter().chain(&o.fp_initiation).chain(&o.dp_initiation);
            if all.chain([&o.sfu_initiation, &o.other_initiation]).any(|&x| x == 0 || x > 1_000_000) {
                return Err(ConfigError::OpcodeInitiation);
            }
            let lats = o.int_latency.iter().chain(&o.fp_latency).chain(&o.dp_latency);
            if lats.chain([&o.sfu_latency, &o.other_latency]).any(|&x| x > 1_000_000) {
                return Err(ConfigError::OpcodeLatency);
            }
        }
        Ok(())
    }

    /// Checks, with the structures' own rules and without building them, every structure a launch builds
    /// from the configuration: the L1 (geometry, sectors, MSHR file), the instruction and constant caches,
    /// and the L2 with its sectors (the L1's `sector`), slices and DRAM channel.
    pub fn check_structures(&self) -> Result<(), ConfigError> {
        let fault = |keys: &[(&'static str, u64)], what: &'static str| {
            let keys = keys.to_vec();
            move |error| ConfigError::Structure { keys, what, error }
        };
        let (l1, l2) = (&self.l1, &self.l2);
        let l1_geometry = [("l1.size", l1.size), ("l1.line", l1.line.into()), ("l1.ways", l1.ways.into())];
        self.l1_geometry().check().map_err(fault(&l1_geometry, "the L1 data cache"))?;
        let l1_sectors = [("l1.line", l1.line.into()), ("l1.sector", l1.sector.into())];
        crate::memsys::l2::check_sectors(l1.line, l1.sector).map_err(fault(&l1_sectors, "the L1's sectors"))?;
        let mshrs = [("l1.mshrs", l1.mshrs.into()), ("l1.mshr_merge", l1.mshr_merge.into())];
        Mshr::check(l1.mshrs as usize, l1.mshr_merge as usize).map_err(fault(&mshrs, "the L1's MSHR file"))?;
        if self.frontend.enabled() {
            let f = &self.frontend;
            let keys = [
                ("frontend.icache_size", f.icache_size),
                ("frontend.icache_line", f.icache_line.into()),
                ("frontend.icache_ways", f.icache_ways.into()),
            ];
            self.icache_geometry().check().map_err(fault(&keys, "the instruction cache"))?;
            if !f.icache_line.is_multiple_of(f.inst_bytes) {
                return Err(ConfigError::InstBytes);
            }
        }
        if self.constant_cache.size > 0 {
            let c = &self.constant_cache;
            let keys = [
                ("constant_cache.size", c.size),
                ("constant_cache.line", c.line.into()),
                ("constant_cache.ways", c.ways.into()),
            ];
            self.const_geometry().check().map_err(fault(&keys, "the constant cache"))?;
        }
        if self.texture_cache.size > 0 {
            let c = &self.texture_cache;
            let keys = [
                ("texture_cache.size", c.size),
                ("texture_cache.line", c.line.into()),
                ("texture_cache.ways", c.ways.into()),
            ];
            self.texture_geometry().check().map_err(fault(&keys, "the texture cache"))?;
        }
        if l2.line < l1.line {
            return Err(ConfigError::LineSizes { l1: l1.line, l2: l2.line });
        }
        let l2 = self.l2_dram().map_err(|e| self.l2_fault(e.in_part("DRAM")))?;
        L2Dram::check(&l2).map(|_| ()).map_err(|e| self.l2_fault(e))
    }

    /// An error of [`L2Dram::check`] as the settings it comes from.
    fn l2_fault(&self, error: StructureError) -> ConfigError {
        let (l1, l2) = (&self.l1, &self.l2);
        let (part, inner) = match error {
            StructureError::In { part, error } => (part, *error),
            e => ("", e),
        };
        let (keys, what): (Vec<(&'static str, u64)>, _) = match (part, &inner) {
            ("L2", StructureError::SectorSize { .. } | StructureError::TooManySectors { .. }) => (
                vec![("l1.sector", l1.sector.into()), ("l2.line", l2.line.into())],
                "the L2, whose sectors are the L1's",
            ),
            ("L2", _) => {
                (vec![("l2.size", l2.size), ("l2.line", l2.line.into()), ("l2.ways", l2.ways.into())], "the L2")
            }
            ("L2 pipe", _) => (
                vec![
                    ("l2.sectors_per_cycle", l2.sectors_per_cycle),
                    ("l2.channels", l2.channels.into()),
                    ("l2.slices_per_channel", l2.slices_per_channel.into()),
                ],
                "the L2's slices",
            ),
            ("DRAM", _) if self.dram.banks.is_some() => {
                (vec![("l2.channels", l2.channels.into()), ("clock_mhz", self.clock_mhz.into())], "[dram.banks]")
            }
            _ => (vec![("dram.bytes_per_cycle", self.dram.bytes_per_cycle)], "the DRAM channel"),
        };
        ConfigError::Structure { keys, what, error: inner }
    }

    /// Registers one thread of `prog` holds ([`GpuConfig::register_source`] says which): the configuration's
    /// fixed count; else the count `ptxas -v` allocated when the program carries one; else the kernel's own
    /// 32-bit register words; the latter two capped at `max_regs_per_thread` (what an SM allocates per
    /// thread).
    ///
    /// Under [`Dispatch::ScalarUnit`] the estimate leaves out the registers the scalarization plan keeps in
    /// the scalar unit's own register file (`ScalarPlan::scalar_reg_words`: registers every definition of
    /// which is a scalar instruction), so more CTAs may fit; a fixed `regs_per_thread` and ptxas's count
    /// (physical registers, which the plan's virtual ones do not map to) are taken as given.
    pub fn registers_per_thread(&self, prog: &reconverge_program::Program) -> u32 {
        let cap = self.sm.max_regs_per_thread.max(1);
        if self.sm.regs_per_thread > 0 {
            return self.sm.regs_per_thread;
        }
        if let Some(a) = &prog.allocated_registers {
            return a.per_thread.clamp(1, cap);
        }
        let words = prog.functions.first().map_or(1, |f| f.reg_words);
        let scalar = match (self.sm.dispatch, &prog.scalar) {
            (Dispatch::ScalarUnit, Some(plan)) => plan.scalar_reg_words,
            _ => 0,
        };
        words.saturating_sub(scalar).clamp(1, cap)
    }

    /// Where [`GpuConfig::registers_per_thread`] takes `prog`'s count from: a fixed `regs_per_thread`,
    /// else ptxas's allocation when the program carries one, else the estimate.
    pub fn register_source(&self, prog: &reconverge_program::Program) -> RegisterSource {
        if self.sm.regs_per_thread > 0 {
            RegisterSource::Configuration
        } else if prog.allocated_registers.is_some() {
            RegisterSource::Ptxas
        } else {
            RegisterSource::Estimate
        }
    }

    /// Registers one thread of `prog` holds in a CTA of `threads` threads (warps of `warp_size`): the
    /// estimate of [`GpuConfig::registers_per_thread`], but never more than lets one such CTA fit the
    /// register file. The estimate counts the kernel's PTX registers, which a real compiler (`ptxas`)
    /// allocates into fewer, spilling when it must; a launch that runs on the GPU is not refused here
    /// because of an estimate.
    pub fn launch_registers_per_thread(&self, prog: &reconverge_program::Program, threads: u32, warp_size: u32) -> u32 {
        let w = warp_size.max(1);
        let slots = threads.div_ceil(w).max(1).saturating_mul(w);
        self.registers_per_thread(prog).min(self.sm.registers / slots).max(1)
    }

    /// CTAs of `threads` threads (warps of `warp_size`) and `dynamic_shared` bytes of dynamic shared
    /// memory that one SM holds at once: the least of its CTA, thread, warp, register and shared-memory
    /// limits (0 when one CTA does not fit), the occupancy `cudaOccupancyMaxActiveBlocksPerMultiprocessor`
    /// reports.
    pub fn resident_ctas(
        &self,
        prog: &reconverge_program::Program,
        threads: u32,
        warp_size: u32,
        dynamic_shared: u32,
    ) -> u32 {
        let sm = &self.sm;
        let warps = threads.div_ceil(warp_size.max(1)).max(1);
        let regs =
            self.launch_registers_per_thread(prog, threads, warp_size).saturating_mul(warps * warp_size.max(1)).max(1);
        let shared = prog.static_shared.saturating_add(dynamic_shared);
        let by_shared = sm.shared_memory.checked_div(shared).unwrap_or(u32::MAX);
        [sm.max_ctas, sm.max_threads / threads.max(1), sm.max_warps / warps, sm.registers / regs, by_shared]
            .into_iter()
            .min()
            .unwrap_or(0)
    }

    /// The most threads a CTA can have on one SM (a multiple of `warp_size`, at most 1024): what
    /// `cudaFuncGetAttributes` reports as `maxThreadsPerBlock` (registers adapt to the CTA, see
    /// [`GpuConfig::launch_registers_per_thread`]).
    pub fn max_threads_per_cta(&self, warp_size: u32) -> u32 {
        let w = warp_size.max(1);
        let limit = self.sm.max_threads.min(self.sm.max_warps.saturating_mul(w)).min(1024);
        limit / w * w
    }

    /// An upper bound of the bytes the timing model's own structures take for a launch whose kernel has
    /// `nregs` registers (the caches' tags, MSHRs, and per resident thread its scoreboard and timing rows),
    /// counted against the launch's memory limit before anything is built.
    pub fn model_bytes(&self, nregs: u64, launch: &reconverge_program::LaunchConfig) -> u64 {
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
        crate::memsys::CacheGeometry {
            size_bytes: self.l1.size,
            line_bytes: self.l1.line,
            ways: self.l1.ways,
            index: self.l1.set_index,
        }
    }

    /// The instruction cache geometry.
    pub fn icache_geometry(&self) -> crate::memsys::CacheGeometry {
        let f = &self.frontend;
        crate::memsys::CacheGeometry {
            size_bytes: f.icache_size,
            line_bytes: f.icache_line,
            ways: f.icache_ways,
            index: crate::memsys::SetIndex::Linear,
        }
    }

    /// The constant cache geometry.
    pub fn const_geometry(&self) -> crate::memsys::CacheGeometry {
        let c = &self.constant_cache;
        crate::memsys::CacheGeometry {
            size_bytes: c.size,
            line_bytes: c.line,
            ways: c.ways,
            index: crate::memsys::SetIndex::Linear,
        }
    }

    /// The texture cache geometry.
    pub fn texture_geometry(&self) -> crate::memsys::CacheGeometry {
        let c = &self.texture_cache;
        crate::memsys::CacheGeometry {
            size_bytes: c.size,
            line_bytes: c.line,
            ways: c.ways,
            index: crate::memsys::SetIndex::Linear,
        }
    }

    /// The L2 cache geometry.
    pub fn l2_geometry(&self) -> crate::memsys::CacheGeometry {
        crate::memsys::CacheGeometry {
            size_bytes: self.l2.size,
            line_bytes: self.l2.line,
            ways: self.l2.ways,
            index: crate::memsys::SetIndex::Linear,
        }
    }

    /// The L2 and DRAM the timing model builds from the configuration (sectors of `l1.sector` bytes); errors
    /// on a `[dram.banks]` address mapping that does not parse.
    pub fn l2_dram(&self) -> Result<crate::memsys::L2Config, StructureError> {
        let l2 = &self.l2;
        let dram_banks = match &self.dram.banks {
            Some(b) if self.dram.use_banks => Some(b.timing(self)?),
            _ => None,
        };
        Ok(crate::memsys::L2Config {
            geometry: self.l2_geometry(),
            sector_bytes: self.l1.sector,
            hit_latency: l2.hit_latency,
            sectors_per_cycle: (l2.sectors_per_cycle, 1),
            dram_latency: self.dram.latency,
            dram_bytes_per_cycle: (self.dram.bytes_per_cycle, 1),
            dram_banks,
            atomic_latency: l2.atomic_latency,
            slices: crate::memsys::Slices {
                channels: l2.channels.max(1),
                per_channel: if l2.channels == 0 { 1 } else { l2.slices_per_channel },
                interleave: l2.interleave,
                hashed: l2.slice_hash,
            },
        })
    }

    /// The configuration as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// Preset `name` (`PRESET` or `PRESET+DISPATCH`) as an editable TOML file: `base = "NAME"` and every
    /// parameter with its value, without `name`, so that [`GpuConfig::from_toml`] reads the file back to
    /// the preset itself (named so), and an edited copy to `NAME~STEM` (a `name` line of its own labels it
    /// otherwise). `None` for an unknown preset.
    pub fn preset_toml(name: &str) -> Option<String> {
        let body = GpuConfig::preset(name)?.file_toml(name, false)?;
        Some(format!(
            "# The `{name}` preset, every parameter (docs/configuration.md says what each means and its range).\n\
             # Edit any value and pass this file to --config; add `name = \"...\"` to label the result.\n{body}"
        ))
    }

    /// The configuration as a `--config` file on preset `base`: `base = "BASE"`, its `name` when `named`,
    /// then every parameter, so that the file reads back to this configuration whatever its base holds
    /// (`opcode` aside: a configuration without per-opcode tables must name a base without them).
    pub fn file_toml(&self, base: &str, named: bool) -> Option<String> {
        let mut table = toml::Table::try_from(self).ok()?;
        table.remove("name");
        let body = toml::to_string(&table).ok()?;
        let name = if named { format!("name = {}\n", toml::Value::from(self.name.as_str())) } else { String::new() };
        Some(format!("base = {}\n{name}{body}", toml::Value::from(base)))
    }
}

/// The error `e` of the merged table `merged`, located: the same table deserialized from its TOML text
/// gives the error a span, and so the setting at fault.
fn invalid(e: toml::de::Error, merged: &toml::Table) -> ConfigError {
    let text = toml::to_string(merged).unwrap_or_default();
    match toml::from_str::<GpuConfig>(&text) {
        Err(located) if located.span().is_some() => ConfigError::Invalid(TomlError::in_merged(&located, &text)),
        _ => ConfigError::Invalid(TomlError::in_merged(&e, "")),
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

/// Where the registers per thread the timing model charges a kernel come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterSource {
    /// The kernel's PTX register declarations (64-bit registers count twice), capped at
    /// `max_regs_per_thread`: several times what a compiler allocates.
    #[default]
    Estimate,
    /// NVIDIA's `ptxas -v` for the module's target, as GPGPU-Sim takes them (capped at
    /// `max_regs_per_thread`).
    Ptxas,
    /// The configuration's fixed `regs_per_thread`.
    Configuration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configurations_of_one_comparison_get_names_of_their_own() {
        let text = "base = \"gtx480\"\nnum_sms = 4\n";
        let file = GpuConfig::from_toml_file(text, "dir/small.toml").unwrap();
        assert_eq!(file.name, "gtx480~small", "a modified preset is named after its file, not as the preset");
        let other = GpuConfig::from_toml_file("num_sms = 2\n", "other/small.toml").unwrap();
        let third = GpuConfig::from_toml_file("num_sms = 3\n", "third/small.toml").unwrap();
        let given = ["dir/small.toml".to_string(), "other/small.toml".to_string(), "third/small.toml".to_string()];
        let mut cs = [file.clone(), other, third.clone()];
        GpuConfig::distinct_names(&mut cs, &given).unwrap();
        assert_eq!(cs[0].name, "gtx480~small");
        assert_eq!(cs[1].name, "gtx480~small~small", "a name taken: the stem added");
        assert_eq!(cs[2].name, format!("gtx480~small~{:016x}", third.content_hash()), "the stem is taken: a hash");
        let unnamed = GpuConfig::from_toml(text).unwrap();
        assert_eq!(
            unnamed.name,
            format!("gtx480~{:016x}", {
                let mut c = unnamed.clone();
                c.name = "gtx480".into();
                c.content_hash()
            })
        );
        assert_eq!(GpuConfig::from_toml_file("name = \"mine\"\nnum_sms = 4\n", "a.toml").unwrap().name, "mine");
        assert_eq!(GpuConfig::from_toml_file("base = \"volta\"\n", "a.toml").unwrap().name, "volta", "unchanged");
        let mut same = [GpuConfig::gtx480(), GpuConfig::from_toml_file("base = \"gtx480\"\n", "copy.toml").unwrap()];
        let e = GpuConfig::distinct_names(&mut same, &["gtx480".into(), "copy.toml".into()]).unwrap_err();
        assert_eq!(e.to_string(), "`gtx480` and `copy.toml` are the same configuration: give it once");
        assert_ne!(GpuConfig::gtx480().content_hash(), GpuConfig::volta().content_hash());
    }

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
    fn every_preset_prints_as_a_file_that_reads_back_to_itself() {
        for p in PRESETS.iter().map(|p| p.to_string()).chain(["gtx480+scalar-unit".to_string()]) {
            let text = GpuConfig::preset_toml(&p).expect("a preset");
            assert!(!text.contains("\nname ="), "{p}: no name line");
            assert_eq!(GpuConfig::from_toml(&text).expect(&p), GpuConfig::preset(&p).expect("preset"), "{p}");
            let edited = text.replace("num_sms = ", "num_sms = 3\n# was ");
            assert_ne!(GpuConfig::from_toml(&edited).expect("edited").name, p, "an edited copy is not labelled {p}");
        }
        assert_eq!(GpuConfig::preset_toml("nope"), None);
    }

    #[test]
    fn overrides_and_errors() {
        let c = GpuConfig::from_toml("base = \"volta\"\nnum_sms = 4\n[sm]\nscheduler = \"two-level\"\n").unwrap();
        assert_eq!(c.num_sms, 4);
        assert_eq!(c.sm.scheduler, SchedulerPolicy::TwoLevel);
        assert_eq!(c.sm.max_threads, 2048);
        assert!(GpuConfig::from_toml("num_smz = 4").unwrap_err().to_string().contains("num_smz"));
        assert!(
            matches!(GpuConfig::from_toml("base = \"nope\"").unwrap_err(), ConfigError::UnknownPreset(p) if p == "nope")
        );
        assert!(GpuConfig::from_toml("[l1]\nways = 3").is_err());
        assert!(matches!(
            GpuConfig::from_toml("num_sms = 0").unwrap_err(),
            ConfigError::OutOfRange { key: "num_sms", value: 0, .. }
        ));
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
        let e = GpuConfig::from_toml("num_sms = 2147483647\n").unwrap_err().to_string();
        assert_eq!(e, "num_sms = 2147483647 is outside its range 1..=1024");
        let e = GpuConfig::from_toml("[l2]\nline = 16\n").unwrap_err().to_string();
        assert_eq!(e, "[l2] line = 16 is outside its range 32..=4096");
    }

    #[test]
    fn structures_built_from_the_configuration_are_checked_when_it_is_read() {
        // The L2's sectors are the L1's: 1-byte sectors fit the L1's 32-byte lines, not the L2's 128-byte ones.
        let e = GpuConfig::from_toml("[l1]\nline = 32\nsector = 1\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "[l1] sector = 1, [l2] line = 128: the L2, whose sectors are the L1's: 128-byte lines of 1-byte \
             sectors have 128 sectors, more than 32"
        );
        // Each key within its range, their product beyond what the model builds.
        let e = GpuConfig::from_toml("[l1]\nmshrs = 65536\nmshr_merge = 65536\n").unwrap_err().to_string();
        assert!(e.starts_with("[l1] mshrs = 65536, mshr_merge = 65536: the L1's MSHR file: "), "{e}");
        let e = GpuConfig::from_toml("[l1]\nways = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("[l1] size = 16384, line = 128, ways = 3: the L1 data cache: "), "{e}");
        let e = GpuConfig::from_toml("[l1]\nline = 256\n").unwrap_err().to_string();
        assert_eq!(e, "[l1] line = 256, [l2] line = 128: the L2's lines must be at least as long as the L1's");
        let e = GpuConfig::from_toml("[l1]\nsector = 3\n").unwrap_err().to_string();
        assert!(e.starts_with("[l1] line = 128, sector = 3: the L1's sectors: "), "{e}");
    }

    #[test]
    fn messages_quote_a_bounded_excerpt_of_the_file() {
        let long = "x".repeat(400_000);
        let e = GpuConfig::from_toml(&format!("num_sms = 4\nname = \"{long}\n")).unwrap_err().to_string();
        assert!(e.len() < 400, "{} characters: {}", e.len(), &e[..400.min(e.len())]);
        assert!(e.starts_with("invalid TOML: line 2, column "), "{e}");
        assert!(e.contains('…') && e.contains('^'), "{e}");
        let e = GpuConfig::from_toml(&format!("[sm]\nscheduler = \"{long}\"\n")).unwrap_err().to_string();
        assert!(e.len() < 600 && e.contains("(400000 characters)"), "{}", &e[..600.min(e.len())]);
        let e = GpuConfig::from_toml(&format!("base = \"{long}\"\n")).unwrap_err().to_string();
        assert!(e.len() < 300, "{}", &e[..300.min(e.len())]);
        let e = GpuConfig::from_toml(&format!("[sm]\nmax_threads = \"{long}\"\n")).unwrap_err().to_string();
        assert!(
            e.starts_with("invalid configuration: [sm] max_threads = \"xxx") && e.len() < 600,
            "{}",
            &e[..600.min(e.len())]
        );
        // A setting of the right syntax but not of the configuration is named as the file writes it.
        let e = GpuConfig::from_toml("[l1]\nsise = 4\n").unwrap_err().to_string();
        assert!(e.starts_with("invalid configuration: [l1] sise = 4: unknown field `sise`, expected one of"), "{e}");
        // Short lines are quoted whole, the column marked.
        let e = GpuConfig::from_toml("num_sms = = 4\n").unwrap_err().to_string();
        assert!(
            e.starts_with("invalid TOML: line 1, column 11: ") && e.contains("\n1 | num_sms = = 4\n  |           ^"),
            "{e}"
        );
    }
}

/// Every key at the edges of its range, one at a time: what validates must build and run a launch.
#[cfg(test)]
mod sweep_tests {
    use super::*;
    use reconverge_program::{Arg, Buffer, Dtype, LaunchConfig, LaunchError};
    use reconverge_sim::SimError;

    /// A kernel with loads, stores, a constant, a branch and a barrier (every structure gets used).
    const KERNEL: &str = ".version 7.8\n.target sm_70\n.address_size 64\n.const .align 4 .u32 k[1] = {3};\n\
        .visible .entry s(.param .u64 a)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<6>;\n.reg .b64 %rd<4>;\n\
        ld.param.u64 %rd1, [a];\ncvta.to.global.u64 %rd1, %rd1;\nmov.u32 %r1, %tid.x;\n\
        mul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd3, %rd1, %rd2;\nld.global.u32 %r2, [%rd3];\n\
        ld.const.u32 %r3, [k];\nsetp.lt.u32 %p1, %r1, 7;\n@%p1 add.u32 %r2, %r2, %r3;\nbar.sync 0;\n\
        st.global.u32 [%rd3], %r2;\nret;\n}\n";

    /// Whether a launch error is the launch's own (its memory limit, a CTA no SM can hold), not the
    /// configuration's.
    fn launch_specific(e: &SimError) -> bool {
        match e {
            SimError::Launch(LaunchError::MemoryLimit { .. }) => true,
            SimError::Launch(LaunchError::Machine(m)) => m.starts_with("one CTA needs"),
            SimError::Limit(_) => true,
            _ => false,
        }
    }

    #[test]
    fn every_configuration_that_validates_builds_and_runs() {
        let m = reconverge_ptx::parse(KERNEL).expect("parses");
        let kernel =
            reconverge_sim::load(&m, None, reconverge_mechanism::Mechanism::Pdom, &Default::default()).expect("loads");
        let launch = LaunchConfig { grid: [2, 1, 1], block: [40, 1, 1], ..LaunchConfig::default() };
        let opts = crate::TimedOptions { max_cycles: Some(3_000_000), threads: 1, sample: None };
        let mut texts: Vec<String> = Vec::new();
        for (key, _, lo, hi) in GpuConfig::gtx480().ranges() {
            let Some((table, k)) = key.split_once('.').filter(|_| !key.contains(' ')) else {
                if !key.contains(' ') {
                    texts.extend([0, 1, lo, hi, hi + 1, u64::from(u32::MAX)].map(|v| format!("{key} = {v}\n")));
                }
                continue;
            };
            for v in [0, 1, 2, 3, lo, hi, hi + 1, u64::from(u32::MAX), i64::MAX as u64] {
                texts.push(format!("[{table}]\n{k} = {v}\n"));
            }
        }
        texts.extend(
            ["[0, 0, 0, 0, 1]", "[64, 64, 64, 64, 64]", "[1, 1, 1, 1]", "[0, 0, 0, 0, 0]"]
                .map(|u| format!("[sm]\nunits = {u}\n")),
        );
        texts.push("[sm]\ndispatch = \"temporal\"\nschedulers = 64\n".into());
        texts.push("[l1]\nline = 32\nsector = 1\n".into());
        texts.push("[l2]\nchannels = 256\nslices_per_channel = 16\nslice_hash = true\n".into());
        let (mut valid, mut refused) = (0, 0);
        for text in &texts {
            let Ok(gpu) = GpuConfig::from_toml(text) else {
                refused += 1;
                continue;
            };
            valid += 1;
            let buf = Arg::Buffer(Buffer { dtype: Dtype::U32, bytes: vec![1; 4 * 80] });
            let r = std::panic::catch_unwind(|| crate::run_timed(&kernel, &launch, &gpu, vec![buf], opts));
            let r = r.unwrap_or_else(|_| panic!("the launch panicked with a configuration that validated:\n{text}"));
            if let Some(e) = r.run.error.as_ref().filter(|e| !launch_specific(e)) {
                panic!("a configuration that validated failed at launch:\n{text}=> {e}");
            }
        }
        assert!(valid > 100 && refused > 100, "{valid} valid, {refused} refused");
    }
}
