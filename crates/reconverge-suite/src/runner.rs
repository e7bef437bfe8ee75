//! Running one suite kernel under one mechanism and warp size, and judging the result.

use crate::error::{ArgError, Mismatch, SuiteError};
use crate::{args, manifest::KernelEntry, npy, Loader};
use reconverge_mechanism::Mechanism;
use reconverge_program::{Buffer, DecodeOptions, LaunchConfig};
use reconverge_sim::{run, Loaded, NoObserver, RunResult};

/// How a run compares with the manifest.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Outcome and buffers as expected.
    Pass,
    /// The outcome differs from the expected one.
    WrongOutcome {
        /// Expected.
        expected: String,
        /// Got, with the error message if any.
        got: String,
    },
    /// A buffer differs from its expected contents.
    Mismatch(String),
    /// The kernel could not be loaded or launched.
    Broken(String),
}

impl Verdict {
    /// Whether the run is as expected.
    pub fn ok(&self) -> bool {
        *self == Verdict::Pass
    }
}

/// Functional simulation only, or the timing model on a GPU configuration.
#[derive(Clone, Copy, Debug)]
pub enum Mode<'a> {
    /// The functional machine (no cycles).
    Functional,
    /// The timing model.
    Timed {
        /// The GPU.
        gpu: &'a reconverge_timing::GpuConfig,
        /// Host threads for SMs (results do not depend on it).
        threads: usize,
    },
}

/// The result of one suite run.
#[derive(Clone, Debug)]
pub struct EntryOutcome {
    /// The kernel.
    pub kernel: String,
    /// The mechanism.
    pub mechanism: Mechanism,
    /// The warp size.
    pub warp_size: u32,
    /// The judgement.
    pub verdict: Verdict,
    /// The run (absent when the kernel could not be loaded).
    pub result: Option<RunResult>,
    /// Timing statistics (timed runs).
    pub timing: Option<reconverge_timing::TimingStats>,
}

/// Compares `got` with `want` element by element; describes the first difference.
pub fn compare(arg: usize, got: &Buffer, want: &Buffer) -> Result<(), Mismatch> {
    compare_named(&format!("argument {arg}"), got, want)
}

/// [`compare`] for any named buffer.
pub fn compare_named(what: &str, got: &Buffer, want: &Buffer) -> Result<(), Mismatch> {
    if got.dtype != want.dtype || got.len() != want.len() {
        let what = what.to_string();
        let (want_len, want_dtype, got_len, got_dtype) = (want.len(), want.dtype, got.len(), got.dtype);
        return Err(Mismatch::Shape { what, want_len, want_dtype, got_len, got_dtype });
    }
    let size = got.dtype.size();
    if let Some(i) =
        (0..got.len()).find(|&i| got.bytes[i * size..(i + 1) * size] != want.bytes[i * size..(i + 1) * size])
    {
        let n = (0..got.len())
            .filter(|&j| got.bytes[j * size..(j + 1) * size] != want.bytes[j * size..(j + 1) * size])
            .count();
        let (what, len, want, got) = (what.to_string(), got.len(), want.format(i), got.format(i));
        return Err(Mismatch::Values { what, differ: n, len, first: i, want, got });
    }
    Ok(())
}

/// A buffer a run returns: argument `arg`'s own buffer, or the buffer its struct's pointer field `field`
/// points into (`2` or `1.3` in the manifest's `expected` and `--dump`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputKey {
    /// The argument.
    pub arg: usize,
    /// The struct field, for a struct argument.
    pub field: Option<usize>,
}

impl OutputKey {
    /// Parses `ARG` or `ARG.FIELD`.
    pub fn parse(text: &str) -> Option<OutputKey> {
        let (a, f) = match text.split_once('.') {
            Some((a, f)) => (a, Some(f.trim().parse().ok()?)),
            None => (text, None),
        };
        Some(OutputKey { arg: a.trim().parse().ok()?, field: f })
    }

    /// The buffer among a run's argument buffers and struct-field buffers.
    pub fn find<'r>(
        &self,
        buffers: &'r [Option<Buffer>],
        fields: &'r [reconverge_program::FieldBuffer],
    ) -> Option<&'r Buffer> {
        match self.field {
            None => buffers.get(self.arg)?.as_ref(),
            Some(f) => fields.iter().find(|b| b.arg == self.arg && b.field == f).map(|b| &b.buffer),
        }
    }
}

