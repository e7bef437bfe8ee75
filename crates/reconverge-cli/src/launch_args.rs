//! Command-line options shared by `run`, `trace` and `bench`: the kernel, its launch and the mechanism.

use crate::{source, Failure};
use clap::Args;
use reconverge_mechanism::{LutGeometry, Mechanism};
use reconverge_program::{Arg, DecodeOptions, HostOptions, JitPolicy, LaunchConfig, RunLimits};
use reconverge_sim::Loaded;

/// Options that describe one launch.
#[derive(Args, Clone, Debug)]
pub(crate) struct LaunchArgs {
    /// The kernel file (.ptx, or .cu when NVRTC is installed); not with --suite-kernel.
    #[arg(value_name = "FILE", required_unless_present = "suite_kernel")]
    pub input: Option<String>,
    /// The kernel file to load: FILE, or the suite kernel's PTX ([`LaunchArgs::resolved`] sets it).
    #[arg(skip)]
    pub file: String,
    /// A kernel of the suite by name (`suite --kernel` names): its PTX, grid, block, arguments, module
    /// variables and dynamic shared memory come from kernels/manifest.toml instead of FILE, --kernel,
    /// --grid, --block, --arg and --dynamic-shared (a --global adds to or replaces the manifest's).
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with_all = ["input", "kernel", "grid", "block", "args", "dynamic_shared"]
    )]
    pub suite_kernel: Option<String>,
    /// With --suite-kernel: the kernel directory holding manifest.toml (default: kernels/ of this
    /// repository, found as `suite` finds it).
    #[arg(long, value_name = "DIR", requires = "suite_kernel")]
    pub kernels: Option<std::path::PathBuf>,
    /// The manifest entry of --suite-kernel and its directory, once resolved.
    #[arg(skip)]
    pub suite: Option<crate::suite_launch::SuiteLaunch>,
    /// The kernel to launch (needed when the file has several).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Grid dimensions (CTAs).
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "1")]
    pub grid: String,
    /// Block dimensions (threads per CTA).
    #[arg(long, value_name = "X[,Y[,Z]]", default_value = "32")]
    pub block: String,
    /// One per kernel parameter, in order: a number; a buffer: @FILE.npy (filled from the file),
    /// zeros:DTYPE:LEN, `rand:DTYPE:LEN:SEED[:BOUND]` (DTYPE in i8 u8 i16 u16 i32 u32 i64 u64 f32 f64); a
    /// pointer into a buffer: BUFFER+N (N elements of its dtype, as d_b + N in C) or BUFFER+Nb (N bytes);
    /// or a struct passed by value: struct:TYPE=VALUE,... (TYPE a DTYPE or ptr, whose value is a buffer or
    /// 0; pad=N adds N zero bytes), fields laid out with C's alignment (see docs/arguments.md).
    #[arg(long = "arg", value_name = "SPEC", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// The divergence mechanism (`report` takes it repeatedly; "seed 00N" below names a source document,
    /// see docs/seeds.md).
    #[arg(long, default_value = "pdom", action = clap::ArgAction::Append, value_parser = mechanism_values())]
    pub mechanism: Vec<String>,
    /// DWF's look-up table: `ENTRIES[:WAYS]` (set-associative, LRU; without WAYS fully associative);
    /// 0 = a perfect table.
    #[arg(long, value_name = "ENTRIES[:WAYS]", default_value = "0")]
    pub dwf_lut: String,
    /// Threads per warp (a power of two, 1..64); default: the GPU configuration's (32).
    #[arg(long)]
    pub warp_size: Option<u32>,
    /// Dynamic shared memory per block, in bytes.
    #[arg(long, default_value_t = 0)]
    pub dynamic_shared: u32,
    /// Local memory per thread (call stack), in bytes.
    #[arg(long, default_value_t = 64 * 1024)]
    pub local_bytes: u32,
    /// Stop after this many warp instructions (exit 4). The default, 10^9, is about a minute of functional
    /// simulation, so a mistyped grid ends instead of hanging; 0 = no limit.
    #[arg(long, default_value_t = DEFAULT_MAX_INSTRUCTIONS)]
    pub max_instructions: u64,
    /// Warp instructions without any register or memory change before a livelock is declared (at least
    /// 1000).
    #[arg(long, default_value_t = 100_000)]
    pub livelock_window: u64,
    /// Interpret every instruction: do not compile hot straight-line segments to native code (functional
    /// runs execute them in their straight-line runs, timed runs defer pure lane instructions to them).
    /// Results, statistics and cycles are identical either way; only the speed differs.
    #[arg(long)]
    pub no_jit: bool,
    /// Set a module `.global`/`.const` variable (`__device__`/`__constant__`) before the launch:
    /// NAME=NUMBER, NAME=@FILE.npy or NAME=zeros:DTYPE:LEN (repeatable). For a 64-bit scalar variable (a
    /// device pointer) a buffer is allocated and its address stored; otherwise the bytes fill the variable.
    #[arg(long = "global", value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub globals: Vec<String>,
    /// The most memory the launch may use (argument buffers, module variables, resident CTAs), in bytes
    /// or with a K/M/G suffix; default: half of this machine's memory.
    #[arg(long, value_name = "BYTES")]
    pub max_memory: Option<String>,
    /// Extra NVRTC option for .cu input (repeatable).
    #[arg(long = "nvrtc-opt")]
    pub nvrtc_opts: Vec<String>,
    /// Count seed 004's dynamic scalarization metrics (convergent shares under CA, CA+VA, +exit, +dcp and
    /// the oracle; issued scalar/converged/dcp/diverged; operations, register accesses, memory addresses
    /// and data with and without scalarization). See docs/scalarization.md.
    #[arg(long)]
    pub scalarize: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
}

