//! Decoding an IR module into a [`Program`].

use crate::facts::{facts, OpFacts};
use crate::layout::{
    Placer, CONST_WINDOW, FUNC_ADDR_BASE, GLOBAL_BASE, GLOBAL_END, MAX_GLOBAL_VARIABLE, PARAM_WINDOW, SHARED_WINDOW,
    WINDOW_SIZE,
};
use crate::program::*;
use crate::types::{Pc, PC_EXIT, PC_NONE, PC_RET};
use reconverge_ir::{
    AddrBase as IrBase, EntityRef, FuncId, FuncKind, Function, Imm, InitValue, Initializer, InstId, KnownModifier as K,
    Modifier, Module, Opcode, Operand, ScalarType, SpecialRegKind, StateSpace, Symbol, Variable,
};
use smallvec::SmallVec;
use std::collections::HashMap;

/// Why a module cannot be turned into a program.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// No kernel of that name.
    #[error("no kernel named `{name}` in the module (kernels: {available})")]
    NoSuchKernel {
        /// The requested name.
        name: String,
        /// The kernels that exist.
        available: String,
    },
    /// The module has no kernel at all.
    #[error("the module defines no kernel (.entry with a body)")]
    NoKernel,
    /// The module has several kernels and none was chosen.
    #[error("the module defines several kernels ({available}); choose one with --kernel")]
    AmbiguousKernel {
        /// The kernels that exist.
        available: String,
    },
    /// `--kernel NAME` names several kernels (overloads or templates with the same name).
    #[error("`{name}` names several kernels ({candidates}); give the full signature or the mangled name")]
    AmbiguousName {
        /// The requested name.
        name: String,
        /// The kernels it matches.
        candidates: String,
    },
    /// A variable initializer that cannot be laid out.
    #[error("cannot lay out variable `{name}`: {why}")]
    BadVariable {
        /// The variable.
        name: String,
        /// The reason.
        why: String,
    },
}

/// Options for [`decode`].
#[derive(Clone, Debug, Default)]
pub struct DecodeOptions {
    /// The PTX file name (for messages).
    pub file: String,
    /// The PTX source text (for line numbers), if available.
    pub source: Option<String>,
    /// Instructions a mechanism's compiler pass inserted: for a function, every instruction whose id is at
    /// or above the count given here (a pass appends new instructions and rewrites the kernel's own in
    /// place). They are decoded with class [`InstClass::Mechanism`].
    pub first_inserted: Vec<(FuncId, usize)>,
    /// Attach seed 004's scalarization plan ([`crate::Program::scalar`]; computed by the simulator's `load` on
    /// the module before the mechanism's pass).
    pub scalarize: bool,
}

/// Picks the kernel to run: `name` if given (its mangled name, its demangled signature
/// `Kernel2(bool*, int)`, or its demangled name `Kernel2` when that is unambiguous), else the only kernel.
pub fn select_kernel(module: &Module, name: Option<&str>) -> Result<FuncId, DecodeError> {
    let kernels: Vec<FuncId> = module.kernels().collect();
    let list = |ids: &[FuncId]| {
        ids.iter()
            .map(|k| reconverge_ir::names::display_name(&module.functions[*k].name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        Some(n) => {
            let found = reconverge_ir::names::resolve(module, kernels.iter().copied(), n);
            match found.as_slice() {
                [one] => Ok(*one),
                [] => Err(DecodeError::NoSuchKernel { name: n.to_string(), available: list(&kernels) }),
                several => Err(DecodeError::AmbiguousName { name: n.to_string(), candidates: list(several) }),
            }
        }
        None => match kernels.len() {
            0 => Err(DecodeError::NoKernel),
            1 => Ok(kernels[0]),
            _ => Err(DecodeError::AmbiguousKernel { available: list(&kernels) }),
        },
    }
}

/// One conditional branch of a function and where its lanes reconverge.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct BranchPoint {
    /// The branch instruction.
    pub inst: InstId,
    /// The reconvergence block (`None` = the function's virtual exit).
    pub reconvergence: Option<reconverge_ir::BlockId>,
    /// Whether a loop holds the branch but not its reconvergence block: lanes waiting there wait for
    /// lanes still iterating (a spin lock's exit).
    pub leaves_loop: bool,
    /// The likely-convergence block ([`reconverge_analysis::likely_convergence`]) of a branch that can leave
    /// its loop: where the lanes that stay in the loop meet (TBC's and CAPRI's LPC variants wait there).
    pub likely: Option<reconverge_ir::BlockId>,
    /// Whether the branch's region is a properly nested single-entry single-exit region
    /// ([`reconverge_analysis::structured_branches`]; the `hybrid` traversal's test).
    pub structured: bool,
}

/// What the control-flow analyses tell the decoder about one function.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct FunctionPoints {
    /// Every conditional branch and where it reconverges.
    pub branches: Vec<BranchPoint>,
    /// The reachable blocks in thread-frontier priority order, highest first
    /// ([`reconverge_analysis::frontier_order`]).
    pub frontier_order: Vec<reconverge_ir::BlockId>,
    /// The blocks seed 004's analysis (CA+VA) cannot prove convergent.
    pub divergent_blocks: Vec<reconverge_ir::BlockId>,
}

/// The [`FunctionPoints`] of a function. Supplied by the caller from the control-flow analyses.
pub type ReconvergenceFn<'a> = dyn Fn(&Function) -> FunctionPoints + 'a;

/// Decodes `kernel` and every function with a body into a [`Program`].
pub fn decode(
    module: &Module,
    kernel: FuncId,
    reconv: &ReconvergenceFn<'_>,
    opts: &DecodeOptions,
) -> Result<Program, DecodeError> {
    let mut d = Decoder::new(module, kernel, opts)?;
    d.run(reconv)?;
    Ok(d.finish())
}

struct FuncCtx {
    /// IR reg index → (is_pred, global index)
    regs: Vec<(bool, u32)>,
    /// IR local index → placement
    locals: Vec<LocalPlace>,
    /// block index → pc of first instruction (or next non-empty block)
    block_pc: Vec<Pc>,
}

#[derive(Clone, Copy, Debug)]
enum LocalPlace {
    /// Frame offset (local and param staging variables).
    Frame(u32),
    /// Shared-space offset.
    Shared(u64),
    /// Constant-bank offset.
    Const(u64),
}

struct Decoder<'m> {
    m: &'m Module,
    order: Vec<FuncId>,
    func_index: HashMap<FuncId, u32>,
    prog: Program,
    ctxs: Vec<FuncCtx>,
    global_addr: HashMap<reconverge_ir::GlobalId, (StateSpace, u64)>,
    line_starts: Vec<usize>,
    opts_first_inserted: Vec<(FuncId, usize)>,
}

fn var_size(v: &Variable) -> u64 {
    v.size_bytes()
}

/// Places variable `name` of `size` bytes aligned to `align` in `space` (named `what` in the message): its
/// offset, or an error when it does not fit the space.
fn place_var(space: &mut Placer, name: &str, size: u64, align: u64, what: &str) -> Result<u64, DecodeError> {
    space.place(size, align.max(1)).ok_or_else(|| DecodeError::BadVariable {
        name: name.to_string(),
        why: format!(
            "{size} bytes (aligned to {align}) after {} bytes do not fit the {what} of {} bytes",
            space.used(),
            space.limit()
        ),
    })
}

/// Places `.global` variable `name` of `size` bytes aligned to `align` after `next`, between guard regions:
/// its address and the next free address; an error when it is larger than any allocation the layout
/// places ([`MAX_GLOBAL_VARIABLE`]) or the module's variables would run past [`GLOBAL_END`].
fn place_global(next: u64, name: &str, size: u64, align: u64) -> Result<(u64, u64), DecodeError> {
    let (addr, end) = crate::layout::place_allocation(next, size, align);
    if size > MAX_GLOBAL_VARIABLE || end > GLOBAL_END {
        return Err(DecodeError::BadVariable {
            name: name.to_string(),
            why: format!(
                "{size} bytes: a module's .global variables hold at most {MAX_GLOBAL_VARIABLE} bytes each and end \
                 before {GLOBAL_END:#x}"
            ),
        });
    }
    Ok((addr, end))
}

/// A variable placed at `addr` (contents filled in later from its initializer).
fn placed(v: &Variable, name: String, addr: u64) -> PlacedVar {
    PlacedVar {
        name,
        addr,
        size: var_size(v),
        init: Vec::new(),
        ty: v.ty,
        scalar: v.dims.is_empty() && v.vector.is_none(),
        align: v.alignment().max(1),
    }
}

