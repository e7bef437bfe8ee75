//! Convergence, variance and affine analysis, and the scalarization plan (seed 004: Lee, Krashinsky,
//! Grover, Keckler & Asanović, CGO'13, §3).
//!
//! - **CA** (§3.1): a block with no control-dependence predecessor is convergent.
//! - **CA+VA** (§3.2, Figure 3): optimistically every block convergent and every instruction
//!   thread-invariant; a worklist seeded with the instructions that read per-thread values, atomics and
//!   volatile accesses; a variant instruction makes its data-flow successors (def-use chains from
//!   reaching definitions, [`DefUse`]) variant, and a variant conditional branch makes every block
//!   iteratedly control dependent on it divergent (except blocks with a barrier) and all their
//!   instructions variant.
//! - **+exit** (§3.4): divergence does not propagate from a branch on which an exit block of the kernel
//!   is control dependent (the threads that leave wait at the exit), nor from a branch with a successor
//!   that only leaves the kernel (`@p bra $L_ret` to a lone `ret`: how NVRTC compiles
//!   `if (i >= n) return;`, where the shared return block post-dominates everything and so is control
//!   dependent on nothing).
//! - **Affine** (§3.5): a variant value in a convergent block that is `base + stride × tid.x` with the
//!   stride known; loads and stores whose address has a stride equal to their access size are
//!   *warp-sequential*.
//! - **Scalarization plan**: invariant instructions in convergent blocks are scalar instructions;
//!   registers all of whose definitions are scalar instructions are per-warp scalar registers.
//!
//! What is thread-variant in PTX beyond the paper (documented in `docs/scalarization.md`): `%tid`,
//! `%laneid`, `%lanemask_*`, `%clock*` and `%globaltimer` are per-thread; `%ctaid`, `%nctaid`, `%ntid`,
//! `%warpid`, `%smid`, `%gridid` and the other special registers are the same in every thread of a warp.
//! Loads of kernel parameters are invariant; loads from a thread-invariant address in a convergent block
//! are invariant (every lane reads the same location at the same time), except local memory, which is
//! per thread, as are addresses of local variables. Call results and a device function's own parameters
//! are variant (no interprocedural analysis), and a device function is analysed as divergent throughout
//! (its callers may be diverged). `vote`, `redux.sync` and `activemask` produce one value for the whole
//! (converged) warp whatever their operands; `shfl` and `match` follow their operands.

use crate::analysis::FunctionAnalysis;
use crate::defuse::{defs, uses, DefUse, Node, Value};
use reconverge_ir::{
    AddrBase, EntityRef, FuncKind, Function, Imm, Inst, InstId, KnownModifier, Opcode, Operand, SpecialRegKind,
    StateSpace, Symbol,
};

/// How an instruction's result varies across the threads of a warp.
#[derive(Clone, Copy, PartialEq, Eq, Debug, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variance {
    /// The same in every thread.
    Invariant,
    /// `base + stride × tid.x`, with the base the same in every thread.
    Affine,
    /// Anything else.
    Variant,
}

/// The analyses' results for one function.
#[derive(Clone, Debug)]
pub struct VarianceAnalysis {
    /// Per block (CFG node): convergent under CA.
    pub convergent_ca: Vec<bool>,
    /// Per block: convergent under CA+VA.
    pub convergent_va: Vec<bool>,
    /// Per block: convergent under CA+VA with the exit rule.
    pub convergent_exit: Vec<bool>,
    /// Per instruction (`InstId` index): variance under CA+VA+exit.
    pub variance: Vec<Variance>,
    /// Per instruction: the stride (bytes per thread) of an affine value.
    pub stride: Vec<Option<i64>>,
    /// Per instruction: a scalar instruction (invariant, in a convergent block).
    pub scalar: Vec<bool>,
    /// Per instruction: a warp-sequential load or store.
    pub warp_sequential: Vec<bool>,
    /// Per instruction: a warp-sequential access for which the compiler adds one scalar instruction that
    /// computes the warp's base address (the address of thread 0 of the warp, §3.5): every warp-sequential
    /// access, unless an earlier warp-sequential access of the same block reads the same value of the same
    /// address register (that base is already in a scalar register; an immediate offset folds into the
    /// access). See `docs/scalarization.md`.
    pub base_address: Vec<bool>,
    /// Per register (`RegId` index): a per-warp scalar register.
    pub scalar_reg: Vec<bool>,
    /// Per register: defined or used anywhere.
    pub used_reg: Vec<bool>,
}

