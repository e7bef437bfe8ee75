//! Modules, functions, blocks and declarations.

use crate::entity::{BlockId, FuncId, GlobalId, InstId, LocalId, ProtoId, RegId, TargetsId};
use crate::inst::{Imm, Inst, Symbol};
use crate::span::Span;
use crate::types::{ScalarType, StateSpace};
use cranelift_entity::{PrimaryMap, SecondaryMap};
use smallvec::SmallVec;

/// One PTX translation unit.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Module {
    /// `.version major.minor`
    pub version: (u32, u32),
    /// `.target` words, e.g. `["sm_80"]`.
    pub target: Vec<String>,
    /// `.address_size` (32 or 64; 64 when absent).
    pub address_size: u32,
    /// `.file` directives (for `.loc` source locations).
    pub files: Vec<FileEntry>,
    /// Module-level variables.
    pub globals: PrimaryMap<GlobalId, Variable>,
    /// Kernels and device functions (declarations included).
    pub functions: PrimaryMap<FuncId, Function>,
    /// Declaration order of the module's items, as the printer emits them.
    pub items: Vec<Item>,
    /// Source spans of module-level entities.
    pub spans: ModuleSpans,
}

impl Module {
    /// The function called `name`, if any.
    pub fn function_by_name(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().find(|(_, f)| f.name == name).map(|(id, _)| id)
    }

    /// The kernels (`.entry` functions with a body), in declaration order.
    pub fn kernels(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.functions.iter().filter(|(_, f)| f.kind == FuncKind::Entry && f.has_body).map(|(id, _)| id)
    }

    /// The path of the file with `.file` index `index`.
    pub fn file_name(&self, index: u32) -> Option<&str> {
        self.files.iter().find(|f| f.index == index).map(|f| f.path.as_str())
    }

    /// Clears every span, so that structurally equal modules compare equal.
    pub fn strip_spans(&mut self) {
        self.spans = ModuleSpans::default();
        for (_, f) in self.functions.iter_mut() {
            f.spans = FunctionSpans::default();
        }
    }
}

/// A module-level item, in source order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Item {
    /// A module-level variable.
    Global(GlobalId),
    /// A function prototype without body (forward or `.extern` declaration).
    FuncDecl(FuncId),
    /// A function definition (with body).
    FuncDef(FuncId),
}

/// A `.file` directive.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct FileEntry {
    /// The file index used by `.loc`.
    pub index: u32,
    /// The path as written.
    pub path: String,
    /// Optional timestamp and size that follow the path.
    pub extra: Vec<u64>,
}

/// Linkage of a function or module variable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Linkage {
    /// `.visible`
    Visible,
    /// `.extern`
    Extern,
    /// `.weak`
    Weak,
    /// `.common`
    Common,
}

impl Linkage {
    /// The PTX spelling without the dot.
    pub fn as_str(self) -> &'static str {
        match self {
            Linkage::Visible => "visible",
            Linkage::Extern => "extern",
            Linkage::Weak => "weak",
            Linkage::Common => "common",
        }
    }
}

/// `.ptr` attributes of a kernel pointer parameter: `.ptr .global .align 8`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PtrAttr {
    /// Pointee state space, if given.
    pub space: Option<StateSpace>,
    /// Pointee alignment, if given.
    pub align: Option<u32>,
}

/// A variable declaration: module variables, function parameters, and body-local variables.
#[derive(Clone, PartialEq, Debug)]
pub struct Variable {
    /// The name (unique within its scope; body-local duplicates are renamed by the front end).
    pub name: String,
    /// The state space (`.global`, `.param`, ...).
    pub space: StateSpace,
    /// Linkage (module variables only).
    pub linkage: Option<Linkage>,
    /// `.align N`
    pub align: Option<u32>,
    /// The element type.
    pub ty: ScalarType,
    /// `.v2`/`.v4` element vector width.
    pub vector: Option<u8>,
    /// Array dimensions; `None` for an unsized dimension `[]`.
    pub dims: SmallVec<[Option<u64>; 1]>,
    /// `.ptr` attributes (kernel parameters).
    pub ptr: Option<PtrAttr>,
    /// Initializer.
    pub init: Option<Initializer>,
}

