//! `reconverge cfg`.

use crate::{source, Failure};
use clap::{Args, ValueEnum};

/// Output formats of `cfg`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
    /// Human-readable text.
    Text,
    /// Graphviz.
    Dot,
    /// JSON.
    Json,
}

/// Arguments of `reconverge cfg`.
#[derive(Args)]
pub(crate) struct CfgArgs {
    /// The kernel file (.ptx, or .cu when NVRTC is installed).
    pub file: String,
    /// Only this function (kernel or device function).
    #[arg(long)]
    pub kernel: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Show the program as a mechanism runs it (`ssy` shows the inserted ssy/sync/pbk/brk, `forkjoin`
    /// the joins, `its` the convergence barriers bssy/bsync).
    #[arg(long, default_value = "pdom", value_parser = crate::launch_args::mechanism_values())]
    pub mechanism: String,
    /// Extra NVRTC option for .cu input (repeatable).
    #[arg(long = "nvrtc-opt")]
    pub nvrtc_opts: Vec<String>,
}

/// Runs `reconverge cfg`.
pub(crate) fn run(a: CfgArgs) -> Result<(), Failure> {
    let loaded = source::load(&a.file, &a.nvrtc_opts)?;
    let mech = crate::launch_args::mechanism(&a.mechanism)?;
    let (module, ssy) = match mech.pass() {
        Some(reconverge_mechanism::Pass::Ssy) => {
            let (m, r) = reconverge_transform::insert_ssy(&loaded.module);
            (m, Some(r))
        }
        Some(pass) => (pass.apply(&loaded.module), None),
        None => (loaded.module, None),
    };
    let only = resolve_function(&module, &a.file, a.kernel.as_deref())?;
    let report = reconverge_report::cfg_report(
        &module,
        &a.file,
        &loaded.ptx,
        only,
        ssy.as_ref().map(|r| r.functions.as_slice()),
    );
    let out = match a.format {
        Format::Text => report.render_text(),
        Format::Dot => report.render_dot(),
        Format::Json => report.render_json(),
    };
    crate::out::write(&out)
}

/// The function named `kernel` (by PTX name or demangled name) among the functions with a body of
/// `module`, or `None` for all; an error naming the candidates when it is missing or ambiguous.
pub(crate) fn resolve_function(
    module: &reconverge_ir::Module,
    file: &str,
    kernel: Option<&str>,
) -> Result<Option<reconverge_ir::FuncId>, Failure> {
    let Some(k) = kernel else { return Ok(None) };
    let with_body = || module.functions.iter().filter(|(_, f)| f.has_body).map(|(id, _)| id);
    let names = |ids: &mut dyn Iterator<Item = reconverge_ir::FuncId>| {
        ids.map(|f| reconverge_ir::names::display_name(&module.functions[f].name)).collect::<Vec<_>>().join(", ")
    };
    match reconverge_ir::names::resolve(module, with_body(), k).as_slice() {
        [one] => Ok(Some(*one)),
        [] => {
            Err(Failure::input(format!("no function named `{k}` in {file} (functions: {})", names(&mut with_body()))))
        }
        several => Err(Failure::input(format!(
            "`{k}` names several functions in {file} ({}); give the full signature or the mangled name",
            names(&mut several.iter().copied())
        ))),
    }
}
