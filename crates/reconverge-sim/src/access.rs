//! What the executor's memory accesses look like from outside the core: the global memory it reads and
//! writes ([`GlobalMemory`]: device memory itself in functional mode, a per-SM epoch view in the timing
//! model), atomic requests, and the per-lane log of an instruction's accesses the timing model times.

use crate::alu;
use crate::layout::{CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE};
use crate::memory::{DeviceMemory, MemFault};
use crate::program::{AtomOp, Reg, Space};
use crate::types::{full_mask, LaneMask};

/// Device (global) memory as the executor sees it: the functional machine uses [`DeviceMemory`] directly;
/// the timing model puts a per-SM view in front of it (stores buffered until an epoch ends, atomics
/// deferred) so that SMs simulated on different host threads stay deterministic.
pub trait GlobalMemory {
    /// Reads `size` bytes at `addr`.
    fn read(&self, addr: u64, size: u32) -> Result<u64, MemFault>;
    /// Writes the low `size` bytes of `value`; returns whether the memory changed.
    fn write(&mut self, addr: u64, size: u32, value: u64) -> Result<bool, MemFault>;
    /// An atomic read-modify-write: returns the old value when performed now, or `None` when deferred (the
    /// implementation then writes the old value into `dst` of `thread` itself, later), and whether memory
    /// changed now (a failing `cas` changes nothing, which the livelock watchdog relies on).
    fn atomic(&mut self, a: AtomicRequest) -> Result<(Option<u64>, bool), MemFault>;
    /// The allocations, for error messages.
    fn allocations(&self) -> &[crate::memory::Allocation];
    /// The `len` bytes at `addr` when one allocation holds them all and they are exactly what
    /// [`read`](Self::read) would return there: the executor then serves a whole warp's load from them
    /// with one lookup. `None` (the default) makes it read lane by lane.
    fn span(&self, _addr: u64, _len: u64) -> Option<&[u8]> {
        None
    }
    /// The `len` bytes at `addr`, writable, when one allocation holds them all and writing them directly
    /// is exactly what [`write`](Self::write) would do (nothing else to log or buffer). `None` (the
    /// default) makes the executor write lane by lane.
    fn span_mut(&mut self, _addr: u64, _len: u64) -> Option<&mut [u8]> {
        None
    }
}

/// One lane's atomic operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtomicRequest {
    /// Global address.
    pub addr: u64,
    /// The operation.
    pub op: AtomOp,
    /// The data type.
    pub ty: reconverge_ir::ScalarType,
    /// Operand `b`.
    pub b: u64,
    /// Operand `c` (compare-and-swap's new value).
    pub c: u64,
    /// The SM's slot of the thread's CTA.
    pub cta_slot: u32,
    /// The thread slot in its CTA.
    pub thread: u32,
    /// The destination register, if the old value is wanted.
    pub dst: Option<Reg>,
}

impl GlobalMemory for DeviceMemory {
    #[inline]
    fn read(&self, addr: u64, size: u32) -> Result<u64, MemFault> {
        DeviceMemory::read(self, addr, size)
    }
    #[inline]
    fn write(&mut self, addr: u64, size: u32, value: u64) -> Result<bool, MemFault> {
        let changed = DeviceMemory::read(self, addr, size)? != value & full_mask(size * 8);
        DeviceMemory::write(self, addr, size, value)?;
        Ok(changed)
    }
    fn atomic(&mut self, a: AtomicRequest) -> Result<(Option<u64>, bool), MemFault> {
        let size = a.ty.bytes();
        let old = DeviceMemory::read(self, a.addr, size)?;
        let new = alu::atom(a.op, a.ty, old, a.b, a.c);
        if new != old {
            DeviceMemory::write(self, a.addr, size, new)?;
        }
        Ok((Some(old), new != old))
    }
    fn allocations(&self) -> &[crate::memory::Allocation] {
        DeviceMemory::allocations(self)
    }
    #[inline]
    fn span(&self, addr: u64, len: u64) -> Option<&[u8]> {
        self.bytes(addr, len)
    }
    #[inline]
    fn span_mut(&mut self, addr: u64, len: u64) -> Option<&mut [u8]> {
        self.bytes_mut(addr, len)
    }
}

/// The memory accesses of the last executed instruction, per active lane (for the timing model).
#[derive(Clone, Debug)]
pub struct AccessLog {
    /// Whether accesses are recorded at all.
    pub enabled: bool,
    /// Lanes that accessed memory.
    pub mask: LaneMask,
    /// The state space each lane's access resolved to.
    pub space: [Space; 64],
    /// The address (within that space) of each lane's first element.
    pub addr: [u64; 64],
    /// Bytes per lane (all vector elements).
    pub bytes: u32,
    /// What kind of access.
    pub kind: AccessKind,
    /// For [`AccessKind::Texture`]: the address of every texel the lanes read (with repeats), in lane
    /// order; `addr` holds each lane's first.
    pub texels: Vec<u64>,
}

/// Loads, stores and atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// A load.
    Load,
    /// A store.
    Store,
    /// An atomic or reduction.
    Atomic,
    /// A texture fetch (`tex`, `tld4`): read through the texture cache; the texels are in
    /// [`AccessLog::texels`].
    Texture,
}

impl Default for AccessLog {
    fn default() -> Self {
        AccessLog {
            enabled: false,
            mask: 0,
            space: [Space::Global; 64],
            addr: [0; 64],
            bytes: 0,
            kind: AccessKind::Load,
            texels: Vec::new(),
        }
    }
}

impl AccessLog {
    #[inline]
    pub(crate) fn begin(&mut self, kind: AccessKind, bytes: u32) {
        self.mask = 0;
        self.kind = kind;
        self.bytes = bytes;
        self.texels.clear();
    }

    /// Records a texel a texture fetch read (global address).
    #[inline]
    pub(crate) fn record_texel(&mut self, addr: u64) {
        if self.enabled {
            self.texels.push(addr);
        }
    }

    #[inline]
    pub(crate) fn record(&mut self, lane: usize, space: Space, addr: u64) {
        if self.enabled {
            let (sp, a) = resolve(space, addr);
            self.mask |= 1 << lane;
            self.space[lane] = sp;
            self.addr[lane] = a;
        }
    }

    /// Adds the lanes of `other`, the accesses of the same instruction by other lanes (executed for
    /// another CTA), whose shared-memory addresses lie `shared_base` bytes into the SM's shared memory.
    pub(crate) fn absorb(&mut self, other: &AccessLog, shared_base: u64) {
        if other.mask == 0 {
            return;
        }
        self.kind = other.kind;
        self.bytes = other.bytes;
        self.texels.extend_from_slice(&other.texels);
        for l in crate::types::lanes(other.mask) {
            self.space[l] = other.space[l];
            self.addr[l] = other.addr[l] + if other.space[l] == Space::Shared { shared_base } else { 0 };
        }
        self.mask |= other.mask;
    }
}

/// Resolves an address of `space` for one lane to (concrete space, address within it).
#[inline]
pub fn resolve(space: Space, addr: u64) -> (Space, u64) {
    match space {
        Space::Generic => {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Space::Shared, addr - SHARED_WINDOW)
            } else if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Space::Local, addr - LOCAL_WINDOW)
            } else if (CONST_WINDOW..CONST_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Space::Const, addr - CONST_WINDOW)
            } else if (PARAM_WINDOW..PARAM_WINDOW + WINDOW_SIZE).contains(&addr) {
                (Space::KernelParam, addr - PARAM_WINDOW)
            } else {
                (Space::Global, addr)
            }
        }
        s => (s, addr),
    }
}
