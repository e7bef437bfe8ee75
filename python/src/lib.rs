//! `reconverge._core`: the native module of the `reconverge` Python package (`python/reconverge/`, which
//! gives it a CuPy-style API). Kernels are parsed once (`Module`); every launch decodes the kernel for
//! its mechanism, runs it with the GIL released, and hands back the statistics (the JSON of `run --json`)
//! and the final contents of the buffers and module variables as NumPy byte arrays. Errors become the
//! exceptions below, with the command line's messages.
#![deny(missing_docs)]

mod records;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use reconverge_mechanism::Mechanism;
use reconverge_program::{Arg, Buffer, DecodeOptions, Dtype, GlobalInit, LaunchConfig};
use reconverge_sim::{NoObserver, SimError, WaitingGroup};

create_exception!(reconverge, ReconvergeError, PyException, "Any error of reconverge.");
create_exception!(
    reconverge,
    DeadlockError,
    ReconvergeError,
    "A SIMT deadlock or livelock (exit 3 of the command line). Attributes: `threads` (one dict per group of \
     waiting threads: block, warp, lanes, first_thread, state, pc, where), `pcs` (their distinct pcs), \
     `livelock` (the threads spin rather than wait), `report` (the text) and `stats` (the partial statistics)."
);
create_exception!(
    reconverge,
    LimitError,
    ReconvergeError,
    "A configured limit was reached (exit 4); `stats` holds the partial statistics."
);

/// `InvalidInput(ReconvergeError, ValueError)`, made once per interpreter.
static INVALID_INPUT: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// `ArgumentTypeError(InvalidInput, TypeError)`, made once per interpreter.
static ARGUMENT_TYPE_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// A Python exception class `name` with several bases (which `create_exception!` cannot make), in the
/// module `reconverge` (where the package exports it, so that its instances pickle).
fn exception_class(py: Python<'_>, name: &str, doc: &str, bases: Vec<Bound<'_, PyType>>) -> PyResult<Py<PyType>> {
    let dict = pyo3::types::PyDict::new(py);
    dict.set_item("__doc__", doc)?;
    dict.set_item("__module__", "reconverge")?;
    let bases = pyo3::types::PyTuple::new(py, bases)?;
    Ok(py.get_type::<PyType>().call1((name, bases, dict))?.cast_into::<PyType>()?.unbind())
}

/// The class `InvalidInput`: bad input (malformed PTX, unknown names, wrong arguments, a kernel's
/// out-of-bounds access; exit 2 of the command line), a `ValueError` too.
fn invalid_input_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    INVALID_INPUT
        .get_or_try_init(py, || {
            let doc = "Bad input: malformed PTX, unknown names, wrong arguments or values, a kernel's \
                       out-of-bounds access (exit 2 of the command line). Also a ValueError.";
            exception_class(
                py,
                "InvalidInput",
                doc,
                vec![py.get_type::<ReconvergeError>(), py.get_type::<PyValueError>()],
            )
        })
        .map(|t| t.bind(py))
}

/// The class `ArgumentTypeError`: a kernel argument of the wrong type for its parameter, an
/// `InvalidInput` and a `TypeError`.
fn argument_type_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    ARGUMENT_TYPE_ERROR
        .get_or_try_init(py, || {
            let doc = "A kernel argument whose type does not fit its parameter's PTX type (an InvalidInput and a \
                       TypeError).";
            let invalid = invalid_input_type(py)?.clone();
            exception_class(py, "ArgumentTypeError", doc, vec![invalid, py.get_type::<PyTypeError>()])
        })
        .map(|t| t.bind(py))
}

fn invalid(msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    Python::attach(|py| match invalid_input_type(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    })
}

fn wrong_type(msg: impl Into<String>) -> PyErr {
    let msg = msg.into();
    Python::attach(|py| match argument_type_error_type(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    })
}

/// `e` in the Python package's words: limits name the keyword argument that sets them, and a module of
/// several kernels says how to pick one.
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
    let msg = render(e);
    match e {
        SimError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("interrupted"),
        SimError::OutOfMemory { .. } => pyo3::exceptions::PyMemoryError::new_err(msg),
        _ => match e.exit_code() {
            3 => DeadlockError::new_err(msg),
            4 => LimitError::new_err(msg),
            _ => invalid(msg),
        },
    }
}

