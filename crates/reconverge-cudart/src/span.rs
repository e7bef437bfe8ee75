//! Where a pointer range lives, and copies between any two ranges: the one classification every copy,
//! set and symbol copy of the API goes through.
//!
//! [`Runtime::classify`] names `[addr, addr + len)` as wholly inside one device allocation, wholly inside
//! one managed block, inside a module's constant bank (an address `cudaGetSymbolAddress` gave for a
//! `__constant__`), or host memory. A range whose end wraps, NULL, and any range that starts in an
//! address window the simulated device owns but is not wholly allocated there (a freed or never
//! allocated address, an overrun, the shared/local/parameter windows) is `cudaErrorInvalidValue`: such a
//! pointer is never taken for host memory. Host memory is touched only through [`crate::hostmem`], so a
//! bad host pointer is an error too.
//!
//! [`Runtime::transfer`] copies without a second full buffer: host to device reads straight into the
//! device's bytes, device to host writes straight from them, host to host is one kernel copy, and copies
//! between two device ranges go through a bounded buffer ([`STAGE`]).

use crate::error::{self as cuda, CudaError};
use crate::hostmem;
use crate::runtime::{CopyKind, Runtime};
use reconverge_program::layout::{CONST_WINDOW, GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};

/// Where a range of bytes lives (its first byte; the length travels with the operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// Host memory of the program at this address.
    Host(u64),
    /// Simulated device memory (one allocation) at this address.
    Device(u64),
    /// Managed memory (one block) at this address.
    Managed(u64),
    /// Module `module`'s constant bank from `offset`.
    Constant {
        /// The module's index.
        module: usize,
        /// The offset in its bank.
        offset: u64,
    },
}

/// The most bytes a copy between two device ranges holds at once.
pub const STAGE: u64 = 1 << 20;

impl Span {
    /// Whether the device can access the range (anything but plain host memory).
    pub fn on_device(self) -> bool {
        !matches!(self, Span::Host(_))
    }

    /// Whether the host can access the range (host and managed memory).
    pub fn on_host(self) -> bool {
        matches!(self, Span::Host(_) | Span::Managed(_))
    }

    /// The span `k` bytes further on.
    fn at(self, k: u64) -> Span {
        match self {
            Span::Host(a) => Span::Host(a + k),
            Span::Device(a) => Span::Device(a + k),
            Span::Managed(a) => Span::Managed(a + k),
            Span::Constant { module, offset } => Span::Constant { module, offset: offset + k },
        }
    }

    /// A position that orders two ranges of one storage (for copies between overlapping ranges).
    fn position(self) -> u64 {
        match self {
            Span::Host(a) | Span::Device(a) | Span::Managed(a) => a,
            Span::Constant { offset, .. } => CONST_WINDOW.saturating_add(offset),
        }
    }
}

impl CopyKind {
    /// Whether a copy of this kind may go from `src` to `dst` (managed memory is host and device memory
    /// alike; `cudaMemcpyDefault` takes any two).
    pub fn allows(self, dst: Span, src: Span) -> bool {
        match self {
            CopyKind::HostToHost => src.on_host() && dst.on_host(),
            CopyKind::HostToDevice => src.on_host() && dst.on_device(),
            CopyKind::DeviceToHost => src.on_device() && dst.on_host(),
            CopyKind::DeviceToDevice => src.on_device() && dst.on_device(),
            CopyKind::Default => true,
        }
    }
}

impl Runtime {
    /// What `[addr, addr + len)` is (`len` 0 is taken as 1); `cudaErrorInvalidValue` for NULL, a wrapping
    /// end, or a range the device's address windows own but do not wholly hold. The device alias of
    /// page-locked host memory ([`crate::pinned`]) is that host memory.
    pub fn classify(&self, addr: u64, len: u64) -> Result<Span, CudaError> {
        let len = len.max(1);
        if addr == 0 || addr.checked_add(len).is_none() {
            return Err(cuda::INVALID_VALUE);
        }
        if let Some(host) = self.pinned.host_of_alias(addr, len) {
            return Ok(Span::Host(host));
        }
        let starts_in = |lo: u64, hi: u64| addr >= lo && addr < hi;
        if starts_in(GLOBAL_BASE, self.mem.end()) {
            return self.mem.bytes(addr, len).map(|_| Span::Device(addr)).ok_or(cuda::INVALID_VALUE);
        }
        let (lo, hi) = self.managed.window();
        if starts_in(lo, hi) {
            return self.managed.block_holding(addr, len).map(|_| Span::Managed(addr)).ok_or(cuda::INVALID_VALUE);
        }
        if starts_in(CONST_WINDOW, CONST_WINDOW + WINDOW_SIZE) {
            let offset = addr - CONST_WINDOW;
            return self.constant_holding(offset, len).map(|module| Span::Constant { module, offset });
        }
        if [SHARED_WINDOW, LOCAL_WINDOW, PARAM_WINDOW].iter().any(|&w| starts_in(w, w + WINDOW_SIZE)) {
            return Err(cuda::INVALID_VALUE);
        }
        Ok(Span::Host(addr))
    }

