//! A kernel launch: the kernel decoded for the process's mechanism, its parameter buffer, one run on the
//! shared device memory (functional or timed), device `printf`, the statistics line, simulated time and
//! the error the program sees.

use crate::error::{self as cuda, CudaError};
use crate::runtime::{CallConfig, Runtime};
use reconverge_program::{LaunchConfig, LaunchError};
use reconverge_records::sampling::Sampled;
use reconverge_sim::{DeviceState, Loaded, NoObserver, RunResult, SimError};
use reconverge_timing::per_pc::{PcCount, PcCounter, PcSite};
use reconverge_timing::TimingStats;
use std::io::Write;

/// A kernel's parameters as the launch fills them: each parameter's offset and size, and the buffer's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    /// `(offset, size)` of each parameter, in order.
    pub params: Vec<(usize, usize)>,
    /// Size of the parameter buffer.
    pub size: usize,
}

/// What a launch ended with, for the entry point.
#[derive(Debug, PartialEq, Eq)]
pub enum LaunchEnd {
    /// The kernel ran (or failed in a way the program sees as an error code).
    Returned(CudaError),
    /// The kernel deadlocked or hit a limit: CUDA would never return, so the process ends with this status
    /// after its statistics are written.
    Exit(i32),
}

impl Runtime {
    /// The parameter layout of the kernel registered for host stub `host_fn` (decoding it on first use).
    pub fn param_layout(&mut self, host_fn: u64) -> Result<ParamLayout, CudaError> {
        let k = self.kernels.get(&host_fn).cloned().ok_or(cuda::INVALID_DEVICE_FUNCTION)?;
        let settings = self.settings.clone();
        let module = self.modules.get_mut(k.module).ok_or(cuda::INVALID_DEVICE_FUNCTION)?;
        let loaded = module.kernel(&k.name, &settings).map_err(|e| {
            eprintln!("reconverge: {e}");
            cuda::INVALID_PTX
        })?;
        let prog = loaded.program();
        Ok(ParamLayout {
            params: prog.params.iter().map(|p| (p.offset as usize, p.size as usize)).collect(),
            size: prog.param_size as usize,
        })
    }

    /// The decoded kernel of host stub `host_fn`, once [`Runtime::param_layout`] has decoded it.
    pub fn program(&mut self, host_fn: u64) -> Option<&reconverge_program::Program> {
        let k = self.kernels.get(&host_fn)?.clone();
        let settings = self.settings.clone();
        self.modules.get_mut(k.module)?.kernel(&k.name, &settings).ok().map(|l| l.program())
    }

    /// Runs the kernel of host stub `host_fn` with the parameter buffer `params` under `call`.
    pub fn launch(&mut self, host_fn: u64, call: CallConfig, params: Vec<u8>) -> LaunchEnd {
        if self.sticky != cuda::SUCCESS {
            return LaunchEnd::Returned(self.sticky);
        }
        let Some(k) = self.kernels.get(&host_fn).cloned() else {
            return LaunchEnd::Returned(self.fail(cuda::INVALID_DEVICE_FUNCTION));
        };
        let settings = self.settings.clone();
        let Some(module) = self.modules.get_mut(k.module) else {
            return LaunchEnd::Returned(self.fail(cuda::INVALID_DEVICE_FUNCTION));
        };
        let loaded = match module.launch_kernel(&k.name, &settings) {
            Ok(l) => l.clone(),
            Err(e) => {
                eprintln!("reconverge: {e}");
                return LaunchEnd::Returned(self.fail(cuda::INVALID_PTX));
            }
        };
        let name = loaded.program().kernel_name().to_string();
        if let Err(r) = self.check_launch(host_fn, &call, u64::from(loaded.program().static_shared)) {
            return LaunchEnd::Returned(self.refuse(&name, &call, &r.to_string(), r.code()));
        }
        let cfg = LaunchConfig {
            grid: call.grid,
            block: call.block,
            warp_size: settings.warp_size,
            // At most `sharedMemPerBlockOptin` after `check_launch`, so it fits.
            dynamic_shared: u32::try_from(call.shared).unwrap_or(u32::MAX),
            limits: reconverge_program::RunLimits {
                max_instructions: Some(settings.max_instructions),
                max_memory: settings.max_memory,
                ..Default::default()
            },
            ..LaunchConfig::default()
        };
        self.sync_managed_vars(true);
        if let Err(code) = self.map_host_memory() {
            self.take_host_memory();
            return LaunchEnd::Returned(self.refuse(
                &name,
                &call,
                "the host cannot hold a copy of managed and page-locked memory",
                code,
            ));
        }
        let consts = std::mem::take(&mut self.modules[k.module].consts);
        let mut dev = DeviceState::resident(std::mem::take(&mut self.mem), consts, params);
        let Ran { run, timing, pcs, sample } = self.run_launch(k.module, &loaded, &cfg, &call, &mut dev);
        let (mem, consts) = dev.into_parts();
        self.mem = mem;
        self.modules[k.module].consts = consts;
        self.take_host_memory();
        self.sync_managed_vars(false);
        if let Some(SimError::Launch(e)) = &run.error {
            // The simulator refused it before anything ran (its memory or its machine cannot hold it).
            let reason = match e {
                LaunchError::MemoryLimit { .. } => format!("{e} (raise it with RECONVERGE_MAX_MEMORY or --max-memory)"),
                _ => e.to_string(),
            };
            return LaunchEnd::Returned(self.refuse(&name, &call, &reason, cuda::LAUNCH_OUT_OF_RESOURCES));
        }
        self.launches += 1;
        self.advance_clock(&run, timing.as_ref().map(|t| t.cycles).or(sample.map(|s| s.cycles)));
        if let Some(counts) = pcs {
            self.send_pcs(k.module, &loaded, counts);
        }
        self.write_stats(&name, &call, &run, timing.as_ref(), sample.as_ref());
        self.finish(&name, &call, &run)
    }

