//! The SSY pass: inserts seed 001's explicit reconvergence-stack instructions into a module.
//!
//! For every potentially divergent branch (a guarded `bra` or a multi-target `brx.idx`, not `.uni`)
//! whose reconvergence point R (immediate post-dominator) is a block, and whose *region* (the blocks
//! reachable from the branch without passing R) does not contain the branch itself and is entered only
//! through the branch, the pass puts `ssy R` before the branch and a `sync` on every edge from the region
//! (or the branch) into R. A branch nested in a region with the same R reuses the outer `ssy`: each path
//! still pops exactly one entry at the outer `sync`s.
//!
//! For every natural loop whose exits all go to one block E (that is not also an exit of an enclosing
//! loop), a new preheader executes `pbk E` and every exit edge becomes `brk`. When E is also the target of
//! an enclosing `ssy`, the `pbk` targets a landing block holding that region's `sync`.
//!
//! Branches that get neither (reconvergence only at function exit, loop-carried branches of loops that
//! do not qualify, regions with side entries from unstructured `goto`s) still work: their divergent paths
//! sit on the stack with the enclosing reconvergence pc and each pops itself at the enclosing `sync`,
//! `brk`, `ret` or `exit` — they simply reconverge later. The report lists them.

use reconverge_analysis::loops::Loop;
use reconverge_analysis::{BitSet, Cfg, FunctionAnalysis, PostDom};
use reconverge_ir::{
    Block, BlockId, EntityRef, FuncId, Function, Guard, Inst, InstId, Module, Opcode, Operand, Symbol,
};
use smallvec::{smallvec, SmallVec};
use std::collections::{BTreeMap, HashMap};

/// What the pass did to one function.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SsyFunctionReport {
    /// The function.
    pub function: String,
    /// `ssy` instructions inserted.
    pub ssy: usize,
    /// `sync` instructions inserted.
    pub sync: usize,
    /// `pbk` instructions inserted (one per qualifying loop).
    pub pbk: usize,
    /// `brk` instructions inserted.
    pub brk: usize,
    /// Divergent branches left without their own `ssy`, with the reason.
    pub fallback: Vec<String>,
}

/// What the pass did to a module.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct SsyReport {
    /// Per function.
    pub functions: Vec<SsyFunctionReport>,
}

/// Returns a copy of `module` with `ssy`/`sync`/`pbk`/`brk` inserted in every function with a body.
pub fn insert_ssy(module: &Module) -> (Module, SsyReport) {
    let mut m = module.clone();
    let mut report = SsyReport::default();
    let ids: Vec<FuncId> = m.functions.keys().collect();
    for id in ids {
        if m.functions[id].has_body && !m.functions[id].layout.is_empty() {
            let r = transform(&mut m.functions[id]);
            report.functions.push(r);
        }
    }
    (m, report)
}

#[derive(Clone, Copy)]
enum Action {
    Sync,
    Brk,
}

struct Candidate {
    block: u32,
    r: u32,
    region: BitSet,
    size: usize,
}

/// Block labels in use in one function (so that new labels are unique without rescanning the blocks).
pub(crate) struct Labels(std::collections::HashSet<String>);

impl Labels {
    pub(crate) fn of(f: &Function) -> Labels {
        Labels(f.blocks.values().filter_map(|b| b.label.clone()).collect())
    }

    /// `base`, or `base_1`, `base_2`, ... whichever is free; reserved.
    fn fresh(&mut self, base: String) -> String {
        let mut name = base.clone();
        let mut k = 0;
        while self.0.contains(&name) {
            k += 1;
            name = format!("{base}_{k}");
        }
        self.0.insert(name.clone());
        name
    }
}

pub(crate) fn label_of(f: &mut Function, labels: &mut Labels, b: u32, prefix: &str) -> BlockId {
    let id = BlockId::new(b as usize);
    if f.blocks[id].label.is_none() {
        f.blocks[id].label = Some(labels.fresh(format!("$RC_{prefix}{b}")));
    }
    id
}

