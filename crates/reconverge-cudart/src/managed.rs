//! Managed memory: `cudaMallocManaged` allocations and the host copies of `__managed__` variables.
//!
//! A managed allocation is host memory mapped at a fixed address in a region of its own
//! ([`MANAGED_BASE`]), so the host and the simulated device use the same pointer. Between launches the
//! host's bytes are the truth; for a launch each block is copied into device memory at its address (its
//! host pages released meanwhile) and copied back after (launches are synchronous, so no host access can
//! come in between). Every block counts against the memory limit (`Runtime::held`).

use crate::error::{self as cuda, CudaError};
use crate::mirror::Mirror;
use reconverge_sim::memory::DeviceMemory;

/// First address of managed memory: far above `cudaMalloc`'s allocations and below the simulator's
/// shared, local, constant and parameter windows, inside the 47-bit user address space.
pub const MANAGED_BASE: u64 = 0x0000_2000_0000_0000;

/// The end of the managed region: the simulator's shared-memory window starts there.
const MANAGED_END: u64 = reconverge_program::layout::SHARED_WINDOW;

/// Unmapped addresses between two managed blocks: an overrun faults in the simulator as it would past a
/// `cudaMalloc` allocation.
const GUARD: u64 = 1 << 20;

/// One managed block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagedBlock {
    /// Its address (host and device).
    pub addr: u64,
    /// Its length in bytes.
    pub len: u64,
    /// What it is, for messages (`cudaMallocManaged(64)`, `__managed__ sum`).
    pub name: String,
}

/// Every managed block of the process.
#[derive(Debug, Default)]
pub struct ManagedRegion {
    blocks: Vec<ManagedBlock>,
    next: u64,
}

impl ManagedRegion {
    /// Maps a zeroed block of `len` bytes; its address. (The memory limit is the caller's:
    /// [`crate::runtime::Runtime::malloc_managed`].)
    pub fn alloc(&mut self, len: u64, name: String) -> Result<u64, CudaError> {
        let pages = Self::mapped_len(len).ok_or(cuda::MEMORY_ALLOCATION)?;
        let size = usize::try_from(pages).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        let step = pages.checked_add(GUARD).ok_or(cuda::MEMORY_ALLOCATION)?;
        let mut hint = self.next.max(MANAGED_BASE);
        for _ in 0..64 {
            if hint.checked_add(step).is_none_or(|end| end > MANAGED_END) {
                break;
            }
            // SAFETY: an anonymous private mapping at an address nothing else uses (MAP_FIXED_NOREPLACE
            // refuses to replace an existing mapping); its memory is ours until `free`.
            let p = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    size,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED && p as u64 == hint {
                self.next = hint + step;
                self.blocks.push(ManagedBlock { addr: hint, len, name });
                return Ok(hint);
            }
            if p != libc::MAP_FAILED {
                // An old kernel that ignores MAP_FIXED_NOREPLACE placed it elsewhere: give it back.
                // SAFETY: `p` is the mapping just made, `size` long.
                unsafe { libc::munmap(p, size) };
            }
            hint += step;
        }
        Err(cuda::MEMORY_ALLOCATION)
    }

    /// The bytes mapped for a block of `len` bytes (whole pages, at least one); `None` when that
    /// overflows.
    fn mapped_len(len: u64) -> Option<u64> {
        len.max(1).div_ceil(4096).checked_mul(4096)
    }

    /// Unmaps the block at `addr`; false when none starts there.
    pub fn free(&mut self, addr: u64) -> bool {
        let Some(i) = self.blocks.iter().position(|b| b.addr == addr) else { return false };
        let b = self.blocks.remove(i);
        let size = Self::mapped_len(b.len).unwrap_or(0) as usize;
        // SAFETY: the block was mapped by `alloc` with this length rounded to pages, and is unmapped once.
        unsafe { libc::munmap(b.addr as *mut libc::c_void, size) };
        true
    }

    /// The addresses managed blocks are placed in so far, `[MANAGED_BASE, end)`: an address in it that
    /// no live block holds is a freed block, a guard, or an overrun, never host memory.
    pub fn window(&self) -> (u64, u64) {
        (MANAGED_BASE, self.next.max(MANAGED_BASE))
    }

    /// The block holding all of `[addr, addr + len)` (`len` at least 1), if any.
    pub fn block_holding(&self, addr: u64, len: u64) -> Option<&ManagedBlock> {
        let end = addr.checked_add(len.max(1))?;
        self.blocks.iter().find(|b| addr >= b.addr && end <= b.addr + b.len)
    }

