//! Page-locked host memory, which the device reads and writes: `cudaMallocHost` and `cudaHostAlloc`
//! allocations and the ranges a program registers with `cudaHostRegister`.
//!
//! The simulated device reports unified addressing, and on such a device all page-locked memory is mapped:
//! "On a system with unified virtual addressing, the memory will be both mapped and portable" (CUDA Runtime
//! API, Memory Management, `cudaHostRegister`), and memory from `cudaMallocHost` and `cudaHostAlloc` is
//! directly accessible from a device with unified addressing (CUDA Programming Guide, "Unified Virtual
//! Address Space"). The device uses the host's own address, as CUDA does where every device has
//! `cudaDevAttrCanUseHostPointerForRegisteredMem` (`cudaHostGetDevicePointer`: "the device pointer
//! returned ... will match the original pointer"), wherever the simulated address space leaves that address
//! free ([`host_address_is_free`]: outside device allocations, managed memory and the state-space
//! windows; on Linux's usual address layout always). Otherwise the range gets a device alias: addresses
//! reserved in the managed region ([`crate::managed::ManagedRegion::reserve`]), which
//! [`crate::runtime::Runtime::classify`] maps back to the host range.
//!
//! Launches are synchronous, so the model is the one of managed memory ([`crate::mirror`]): for each
//! launch every range is copied into device memory at its device address and copied back after it. Every
//! range counts against the memory limit (it is in device memory while a launch runs).

use crate::error::{self as cuda, CudaError};
use crate::hostmem;
use crate::mirror::Mirror;
use crate::runtime::Runtime;
use reconverge_program::layout::{CONST_WINDOW, GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use reconverge_sim::memory::DeviceMemory;

/// `cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined`: the flags `cudaHostAlloc`
/// takes.
pub const HOST_ALLOC_FLAGS: u32 = 0x7;

/// `cudaHostRegisterPortable | Mapped | IoMemory | ReadOnly`: the flags `cudaHostRegister` takes.
pub const REGISTER_FLAGS: u32 = 0xf;

/// `cudaHostRegisterReadOnly`: the device only reads the range (what a kernel stores there is dropped).
pub const REGISTER_READ_ONLY: u32 = 0x8;

/// How a page-locked range came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `cudaMallocHost` (flags 0) or `cudaHostAlloc` with these flags: the runtime's allocation, freed by
    /// `cudaFreeHost`.
    Allocated(u32),
    /// `cudaHostRegister` with these flags: the program's memory, released by `cudaHostUnregister`.
    Registered(u32),
}

/// One page-locked range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PinnedRange {
    /// Its host address.
    pub host: u64,
    /// Its length in bytes (at least 1).
    pub len: u64,
    /// The address the device uses for its first byte.
    pub device: u64,
    /// Where it comes from.
    pub origin: Origin,
    /// What it is, for messages (`cudaHostRegister(4096)`).
    pub name: String,
}

impl PinnedRange {
    /// Whether `[addr, addr + len)` (`len` at least 1) lies wholly in the range's host addresses.
    fn holds(&self, addr: u64, len: u64) -> bool {
        addr >= self.host && addr.checked_add(len.max(1)).is_some_and(|end| end <= self.host + self.len)
    }

    /// The device address of host address `addr` in the range.
    pub fn device_address(&self, addr: u64) -> u64 {
        self.device + (addr - self.host)
    }

    /// How the device sees it during a launch.
    fn mirror(&self) -> Mirror<'_> {
        let read_only = matches!(self.origin, Origin::Registered(f) if f & REGISTER_READ_ONLY != 0);
        Mirror { host: self.host, device: self.device, len: self.len, name: &self.name, write_back: !read_only }
    }
}

/// Every page-locked range of the process.
#[derive(Debug, Default)]
pub struct Pinned {
    ranges: Vec<PinnedRange>,
}

impl Pinned {
    /// The range whose host addresses hold all of `[addr, addr + len)`.
    pub fn holding(&self, addr: u64, len: u64) -> Option<&PinnedRange> {
        self.ranges.iter().find(|r| r.holds(addr, len))
    }

    /// The host address of device alias `addr` when a range aliased elsewhere holds all of
    /// `[addr, addr + len)` at its device addresses.
    pub fn host_of_alias(&self, addr: u64, len: u64) -> Option<u64> {
        let end = addr.checked_add(len.max(1))?;
        let r = self.ranges.iter().find(|r| r.device != r.host && addr >= r.device && end <= r.device + r.len)?;
        Some(r.host + (addr - r.device))
    }

