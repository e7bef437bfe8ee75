//! The dynamic oracle of seed 004 §4.1: the best schedule of one dynamic divergent region.
//!
//! A region is what the threads of one warp execute between two visits to blocks the analysis proves
//! convergent. Each participating thread brings its sequence of *elements* (an element is a block visit,
//! or the rest of a block after a call: its entry pc and the thread instructions executed in it) and
//! whether it exits inside the region. A schedule advances any set of threads standing at the same entry
//! pc by one element; a step is *convergent* when it advances every thread of the warp that has not
//! exited (the warp runs together, as after a `syncwarp`). The oracle is the largest number of thread
//! instructions any schedule executes in convergent steps: the multiple longest common subsequence of the
//! threads' sequences (weighted by instructions) that seed 004 computes, extended to threads that leave.
//!
//! The optimum is found over *match columns* (one element of every thread still in the warp, all at the
//! same entry pc): from any state it suffices to try, for each entry pc, the column at its earliest
//! occurrence in every thread (a later occurrence leaves fewer options: the dominant-point argument of
//! MLCS), and, for each thread that exits in the region, letting it run to its exit alone. An A* search
//! over those states, bounded above by pairwise weighted LCS tables (`Bound`), finds the optimum; when
//! it would expand more than [`EXACT_STATES`] states, the better of the best schedule found so far and a
//! greedy min-pc schedule is a lower bound instead, and the result says it is not exact.

use std::collections::HashMap;

/// The most states the exact search expands in one region.
pub const EXACT_STATES: usize = 1 << 17;

/// The oracle's work budget per SM core and launch, in steps (a bound-table entry, or one successor of an
/// expanded state per class): about a second of host time. A region that finds the budget spent, or
/// spends the rest of it, gets the greedy lower bound instead of the optimum (not exact), so `--scalarize`
/// costs at most this much beyond the run itself however many divergent regions a kernel has; the result
/// counts such regions (`oracle_over_budget`).
pub const ORACLE_BUDGET: u64 = 1 << 26;

/// One participating thread: its elements `(entry pc, thread instructions)` and whether it exits inside
/// the region (then its last element holds the exit).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ThreadSeq<'a> {
    /// The elements in order.
    pub elements: &'a [(u32, u32)],
    /// Whether the thread exits in its last element.
    pub exits: bool,
}

/// The oracle's answer for a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Best {
    /// Thread instructions executed in convergent steps.
    pub convergent: u64,
    /// Whether `convergent` is the optimum (otherwise a lower bound).
    pub exact: bool,
}

struct Class<'a> {
    elements: &'a [(u32, u32)],
    exits: bool,
    threads: u64,
}

impl Class<'_> {
    fn exited(&self, p: u32) -> bool {
        self.exits && p as usize == self.elements.len()
    }
}