pub(crate) fn new_inst(
    f: &mut Function,
    opcode: Opcode,
    guard: Option<Guard>,
    target: Option<BlockId>,
    near: Option<InstId>,
) -> InstId {
    let loc = near.and_then(|i| f.insts[i].loc);
    let operands: SmallVec<[Operand; 4]> = match target {
        Some(t) => smallvec![Operand::Sym(Symbol::Label(t))],
        None => SmallVec::new(),
    };
    f.insts.push(Inst { guard, opcode, mods: SmallVec::new(), types: SmallVec::new(), operands, loc })
}

/// Turns the kernel's own terminator `inst` into `opcode target` (guarded by `guard`) in place: it keeps
/// its id, source span and line, so it stays the kernel's instruction (only instructions the pass creates
/// count as mechanism instructions).
fn rewrite(f: &mut Function, inst: InstId, opcode: Opcode, guard: Option<Guard>, target: BlockId) {
    let i = &mut f.insts[inst];
    i.opcode = opcode;
    i.guard = guard;
    i.mods.clear();
    i.types.clear();
    i.operands = smallvec![Operand::Sym(Symbol::Label(target))];
}

fn new_block(f: &mut Function, labels: &mut Labels, prefix: &str, insts: Vec<InstId>) -> BlockId {
    let n = f.blocks.len();
    let name = labels.fresh(format!("$RC_{prefix}{n}"));
    f.blocks.push(Block { label: Some(name), insts })
}

fn retarget(f: &mut Function, inst: InstId, from: BlockId, to: BlockId) {
    for op in f.insts[inst].operands.iter_mut() {
        if *op == Operand::Sym(Symbol::Label(from)) {
            *op = Operand::Sym(Symbol::Label(to));
        }
    }
}

fn transform(f: &mut Function) -> SsyFunctionReport {
    let fa = FunctionAnalysis::compute(f);
    let cfg = &fa.cfg;
    let loops = fa.loops.loops();
    let mut rep = SsyFunctionReport { function: f.name.clone(), ..Default::default() };
    let chosen = candidates(f, &fa, &mut rep);
    let pbk_loops = pbk_loops(f, &fa, &mut rep);
    let (actions, landings) = plan(cfg, loops, &chosen, &pbk_loops);
    // 4. Apply: labels first (they are looked up by block).
    let mut labels = Labels::of(f);
    for c in &chosen {
        label_of(f, &mut labels, c.r, "rcv");
    }
    for &(_, e) in &pbk_loops {
        label_of(f, &mut labels, e, "exit");
    }
    // ssy before the branch.
    for c in &chosen {
        let b = BlockId::new(c.block as usize);
        let term = cfg.terminator(c.block);
        let i = new_inst(f, Opcode::Ssy, None, Some(BlockId::new(c.r as usize)), term);
        let insts = &mut f.blocks[b].insts;
        let at = insts.len().saturating_sub(1);
        insts.insert(at, i);
        rep.ssy += 1;
    }
    // Edge actions.
    let placed = Placement::default();
    let targets: Vec<u32> = actions.keys().map(|&(_, x)| x).collect();
    for x in targets {
        label_of(f, &mut labels, x, "rcv");
    }
    let mut w = Rewrite { labels, placed, rep };
    for (&(u, x), action) in &actions {
        apply_edge(f, cfg, &actions, (u, x), *action, &mut w);
    }
    let preheaders = insert_preheaders(f, loops, &pbk_loops, &landings, &mut w);
    retarget_loop_entries(f, loops, &preheaders, &w.placed);
    relayout(f, w.placed);
    w.rep
}