impl std::fmt::Display for OutputKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            None => write!(f, "argument {}", self.arg),
            Some(k) => write!(f, "argument {} field {k}", self.arg),
        }
    }
}

/// A suite entry loaded and ready to launch.
#[derive(Clone, Debug)]
pub struct PreparedEntry {
    /// The decoded program with the mechanism the entry was prepared for.
    pub kernel: Loaded,
    /// The launch.
    pub cfg: LaunchConfig,
    /// The arguments.
    pub args: Vec<reconverge_program::Arg>,
}

/// Loads, decodes and resolves the arguments of `entry` for `mechanism` at `warp_size`.
pub fn prepare_entry(
    entry: &KernelEntry,
    mechanism: Mechanism,
    warp_size: u32,
    load: &Loader<'_>,
    max_instructions: u64,
) -> Result<PreparedEntry, SuiteError> {
    prepare_entry_with(entry, mechanism, warp_size, load, max_instructions, false)
}

/// [`prepare_entry`], with seed 004's scalarization plan attached when `scalarize` is set (the run then
/// counts the scalarization metrics).
pub fn prepare_entry_with(
    entry: &KernelEntry,
    mechanism: Mechanism,
    warp_size: u32,
    load: &Loader<'_>,
    max_instructions: u64,
    scalarize: bool,
) -> Result<PreparedEntry, SuiteError> {
    let bytes = load(&entry.ptx).map_err(|error| SuiteError::Read { file: entry.ptx.clone(), error })?;
    let ptx = String::from_utf8(bytes).map_err(|_| SuiteError::NotText(entry.ptx.clone()))?;
    let module = reconverge_ptx::parse(&ptx).map_err(|e| {
        SuiteError::Parse(reconverge_ptx::SourceError::new(entry.ptx.clone(), ptx.clone(), e).render_plain())
    })?;
    let opts = DecodeOptions { file: entry.ptx.clone(), source: Some(ptx.clone()), scalarize, ..Default::default() };
    let kernel = reconverge_sim::load(&module, Some(&entry.name), mechanism, &opts)
        .map_err(|error| SuiteError::Decode { file: entry.ptx.clone(), error })?;
    let specs: Vec<args::ArgSpec> =
        entry.args.iter().map(|a| args::ArgSpec::parse(&a.text())).collect::<Result<_, ArgError>>()?;
    let max = reconverge_program::launch::DEFAULT_MAX_MEMORY;
    let launch_args = args::resolve_args(kernel.program(), &specs, load, max)?;
    let globals = entry
        .globals
        .iter()
        .map(|(name, v)| {
            args::ArgSpec::parse(&v.text())
                .and_then(|spec| args::resolve_global(kernel.program(), name, &spec, load, max))
                .map_err(|error| SuiteError::Global { name: name.clone(), error })
        })
        .collect::<Result<Vec<_>, SuiteError>>()?;
    let cfg = LaunchConfig {
        globals,
        dump_globals: entry.expected_globals.keys().cloned().collect(),
        grid: entry.grid,
        block: entry.block,
        warp_size,
        dynamic_shared: entry.dynamic_shared,
        limits: reconverge_program::RunLimits {
            max_instructions: reconverge_program::launch::instruction_limit(max_instructions),
            ..Default::default()
        },
        ..LaunchConfig::default()
    };
    Ok(PreparedEntry { kernel, cfg, args: launch_args })
}

/// Runs a prepared entry (under the mechanism it was prepared for) functionally or under the timing model.
pub fn run_prepared(p: &PreparedEntry, mode: Mode<'_>) -> (RunResult, Option<reconverge_timing::TimingStats>) {
    match mode {
        Mode::Functional => (run(&p.kernel, &p.cfg, &p.args, &mut NoObserver), None),
        Mode::Timed { gpu, threads } => {
            let opts = reconverge_timing::TimedOptions { max_cycles: None, threads, sample: None };
            let t = reconverge_timing::run_timed(&p.kernel, &p.cfg, gpu, &p.args, opts);
            (t.run, Some(t.timing))
        }
    }
}

