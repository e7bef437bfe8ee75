//! Compiled straight-line segments for the functional machine ([`reconverge_jit`]).
//!
//! A run of straight-line instructions ([`SmCore::issue_run`](super::SmCore::issue_run)) executes its
//! *pure lane instructions* (arithmetic, conversions, comparisons, selections, moves, predicate logic)
//! either one at a time in the interpreter or, once the segment starting at a pc is hot, as one compiled
//! function that computes a static warp's lanes two at a time in vector registers and writes only the
//! active ones. A group whose lanes come from several static warps (regrouped by thread block compaction
//! or dynamic warp formation; every thread stays in its home lane) runs the function once per warp with
//! that warp's lanes. Warp sizes the compiler refuses (odd, or above 64) are interpreted. Memory, control, warp-wide and special-register
//! instructions always run in the interpreter, which stays the reference: the compiled code evaluates
//! the operations it does not inline with the interpreter's own semantics functions
//! ([`lane_value`], [`lane_compare`]), and the differential tests require identical memory and
//! statistics with and without compilation (`HostOptions::jit`, `--no-jit`).

use super::cta::Cta;
use crate::alu;
use crate::error::SimError;
use crate::launch::JitPolicy;
use crate::mechanism::LaneMap;
use crate::program::{Op, Program};
use crate::types::{LaneMask, Pc};
use reconverge_jit::{Cache, CompileReport, Evaluators, Segment, Shape};

/// Runs of a segment before it is compiled: below this, compiling costs more than it saves.
pub const HOT_RUNS: u16 = 64;

/// What compiling did in a launch: the segments and instructions compiled and the time it took (wall
/// clock, so not part of the deterministic statistics). Segments another launch of the process compiled
/// come from the cache and count nothing.
pub type JitReport = CompileReport;

/// The compiled segments of one launch.
pub struct Jit<'p> {
    prog: &'p Program,
    /// Per pc: the instructions of the segment that starts there (consecutive pure lane instructions within
    /// the pc's straight-line run); below 2, none.
    len: Vec<u16>,
    /// Per pc: runs that reached it before its segment was compiled (saturating).
    heat: Vec<u16>,
    /// Per pc: its compiled segment.
    code: Vec<Option<Segment>>,
    /// Per pc: whether it is a pure lane instruction ([`reconverge_jit::supports`]), whatever its run.
    pure: Vec<bool>,
    shape: Shape,
    /// Runs of a segment before it is compiled.
    hot: u16,
    report: JitReport,
}

/// The interpreter's semantics, as the compiled code calls them.
const EVALUATORS: Evaluators = Evaluators { value: lane_value, compare: lane_compare };

/// Per pc: how many consecutive pure lane instructions ([`reconverge_jit::supports`]: they read and write
/// only their own lanes' registers and predicates) start there, within its straight-line run
/// ([`Program::straight`]); 0 where the instruction is not one.
pub(crate) fn pure_runs(prog: &Program) -> Vec<u16> {
    let n = prog.insts.len();
    let mut len = vec![0u16; n];
    for pc in (0..n).rev() {
        let straight = prog.straight.get(pc).map_or(0, |&s| u32::from(s));
        if straight == 0 || !reconverge_jit::supports(&prog.insts[pc]) {
            continue;
        }
        let next = len.get(pc + 1).map_or(0, |&l| u32::from(l));
        // A segment never leaves its pc's straight-line run.
        len[pc] = (1 + next).min(straight).min(u32::from(u16::MAX)) as u16;
    }
    len
}

