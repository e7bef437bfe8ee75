//! The code of a segment: a loop over the warp's lanes two at a time, each pair computed in 128-bit
//! vector registers (`i64x2`, one 64-bit register value per lane) and blended into the register file
//! under the active mask.

use crate::Evaluators;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    types, AbiParam, Endianness, Function, InstBuilder, MemFlagsData as MemFlags, Signature, Type, Value,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use reconverge_ir::{KnownModifier, ScalarType};
use reconverge_program::program::{
    BoolOp, Cmp, DInst, FMode, FRound, FloatBinOp, IntBinOp, IntTerOp, Op, Pred, PredSrc, Reg, Src,
};
use std::collections::BTreeMap;

/// Lanes per vector: a chunk of the warp computed together.
pub(crate) const CHUNK: u32 = 2;

/// A register or predicate an operation names.
pub(crate) enum Operand {
    Reg(Reg),
    Pred(Pred),
}

/// Whether an operation's sources are all registers, constants or predicates.
fn plain(s: &Src) -> bool {
    matches!(s, Src::Reg(_) | Src::Imm(_) | Src::Pred(_))
}

/// Whether `op` is a pure lane operation the compiler handles (inline or through the evaluators): one
/// its [`facts`](reconverge_program::facts::facts) declare a lane operation, whose value sources are all
/// plain.
pub(crate) fn supported(op: &Op) -> bool {
    let f = reconverge_program::facts::facts(op);
    f.lane && f.srcs.iter().all(plain)
}

/// Calls `f` with every register and predicate `op` names (sources and destinations).
pub(crate) fn operands(op: &Op, f: &mut dyn FnMut(Operand)) {
    let pred_src = |p: &PredSrc, f: &mut dyn FnMut(Operand)| {
        if let PredSrc::Reg(x, _) = p {
            f(Operand::Pred(*x));
        }
    };
    let srcs = |ss: &[&Src], f: &mut dyn FnMut(Operand)| {
        for s in ss {
            crate::src_operand(s, f);
        }
    };
    match op {
        Op::Selp { d, a, b, c } => {
            f(Operand::Reg(*d));
            srcs(&[a, b], f);
            pred_src(c, f);
        }
        Op::Setp { p, q, a, b, comb, .. } => {
            for x in [p, q].into_iter().flatten() {
                f(Operand::Pred(*x));
            }
            srcs(&[a, b], f);
            if let Some((_, c)) = comb {
                pred_src(c, f);
            }
        }
        Op::PredOp { d, a, b, .. } => {
            f(Operand::Pred(*d));
            pred_src(a, f);
            pred_src(b, f);
        }
        Op::Mov { d, a, .. } => {
            f(Operand::Reg(*d));
            srcs(&[a], f);
        }
        op => {
            if let Some(d) = dest(op) {
                f(Operand::Reg(d));
            }
            for s in sources(op).into_iter().flatten() {
                crate::src_operand(s, f);
            }
        }
    }
}

/// The state of one chunk's pass over the segment: the current vector of every register and predicate
/// it touched, the values they had before, and which ones it wrote.
#[derive(Default)]
struct Chunk {
    regs: BTreeMap<Reg, Value>,
    orig_regs: BTreeMap<Reg, Value>,
    /// Predicates as lane masks (all ones where set).
    preds: BTreeMap<Pred, Value>,
    /// The predicate words as loaded (the whole warp's bits).
    words: BTreeMap<Pred, Value>,
    dirty_regs: Vec<Reg>,
    dirty_preds: Vec<Pred>,
}

/// The loop's values every instruction may use.
struct Frame {
    /// The chunk's first value register: `regs + lane * 8`.
    regs: Value,
    /// The warp's word of predicate 0.
    preds: Value,
    /// Bytes from a value register's row to the next.
    reg_stride: Value,
    /// Bytes from a predicate's row to the next.
    pred_stride: Value,
    /// The segment's first instruction.
    insts: Value,
    /// The chunk's first lane (shift of its predicate bits).
    lane: Value,
    /// The chunk's active lanes as a mask vector.
    active: Value,
    /// The chunk's active lanes as bits (bit 0: its first lane).
    active_bits: Value,
}

