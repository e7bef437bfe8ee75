//! Basic simulator types: program counters, lane masks and pseudo-pcs.

/// A program counter: an index into [`crate::Program::insts`].
pub type Pc = u32;

/// One bit per lane of an issue group (warp sizes up to 64).
pub type LaneMask = u64;

/// Pseudo-pc: the thread has exited (the virtual exit of the kernel).
pub const PC_EXIT: Pc = u32::MAX;
/// Pseudo-pc: the thread returns from the current device function (the virtual exit of a callee).
pub const PC_RET: Pc = u32::MAX - 1;
/// Pseudo-pc: no reconvergence point (the reconvergence pc of a stack's bottom entry).
pub const PC_NONE: Pc = u32::MAX - 2;

/// Whether `pc` is one of the pseudo-pcs above rather than a real instruction.
#[inline]
pub fn is_pseudo(pc: Pc) -> bool {
    pc >= PC_NONE
}

/// The mask with the low `n` lanes set.
#[inline]
pub fn full_mask(n: u32) -> LaneMask {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Iterates over the set lanes of `mask`, lowest first.
#[inline]
pub fn lanes(mask: LaneMask) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

/// Formats a mask as binary with lane 0 leftmost, `width` lanes wide (seed 003 convention, e.g. `1011`).
pub fn mask_string(mask: LaneMask, width: u32) -> String {
    (0..width).map(|l| if mask >> l & 1 == 1 { '1' } else { '0' }).collect()
}

/// Formats a pc for humans (`pc 12`, `exit`, `ret`, `-`).
pub fn pc_string(pc: Pc) -> String {
    match pc {
        PC_EXIT => "exit".to_string(),
        PC_RET => "ret".to_string(),
        PC_NONE => "-".to_string(),
        p => p.to_string(),
    }
}

/// Reads a little-endian value of `bytes.len()` bytes (1, 2, 4 or 8; other lengths up to 8 work too).
#[inline]
pub fn read_le(bytes: &[u8]) -> u64 {
    match bytes.len() {
        4 => u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as u64,
        8 => u64::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7]]),
        1 => bytes[0] as u64,
        2 => u16::from_le_bytes([bytes[0], bytes[1]]) as u64,
        n => {
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(bytes);
            u64::from_le_bytes(v)
        }
    }
}