/// Step 1: the branches that get an `ssy` (outermost first), with their regions; the others are reported.
fn candidates(f: &Function, fa: &FunctionAnalysis, rep: &mut SsyFunctionReport) -> Vec<Candidate> {
    let cfg = &fa.cfg;
    let n = cfg.num_blocks();
    let term_op = |b: u32| cfg.terminator(b).map(|i| f.insts[i].opcode.clone());
    let mut cands = Vec::new();
    for br in fa.reconvergence.branches() {
        if br.uniform || br.trivial || !cfg.is_reachable(br.block) {
            continue;
        }
        if !matches!(term_op(br.block), Some(Opcode::Bra | Opcode::Brx)) {
            continue;
        }
        let where_ = f.block_name(BlockId::new(br.block as usize));
        let PostDom::Block(r) = br.reconvergence else {
            rep.fallback.push(format!("{where_}: reconverges only at function exit"));
            continue;
        };
        let mut region = BitSet::new(n);
        let mut stack: Vec<u32> = cfg.succs(br.block).iter().copied().filter(|&s| s != r).collect();
        while let Some(x) = stack.pop() {
            if region.insert(x) {
                stack.extend(cfg.succs(x).iter().copied().filter(|&s| s != r));
            }
        }
        if region.contains(br.block) {
            rep.fallback.push(format!("{where_}: the branch is inside a cycle of its own region (loop branch)"));
            continue;
        }
        let side_entry = region
            .iter()
            .any(|x| cfg.preds(x).iter().any(|&p| p != br.block && cfg.is_reachable(p) && !region.contains(p)));
        if side_entry {
            rep.fallback.push(format!("{where_}: its region has another entry (unstructured control flow)"));
            continue;
        }
        let size = region.count();
        cands.push(Candidate { block: br.block, r, region, size });
    }
    cands.sort_by(|a, b| b.size.cmp(&a.size).then(a.block.cmp(&b.block)));
    let mut chosen: Vec<Candidate> = Vec::new();
    for c in cands {
        if chosen.iter().any(|o| o.r == c.r && o.region.contains(c.block)) {
            rep.fallback.push(format!(
                "{}: shares the reconvergence point of an enclosing ssy",
                f.block_name(BlockId::new(c.block as usize))
            ));
            continue;
        }
        chosen.push(c);
    }

    chosen
}

/// Step 2: the loops that get a `pbk` preheader: (loop index, exit block). Single exit block, not an exit
/// of an enclosing loop, a clean place for the preheader; the others are reported.
fn pbk_loops(f: &Function, fa: &FunctionAnalysis, rep: &mut SsyFunctionReport) -> Vec<(usize, u32)> {
    let cfg = &fa.cfg;
    let loops = fa.loops.loops();
    let mut pbk_loops: Vec<(usize, u32)> = Vec::new(); // (loop index, exit block)
    for (li, l) in loops.iter().enumerate() {
        let Some(&(_, e)) = l.exits.first() else { continue };
        if l.exits.iter().any(|&(_, x)| x != e) {
            rep.fallback
                .push(format!("loop at {}: exits to several blocks", f.block_name(BlockId::new(l.header as usize))));
            continue;
        }
        if let Some(p) = l.parent {
            if !loops[p].contains(e) {
                rep.fallback.push(format!(
                    "loop at {}: its exit also leaves an enclosing loop",
                    f.block_name(BlockId::new(l.header as usize))
                ));
                continue;
            }
        }
        let pos = f.layout.iter().position(|b| b.index() as u32 == l.header);
        let prev_inside_falls = match pos {
            Some(p) if p > 0 => {
                let prev = f.layout[p - 1].index() as u32;
                l.contains(prev) && cfg.fallthrough(prev) == Some(l.header) && cfg.succs(prev).contains(&l.header)
            }
            _ => true,
        };
        if prev_inside_falls || l.header == cfg.entry() {
            rep.fallback
                .push(format!("loop at {}: no place for a preheader", f.block_name(BlockId::new(l.header as usize))));
            continue;
        }
        pbk_loops.push((li, e));
    }

    pbk_loops
}

/// Step 3: what happens on each edge (`sync` into a reconvergence point, `brk` out of a loop), and which
/// loops need a landing block (their exit is an enclosing `ssy`'s target).
fn plan(
    cfg: &Cfg,
    loops: &[Loop],
    chosen: &[Candidate],
    pbk_loops: &[(usize, u32)],
) -> (BTreeMap<(u32, u32), Action>, HashMap<usize, bool>) {
    let mut actions: BTreeMap<(u32, u32), Action> = BTreeMap::new();
    let mut loop_exit_edges = std::collections::HashSet::new();
    for &(li, _) in pbk_loops {
        for &(u, x) in &loops[li].exits {
            loop_exit_edges.insert((u, x));
            actions.insert((u, x), Action::Brk);
        }
    }
    for c in chosen {
        let mut srcs: Vec<u32> = c.region.iter().collect();
        srcs.push(c.block);
        for u in srcs {
            if cfg.succs(u).contains(&c.r) && !loop_exit_edges.contains(&(u, c.r)) {
                actions.insert((u, c.r), Action::Sync);
            }
        }
    }
    // Landing blocks for loops whose exit is an enclosing ssy's target.
    let mut landings: HashMap<usize, bool> = HashMap::new();
    for &(li, e) in pbk_loops {
        let h = loops[li].header;
        let needs_sync = chosen.iter().any(|c| c.r == e && c.region.contains(h));
        landings.insert(li, needs_sync);
    }
    (actions, landings)
}

