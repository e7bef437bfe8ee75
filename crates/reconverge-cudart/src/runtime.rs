//! The runtime's state, in safe Rust: registered modules, kernels and variables, device memory, the
//! launch configurations pushed by `<<<...>>>`, streams, events and the error state. The `extern "C"`
//! entry points ([`crate::api`]) turn raw pointers into calls of these methods.

use crate::error::{self as cuda, CudaError};
use crate::managed::ManagedRegion;
use crate::module::ModuleImage;
use crate::settings::Settings;
use reconverge_sim::memory::DeviceMemory;
use std::collections::HashMap;

/// A kernel registered by `__cudaRegisterFunction`: its module and PTX name.
#[derive(Clone, Debug)]
pub struct KernelRef {
    /// Index of its module in [`Runtime::modules`].
    pub module: usize,
    /// Its PTX (mangled) name.
    pub name: String,
}

/// A `__device__`, `__constant__` or `__managed__` variable registered by the host program.
#[derive(Clone, Debug)]
pub struct VariableRef {
    /// Index of its module.
    pub module: usize,
    /// Its PTX name.
    pub name: String,
    /// Its size in bytes, as the host program registered it.
    pub size: u64,
    /// For a `__managed__` variable: the host address of its host-visible copy.
    pub managed: Option<u64>,
}

/// `<<<grid, block, shared, stream>>>`, pushed before a launch and popped by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallConfig {
    /// Grid size.
    pub grid: [u32; 3],
    /// Block size.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u64,
    /// The stream (an opaque handle; 0 is the default stream).
    pub stream: u64,
}

/// Which way `cudaMemcpy` copies (`cudaMemcpyKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyKind {
    /// Host to host.
    HostToHost,
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// Device to device.
    DeviceToDevice,
    /// Inferred from the pointers (unified addressing).
    Default,
}

impl CopyKind {
    /// The kind `cudaMemcpyKind` value `k` names.
    pub fn from_raw(k: i32) -> Option<CopyKind> {
        Some(match k {
            0 => CopyKind::HostToHost,
            1 => CopyKind::HostToDevice,
            2 => CopyKind::DeviceToHost,
            3 => CopyKind::DeviceToDevice,
            4 => CopyKind::Default,
            _ => return None,
        })
    }
}

/// The longest variable name a symbol argument may point at (CUDA before 5.0 took names).
pub const MAX_SYMBOL_NAME: usize = 256;

