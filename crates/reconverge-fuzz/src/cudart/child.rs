//! The child: loads the shim, maps its host buffers and runs one plan's calls, writing each call to the
//! log before it is made and its result after, so that the last line of a crashed child's log names the
//! call that was running.
//!
//! Host memory the shim may write is always the child's own: guarded buffers (an unmapped page before and
//! after, the buffer ending at the second), cells made for each call's output parameters and argument
//! arrays, and page-locked allocations only within their length (an overrun of those would be the
//! program's heap corruption, which no runtime can refuse). Pointers into host buffers are kept between
//! the two guard pages, so a wild offset faults instead of landing in an unrelated mapping.

// Every unsafe block here calls the runtime under test with arguments the plan chose on purpose, valid
// or not: refusing bad ones without a crash is what is being tested, and this child process exists so that
// a failure is contained and reported. A SAFETY comment per call would repeat this one.
#![allow(clippy::undocumented_unsafe_blocks, reason = "each block is a fuzzed call; see the comment above")]

use super::api::{Api, Dim3};
use super::fatbin::{FatSource, Place, WRAPPER_MAGIC};
use super::plan::*;
use super::HarnessError;
use std::fmt::{Arguments, Debug};
use std::io::Write;
use std::path::PathBuf;

/// The child's address-space limit (`RLIMIT_AS`): what a huge size can make it reserve.
pub const ADDRESS_SPACE_LIMIT: u64 = 4 << 30;

/// What the child is told.
#[derive(Clone, Debug)]
pub struct ChildOptions {
    /// The plan's seed.
    pub seed: u64,
    /// The shim to load.
    pub shim: PathBuf,
    /// The log file (`None`: standard error).
    pub log: Option<PathBuf>,
    /// Only these calls of the plan (by index); all when `None`.
    pub keep: Option<Vec<usize>>,
    /// Crash on purpose (`SIGSEGV`) when this call's turn comes: to check the harness.
    pub canary: Option<usize>,
}

/// The page size.
fn page() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(p).unwrap_or(4096).max(4096)
}

/// A buffer in its own anonymous mapping: an unmapped (`PROT_NONE`) page before the buffer's pages and
/// one after, the buffer ending where the second begins.
struct Guarded {
    map: u64,
    map_len: usize,
    addr: u64,
    len: u64,
}

