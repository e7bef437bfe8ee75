//! Host memory the program names, touched only in ways that cannot crash the process.
//!
//! Every host pointer a program passes the runtime (a copy's source or destination, an output parameter,
//! a kernel's argument array, a registered name) may be NULL, a small integer, freed, unmapped or
//! read-only. NVIDIA's runtime would then fail with an error code or crash; this one never crashes: it
//! reads and writes host memory through the kernel, which checks the range and answers `EFAULT` instead
//! of delivering `SIGSEGV`:
//!
//! - `process_vm_readv` / `process_vm_writev` on the process's own pid copy between the range and a
//!   buffer of ours in one system call (no ptrace permission is needed for one's own process);
//! - where those calls are refused (`ENOSYS` on a kernel without them, `EPERM` under a seccomp filter that
//!   forbids them), the bytes go through a pipe instead: `write(2)` from the source and `read(2)` into the
//!   destination, which fail with `EFAULT` the same way. The choice is made at the first refusal and kept;
//!   copies are then slower (two system calls per 64 KiB) but still never crash.
//!
//! Any failure is a [`HostFault`], which the entry points return as `cudaErrorInvalidValue`. A failed
//! copy may have written part of its destination (as a failed `memcpy` would have).

use std::sync::atomic::{AtomicBool, Ordering};

/// A host range the process cannot read or write (unmapped, protected, or wrapping past the address
/// space's end).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("host memory at {addr:#x} ({len} bytes) cannot be accessed")]
pub struct HostFault {
    /// The range's first address.
    pub addr: u64,
    /// Its length.
    pub len: u64,
}

/// Values that may be read from or written to host memory as raw bytes.
///
/// # Safety
/// Every bit pattern of the type's size must be a valid value, and the type must have no padding.
pub unsafe trait Plain: Copy {}

// SAFETY: integers, floats and raw pointers are valid for every bit pattern and have no padding.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for i32 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}
// SAFETY: as above.
unsafe impl Plain for usize {}
// SAFETY: as above.
unsafe impl Plain for f32 {}
// SAFETY: as above.
unsafe impl<T> Plain for *mut T {}
// SAFETY: as above.
unsafe impl<T> Plain for *const T {}
// SAFETY: an array of plain values is plain.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// Set once `process_vm_readv`/`process_vm_writev` have been refused: every later copy uses the pipe.
static USE_PIPE: AtomicBool = AtomicBool::new(false);

/// At most this many bytes per system call (the kernel caps one transfer at a little under 2 GiB).
const CHUNK: usize = 1 << 30;

/// Which way a copy runs relative to the program's memory.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dir {
    /// From the program's range into a buffer of ours (`process_vm_readv`).
    Read,
    /// From a buffer of ours into the program's range (`process_vm_writev`).
    Write,
}

/// Copies `len` bytes from `src` to `dst`, both addresses in this process, checking both ranges, by the
/// process's mechanism ([`USE_PIPE`]). `dir` only chooses the system call (and which range a fault is
/// reported for).
///
/// # Safety
/// Writing `dst` must not break an invariant of Rust code in this process: `dst` is a buffer the caller
/// holds exclusively, or memory the program named (which no Rust reference of this library points at
/// unless the program passed a pointer into the library's own data).
unsafe fn transfer(dst: u64, src: u64, len: usize, dir: Dir) -> Result<(), HostFault> {
    // SAFETY: the caller's contract.
    unsafe { transfer_by(dst, src, len, dir, &USE_PIPE) }
}

/// [`transfer`] with the mechanism chosen by `use_pipe` (set here when the system calls are refused).
///
/// # Safety
/// As [`transfer`].
unsafe fn transfer_by(dst: u64, src: u64, len: usize, dir: Dir, use_pipe: &AtomicBool) -> Result<(), HostFault> {
    let (prog, prog_len) = (if dir == Dir::Read { src } else { dst }, len as u64);
    let fault = HostFault { addr: prog, len: prog_len };
    if len == 0 {
        return Ok(());
    }
    if prog == 0 || src.checked_add(prog_len).is_none() || dst.checked_add(prog_len).is_none() {
        return Err(fault);
    }
    let mut done = 0usize;
    while done < len {
        let n = (len - done).min(CHUNK);
        let (d, s) = (dst + done as u64, src + done as u64);
        let moved = if use_pipe.load(Ordering::Relaxed) {
            // SAFETY: the caller's contract for `dst`; `src` is only read, by the kernel.
            unsafe { through_pipe(d, s, n) }
        } else {
            // SAFETY: as above.
            match unsafe { through_vm(d, s, n, dir) } {
                Err(e) if e == libc::ENOSYS || e == libc::EPERM => {
                    use_pipe.store(true, Ordering::Relaxed);
                    continue;
                }
                other => other,
            }
        };
        match moved {
            Ok(0) | Err(_) => return Err(fault),
            Ok(k) => done += k,
        }
    }
    Ok(())
}

