//! Pitched, 2-D and 3-D memory: `cudaMallocPitch`/`cudaMalloc3D` allocations and the row-by-row copies
//! and sets of `cudaMemcpy2D`/`cudaMemcpy3D`/`cudaMemset2D`/`cudaMemset3D`, over the ranges [`crate::span`]
//! classifies.
//!
//! A block of memory is a set of rows ([`Rows`]): `depth` slices of `height` rows of `width` bytes
//! ([`Extent`]), row `y` of slice `z` at `base + (z * rows_per_slice + y) * pitch`. Every row of both sides
//! is checked before the first byte moves, so a copy or set either happens whole or returns an error
//! code and changes nothing.
//!
//! The pitch of an allocation is its width rounded up to [`PITCH_ALIGNMENT`] bytes: 512, what NVIDIA's
//! runtime is reported to return on GPUs from Kepler on (a developer forum thread, "Understanding Memory
//! Pitch Alignment", GTX 780 and GTX 750; not measured here) and the `textureAlignment` the shim's
//! `cudaGetDeviceProperties` reports.

use crate::error::{self as cuda, CudaError};
use crate::runtime::{CopyKind, Runtime};

/// Bytes an allocation's rows are padded to (`cudaMallocPitch`, `cudaMalloc3D`).
pub const PITCH_ALIGNMENT: u64 = 512;

/// The largest pitch a copy accepts: `cudaDeviceProp::memPitch` as the shim reports it.
pub const MAX_PITCH: u64 = 1 << 31;

/// The size of a block of rows: `cudaExtent` for pitched memory (`width` in bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Bytes per row.
    pub width: u64,
    /// Rows per slice.
    pub height: u64,
    /// Slices.
    pub depth: u64,
}

/// Where a block of rows lies: its first byte, the bytes from one row to the next, and the rows from one
/// slice to the next (`cudaPitchedPtr` with a `cudaPos` applied: `ysize` rows per slice).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rows {
    /// The address of row 0 of slice 0.
    pub base: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Rows from one slice to the next.
    pub rows_per_slice: u64,
}

impl Rows {
    /// The rows of a `cudaPitchedPtr` (`ptr`, `pitch`, `ysize`) from the position `(x, y, z)` (`x` in
    /// bytes); `None` when the address overflows.
    pub fn at(ptr: u64, pitch: u64, ysize: u64, (x, y, z): (u64, u64, u64)) -> Option<Rows> {
        let row = z.checked_mul(ysize)?.checked_add(y)?;
        let base = ptr.checked_add(row.checked_mul(pitch)?)?.checked_add(x)?;
        Some(Rows { base, pitch, rows_per_slice: ysize })
    }

    /// The address of row `y` of slice `z`; `None` on overflow.
    fn row(&self, y: u64, z: u64) -> Option<u64> {
        let row = z.checked_mul(self.rows_per_slice)?.checked_add(y)?;
        self.base.checked_add(row.checked_mul(self.pitch)?)
    }

    /// Every row's address of an extent, slice by slice (`None` for one that overflows). Lazy: a copy
    /// walks them twice (check, then move) without holding them, so a huge extent costs no memory and
    /// stops at its first bad row.
    fn addresses(self, e: Extent) -> impl Iterator<Item = Option<u64>> {
        (0..e.depth).flat_map(move |z| (0..e.height).map(move |y| self.row(y, z)))
    }
}

/// `width` rounded up to [`PITCH_ALIGNMENT`]; `None` on overflow.
pub fn pitch_of(width: u64) -> Option<u64> {
    width.checked_next_multiple_of(PITCH_ALIGNMENT)
}

impl Runtime {
    /// `cudaMalloc3D` (and `cudaMallocPitch`, one slice): a zeroed allocation of `depth` slices of `height`
    /// rows of [`pitch_of`]`(width)` bytes; its address and pitch.
    pub fn malloc_pitched(&mut self, e: Extent) -> Result<(u64, u64), CudaError> {
        let pitch = pitch_of(e.width).ok_or(cuda::MEMORY_ALLOCATION)?;
        let size = pitch.checked_mul(e.height).and_then(|s| s.checked_mul(e.depth)).ok_or(cuda::MEMORY_ALLOCATION)?;
        Ok((self.malloc(size)?, pitch))
    }

