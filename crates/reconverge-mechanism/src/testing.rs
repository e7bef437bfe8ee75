//! Drivers for the mechanisms' unit tests: small kernels decoded with their reconvergence points (and, for
//! a mechanism with a compiler pass, after that pass, as the simulator loads them), and a loop that plays
//! the core's part: it issues what the mechanism offers and reports each instruction's outcome as the
//! executor would, with the guard predicates the test chooses per thread ([`Preds`]).
//!
//! - [`issues`]: one warp under a [`WarpTracker`], a fixed set of lanes taking every conditional branch;
//! - [`run_warp`]: one warp under a [`WarpTracker`], any predicates, with the structure and counters;
//! - [`run_slots`]: one warp under a parallel-path [`SlotTracker`], with a choice of scheduler ([`Pick`]);
//! - [`run_cta`]: the warps of one CTA under any [`Tracker`] (a CTA-wide stack, parallel path slots), with
//!   a choice of scheduler ([`Pick`]).
//!
//! The kernels' guard predicates are set from `%tid.x` so that every analysis (seed 004's variance
//! analysis included) sees their branches as divergent; the driver ignores the `setp`s and takes the
//! predicates' values from the test.

use crate::WarpTracker;
use crate::{CtaView, EntryView, Flow, Group, Mechanism, Peek, PerWarp, SlotTracker, Slots, Tracker, UpdateCtx};
use reconverge_program::program::{Op, Pred};
use reconverge_program::{decode, function_points, lanes, select_kernel, DecodeOptions, LaneMask, LaunchConfig};
use reconverge_program::{Pc, Program};
use std::collections::HashMap;

/// `if (tid == 0) { then } else { else; else } join; exit` on one warp: the fall-through side (pcs
/// 2–3) is longer and has lower pcs than the taken side (pc 4); the join is pc 5.
pub(crate) const DIAMOND: &str = r#"
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    setp.eq.u32 %p1, %tid.x, 0;
    @%p1 bra THEN;
    mov.u32 %r2, 2;
    bra.uni JOIN;
THEN:
    mov.u32 %r2, 1;
JOIN:
    add.u32 %r3, %r2, 1;
    exit;
}
"#;

/// The join pc of [`DIAMOND`].
pub(crate) const DIAMOND_JOIN: Pc = 5;

/// Two nested diamonds: `if (p1) { if (p2) { pc 8 } else { pcs 6-7 } inner join (pc 9) } else { pcs 3-4 }
/// join (pc 10); exit (pc 11)`. The outer branch is pc 2 (taken: pc 5, the inner branch), the inner one pc 5.
pub(crate) const NESTED: &str = r#"
{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    setp.lt.u32 %p1, %tid.x, 2;
    setp.eq.u32 %p2, %tid.x, 0;
    @%p1 bra OUTER_THEN;
    mov.u32 %r2, 3;
    bra.uni JOIN;
OUTER_THEN:
    @%p2 bra INNER_THEN;
    mov.u32 %r2, 2;
    bra.uni INNER_JOIN;
INNER_THEN:
    mov.u32 %r2, 1;
INNER_JOIN:
    add.u32 %r2, %r2, 4;
JOIN:
    add.u32 %r3, %r2, 1;
    exit;
}
"#;

/// A loop whose exit diverges: `do { body (pcs 1-2) } while (p1) (pc 3, back to pc 1); after (pc 4);
/// exit (pc 5)`. The back edge's reconvergence point is the loop exit, pc 4. Drive it with [`trips`].
pub(crate) const LOOP: &str = r#"
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    mov.u32 %r2, 0;
LOOP:
    add.u32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, %tid.x;
    @%p1 bra LOOP;
    add.u32 %r3, %r2, 1;
    exit;
}
"#;

/// What every test kernel's text starts with: the target and the one entry `k()`, whose braces, register
/// declarations and instructions the kernel constants hold.
const HEADER: &str = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n";

/// The module of `src`: a whole PTX file, or a test kernel's body (after [`HEADER`]).
fn parse(src: &str) -> reconverge_ir::Module {
    let text = if src.contains(".entry") { src.to_string() } else { format!("{HEADER}{src}") };
    reconverge_ptx::parse(&text).expect("test kernel parses")
}

/// `src` decoded, with every branch's reconvergence point.
pub(crate) fn program(src: &str) -> Program {
    let m = parse(src);
    let k = select_kernel(&m, None).expect("one kernel");
    decode(&m, k, &|f| function_points(f, false), &DecodeOptions::default()).expect("decodes")
}

