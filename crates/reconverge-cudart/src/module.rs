//! A registered module: the PTX of one fat binary, parsed once, its variables placed in device memory and
//! its constant bank, and its kernels decoded (once each) for the mechanism the process runs under.

use crate::settings::Settings;
use reconverge_program::layout::{align_up, GLOBAL_BASE};
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
    /// A kernel does not decode (an unsupported instruction, an external call).
    #[error("{label}: {error}")]
    Decode {
        /// The module.
        label: String,
        /// The decoder's message.
        error: reconverge_program::DecodeError,
    },
    /// The module's variables need more memory than the memory limit leaves, or than the host can give.
    #[error(
        "{label}: its variables need {need} bytes ({why}; raise the limit with --max-memory or RECONVERGE_MAX_MEMORY)"
    )]
    Memory {
        /// The module.
        label: String,
        /// The bytes its `.global` variables and constant bank need.
        need: u64,
        /// Why they cannot be had.
        why: String,
    },
    /// A variable would share addresses with device memory already placed (a module's variables are placed
    /// after everything placed before it, so this does not happen; kept as a check).
    #[error("{label}: `{name}` would share its addresses with device memory already placed")]
    Overlap {
        /// The module.
        label: String,
        /// The variable.
        name: String,
    },
}

/// `len` zero bytes, or [`reconverge_program::OutOfMemory`] when the host cannot give them (never an abort).
fn try_zeros(len: u64, what: impl FnOnce() -> String) -> Result<Vec<u8>, reconverge_program::OutOfMemory> {
    match usize::try_from(len) {
        Ok(n) => reconverge_program::error::try_zeros(n, what),
        Err(_) => Err(reconverge_program::OutOfMemory { what: what(), bytes: len }),
    }
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
    /// Kernels whose registers ptxas was asked for ([`ModuleImage::launch_kernel`]).
    asked_ptxas: std::collections::HashSet<String>,
    /// Where its `.global` variables start ([`DecodeOptions::global_base`]; every kernel is decoded with it).
    global_base: Option<u64>,
}