/// Options of the timing model.
#[derive(Args, Clone, Debug)]
pub(crate) struct TimingArgs {
    /// GPU configuration: a preset or a TOML file (the help text is `config_help`).
    #[arg(long, help = config_help(), default_value = "gtx480")]
    pub config: String,
    /// Functional simulation only: no cycles, fastest.
    #[arg(long)]
    pub functional: bool,
    /// Host threads simulating SMs (0 = all cores, at most 1024; never more than the SMs with work);
    /// results do not depend on it.
    #[arg(long, default_value_t = 0, value_parser = crate::launch_args::host_threads)]
    pub threads: usize,
    /// Stop after this many simulated cycles (exit 4).
    #[arg(long)]
    pub max_cycles: Option<u64>,
    /// Time about one CTA in N (default 10): once as many CTAs finished as the GPU holds, windows of a
    /// round of CTAs per SM are timed and the next N - 1 rounds' CTAs run functionally, turn about; the
    /// launch's last wave is always timed. The skipped CTAs' cycles are estimated from the windows around
    /// them (errors measured in docs/speed.md, "CTA sampling"). Memory and functional statistics are
    /// exact; the other timing counters cover the timed CTAs. Under dwf:sm, whose warps mix CTAs, every
    /// CTA is timed.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "10",
          value_parser = clap::value_parser!(u32).range(2..=1_000_000))]
    pub sample_ctas: Option<u32>,
}

impl TimingArgs {
    /// The GPU configuration (`None` in functional mode).
    pub(crate) fn gpu(&self) -> Result<Option<reconverge_timing::GpuConfig>, Failure> {
        if self.functional {
            return Ok(None);
        }
        gpu_config(&self.config).map(Some)
    }

    /// The cycle limit and host threads of a timed run.
    pub(crate) fn options(&self) -> reconverge_timing::TimedOptions {
        let sample = self.sample_ctas.map(|one_in| reconverge_timing::CtaSampling { one_in });
        reconverge_timing::TimedOptions { max_cycles: self.max_cycles, threads: self.threads, sample }
    }
}

/// The help of `--config`, listing the presets from the timing crate.
pub(crate) fn config_help() -> String {
    format!(
        "GPU configuration: a preset ({}) or a TOML file (see docs/configuration.md)",
        reconverge_timing::PRESETS.join(", ")
    )
}

/// Resolves `--config`: a preset or a TOML file.
pub(crate) fn gpu_config(name: &str) -> Result<reconverge_timing::GpuConfig, Failure> {
    reconverge_timing::GpuConfig::named(name, |p| std::fs::read_to_string(p)).map_err(|e| match e {
        reconverge_timing::error::ConfigSourceError::Unreadable { .. } => Failure::input(format!("--config {e}")),
        invalid => Failure::input(invalid.to_string()),
    })
}

