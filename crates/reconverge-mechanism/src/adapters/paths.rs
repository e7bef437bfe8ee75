//! Paths, the element of seed 003's path lists, and what every path-list traversal shares.
//!
//! A *path* is a pc, a call depth and the lanes of one warp that are there. A warp's path list is
//! complete and disjoint: every live lane is in exactly one path (fork/join's region bookkeeping is the
//! one exception, see `forkjoin.rs`). Traversal orders differ only in which path runs next, where new
//! paths go, and which paths they merge with; this module holds the parts they share: the successors of
//! a path after an instruction, the issued path's lookup, and equality for merging.

use crate::interface::Done;
use crate::types::{LaneMask, Pc, PC_NONE};
use crate::EntryKind;
use crate::{EntryView, Flow, MechError};
use smallvec::SmallVec;

/// A pc, a call depth and the lanes at it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Path {
    /// Next pc.
    pub pc: Pc,
    /// Lanes.
    pub mask: LaneMask,
    /// Function call depth (0 in the kernel); paths merge only at equal pc *and* depth.
    pub depth: u32,
}

impl Path {
    /// Whether `other` is at the same place (same pc and call depth), so the two may merge.
    #[inline]
    pub fn same_place(&self, other: &Path) -> bool {
        self.pc == other.pc && self.depth == other.depth
    }

    /// The path for a trace.
    #[inline]
    pub fn view(&self, kind: EntryKind) -> EntryView {
        let mut e = EntryView::warp(kind, self.mask, self.pc, PC_NONE);
        if self.depth != 0 {
            e.note = format!("depth={}", self.depth);
        }
        e
    }
}

/// The paths the lanes `mask` of path `p` (at `p.pc`) form after executing with outcome `flow`, keeping
/// only `live` lanes: fall-through first, then the taken side (or the callee, or each return pc). Calls
/// deepen the callers' depth, returns lessen it. Explicit-stack outcomes are an error: those
/// instructions only exist in programs prepared for another mechanism.
#[inline]
pub fn successors(p: &Path, mask: LaneMask, flow: &Flow, live: LaneMask) -> Result<SmallVec<[Path; 4]>, MechError> {
    let mut out: SmallVec<[Path; 4]> = SmallVec::new();
    let mut push = |pc: Pc, m: LaneMask, depth: u32| {
        let m = m & live;
        if m == 0 {
            return;
        }
        match out.iter_mut().find(|q| q.pc == pc && q.depth == depth) {
            Some(q) => q.mask |= m,
            None => out.push(Path { pc, mask: m, depth }),
        }
    };
    let (pc, d) = (p.pc, p.depth);
    match flow {
        Flow::Next | Flow::Exit { .. } => push(pc + 1, mask, d),
        Flow::Branch { target, taken } => {
            push(pc + 1, mask & !taken, d);
            push(*target, mask & taken, d);
        }
        Flow::Multi(groups) => {
            let listed = groups.iter().fold(0, |a, (_, m)| a | m);
            push(pc + 1, mask & !listed, d);
            let mut sorted = groups.to_vec();
            sorted.sort_by_key(|(p, _)| *p);
            for (q, m) in sorted {
                push(q, mask & m, d);
            }
        }
        Flow::Call { target, callers } => {
            push(pc + 1, mask & !callers, d);
            push(*target, mask & callers, d + 1);
        }
        Flow::Return { lanes, to } => {
            push(pc + 1, mask & !lanes, d);
            for (q, m) in to.iter() {
                push(*q, mask & m, d.saturating_sub(1));
            }
        }
        Flow::Ssy { .. } | Flow::Sync | Flow::Pbk { .. } | Flow::Brk { .. } => {
            return Err(MechError::NeedsSsy);
        }
        Flow::Join | Flow::Bssy { .. } | Flow::Bsync { .. } | Flow::Yield | Flow::SyncWarp => {
            return Err(MechError::ForeignInstruction(flow.mnemonic()));
        }
        Flow::Await { .. } => push(pc, mask, d),
    }
    Ok(out)
}