/// What the host's vector unit can do beyond the baseline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HostVector {
    /// Fused multiply-add on vectors.
    pub fma: bool,
}

/// Emits the body of a segment into `func` (signature: [`crate::Entry`]).
pub(crate) fn body(
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    insts: &[DInst],
    (eval, host): (Evaluators, HostVector),
    target: TargetFrontendConfig,
) {
    let ptr = target.pointer_type();
    let mut b = FunctionBuilder::new(func, fctx);
    let (entry, head, chunk_block, next, exit) =
        (b.create_block(), b.create_block(), b.create_block(), b.create_block(), b.create_block());
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let [regs, preds, mask, w, reg_stride, pred_stride, inst_base] = b.block_params(entry)[..] else {
        unreachable!("seven parameters")
    };
    let lane_var = b.declare_var(types::I64);
    let zero = b.ins().iconst(types::I64, 0);
    b.def_var(lane_var, zero);
    b.ins().jump(head, &[]);

    // head: while lane < w
    b.switch_to_block(head);
    let lane = b.use_var(lane_var);
    let more = b.ins().icmp(IntCC::UnsignedLessThan, lane, w);
    b.ins().brif(more, chunk_block, &[], exit, &[]);

    // A chunk with no active lane is skipped.
    b.switch_to_block(chunk_block);
    let lane = b.use_var(lane_var);
    let shifted = b.ins().ushr(mask, lane);
    let active_bits = b.ins().band_imm_u(shifted, (1 << CHUNK) - 1);
    let work = b.create_block();
    b.ins().brif(active_bits, work, &[], next, &[]);

    b.switch_to_block(work);
    let lane = b.use_var(lane_var);
    let off = b.ins().ishl_imm_u(lane, 3);
    let chunk_regs = b.ins().iadd(regs, off);
    let mut em = Emitter { b: &mut b, eval, host, ptr };
    let active = em.bits_to_mask(active_bits);
    let frame = Frame { regs: chunk_regs, preds, reg_stride, pred_stride, insts: inst_base, lane, active, active_bits };
    let mut chunk = Chunk::default();
    for (k, inst) in insts.iter().enumerate() {
        em.inst(&frame, &mut chunk, (k, inst));
    }
    em.write_back(&frame, &mut chunk);
    b.ins().jump(next, &[]);

    b.switch_to_block(next);
    let lane = b.use_var(lane_var);
    let lane = b.ins().iadd_imm_u(lane, i64::from(CHUNK));
    b.def_var(lane_var, lane);
    b.ins().jump(head, &[]);

    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(target);
}

/// Flags of the register file's loads and stores: in bounds (checked before the call), not aligned to
/// 16 bytes.
fn file() -> MemFlags {
    MemFlags::new().with_notrap()
}

/// Flags of a bit-pattern reinterpretation between vector shapes.
fn lanes() -> MemFlags {
    MemFlags::new().with_endianness(Endianness::Little)
}

const V: Type = types::I64X2;

struct Emitter<'b, 'f> {
    b: &'b mut FunctionBuilder<'f>,
    eval: Evaluators,
    host: HostVector,
    ptr: Type,
}

impl Emitter<'_, '_> {
    /// The address of row `row` of a file: `base + row * stride`.
    fn row(&mut self, base: Value, stride: Value, row: u32) -> Value {
        let off = self.b.ins().imul_imm_u(stride, i64::from(row));
        self.b.ins().iadd(base, off)
    }

    /// A vector of `x` in every 64-bit lane.
    fn splat(&mut self, x: u64) -> Value {
        let s = self.b.ins().iconst(types::I64, x as i64);
        self.b.ins().splat(V, s)
    }

