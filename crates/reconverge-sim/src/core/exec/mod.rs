//! The whole-warp executor: runs one decoded instruction for an issue group and reports its [`Flow`].
//!
//! Values are computed for every lane of the group at once: sources are fetched as lane slices (a
//! register's lanes are contiguous), results are computed into a scratch lane array and written back under
//! the group's mask. An instruction with few active lanes (see [`Scratch`]) fetches, computes and writes
//! only those instead. Memory operations and warp-collectives walk the active lanes in ascending order,
//! which makes atomics deterministic.
//!
//! This file holds the executor's environment, scratch space and results and [`execute`], the dispatch to
//! the instruction families; the rest is cut along its concerns:
//!
//! - `operands`: predicate masks, special registers, fetching sources and writing results;
//! - `warp_memory`: per-lane addresses and whole-warp loads and stores;
//! - `members`: the member masks of warp-synchronous instructions;
//! - `macros`: the lane-wise `un!`, `bin!`, `ter!` of the arithmetic families;
//! - `integer`, `float`, `compare`, `load_store`, `texture`, `asynchronous`, `matrix`, `control`,
//!   `collective`, `printf`: the families.

use super::cta::{CallFrame, Cta};
use super::lanes::Lanes;
use crate::access::{resolve, AccessKind, AccessLog, AtomicRequest, GlobalMemory};
use crate::alu;
use crate::error::{DeadlockReport, Location, SimError};
use crate::layout::{CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW};
use crate::mechanism::Flow;
use crate::memory::{flat_read, flat_write, write_le, FaultKind, MemFault};
use crate::printf::{PrintfLog, PrintfRecord, PrintfSource, MAX_STRING};
use crate::program::*;
use crate::types::{full_mask, lanes, LaneMask, Pc};
use smallvec::SmallVec;

#[macro_use]
mod macros;
mod asynchronous;
mod collective;
mod compare;
mod control;
mod float;
mod integer;
mod load_store;
mod matrix;
mod members;
mod operands;
mod printf;
#[cfg(test)]
mod tests;
mod texture;
mod warp_memory;

use asynchronous::*;
use collective::*;
use compare::*;
use control::*;
use float::*;
use integer::*;
use load_store::*;
use matrix::*;
use members::*;
use operands::*;
use printf::*;
use texture::*;
use warp_memory::*;

/// Everything outside the CTA an instruction can touch.
pub(crate) struct Env<'a, G: GlobalMemory> {
    /// The program.
    pub prog: &'a Program,
    /// Device memory.
    pub mem: &'a mut G,
    /// The constant bank.
    pub consts: &'a [u8],
    /// The kernel parameter buffer.
    pub params: &'a [u8],
    /// What stays the same for every instruction of the launch on this SM.
    pub fixed: &'a Fixed,
    /// The value `%clock` reads.
    pub clock: u64,
    /// Whether to detect value changes of registers (livelock detection).
    pub track: bool,
    /// Set when memory changed, or (while `track`) a register or predicate changed value.
    pub changed: bool,
    /// The memory accesses of the last instruction (recorded when `access.enabled`).
    pub access: &'a mut AccessLog,
    /// The SM's slot of the CTA being executed (atomics name it with the thread).
    pub cta_slot: u32,
    /// The mechanism brings missing member lanes of a warp-synchronous instruction to the group
    /// ([`crate::mechanism::Tracker::AWAITS_MEMBERS`]): report them as [`Flow::Await`] instead of a
    /// deadlock.
    pub await_members: bool,
    /// The output of `printf` calls ([`Op::Printf`]).
    pub printf: &'a mut PrintfLog,
}

/// The launch's constants as the executor needs them (one per SM core).
#[derive(Clone, Debug)]
pub(crate) struct Fixed {
    /// Grid dimensions.
    pub grid: [u32; 3],
    /// Block dimensions.
    pub block: [u32; 3],
    /// The SM running the CTA.
    pub sm: u32,
    /// Number of SMs.
    pub nsm: u32,
    /// Local memory limit per thread.
    pub local_limit: u32,
    /// Dynamic shared memory size.
    pub dynamic_shared: u32,
}