/// A list holding one path: the warp's `live` lanes at `entry` (the start of every path list).
#[inline]
pub(crate) fn start(entry: Pc, live: LaneMask) -> Vec<Path> {
    let mut v = Vec::with_capacity(8);
    v.push(Path { pc: entry, mask: live, depth: 0 });
    v
}

/// The path that issued, taken out of a list.
pub(crate) struct Taken {
    /// Where it was.
    pub index: usize,
    /// Its lanes that did not issue (waiting at a barrier) and are still live, at the same place.
    pub rest: Option<Path>,
    /// Where the issued lanes go ([`successors`]).
    pub next: SmallVec<[Path; 4]>,
}

/// Removes the path that issued (`pc`, `mask`) from `list` and works out where its lanes go after
/// `flow`; every list traversal starts its update with this.
#[inline]
pub(crate) fn take(
    list: &mut Vec<Path>,
    pc: Pc,
    mask: LaneMask,
    flow: &Flow,
    live: LaneMask,
) -> Result<Taken, MechError> {
    let index = issued(list, pc, mask)?;
    let path = list.remove(index);
    let rest = path.mask & !mask & live;
    let next = successors(&path, mask, flow, live)?;
    Ok(Taken { index, rest: (rest != 0).then_some(Path { mask: rest, ..path }), next })
}

/// The index of the path that issued (`pc`, `mask`) in `paths`: the last path at `pc` holding every
/// issued lane (the active end of a stack).
#[inline]
pub(crate) fn issued(paths: &[Path], pc: Pc, mask: LaneMask) -> Result<usize, MechError> {
    paths.iter().rposition(|p| p.pc == pc && p.mask & mask == mask).ok_or(MechError::NotHeld("the path list"))
}

/// Removes the lanes not in `live` from every path and drops the paths left empty.
#[inline]
pub(crate) fn retain_live(paths: &mut Vec<Path>, live: LaneMask) {
    paths.retain_mut(|p| {
        p.mask &= live;
        p.mask != 0
    });
}

/// The first path in `order` with a lane that may issue (live, not waiting at a barrier), and those lanes.
#[inline]
pub(crate) fn first_ready<'a>(
    order: impl Iterator<Item = &'a Path>,
    live: LaneMask,
    blocked: LaneMask,
) -> Option<(Pc, LaneMask)> {
    order.map(|p| (p.pc, p.mask & live & !blocked)).find(|(_, m)| *m != 0)
}

/// How many straight-line instructions from `pc` (at most `max`) the path holding exactly the issuing
/// lanes `mask` may run back to back without meeting another path: 1 unless it holds every issuing lane
/// and no other lane, and no other path is at `pc`; otherwise up to the nearest pc ahead that another path
/// holds (any call depth), where the path may merge on the run's last instruction. Straight-line code moves
/// only the path's pc, so a list traversal whose order compares places (pc, depth, thread count) keeps it
/// where it is while it passes no other path.
#[inline]
pub(crate) fn clear_run<'a>(paths: impl IntoIterator<Item = &'a Path>, pc: Pc, mask: LaneMask, max: u32) -> u32 {
    let mut n = max;
    let mut mine = false;
    for q in paths {
        if q.pc == pc {
            if q.mask != mask || mine {
                return 1;
            }
            mine = true;
        } else if q.pc > pc {
            n = n.min(q.pc - pc);
        }
    }
    if mine {
        n.max(1)
    } else {
        1
    }
}

/// Moves the path at `from` holding `mask` to `to` (the middle of a straight run, see [`clear_run`]).
#[inline]
pub(crate) fn skip(paths: &mut [Path], from: Pc, mask: LaneMask, to: Pc) -> Done {
    match paths.iter_mut().find(|p| p.pc == from && p.mask == mask) {
        Some(p) => {
            p.pc = to;
            Ok(())
        }
        None => Err(MechError::NotHeld("the path list")),
    }
}