    /// A launch refused before it ran: one line on standard error naming the kernel, its configuration,
    /// the reason and the code; no statistics, not counted as a launch; the code is the last error (not a
    /// sticky one: the program's later calls work).
    fn refuse(&mut self, name: &str, call: &CallConfig, reason: &str, code: CudaError) -> CudaError {
        eprintln!(
            "reconverge: launch of `{name}` ({}, {} bytes of dynamic shared memory) refused: {reason} ({})",
            geometry(call),
            call.shared,
            cuda::name(code)
        );
        self.fail(code)
    }

    /// Copies `__managed__` variables' host copies into their device variables (`to_device`) or back.
    fn sync_managed_vars(&mut self, to_device: bool) {
        let vars: Vec<_> = self.variables.values().filter(|v| v.managed.is_some()).cloned().collect();
        for v in vars {
            let (Some(host), Some(place)) = (v.managed, self.modules.get(v.module).and_then(|m| m.variable(&v.name)))
            else {
                continue;
            };
            let len = v.size.min(place.size);
            // The variable's managed block (gone only if the program freed it, which `cudaFree` refuses).
            let (Some(dev), Some(host)) = (self.mem.bytes_mut(place.addr, len), self.managed.bytes_mut(host, len))
            else {
                continue;
            };
            if to_device {
                dev.copy_from_slice(host);
            } else {
                host.copy_from_slice(dev);
            }
        }
    }

    /// Moves simulated time on by the launch: its `cycles` (measured or, under `--sample`, estimated) at
    /// the configuration's clock; in functional mode (no cycles) one nanosecond per issued warp
    /// instruction, so elapsed times stay positive and ordered.
    fn advance_clock(&mut self, run: &RunResult, cycles: Option<u64>) {
        self.clock_ns += match (cycles, &self.settings.gpu) {
            (Some(c), Some(g)) => c as f64 * 1000.0 / f64::from(g.clock_mhz.max(1)),
            _ => run.stats.warp_instructions as f64,
        };
    }

    /// Sends the launch's statistics line (`run --json`'s object plus the launch and, under `--sample`,
    /// its `sampled` cycles and cluster) to `reconverge exec`'s channel and appends it to the stats file
    /// (`RECONVERGE_STATS`), each where there is one.
    fn write_stats(
        &self,
        name: &str,
        call: &CallConfig,
        run: &RunResult,
        timing: Option<&TimingStats>,
        sample: Option<&Sampled>,
    ) {
        let s = &self.settings;
        if s.stats.is_none() && s.channel.is_none() {
            return;
        }
        let mut v =
            reconverge_report::run::run_json_timed(name, s.mechanism.name(), s.warp_size, run, timing, s.gpu.as_ref());
        if let Some(obj) = v.as_object_mut() {
            let hidden = reconverge_records::aggregate::hidden_counts(&run.stats, timing);
            obj.insert(reconverge_records::aggregate::HIDDEN.into(), hidden.into());
            obj.insert("launch".into(), self.launches.into());
            obj.insert("grid".into(), serde_json::json!(call.grid));
            obj.insert("block".into(), serde_json::json!(call.block));
            obj.insert("dynamic_shared".into(), call.shared.into());
            obj.insert("stream".into(), call.stream.into());
            if let Some(s) = sample {
                obj.insert("sampled".into(), s.json());
                obj.insert("sample_cluster".into(), s.cluster.into());
            }
        }
        let line = serde_json::to_string(&v).unwrap_or_default();
        if let Some(c) = &s.channel {
            c.send(crate::settings::Message::Launch, &line);
        }
        let Some(path) = &s.stats else { return };
        let written =
            std::fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| writeln!(f, "{line}"));
        if let Err(e) = written {
            eprintln!("reconverge: cannot write the statistics to {path}: {e}");
        }
    }

    /// Sends `reconverge exec --html` the launch's executions per pc (`counts`) of the kernel `loaded` of
    /// module `module`, after the kernel's map the first time this process launches it.
    fn send_pcs(&mut self, module: usize, loaded: &Loaded, counts: Vec<(u32, PcCount)>) {
        use reconverge_records::per_pc::{KernelMap, LaunchPcs};
        let (Some(c), Some(m)) = (&self.settings.channel, self.modules.get(module)) else { return };
        let prog = loaded.program();
        let kernel = prog.kernel_name().to_string();
        if self.kernel_maps_sent.insert((module, kernel.clone())) {
            let map = KernelMap {
                kernel: kernel.clone(),
                module: m.label.clone(),
                ptx: m.ptx.clone(),
                sites: PcSite::of_program(prog),
                cuda_files: prog.src_files.clone(),
            };
            c.send(crate::settings::Message::Kernel, &serde_json::to_string(&map).unwrap_or_default());
        }
        let launch = LaunchPcs { launch: self.launches, kernel, module: m.label.clone(), counts };
        c.send(crate::settings::Message::Pcs, &serde_json::to_string(&launch).unwrap_or_default());
    }

    /// Prints device `printf` output and the launch's error, and says what the program sees.
    fn finish(&mut self, name: &str, call: &CallConfig, run: &RunResult) -> LaunchEnd {
        crate::printf::print(run);
        let Some(e) = &run.error else { return LaunchEnd::Returned(cuda::SUCCESS) };
        eprintln!(
            "reconverge: launch {} of `{name}` ({}) under {}: {}",
            self.launches,
            geometry(call),
            self.settings.mechanism.name(),
            render(e)
        );
        match e {
            SimError::Memory { fault, .. } => {
                let code = match fault.kind {
                    reconverge_sim::memory::FaultKind::Misaligned => cuda::MISALIGNED_ADDRESS,
                    _ => cuda::ILLEGAL_ADDRESS,
                };
                self.pending = code;
                LaunchEnd::Returned(cuda::SUCCESS)
            }
            SimError::Trap { .. } => {
                self.pending = cuda::LAUNCH_FAILURE;
                LaunchEnd::Returned(cuda::SUCCESS)
            }
            other => LaunchEnd::Exit(other.exit_code()),
        }
    }
}