    /// `cudaMemcpy2D`/`cudaMemcpy3D`: the extent's rows from `src` to `dst` as the raw `cudaMemcpyKind`
    /// says. A pitch below the width or above [`MAX_PITCH`] is `cudaErrorInvalidPitchValue`; every row of
    /// both sides is classified, and the direction checked, before anything is copied.
    ///
    /// # Safety
    /// A host `dst` is memory the program named ([`crate::hostmem::write`]).
    pub unsafe fn copy_rows(&mut self, dst: Rows, src: Rows, e: Extent, kind: i32) -> CudaError {
        let Some(k) = CopyKind::from_raw(kind) else { return cuda::INVALID_MEMCPY_DIRECTION };
        let many = e.height.saturating_mul(e.depth) > 1;
        if [dst.pitch, src.pitch].iter().any(|&p| p > MAX_PITCH || (many && p < e.width)) {
            return cuda::INVALID_PITCH_VALUE;
        }
        if e.width == 0 || e.height == 0 || e.depth == 0 {
            return cuda::SUCCESS;
        }
        for (d, s) in dst.addresses(e).zip(src.addresses(e)) {
            let (Some(d), Some(s)) = (d, s) else { return cuda::INVALID_VALUE };
            match (self.classify(d, e.width), self.classify(s, e.width)) {
                (Ok(d), Ok(s)) if k.allows(d, s) => {}
                (Ok(_), Ok(_)) => return cuda::INVALID_VALUE,
                (Err(c), _) | (_, Err(c)) => return c,
            }
        }
        for (d, s) in dst.addresses(e).zip(src.addresses(e)) {
            // SAFETY: the caller's contract; every row was checked above.
            let c = unsafe { self.memcpy(d.unwrap_or(0), s.unwrap_or(0), e.width, kind) };
            if c != cuda::SUCCESS {
                return c;
            }
        }
        cuda::SUCCESS
    }

    /// `cudaMemset2D`/`cudaMemset3D`: every byte of the extent's rows at `dst` set to the low byte of
    /// `value`. A pitch below the width is `cudaErrorInvalidValue`; every row is classified before any
    /// is set.
    pub fn set_rows(&mut self, dst: Rows, value: i32, e: Extent) -> CudaError {
        self.fill_rows(dst, &[value as u8], e)
    }