impl Guarded {
    /// A zeroed buffer of `len` bytes, filled by `fill`, read-only after that when `read_only`.
    fn new(len: u64, read_only: bool, fill: impl FnOnce(&mut [u8])) -> Result<Guarded, HarnessError> {
        let pg = page();
        let data = len.div_ceil(pg).max(1) * pg;
        let map_len = usize::try_from(data + 2 * pg).map_err(|_| HarnessError::Map(len))?;
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if map == libc::MAP_FAILED {
            return Err(HarnessError::Map(len));
        }
        let g = Guarded { map: map as u64, map_len, addr: map as u64 + pg + data - len, len };
        let data_start = (map as u64 + pg) as *mut libc::c_void;
        // SAFETY: the data pages lie inside the mapping just made.
        if unsafe { libc::mprotect(data_start, data as usize, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
            return Err(HarnessError::Map(len));
        }
        // SAFETY: `[addr, addr + len)` is readable and writable and ours alone.
        fill(unsafe { std::slice::from_raw_parts_mut(g.addr as *mut u8, len as usize) });
        // SAFETY: as above.
        if read_only && unsafe { libc::mprotect(data_start, data as usize, libc::PROT_READ) } != 0 {
            return Err(HarnessError::Map(len));
        }
        Ok(g)
    }

    /// `addr + offset`, kept between the guard pages: from the page before the buffer's to the page
    /// after it.
    fn at(&self, off: Off) -> u64 {
        let pg = page() as i128;
        let d = match off {
            Off::At(a) => i128::from(a as i64),
            Off::End(e) => i128::from(self.len) + i128::from(e),
        };
        let lowest = (self.map as i128 + pg - 1) - i128::from(self.addr);
        let d = d.clamp(lowest.min(-1), i128::from(self.len) + pg - 1);
        (i128::from(self.addr) + d) as u64
    }

    /// The `u64` at the start of a buffer of at least 8 bytes.
    fn read_u64(&self) -> u64 {
        // SAFETY: the buffer is ours and at least 8 bytes long (every caller's cell is).
        unsafe { std::ptr::read_unaligned(self.addr as *const u64) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

/// A static buffer in the child's executable that a fat binary can be placed in (a loaded segment).
struct StaticSlot(std::cell::UnsafeCell<[u8; STATIC_SLOT]>);
// SAFETY: the child is single-threaded while it writes the slot (before the shim reads it).
unsafe impl Sync for StaticSlot {}
/// The static slot's length.
const STATIC_SLOT: usize = 64 << 10;
static FATBIN_SLOT: StaticSlot = StaticSlot(std::cell::UnsafeCell::new([0; STATIC_SLOT]));

/// Where the log goes: written unbuffered, line by line, so it survives a crash.
enum Log {
    File(std::fs::File),
    Stderr,
}

impl Log {
    fn write(&mut self, args: Arguments) {
        let text = std::fmt::format(args);
        let _ = match self {
            Log::File(f) => f.write_all(text.as_bytes()),
            Log::Stderr => std::io::stderr().write_all(text.as_bytes()),
        };
    }
}

/// An address and a length (a slot's last value).
#[derive(Clone, Copy, Default)]
struct Span {
    addr: u64,
    len: u64,
}

/// The executor's state: the shim, the host buffers, and what earlier calls produced.
struct Exec {
    api: Api,
    log: Log,
    host: Vec<Guarded>,
    shadows: Vec<Guarded>,
    /// Registered fat binaries and wrappers, kept mapped.
    keep_alive: Vec<Guarded>,
    /// The current call's cells, unmapped after it.
    scratch: Vec<Guarded>,
    dev: [Span; DEV_SLOTS as usize],
    managed: [Span; MANAGED_SLOTS as usize],
    /// Page-locked allocations; `len` is 0 once freed (the address is kept for double frees).
    pinned: [(Span, bool); PINNED_SLOTS as usize],
    addr: [Span; ADDR_SLOTS as usize],
    streams: [u64; STREAM_SLOTS as usize],
    events: [u64; EVENT_SLOTS as usize],
    modules: [u64; MODULE_SLOTS as usize],
    /// The managed variable's host copy, as the runtime reported it at registration.
    managed_var: Span,
}

/// Bounds the child's address space (`ADDRESS_SPACE_LIMIT`) and turns core dumps off.
fn limit_resources() {
    let set = |resource, value: u64| {
        let lim = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
        // SAFETY: setrlimit with a valid struct; lowering limits is always allowed.
        unsafe { libc::setrlimit(resource, &lim) };
    };
    set(libc::RLIMIT_CORE, 0);
    set(libc::RLIMIT_AS, ADDRESS_SPACE_LIMIT);
}

/// Runs the plan of `opts.seed` against the shim; returns when every call has returned (the caller then
/// exits 0). The shim may end the process itself (a documented exit status, or a crash).
pub fn run_child(opts: &ChildOptions) -> Result<(), HarnessError> {
    limit_resources();
    let plan = Plan::generate(opts.seed);
    let log = match &opts.log {
        Some(p) => Log::File(std::fs::File::create(p).map_err(|e| HarnessError::Io(p.display().to_string(), e))?),
        None => Log::Stderr,
    };
    // SAFETY: loading the shim runs its initialisers, which only set up its own state.
    let lib = unsafe { libloading::Library::new(&opts.shim) }
        .map_err(|e| HarnessError::Load { path: opts.shim.display().to_string(), detail: e.to_string() })?;
    // SAFETY: the library is the shim; its entry points have CUDA's types.
    let api = unsafe { Api::load(&lib)? };
    let mut ex = Exec::new(api, log, opts.seed)?;
    for (i, call) in plan.calls.iter().enumerate() {
        if opts.keep.as_ref().is_some_and(|k| !k.contains(&i)) {
            continue;
        }
        ex.log.write(format_args!("#{i} {call:?}\n"));
        if opts.canary == Some(i) {
            ex.log.write(format_args!("  canary: SIGSEGV\n"));
            // SAFETY: the default action (the Rust runtime's handler would return from a raised
            // SIGSEGV), then the signal, which ends the process.
            unsafe {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            }
        }
        ex.run(call)?;
        ex.scratch.clear();
    }
    // The shim stays loaded until the process exits (as a program's runtime does).
    std::mem::forget(lib);
    Ok(())
}

impl Exec {
    fn new(api: Api, log: Log, seed: u64) -> Result<Exec, HarnessError> {
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
        let mut host = Vec::new();
        for &len in &HOST_SIZES {
            host.push(Guarded::new(len, false, |b| rng.fill(b))?);
        }
        host.push(Guarded::new(RO_LEN, true, |b| b.fill(b'A'))?);
        let mut shadows = Vec::new();
        for k in 0..SHADOWS as usize {
            let len = if k == MANAGED_VAR as usize { 8 } else { VARS.get(k).map_or(16, |v| v.1) };
            shadows.push(Guarded::new(len, false, |_| {})?);
        }
        Ok(Exec {
            api,
            log,
            host,
            shadows,
            keep_alive: Vec::new(),
            scratch: Vec::new(),
            dev: Default::default(),
            managed: Default::default(),
            pinned: Default::default(),
            addr: Default::default(),
            streams: [0; STREAM_SLOTS as usize],
            events: [0; EVENT_SLOTS as usize],
            modules: [0; MODULE_SLOTS as usize],
            managed_var: Span::default(),
        })
    }

    /// Logs `name(args)`, calls `f`, logs its result.
    fn call<R: Debug>(&mut self, name: &str, args: Arguments, f: impl FnOnce(&Api) -> R) -> R {
        self.log.write(format_args!("  {name}({args})"));
        let r = f(&self.api);
        self.log.write(format_args!(" = {r:?}\n"));
        r
    }

    /// A fresh zeroed cell of `len` bytes for this call.
    fn cell(&mut self, len: u64) -> Result<u64, HarnessError> {
        let g = Guarded::new(len, false, |_| {})?;
        let a = g.addr;
        self.scratch.push(g);
        Ok(a)
    }

    /// A cell holding `bytes`.
    fn cell_with(&mut self, bytes: &[u8]) -> Result<u64, HarnessError> {
        let g = Guarded::new(bytes.len() as u64, false, |b| b.copy_from_slice(bytes))?;
        let a = g.addr;
        self.scratch.push(g);
        Ok(a)
    }

    /// An output parameter of `len` bytes: a fresh cell, or the pointer the plan names.
    fn out(&mut self, o: Out, len: u64) -> Result<u64, HarnessError> {
        match o {
            Out::Cell => self.cell(len),
            Out::Ptr(p) => Ok(self.ptr(p)),
        }
    }

    /// The `u64` output parameter `o` (at `addr`) received, when it was a cell of ours.
    fn got(&self, o: Out, addr: u64) -> Option<u64> {
        match o {
            // SAFETY: a cell of this call, at least 8 bytes long.
            Out::Cell => Some(unsafe { std::ptr::read_unaligned(addr as *const u64) }),
            Out::Ptr(_) => None,
        }
    }

    /// A pointer's value now. A freed page-locked allocation is NULL here (only [`Exec::free_ptr`] passes
    /// its old address, to the frees).
    fn ptr(&self, p: Ptr) -> u64 {
        let span = |s: Span, o: Off| match o {
            Off::At(a) => s.addr.wrapping_add(a),
            Off::End(e) => s.addr.wrapping_add(s.len).wrapping_add_signed(e),
        };
        match p {
            Ptr::Null => 0,
            Ptr::Lit(a) => a,
            Ptr::Host(b, o) => self.host[b as usize % self.host.len()].at(o),
            Ptr::Dev(k, o) => span(self.dev[k as usize % self.dev.len()], o),
            Ptr::Managed(k, o) => span(self.managed[k as usize % self.managed.len()], o),
            Ptr::SymAddr(k, o) => span(self.addr[k as usize % self.addr.len()], o),
            Ptr::Shadow(k, o) => self.shadows[k as usize % self.shadows.len()].at(o),
            Ptr::ManagedVar(o) => span(self.managed_var, o),
            Ptr::Stub(k) => self.host[RO as usize].addr + 64 * u64::from(k),
            Ptr::Pinned(k, o) => match self.pinned[k as usize % self.pinned.len()] {
                (s, true) => {
                    let d = match o {
                        Off::At(a) => a.min(s.len),
                        Off::End(e) => s.len.saturating_add_signed(e.min(0)),
                    };
                    s.addr + d
                }
                _ => 0,
            },
        }
    }

    /// A pointer passed to `cudaFree` or `cudaFreeHost`: a freed page-locked allocation keeps its address.
    fn free_ptr(&self, p: Ptr) -> u64 {
        match p {
            Ptr::Pinned(k, Off::At(0)) => self.pinned[k as usize % self.pinned.len()].0.addr,
            _ => self.ptr(p),
        }
    }

    /// `n`, clamped so that no live page-locked allocation among `ptrs` is accessed past its end.
    fn clamp(&self, n: u64, ptrs: &[Ptr]) -> u64 {
        ptrs.iter().fold(n, |n, &p| match p {
            Ptr::Pinned(k, _) => match self.pinned[k as usize % self.pinned.len()] {
                (s, true) => n.min((s.addr + s.len).saturating_sub(self.ptr(p))),
                _ => n,
            },
            _ => n,
        })
    }

    /// A size's value now.
    fn size(&self, s: Size) -> u64 {
        match s {
            Size::Lit(n) => n,
            Size::Len(t, d) => {
                let len = match t {
                    Target::Host(b) => self.host[b as usize % self.host.len()].len,
                    Target::Dev(k) => self.dev[k as usize % self.dev.len()].len,
                    Target::Managed(k) => self.managed[k as usize % self.managed.len()].len,
                    Target::Pinned(k) => self.pinned[k as usize % self.pinned.len()].0.len,
                    Target::Var(k) => VARS[k as usize % VARS.len()].1,
                };
                len.wrapping_add_signed(d)
            }
        }
    }

    /// A handle's value now.
    fn handle(&self, h: Handle) -> u64 {
        match h {
            Handle::Lit(v) => v,
            Handle::Stream(k) => self.streams[k as usize % self.streams.len()],
            Handle::Event(k) => self.events[k as usize % self.events.len()],
        }
    }

    /// A function argument's value.
    fn func(&self, f: Func) -> u64 {
        match f {
            Func::Stub(k) => self.ptr(Ptr::Stub(k)),
            Func::Ptr(p) => self.ptr(p),
        }
    }

    /// A module handle's value.
    fn module(&self, h: ModHandle) -> u64 {
        match h {
            ModHandle::Slot(k) => self.modules[k as usize % self.modules.len()],
            ModHandle::Ptr(p) => self.ptr(p),
        }
    }

    /// A name argument's value (a C string in a cell for the names the plan spells).
    fn name(&mut self, n: Name) -> Result<u64, HarnessError> {
        let text = match n {
            Name::Kernel(k) => KERNELS[k as usize % KERNELS.len()].0,
            Name::Var(k) => VARS[k as usize % VARS.len()].0,
            Name::Unknown => "no_such_symbol",
            Name::Ptr(p) => return Ok(self.ptr(p)),
        };
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        self.cell_with(&bytes)
    }

    /// Runs one call of the plan.
    fn run(&mut self, call: &Call) -> Result<(), HarnessError> {
        match call {
            Call::RegisterFatBinary { .. }
            | Call::RegisterFatBinaryEnd { .. }
            | Call::UnregisterFatBinary { .. }
            | Call::InitModule { .. }
            | Call::RegisterFunction { .. }
            | Call::RegisterVar { .. }
            | Call::RegisterManagedVar { .. } => self.registration(call),
            Call::Malloc { .. }
            | Call::MallocManaged { .. }
            | Call::MallocHost { .. }
            | Call::Free { .. }
            | Call::FreeHost { .. }
            | Call::GetSymbolAddress { .. }
            | Call::GetSymbolSize { .. }
            | Call::MemGetInfo { .. } => self.allocation(call),
            Call::Memcpy { .. } | Call::Memset { .. } | Call::SymbolCopy { .. } => self.copy(call),
            Call::StreamCreate { .. }
            | Call::StreamDestroy { .. }
            | Call::StreamSync { .. }
            | Call::StreamWaitEvent { .. }
            | Call::EventCreate { .. }
            | Call::EventRecord { .. }
            | Call::EventSync { .. }
            | Call::EventDestroy { .. }
            | Call::EventElapsed { .. } => self.stream(call),
            Call::Push { .. } | Call::Pop { .. } | Call::GetKernel { .. } | Call::Launch { .. } => self.launch(call),
            Call::FuncSetCacheConfig { .. }
            | Call::FuncSetAttribute { .. }
            | Call::FuncGetAttributes { .. }
            | Call::Occupancy { .. } => self.function(call),
            _ => self.device(call),
        }
    }

    /// The wrapper's address, with its fat binary placed as the plan says (both kept mapped).
    fn wrapper(&mut self, w: &Wrapper) -> Result<u64, HarnessError> {
        let (magic, version, data) = match w {
            Wrapper::Good(fat) => (WRAPPER_MAGIC, 1, self.place(fat)?),
            Wrapper::Header { magic, version, fat } => (*magic, *version, self.place(fat)?),
            Wrapper::Data(p) => (WRAPPER_MAGIC, 1, self.ptr(*p)),
            Wrapper::At(p) => return Ok(self.ptr(*p)),
            Wrapper::Short => {
                let g = Guarded::new(12, false, |b| b[..4].copy_from_slice(&WRAPPER_MAGIC.to_le_bytes()))?;
                let a = g.addr;
                self.keep_alive.push(g);
                return Ok(a);
            }
        };
        let mut bytes = Vec::with_capacity(24);
        bytes.extend_from_slice(&magic.to_le_bytes());
        bytes.extend_from_slice(&version.to_le_bytes());
        bytes.extend_from_slice(&data.to_le_bytes());
        bytes.extend_from_slice(&0u64.to_le_bytes());
        let g = Guarded::new(24, false, |b| b.copy_from_slice(&bytes))?;
        let a = g.addr;
        self.keep_alive.push(g);
        Ok(a)
    }

    /// Places a fat binary's bytes: in a guarded mapping, or at the end of the static slot.
    fn place(&mut self, fat: &FatSource) -> Result<u64, HarnessError> {
        let bytes = fat.bytes();
        if fat.place == Place::Static && bytes.len() <= STATIC_SLOT {
            let at = (STATIC_SLOT - bytes.len()) & !7;
            let base = FATBIN_SLOT.0.get() as *mut u8;
            // SAFETY: `[at, at + len)` lies in the slot; nothing reads it while it is written.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), bytes.len()) };
            return Ok(base as u64 + at as u64);
        }
        let g = Guarded::new(bytes.len() as u64, false, |b| b.copy_from_slice(&bytes))?;
        let a = g.addr;
        self.keep_alive.push(g);
        Ok(a)
    }

    /// Registration calls.
    fn registration(&mut self, call: &Call) -> Result<(), HarnessError> {
        match call {
            Call::RegisterFatBinary { wrapper, slot } => {
                let w = self.wrapper(wrapper)?;
                let h = self
                    .call("__cudaRegisterFatBinary", format_args!("{w:#x}"), |a| unsafe { (a.register_fat_binary)(w) });
                self.modules[*slot as usize % self.modules.len()] = h;
            }
            Call::RegisterFatBinaryEnd { handle } => {
                let h = self.module(*handle);
                self.call("__cudaRegisterFatBinaryEnd", format_args!("{h:#x}"), |a| unsafe {
                    (a.register_fat_binary_end)(h)
                });
            }
            Call::UnregisterFatBinary { handle } => {
                let h = self.module(*handle);
                self.call("__cudaUnregisterFatBinary", format_args!("{h:#x}"), |a| unsafe {
                    (a.unregister_fat_binary)(h)
                });
            }
            Call::InitModule { handle } => {
                let h = self.module(*handle);
                self.call("__cudaInitModule", format_args!("{h:#x}"), |a| unsafe { (a.init_module)(h) });
            }
            Call::RegisterFunction { handle, stub, name } => {
                let (h, s, n) = (self.module(*handle), self.func(*stub), self.name(*name)?);
                self.call(
                    "__cudaRegisterFunction",
                    format_args!("{h:#x}, {s:#x}, {n:#x}, {n:#x}, -1, 0..."),
                    |a| unsafe { (a.register_function)(h, s, n, n, -1, 0, 0, 0, 0, 0) },
                );
            }
            Call::RegisterVar { handle, shadow, name, size, constant } => {
                let (h, v, n, c) = (self.module(*handle), self.ptr(*shadow), self.name(*name)?, i32::from(*constant));
                self.call(
                    "__cudaRegisterVar",
                    format_args!("{h:#x}, {v:#x}, {n:#x}, {n:#x}, 0, {size}, {c}, 0"),
                    |a| unsafe { (a.register_var)(h, v, n, n, 0, *size, c, 0) },
                );
            }
            Call::RegisterManagedVar { handle, cell, name, size } => {
                let cell_addr = match cell {
                    Out::Cell => self.shadows[MANAGED_VAR as usize].addr,
                    Out::Ptr(p) => self.ptr(*p),
                };
                let (h, n) = (self.module(*handle), self.name(*name)?);
                self.call(
                    "__cudaRegisterManagedVar",
                    format_args!("{h:#x}, {cell_addr:#x}, {n:#x}, {n:#x}, 0, {size}, 0, 0"),
                    |a| unsafe { (a.register_managed_var)(h, cell_addr, n, n, 0, *size, 0, 0) },
                );
                if *cell == Out::Cell {
                    let addr = self.shadows[MANAGED_VAR as usize].read_u64();
                    self.managed_var = Span { addr, len: if addr == 0 { 0 } else { *size } };
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Allocations, frees, symbol queries, memory information.
    fn allocation(&mut self, call: &Call) -> Result<(), HarnessError> {
        match *call {
            Call::Malloc { out, slot, size } => {
                let (o, n) = (self.out(out, 8)?, self.size(size));
                let r = self.call("cudaMalloc", format_args!("{o:#x}, {n}"), |a| unsafe { (a.malloc)(o, n) });
                if let Some(addr) = self.got(out, o) {
                    self.dev[slot as usize % self.dev.len()] = Span { addr, len: if r == 0 { n } else { 0 } };
                }
            }
            Call::MallocManaged { out, slot, size, flags } => {
                let (o, n) = (self.out(out, 8)?, self.size(size));
                let r = self.call("cudaMallocManaged", format_args!("{o:#x}, {n}, {flags}"), |a| unsafe {
                    (a.malloc_managed)(o, n, flags)
                });
                if let Some(addr) = self.got(out, o) {
                    self.managed[slot as usize % self.managed.len()] = Span { addr, len: if r == 0 { n } else { 0 } };
                }
            }
            Call::MallocHost { out, slot, size, flags } => {
                let (o, n) = (self.out(out, 8)?, self.size(size));
                let r = match flags {
                    None => {
                        self.call("cudaMallocHost", format_args!("{o:#x}, {n}"), |a| unsafe { (a.malloc_host)(o, n) })
                    }
                    Some(f) => self.call("cudaHostAlloc", format_args!("{o:#x}, {n}, {f}"), |a| unsafe {
                        (a.host_alloc)(o, n, f)
                    }),
                };
                if let (Some(addr), 0) = (self.got(out, o), r) {
                    self.pinned[slot as usize % self.pinned.len()] = (Span { addr, len: n }, addr != 0);
                }
            }
            Call::Free { p } => {
                let v = self.free_ptr(p);
                self.call("cudaFree", format_args!("{v:#x}"), |a| unsafe { (a.free)(v) });
            }
            Call::FreeHost { p } => {
                let v = self.free_ptr(p);
                let r = self.call("cudaFreeHost", format_args!("{v:#x}"), |a| unsafe { (a.free_host)(v) });
                for s in self.pinned.iter_mut().filter(|s| r == 0 && s.0.addr == v) {
                    s.1 = false;
                }
            }
            Call::GetSymbolAddress { out, slot, symbol } => {
                let (o, s) = (self.out(out, 8)?, self.ptr(symbol));
                let r = self.call("cudaGetSymbolAddress", format_args!("{o:#x}, {s:#x}"), |a| unsafe {
                    (a.get_symbol_address)(o, s)
                });
                if let (Some(addr), 0) = (self.got(out, o), r) {
                    let len =
                        self.shadows.iter().position(|g| g.addr == s).and_then(|k| VARS.get(k)).map_or(0, |v| v.1);
                    self.addr[slot as usize % self.addr.len()] = Span { addr, len };
                }
            }
            Call::GetSymbolSize { out, symbol } => {
                let (o, s) = (self.out(out, 8)?, self.ptr(symbol));
                self.call("cudaGetSymbolSize", format_args!("{o:#x}, {s:#x}"), |a| unsafe {
                    (a.get_symbol_size)(o, s)
                });
            }
            Call::MemGetInfo { free, total } => {
                let (f, t) = (self.out(free, 8)?, self.out(total, 8)?);
                self.call("cudaMemGetInfo", format_args!("{f:#x}, {t:#x}"), |a| unsafe { (a.mem_get_info)(f, t) });
            }
            _ => {}
        }
        Ok(())
    }

    /// Copies and sets.
    fn copy(&mut self, call: &Call) -> Result<(), HarnessError> {
        match *call {
            Call::Memcpy { dst, src, n, kind, stream } => {
                let (d, s, n) = (self.ptr(dst), self.ptr(src), self.clamp(self.size(n), &[dst, src]));
                match stream.map(|h| self.handle(h)) {
                    None => self.call("cudaMemcpy", format_args!("{d:#x}, {s:#x}, {n}, {kind}"), |a| unsafe {
                        (a.memcpy)(d, s, n, kind)
                    }),
                    Some(h) => {
                        self.call("cudaMemcpyAsync", format_args!("{d:#x}, {s:#x}, {n}, {kind}, {h:#x}"), |a| unsafe {
                            (a.memcpy_async)(d, s, n, kind, h)
                        })
                    }
                };
            }
            Call::Memset { p, value, n, stream } => {
                let (d, n) = (self.ptr(p), self.clamp(self.size(n), &[p]));
                match stream.map(|h| self.handle(h)) {
                    None => self.call("cudaMemset", format_args!("{d:#x}, {value}, {n}"), |a| unsafe {
                        (a.memset)(d, value, n)
                    }),
                    Some(h) => self.call("cudaMemsetAsync", format_args!("{d:#x}, {value}, {n}, {h:#x}"), |a| unsafe {
                        (a.memset_async)(d, value, n, h)
                    }),
                };
            }
            Call::SymbolCopy { to, symbol, other, n, offset, kind, stream } => {
                let (s, o) = (self.ptr(symbol), self.ptr(other));
                let (n, off) = (self.clamp(self.size(n), &[other]), self.size(offset));
                let (first, second) = if to { (s, o) } else { (o, s) };
                let name = match (to, stream.is_some()) {
                    (true, false) => "cudaMemcpyToSymbol",
                    (false, false) => "cudaMemcpyFromSymbol",
                    (true, true) => "cudaMemcpyToSymbolAsync",
                    (false, true) => "cudaMemcpyFromSymbolAsync",
                };
                let h = stream.map_or(0, |h| self.handle(h));
                let tail = if stream.is_some() { format!(", {h:#x}") } else { String::new() };
                self.call(name, format_args!("{first:#x}, {second:#x}, {n}, {off}, {kind}{tail}"), |a| unsafe {
                    match (to, stream.is_some()) {
                        (true, false) => (a.memcpy_to_symbol)(s, o, n, off, kind),
                        (false, false) => (a.memcpy_from_symbol)(o, s, n, off, kind),
                        (true, true) => (a.memcpy_to_symbol_async)(s, o, n, off, kind, h),
                        (false, true) => (a.memcpy_from_symbol_async)(o, s, n, off, kind, h),
                    }
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// Streams and events.
    fn stream(&mut self, call: &Call) -> Result<(), HarnessError> {
        match *call {
            Call::StreamCreate { out, slot, how, flags, priority } => {
                let o = self.out(out, 8)?;
                let r = match how {
                    0 => self.call("cudaStreamCreate", format_args!("{o:#x}"), |a| unsafe { (a.stream_create)(o) }),
                    1 => self.call("cudaStreamCreateWithFlags", format_args!("{o:#x}, {flags}"), |a| unsafe {
                        (a.stream_create_with_flags)(o, flags)
                    }),
                    _ => self.call(
                        "cudaStreamCreateWithPriority",
                        format_args!("{o:#x}, {flags}, {priority}"),
                        |a| unsafe { (a.stream_create_with_priority)(o, flags, priority) },
                    ),
                };
                if let (Some(h), 0) = (self.got(out, o), r) {
                    self.streams[slot as usize % self.streams.len()] = h;
                }
            }
            Call::StreamDestroy { stream } => {
                let h = self.handle(stream);
                self.call("cudaStreamDestroy", format_args!("{h:#x}"), |a| unsafe { (a.stream_destroy)(h) });
            }
            Call::StreamSync { stream, query } => {
                let h = self.handle(stream);
                match query {
                    false => self.call("cudaStreamSynchronize", format_args!("{h:#x}"), |a| unsafe {
                        (a.stream_synchronize)(h)
                    }),
                    true => self.call("cudaStreamQuery", format_args!("{h:#x}"), |a| unsafe { (a.stream_query)(h) }),
                };
            }
            Call::StreamWaitEvent { stream, event, flags } => {
                let (s, e) = (self.handle(stream), self.handle(event));
                self.call("cudaStreamWaitEvent", format_args!("{s:#x}, {e:#x}, {flags}"), |a| unsafe {
                    (a.stream_wait_event)(s, e, flags)
                });
            }
            Call::EventCreate { out, slot, flags } => {
                let o = self.out(out, 8)?;
                let r = match flags {
                    None => self.call("cudaEventCreate", format_args!("{o:#x}"), |a| unsafe { (a.event_create)(o) }),
                    Some(f) => self.call("cudaEventCreateWithFlags", format_args!("{o:#x}, {f}"), |a| unsafe {
                        (a.event_create_with_flags)(o, f)
                    }),
                };
                if let (Some(h), 0) = (self.got(out, o), r) {
                    self.events[slot as usize % self.events.len()] = h;
                }
            }
            Call::EventRecord { event, stream, flags } => {
                let (e, s) = (self.handle(event), self.handle(stream));
                match flags {
                    None => self
                        .call("cudaEventRecord", format_args!("{e:#x}, {s:#x}"), |a| unsafe { (a.event_record)(e, s) }),
                    Some(f) => self.call("cudaEventRecordWithFlags", format_args!("{e:#x}, {s:#x}, {f}"), |a| unsafe {
                        (a.event_record_with_flags)(e, s, f)
                    }),
                };
            }
            Call::EventSync { event, query } => {
                let e = self.handle(event);
                match query {
                    false => self
                        .call("cudaEventSynchronize", format_args!("{e:#x}"), |a| unsafe { (a.event_synchronize)(e) }),
                    true => self.call("cudaEventQuery", format_args!("{e:#x}"), |a| unsafe { (a.event_query)(e) }),
                };
            }
            Call::EventDestroy { event } => {
                let e = self.handle(event);
                self.call("cudaEventDestroy", format_args!("{e:#x}"), |a| unsafe { (a.event_destroy)(e) });
            }
            Call::EventElapsed { out, start, end } => {
                let (o, s, e) = (self.out(out, 4)?, self.handle(start), self.handle(end));
                self.call("cudaEventElapsedTime", format_args!("{o:#x}, {s:#x}, {e:#x}"), |a| unsafe {
                    (a.event_elapsed_time)(o, s, e)
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// A kernel argument array: each value in its own cell, the array in one, as the plan says.
    fn args(&mut self, args: &Args) -> Result<u64, HarnessError> {
        let (vals, bad) = match args {
            Args::At(p) => return Ok(self.ptr(*p)),
            Args::Array(v) => (v, None),
            Args::BadElem(v, i, p) => (v, Some((*i as usize, self.ptr(*p)))),
        };
        let mut array = Vec::with_capacity(vals.len() * 8);
        for (i, v) in vals.iter().enumerate() {
            let at = match (bad, v) {
                (Some((j, p)), _) if j == i => p,
                (_, ArgVal::Ptr(p)) => {
                    let value = self.ptr(*p);
                    self.cell_with(&value.to_le_bytes())?
                }
                (_, ArgVal::U32(x)) => self.cell_with(&x.to_le_bytes())?,
            };
            array.extend_from_slice(&at.to_le_bytes());
        }
        self.cell_with(&array)
    }

    /// Launches, and the launch path's pieces on their own.
    fn launch(&mut self, call: &Call) -> Result<(), HarnessError> {
        let dim = |d: Dim| Dim3 { x: d.0, y: d.1, z: d.2 };
        match call {
            Call::Push { grid, block, shared, stream } => {
                let (g, b, s, h) = (dim(*grid), dim(*block), *shared, self.handle(*stream));
                self.call("__cudaPushCallConfiguration", format_args!("{g:?}, {b:?}, {s}, {h:#x}"), |a| unsafe {
                    (a.push_call_configuration)(g, b, s, h)
                });
            }
            Call::Pop { grid, block, shared, stream } => {
                let (g, b) = (self.out(*grid, 12)?, self.out(*block, 12)?);
                let (s, h) = (self.out(*shared, 8)?, self.out(*stream, 8)?);
                self.call("__cudaPopCallConfiguration", format_args!("{g:#x}, {b:#x}, {s:#x}, {h:#x}"), |a| unsafe {
                    (a.pop_call_configuration)(g, b, s, h)
                });
            }
            Call::GetKernel { out, func } => {
                let (o, f) = (self.out(*out, 8)?, self.func(*func));
                self.call("__cudaGetKernel", format_args!("{o:#x}, {f:#x}"), |a| unsafe { (a.get_kernel)(o, f) });
            }
            Call::Launch { path, func, grid, block, shared, stream, args } => {
                let (f, h, p) = (self.func(*func), self.handle(*stream), self.args(args)?);
                match path {
                    LaunchPath::Stub | LaunchPath::StubPtsz => {
                        self.stub_launch(*path, f, (dim(*grid), dim(*block)), *shared, h, p)?
                    }
                    LaunchPath::Api | LaunchPath::ApiPtsz => {
                        let (g, b, s, api) = (dim(*grid), dim(*block), *shared, *path == LaunchPath::Api);
                        let name = if api { "cudaLaunchKernel" } else { "cudaLaunchKernel_ptsz" };
                        self.call(name, format_args!("{f:#x}, {g:?}, {b:?}, {p:#x}, {s}, {h:#x}"), |a| unsafe {
                            if api {
                                (a.launch_kernel)(f, g, b, p, s, h)
                            } else {
                                (a.launch_kernel_ptsz)(f, g, b, p, s, h)
                            }
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `<<<grid, block, shared, stream>>>` as nvcc compiles it: the call site pushes the configuration;
    /// the stub pops it (and returns when that fails), asks for the kernel handle and launches.
    fn stub_launch(
        &mut self,
        path: LaunchPath,
        f: u64,
        dims: (Dim3, Dim3),
        shared: u64,
        stream: u64,
        args: u64,
    ) -> Result<(), HarnessError> {
        let (g, b) = dims;
        self.call("__cudaPushCallConfiguration", format_args!("{g:?}, {b:?}, {shared}, {stream:#x}"), |a| unsafe {
            (a.push_call_configuration)(g, b, shared, stream)
        });
        let (gc, bc, sc, hc) = (self.cell(12)?, self.cell(12)?, self.cell(8)?, self.cell(8)?);
        let r =
            self.call("__cudaPopCallConfiguration", format_args!("{gc:#x}, {bc:#x}, {sc:#x}, {hc:#x}"), |a| unsafe {
                (a.pop_call_configuration)(gc, bc, sc, hc)
            });
        if r != 0 {
            return Ok(());
        }
        // SAFETY: the four cells are ours, of the sizes read.
        let (g, b, s, h) = unsafe {
            (
                std::ptr::read_unaligned(gc as *const Dim3),
                std::ptr::read_unaligned(bc as *const Dim3),
                std::ptr::read_unaligned(sc as *const u64),
                std::ptr::read_unaligned(hc as *const u64),
            )
        };
        let kc = self.cell(8)?;
        let r = self.call("__cudaGetKernel", format_args!("{kc:#x}, {f:#x}"), |a| unsafe { (a.get_kernel)(kc, f) });
        // SAFETY: the cell is ours.
        let k = if r == 0 { unsafe { std::ptr::read_unaligned(kc as *const u64) } } else { f };
        let plain = path == LaunchPath::Stub;
        let name = if plain { "__cudaLaunchKernel" } else { "__cudaLaunchKernel_ptsz" };
        self.call(name, format_args!("{k:#x}, {g:?}, {b:?}, {args:#x}, {s}, {h:#x}"), |a| unsafe {
            if plain {
                (a.launch_stub)(k, g, b, args, s, h)
            } else {
                (a.launch_stub_ptsz)(k, g, b, args, s, h)
            }
        });
        Ok(())
    }

    /// Per-function settings and queries.
    fn function(&mut self, call: &Call) -> Result<(), HarnessError> {
        match *call {
            Call::FuncSetCacheConfig { func, config } => {
                let f = self.func(func);
                self.call("cudaFuncSetCacheConfig", format_args!("{f:#x}, {config}"), |a| unsafe {
                    (a.func_set_cache_config)(f, config)
                });
            }
            Call::FuncSetAttribute { func, attr, value } => {
                let f = self.func(func);
                self.call("cudaFuncSetAttribute", format_args!("{f:#x}, {attr}, {value}"), |a| unsafe {
                    (a.func_set_attribute)(f, attr, value)
                });
            }
            Call::FuncGetAttributes { out, func } => {
                let (o, f) = (self.out(out, 144)?, self.func(func));
                self.call("cudaFuncGetAttributes", format_args!("{o:#x}, {f:#x}"), |a| unsafe {
                    (a.func_get_attributes)(o, f)
                });
            }
            Call::Occupancy { out, func, block, shared, flags } => {
                let (o, f) = (self.out(out, 4)?, self.func(func));
                match flags {
                    None => self.call(
                        "cudaOccupancyMaxActiveBlocksPerMultiprocessor",
                        format_args!("{o:#x}, {f:#x}, {block}, {shared}"),
                        |a| unsafe { (a.occupancy)(o, f, block, shared) },
                    ),
                    Some(fl) => self.call(
                        "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
                        format_args!("{o:#x}, {f:#x}, {block}, {shared}, {fl}"),
                        |a| unsafe { (a.occupancy_with_flags)(o, f, block, shared, fl) },
                    ),
                };
            }
            _ => {}
        }
        Ok(())
    }

    /// Device queries and settings, calls without arguments, errors and versions.
    fn device(&mut self, call: &Call) -> Result<(), HarnessError> {
        match *call {
            Call::GetDeviceCount { out } => {
                let o = self.out(out, 4)?;
                self.call("cudaGetDeviceCount", format_args!("{o:#x}"), |a| unsafe { (a.get_device_count)(o) });
            }
            Call::SetDevice { device } => {
                self.call("cudaSetDevice", format_args!("{device}"), |a| unsafe { (a.set_device)(device) });
            }
            Call::GetDevice { out } => {
                let o = self.out(out, 4)?;
                self.call("cudaGetDevice", format_args!("{o:#x}"), |a| unsafe { (a.get_device)(o) });
            }
            Call::GetDeviceProperties { out, device } => {
                let o = self.out(out, 1008)?;
                self.call("cudaGetDeviceProperties", format_args!("{o:#x}, {device}"), |a| unsafe {
                    (a.get_device_properties)(o, device)
                });
            }
            Call::DeviceGetAttribute { out, attr, device } => {
                let o = self.out(out, 4)?;
                self.call("cudaDeviceGetAttribute", format_args!("{o:#x}, {attr}, {device}"), |a| unsafe {
                    (a.device_get_attribute)(o, attr, device)
                });
            }
            Call::Plain(p) => self.plain(p),
            Call::DeviceSetLimit { limit, value } => {
                self.call("cudaDeviceSetLimit", format_args!("{limit}, {value}"), |a| unsafe {
                    (a.device_set_limit)(limit, value)
                });
            }
            Call::DeviceGetLimit { out, limit } => {
                let o = self.out(out, 8)?;
                self.call("cudaDeviceGetLimit", format_args!("{o:#x}, {limit}"), |a| unsafe {
                    (a.device_get_limit)(o, limit)
                });
            }
            Call::GetDeviceFlags { out } => {
                let o = self.out(out, 4)?;
                self.call("cudaGetDeviceFlags", format_args!("{o:#x}"), |a| unsafe { (a.get_device_flags)(o) });
            }
            Call::StreamPriorityRange { least, greatest } => {
                let (l, g) = (self.out(least, 4)?, self.out(greatest, 4)?);
                self.call("cudaDeviceGetStreamPriorityRange", format_args!("{l:#x}, {g:#x}"), |a| unsafe {
                    (a.device_get_stream_priority_range)(l, g)
                });
            }
            Call::DeviceSetCacheConfig { config } => {
                self.call("cudaDeviceSetCacheConfig", format_args!("{config}"), |a| unsafe {
                    (a.device_set_cache_config)(config)
                });
            }
            Call::SetDeviceFlags { flags } => {
                self.call("cudaSetDeviceFlags", format_args!("{flags}"), |a| unsafe { (a.set_device_flags)(flags) });
            }
            Call::ErrorText { code, name } => self.error_text(code, name),
            Call::Version { out, runtime } => {
                let o = self.out(out, 4)?;
                match runtime {
                    false => self
                        .call("cudaDriverGetVersion", format_args!("{o:#x}"), |a| unsafe { (a.driver_get_version)(o) }),
                    true => self.call("cudaRuntimeGetVersion", format_args!("{o:#x}"), |a| unsafe {
                        (a.runtime_get_version)(o)
                    }),
                };
            }
            _ => {}
        }
        Ok(())
    }

    /// A call without arguments.
    fn plain(&mut self, p: Plain) {
        let (name, f): (&str, unsafe extern "C" fn() -> i32) = match p {
            Plain::DeviceSynchronize => ("cudaDeviceSynchronize", self.api.device_synchronize),
            Plain::ThreadSynchronize => ("cudaThreadSynchronize", self.api.thread_synchronize),
            Plain::DeviceReset => ("cudaDeviceReset", self.api.device_reset),
            Plain::ThreadExit => ("cudaThreadExit", self.api.thread_exit),
            Plain::GetLastError => ("cudaGetLastError", self.api.get_last_error),
            Plain::PeekAtLastError => ("cudaPeekAtLastError", self.api.peek_at_last_error),
            Plain::ProfilerStart => ("cudaProfilerStart", self.api.profiler_start),
            Plain::ProfilerStop => ("cudaProfilerStop", self.api.profiler_stop),
            Plain::MemPrefetchAsync => ("cudaMemPrefetchAsync", self.api.mem_prefetch_async),
            Plain::MemAdvise => ("cudaMemAdvise", self.api.mem_advise),
        };
        self.call(name, format_args!(""), |_| unsafe { f() });
    }

    /// `cudaGetErrorString` or `cudaGetErrorName`, and the text read back (a bad pointer crashes here,
    /// after the log has recorded it).
    fn error_text(&mut self, code: i32, name: bool) {
        let p = match name {
            false => self.call("cudaGetErrorString", format_args!("{code}"), |a| unsafe { (a.get_error_string)(code) }),
            true => self.call("cudaGetErrorName", format_args!("{code}"), |a| unsafe { (a.get_error_name)(code) }),
        };
        if p != 0 {
            // SAFETY: the runtime returns a NUL-terminated static string (the point of reading it is to
            // find out when it does not).
            let text = unsafe { std::ffi::CStr::from_ptr(p as *const std::ffi::c_char) }.to_string_lossy().into_owned();
            self.log.write(format_args!("    text {text:?}\n"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any offset from a host buffer stays between its guard pages: wild offsets land in a guard, never
    /// in another mapping.
    #[test]
    fn host_pointers_stay_between_the_guards() {
        for len in [0, 1, 8, 4096, 65_543] {
            let g = Guarded::new(len, false, |b| b.fill(1)).expect("maps");
            let (lo, hi) = (g.map, g.map + g.map_len as u64);
            for off in [
                Off::At(0),
                Off::At(1 << 20),
                Off::At(1 << 32),
                Off::At(u64::MAX),
                Off::At(1 << 63),
                Off::End(4096),
                Off::End(-1),
            ] {
                let a = g.at(off);
                assert!(a >= lo && a < hi, "len {len} {off:?}: {a:#x} outside {lo:#x}..{hi:#x}");
            }
            assert_eq!(g.at(Off::At(0)), g.addr);
            assert_eq!(g.at(Off::End(0)), g.addr + len);
            assert_eq!(g.addr + len, hi - page(), "the buffer ends at the trailing guard");
        }
    }
}