impl Variable {
    /// Number of elements (product of the dimensions, saturating at `u64::MAX`; 0 if a dimension is unsized).
    pub fn element_count(&self) -> u64 {
        self.dims.iter().fold(1u64, |n, d| n.saturating_mul(d.unwrap_or(0)))
    }

    /// Size in bytes, saturating at `u64::MAX` (0 for unsized arrays such as `extern .shared` buffers).
    pub fn size_bytes(&self) -> u64 {
        self.element_count().saturating_mul(self.ty.bytes() as u64).saturating_mul(self.vector.unwrap_or(1) as u64)
    }

    /// The alignment in bytes: the declared one, or the element size.
    pub fn alignment(&self) -> u64 {
        self.align.map(u64::from).unwrap_or(self.ty.bytes() as u64 * self.vector.unwrap_or(1) as u64)
    }
}

/// A variable initializer: a scalar or a brace list (possibly nested).
#[derive(Clone, PartialEq, Debug)]
pub enum Initializer {
    /// `= value`
    Value(InitValue),
    /// `= { ... }`
    List(Vec<Initializer>),
}

/// One initializer element.
#[derive(Clone, PartialEq, Debug)]
pub enum InitValue {
    /// A constant.
    Imm(Imm),
    /// The address of a variable or function, optionally `generic(...)`, plus a byte offset.
    Addr {
        /// The variable or function.
        sym: Symbol,
        /// Written as `generic(name)`.
        generic: bool,
        /// Byte offset added to the address.
        offset: i64,
    },
}

/// `.entry` or `.func`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FuncKind {
    /// A kernel (`.entry`).
    Entry,
    /// A device function (`.func`).
    Func,
}

/// A performance-tuning directive between a function's signature and its body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct PerfDirective {
    /// The directive name without the dot: `maxntid`, `reqntid`, `minnctapersm`, `maxnreg`, `pragma`, ...
    pub name: String,
    /// Its numeric arguments.
    pub args: Vec<u64>,
    /// Its string argument (`.pragma "nounroll"`).
    pub text: Option<String>,
}

/// A `.reg` declaration of one register.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RegDecl {
    /// The full name including `%`, e.g. `%r12`.
    pub name: String,
    /// The register type.
    pub ty: ScalarType,
    /// `.v2`/`.v4` vector registers.
    pub vector: Option<u8>,
}

/// A `.branchtargets` list.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BranchTargets {
    /// The label naming the list.
    pub name: String,
    /// The target blocks, in order (index i of `brx.idx` jumps to `targets[i]`).
    pub targets: Vec<BlockId>,
}

/// A `.callprototype` declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct CallPrototype {
    /// The label naming the prototype.
    pub name: String,
    /// Return parameters.
    pub rets: Vec<Variable>,
    /// Input parameters.
    pub params: Vec<Variable>,
    /// `.noreturn`
    pub noreturn: bool,
}

/// A CUDA source location from a `.loc file line column` directive.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct SrcLoc {
    /// The `.file` index.
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (0 if unknown).
    pub col: u32,
}

/// A basic block.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Block {
    /// The label that starts the block, if any (fall-through blocks after a branch have none).
    pub label: Option<String>,
    /// The instructions, in order. Only the last may be a terminator.
    pub insts: Vec<InstId>,
}