/// The exception of a run that stopped early, with its partial statistics (`stats`, the JSON `stats`)
/// and, for a deadlock, the waiting threads (`threads`, `pcs`, `livelock`, `report`) as attributes.
fn run_error(py: Python<'_>, e: &SimError, stats: &str) -> PyErr {
    let err = sim_error(e);
    let details = || -> PyResult<()> {
        let exc = err.value(py);
        exc.setattr("stats", py.import("json")?.call_method1("loads", (stats,))?)?;
        if let SimError::Deadlock { report } = e {
            // The groups whose place is a pc of the program (`pc P in ...`): the ones the report's text
            // lists as `... at pc P ...`.
            let groups: Vec<&WaitingGroup> = report.groups().iter().filter(|g| g.at.starts_with("pc ")).collect();
            let mut pcs: Vec<u32> = groups.iter().map(|g| g.pc).collect();
            pcs.sort_unstable();
            pcs.dedup();
            let list = pyo3::types::PyList::empty(py);
            for g in &groups {
                let d = pyo3::types::PyDict::new(py);
                d.set_item("block", g.block)?;
                d.set_item("warp", g.warp)?;
                d.set_item("lanes", g.lane_ranges())?;
                d.set_item("first_thread", g.first_thread)?;
                d.set_item("state", g.state.as_str())?;
                d.set_item("pc", g.pc)?;
                d.set_item("where", &g.at)?;
                list.append(d)?;
            }
            exc.setattr("threads", list)?;
            exc.setattr("pcs", pcs)?;
            exc.setattr("livelock", report.livelock())?;
            exc.setattr("report", report.to_string())?;
        }
        Ok(())
    };
    match details() {
        Ok(()) => err,
        Err(e) => e,
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
        let kernel = kernel.map(|k| self.kernel_name(k));
        reconverge_sim::load(&self.module, kernel.as_deref(), mech, &opts).map_err(|e| match e {
            reconverge_program::DecodeError::AmbiguousKernel { available } => invalid(format!(
                "{}: the module defines several kernels ({available}); name one: module.get_function(name)",
                self.name
            )),
            e => invalid(format!("{}: {e}", self.name)),
        })
    }

    /// The PTX name of the kernel `query` names, where only its short name names it: a template
    /// instance's name without the return type the demangler puts first (`scale<float>` or
    /// `scale<float>(float*, int)` for `void scale<float>(float*, int)`), with or without namespaces.
    /// Otherwise `query` itself, which the loader resolves (the PTX name, the demangled signature, the
    /// name without parameters) or reports as unknown or ambiguous.
    fn kernel_name(&self, query: &str) -> String {
        use reconverge_ir::names;
        if !names::resolve(&self.module, self.module.kernels(), query).is_empty() {
            return query.to_string();
        }
        let q = query.replace(' ', "");
        let found: Vec<&str> = self
            .module
            .kernels()
            .map(|k| self.module.functions[k].name.as_str())
            .filter(|n| names::demangle(n).is_some_and(|d| short_names(&d).iter().any(|s| s.replace(' ', "") == q)))
            .collect();
        match found.as_slice() {
            [one] => one.to_string(),
            _ => query.to_string(),
        }
    }
}

