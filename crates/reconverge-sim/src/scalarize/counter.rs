//! The per-SM counter of the dynamic scalarization metrics, and the per-warp tracking of dynamic
//! divergent regions for the oracle.

use super::oracle::{best_schedule, ThreadSeq, ORACLE_BUDGET};
use super::{PcPlan, ScalarizeStats};
use crate::types::{lanes, LaneMask};
use std::collections::BTreeMap;

/// Elements recorded per warp for pending regions; a region that would exceed it is no longer recorded
/// and the oracle takes the mechanism's own convergence in it as a lower bound (counted as not exact).
const RECORD_LIMIT: usize = 1 << 16;

/// One static warp's part of an issued group, seen after execution.
#[derive(Clone, Copy, Debug)]
pub struct Part {
    /// The CTA slot of its threads.
    pub cta: usize,
    /// The static warp.
    pub warp: u32,
    /// Its lanes that issued.
    pub lanes: LaneMask,
    /// Its live (not exited) lanes after the instruction.
    pub live_after: LaneMask,
}

/// A dynamic divergent region of one warp, while it is open.
struct Region {
    /// Per lane, its elements `(entry pc, thread instructions)`; dropped on overflow.
    seqs: Vec<Vec<(u32, u32)>>,
    /// Thread instructions executed in the region.
    thread_instructions: u64,
    /// Of them, issued with the whole live warp together.
    dynamic: u64,
    overflow: bool,
}

/// Region tracking of one static warp.
struct WarpTrack {
    /// Per lane: convergent elements entered so far (the region a lane is in).
    count: Vec<u32>,
    /// Per lane, once exited: its `count` then and whether it was in a divergent element.
    exited_at: Vec<(u32, bool)>,
    /// Lanes whose current element is divergent.
    in_div: LaneMask,
    /// Lanes that hold a thread.
    present: LaneMask,
    /// Lanes not exited.
    live: LaneMask,
    /// Open regions by index.
    regions: BTreeMap<u32, Region>,
    /// Elements recorded in open regions.
    recorded: usize,
}

/// Follows the warps of one SM core for the scalarization metrics (the counts go to a
/// [`ScalarizeStats`]; a region's oracle share is added when the region closes).
pub struct ScalarCounter {
    ctas: Vec<Option<Vec<WarpTrack>>>,
    /// What is left of the oracle's work budget ([`ORACLE_BUDGET`]).
    budget: u64,
}

impl Default for ScalarCounter {
    fn default() -> Self {
        ScalarCounter { ctas: Vec::new(), budget: ORACLE_BUDGET }
    }
}

impl ScalarCounter {
    /// A CTA became resident in slot `slot`, with `live[w]` the lanes of warp `w` that hold threads.
    pub fn launch(&mut self, slot: usize, live: &[LaneMask], w: usize) {
        if self.ctas.len() <= slot {
            self.ctas.resize_with(slot + 1, || None);
        }
        let warps = live
            .iter()
            .map(|&m| WarpTrack {
                count: vec![0; w],
                exited_at: vec![(0, false); w],
                in_div: 0,
                present: m,
                live: m,
                regions: BTreeMap::new(),
                recorded: 0,
            })
            .collect();
        self.ctas[slot] = Some(warps);
    }

    /// Counts into `s` one issued group at `pc` (`mask`: its lanes, `parts`: per CTA and static warp).
    pub fn on_issue(&mut self, s: &mut ScalarizeStats, p: &PcPlan, pc: u32, mask: LaneMask, parts: &[Part]) {
        if !p.own {
            return;
        }
        let active = u64::from(mask.count_ones());
        let np = parts.len() as u64;
        s.thread_instructions += active;
        s.convergent.ca += if p.ca { active } else { 0 };
        s.convergent.ca_va += if p.ca_va { active } else { 0 };
        s.convergent.exit += if p.exit { active } else { 0 };
        s.convergent.oracle += if p.exit { active } else { 0 };
        s.divergent += if p.exit { 0 } else { active };
        let full: u64 = parts
            .iter()
            .filter(|x| self.warp(x).is_some_and(|t| t.live == x.lanes))
            .map(|x| u64::from(x.lanes.count_ones()))
            .sum();
        s.convergent.dcp += if p.exit { active } else { full };
        count_activity(s, p, active, np);
        for part in parts {
            let Some(Some(warps)) = self.ctas.get_mut(part.cta) else { continue };
            let Some(t) = warps.get_mut(part.warp as usize) else { continue };
            track(t, s, p, pc, part, &mut self.budget);
        }
    }

    /// The tracked state of the static warp of `part`.
    fn warp(&self, part: &Part) -> Option<&WarpTrack> {
        self.ctas.get(part.cta)?.as_ref()?.get(part.warp as usize)
    }
}