fn special(inst: &Inst) -> impl Iterator<Item = SpecialRegKind> + '_ {
    inst.operands.iter().filter_map(|o| match o {
        Operand::Special(s) => Some(s.kind),
        _ => None,
    })
}

/// Whether `inst` reads a value that differs between the threads of a warp by itself.
fn seeds_variance(f: &Function, inst: &Inst) -> bool {
    let per_thread = special(inst).any(|k| {
        matches!(
            k,
            SpecialRegKind::Tid
                | SpecialRegKind::Laneid
                | SpecialRegKind::LanemaskEq
                | SpecialRegKind::LanemaskLe
                | SpecialRegKind::LanemaskLt
                | SpecialRegKind::LanemaskGe
                | SpecialRegKind::LanemaskGt
                | SpecialRegKind::Clock
                | SpecialRegKind::ClockHi
                | SpecialRegKind::Clock64
                | SpecialRegKind::Globaltimer
        )
    });
    if per_thread || matches!(inst.opcode, Opcode::Atom | Opcode::Red | Opcode::Unknown(_)) {
        return true;
    }
    if inst.has(KnownModifier::Volatile) {
        return true;
    }
    let local_sym = |s: &Symbol| match s {
        Symbol::Local(l) => matches!(f.locals[*l].space, StateSpace::Local | StateSpace::Param),
        Symbol::Ret(_) => true,
        Symbol::Param(_) => f.kind != FuncKind::Entry,
        _ => false,
    };
    let reads_local = inst.operands.iter().any(|o| match o {
        Operand::Sym(s) => local_sym(s),
        Operand::Addr(a) => matches!(&a.base, AddrBase::Sym(s) if local_sym(s)),
        _ => false,
    });
    reads_local || inst.space() == Some(StateSpace::Local)
}

/// Collectives whose result is one value for the whole converged warp, whatever their operands.
fn warp_uniform_result(inst: &Inst) -> bool {
    matches!(inst.opcode, Opcode::Vote | Opcode::Redux | Opcode::Activemask)
}

fn is_conditional_branch(inst: &Inst) -> bool {
    inst.opcode == Opcode::Brx || (inst.guard.is_some() && inst.is_terminator())
}

fn is_barrier(inst: &Inst) -> bool {
    matches!(inst.opcode, Opcode::Bar | Opcode::Barrier) && !inst.has(KnownModifier::Arrive)
}

/// Figure 3 over the SSA def-use graph: returns (convergent per block, variant per instruction, variant
/// per phi).
fn figure3(f: &Function, fa: &FunctionAnalysis, du: &DefUse, exit_rule: bool) -> (Vec<bool>, Vec<bool>, Vec<bool>) {
    let nb = fa.cfg.num_blocks();
    let kernel = f.kind == FuncKind::Entry;
    let mut conv = vec![kernel; nb];
    let mut variant = vec![false; f.insts.len()];
    let mut variant_phi = vec![false; du.phis.len()];
    let mut work: Vec<Node> = Vec::new();
    let mut block_of = vec![u32::MAX; f.insts.len()];
    for &b in &f.layout {
        for &i in &f.blocks[b].insts {
            block_of[i.index()] = b.index() as u32;
            if !kernel || seeds_variance(f, &f.insts[i]) {
                work.push(Node::Inst(i.index() as u32));
            }
        }
    }
    if !kernel {
        work.extend((0..du.phis.len() as u32).map(Node::Phi));
    }
    let has_barrier: Vec<bool> = (0..nb)
        .map(|b| f.blocks[reconverge_ir::BlockId::new(b)].insts.iter().any(|&i| is_barrier(&f.insts[i])))
        .collect();
    let exits: Vec<u32> = fa.cfg.exit_blocks().to_vec();
    // Blocks that only leave the kernel (`ret`/`exit`, unguarded): a branch to one sends threads out of
    // the kernel at once, like a branch on which an exit block is control dependent.
    let exit_only: Vec<bool> = (0..nb)
        .map(|b| {
            let insts = &f.blocks[reconverge_ir::BlockId::new(b)].insts;
            kernel
                && !insts.is_empty()
                && insts.iter().all(|&i| {
                    let inst = &f.insts[i];
                    inst.guard.is_none() && matches!(inst.opcode, Opcode::Ret | Opcode::Exit)
                })
        })
        .collect();
    while let Some(n) = work.pop() {
        let done = match n {
            Node::Inst(i) => std::mem::replace(&mut variant[i as usize], true),
            Node::Phi(p) => std::mem::replace(&mut variant_phi[p as usize], true),
        };
        if done {
            continue;
        }
        for &s in du.users(n) {
            let skip = match s {
                Node::Inst(j) => variant[j as usize] || warp_uniform_result(&f.insts[InstId::new(j as usize)]),
                Node::Phi(q) => variant_phi[q as usize],
            };
            if !skip {
                work.push(s);
            }
        }
        let Node::Inst(i) = n else { continue };
        let inst = &f.insts[InstId::new(i as usize)];
        let b = block_of[i as usize];
        if !is_conditional_branch(inst) || b == u32::MAX {
            continue;
        }
        if exit_rule
            && (exits.iter().any(|&e| fa.cdep.depends_on(e, b))
                || fa.cfg.succs(b).iter().any(|&s| exit_only.get(s as usize).copied().unwrap_or(false)))
        {
            continue;
        }
        for x in fa.cdep.iterated(b) {
            if has_barrier[x as usize] || !conv[x as usize] {
                continue;
            }
            conv[x as usize] = false;
            for &j in &f.blocks[reconverge_ir::BlockId::new(x as usize)].insts {
                work.push(Node::Inst(j.index() as u32));
            }
            work.extend(du.block_phis[x as usize].iter().map(|&p| Node::Phi(p)));
        }
    }
    (conv, variant, variant_phi)
}

