//! `--suite-kernel NAME` (of `run`, `trace` and `report`): a launch described by the suite's manifest
//! (`kernels/manifest.toml`: PTX, grid, block, arguments, module variables, dynamic shared memory)
//! instead of the command line; and the argument and module-variable specs of a launch either way, with
//! errors that name the flag (`--arg 2`) or the suite kernel they come from.

use crate::launch_args::LaunchArgs;
use crate::suite_cmd::{check_kernel_names, default_kernels_dir, load_manifest};
use crate::Failure;
use reconverge_program::{Arg, GlobalInit, Program};
use reconverge_suite::{ArgError, ArgSpec, KernelEntry, Loader};
use std::path::{Path, PathBuf};

/// The manifest entry of `--suite-kernel` and the directory its files are relative to.
#[derive(Clone, Debug)]
pub(crate) struct SuiteLaunch {
    /// The kernels directory.
    pub dir: PathBuf,
    /// The entry.
    pub entry: KernelEntry,
}

/// `path` relative to the working directory when it lies inside it (for messages and report headers).
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd).unwrap_or(path).display().to_string()
}

/// `X,Y,Z` as `--grid` takes it.
fn dims_text(d: [u32; 3]) -> String {
    format!("{},{},{}", d[0], d[1], d[2])
}

/// An argument error in the command line's words: `--arg 2 (n): ...`, or `--suite-kernel bfs: argument
/// 2 (n): ...` for the manifest's arguments.
pub(crate) fn arg_failure(suite: Option<&SuiteLaunch>, e: &ArgError) -> Failure {
    let text = crate::errors::render_arg(e);
    match (suite, e) {
        (Some(s), _) => Failure::input(format!("--suite-kernel {}: {text}", s.entry.name)),
        (None, ArgError::In { what, error }) if what.starts_with("argument ") => {
            Failure::input(format!("--arg {}: {}", &what["argument ".len()..], crate::errors::render_arg(error)))
        }
        (None, _) => Failure::input(format!("--arg: {text}")),
    }
}

impl LaunchArgs {
    /// The launch with `--suite-kernel` looked up in the manifest: [`LaunchArgs::file`], `--kernel`,
    /// `--grid`, `--block` and `--dynamic-shared` from its entry (clap refuses them on the command line
    /// beside it). Without `--suite-kernel`, `file` is FILE.
    pub(crate) fn resolved(&self) -> Result<LaunchArgs, Failure> {
        let mut a = self.clone();
        if a.suite.is_some() {
            return Ok(a);
        }
        let Some(name) = &self.suite_kernel else {
            a.file = self.input.clone().unwrap_or_default();
            return Ok(a);
        };
        let dir = self.kernels.clone().or_else(default_kernels_dir).ok_or_else(|| {
            Failure::input(format!("--suite-kernel {name}: cannot find kernels/manifest.toml; pass --kernels DIR"))
        })?;
        let manifest = load_manifest(&dir)?;
        check_kernel_names(&manifest, std::slice::from_ref(name))
            .map_err(|f| Failure::input(format!("--suite-kernel: {}", f.message)))?;
        let Some(entry) = manifest.kernels.into_iter().find(|e| &e.name == name) else {
            return Err(Failure::input(format!("--suite-kernel: no kernel `{name}` in the suite")));
        };
        a.file = shown(&dir.join(&entry.ptx));
        a.kernel = Some(entry.name.clone());
        a.grid = dims_text(entry.grid);
        a.block = dims_text(entry.block);
        a.dynamic_shared = entry.dynamic_shared;
        a.suite = Some(SuiteLaunch { dir, entry });
        Ok(a)
    }

    /// The argument specs: the `--arg`s, or the suite kernel's (its files relative to the kernels
    /// directory).
    pub(crate) fn arg_specs(&self) -> Result<Vec<ArgSpec>, Failure> {
        match &self.suite {
            Some(s) => {
                let base = |p: &str| shown(&s.dir.join(p));
                s.entry
                    .args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| {
                        ArgSpec::parse(&a.text()).map(|spec| spec.map_files(&base)).map_err(|e| {
                            Failure::input(format!("--suite-kernel {}: argument {i}: {}", s.entry.name, e))
                        })
                    })
                    .collect()
            }
            None => self
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    ArgSpec::parse(a)
                        .map_err(|e| Failure::input(format!("--arg {i} `{a}`: {}", crate::errors::render_arg(&e))))
                })
                .collect(),
        }
    }

    /// The launch arguments of `prog`, from [`LaunchArgs::arg_specs`], within `max_memory` bytes.
    pub(crate) fn launch_args(&self, prog: &Program, max_memory: u64) -> Result<Vec<Arg>, Failure> {
        let specs = self.arg_specs()?;
        let load = |p: &str| std::fs::read(p);
        reconverge_suite::resolve_args(prog, &specs, &load, max_memory)
            .map_err(|e| arg_failure(self.suite.as_ref(), &e))
    }

    /// The module variables to set: the suite kernel's (files relative to the kernels directory), then
    /// each `--global NAME=VALUE` (one for a variable the manifest sets replaces the manifest's).
    pub(crate) fn global_inits(&self, prog: &Program, max_memory: u64) -> Result<Vec<GlobalInit>, Failure> {
        let load: &Loader<'_> = &|p: &str| std::fs::read(p);
        let mut out: Vec<GlobalInit> = Vec::new();
        if let Some(s) = &self.suite {
            let base = |p: &str| shown(&s.dir.join(p));
            for (name, v) in &s.entry.globals {
                let bad =
                    |e: ArgError| Failure::input(format!("--suite-kernel {}: global `{name}`: {e}", s.entry.name));
                let spec = ArgSpec::parse(&v.text()).map_err(bad)?.map_files(&base);
                out.push(reconverge_suite::resolve_global(prog, name, &spec, load, max_memory).map_err(bad)?);
            }
        }
        for text in &self.globals {
            let bad = |why: String| Failure::input(format!("--global `{text}`: {why}"));
            let (name, value) = text.split_once('=').ok_or_else(|| bad("expected NAME=VALUE".into()))?;
            let spec = ArgSpec::parse(value).map_err(|e| bad(crate::errors::render_arg(&e)))?;
            let g = reconverge_suite::resolve_global(prog, name.trim(), &spec, load, max_memory)
                .map_err(|e| bad(crate::errors::render_arg(&e)))?;
            out.retain(|o| o.name != g.name);
            out.push(g);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors_name_the_flag_and_index() {
        let e = ArgError::In { what: "argument 2 (n)".into(), error: Box::new(ArgError::EmptyFile) };
        assert_eq!(arg_failure(None, &e).message, "--arg 2 (n): `@` must be followed by a .npy file name");
        assert_eq!(dims_text([200, 1, 1]), "200,1,1");
    }
}