/// One `process_vm_readv`/`process_vm_writev` of `len` bytes on this process: the bytes moved, or errno.
///
/// # Safety
/// As [`transfer`].
unsafe fn through_vm(dst: u64, src: u64, len: usize, dir: Dir) -> Result<usize, i32> {
    let (local, remote) = match dir {
        Dir::Read => (dst, src),
        Dir::Write => (src, dst),
    };
    let local = libc::iovec { iov_base: local as *mut libc::c_void, iov_len: len };
    let remote = libc::iovec { iov_base: remote as *mut libc::c_void, iov_len: len };
    // SAFETY: both iovecs describe ranges of this process; the kernel checks each page and returns EFAULT
    // (or a short count) for one it cannot access, without a signal. No Rust reference covers the
    // program's range; the caller guarantees that writing `dst` is allowed.
    let n = unsafe {
        let pid = libc::getpid();
        match dir {
            Dir::Read => libc::process_vm_readv(pid, &local, 1, &remote, 1, 0),
            Dir::Write => libc::process_vm_writev(pid, &local, 1, &remote, 1, 0),
        }
    };
    if n < 0 {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EFAULT))
    } else {
        Ok(n as usize)
    }
}

/// Moves up to `len` bytes from `src` to `dst` through a fresh non-blocking pipe: `write(2)` reads the
/// source and `read(2)` fills the destination, each failing with `EFAULT` on a range it cannot access.
/// Returns the bytes moved (at most the pipe's capacity), or errno.
///
/// # Safety
/// As [`transfer`].
unsafe fn through_pipe(dst: u64, src: u64, len: usize) -> Result<usize, i32> {
    let mut fds = [0i32; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) } != 0 {
        return Err(libc::EMFILE);
    }
    let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EFAULT);
    // SAFETY: the kernel reads `src` for the pipe and reports EFAULT for an inaccessible range; it writes
    // `dst` (allowed by the caller's contract) from the pipe likewise. The descriptors are ours and closed
    // once.
    unsafe {
        let w = libc::write(fds[1], src as *const libc::c_void, len);
        let r = if w > 0 { libc::read(fds[0], dst as *mut libc::c_void, w as usize) } else { w };
        let result = if w <= 0 || r != w { Err(errno()) } else { Ok(r as usize) };
        libc::close(fds[0]);
        libc::close(fds[1]);
        result
    }
}

/// Reads `buf.len()` bytes of host memory at `addr` into `buf`.
pub fn read(addr: u64, buf: &mut [u8]) -> Result<(), HostFault> {
    // SAFETY: the destination is `buf`, which the caller holds exclusively.
    unsafe { transfer(buf.as_mut_ptr() as u64, addr, buf.len(), Dir::Read) }
}

/// Writes `bytes` to host memory at `addr`.
///
/// # Safety
/// `addr` is memory the program named: the program's own, not memory this library's Rust code holds a
/// reference to (a range that is not mapped or not writable is a [`HostFault`], not undefined behaviour).
pub unsafe fn write(addr: u64, bytes: &[u8]) -> Result<(), HostFault> {
    // SAFETY: the caller's contract.
    unsafe { transfer(addr, bytes.as_ptr() as u64, bytes.len(), Dir::Write) }
}

/// Copies `len` bytes of host memory from `src` to `dst` (both the program's), without a buffer of ours.
///
/// # Safety
/// As [`write()`] for `dst`.
pub unsafe fn copy(dst: u64, src: u64, len: u64) -> Result<(), HostFault> {
    let n = usize::try_from(len).map_err(|_| HostFault { addr: src, len })?;
    // SAFETY: the caller's contract; `src` is only read.
    unsafe { transfer(dst, src, n, Dir::Read) }
}