/// Judges a run of `entry` under `mechanism` against the manifest (expected outcome and buffers).
pub fn judge(entry: &KernelEntry, mechanism: Mechanism, result: &RunResult, load: &Loader<'_>) -> Verdict {
    let expected = entry.expected_outcome(mechanism.name());
    if !entry.accepts_outcome(mechanism.name(), result.outcome()) {
        return Verdict::WrongOutcome {
            expected: expected.to_string(),
            got: match &result.error {
                Some(e) => format!("{}: {e}", result.outcome()),
                None => result.outcome().to_string(),
            },
        };
    }
    if result.error.is_some() {
        return Verdict::Pass;
    }
    for (k, file) in &entry.expected {
        let Some(key) = OutputKey::parse(k) else {
            return Verdict::Broken(format!("expected key `{k}` is not an argument index (or ARG.FIELD)"));
        };
        let want = match load(file) {
            Ok(b) => match npy::read(&b) {
                Ok(b) => b,
                Err(e) => return Verdict::Broken(format!("{file}: {e}")),
            },
            Err(e) => return Verdict::Broken(format!("cannot read `{file}`: {e}")),
        };
        match key.find(&result.buffers, &result.fields) {
            Some(got) => {
                if let Err(e) = compare_named(&key.to_string(), got, &want) {
                    return Verdict::Mismatch(e.to_string());
                }
            }
            None => return Verdict::Broken(format!("{key} is not a buffer")),
        }
    }
    for (name, file) in &entry.expected_globals {
        let want = match load(file) {
            Ok(b) => match npy::read(&b) {
                Ok(b) => b,
                Err(e) => return Verdict::Broken(format!("{file}: {e}")),
            },
            Err(e) => return Verdict::Broken(format!("cannot read `{file}`: {e}")),
        };
        match result.globals.iter().find(|(n, _)| n == name) {
            Some((_, got)) => {
                if let Err(e) = compare_named(&format!("global `{name}`"), got, &want) {
                    return Verdict::Mismatch(e.to_string());
                }
            }
            None => return Verdict::Broken(format!("global `{name}` was not read back")),
        }
    }
    Verdict::Pass
}

/// Runs `entry` (files read through `load`, relative to the kernels directory); with `scalarize` (or on a
/// temporal-SIMT GPU, which needs it) the run counts seed 004's scalarization metrics.
pub fn run_entry(
    entry: &KernelEntry,
    mechanism: Mechanism,
    warp_size: u32,
    load: &Loader<'_>,
    max_instructions: u64,
    mode: Mode<'_>,
    scalarize: bool,
) -> EntryOutcome {
    let scalarize = scalarize || matches!(mode, Mode::Timed { gpu, .. } if gpu.sm.dispatch.needs_scalar_plan());
    let p = match prepare_entry_with(entry, mechanism, warp_size, load, max_instructions, scalarize) {
        Ok(p) => p,
        Err(why) => {
            return EntryOutcome {
                kernel: entry.name.clone(),
                mechanism,
                warp_size,
                verdict: Verdict::Broken(why.to_string()),
                result: None,
                timing: None,
            }
        }
    };
    let (result, timing) = run_prepared(&p, mode);
    let verdict = judge(entry, mechanism, &result, load);
    EntryOutcome { kernel: entry.name.clone(), mechanism, warp_size, verdict, result: Some(result), timing }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_keys_name_an_argument_or_a_struct_field() {
        assert_eq!(OutputKey::parse("4"), Some(OutputKey { arg: 4, field: None }));
        assert_eq!(OutputKey::parse("1.3"), Some(OutputKey { arg: 1, field: Some(3) }));
        assert_eq!(OutputKey::parse("x"), None);
        assert_eq!(OutputKey::parse("1."), None);
        let b = Buffer::zeros(reconverge_program::Dtype::U8, 2);
        let fields = [reconverge_program::FieldBuffer { arg: 1, field: 3, buffer: b.clone() }];
        let buffers = [None, None, Some(b.clone())];
        assert_eq!(OutputKey::parse("1.3").unwrap().find(&buffers, &fields), Some(&b));
        assert_eq!(OutputKey::parse("2").unwrap().find(&buffers, &fields), Some(&b));
        assert_eq!(OutputKey::parse("1").unwrap().find(&buffers, &fields), None);
        assert_eq!(OutputKey::parse("1.3").unwrap().to_string(), "argument 1 field 3");
    }
}
