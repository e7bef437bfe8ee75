//! Device memory: allocations in the global space, with bounds and alignment checks.

use crate::layout::{place_allocation, GLOBAL_BASE};
use crate::program::Space;
pub use crate::types::read_le;

/// Why a memory access failed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FaultKind {
    /// No allocation (or window) covers the address range.
    OutOfBounds,
    /// The address is not a multiple of the access size.
    Misaligned,
    /// A store or atomic to read-only memory (constant bank, kernel parameters).
    ReadOnly,
}

/// A failed memory access (the executor adds the thread and pc).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MemFault {
    /// The failure.
    pub kind: FaultKind,
    /// The address as the instruction computed it.
    pub addr: u64,
    /// Access size in bytes.
    pub size: u32,
    /// The space the access resolved to.
    pub space: Space,
}

/// One device allocation.
#[derive(Clone, Debug)]
pub struct Allocation {
    /// Its first address.
    pub base: u64,
    /// Its contents.
    pub data: Vec<u8>,
    /// A name for messages (`arg 2`, a variable name).
    pub name: String,
}

/// The device's global memory.
#[derive(Debug)]
pub struct DeviceMemory {
    allocs: Vec<Allocation>,
    next: u64,
    last: std::sync::atomic::AtomicUsize,
}

impl Default for DeviceMemory {
    fn default() -> Self {
        DeviceMemory { allocs: Vec::new(), next: GLOBAL_BASE, last: std::sync::atomic::AtomicUsize::new(0) }
    }
}

impl Clone for DeviceMemory {
    fn clone(&self) -> Self {
        DeviceMemory {
            allocs: self.allocs.clone(),
            next: self.next,
            last: std::sync::atomic::AtomicUsize::new(self.last.load(std::sync::atomic::Ordering::Relaxed)),
        }
    }
}

impl DeviceMemory {
    /// An empty device memory.
    pub fn new() -> DeviceMemory {
        DeviceMemory::default()
    }

    /// Places `data` at a fixed address (module variables, whose addresses the decoder chose with
    /// [`place_allocation`]); later allocations go after its guard region.
    pub fn place(&mut self, base: u64, data: Vec<u8>, name: impl Into<String>) {
        let (_, next) =
            place_allocation(base.saturating_sub(crate::layout::guard(data.len() as u64)), data.len() as u64, 256);
        self.next = self.next.max(next);
        let i = self.allocs.partition_point(|a| a.base < base);
        self.allocs.insert(i, Allocation { base, data, name: name.into() });
    }

    /// Allocates a new buffer holding `data`, 256-byte aligned, between guard regions
    /// ([`crate::layout::guard`]), and returns its address.
    pub fn alloc(&mut self, data: Vec<u8>, name: impl Into<String>) -> u64 {
        let (base, next) = place_allocation(self.next, data.len() as u64, 256);
        self.next = next;
        self.allocs.push(Allocation { base, data, name: name.into() });
        base
    }

    /// The allocation starting at `base`.
    pub fn allocation(&self, base: u64) -> Option<&Allocation> {
        self.allocs.iter().find(|a| a.base == base)
    }

    /// The allocation starting at `base`, for writing.
    pub fn allocation_mut(&mut self, base: u64) -> Option<&mut Allocation> {
        self.allocs.iter_mut().find(|a| a.base == base)
    }

    /// All allocations, by address.
    pub fn allocations(&self) -> &[Allocation] {
        &self.allocs
    }

    /// The bytes of every live allocation (guards not counted).
    pub fn allocated_bytes(&self) -> u64 {
        self.allocs.iter().map(|a| a.data.len() as u64).fold(0, u64::saturating_add)
    }

    /// The first address past every allocation placed so far and its trailing guard (never lower after a
    /// free): `[GLOBAL_BASE, end())` holds every device address ever handed out.
    pub fn end(&self) -> u64 {
        self.next
    }