    /// The bytes `[addr, addr + len)` when one block holds them all.
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if len == 0 {
            return Some(&[]);
        }
        self.block_holding(addr, len)?;
        // SAFETY: a live mapping of this region holds the whole range; it stays mapped while `self` is
        // borrowed (only `free`, through `&mut self`, unmaps it).
        Some(unsafe { std::slice::from_raw_parts(addr as *const u8, len as usize) })
    }

    /// The bytes `[addr, addr + len)`, writable, when one block holds them all.
    pub fn bytes_mut(&mut self, addr: u64, len: u64) -> Option<&mut [u8]> {
        if len == 0 {
            return Some(&mut []);
        }
        self.block_holding(addr, len)?;
        // SAFETY: as in `bytes`; the exclusive borrow of `self` keeps the shim from handing out another
        // slice of it meanwhile (the host program itself is inside a runtime call).
        Some(unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len as usize) })
    }

    /// The bytes of every block together: what managed memory holds against the memory limit.
    pub fn held(&self) -> u64 {
        self.blocks.iter().map(|b| b.len).fold(0, u64::saturating_add)
    }

    /// Every block as the device sees it: at its own address, written back after a launch.
    fn mirrors(&self) -> impl Iterator<Item = Mirror<'_>> {
        self.blocks.iter().map(|b| Mirror { host: b.addr, device: b.addr, len: b.len, name: &b.name, write_back: true })
    }

    /// Copies every block into `mem` at its own address, for one launch ([`crate::mirror::map_into`]), and
    /// releases the host pages (`MADV_DONTNEED`) so that a block is held once, not twice, while the launch
    /// runs. When the host cannot hold a copy: `cudaErrorMemoryAllocation`, with the blocks copied so far
    /// still in `mem` ([`ManagedRegion::take_back`] puts them back).
    pub fn map_into(&self, mem: &mut DeviceMemory) -> Result<(), CudaError> {
        crate::mirror::map_into(self.mirrors(), mem)?;
        for b in self.blocks.iter().filter(|b| mem.allocation(b.addr).is_some()) {
            if let Some(size) = Self::mapped_len(b.len) {
                // SAFETY: the block's own pages, copied just above; they read as zeros until `take_back`
                // writes the device's bytes over them (no host access comes in between: launches are
                // synchronous and the program is inside the launch call).
                unsafe { libc::madvise(b.addr as *mut libc::c_void, size as usize, libc::MADV_DONTNEED) };
            }
        }
        Ok(())
    }

    /// Copies every block back from `mem` after a launch and takes it out of device memory
    /// ([`crate::mirror::take_back`]).
    pub fn take_back(&mut self, mem: &mut DeviceMemory) {
        crate::mirror::take_back(self.mirrors(), mem);
    }

    /// Reserves `len` bytes of addresses in the managed region that nothing is mapped at, between guards
    /// (the device alias of page-locked host memory whose own addresses the device cannot use,
    /// [`crate::pinned`]); its first address. No later block is placed over it.
    pub fn reserve(&mut self, len: u64) -> Result<u64, CudaError> {
        let step = Self::mapped_len(len).and_then(|p| p.checked_add(GUARD)).ok_or(cuda::MEMORY_ALLOCATION)?;
        let at = self.next.max(MANAGED_BASE);
        let end = at.checked_add(step).filter(|&e| e <= MANAGED_END).ok_or(cuda::MEMORY_ALLOCATION)?;
        self.next = end;
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_host_memory_at_fixed_addresses_that_round_trip_through_the_device() {
        let mut r = ManagedRegion::default();
        let a = r.alloc(16, "a".into()).expect("maps");
        let b = r.alloc(5000, "b".into()).expect("maps");
        assert!(a >= MANAGED_BASE && b >= a + 4096 + GUARD, "other tests may hold the first addresses");
        assert_eq!(r.held(), 5016);
        // SAFETY: `a` is a live 16-byte managed block.
        unsafe { *(a as *mut u32) = 7 };
        let mut mem = DeviceMemory::new();
        r.map_into(&mut mem).expect("fits");
        assert_eq!(mem.read(a, 4).expect("mapped"), 7);
        // SAFETY: as above.
        assert_eq!(unsafe { *(a as *const u32) }, 0, "the host pages are released during the launch");
        mem.write(a + 4, 4, 9).expect("mapped");
        r.take_back(&mut mem);
        assert!(mem.allocations().is_empty());
        // SAFETY: as above.
        assert_eq!(unsafe { *((a + 4) as *const u32) }, 9);
        assert_eq!(r.block_holding(a + 3, 13).map(|b| b.addr), Some(a));
        assert!(r.block_holding(a + 3, 14).is_none(), "past the block's end");
        assert!(r.bytes(a, u64::MAX).is_none() && r.bytes(u64::MAX, 2).is_none(), "wrapping ends");
        assert!(r.bytes_mut(b + 4999, 1).is_some() && r.bytes_mut(b + 5000, 1).is_none());
        let (lo, hi) = r.window();
        assert!(lo == MANAGED_BASE && hi > b + 5000);
        assert_eq!(r.alloc(u64::MAX, "huge".into()), Err(cuda::MEMORY_ALLOCATION));
        assert!(r.free(a) && !r.free(a));
        assert!(r.free(b));
    }
}