/// [`clear_run`] for per-thread pcs (`pcs` and `depths` per lane): the lanes `mask` at (`pc`, the depth of
/// its first lane) may run up to the nearest pc ahead where another live lane at that depth waits, unless
/// another live lane is at their place (it would split from them, adding a place).
#[inline]
pub(crate) fn clear_lanes(pcs: &[Pc], depths: &[u32], live: LaneMask, pc: Pc, mask: LaneMask, max: u32) -> u32 {
    let Some(l0) = crate::types::lanes(mask).next() else { return 1 };
    let d = depths[l0];
    if crate::types::lanes(mask).any(|l| pcs[l] != pc || depths[l] != d) {
        return 1;
    }
    let mut n = max;
    for l in crate::types::lanes(live & !mask) {
        if depths[l] != d {
            continue;
        }
        if pcs[l] == pc {
            return 1;
        }
        if pcs[l] > pc {
            n = n.min(pcs[l] - pc);
        }
    }
    n.max(1)
}

/// The per-thread pcs and call depths of a warp (lane-indexed; meaningful for live lanes).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ThreadPcs {
    /// The pc of each lane.
    pub pc: Vec<Pc>,
    /// The call depth of each lane.
    pub depth: Vec<u32>,
    /// The live lanes as of the last update.
    pub live: LaneMask,
}

/// The number of distinct places (pc and call depth) of the lanes `mask` in a table of per-thread pcs: the
/// paths it implicitly holds. Each round takes the lowest remaining lane's place and removes every lane
/// there, so a converged warp costs one pass and nothing is allocated (the structure-size statistic asks
/// after every update).
#[inline]
pub(crate) fn place_count(pc: &[Pc], depth: &[u32], mask: LaneMask) -> usize {
    let mut rest = mask;
    let mut n = 0;
    while rest != 0 {
        let first = rest.trailing_zeros() as usize;
        let (p, d) = (pc[first], depth[first]);
        let mut there: LaneMask = 0;
        for l in crate::types::lanes(rest) {
            there |= LaneMask::from(pc[l] == p && depth[l] == d) << l;
        }
        rest &= !there;
        n += 1;
    }
    n
}

impl ThreadPcs {
    /// The number of paths among `mask`: the distinct (pc, depth) places of its lanes, counted without
    /// building the list.
    #[inline]
    pub fn path_count(&self, mask: LaneMask) -> usize {
        place_count(&self.pc, &self.depth, mask)
    }

    /// The paths (lanes at equal pc and depth) among `mask`, in `sorted:depth` order.
    pub fn paths(&self, mask: LaneMask) -> Vec<Path> {
        let mut out: Vec<Path> = Vec::new();
        for l in crate::types::lanes(mask) {
            let (pc, depth) = (self.pc[l], self.depth[l]);
            match out.iter_mut().find(|p| p.pc == pc && p.depth == depth) {
                Some(p) => p.mask |= 1 << l,
                None => out.push(Path { pc, mask: 1 << l, depth }),
            }
        }
        out.sort_by(|a, b| crate::adapters::path_list::Priority::Depth.cmp(a, b));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn place_count_counts_distinct_pc_and_depth_pairs_of_the_mask() {
        let pc = [4, 4, 7, 4, 7, 9];
        let depth = [0, 1, 0, 0, 0, 0];
        assert_eq!(place_count(&pc, &depth, 0b11_1111), 4);
        assert_eq!(place_count(&pc, &depth, 0b00_1001), 1);
        assert_eq!(place_count(&pc, &depth, 0b01_0110), 2);
        assert_eq!(place_count(&pc, &depth, 0), 0);
        // The same as the paths' count.
        let t = ThreadPcs { pc: pc.to_vec(), depth: depth.to_vec(), live: 0b11_1111 };
        for mask in 0..64 {
            assert_eq!(t.path_count(mask), t.paths(mask).len(), "mask {mask:#b}");
        }
        // 64 lanes at up to 64 places, places repeating out of order (the set's probing and the
        // predecessor shortcut), against the sorted path list.
        for seed in 0..200u64 {
            let mut x = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
            let mut next = |m: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % m
            };
            let places = 1 + next(64);
            let pc: Vec<Pc> = (0..64).map(|_| next(places) as Pc * 977).collect();
            let depth: Vec<u32> = (0..64).map(|_| next(2) as u32).collect();
            let mask = next(u64::MAX) | 1;
            let t = ThreadPcs { pc, depth, live: mask };
            assert_eq!(t.path_count(mask), t.paths(mask).len(), "seed {seed}");
        }
    }