/// Everything the runtime keeps for the process.
pub struct Runtime {
    /// The settings read at start.
    pub settings: Settings,
    /// Registered modules (one per fat binary), in registration order.
    pub modules: Vec<ModuleImage>,
    /// Kernels by the address of their host stub.
    pub kernels: HashMap<u64, KernelRef>,
    /// Variables by the address of their host shadow.
    pub variables: HashMap<u64, VariableRef>,
    /// Simulated device memory: module variables and `cudaMalloc` allocations.
    pub mem: DeviceMemory,
    /// `cudaMallocManaged` allocations and `__managed__` variables' host copies.
    pub managed: ManagedRegion,
    /// Launch configurations pushed and not yet popped.
    pub configs: Vec<CallConfig>,
    /// The error `cudaGetLastError` returns (and clears, unless sticky).
    pub last_error: CudaError,
    /// A sticky error: every later call returns it.
    pub sticky: CudaError,
    /// A kernel's fault not yet reported: launches are asynchronous in CUDA, so the fault surfaces at the
    /// next call that synchronises or enqueues work (it then becomes sticky), not at the launch itself.
    pub pending: CudaError,
    /// Simulated time since start, nanoseconds: the launches' cycles at the configuration's clock.
    pub clock_ns: f64,
    /// Events: the simulated time each was last recorded at (`None`: never recorded).
    pub events: HashMap<u64, Option<f64>>,
    /// Streams created and not destroyed.
    pub streams: Vec<u64>,
    /// The next handle for a stream or event.
    pub next_handle: u64,
    /// Launches so far.
    pub launches: u64,
    /// The device `cudaSetDevice` chose (always 0: one simulated GPU).
    pub device: i32,
    /// Page-locked host memory (`cudaMallocHost`, `cudaHostAlloc`, `cudaHostRegister`), which the device
    /// reads and writes ([`crate::pinned`]).
    pub pinned: crate::pinned::Pinned,
    /// Graphs, their nodes and executable graphs, and stream captures ([`crate::graph`]).
    pub graphs: crate::graph::Graphs,
    /// The kernels (module index, PTX name) whose map was sent to `reconverge exec --html`
    /// ([`crate::settings::Message::Kernel`]): each is sent once per process.
    pub kernel_maps_sent: std::collections::BTreeSet<(usize, String)>,
    /// Dynamic shared memory a kernel (by host stub) opted in to with `cudaFuncSetAttribute`
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`), in bytes.
    pub max_dynamic_shared: HashMap<u64, u64>,
    /// CUDA arrays not yet freed, by handle (the device address of their storage).
    pub arrays: HashMap<u64, crate::array::CudaArray>,
    /// Texture and surface objects not yet destroyed, by handle (the device address of their descriptor).
    pub objects: HashMap<u64, crate::texture::Object>,
    /// The clusters of the launches so far, under [`Settings::sample`] ([`crate::sample`]).
    pub sampler: reconverge_records::sampling::Sampler,
}

impl Runtime {
    /// A runtime with nothing registered.
    pub fn new(settings: Settings) -> Runtime {
        Runtime {
            settings,
            modules: Vec::new(),
            kernels: HashMap::new(),
            variables: HashMap::new(),
            mem: DeviceMemory::new(),
            managed: ManagedRegion::default(),
            configs: Vec::new(),
            last_error: cuda::SUCCESS,
            sticky: cuda::SUCCESS,
            pending: cuda::SUCCESS,
            clock_ns: 0.0,
            events: HashMap::new(),
            streams: Vec::new(),
            next_handle: 0x1000,
            launches: 0,
            device: 0,
            pinned: crate::pinned::Pinned::default(),
            graphs: crate::graph::Graphs::default(),
            kernel_maps_sent: std::collections::BTreeSet::new(),
            max_dynamic_shared: HashMap::new(),
            arrays: HashMap::new(),
            objects: HashMap::new(),
            sampler: reconverge_records::sampling::Sampler::new(),
        }
    }

    /// Records `code` as the last error (and as sticky when it is) and returns it.
    pub fn fail(&mut self, code: CudaError) -> CudaError {
        if code != cuda::SUCCESS {
            self.last_error = code;
            if cuda::is_sticky(code) {
                self.sticky = code;
            }
        }
        code
    }

    /// Reports a pending kernel fault: it becomes the last and the sticky error.
    pub fn surface_fault(&mut self) {
        if self.pending != cuda::SUCCESS {
            let code = std::mem::replace(&mut self.pending, cuda::SUCCESS);
            self.fail(code);
        }
    }

    /// A fresh opaque handle (streams, events).
    pub fn handle(&mut self) -> u64 {
        self.next_handle += 0x10;
        self.next_handle
    }

    /// `cudaFree`: frees the allocation that starts at `addr` (0 is a no-op).
    pub fn free(&mut self, addr: u64) -> CudaError {
        if addr == 0 || self.mem.free(addr) {
            cuda::SUCCESS
        } else {
            cuda::INVALID_DEVICE_POINTER
        }
    }

    /// Checks that `stream` is the default stream (0, or the `cudaStreamLegacy` and
    /// `cudaStreamPerThread` handles 1 and 2) or one created and not destroyed:
    /// `cudaErrorInvalidResourceHandle` otherwise. Every call that takes a stream asks this.
    pub fn stream(&self, stream: u64) -> Result<(), CudaError> {
        if stream <= 2 || self.streams.contains(&stream) {
            Ok(())
        } else {
            Err(cuda::INVALID_RESOURCE_HANDLE)
        }
    }

    /// The time `event` was last recorded at (`None`: never), for writing; `cudaErrorInvalidResourceHandle`
    /// for an event not created or already destroyed. Every call that takes an event asks this.
    pub fn event(&mut self, event: u64) -> Result<&mut Option<f64>, CudaError> {
        self.events.get_mut(&event).ok_or(cuda::INVALID_RESOURCE_HANDLE)
    }

    /// The variable `symbol` names: the one registered for that host shadow, else, when `symbol` points at
    /// a C string (of at most [`MAX_SYMBOL_NAME`] bytes, read as any host memory the program names), the
    /// variable that string names ([`Runtime::variable_named`]: CUDA before 5.0 took a variable's name,
    /// `cudaMemcpyToSymbol("c_clusters", ...)`); `cudaErrorInvalidSymbol` when neither is.
    pub fn variable(&self, symbol: u64) -> Result<&VariableRef, CudaError> {
        if let Some(v) = self.variables.get(&symbol) {
            return Ok(v);
        }
        let name = crate::hostmem::read_cstr(symbol as *const std::ffi::c_char, MAX_SYMBOL_NAME)
            .map_err(|_| cuda::INVALID_SYMBOL)?;
        self.variable_named(&name).ok_or(cuda::INVALID_SYMBOL)
    }

    /// The registered variable called `name`: the one whose name (as `__cudaRegisterVar` registered it, its
    /// PTX name) is `name`, else the one whose name and `name` demangle alike (`_ZL10c_clusters` and
    /// `c_clusters`, `_ZN2ns5tableE` and `ns::table`). `None` when no variable, or more than one (a
    /// `static` variable of that name in two translation units), is called that.
    pub fn variable_named(&self, name: &str) -> Option<&VariableRef> {
        fn only<'a>(mut found: impl Iterator<Item = &'a VariableRef>) -> Option<Option<&'a VariableRef>> {
            let first = found.next()?;
            Some(found.next().is_none().then_some(first))
        }
        if name.is_empty() {
            return None;
        }
        let demangled = |n: &str| reconverge_ir::names::demangle(n).unwrap_or_else(|| n.to_string());
        let plain = demangled(name);
        only(self.variables.values().filter(|v| v.name == name))
            .or_else(|| only(self.variables.values().filter(|v| demangled(&v.name) == plain)))
            .flatten()
    }

    /// The device address of variable `symbol` (`cudaGetSymbolAddress`; constants in the constant window).
    pub fn symbol_address(&self, symbol: u64) -> Result<(u64, u64), CudaError> {
        let v = self.variable(symbol)?;
        let place = self.modules.get(v.module).and_then(|m| m.variable(&v.name)).ok_or(cuda::INVALID_SYMBOL)?;
        let base = if place.constant { reconverge_program::layout::CONST_WINDOW } else { 0 };
        Ok((base + place.addr, v.size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::span::Span;

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    #[test]
    fn allocations_are_zeroed_freed_once_and_bounded() {
        let mut rt = runtime();
        let a = rt.malloc(64).expect("allocates");
        assert_eq!(rt.span_bytes(Span::Device(a), 64).expect("in bounds"), &[0u8; 64][..]);
        assert!(rt.span_bytes(Span::Device(a + 60), 8).is_err(), "past the end");
        rt.span_bytes_mut(Span::Device(a + 8), 4).expect("in bounds").copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(rt.span_bytes(Span::Device(a + 8), 4).expect("in bounds"), &[1, 2, 3, 4]);
        assert_eq!(rt.free(a), cuda::SUCCESS);
        assert_eq!(rt.free(a), cuda::INVALID_DEVICE_POINTER);
        assert_eq!(rt.free(0), cuda::SUCCESS);
        assert_eq!(rt.malloc(u64::MAX), Err(cuda::MEMORY_ALLOCATION));
    }

    #[test]
    fn unknown_streams_and_events_are_invalid_handles() {
        let mut rt = runtime();
        assert_eq!(rt.stream(0), Ok(()));
        assert_eq!(rt.stream(2), Ok(()));
        assert_eq!(rt.stream(0x1234), Err(cuda::INVALID_RESOURCE_HANDLE));
        let h = rt.handle();
        rt.streams.push(h);
        assert_eq!(rt.stream(h), Ok(()));
        assert_eq!(rt.event(h), Err(cuda::INVALID_RESOURCE_HANDLE));
        rt.events.insert(h, None);
        assert_eq!(rt.event(h).copied(), Ok(None));
    }

    /// CUDA before 5.0 (and GPGPU-Sim) took a variable's name for the symbol: `cudaMemcpyToSymbol(
    /// "c_clusters", ...)` (Rodinia kmeans). A symbol pointer that is no registered shadow is read as a C
    /// string and looked up among the registered names, plain or demangled.
    #[test]
    fn a_symbol_may_be_named_by_a_string() {
        let mut rt = runtime();
        let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.const .align 4 .b8 c_clusters[16];\n\
                   .global .align 4 .b8 _ZN2ns5tableE[8];\n.global .align 4 .b8 _ZL5local[4];\n\
                   .visible .entry k()\n{\nret;\n}\n";
        let ir = reconverge_ptx::parse(ptx).expect("parses");
        let image = crate::module::ModuleImage::new("t.ptx".into(), ptx.into(), ir, &mut rt.mem, &rt.settings, 1 << 20)
            .expect("loads");
        rt.modules.push(image);
        for (shadow, name, size) in [(0x10, "c_clusters", 16), (0x20, "_ZN2ns5tableE", 8), (0x30, "_ZL5local", 4)] {
            rt.variables.insert(shadow, VariableRef { module: 0, name: name.into(), size, managed: None });
        }
        let named = |rt: &Runtime, s: &std::ffi::CStr| rt.variable(s.as_ptr() as u64).map(|v| v.name.clone());
        assert_eq!(named(&rt, c"c_clusters").as_deref(), Ok("c_clusters"));
        assert_eq!(named(&rt, c"_ZL10c_clusters").as_deref(), Ok("c_clusters"), "a mangled spelling");
        assert_eq!(named(&rt, c"ns::table").as_deref(), Ok("_ZN2ns5tableE"), "demangled");
        assert_eq!(named(&rt, c"_ZN2ns5tableE").as_deref(), Ok("_ZN2ns5tableE"));
        assert_eq!(named(&rt, c"local").as_deref(), Ok("_ZL5local"), "internal linkage");
        for unknown in [c"table", c"", c"c_cluster", c"c_clusters "] {
            assert_eq!(named(&rt, unknown), Err(cuda::INVALID_SYMBOL), "{unknown:?}");
        }
        let long = std::ffi::CString::new("c".repeat(MAX_SYMBOL_NAME + 1)).expect("no NUL");
        assert_eq!(named(&rt, &long), Err(cuda::INVALID_SYMBOL), "longer than a name may be");
        assert_eq!(rt.variable(0).map(|v| v.size), Err(cuda::INVALID_SYMBOL), "NULL");
        assert_eq!(rt.variable(8).map(|v| v.size), Err(cuda::INVALID_SYMBOL), "unmapped");
        // The name reaches every symbol call: addresses, sizes, copies both ways.
        let (by_name, by_shadow) = (rt.symbol_address(c"c_clusters".as_ptr() as u64), rt.symbol_address(0x10));
        assert_eq!(by_name, by_shadow);
        let src = [1u8, 2, 3, 4];
        let mut back = [0u8; 4];
        // SAFETY: `back` is ours and not otherwise used meanwhile.
        unsafe {
            let name = c"ns::table".as_ptr() as u64;
            assert_eq!(rt.symbol_copy(true, name, src.as_ptr() as u64, 4, 4, 1), cuda::SUCCESS);
            assert_eq!(rt.symbol_copy(false, 0x20, back.as_mut_ptr() as u64, 4, 4, 2), cuda::SUCCESS);
            assert_eq!(rt.symbol_copy(true, name, src.as_ptr() as u64, 4, 6, 1), cuda::INVALID_VALUE, "past it");
            let unknown = c"nothing".as_ptr() as u64;
            assert_eq!(rt.symbol_copy(true, unknown, src.as_ptr() as u64, 4, 0, 1), cuda::INVALID_SYMBOL);
        }
        assert_eq!(back, src);
        // Two variables of one name (a `static` in two translation units): the name is ambiguous.
        rt.variables.insert(0x40, VariableRef { module: 0, name: "c_clusters".into(), size: 16, managed: None });
        assert_eq!(named(&rt, c"c_clusters"), Err(cuda::INVALID_SYMBOL));
        assert_eq!(rt.variable(0x10).map(|v| v.size), Ok(16), "the shadows still name them");
    }

    #[test]
    fn sticky_errors_stay() {
        let mut rt = runtime();
        assert_eq!(rt.fail(cuda::INVALID_VALUE), cuda::INVALID_VALUE);
        assert_eq!(rt.sticky, cuda::SUCCESS);
        rt.fail(cuda::ILLEGAL_ADDRESS);
        assert_eq!(rt.sticky, cuda::ILLEGAL_ADDRESS);
    }
}
