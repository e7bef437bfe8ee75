//! Registers an instruction defines and uses, and the def-use graph of a function's PTX registers.
//!
//! PTX is not in SSA form: a register may be written in several places (loop counters, accumulators,
//! values merged after an if/else). [`DefUse`] builds SSA form over the registers (Cytron et al.: phis at
//! the iterated dominance frontiers of each register's definitions, then renaming along the dominator
//! tree), so every use names exactly the definitions that reach it, through phis where paths merge, in
//! time and space linear in the function for the usual shapes. A guarded definition
//! (`@%p mov %r1, ...`) also uses the register's previous value: the old value survives in the lanes
//! whose guard is false.

use crate::analysis::FunctionAnalysis;
use crate::bitset::BitSet;
use reconverge_ir::{BlockId, EntityRef, Function, Inst, InstId, Opcode, Operand, RegId};
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

/// A value of the def-use graph: the result of an instruction, a phi, or a register read before any
/// definition (undefined: the same garbage in every thread, treated as invariant).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Value {
    /// The register written by an instruction (`InstId` index).
    Inst(u32),
    /// A phi (index into [`DefUse::phis`]).
    Phi(u32),
    /// No definition reaches.
    Undef,
}

/// A phi: where the definitions of a register from several predecessors merge.
#[derive(Clone, Debug)]
pub struct Phi {
    /// Its block.
    pub block: u32,
    /// The register.
    pub reg: u32,
    /// One value per predecessor (in the CFG's predecessor order).
    pub args: Vec<Value>,
}

/// A node that consumes values: an instruction or a phi.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// An instruction (`InstId` index).
    Inst(u32),
    /// A phi.
    Phi(u32),
}

/// The def-use graph of a function in SSA form.
#[derive(Clone, Debug)]
pub struct DefUse {
    /// The phis.
    pub phis: Vec<Phi>,
    /// For each instruction (`InstId` index): `(register, value)` for each register it reads.
    pub uses: Vec<SmallVec<[(u32, Value); 4]>>,
    /// For each instruction: the nodes that use its result.
    pub inst_users: Vec<SmallVec<[Node; 4]>>,
    /// For each phi: the nodes that use it.
    pub phi_users: Vec<SmallVec<[Node; 4]>>,
    /// For each block: its phis.
    pub block_phis: Vec<SmallVec<[u32; 2]>>,
}