/// `src` prepared for `mech` as the simulator loads it: after the mechanism's compiler pass (its
/// instructions decoded as inserted ones), with seed 004's divergent blocks if the mechanism reads them.
pub(crate) fn prepared(src: &str, mech: Mechanism) -> Program {
    let m = parse(src);
    let mut opts = DecodeOptions::default();
    let transformed;
    let module = match mech.pass() {
        Some(pass) => {
            transformed = pass.apply(&m);
            opts.first_inserted = m.functions.iter().map(|(id, f)| (id, f.insts.len())).collect();
            &transformed
        }
        None => &m,
    };
    let k = select_kernel(module, None).expect("one kernel");
    let divergence = mech.needs_divergence();
    decode(module, k, &|f| function_points(f, divergence), &opts).expect("decodes")
}

/// The pcs of the instructions of `prog` whose text starts with `text` (to check where a pass put its
/// instructions).
pub(crate) fn pcs_of(prog: &Program, text: &str) -> Vec<Pc> {
    (0..prog.info.len() as Pc).filter(|&pc| prog.info[pc as usize].text.starts_with(text)).collect()
}

/// Guard predicates: whether predicate `p` (the `n` of the kernel's `%pn`) holds for CTA thread `t` (static
/// warp × W + lane) the `k`-th time, from 0, that the thread executes the guarded instruction.
pub(crate) type Preds<'a> = &'a dyn Fn(Pred, usize, u32) -> bool;

/// Predicates that hold exactly for the threads in `taken` (the threads that take every conditional
/// branch), at every execution.
pub(crate) fn taking(taken: u64) -> impl Fn(Pred, usize, u32) -> bool {
    move |_, t, _| taken >> t & 1 == 1
}

/// Predicates for a loop whose guarded back edge (or negated exit) is executed once per iteration: thread `t`
/// runs `n[t]` iterations, so the predicate holds at its executions `0..n[t] - 1`.
pub(crate) fn trips(n: &[u32]) -> impl Fn(Pred, usize, u32) -> bool + '_ {
    move |_, t, k| k + 1 < n[t]
}

/// [`NESTED`]'s predicates as its `setp`s compute them: `%p1` = `tid < 2`, `%p2` = `tid == 0`.
pub(crate) fn nested_preds(p: Pred, t: usize, _k: u32) -> bool {
    if p == 1 {
        t < 2
    } else {
        t == 0
    }
}

/// The core's part: each instruction's outcome, from the test's predicates.
struct Core<'a> {
    prog: &'a Program,
    preds: Preds<'a>,
    /// Executions so far of each guarded instruction by each thread.
    visits: HashMap<(Pc, usize), u32>,
}

impl Core<'_> {
    /// The outcome of the group (`pc`, `mask`) whose lane `l` holds thread `thread(l)`: the guard is evaluated
    /// per thread and, as in the executor, an instruction other than a branch whose guard holds for no lane
    /// does nothing.
    fn flow(&mut self, pc: Pc, mask: LaneMask, thread: impl Fn(usize) -> usize) -> Flow {
        let inst = &self.prog.insts[pc as usize];
        let eff = match inst.guard {
            None => mask,
            Some((p, neg)) => lanes(mask).fold(0, |m, l| {
                let t = thread(l);
                let k = self.visits.entry((pc, t)).or_default();
                let holds = (self.preds)(p, t, *k);
                *k += 1;
                m | (u64::from(holds != neg) << l)
            }),
        };
        match inst.op {
            Op::Bra { target } => Flow::Branch { target, taken: eff },
            _ if eff == 0 => Flow::Next,
            Op::Exit | Op::Ret => Flow::Exit { lanes: eff },
            Op::Ssy { target } => Flow::Ssy { target },
            Op::Pbk { target } => Flow::Pbk { target },
            Op::Sync => Flow::Sync,
            Op::Brk => Flow::Brk { lanes: eff },
            Op::Join => Flow::Join,
            Op::Bssy { target } => Flow::Bssy { target },
            Op::Bsync { target } => Flow::Bsync { target },
            Op::Yield => Flow::Yield,
            Op::Syncwarp => Flow::SyncWarp,
            // The test kernels have none; a kernel that does is a mistake in the test, not a case to skip.
            Op::Call { .. } | Op::Brx { .. } => panic!("pc {pc}: the test driver runs no calls or indirect branches"),
            _ => Flow::Next,
        }
    }
}

/// How the test scheduler picks the next group among the ready issue contexts.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Pick {
    /// The lowest-numbered ready context, every time.
    Lowest,
    /// The next ready context after the one that issued last (round-robin).
    RoundRobin,
}