/// The abstract value of the affine lattice.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Aff {
    /// The same in every thread (the constant when known).
    Inv(Option<i64>),
    /// `base + stride × tid.x`.
    Lin(i64),
    /// Anything else.
    Var,
}

fn join(a: Aff, b: Aff) -> Aff {
    match (a, b) {
        (Aff::Inv(x), Aff::Inv(y)) => Aff::Inv(if x == y { x } else { None }),
        (Aff::Lin(x), Aff::Lin(y)) if x == y => Aff::Lin(x),
        _ => Aff::Var,
    }
}

fn lin(stride: i64) -> Aff {
    if stride == 0 {
        Aff::Inv(None)
    } else {
        Aff::Lin(stride)
    }
}

fn add(a: Aff, b: Aff, sign: i64) -> Aff {
    match (a, b) {
        (Aff::Inv(x), Aff::Inv(y)) => Aff::Inv(x.zip(y).map(|(x, y)| x.wrapping_add(sign.wrapping_mul(y)))),
        (Aff::Lin(s), Aff::Inv(_)) => Aff::Lin(s),
        (Aff::Inv(_), Aff::Lin(s)) => lin(sign * s),
        (Aff::Lin(s), Aff::Lin(t)) => lin(s + sign * t),
        _ => Aff::Var,
    }
}

fn mul(a: Aff, b: Aff) -> Aff {
    match (a, b) {
        (Aff::Inv(x), Aff::Inv(y)) => Aff::Inv(x.zip(y).map(|(x, y)| x.wrapping_mul(y))),
        (Aff::Lin(s), Aff::Inv(Some(c))) | (Aff::Inv(Some(c)), Aff::Lin(s)) => lin(s.wrapping_mul(c)),
        _ => Aff::Var,
    }
}

/// The affine values of every instruction and phi: a fixed point over the blocks in reverse postorder,
/// starting optimistically from "not computed yet" (so a loop-carried pointer, `p += 4` each iteration,
/// keeps its stride); nodes in divergent blocks and guarded instructions are variant.
struct AffineValues {
    inst: Vec<Aff>,
    phi: Vec<Aff>,
}

impl AffineValues {
    fn of(&self, v: Value) -> Aff {
        match v {
            Value::Inst(i) => self.inst[i as usize],
            Value::Phi(p) => self.phi[p as usize],
            Value::Undef => Aff::Inv(None),
        }
    }
}