    /// The 32-bit `x` in every 32-bit lane.
    fn splat32(&mut self, x: u32) -> Value {
        let s = self.b.ins().iconst(types::I32, i64::from(x as i32));
        self.b.ins().splat(types::I32X4, s)
    }

    /// Low bits of a scalar (bit k: lane k of the chunk) as a lane mask vector.
    fn bits_to_mask(&mut self, bits: Value) -> Value {
        let v = self.b.ins().splat(V, bits);
        let lane_bits = self.lane_bits();
        let sel = self.b.ins().band(v, lane_bits);
        self.nonzero(sel)
    }

    /// The vector `[1, 2]`: each lane's bit.
    fn lane_bits(&mut self) -> Value {
        let one = self.b.ins().iconst(types::I64, 1);
        let two = self.b.ins().iconst(types::I64, 2);
        let v = self.b.ins().scalar_to_vector(V, one);
        self.b.ins().insertlane(v, two, 1)
    }

    /// The chunk's vector of register `r`.
    fn reg(&mut self, f: &Frame, c: &mut Chunk, r: Reg) -> Value {
        if let Some(&v) = c.regs.get(&r) {
            return v;
        }
        let v = self.orig_reg(f, c, r);
        c.regs.insert(r, v);
        v
    }

    /// Register `r` as it was before the segment.
    fn orig_reg(&mut self, f: &Frame, c: &mut Chunk, r: Reg) -> Value {
        if let Some(&v) = c.orig_regs.get(&r) {
            return v;
        }
        let at = self.row(f.regs, f.reg_stride, r);
        let v = self.b.ins().load(V, file(), at, 0);
        c.orig_regs.insert(r, v);
        v
    }

    /// The warp's word of predicate `p` as loaded.
    fn word(&mut self, f: &Frame, c: &mut Chunk, p: Pred) -> Value {
        if let Some(&w) = c.words.get(&p) {
            return w;
        }
        let at = self.row(f.preds, f.pred_stride, p);
        let w = self.b.ins().load(types::I64, file(), at, 0);
        c.words.insert(p, w);
        w
    }

    /// The chunk's lane mask of predicate `p`.
    fn pred(&mut self, f: &Frame, c: &mut Chunk, p: Pred) -> Value {
        if let Some(&v) = c.preds.get(&p) {
            return v;
        }
        let w = self.word(f, c, p);
        let bits = self.b.ins().ushr(w, f.lane);
        let v = self.bits_to_mask(bits);
        c.preds.insert(p, v);
        v
    }

    fn src(&mut self, f: &Frame, c: &mut Chunk, s: &Src) -> Value {
        match *s {
            Src::Reg(r) => self.reg(f, c, r),
            Src::Imm(v) => self.splat(v),
            Src::Pred(p) => {
                let m = self.pred(f, c, p);
                let one = self.splat(1);
                self.b.ins().band(m, one)
            }
            // `supported` admits no other source.
            Src::Sreg(_) | Src::LocalAddr(_) => self.splat(0),
        }
    }

    fn pred_src(&mut self, f: &Frame, c: &mut Chunk, p: &PredSrc) -> Value {
        match *p {
            PredSrc::Reg(x, neg) => {
                let v = self.pred(f, c, x);
                if neg {
                    self.b.ins().bnot(v)
                } else {
                    v
                }
            }
            PredSrc::Const(k) => self.splat(if k { u64::MAX } else { 0 }),
        }
    }

    /// Writes `v` to register `d` where the guard mask `g` is set.
    fn set_reg(&mut self, f: &Frame, c: &mut Chunk, g: Option<Value>, d: Reg, v: Value) {
        let v = match g {
            Some(g) => {
                let old = self.reg(f, c, d);
                self.b.ins().bitselect(g, v, old)
            }
            None => v,
        };
        c.regs.insert(d, v);
        if !c.dirty_regs.contains(&d) {
            c.dirty_regs.push(d);
        }
    }