    /// Inserts an allocation at `base` without moving the cursor later allocations are placed after: for
    /// memory that lives elsewhere between launches (a host-visible managed allocation mapped in for one
    /// launch and taken out after). The caller keeps it clear of every other allocation.
    pub fn insert_at(&mut self, base: u64, data: Vec<u8>, name: impl Into<String>) {
        let i = self.allocs.partition_point(|a| a.base < base);
        self.allocs.insert(i, Allocation { base, data, name: name.into() });
        self.last.store(0, std::sync::atomic::Ordering::Relaxed);
    }

    /// Takes the allocation at `base` out, with its bytes.
    pub fn take(&mut self, base: u64) -> Option<Allocation> {
        let i = self.allocs.iter().position(|a| a.base == base)?;
        self.last.store(0, std::sync::atomic::Ordering::Relaxed);
        Some(self.allocs.remove(i))
    }

    /// Removes the allocation at `base`; false when no allocation starts there. Its addresses are not
    /// reused (later allocations are placed after every earlier one), so a stale pointer faults.
    pub fn free(&mut self, base: u64) -> bool {
        self.take(base).is_some()
    }

    /// The allocation holding `addr` and the offset of `addr` in it.
    pub fn containing(&self, addr: u64) -> Option<(&Allocation, usize)> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let off = addr - a.base;
        (off < a.data.len() as u64).then_some((a, off as usize))
    }

    /// The `len` bytes at `addr`, when one allocation holds them all.
    #[inline]
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        if len == 0 {
            return Some(&[]);
        }
        let (i, off) = self.locate(addr, len)?;
        Some(&self.allocs[i].data[off..off + len as usize])
    }

    /// The `len` bytes at `addr`, writable, when one allocation holds them all.
    #[inline]
    pub fn bytes_mut(&mut self, addr: u64, len: u64) -> Option<&mut [u8]> {
        if len == 0 {
            return Some(&mut []);
        }
        let (i, off) = self.locate(addr, len)?;
        Some(&mut self.allocs[i].data[off..off + len as usize])
    }

    /// The index of the allocation holding the `len` bytes at `addr` and the offset of `addr` in it.
    #[inline]
    fn locate(&self, addr: u64, len: u64) -> Option<(usize, usize)> {
        let end = addr.checked_add(len)?;
        let last = self.last.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(a) = self.allocs.get(last) {
            if addr >= a.base && end <= a.base + a.data.len() as u64 {
                return Some((last, (addr - a.base) as usize));
            }
        }
        let i = self.allocs.partition_point(|a| a.base <= addr);
        if i == 0 {
            return None;
        }
        let a = &self.allocs[i - 1];
        if end <= a.base + a.data.len() as u64 {
            self.last.store(i - 1, std::sync::atomic::Ordering::Relaxed);
            Some((i - 1, (addr - a.base) as usize))
        } else {
            None
        }
    }

    /// Reads `size` bytes (1, 2, 4 or 8) little-endian.
    #[inline]
    pub fn read(&self, addr: u64, size: u32) -> Result<u64, MemFault> {
        let fault = |kind| MemFault { kind, addr, size, space: Space::Global };
        if !addr.is_multiple_of(size as u64) {
            return Err(fault(FaultKind::Misaligned));
        }
        let (i, off) = self.locate(addr, u64::from(size)).ok_or(fault(FaultKind::OutOfBounds))?;
        Ok(read_le(&self.allocs[i].data[off..off + size as usize]))
    }

    /// Writes the low `size` bytes of `value`.
    #[inline]
    pub fn write(&mut self, addr: u64, size: u32, value: u64) -> Result<(), MemFault> {
        let fault = |kind| MemFault { kind, addr, size, space: Space::Global };
        if !addr.is_multiple_of(size as u64) {
            return Err(fault(FaultKind::Misaligned));
        }
        let (i, off) = self.locate(addr, u64::from(size)).ok_or(fault(FaultKind::OutOfBounds))?;
        write_le(&mut self.allocs[i].data[off..off + size as usize], value);
        Ok(())
    }
}

