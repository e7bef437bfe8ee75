//! Simulation errors in the command line's words: the library's messages name the setting at fault
//! (`the instruction limit of N warp instructions`, `module variable `x` (to set)`); here they name the
//! flag that sets it (`--max-instructions N`, `--global x`).

use reconverge_program::{LaunchError, VariableUse};
use reconverge_sim::{RunLimit, SimError};
use reconverge_suite::ArgError;

/// The flag that names a module variable for `purpose`.
fn variable_flag(purpose: VariableUse) -> &'static str {
    match purpose {
        VariableUse::Set => "--global",
        VariableUse::Dump => "--dump-global",
    }
}

/// A launch error as the command line reports it.
fn launch(e: &LaunchError) -> String {
    match e {
        LaunchError::UnknownVariable { name, purpose, known } => format!(
            "{} {name}: the module has no .global or .const variable of that name (variables: {})",
            variable_flag(*purpose),
            if known.is_empty() { "none".to_string() } else { known.join(", ") }
        ),
        LaunchError::AmbiguousVariable { name, purpose } => {
            format!("{} {name}: the name matches several variables; use the PTX name", variable_flag(*purpose))
        }
        LaunchError::NumberForLargeVariable { name, size } => {
            format!("--global {name}: a number cannot fill a {size}-byte variable (use @FILE.npy)")
        }
        LaunchError::BufferTooLargeForVariable { name, bytes, size } => {
            format!("--global {name}: {bytes} bytes do not fit the {size}-byte variable")
        }
        LaunchError::MemoryLimit { .. } => format!("{e} (raise it with --max-memory)"),
        _ => e.to_string(),
    }
}

/// An argument error as the command line reports it: a buffer over the memory limit says how to raise it.
pub(crate) fn render_arg(e: &ArgError) -> String {
    match e.root() {
        ArgError::MemoryLimit { .. } => format!("{e} (raise it with --max-memory)"),
        _ => e.to_string(),
    }
}

/// `e` as the command line prints it (after `error: `).
pub(crate) fn render(e: &SimError) -> String {
    match e {
        SimError::Launch(l) => format!("invalid launch: {}", launch(l)),
        SimError::Limit(RunLimit::Instructions(n)) => {
            format!("limit reached: --max-instructions {n} warp instructions")
        }
        SimError::Limit(RunLimit::Cycles(n)) => format!("limit reached: --max-cycles {n}"),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_flags_that_set_them() {
        let e = SimError::Launch(LaunchError::UnknownVariable {
            name: "nope".into(),
            purpose: VariableUse::Dump,
            known: vec!["g_in".into()],
        });
        assert_eq!(
            render(&e),
            "invalid launch: --dump-global nope: the module has no .global or .const variable of that name (variables: g_in)"
        );
        assert_eq!(render(&SimError::Limit(RunLimit::Cycles(7))), "limit reached: --max-cycles 7");
        let m = SimError::Launch(LaunchError::MemoryLimit { total: 9, parts: vec![("buffers", 9)], limit: 8 });
        assert!(render(&m).ends_with("(raise it with --max-memory)"), "{}", render(&m));
        // The library's own message names no flag.
        assert!(!e.to_string().contains("--"), "{e}");
    }
}
