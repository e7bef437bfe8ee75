//! `reconverge._core`: the native module of the `reconverge` Python package (`python/reconverge/`, which
//! gives it a CuPy-style API). Kernels are parsed once ([`Module`]); every launch decodes the kernel for
//! its mechanism, runs it with the GIL released, and hands back the statistics (the JSON of `run --json`)
//! and the final contents of the buffers and module variables as NumPy byte arrays. Errors become the
//! exceptions below, with the command line's messages.
#![deny(missing_docs)]

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, GlobalInit, LaunchConfig};
use reconverge_sim::{NoObserver, SimError};

create_exception!(_core, ReconvergeError, PyException, "Any error of reconverge.");
create_exception!(
    _core,
    InvalidInput,
    ReconvergeError,
    "Bad input: malformed PTX, unknown names, wrong arguments, a kernel's out-of-bounds access (exit 2 of the command line)."
);
create_exception!(
    _core,
    DeadlockError,
    ReconvergeError,
    "A SIMT deadlock or livelock; the message names the waiting threads (exit 3)."
);
create_exception!(_core, LimitError, ReconvergeError, "A configured limit was reached (exit 4).");

fn invalid(msg: impl Into<String>) -> PyErr {
    InvalidInput::new_err(msg.into())
}

/// `e` in the Python package's words: limits name the keyword argument that sets them.
fn render(e: &SimError) -> String {
    match e {
        SimError::Limit(reconverge_sim::RunLimit::Instructions(n)) => {
            format!("limit reached: max_instructions={n} warp instructions")
        }
        SimError::Launch(l @ reconverge_program::LaunchError::MemoryLimit { .. }) => {
            format!("invalid launch: {l} (raise it with max_memory=)")
        }
        _ => e.to_string(),
    }
}

fn sim_error(e: &SimError) -> PyErr {
    let msg = format!("error: {}", render(e));
    match e {
        SimError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
        SimError::OutOfMemory { .. } => pyo3::exceptions::PyMemoryError::new_err(msg),
        _ => match e.exit_code() {
            3 => DeadlockError::new_err(msg),
            4 => LimitError::new_err(msg),
            _ => InvalidInput::new_err(msg),
        },
    }
}

/// Runs `job` on a thread of its own while this (Python) thread waits with the GIL released and checks
/// for signals every 50 ms: on Ctrl-C (or any signal handler that raises) `cancel` is set, the run stops
/// at its next check (between rounds of issue or epochs) and the handler's exception is raised.
fn interruptible<T: Send>(
    py: Python<'_>,
    cancel: &std::sync::Arc<std::sync::atomic::AtomicBool>,
    job: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let handle = s.spawn(job);
        loop {
            py.detach(|| {
                let start = std::time::Instant::now();
                while !handle.is_finished() && start.elapsed() < std::time::Duration::from_millis(50) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            });
            if handle.is_finished() {
                return handle.join().map_err(|_| ReconvergeError::new_err("the simulation thread panicked"));
            }
            if let Err(e) = py.check_signals() {
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
                // Wait without the GIL: the run may need it to finish (dropping what it holds).
                let _ = py.detach(|| handle.join());
                return Err(e);
            }
        }
    })
}

/// A parsed PTX module (from a file, PTX text, or CUDA C compiled by NVRTC).
#[pyclass(frozen, name = "Module", module = "reconverge._core")]
struct PyModuleHandle {
    module: reconverge_ir::Module,
    ptx: String,
    name: String,
}

fn mechanism(name: &str) -> PyResult<Mechanism> {
    Mechanism::from_name(name)
        .ok_or_else(|| invalid(format!("unknown mechanism `{name}` (known: {})", reconverge_mechanism::known_names())))
}

impl PyModuleHandle {
    fn program(&self, kernel: Option<&str>, mech: Mechanism, scalarize: bool) -> PyResult<reconverge_sim::Loaded> {
        let opts =
            DecodeOptions { file: self.name.clone(), source: Some(self.ptx.clone()), scalarize, ..Default::default() };
        reconverge_sim::load(&self.module, kernel, mech, &opts).map_err(|e| invalid(format!("{}: {e}", self.name)))
    }
}

