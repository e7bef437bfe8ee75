//! A registered module: the PTX of one fat binary, parsed once, its variables placed in device memory and
//! its constant bank, and its kernels decoded (once each) for the mechanism the process runs under.

use crate::settings::Settings;
use reconverge_program::DecodeOptions;
use reconverge_sim::memory::DeviceMemory;
use reconverge_sim::Loaded;
use std::collections::HashMap;
use std::sync::Arc;

/// Where a module variable lives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VarPlace {
    /// Its PTX name.
    pub name: String,
    /// Its device address (`.global`) or its offset in the constant bank (`.const`).
    pub addr: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Whether it is in the constant bank.
    pub constant: bool,
}

/// Why a module cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ModuleError {
    /// The fat binary cannot be read, or holds no PTX the front end accepts.
    #[error(transparent)]
    Fatbin(#[from] crate::fatbin::FatbinError),
    /// The fat binary's header claims more bytes than a program can carry.
    #[error("the fat binary's header claims {0} bytes")]
    TooLarge(u64),
    /// The fat binary holds only empty headers.
    #[error("the fat binary holds no entries")]
    Empty,
    /// The fat binary's header cannot be read where the program says it is.
    #[error("the fat binary's header at {0:#x} cannot be read")]
    Unreadable(u64),
    /// The fat binary's header claims more bytes than are mapped after it: a damaged fat binary.
    #[error(
        "the fat binary's header claims {claimed} bytes, but {}: the fat binary is damaged",
        match mapped { Some(m) => format!("only {m} bytes are mapped after it"), None => "they cannot all be read".into() }
    )]
    Truncated {
        /// The bytes its header claims (header and entries).
        claimed: u64,
        /// The bytes mapped from its start to the end of the loaded segment holding it (`None`: it lies
        /// outside every loaded object and reading it failed).
        mapped: Option<u64>,
    },
    /// `RECONVERGE_PTX_DIR` cannot be written.
    #[error("RECONVERGE_PTX_DIR: cannot write {path}: {error}")]
    KeepPtx {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The PTX does not parse.
    #[error("{label}: the PTX does not parse:\n{errors}")]
    Parse {
        /// The module.
        label: String,
        /// The parser's messages.
        errors: String,
    },
    /// A kernel does not decode (an unsupported instruction, an external call).
    #[error("{label}: {error}")]
    Decode {
        /// The module.
        label: String,
        /// The decoder's message.
        error: reconverge_program::DecodeError,
    },
    /// Two modules both declare device variables (their layouts would overlap).
    #[error(
        "{label}: device variables in a second module (translation unit) are not supported: \
         `{name}` would share its address with another module's variable"
    )]
    Overlap {
        /// The module.
        label: String,
        /// The variable.
        name: String,
    },
}

/// One registered module.
pub struct ModuleImage {
    /// A name for messages and statistics: the program and the module's index, e.g. `bfs:module0.ptx`.
    pub label: String,
    /// The PTX text.
    pub ptx: String,
    /// The parsed module.
    pub ir: reconverge_ir::Module,
    /// The constant bank (module `.const` variables with their initial values).
    pub consts: Vec<u8>,
    /// Every module variable and where it lives.
    pub vars: Vec<VarPlace>,
    /// Kernels decoded so far, by PTX name.
    /// (Shared, so a launch holds its kernel without copying the program.)
    kernels: HashMap<String, Arc<Loaded>>,
}

impl ModuleImage {
    /// Parses `ptx`, places its `.global` variables (with their initial values) in `mem` and builds its
    /// constant bank. Decodes the module's first kernel to learn the layout (every kernel of a module
    /// shares it).
    pub fn new(
        label: String,
        ptx: String,
        mem: &mut DeviceMemory,
        settings: &Settings,
    ) -> Result<ModuleImage, ModuleError> {
        let ir = reconverge_ptx::parse(&ptx)
            .map_err(|e| ModuleError::Parse { label: label.clone(), errors: e.to_string() })?;
        let mut image = ModuleImage { label, ptx, ir, consts: Vec::new(), vars: Vec::new(), kernels: HashMap::new() };
        let Some(first) = image.ir.kernels().next() else { return Ok(image) };
        let name = image.ir.functions[first].name.clone();
        let prog = image.kernel(&name, settings)?.program().clone();
        for g in &prog.globals {
            let end = g.addr.saturating_add(g.size.max(1));
            if mem.allocations().iter().any(|a| a.base < end && g.addr < a.base + (a.data.len() as u64).max(1)) {
                return Err(ModuleError::Overlap { label: image.label, name: g.name.clone() });
            }
            let mut data = vec![0u8; g.size as usize];
            let n = g.init.len().min(data.len());
            data[..n].copy_from_slice(&g.init[..n]);
            mem.place(g.addr, data, g.name.clone());
            image.vars.push(VarPlace { name: g.name.clone(), addr: g.addr, size: g.size, constant: false });
        }
        image.consts = vec![0u8; prog.const_size as usize];
        for c in &prog.consts {
            let a = c.addr as usize;
            let n = c.init.len().min(image.consts.len().saturating_sub(a));
            image.consts[a..a + n].copy_from_slice(&c.init[..n]);
            image.vars.push(VarPlace { name: c.name.clone(), addr: c.addr, size: c.size, constant: true });
        }
        Ok(image)
    }

    /// The variable called `name`.
    pub fn variable(&self, name: &str) -> Option<&VarPlace> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Kernel `name` decoded for the settings' mechanism (decoded on first use, then kept).
    pub fn kernel(&mut self, name: &str, settings: &Settings) -> Result<&Arc<Loaded>, ModuleError> {
        if !self.kernels.contains_key(name) {
            let scalarize = settings.gpu.as_ref().is_some_and(|g| g.sm.dispatch.needs_scalar_plan());
            let opts = DecodeOptions {
                file: self.label.clone(),
                source: Some(self.ptx.clone()),
                scalarize,
                ..Default::default()
            };
            let loaded = reconverge_sim::load(&self.ir, Some(name), settings.mechanism, &opts)
                .map_err(|error| ModuleError::Decode { label: self.label.clone(), error })?;
            // A kernel-local `.const` variable extends the bank past the module's.
            let need = loaded.program().const_size as usize;
            if need > self.consts.len() {
                let start = self.consts.len();
                self.consts.resize(need, 0);
                for c in loaded.program().consts.iter().filter(|c| c.addr as usize >= start) {
                    let a = c.addr as usize;
                    let n = c.init.len().min(need - a);
                    self.consts[a..a + n].copy_from_slice(&c.init[..n]);
                }
            }
            self.kernels.insert(name.to_string(), Arc::new(loaded));
        }
        self.kernels.get(name).ok_or(ModuleError::Parse { label: self.label.clone(), errors: name.to_string() })
    }
}