    /// Writes the mask `v` to predicate `d` where the guard mask `g` is set.
    fn set_pred(&mut self, f: &Frame, c: &mut Chunk, g: Option<Value>, d: Pred, v: Value) {
        let v = match g {
            Some(g) => {
                let old = self.pred(f, c, d);
                self.b.ins().bitselect(g, v, old)
            }
            None => v,
        };
        c.preds.insert(d, v);
        if !c.dirty_preds.contains(&d) {
            c.dirty_preds.push(d);
        }
    }

    /// Stores what the chunk wrote, in its active lanes only.
    fn write_back(&mut self, f: &Frame, c: &mut Chunk) {
        for r in c.dirty_regs.clone() {
            let old = self.orig_reg(f, c, r);
            let v = self.b.ins().bitselect(f.active, c.regs[&r], old);
            let at = self.row(f.regs, f.reg_stride, r);
            self.b.ins().store(file(), v, at, 0);
        }
        for p in c.dirty_preds.clone() {
            let word = self.word(f, c, p);
            let bits = self.b.ins().vhigh_bits(types::I64, c.preds[&p]);
            let bits = self.b.ins().band(bits, f.active_bits);
            let bits = self.b.ins().ishl(bits, f.lane);
            let clear = self.b.ins().ishl(f.active_bits, f.lane);
            let kept = self.b.ins().band_not(word, clear);
            let new = self.b.ins().bor(kept, bits);
            let at = self.row(f.preds, f.pred_stride, p);
            self.b.ins().store(file(), new, at, 0);
        }
    }

    fn inst(&mut self, f: &Frame, c: &mut Chunk, (k, inst): (usize, &DInst)) {
        let g = inst.guard.map(|(p, neg)| self.pred_src(f, c, &PredSrc::Reg(p, neg)));
        match &inst.op {
            Op::Setp { cmp, ty, p, q, a, b, comb } => {
                let (av, bv) = (self.src(f, c, a), self.src(f, c, b));
                let m = match self.compare(*cmp, *ty, av, bv) {
                    Some(m) => m,
                    None => self.call_compare(f, k, av, bv),
                };
                let nm = self.b.ins().bnot(m);
                let (pm, qm) = match comb {
                    None => (m, nm),
                    Some((op, k)) => {
                        let kv = self.pred_src(f, c, k);
                        (self.bool_op(*op, m, kv), self.bool_op(*op, nm, kv))
                    }
                };
                if let Some(p) = p {
                    self.set_pred(f, c, g, *p, pm);
                }
                if let Some(q) = q {
                    self.set_pred(f, c, g, *q, qm);
                }
            }
            Op::PredOp { op, not, d, a, b } => {
                let av = self.pred_src(f, c, a);
                let r = match op {
                    None => av,
                    Some(o) => {
                        let bv = self.pred_src(f, c, b);
                        self.bool_op(*o, av, bv)
                    }
                };
                let r = if *not { self.b.ins().bnot(r) } else { r };
                self.set_pred(f, c, g, *d, r);
            }
            Op::Selp { d, a, b, c: k } => {
                let (av, bv, kv) = (self.src(f, c, a), self.src(f, c, b), self.pred_src(f, c, k));
                let v = self.b.ins().bitselect(kv, av, bv);
                self.set_reg(f, c, g, *d, v);
            }
            Op::Mov { d, a, bits } => {
                let av = self.src(f, c, a);
                let v = self.mask_to(av, *bits);
                self.set_reg(f, c, g, *d, v);
            }
            op => {
                let Some(d) = dest(op) else { return };
                let v = self.value(f, c, (k, op));
                self.set_reg(f, c, g, d, v);
            }
        }
    }

    /// The value of a register-producing operation: inline where the semantics are simple, else the
    /// client's evaluator lane by lane.
    fn value(&mut self, f: &Frame, c: &mut Chunk, (k, op): (usize, &Op)) -> Value {
        let mut vals: [Option<Value>; 4] = [None; 4];
        for (slot, s) in vals.iter_mut().zip(sources(op)) {
            *slot = s.map(|s| self.src(f, c, s));
        }
        match self.inline_value(op, vals) {
            Some(v) => v,
            None => self.call_value(f, k, vals),
        }
    }