/// What step 4 changes besides the function: fresh labels, new blocks' places, the report.
struct Rewrite {
    labels: Labels,
    placed: Placement,
    rep: SsyFunctionReport,
}

/// New blocks and where they go in the layout.
#[derive(Default)]
struct Placement {
    /// Blocks to insert right after a block.
    after: Vec<(u32, BlockId)>,
    /// Blocks to insert right before a block (preheaders).
    before: Vec<(u32, BlockId)>,
    /// Blocks to append.
    at_end: Vec<BlockId>,
    /// Each new block and the original block it belongs with (for "inside a loop" questions).
    assoc: HashMap<BlockId, u32>,
}

/// Step 4b: the `sync` or `brk` on edge `(u, x)`.
fn apply_edge(
    f: &mut Function,
    cfg: &Cfg,
    actions: &BTreeMap<(u32, u32), Action>,
    (u, x): (u32, u32),
    action: Action,
    w: &mut Rewrite,
) {
    let (opcode, prefix) = match action {
        Action::Sync => (Opcode::Sync, "sync"),
        Action::Brk => (Opcode::Brk, "brk"),
    };
    match action {
        Action::Sync => w.rep.sync += 1,
        Action::Brk => w.rep.brk += 1,
    }
    let ub = BlockId::new(u as usize);
    let xb = BlockId::new(x as usize);
    let term = cfg.terminator(u);
    let term_inst = term.map(|t| f.insts[t].clone());
    let single_succ = cfg.succs(u).len() == 1 && !cfg.leaves_function(u);
    match term_inst {
        // Unconditional jump to x, or a block that only falls into x: the action ends the block.
        Some(t) if t.opcode == Opcode::Bra && t.guard.is_none() && single_succ => {
            let ti = term.unwrap_or_else(|| unreachable!());
            rewrite(f, ti, opcode, None, xb);
        }
        // Taken side of a guarded bra.
        Some(t) if t.opcode == Opcode::Bra && t.guard.is_some() && t.branch_target() == Some(xb) => {
            let ti = term.unwrap_or_else(|| unreachable!());
            match action {
                Action::Brk if cfg.fallthrough(u) != Some(x) => rewrite(f, ti, Opcode::Brk, t.guard, xb),
                _ => {
                    let i = new_inst(f, opcode, None, Some(xb), Some(ti));
                    let nb = new_block(f, &mut w.labels, prefix, vec![i]);
                    retarget(f, ti, xb, nb);
                    w.placed.assoc.insert(nb, u);
                    w.placed.at_end.push(nb);
                }
            }
        }
        Some(t) if t.opcode == Opcode::Brx => {
            let ti = term.unwrap_or_else(|| unreachable!());
            let i = new_inst(f, opcode, None, Some(xb), Some(ti));
            let nb = new_block(f, &mut w.labels, prefix, vec![i]);
            if let Some(tid) = t.branch_targets() {
                for tb in f.targets[tid].targets.iter_mut() {
                    if *tb == xb {
                        *tb = nb;
                    }
                }
            }
            w.placed.assoc.insert(nb, u);
            w.placed.at_end.push(nb);
        }
        // A loop exit on the fall-through side of a guarded bra: the lanes leaving break right there
        // (`@!p brk`), the others take the branch (`bra T` in a new block), so no stack entry is pushed
        // for the exit.
        Some(t)
            if matches!(action, Action::Brk)
                && t.opcode == Opcode::Bra
                && t.guard.is_some()
                && cfg.fallthrough(u) == Some(x)
                && t.branch_target().is_some_and(|tb| !actions.contains_key(&(u, tb.index() as u32))) =>
        {
            let ti = term.unwrap_or_else(|| unreachable!());
            let g = t.guard.map(|g| Guard { reg: g.reg, negated: !g.negated });
            let jump = new_inst(f, Opcode::Bra, None, t.branch_target(), Some(ti));
            rewrite(f, ti, Opcode::Brk, g, xb);
            let nb = new_block(f, &mut w.labels, "cont", vec![jump]);
            w.placed.assoc.insert(nb, u);
            w.placed.after.push((u, nb));
        }
        // Fall-through edge.
        _ if cfg.fallthrough(u) == Some(x) => {
            let near = term.or_else(|| f.blocks[ub].insts.last().copied());
            let i = new_inst(f, opcode, None, Some(xb), near);
            let conditional = term.is_some_and(|t| f.insts[t].guard.is_some() || f.insts[t].opcode == Opcode::Brx);
            if conditional {
                let nb = new_block(f, &mut w.labels, prefix, vec![i]);
                w.placed.assoc.insert(nb, u);
                w.placed.after.push((u, nb));
            } else {
                f.blocks[ub].insts.push(i);
            }
        }
        _ => {
            // Not reachable for the edge kinds the CFG builds; keep the program unchanged.
            match action {
                Action::Sync => w.rep.sync -= 1,
                Action::Brk => w.rep.brk -= 1,
            }
        }
    }
}

