//! The decoder's passes over the functions: laying out registers, frames and pcs (pass 1), decoding
//! every instruction with its facts (pass 2), reconvergence points, thread-frontier ranks and
//! [`Program::straight`]'s runs.

use super::*;

/// [`Program::straight`]: counted backwards, a run continues into the next pc when that pc is in the same
/// function and block.
pub(super) fn straight_runs(prog: &Program) -> Vec<u16> {
    let n = prog.insts.len();
    let mut out = vec![0u16; n];
    for pc in (0..n).rev() {
        // Computation and memory always continue at the next pc with the same lanes; control, barriers,
        // warp-synchronous instructions and fences (class `Sync`) and mechanism instructions (those a pass
        // inserted included) may not ([`OpFacts::ends_run`]).
        if prog.info[pc].class == InstClass::Mechanism || facts(&prog.insts[pc].op).ends_run {
            continue;
        }
        let same_block =
            |q: usize| q < n && prog.info[q].func == prog.info[pc].func && prog.info[q].block == prog.info[pc].block;
        out[pc] = if same_block(pc + 1) { out[pc + 1].saturating_add(1).max(1) } else { 1 };
    }
    out
}

impl<'m> Decoder<'m> {
    pub(super) fn run(&mut self, reconv: &ReconvergenceFn<'_>) -> Result<(), DecodeError> {
        // Pass 1: register windows, frames, pcs of blocks.
        let order = self.order.clone();
        let mut cursor = Cursor::default();
        for (fi, &fid) in order.iter().enumerate() {
            self.lay_out_function(fi, fid, &mut cursor)?;
        }
        let pc = cursor.pc;
        self.prog.nregs = cursor.reg;
        let copies = |f: &Function| f.insts.values().any(|i| i.opcode == reconverge_ir::Opcode::Cp);
        if self.order.iter().any(|&fid| copies(&self.m.functions[fid])) {
            self.async_group = Some(cursor.reg);
            self.prog.nregs += 1;
        }
        self.prog.npreds = cursor.pred;
        self.prog.reconv = vec![PC_NONE; pc as usize];
        self.prog.divergent = vec![false; pc as usize];
        self.prog.structured = vec![false; pc as usize];
        // Pass 2: instructions.
        for (fi, &fid) in order.iter().enumerate() {
            self.decode_function(fi, fid, reconv);
        }
        Ok(())
    }