/// Reads a `T` at `p` (no alignment needed); NULL or an inaccessible range is a [`HostFault`].
pub fn read_value<T: Plain>(p: *const T) -> Result<T, HostFault> {
    let mut v = std::mem::MaybeUninit::<T>::zeroed();
    // SAFETY: `v` is `size_of::<T>()` bytes of our own, initialised (zeroed); every bit pattern is a
    // valid `T` (`Plain`), so whatever is read into it is one.
    let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of::<T>()) };
    if p.is_null() {
        return Err(HostFault { addr: 0, len: bytes.len() as u64 });
    }
    read(p as u64, bytes)?;
    // SAFETY: initialised above, and valid for any bytes (`Plain`).
    Ok(unsafe { v.assume_init() })
}

/// Writes `v` at `p` (no alignment needed): an output parameter. NULL or an inaccessible range is a
/// [`HostFault`].
///
/// # Safety
/// As [`write()`].
pub unsafe fn write_value<T: Plain>(p: *mut T, v: T) -> Result<(), HostFault> {
    let size = std::mem::size_of::<T>();
    if p.is_null() {
        return Err(HostFault { addr: 0, len: size as u64 });
    }
    // SAFETY: `v` is a plain value of `size` bytes with no padding.
    let bytes = unsafe { std::slice::from_raw_parts(&v as *const T as *const u8, size) };
    // SAFETY: the caller's contract.
    unsafe { write(p as u64, bytes) }
}

