//! Maven's sorted path stacks (seed 003 §2.4; Lee et al., "Exploring the design space of SPMD divergence
//! management on data-parallel architectures", MICRO 2014), mechanisms `maven:1-stack` and
//! `maven:2-stack`.
//!
//! The seed: "The Maven architecture considers a *1-stack* policy based on the minimum PC. A shift
//! register implements a systolic sort of the path list. ... A variation named *2-stack* modifies the
//! sorting order to handle loops with several back edges more efficiently. On the other hand, *2-stack*
//! does not appear to support nested loops."
//!
//! The hardware: a **systolic shift register** of W entries per warp, kept in minimum-pc order (W is the
//! worst case: one thread per path; it cannot overflow, and a typed error says so if it ever does). The
//! head runs. After an instruction the head's successor paths enter at the head end and shift down one
//! position per cycle until they reach their place (`shift_steps` counts the positions); one path enters
//! per cycle, and the head is valid one cycle after the last one entered, so an update that inserts k > 1
//! paths (a divergence) makes the warp wait k − 1 cycles (`insert_wait_cycles`, charged in timed runs).
//! Convergence is detected against the head only: paths at the same pc and call depth are adjacent in the
//! order, and the head merges with the next entry while they are at the same place (`path_merges`).
//!
//! - `1-stack`: one register, the whole list sorted by minimum pc: exactly `sorted:minpc`'s list and
//!   order (its `step` does the list work; a test checks the issued sequences are equal).
//! - `2-stack`: two registers. A path that a branch sends to a pc at or below the branch's own pc (a back
//!   edge) enters the **second**; every other path (fall-through, forward branches, calls, returns)
//!   enters the **first**, whose head runs. When the first register is empty, the second becomes the
//!   first (`stack_swaps`): every path that took a back edge of the loop is released at once, so threads
//!   that took different back edges of one loop (a `continue` and the latch) meet at the loop's header
//!   for the next iteration instead of running it apart.
//!
//! Why 2-stack "does not appear to support nested loops": the second register cannot tell which loop
//! a back edge belongs to, and it is released only when *every* forward path has run out. Threads that
//! leave an inner loop are forward paths: they run on through the rest of the outer iteration (and past
//! the outer loop's back edge into the second register) while the threads still iterating the inner loop
//! wait in the second register. The inner loop's exit is no longer a reconvergence point: the code
//! between the inner loop and the outer back edge runs once per group of threads that left the inner loop
//! in a different iteration, and threads of different outer iterations meet only at the inner loop's
//! header. A test on the suite's `nested_loops` shows the cost against 1-stack.

use crate::adapters::path_list::{step, Priority, Stepped};
use crate::adapters::paths::{clear_run, first_ready, issued, retain_live, take, Path, Taken};
use crate::adapters::per_warp::advance_ends;
use crate::interface::counters;
use crate::interface::Done;
use crate::types::{LaneMask, Pc};
use crate::EntryKind;
use crate::Structure;
use crate::{BarrierMode, Counter, Delay, EntryView, Flow, MechError, WarpCtx, WarpTracker};

const ORDER: Priority = Priority::MinPc;

/// The shift registers of a warp.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct MavenState {
    /// The (first) register: paths in minimum-pc order, head first; the head runs.
    pub first: Vec<Path>,
    /// `2-stack`'s second register: the paths that took a back edge, in minimum-pc order (empty under
    /// `1-stack`).
    pub second: Vec<Path>,
}

/// Maven's sorted path stacks: `1-stack` (`TWO_STACKS` false) or `2-stack`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Maven<const TWO_STACKS: bool>;

counters! {
    /// Counter indices: `1-stack` keeps the first three, `2-stack` all.
    pub(crate) enum MavenCounter {
        Merges = sum("path_merges", "adjacent paths merged with the head at an equal pc and depth (convergence events)"),
        ShiftSteps = sum("shift_steps", "positions inserted paths moved down the shift register to their place"),
        WaitCycles = sum(
            "insert_wait_cycles",
            "cycles warps waited for their shift register: k - 1 for an update that inserted k > 1 paths",
        ),
        BackEdgePaths = sum(
            "back_edge_paths",
            "paths a branch sent to a pc at or below its own, into the second register",
        ),
        StackSwaps = sum("stack_swaps", "times the first register ran empty and the second became the first"),
    }
}