fn sreg(kind: SpecialRegKind, dim: Option<reconverge_ir::Dim>) -> Sreg {
    let d = dim.map(|d| d.index() as u8).unwrap_or(0);
    match kind {
        SpecialRegKind::Tid => Sreg::Tid(d),
        SpecialRegKind::Ntid => Sreg::Ntid(d),
        SpecialRegKind::Ctaid => Sreg::Ctaid(d),
        SpecialRegKind::Nctaid => Sreg::Nctaid(d),
        SpecialRegKind::Laneid => Sreg::Laneid,
        SpecialRegKind::Warpid => Sreg::Warpid,
        SpecialRegKind::Nwarpid => Sreg::Nwarpid,
        SpecialRegKind::Smid => Sreg::Smid,
        SpecialRegKind::Nsmid => Sreg::Nsmid,
        SpecialRegKind::Gridid => Sreg::Gridid,
        SpecialRegKind::Clock => Sreg::Clock,
        SpecialRegKind::ClockHi => Sreg::ClockHi,
        SpecialRegKind::Clock64 => Sreg::Clock64,
        SpecialRegKind::Globaltimer => Sreg::Globaltimer,
        SpecialRegKind::LanemaskEq => Sreg::LanemaskEq,
        SpecialRegKind::LanemaskLe => Sreg::LanemaskLe,
        SpecialRegKind::LanemaskLt => Sreg::LanemaskLt,
        SpecialRegKind::LanemaskGe => Sreg::LanemaskGe,
        SpecialRegKind::LanemaskGt => Sreg::LanemaskGt,
        SpecialRegKind::DynamicSmemSize => Sreg::DynamicSmemSize,
        SpecialRegKind::TotalSmemSize => Sreg::TotalSmemSize,
        SpecialRegKind::WarpSize => Sreg::WarpSize,
    }
}

fn imm_for(imm: Imm, ty: Option<ScalarType>) -> u64 {
    match (imm, ty) {
        (Imm::Int(v), _) => v as u64,
        (Imm::F32(b), Some(ScalarType::F64)) => (f32::from_bits(b) as f64).to_bits(),
        (Imm::F32(b), _) => b as u64,
        (Imm::F64(b), Some(ScalarType::F32)) => (f64::from_bits(b) as f32).to_bits() as u64,
        (Imm::F64(b), _) => b,
    }
}

fn reg_bits(ty: ScalarType) -> u32 {
    ty.bits().max(8)
}

fn cmp_of(m: &Modifier) -> Option<Cmp> {
    let Modifier::Known(k) = m else { return None };
    Some(match k {
        K::Eq => Cmp::Eq,
        K::Ne => Cmp::Ne,
        K::Lt => Cmp::Lt,
        K::Le => Cmp::Le,
        K::Gt => Cmp::Gt,
        K::Ge => Cmp::Ge,
        K::Lo => Cmp::Lo,
        K::Ls => Cmp::Ls,
        K::Hi => Cmp::Hi,
        K::Hs => Cmp::Hs,
        K::Equ => Cmp::Equ,
        K::Neu => Cmp::Neu,
        K::Ltu => Cmp::Ltu,
        K::Leu => Cmp::Leu,
        K::Gtu => Cmp::Gtu,
        K::Geu => Cmp::Geu,
        K::Num => Cmp::Num,
        K::Nan => Cmp::Nan,
        _ => return None,
    })
}

fn bool_of(m: &Modifier) -> Option<BoolOp> {
    match m {
        Modifier::Known(K::And) => Some(BoolOp::And),
        Modifier::Known(K::Or) => Some(BoolOp::Or),
        Modifier::Known(K::Xor) => Some(BoolOp::Xor),
        _ => None,
    }
}

/// Why one instruction cannot be decoded. It is not an error of the load: the instruction decodes to
/// [`Op::Unsupported`] with this message, which traps only if a thread executes it.
#[derive(Clone, PartialEq, Eq, Debug, thiserror::Error)]
pub enum Unsupported {
    /// A form the decoder rejects, described in a fixed phrase ("setp needs a comparison").
    #[error("{0}")]
    Form(&'static str),
    /// An operand of the wrong kind.
    #[error("expected {expected}, found {found}")]
    Operand {
        /// What the instruction needs there.
        expected: &'static str,
        /// What it has (the IR operand).
        found: String,
    },
    /// An instruction without the type it needs.
    #[error("`{0}` needs a type")]
    NeedsType(String),
    /// An instruction with too few operands.
    #[error("`{opcode}` needs {n} operands")]
    NeedsOperands {
        /// The opcode.
        opcode: String,
        /// Operands it needs.
        n: usize,
    },
    /// A symbol used where it cannot be.
    #[error("symbol {symbol} used as {role}")]
    Symbol {
        /// The symbol (IR form).
        symbol: String,
        /// `a value`, `an address`.
        role: &'static str,
    },
    /// The address of a function without a body.
    #[error("address of function `{0}` without a body")]
    BodilessAddress(String),
    /// An atomic operation on a type the executor does not have.
    #[error("atom on .{0} is not supported")]
    AtomType(&'static str),
    /// An opcode the IR does not know.
    #[error("unknown instruction `{0}`")]
    UnknownOpcode(String),
    /// A known opcode with modifiers or types the executor does not implement.
    #[error("`{0}` with these modifiers/types is not supported")]
    Modifiers(String),
    /// A call to a function without a body.
    #[error("call to `{0}`, which has no body (external functions are not supported)")]
    ExternalCall(String),
    /// A call whose arguments or return values do not match the callee.
    #[error("call to `{callee}` passes {args} arguments and {rets} return values; it takes {params} and {returns}")]
    CallArity {
        /// The callee.
        callee: String,
        /// Arguments passed.
        args: usize,
        /// Return values received.
        rets: usize,
        /// Parameters it takes.
        params: usize,
        /// Values it returns.
        returns: usize,
    },
}

impl From<&'static str> for Unsupported {
    fn from(s: &'static str) -> Unsupported {
        Unsupported::Form(s)
    }
}

type DResult<T> = Result<T, Unsupported>;

/// The function pass 2 of the decoder is in: its index in decoding order, its IR id and body, and the
/// printer of its instructions' text.
struct InFunction<'a> {
    fi: usize,
    fid: FuncId,
    f: &'a Function,
    printer: reconverge_ir::InstPrinter<'a>,
}

/// One family of opcodes: the instruction decoded, or `None` when the family has no arm for it.
type Family<'m> = fn(&Decoder<'m>, &At<'_>) -> DResult<Option<Op>>;

/// The instruction being decoded: its function (index in decoding order and body), the instruction, and
/// its data type.
struct At<'a> {
    fi: usize,
    f: &'a Function,
    inst: &'a reconverge_ir::Inst,
    ty: Option<ScalarType>,
}

impl At<'_> {
    /// The instruction's type, which it needs.
    fn t(&self) -> DResult<ScalarType> {
        self.ty.ok_or_else(|| Unsupported::NeedsType(self.inst.opcode.to_string()))
    }

    /// At least `n` operands.
    fn need(&self, n: usize) -> DResult<()> {
        if self.inst.operands.len() < n {
            Err(Unsupported::NeedsOperands { opcode: self.inst.opcode.to_string(), n })
        } else {
            Ok(())
        }
    }

    /// Whether the instruction is of a floating-point type.
    fn is_float(&self) -> bool {
        self.ty.is_some_and(|t| t.is_float())
    }

    /// Whether the instruction is of the predicate type.
    fn is_pred(&self) -> bool {
        self.ty == Some(ScalarType::Pred)
    }
}

/// Where pass 1 of the decoder stands: the next pc, value register and predicate register.
#[derive(Default)]
struct Cursor {
    pc: Pc,
    reg: u32,
    pred: u32,
}

