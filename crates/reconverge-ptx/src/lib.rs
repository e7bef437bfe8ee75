//! The PTX front end of reconverge: PTX text to [`reconverge_ir::Module`].
//!
//! [`parse`] runs three stages:
//! 1. [`lexer`]: a `logos` lexer produces tokens with byte spans (whitespace and comments dropped).
//! 2. [`parser`]: a recursive-descent parser builds the [`ast`], a tree close to the text with a span on
//!    every node. Instructions are generic records (guard, opcode, dot-words, operands), so the order of
//!    modifiers never matters and unknown opcodes parse (as [`reconverge_ir::Opcode::Unknown`]).
//! 3. [`lower`]: names are resolved (registers, variables, parameters, labels, functions), nested scopes are
//!    flattened (clashing names renamed `name$N`), bodies are split into basic blocks, and operand counts,
//!    guards and special registers are checked.
//!
//! Errors are [`Diagnostic`]s with byte spans and stable codes ([`codes`]); lexing and parsing stop at the
//! first error, lowering reports every error it finds. [`SourceError`] renders them for the command line,
//! as plain text or through `miette`.
//!
//! The front end never panics and terminates on every input: tokens are consumed on every path, nesting
//! is bounded, and all indexing is checked.
//!
//! # What parses
//! Everything NVRTC, nvcc and clang emit for sm_70 to sm_90 (PTX ISA 7.x and 8.x), in particular:
//! - module directives `.version`, `.target`, `.address_size`, `.file` (kept), `.loc` (attached to the
//!   instructions that follow, also in its `function_name`/`inlined_at` form), `.section` (skipped);
//! - `.entry`/`.func` with linkage, return and `.ptr`/`.align`/array parameters, `.noreturn`, prototypes
//!   (later definitions reuse the prototype's [`reconverge_ir::FuncId`]) and performance directives;
//! - module and body variables in every state space with alignment, vectors, array dimensions and
//!   initializers (`generic(name)+4`, nested lists, every numeric literal form);
//! - `.reg` declarations (`%r<10>`, lists, vectors), nested `{ }` scopes (flattened; names declared again
//!   are renamed `name$N`), labels, `.branchtargets`, `.callprototype`, body `.pragma`;
//! - instructions with guards, dot-words in any order, and every operand form: registers, special registers,
//!   immediates, `!%p`, symbols, addresses, vectors, pairs `%r|%p`, the sink `_` and `call` lists.
//!
//! Not supported: texture/surface operand syntax (`[tex, {...}]`), vector-register components (`%v.x`),
//! labels repeated in sibling scopes, and special registers the IR does not know (`%clusterid`,
//! `%envreg3`, ...): those are reported as errors.
//!
//! # Round trip
//! [`reconverge_ir::print_module`] prints PTX that parses back to the same IR (after
//! [`reconverge_ir::Module::strip_spans`]); `tests/roundtrip.rs` checks this on every corpus file.
//!
//! ```
//! let m = reconverge_ptx::parse(".version 8.0\n.target sm_80\n.entry k() { ret; }").unwrap();
//! assert_eq!(m.functions.len(), 1);
//! ```
#![deny(missing_docs)]

pub mod ast;
pub mod diag;
mod fxhash;
pub mod lexer;
pub mod lower;
pub mod mutate;
pub mod parser;

pub use diag::{codes, Diagnostic, LineIndex, ParseErrors, SourceError};

/// Parses PTX source text into an IR module, or returns every error found (at least one).
///
/// Each function is lowered as soon as it is parsed (its tree is then dropped), so the syntax tree of a
/// large module never exists as a whole. After a syntax error, the errors are those of the functions
/// before it followed by the syntax error.
pub fn parse(src: &str) -> Result<reconverge_ir::Module, ParseErrors> {
    let tokens = lexer::lex(src).map_err(ParseErrors::new)?;
    let mut lowerer = lower::Lowerer::new();
    let syntax = parser::parse_directives(src, &tokens, &mut |d| lowerer.directive(&d));
    drop(tokens);
    match (syntax, lowerer.finish()) {
        (Ok(()), Ok(m)) => Ok(m),
        (Ok(()), Err(errors)) => Err(errors),
        (Err(d), Ok(_)) => Err(ParseErrors::new(vec![d])),
        (Err(d), Err(errors)) => {
            let mut diags = diag::Diagnostics::default();
            for x in errors.diagnostics {
                diags.push(x);
            }
            diags.push(d);
            let mut all = diags.into_errors();
            all.omitted += errors.omitted;
            Err(all)
        }
    }
}

/// Parses PTX source text into the syntax tree only (no name resolution).
pub fn parse_ast(src: &str) -> Result<ast::Module<'_>, ParseErrors> {
    let tokens = lexer::lex(src).map_err(ParseErrors::new)?;
    parser::parse_tokens(src, &tokens).map_err(|d| ParseErrors::new(vec![d]))
}