/// Writes the low `bytes.len()` bytes of `value` little-endian.
#[inline]
pub fn write_le(bytes: &mut [u8], value: u64) {
    match bytes.len() {
        4 => bytes.copy_from_slice(&(value as u32).to_le_bytes()),
        8 => bytes.copy_from_slice(&value.to_le_bytes()),
        1 => bytes[0] = value as u8,
        2 => bytes.copy_from_slice(&(value as u16).to_le_bytes()),
        n => bytes.copy_from_slice(&value.to_le_bytes()[..n]),
    }
}

/// A flat byte memory with bounds and alignment checks (shared, local, constant, parameters).
#[inline]
pub fn flat_read(data: &[u8], addr: u64, size: u32, space: Space) -> Result<u64, MemFault> {
    let fault = |kind| MemFault { kind, addr, size, space };
    if !addr.is_multiple_of(size as u64) {
        return Err(fault(FaultKind::Misaligned));
    }
    let end = addr.checked_add(size as u64).ok_or(fault(FaultKind::OutOfBounds))?;
    if end > data.len() as u64 {
        return Err(fault(FaultKind::OutOfBounds));
    }
    Ok(read_le(&data[addr as usize..end as usize]))
}

/// Writes into a flat byte memory with bounds and alignment checks.
#[inline]
pub fn flat_write(data: &mut [u8], addr: u64, size: u32, value: u64, space: Space) -> Result<(), MemFault> {
    let fault = |kind| MemFault { kind, addr, size, space };
    if !addr.is_multiple_of(size as u64) {
        return Err(fault(FaultKind::Misaligned));
    }
    let end = addr.checked_add(size as u64).ok_or(fault(FaultKind::OutOfBounds))?;
    if end > data.len() as u64 {
        return Err(fault(FaultKind::OutOfBounds));
    }
    write_le(&mut data[addr as usize..end as usize], value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_disjoint_and_bounds_checked() {
        let mut m = DeviceMemory::new();
        let a = m.alloc(vec![0; 16], "a");
        let b = m.alloc(vec![0; 8], "b");
        assert!(b >= a + 16 + 2 * crate::layout::MIN_GUARD);
        assert_eq!(m.allocated_bytes(), 24, "the allocations' bytes, without their guards");
        m.write(a + 12, 4, 0xDEADBEEF).unwrap();
        assert_eq!(m.read(a + 12, 4).unwrap(), 0xDEADBEEF);
        assert_eq!(m.read(a + 16, 4).unwrap_err().kind, FaultKind::OutOfBounds);
        assert_eq!(m.read(a + 2, 4).unwrap_err().kind, FaultKind::Misaligned);
        assert_eq!(m.read(a - 4, 4).unwrap_err().kind, FaultKind::OutOfBounds);
        assert_eq!(m.read(u64::MAX - 3, 4).unwrap_err().kind, FaultKind::OutOfBounds);
        m.write(b, 8, u64::MAX).unwrap();
        assert_eq!(m.read(b + 4, 4).unwrap(), 0xFFFF_FFFF);
    }

    #[test]
    fn flat_memory_checks() {
        let mut d = vec![0u8; 8];
        flat_write(&mut d, 4, 4, 7, Space::Shared).unwrap();
        assert_eq!(flat_read(&d, 4, 4, Space::Shared).unwrap(), 7);
        assert_eq!(flat_read(&d, 8, 1, Space::Shared).unwrap_err().kind, FaultKind::OutOfBounds);
        assert_eq!(flat_read(&d, u64::MAX - 1, 2, Space::Shared).unwrap_err().kind, FaultKind::OutOfBounds);
        assert_eq!(flat_read(&d, 5, 2, Space::Shared).unwrap_err().kind, FaultKind::Misaligned);
    }
}
