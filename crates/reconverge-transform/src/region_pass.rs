//! The compiler side of two mechanisms that delimit divergent regions with instructions:
//!
//! - **fork/join** (seed 003 §2.2, AMD GCN `s_cbranch_fork`/`s_cbranch_join`): every potentially
//!   divergent branch is a fork (the kernel's own branch plays that role), and a `join` is inserted as
//!   the first instruction of its reconvergence block (the immediate post-dominator), once per block.
//!   Branches that reconverge only at the function's exit get no join.
//! - **convergence barriers** (independent thread scheduling, Volta and later; `BSSY`/`BSYNC` as
//!   `ptxas` places them, `docs/bssy-comparison.md`): `bssy R` before every potentially divergent branch
//!   whose reconvergence block is R, and `bsync R` as the first instruction of R, once per block (the
//!   label of R names the barrier). Branches nested in a region with the same R add their lanes to the
//!   same barrier.
//!
//! Both passes append their instructions to the function (ids above the original count) so they count
//! as mechanism instructions, and change no control flow: reconvergence points stay where they were,
//! and now hold the `join`/`bsync`.

use crate::ssy_pass::{label_of, new_inst, Labels};
use reconverge_analysis::{FunctionAnalysis, PostDom};
use reconverge_ir::{BlockId, EntityRef, FuncId, Function, InstId, Module, Opcode};
use std::collections::BTreeSet;

/// Which region instructions to insert.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RegionPass {
    /// `join` at the reconvergence block of every potentially divergent branch.
    Join,
    /// `bssy R` before each potentially divergent branch and `bsync R` at R.
    ConvergenceBarrier,
    /// `syncwarp` at every convergent block (seed 004's CA+VA) that has a divergent predecessor
    /// (stackless SIMT, seed 004 §5.2). Without the exit rule: independent threads that leave early may
    /// still be running, so they do not wait at the exit as that rule assumes.
    SyncWarp,
}

/// What a region pass did to a module: instructions inserted per function.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RegionReport {
    /// `(function, opcode, count)` for every instruction kind inserted.
    pub inserted: Vec<(String, &'static str, usize)>,
}

/// Returns a copy of `module` with the region instructions of `pass` in every function with a body.
pub fn insert_regions(module: &Module, pass: RegionPass) -> (Module, RegionReport) {
    let mut m = module.clone();
    let mut report = RegionReport::default();
    let ids: Vec<FuncId> = m.functions.keys().collect();
    for id in ids {
        let f = &mut m.functions[id];
        if f.has_body && !f.layout.is_empty() {
            transform(f, pass, &mut report);
        }
    }
    (m, report)
}

/// The potentially divergent `bra`/`brx.idx` branches of `f` (block, branch instruction's block) and
/// their reconvergence blocks.
fn divergent_branches(f: &Function) -> Vec<(u32, u32)> {
    let fa = FunctionAnalysis::compute(f);
    let cfg = &fa.cfg;
    let mut out = Vec::new();
    for br in fa.reconvergence.branches() {
        if br.uniform || br.trivial || !cfg.is_reachable(br.block) {
            continue;
        }
        let is_branch =
            cfg.terminator(br.block).is_some_and(|i| matches!(f.insts[i].opcode, Opcode::Bra | Opcode::Brx));
        if let (true, PostDom::Block(r)) = (is_branch, br.reconvergence) {
            out.push((br.block, r));
        }
    }
    out
}

/// `syncwarp` at the start of every convergent block with a divergent predecessor (kernels only).
fn insert_syncwarps(f: &mut Function, report: &mut RegionReport) {
    let fa = FunctionAnalysis::compute(f);
    let va = reconverge_analysis::VarianceAnalysis::compute(f, &fa);
    let mut n = 0;
    if f.kind == reconverge_ir::FuncKind::Entry {
        let targets: Vec<u32> = (0..fa.cfg.num_blocks() as u32)
            .filter(|&b| {
                fa.cfg.is_reachable(b)
                    && va.convergent_va[b as usize]
                    && fa.cfg.preds(b).iter().any(|&p| fa.cfg.is_reachable(p) && !va.convergent_va[p as usize])
            })
            .collect();
        for b in targets {
            let near = f.blocks[BlockId::new(b as usize)].insts.first().copied();
            let inst = new_inst(f, Opcode::Syncwarp, None, None, near);
            f.blocks[BlockId::new(b as usize)].insts.insert(0, inst);
            n += 1;
        }
        // A call in a convergent block returns from a device function the analysis treats as divergent
        // throughout: the threads may come back one by one, so the rest of the block is a convergent
        // point with a divergent predecessor too.
        let calls: Vec<(BlockId, InstId)> = f
            .layout
            .iter()
            .filter(|b| va.convergent_va[b.index()])
            .flat_map(|&b| f.blocks[b].insts.iter().map(move |&i| (b, i)))
            .filter(|&(_, i)| f.insts[i].opcode == Opcode::Call)
            .collect();
        for (b, call) in calls {
            let inst = new_inst(f, Opcode::Syncwarp, None, None, Some(call));
            let at = f.blocks[b].insts.iter().position(|&i| i == call).map_or(0, |k| k + 1);
            f.blocks[b].insts.insert(at, inst);
            n += 1;
        }
    }
    report.inserted.push((f.name.clone(), "syncwarp", n));
}

fn transform(f: &mut Function, pass: RegionPass, report: &mut RegionReport) {
    if pass == RegionPass::SyncWarp {
        insert_syncwarps(f, report);
        return;
    }
    let branches = divergent_branches(f);
    let targets: BTreeSet<u32> = branches.iter().map(|&(_, r)| r).collect();
    let mut labels = Labels::of(f);
    let (mut first, mut before) = (0, 0);
    for &r in &targets {
        let near = f.blocks[BlockId::new(r as usize)].insts.first().copied();
        let inst = match pass {
            RegionPass::Join => new_inst(f, Opcode::Join, None, None, near),
            RegionPass::ConvergenceBarrier | RegionPass::SyncWarp => {
                let id = label_of(f, &mut labels, r, "R");
                new_inst(f, Opcode::Bsync, None, Some(id), near)
            }
        };
        f.blocks[BlockId::new(r as usize)].insts.insert(0, inst);
        first += 1;
    }
    if pass == RegionPass::ConvergenceBarrier {
        for &(b, r) in &branches {
            let bid = BlockId::new(b as usize);
            let term = f.blocks[bid].insts.last().copied();
            let id = label_of(f, &mut labels, r, "R");
            let inst = new_inst(f, Opcode::Bssy, None, Some(id), term);
            let at = f.blocks[bid].insts.len().saturating_sub(1);
            f.blocks[bid].insts.insert(at, inst);
            before += 1;
        }
    }
    let name = f.name.clone();
    match pass {
        RegionPass::Join => report.inserted.push((name, "join", first)),
        RegionPass::ConvergenceBarrier | RegionPass::SyncWarp => {
            report.inserted.push((name.clone(), "bssy", before));
            report.inserted.push((name, "bsync", first));
        }
    }
}