/// What one launch's run gave.
pub(crate) struct Ran {
    /// The run.
    pub(crate) run: RunResult,
    /// The timing model's statistics (`None` in functional mode).
    pub(crate) timing: Option<TimingStats>,
    /// The executions of the pcs that ran (`None` unless [`Settings::per_pc`]).
    ///
    /// [`Settings::per_pc`]: crate::settings::Settings::per_pc
    pub(crate) pcs: Option<Vec<(u32, PcCount)>>,
    /// Under [`Settings::sample`], the launch's cycles (measured or estimated) and cluster.
    ///
    /// [`Settings::sample`]: crate::settings::Settings::sample
    pub(crate) sample: Option<Sampled>,
}

/// Runs `loaded` on `dev`, timed on `gpu` or functional without one; with [`Settings::per_pc`] also
/// counts each pc's executions (the pcs that ran), which only `exec --html` asks for.
///
/// [`Settings::per_pc`]: crate::settings::Settings::per_pc
pub(crate) fn run_on(
    settings: &crate::settings::Settings,
    gpu: Option<&reconverge_timing::GpuConfig>,
    loaded: &Loaded,
    cfg: &LaunchConfig,
    dev: &mut DeviceState,
) -> Ran {
    match gpu {
        None if settings.per_pc => {
            let mut counter = PcCounter::new(loaded.program());
            let run = reconverge_sim::run_resident(loaded, cfg, dev, &mut counter);
            Ran { run, timing: None, pcs: Some(counter.executed()), sample: None }
        }
        None => Ran {
            run: reconverge_sim::run_resident(loaded, cfg, dev, &mut NoObserver),
            timing: None,
            pcs: None,
            sample: None,
        },
        Some(g) => {
            let sample = settings.sample_ctas.map(|one_in| reconverge_timing::CtaSampling { one_in });
            let opts =
                reconverge_timing::TimedOptions { max_cycles: settings.max_cycles, threads: settings.threads, sample };
            let record = reconverge_timing::Record { pc_counts: settings.per_pc, ..Default::default() };
            let t = reconverge_timing::run_timed_resident_recorded(loaded, cfg, g, dev, opts, record);
            let pcs = t.pc_counts.as_deref().map(reconverge_timing::per_pc::executed);
            Ran { run: t.run, timing: Some(t.timing), pcs, sample: None }
        }
    }
}

/// A simulator error as the shim prints it: limits name the variable that sets them.
fn render(e: &SimError) -> String {
    use reconverge_sim::RunLimit;
    match e {
        SimError::Limit(RunLimit::Instructions(n)) => {
            format!("limit reached: RECONVERGE_MAX_INSTRUCTIONS={n} warp instructions")
        }
        SimError::Limit(RunLimit::Cycles(n)) => format!("limit reached: RECONVERGE_MAX_CYCLES={n}"),
        _ => format!("error: {e}"),
    }
}

/// A launch's geometry for messages: `grid 1,2,1, block 32,1,1`.
fn geometry(call: &CallConfig) -> String {
    let (g, b) = (call.grid, call.block);
    format!("grid {},{},{}, block {},{},{}", g[0], g[1], g[2], b[0], b[1], b[2])
}