/// The best schedule of one region, spending at most `budget` steps of work (see [`ORACLE_BUDGET`]; what
/// it spends is taken off). With the budget spent, the greedy lower bound (`exact: false`).
pub fn best_schedule(threads: &[ThreadSeq<'_>], budget: &mut u64) -> Best {
    // Threads with identical sequences move together in some optimal schedule (mirroring one onto the
    // other never breaks a convergent step), so each distinct sequence is one class.
    let mut classes: Vec<Class<'_>> = Vec::new();
    for t in threads {
        match classes.iter_mut().find(|c| c.elements == t.elements && c.exits == t.exits) {
            Some(c) => c.threads += 1,
            None => classes.push(Class { elements: t.elements, exits: t.exits, threads: 1 }),
        }
    }
    // A thread that stays and has nothing to do waits at the region's end: no step can be convergent.
    if classes.is_empty() || classes.iter().any(|c| !c.exits && c.elements.is_empty()) {
        return Best { convergent: 0, exact: true };
    }
    match exact(&classes, budget) {
        Ok(v) => Best { convergent: v, exact: true },
        Err(found) => Best { convergent: found.max(greedy(&classes)), exact: false },
    }
}

/// Per class, per entry pc, the sorted positions where it occurs.
type Occurrences = Vec<HashMap<u32, Vec<u32>>>;

/// The states reachable from `p` in one move, appended to `out` (`k` positions each) with the move's
/// gain in `gains`.
fn successors(
    classes: &[Class<'_>],
    occ: &Occurrences,
    pcs: &[u32],
    p: &[u32],
    out: &mut Vec<u32>,
    gains: &mut Vec<u64>,
) {
    out.clear();
    gains.clear();
    'pc: for &e in pcs {
        let base = out.len();
        out.extend_from_slice(p);
        let mut gain = 0u64;
        let mut any = false;
        for (i, c) in classes.iter().enumerate() {
            if c.exited(p[i]) {
                continue;
            }
            let at = occ[i].get(&e).and_then(|list| list.get(list.partition_point(|&x| x < p[i])));
            let Some(&at) = at else {
                out.truncate(base);
                continue 'pc;
            };
            gain += c.threads * u64::from(c.elements[at as usize].1);
            out[base + i] = at + 1;
            any = true;
        }
        if any {
            gains.push(gain);
        } else {
            out.truncate(base);
        }
    }
    for (i, c) in classes.iter().enumerate() {
        if c.exits && !c.exited(p[i]) {
            let base = out.len();
            out.extend_from_slice(p);
            out[base + i] = c.elements.len() as u32;
            gains.push(0);
        }
    }
}

/// Pairwise weighted-LCS tables of at most this many entries in all bound a region's search.
const BOUND_ENTRIES: usize = 1 << 22;

/// An upper bound on the convergent thread instructions still to come from a state: every future column
/// holds every class that never exits, so its columns form a common subsequence of any two of them (the
/// weighted LCS of their suffixes bounds it), and at most every live thread joins each column.
struct Bound {
    /// `(c, d, table)`: `table[i * (len_d + 1) + j]` = weighted LCS of `c[i..]` and `d[j..]`.
    pairs: Vec<(usize, usize, Vec<u32>)>,
    /// Per class, the weight of each suffix.
    suffix: Vec<Vec<u64>>,
}

impl Bound {
    /// The bound's tables, or `None` when building them would cost more than `budget` steps.
    fn new(classes: &[Class<'_>], budget: &mut u64) -> Option<Bound> {
        let suffix = classes
            .iter()
            .map(|c| {
                let mut v = vec![0u64; c.elements.len() + 1];
                for i in (0..c.elements.len()).rev() {
                    v[i] = v[i + 1] + u64::from(c.elements[i].1);
                }
                v
            })
            .collect();
        let mut stay: Vec<usize> = (0..classes.len()).filter(|&i| !classes[i].exits).collect();
        stay.sort_by_key(|&i| classes[i].elements.len());
        let mut candidates: Vec<(usize, usize)> = Vec::new();
        for (a, &c) in stay.iter().enumerate() {
            for &d in &stay[a + 1..] {
                candidates.push((c, d));
            }
        }
        // The shortest sequences give the tightest bounds: their pairs first.
        candidates.sort_by_key(|&(c, d)| classes[c].elements.len() + classes[d].elements.len());
        let mut pairs = Vec::new();
        let mut used = 0usize;
        for (c, d) in candidates {
            let size = (classes[c].elements.len() + 1) * (classes[d].elements.len() + 1);
            if used + size > BOUND_ENTRIES {
                continue;
            }
            if size as u64 > *budget {
                *budget = 0;
                return None;
            }
            *budget -= size as u64;
            used += size;
            pairs.push((c, d, wlcs(classes[c].elements, classes[d].elements)));
        }
        Some(Bound { pairs, suffix })
    }

    fn at(&self, classes: &[Class<'_>], p: &[u32]) -> u64 {
        // Never more than every live thread's remaining instructions.
        let mut live = 0u64;
        let mut total = 0u64;
        let mut per_thread = u64::MAX;
        for (i, c) in classes.iter().enumerate() {
            if c.exited(p[i]) {
                continue;
            }
            live += c.threads;
            total += c.threads * self.suffix[i][p[i] as usize];
            if !c.exits {
                per_thread = per_thread.min(self.suffix[i][p[i] as usize]);
            }
        }
        for (c, d, t) in &self.pairs {
            let n = classes[*d].elements.len() + 1;
            per_thread = per_thread.min(u64::from(t[p[*c] as usize * n + p[*d] as usize]));
        }
        total.min(live.saturating_mul(per_thread))
    }
}

/// The weighted longest common subsequence (by entry pc; an element weighs its thread instructions, the
/// larger of the two where they differ) of every pair of suffixes of `a` and `b`.
fn wlcs(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<u32> {
    let n = b.len() + 1;
    let mut t = vec![0u32; (a.len() + 1) * n];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            let skip = t[(i + 1) * n + j].max(t[i * n + j + 1]);
            t[i * n + j] = if a[i].0 == b[j].0 {
                skip.max(a[i].1.max(b[j].1).saturating_add(t[(i + 1) * n + j + 1]))
            } else {
                skip
            };
        }
    }
    t
}

/// The optimum over match columns by A* search with [`Bound`], or `Err` (with the best schedule found)
/// after [`EXACT_STATES`] expansions or when `budget` runs out.
fn exact(classes: &[Class<'_>], budget: &mut u64) -> Result<u64, u64> {
    let k = classes.len();
    let mut occ: Occurrences = vec![HashMap::new(); k];
    let mut pcs: Vec<u32> = Vec::new();
    for (i, c) in classes.iter().enumerate() {
        for (n, &(e, _)) in c.elements.iter().enumerate() {
            occ[i].entry(e).or_default().push(n as u32);
            pcs.push(e);
        }
    }
    pcs.sort_unstable();
    pcs.dedup();
    let Some(bound) = Bound::new(classes, budget) else { return Err(0) };
    // `states` holds `k` positions per state; `best[s]` the most convergent instructions found to reach it.
    let mut index: HashMap<Vec<u32>, u32> = HashMap::new();
    let mut states: Vec<u32> = vec![0; k];
    let mut best: Vec<u64> = vec![0];
    index.insert(vec![0; k], 0);
    let mut open = std::collections::BinaryHeap::new();
    open.push((bound.at(classes, &states[..k]), 0u64, 0u32));
    let (mut next, mut gains) = (Vec::new(), Vec::new());
    let (mut found, mut expanded) = (0u64, 0usize);
    while let Some((_, g, s)) = open.pop() {
        if g < best[s as usize] {
            continue; // a better way here was found after this entry was queued
        }
        found = found.max(g);
        let p: Vec<u32> = states[s as usize * k..(s as usize + 1) * k].to_vec();
        if bound.at(classes, &p) == 0 {
            // Nothing open can beat it (every other entry's bound is at most g); a state popped before
            // may have been a dead end whose bound was not tight but whose g was higher.
            return Ok(found);
        }
        expanded += 1;
        if expanded > EXACT_STATES {
            return Err(found);
        }
        successors(classes, &occ, &pcs, &p, &mut next, &mut gains);
        // Finding the successors, then bounding and indexing each.
        let cost = (pcs.len() as u64 + 1) * k as u64 + gains.len() as u64 * (2 * k + bound.pairs.len()) as u64;
        if cost > *budget {
            *budget = 0;
            return Err(found);
        }
        *budget -= cost;
        for (j, &gain) in gains.iter().enumerate() {
            let q = &next[j * k..(j + 1) * k];
            let ng = g + gain;
            let id = match index.get(q) {
                Some(&id) if best[id as usize] >= ng => continue,
                Some(&id) => id,
                None => {
                    let id = best.len() as u32;
                    index.insert(q.to_vec(), id);
                    states.extend_from_slice(q);
                    best.push(0);
                    id
                }
            };
            best[id as usize] = ng;
            open.push((ng + bound.at(classes, q), ng, id));
        }
    }
    Ok(found)
}

/// When every class that has not exited stands at the same entry pc: the gain of advancing them all.
fn convergent_step(classes: &[Class<'_>], pos: &[usize]) -> Option<u64> {
    let mut pc = None;
    let mut gain = 0u64;
    for (c, &p) in classes.iter().zip(pos) {
        if c.exited(p as u32) {
            continue;
        }
        let &(e, w) = c.elements.get(p)?; // a thread waiting at the region's end blocks convergence
        if *pc.get_or_insert(e) != e {
            return None;
        }
        gain += c.threads * u64::from(w);
    }
    pc.map(|_| gain)
}

/// A lower bound: converge whenever possible, otherwise advance the classes at the smallest entry pc.
fn greedy(classes: &[Class<'_>]) -> u64 {
    let mut pos = vec![0usize; classes.len()];
    let mut total = 0u64;
    loop {
        if let Some(gain) = convergent_step(classes, &pos) {
            total += gain;
            for (c, p) in classes.iter().zip(pos.iter_mut()) {
                if *p < c.elements.len() {
                    *p += 1;
                }
            }
            continue;
        }
        let Some(min) = classes.iter().zip(&pos).filter_map(|(c, &p)| c.elements.get(p).map(|e| e.0)).min() else {
            return total;
        };
        for (c, p) in classes.iter().zip(pos.iter_mut()) {
            if c.elements.get(*p).is_some_and(|e| e.0 == min) {
                *p += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A budget that never runs out.
    fn unbounded() -> u64 {
        u64::MAX
    }

    fn t(elements: &[(u32, u32)], exits: bool) -> ThreadSeq<'_> {
        ThreadSeq { elements, exits }
    }

    #[test]
    fn if_else_has_nothing_in_common() {
        // Two threads on the two sides of an if-else: no convergent step.
        let b = best_schedule(&[t(&[(10, 3)], false), t(&[(20, 4)], false)], &mut unbounded());
        assert_eq!(b, Best { convergent: 0, exact: true });
    }

    #[test]
    fn a_thread_that_skips_blocks_convergence() {
        // `if (tid == 0) X;`: the other thread waits at the join, so X cannot run converged.
        let b = best_schedule(&[t(&[(10, 3)], false), t(&[], false)], &mut unbounded());
        assert_eq!(b.convergent, 0);
    }

    #[test]
    fn common_blocks_of_a_divergent_loop_align() {
        // Loop header H (2 instructions) and body B (5): thread 0 runs 3 iterations, thread 1 runs 1;
        // the best schedule runs the first H, B together and the final H of thread 1 with an H of thread 0.
        let long = [(1, 2), (2, 5), (1, 2), (2, 5), (1, 2), (2, 5), (1, 2)];
        let short = [(1, 2), (2, 5), (1, 2)];
        let b = best_schedule(&[t(&long, false), t(&short, false)], &mut unbounded());
        assert_eq!(b, Best { convergent: 2 * (2 + 5 + 2), exact: true });
    }

    #[test]
    fn weights_choose_the_heavier_alignment() {
        // x (1 instruction) and Y (10): the threads can share either x or Y, not both in order.
        let a = [(1, 1), (2, 10)];
        let b = [(2, 10), (1, 1)];
        assert_eq!(best_schedule(&[t(&a, false), t(&b, false)], &mut unbounded()).convergent, 20);
    }

    #[test]
    fn exited_threads_no_longer_hold_the_warp_back() {
        // Thread 1 exits in its first element; thread 0 then runs alone, which is the whole live warp.
        let a = [(1, 4), (2, 6)];
        let b = [(1, 2)];
        let r = best_schedule(&[t(&a, false), t(&b, true)], &mut unbounded());
        assert_eq!(r.convergent, 4 + 2 + 6);
    }

    #[test]
    fn identical_threads_count_once_per_thread() {
        let a = [(1, 3), (5, 2)];
        let r = best_schedule(&[t(&a, false), t(&a, false), t(&a, false)], &mut unbounded());
        assert_eq!(r.convergent, 3 * 5);
    }

    #[test]
    fn long_divergent_loops_are_solved_exactly() {
        // 32 distinct trip counts up to 200 iterations: the dominant states stay few.
        let seqs: Vec<Vec<(u32, u32)>> =
            (0..32u32).map(|n| (0..=n * 6).flat_map(|_| [(1, 2), (2, 3)]).chain([(1, 2)]).collect()).collect();
        let threads: Vec<ThreadSeq<'_>> = seqs.iter().map(|s| t(s, false)).collect();
        let r = best_schedule(&threads, &mut unbounded());
        assert!(r.exact);
        // The shortest thread (one iteration) bounds the common part: H B H.
        assert_eq!(r.convergent, 32 * 7);
    }

    #[test]
    fn greedy_is_a_lower_bound_of_the_optimum() {
        let a = [(1, 2), (2, 5), (3, 1), (1, 2), (2, 5), (1, 2)];
        let b = [(1, 2), (3, 1), (2, 5), (1, 2)];
        let c = [(3, 1), (1, 2), (2, 5), (1, 2)];
        let classes = [
            Class { elements: &a, exits: false, threads: 1 },
            Class { elements: &b, exits: false, threads: 1 },
            Class { elements: &c, exits: true, threads: 2 },
        ];
        let best = exact(&classes, &mut unbounded()).unwrap();
        assert!(greedy(&classes) <= best);
        // Every class can share H B H (2 + 5 + 2 instructions): c runs its first block alone.
        assert!(best >= 4 * 9);
    }

    /// The definition itself, by brute force over every state: advance any one thread alone, or every
    /// live thread together when they stand at the same entry pc.
    fn brute(threads: &[ThreadSeq<'_>]) -> u64 {
        fn go(t: &[ThreadSeq<'_>], pos: &mut Vec<usize>, memo: &mut HashMap<Vec<usize>, u64>) -> u64 {
            if let Some(&v) = memo.get(pos) {
                return v;
            }
            let exited = |i: usize, p: usize| t[i].exits && p == t[i].elements.len();
            let mut best = 0;
            for i in 0..t.len() {
                if pos[i] < t[i].elements.len() {
                    pos[i] += 1;
                    best = best.max(go(t, pos, memo));
                    pos[i] -= 1;
                }
            }
            let live: Vec<usize> = (0..t.len()).filter(|&i| !exited(i, pos[i])).collect();
            let heads: Option<Vec<(u32, u32)>> = live.iter().map(|&i| t[i].elements.get(pos[i]).copied()).collect();
            if let Some(h) = heads.filter(|h| !h.is_empty() && h.iter().all(|e| e.0 == h[0].0)) {
                let gain: u64 = h.iter().map(|e| u64::from(e.1)).sum();
                for &i in &live {
                    pos[i] += 1;
                }
                best = best.max(gain + go(t, pos, memo));
                for &i in &live {
                    pos[i] -= 1;
                }
            }
            memo.insert(pos.clone(), best);
            best
        }
        go(threads, &mut vec![0; threads.len()], &mut HashMap::new())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The search finds exactly the optimum of the definition on random small regions (few entry pcs,
        /// so sequences share much; weights as block sizes, the exit element of a leaving thread cut short).
        #[test]
        fn the_search_finds_the_optimum(
            raw in proptest::collection::vec(
                (proptest::collection::vec(0u32..4, 0..7), proptest::bool::ANY, 1u32..3), 1..5),
        ) {
            let weight = |pc: u32| pc + 1;
            let seqs: Vec<(Vec<(u32, u32)>, bool)> = raw
                .iter()
                .map(|(pcs, exits, cut)| {
                    let mut e: Vec<(u32, u32)> = pcs.iter().map(|&pc| (pc, weight(pc))).collect();
                    let exits = *exits && !e.is_empty();
                    if exits {
                        let last = e.last_mut().expect("non-empty");
                        last.1 = last.1.min(*cut);
                    }
                    (e, exits)
                })
                .collect();
            let threads: Vec<ThreadSeq<'_>> = seqs.iter().map(|(e, x)| t(e, *x)).collect();
            let r = best_schedule(&threads, &mut unbounded());
            proptest::prop_assert!(r.exact);
            proptest::prop_assert_eq!(r.convergent, brute(&threads));
        }
    }

    /// Found by the property test: a dead end reached first (a joint step at pc 3, g = 12, whose bound is
    /// not 0) must not be forgotten when a later state with a zero bound (g = 6) ends the search.
    #[test]
    fn a_dead_end_with_the_best_gain_is_kept() {
        let e = |pcs: &[u32]| pcs.iter().map(|&pc| (pc, pc + 1)).collect::<Vec<_>>();
        let (a, b, c) = (e(&[3, 3, 1]), e(&[1, 3, 3, 2]), e(&[3, 1, 2]));
        let threads = [t(&a, false), t(&b, false), t(&c, false)];
        let r = best_schedule(&threads, &mut unbounded());
        assert!(r.exact);
        assert_eq!(r.convergent, 12);
        assert_eq!(brute(&threads), 12);
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    /// A budget that never runs out.
    fn unbounded() -> u64 {
        u64::MAX
    }

    #[test]
    fn a_spent_budget_gives_the_greedy_lower_bound_and_says_so() {
        let a: Vec<(u32, u32)> = (0..40).map(|i| (i % 7, 1 + i % 3)).collect();
        let b: Vec<(u32, u32)> = (0..40).map(|i| (i % 5, 1 + i % 2)).collect();
        let threads = [ThreadSeq { elements: &a, exits: false }, ThreadSeq { elements: &b, exits: false }];
        let full = best_schedule(&threads, &mut unbounded());
        assert!(full.exact);
        let mut none = 0;
        let cut = best_schedule(&threads, &mut none);
        assert!(!cut.exact && cut.convergent <= full.convergent);
        let mut some = ORACLE_BUDGET;
        let again = best_schedule(&threads, &mut some);
        assert_eq!(again, full);
        assert!(some < ORACLE_BUDGET, "the work is taken off the budget");
    }
}