    /// The module one of whose `__constant__` variables holds `[offset, offset + len)` of its bank.
    fn constant_holding(&self, offset: u64, len: u64) -> Result<usize, CudaError> {
        let end = offset.checked_add(len).ok_or(cuda::INVALID_VALUE)?;
        self.modules
            .iter()
            .position(|m| m.vars.iter().any(|v| v.constant && offset >= v.addr && end <= v.addr + v.size))
            .ok_or(cuda::INVALID_VALUE)
    }

    /// The `len` bytes of a device-side span (device, managed or constant memory).
    pub fn span_bytes(&self, span: Span, len: u64) -> Result<&[u8], CudaError> {
        let bytes = match span {
            Span::Host(_) => None,
            Span::Device(a) => self.mem.bytes(a, len),
            Span::Managed(a) => self.managed.bytes(a, len),
            Span::Constant { module, offset } => {
                let bank = &self.modules.get(module).ok_or(cuda::INVALID_VALUE)?.consts;
                range(offset, len).and_then(|r| bank.get(r))
            }
        };
        bytes.ok_or(cuda::INVALID_VALUE)
    }

    /// The `len` bytes of a device-side span, writable.
    pub fn span_bytes_mut(&mut self, span: Span, len: u64) -> Result<&mut [u8], CudaError> {
        let bytes = match span {
            Span::Host(_) => None,
            Span::Device(a) => self.mem.bytes_mut(a, len),
            Span::Managed(a) => self.managed.bytes_mut(a, len),
            Span::Constant { module, offset } => {
                let bank = &mut self.modules.get_mut(module).ok_or(cuda::INVALID_VALUE)?.consts;
                range(offset, len).and_then(|r| bank.get_mut(r))
            }
        };
        bytes.ok_or(cuda::INVALID_VALUE)
    }

    /// Copies `len` bytes from `src` to `dst`; a range that is not wholly accessible is
    /// `cudaErrorInvalidValue` (a failed copy may have written part of `dst`).
    ///
    /// # Safety
    /// A host `dst` is memory the program named ([`hostmem::write`]).
    pub unsafe fn transfer(&mut self, dst: Span, src: Span, len: u64) -> Result<(), CudaError> {
        let fault = |_| cuda::INVALID_VALUE;
        match (dst, src) {
            // SAFETY: the caller's contract.
            (Span::Host(d), Span::Host(s)) => unsafe { hostmem::copy(d, s, len) }.map_err(fault),
            // SAFETY: as above.
            (Span::Host(d), s) => unsafe { hostmem::write(d, self.span_bytes(s, len)?) }.map_err(fault),
            (d, Span::Host(s)) => hostmem::read(s, self.span_bytes_mut(d, len)?).map_err(fault),
            (d, s) => self.copy_on_device(d, s, len),
        }
    }

    /// Copies between two device-side ranges (possibly of one allocation, possibly overlapping: then
    /// back to front when `dst` lies after `src`) through a buffer of at most [`STAGE`] bytes.
    fn copy_on_device(&mut self, dst: Span, src: Span, len: u64) -> Result<(), CudaError> {
        // Both whole ranges first, so that a bad one changes nothing.
        self.span_bytes(src, len)?;
        self.span_bytes(dst, len)?;
        let mut stage = vec![0u8; len.min(STAGE) as usize];
        let chunks = len.div_ceil(STAGE);
        let backwards = dst.position() > src.position();
        for i in 0..chunks {
            let at = if backwards { (chunks - 1 - i) * STAGE } else { i * STAGE };
            let n = (len - at).min(STAGE);
            let buf = &mut stage[..n as usize];
            buf.copy_from_slice(self.span_bytes(src.at(at), n)?);
            self.span_bytes_mut(dst.at(at), n)?.copy_from_slice(buf);
        }
        Ok(())
    }