/// A kernel or device function.
#[derive(Clone, PartialEq, Debug)]
pub struct Function {
    /// The name.
    pub name: String,
    /// `.entry` or `.func`.
    pub kind: FuncKind,
    /// Linkage, if written.
    pub linkage: Option<Linkage>,
    /// `.noreturn`
    pub noreturn: bool,
    /// Return parameters (`.func` only).
    pub rets: Vec<Variable>,
    /// Input parameters.
    pub params: Vec<Variable>,
    /// Performance-tuning directives.
    pub directives: Vec<PerfDirective>,
    /// Whether the function has a body (otherwise it is a declaration only).
    pub has_body: bool,
    /// Registers.
    pub regs: PrimaryMap<RegId, RegDecl>,
    /// Variables declared in the body.
    pub locals: PrimaryMap<LocalId, Variable>,
    /// `.branchtargets` lists.
    pub targets: PrimaryMap<TargetsId, BranchTargets>,
    /// `.callprototype` declarations.
    pub protos: PrimaryMap<ProtoId, CallPrototype>,
    /// Instructions.
    pub insts: PrimaryMap<InstId, Inst>,
    /// Basic blocks.
    pub blocks: PrimaryMap<BlockId, Block>,
    /// Block order; the first block is the entry.
    pub layout: Vec<BlockId>,
    /// `.pragma` strings inside the body, attached to the instruction that follows them.
    pub pragmas: Vec<(InstId, String)>,
    /// Source spans.
    pub spans: FunctionSpans,
}

impl Function {
    /// An empty function (no body yet).
    pub fn new(name: impl Into<String>, kind: FuncKind) -> Function {
        Function {
            name: name.into(),
            kind,
            linkage: None,
            noreturn: false,
            rets: Vec::new(),
            params: Vec::new(),
            directives: Vec::new(),
            has_body: false,
            regs: PrimaryMap::new(),
            locals: PrimaryMap::new(),
            targets: PrimaryMap::new(),
            protos: PrimaryMap::new(),
            insts: PrimaryMap::new(),
            blocks: PrimaryMap::new(),
            layout: Vec::new(),
            pragmas: Vec::new(),
            spans: FunctionSpans::default(),
        }
    }

    /// The entry block (first in layout).
    pub fn entry_block(&self) -> Option<BlockId> {
        self.layout.first().copied()
    }

    /// The last instruction of `block`, if the block is not empty.
    pub fn last_inst(&self, block: BlockId) -> Option<InstId> {
        self.blocks[block].insts.last().copied()
    }

    /// The block whose label is `label`.
    pub fn block_by_label(&self, label: &str) -> Option<BlockId> {
        self.blocks.iter().find(|(_, b)| b.label.as_deref() == Some(label)).map(|(id, _)| id)
    }

    /// Instructions in layout order, with their block.
    pub fn insts_in_order(&self) -> impl Iterator<Item = (BlockId, InstId)> + '_ {
        self.layout.iter().flat_map(move |&b| self.blocks[b].insts.iter().map(move |&i| (b, i)))
    }

    /// A printable name for a block: its label, or `<fallthrough N>` with its layout position.
    pub fn block_name(&self, block: BlockId) -> String {
        match &self.blocks[block].label {
            Some(l) => l.clone(),
            None => format!("{block}"),
        }
    }
}

/// Source spans of a module's top-level entities.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct ModuleSpans {
    /// Span of each module variable declaration.
    pub globals: SecondaryMap<GlobalId, Span>,
    /// Span of each function header (signature).
    pub functions: SecondaryMap<FuncId, Span>,
}

/// Spans of one instruction.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct InstSpans {
    /// The whole instruction, guard to semicolon.
    pub whole: Span,
    /// The opcode word with its modifiers.
    pub opcode: Span,
    /// Each operand.
    pub operands: SmallVec<[Span; 4]>,
}

/// Source spans of a function's entities.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct FunctionSpans {
    /// The signature.
    pub header: Span,
    /// Each instruction.
    pub insts: SecondaryMap<InstId, InstSpans>,
    /// Each block: its label, or its first instruction for unlabelled blocks.
    pub blocks: SecondaryMap<BlockId, Span>,
    /// Each register's declaration.
    pub regs: SecondaryMap<RegId, Span>,
    /// Each body-local variable's declaration.
    pub locals: SecondaryMap<LocalId, Span>,
}
