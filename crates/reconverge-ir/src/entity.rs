//! Dense `u32` ids for every kind of IR entity.

use cranelift_entity::entity_impl;

/// A function (kernel or device function) of a [`crate::Module`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(u32);
entity_impl!(FuncId, "func");

/// A module-level variable (`.global`, `.const`, `.shared` declared outside functions).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(u32);
entity_impl!(GlobalId, "global");

/// A basic block of a [`crate::Function`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BlockId(u32);
entity_impl!(BlockId, "block");

/// An instruction of a [`crate::Function`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstId(u32);
entity_impl!(InstId, "inst");

/// A virtual register declared with `.reg` in a function.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegId(u32);
entity_impl!(RegId, "reg");

/// A variable declared inside a function body (`.local`, `.shared`, `.param` call staging, `.const`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(u32);
entity_impl!(LocalId, "local");

/// A `.branchtargets` list declared in a function (targets of `brx.idx`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetsId(u32);
entity_impl!(TargetsId, "targets");

/// A `.callprototype` declared in a function (signature of an indirect `call`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtoId(u32);
entity_impl!(ProtoId, "proto");