    /// The extent's rows at `dst` (`width` in bytes) filled with copies of `pattern` ([`Runtime::fill`]):
    /// [`Runtime::set_rows`], and a graph's memset node of 2- or 4-byte elements.
    pub fn fill_rows(&mut self, dst: Rows, pattern: &[u8], e: Extent) -> CudaError {
        if e.height.saturating_mul(e.depth) > 1 && dst.pitch < e.width {
            return cuda::INVALID_VALUE;
        }
        if e.width == 0 || e.height == 0 || e.depth == 0 {
            return cuda::SUCCESS;
        }
        for r in dst.addresses(e) {
            let Some(r) = r else { return cuda::INVALID_VALUE };
            if let Err(c) = self.classify(r, e.width) {
                return c;
            }
        }
        for r in dst.addresses(e) {
            let c = self.fill(r.unwrap_or(0), pattern, e.width);
            if c != cuda::SUCCESS {
                return c;
            }
        }
        cuda::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    fn flat(e: Extent) -> Rows {
        Rows { base: 0, pitch: e.width, rows_per_slice: e.height }
    }

    #[test]
    fn pitches_are_multiples_of_512() {
        assert_eq!([0, 1, 512, 513, 1000].map(|w| pitch_of(w).unwrap()), [0, 512, 512, 1024, 1024]);
        assert_eq!(pitch_of(u64::MAX), None);
        let mut rt = runtime();
        let (p, pitch) = rt.malloc_pitched(Extent { width: 100, height: 3, depth: 2 }).unwrap();
        assert_eq!(pitch, 512);
        assert!(rt.classify(p, 512 * 6).is_ok(), "the allocation holds every padded row");
    }

    #[test]
    fn a_2d_copy_moves_each_row_and_leaves_the_padding() {
        let mut rt = runtime();
        let e = Extent { width: 3, height: 2, depth: 1 };
        let (dev, pitch) = rt.malloc_pitched(e).unwrap();
        let host: Vec<u8> = vec![1, 2, 3, 4, 5, 6];
        let src = Rows { base: host.as_ptr() as u64, ..flat(e) };
        let dst = Rows { base: dev, pitch, rows_per_slice: 2 };
        // SAFETY: the destination is device memory.
        assert_eq!(unsafe { rt.copy_rows(dst, src, e, 1) }, cuda::SUCCESS);
        let mut back = vec![0u8; 2 * pitch as usize];
        let whole = Rows { base: back.as_mut_ptr() as u64, pitch, rows_per_slice: 2 };
        let all = Extent { width: pitch, ..e };
        // SAFETY: `back` is this test's buffer.
        assert_eq!(unsafe { rt.copy_rows(whole, dst, all, 2) }, cuda::SUCCESS);
        assert_eq!(&back[..4], [1, 2, 3, 0]);
        assert_eq!(&back[pitch as usize..pitch as usize + 4], [4, 5, 6, 0]);
    }

    #[test]
    fn a_3d_set_from_a_position_touches_only_its_box() {
        let mut rt = runtime();
        let (dev, pitch) = rt.malloc_pitched(Extent { width: 8, height: 4, depth: 3 }).unwrap();
        let dst = Rows::at(dev, pitch, 4, (2, 1, 1)).unwrap();
        assert_eq!(rt.set_rows(dst, 0x1ff, Extent { width: 3, height: 2, depth: 2 }), cuda::SUCCESS);
        let mut back = vec![0u8; (pitch * 12) as usize];
        let e = Extent { width: pitch * 12, height: 1, depth: 1 };
        let to = Rows { base: back.as_mut_ptr() as u64, ..flat(e) };
        // SAFETY: `back` is this test's buffer.
        assert_eq!(unsafe { rt.copy_rows(to, Rows { base: dev, ..flat(e) }, e, 2) }, cuda::SUCCESS);
        let set: Vec<usize> = back.iter().enumerate().filter(|(_, &b)| b != 0).map(|(i, _)| i).collect();
        let want: Vec<usize> = [(1, 1), (1, 2), (2, 1), (2, 2)]
            .iter()
            .flat_map(|&(z, y)| (2..5).map(move |x| ((z * 4 + y) * pitch) as usize + x))
            .collect();
        assert_eq!(set, want);
        assert!(back.iter().all(|&b| b == 0 || b == 0xff));
    }

    #[test]
    fn bad_pitches_and_ranges_change_nothing() {
        let mut rt = runtime();
        let (dev, pitch) = rt.malloc_pitched(Extent { width: 16, height: 2, depth: 1 }).unwrap();
        let host = [7u8; 64];
        let src = Rows { base: host.as_ptr() as u64, pitch: 8, rows_per_slice: 2 };
        let e = Extent { width: 16, height: 2, depth: 1 };
        // SAFETY: the destination is device memory.
        let narrow = unsafe { rt.copy_rows(Rows { base: dev, pitch, rows_per_slice: 2 }, src, e, 1) };
        assert_eq!(narrow, cuda::INVALID_PITCH_VALUE, "a source pitch below the width");
        // The second row runs past the allocation's end: nothing is copied, not even the first row.
        let wide = Rows { base: host.as_ptr() as u64, pitch: 16, rows_per_slice: 2 };
        let past = Rows { base: dev + pitch, pitch, rows_per_slice: 2 };
        // SAFETY: as above.
        assert_ne!(unsafe { rt.copy_rows(past, wide, e, 1) }, cuda::SUCCESS);
        let mut back = [0u8; 16];
        let one = Extent { width: 16, height: 1, depth: 1 };
        let to = Rows { base: back.as_mut_ptr() as u64, pitch: 16, rows_per_slice: 1 };
        // SAFETY: `back` is this test's buffer.
        assert_eq!(unsafe { rt.copy_rows(to, past, one, 2) }, cuda::SUCCESS);
        assert_eq!(back, [0; 16]);
        assert_eq!(rt.set_rows(Rows { base: dev, pitch: 4, rows_per_slice: 2 }, 1, e), cuda::INVALID_VALUE);
        // SAFETY: as above.
        assert_eq!(unsafe { rt.copy_rows(to, past, one, 7) }, cuda::INVALID_MEMCPY_DIRECTION);
    }
}