#[pymethods]
impl PyModuleHandle {
    /// Parses `path` (`.ptx`, or `.cu` through NVRTC), or `code` (PTX text, or CUDA C when `cuda`).
    #[new]
    #[pyo3(signature = (path=None, code=None, cuda=false, options=Vec::new()))]
    fn new(path: Option<String>, code: Option<String>, cuda: bool, options: Vec<String>) -> PyResult<Self> {
        let (name, text, is_cu) = match (path, code) {
            (Some(p), None) => {
                let t = std::fs::read_to_string(&p).map_err(|e| invalid(format!("cannot read `{p}`: {e}")))?;
                let cu = p.ends_with(".cu");
                (p, t, cu)
            }
            (None, Some(c)) => ("<code>".to_string(), c, cuda),
            _ => return Err(invalid("give exactly one of path= and code=")),
        };
        let ptx = if is_cu {
            let mut opts: Vec<String> = reconverge_nvrtc::DEFAULT_OPTIONS.iter().map(|s| s.to_string()).collect();
            opts.extend(reconverge_nvrtc::include_options());
            opts.extend(options);
            reconverge_nvrtc::compile(&text, &name, &opts).map_err(|e| invalid(format!("{e:#}")))?
        } else {
            text
        };
        let module = reconverge_ptx::parse(&ptx).map_err(|errs| {
            invalid(reconverge_ptx::SourceError::new(name.clone(), ptx.clone(), errs).render_plain())
        })?;
        Ok(PyModuleHandle { module, ptx, name })
    }

    /// The PTX text.
    #[getter]
    fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The kernels' names (demangled for C++).
    fn kernels(&self) -> Vec<String> {
        self.module
            .kernels()
            .map(|k| reconverge_ir::names::display_name(&self.module.functions[k].name).to_string())
            .collect()
    }

    /// The parameters of `kernel`: `(name, PTX type, bytes, pointer-like)`.
    #[pyo3(signature = (kernel=None))]
    fn params(&self, kernel: Option<&str>) -> PyResult<Vec<(String, String, u32, bool)>> {
        let p = self.program(kernel, Mechanism::Pdom, false)?.into_program();
        Ok(p.params
            .iter()
            .map(|x| (x.name.clone(), format!("{:?}", x.ty).to_lowercase(), x.size, x.is_pointer_like))
            .collect())
    }

