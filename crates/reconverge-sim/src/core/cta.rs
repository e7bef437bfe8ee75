//! Per-CTA architectural state, laid out structure-of-arrays.
//!
//! Registers are indexed by *thread slot*, not by warp: value register `r` of thread `t` is
//! `regs[r * padded + t]`, so the lanes of a static warp are contiguous (whole-warp loops vectorize) and a
//! mechanism that regroups threads across warps can still address any thread. Predicates are one lane
//! mask per static warp.

use crate::mechanism::CtaView;
use crate::program::Program;
use crate::types::{full_mask, LaneMask, Pc};

/// A device-function activation of one thread.
#[derive(Clone, Debug)]
pub(crate) struct CallFrame {
    /// Where the call returns.
    pub ret_pc: Pc,
    /// The call instruction (its `rets` say what to copy back).
    pub call_pc: Pc,
    /// The caller's frame base.
    pub caller_base: u32,
    /// The callee's register window before the call (restored on return; makes recursion work).
    pub saved_regs: Vec<u64>,
    /// The callee's predicate window before the call.
    pub saved_preds: Vec<bool>,
}

/// Per-barrier state.
#[derive(Clone, Debug, Default)]
pub(crate) struct Barrier {
    /// Warps (warp mode) or threads (thread mode) that have arrived.
    pub arrived: u32,
    /// Lanes waiting, per warp.
    pub waiting: Vec<LaneMask>,
    /// The thread count the barrier waits for, when given (`bar.sync id, count`).
    pub expected: Option<u32>,
    /// `bar.red` accumulator: popc count / and / or.
    pub red_count: u32,
    /// `bar.red.and` accumulator.
    pub red_and: bool,
    /// `bar.red.or` accumulator.
    pub red_or: bool,
    /// Deferred `bar.red` results: (static warp, lanes, destination register or predicate, is predicate).
    pub red_dst: Vec<(u32, LaneMask, u32, bool)>,
    /// The reduction kind of the pending `bar.red`.
    pub red_kind: Option<crate::program::BarKind>,
}

/// Register files of retired CTAs, kept per host thread for the next CTA ([`Cta::new`] takes one, a
/// dropped [`Cta`] gives its own back): a launch's CTAs, and a program's launches of one kernel, need
/// the same size, and a fresh file above the allocator's mapping threshold (128 KiB) is new pages that
/// the kernel zeroes and maps on first touch, and unmaps again when the CTA retires. On Rodinia's
/// streamcluster (1,432 launches of 512-thread CTAs) that churn was 30% of the functional time.
mod spare {
    use std::cell::RefCell;

    /// Files kept per host thread.
    const FILES: usize = 8;
    /// Largest file kept, in 8-byte registers (32 MiB).
    const LARGEST: usize = 4 << 20;

    thread_local! {
        static SPARE: RefCell<Vec<Vec<u64>>> = const { RefCell::new(Vec::new()) };
    }

    /// `len` zeroed registers, in a kept file when one is large enough.
    pub(super) fn zeroed(len: usize) -> Vec<u64> {
        let kept = SPARE.with(|s| {
            let mut s = s.borrow_mut();
            let i = s.iter().position(|v| v.capacity() >= len)?;
            Some(s.swap_remove(i))
        });
        match kept {
            Some(mut v) => {
                v.clear();
                v.resize(len, 0);
                v
            }
            None => vec![0; len],
        }
    }

    /// Keeps `regs` for a later CTA (unless enough are kept or it is too large).
    pub(super) fn keep(regs: Vec<u64>) {
        if regs.capacity() == 0 || regs.capacity() > LARGEST {
            return;
        }
        // A thread that is ending has no use for it (and its kept files are being dropped).
        let _ = SPARE.try_with(|s| {
            let mut s = s.borrow_mut();
            if s.len() < FILES {
                s.push(regs);
            }
        });
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn a_kept_file_comes_back_zeroed_and_only_when_large_enough() {
            keep(vec![7; 1000]);
            assert_eq!(zeroed(2000), vec![0; 2000], "too small to reuse: a fresh file");
            let reused = zeroed(600);
            assert_eq!(reused, vec![0; 600], "the kept file's registers are zero again");
            assert!(reused.capacity() >= 1000, "the kept file, not a new one");
            for _ in 0..2 * FILES {
                keep(vec![1; 10]);
            }
            assert_eq!(SPARE.with(|s| s.borrow().len()), FILES, "at most FILES kept");
            keep(vec![1; LARGEST + 1]);
            assert_eq!(SPARE.with(|s| s.borrow().len()), FILES);
        }
    }
}

impl Drop for Cta {
    fn drop(&mut self) {
        spare::keep(std::mem::take(&mut self.regs));
    }
}