    /// The vector code of an operation with simple semantics; `None` for the others.
    fn inline_value(&mut self, op: &Op, vals: [Option<Value>; 4]) -> Option<Value> {
        match (op, vals) {
            (Op::IntBin { op: o, ty, .. }, [Some(a), Some(b), ..]) => self.int_bin(*o, *ty, a, b),
            (Op::IntTer { op: IntTerOp::MadLo, ty, .. }, [Some(a), Some(b), Some(k), _]) => {
                let p = self.int_bin(IntBinOp::MulLo, *ty, a, b)?;
                self.int_bin(IntBinOp::Add, *ty, p, k)
            }
            (
                Op::Cvt {
                    dty: ScalarType::F32, sty: ScalarType::S32, rnd: Some(KnownModifier::Rn), sat: false, ..
                },
                [Some(a), ..],
            ) => {
                // `f32` from the low 32 bits as a signed integer, rounded to nearest (no integer gives a
                // subnormal, so `.ftz` changes nothing).
                let x = self.b.ins().bitcast(types::I32X4, lanes(), a);
                let f = self.b.ins().fcvt_from_sint(types::F32X4, x);
                let v = self.b.ins().bitcast(V, lanes(), f);
                Some(self.mask_to(v, 32))
            }
            (Op::FloatBin { op: o, ty: ScalarType::F32, mode, .. }, [Some(a), Some(b), ..]) => {
                self.f32_bin(*o, *mode, a, b)
            }
            (Op::Fma { ty: ScalarType::F32, mode, .. }, [Some(a), Some(b), Some(k), _]) if self.host.fma => {
                self.f32_fma(*mode, a, b, k)
            }
            _ => None,
        }
    }

    /// The address of the operation of the segment's instruction `k` (an argument, so that the code
    /// serves every copy of the instructions).
    fn op_address(&mut self, f: &Frame, k: usize) -> Value {
        let off = k * std::mem::size_of::<DInst>() + std::mem::offset_of!(DInst, op);
        self.b.ins().iadd_imm_u(f.insts, off as i64)
    }