/// Scratch lane arrays, reused across instructions, and when an instruction iterates only its active
/// lanes.
pub(super) struct Scratch {
    a: [u64; 64],
    b: [u64; 64],
    c: [u64; 64],
    e: [u64; 64],
    out: [u64; 64],
    /// An instruction of a whole static warp whose active lanes are at most this many 32nds of the warp
    /// fetches, computes and writes only them; more take the whole-warp path.
    sparse_whole: u32,
    /// The same for a regrouped group ([`super::lanes::Mixed`]), whose lanes are gathered one by one.
    sparse_mixed: u32,
    /// Whether loads and stores whose lanes all hit one buffer take the whole-warp path ([`load_warp`],
    /// [`store_warp`]); off only to test that it matches the lane-by-lane one.
    warp_memory: bool,
}

/// [`Scratch::sparse_whole`] by default, in 32nds of the warp: a quarter of it (a first choice, not yet tuned).
const SPARSE_WHOLE: u32 = 8;

/// [`Scratch::sparse_mixed`] by default, in 32nds of the warp (gathering lanes one by one costs as much).
const SPARSE_MIXED: u32 = 24;

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            a: [0; 64],
            b: [0; 64],
            c: [0; 64],
            e: [0; 64],
            out: [0; 64],
            sparse_whole: SPARSE_WHOLE,
            sparse_mixed: SPARSE_MIXED,
            warp_memory: true,
        }
    }
}

impl Scratch {
    /// The active lanes to iterate alone (`Some(eff)`), or `None` for the whole-warp path, for an
    /// instruction whose guard holds in the lanes `eff` of a group of `w` lanes (whole static warp or not).
    #[inline(always)]
    fn only(&self, whole: bool, eff: LaneMask, w: usize) -> Option<LaneMask> {
        let limit = if whole { self.sparse_whole } else { self.sparse_mixed };
        (eff.count_ones() * 32 <= w as u32 * limit).then_some(eff)
    }
}

/// A barrier arrival the machine must account for.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BarrierArrival {
    /// Barrier id (0..16).
    pub id: u32,
    /// Thread count, if given.
    pub count: Option<u32>,
    /// The flavour.
    pub kind: BarKind,
    /// Arriving lanes.
    pub lanes: LaneMask,
    /// For `bar.red`: the reduction input of each arriving lane (as a mask), and the destination.
    pub red: Option<(LaneMask, u32, bool)>,
}

/// What an instruction did.
pub(super) struct Effects {
    /// Control flow for the mechanism.
    pub flow: Flow,
    /// A barrier arrival, if the instruction was a barrier (boxed: rare, and every outcome is moved).
    pub barrier: Option<Box<BarrierArrival>>,
}

impl Effects {
    fn next() -> Effects {
        Effects { flow: Flow::Next, barrier: None }
    }
}

/// Builds the location of `pc` for the thread in CTA slot `slot` (or the group, when `None`).
pub(crate) fn location(prog: &Program, cta: &Cta, pc: Pc, slot: Option<usize>) -> Location {
    let info = prog.info.get(pc as usize);
    Location {
        kernel: prog.kernel_name().to_string(),
        block: cta.id,
        thread: slot.map(|t| cta.tid[t]),
        pc,
        inst: info.map(|i| i.text.clone()).unwrap_or_default(),
        file: prog.file.clone(),
        ptx_line: info.map(|i| i.ptx_line).unwrap_or(0),
        source: info.and_then(|i| i.loc).map(|l| {
            let f = prog.src_files.iter().find(|(n, _)| *n == l.file).map(|(_, f)| f.as_str()).unwrap_or("?");
            format!("{}:{}", f, l.line)
        }),
    }
}

/// The issue an instruction family of [`execute`] runs: the group's threads, its pc, the lanes whose
/// guard holds, the base thread slot when a whole warp with every lane active computes directly
/// into its registers, and the active lanes when only they are computed.
#[derive(Clone, Copy)]
struct At<L> {
    g: L,
    pc: Pc,
    /// The lanes of the issue group.
    mask: LaneMask,
    /// Those whose guard holds.
    eff: LaneMask,
    direct: Option<usize>,
    /// `Some(eff)` when the instruction fetches, computes and writes only its active lanes (few of them:
    /// [`Scratch::only`]); `None` for the whole-warp path.
    only: Option<LaneMask>,
}

