//! The global memory an SM sees during an epoch: device memory as of the epoch start, overlaid with the
//! SM's own stores; stores and atomics are logged for the epoch-end merge.

use reconverge_sim::access::{AtomicRequest, GlobalMemory};
use reconverge_sim::memory::{Allocation, DeviceMemory, MemFault};
use std::collections::HashMap;

/// A logged global write.
#[derive(Clone, Debug, PartialEq)]
pub enum WriteOp {
    /// A store of `size` bytes.
    Store {
        /// Address.
        addr: u64,
        /// Bytes.
        size: u32,
        /// Value (low bytes).
        value: u64,
    },
    /// An atomic operation whose old value goes to a register of a thread of CTA slot `cta_slot`.
    Atomic {
        /// The request.
        req: AtomicRequest,
        /// The SM's CTA slot of the issuing thread.
        cta_slot: u32,
    },
}

/// One log entry, ordered by (cycle, sequence) within the SM.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// The issue cycle.
    pub cycle: u64,
    /// Sequence number within the SM.
    pub seq: u64,
    /// The write.
    pub op: WriteOp,
}

/// An SM's pending global writes.
#[derive(Clone, Debug, Default)]
pub struct SmMemory {
    /// 8-byte-aligned word → (data, byte mask) of the SM's stores this epoch.
    overlay: HashMap<u64, (u64, u8)>,
    /// Stores and atomics in issue order.
    pub log: Vec<LogEntry>,
    /// The current cycle (set before each issue).
    pub cycle: u64,
    /// Next sequence number.
    pub seq: u64,
}

impl SmMemory {
    /// Forgets the overlay (after the log was applied).
    pub fn clear(&mut self) {
        self.overlay.clear();
        self.log.clear();
    }
}

/// Device memory plus one SM's pending writes.
pub struct SmMemView<'a> {
    /// Device memory at the epoch start.
    pub mem: &'a DeviceMemory,
    /// The SM's writes.
    pub sm: &'a mut SmMemory,
}

impl GlobalMemory for SmMemView<'_> {
    #[inline]
    fn read(&self, addr: u64, size: u32) -> Result<u64, MemFault> {
        let mut v = self.mem.read(addr, size)?;
        if !self.sm.overlay.is_empty() {
            let word = addr & !7;
            if let Some(&(data, mask)) = self.sm.overlay.get(&word) {
                let off = (addr - word) as u32;
                for i in 0..size {
                    let b = off + i;
                    if mask >> b & 1 == 1 {
                        let byte = (data >> (8 * b)) & 0xFF;
                        v = (v & !(0xFF << (8 * i))) | (byte << (8 * i));
                    }
                }
            }
        }
        Ok(v)
    }

    fn write(&mut self, addr: u64, size: u32, value: u64) -> Result<bool, MemFault> {
        let old = self.read(addr, size)?;
        let value = value & if size >= 8 { u64::MAX } else { (1u64 << (8 * size)) - 1 };
        let word = addr & !7;
        let off = (addr - word) as u32;
        let e = self.sm.overlay.entry(word).or_insert((0, 0));
        for i in 0..size {
            let b = off + i;
            let byte = (value >> (8 * i)) & 0xFF;
            e.0 = (e.0 & !(0xFF << (8 * b))) | (byte << (8 * b));
            e.1 |= 1 << b;
        }
        self.sm.seq += 1;
        self.sm.log.push(LogEntry { cycle: self.sm.cycle, seq: self.sm.seq, op: WriteOp::Store { addr, size, value } });
        Ok(old != value)
    }

    fn atomic(&mut self, a: AtomicRequest) -> Result<(Option<u64>, bool), MemFault> {
        self.mem.read(a.addr, a.ty.bytes())?;
        self.sm.seq += 1;
        self.sm.log.push(LogEntry {
            cycle: self.sm.cycle,
            seq: self.sm.seq,
            op: WriteOp::Atomic { cta_slot: a.cta_slot, req: a },
        });
        Ok((None, false))
    }

    fn allocations(&self) -> &[Allocation] {
        self.mem.allocations()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_stores_are_visible_and_logged() {
        let mut mem = DeviceMemory::new();
        let a = mem.alloc(vec![0; 16], "a");
        let mut sm = SmMemory::default();
        let mut v = SmMemView { mem: &mem, sm: &mut sm };
        assert!(v.write(a + 4, 2, 0xBEEF).unwrap());
        assert_eq!(v.read(a + 4, 4).unwrap(), 0xBEEF);
        assert_eq!(v.read(a + 5, 1).unwrap(), 0xBE);
        assert!(!v.write(a + 4, 2, 0xBEEF).unwrap());
        assert_eq!(mem.read(a + 4, 4).unwrap(), 0, "device memory unchanged until the epoch ends");
        assert_eq!(sm.log.len(), 2);
    }
}