    /// Pass 1 for function `fi`: its register window, frame layout and block pcs, from `cursor` on.
    pub(super) fn lay_out_function(&mut self, fi: usize, fid: FuncId, cursor: &mut Cursor) -> Result<(), DecodeError> {
        let (mut pc, reg_next, pred_next) = (cursor.pc, cursor.reg, cursor.pred);
        let f = &self.m.functions[fid];
        let mut regs = Vec::with_capacity(f.regs.len());
        let (mut nregs, mut npreds, mut reg_words) = (0u32, 0u32, 0u32);
        for (_, r) in f.regs.iter() {
            reg_words += if r.ty == ScalarType::Pred {
                0
            } else {
                r.ty.bits().div_ceil(32).max(1) * r.vector.unwrap_or(1) as u32
            };
            if r.ty == ScalarType::Pred {
                regs.push((true, pred_next + npreds));
                npreds += 1;
            } else {
                regs.push((false, reg_next + nregs));
                nregs += 1;
            }
        }
        // Frame: locals (.local, .param staging), own params, own rets; offsets are 32-bit.
        let mut frame = Placer::new(0, u64::from(u32::MAX));
        let mut locals = Vec::with_capacity(f.locals.len());
        let mut shared_i = self.prog.shared.iter().position(|s| s.name.starts_with(&format!("{}::", f.name)));
        let mut const_i = self.prog.consts.iter().position(|s| s.name.starts_with(&format!("{}::", f.name)));
        for (_, v) in f.locals.iter() {
            match v.space {
                StateSpace::Shared => {
                    let addr = if v.dims.iter().any(|d| d.is_none()) {
                        self.prog.uses_dynamic_shared = true;
                        self.prog.static_shared as u64
                    } else {
                        let a = shared_i.map(|i| self.prog.shared[i].addr).unwrap_or(0);
                        shared_i = shared_i.map(|i| i + 1);
                        a
                    };
                    locals.push(LocalPlace::Shared(addr));
                }
                StateSpace::Const => {
                    let a = const_i.map(|i| self.prog.consts[i].addr).unwrap_or(0);
                    const_i = const_i.map(|i| i + 1);
                    locals.push(LocalPlace::Const(a));
                }
                _ => {
                    let off = place_var(&mut frame, &v.name, var_size(v).max(1), v.alignment(), "local frame")?;
                    locals.push(LocalPlace::Frame(off as u32));
                }
            }
        }
        let mut param_offsets = Vec::new();
        let mut ret_offsets = Vec::new();
        if f.kind == FuncKind::Func {
            for p in &f.params {
                param_offsets
                    .push(place_var(&mut frame, &p.name, var_size(p).max(1), p.alignment(), "local frame")? as u32);
            }
            for r in &f.rets {
                ret_offsets
                    .push(place_var(&mut frame, &r.name, var_size(r).max(1), r.alignment(), "local frame")? as u32);
            }
        } else {
            // Kernel parameters live in the parameter buffer.
            let mut buffer = Placer::new(0, u64::from(u32::MAX));
            for p in &f.params {
                let o = place_var(&mut buffer, &p.name, var_size(p), p.alignment(), "parameter buffer")?;
                self.prog.params.push(KernelParam {
                    name: p.name.clone(),
                    ty: p.ty,
                    size: var_size(p) as u32,
                    offset: o as u32,
                    align: p.alignment().clamp(1, u32::MAX as u64) as u32,
                    is_pointer_like: p.ptr.is_some() || (p.ty.bits() == 64 && p.dims.is_empty()),
                });
            }
            // The placer's limit keeps the buffer within 32 bits.
            self.prog.param_size = buffer.used() as u32;
        }
        // Rounded up to 16 bytes, still within the frame's 32 bits.
        let frame_size =
            place_var(&mut frame, &format!("the local frame of `{}`", f.name), 0, 16, "local frame")? as u32;
        // Block pcs.
        let entry = pc;
        let mut block_pc = vec![0; f.blocks.len()];
        let mut p = pc;
        for &b in &f.layout {
            block_pc[b.index()] = p;
            p += f.blocks[b].insts.len() as u32;
        }
        // One more pc: the guard that traps when control falls off the end of the body.
        pc = p + 1;
        self.prog.functions.push(FuncInfo {
            name: f.name.clone(),
            ir: fid,
            entry,
            end: pc,
            reg_base: reg_next,
            nregs,
            reg_words,
            pred_base: pred_next,
            npreds,
            frame_size,
            param_offsets,
            ret_offsets,
            is_kernel: fi == 0,
        });
        cursor.reg = reg_next + nregs;
        cursor.pred = pred_next + npreds;
        cursor.pc = pc;
        self.ctxs.push(FuncCtx { regs, locals, block_pc });
        Ok(())
    }

    /// Pass 2 for function `fi`: its instructions, the trap after its body, its reconvergence points.
    pub(super) fn decode_function(&mut self, fi: usize, fid: FuncId, reconv: &ReconvergenceFn<'_>) {
        let m = self.m;
        let f = &m.functions[fid];
        let mut inst_pc: HashMap<InstId, Pc> = HashMap::new();
        let at = InFunction { fi, fid, f, printer: reconverge_ir::InstPrinter::new(m, f) };
        for &b in &f.layout {
            for (k, &i) in f.blocks[b].insts.iter().enumerate() {
                let pc = self.ctxs[fi].block_pc[b.index()] + k as u32;
                inst_pc.insert(i, pc);
                self.decode_one(&at, b, i, pc);
            }
        }
        // Control that falls off the end of the body (no `ret`/`exit` there) traps here instead of
        // running into the next function.
        self.prog.insts.push(DInst { guard: None, op: Op::FellOff });
        self.prog.info.push(InstInfo {
            func: fi as u32,
            ir_func: fid,
            ir_inst: None,
            block: f.layout.last().map(|b| b.index() as u32).unwrap_or(0),
            text: format!("(end of `{}`)", f.name),
            span: Default::default(),
            ptx_line: 0,
            loc: None,
            class: InstClass::Control,
            branch: None,
            reads: SmallVec::new(),
            writes: SmallVec::new(),
            pred_reads: SmallVec::new(),
            pred_writes: SmallVec::new(),
        });
        self.mark_points(fi, f, reconv, &inst_pc);
    }