/// The names a demangled template instance `void ns::scale<float>(float*, int)` goes by besides its
/// full signature: without the return type (`ns::scale<float>(float*, int)`), also without the
/// parameters (`ns::scale<float>`), and without namespaces (`scale<float>`).
fn short_names(demangled: &str) -> Vec<String> {
    // The return type ends at the last space outside <> and () before the parameter list.
    let base = reconverge_ir::names::base_name(demangled);
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in base.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let name = &base[start..];
    let mut out = vec![format!("{name}{}", &demangled[base.len()..]), name.to_string()];
    // The last `::` outside template arguments starts the unqualified name.
    let mut depth = 0i32;
    let mut last = None;
    for (i, c) in name.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ':' if depth == 0 && name[i..].starts_with("::") => last = Some(i + 2),
            _ => {}
        }
    }
    if let Some(i) = last {
        out.push(name[i..].to_string());
    }
    out
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
        // Without a kernel: the variables of every kernel of the module, each once.
        let kernels: Vec<Option<String>> = match kernel {
            Some(k) => vec![Some(k.to_string())],
            None => self.module.kernels().map(|k| Some(self.module.functions[k].name.clone())).collect(),
        };
        let mut rows: Vec<VariableRow<'py>> = Vec::new();
        for k in kernels {
            let p = self.program(k.as_deref(), Mechanism::Pdom, false)?.into_program();
            for v in p.globals.iter().chain(&p.consts) {
                if rows.iter().any(|r| r.0 == v.name) {
                    continue;
                }
                let mut init = v.init.clone();
                init.resize(v.size as usize, 0);
                let ty = format!("{:?}", v.ty).to_lowercase();
                rows.push((v.name.clone(), ty, v.size, v.scalar, PyArray1::from_vec(py, init)));
            }
        }
        Ok(rows)
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
        // The timing model charges the registers ptxas allocates (functional runs need none).
        let registers = gpu
            .as_ref()
            .and_then(|_| reconverge_nvrtc::ptxas::kernel_registers(&self.ptx, loaded.program().kernel_name()));
        let loaded = loaded.with_allocated_registers(registers);
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
            globals: inits,
            dump_globals: dump,
            limits: reconverge_program::RunLimits {
                // 0 means no limit, as on the command line.
                max_instructions: max_instructions.and_then(reconverge_program::launch::instruction_limit),
                max_memory: max_memory.unwrap_or_else(default_max_memory),
                ..Default::default()
            },
            host: reconverge_program::HostOptions { cancel: Some(cancel.clone()), ..Default::default() },
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
                    reconverge_timing::TimedOptions { max_cycles: None, threads: 1, sample: None },
                );
                (t.run, Some(t.timing))
            }
        })?;
        if let Some(SimError::Interrupted | SimError::OutOfMemory { .. }) = &r.error {
            return Err(sim_error(r.error.as_ref().unwrap_or(&SimError::Interrupted)));
        }
        let name = prog.kernel_name().to_string();
        let mut stats = reconverge_report::run::run_json_timed(
            &name,
            mech.name(),
            cfg.warp_size,
            &r,
            timing.as_ref(),
            gpu.as_ref(),
        );
        if let Some(e) = r.error.as_ref().filter(|_| raise_errors) {
            return Err(run_error(py, e, &stats.to_string()));
        }
        // The counts `Device.stats` recomputes ratios from (hidden from the user: `Kernel.__call__` drops them).
        if let Some(obj) = stats.as_object_mut() {
            let hidden = reconverge_records::aggregate::hidden_counts(&r.stats, timing.as_ref());
            obj.insert(reconverge_records::aggregate::HIDDEN.into(), hidden.into());
        }
        let config = gpu.as_ref().map(|g| g.name.as_str());
        let mut record = reconverge_report::records::RunRecord::new(
            &name,
            config,
            cfg.warp_size,
            mech.name(),
            None,
            Some(&r),
            timing.as_ref(),
        );
        if let Some(e) = timing.as_ref().zip(gpu.as_ref()).and_then(|(t, g)| reconverge_energy::energy(t, g)) {
            record.set_energy(&e);
        }
        let record = reconverge_report::records::to_csv(&[record]);
        let buffers = r.buffers.into_iter().map(|b| b.map(|b| PyArray1::from_vec(py, b.bytes))).collect();
        let vars = r.globals.into_iter().map(|(n, b)| (n, PyArray1::from_vec(py, b.bytes))).collect();
        let fields = r.fields.into_iter().map(|f| (f.arg, f.field, PyArray1::from_vec(py, f.buffer.bytes))).collect();
        Ok((stats.to_string(), buffers, vars, record, fields))
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

/// A launch argument (or a struct's field) on its way from Python (`Kernel._arg`): a dict with these keys,
/// all but `kind` optional.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct WireArg<'py> {
    /// `buffer` (a device array: `dtype`, all of its `bytes`, and the pointer's `offset` into them),
    /// `scalar` (a NumPy scalar: `dtype` and its `bytes`), `int` or `float` (a Python number's `text`),
    /// `struct` (a by-value struct's `fields`, each a `buffer`, `scalar`, `null` or `pad`), `null` (a null
    /// pointer field) or `pad` (`offset` zero bytes).
    kind: String,
    /// The dtype of a buffer or NumPy scalar (`i32`).
    #[pyo3(default)]
    dtype: String,
    /// A Python number as text.
    #[pyo3(default)]
    text: String,
    /// The bytes of a buffer or NumPy scalar.
    #[pyo3(default)]
    bytes: Option<PyReadonlyArray1<'py, u8>>,
    /// A pointer's offset in bytes into its buffer, or the bytes of padding.
    #[pyo3(default)]
    offset: u64,
    /// A struct's fields, in declaration order.
    #[pyo3(default)]
    fields: Vec<WireArg<'py>>,
}

