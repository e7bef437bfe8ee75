//! The runtime's own heap for what it allocates while the program registers its device code, kept off
//! the program's `malloc` heap.
//!
//! A program's static constructors register its fat binaries before `main`; the runtime then
//! decompresses and parses the PTX, which allocates and frees a lot. On glibc's heap, that would leave
//! freed chunks (holding the runtime's bytes and glibc's randomised pointers) that the program's first
//! `malloc` calls get back, so a program that reads `malloc`ed memory it never wrote (PolyBench's ATAX
//! and GESUMMV do) would see different garbage on every run instead of the fresh zero pages it sees
//! without the shim (docs/cudart.md, "Uninitialised host memory").
//!
//! [`Heap`] is the library's global allocator. While a registration entry point runs ([`private`]), it
//! serves allocations from an arena of its own: one address range reserved with `mmap` (never `brk`),
//! committed as it is used, carved into power-of-two blocks with a free list per size. Everywhere else
//! it is the system allocator. A block is freed (or reallocated) by whichever allocator its address
//! belongs to, so the two can mix freely: the runtime's modules, allocated at registration, live in the
//! arena for good, and what the runtime allocates after `main` (device memory, launches) comes from the
//! system allocator as before. In a process that never registers device code (the `reconverge` command
//! line, which links this crate's `rlib`), nothing changes but a flag test per allocation.
//!
//! When the arena cannot be reserved (a low `RLIMIT_AS`) or is full, or a block needs an alignment above
//! a page, the system allocator serves the allocation instead.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Address space the arena reserves (committed only as it is used).
const RESERVE: u64 = 16 << 30;
/// Committed in steps of this many bytes.
const COMMIT_STEP: u64 = 2 << 20;
/// The smallest block.
const MIN_CLASS: u32 = 4;
/// Size classes: blocks of 2^MIN_CLASS up to 2^(CLASSES - 1) bytes.
const CLASSES: usize = 40;
/// Freed blocks of at least this size give their pages back to the system (`MADV_DONTNEED`).
const RELEASE_FROM: u64 = 64 << 10;
/// Blocks are aligned to their size up to a page.
const PAGE: u64 = 4096;

/// How many registration entry points are running: the arena serves allocations while it is above 0.
static PRIVATE: AtomicUsize = AtomicUsize::new(0);
/// The arena's range `[BASE, END)` (0, 0 until it is reserved; `END` is stored last).
static BASE: AtomicU64 = AtomicU64::new(0);
static END: AtomicU64 = AtomicU64::new(0);

/// The arena's state behind its lock.
struct Arena {
    /// The next address never handed out.
    bump: u64,
    /// The first address not yet committed.
    committed: u64,
    /// Per size class, the first free block (each free block holds the next one's address).
    free: [u64; CLASSES],
    /// Whether reserving was tried (and so is not tried again).
    tried: bool,
}

static ARENA: Mutex<Arena> = Mutex::new(Arena { bump: 0, committed: 0, free: [0; CLASSES], tried: false });

/// The global allocator of the library (see the module's documentation).
pub struct Heap;

/// Marks a registration entry point as running while it lives: allocations come from the arena.
pub struct Private(());

/// Serves allocations from the arena until the returned guard is dropped.
pub fn private() -> Private {
    PRIVATE.fetch_add(1, Ordering::Relaxed);
    Private(())
}

impl Drop for Private {
    fn drop(&mut self) {
        PRIVATE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether `p` lies in the arena. (`END` is published after `BASE`, so a reader that sees it sees
/// both.)
fn in_arena(p: *mut u8) -> bool {
    let a = p as u64;
    let end = END.load(Ordering::Acquire);
    end != 0 && a < end && a >= BASE.load(Ordering::Relaxed)
}

/// The size class of a block for `layout` (its size at least its alignment), if the arena serves it.
fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() as u64 > PAGE {
        return None;
    }
    let size = (layout.size().max(layout.align()) as u64).max(1 << MIN_CLASS).next_power_of_two();
    let class = size.trailing_zeros() as usize;
    (class < CLASSES).then_some(class)
}

impl Arena {
    /// Reserves the address range (once).
    fn reserve(&mut self) {
        self.tried = true;
        // SAFETY: a fresh private anonymous reservation, inaccessible until committed; nothing else
        // uses its addresses.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                RESERVE as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            let base = p as u64;
            (self.bump, self.committed) = (base, base);
            BASE.store(base, Ordering::Relaxed);
            END.store(base + RESERVE, Ordering::Release);
        }
    }

    /// A block of class `class`: a freed one, or a new one past the bump pointer.
    fn alloc(&mut self, class: usize) -> Option<u64> {
        let head = self.free[class];
        if head != 0 {
            // SAFETY: `head` is a free block of this class in the committed arena; its first word holds
            // the next free block's address (written by `free`).
            self.free[class] = unsafe { *(head as *const u64) };
            return Some(head);
        }
        if !self.tried {
            self.reserve();
        }
        let size = 1u64 << class;
        let start = self.bump.div_ceil(size.min(PAGE)) * size.min(PAGE);
        let end = start.checked_add(size).filter(|&e| self.bump != 0 && e <= END.load(Ordering::Relaxed))?;
        if end > self.committed {
            let to = end.div_ceil(COMMIT_STEP).saturating_mul(COMMIT_STEP).min(END.load(Ordering::Relaxed));
            // SAFETY: `[committed, to)` is reserved by this arena and not yet committed.
            let rc = unsafe {
                libc::mprotect(
                    self.committed as *mut libc::c_void,
                    (to - self.committed) as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                )
            };
            if rc != 0 {
                return None;
            }
            self.committed = to;
        }
        self.bump = end;
        Some(start)
    }

    /// Puts block `p` of class `class` on its free list (its pages given back when it is large).
    fn free(&mut self, p: u64, class: usize) {
        let size = 1u64 << class;
        if size >= RELEASE_FROM {
            // SAFETY: the block's own pages, page-aligned (blocks of a page or more are), no longer used.
            unsafe { libc::madvise(p as *mut libc::c_void, size as usize, libc::MADV_DONTNEED) };
        }
        // SAFETY: `p` is a block of at least 16 bytes that nothing uses any more.
        unsafe { *(p as *mut u64) = self.free[class] };
        self.free[class] = p;
    }
}

/// The arena, locked (a poisoned lock is still usable: nothing in it panics half-way).
fn arena() -> std::sync::MutexGuard<'static, Arena> {
    ARENA.lock().unwrap_or_else(|p| p.into_inner())
}