impl<const TWO_STACKS: bool> Maven<TWO_STACKS> {
    /// `2-stack`'s update: the issued path's successors go to the register their direction chooses.
    fn two_stack_step(
        &self,
        st: &mut MavenState,
        pc: Pc,
        mask: LaneMask,
        flow: &Flow,
        ctx: &mut WarpCtx<'_>,
    ) -> Result<Stepped, MechError> {
        let live = ctx.live;
        let in_first = issued(&st.first, pc, mask).is_ok();
        let from = if in_first { &mut st.first } else { &mut st.second };
        let Taken { rest, next, .. } = take(from, pc, mask, flow, live)?;
        retain_live(&mut st.first, live);
        retain_live(&mut st.second, live);
        let mut s = Stepped::default();
        if let Some(r) = rest {
            // The lanes that did not issue (waiting at a barrier) stay in their register.
            s.insert(ORDER, if in_first { &mut st.first } else { &mut st.second }, r);
        }
        let branch = matches!(flow, Flow::Branch { .. } | Flow::Multi(_));
        for p in next {
            if branch && p.pc <= pc {
                s.insert(ORDER, &mut st.second, p);
                ctx.count(MavenCounter::BackEdgePaths, 1);
            } else {
                s.insert(ORDER, &mut st.first, p);
            }
        }
        if st.first.is_empty() && !st.second.is_empty() {
            std::mem::swap(&mut st.first, &mut st.second);
            ctx.count(MavenCounter::StackSwaps, 1);
        }
        s.merges = ORDER.converge_at_head(&mut st.first);
        Ok(s)
    }
}

impl<const TWO_STACKS: bool> WarpTracker for Maven<TWO_STACKS> {
    type State = MavenState;

    const STRUCTURE: Structure = Structure::Paths;
    const BARRIER: BarrierMode = BarrierMode::Thread;
    const COUNTERS: &'static [Counter] = if TWO_STACKS {
        MavenCounter::COUNTERS
    } else {
        MavenCounter::COUNTERS.split_at(MavenCounter::BackEdgePaths as usize).0
    };

    fn name(&self) -> &'static str {
        if TWO_STACKS {
            TWO_STACK.name
        } else {
            ONE_STACK.name
        }
    }

    fn init(&self, entry: Pc, live: LaneMask) -> MavenState {
        MavenState { first: vec![Path { pc: entry, mask: live, depth: 0 }], second: Vec::new() }
    }

    #[inline]
    fn select(&self, st: &MavenState, live: LaneMask, blocked: LaneMask) -> Option<(Pc, LaneMask)> {
        // The second register's paths issue only while every path of the first waits at a barrier.
        first_ready(st.first.iter().chain(st.second.iter()), live, blocked)
    }

    #[inline]
    fn straight_run(&self, st: &MavenState, pc: Pc, mask: LaneMask, max: u32) -> u32 {
        // As `sorted:minpc`: after its first instruction the path is in the first register (straight-line
        // code is not a back edge) and keeps its place there until it reaches another path's pc; each
        // re-insertion shifts it as far as that place.
        clear_run(st.first.iter().chain(st.second.iter()), pc, mask, max)
    }

    fn advance(&self, st: &mut MavenState, pc: Pc, mask: LaneMask, n: u32, ctx: &mut WarpCtx<'_>) -> Done {
        advance_ends(self, st, (pc, mask, n), ctx, |st, ctx| {
            let Some(p) = st.first.iter().position(|p| p.pc == pc + 1 && p.mask == mask) else {
                return Err(MechError::NotHeld("maven's shift register"));
            };
            st.first[p].pc = pc + n - 1;
            ctx.count(MavenCounter::ShiftSteps, u64::from(n - 2) * p as u64);
            Ok(())
        })
    }

    fn update(&self, st: &mut MavenState, pc: Pc, mask: LaneMask, flow: &Flow, ctx: &mut WarpCtx<'_>) -> Done {
        let s = if TWO_STACKS {
            self.two_stack_step(st, pc, mask, flow, ctx)?
        } else {
            step(ORDER, &mut st.first, pc, mask, flow, ctx.live)?
        };
        let w = ctx.w;
        if st.first.len() > w as usize || st.second.len() > w as usize {
            return Err(MechError::Overflow("maven's shift register", w));
        }
        ctx.count(MavenCounter::Merges, s.merges);
        ctx.count(MavenCounter::ShiftSteps, s.passed);
        if s.inserted > 1 {
            let cycles = s.inserted - 1;
            ctx.count(MavenCounter::WaitCycles, u64::from(cycles));
            ctx.delay = Some(Delay::Cycles { cycles });
        }
        Ok(())
    }

    fn depth(&self, st: &MavenState) -> usize {
        st.first.len() + st.second.len()
    }

    fn entries(&self, st: &MavenState) -> Vec<EntryView> {
        // Bottom first: the second register (tail first), then the first; its head, the running path,
        // comes last, like a stack's top.
        let second = st.second.iter().rev().map(|p| p.view(EntryKind::BackEdge));
        let first = st
            .first
            .iter()
            .enumerate()
            .rev()
            .map(|(k, p)| p.view(if k == 0 { EntryKind::Head } else { EntryKind::Path }));
        second.chain(first).collect()
    }
}