/// Executes the instruction at `pc` for the lanes `mask` of an issue group whose threads `lanes` names.
pub(crate) fn execute<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    sc: &mut Scratch,
    cta: &mut Cta,
    g: L,
    pc: Pc,
    mask: LaneMask,
) -> Result<Effects, SimError> {
    let prog = env.prog;
    let inst = &prog.insts[pc as usize];
    let eff = match inst.guard {
        None => mask,
        Some((p, neg)) => {
            let m = pred_mask(cta, g, p);
            mask & if neg { !m } else { m }
        }
    };
    let w = cta.w;
    // A whole warp with every lane active, not watched for changes: computed straight into the
    // destination register's row.
    let direct = match g.base() {
        Some(base) if eff == full_mask(w as u32) && !env.track => Some(base),
        _ => None,
    };
    env.access.mask = 0;
    if eff == 0 && !matches!(inst.op, Op::Bra { .. } | Op::Brx { .. }) {
        return Ok(Effects::next());
    }
    let only = match direct {
        None => sc.only(g.base().is_some(), eff, w),
        Some(_) => None,
    };
    let at = At { g, pc, mask, eff, direct, only };
    if let Some(m) = inst.op.member_mask() {
        if let Some(fx) = split_by_members(env, sc, cta, at, m)? {
            return Ok(fx);
        }
    }
    match &inst.op {
        op @ (Op::IntUn { .. }
        | Op::IntBin { .. }
        | Op::IntTer { .. }
        | Op::Carry { .. }
        | Op::Bfi { .. }
        | Op::Prmt { .. }
        | Op::Lop3 { .. }
        | Op::Shf { .. }) => integer(env, sc, cta, at, op),
        op @ (Op::FloatUn { .. } | Op::FloatBin { .. } | Op::Fma { .. } | Op::Testp { .. } | Op::Cvt { .. }) => {
            float(env, sc, cta, at, op)
        }
        op @ (Op::Setp { .. }
        | Op::Set { .. }
        | Op::Selp { .. }
        | Op::Slct { .. }
        | Op::Mov { .. }
        | Op::PredOp { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }) => compare_move(env, sc, cta, at, op),
        op @ (Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } | Op::Cvta { .. } | Op::Isspacep { .. }) => {
            memory(env, sc, cta, at, op)
        }
        op @ (Op::Tex { .. } | Op::Txq { .. } | Op::Suld { .. } | Op::Sust { .. }) => texture(env, cta, at, op),
        op @ (Op::CpAsync { .. } | Op::CpAsyncWait { .. } | Op::Mbarrier { .. }) => asynchronous(env, cta, at, op),
        op @ (Op::Mma { .. }
        | Op::Ldmatrix { .. }
        | Op::Stmatrix { .. }
        | Op::Movmatrix { .. }
        | Op::WmmaLoad { .. }
        | Op::WmmaStore { .. }
        | Op::WmmaMma { .. }) => matrix(env, cta, at, op),
        op @ (Op::Bra { .. } | Op::Brx { .. } | Op::Call { .. } | Op::Ret | Op::Exit | Op::FellOff | Op::Trap) => {
            control(env, sc, cta, at, op)
        }
        op @ (Op::Bar { .. }
        | Op::WarpSync { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Activemask { .. }
        | Op::Match { .. }
        | Op::Elect { .. }
        | Op::Redux { .. }) => collective(env, sc, cta, at, op),
        Op::Ssy { target } => Ok(Effects { flow: Flow::Ssy { target: *target }, barrier: None }),
        Op::Pbk { target } => Ok(Effects { flow: Flow::Pbk { target: *target }, barrier: None }),
        Op::Sync => Ok(Effects { flow: Flow::Sync, barrier: None }),
        Op::Brk => Ok(Effects { flow: Flow::Brk { lanes: eff }, barrier: None }),
        Op::Join => Ok(Effects { flow: Flow::Join, barrier: None }),
        Op::Bssy { target } => Ok(Effects { flow: Flow::Bssy { target: *target }, barrier: None }),
        Op::Bsync { target } => Ok(Effects { flow: Flow::Bsync { target: *target }, barrier: None }),
        Op::Yield => Ok(Effects { flow: Flow::Yield, barrier: None }),
        Op::Syncwarp => Ok(Effects { flow: Flow::SyncWarp, barrier: None }),
        Op::Printf { format, args, ret } => printf(env, cta, at, (*format, *args, *ret)),
        Op::Nop | Op::Fence { .. } => Ok(Effects::next()),
        Op::Unsupported(what) => {
            Err(SimError::Unsupported { what: what.to_string(), at: Box::new(location(prog, cta, pc, None)) })
        }
    }
}
