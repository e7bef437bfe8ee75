//! CTA barriers (`bar.sync`, `bar.arrive`, `bar.red`): arrivals, release, and the blocked lanes that
//! mechanisms see.
//!
//! In warp mode (pre-Volta, GPGPU-Sim) a static warp arrives as a whole when any of its groups executes the
//! barrier and stops issuing until the barrier releases; the barrier releases when the expected number of
//! warps (every live warp, or `count / W`) arrived. In thread mode (mechanisms with per-thread state or
//! regrouped warps) each thread arrives by itself and only the arriving threads wait.

use super::cta::Cta;
use super::exec::BarrierArrival;
use crate::mechanism::BarrierMode;
use crate::program::BarKind;
use crate::types::{lanes, LaneMask};

impl Cta {
    /// Accounts an arrival of the lanes `parts` (static warp, lanes) at a barrier; `true` when a barrier
    /// released. `changed` is set when a release changed state (livelock detection).
    pub(crate) fn arrive(
        &mut self,
        mode: BarrierMode,
        arr: &BarrierArrival,
        parts: &[(u32, LaneMask)],
        changed: &mut bool,
    ) -> bool {
        let nwarps = self.nwarps as usize;
        let b = &mut self.barriers[arr.id as usize];
        if b.waiting.len() != nwarps {
            b.waiting = vec![0; nwarps];
        }
        if arr.count.is_some() {
            b.expected = arr.count;
        }
        if let Some((vals, dst, is_pred)) = arr.red {
            if b.red_kind.is_none() {
                b.red_and = true;
                b.red_or = false;
                b.red_count = 0;
            }
            b.red_kind = Some(arr.kind);
            b.red_count += vals.count_ones();
            b.red_and &= vals == arr.lanes;
            b.red_or |= vals != 0;
            for &(w, m) in parts {
                b.red_dst.push((w, m & arr.lanes, dst, is_pred));
            }
        }
        let waits = arr.kind != BarKind::Arrive;
        match mode {
            BarrierMode::Warp => {
                b.arrived += 1;
                if waits {
                    for &(w, m) in parts {
                        self.barriers[arr.id as usize].waiting[w as usize] = m & arr.lanes;
                        self.at_barrier[w as usize] = Some(arr.id);
                    }
                }
            }
            BarrierMode::Thread => {
                b.arrived += arr.lanes.count_ones();
                if waits {
                    for &(w, m) in parts {
                        b.waiting[w as usize] |= m & arr.lanes;
                    }
                }
            }
        }
        let released = self.try_release(mode, changed);
        self.refresh_blocked();
        released
    }

    /// Releases every barrier whose expected arrivals are complete (exits may complete one); `true` when
    /// one released.
    pub(crate) fn try_release(&mut self, mode: BarrierMode, changed: &mut bool) -> bool {
        let w = self.w as u32;
        let mut released = false;
        for id in 0..self.barriers.len() {
            let b = &self.barriers[id];
            if b.arrived == 0 {
                continue;
            }
            let needed = match (mode, b.expected) {
                (BarrierMode::Warp, Some(c)) => c.div_ceil(w),
                (BarrierMode::Warp, None) => self.live_warps(),
                (BarrierMode::Thread, Some(c)) => c,
                (BarrierMode::Thread, None) => self.live_threads(),
            };
            if b.arrived < needed {
                continue;
            }
            let b = &mut self.barriers[id];
            let result_count = b.red_count;
            let (rand, ror) = (b.red_and, b.red_or);
            let kind = b.red_kind.take();
            let dsts = std::mem::take(&mut b.red_dst);
            b.arrived = 0;
            b.expected = None;
            b.waiting.iter_mut().for_each(|m| *m = 0);
            for slot in self.at_barrier.iter_mut() {
                if *slot == Some(id as u32) {
                    *slot = None;
                }
            }
            for (wi, lanes_m, dst, is_pred) in dsts {
                if is_pred {
                    let v = if kind == Some(BarKind::RedAnd) { rand } else { ror };
                    let slot = &mut self.preds[dst as usize * self.nwarps as usize + wi as usize];
                    *slot = (*slot & !lanes_m) | if v { lanes_m } else { 0 };
                } else {
                    for l in lanes(lanes_m) {
                        self.regs[dst as usize * self.padded + wi as usize * self.w + l] = result_count as u64;
                    }
                }
            }
            *changed = true;
            released = true;
        }
        if released {
            self.refresh_blocked();
        }
        released
    }

    /// Recomputes the lanes each static warp has waiting at barriers.
    pub(crate) fn refresh_blocked(&mut self) {
        // Only barriers with arrivals have waiting lanes (usually one, often none).
        let mut active = [0usize; 16];
        let mut n = 0;
        for (id, b) in self.barriers.iter().enumerate() {
            if b.arrived > 0 && n < active.len() {
                active[n] = id;
                n += 1;
            }
        }
        for wi in 0..self.nwarps as usize {
            let mut m = 0;
            for &id in &active[..n] {
                m |= self.barriers[id].waiting.get(wi).copied().unwrap_or(0);
            }
            if self.at_barrier[wi].is_some() {
                m |= self.live[wi];
            }
            self.blocked[wi] = m & self.live[wi];
        }
    }
}