/// `--warp-size` of the commands that take several warp sizes (`suite`, `compare`, `cost`), one syntax for
/// all: a comma-separated list, the flag repeated, or both (`--warp-size 8,16 --warp-size 32`).
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct WarpSizes {
    /// Warp sizes: a list (8,32), the flag repeated, or both; default 32 (`cost --units` and `--synth`:
    /// 2,4,8,16,32,64).
    #[arg(long = "warp-size", value_name = "N[,N...]", value_delimiter = ',', value_parser = warp_size_value)]
    pub warp_sizes: Vec<u32>,
}

impl WarpSizes {
    /// The warp sizes given, each once in the order first given, or `default` when none is.
    pub(crate) fn or(&self, default: &[u32]) -> Vec<u32> {
        if self.warp_sizes.is_empty() {
            return default.to_vec();
        }
        let mut out: Vec<u32> = Vec::new();
        for &w in &self.warp_sizes {
            if !out.contains(&w) {
                out.push(w);
            }
        }
        out
    }
}

/// Parses one warp size of a `--warp-size` list: a whole number from 1 to 64 (each command checks the
/// sizes it can use, e.g. a power of two).
pub(crate) fn warp_size_value(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(w) if (1..=64).contains(&w) => Ok(w),
        _ => Err(format!("`{}` is not a warp size (a whole number from 1 to 64)", reconverge_program::quote(text))),
    }
}

/// A loaded, decoded launch.
pub(crate) struct Prepared {
    /// The program with the mechanism it runs under.
    pub kernel: Loaded,
    /// The launch configuration.
    pub cfg: LaunchConfig,
    /// The arguments.
    pub args: Vec<Arg>,
}

/// `--max-instructions` when not given: a billion warp instructions (the runtime's default too).
pub(crate) const DEFAULT_MAX_INSTRUCTIONS: u64 = reconverge_program::launch::DEFAULT_MAX_INSTRUCTIONS;

/// The most host threads `--threads` accepts.
pub(crate) const MAX_HOST_THREADS: usize = 1024;

/// Parses `--threads N` (0 = all cores, at most [`MAX_HOST_THREADS`]).
pub(crate) fn host_threads(text: &str) -> Result<usize, String> {
    let n: usize = text.trim().parse().map_err(|_| format!("`{text}` is not a number of threads"))?;
    if n > MAX_HOST_THREADS {
        return Err(format!("{n} host threads: at most {MAX_HOST_THREADS} (0 = one per core)"));
    }
    Ok(n)
}

/// Parses `X[,Y[,Z]]`.
pub(crate) fn dims(what: &str, text: &str) -> Result<[u32; 3], Failure> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(Failure::input(format!("--{what} `{text}`: expected X[,Y[,Z]]")));
    }
    let mut d = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        let digits = !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
        d[i] = match p.parse::<u32>() {
            Ok(v) if v > 0 => v,
            Err(_) if digits => {
                return Err(Failure::input(format!("--{what} `{text}`: `{p}` is too large (at most {})", u32::MAX)))
            }
            _ => return Err(Failure::input(format!("--{what} `{text}`: `{p}` is not a positive integer"))),
        };
    }
    Ok(d)
}

/// Parses a size in bytes: `1000`, `64K`, `512M`, `4G` (powers of 1024; the parser the runtime's
/// `RECONVERGE_MAX_MEMORY` uses too, [`reconverge_program::launch::parse_size`]).
pub(crate) fn bytes(what: &str, text: &str) -> Result<u64, Failure> {
    reconverge_program::launch::parse_size(text)
        .ok_or_else(|| Failure::input(format!("--{what} `{text}`: expected a positive size such as 4096, 512M or 4G")))
}

/// Half of this machine's memory, or 8 GiB where that cannot be read.
pub(crate) fn default_max_memory() -> u64 {
    reconverge_program::launch::half_of_memory(std::fs::read_to_string("/proc/meminfo").ok().as_deref())
}