    /// `cudaMemcpy`: `len` bytes from `src` to `dst` as the raw `cudaMemcpyKind` says.
    ///
    /// # Safety
    /// A host `dst` is memory the program named ([`hostmem::write`]).
    pub unsafe fn memcpy(&mut self, dst: u64, src: u64, len: u64, kind: i32) -> CudaError {
        let Some(kind) = CopyKind::from_raw(kind) else { return cuda::INVALID_MEMCPY_DIRECTION };
        if len == 0 {
            return cuda::SUCCESS;
        }
        let spans = self.classify(dst, len).and_then(|d| Ok((d, self.classify(src, len)?)));
        match spans {
            Ok((d, s)) if kind.allows(d, s) => {
                // SAFETY: the caller's contract.
                code(unsafe { self.transfer(d, s, len) })
            }
            Ok(_) => cuda::INVALID_VALUE,
            Err(c) => c,
        }
    }

    /// `cudaMemset`: `len` bytes at `addr` (device or managed memory) set to the low byte of `value`.
    pub fn memset(&mut self, addr: u64, value: i32, len: u64) -> CudaError {
        self.fill(addr, &[value as u8], len)
    }

    /// `len` bytes at `addr` (device or managed memory) filled with copies of `pattern` (one byte for
    /// `cudaMemset`; 2 or 4 for a graph's memset node), the last one cut short where `len` ends.
    pub fn fill(&mut self, addr: u64, pattern: &[u8], len: u64) -> CudaError {
        if len == 0 || pattern.is_empty() {
            return cuda::SUCCESS;
        }
        let result = self.classify(addr, len).and_then(|span| self.span_bytes_mut(span, len));
        match result {
            Ok(bytes) => {
                for chunk in bytes.chunks_mut(pattern.len()) {
                    chunk.copy_from_slice(&pattern[..chunk.len()]);
                }
                cuda::SUCCESS
            }
            Err(c) => c,
        }
    }

    /// The bytes of variable `symbol` from `offset`, `len` long: a `__managed__` variable's host copy, a
    /// `__device__` variable or a `__constant__` in its module's bank.
    pub fn symbol_span(&self, symbol: u64, offset: u64, len: u64) -> Result<Span, CudaError> {
        let v = self.variable(symbol)?;
        if offset.checked_add(len).is_none_or(|end| end > v.size) {
            return Err(cuda::INVALID_VALUE);
        }
        if let Some(host) = v.managed {
            return Ok(Span::Managed(host + offset));
        }
        let place = self.modules.get(v.module).and_then(|m| m.variable(&v.name)).ok_or(cuda::INVALID_SYMBOL)?;
        let at = place.addr.checked_add(offset).ok_or(cuda::INVALID_VALUE)?;
        Ok(if place.constant { Span::Constant { module: v.module, offset: at } } else { Span::Device(at) })
    }

    /// `cudaMemcpyToSymbol` (`to_symbol`) or `cudaMemcpyFromSymbol`: `len` bytes between variable `symbol`
    /// (from `offset`) and `other`, as the raw `kind` says (to a symbol: host to device, device to device
    /// or default; from one: device to host, device to device or default).
    ///
    /// # Safety
    /// A host `other` read from a symbol is memory the program named ([`hostmem::write`]).
    pub unsafe fn symbol_copy(
        &mut self,
        to_symbol: bool,
        symbol: u64,
        other: u64,
        len: u64,
        offset: u64,
        kind: i32,
    ) -> CudaError {
        let kind = match CopyKind::from_raw(kind) {
            Some(k @ (CopyKind::DeviceToDevice | CopyKind::Default)) => k,
            Some(k @ CopyKind::HostToDevice) if to_symbol => k,
            Some(k @ CopyKind::DeviceToHost) if !to_symbol => k,
            _ => return cuda::INVALID_MEMCPY_DIRECTION,
        };
        let var = match self.symbol_span(symbol, offset, len) {
            Ok(s) => s,
            Err(c) => return c,
        };
        if len == 0 {
            return cuda::SUCCESS;
        }
        let span = match self.classify(other, len) {
            Ok(s) => s,
            Err(c) => return c,
        };
        let (dst, src) = if to_symbol { (var, span) } else { (span, var) };
        if !kind.allows(dst, src) {
            return cuda::INVALID_VALUE;
        }
        // SAFETY: the caller's contract.
        code(unsafe { self.transfer(dst, src, len) })
    }

    /// Everything the memory limit counts: device allocations (`cudaMalloc`, module variables), managed
    /// blocks and page-locked host memory. `cudaMalloc`, `cudaMallocManaged`, `cudaMallocHost`,
    /// `cudaHostRegister` and `cudaMemGetInfo` use it; a launch counts the same bytes (managed and
    /// page-locked memory are in device memory while it runs) plus its CTAs' state.
    pub fn held(&self) -> u64 {
        self.mem.allocated_bytes().saturating_add(self.managed.held()).saturating_add(self.pinned.held())
    }