impl<'m> Decoder<'m> {
    fn new(m: &'m Module, kernel: FuncId, opts: &DecodeOptions) -> Result<Self, DecodeError> {
        // Kernel first, then every other function with a body (in module order).
        let mut order = vec![kernel];
        for (id, f) in m.functions.iter() {
            if id != kernel && f.has_body && f.kind == FuncKind::Func {
                order.push(id);
            }
        }
        let func_index = order.iter().enumerate().map(|(i, f)| (*f, i as u32)).collect();
        let line_starts = match &opts.source {
            Some(s) => std::iter::once(0).chain(s.match_indices('\n').map(|(i, _)| i + 1)).collect(),
            None => Vec::new(),
        };
        let prog = Program {
            insts: Vec::new(),
            info: Vec::new(),
            functions: Vec::new(),
            reconv: Vec::new(),
            leaves_loop: Vec::new(),
            likely: Vec::new(),
            frontier_rank: Vec::new(),
            divergent: Vec::new(),
            structured: Vec::new(),
            straight: Vec::new(),
            scalar: None,
            branches: Vec::new(),
            nregs: 0,
            npreds: 0,
            params: Vec::new(),
            param_size: 0,
            globals: Vec::new(),
            consts: Vec::new(),
            const_size: 0,
            shared: Vec::new(),
            static_shared: 0,
            uses_dynamic_shared: false,
            file: opts.file.clone(),
            src_files: m.files.iter().map(|f| (f.index, f.path.clone())).collect(),
        };
        let mut d = Decoder {
            m,
            order,
            func_index,
            prog,
            ctxs: Vec::new(),
            global_addr: HashMap::new(),
            line_starts,
            opts_first_inserted: opts.first_inserted.clone(),
        };
        d.place_module_vars()?;
        Ok(d)
    }

    fn line_of(&self, offset: u32) -> u32 {
        if self.line_starts.is_empty() {
            return 0;
        }
        match self.line_starts.binary_search(&(offset as usize)) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    /// Places module-level `.global`, `.const` and `.shared` variables.
    fn place_module_vars(&mut self) -> Result<(), DecodeError> {
        let mut global_next = GLOBAL_BASE;
        let mut consts = Placer::new(0, WINDOW_SIZE);
        // Static shared memory is a 32-bit size (`Program::static_shared`).
        let mut shared = Placer::new(0, u64::from(u32::MAX));
        let mut dynamic_shared = Vec::new();
        for (gid, v) in self.m.globals.iter() {
            let size = var_size(v);
            let align = v.alignment().max(1);
            match v.space {
                StateSpace::Global => {
                    let (addr, next) = place_global(global_next, &v.name, size, align)?;
                    global_next = next;
                    self.global_addr.insert(gid, (StateSpace::Global, addr));
                    self.prog.globals.push(placed(v, v.name.clone(), addr));
                }
                StateSpace::Const => {
                    let addr = place_var(&mut consts, &v.name, size, align, ".const bank")?;
                    self.global_addr.insert(gid, (StateSpace::Const, addr));
                    self.prog.consts.push(placed(v, v.name.clone(), addr));
                }
                StateSpace::Shared => {
                    if v.dims.iter().any(|d| d.is_none()) {
                        dynamic_shared.push(gid);
                        continue;
                    }
                    let addr = place_var(&mut shared, &v.name, size, align, ".shared space")?;
                    self.global_addr.insert(gid, (StateSpace::Shared, addr));
                    self.prog.shared.push(placed(v, v.name.clone(), addr));
                }
                _ => {}
            }
        }
        // Function-scope shared variables are per-CTA too.
        let order = self.order.clone();
        for &fid in &order {
            for (_, v) in self.m.functions[fid].locals.iter() {
                let name = format!("{}::{}", self.m.functions[fid].name, v.name);
                if v.space == StateSpace::Shared && !v.dims.iter().any(|d| d.is_none()) {
                    let addr = place_var(&mut shared, &name, var_size(v), v.alignment().max(1), ".shared space")?;
                    self.prog.shared.push(placed(v, name, addr));
                } else if v.space == StateSpace::Const {
                    let addr = place_var(&mut consts, &name, var_size(v), v.alignment().max(1), ".const bank")?;
                    self.prog.consts.push(placed(v, name, addr));
                }
            }
        }
        let dyn_base = place_var(&mut shared, "dynamic shared memory", 0, 16, ".shared space")?;
        for gid in dynamic_shared {
            self.global_addr.insert(gid, (StateSpace::Shared, dyn_base));
            self.prog.uses_dynamic_shared = true;
        }
        // The placer's limit keeps it within 32 bits.
        self.prog.static_shared = dyn_base as u32;
        self.prog.const_size = consts.used();
        // Initializers (after placement, so address initializers resolve).
        let mut gi = 0;
        let mut ci = 0;
        for (_, v) in self.m.globals.iter() {
            let target = match v.space {
                StateSpace::Global => {
                    gi += 1;
                    Some((true, gi - 1))
                }
                StateSpace::Const => {
                    ci += 1;
                    Some((false, ci - 1))
                }
                _ => None,
            };
            if let (Some((is_global, idx)), Some(init)) = (target, &v.init) {
                // Only the initialized prefix is materialized; the rest is zero-filled when the launch
                // sets up memory (after its memory limit is checked).
                let bytes = self.write_init(v, init)?;
                if is_global {
                    self.prog.globals[idx].init = bytes;
                } else {
                    self.prog.consts[idx].init = bytes;
                }
            }
        }
        Ok(())
    }

    /// The bytes of `v`'s initializer (as many as it has values; the variable may be longer).
    fn write_init(&self, v: &Variable, init: &Initializer) -> Result<Vec<u8>, DecodeError> {
        let elem = v.ty.bytes() as usize;
        let mut values = Vec::new();
        fn flatten<'a>(i: &'a Initializer, out: &mut Vec<&'a InitValue>) {
            match i {
                Initializer::Value(v) => out.push(v),
                Initializer::List(items) => items.iter().for_each(|x| flatten(x, out)),
            }
        }
        flatten(init, &mut values);
        let size = var_size(v);
        let needed = values.len().saturating_mul(elem);
        if needed as u64 > size {
            return Err(DecodeError::BadVariable {
                name: v.name.clone(),
                why: format!("{} initializer values for {size} bytes", values.len()),
            });
        }
        let mut out = vec![0u8; needed];
        for (i, val) in values.iter().enumerate() {
            let bits = match val {
                InitValue::Imm(imm) => imm_for(*imm, Some(v.ty)),
                InitValue::Addr { sym, generic, offset } => {
                    let base = match sym {
                        Symbol::Global(g) => match self.global_addr.get(g) {
                            Some((StateSpace::Global, a)) => *a,
                            Some((StateSpace::Const, a)) => {
                                if *generic {
                                    CONST_WINDOW + a
                                } else {
                                    *a
                                }
                            }
                            Some((StateSpace::Shared, a)) => {
                                if *generic {
                                    SHARED_WINDOW + a
                                } else {
                                    *a
                                }
                            }
                            _ => 0,
                        },
                        Symbol::Func(f) => FUNC_ADDR_BASE + *self.func_index.get(f).unwrap_or(&u32::MAX) as u64,
                        _ => 0,
                    };
                    base.wrapping_add(*offset as u64)
                }
            };
            let at = i * elem;
            out[at..at + elem].copy_from_slice(&bits.to_le_bytes()[..elem]);
        }
        Ok(out)
    }