    /// `eval.value(op, a, b, c, e)` of instruction `k` for each lane, absent sources 0.
    fn call_value(&mut self, f: &Frame, k: usize, vals: [Option<Value>; 4]) -> Value {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(self.ptr));
        sig.params.extend([AbiParam::new(types::I64); 4]);
        sig.returns.push(AbiParam::new(types::I64));
        let zero = self.b.ins().iconst(types::I64, 0);
        let opv = self.op_address(f, k);
        self.per_lane(|em, l| {
            let mut args = vec![opv];
            for v in vals {
                args.push(match v {
                    Some(v) => em.b.ins().extractlane(v, l),
                    None => zero,
                });
            }
            em.call(sig.clone(), em.eval.value as usize, &args)
        })
    }

    /// `eval.compare(op, a, b)` of instruction `k` for each lane, as a lane mask.
    fn call_compare(&mut self, f: &Frame, k: usize, a: Value, b: Value) -> Value {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(self.ptr));
        sig.params.extend([AbiParam::new(types::I64); 2]);
        sig.returns.push(AbiParam::new(types::I64));
        let opv = self.op_address(f, k);
        let r = self.per_lane(|em, l| {
            let (x, y) = (em.b.ins().extractlane(a, l), em.b.ins().extractlane(b, l));
            em.call(sig.clone(), em.eval.compare as usize, &[opv, x, y])
        });
        let one = self.splat(1);
        let r = self.b.ins().band(r, one);
        self.nonzero(r)
    }

    /// A lane mask of the lanes of `v` that are not 0.
    fn nonzero(&mut self, v: Value) -> Value {
        let zero = self.splat(0);
        self.b.ins().icmp(IntCC::NotEqual, v, zero)
    }

    /// Each 64-bit lane of `v` shifted left by 32 bits and back, arithmetically: the low half
    /// sign-extended.
    fn sext_low(&mut self, v: Value) -> Value {
        let k = self.b.ins().iconst(types::I32, 32);
        let v = self.b.ins().ishl(v, k);
        self.b.ins().sshr(v, k)
    }

    /// The vector of `lane(l)` for the chunk's lanes.
    fn per_lane(&mut self, mut lane: impl FnMut(&mut Self, u8) -> Value) -> Value {
        let first = lane(self, 0);
        let mut v = self.b.ins().scalar_to_vector(V, first);
        for l in 1..CHUNK as u8 {
            let x = lane(self, l);
            v = self.b.ins().insertlane(v, x, l);
        }
        v
    }

    fn call(&mut self, mut sig: Signature, f: usize, args: &[Value]) -> Value {
        sig.call_conv = self.b.func.signature.call_conv;
        let sigref = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(self.ptr, f as i64);
        let call = self.b.ins().call_indirect(sigref, callee, args);
        self.b.inst_results(call)[0]
    }

    fn mask_to(&mut self, v: Value, bits: u32) -> Value {
        if bits >= 64 {
            v
        } else {
            let m = self.splat((1u64 << bits) - 1);
            self.b.ins().band(v, m)
        }
    }

    fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    /// Wrapping add, sub and low multiply and bit logic at 32 or 64 bits (the result masked to the
    /// width, as the semantics crate's `trunc` does), and the 32-bit wide multiply; `None` for anything
    /// else.
    fn int_bin(&mut self, op: IntBinOp, ty: ScalarType, a: Value, b: Value) -> Option<Value> {
        let bits = ty.bits();
        if !(ty.is_integer() || ty.is_bits()) || !(bits == 32 || bits == 64) {
            return None;
        }
        if op == IntBinOp::MulWide {
            // The 64-bit product of the sign- or zero-extended 32-bit operands.
            if bits != 32 || !ty.is_integer() {
                return None;
            }
            let (x, y) = (self.widen32(a, ty.is_signed()), self.widen32(b, ty.is_signed()));
            return Some(self.b.ins().imul(x, y));
        }
        let v = match op {
            IntBinOp::Add => self.b.ins().iadd(a, b),
            IntBinOp::Sub => self.b.ins().isub(a, b),
            IntBinOp::MulLo => self.b.ins().imul(a, b),
            IntBinOp::And => self.b.ins().band(a, b),
            IntBinOp::Or => self.b.ins().bor(a, b),
            IntBinOp::Xor => self.b.ins().bxor(a, b),
            _ => return None,
        };
        Some(self.mask_to(v, bits))
    }

    /// The low 32 bits of each lane as `f32x4` (lanes 1 and 3 hold the high halves, ignored).
    fn as_f32(&mut self, v: Value) -> Value {
        self.b.ins().bitcast(types::F32X4, lanes(), v)
    }

    /// Subnormal 32-bit patterns (of an `i32x4`) flushed to zeros of their sign.
    fn flush(&mut self, x: Value) -> Value {
        let exp_mask = self.splat32(0x7F80_0000);
        let exp = self.b.ins().band(x, exp_mask);
        let zero = self.splat32(0);
        let tiny = self.b.ins().icmp(IntCC::Equal, exp, zero);
        let sign_mask = self.splat32(0x8000_0000);
        let sign = self.b.ins().band(x, sign_mask);
        self.b.ins().bitselect(tiny, sign, x)
    }

    /// `f32` operands of a `.rn` operation, flushed with `.ftz`; `None` for other modes.
    fn f32_operands<const N: usize>(&mut self, m: FMode, vals: [Value; N]) -> Option<[Value; N]> {
        if m.rnd != FRound::Rn || m.sat {
            return None;
        }
        Some(vals.map(|v| {
            let v = if m.ftz {
                let x = self.b.ins().bitcast(types::I32X4, lanes(), v);
                let x = self.flush(x);
                self.b.ins().bitcast(V, lanes(), x)
            } else {
                v
            };
            self.as_f32(v)
        }))
    }

    /// An `f32x4` result as the register file holds it: the canonical NaN `0x7FFF_FFFF` for a NaN,
    /// subnormals flushed with `.ftz`, zero-extended to 64 bits.
    fn f32_result(&mut self, r: Value, ftz: bool) -> Value {
        let mut bits = self.b.ins().bitcast(types::I32X4, lanes(), r);
        if ftz {
            bits = self.flush(bits);
        }
        let nan = self.b.ins().fcmp(FloatCC::Unordered, r, r);
        let canonical = self.splat32(0x7FFF_FFFF);
        let v = self.b.ins().bitselect(nan, canonical, bits);
        let v = self.b.ins().bitcast(V, lanes(), v);
        self.mask_to(v, 32)
    }

    /// `add/sub/mul.rn{.ftz}.f32`; `None` for other operations and modes.
    fn f32_bin(&mut self, op: FloatBinOp, m: FMode, a: Value, b: Value) -> Option<Value> {
        if !matches!(op, FloatBinOp::Add | FloatBinOp::Sub | FloatBinOp::Mul) {
            return None;
        }
        let [x, y] = self.f32_operands(m, [a, b])?;
        let r = match op {
            FloatBinOp::Add => self.b.ins().fadd(x, y),
            FloatBinOp::Sub => self.b.ins().fsub(x, y),
            _ => self.b.ins().fmul(x, y),
        };
        Some(self.f32_result(r, m.ftz))
    }

    /// `fma.rn{.ftz}.f32`; `None` for other modes.
    fn f32_fma(&mut self, m: FMode, a: Value, b: Value, c: Value) -> Option<Value> {
        let [x, y, z] = self.f32_operands(m, [a, b, c])?;
        let r = self.b.ins().fma(x, y, z);
        Some(self.f32_result(r, m.ftz))
    }

    /// An inline comparison (a lane mask) of 32- and 64-bit integers and of `f32`/`f64`; `None` for
    /// other types.
    fn compare(&mut self, cmp: Cmp, ty: ScalarType, a: Value, b: Value) -> Option<Value> {
        match ty {
            ScalarType::F32 => {
                let (x, y) = (self.as_f32(a), self.as_f32(b));
                let m = self.b.ins().fcmp(float_cc(cmp), x, y);
                // Each lane's 32-bit mask sits in the low half of its 64 bits: spread it.
                let m = self.b.ins().bitcast(V, lanes(), m);
                Some(self.sext_low(m))
            }
            ScalarType::F64 => {
                let x = self.b.ins().bitcast(types::F64X2, lanes(), a);
                let y = self.b.ins().bitcast(types::F64X2, lanes(), b);
                Some(self.b.ins().fcmp(float_cc(cmp), x, y))
            }
            _ if (ty.is_integer() || ty.is_bits()) && matches!(ty.bits(), 32 | 64) => {
                let Some(cc) = int_cc(cmp, ty.is_signed()) else {
                    return Some(self.splat(if cmp == Cmp::Num { u64::MAX } else { 0 }));
                };
                let (x, y) = if ty.bits() == 32 {
                    (self.widen32(a, ty.is_signed()), self.widen32(b, ty.is_signed()))
                } else {
                    (a, b)
                };
                Some(self.b.ins().icmp(cc, x, y))
            }
            _ => None,
        }
    }

    /// The low 32 bits of each lane, sign- or zero-extended to 64.
    fn widen32(&mut self, v: Value, signed: bool) -> Value {
        if signed {
            self.sext_low(v)
        } else {
            self.mask_to(v, 32)
        }
    }
}

