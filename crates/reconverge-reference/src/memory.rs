//! Memories of the reference machine: device allocations and flat byte arrays, little-endian, with bounds
//! and alignment checks that report instead of panicking.

/// Which memory an access reached, after generic addresses are resolved.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Region {
    /// Device memory (module `.global` variables and buffer arguments).
    Global,
    /// The CTA's shared memory.
    Shared,
    /// The thread's local memory.
    Local,
    /// The constant bank.
    Const,
    /// The kernel parameter buffer.
    KernelParam,
    /// The current frame's parameter area (device-function parameters and call staging).
    FrameParam,
}

impl Region {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Region::Global => "global",
            Region::Shared => "shared",
            Region::Local => "local",
            Region::Const => "const",
            Region::KernelParam => "kernel parameter",
            Region::FrameParam => "parameter",
        }
    }
}

impl std::fmt::Display for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One device allocation.
pub(crate) struct Alloc {
    /// First address.
    pub base: u64,
    /// Contents.
    pub data: Vec<u8>,
    /// Name for messages.
    pub name: String,
}

/// Device memory: disjoint allocations kept sorted by address.
#[derive(Default)]
pub(crate) struct GlobalMem {
    allocs: Vec<Alloc>,
}

impl GlobalMem {
    /// Adds an allocation (allocations never overlap).
    pub(crate) fn add(&mut self, base: u64, data: Vec<u8>, name: String) {
        let i = self.allocs.partition_point(|a| a.base < base);
        self.allocs.insert(i, Alloc { base, data, name });
    }

    /// The allocation starting at `base`.
    pub(crate) fn get(&self, base: u64) -> Option<&Alloc> {
        self.allocs.iter().find(|a| a.base == base)
    }

    fn locate(&self, addr: u64, size: u64) -> Option<(usize, usize)> {
        let i = self.allocs.partition_point(|a| a.base <= addr);
        let a = self.allocs.get(i.checked_sub(1)?)?;
        let off = addr - a.base;
        (off.checked_add(size)? <= a.data.len() as u64).then_some((i - 1, off as usize))
    }

    /// Reads `size` bytes (at most 8) at `addr`.
    pub(crate) fn read(&self, addr: u64, size: u64) -> Option<u64> {
        let (i, off) = self.locate(addr, size)?;
        Some(read_le(&self.allocs[i].data[off..off + size as usize]))
    }

    /// Writes the low `size` bytes of `v` at `addr`.
    pub(crate) fn write(&mut self, addr: u64, size: u64, v: u64) -> Option<()> {
        let (i, off) = self.locate(addr, size)?;
        write_le(&mut self.allocs[i].data[off..off + size as usize], v);
        Some(())
    }

    /// A description of the allocation nearest to `addr`, for messages.
    pub(crate) fn nearest(&self, addr: u64) -> Option<String> {
        self.allocs
            .iter()
            .min_by_key(|a| {
                let end = a.base + a.data.len() as u64;
                if addr < a.base {
                    a.base - addr
                } else {
                    addr.saturating_sub(end)
                }
            })
            .map(|a| format!("nearest allocation `{}` is {:#x}..{:#x}", a.name, a.base, a.base + a.data.len() as u64))
    }
}

/// Little-endian value of up to 8 bytes.
pub(crate) fn read_le(b: &[u8]) -> u64 {
    let mut v = [0u8; 8];
    let n = b.len().min(8);
    v[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(v)
}

/// Stores the low `b.len()` bytes of `v` little-endian.
pub(crate) fn write_le(b: &mut [u8], v: u64) {
    let n = b.len().min(8);
    b[..n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// Reads from a flat byte memory; `None` when out of bounds.
pub(crate) fn flat_read(data: &[u8], addr: u64, size: u64) -> Option<u64> {
    let end = addr.checked_add(size)?;
    (end <= data.len() as u64).then(|| read_le(&data[addr as usize..end as usize]))
}

/// Writes into a flat byte memory; `None` when out of bounds.
pub(crate) fn flat_write(data: &mut [u8], addr: u64, size: u64, v: u64) -> Option<()> {
    let end = addr.checked_add(size)?;
    if end > data.len() as u64 {
        return None;
    }
    write_le(&mut data[addr as usize..end as usize], v);
    Some(())
}
