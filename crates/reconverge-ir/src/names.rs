//! Symbol names: NVRTC and nvcc mangle C++ kernel names (`_Z7Kernel2PbS_S_S_i`); users know them as
//! `Kernel2` or `Kernel2(bool*, bool*, bool*, bool*, int)`. These helpers demangle names and decide which
//! functions a name a user typed refers to.

use crate::{FuncId, Module};

/// The demangled form of an Itanium-mangled name (`Kernel2(bool*, bool*, bool*, bool*, int)`), or `None`
/// when `name` is not mangled.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let sym = cpp_demangle::Symbol::new(name).ok()?;
    sym.demangle(&cpp_demangle::DemangleOptions::new()).ok()
}

/// The name without its parameter list: `ns::Kernel2` for `ns::Kernel2(bool*, int)`; templates keep
/// their arguments (`k<int>`).
pub fn base_name(demangled: &str) -> &str {
    // The parameter list is the last top-level parenthesised group.
    let mut depth = 0i32;
    let mut cut = None;
    for (i, c) in demangled.char_indices() {
        match c {
            '<' | '(' => {
                if c == '(' && depth == 0 {
                    cut = Some(i);
                }
                depth += 1;
            }
            '>' | ')' => depth -= 1,
            _ => {}
        }
    }
    cut.map(|i| &demangled[..i]).unwrap_or(demangled).trim()
}

/// Whether `query` names the function called `name` (mangled or not): its exact name, its demangled
/// signature, or its demangled name without parameters (with or without namespaces).
pub fn matches(query: &str, name: &str) -> bool {
    if query == name {
        return true;
    }
    let Some(d) = demangle(name) else { return false };
    let q = query.replace(' ', "");
    if d.replace(' ', "") == q {
        return true;
    }
    let base = base_name(&d);
    base == query || base.rsplit("::").next() == Some(query)
}

/// A short name for tables: the demangled name without its parameters (`Fan2` for `_Z4Fan2PfS_S_iii`),
/// or the name itself when it is not mangled.
pub fn short_name(name: &str) -> String {
    match demangle(name) {
        Some(d) => base_name(&d).to_string(),
        None => name.to_string(),
    }
}

/// How a function is shown in lists: `name` or `mangled (demangled)`.
pub fn display_name(name: &str) -> String {
    match demangle(name) {
        Some(d) => format!("{name} ({d})"),
        None => name.to_string(),
    }
}

/// The functions among `candidates` of `module` that `query` names (several when it is ambiguous).
pub fn resolve(module: &Module, candidates: impl Iterator<Item = FuncId>, query: &str) -> Vec<FuncId> {
    let all: Vec<FuncId> = candidates.collect();
    if let Some(&exact) = all.iter().find(|&&f| module.functions[f].name == query) {
        return vec![exact];
    }
    all.into_iter().filter(|&f| matches(query, &module.functions[f].name)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_and_matches_kernel_names() {
        let m = "_Z7Kernel2PbS_S_S_i";
        assert_eq!(demangle(m).as_deref(), Some("Kernel2(bool*, bool*, bool*, bool*, int)"));
        assert!(matches("Kernel2", m));
        assert!(matches("Kernel2(bool*, bool*, bool*, bool*, int)", m));
        assert!(matches("Kernel2(bool*,bool*,bool*,bool*,int)", m));
        assert!(!matches("Kernel", m));
        assert!(!matches("Kernel2(int)", m));
        assert_eq!(demangle("plain"), None);
        assert!(matches("plain", "plain"));
        let ns = "_ZN2ns6kernelEPf";
        assert_eq!(demangle(ns).as_deref(), Some("ns::kernel(float*)"));
        assert!(matches("kernel", ns) && matches("ns::kernel", ns));
        assert_eq!(base_name("k<int>(int*)"), "k<int>");
        assert_eq!(display_name(m), "_Z7Kernel2PbS_S_S_i (Kernel2(bool*, bool*, bool*, bool*, int))");
    }
}