/// The float condition of a comparison (the unsigned-integer names compare as the ordered ones).
fn float_cc(cmp: Cmp) -> FloatCC {
    match cmp {
        Cmp::Eq => FloatCC::Equal,
        Cmp::Ne => FloatCC::OrderedNotEqual,
        Cmp::Lt | Cmp::Lo => FloatCC::LessThan,
        Cmp::Le | Cmp::Ls => FloatCC::LessThanOrEqual,
        Cmp::Gt | Cmp::Hi => FloatCC::GreaterThan,
        Cmp::Ge | Cmp::Hs => FloatCC::GreaterThanOrEqual,
        Cmp::Equ => FloatCC::UnorderedOrEqual,
        Cmp::Neu => FloatCC::NotEqual,
        Cmp::Ltu => FloatCC::UnorderedOrLessThan,
        Cmp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
        Cmp::Gtu => FloatCC::UnorderedOrGreaterThan,
        Cmp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
        Cmp::Num => FloatCC::Ordered,
        Cmp::Nan => FloatCC::Unordered,
    }
}

/// The integer condition of a comparison (`lo`/`ls`/`hi`/`hs` always unsigned); `None` for `num` and
/// `nan`, which are constants on integers.
fn int_cc(cmp: Cmp, signed: bool) -> Option<IntCC> {
    Some(match (cmp, signed) {
        (Cmp::Eq | Cmp::Equ, _) => IntCC::Equal,
        (Cmp::Ne | Cmp::Neu, _) => IntCC::NotEqual,
        (Cmp::Lt | Cmp::Ltu, true) => IntCC::SignedLessThan,
        (Cmp::Le | Cmp::Leu, true) => IntCC::SignedLessThanOrEqual,
        (Cmp::Gt | Cmp::Gtu, true) => IntCC::SignedGreaterThan,
        (Cmp::Ge | Cmp::Geu, true) => IntCC::SignedGreaterThanOrEqual,
        (Cmp::Lt | Cmp::Ltu | Cmp::Lo, _) => IntCC::UnsignedLessThan,
        (Cmp::Le | Cmp::Leu | Cmp::Ls, _) => IntCC::UnsignedLessThanOrEqual,
        (Cmp::Gt | Cmp::Gtu | Cmp::Hi, _) => IntCC::UnsignedGreaterThan,
        (Cmp::Ge | Cmp::Geu | Cmp::Hs, _) => IntCC::UnsignedGreaterThanOrEqual,
        (Cmp::Num | Cmp::Nan, _) => return None,
    })
}