// SAFETY: every block is served whole by one allocator (the arena or `System`) and returned to the one its
// address belongs to; arena blocks are at least their layout's size and aligned to it (classes are powers
// of two at least the alignment, aligned to their size up to a page, and alignments above a page go to
// `System`).
unsafe impl GlobalAlloc for Heap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if PRIVATE.load(Ordering::Relaxed) > 0 {
            if let Some(p) = class_of(layout).and_then(|c| arena().alloc(c)) {
                return p as *mut u8;
            }
        }
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if PRIVATE.load(Ordering::Relaxed) > 0 {
            if let Some(p) = class_of(layout).and_then(|c| arena().alloc(c)) {
                // SAFETY: a block of at least `layout.size()` bytes; a reused one is not zero.
                unsafe { std::ptr::write_bytes(p as *mut u8, 0, layout.size()) };
                return p as *mut u8;
            }
        }
        // SAFETY: the caller's layout, passed on (`calloc`: fresh pages stay untouched).
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if in_arena(p) {
            if let Some(c) = class_of(layout) {
                arena().free(p as u64, c);
            }
            return;
        }
        // SAFETY: a block `System` served with this layout.
        unsafe { System.dealloc(p, layout) }
    }

    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees `new_size` with `layout`'s alignment is a valid layout.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        if !in_arena(p) && PRIVATE.load(Ordering::Relaxed) == 0 {
            // SAFETY: a block `System` served with `layout`.
            return unsafe { System.realloc(p, layout, new_size) };
        }
        if in_arena(p) && class_of(layout) == class_of(new) {
            return p;
        }
        // SAFETY: a new block from whichever allocator serves now, the old bytes copied, the old block
        // returned to its own allocator.
        unsafe {
            let q = self.alloc(new);
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
                self.dealloc(p, layout);
            }
            q
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_allocations_come_from_the_arena_and_return_to_it() {
        let outside = vec![1u8; 100];
        let (small, big, grown) = {
            let _p = private();
            let small = vec![2u8; 24];
            let big = vec![3u8; 200_000];
            let mut grown = outside.clone();
            grown.extend_from_slice(&[4u8; 5000]);
            (small, big, grown)
        };
        assert!(!in_arena(outside.as_ptr() as *mut u8), "outside registration: the system allocator");
        for v in [&small, &big, &grown] {
            assert!(in_arena(v.as_ptr() as *mut u8), "during registration: the arena");
        }
        assert_eq!(small.as_ptr() as u64 % 32, 0, "aligned to its class");
        assert_eq!(big.as_ptr() as u64 % PAGE, 0);
        let mut moved = small.clone();
        moved.extend_from_slice(&[5u8; 10_000]);
        assert!(!in_arena(moved.as_ptr() as *mut u8), "grown after registration: moved to the system heap");
        assert_eq!((moved[23], moved[24], big[199_999], grown[100]), (2, 5, 3, 4));
        let zeroed = {
            let _p = private();
            vec![0u8; 20]
        };
        assert!(in_arena(zeroed.as_ptr() as *mut u8) && zeroed.iter().all(|&b| b == 0));
        {
            // Under the lock, so that no other test's allocation comes in between.
            let mut a = arena();
            let p = a.alloc(6).expect("a block");
            a.free(p, 6);
            assert_eq!(a.alloc(6), Some(p), "a freed block is reused");
            a.free(p, 6);
        }
        let odd = Layout::from_size_align(64, 8192).expect("a layout");
        assert_eq!(class_of(odd), None, "alignments above a page go to the system allocator");
    }
}
