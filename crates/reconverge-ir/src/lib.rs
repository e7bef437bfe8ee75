//! The kernel IR of reconverge.
//!
//! A [`Module`] is one PTX translation unit: a header (`.version`, `.target`, `.address_size`), module-level
//! variables ([`Variable`] in `.global`, `.const`, `.shared`), and [`Function`]s (`.entry` kernels and
//! `.func` device functions). A function body is a list of basic [`Block`]s in layout order; every block
//! holds [`Inst`]s, each a PTX instruction kept in typed form: an [`Opcode`], its [`Modifier`]s and data
//! [`ScalarType`]s in source order, an optional guard predicate, and [`Operand`]s.
//!
//! # Invariants
//! - Every entity is named by a dense `u32` id ([`FuncId`], [`BlockId`], [`InstId`], [`RegId`],
//!   [`GlobalId`], [`LocalId`], ...) into a [`cranelift_entity::PrimaryMap`]; the IR holds no `Rc`/`RefCell`.
//! - Ids are never renumbered: reordering blocks changes [`Function::layout`], not ids.
//! - Blocks are *basic*: control can only enter at the first instruction and only the last instruction can
//!   transfer control (`bra`, `brx.idx`, `ret`, `exit`, `trap`, predicated or not). Calls are straight-line.
//! - Every operand names something that exists: registers are declared in the function, labels are blocks
//!   of the same function, symbols are declared variables, parameters or functions.
//! - Source spans live beside the data ([`FunctionSpans`], [`ModuleSpans`]); [`Module::strip_spans`] clears
//!   them so two modules can be compared for structural equality (the printer round-trip property).
//!
//! The IR knows nothing about simulation: analyses read it, the simulator decodes it into its own form.

#![deny(missing_docs)]

mod entity;
mod inst;
mod module;
pub mod names;
mod print;
mod span;
mod types;

pub use cranelift_entity::{EntityRef, PrimaryMap, SecondaryMap};
pub use entity::{BlockId, FuncId, GlobalId, InstId, LocalId, ProtoId, RegId, TargetsId};
pub use inst::{
    AddrBase, Address, Guard, Imm, Inst, KnownModifier, Modifier, Opcode, Operand, SpecialReg, SpecialRegKind, Symbol,
};
pub use module::{
    Block, BranchTargets, CallPrototype, FileEntry, FuncKind, Function, FunctionSpans, InitValue, Initializer,
    InstSpans, Item, Linkage, Module, ModuleSpans, PerfDirective, PtrAttr, RegDecl, SrcLoc, Variable,
};
pub use print::{print_function, print_inst, print_module, print_operand, InstPrinter};
pub use span::Span;
pub use types::{Dim, ScalarType, StateSpace};