/// One resident CTA.
#[derive(Clone, Debug)]
pub(crate) struct Cta {
    /// Block index.
    pub id: [u32; 3],
    /// Linear block index.
    pub linear: u64,
    /// Threads in the CTA.
    pub nthreads: u32,
    /// Static warps.
    pub nwarps: u32,
    /// Warp size.
    pub w: usize,
    /// Thread slots (nwarps × w).
    pub padded: usize,
    /// Value registers `[nregs][padded]`.
    pub regs: Vec<u64>,
    /// Predicate masks `[npreds][nwarps]`.
    pub preds: Vec<u64>,
    /// Carry flags per warp (`.cc`).
    pub carry: Vec<u64>,
    /// Shared memory.
    pub shared: Vec<u8>,
    /// Thread index of each slot.
    pub tid: Vec<[u32; 3]>,
    /// Current frame base (local-space address) of each slot.
    pub frame_base: Vec<u32>,
    /// Local memory of each slot (frames); empty until the thread first writes it or calls (read
    /// through [`Cta::local`], written through [`Cta::local_mut`]).
    pub local: Vec<Vec<u8>>,
    /// The kernel's frame as every thread starts with it (zeros): what an untouched thread's local
    /// memory reads as.
    pub zero_frame: Vec<u8>,
    /// Call stacks of each slot.
    pub calls: Vec<Vec<CallFrame>>,
    /// Lanes whose thread has not exited, per warp.
    pub live: Vec<LaneMask>,
    /// Named barriers 0..16.
    pub barriers: Vec<Barrier>,
    /// Warp-mode barriers: the barrier each static warp waits at.
    pub at_barrier: Vec<Option<u32>>,
    /// Lanes per static warp that wait at a barrier (the whole live warp in warp mode), kept in step with
    /// `barriers` and `at_barrier`: what mechanisms see as blocked.
    pub blocked: Vec<LaneMask>,
}

impl Cta {
    /// A fresh CTA for block `id` of a launch with `block` dimensions.
    pub(crate) fn new(prog: &Program, id: [u32; 3], linear: u64, block: [u32; 3], w: u32, dynamic_shared: u32) -> Cta {
        let nthreads = block[0] * block[1] * block[2];
        let w = w as usize;
        let nwarps = (nthreads as usize).div_ceil(w) as u32;
        let padded = nwarps as usize * w;
        let mut tid = vec![[0u32; 3]; padded];
        for (t, slot) in tid.iter_mut().enumerate().take(nthreads as usize) {
            let t = t as u32;
            *slot = [t % block[0], (t / block[0]) % block[1], t / (block[0] * block[1])];
        }
        let live = (0..nwarps as usize)
            .map(|k| {
                let n = (nthreads as usize - k * w).min(w);
                full_mask(n as u32)
            })
            .collect();
        let mut shared = vec![0u8; prog.static_shared as usize + dynamic_shared as usize];
        for v in &prog.shared {
            let a = v.addr as usize;
            if !v.init.is_empty() && a + v.init.len() <= shared.len() {
                shared[a..a + v.init.len()].copy_from_slice(&v.init);
            }
        }
        let kframe = prog.functions[0].frame_size;
        Cta {
            id,
            linear,
            nthreads,
            nwarps,
            w,
            padded,
            regs: spare::zeroed(prog.nregs as usize * padded),
            preds: vec![0; prog.npreds as usize * nwarps as usize],
            carry: vec![0; nwarps as usize],
            shared,
            tid,
            frame_base: vec![0; padded],
            local: vec![Vec::new(); padded],
            zero_frame: vec![0u8; kframe as usize],
            calls: vec![Vec::new(); padded],
            live,
            barriers: vec![Barrier::default(); 16],
            at_barrier: vec![None; nwarps as usize],
            blocked: vec![0; nwarps as usize],
        }
    }

    /// The local memory of thread slot `t` (its kernel frame of zeros until it first writes).
    #[inline]
    pub(crate) fn local(&self, t: usize) -> &[u8] {
        match &self.local[t] {
            l if l.is_empty() => &self.zero_frame,
            l => l,
        }
    }

    /// The local memory of thread slot `t`, for writing (at least its kernel frame).
    #[inline]
    pub(crate) fn local_mut(&mut self, t: usize) -> &mut Vec<u8> {
        let l = &mut self.local[t];
        if l.len() < self.zero_frame.len() {
            l.resize(self.zero_frame.len(), 0);
        }
        l
    }

    /// Whether every thread has exited.
    pub(crate) fn done(&self) -> bool {
        self.live.iter().all(|&m| m == 0)
    }

    /// Live threads in the CTA.
    pub(crate) fn live_threads(&self) -> u32 {
        self.live.iter().map(|m| m.count_ones()).sum()
    }

    /// Live (not finished) warps.
    pub(crate) fn live_warps(&self) -> u32 {
        self.live.iter().filter(|&&m| m != 0).count() as u32
    }

    /// The thread index of lane `lane` of warp `warp`.
    pub(crate) fn thread_index(&self, warp: u32, lane: usize) -> [u32; 3] {
        self.tid[warp as usize * self.w + lane]
    }

    /// What mechanisms see of the CTA.
    pub(crate) fn view(&self) -> CtaView<'_> {
        CtaView { live: &self.live, blocked: &self.blocked, w: self.w as u32 }
    }
}