impl ModuleImage {
    /// The module of `ptx`, parsed as `ir`: places its `.global` variables (with their initial values) in
    /// `mem` and builds its constant bank, in at most `budget` bytes (what the memory limit leaves).
    /// Decodes the module's first kernel to learn the layout (every kernel of a module shares it).
    ///
    /// The first module's variables start at [`GLOBAL_BASE`], as `reconverge run` places a module's; a
    /// further module's (another translation unit of the program, or a library's) start after everything
    /// `mem` holds by then (the earlier modules' variables and any allocation), so that no two share an
    /// address.
    pub fn new(
        label: String,
        ptx: String,
        ir: reconverge_ir::Module,
        mem: &mut DeviceMemory,
        settings: &Settings,
        budget: u64,
    ) -> Result<ModuleImage, ModuleError> {
        let mut image = ModuleImage {
            label,
            ptx,
            ir,
            consts: Vec::new(),
            vars: Vec::new(),
            kernels: HashMap::new(),
            asked_ptxas: Default::default(),
            global_base: (mem.end() > GLOBAL_BASE).then(|| align_up(mem.end(), 256)),
        };
        let Some(first) = image.ir.kernels().next() else { return Ok(image) };
        let name = image.ir.functions[first].name.clone();
        let prog = image.kernel(&name, settings)?.program().clone();
        let need = prog.globals.iter().map(|g| g.size).fold(prog.const_size, u64::saturating_add);
        if need > budget {
            let why = format!("the memory limit leaves {budget}");
            return Err(ModuleError::Memory { label: image.label, need, why });
        }
        let memory = |label: &str, e: reconverge_program::OutOfMemory| ModuleError::Memory {
            label: label.to_string(),
            need,
            why: format!("the host cannot give {} bytes for {}", e.bytes, e.what),
        };
        for g in &prog.globals {
            let end = g.addr.saturating_add(g.size.max(1));
            if mem.allocations().iter().any(|a| a.base < end && g.addr < a.base + (a.data.len() as u64).max(1)) {
                return Err(ModuleError::Overlap { label: image.label, name: g.name.clone() });
            }
            let mut data = try_zeros(g.size, || format!("`{}`", g.name)).map_err(|e| memory(&image.label, e))?;
            let n = g.init.len().min(data.len());
            data[..n].copy_from_slice(&g.init[..n]);
            mem.place(g.addr, data, g.name.clone());
            image.vars.push(VarPlace { name: g.name.clone(), addr: g.addr, size: g.size, constant: false });
        }
        image.consts =
            try_zeros(prog.const_size, || "the constant bank".into()).map_err(|e| memory(&image.label, e))?;
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
        let slot = match self.kernels.entry(name.to_string()) {
            std::collections::hash_map::Entry::Occupied(e) => return Ok(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(v) => v,
        };
        let scalarize = settings.gpu.as_ref().is_some_and(|g| g.sm.dispatch.needs_scalar_plan());
        let opts = DecodeOptions {
            file: self.label.clone(),
            source: Some(self.ptx.clone()),
            scalarize,
            global_base: self.global_base,
            ..Default::default()
        };
        let loaded = reconverge_sim::load(&self.ir, Some(name), settings.mechanism, &opts)
            .map_err(|error| ModuleError::Decode { label: self.label.clone(), error })?;
        // A kernel-local `.const` variable extends the bank past the module's.
        let need = loaded.program().const_size as usize;
        if need > self.consts.len() {
            let start = self.consts.len();
            self.consts.try_reserve_exact(need - start).map_err(|_| ModuleError::Memory {
                label: self.label.clone(),
                need: need as u64,
                why: "the host cannot give the constant bank".into(),
            })?;
            self.consts.resize(need, 0);
            for c in loaded.program().consts.iter().filter(|c| c.addr as usize >= start) {
                let a = c.addr as usize;
                let n = c.init.len().min(need - a);
                self.consts[a..a + n].copy_from_slice(&c.init[..n]);
            }
        }
        Ok(slot.insert(Arc::new(loaded)))
    }

    /// [`ModuleImage::kernel`] for a launch: under the timing model, with the registers `ptxas -v`
    /// allocates for it (asked at its first timed launch, never while the program registers its device
    /// code before `main`, whose heap a child process would disturb).
    pub fn launch_kernel(&mut self, name: &str, settings: &Settings) -> Result<&Arc<Loaded>, ModuleError> {
        let loaded = Arc::clone(self.kernel(name, settings)?);
        if settings.gpu.is_some() && self.asked_ptxas.insert(name.to_string()) {
            let registers = reconverge_nvrtc::ptxas::kernel_registers(&self.ptx, name);
            let with = Arc::new((*loaded).clone().with_allocated_registers(registers));
            self.kernels.insert(name.to_string(), with);
        }
        self.kernel(name, settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A module whose variables need more than the memory limit leaves is refused by name, before any of
    /// them is allocated (a `__device__` array of a terabyte aborted the process on allocation).
    #[test]
    fn variables_beyond_the_memory_budget_are_refused_before_allocation() {
        let settings = Settings::from_vars(|_| None).expect("default settings");
        let ptx = |decl: &str| {
            format!(".version 8.0\n.target sm_80\n.address_size 64\n{decl}\n.visible .entry k()\n{{\nret;\n}}\n")
        };
        let mut mem = DeviceMemory::new();
        let new = |label: &str, ptx: String, mem: &mut DeviceMemory, budget: u64| {
            let ir = reconverge_ptx::parse(&ptx).expect("parses");
            ModuleImage::new(label.into(), ptx, ir, mem, &settings, budget)
        };
        let big = new("big.ptx", ptx(".global .b8 g[1099511627776];"), &mut mem, 1 << 30);
        let Err(e) = big else { panic!("a terabyte variable under a 1 GiB budget was accepted") };
        assert!(matches!(e, ModuleError::Memory { need: 1_099_511_627_776, .. }), "{e}");
        assert!(e.to_string().contains("big.ptx: its variables need 1099511627776 bytes"), "{e}");
        assert!(mem.allocations().is_empty(), "nothing was placed");
        let consts = new("c.ptx", ptx(".const .b8 c[4096];"), &mut mem, 4095);
        assert!(matches!(consts, Err(ModuleError::Memory { need: 4096, .. })));
        let fits = new("ok.ptx", ptx(".global .b8 g[64];\n.const .b8 c[32];"), &mut mem, 96);
        let image = fits.expect("96 bytes fit a 96-byte budget");
        assert_eq!((image.consts.len(), mem.allocations().len()), (32, 1));
        // Larger than any space can hold: the decoder's error, not an overflow.
        let huge = new("h.ptx", ptx(".global .b8 g[18446744073709551615];"), &mut mem, u64::MAX);
        assert!(matches!(huge, Err(ModuleError::Decode { .. })), "{:?}", huge.err().map(|e| e.to_string()));
    }

    /// Device variables in several modules (translation units: Rodinia hybridsort's three `.cu` files)
    /// were refused as overlapping, every module's starting at `GLOBAL_BASE`: each further module's are
    /// placed after everything placed before it, in the kernels decoded later too, and the first module's
    /// where they always were.
    #[test]
    fn variables_of_several_modules_get_addresses_of_their_own() {
        let settings = Settings::from_vars(|_| None).expect("default settings");
        let ptx = |var: &str, kernels: &str| {
            format!(
                ".version 8.0\n.target sm_80\n.address_size 64\n.global .align 4 .u32 {var};\n\
                 .global .align 8 .b8 {var}_table[4096];\n{kernels}"
            )
        };
        let kernel = |name: &str, var: &str| {
            format!(
                ".visible .entry {name}(.param .u64 p)\n{{\n.reg .b64 %rd<3>;\n.reg .b32 %r<2>;\n\
                 ld.param.u64 %rd1, [p];\nld.global.u32 %r1, [{var}];\ncvta.to.global.u64 %rd2, %rd1;\n\
                 st.global.u32 [%rd2], %r1;\nret;\n}}\n"
            )
        };
        let mut mem = DeviceMemory::new();
        let load = |var: &str, kernels: String, mem: &mut DeviceMemory| {
            let text = ptx(var, &kernels);
            let ir = reconverge_ptx::parse(&text).expect("parses");
            ModuleImage::new(format!("{var}.ptx"), text, ir, mem, &settings, u64::MAX).expect("loads")
        };
        let first = load("a", kernel("ka", "a"), &mut mem);
        let alone = {
            let mut fresh = DeviceMemory::new();
            load("a", kernel("ka", "a"), &mut fresh).vars
        };
        assert_eq!(first.vars, alone, "the first module's variables are placed as a lone module's");
        let a = first.variable("a").expect("a").addr;
        let (expected, _) = reconverge_program::layout::place_allocation(GLOBAL_BASE, 4, 4);
        assert_eq!(a, expected, "the first module's variables start at GLOBAL_BASE");
        let end_a = mem.end();
        let mut second = load("b", kernel("kb1", "b") + &kernel("kb2", "b"), &mut mem);
        let buf = mem.alloc(vec![0; 64], "cudaMalloc(64)");
        let mut third = load("c", kernel("kc", "c"), &mut mem);
        let all: Vec<&VarPlace> = first.vars.iter().chain(&second.vars).chain(&third.vars).collect();
        for (i, v) in all.iter().enumerate() {
            for w in &all[i + 1..] {
                assert!(v.addr + v.size <= w.addr || w.addr + w.size <= v.addr, "{v:?} overlaps {w:?}");
            }
        }
        let b = second.variable("b").expect("b").addr;
        assert!(b >= end_a, "the second module's variables follow the first's: {b:#x} < {end_a:#x}");
        assert!(third.variable("c").expect("c").addr > buf, "and a module registered late follows the allocations");
        // A kernel decoded later reads the variable where the module placed it.
        for (image, name, var) in [(&mut second, "kb2", "b"), (&mut third, "kc", "c")] {
            let at = image.variable(var).expect("placed").addr;
            let prog = image.kernel(name, &settings).expect("decodes").program().clone();
            assert_eq!(prog.globals.iter().find(|g| g.name == var).map(|g| g.addr), Some(at), "{name}");
        }
        assert_eq!(mem.allocations().len(), 7, "six variables and the buffer, none refused as overlapping");
    }
}
