//! Registers an instruction defines and uses, and reaching definitions over a function's PTX registers.
//!
//! PTX is not in SSA form: a register may be written in several places (loop counters, accumulators,
//! values merged after an if/else), so the def-use chains come from reaching definitions: the definition
//! of register r at instruction d reaches a use of r at instruction u when some path from d to u has no
//! other unguarded definition of r. A guarded definition (`@%p mov %r1, ...`) does not kill: the old value
//! survives in the lanes whose guard is false.

use crate::bitset::BitSet;
use crate::cfg::Cfg;
use reconverge_ir::{EntityRef, Function, Inst, InstId, Opcode, Operand, RegId};
use smallvec::SmallVec;

/// Opcodes that write no register.
fn writes_nothing(op: &Opcode) -> bool {
    matches!(
        op,
        Opcode::St
            | Opcode::Red
            | Opcode::Bar
            | Opcode::Barrier
            | Opcode::Bra
            | Opcode::Brx
            | Opcode::Ret
            | Opcode::Exit
            | Opcode::Trap
            | Opcode::Brkpt
            | Opcode::Membar
            | Opcode::Fence
            | Opcode::Prefetch
            | Opcode::Prefetchu
            | Opcode::Pmevent
            | Opcode::Nanosleep
            | Opcode::Call
    ) || op.is_mechanism_op()
}

fn regs_of(op: &Operand, out: &mut SmallVec<[RegId; 4]>) {
    match op {
        Operand::Reg(r) | Operand::NotReg(r) => out.push(*r),
        Operand::Addr(a) => {
            if let reconverge_ir::AddrBase::Reg(r) = a.base {
                out.push(r);
            }
        }
        Operand::Vector(v) | Operand::List(v) => v.iter().for_each(|o| regs_of(o, out)),
        Operand::Pair(p) => out.extend(p.iter().flatten().copied()),
        _ => {}
    }
}

/// The registers `inst` writes (its first operand, for instructions that write one).
pub fn defs(inst: &Inst) -> SmallVec<[RegId; 4]> {
    let mut out = SmallVec::new();
    if !writes_nothing(&inst.opcode) {
        if let Some(first) = inst.operands.first() {
            if !matches!(first, Operand::Addr(_)) {
                regs_of(first, &mut out);
            }
        }
    }
    out
}

/// The registers `inst` reads (every operand but the written ones, the guard, address bases).
pub fn uses(inst: &Inst) -> SmallVec<[RegId; 4]> {
    let mut out = SmallVec::new();
    if let Some(g) = inst.guard {
        out.push(g.reg);
    }
    let skip = usize::from(!writes_nothing(&inst.opcode) && !matches!(inst.operands.first(), Some(Operand::Addr(_))));
    for (k, o) in inst.operands.iter().enumerate() {
        if k >= skip {
            regs_of(o, &mut out);
        } else if let Operand::Vector(_) = o {
            // A vector destination has no address part; nothing read.
        }
    }
    out
}

/// Def-use chains of a function from reaching definitions.
#[derive(Clone, Debug)]
pub struct DefUse {
    /// For each instruction (by `InstId` index): `(register, defining instruction)` for every definition
    /// that reaches one of its uses.
    pub reaching: Vec<SmallVec<[(u32, u32); 4]>>,
    /// For each instruction: the instructions using a value it defines (data-flow successors).
    pub users: Vec<SmallVec<[u32; 4]>>,
}

impl DefUse {
    /// Computes the chains of `f` over its CFG `cfg`.
    pub fn compute(f: &Function, cfg: &Cfg) -> DefUse {
        let ninst = f.insts.len();
        // Definition sites: (instruction, register), numbered.
        let mut def_inst: Vec<u32> = Vec::new();
        let mut def_reg: Vec<u32> = Vec::new();
        let mut by_reg: Vec<Vec<u32>> = vec![Vec::new(); f.regs.len()];
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                for r in defs(&f.insts[i]) {
                    let d = def_inst.len() as u32;
                    def_inst.push(i.index() as u32);
                    def_reg.push(r.index() as u32);
                    if let Some(v) = by_reg.get_mut(r.index()) {
                        v.push(d);
                    }
                }
            }
        }
        let ndefs = def_inst.len();
        let nb = cfg.num_blocks();
        // Per block: generated and killed definitions.
        let mut gen = vec![BitSet::new(ndefs); nb];
        let mut kill = vec![BitSet::new(ndefs); nb];
        let mut d = 0u32;
        for &b in &f.layout {
            let bi = b.index();
            for &i in &f.blocks[b].insts {
                let inst = &f.insts[i];
                for r in defs(inst) {
                    if inst.guard.is_none() {
                        for &o in &by_reg[r.index()] {
                            gen[bi].remove(o);
                            kill[bi].insert(o);
                        }
                    }
                    gen[bi].insert(d);
                    kill[bi].remove(d);
                    d += 1;
                }
            }
        }
        // Forward data flow to a fixed point, in reverse postorder.
        let mut inn = vec![BitSet::new(ndefs); nb];
        let mut out: Vec<BitSet> = gen.clone();
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.reverse_postorder() {
                let bi = b as usize;
                let mut x = BitSet::new(ndefs);
                for &p in cfg.preds(b).iter().filter(|&&p| (p as usize) < nb) {
                    x.union_with(&out[p as usize]);
                }
                let mut o = x.clone();
                // OUT = GEN ∪ (IN − KILL)
                for k in kill[bi].iter() {
                    o.remove(k);
                }
                o.union_with(&gen[bi]);
                inn[bi] = x;
                if o != out[bi] {
                    out[bi] = o;
                    changed = true;
                }
            }
        }
        // Walk each block with the running set of reaching definitions.
        let mut reaching = vec![SmallVec::new(); ninst];
        let mut users = vec![SmallVec::new(); ninst];
        let mut d = 0u32;
        for &b in &f.layout {
            let mut cur = inn[b.index()].clone();
            for &i in &f.blocks[b].insts {
                let inst = &f.insts[i];
                let ii = i.index();
                for r in uses(inst) {
                    for &o in by_reg.get(r.index()).map(Vec::as_slice).unwrap_or(&[]) {
                        if cur.contains(o) {
                            let src = def_inst[o as usize];
                            let pair = (r.index() as u32, src);
                            if !reaching[ii].contains(&pair) {
                                reaching[ii].push(pair);
                            }
                            let us: &mut SmallVec<[u32; 4]> = &mut users[src as usize];
                            if !us.contains(&(ii as u32)) {
                                us.push(ii as u32);
                            }
                        }
                    }
                }
                for r in defs(inst) {
                    if inst.guard.is_none() {
                        for &o in &by_reg[r.index()] {
                            cur.remove(o);
                        }
                    }
                    cur.insert(d);
                    d += 1;
                }
            }
        }
        let _ = def_reg;
        DefUse { reaching, users }
    }

    /// `(register, defining instruction)` for the definitions that reach `i`'s uses.
    pub fn reaching_defs(&self, i: InstId) -> &[(u32, u32)] {
        &self.reaching[i.index()]
    }

    /// The defining instructions of register `r` that reach `i`.
    pub fn defs_of(&self, i: InstId, r: RegId) -> impl Iterator<Item = u32> + '_ {
        let r = r.index() as u32;
        self.reaching[i.index()].iter().filter(move |(g, _)| *g == r).map(|(_, d)| *d)
    }
}
