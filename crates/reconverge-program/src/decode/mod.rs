//! Decoding an IR module into a [`Program`].
//!
//! This file holds the entry points ([`decode`], [`select_kernel`]), the decoder's state and its dispatch
//! of an instruction to its family; the rest is cut along its concerns:
//!
//! - `error`: [`DecodeError`] and [`Unsupported`];
//! - `variables`: module variables, their placement and initial memory image;
//! - `functions`: the passes over the functions (layout, decoding with each instruction's
//!   [`facts`](crate::facts), reconvergence points, ranks, straight-line runs);
//! - `operands`: registers, predicates, immediates, symbols, addresses;
//! - `arith`, `compare`, `texture`, `asynchronous`, `matrix`, `memory_control`, `warp`, `calls`: the instruction families.

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

mod arith;
mod asynchronous;
mod calls;
mod compare;
mod error;
mod functions;
mod matrix;
mod memory_control;
mod operands;
mod texture;
mod variables;
mod warp;

pub use calls::PRINTF;
use error::DResult;
pub use error::{DecodeError, Unsupported};
use operands::*;
use variables::*;

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
    /// Where the module's `.global` variables start (`None`: at [`GLOBAL_BASE`],
    /// each placed as [`crate::layout::place_allocation`] places it): a program of several modules
    /// (translation units) places each further module's variables after the earlier modules' memory, so
    /// that no two modules' variables share an address. Every kernel of a module must be decoded with the
    /// same value.
    pub global_base: Option<u64>,
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
    /// The thread's asynchronous-copy register (`cp.async`), one past the functions' registers, when the
    /// module has a `cp.async` instruction.
    async_group: Option<Reg>,
}

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
            allocated_registers: None,
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
            async_group: None,
        };
        d.place_module_vars(opts.global_base.unwrap_or(GLOBAL_BASE))?;
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

    fn decode_inst(&self, fi: usize, f: &Function, id: InstId) -> DResult<Op> {
        let inst = &f.insts[id];
        let at = At { fi, f, inst, ty: inst.ty() };
        // The families in order: an opcode goes to the first family with an arm for it (the arms' guards
        // are tried in this order, as in one match); the last decodes or rejects whatever is left.
        let families: [Family<'m>; 9] = [
            Self::decode_unary_binary,
            Self::decode_integer,
            Self::decode_fused_and_bits,
            Self::decode_compare_and_move,
            Self::decode_texture,
            Self::decode_asynchronous,
            Self::decode_matrix,
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
}

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

/// The class of an operation: its [`facts`].
pub fn classify(op: &Op) -> InstClass {
    facts(op).class
}
