//! The facts of every operation ([`reconverge_program::facts`]) derive exactly what the per-concern functions
//! they replaced computed: value and predicate reads and writes (the scoreboard's dependencies), classes,
//! straight-line runs, the JIT's choice of instructions and the timing model's opcode rows, for every
//! instruction of every PTX file of the repository and for synthetic operations of every variant with
//! every kind of operand. The functions below are the replaced ones, kept verbatim as the reference.

use reconverge_ir::{KnownModifier, ScalarType};
use reconverge_program::decode::{classify, pred_reads_writes, reads_writes};
use reconverge_program::facts::{facts, TimingSlot as Slot};
use reconverge_program::program::*;
use reconverge_program::{decode, function_points, DecodeOptions, Program};
use smallvec::{smallvec, SmallVec};
use std::path::{Path, PathBuf};

// ---- the replaced decoder functions ----
fn src_reg(s: &Src, out: &mut SmallVec<[Reg; 4]>) {
    if let Src::Reg(r) = s {
        out.push(*r);
    }
}

fn addr_reg(a: &Addr, out: &mut SmallVec<[Reg; 4]>) {
    if let AddrBase::Reg(r) | AddrBase::Reg32(r) = a.base {
        out.push(r);
    }
}

/// Value registers read and written by an operation (for the scoreboard and traces).
fn old_reads_writes(op: &Op) -> (SmallVec<[Reg; 4]>, SmallVec<[Reg; 2]>) {
    let mut r = SmallVec::new();
    let mut w = SmallVec::new();
    match op {
        Op::IntUn { d, a, .. } | Op::FloatUn { d, a, .. } | Op::Cvt { d, a, .. } | Op::Mov { d, a, .. } => {
            src_reg(a, &mut r);
            w.push(*d);
        }
        Op::IntBin { d, a, b, .. } | Op::FloatBin { d, a, b, .. } | Op::Selp { d, a, b, .. } => {
            src_reg(a, &mut r);
            src_reg(b, &mut r);
            w.push(*d);
        }
        Op::IntTer { d, a, b, c, .. }
        | Op::Carry { d, a, b, c, .. }
        | Op::Fma { d, a, b, c, .. }
        | Op::Prmt { d, a, b, c, .. }
        | Op::Lop3 { d, a, b, c, .. }
        | Op::Shf { d, a, b, c, .. }
        | Op::Slct { d, a, b, c, .. } => {
            for s in [a, b, c] {
                src_reg(s, &mut r);
            }
            w.push(*d);
        }
        Op::Bfi { d, a, b, c, e, .. } => {
            for s in [a, b, c, e] {
                src_reg(s, &mut r);
            }
            w.push(*d);
        }
        Op::Setp { a, b, .. } => {
            src_reg(a, &mut r);
            src_reg(b, &mut r);
        }
        Op::Testp { a, .. } | Op::Isspacep { a, .. } => src_reg(a, &mut r),
        Op::Set { d, a, b, .. } => {
            src_reg(a, &mut r);
            src_reg(b, &mut r);
            w.push(*d);
        }
        Op::Pack { d, parts, .. } => {
            parts.iter().for_each(|p| src_reg(p, &mut r));
            w.push(*d);
        }
        Op::Unpack { parts, s, .. } => {
            src_reg(s, &mut r);
            w.extend(parts.iter().flatten().copied());
        }
        Op::Ld { d, addr, .. } => {
            addr_reg(addr, &mut r);
            w.extend(d.iter().flatten().copied());
        }
        Op::St { s, addr, .. } => {
            addr_reg(addr, &mut r);
            s.iter().for_each(|x| src_reg(x, &mut r));
        }
        Op::Atom { d, addr, b, c, .. } => {
            addr_reg(addr, &mut r);
            src_reg(b, &mut r);
            src_reg(c, &mut r);
            w.extend(d.iter().copied());
        }
        Op::Tex { d, handle, coords, ignored, .. } => {
            [handle].into_iter().chain(coords).chain(ignored).for_each(|x| src_reg(x, &mut r));
            w.extend(d.iter().flatten().copied());
        }
        Op::Txq { d, handle, .. } => {
            src_reg(handle, &mut r);
            w.push(*d);
        }
        Op::Suld { d, handle, coords, .. } => {
            [handle].into_iter().chain(coords).for_each(|x| src_reg(x, &mut r));
            w.extend(d.iter().flatten().copied());
        }
        Op::Sust { s, handle, coords, .. } => {
            [handle].into_iter().chain(coords).chain(s).for_each(|x| src_reg(x, &mut r));
        }
        Op::Cvta { d, a, .. } => {
            src_reg(a, &mut r);
            w.push(*d);
        }
        Op::CpAsync { dst, src, src_size, group, .. } => {
            addr_reg(dst, &mut r);
            addr_reg(src, &mut r);
            src_size.iter().for_each(|x| src_reg(x, &mut r));
            w.push(*group);
        }
        Op::CpAsyncWait { group, wait: true } => r.push(*group),
        Op::Mbarrier { addr, d, a, .. } => {
            if let Some(addr) = addr {
                addr_reg(addr, &mut r);
            }
            src_reg(a, &mut r);
            w.extend(d.iter().copied());
        }
        Op::Elect { d, mask, .. } => {
            src_reg(mask, &mut r);
            w.extend(d.iter().copied());
        }
        Op::Mma { d, a, b, c, .. } => {
            a.iter().chain(b).chain(c).for_each(|x| src_reg(x, &mut r));
            w.extend(d.iter().copied());
        }
        Op::WmmaMma { d, a, b, c, .. } => {
            a.iter().chain(b).chain(c).for_each(|x| src_reg(x, &mut r));
            w.extend(d.iter().copied());
        }
        Op::Ldmatrix { d, addr, .. } => {
            addr_reg(addr, &mut r);
            w.extend(d.iter().copied());
        }
        Op::Stmatrix { s, addr, .. } => {
            addr_reg(addr, &mut r);
            s.iter().for_each(|x| src_reg(x, &mut r));
        }
        Op::Movmatrix { d, a } => {
            src_reg(a, &mut r);
            w.push(*d);
        }
        Op::WmmaLoad { d, addr, stride, .. } => {
            addr_reg(addr, &mut r);
            src_reg(stride, &mut r);
            w.extend(d.iter().copied());
        }
        Op::WmmaStore { s, addr, stride, .. } => {
            addr_reg(addr, &mut r);
            s.iter().for_each(|x| src_reg(x, &mut r));
            src_reg(stride, &mut r);
        }
        Op::Brx { index, .. } => src_reg(index, &mut r),
        Op::Bar { id, count, d, .. } => {
            src_reg(id, &mut r);
            if let Some(c) = count {
                src_reg(c, &mut r);
            }
            w.extend(d.iter().copied());
        }
        Op::Shfl { d, a, b, c, mask, .. } => {
            for s in [a, b, c, mask] {
                src_reg(s, &mut r);
            }
            w.extend(d.iter().copied());
        }
        Op::Vote { d, mask, .. } => {
            if let Some(m) = mask {
                src_reg(m, &mut r);
            }
            if let Src::Reg(x) = d {
                w.push(*x);
            }
        }
        Op::Activemask { d } => w.push(*d),
        Op::Match { d, a, mask, .. } => {
            src_reg(a, &mut r);
            src_reg(mask, &mut r);
            w.extend(d.iter().copied());
        }
        Op::Redux { d, a, mask, .. } => {
            src_reg(a, &mut r);
            src_reg(mask, &mut r);
            w.push(*d);
        }
        Op::WarpSync { mask } => src_reg(mask, &mut r),
        _ => {}
    }
    (r, w)
}