/// A module variable's initial value from Python: name, dtype, bytes, and whether it is a scalar.
type WireGlobal<'py> = (String, String, PyReadonlyArray1<'py, u8>, bool);

/// A module variable as `Module.variables` lists it: name, element type, bytes, scalar, initial contents.
type VariableRow<'py> = (String, String, u64, bool, Bound<'py, PyArray1<u8>>);

/// What a launch returns: statistics (JSON), buffers, dumped variables, the record (CSV), and the buffers
/// struct arguments' pointer fields point into as (argument, field, bytes).
type LaunchOutput<'py> = (
    String,
    Vec<Option<Bound<'py, PyArray1<u8>>>>,
    Vec<(String, Bound<'py, PyArray1<u8>>)>,
    String,
    Vec<(usize, usize, Bound<'py, PyArray1<u8>>)>,
);

/// Half of this machine's memory, or 8 GiB where that cannot be read.
fn default_max_memory() -> u64 {
    reconverge_program::launch::half_of_memory(std::fs::read_to_string("/proc/meminfo").ok().as_deref())
}

fn dtype_of(name: &str) -> PyResult<Dtype> {
    Dtype::ALL.iter().copied().find(|d| d.name() == name).ok_or_else(|| invalid(format!("unsupported dtype `{name}`")))
}

fn gpu_config(name: &str) -> PyResult<reconverge_timing::GpuConfig> {
    reconverge_timing::GpuConfig::named(name, |p| std::fs::read_to_string(p)).map_err(|e| match e {
        reconverge_timing::error::ConfigSourceError::Unreadable { .. } => invalid(format!("config {e}")),
        other => invalid(other.to_string()),
    })
}

fn resolve_args(prog: &reconverge_program::Program, args: &[WireArg<'_>]) -> PyResult<Vec<Arg>> {
    if args.len() != prog.params.len() {
        return Err(invalid(format!(
            "kernel {} takes {} arguments, {} given",
            prog.kernel_name(),
            prog.params.len(),
            args.len()
        )));
    }
    args.iter().zip(&prog.params).enumerate().map(|(i, (a, p))| resolve_arg(i, a, p)).collect()
}

/// The NumPy name of a dtype (`int32`).
fn numpy_name(d: Dtype) -> &'static str {
    match d {
        Dtype::I8 => "int8",
        Dtype::U8 => "uint8",
        Dtype::I16 => "int16",
        Dtype::U16 => "uint16",
        Dtype::I32 => "int32",
        Dtype::U32 => "uint32",
        Dtype::I64 => "int64",
        Dtype::U64 => "uint64",
        Dtype::F32 => "float32",
        Dtype::F64 => "float64",
    }
}

/// The NumPy type that fits a scalar parameter of PTX type `ty` (`np.int32` for `.s32`).
fn numpy_for(ty: reconverge_ir::ScalarType) -> Option<&'static str> {
    use reconverge_ir::ScalarType as T;
    Some(match ty {
        T::S8 => "np.int8",
        T::U8 | T::B8 => "np.uint8",
        T::S16 => "np.int16",
        T::U16 | T::B16 => "np.uint16",
        T::S32 => "np.int32",
        T::U32 | T::B32 => "np.uint32",
        T::S64 => "np.int64",
        T::U64 | T::B64 => "np.uint64",
        T::F32 => "np.float32",
        T::F64 => "np.float64",
        _ => return None,
    })
}

/// The bytes of a buffer or scalar argument.
fn wire_bytes<'a>(what: &str, a: &'a WireArg<'_>) -> PyResult<&'a [u8]> {
    let bytes = a.bytes.as_ref().ok_or_else(|| invalid(format!("{what}: no bytes")))?;
    bytes.as_slice().map_err(|e| invalid(format!("{what}: {e}")))
}

/// A buffer argument or field: its dtype and a copy of its bytes.
fn wire_buffer(what: &str, a: &WireArg<'_>) -> PyResult<Buffer> {
    let bytes = reconverge_sim::error::try_copy(wire_bytes(what, a)?, || what.to_string())
        .map_err(|e| sim_error(&SimError::from(e)))?;
    Ok(Buffer { dtype: dtype_of(&a.dtype)?, bytes })
}

