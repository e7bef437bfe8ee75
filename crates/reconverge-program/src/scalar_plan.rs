//! The scalarization plan of a decoded program, per pc: what seed 004's analyses say about the
//! instruction (its block's convergence under CA, CA+VA and +exit; scalar; warp-sequential) and what it
//! costs (registers read and written, memory data elements per thread).
//!
//! The plan is computed on the *original* module (before a mechanism's pass inserted anything), so every
//! mechanism is measured against the same analysis; instructions a pass inserted have `own == false` and
//! are left out of every scalarization count.

use crate::program::Program;
use reconverge_analysis::defuse::{defs, uses};
use reconverge_analysis::{FunctionAnalysis, VarianceAnalysis};
use reconverge_ir::{EntityRef, InstId, KnownModifier, Modifier, Module, Opcode};
use std::collections::HashMap;

/// What the analyses say about one pc, and what the instruction costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PcPlan {
    /// The kernel's own instruction (not inserted by a mechanism's pass).
    pub own: bool,
    /// Its block is convergent under simple convergence analysis (CA, §3.1).
    pub ca: bool,
    /// Its block is convergent under combined convergence and variance analysis (CA+VA, §3.2).
    pub ca_va: bool,
    /// Its block is convergent under CA+VA with the exit rule (§3.4): the analysis the plan uses.
    pub exit: bool,
    /// A scalar instruction: executes once per warp.
    pub scalar: bool,
    /// A warp-sequential load or store (`ldwseq`/`stwseq`): one base address per warp.
    pub warp_sequential: bool,
    /// Scalar instructions the compiler adds before this access to compute the warp's base address
    /// (§3.5; `VarianceAnalysis::base_address`): 1 for a warp-sequential access whose base is not already
    /// in a scalar register, else 0. They execute once per warp each time the access executes.
    pub base_instructions: u8,
    /// A thread entering this pc starts a new *element* of its dynamic block sequence: the first
    /// instruction of a block, or the instruction after a call (where a thread resumes the block).
    pub entry: bool,
    /// Distinct registers read (value and predicate registers, the guard and address bases included).
    pub reads: u8,
    /// Of them, per-warp scalar registers.
    pub scalar_reads: u8,
    /// Distinct registers written.
    pub writes: u8,
    /// For a memory access (`ld`, `ldu`, `st`, `atom`, `red`): data elements per thread (a `.v4`
    /// access moves 4); 0 otherwise.
    pub mem_elements: u8,
}

/// The plan of every pc of a program ([`ScalarPlan::pcs`] is indexed by pc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ScalarPlan {
    /// One per pc.
    pub pcs: Vec<PcPlan>,
    /// 32-bit register words of the kernel's (the program's first function's) registers that hold only
    /// scalar values (`VarianceAnalysis::scalar_reg`), counted like `FunctionInfo::reg_words` (64-bit
    /// registers twice, predicates not at all): what a machine with a separate scalar register file keeps
    /// once per warp instead of once per thread.
    pub scalar_reg_words: u32,
}

impl ScalarPlan {
    /// The plan of `prog`, decoded from `module` (the module before any mechanism pass: instruction ids of
    /// the kernel's own instructions are the same in both).
    pub fn build(module: &Module, prog: &Program) -> ScalarPlan {
        let mut per_inst: HashMap<(u32, u32), PcPlan> = HashMap::new();
        let mut scalar_reg_words = 0;
        for (k, fi) in prog.functions.iter().enumerate() {
            let Some(f) = module.functions.get(fi.ir) else { continue };
            let fa = FunctionAnalysis::compute(f);
            let va = VarianceAnalysis::compute(f, &fa);
            if k == 0 {
                scalar_reg_words = reg_words(f, &va.scalar_reg);
            }
            for &b in &f.layout {
                let block = &f.blocks[b];
                let mut prev_call = false;
                for (k, &i) in block.insts.iter().enumerate() {
                    let inst = &f.insts[i];
                    let mut read = uses(inst);
                    read.sort_unstable();
                    read.dedup();
                    let mut written = defs(inst);
                    written.sort_unstable();
                    written.dedup();
                    let p = PcPlan {
                        own: true,
                        ca: va.convergent_ca[b.index()],
                        ca_va: va.convergent_va[b.index()],
                        exit: va.convergent_exit[b.index()],
                        scalar: va.scalar[i.index()],
                        warp_sequential: va.warp_sequential[i.index()],
                        base_instructions: u8::from(va.base_address[i.index()]),
                        entry: k == 0 || prev_call,
                        reads: clamp(read.len()),
                        scalar_reads: clamp(read.iter().filter(|r| va.scalar_reg[r.index()]).count()),
                        writes: clamp(written.len()),
                        mem_elements: mem_elements(inst),
                    };
                    prev_call = inst.opcode == Opcode::Call;
                    per_inst.insert((fi.ir.index() as u32, i.index() as u32), p);
                }
            }
        }
        let pcs = prog
            .info
            .iter()
            .map(|info| match info.ir_inst {
                Some(i) if info.class != crate::program::InstClass::Mechanism => {
                    per_inst.get(&(info.ir_func.index() as u32, InstId::index(i) as u32)).copied().unwrap_or_default()
                }
                _ => PcPlan::default(),
            })
            .collect();
        ScalarPlan { pcs, scalar_reg_words }
    }

    /// Base-address instructions of the kernel's own code (static count, [`PcPlan::base_instructions`]).
    pub fn static_base_instructions(&self) -> u64 {
        self.pcs.iter().map(|p| u64::from(p.base_instructions)).sum()
    }
}

/// 32-bit words of the registers of `f` marked in `which` (the decoder's `reg_words` rule).
fn reg_words(f: &reconverge_ir::Function, which: &[bool]) -> u32 {
    f.regs
        .iter()
        .filter(|(r, reg)| which.get(r.index()).copied().unwrap_or(false) && reg.ty != reconverge_ir::ScalarType::Pred)
        .map(|(_, reg)| reg.ty.bits().div_ceil(32).max(1) * reg.vector.unwrap_or(1) as u32)
        .sum()
}

fn clamp(n: usize) -> u8 {
    n.min(u8::MAX as usize) as u8
}

/// Data elements per thread of a memory access; 0 for anything else.
fn mem_elements(inst: &reconverge_ir::Inst) -> u8 {
    if !matches!(inst.opcode, Opcode::Ld | Opcode::Ldu | Opcode::St | Opcode::Atom | Opcode::Red) {
        return 0;
    }
    inst.mods
        .iter()
        .find_map(|m| match m {
            Modifier::Known(KnownModifier::V2) => Some(2),
            Modifier::Known(KnownModifier::V4) => Some(4),
            Modifier::Known(KnownModifier::V8) => Some(8),
            _ => None,
        })
        .unwrap_or(1)
}