    /// Whether any range shares an address with `[addr, addr + len)`.
    pub fn overlaps(&self, addr: u64, len: u64) -> bool {
        let end = addr.saturating_add(len.max(1));
        self.ranges.iter().any(|r| addr < r.host + r.len && r.host < end)
    }

    /// The bytes of every range together: what page-locked memory holds against the memory limit.
    pub fn held(&self) -> u64 {
        self.ranges.iter().map(|r| r.len).fold(0, u64::saturating_add)
    }

    /// Takes out the range that starts at `host` and came to be as `registered` says.
    fn remove(&mut self, host: u64, registered: bool) -> Option<PinnedRange> {
        let i = self
            .ranges
            .iter()
            .position(|r| r.host == host && matches!(r.origin, Origin::Registered(_)) == registered)?;
        Some(self.ranges.remove(i))
    }

    /// Copies every range into `mem` for a launch ([`crate::mirror::map_into`]).
    pub fn map_into(&self, mem: &mut DeviceMemory) -> Result<(), CudaError> {
        crate::mirror::map_into(self.ranges.iter().map(PinnedRange::mirror), mem)
    }

    /// Copies every range back to the host after a launch ([`crate::mirror::take_back`]).
    pub fn take_back(&self, mem: &mut DeviceMemory) {
        crate::mirror::take_back(self.ranges.iter().map(PinnedRange::mirror), mem);
    }
}

/// Whether the simulated device may use host addresses `[addr, addr + len)` as they are: they lie outside
/// device allocations and managed memory (`[GLOBAL_BASE, SHARED_WINDOW)`) and outside the shared, local,
/// constant and parameter windows.
pub fn host_address_is_free(addr: u64, len: u64) -> bool {
    let Some(end) = addr.checked_add(len.max(1)) else { return false };
    let clear = |lo: u64, hi: u64| end <= lo || addr >= hi;
    clear(GLOBAL_BASE, SHARED_WINDOW)
        && [SHARED_WINDOW, LOCAL_WINDOW, CONST_WINDOW, PARAM_WINDOW].iter().all(|&w| clear(w, w + WINDOW_SIZE))
}

impl Runtime {
    /// Adds the page-locked range `[host, host + len)`: its device address is `host` where
    /// [`host_address_is_free`], else a reserved alias. Counted against the memory limit.
    fn pin(&mut self, host: u64, len: u64, origin: Origin, name: String) -> Result<u64, CudaError> {
        self.fits(len)?;
        let device = if host_address_is_free(host, len) { host } else { self.managed.reserve(len)? };
        self.pinned.ranges.push(PinnedRange { host, len, device, origin, name });
        Ok(device)
    }

    /// `cudaMallocHost` and `cudaHostAlloc`: `size` zeroed bytes of page-locked host memory (`flags` other
    /// than [`HOST_ALLOC_FLAGS`]: `cudaErrorInvalidValue`); its address.
    pub fn host_alloc(&mut self, size: u64, flags: u32) -> Result<u64, CudaError> {
        if flags & !HOST_ALLOC_FLAGS != 0 {
            return Err(cuda::INVALID_VALUE);
        }
        let len = size.max(1);
        self.fits(len)?;
        let bytes = usize::try_from(len).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        // SAFETY: calloc of the size asked for; freed by `host_free`.
        let p = unsafe { libc::calloc(bytes, 1) } as u64;
        if p == 0 {
            return Err(cuda::MEMORY_ALLOCATION);
        }
        if let Err(c) = self.pin(p, len, Origin::Allocated(flags), format!("cudaHostAlloc({size})")) {
            // SAFETY: allocated just above and not handed out.
            unsafe { libc::free(p as *mut libc::c_void) };
            return Err(c);
        }
        Ok(p)
    }

    /// `cudaFreeHost`: frees the allocation of [`Runtime::host_alloc`] that starts at `host`
    /// (`cudaErrorInvalidValue` for any other pointer).
    pub fn host_free(&mut self, host: u64) -> CudaError {
        if self.pinned.remove(host, false).is_none() {
            return cuda::INVALID_VALUE;
        }
        // SAFETY: allocated by `host_alloc` with calloc, freed once (its range is gone).
        unsafe { libc::free(host as *mut libc::c_void) };
        cuda::SUCCESS
    }