/// The NUL-terminated string at `p`, at most `max` bytes before its NUL, read a page at a time (so a
/// string that ends just before an unmapped page is read whole). Invalid UTF-8 is replaced.
pub fn read_cstr(p: *const std::ffi::c_char, max: usize) -> Result<String, HostFault> {
    let start = p as u64;
    let fault = HostFault { addr: start, len: 1 };
    if p.is_null() {
        return Err(fault);
    }
    let mut out = Vec::new();
    let mut at = start;
    while out.len() <= max {
        let to_page_end = 4096 - (at % 4096) as usize;
        let mut chunk = [0u8; 4096];
        let chunk = &mut chunk[..to_page_end];
        read(at, chunk).map_err(|_| fault)?;
        if let Some(nul) = chunk.iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..nul]);
            break;
        }
        out.extend_from_slice(chunk);
        at = at.checked_add(to_page_end as u64).ok_or(fault)?;
    }
    if out.len() > max {
        return Err(HostFault { addr: start, len: out.len() as u64 });
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The end of the loaded ELF segment (of the program or one of its libraries) that holds `addr`, when one
/// does: every byte from `addr` to there is mapped and readable, as the object was loaded.
pub fn loaded_segment_end(addr: u64) -> Option<u64> {
    /// Looks for `addr` (the first word of `data`) in one object's readable `PT_LOAD` segments and
    /// stores the segment's end in the second word.
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _size: usize, data: *mut libc::c_void) -> libc::c_int {
        // SAFETY: the loader passes a valid `dl_phdr_info` whose `dlpi_phdr` has `dlpi_phnum` entries, and
        // `data` is the `(u64, u64)` `loaded_segment_end` passed.
        let (info, found) = unsafe { (&*info, &mut *(data as *mut (u64, u64))) };
        if info.dlpi_phdr.is_null() {
            return 0;
        }
        // SAFETY: as above.
        let headers = unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
        for h in headers.iter().filter(|h| h.p_type == libc::PT_LOAD && h.p_flags & libc::PF_R != 0) {
            let start = info.dlpi_addr.wrapping_add(h.p_vaddr);
            if found.0 >= start && found.0 - start < h.p_memsz {
                found.1 = start + h.p_memsz;
                return 1;
            }
        }
        0
    }
    let mut found = (addr, 0u64);
    // SAFETY: `visit` only reads what the loader hands it and writes `found`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), &mut found as *mut (u64, u64) as *mut libc::c_void) };
    (found.1 != 0).then_some(found.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page that is mapped but not accessible, with a readable page before it.
    fn guarded() -> (u64, u64) {
        // SAFETY: a fresh anonymous mapping of two pages; the second is made inaccessible. Leaked on
        // purpose (the tests' process ends soon).
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                8192,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            libc::mprotect((p as *mut u8).add(4096) as *mut libc::c_void, 4096, libc::PROT_NONE);
            (p as u64, p as u64 + 4096)
        }
    }

    #[test]
    fn bad_ranges_are_faults_not_signals() {
        {
            let (ok, bad) = guarded();
            let mut buf = [0u8; 64];
            assert!(read(0, &mut buf).is_err(), "NULL");
            assert!(read(16, &mut buf).is_err(), "a small integer");
            assert!(read(bad, &mut buf).is_err(), "an inaccessible page");
            assert!(read(bad - 32, &mut buf).is_err(), "a range running into it");
            assert!(read(u64::MAX - 8, &mut buf).is_err(), "a range that wraps");
            let text = b"read-only";
            // SAFETY: the destinations are inaccessible or read-only; the writes must fail.
            unsafe {
                assert!(write(bad, &buf).is_err());
                assert!(write(text.as_ptr() as u64, b"x").is_err(), "a read-only page");
                assert!(write_value(std::ptr::null_mut::<u32>(), 7).is_err());
                assert!(copy(ok, bad, 16).is_err() && copy(bad, ok, 16).is_err());
            }
            assert_eq!(read_value(std::ptr::null::<u64>()), Err(HostFault { addr: 0, len: 8 }));
        }
    }

    #[test]
    fn good_ranges_copy_exactly() {
        {
            let (ok, _) = guarded();
            let src: Vec<u8> = (0..200u32).map(|i| i as u8).collect();
            // SAFETY: `ok` is a writable page of ours that no reference covers.
            unsafe { write(ok + 4000, &src[..96]).expect("the last 96 bytes of the page") };
            let mut back = [0u8; 96];
            read(ok + 4000, &mut back).expect("readable");
            assert_eq!(&back[..], &src[..96]);
            let mut x = 0u64;
            // SAFETY: `x` is ours; no reference to it is alive during the write.
            unsafe {
                write_value(&mut x as *mut u64, 0x1122_3344_5566_7788).expect("writes");
                copy(ok, ok + 4000, 8).expect("host to host");
            }
            assert_eq!(x, 0x1122_3344_5566_7788);
            assert_eq!(read_value(ok as *const [u8; 8]).expect("reads"), [0, 1, 2, 3, 4, 5, 6, 7]);
            // A string that ends right before the inaccessible page is read whole.
            // SAFETY: as above.
            unsafe { write(ok + 4089, b"kernel\0").expect("writes") };
            assert_eq!(read_cstr((ok + 4089) as *const _, 64).expect("a string"), "kernel");
            // SAFETY: as above.
            unsafe { write(ok + 4089, b"abcdefg").expect("writes") };
            assert!(read_cstr((ok + 4089) as *const _, 64).is_err(), "no NUL before the guard page");
            assert!(read_cstr(c"abc".as_ptr(), 2).is_err(), "longer than allowed");
        }
    }

    #[test]
    fn static_data_lies_in_a_loaded_segment_and_the_heap_does_not() {
        static DATA: [u8; 64] = [7; 64];
        let at = DATA.as_ptr() as u64;
        let end = loaded_segment_end(at).expect("a static lies in the test binary's segments");
        assert!(end >= at + 64);
        let mut buf = vec![0u8; (end - at) as usize];
        read(at, &mut buf).expect("the whole rest of the segment is readable");
        let heap = vec![0u8; 1 << 20];
        assert_eq!(loaded_segment_end(heap.as_ptr() as u64), None);
        assert_eq!(loaded_segment_end(8), None);
    }

    /// The pipe, used where the system calls are refused, moves the same bytes and faults the same way,
    /// also for copies longer than a pipe holds.
    #[test]
    fn the_pipe_fallback_copies_and_faults_alike() {
        let pipe = AtomicBool::new(true);
        let (ok, bad) = guarded();
        let src: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let mut scratch = [1u8; 16];
        let (d, s, x) = (dst.as_mut_ptr() as u64, src.as_ptr() as u64, scratch.as_mut_ptr() as u64);
        // SAFETY: `dst` is ours and no reference to it is used until the copy returns; the other
        // destinations are inaccessible or read-only, so those copies must fail.
        unsafe {
            transfer_by(d, s, src.len(), Dir::Read, &pipe).expect("copies in pieces");
            assert!(transfer_by(d, bad - 8, 16, Dir::Read, &pipe).is_err(), "a source running into the guard");
            assert!(transfer_by(bad, ok, 16, Dir::Write, &pipe).is_err(), "an inaccessible destination");
            assert!(transfer_by(x, ok, 16, Dir::Write, &pipe).is_ok(), "a stack destination");
            assert!(transfer_by(c"ro".as_ptr() as u64, ok, 2, Dir::Write, &pipe).is_err(), "read-only");
            assert!(transfer_by(d, 0, 16, Dir::Read, &pipe).is_err(), "NULL");
        }
        assert_eq!(dst[..], src[..]);
        assert_eq!(scratch, [0u8; 16], "the fresh page's zeros");
        assert!(pipe.load(Ordering::Relaxed));
    }
}