    /// Whether `size` more bytes fit the memory limit.
    pub(crate) fn fits(&self, size: u64) -> Result<(), CudaError> {
        if self.held().saturating_add(size) > self.settings.max_memory {
            return Err(cuda::MEMORY_ALLOCATION);
        }
        Ok(())
    }

    /// `cudaMalloc`: a zeroed device allocation of `size` bytes; its address.
    pub fn malloc(&mut self, size: u64) -> Result<u64, CudaError> {
        self.malloc_named(size, format!("cudaMalloc({size})"))
    }

    /// A zeroed device allocation of `size` bytes that messages call `name` (CUDA arrays, texture and
    /// surface descriptors), counted against the memory limit as `cudaMalloc` is; its address.
    pub fn malloc_named(&mut self, size: u64, name: String) -> Result<u64, CudaError> {
        self.fits(size)?;
        let len = usize::try_from(size).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        let data = reconverge_program::error::try_zeros(len, || name.clone()).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        Ok(self.mem.alloc(data, name))
    }

    /// `cudaMallocManaged` and `__managed__` variables: a zeroed managed block of `size` bytes; its address.
    pub fn malloc_managed(&mut self, size: u64, name: String) -> Result<u64, CudaError> {
        self.fits(size)?;
        self.managed.alloc(size, name)
    }
}

/// `offset..offset + len` as indices, when it does not overflow.
fn range(offset: u64, len: u64) -> Option<std::ops::Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    Some(start..start.checked_add(usize::try_from(len).ok()?)?)
}