/// The destination register of a value-producing operation.
fn dest(op: &Op) -> Option<Reg> {
    match op {
        Op::IntUn { d, .. }
        | Op::IntBin { d, .. }
        | Op::IntTer { d, .. }
        | Op::Bfi { d, .. }
        | Op::Prmt { d, .. }
        | Op::Lop3 { d, .. }
        | Op::Shf { d, .. }
        | Op::FloatUn { d, .. }
        | Op::FloatBin { d, .. }
        | Op::Fma { d, .. }
        | Op::Cvt { d, .. }
        | Op::Slct { d, .. } => Some(*d),
        _ => None,
    }
}

/// The value sources of an operation evaluated by the client, in operand order.
fn sources(op: &Op) -> [Option<&Src>; 4] {
    match op {
        Op::IntUn { a, .. } | Op::FloatUn { a, .. } | Op::Cvt { a, .. } => [Some(a), None, None, None],
        Op::IntBin { a, b, .. } | Op::FloatBin { a, b, .. } => [Some(a), Some(b), None, None],
        Op::IntTer { a, b, c, .. }
        | Op::Prmt { a, b, c, .. }
        | Op::Lop3 { a, b, c, .. }
        | Op::Shf { a, b, c, .. }
        | Op::Fma { a, b, c, .. }
        | Op::Slct { a, b, c, .. } => [Some(a), Some(b), Some(c), None],
        Op::Bfi { a, b, c, e, .. } => [Some(a), Some(b), Some(c), Some(e)],
        _ => [None; 4],
    }
}