    /// Decodes instruction `i` of block `b` of the function `at` at `pc`.
    pub(super) fn decode_one(&mut self, at: &InFunction<'_>, b: reconverge_ir::BlockId, i: InstId, pc: Pc) {
        let (fi, fid, f, printer) = (at.fi, at.fid, at.f, &at.printer);
        let op = match self.decode_inst(fi, f, i) {
            Ok(op) => op,
            Err(why) => Op::Unsupported(why.to_string().into()),
        };
        let inst = &f.insts[i];
        let guard = inst.guard.and_then(|g| {
            let (is_pred, idx) = self.ctxs[fi].regs[g.reg.index()];
            is_pred.then_some((idx, g.negated))
        });
        let text = printer.inst(i).replace(" \t", " ");
        let spans = f.spans.insts.get(i).cloned().unwrap_or_default();
        let OpFacts { class, reads, writes, mut pred_reads, pred_writes, .. } = facts(&op);
        if let Some((p, _)) = guard {
            pred_reads.push(p);
        }
        let inserted = self.opts_first_inserted.iter().any(|&(g, n)| g == fid && i.index() >= n);
        let class = if inserted { InstClass::Mechanism } else { class };
        let branch = match (&op, guard) {
            _ if inserted => None,
            (Op::Bra { .. } | Op::Brk, Some(_)) | (Op::Brx { .. }, _) => {
                self.prog.branches.push(pc);
                Some(self.prog.branches.len() as u32 - 1)
            }
            _ => None,
        };
        self.prog.insts.push(DInst { guard, op });
        self.prog.info.push(InstInfo {
            func: fi as u32,
            ir_func: fid,
            ir_inst: Some(i),
            block: b.index() as u32,
            text,
            span: spans.whole,
            ptx_line: if spans.whole.is_empty() { 0 } else { self.line_of(spans.whole.start) },
            loc: inst.loc,
            class,
            branch,
            reads,
            writes,
            pred_reads,
            pred_writes,
        });
    }

    /// The reconvergence point of every branch of function `fi`, its thread-frontier ranks and its
    /// divergent blocks.
    pub(super) fn mark_points(
        &mut self,
        fi: usize,
        f: &Function,
        reconv: &ReconvergenceFn<'_>,
        inst_pc: &HashMap<InstId, Pc>,
    ) {
        // Reconvergence points.
        let exit_pc = if fi == 0 { PC_EXIT } else { PC_RET };
        let points = reconv(f);
        self.rank_blocks(fi, f, &points.frontier_order);
        for &b in &points.divergent_blocks {
            let pc0 = self.ctxs[fi].block_pc[b.index()];
            for k in 0..f.blocks[b].insts.len() as u32 {
                if let Some(d) = self.prog.divergent.get_mut((pc0 + k) as usize) {
                    *d = true;
                }
            }
        }
        for bp in points.branches {
            if let Some(&pc) = inst_pc.get(&bp.inst) {
                self.prog.reconv[pc as usize] = match bp.reconvergence {
                    Some(b) => self.ctxs[fi].block_pc[b.index()],
                    None => exit_pc,
                };
                if bp.leaves_loop {
                    self.prog.leaves_loop.push(pc);
                }
                if let Some(b) = bp.likely {
                    self.prog.likely.push((pc, self.ctxs[fi].block_pc[b.index()]));
                }
                self.prog.structured[pc as usize] = bp.structured;
            }
        }
    }

    /// Gives the pcs of function `fi` their thread-frontier ranks: blocks in `order`, then the rest in
    /// layout, each block's instructions in sequence, starting at the function's entry pc.
    pub(super) fn rank_blocks(&mut self, fi: usize, f: &Function, order: &[reconverge_ir::BlockId]) {
        let entry = self.prog.functions[fi].entry;
        let end = self.prog.functions[fi].end;
        if self.prog.frontier_rank.len() < end as usize + 1 {
            self.prog.frontier_rank.resize(end as usize + 1, u32::MAX);
        }
        let mut next = entry;
        let listed: std::collections::HashSet<_> = order.iter().copied().collect();
        let rest = f.layout.iter().copied().filter(|b| !listed.contains(b));
        for b in order.iter().copied().chain(rest) {
            let pc0 = self.ctxs[fi].block_pc[b.index()];
            for k in 0..f.blocks[b].insts.len() as u32 {
                self.prog.frontier_rank[(pc0 + k) as usize] = next;
                next += 1;
            }
        }
        // The pc past the body (the fall-off trap) ranks last.
        self.prog.frontier_rank[end as usize] = end;
    }

    pub(super) fn finish(mut self) -> Program {
        self.prog.leaves_loop.sort_unstable();
        self.prog.likely.sort_unstable();
        self.prog.straight = straight_runs(&self.prog);
        self.prog
    }
}