/// The registry's facts of `maven:1-stack`.
pub(crate) const ONE_STACK: crate::Info = crate::Info::new(
    "maven:1-stack",
    crate::Scope::Warp,
    "Maven's shift register sorting the path list by minimum pc (seed 003, section 2.4)",
)
.outside_defaults()
.storage(&[shift_register("shift register")]);

/// The registry's facts of `maven:2-stack`.
pub(crate) const TWO_STACK: crate::Info = crate::Info::new(
    "maven:2-stack",
    crate::Scope::Warp,
    "Maven's two sorted shift registers: back-edge paths wait for the forward ones (seed 003, section 2.4)",
)
.storage(&[shift_register("first shift register"), shift_register("second shift register")]);

/// A systolic shift register of W paths per warp (flip-flops: every stage compares with its neighbour
/// every cycle), whatever the depth reached.
const fn shift_register(name: &'static str) -> crate::storage::Part {
    use crate::storage::{Cells, Part, Per, Size};
    Part::new(
        name,
        Per::Warp,
        Cells::FlipFlops,
        Size::W,
        Size::Sum(&[Size::Const(1), Size::Pc, Size::Depth, Size::W]),
        "{valid, pc, depth, mask}",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{program, run_warp, trips, LOOP, NESTED};
    use crate::{PathList, Sorted};

    #[test]
    fn one_stack_issues_exactly_sorted_minpc_s_sequence() {
        let minpc = PathList(Sorted(Priority::MinPc));
        for src in [LOOP, NESTED, CONTINUE, NESTED_LOOPS] {
            let p = program(src);
            let n = [1, 4, 2, 7, 3, 3, 5, 1];
            let a = run_warp(&Maven::<false>, &p, 0xff, &trips(&n), 1000);
            let b = run_warp(&minpc, &p, 0xff, &trips(&n), 1000);
            assert_eq!(a.pcs(), b.pcs());
            assert_eq!(a.counter("path_merges"), b.counter("path_merges"));
            assert!(a.counter("path_merges") > 0);
        }
    }

    #[test]
    fn a_divergence_inserts_two_paths_one_cycle_apart() {
        // Diamond-shaped nest: every divergence inserts two paths (one wait cycle each); straight-line
        // code re-inserts the head where it is (no shift).
        let r = run_warp(&Maven::<false>, &program(NESTED), 0b1111, &crate::testing::nested_preds, 64);
        assert_eq!(r.counter("insert_wait_cycles"), 2, "two divergent branches");
        // Each divergence's taken side passes its fall-through side (1 + 1); each jump to a join passes the
        // path still waiting below it (pc 4 to 10 past pc 5, pc 7 to 9 past pc 8: 1 + 1); and a path
        // reaching a join where another already waits enters behind it (pc 8 to 9, pc 9 to 10: 1 + 1)
        // and merges when the two are at the head.
        assert_eq!(r.counter("shift_steps"), 6);
        assert_eq!(r.counter("path_merges"), 2);
        assert_eq!(r.pcs().iter().filter(|(pc, _)| *pc == 10).collect::<Vec<_>>(), [&(10, 0b1111)]);
    }

    /// A loop with two back edges: `do { if (p1) continue (pc 3, back to pc 1); body (pc 4) } while (p2)
    /// (pc 5, back to pc 1); exit (pc 6)`.
    const CONTINUE: &str = r#"
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r2, 0;
LOOP:
    add.u32 %r2, %r2, 1;
    setp.eq.u32 %p1, %tid.x, 1;
    @%p1 bra LOOP;
    add.u32 %r3, %r2, 1;
    @%p2 bra LOOP;
    exit;
}
"#;

    /// `CONTINUE`'s predicates: lane 1 takes the `continue` in the first two iterations, the other lanes
    /// the latch; everyone leaves in the third iteration.
    fn continue_preds(p: u32, t: usize, k: u32) -> bool {
        match p {
            1 => t == 1 && k < 2,
            _ => t != 1 && k < 2,
        }
    }

    #[test]
    fn two_stack_runs_the_iterations_of_a_loop_with_two_back_edges_together() {
        let p = program(CONTINUE);
        let one = run_warp(&Maven::<false>, &p, 0b1111, &continue_preds, 200);
        let two = run_warp(&Maven::<true>, &p, 0b1111, &continue_preds, 200);
        // 1-stack: lane 1, back at the header (the lowest pc) after its `continue`, runs the next iteration's
        // head alone before the others reach their latch. 2-stack: it waits in the second register until
        // the others took the latch, and the iteration starts with every lane.
        let head =
            |r: &crate::testing::Run| r.pcs().iter().filter(|(pc, _)| *pc == 1).map(|(_, m)| *m).collect::<Vec<_>>();
        assert_eq!(head(&two), vec![0b1111, 0b1111, 0b1111], "{:?}", two.pcs());
        assert!(head(&one).len() > 3, "{:?}", one.pcs());
        assert!(two.trace.len() < one.trace.len());
        assert_eq!(two.counter("back_edge_paths"), 4, "two iterations, each with two back-edge paths");
        assert!(two.counter("stack_swaps") >= 2);
    }

    /// Two nested loops: `do { pre (pc 1); do { inner (pc 2) } while (p1) (pc 3); post (pc 4) } while (p2)
    /// (pc 5); exit (pc 6)`.
    const NESTED_LOOPS: &str = r#"
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    mov.u32 %r2, 0;
OUTER:
    add.u32 %r2, %r2, 1;
INNER:
    add.u32 %r3, %r2, 1;
    @%p1 bra INNER;
    add.u32 %r1, %r3, 1;
    @%p2 bra OUTER;
    exit;
}
"#;

    /// [`NESTED_LOOPS`]'s predicates: lane t runs its inner loop `t + 1` times in each of two outer
    /// iterations.
    fn nested_loop_preds(p: u32, t: usize, k: u32) -> bool {
        match p {
            1 => k % (t as u32 + 1) != t as u32,
            _ => k < 1,
        }
    }

    #[test]
    fn two_stack_loses_the_inner_loop_s_exit_as_a_reconvergence_point() {
        let p = program(NESTED_LOOPS);
        let post = 4;
        let one = run_warp(&Maven::<false>, &p, 0b1111, &nested_loop_preds, 500);
        let two = run_warp(&Maven::<true>, &p, 0b1111, &nested_loop_preds, 500);
        let at = |r: &crate::testing::Run, pc: Pc| r.pcs().iter().filter(|(q, _)| *q == pc).count();
        // 1-stack: the inner loop's exit is where every lane meets, once per outer iteration.
        assert_eq!(at(&one, post), 2, "{:?}", one.pcs());
        // 2-stack: lanes that leave the inner loop run the rest of the outer iteration at once, apart from
        // the lanes still iterating; each exit iteration runs that code again.
        assert!(at(&two, post) > 2, "{:?}", two.pcs());
        assert!(two.trace.len() > one.trace.len());
        // The threads are the same; only how often they meet differs.
        let thread_insts = |r: &crate::testing::Run| r.trace.iter().map(|i| i.mask.count_ones()).sum::<u32>();
        assert_eq!(thread_insts(&one), thread_insts(&two));
    }

    #[test]
    fn the_shift_register_holds_one_path_per_thread_and_says_so_if_it_does_not() {
        // Eight lanes each leave a loop in a different iteration: under 1-stack the exits wait below the
        // loop, one path per exit iteration, until the last lane leaves: eight paths at most.
        let p = program(LOOP);
        let n = [1, 2, 3, 4, 5, 6, 7, 8];
        let r = run_warp(&Maven::<false>, &p, 0xff, &trips(&n), 500);
        assert!(r.sizes.iter().all(|&s| s <= 8) && r.sizes.contains(&8), "{:?}", r.sizes);
        // A register of W = 2 entries holding three paths (an impossible state) is an error, not a panic.
        let path = |pc, mask| Path { pc, mask, depth: 0 };
        let mut st = MavenState { first: vec![path(1, 0b001), path(5, 0b010), path(6, 0b100)], second: vec![] };
        let mut counters = [0u64; 5];
        let mut ctx = WarpCtx { prog: &p, live: 0b111, w: 2, counters: &mut counters, cycle: None, delay: None };
        let e = Maven::<false>.update(&mut st, 1, 0b001, &Flow::Next, &mut ctx);
        assert_eq!(e, Err(MechError::Overflow("maven's shift register", 2)));
    }

    #[test]
    fn a_divergence_delays_the_warp_one_cycle_per_extra_path() {
        let p = program(LOOP);
        let mut st = Maven::<true>.init(0, 0b11);
        let mut counters = [0u64; 5];
        let mut ctx = WarpCtx { prog: &p, live: 0b11, w: 32, counters: &mut counters, cycle: Some(7), delay: None };
        Maven::<true>.update(&mut st, 0, 0b11, &Flow::Next, &mut ctx).expect("straight on");
        assert_eq!(ctx.delay, None, "one path re-inserted: the head is valid in time");
        st.first[0].pc = 3;
        Maven::<true>.update(&mut st, 3, 0b11, &Flow::Branch { target: 1, taken: 0b01 }, &mut ctx).expect("splits");
        assert_eq!(ctx.delay, Some(Delay::Cycles { cycles: 1 }));
        // The back-edge path waits in the second register while the exit path runs.
        assert_eq!((st.first[0].pc, st.second[0].pc), (4, 1));
        assert_eq!(counters[MavenCounter::BackEdgePaths as usize], 1);
    }
}