    /// `cudaHostRegister`: pins `[host, host + size)` of the program's memory. NULL, a size of 0, unknown
    /// flags, memory the device owns and a range the host cannot read are `cudaErrorInvalidValue`; a range
    /// sharing an address with page-locked memory is `cudaErrorHostMemoryAlreadyRegistered`; one past the
    /// memory limit `cudaErrorMemoryAllocation`.
    pub fn host_register(&mut self, host: u64, size: u64, flags: u32) -> CudaError {
        if host == 0 || size == 0 || flags & !REGISTER_FLAGS != 0 {
            return cuda::INVALID_VALUE;
        }
        if !matches!(self.classify(host, size), Ok(crate::span::Span::Host(h)) if h == host) || !readable(host, size) {
            return cuda::INVALID_VALUE;
        }
        if self.pinned.overlaps(host, size) {
            return cuda::HOST_MEMORY_ALREADY_REGISTERED;
        }
        match self.pin(host, size, Origin::Registered(flags), format!("cudaHostRegister({size})")) {
            Ok(_) => cuda::SUCCESS,
            Err(c) => c,
        }
    }

    /// `cudaHostUnregister`: ends the registration that starts at `host` (`cudaErrorInvalidValue` for NULL,
    /// `cudaErrorHostMemoryNotRegistered` for any other pointer).
    pub fn host_unregister(&mut self, host: u64) -> CudaError {
        match (host, self.pinned.remove(host, true)) {
            (0, _) => cuda::INVALID_VALUE,
            (_, Some(_)) => cuda::SUCCESS,
            (_, None) => cuda::HOST_MEMORY_NOT_REGISTERED,
        }
    }

    /// `cudaHostGetDevicePointer`: the device address of page-locked host address `host` (`flags` must be
    /// 0); `cudaErrorInvalidValue` for memory that is not page-locked.
    pub fn host_device_pointer(&self, host: u64, flags: u32) -> Result<u64, CudaError> {
        let r = self.pinned.holding(host, 1).filter(|_| flags == 0 && host != 0).ok_or(cuda::INVALID_VALUE)?;
        Ok(r.device_address(host))
    }

    /// `cudaHostGetFlags`: the flags `cudaHostAlloc` was given for the allocation holding `host` (0 for
    /// `cudaMallocHost`); `cudaErrorInvalidValue` for registered or other memory, as CUDA documents ("will
    /// fail if the input pointer does not reside in an address range allocated by cudaHostAlloc()").
    pub fn host_flags(&self, host: u64) -> Result<u32, CudaError> {
        match self.pinned.holding(host, 1).map(|r| r.origin) {
            Some(Origin::Allocated(flags)) if host != 0 => Ok(flags),
            _ => Err(cuda::INVALID_VALUE),
        }
    }

    /// Copies managed and page-locked memory into device memory for a launch ([`crate::mirror`]); on
    /// `Err` the caller takes back what was copied ([`Runtime::take_host_memory`]).
    pub fn map_host_memory(&mut self) -> Result<(), CudaError> {
        self.managed.map_into(&mut self.mem)?;
        self.pinned.map_into(&mut self.mem)
    }

    /// Copies managed and page-locked memory back to the host after a launch.
    pub fn take_host_memory(&mut self) {
        self.managed.take_back(&mut self.mem);
        self.pinned.take_back(&mut self.mem);
    }
}