/// One issued group.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) struct Issue {
    /// Its issue context.
    pub ctx: u32,
    /// Its pc.
    pub pc: Pc,
    /// Its active lanes.
    pub mask: LaneMask,
    /// The `(static warp, lanes)` its lanes' threads come from.
    pub parts: Vec<(u32, LaneMask)>,
}

/// What a run issued and what the mechanism recorded.
#[derive(Clone, Debug, Default)]
pub(crate) struct Run {
    /// Every issued group, in order.
    pub trace: Vec<Issue>,
    /// The structure (bottom first, as traces show it) after each issue, for the issuing context.
    pub entries: Vec<Vec<EntryView>>,
    /// The structure's size after each issue.
    pub sizes: Vec<usize>,
    /// The mechanism's counters at the end, by name.
    pub counters: Vec<(&'static str, u64)>,
    /// The per-branch counters at the end: `(branch pc, name, value)`.
    pub branch_counters: Vec<(Pc, &'static str, u64)>,
}

impl Run {
    /// The issued `(pc, mask)` pairs, in order.
    pub(crate) fn pcs(&self) -> Vec<(Pc, LaneMask)> {
        self.trace.iter().map(|i| (i.pc, i.mask)).collect()
    }

    /// The issued `(context, pc, mask)` triples, in order.
    pub(crate) fn ctx_pcs(&self) -> Vec<(u32, Pc, LaneMask)> {
        self.trace.iter().map(|i| (i.ctx, i.pc, i.mask)).collect()
    }

    /// The counter `name`.
    pub(crate) fn counter(&self, name: &str) -> u64 {
        self.counters.iter().find(|c| c.0 == name).unwrap_or_else(|| panic!("no counter {name}")).1
    }

    /// The per-branch counter `name` of the branch at `pc`.
    pub(crate) fn branch_counter(&self, pc: Pc, name: &str) -> u64 {
        let c = self.branch_counters.iter().find(|c| c.0 == pc && c.1 == name);
        c.unwrap_or_else(|| panic!("no counter {name} at pc {pc}")).2
    }
}

/// Runs one CTA whose static warps have the `live` lanes (`w` threads per warp) under `t` until every thread
/// exits (at most `steps` issues); the scheduler picks among ready contexts as `pick` says (a mechanism
/// with [`Tracker::ORDERED`] chooses itself). Panics if nothing can issue while threads are live.
pub(crate) fn run_cta<T: Tracker>(
    t: &T,
    prog: &Program,
    live: &[LaneMask],
    w: u32,
    preds: Preds<'_>,
    pick: Pick,
    steps: usize,
) -> Run {
    let (mut live, blocked) = (live.to_vec(), vec![0; live.len()]);
    let mut sm = t.new_sm(prog, &LaunchConfig::default());
    let mut st = t.launch(&mut sm, 0, &CtaView { live: &live, blocked: &blocked, w }, 0);
    let contexts = t.contexts(live.len() as u32, live.len() as u32 * w);
    let (k, mut counters) = (T::BRANCH_COUNTERS.len(), vec![0u64; T::COUNTERS.len()]);
    let mut branches = vec![0u64; prog.branches.len() * k];
    let mut core = Core { prog, preds, visits: HashMap::new() };
    let (mut run, mut last) = (Run::default(), None);
    while live.iter().any(|&m| m != 0) && run.trace.len() < steps {
        let view = CtaView { live: &live, blocked: &blocked, w };
        let g = next_group(t, &sm, &st, &view, contexts, pick, last)
            .unwrap_or_else(|| panic!("nothing can issue: {:?}", t.positions(&sm, &st, &view)));
        let flow = core.flow(g.pc, g.mask, |l| g.lanes.slot_of(l, w).expect("an issued lane holds a thread"));
        if let Flow::Exit { lanes } = flow {
            g.lanes.split(lanes).for_each(|(sw, m)| live[sw as usize] &= !m);
        }
        let mut delayed = Vec::new();
        let mut u = UpdateCtx {
            prog,
            cta: 0,
            view: CtaView { live: &live, blocked: &blocked, w },
            barrier: false,
            released: false,
            cycle: None,
            size: 0,
            delay: None,
            delayed: &mut delayed,
            counters: &mut counters,
            branches: &mut branches,
            per_branch: k,
            branch: prog.info[g.pc as usize].branch,
        };
        t.update(&mut sm, &mut st, &g, &flow, &mut u).expect("the mechanism follows the CTA");
        run.sizes.push(u.size);
        run.entries.push(t.entries(&sm, &st, g.ctx));
        run.trace.push(Issue { ctx: g.ctx, pc: g.pc, mask: g.mask, parts: g.lanes.split(g.mask).collect() });
        last = Some(g.ctx);
    }
    run.counters = T::COUNTERS.iter().map(|c| c.name).zip(counters).collect();
    let names = prog.branches.iter().flat_map(|&pc| T::BRANCH_COUNTERS.iter().map(move |c| (pc, c.name)));
    run.branch_counters = names.zip(branches).map(|((pc, name), v)| (pc, name, v)).collect();
    run
}

/// The group the test scheduler issues next (see [`Pick`]), if any context has one ready.
fn next_group<T: Tracker>(
    t: &T,
    sm: &T::Sm,
    st: &T::Cta,
    view: &CtaView<'_>,
    contexts: u32,
    pick: Pick,
    last: Option<u32>,
) -> Option<Group> {
    if T::ORDERED {
        return t.choose(sm, st, view);
    }
    let mut occupied = Vec::new();
    t.occupied(sm, st, contexts, &mut occupied);
    let ready: Vec<Group> = occupied
        .into_iter()
        .filter_map(|c| match t.peek(sm, st, view, c) {
            Peek::Ready(g) => Some(g),
            _ => None,
        })
        .collect();
    let after_last = ready.iter().position(|g| pick == Pick::RoundRobin && last.is_some_and(|l| g.ctx > l));
    let i = after_last.unwrap_or(0);
    ready.into_iter().nth(i)
}

/// Runs one warp of `live` lanes under `t` (through [`PerWarp`], 32 threads per warp) until every lane
/// exits (at most `steps` issues), with the guard predicates `preds`.
pub(crate) fn run_warp<T: WarpTracker + Clone>(
    t: &T,
    prog: &Program,
    live: LaneMask,
    preds: Preds<'_>,
    steps: usize,
) -> Run {
    run_cta(&PerWarp(t.clone()), prog, &[live], 32, preds, Pick::Lowest, steps)
}

/// Runs one warp of `live` lanes under the parallel-path mechanism `t` (through [`Slots`], 32 threads per
/// warp) until every lane exits (at most `steps` issues), the scheduler picking among its path slots as
/// `pick` says.
pub(crate) fn run_slots<T: SlotTracker + Clone>(
    t: &T,
    prog: &Program,
    live: LaneMask,
    preds: Preds<'_>,
    pick: Pick,
    steps: usize,
) -> Run {
    run_cta(&Slots(t.clone()), prog, &[live], 32, preds, pick, steps)
}

/// Runs one warp of `live` lanes under `t` until every lane exits (at most `steps` issues): the lanes in
/// `taken` take every conditional branch. Returns the issued groups in order.
pub(crate) fn issues<T: WarpTracker + Clone>(
    t: &T,
    prog: &Program,
    live: LaneMask,
    taken: LaneMask,
    steps: usize,
) -> Vec<(Pc, LaneMask)> {
    run_warp(t, prog, live, &taking(taken), steps).pcs()
}

/// Asserts the order of the lowest-pc mechanisms on [`DIAMOND`] with lane 0 taking the branch: the
/// fall-through side (pcs 2-3, lanes 1-3) before the taken side (pc 4, lane 0), then every lane at the join
/// together.
pub(crate) fn assert_lower_pc_first_then_meet(t: &[(Pc, LaneMask)]) {
    assert_eq!(&t[2..5], &[(2, 0b1110), (3, 0b1110), (4, 0b0001)], "{t:?}");
    assert_eq!(at_join(t), vec![0b1111], "{t:?}");
}

/// The masks the join pc of [`DIAMOND`] issued with, in order.
pub(crate) fn at_join(trace: &[(Pc, LaneMask)]) -> Vec<LaneMask> {
    at(trace, DIAMOND_JOIN)
}

/// The masks `pc` issued with, in order.
pub(crate) fn at(trace: &[(Pc, LaneMask)], pc: Pc) -> Vec<LaneMask> {
    trace.iter().filter(|(p, _)| *p == pc).map(|&(_, m)| m).collect()
}

/// Asserts that `t`'s rounds are its turns, from the warp state `st` of `live` lanes (none blocked):
/// [`WarpTracker::rotation`] lists the groups `select` gives one at a time, each updated with
/// [`Flow::Next`] after it issues, and [`WarpTracker::advance_rounds`] ends exactly where `rounds` rounds
/// of those turns end (structure, turn and counters).
pub(crate) fn assert_rounds_are_turns<T>(t: &T, prog: &Program, st: &T::State, live: LaneMask, rounds: u32)
where
    T: WarpTracker,
    T::State: PartialEq,
{
    let mut rotation = Vec::new();
    assert!(t.rotation(st, prog, (live, 0), &mut rotation), "no rotation from {st:?}");
    let mut counters = vec![0u64; T::COUNTERS.len()];
    let mut ctx = crate::WarpCtx { prog, live, w: 32, counters: &mut counters, cycle: None, delay: None };
    let mut turns = st.clone();
    for round in 0..rounds {
        for (k, &group) in rotation.iter().enumerate() {
            let (pc, mask) = t.select(&turns, live, 0).expect("a group to select");
            assert_eq!((pc, mask), (group.0 + round, group.1), "turn {k} of round {round}");
            t.update(&mut turns, pc, mask, &Flow::Next, &mut ctx).expect("an update");
        }
    }
    let turn_counters = ctx.counters.to_vec();
    ctx.counters.fill(0);
    let mut at_once = st.clone();
    t.advance_rounds(&mut at_once, rounds, &mut ctx).expect("rounds");
    assert_eq!(at_once, turns, "{rounds} rounds at once");
    assert_eq!(ctx.counters.to_vec(), turn_counters, "counters");
}

#[test]
fn the_kernels_decode_as_their_comments_say() {
    let p = program(DIAMOND);
    assert!(matches!(p.insts[1].op, Op::Bra { target: 4 }) && p.insts[1].guard == Some((1, false)));
    assert_eq!(p.reconv[1], DIAMOND_JOIN);
    assert!(matches!(p.insts[6].op, Op::Exit));
    let p = program(NESTED);
    assert!(matches!(p.insts[2].op, Op::Bra { target: 5 }) && p.insts[2].guard == Some((1, false)));
    assert!(matches!(p.insts[5].op, Op::Bra { target: 8 }) && p.insts[5].guard == Some((2, false)));
    assert_eq!((p.reconv[2], p.reconv[5]), (10, 9));
    assert!(matches!(p.insts[11].op, Op::Exit));
    let p = program(LOOP);
    assert!(matches!(p.insts[3].op, Op::Bra { target: 1 }) && p.insts[3].guard == Some((1, false)));
    assert_eq!(p.reconv[3], 4);
    assert!(matches!(p.insts[5].op, Op::Exit));
}

#[test]
fn the_driver_evaluates_guards_per_thread_and_execution() {
    let p = program(LOOP);
    // Threads 0-3 run 1, 2, 3 and 1 iterations of the loop: the back edge at pc 3 is taken by the threads
    // with iterations left.
    let n = [1, 2, 3, 1];
    let mut core = Core { prog: &p, preds: &trips(&n), visits: HashMap::new() };
    assert_eq!(core.flow(3, 0b1111, |l| l), Flow::Branch { target: 1, taken: 0b0110 });
    assert_eq!(core.flow(3, 0b0110, |l| l), Flow::Branch { target: 1, taken: 0b0100 });
    assert_eq!(core.flow(3, 0b0100, |l| l), Flow::Branch { target: 1, taken: 0 });
    assert_eq!(core.flow(5, 0b1111, |l| l), Flow::Exit { lanes: 0b1111 });
    assert_eq!(core.flow(4, 0b1111, |l| l), Flow::Next);
}

#[test]
fn the_passes_put_their_instructions_where_the_tests_expect() {
    use Mechanism::{ForkJoin, Its, Ssy, Stackless};
    let (d, n, l) = (DIAMOND, NESTED, LOOP);
    let cases: [(&str, &str, Mechanism, &str, &[Pc]); 16] = [
        ("diamond", d, Ssy, "ssy", &[1]),
        ("diamond", d, Ssy, "sync", &[4, 6]),
        ("nested", n, Ssy, "ssy", &[2, 6]),
        ("nested", n, Ssy, "sync", &[5, 9, 11, 13]),
        ("loop", l, Ssy, "pbk", &[1]),
        ("loop", l, Ssy, "@!%p1 brk", &[4]),
        ("loop", l, Ssy, "bra LOOP", &[5]),
        ("diamond", d, ForkJoin, "join", &[5]),
        ("nested", n, ForkJoin, "join", &[9, 11]),
        ("loop", l, ForkJoin, "join", &[4]),
        ("diamond", d, Its, "bssy", &[1]),
        ("nested", n, Its, "bssy", &[2, 6]),
        ("loop", l, Its, "bsync", &[5]),
        ("diamond", d, Stackless, "syncwarp", &[5]),
        ("nested", n, Stackless, "syncwarp", &[10]),
        ("loop", l, Stackless, "syncwarp", &[4]),
    ];
    for (name, src, m, text, pcs) in cases {
        assert_eq!(pcs_of(&prepared(src, m), text), pcs, "`{text}` in {name} under {}", m.name());
    }
}