/// The values `--mechanism` takes: every mechanism of the registry, with its aliases and its one-line
/// summary (clap lists them in `--help` and names them when a value is unknown).
pub(crate) fn mechanism_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(reconverge_mechanism::REGISTRY.iter().map(|e| {
        let help = match e.info.aliases {
            [] => e.info.summary.to_string(),
            aliases => format!("{} (also: {})", e.info.summary, aliases.join(", ")),
        };
        clap::builder::PossibleValue::new(e.info.name).aliases(e.info.aliases.iter().copied()).help(help)
    }))
}

/// Parses a mechanism name.
pub(crate) fn mechanism(name: &str) -> Result<Mechanism, Failure> {
    Mechanism::from_name(name).ok_or_else(|| {
        Failure::input(format!("unknown mechanism `{name}` (known: {})", reconverge_mechanism::known_names()))
    })
}

impl LaunchArgs {
    /// Loads the file, decodes the kernel for the mechanism and resolves the arguments; the run will
    /// return the final contents of the module variables `dump_globals`.
    pub(crate) fn prepare(&self, dump_globals: &[String]) -> Result<Prepared, Failure> {
        let mech = match self.mechanism.as_slice() {
            [one] => mechanism(one)?,
            _ => {
                return Err(Failure::input(format!(
                "--mechanism is given {} times; this command runs one mechanism (`report` and `compare` take several)",
                self.mechanism.len()
            )))
            }
        };
        self.prepare_for(mech, dump_globals)
    }

    /// The mechanisms named by `--mechanism` (each once).
    pub(crate) fn mechanisms(&self) -> Result<Vec<Mechanism>, Failure> {
        let mut out: Vec<Mechanism> = Vec::new();
        for m in &self.mechanism {
            let m = mechanism(m)?;
            if !out.contains(&m) {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// [`LaunchArgs::prepare`] for mechanism `mech`.
    pub(crate) fn prepare_for(&self, mech: Mechanism, dump_globals: &[String]) -> Result<Prepared, Failure> {
        let me = self.resolved()?;
        let lut = LutGeometry::parse(&me.dwf_lut).map_err(|e| Failure::input(format!("--dwf-lut {e}")))?;
        let mech = mech.with_lut(lut);
        let grid = dims("grid", &me.grid)?;
        let block = dims("block", &me.block)?;
        let loaded = source::load(&me.file, &me.nvrtc_opts)?;
        let gpu = me.timing.gpu()?;
        let scalarize = me.scalarize || gpu.as_ref().is_some_and(|g| g.sm.dispatch.needs_scalar_plan());
        let kernel = reconverge_sim::load(
            &loaded.module,
            me.kernel.as_deref(),
            mech,
            &DecodeOptions { file: me.file.clone(), source: Some(loaded.ptx.clone()), scalarize, ..Default::default() },
        )
        .map_err(|e| Failure::input(format!("{}: {e}", me.file)))?;
        // The timing model charges the registers ptxas allocates (functional runs need none).
        let registers = gpu
            .as_ref()
            .and_then(|_| reconverge_nvrtc::ptxas::kernel_registers(&loaded.ptx, kernel.program().kernel_name()));
        let kernel = kernel.with_allocated_registers(registers);
        let max_memory = match &me.max_memory {
            Some(t) => bytes("max-memory", t)?,
            None => default_max_memory(),
        };
        let args = me.launch_args(kernel.program(), max_memory)?;
        let globals = me.global_inits(kernel.program(), max_memory)?;
        let warp_size = match me.warp_size {
            Some(w) => w,
            None => gpu.map(|g| g.warp_size).unwrap_or(32),
        };
        let cfg = LaunchConfig {
            grid,
            block,
            warp_size,
            dynamic_shared: me.dynamic_shared,
            local_bytes: me.local_bytes,
            globals,
            dump_globals: dump_globals.to_vec(),
            limits: RunLimits {
                max_instructions: reconverge_program::launch::instruction_limit(me.max_instructions),
                livelock_window: me.livelock_window,
                max_memory,
                ..RunLimits::default()
            },
            host: HostOptions { jit: if me.no_jit { JitPolicy::Off } else { JitPolicy::Hot }, cancel: None },
        };
        cfg.validate(kernel.program()).map_err(|e| Failure::input(crate::errors::render(&e.into())))?;
        Ok(Prepared { kernel, cfg, args })
    }
}