/// The bits of a NumPy scalar for parameter `p`: its dtype must be the parameter's kind (integer, float,
/// or any for `.bN`) and size; nothing is reinterpreted or converted.
fn scalar_bits(what: &str, a: &WireArg<'_>, p: &reconverge_program::program::KernelParam) -> PyResult<u64> {
    let dtype = dtype_of(&a.dtype)?;
    let ty = p.ty;
    let kind_fits = if ty.is_float() {
        dtype.is_float()
    } else if ty.is_integer() {
        !dtype.is_float()
    } else {
        ty.is_bits()
    };
    if !kind_fits || dtype.size() as u32 != p.size {
        let hint = numpy_for(ty).filter(|_| p.size == ty.bytes()).map_or(String::new(), |n| format!("; pass {n}(...)"));
        return Err(wrong_type(format!(
            "{what}: a NumPy {} ({} bytes) does not fit a .{} parameter ({} bytes){hint}",
            numpy_name(dtype),
            dtype.size(),
            ty.as_str(),
            p.size
        )));
    }
    let bytes = wire_bytes(what, a)?;
    let mut b = [0u8; 8];
    b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    Ok(u64::from_le_bytes(b))
}

/// One argument for parameter `p` (index `i`), checked against the parameter's PTX type and size.
fn resolve_arg(i: usize, a: &WireArg<'_>, p: &reconverge_program::program::KernelParam) -> PyResult<Arg> {
    let what = format!("argument {i} (parameter `{}`, .{} of {} bytes)", p.name, p.ty.as_str(), p.size);
    // `.param .align A .b8 name[N]`: a struct (or array) passed by value.
    let aggregate = p.size != p.ty.bytes();
    match a.kind.as_str() {
        "struct" => struct_arg(&what, a, p),
        _ if aggregate => {
            Err(wrong_type(format!("{what}: the parameter is a struct passed by value; pass rc.Struct(...)")))
        }
        "buffer" if p.size != 8 => {
            Err(wrong_type(format!("{what}: a device array is passed as a 64-bit pointer, which does not fit")))
        }
        "buffer" => {
            let buffer = wire_buffer(&what, a)?;
            Ok(if a.offset == 0 { Arg::Buffer(buffer) } else { Arg::BufferAt { buffer, offset: a.offset } })
        }
        "scalar" => scalar_bits(&what, a, p).map(Arg::Scalar),
        "float" if !p.ty.is_float() => {
            Err(wrong_type(format!("{what}: a Python float does not fit an integer parameter; pass an int")))
        }
        // A Python int for a float parameter is converted to the parameter's type.
        "int" | "float" => reconverge_program::parse_scalar(&a.text, p.ty)
            .map(Arg::Scalar)
            .map_err(|e| invalid(format!("{what}: {e}"))),
        other => Err(invalid(format!("argument {i}: unknown kind `{other}`"))),
    }
}