    /// The module variables `kernel` can use (`__device__` and `__constant__`): `(name, element type,
    /// bytes, scalar, initial contents)`.
    #[pyo3(signature = (kernel=None))]
    fn variables<'py>(&self, py: Python<'py>, kernel: Option<&str>) -> PyResult<Vec<VariableRow<'py>>> {
        let p = self.program(kernel, Mechanism::Pdom, false)?.into_program();
        Ok(p.globals
            .iter()
            .chain(&p.consts)
            .map(|v| {
                let mut init = v.init.clone();
                init.resize(v.size as usize, 0);
                (v.name.clone(), format!("{:?}", v.ty).to_lowercase(), v.size, v.scalar, PyArray1::from_vec(py, init))
            })
            .collect())
    }

    /// Runs one launch of `kernel` as `request` describes it (see [`LaunchRequest`] and the Python
    /// package's `Kernel.__call__`). Returns the statistics (JSON), the buffers' final bytes, the dumped
    /// variables' bytes and the run's record as CSV (the columns of `reconverge compare --csv`). A run that
    /// stops early raises, unless `raise_errors` is false (the statistics then say what happened).
    fn launch<'py>(
        &self,
        py: Python<'py>,
        kernel: Option<&str>,
        request: LaunchRequest<'py>,
    ) -> PyResult<LaunchOutput<'py>> {
        let LaunchRequest {
            grid,
            block,
            args,
            mechanism,
            config,
            functional,
            warp_size,
            globals,
            dump,
            max_instructions,
            dynamic_shared,
            scalarize,
            raise_errors,
            max_memory,
        } = request;
        let (mechanism, config) = (mechanism.as_str(), config.as_str());
        let mech = self::mechanism(mechanism)?;
        let gpu = if functional { None } else { Some(gpu_config(config)?) };
        let scalarize = scalarize || gpu.as_ref().is_some_and(|g| g.sm.dispatch.needs_scalar_plan());
        let loaded = self.program(kernel, mech, scalarize)?;
        let prog = loaded.program();
        let launch_args = resolve_args(prog, &args)?;
        let mut inits = Vec::new();
        for (name, dtype, bytes, scalar) in &globals {
            let bytes = bytes.as_slice().map_err(|e| invalid(e.to_string()))?;
            let bytes = reconverge_sim::error::try_copy(bytes, || format!("module variable `{name}`"))
                .map_err(|e| sim_error(&SimError::from(e)))?;
            let value = if *scalar {
                let mut b = [0u8; 8];
                b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
                Arg::Scalar(u64::from_le_bytes(b))
            } else {
                Arg::Buffer(Buffer { dtype: dtype_of(dtype)?, bytes })
            };
            inits.push(GlobalInit { name: name.clone(), value });
        }
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cfg = LaunchConfig {
            grid,
            block,
            warp_size: warp_size.unwrap_or_else(|| gpu.as_ref().map(|g| g.warp_size).unwrap_or(32)),
            dynamic_shared,
            max_instructions,
            globals: inits,
            dump_globals: dump,
            max_memory: max_memory.unwrap_or_else(default_max_memory),
            cancel: Some(cancel.clone()),
            ..LaunchConfig::default()
        };
        cfg.validate(prog).map_err(|e| invalid(e.to_string()))?;
        // The launch takes the argument buffers over (no second copy of a large array).
        let (r, timing) = interruptible(py, &cancel, || match &gpu {
            None => (reconverge_sim::run(&loaded, &cfg, launch_args, &mut NoObserver), None),
            Some(g) => {
                let t = reconverge_timing::run_timed(
                    &loaded,
                    &cfg,
                    g,
                    launch_args,
                    reconverge_timing::TimedOptions { max_cycles: None, threads: 1 },
                );
                (t.run, Some(t.timing))
            }
        })?;
        if let Some(SimError::Interrupted | SimError::OutOfMemory { .. }) = &r.error {
            return Err(sim_error(r.error.as_ref().unwrap_or(&SimError::Interrupted)));
        }
        if let Some(e) = r.error.as_ref().filter(|_| raise_errors) {
            return Err(sim_error(e));
        }
        let name = prog.kernel_name().to_string();
        let stats = reconverge_report::run::run_json_timed(
            &name,
            mech.name(),
            cfg.warp_size,
            &r,
            timing.as_ref(),
            gpu.as_ref(),
        );
        let config = gpu.as_ref().map(|g| g.name.as_str());
        let record = reconverge_report::records::RunRecord::new(
            &name,
            config,
            cfg.warp_size,
            mech.name(),
            None,
            Some(&r),
            timing.as_ref(),
        );
        let record = reconverge_report::records::to_csv(&[record]);
        let buffers = r.buffers.into_iter().map(|b| b.map(|b| PyArray1::from_vec(py, b.bytes))).collect();
        let vars = r.globals.into_iter().map(|(n, b)| (n, PyArray1::from_vec(py, b.bytes))).collect();
        Ok((stats.to_string(), buffers, vars, record))
    }
}

/// One launch as the Python package describes it: a dict with exactly these keys (`Kernel._launch`).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct LaunchRequest<'py> {
    /// CTAs per grid dimension.
    grid: [u32; 3],
    /// Threads per CTA dimension.
    block: [u32; 3],
    /// `("buffer", dtype, bytes)`, `("bits", decimal u64, None)` or `("text", literal, None)`.
    args: Vec<WireArg<'py>>,
    /// The mechanism's name.
    mechanism: String,
    /// A preset or a TOML file (ignored when `functional`).
    config: String,
    /// Functional simulation only.
    functional: bool,
    /// Threads per warp (`None`: the configuration's).
    warp_size: Option<u32>,
    /// `(name, dtype, bytes, scalar)`: module variables written before the launch.
    globals: Vec<WireGlobal<'py>>,
    /// The module variables read back after it.
    dump: Vec<String>,
    /// The warp-instruction limit.
    max_instructions: Option<u64>,
    /// Dynamic shared memory in bytes.
    dynamic_shared: u32,
    /// Count seed 004's scalarization metrics.
    scalarize: bool,
    /// Raise when the run stops early.
    raise_errors: bool,
    /// The memory limit in bytes (`None`: half of this machine's).
    max_memory: Option<u64>,
}