/// Whether the host can read every byte of `[addr, addr + len)` (read a megabyte at a time).
fn readable(addr: u64, len: u64) -> bool {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; len.min(CHUNK) as usize];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(CHUNK);
        if hostmem::read(addr + at, &mut buf[..n as usize]).is_err() {
            return false;
        }
        at += n;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use crate::span::Span;

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    #[test]
    fn the_device_uses_host_addresses_outside_its_own_windows() {
        assert!(host_address_is_free(0x5555_0000_0000, 4096), "a PIE heap");
        assert!(host_address_is_free(0x7fff_0000_0000, 4096), "mmap and the stack");
        assert!(host_address_is_free(0x60_0000, 4096), "a non-PIE heap");
        assert!(!host_address_is_free(GLOBAL_BASE + 64, 8), "device allocations");
        assert!(!host_address_is_free(crate::managed::MANAGED_BASE, 8), "managed memory");
        assert!(!host_address_is_free(GLOBAL_BASE - 4, 8), "running into device allocations");
        assert!(!host_address_is_free(LOCAL_WINDOW + 8, 8), "the local window");
        assert!(host_address_is_free(PARAM_WINDOW + WINDOW_SIZE, 8), "just past the parameter window");
        assert!(!host_address_is_free(u64::MAX - 2, 8), "wrapping");
    }

    #[test]
    fn registration_checks_overlap_flags_and_the_limit() {
        let mut rt = runtime();
        rt.settings.max_memory = 1 << 20;
        let mut buf = vec![0u8; 8192];
        let b = buf.as_mut_ptr() as u64;
        assert_eq!(rt.host_register(0, 64, 0), cuda::INVALID_VALUE, "NULL");
        assert_eq!(rt.host_register(b, 0, 0), cuda::INVALID_VALUE, "no bytes");
        assert_eq!(rt.host_register(b, 64, 0x10), cuda::INVALID_VALUE, "unknown flags");
        assert_eq!(rt.host_register(8, 64, 0), cuda::INVALID_VALUE, "unmapped");
        assert_eq!(rt.host_register(b, 4096, 0x2), cuda::SUCCESS);
        assert_eq!(rt.host_register(b + 4000, 64, 0), cuda::HOST_MEMORY_ALREADY_REGISTERED);
        // Two pages mapped, the second unmapped again: a range over both runs past readable memory (what
        // follows a heap buffer may be mapped, under valgrind's allocator for one).
        // SAFETY: an anonymous private mapping of two pages, its second page unmapped; no reference into it.
        let two = unsafe {
            let prot = libc::PROT_READ | libc::PROT_WRITE;
            let p = libc::mmap(std::ptr::null_mut(), 8192, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
            assert_ne!(p, libc::MAP_FAILED, "mmap");
            libc::munmap((p as *mut u8).add(4096).cast(), 4096);
            p as u64
        };
        assert_eq!(rt.host_register(two, 8192, 0), cuda::INVALID_VALUE, "past readable memory");
        assert_eq!(rt.host_device_pointer(b + 10, 0), Ok(b + 10), "the host's own address");
        assert_eq!(rt.host_device_pointer(b + 10, 1), Err(cuda::INVALID_VALUE), "flags must be 0");
        assert_eq!(rt.host_device_pointer(b + 4096, 0), Err(cuda::INVALID_VALUE), "not registered");
        assert_eq!(rt.host_flags(b), Err(cuda::INVALID_VALUE), "registered, not allocated");
        assert_eq!(rt.held(), 4096);
        assert_eq!(rt.host_unregister(b + 1), cuda::HOST_MEMORY_NOT_REGISTERED, "not its start");
        assert_eq!(rt.host_unregister(b), cuda::SUCCESS);
        assert_eq!(rt.host_unregister(b), cuda::HOST_MEMORY_NOT_REGISTERED, "twice");
        assert_eq!(rt.host_unregister(0), cuda::INVALID_VALUE);
        let h = rt.host_alloc(600 << 10, 0x2).expect("fits");
        assert_eq!(rt.host_flags(h + 5), Ok(0x2));
        assert_eq!(rt.host_alloc(600 << 10, 0), Err(cuda::MEMORY_ALLOCATION), "shares the limit");
        assert_eq!(rt.host_alloc(16, 0x8), Err(cuda::INVALID_VALUE), "unknown flags");
        assert_eq!(rt.host_register(h, 16, 0), cuda::HOST_MEMORY_ALREADY_REGISTERED, "already page-locked");
        assert_eq!(rt.host_unregister(h), cuda::HOST_MEMORY_NOT_REGISTERED, "allocated, not registered");
        assert_eq!(rt.host_free(h), cuda::SUCCESS);
        assert_eq!(rt.host_free(h), cuda::INVALID_VALUE);
        drop(buf);
        // SAFETY: the first page of the mapping above, not registered.
        unsafe { libc::munmap(two as *mut libc::c_void, 4096) };
    }

    #[test]
    fn launches_see_page_locked_memory_at_its_device_address_and_aliases_resolve_to_the_host() {
        let mut rt = runtime();
        let mut buf = vec![7u8; 64];
        let mut frozen = vec![3u8; 16];
        let (b, f) = (buf.as_mut_ptr() as u64, frozen.as_mut_ptr() as u64);
        assert_eq!(rt.host_register(b, 64, 0), cuda::SUCCESS);
        assert_eq!(rt.host_register(f, 16, REGISTER_READ_ONLY), cuda::SUCCESS);
        // An alias, as a range the device cannot use at its own address gets.
        let alias = rt.managed.reserve(64).expect("reserves");
        rt.pinned.ranges[0].device = alias;
        assert_eq!(rt.classify(alias + 8, 8), Ok(Span::Host(b + 8)), "the alias names the host range");
        assert_eq!(rt.host_device_pointer(b + 8, 0), Ok(alias + 8));
        rt.map_host_memory().expect("fits");
        assert_eq!(rt.mem.read(alias, 1).expect("mapped"), 7);
        rt.mem.write(alias + 4, 4, 0x0102_0304).expect("mapped");
        rt.mem.write(f, 1, 0).expect("mapped");
        rt.take_host_memory();
        assert!(rt.mem.allocations().is_empty());
        assert_eq!(buf[4..8], [4, 3, 2, 1]);
        assert_eq!(frozen[0], 3, "read-only for the device");
    }
}