/// Step 4c: a `pbk` preheader before every qualifying loop (and a landing block with the enclosing
/// region's `sync` where the loop exits to an `ssy` target): (loop index, preheader).
fn insert_preheaders(
    f: &mut Function,
    loops: &[Loop],
    pbk_loops: &[(usize, u32)],
    landings: &HashMap<usize, bool>,
    w: &mut Rewrite,
) -> Vec<(usize, BlockId)> {
    let mut preheaders: Vec<(usize, BlockId)> = Vec::new();
    for &(li, e) in pbk_loops {
        let h = loops[li].header;
        let hb = BlockId::new(h as usize);
        let target = if landings.get(&li).copied().unwrap_or(false) {
            let near = f.blocks[BlockId::new(e as usize)].insts.first().copied();
            let s = new_inst(f, Opcode::Sync, None, Some(BlockId::new(e as usize)), near);
            w.rep.sync += 1;
            let lb = new_block(f, &mut w.labels, "land", vec![s]);
            w.placed.assoc.insert(lb, e);
            w.placed.at_end.push(lb);
            lb
        } else {
            BlockId::new(e as usize)
        };
        let near = f.blocks[hb].insts.first().copied();
        let p = new_inst(f, Opcode::Pbk, None, Some(target), near);
        let pb = new_block(f, &mut w.labels, "pbk", vec![p]);
        w.placed.assoc.insert(pb, h);
        w.rep.pbk += 1;
        w.placed.before.push((h, pb));
        preheaders.push((li, pb));
    }
    preheaders
}

/// Step 4d: everything outside a loop that named its header now names its preheader (branches, brx
/// lists, ssy and pbk targets), so entering the loop always executes the pbk.
fn retarget_loop_entries(f: &mut Function, loops: &[Loop], preheaders: &[(usize, BlockId)], placed: &Placement) {
    for &(li, pb) in preheaders {
        let l = &loops[li];
        let hb = BlockId::new(l.header as usize);
        let blocks: Vec<BlockId> = f.blocks.keys().collect();
        for b in blocks {
            if b == pb {
                continue;
            }
            let a = placed.assoc.get(&b).copied().unwrap_or(b.index() as u32);
            if l.contains(a) {
                continue;
            }
            let insts = f.blocks[b].insts.clone();
            for i in insts {
                retarget(f, i, hb, pb);
                if let Some(tid) = f.insts[i].branch_targets() {
                    for tb in f.targets[tid].targets.iter_mut() {
                        if *tb == hb {
                            *tb = pb;
                        }
                    }
                }
            }
        }
    }
}

/// Step 4e: the layout with the new blocks in their places.
fn relayout(f: &mut Function, placed: Placement) {
    let mut layout =
        Vec::with_capacity(f.layout.len() + placed.after.len() + placed.before.len() + placed.at_end.len());
    for &b in &f.layout {
        let bi = b.index() as u32;
        for (h, pb) in &placed.before {
            if *h == bi {
                layout.push(*pb);
            }
        }
        layout.push(b);
        for (u, nb) in &placed.after {
            if *u == bi {
                layout.push(*nb);
            }
        }
    }
    layout.extend(placed.at_end);
    f.layout = layout;
}