/// The issue split and the baseline and scalarized activity of one issued group.
fn count_activity(s: &mut ScalarizeStats, p: &PcPlan, active: u64, np: u64) {
    let i = &mut s.issued;
    match () {
        _ if p.scalar => i.scalar += 1,
        _ if p.exit => i.converged += 1,
        _ if active >= 2 => i.dcp += 1,
        _ => i.diverged += 1,
    }
    i.base += np * u64::from(p.base_instructions);
    let (reads, sreads, writes) = (u64::from(p.reads), u64::from(p.scalar_reads), u64::from(p.writes));
    let (mem, elems) = (p.mem_elements > 0, u64::from(p.mem_elements));
    let b = &mut s.baseline;
    b.operations += active;
    b.register_reads += active * reads;
    b.register_writes += active * writes;
    if mem {
        b.address_counts += active;
        b.data_accesses += active * elems;
    }
    let z = &mut s.scalarized;
    // A scalar instruction runs once per static warp in the group; a thread instruction once per thread,
    // reading its scalar operands once per warp.
    let runs = if p.scalar { np } else { active };
    z.operations += runs;
    z.register_reads += if p.scalar { np * reads } else { active * (reads - sreads) + np * sreads };
    z.register_writes += runs * writes;
    if mem {
        z.address_counts += if p.scalar || p.warp_sequential { np } else { active };
        z.data_accesses += runs * elems;
    }
}

/// Follows the lanes of one warp part through elements and regions; closes the regions every live lane
/// has left.
fn track(t: &mut WarpTrack, s: &mut ScalarizeStats, p: &PcPlan, pc: u32, part: &Part, budget: &mut u64) {
    let full = t.live == part.lanes;
    if p.entry || part.lanes & t.in_div != 0 {
        let w = t.count.len();
        for l in lanes(part.lanes) {
            let bit = 1 << l;
            if p.entry && p.exit {
                t.count[l] += 1;
                t.in_div &= !bit;
                continue;
            }
            if p.entry {
                t.in_div |= bit;
            }
            if t.in_div & bit == 0 {
                continue;
            }
            let r = t.regions.entry(t.count[l]).or_insert_with(|| Region {
                seqs: vec![Vec::new(); w],
                thread_instructions: 0,
                dynamic: 0,
                overflow: false,
            });
            if p.entry && !r.overflow {
                if t.recorded >= RECORD_LIMIT {
                    t.recorded -= r.seqs.iter().map(Vec::len).sum::<usize>();
                    r.seqs = Vec::new();
                    r.overflow = true;
                } else {
                    r.seqs[l].push((pc, 0));
                    t.recorded += 1;
                }
            }
            if let Some(last) = r.seqs.get_mut(l).and_then(|q| q.last_mut()) {
                last.1 += 1;
            }
            r.thread_instructions += 1;
            r.dynamic += u64::from(full);
        }
    }
    let exited = t.live & part.lanes & !part.live_after;
    for l in lanes(exited) {
        t.exited_at[l] = (t.count[l], t.in_div & (1 << l) != 0);
    }
    t.live &= !exited;
    close_ready(t, s, budget);
}

/// Solves and drops the regions every live lane has left, within the oracle's work `budget`.
fn close_ready(t: &mut WarpTrack, s: &mut ScalarizeStats, budget: &mut u64) {
    let min_live = lanes(t.live).map(|l| t.count[l]).min().unwrap_or(u32::MAX);
    while let Some(entry) = t.regions.first_entry() {
        if *entry.key() >= min_live {
            break;
        }
        let (r, region) = entry.remove_entry();
        t.recorded -= region.seqs.iter().map(Vec::len).sum::<usize>();
        let (best, exact) = if region.overflow {
            (region.dynamic, false)
        } else {
            let threads: Vec<ThreadSeq<'_>> = lanes(t.present)
                .filter(|&l| {
                    let (at, div) = t.exited_at[l];
                    t.live & (1 << l) != 0 || at > r || (at == r && div)
                })
                .map(|l| ThreadSeq {
                    elements: &region.seqs[l],
                    exits: t.live & (1 << l) == 0 && t.exited_at[l] == (r, true),
                })
                .collect();
            let b = best_schedule(&threads, budget);
            if !b.exact && *budget == 0 {
                s.oracle_over_budget += 1;
            }
            // The mechanism's own schedule is a schedule too: a lower bound never below it.
            (if b.exact { b.convergent } else { b.convergent.max(region.dynamic) }, b.exact)
        };
        s.convergent.oracle += best;
        if exact {
            s.oracle_exact += region.thread_instructions;
        }
    }
}