impl DefUse {
    /// Builds the graph of `f` from its analyses.
    pub fn compute(f: &Function, fa: &FunctionAnalysis) -> DefUse {
        let cfg = &fa.cfg;
        let nb = cfg.num_blocks();
        let nregs = f.regs.len();
        let blk = |b: u32| &f.blocks[BlockId::new(b as usize)];
        // Dominance frontiers (Cooper, Harvey & Kennedy).
        let mut df: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); nb];
        for b in 0..nb as u32 {
            let preds: SmallVec<[u32; 4]> =
                cfg.preds(b).iter().copied().filter(|&p| (p as usize) < nb && fa.dom.is_reachable(p)).collect();
            if preds.len() < 2 || !fa.dom.is_reachable(b) {
                continue;
            }
            let stop = fa.dom.idom(b);
            for p in preds {
                let mut runner = Some(p);
                while let Some(x) = runner {
                    if Some(x) == stop {
                        break;
                    }
                    if !df[x as usize].contains(&b) {
                        df[x as usize].push(b);
                    }
                    runner = fa.dom.idom(x);
                }
            }
        }
        // Phis at the iterated dominance frontier of each register's definition blocks.
        let mut def_blocks: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); nregs];
        for &b in &f.layout {
            for &i in &f.blocks[b].insts {
                for r in defs(&f.insts[i]) {
                    let v = &mut def_blocks[r.index()];
                    if v.last() != Some(&(b.index() as u32)) {
                        v.push(b.index() as u32);
                    }
                }
            }
        }
        let mut phis: Vec<Phi> = Vec::new();
        let mut block_phis: Vec<SmallVec<[u32; 2]>> = vec![SmallVec::new(); nb];
        let mut has_phi = BitSet::new(nb);
        for (r, blocks) in def_blocks.iter().enumerate() {
            if blocks.is_empty() {
                continue;
            }
            has_phi.clear();
            let mut work: Vec<u32> = blocks.to_vec();
            while let Some(x) = work.pop() {
                for &y in &df[x as usize] {
                    if has_phi.insert(y) {
                        let npred = cfg.preds(y).len();
                        block_phis[y as usize].push(phis.len() as u32);
                        phis.push(Phi { block: y, reg: r as u32, args: vec![Value::Undef; npred] });
                        work.push(y);
                    }
                }
            }
        }
        // Renaming along the dominator tree (iterative DFS).
        let ninst = f.insts.len();
        let mut read: Vec<SmallVec<[(u32, Value); 4]>> = vec![SmallVec::new(); ninst];
        let mut stacks: Vec<Vec<Value>> = vec![Vec::new(); nregs];
        let top = |st: &Vec<Vec<Value>>, r: usize| st[r].last().copied().unwrap_or(Value::Undef);
        let entry = cfg.entry();
        let mut todo: Vec<(u32, bool)> = if fa.dom.is_reachable(entry) { vec![(entry, false)] } else { Vec::new() };
        let mut pushed: Vec<Vec<u32>> = vec![Vec::new(); nb];
        while let Some((b, leaving)) = todo.pop() {
            if leaving {
                for &r in &pushed[b as usize] {
                    stacks[r as usize].pop();
                }
                continue;
            }
            todo.push((b, true));
            let mut mine = Vec::new();
            for &p in &block_phis[b as usize] {
                let r = phis[p as usize].reg;
                stacks[r as usize].push(Value::Phi(p));
                mine.push(r);
            }
            for &i in &blk(b).insts {
                let inst = &f.insts[i];
                let mut u: SmallVec<[(u32, Value); 4]> = SmallVec::new();
                for r in uses(inst) {
                    u.push((r.index() as u32, top(&stacks, r.index())));
                }
                let ds = defs(inst);
                if inst.guard.is_some() {
                    for r in &ds {
                        u.push((r.index() as u32, top(&stacks, r.index())));
                    }
                }
                read[i.index()] = u;
                for r in ds {
                    stacks[r.index()].push(Value::Inst(i.index() as u32));
                    mine.push(r.index() as u32);
                }
            }
            for &s in cfg.succs(b) {
                if (s as usize) >= nb {
                    continue;
                }
                let k = cfg.preds(s).iter().position(|&p| p == b);
                for &p in &block_phis[s as usize] {
                    let r = phis[p as usize].reg as usize;
                    if let Some(k) = k {
                        phis[p as usize].args[k] = top(&stacks, r);
                    }
                }
            }
            pushed[b as usize] = mine;
            for &c in fa.dom.children(b) {
                todo.push((c, false));
            }
        }
        // Users.
        let mut inst_users = vec![SmallVec::new(); ninst];
        let mut phi_users = vec![SmallVec::new(); phis.len()];
        let add = |v: Value, n: Node, iu: &mut Vec<SmallVec<[Node; 4]>>, pu: &mut Vec<SmallVec<[Node; 4]>>| {
            let list: &mut SmallVec<[Node; 4]> = match v {
                Value::Inst(i) => &mut iu[i as usize],
                Value::Phi(p) => &mut pu[p as usize],
                Value::Undef => return,
            };
            // Nodes are added one after another with all their uses, so a repeat of `n` can only be the
            // last entry (checking the whole list made a value with thousands of users quadratic).
            if list.last() != Some(&n) {
                list.push(n);
            }
        };
        for (i, u) in read.iter().enumerate() {
            for &(_, v) in u {
                add(v, Node::Inst(i as u32), &mut inst_users, &mut phi_users);
            }
        }
        for (p, phi) in phis.iter().enumerate() {
            for &v in &phi.args {
                add(v, Node::Phi(p as u32), &mut inst_users, &mut phi_users);
            }
        }
        DefUse { phis, uses: read, inst_users, phi_users, block_phis }
    }

    /// The value of register `r` that instruction `i` reads.
    pub fn value_of(&self, i: InstId, r: RegId) -> Value {
        let r = r.index() as u32;
        self.uses[i.index()].iter().find(|(g, _)| *g == r).map(|(_, v)| *v).unwrap_or(Value::Undef)
    }

    /// The nodes using a node's result.
    pub fn users(&self, n: Node) -> &[Node] {
        match n {
            Node::Inst(i) => &self.inst_users[i as usize],
            Node::Phi(p) => &self.phi_users[p as usize],
        }
    }
}