    #[test]
    fn calls_and_returns_change_depth() {
        let p = Path { pc: 10, mask: 0b1111, depth: 1 };
        let s = successors(&p, 0b1111, &Flow::Call { target: 50, callers: 0b0011 }, 0b1111).unwrap();
        assert_eq!(s.as_slice(), &[Path { pc: 11, mask: 0b1100, depth: 1 }, Path { pc: 50, mask: 0b0011, depth: 2 }]);
        let to: Box<[(Pc, LaneMask)]> = vec![(7, 0b0001), (9, 0b0010)].into();
        let s = successors(&p, 0b0011, &Flow::Return { lanes: 0b0011, to }, 0b1111).unwrap();
        assert_eq!(s.as_slice(), &[Path { pc: 7, mask: 0b0001, depth: 0 }, Path { pc: 9, mask: 0b0010, depth: 0 }]);
    }

    #[test]
    fn exits_and_dead_lanes_leave_no_path() {
        let p = Path { pc: 3, mask: 0b11, depth: 0 };
        assert!(successors(&p, 0b11, &Flow::Exit { lanes: 0b11 }, 0).unwrap().is_empty());
        let s = successors(&p, 0b11, &Flow::Branch { target: 9, taken: 0b10 }, 0b01).unwrap();
        assert_eq!(s.as_slice(), &[Path { pc: 4, mask: 0b01, depth: 0 }]);
    }

    #[test]
    fn issued_finds_the_topmost_path_holding_the_lanes() {
        let paths = [Path { pc: 5, mask: 0b0011, depth: 0 }, Path { pc: 5, mask: 0b1100, depth: 0 }];
        assert_eq!(issued(&paths, 5, 0b0100).unwrap(), 1);
        assert_eq!(issued(&paths, 5, 0b0001).unwrap(), 0);
        assert!(issued(&paths, 6, 0b0001).is_err());
    }

    #[test]
    fn a_clear_run_stops_before_another_path() {
        let paths = [Path { pc: 5, mask: 0b0011, depth: 0 }, Path { pc: 9, mask: 0b1100, depth: 1 }];
        assert_eq!(clear_run(&paths, 5, 0b0011, 8), 4, "pcs 5 to 8, meeting the other path at 9");
        assert_eq!(clear_run(&paths, 5, 0b0001, 8), 1, "a lane of the path does not issue");
        assert_eq!(clear_run(&paths, 9, 0b1100, 8), 8, "nothing ahead");
        let two = [Path { pc: 5, mask: 0b0011, depth: 0 }, Path { pc: 5, mask: 0b1100, depth: 1 }];
        assert_eq!(clear_run(&two, 5, 0b0011, 8), 1, "another path at the same pc");
    }

    #[test]
    fn a_lane_run_stops_before_a_lane_at_the_same_depth() {
        let mut pcs = vec![0; 64];
        let mut depths = vec![0; 64];
        pcs[..4].copy_from_slice(&[3, 3, 6, 4]);
        depths[3] = 1;
        assert_eq!(clear_lanes(&pcs, &depths, 0b1111, 3, 0b0011, 9), 3, "lane 2 waits at pc 6");
        assert_eq!(clear_lanes(&pcs, &depths, 0b1011, 3, 0b0011, 9), 9, "lane 2 exited");
        assert_eq!(clear_lanes(&pcs, &depths, 0b1111, 3, 0b0001, 9), 1, "lane 1 would split off");
    }
}