fn pred_src(p: &PredSrc, out: &mut SmallVec<[Pred; 2]>) {
    if let PredSrc::Reg(r, _) = p {
        out.push(*r);
    }
}

/// Predicates read and written by an operation (the guard is added by the caller).
fn old_pred_reads_writes(op: &Op) -> (SmallVec<[Pred; 2]>, SmallVec<[Pred; 2]>) {
    let mut r = SmallVec::new();
    let mut w = SmallVec::new();
    let src = |s: &Src, r: &mut SmallVec<[Pred; 2]>| {
        if let Src::Pred(p) = s {
            r.push(*p);
        }
    };
    match op {
        Op::Setp { p, q, a, b, comb, .. } => {
            src(a, &mut r);
            src(b, &mut r);
            if let Some((_, c)) = comb {
                pred_src(c, &mut r);
            }
            w.extend(p.iter().copied());
            w.extend(q.iter().copied());
        }
        Op::Set { comb: Some((_, c)), .. } => pred_src(c, &mut r),
        Op::Selp { c, .. } => pred_src(c, &mut r),
        Op::PredOp { d, a, b, .. } => {
            pred_src(a, &mut r);
            pred_src(b, &mut r);
            w.push(*d);
        }
        Op::Testp { p, .. } | Op::Isspacep { p, .. } => w.push(*p),
        Op::Vote { d, a, .. } => {
            pred_src(a, &mut r);
            if let Src::Pred(p) = d {
                w.push(*p);
            }
        }
        Op::Shfl { p, .. } | Op::Match { p, .. } => w.extend(p.iter().copied()),
        Op::Bar { p, c, .. } => {
            pred_src(c, &mut r);
            w.extend(p.iter().copied());
        }
        Op::Mov { a, .. } | Op::Cvt { a, .. } => src(a, &mut r),
        Op::Mbarrier { p, .. } | Op::Elect { p, .. } => w.extend(p.iter().copied()),
        _ => {}
    }
    (r, w)
}