/// A struct passed by value for parameter `p`, from its fields, laid out as C lays them out; its size
/// must be the parameter's and its alignment at most the parameter's.
fn struct_arg(what: &str, a: &WireArg<'_>, p: &reconverge_program::program::KernelParam) -> PyResult<Arg> {
    use reconverge_program::StructField;
    let mut fields = Vec::with_capacity(a.fields.len());
    for (k, f) in a.fields.iter().enumerate() {
        let field = format!("{what}, field {k}");
        fields.push(match f.kind.as_str() {
            "scalar" => {
                let dtype = dtype_of(&f.dtype)?;
                let bytes = wire_bytes(&field, f)?;
                let mut b = [0u8; 8];
                b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
                StructField::Number { dtype, bits: u64::from_le_bytes(b) }
            }
            "buffer" => StructField::Pointer { buffer: wire_buffer(&field, f)?, offset: f.offset },
            "null" => StructField::Null,
            "pad" => {
                StructField::Pad(u32::try_from(f.offset).map_err(|_| invalid(format!("{field}: too much padding")))?)
            }
            other => return Err(invalid(format!("{field}: unknown kind `{other}`"))),
        });
    }
    let s = reconverge_program::StructArg::new(fields).map_err(|e| invalid(format!("{what}: {e}")))?;
    if s.bytes.len() as u64 != u64::from(p.size) {
        return Err(wrong_type(format!(
            "{what}: the struct is {} bytes (fields laid out with C's alignment), the parameter {} bytes",
            s.bytes.len(),
            p.size
        )));
    }
    if s.align > p.align.max(1) {
        return Err(wrong_type(format!(
            "{what}: the struct needs {}-byte alignment, the parameter has {} (.align {})",
            s.align, p.align, p.align
        )));
    }
    Ok(Arg::Struct(s))
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
    let mut gpus = configs.iter().map(|c| gpu_config(c)).collect::<PyResult<Vec<_>>>()?;
    reconverge_timing::GpuConfig::distinct_names(&mut gpus, &configs).map_err(|e| invalid(e.to_string()))?;
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
        .map(|(j, o)| reconverge_suite::grid::record_of(o, j.config.map(|c| &gpus[c])))
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

/// Checks a device's configuration with its warp size: the configuration (a preset or a TOML file) with
/// `warp_size` in place of its own must be usable by the timing model. Returns the configuration's name.
#[pyfunction]
fn check_device(config: &str, warp_size: u32) -> PyResult<String> {
    let mut g = gpu_config(config)?;
    g.warp_size = warp_size;
    g.validate().map_err(|e| invalid(format!("warp_size={warp_size} with config `{config}`: {e}")))?;
    Ok(g.name)
}

/// The statistics of several launches combined into one (`Device.stats`): each key by its kind, as
/// `reconverge_records::aggregate` declares it (counts summed, maxima kept, ratios recomputed from the
/// summed counts, nested objects merged with the same rules).
#[pyclass(name = "StatsTotal", module = "reconverge._core")]
#[derive(Default)]
struct StatsTotal {
    total: serde_json::Map<String, serde_json::Value>,
}

fn stats_object(json: &str) -> PyResult<serde_json::Map<String, serde_json::Value>> {
    match serde_json::from_str(json) {
        Ok(serde_json::Value::Object(m)) => Ok(m),
        Ok(_) => Err(invalid("statistics must be a JSON object")),
        Err(e) => Err(invalid(format!("statistics are not JSON: {e}"))),
    }
}

#[pymethods]
impl StatsTotal {
    /// No launches yet.
    #[new]
    fn new() -> Self {
        StatsTotal::default()
    }

    /// Adds one launch's statistics (the JSON a launch returns, hidden counts included) or another total.
    fn add(&mut self, launch: &str) -> PyResult<()> {
        let launch = stats_object(launch)?;
        reconverge_records::accumulate(&mut self.total, &launch)
            .map_err(|e| ReconvergeError::new_err(format!("cannot combine the statistics: {e}")))
    }

    /// The combined statistics as JSON, without the hidden counts.
    fn json(&self) -> String {
        serde_json::Value::Object(reconverge_records::aggregate::visible(&self.total)).to_string()
    }

    /// The combined statistics as JSON, hidden counts included (a total another total can add).
    fn full_json(&self) -> String {
        serde_json::Value::Object(self.total.clone()).to_string()
    }
}

/// How the statistic at `path` (`stall_cycles.memory`) combines over launches (`Sum`, `Max`,
/// `Ratio { .. }`, ...), or `None` when no rule covers it (mechanism counters and `branches_by_pc` entries
/// follow their own rules).
#[pyfunction]
fn stat_kind(path: &str) -> Option<String> {
    reconverge_records::aggregate::kind_of(path).map(|k| format!("{k:?}"))
}

/// Checks that every key of a launch's statistics (JSON) has an aggregation rule; `ReconvergeError`
/// naming the first that has none.
#[pyfunction]
fn check_stats(json: &str) -> PyResult<()> {
    reconverge_records::aggregate::check_keys(&stats_object(json)?).map_err(|e| ReconvergeError::new_err(e.to_string()))
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
    m.add_function(wrap_pyfunction!(check_device, m)?)?;
    m.add_function(wrap_pyfunction!(stat_kind, m)?)?;
    m.add_function(wrap_pyfunction!(check_stats, m)?)?;
    m.add_function(wrap_pyfunction!(records::speedups_over_pdom, m)?)?;
    m.add_function(wrap_pyfunction!(records::speedup_summary, m)?)?;
    m.add_class::<StatsTotal>()?;
    let py = m.py();
    m.add("ReconvergeError", py.get_type::<ReconvergeError>())?;
    m.add("InvalidInput", invalid_input_type(py)?)?;
    m.add("ArgumentTypeError", argument_type_error_type(py)?)?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("LimitError", py.get_type::<LimitError>())?;
    Ok(())
}