impl<'p> Jit<'p> {
    /// The segments of `prog` for CTAs of `nwarps` static warps of `w` threads, each compiled once runs
    /// reached it `hot` times ([`HOT_RUNS`] by default; 1 compiles every segment at once).
    pub fn new(prog: &'p Program, (nwarps, w): (u32, u32), hot: u16) -> Jit<'p> {
        let n = prog.insts.len();
        let mut len = pure_runs(prog);
        let pure: Vec<bool> = prog.insts.iter().map(reconverge_jit::supports).collect();
        let shape = Shape { w, padded: nwarps * w, nwarps };
        if !shape.compilable() {
            len.fill(0);
        }
        Jit { prog, len, heat: vec![0; n], code: vec![None; n], pure, shape, hot, report: JitReport::default() }
    }

    /// The segments of `prog` for CTAs of `nwarps` static warps of `w` threads under `policy`: `None`
    /// when it compiles nothing (`--no-jit`).
    pub fn for_policy(prog: &'p Program, (nwarps, w): (u32, u32), policy: JitPolicy) -> Option<Jit<'p>> {
        let hot = match policy {
            JitPolicy::Off => return None,
            JitPolicy::Hot => HOT_RUNS,
            JitPolicy::Always => 1,
        };
        Some(Jit::new(prog, (nwarps, w), hot))
    }

    /// Whether the instruction at `pc` is a pure lane instruction: it reads and writes only its own
    /// lane's registers and predicates (and constants), so it may execute at any time before those are
    /// next read or written by anything else.
    #[inline]
    pub(crate) fn is_pure(&self, pc: Pc) -> bool {
        self.pure.get(pc as usize).copied().unwrap_or(false)
    }

    /// Whether a segment of at least two instructions starts at `pc` (its straight-line run's pure lane
    /// instructions from `pc`) and this launch's warps can be compiled.
    #[inline]
    pub(crate) fn starts_segment(&self, pc: Pc) -> bool {
        self.len.get(pc as usize).is_some_and(|&n| n >= 2)
    }

    /// Whether any segment can be compiled for this launch's warps (the compiler refuses some shapes).
    pub(crate) fn compiles(&self) -> bool {
        self.shape.compilable()
    }

    /// What was compiled so far.
    pub fn report(&self) -> JitReport {
        self.report
    }

    /// Executes the segment at `pc` for the lanes `mask` of `threads` if it is compiled (or hot enough to
    /// compile now) and fits in the `room` instructions left of the run; returns how many instructions
    /// it executed (0: none, the interpreter goes on).
    pub(crate) fn run(
        &mut self,
        pc: Pc,
        room: u32,
        cta: &mut Cta,
        threads: &LaneMap,
        mask: LaneMask,
    ) -> Result<u32, SimError> {
        let i = pc as usize;
        let n = self.len.get(i).map_or(0, |&l| u32::from(l));
        if n < 2 || n > room {
            return Ok(0);
        }
        if self.code[i].is_none() && !self.compile(i, n) {
            return Ok(0);
        }
        let (Some(seg), insts) = (&self.code[i], &self.prog.insts[i..i + n as usize]) else { return Ok(0) };
        // Lanes are independent, so the warps' parts may run one after another. The shape is compilable
        // (checked in `new`), so the code refuses no part of a well-formed group.
        for &(warp, lanes) in threads.parts() {
            let part = lanes & mask;
            if part != 0 {
                seg.run(insts, (&mut cta.regs, &mut cta.preds), self.shape, (warp, part))
                    .map_err(|_| SimError::Internal("a compiled segment refused a group's warp"))?;
            }
        }
        Ok(n)
    }

    /// Counts a run reaching `pc` and, once it is hot, takes its `n`-instruction segment from the
    /// process's cache, compiling it if no launch did before (looking it up costs about a microsecond, so
    /// cold segments never ask). Whether the segment is now there.
    fn compile(&mut self, i: usize, n: u32) -> bool {
        self.heat[i] = self.heat[i].saturating_add(1);
        if self.heat[i] < self.hot {
            return false;
        }
        let insts = &self.prog.insts[i..i + n as usize];
        let seg = match Cache::global().segment(insts, EVALUATORS, &mut self.report) {
            Ok(seg) => Some(seg),
            Err(_) => {
                // Never again for this pc: the interpreter runs it.
                self.len[i] = 0;
                None
            }
        };
        self.code[i] = seg;
        self.code[i].is_some()
    }
}

/// The compiled code's evaluator of the pure lane operations it does not inline: exactly the
/// interpreter's semantics functions.
extern "C" fn lane_value(op: *const Op, a: u64, b: u64, c: u64, e: u64) -> u64 {
    // SAFETY: the compiled code computes `op` from the instruction slice `Segment::run` was given for this
    // call (the running program's own instructions of the segment, borrowed for the whole call; cached code
    // never holds an address of its own), at the offset of instruction k's `op` inside a `DInst`: a valid
    // `Op` for as long as this call lasts.
    let op = unsafe { &*op };
    match *op {
        Op::IntUn { op, ty, .. } => alu::int_un(op, ty)(a),
        Op::IntBin { op, ty, .. } => alu::int_bin(op, ty)(a, b),
        Op::IntTer { op, ty, .. } => alu::int_ter(op, ty)(a, b, c),
        Op::Bfi { ty, .. } => alu::bfi(ty.bits(), a, b, c, e),
        Op::Prmt { mode, .. } => alu::prmt(mode)(a, b, c),
        Op::Lop3 { lut, .. } => alu::lop3(a, b, c, lut),
        Op::Shf { left, clamp, .. } => alu::shf(left, clamp)(a, b, c),
        Op::FloatUn { op, ty, mode, .. } => alu::float_un(op, ty, mode)(a),
        Op::FloatBin { op, ty, mode, .. } => alu::float_bin(op, ty, mode)(a, b),
        Op::Fma { ty, mode, .. } => alu::fma(ty, mode)(a, b, c),
        Op::Cvt { dty, sty, rnd, ftz, sat, dst_bits, .. } => alu::cvt(dty, sty, rnd, ftz, sat, dst_bits)(a),
        Op::Slct { sty, .. } => {
            if alu::slct_cond(sty)(c) {
                a
            } else {
                b
            }
        }
        // `reconverge_jit::Compiler::supports` admits no other operation that produces a value through
        // the evaluator.
        _ => 0,
    }
}

/// The compiled code's evaluator of the `setp` comparisons it does not inline (1 when it holds).
extern "C" fn lane_compare(op: *const Op, a: u64, b: u64) -> u64 {
    // SAFETY: as in `lane_value`.
    match unsafe { &*op } {
        Op::Setp { cmp, ty, .. } => u64::from(alu::compare(*cmp, *ty)(a, b)),
        _ => 0,
    }
}