/// The class of an operation.
fn old_classify(op: &Op) -> InstClass {
    match op {
        Op::IntUn { .. }
        | Op::IntBin { .. }
        | Op::IntTer { .. }
        | Op::Carry { .. }
        | Op::Bfi { .. }
        | Op::Prmt { .. }
        | Op::Lop3 { .. }
        | Op::Shf { .. }
        | Op::Setp { .. }
        | Op::Set { .. }
        | Op::Selp { .. }
        | Op::Slct { .. }
        | Op::Mov { .. }
        | Op::PredOp { .. }
        | Op::Pack { .. }
        | Op::Unpack { .. }
        | Op::Cvta { .. }
        | Op::Isspacep { .. }
        | Op::Testp { .. } => InstClass::Int,
        Op::FloatUn { op, ty, .. } => match op {
            FloatUnOp::Abs | FloatUnOp::Neg if *ty == ScalarType::F64 => InstClass::Double,
            FloatUnOp::Abs | FloatUnOp::Neg => InstClass::Float,
            _ => InstClass::Sfu,
        },
        Op::FloatBin { op: FloatBinOp::Div, .. } => InstClass::Sfu,
        Op::FloatBin { ty, .. } | Op::Fma { ty, .. } if *ty == ScalarType::F64 => InstClass::Double,
        Op::FloatBin { .. } | Op::Fma { .. } => InstClass::Float,
        Op::Cvt { dty, sty, .. } if *dty == ScalarType::F64 || *sty == ScalarType::F64 => InstClass::Double,
        // A conversion between integer types (`cvt.u64.u32`: a width change) is integer work; one to or from
        // a float is a float instruction.
        Op::Cvt { dty, sty, .. } if !dty.is_float() && !sty.is_float() => InstClass::Int,
        Op::Cvt { .. } => InstClass::Float,
        Op::Ld { .. }
        | Op::St { .. }
        | Op::Atom { .. }
        | Op::Tex { .. }
        | Op::Txq { .. }
        | Op::Suld { .. }
        | Op::Sust { .. } => InstClass::Mem,
        // `printf` stands in for the call it is: a control instruction with the latency of a branch.
        Op::Bra { .. }
        | Op::Brx { .. }
        | Op::Call { .. }
        | Op::Printf { .. }
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::FellOff => InstClass::Control,
        Op::Bar { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Activemask { .. }
        | Op::Match { .. }
        | Op::Redux { .. }
        | Op::WarpSync { .. } => InstClass::Sync,
        Op::Ssy { .. } | Op::Pbk { .. } | Op::Join | Op::Bssy { .. } | Op::Bsync { .. } | Op::Yield | Op::Syncwarp => {
            InstClass::Mechanism
        }
        // A `sync`/`brk` the SSY pass wrote over the kernel's own jump or branch stays the kernel's
        // instruction (the inserted ones are classed by `first_inserted`).
        Op::Sync | Op::Brk => InstClass::Control,
        Op::Fence { .. }
        | Op::Elect { .. }
        | Op::CpAsyncWait { wait: true, .. }
        | Op::Mma { .. }
        | Op::WmmaMma { .. }
        | Op::Movmatrix { .. } => InstClass::Sync,
        Op::CpAsync { .. }
        | Op::Mbarrier { addr: Some(_), .. }
        | Op::Ldmatrix { .. }
        | Op::Stmatrix { .. }
        | Op::WmmaLoad { .. }
        | Op::WmmaStore { .. } => InstClass::Mem,
        Op::Mbarrier { addr: None, .. } => InstClass::Int,
        Op::Nop | Op::Unsupported(_) | Op::CpAsyncWait { wait: false, .. } => InstClass::Nop,
    }
}

// ---- the replaced JIT eligibility ----
fn plain(s: &Src) -> bool {
    matches!(s, Src::Reg(_) | Src::Imm(_) | Src::Pred(_))
}

/// Whether `op` is a pure lane operation the compiler handles (inline or through the evaluators).
fn old_supported(op: &Op) -> bool {
    match op {
        Op::IntUn { a, .. } | Op::FloatUn { a, .. } | Op::Cvt { a, .. } | Op::Mov { a, .. } => plain(a),
        Op::IntBin { a, b, .. } | Op::FloatBin { a, b, .. } | Op::Selp { a, b, .. } | Op::Setp { a, b, .. } => {
            plain(a) && plain(b)
        }
        Op::IntTer { a, b, c, .. }
        | Op::Prmt { a, b, c, .. }
        | Op::Lop3 { a, b, c, .. }
        | Op::Shf { a, b, c, .. }
        | Op::Fma { a, b, c, .. }
        | Op::Slct { a, b, c, .. } => plain(a) && plain(b) && plain(c),
        Op::Bfi { a, b, c, e, .. } => plain(a) && plain(b) && plain(c) && plain(e),
        Op::PredOp { .. } => true,
        _ => false,
    }
}

// ---- the replaced timing slot ----
fn old_slot(op: &Op) -> (Slot, Option<ScalarType>) {
    match op {
        Op::IntBin { op, ty, .. } => {
            let s = match op {
                IntBinOp::Add | IntBinOp::AddSat | IntBinOp::Sub | IntBinOp::SubSat => Slot::Add,
                IntBinOp::Min | IntBinOp::Max => Slot::Max,
                IntBinOp::MulLo | IntBinOp::MulHi | IntBinOp::MulWide => Slot::Mul,
                IntBinOp::Div => Slot::Div,
                _ => Slot::Other,
            };
            (s, Some(*ty))
        }
        Op::IntTer { op, ty, .. } => {
            let s = match op {
                IntTerOp::MadLo | IntTerOp::MadHi | IntTerOp::MadHiSat | IntTerOp::MadWide => Slot::Mad,
                _ => Slot::Other,
            };
            (s, Some(*ty))
        }
        Op::Carry { ty, .. } => (Slot::Add, Some(*ty)),
        Op::FloatBin { op, ty, .. } => {
            let s = match op {
                FloatBinOp::Add | FloatBinOp::Sub => Slot::Add,
                FloatBinOp::Min | FloatBinOp::Max => Slot::Max,
                FloatBinOp::Mul => Slot::Mul,
                FloatBinOp::Div => Slot::Div,
                _ => Slot::Other,
            };
            (s, Some(*ty))
        }
        Op::FloatUn { op, ty, .. } => {
            let s = match op {
                FloatUnOp::Sqrt
                | FloatUnOp::Rcp
                | FloatUnOp::Rsqrt
                | FloatUnOp::Sin
                | FloatUnOp::Cos
                | FloatUnOp::Ex2
                | FloatUnOp::Lg2
                | FloatUnOp::Tanh => Slot::Sfu,
                _ => Slot::Other,
            };
            (s, Some(*ty))
        }
        Op::Shfl { .. } => (Slot::Shfl, None),
        Op::Mma { .. } | Op::WmmaMma { .. } => (Slot::Tensor, None),
        _ => (Slot::Other, None),
    }
}

/// The replaced test of [`Program::straight`]'s runs: whether the instruction at `pc` continues one.
fn old_plain(prog: &Program, pc: usize) -> bool {
    match prog.info[pc].class {
        InstClass::Int | InstClass::Float | InstClass::Double | InstClass::Sfu | InstClass::Mem => true,
        InstClass::Nop => matches!(prog.insts[pc].op, Op::Nop),
        InstClass::Control | InstClass::Sync | InstClass::Mechanism => false,
    }
}

/// [`Program::straight`] as the replaced code computed it.
fn old_straight_runs(prog: &Program) -> Vec<u16> {
    let n = prog.insts.len();
    let mut out = vec![0u16; n];
    for pc in (0..n).rev() {
        if !old_plain(prog, pc) {
            continue;
        }
        let same_block =
            |q: usize| q < n && prog.info[q].func == prog.info[pc].func && prog.info[q].block == prog.info[pc].block;
        out[pc] = if same_block(pc + 1) { out[pc + 1].saturating_add(1).max(1) } else { 1 };
    }
    out
}

/// Every fact of `op` agrees with the replaced functions.
fn same_facts(op: &Op, what: &str) {
    let f = facts(op);
    let (r, w) = old_reads_writes(op);
    let (pr, pw) = old_pred_reads_writes(op);
    assert_eq!((&f.reads, &f.writes), (&r, &w), "value registers of {what}: {op:?}");
    assert_eq!((&f.pred_reads, &f.pred_writes), (&pr, &pw), "predicates of {what}: {op:?}");
    assert_eq!(reads_writes(op), (r, w), "{what}: {op:?}");
    assert_eq!(pred_reads_writes(op), (pr, pw), "{what}: {op:?}");
    assert_eq!(f.class, old_classify(op), "class of {what}: {op:?}");
    assert_eq!(classify(op), old_classify(op), "{what}: {op:?}");
    assert_eq!(f.lane && f.srcs.iter().all(plain), old_supported(op), "JIT choice of {what}: {op:?}");
    assert_eq!((f.slot, f.slot_ty), old_slot(op), "timing slot of {what}: {op:?}");
    let continues = match f.class {
        InstClass::Int | InstClass::Float | InstClass::Double | InstClass::Sfu | InstClass::Mem => true,
        InstClass::Nop => matches!(op, Op::Nop),
        InstClass::Control | InstClass::Sync | InstClass::Mechanism => false,
    };
    assert_eq!(!f.ends_run, continues, "straight run of {what}: {op:?}");
}

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "target" && n != ".git") {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

#[test]
fn every_instruction_of_every_ptx_file_has_its_old_facts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for d in ["kernels", "crates", "python"] {
        ptx_files(&root.join(d), &mut files);
    }
    files.sort();
    let (mut programs, mut insts) = (0, 0);
    for path in &files {
        let Ok(src) = std::fs::read_to_string(path) else { continue };
        let Ok(m) = reconverge_ptx::parse(&src) else { continue };
        for k in m.kernels().collect::<Vec<_>>() {
            let opts = DecodeOptions { file: path.display().to_string(), ..Default::default() };
            let Ok(prog) = decode(&m, k, &|f| function_points(f, false), &opts) else { continue };
            for (pc, inst) in prog.insts.iter().enumerate() {
                same_facts(&inst.op, &format!("{} pc {pc}", path.display()));
                insts += 1;
            }
            assert_eq!(prog.straight, old_straight_runs(&prog), "straight runs of {}", path.display());
            programs += 1;
        }
    }
    eprintln!("compared {programs} programs, {insts} instructions");
    assert!(programs > 100 && insts > 10_000, "{programs} programs, {insts} instructions compared");
}