/// A launch argument on its way from Python: kind, type or text, and the bytes of a buffer.
type WireArg<'py> = (String, String, Option<PyReadonlyArray1<'py, u8>>);

/// A module variable's initial value from Python: name, dtype, bytes, and whether it is a scalar.
type WireGlobal<'py> = (String, String, PyReadonlyArray1<'py, u8>, bool);

/// A module variable as `Module.variables` lists it: name, element type, bytes, scalar, initial contents.
type VariableRow<'py> = (String, String, u64, bool, Bound<'py, PyArray1<u8>>);

/// What a launch returns: statistics (JSON), buffers, dumped variables, the record (CSV).
type LaunchOutput<'py> =
    (String, Vec<Option<Bound<'py, PyArray1<u8>>>>, Vec<(String, Bound<'py, PyArray1<u8>>)>, String);

/// Half of this machine's memory, or 8 GiB where that cannot be read.
fn default_max_memory() -> u64 {
    reconverge_program::launch::half_of_memory(std::fs::read_to_string("/proc/meminfo").ok().as_deref())
}

fn dtype_of(name: &str) -> PyResult<Dtype> {
    Dtype::ALL.iter().copied().find(|d| d.name() == name).ok_or_else(|| invalid(format!("unsupported dtype `{name}`")))
}

fn gpu_config(name: &str) -> PyResult<reconverge_timing::GpuConfig> {
    reconverge_timing::GpuConfig::preset(name).map_or_else(
        || {
            let text = std::fs::read_to_string(name).map_err(|e| {
                invalid(format!(
                    "config `{name}` is neither a preset ({}) nor a readable file: {e}",
                    reconverge_timing::PRESETS.join(", ")
                ))
            })?;
            reconverge_timing::GpuConfig::from_toml(&text).map_err(|e| invalid(format!("{name}: {e}")))
        },
        Ok,
    )
}