fn affine(
    f: &Function,
    fa: &FunctionAnalysis,
    du: &DefUse,
    conv: &[bool],
    variant: &[bool],
    variant_phi: &[bool],
) -> AffineValues {
    let mut inst: Vec<Option<Aff>> = vec![None; f.insts.len()];
    let mut phi: Vec<Option<Aff>> = vec![None; du.phis.len()];
    let get = |inst: &[Option<Aff>], phi: &[Option<Aff>], v: Value| match v {
        Value::Inst(i) => inst[i as usize],
        Value::Phi(p) => phi[p as usize],
        Value::Undef => Some(Aff::Inv(None)),
    };
    for round in 0..32 {
        let mut changed = false;
        for &b in fa.cfg.reverse_postorder() {
            let divergent = !conv[b as usize];
            for &p in &du.block_phis[b as usize] {
                let v = if !variant_phi[p as usize] {
                    Aff::Inv(None)
                } else if divergent || round == 31 {
                    Aff::Var
                } else {
                    du.phis[p as usize]
                        .args
                        .iter()
                        .filter_map(|&a| get(&inst, &phi, a))
                        .reduce(join)
                        .unwrap_or(Aff::Var)
                };
                if phi[p as usize] != Some(v) {
                    phi[p as usize] = Some(v);
                    changed = true;
                }
            }
            for &i in &f.blocks[reconverge_ir::BlockId::new(b as usize)].insts {
                let x = &f.insts[i];
                let v = if !variant[i.index()] {
                    Aff::Inv(None)
                } else if divergent || x.guard.is_some() || round == 31 {
                    Aff::Var
                } else {
                    affine_of(x, i, du, &|v| get(&inst, &phi, v))
                };
                if inst[i.index()] != Some(v) {
                    inst[i.index()] = Some(v);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    AffineValues {
        inst: inst.into_iter().map(|v| v.unwrap_or(Aff::Var)).collect(),
        phi: phi.into_iter().map(|v| v.unwrap_or(Aff::Var)).collect(),
    }
}

/// One instruction's affine value from its operands' current values (`None`: not computed yet, skipped:
/// the optimistic start).
fn affine_of(inst: &Inst, i: InstId, du: &DefUse, value: &dyn Fn(Value) -> Option<Aff>) -> Aff {
    let operand = |o: &Operand| -> Aff {
        match o {
            Operand::Imm(Imm::Int(c)) => Aff::Inv(Some(*c)),
            Operand::Imm(_) | Operand::Sym(_) => Aff::Inv(None),
            Operand::Special(s) if s.kind == SpecialRegKind::Tid => {
                if s.dim == Some(reconverge_ir::Dim::X) {
                    Aff::Lin(1)
                } else {
                    Aff::Var
                }
            }
            Operand::Special(_) => Aff::Inv(None),
            Operand::Reg(r) => value(du.value_of(i, *r)).unwrap_or(Aff::Var),
            _ => Aff::Var,
        }
    };
    let ops: Vec<Aff> = inst.operands.iter().skip(1).map(operand).collect();
    match (&inst.opcode, ops.as_slice()) {
        (Opcode::Mov | Opcode::Cvt | Opcode::Cvta, [a]) => *a,
        (Opcode::Add, [a, b]) => add(*a, *b, 1),
        (Opcode::Sub, [a, b]) => add(*a, *b, -1),
        (Opcode::Mul | Opcode::Mul24, [a, b]) => mul(*a, *b),
        (Opcode::Shl, [a, Aff::Inv(Some(k))]) if (0..63).contains(k) => mul(*a, Aff::Inv(Some(1 << k))),
        (Opcode::Mad | Opcode::Mad24, [a, b, c]) => add(mul(*a, *b), *c, 1),
        _ => Aff::Var,
    }
}

/// Whether a scalar datapath may run `inst` once for the warp (given that it is invariant and its block
/// convergent): not barriers, calls, returns, atomics or warp collectives.
fn scalarizable(inst: &Inst) -> bool {
    !matches!(
        inst.opcode,
        Opcode::Bar
            | Opcode::Barrier
            | Opcode::Call
            | Opcode::Ret
            | Opcode::Exit
            | Opcode::Trap
            | Opcode::Atom
            | Opcode::Red
            | Opcode::Vote
            | Opcode::Redux
            | Opcode::Activemask
            | Opcode::Shfl
            | Opcode::Match
            | Opcode::Membar
            | Opcode::Fence
    ) && !inst.opcode.is_mechanism_op()
}

/// The access size in bytes of a load or store (`ld.v4.f32`: 16).
fn access_bytes(inst: &Inst) -> Option<i64> {
    let ty = inst.ty()?;
    let n = inst.mods.iter().find_map(|m| match m {
        reconverge_ir::Modifier::Known(KnownModifier::V2) => Some(2),
        reconverge_ir::Modifier::Known(KnownModifier::V4) => Some(4),
        _ => None,
    });
    Some(i64::from(ty.bytes()) * n.unwrap_or(1))
}

impl VarianceAnalysis {
    /// Runs every analysis on `f` (with `fa = FunctionAnalysis::compute(f)`).
    pub fn compute(f: &Function, fa: &FunctionAnalysis) -> VarianceAnalysis {
        let nb = fa.cfg.num_blocks();
        let kernel = f.kind == FuncKind::Entry;
        let du = DefUse::compute(f, fa);
        let convergent_ca: Vec<bool> = (0..nb as u32).map(|b| kernel && fa.cdep.parents(b).is_empty()).collect();
        let (convergent_va, _, _) = figure3(f, fa, &du, false);
        let (convergent_exit, variant, variant_phi) = figure3(f, fa, &du, true);
        let aff = affine(f, fa, &du, &convergent_exit, &variant, &variant_phi);
        let n = f.insts.len();
        let mut variance = vec![Variance::Variant; n];
        let mut stride = vec![None; n];
        let mut scalar = vec![false; n];
        let mut warp_sequential = vec![false; n];
        let mut base_address = vec![false; n];
        let mut bases: Vec<(u32, Value)> = Vec::new();
        for &b in &f.layout {
            let conv = convergent_exit[b.index()];
            bases.clear();
            for &i in &f.blocks[b].insts {
                let ii = i.index();
                let inst = &f.insts[i];
                variance[ii] = match aff.inst[ii] {
                    Aff::Inv(_) if !variant[ii] => Variance::Invariant,
                    Aff::Lin(s) => {
                        stride[ii] = Some(s);
                        Variance::Affine
                    }
                    _ => Variance::Variant,
                };
                scalar[ii] = conv && variance[ii] == Variance::Invariant && scalarizable(inst);
                if conv && matches!(inst.opcode, Opcode::Ld | Opcode::St) && !inst.has(KnownModifier::Volatile) {
                    let addr = inst.operands.iter().find_map(|o| match o {
                        Operand::Addr(a) => Some(a),
                        _ => None,
                    });
                    if let (Some(a), Some(size)) = (addr, access_bytes(inst)) {
                        if let AddrBase::Reg(r) = a.base {
                            let v = du.value_of(i, r);
                            warp_sequential[ii] = aff.of(v) == Aff::Lin(size);
                            let key = (r.index() as u32, v);
                            if warp_sequential[ii] && !bases.contains(&key) {
                                base_address[ii] = true;
                                bases.push(key);
                            }
                        }
                    }
                }
            }
        }
        // Scalar registers: every definition is a scalar instruction; a scalar instruction must write only
        // scalar registers (`mov %f10, 0` initialising an accumulator stays a thread instruction).
        let mut used_reg = vec![false; f.regs.len()];
        let mut defined = vec![false; f.regs.len()];
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                for r in defs(&f.insts[i]) {
                    defined[r.index()] = true;
                    used_reg[r.index()] = true;
                }
                for r in uses(&f.insts[i]) {
                    used_reg[r.index()] = true;
                }
            }
        }
        let mut scalar_reg = defined.clone();
        loop {
            let mut changed = false;
            for &b in &f.layout {
                for &i in &f.blocks[b].insts {
                    let ds = defs(&f.insts[i]);
                    if scalar[i.index()] && ds.iter().any(|r| !scalar_reg[r.index()]) {
                        scalar[i.index()] = false;
                        changed = true;
                    }
                    if !scalar[i.index()] {
                        for r in ds {
                            if scalar_reg[r.index()] {
                                scalar_reg[r.index()] = false;
                                changed = true;
                            }
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        VarianceAnalysis {
            convergent_ca,
            convergent_va,
            convergent_exit,
            variance,
            stride,
            scalar,
            warp_sequential,
            base_address,
            scalar_reg,
            used_reg,
        }
    }

    /// Registers per warp of `w` threads before and after scalarization: every used register once per
    /// thread, against private registers once per thread and scalar registers once per warp.
    pub fn registers_per_warp(&self, w: u64) -> (u64, u64) {
        let used = self.used_reg.iter().filter(|&&u| u).count() as u64;
        let scalars = self.scalar_reg.iter().filter(|&&s| s).count() as u64;
        (used * w, (used - scalars) * w + scalars)
    }
}
