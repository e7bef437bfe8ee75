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
    /// Page-locked host allocations (`cudaMallocHost`, `cudaHostAlloc`) not yet freed.
    pub host_allocs: Vec<u64>,
    /// Dynamic shared memory a kernel (by host stub) opted in to with `cudaFuncSetAttribute`
    /// (`cudaFuncAttributeMaxDynamicSharedMemorySize`), in bytes.
    pub max_dynamic_shared: HashMap<u64, u64>,
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
            host_allocs: Vec::new(),
            max_dynamic_shared: HashMap::new(),
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

    /// The variable registered for host shadow `symbol`.
    pub fn variable(&self, symbol: u64) -> Result<&VariableRef, CudaError> {
        self.variables.get(&symbol).ok_or(cuda::INVALID_SYMBOL)
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

    #[test]
    fn sticky_errors_stay() {
        let mut rt = runtime();
        assert_eq!(rt.fail(cuda::INVALID_VALUE), cuda::INVALID_VALUE);
        assert_eq!(rt.sticky, cuda::SUCCESS);
        rt.fail(cuda::ILLEGAL_ADDRESS);
        assert_eq!(rt.sticky, cuda::ILLEGAL_ADDRESS);
    }
}