/// A result as the error code the program sees.
fn code(r: Result<(), CudaError>) -> CudaError {
    r.err().unwrap_or(cuda::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::module::ModuleImage;
    use crate::settings::Settings;

    const PTX: &str = ".version 7.0\n.target sm_80\n.address_size 64\n.const .align 4 .b8 tab[16];\n\
                       .global .align 4 .b8 g[8];\n.visible .entry k()\n{\n\tret;\n}\n";

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    /// A runtime with one module holding `tab` (constant, 16 bytes) and `g` (device, 8 bytes), registered
    /// for the host shadows 0x10 and 0x20.
    fn with_module() -> Runtime {
        let mut rt = runtime();
        let image = ModuleImage::new(
            "t.ptx".into(),
            PTX.into(),
            reconverge_ptx::parse(PTX).expect("parses"),
            &mut rt.mem,
            &rt.settings,
            u64::MAX,
        )
        .expect("parses");
        rt.modules.push(image);
        for (shadow, name, size) in [(0x10, "tab", 16), (0x20, "g", 8)] {
            let v = crate::runtime::VariableRef { module: 0, name: name.into(), size, managed: None };
            rt.variables.insert(shadow, v);
        }
        rt
    }

    #[test]
    fn ranges_are_device_managed_constant_host_or_invalid() {
        let mut rt = with_module();
        let invalid = Err(cuda::INVALID_VALUE);
        let a = rt.malloc(4096).expect("allocates");
        let freed = rt.malloc(64).expect("allocates");
        assert_eq!(rt.free(freed), cuda::SUCCESS);
        let m = rt.malloc_managed(4096, "m".into()).expect("maps");
        let host = [0u8; 64];
        let h = host.as_ptr() as u64;
        assert_eq!(rt.classify(a + 96, 4000), Ok(Span::Device(a + 96)));
        assert_eq!(rt.classify(a + 96, 4001), invalid, "an overrun is not host memory");
        assert_eq!(rt.classify(freed, 8), invalid, "a freed allocation is not host memory");
        assert_eq!(rt.classify(a - 64, 8), invalid, "a guard is not host memory");
        assert_eq!(rt.classify(m + 4000, 96), Ok(Span::Managed(m + 4000)));
        assert_eq!(rt.classify(m, 256 << 10), invalid, "a managed overrun");
        assert_eq!(rt.classify(m, u64::MAX), invalid, "an end that wraps");
        assert_eq!(rt.classify(h, 64), Ok(Span::Host(h)));
        assert_eq!(rt.classify(0, 16), invalid, "NULL");
        assert_eq!(rt.classify(SHARED_WINDOW + 16, 4), invalid);
        let (tab, _) = rt.symbol_address(0x10).expect("a constant");
        assert_eq!(rt.classify(tab + 4, 12), Ok(Span::Constant { module: 0, offset: 4 }));
        assert_eq!(rt.classify(tab + 4, 13), invalid, "past the constant");
        assert!(rt.managed.free(m));
        assert_eq!(rt.classify(m, 8), invalid, "a freed managed block is not host memory");
    }

    #[test]
    fn copies_reach_every_kind_of_memory_and_refuse_bad_ranges() {
        let mut rt = with_module();
        let (a, b) = (rt.malloc(3 * STAGE + 5).expect("allocates"), rt.malloc(64).expect("allocates"));
        let m = rt.malloc_managed(64, "m".into()).expect("maps");
        let src: Vec<u8> = (0..3 * STAGE + 5).map(|i| (i % 253) as u8).collect();
        let mut back = vec![0u8; src.len()];
        let (s, d) = (src.as_ptr() as u64, back.as_mut_ptr() as u64);
        let n = src.len() as u64;
        // SAFETY: the host destinations are `back` (no reference to it is used meanwhile) or bad pointers.
        unsafe {
            assert_eq!(rt.memcpy(a, s, n, 1), cuda::SUCCESS, "host to device");
            assert_eq!(rt.memcpy(d, a, n, 2), cuda::SUCCESS, "device to host");
            assert_eq!(rt.memcpy(a + 1, a, n - 1, 3), cuda::SUCCESS, "overlapping, forwards");
            assert_eq!(rt.memcpy(a, a + 1, n - 1, 4), cuda::SUCCESS, "overlapping, backwards");
            assert_eq!(rt.memcpy(b, a + 8, 64, 4), cuda::SUCCESS, "between allocations");
            assert_eq!(rt.memcpy(m, b, 64, 3), cuda::SUCCESS, "device to managed");
            assert_eq!(rt.symbol_copy(true, 0x10, m + 16, 16, 0, 4), cuda::SUCCESS, "managed to a constant");
            assert_eq!(rt.symbol_copy(false, 0x10, b, 8, 8, 3), cuda::SUCCESS, "a constant to device");
            assert_eq!(rt.memcpy(0x10, s, 8, 0), cuda::INVALID_VALUE, "host to host, a bad destination");
            assert_eq!(rt.memcpy(a, 0x10, 8, 1), cuda::INVALID_VALUE, "a bad source");
            assert_eq!(rt.memcpy(d, a, 8, 1), cuda::INVALID_VALUE, "the wrong direction");
            assert_eq!(rt.memcpy(d, a, 8, 7), cuda::INVALID_MEMCPY_DIRECTION);
            assert_eq!(rt.symbol_copy(true, 0x10, 0, 16, 0, 1), cuda::INVALID_VALUE, "from NULL");
            assert_eq!(rt.symbol_copy(false, 0x10, 0, 16, 0, 2), cuda::INVALID_VALUE, "to NULL");
            assert_eq!(rt.symbol_copy(true, 0x10, b, 16, 8, 3), cuda::INVALID_VALUE, "past the symbol");
            assert_eq!(rt.symbol_copy(true, 0x10, b, 8, 0, 2), cuda::INVALID_MEMCPY_DIRECTION);
            assert_eq!(rt.symbol_copy(true, 0x30, b, 8, 0, 1), cuda::INVALID_SYMBOL);
        }
        assert_eq!(back, src);
        let dev = rt.span_bytes(Span::Device(a), n).expect("in bounds").to_vec();
        assert_eq!(dev[..n as usize - 1], src[..n as usize - 1], "shifted right then back left");
        let constant = rt.span_bytes(Span::Constant { module: 0, offset: 0 }, 16).expect("the bank").to_vec();
        assert_eq!(constant, src[8 + 16..8 + 32]);
        assert_eq!(rt.span_bytes(Span::Device(b), 8).expect("in bounds"), &src[8 + 24..8 + 32]);
        assert_eq!(rt.memset(m, 0x1ff, 64), cuda::SUCCESS);
        assert_eq!(rt.span_bytes(Span::Managed(m), 64).expect("in bounds"), &[0xff; 64][..]);
        assert_eq!(rt.memset(m, 0, u64::MAX), cuda::INVALID_VALUE, "an end that wraps");
        assert_eq!(rt.memset(s, 0, 8), cuda::INVALID_VALUE, "host memory");
    }

    #[test]
    fn managed_memory_counts_against_the_limit() {
        let mut rt = runtime();
        rt.settings.max_memory = 1 << 20;
        assert_eq!(rt.malloc_managed(2 << 30, "big".into()), Err(cuda::MEMORY_ALLOCATION));
        let m = rt.malloc_managed(600 << 10, "m".into()).expect("fits");
        assert_eq!(rt.malloc(600 << 10), Err(cuda::MEMORY_ALLOCATION), "shares the limit");
        assert_eq!(rt.held(), 600 << 10);
        assert!(rt.managed.free(m));
        assert!(rt.malloc(600 << 10).is_ok());
    }
}
