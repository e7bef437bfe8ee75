//! Managed memory: `cudaMallocManaged` allocations and the host copies of `__managed__` variables.
//!
//! A managed allocation is host memory mapped at a fixed address in a region of its own
//! ([`MANAGED_BASE`]), so the host and the simulated device use the same pointer. Between launches the
//! host's bytes are the truth; for a launch each block is copied into device memory at its address and
//! copied back after (launches are synchronous, so no host access can come in between).

use crate::error::{self as cuda, CudaError};
use reconverge_sim::memory::DeviceMemory;

/// First address of managed memory: far above `cudaMalloc`'s allocations and below the simulator's
/// shared, local, constant and parameter windows, inside the 47-bit user address space.
pub const MANAGED_BASE: u64 = 0x0000_2000_0000_0000;

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
    /// Maps a zeroed block of `len` bytes; its address.
    pub fn alloc(&mut self, len: u64, name: String) -> Result<u64, CudaError> {
        let pages = len.max(1).div_ceil(4096) * 4096;
        let mut hint = self.next.max(MANAGED_BASE);
        for _ in 0..64 {
            // SAFETY: an anonymous private mapping at an address nothing else uses (MAP_FIXED_NOREPLACE
            // refuses to replace an existing mapping); its memory is ours until `free`.
            let p = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    pages as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED && p as u64 == hint {
                self.next = hint + pages + GUARD;
                self.blocks.push(ManagedBlock { addr: hint, len, name });
                return Ok(hint);
            }
            if p != libc::MAP_FAILED {
                // An old kernel that ignores MAP_FIXED_NOREPLACE placed it elsewhere: give it back.
                // SAFETY: `p` is the mapping just made, `pages` long.
                unsafe { libc::munmap(p, pages as usize) };
            }
            hint += pages + GUARD;
        }
        Err(cuda::MEMORY_ALLOCATION)
    }

    /// Unmaps the block at `addr`; false when none starts there.
    pub fn free(&mut self, addr: u64) -> bool {
        let Some(i) = self.blocks.iter().position(|b| b.addr == addr) else { return false };
        let b = self.blocks.remove(i);
        // SAFETY: the block was mapped by `alloc` with this length rounded to pages, and is unmapped once.
        unsafe { libc::munmap(b.addr as *mut libc::c_void, (b.len.max(1).div_ceil(4096) * 4096) as usize) };
        true
    }

    /// The block holding `addr`, if any.
    pub fn block(&self, addr: u64) -> Option<&ManagedBlock> {
        self.blocks.iter().find(|b| addr >= b.addr && addr < b.addr + b.len.max(1))
    }

    /// The host bytes of a block, copied.
    fn host_copy(b: &ManagedBlock) -> Vec<u8> {
        // SAFETY: `b` is a live mapping of at least `len` bytes that only this module hands out.
        unsafe { std::slice::from_raw_parts(b.addr as *const u8, b.len as usize) }.to_vec()
    }

    /// Copies every block into `mem` at its own address, for one launch.
    pub fn map_into(&self, mem: &mut DeviceMemory) {
        for b in &self.blocks {
            mem.insert_at(b.addr, Self::host_copy(b), b.name.clone());
        }
    }

    /// Copies every block back from `mem` after a launch and takes it out of device memory.
    pub fn take_back(&self, mem: &mut DeviceMemory) {
        for b in &self.blocks {
            if let Some(a) = mem.take(b.addr) {
                let n = (b.len as usize).min(a.data.len());
                // SAFETY: `b` is a live mapping of `len` bytes; the runtime's lock serialises the shim's
                // accesses and the host program is inside a runtime call while this runs.
                unsafe { std::ptr::copy_nonoverlapping(a.data.as_ptr(), b.addr as *mut u8, n) };
            }
        }
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
        assert_eq!(a, MANAGED_BASE);
        assert!(b >= a + 4096 + GUARD);
        // SAFETY: `a` is a live 16-byte managed block.
        unsafe { *(a as *mut u32) = 7 };
        let mut mem = DeviceMemory::new();
        r.map_into(&mut mem);
        assert_eq!(mem.read(a, 4).expect("mapped"), 7);
        mem.write(a + 4, 4, 9).expect("mapped");
        r.take_back(&mut mem);
        assert!(mem.allocations().is_empty());
        // SAFETY: as above.
        assert_eq!(unsafe { *((a + 4) as *const u32) }, 9);
        assert_eq!(r.block(a + 3).map(|b| b.addr), Some(a));
        assert!(r.free(a) && !r.free(a));
        assert!(r.free(b));
    }
}