    fn run(&mut self, reconv: &ReconvergenceFn<'_>) -> Result<(), DecodeError> {
        // Pass 1: register windows, frames, pcs of blocks.
        let order = self.order.clone();
        let mut cursor = Cursor::default();
        for (fi, &fid) in order.iter().enumerate() {
            self.lay_out_function(fi, fid, &mut cursor)?;
        }
        let pc = cursor.pc;
        self.prog.nregs = cursor.reg;
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
    fn lay_out_function(&mut self, fi: usize, fid: FuncId, cursor: &mut Cursor) -> Result<(), DecodeError> {
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
    fn decode_function(&mut self, fi: usize, fid: FuncId, reconv: &ReconvergenceFn<'_>) {
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
    fn decode_one(&mut self, at: &InFunction<'_>, b: reconverge_ir::BlockId, i: InstId, pc: Pc) {
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
    fn mark_points(&mut self, fi: usize, f: &Function, reconv: &ReconvergenceFn<'_>, inst_pc: &HashMap<InstId, Pc>) {
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
    fn rank_blocks(&mut self, fi: usize, f: &Function, order: &[reconverge_ir::BlockId]) {
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

    fn finish(mut self) -> Program {
        self.prog.leaves_loop.sort_unstable();
        self.prog.likely.sort_unstable();
        self.prog.straight = straight_runs(&self.prog);
        self.prog
    }

    // ----- operand helpers -----

    fn reg(&self, fi: usize, op: &Operand) -> DResult<Reg> {
        match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (false, idx) => Ok(idx),
                (true, _) => Err("a predicate register where a value register is expected".into()),
            },
            other => Err(Unsupported::Operand { expected: "a register", found: format!("{other:?}") }),
        }
    }

    fn opt_reg(&self, fi: usize, op: &Operand) -> DResult<Option<Reg>> {
        match op {
            Operand::Sink => Ok(None),
            _ => self.reg(fi, op).map(Some),
        }
    }

    fn pred(&self, fi: usize, op: &Operand) -> DResult<Pred> {
        match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (true, idx) => Ok(idx),
                (false, _) => Err("a value register where a predicate is expected".into()),
            },
            other => Err(Unsupported::Operand { expected: "a predicate", found: format!("{other:?}") }),
        }
    }

    fn pred_src(&self, fi: usize, op: &Operand) -> DResult<PredSrc> {
        match op {
            Operand::Reg(r) => Ok(PredSrc::Reg(self.pred(fi, &Operand::Reg(*r))?, false)),
            Operand::NotReg(r) => Ok(PredSrc::Reg(self.pred(fi, &Operand::Reg(*r))?, true)),
            Operand::Imm(Imm::Int(v)) => Ok(PredSrc::Const(*v != 0)),
            other => Err(Unsupported::Operand { expected: "a predicate operand", found: format!("{other:?}") }),
        }
    }

    fn sym_value(&self, fi: usize, f: &Function, sym: Symbol) -> DResult<Src> {
        Ok(match sym {
            Symbol::Global(g) => match self.global_addr.get(&g) {
                Some((_, a)) => Src::Imm(*a),
                None => return Err("address of a variable in an unsupported state space".into()),
            },
            Symbol::Local(l) => match self.ctxs[fi].locals[l.index()] {
                LocalPlace::Frame(off) => Src::LocalAddr(off),
                LocalPlace::Shared(a) | LocalPlace::Const(a) => Src::Imm(a),
            },
            Symbol::Param(n) => {
                if f.kind == FuncKind::Entry {
                    Src::Imm(self.prog.params.get(n as usize).map(|p| p.offset).unwrap_or(0) as u64)
                } else {
                    Src::LocalAddr(self.prog.functions[fi].param_offsets[n as usize])
                }
            }
            Symbol::Ret(n) => Src::LocalAddr(self.prog.functions[fi].ret_offsets[n as usize]),
            Symbol::Func(id) => match self.func_index.get(&id) {
                Some(i) => Src::Imm(FUNC_ADDR_BASE + *i as u64),
                None => return Err(Unsupported::BodilessAddress(self.m.functions[id].name.clone())),
            },
            other => return Err(Unsupported::Symbol { symbol: format!("{other:?}"), role: "a value" }),
        })
    }

    fn src(&self, fi: usize, f: &Function, op: &Operand, ty: Option<ScalarType>) -> DResult<Src> {
        Ok(match op {
            Operand::Reg(r) => match self.ctxs[fi].regs[r.index()] {
                (false, idx) => Src::Reg(idx),
                (true, idx) => Src::Pred(idx),
            },
            Operand::Imm(i) => Src::Imm(imm_for(*i, ty)),
            Operand::Special(s) => Src::Sreg(sreg(s.kind, s.dim)),
            Operand::Sym(sym) => self.sym_value(fi, f, *sym)?,
            other => return Err(Unsupported::Operand { expected: "a source operand", found: format!("{other:?}") }),
        })
    }

    /// Resolves an address operand and the access space.
    fn addr(&self, fi: usize, f: &Function, op: &Operand, declared: Option<StateSpace>) -> DResult<(Space, Addr)> {
        let Operand::Addr(a) = op else {
            return Err(Unsupported::Operand { expected: "an address", found: format!("{op:?}") });
        };
        let is_kernel = f.kind == FuncKind::Entry;
        let space_of = |s: Option<StateSpace>| -> Space {
            match s {
                None => Space::Generic,
                Some(StateSpace::Global) => Space::Global,
                Some(StateSpace::Shared) => Space::Shared,
                Some(StateSpace::Local) => Space::Local,
                Some(StateSpace::Const) => Space::Const,
                Some(StateSpace::Param) => {
                    if is_kernel {
                        Space::KernelParam
                    } else {
                        Space::Local
                    }
                }
                Some(_) => Space::Generic,
            }
        };
        Ok(match a.base {
            IrBase::Reg(r) => {
                let reg = self.reg(fi, &Operand::Reg(r))?;
                let base = if reg_bits(f.regs[r].ty) <= 32 { AddrBase::Reg32(reg) } else { AddrBase::Reg(reg) };
                (space_of(declared), Addr { base, offset: a.offset })
            }
            IrBase::Abs => (space_of(declared), Addr { base: AddrBase::Const(a.offset as u64), offset: 0 }),
            IrBase::Sym(sym) => {
                let frame = |off: u32| (Space::Local, Addr { base: AddrBase::Frame, offset: off as i64 + a.offset });
                match sym {
                    Symbol::Global(g) => match self.global_addr.get(&g) {
                        Some((sp, addr)) => {
                            let space = match (declared, sp) {
                                (None, StateSpace::Shared) => {
                                    return Ok((
                                        Space::Generic,
                                        Addr { base: AddrBase::Const(SHARED_WINDOW + addr), offset: a.offset },
                                    ))
                                }
                                (None, StateSpace::Const) => {
                                    return Ok((
                                        Space::Generic,
                                        Addr { base: AddrBase::Const(CONST_WINDOW + addr), offset: a.offset },
                                    ))
                                }
                                (_, StateSpace::Global) => Space::Global,
                                (_, StateSpace::Shared) => Space::Shared,
                                (_, StateSpace::Const) => Space::Const,
                                _ => Space::Generic,
                            };
                            (space, Addr { base: AddrBase::Const(*addr), offset: a.offset })
                        }
                        None => return Err("address of a variable in an unsupported state space".into()),
                    },
                    Symbol::Local(l) => match self.ctxs[fi].locals[l.index()] {
                        LocalPlace::Frame(off) => match declared {
                            None => return Err("generic access to a frame variable by name is not supported".into()),
                            _ => frame(off),
                        },
                        LocalPlace::Shared(s) => (Space::Shared, Addr { base: AddrBase::Const(s), offset: a.offset }),
                        LocalPlace::Const(c) => (Space::Const, Addr { base: AddrBase::Const(c), offset: a.offset }),
                    },
                    Symbol::Param(n) if is_kernel => {
                        let off = self.prog.params.get(n as usize).map(|p| p.offset).unwrap_or(0);
                        if declared.is_none() {
                            (
                                Space::Generic,
                                Addr { base: AddrBase::Const(PARAM_WINDOW + off as u64), offset: a.offset },
                            )
                        } else {
                            (Space::KernelParam, Addr { base: AddrBase::Const(off as u64), offset: a.offset })
                        }
                    }
                    Symbol::Param(n) => frame(self.prog.functions[fi].param_offsets[n as usize]),
                    Symbol::Ret(n) => frame(self.prog.functions[fi].ret_offsets[n as usize]),
                    other => return Err(Unsupported::Symbol { symbol: format!("{other:?}"), role: "an address" }),
                }
            }
        })
    }

    fn vec_regs(&self, fi: usize, op: &Operand) -> DResult<VecRegs> {
        match op {
            Operand::Vector(items) => items.iter().map(|o| self.opt_reg(fi, o)).collect(),
            other => Ok(SmallVec::from_elem(self.opt_reg(fi, other)?, 1)),
        }
    }

    fn fmode(inst: &reconverge_ir::Inst) -> FMode {
        let rnd = if inst.has(K::Rz) {
            FRound::Rz
        } else if inst.has(K::Rm) {
            FRound::Rm
        } else if inst.has(K::Rp) {
            FRound::Rp
        } else if inst.has(K::Approx) {
            FRound::Approx
        } else if inst.has(K::Full) {
            FRound::Full
        } else {
            FRound::Rn
        };
        FMode { rnd, ftz: inst.has(K::Ftz), sat: inst.has(K::Sat), nan: inst.has(K::NaN) }
    }

    fn decode_inst(&self, fi: usize, f: &Function, id: InstId) -> DResult<Op> {
        let inst = &f.insts[id];
        let at = At { fi, f, inst, ty: inst.ty() };
        // The families in order: an opcode goes to the first family with an arm for it (the arms' guards
        // are tried in this order, as in one match); the last decodes or rejects whatever is left.
        let families: [Family<'m>; 6] = [
            Self::decode_unary_binary,
            Self::decode_integer,
            Self::decode_fused_and_bits,
            Self::decode_compare_and_move,
            Self::decode_memory_and_control,
            Self::decode_sync_and_warp,
        ];
        for family in families {
            if let Some(op) = family(self, &at)? {
                return Ok(op);
            }
        }
        self.decode_mechanism(&at)
    }

    /// Operand `k` as a source of the instruction's type.
    fn s(&self, at: &At<'_>, k: usize) -> DResult<Src> {
        self.src(at.fi, at.f, &at.inst.operands[k], at.ty)
    }

    /// Operand `k` as a destination value register.
    fn dreg(&self, at: &At<'_>, k: usize) -> DResult<Reg> {
        self.reg(at.fi, &at.inst.operands[k])
    }

    /// Unary and binary arithmetic: integer unary operations, floating-point binary operations, predicate logic.
    fn decode_unary_binary(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi) = (at.inst, &at.inst.operands, at.fi);
        Ok(Some(match &at.inst.opcode {
            Opcode::Abs | Opcode::Neg if at.is_float() => {
                at.need(2)?;
                let op = if inst.opcode == Opcode::Abs { FloatUnOp::Abs } else { FloatUnOp::Neg };
                Op::FloatUn { op, ty: at.t()?, mode: Self::fmode(inst), d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Not | Opcode::Cnot if at.is_pred() => {
                at.need(2)?;
                Op::PredOp {
                    op: None,
                    not: true,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: PredSrc::Const(false),
                }
            }
            Opcode::Abs
            | Opcode::Neg
            | Opcode::Not
            | Opcode::Cnot
            | Opcode::Popc
            | Opcode::Clz
            | Opcode::Brev
            | Opcode::Bfind => {
                at.need(2)?;
                let op = match inst.opcode {
                    Opcode::Abs => IntUnOp::Abs,
                    Opcode::Neg => IntUnOp::Neg,
                    Opcode::Not => IntUnOp::Not,
                    Opcode::Cnot => IntUnOp::Cnot,
                    Opcode::Popc => IntUnOp::Popc,
                    Opcode::Clz => IntUnOp::Clz,
                    Opcode::Brev => IntUnOp::Brev,
                    _ if inst.has(K::Shiftamt) => IntUnOp::BfindShiftAmt,
                    _ => IntUnOp::Bfind,
                };
                Op::IntUn { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Add | Opcode::Sub | Opcode::Mul | Opcode::Div | Opcode::Min | Opcode::Max | Opcode::Copysign
                if at.is_float() =>
            {
                at.need(3)?;
                let op = match inst.opcode {
                    Opcode::Add => FloatBinOp::Add,
                    Opcode::Sub => FloatBinOp::Sub,
                    Opcode::Mul => FloatBinOp::Mul,
                    Opcode::Div => FloatBinOp::Div,
                    Opcode::Min => FloatBinOp::Min,
                    Opcode::Max => FloatBinOp::Max,
                    _ => FloatBinOp::Copysign,
                };
                Op::FloatBin {
                    op,
                    ty: at.t()?,
                    mode: Self::fmode(inst),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                }
            }
            Opcode::And | Opcode::Or | Opcode::Xor if at.is_pred() => {
                at.need(3)?;
                let op = match inst.opcode {
                    Opcode::And => BoolOp::And,
                    Opcode::Or => BoolOp::Or,
                    _ => BoolOp::Xor,
                };
                Op::PredOp {
                    op: Some(op),
                    not: false,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: self.pred_src(fi, &ops[2])?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Integer arithmetic with carries and the integer binary operations.
    fn decode_integer(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Add | Opcode::Sub if inst.has(K::Cc) => {
                at.need(3)?;
                let op = if inst.opcode == Opcode::Add { CarryOp::Add } else { CarryOp::Sub };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: false,
                    cout: true,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: Src::Imm(0),
                }
            }
            Opcode::Addc | Opcode::Subc => {
                at.need(3)?;
                let op = if inst.opcode == Opcode::Addc { CarryOp::Add } else { CarryOp::Sub };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: true,
                    cout: inst.has(K::Cc),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: Src::Imm(0),
                }
            }
            Opcode::Mad if inst.has(K::Cc) => {
                at.need(4)?;
                let op = if inst.has(K::Hi) { CarryOp::MadHi } else { CarryOp::MadLo };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: false,
                    cout: true,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Madc => {
                at.need(4)?;
                let op = if inst.has(K::Hi) { CarryOp::MadHi } else { CarryOp::MadLo };
                Op::Carry {
                    op,
                    ty: at.t()?,
                    cin: true,
                    cout: inst.has(K::Cc),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Add
            | Opcode::Sub
            | Opcode::Mul
            | Opcode::Mul24
            | Opcode::Div
            | Opcode::Rem
            | Opcode::Min
            | Opcode::Max
            | Opcode::And
            | Opcode::Or
            | Opcode::Xor
            | Opcode::Shl
            | Opcode::Shr
            | Opcode::Bmsk
            | Opcode::Szext => {
                at.need(3)?;
                let sat = inst.has(K::Sat);
                let op = match inst.opcode {
                    Opcode::Add if sat => IntBinOp::AddSat,
                    Opcode::Add => IntBinOp::Add,
                    Opcode::Sub if sat => IntBinOp::SubSat,
                    Opcode::Sub => IntBinOp::Sub,
                    Opcode::Mul if inst.has(K::Hi) => IntBinOp::MulHi,
                    Opcode::Mul if inst.has(K::Wide) => IntBinOp::MulWide,
                    Opcode::Mul => IntBinOp::MulLo,
                    Opcode::Mul24 if inst.has(K::Hi) => IntBinOp::Mul24Hi,
                    Opcode::Mul24 => IntBinOp::Mul24Lo,
                    Opcode::Div => IntBinOp::Div,
                    Opcode::Rem => IntBinOp::Rem,
                    Opcode::Min => IntBinOp::Min,
                    Opcode::Max => IntBinOp::Max,
                    Opcode::And => IntBinOp::And,
                    Opcode::Or => IntBinOp::Or,
                    Opcode::Xor => IntBinOp::Xor,
                    Opcode::Shl => IntBinOp::Shl,
                    Opcode::Shr => IntBinOp::Shr,
                    Opcode::Bmsk if inst.has(K::Wrap) => IntBinOp::BmskWrap,
                    Opcode::Bmsk => IntBinOp::BmskClamp,
                    Opcode::Szext if inst.has(K::Wrap) => IntBinOp::SzextWrap,
                    _ => IntBinOp::SzextClamp,
                };
                // Shift amounts are always .u32 operands.
                let b = if matches!(op, IntBinOp::Shl | IntBinOp::Shr) {
                    self.src(fi, f, &ops[2], Some(ScalarType::U32))?
                } else {
                    self.s(at, 2)?
                };
                Op::IntBin { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b }
            }
            _ => return Ok(None),
        }))
    }

    /// Fused multiply-adds, bit-field and permutation operations, special functions, `testp`.
    fn decode_fused_and_bits(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Mad | Opcode::Fma if at.is_float() => {
                at.need(4)?;
                Op::Fma {
                    ty: at.t()?,
                    mode: Self::fmode(inst),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.s(at, 3)?,
                }
            }
            Opcode::Mad | Opcode::Mad24 | Opcode::Bfe | Opcode::Sad | Opcode::Dp4a | Opcode::Dp2a => {
                at.need(4)?;
                let op = match inst.opcode {
                    Opcode::Mad if inst.has(K::Hi) && inst.has(K::Sat) => IntTerOp::MadHiSat,
                    Opcode::Mad if inst.has(K::Hi) => IntTerOp::MadHi,
                    Opcode::Mad if inst.has(K::Wide) => IntTerOp::MadWide,
                    Opcode::Mad => IntTerOp::MadLo,
                    Opcode::Mad24 if inst.has(K::Hi) => IntTerOp::Mad24Hi,
                    Opcode::Mad24 => IntTerOp::Mad24Lo,
                    Opcode::Bfe => IntTerOp::Bfe,
                    Opcode::Sad => IntTerOp::Sad,
                    Opcode::Dp4a => {
                        let a = inst.types.first().map(|t| t.is_signed()).unwrap_or(false);
                        let b = inst.types.get(1).map(|t| t.is_signed()).unwrap_or(false);
                        IntTerOp::Dp4a(a, b)
                    }
                    _ => {
                        let a = inst.types.first().map(|t| t.is_signed()).unwrap_or(false);
                        let b = inst.types.get(1).map(|t| t.is_signed()).unwrap_or(false);
                        IntTerOp::Dp2a(a, b, inst.has(K::Hi))
                    }
                };
                let (b, c) = if op == IntTerOp::Bfe {
                    (self.src(fi, f, &ops[2], Some(ScalarType::U32))?, self.src(fi, f, &ops[3], Some(ScalarType::U32))?)
                } else {
                    (self.s(at, 2)?, self.s(at, 3)?)
                };
                Op::IntTer { op, ty: at.t()?, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b, c }
            }
            Opcode::Bfi => {
                at.need(5)?;
                Op::Bfi {
                    ty: at.t()?,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(ScalarType::U32))?,
                    e: self.src(fi, f, &ops[4], Some(ScalarType::U32))?,
                }
            }
            Opcode::Prmt => {
                at.need(4)?;
                let mode = inst.mods.iter().find_map(|m| match m {
                    Modifier::Known(k @ (K::F4e | K::B4e | K::Rc8 | K::Ecl | K::Ecr | K::Rc16)) => Some(*k),
                    _ => None,
                });
                Op::Prmt { mode, d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.s(at, 3)? }
            }
            Opcode::Lop3 => {
                at.need(5)?;
                let lut = match &ops[4] {
                    Operand::Imm(Imm::Int(v)) => *v as u8,
                    _ => return Err("lop3 needs an immediate lookup table".into()),
                };
                Op::Lop3 { d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.s(at, 3)?, lut }
            }
            Opcode::Shf => {
                at.need(4)?;
                Op::Shf {
                    left: inst.has(K::L),
                    clamp: inst.has(K::Clamp),
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(ScalarType::U32))?,
                }
            }
            Opcode::Sqrt
            | Opcode::Rcp
            | Opcode::Rsqrt
            | Opcode::Sin
            | Opcode::Cos
            | Opcode::Ex2
            | Opcode::Lg2
            | Opcode::Tanh => {
                at.need(2)?;
                let op = match inst.opcode {
                    Opcode::Sqrt => FloatUnOp::Sqrt,
                    Opcode::Rcp => FloatUnOp::Rcp,
                    Opcode::Rsqrt => FloatUnOp::Rsqrt,
                    Opcode::Sin => FloatUnOp::Sin,
                    Opcode::Cos => FloatUnOp::Cos,
                    Opcode::Ex2 => FloatUnOp::Ex2,
                    Opcode::Lg2 => FloatUnOp::Lg2,
                    _ => FloatUnOp::Tanh,
                };
                Op::FloatUn { op, ty: at.t()?, mode: Self::fmode(inst), d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Testp => {
                at.need(2)?;
                let test = inst
                    .mods
                    .iter()
                    .find(|m| {
                        matches!(m.as_str(), "finite" | "infinite" | "number" | "notanumber" | "normal" | "subnormal")
                    })
                    .cloned()
                    .ok_or("testp needs a test")?;
                Op::Testp { op: K::Abs, test, ty: at.t()?, p: self.pred(fi, &ops[0])?, a: self.s(at, 1)? }
            }
            _ => return Ok(None),
        }))
    }

    /// Conversions, comparisons, selections and moves.
    fn decode_compare_and_move(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Cvt => {
                at.need(2)?;
                if ops.len() > 2 {
                    return Err("packed cvt with two sources is not supported".into());
                }
                let dty = at.t()?;
                let sty = *inst.types.get(1).ok_or("cvt needs a source type")?;
                let rnd = inst.mods.iter().find_map(|m| match m {
                    Modifier::Known(
                        k @ (K::Rn | K::Rz | K::Rm | K::Rp | K::Rni | K::Rzi | K::Rmi | K::Rpi | K::Rna),
                    ) => Some(*k),
                    _ => None,
                });
                let dst_bits = match &ops[0] {
                    Operand::Reg(r) => reg_bits(f.regs[*r].ty),
                    _ => dty.bits(),
                };
                Op::Cvt {
                    dty,
                    sty,
                    rnd,
                    ftz: inst.has(K::Ftz),
                    sat: inst.has(K::Sat),
                    dst_bits,
                    d: self.dreg(at, 0)?,
                    a: self.src(fi, f, &ops[1], Some(sty))?,
                }
            }
            Opcode::Setp => {
                at.need(3)?;
                let cmp = inst.mods.iter().find_map(cmp_of).ok_or("setp needs a comparison")?;
                let comb_op = inst.mods.iter().find_map(bool_of);
                let (p, q) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.pred(fi, o)?), None),
                };
                let comb = match (comb_op, ops.get(3)) {
                    (Some(b), Some(c)) => Some((b, self.pred_src(fi, c)?)),
                    (None, None) => None,
                    _ => return Err("setp combiner and fourth operand must go together".into()),
                };
                Op::Setp { cmp, ty: at.t()?, p, q, a: self.s(at, 1)?, b: self.s(at, 2)?, comb }
            }
            Opcode::Set => {
                at.need(3)?;
                let cmp = inst.mods.iter().find_map(cmp_of).ok_or("set needs a comparison")?;
                let dty = at.t()?;
                let sty = *inst.types.get(1).ok_or("set needs a source type")?;
                let comb = match (inst.mods.iter().find_map(bool_of), ops.get(3)) {
                    (Some(b), Some(c)) => Some((b, self.pred_src(fi, c)?)),
                    _ => None,
                };
                Op::Set {
                    cmp,
                    dty,
                    sty,
                    d: self.dreg(at, 0)?,
                    a: self.src(fi, f, &ops[1], Some(sty))?,
                    b: self.src(fi, f, &ops[2], Some(sty))?,
                    comb,
                }
            }
            Opcode::Selp => {
                at.need(4)?;
                Op::Selp { d: self.dreg(at, 0)?, a: self.s(at, 1)?, b: self.s(at, 2)?, c: self.pred_src(fi, &ops[3])? }
            }
            Opcode::Slct => {
                at.need(4)?;
                let sty = *inst.types.get(1).ok_or("slct needs a comparison type")?;
                Op::Slct {
                    sty,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    b: self.s(at, 2)?,
                    c: self.src(fi, f, &ops[3], Some(sty))?,
                }
            }
            Opcode::Mov if at.is_pred() => {
                at.need(2)?;
                Op::PredOp {
                    op: None,
                    not: false,
                    d: self.pred(fi, &ops[0])?,
                    a: self.pred_src(fi, &ops[1])?,
                    b: PredSrc::Const(false),
                }
            }
            Opcode::Mov => {
                at.need(2)?;
                let ty = at.t()?;
                match (&ops[0], &ops[1]) {
                    (_, Operand::Vector(parts)) => {
                        let n = parts.len() as u32;
                        Op::Pack {
                            d: self.dreg(at, 0)?,
                            parts: parts.iter().map(|p| self.src(fi, f, p, None)).collect::<DResult<_>>()?,
                            elem_bits: ty.bits() / n.max(1),
                        }
                    }
                    (Operand::Vector(parts), _) => {
                        let n = parts.len() as u32;
                        Op::Unpack {
                            parts: parts.iter().map(|p| self.opt_reg(fi, p)).collect::<DResult<_>>()?,
                            s: self.s(at, 1)?,
                            elem_bits: ty.bits() / n.max(1),
                        }
                    }
                    _ => {
                        let d = self.dreg(at, 0)?;
                        let bits = match &ops[0] {
                            Operand::Reg(r) => reg_bits(f.regs[*r].ty).min(ty.bits().max(8)),
                            _ => 64,
                        };
                        Op::Mov { d, a: self.s(at, 1)?, bits: if bits >= 64 { 64 } else { bits } }
                    }
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Loads, stores, atomics, address-space queries, branches, calls, returns, fences.
    fn decode_memory_and_control(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, fi, f) = (at.inst, &at.inst.operands, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Ld | Opcode::Ldu => {
                at.need(2)?;
                let ty = at.t()?;
                let d = self.vec_regs(fi, &ops[0])?;
                let (space, addr) = self.addr(fi, f, &ops[1], inst.space())?;
                let dst_bits = match &ops[0] {
                    Operand::Reg(r) => reg_bits(f.regs[*r].ty),
                    Operand::Vector(items) => items
                        .iter()
                        .find_map(|o| if let Operand::Reg(r) = o { Some(reg_bits(f.regs[*r].ty)) } else { None })
                        .unwrap_or(ty.bits()),
                    _ => ty.bits(),
                };
                if ty.bits() > 64 {
                    return Err("128-bit loads are not supported".into());
                }
                Op::Ld { space, ty, d, addr, dst_bits, volatile: inst.has(K::Volatile) }
            }
            Opcode::St => {
                at.need(2)?;
                let ty = at.t()?;
                if ty.bits() > 64 {
                    return Err("128-bit stores are not supported".into());
                }
                let (space, addr) = self.addr(fi, f, &ops[0], inst.space())?;
                let srcs: SmallVec<[Src; 4]> = match &ops[1] {
                    Operand::Vector(items) => {
                        items.iter().map(|o| self.src(fi, f, o, Some(ty))).collect::<DResult<_>>()?
                    }
                    o => SmallVec::from_elem(self.src(fi, f, o, Some(ty))?, 1),
                };
                Op::St { space, ty, s: srcs, addr }
            }
            Opcode::Atom | Opcode::Red => {
                let ty = at.t()?;
                let op = inst
                    .mods
                    .iter()
                    .find_map(|m| match m {
                        Modifier::Known(K::Add) => Some(AtomOp::Add),
                        Modifier::Known(K::Min) => Some(AtomOp::Min),
                        Modifier::Known(K::Max) => Some(AtomOp::Max),
                        Modifier::Known(K::Inc) => Some(AtomOp::Inc),
                        Modifier::Known(K::Dec) => Some(AtomOp::Dec),
                        Modifier::Known(K::And) => Some(AtomOp::And),
                        Modifier::Known(K::Or) => Some(AtomOp::Or),
                        Modifier::Known(K::Xor) => Some(AtomOp::Xor),
                        Modifier::Known(K::Exch) => Some(AtomOp::Exch),
                        Modifier::Known(K::Cas) => Some(AtomOp::Cas),
                        _ => None,
                    })
                    .ok_or("atom needs an operation")?;
                if ty.bits() > 64 || (ty.is_float() && ty.bits() < 32) {
                    return Err(Unsupported::AtomType(ty.as_str()));
                }
                let (d, rest) = if inst.opcode == Opcode::Atom { (Some(self.dreg(at, 0)?), 1) } else { (None, 0) };
                at.need(rest + 2)?;
                let space = inst.space();
                let (space, addr) = self.addr(fi, f, &ops[rest], space)?;
                let b = self.s(at, rest + 1)?;
                let c = if op == AtomOp::Cas {
                    at.need(rest + 3)?;
                    self.s(at, rest + 2)?
                } else {
                    Src::Imm(0)
                };
                Op::Atom { space, op, ty, d, addr, b, c }
            }
            Opcode::Cvta => {
                at.need(2)?;
                let space = match inst.space() {
                    Some(StateSpace::Global) => Space::Global,
                    Some(StateSpace::Shared) => Space::Shared,
                    Some(StateSpace::Local) => Space::Local,
                    Some(StateSpace::Const) => Space::Const,
                    Some(StateSpace::Param) => Space::KernelParam,
                    _ => return Err("cvta needs a state space".into()),
                };
                Op::Cvta { to_generic: !inst.has(K::To), space, d: self.dreg(at, 0)?, a: self.s(at, 1)? }
            }
            Opcode::Isspacep => {
                at.need(2)?;
                let space = match inst.space() {
                    Some(StateSpace::Global) => Space::Global,
                    Some(StateSpace::Shared) => Space::Shared,
                    Some(StateSpace::Local) => Space::Local,
                    Some(StateSpace::Const) => Space::Const,
                    Some(StateSpace::Param) => Space::KernelParam,
                    _ => return Err("isspacep needs a state space".into()),
                };
                Op::Isspacep { space, p: self.pred(fi, &ops[0])?, a: self.src(fi, f, &ops[1], Some(ScalarType::U64))? }
            }
            Opcode::Bra => {
                let target = inst.branch_target().ok_or("bra needs a label")?;
                Op::Bra { target: self.ctxs[fi].block_pc[target.index()] }
            }
            Opcode::Brx => {
                at.need(2)?;
                let tid = inst.branch_targets().ok_or("brx.idx needs a .branchtargets list")?;
                let targets =
                    f.targets[tid].targets.iter().map(|b| self.ctxs[fi].block_pc[b.index()]).collect::<Vec<_>>();
                Op::Brx { index: self.src(fi, f, &ops[0], Some(ScalarType::U32))?, targets: targets.into() }
            }
            Opcode::Call => self.decode_call(fi, f, inst)?,
            Opcode::Ret => Op::Ret,
            Opcode::Exit => Op::Exit,
            Opcode::Trap => Op::Trap,
            Opcode::Membar | Opcode::Fence => Op::Fence { scope: fence_scope(inst) },
            Opcode::Brkpt | Opcode::Prefetch | Opcode::Prefetchu | Opcode::Nanosleep | Opcode::Pmevent => Op::Nop,
            _ => return Ok(None),
        }))
    }

    /// Barriers and warp-level collectives (`shfl`, `vote`, `match`, `redux`).
    fn decode_sync_and_warp(&self, at: &At<'_>) -> DResult<Option<Op>> {
        let (inst, ops, ty, fi, f) = (at.inst, &at.inst.operands, at.ty, at.fi, at.f);
        Ok(Some(match &at.inst.opcode {
            Opcode::Bar | Opcode::Barrier if inst.has(K::Warp) => {
                at.need(1)?;
                Op::WarpSync { mask: self.src(fi, f, &ops[0], Some(ScalarType::U32))? }
            }
            Opcode::Bar | Opcode::Barrier => {
                let u32t = Some(ScalarType::U32);
                if inst.has(K::Red) {
                    at.need(3)?;
                    let kind = if inst.has(K::Popc) {
                        BarKind::RedPopc
                    } else if inst.has(K::And) {
                        BarKind::RedAnd
                    } else {
                        BarKind::RedOr
                    };
                    let (d, p) = if kind == BarKind::RedPopc {
                        (Some(self.dreg(at, 0)?), None)
                    } else {
                        (None, Some(self.pred(fi, &ops[0])?))
                    };
                    let count = if ops.len() >= 4 { Some(self.src(fi, f, &ops[2], u32t)?) } else { None };
                    Op::Bar {
                        kind,
                        id: self.src(fi, f, &ops[1], u32t)?,
                        count,
                        d,
                        p,
                        c: self.pred_src(fi, &ops[ops.len() - 1])?,
                    }
                } else {
                    let kind = if inst.has(K::Arrive) { BarKind::Arrive } else { BarKind::Sync };
                    let id = match ops.first() {
                        Some(o) => self.src(fi, f, o, u32t)?,
                        None => Src::Imm(0),
                    };
                    let count = ops.get(1).map(|o| self.src(fi, f, o, u32t)).transpose()?;
                    Op::Bar { kind, id, count, d: None, p: None, c: PredSrc::Const(true) }
                }
            }
            Opcode::Shfl => {
                at.need(4)?;
                let mode = if inst.has(K::Up) {
                    ShflMode::Up
                } else if inst.has(K::Down) {
                    ShflMode::Down
                } else if inst.has(K::Bfly) {
                    ShflMode::Bfly
                } else {
                    ShflMode::Idx
                };
                let (d, p) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.reg(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.reg(fi, o)?), None),
                };
                let u32t = Some(ScalarType::U32);
                let mask = match ops.get(4) {
                    Some(o) => self.src(fi, f, o, u32t)?,
                    None => Src::Imm(u64::MAX),
                };
                Op::Shfl {
                    mode,
                    d,
                    p,
                    a: self.s(at, 1)?,
                    b: self.src(fi, f, &ops[2], u32t)?,
                    c: self.src(fi, f, &ops[3], u32t)?,
                    mask,
                }
            }
            Opcode::Vote => {
                at.need(2)?;
                let mode = if inst.has(K::All) {
                    VoteMode::All
                } else if inst.has(K::Any) {
                    VoteMode::Any
                } else if inst.has(K::Uni) {
                    VoteMode::Uni
                } else if inst.has(K::Ballot) {
                    VoteMode::Ballot
                } else {
                    return Err("vote needs a mode".into());
                };
                let d = if mode == VoteMode::Ballot {
                    Src::Reg(self.dreg(at, 0)?)
                } else {
                    Src::Pred(self.pred(fi, &ops[0])?)
                };
                let mask = ops.get(2).map(|o| self.src(fi, f, o, Some(ScalarType::U32))).transpose()?;
                Op::Vote { mode, d, a: self.pred_src(fi, &ops[1])?, mask }
            }
            Opcode::Activemask => {
                at.need(1)?;
                Op::Activemask { d: self.dreg(at, 0)? }
            }
            Opcode::Match => {
                at.need(3)?;
                let (d, p) = match &ops[0] {
                    Operand::Pair([a, b]) => (
                        a.map(|r| self.reg(fi, &Operand::Reg(r))).transpose()?,
                        b.map(|r| self.pred(fi, &Operand::Reg(r))).transpose()?,
                    ),
                    o => (Some(self.reg(fi, o)?), None),
                };
                Op::Match {
                    all: inst.has(K::All),
                    ty: at.t()?,
                    d,
                    p,
                    a: self.s(at, 1)?,
                    mask: self.src(fi, f, &ops[2], Some(ScalarType::U32))?,
                }
            }
            Opcode::Redux => {
                at.need(3)?;
                let op = inst
                    .mods
                    .iter()
                    .find_map(|m| match m {
                        Modifier::Known(K::Add) => Some(ReduxOp::Add),
                        Modifier::Known(K::Min) => Some(ReduxOp::Min),
                        Modifier::Known(K::Max) => Some(ReduxOp::Max),
                        Modifier::Known(K::And) => Some(ReduxOp::And),
                        Modifier::Known(K::Or) => Some(ReduxOp::Or),
                        Modifier::Known(K::Xor) => Some(ReduxOp::Xor),
                        _ => None,
                    })
                    .ok_or("redux needs an operation")?;
                if ty.map(|t| t.is_float()).unwrap_or(false) {
                    return Err("float redux is not supported".into());
                }
                Op::Redux {
                    op,
                    ty: at.t()?,
                    d: self.dreg(at, 0)?,
                    a: self.s(at, 1)?,
                    mask: self.src(fi, f, &ops[2], Some(ScalarType::U32))?,
                }
            }
            _ => return Ok(None),
        }))
    }

    /// The instructions a mechanism's compiler pass inserts; anything else is unsupported.
    fn decode_mechanism(&self, at: &At<'_>) -> DResult<Op> {
        let (inst, ops, fi) = (at.inst, &at.inst.operands, at.fi);
        Ok(match &at.inst.opcode {
            Opcode::Ssy | Opcode::Pbk => {
                let target = match ops.first() {
                    Some(Operand::Sym(Symbol::Label(b))) => self.ctxs[fi].block_pc[b.index()],
                    _ => return Err("ssy/pbk need a label".into()),
                };
                if inst.opcode == Opcode::Ssy {
                    Op::Ssy { target }
                } else {
                    Op::Pbk { target }
                }
            }
            Opcode::Sync => Op::Sync,
            Opcode::Brk => Op::Brk,
            Opcode::Join => Op::Join,
            Opcode::Yield => Op::Yield,
            Opcode::Syncwarp => Op::Syncwarp,
            Opcode::Bssy | Opcode::Bsync => {
                let target = match ops.first() {
                    Some(Operand::Sym(Symbol::Label(b))) => self.ctxs[fi].block_pc[b.index()],
                    _ => return Err("bssy/bsync need a label".into()),
                };
                if inst.opcode == Opcode::Bssy {
                    Op::Bssy { target }
                } else {
                    Op::Bsync { target }
                }
            }
            Opcode::Unknown(name) => return Err(Unsupported::UnknownOpcode(name.to_string())),
            other => return Err(Unsupported::Modifiers(other.to_string())),
        })
    }

    fn decode_call(&self, fi: usize, f: &Function, inst: &reconverge_ir::Inst) -> DResult<Op> {
        let mut rets: &[Operand] = &[];
        let mut args: &[Operand] = &[];
        let mut callee = None;
        let mut seen_callee = false;
        for op in &inst.operands {
            match op {
                Operand::List(items) if !seen_callee => rets = items,
                Operand::List(items) => args = items,
                Operand::Sym(Symbol::Func(id)) => {
                    callee = Some(*id);
                    seen_callee = true;
                }
                Operand::Reg(_) => return Err("indirect calls are not supported yet".into()),
                Operand::Sym(Symbol::Proto(_)) => {}
                other => return Err(Unsupported::Operand { expected: "a call target", found: format!("{other:?}") }),
            }
        }
        let callee = callee.ok_or("call without a callee")?;
        let cf = &self.m.functions[callee];
        let Some(&ci) = self.func_index.get(&callee) else {
            if cf.name == PRINTF {
                return self.decode_printf(fi, f, cf, args, rets);
            }
            return Err(Unsupported::ExternalCall(cf.name.clone()));
        };
        let callee_info = &self.prog.functions[ci as usize];
        if args.len() != callee_info.param_offsets.len() || rets.len() != callee_info.ret_offsets.len() {
            return Err(Unsupported::CallArity {
                callee: cf.name.clone(),
                args: args.len(),
                rets: rets.len(),
                params: callee_info.param_offsets.len(),
                returns: callee_info.ret_offsets.len(),
            });
        }
        let mut a = SmallVec::new();
        for (i, op) in args.iter().enumerate() {
            let (off, size) = self.frame_slot(fi, f, op)?;
            let psize = var_size(&cf.params[i]) as u32;
            a.push(ParamCopy { from: off, to: callee_info.param_offsets[i], size: size.min(psize) });
        }
        let mut r = SmallVec::new();
        for (i, op) in rets.iter().enumerate() {
            let (off, size) = self.frame_slot(fi, f, op)?;
            let rsize = var_size(&cf.rets[i]) as u32;
            r.push(ParamCopy { from: callee_info.ret_offsets[i], to: off, size: size.min(rsize) });
        }
        Ok(Op::Call { callee: ci, args: a, rets: r })
    }

    /// The frame offset and size of a call argument or result of function `fi`: a `.param` variable of
    /// its frame (or, in a device function, one of its own parameters).
    fn frame_slot(&self, fi: usize, f: &Function, op: &Operand) -> DResult<(u32, u32)> {
        match op {
            Operand::Sym(Symbol::Local(l)) => match self.ctxs[fi].locals[l.index()] {
                LocalPlace::Frame(off) => Ok((off, var_size(&f.locals[*l]) as u32)),
                _ => Err("call argument must be a .param variable".into()),
            },
            Operand::Sym(Symbol::Param(n)) if f.kind == FuncKind::Func => {
                Ok((self.prog.functions[fi].param_offsets[*n as usize], var_size(&f.params[*n as usize]) as u32))
            }
            other => Err(Unsupported::Operand { expected: "a call argument", found: format!("{other:?}") }),
        }
    }

    /// A call of the external `vprintf` (CUDA's device `printf`): [`Op::Printf`]. The declaration must be
    /// CUDA's, `(.param .b32 r) vprintf(.param .b64 format, .param .b64 args)`, and the call must pass two
    /// 8-byte `.param` variables and receive the result in one of at least 4 bytes, or not at all.
    fn decode_printf(&self, fi: usize, f: &Function, cf: &Function, args: &[Operand], rets: &[Operand]) -> DResult<Op> {
        let declared = cf.params.len() == 2
            && cf.params.iter().all(|p| var_size(p) == 8)
            && cf.rets.len() <= 1
            && cf.rets.iter().all(|r| var_size(r) == 4);
        if !declared {
            return Err("`vprintf` must be declared as CUDA's `(.param .b32) vprintf(.param .b64, .param .b64)`".into());
        }
        if args.len() != 2 || rets.len() > cf.rets.len() {
            return Err(Unsupported::CallArity {
                callee: cf.name.clone(),
                args: args.len(),
                rets: rets.len(),
                params: 2,
                returns: cf.rets.len(),
            });
        }
        let (format, fsize) = self.frame_slot(fi, f, &args[0])?;
        let (buffer, bsize) = self.frame_slot(fi, f, &args[1])?;
        if fsize != 8 || bsize != 8 {
            return Err("the arguments of `vprintf` must be 8-byte .param variables".into());
        }
        let ret = match rets.first() {
            Some(op) => {
                let (off, size) = self.frame_slot(fi, f, op)?;
                if size < 4 {
                    return Err("the result of `vprintf` needs a .param variable of at least 4 bytes".into());
                }
                Some(off)
            }
            None => None,
        };
        Ok(Op::Printf { format, args: buffer, ret })
    }
}

/// The external function CUDA's device `printf` compiles to ([`Op::Printf`]).
pub const PRINTF: &str = "vprintf";

/// Value registers read and written by an operation (for the scoreboard and traces): its [`facts`].
pub fn reads_writes(op: &Op) -> (SmallVec<[Reg; 4]>, SmallVec<[Reg; 2]>) {
    let f = facts(op);
    (f.reads, f.writes)
}

/// Predicates read and written by an operation (the guard is added by the caller): its [`facts`].
pub fn pred_reads_writes(op: &Op) -> (SmallVec<[Pred; 2]>, SmallVec<[Pred; 2]>) {
    let f = facts(op);
    (f.pred_reads, f.pred_writes)
}

/// The scope of a `membar`/`fence` instruction (`membar.cta`, `fence.acq_rel.gpu`, ...).
fn fence_scope(inst: &reconverge_ir::Inst) -> FenceScope {
    if inst.has(K::Cta) {
        FenceScope::Cta
    } else if inst.has(K::Sys) {
        FenceScope::Sys
    } else {
        FenceScope::Gpu
    }
}

/// The class of an operation: its [`facts`].
pub fn classify(op: &Op) -> InstClass {
    facts(op).class
}

/// [`Program::straight`]: counted backwards, a run continues into the next pc when that pc is in the same
/// function and block.
fn straight_runs(prog: &Program) -> Vec<u16> {
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
