//! Host memory the simulated device reads and writes: managed blocks ([`crate::managed`]) and page-locked
//! host memory ([`crate::pinned`]).
//!
//! Launches are synchronous, so between launches the host's bytes are the truth. For one launch each
//! range is copied into device memory at the address the device uses for it ([`map_into`]), and after the
//! launch it is taken out again and its bytes written back to the host ([`take_back`]): no host access can
//! come in between, because the program is inside the launch call. Host memory is read and written only
//! through [`crate::hostmem`], so a range the program has unmapped meanwhile is an absent range (the
//! device faults on it, as a GPU faults on an unmapped page), never a crash of the runtime.

use crate::error::{self as cuda, CudaError};
use crate::hostmem;
use reconverge_sim::memory::DeviceMemory;

/// One host range the device sees during a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mirror<'a> {
    /// Its host address.
    pub host: u64,
    /// The address the device uses for it (the host address itself where the device's address space
    /// allows it).
    pub device: u64,
    /// Its length in bytes.
    pub len: u64,
    /// What it is, for messages (`cudaMallocManaged(64)`, `cudaHostRegister(4096)`).
    pub name: &'a str,
    /// Whether the device's bytes are written back after the launch (false for memory registered
    /// read-only for the device: what a kernel stores there is dropped).
    pub write_back: bool,
}

/// Copies every range into `mem` at its device address. A range the host cannot read is left out. When
/// the host cannot hold a copy: `cudaErrorMemoryAllocation`, with the ranges copied so far still in `mem`
/// ([`take_back`] puts them back).
pub fn map_into<'a>(ranges: impl IntoIterator<Item = Mirror<'a>>, mem: &mut DeviceMemory) -> Result<(), CudaError> {
    for r in ranges {
        let len = usize::try_from(r.len).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        let mut copy =
            reconverge_program::error::try_zeros(len, || r.name.to_string()).map_err(|_| cuda::MEMORY_ALLOCATION)?;
        if hostmem::read(r.host, &mut copy).is_ok() {
            mem.insert_at(r.device, copy, r.name.to_string());
        }
    }
    Ok(())
}

/// Takes every range out of `mem` after a launch and writes its bytes back to the host (where the range
/// is written back and the host still has it writable).
pub fn take_back<'a>(ranges: impl IntoIterator<Item = Mirror<'a>>, mem: &mut DeviceMemory) {
    for r in ranges {
        let Some(a) = mem.take(r.device) else { continue };
        if r.write_back {
            let n = a.data.len().min(usize::try_from(r.len).unwrap_or(usize::MAX));
            // SAFETY: the range is host memory the program handed the runtime (registered or page-locked)
            // or a managed block the runtime mapped; no Rust reference points into it meanwhile.
            let _ = unsafe { hostmem::write(r.host, &a.data[..n]) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_round_trip_at_their_device_addresses() {
        let mut host = vec![1u8, 2, 3, 4, 5, 6, 7, 8];
        let mut frozen = [9u8; 4];
        let (h, f) = (host.as_mut_ptr() as u64, frozen.as_mut_ptr() as u64);
        let ranges = [
            Mirror { host: h, device: 0x7000_0000, len: 8, name: "a", write_back: true },
            Mirror { host: f, device: 0x7100_0000, len: 4, name: "b", write_back: false },
            Mirror { host: 8, device: 0x7200_0000, len: 4, name: "unmapped", write_back: true },
        ];
        let mut mem = DeviceMemory::new();
        map_into(ranges, &mut mem).expect("fits");
        assert_eq!(mem.allocations().len(), 2, "an unreadable range is left out");
        assert_eq!(mem.read(0x7000_0004, 4).expect("mapped"), 0x0807_0605);
        mem.write(0x7000_0000, 4, 0xaabb_ccdd).expect("mapped");
        mem.write(0x7100_0000, 4, 0).expect("mapped");
        take_back(ranges, &mut mem);
        assert!(mem.allocations().is_empty());
        assert_eq!(host, [0xdd, 0xcc, 0xbb, 0xaa, 5, 6, 7, 8]);
        assert_eq!(frozen, [9; 4], "not written back");
    }
}