fn resolve_args(
    prog: &reconverge_program::Program,
    args: &[(String, String, Option<PyReadonlyArray1<'_, u8>>)],
) -> PyResult<Vec<Arg>> {
    if args.len() != prog.params.len() {
        return Err(invalid(format!(
            "kernel {} takes {} arguments, {} given",
            prog.kernel_name(),
            prog.params.len(),
            args.len()
        )));
    }
    args.iter()
        .zip(&prog.params)
        .enumerate()
        .map(|(i, ((kind, text, bytes), param))| match kind.as_str() {
            "buffer" => {
                let bytes = bytes.as_ref().ok_or_else(|| invalid(format!("argument {i}: a buffer without bytes")))?;
                let bytes = bytes.as_slice().map_err(|e| invalid(e.to_string()))?;
                let bytes = reconverge_sim::error::try_copy(bytes, || format!("argument {i}"))
                    .map_err(|e| sim_error(&SimError::from(e)))?;
                Ok(Arg::Buffer(Buffer { dtype: dtype_of(text)?, bytes }))
            }
            "bits" => text.parse::<u64>().map(Arg::Scalar).map_err(|e| invalid(format!("argument {i}: {e}"))),
            "text" => reconverge_program::parse_scalar(text, param.ty)
                .map(Arg::Scalar)
                .map_err(|e| invalid(format!("argument {i} ({}): {e}", param.name))),
            other => Err(invalid(format!("argument {i}: unknown kind `{other}`"))),
        })
        .collect()
}

/// Runs the built-in kernels of `kernels_dir` (its `manifest.toml`) under every combination and returns
/// the runs as CSV (the columns of `reconverge compare --csv`).
#[pyfunction]
fn compare(py: Python<'_>, kernels_dir: &str, request: CompareRequest) -> PyResult<String> {
    use rayon::prelude::*;
    let CompareRequest { kernels, mechanisms, warp_sizes, configs, functional, scalarize, max_instructions, threads } =
        request;
    let dir = std::path::PathBuf::from(kernels_dir);
    let text = std::fs::read_to_string(dir.join("manifest.toml"))
        .map_err(|e| invalid(format!("cannot read `{}`: {e}", dir.join("manifest.toml").display())))?;
    let manifest = reconverge_suite::Manifest::parse(&text).map_err(|e| invalid(e.to_string()))?;
    for k in &kernels {
        if !manifest.kernels.iter().any(|e| &e.name == k) {
            return Err(invalid(format!("no kernel `{k}` in the suite")));
        }
    }
    let mechs = if mechanisms.is_empty() {
        Mechanism::defaults().collect()
    } else {
        mechanisms.iter().map(|m| mechanism(m)).collect::<PyResult<Vec<_>>>()?
    };
    let gpus = configs.iter().map(|c| gpu_config(c)).collect::<PyResult<Vec<_>>>()?;
    let jobs =
        reconverge_suite::grid::jobs(&manifest, &kernels, if functional { 0 } else { gpus.len() }, &warp_sizes, &mechs);
    let load = |p: &str| std::fs::read(dir.join(p));
    if threads > 1024 {
        return Err(invalid(format!("threads={threads}: at most 1024 (0 = one per core)")));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = if threads == 0 { cores } else { threads }.min(jobs.len().max(1));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| invalid(e.to_string()))?;
    let outcomes = py.detach(|| {
        pool.install(|| {
            jobs.par_iter()
                .map(|j| reconverge_suite::grid::run_job(&manifest, j, &gpus, &load, max_instructions, scalarize))
                .collect::<Vec<_>>()
        })
    });
    let mut runs: Vec<reconverge_report::records::RunRecord> = jobs
        .iter()
        .zip(&outcomes)
        .map(|(j, o)| reconverge_suite::grid::record_of(o, j.config.map(|c| gpus[c].name.as_str())))
        .collect();
    reconverge_report::records::fill_speedups(&mut runs, reconverge_report::records::BASELINE);
    Ok(reconverge_report::records::to_csv(&runs))
}

/// A grid of runs as the Python package describes it (`rc.compare`, `rc.sweep`): a dict with these keys,
/// all but `kernels` optional.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct CompareRequest {
    /// Kernels of the suite (empty: all); the one key a request must have.
    kernels: Vec<String>,
    /// Mechanisms (empty: the registry's default set).
    #[pyo3(default)]
    mechanisms: Vec<String>,
    /// Warp sizes (default: 32).
    #[pyo3(default = vec![32])]
    warp_sizes: Vec<u32>,
    /// Presets or TOML files (default: gtx480).
    #[pyo3(default = vec!["gtx480".to_string()])]
    configs: Vec<String>,
    /// Functional runs only.
    #[pyo3(default)]
    functional: bool,
    /// Count seed 004's scalarization metrics.
    #[pyo3(default)]
    scalarize: bool,
    /// The warp-instruction limit of every run.
    #[pyo3(default = 50_000_000)]
    max_instructions: u64,
    /// Host threads (0: one per core).
    #[pyo3(default)]
    threads: usize,
}

/// Every mechanism's name, in the registry's order.
#[pyfunction]
fn mechanisms() -> Vec<&'static str> {
    Mechanism::ALL.iter().map(|m| m.name()).collect()
}

/// The mechanisms `compare` runs when none is named (the registry's default set).
#[pyfunction]
fn default_mechanisms() -> Vec<&'static str> {
    Mechanism::defaults().map(|m| m.name()).collect()
}

/// The name of the mechanism `name` (a name or an alias) stands for; `InvalidInput` naming every known
/// name when it is none.
#[pyfunction]
fn mechanism_name(name: &str) -> PyResult<&'static str> {
    mechanism(name).map(|m| m.name())
}

/// The GPU configuration presets.
#[pyfunction]
fn presets() -> Vec<&'static str> {
    reconverge_timing::PRESETS.to_vec()
}

/// Checks a GPU configuration (a preset name or a TOML file) and returns its name; `InvalidInput` naming
/// the file and key when it is not usable.
#[pyfunction]
fn check_config(config: &str) -> PyResult<String> {
    gpu_config(config).map(|g| g.name)
}

/// The module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyModuleHandle>()?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(default_mechanisms, m)?)?;
    m.add_function(wrap_pyfunction!(mechanism_name, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(check_config, m)?)?;
    let py = m.py();
    m.add("ReconvergeError", py.get_type::<ReconvergeError>())?;
    m.add("InvalidInput", py.get_type::<InvalidInput>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    Ok(())
}