/// Every source kind in every operand position of every variant.
#[test]
fn every_variant_with_every_operand_kind_has_its_old_facts() {
    let fm = FMode { rnd: FRound::Rn, ftz: false, sat: false, nan: false };
    let addrs = [
        Addr { base: AddrBase::Reg(40), offset: 4 },
        Addr { base: AddrBase::Reg32(41), offset: 0 },
        Addr { base: AddrBase::Const(8), offset: 0 },
        Addr { base: AddrBase::Frame, offset: 16 },
    ];
    let preds = [PredSrc::Reg(7, false), PredSrc::Reg(8, true), PredSrc::Const(true)];
    let srcs = [Src::Reg(3), Src::Imm(5), Src::Sreg(Sreg::Laneid), Src::Pred(6), Src::LocalAddr(12)];
    let tys = [ScalarType::S32, ScalarType::U64, ScalarType::F32, ScalarType::F64, ScalarType::F16];
    let mut ops: Vec<Op> = Vec::new();
    for (i, &s) in srcs.iter().enumerate() {
        let (a, b, c, e) = (s, srcs[(i + 1) % 5], srcs[(i + 2) % 5], srcs[(i + 3) % 5]);
        let p = preds[i % 3];
        let addr = addrs[i % 4];
        for &ty in &tys {
            for op in [IntUnOp::Abs, IntUnOp::Popc, IntUnOp::BfindShiftAmt] {
                ops.push(Op::IntUn { op, ty, d: 1, a });
            }
            for op in [
                IntBinOp::Add,
                IntBinOp::AddSat,
                IntBinOp::Sub,
                IntBinOp::SubSat,
                IntBinOp::MulLo,
                IntBinOp::MulHi,
                IntBinOp::MulWide,
                IntBinOp::Mul24Lo,
                IntBinOp::Mul24Hi,
                IntBinOp::Div,
                IntBinOp::Rem,
                IntBinOp::Min,
                IntBinOp::Max,
                IntBinOp::And,
                IntBinOp::Shl,
                IntBinOp::SzextWrap,
            ] {
                ops.push(Op::IntBin { op, ty, d: 1, a, b });
            }
            for op in [
                IntTerOp::MadLo,
                IntTerOp::MadHi,
                IntTerOp::MadHiSat,
                IntTerOp::MadWide,
                IntTerOp::Mad24Lo,
                IntTerOp::Bfe,
                IntTerOp::Sad,
                IntTerOp::Dp4a(true, false),
                IntTerOp::Dp2a(false, true, true),
            ] {
                ops.push(Op::IntTer { op, ty, d: 1, a, b, c });
            }
            for op in [CarryOp::Add, CarryOp::MadHi] {
                ops.push(Op::Carry { op, ty, cin: true, cout: false, d: 1, a, b, c });
            }
            for op in [
                FloatUnOp::Abs,
                FloatUnOp::Neg,
                FloatUnOp::Sqrt,
                FloatUnOp::Rcp,
                FloatUnOp::Rsqrt,
                FloatUnOp::Sin,
                FloatUnOp::Cos,
                FloatUnOp::Ex2,
                FloatUnOp::Lg2,
                FloatUnOp::Tanh,
            ] {
                ops.push(Op::FloatUn { op, ty, mode: fm, d: 1, a });
            }
            for op in [
                FloatBinOp::Add,
                FloatBinOp::Sub,
                FloatBinOp::Mul,
                FloatBinOp::Div,
                FloatBinOp::Min,
                FloatBinOp::Max,
                FloatBinOp::Copysign,
            ] {
                ops.push(Op::FloatBin { op, ty, mode: fm, d: 1, a, b });
            }
            ops.push(Op::Fma { ty, mode: fm, d: 1, a, b, c });
            ops.push(Op::Bfi { ty, d: 1, a, b, c, e });
            for &sty in &tys {
                ops.push(Op::Cvt { dty: ty, sty, rnd: None, ftz: false, sat: false, dst_bits: 32, d: 1, a });
                ops.push(Op::Set { cmp: Cmp::Lt, dty: ty, sty, d: 1, a, b, comb: Some((BoolOp::And, p)) });
            }
            ops.push(Op::Testp {
                op: KnownModifier::Abs,
                test: reconverge_ir::Modifier::Known(KnownModifier::Abs),
                ty,
                p: 2,
                a,
            });
            ops.push(Op::Setp { cmp: Cmp::Eq, ty, p: Some(2), q: None, a, b, comb: None });
            ops.push(Op::Setp { cmp: Cmp::Ne, ty, p: Some(2), q: Some(9), a, b, comb: Some((BoolOp::Or, p)) });
            ops.push(Op::Set { cmp: Cmp::Lt, dty: ty, sty: ty, d: 1, a, b, comb: None });
            ops.push(Op::Slct { sty: ty, d: 1, a, b, c });
            ops.push(Op::Ld {
                space: Space::Global,
                ty,
                d: smallvec![Some(1), None, Some(2)],
                addr,
                dst_bits: 32,
                volatile: false,
            });
            ops.push(Op::St { space: Space::Shared, ty, s: smallvec![a, b], addr });
            ops.push(Op::Atom { space: Space::Global, op: AtomOp::Cas, ty, d: Some(1), addr, b, c });
            ops.push(Op::Atom { space: Space::Global, op: AtomOp::Add, ty, d: None, addr, b, c });
            ops.push(Op::Match { all: true, ty, d: Some(1), p: Some(2), a, mask: b });
            ops.push(Op::Match { all: false, ty, d: None, p: None, a, mask: b });
            ops.push(Op::Redux { op: ReduxOp::Add, ty, d: 1, a, mask: b });
        }
        ops.push(Op::Prmt { mode: None, d: 1, a, b, c });
        ops.push(Op::Lop3 { d: 1, a, b, c, lut: 0x96 });
        ops.push(Op::Shf { left: true, clamp: false, d: 1, a, b, c });
        ops.push(Op::Selp { d: 1, a, b, c: p });
        ops.push(Op::Mov { d: 1, a, bits: 32 });
        ops.push(Op::PredOp { op: Some(BoolOp::Xor), not: false, d: 2, a: p, b: preds[(i + 1) % 3] });
        ops.push(Op::PredOp { op: None, not: true, d: 2, a: p, b: PredSrc::Const(false) });
        ops.push(Op::Pack { d: 1, parts: smallvec![a, b, c], elem_bits: 16 });
        ops.push(Op::Unpack { parts: smallvec![Some(1), None, Some(2)], s: a, elem_bits: 16 });
        ops.push(Op::Cvta { to_generic: true, space: Space::Shared, d: 1, a });
        ops.push(Op::Isspacep { space: Space::Global, p: 2, a });
        ops.push(Op::Brx { index: a, targets: vec![1, 2].into() });
        ops.push(Op::Bar { kind: BarKind::RedPopc, id: a, count: Some(b), d: Some(1), p: Some(2), c: p });
        ops.push(Op::Bar { kind: BarKind::Sync, id: a, count: None, d: None, p: None, c: p });
        ops.push(Op::Shfl { mode: ShflMode::Idx, d: Some(1), p: Some(2), a, b, c, mask: e });
        ops.push(Op::Shfl { mode: ShflMode::Up, d: None, p: None, a, b, c, mask: e });
        ops.push(Op::Vote { mode: VoteMode::Ballot, d: a, a: p, mask: Some(b) });
        ops.push(Op::Vote { mode: VoteMode::Any, d: b, a: p, mask: None });
        ops.push(Op::WarpSync { mask: a });
    }
    ops.extend([
        Op::Activemask { d: 1 },
        Op::Bra { target: 3 },
        Op::Call { callee: 1, args: SmallVec::new(), rets: SmallVec::new() },
        Op::Printf { format: 0, args: 8, ret: Some(16) },
        Op::Ret,
        Op::Exit,
        Op::Trap,
        Op::Ssy { target: 4 },
        Op::Sync,
        Op::Pbk { target: 4 },
        Op::Brk,
        Op::Join,
        Op::Bssy { target: 4 },
        Op::Bsync { target: 4 },
        Op::Yield,
        Op::Syncwarp,
        Op::Fence { scope: FenceScope::Gpu },
        Op::Nop,
        Op::FellOff,
        Op::Unsupported("x".into()),
    ]);
    for op in &ops {
        same_facts(op, "a synthetic operation");
    }
}
