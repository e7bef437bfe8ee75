//! Straight-line runs of per-lane instructions compiled to native code with Cranelift.
//!
//! The functional machine issues straight-line code as runs (one mechanism update for many
//! instructions). This crate compiles a run's *pure lane instructions* — integer and float arithmetic,
//! conversions, comparisons, selections, moves and predicate logic, each computing a lane's destination
//! from that lane's sources — into one native function over a static warp's lanes, two at a time in
//! 128-bit vector registers (one 64-bit register value per lane):
//!
//! ```text
//! for chunk in (0..w).step_by(2):          // lanes chunk and chunk + 1
//!     if no lane of the chunk is active: continue
//!     load the registers and predicate bits the segment reads     (i64x2 vectors, lane masks)
//!     run the instructions                 (a guard blends the new and the old value)
//!     store the registers and predicate bits it wrote, blended under the active lanes
//! ```
//!
//! Lanes are independent in such code, so running a chunk at a time gives exactly what running
//! instruction by instruction over the warp gives. The hottest operations are inlined as vector code
//! with the interpreter's exact semantics (wrapping integer add/sub/mul, bit logic, `f32`
//! add/sub/mul/fma round-to-nearest with the canonical NaN and `.ftz`, 32- and 64-bit integer and
//! `f32`/`f64` comparisons, `selp`, `mov`, predicate logic); every other pure lane operation calls the
//! client's evaluator ([`Evaluators`]) once per lane, which computes it with the same semantics
//! functions as the interpreter. The interpreter stays the reference: a client runs every instruction it
//! does not hand to a compiled segment as before.
//!
//! Compiled code depends only on the segment's instructions, never on the launch: the register file's
//! strides, the warp size and the operations the evaluators receive are arguments. A process-wide
//! [`Cache`] keyed by the instructions therefore compiles each distinct segment once, however many
//! launches, warp sizes and mechanisms run it; it holds at most [`CACHE_SEGMENTS`] segments (then starts
//! over, while launches keep the code they hold alive).
//!
//! The register file layout is the simulator's: value registers `regs[reg * padded + slot]` (64 bits
//! per lane, thread slot `warp * w + lane`), predicates `preds[pred * nwarps + warp]` (one lane mask per
//! static warp, bit = lane).

#![warn(missing_docs)]

mod emit;

use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Module};
use reconverge_program::program::{DInst, Op, Pred, Reg, Src};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Computes a pure lane operation the compiler does not inline: `op` (one of the families
/// [`supports`] accepts) applied to one lane's sources, unused ones 0. Must be the interpreter's
/// semantics and must not unwind.
pub type ValueFn = extern "C" fn(op: *const Op, a: u64, b: u64, c: u64, e: u64) -> u64;

/// Computes the comparison of a `setp` the compiler does not inline (1 when it holds, else 0), for one
/// lane's sources. Must be the interpreter's semantics and must not unwind.
pub type CompareFn = extern "C" fn(op: *const Op, a: u64, b: u64) -> u64;

/// The client's evaluators for operations compiled as calls. A cache serves one client: the evaluators
/// of its first call are the ones compiled into every segment.
#[derive(Clone, Copy, Debug)]
pub struct Evaluators {
    /// Value-producing operations.
    pub value: ValueFn,
    /// `setp` comparisons.
    pub compare: CompareFn,
}

/// The register file's shape, fixed for a launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Threads per warp: an even number up to 64.
    pub w: u32,
    /// Thread slots per CTA (static warps × warp size): the stride of a value register's row.
    pub padded: u32,
    /// Static warps per CTA: the stride of a predicate's row.
    pub nwarps: u32,
}

impl Shape {
    /// Whether compiled code can run on this shape: an even warp size up to 64 (chunks of two lanes
    /// never cross a warp) and `padded = nwarps × w`.
    pub fn compilable(&self) -> bool {
        self.w > 0
            && self.w.is_multiple_of(emit::CHUNK)
            && self.w <= 64
            && u64::from(self.padded) == u64::from(self.nwarps) * u64::from(self.w)
    }
}

/// Why a segment was not compiled.
#[derive(Debug, Clone, thiserror::Error)]
pub enum JitError {
    /// The host has no Cranelift back end.
    #[error("no native code generator for this host: {0}")]
    Host(String),
    /// An instruction of the segment is not a pure lane instruction.
    #[error("instruction {index} of the segment cannot be compiled")]
    Unsupported {
        /// Its index in the segment.
        index: usize,
    },
    /// Cranelift refused the function.
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// A compiled segment's native signature: the warp's first register slot, its word of predicate 0, the
/// active lanes, the warp size, the byte strides of a value register's and a predicate's row, and the
/// segment's first instruction (whose operations the evaluators receive).
type Entry = unsafe extern "C" fn(*mut u64, *mut u64, u64, u64, u64, u64, *const DInst);

/// The native code of one segment and the module that owns it (freed with the last handle).
struct Code {
    entry: Entry,
    /// Instructions of the segment.
    len: usize,
    /// Value registers the code touches: the file must hold `reg_rows` rows.
    reg_rows: u32,
    /// Predicate rows the code touches.
    pred_rows: u32,
    module: Option<JITModule>,
}

// SAFETY: after `Cache::compile` finalized it, a `Code` is never mutated: its module is only touched by
// `Drop`, which runs once, when the last handle goes; the code itself is immutable machine code.
unsafe impl Send for Code {}
// SAFETY: as above; running the code from several threads at once is safe because it keeps no state.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the last handle to this code is going, so none of it runs any more.
            unsafe { m.free_memory() };
        }
    }
}

/// A compiled segment: a cheap handle to shared code.
#[derive(Clone)]
pub struct Segment(Arc<Code>);

impl std::fmt::Debug for Segment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Segment").field("len", &self.0.len).finish()
    }
}

/// Why [`Segment::run`] refused a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The register file or predicate file is smaller than the segment addresses, the shape cannot be
    /// compiled for, the warp lies outside it, the mask names a lane beyond the warp size or the
    /// instructions are not the segment's length.
    #[error("the register file does not have the shape the segment needs")]
    Shape,
}

impl Segment {
    /// Instructions in the segment.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether the segment is empty (never: compiled segments have instructions).
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// Runs the segment for the lanes `mask` of static warp `warp` of a register file of `shape` (lane
    /// `l` is thread slot `warp * w + l` and bit `l` of the warp's predicate words). `insts` must be the
    /// instructions it was compiled from (equal ones; the evaluators receive their operations). Checks
    /// the files' sizes, the shape, the warp and the mask first; on an error nothing ran.
    pub fn run(
        &self,
        insts: &[DInst],
        (regs, preds): (&mut [u64], &mut [u64]),
        shape: Shape,
        (warp, mask): (u32, u64),
    ) -> Result<(), CallError> {
        let code = &self.0;
        let (padded, nwarps, w) = (shape.padded as usize, shape.nwarps as usize, shape.w as usize);
        let warp = warp as usize;
        let rows_fit = regs.len() >= code.reg_rows as usize * padded && preds.len() >= code.pred_rows as usize * nwarps;
        let lanes_fit = w == 64 || mask >> w == 0;
        if !rows_fit || !shape.compilable() || warp >= nwarps || !lanes_fit || insts.len() != code.len {
            return Err(CallError::Shape);
        }
        // SAFETY: the code is alive (`self` holds it); it reads and writes `regs[r * padded + warp * w + l]`
        // for registers r < reg_rows and lanes l < w, and `preds[p * nwarps + warp]` for predicates
        // p < pred_rows, all within the files (checked above); it writes only lanes of `mask`. It passes
        // the evaluators operations of `insts`, which it indexes below `code.len` = `insts.len()`.
        unsafe {
            let base = regs.as_mut_ptr().add(warp * w);
            (code.entry)(
                base,
                preds.as_mut_ptr().add(warp),
                mask,
                w as u64,
                (padded * 8) as u64,
                (nwarps * 8) as u64,
                insts.as_ptr(),
            )
        };
        Ok(())
    }
}

/// Whether `inst` can be part of a segment: a pure lane instruction whose sources are registers,
/// constants or predicates.
pub fn supports(inst: &DInst) -> bool {
    emit::supported(&inst.op)
}

/// What compiling did: segments compiled, their instructions and the time it took (wall clock; not a
/// simulation statistic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileReport {
    /// Segments compiled.
    pub segments: u64,
    /// Instructions in them.
    pub instructions: u64,
    /// Time spent compiling.
    pub time: Duration,
}

impl CompileReport {
    /// Both reports' segments, instructions and time together (the SMs of a timed run compile apart).
    pub fn plus(self, other: CompileReport) -> CompileReport {
        CompileReport {
            segments: self.segments + other.segments,
            instructions: self.instructions + other.instructions,
            time: self.time + other.time,
        }
    }
}

/// Segments the cache holds before it starts over.
pub const CACHE_SEGMENTS: usize = 4096;

/// Compiled segments keyed by their instructions, shared by every launch of the process.
pub struct Cache {
    state: Mutex<CacheState>,
}

struct CacheState {
    /// The host's code generator; `Err` when there is none.
    isa: Result<OwnedTargetIsa, JitError>,
    host: emit::HostVector,
    /// Keyed by [`key`].
    code: HashMap<String, Segment>,
    /// The same segments keyed by where their instructions were last seen (address, length) with a
    /// copy of them: a launch of a program the process already ran finds its segments by comparing
    /// instructions instead of formatting them.
    seen: HashMap<(usize, usize), (Vec<DInst>, Segment)>,
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").finish_non_exhaustive()
    }
}

impl Cache {
    /// The process's cache.
    pub fn global() -> &'static Cache {
        static CACHE: OnceLock<Cache> = OnceLock::new();
        CACHE.get_or_init(|| Cache {
            state: Mutex::new(CacheState {
                isa: host_isa(),
                host: emit::HostVector { fma: host_fma() },
                code: HashMap::new(),
                seen: HashMap::new(),
            }),
        })
    }

    /// The segment of `insts` (consecutive instructions every one of which [`supports`]), compiled
    /// unless it is cached; adds what compiling did to `report`.
    pub fn segment(&self, insts: &[DInst], eval: Evaluators, report: &mut CompileReport) -> Result<Segment, JitError> {
        if let Some(index) = insts.iter().position(|i| !supports(i)) {
            return Err(JitError::Unsupported { index });
        }
        let mut st = self.state.lock().map_err(|_| JitError::Host("the code cache was poisoned".into()))?;
        let at = (insts.as_ptr() as usize, insts.len());
        if let Some((copy, seg)) = st.seen.get(&at) {
            if copy[..] == *insts {
                return Ok(seg.clone());
            }
        }
        let key = key(insts, Some(eval));
        if let Some(seg) = st.code.get(&key).cloned() {
            st.seen.insert(at, (insts.to_vec(), seg.clone()));
            return Ok(seg);
        }
        let start = Instant::now();
        let isa = st.isa.clone()?;
        let seg = compile(isa, insts, eval, st.host)?;
        report.segments += 1;
        report.instructions += insts.len() as u64;
        report.time += start.elapsed();
        if st.code.len() >= CACHE_SEGMENTS || st.seen.len() >= CACHE_SEGMENTS {
            // Launches keep the segments they hold; the rest is freed.
            st.code.clear();
            st.seen.clear();
        }
        st.code.insert(key, seg.clone());
        st.seen.insert(at, (insts.to_vec(), seg.clone()));
        Ok(seg)
    }
}

/// The cache key of a segment: the evaluators' addresses and the instructions' `Debug` form (which
/// shows every field).
fn key(insts: &[DInst], eval: Option<Evaluators>) -> String {
    let (v, c) = eval.map_or((0, 0), |e| (e.value as usize, e.compare as usize));
    format!("{v:x}:{c:x}:{insts:?}")
}

/// The host's code generator, optimising for speed.
fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| JitError::Host(e.to_string()));
    set(&mut flags, "opt_level", "speed")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    // Cranelift checks every function it compiles unless told not to; a release build trusts the emitter
    // (about 40% of each segment's compile time), debug builds and the tests keep checking it.
    if !cfg!(debug_assertions) {
        set(&mut flags, "enable_verifier", "false")?;
    }
    cranelift_native::builder()
        .map_err(|e| JitError::Host(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Host(e.to_string()))
}

/// Compiles one segment into a module of its own.
fn compile(
    isa: OwnedTargetIsa,
    insts: &[DInst],
    eval: Evaluators,
    host: emit::HostVector,
) -> Result<Segment, JitError> {
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let ptr = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    for t in [ptr, ptr, types::I64, types::I64, types::I64, types::I64, ptr] {
        ctx.func.signature.params.push(AbiParam::new(t));
    }
    let codegen = |e: &dyn std::fmt::Display| JitError::Codegen(e.to_string());
    let id = module.declare_anonymous_function(&ctx.func.signature).map_err(|e| codegen(&e))?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let mut fctx = FunctionBuilderContext::new();
    emit::body(&mut ctx.func, &mut fctx, insts, (eval, host), module.target_config());
    module.define_function(id, &mut ctx).map_err(|e| JitError::Codegen(format!("{e:?}")))?;
    module.clear_context(&mut ctx);
    module.finalize_definitions().map_err(|e| codegen(&e))?;
    let raw = module.get_finalized_function(id);
    // SAFETY: `raw` is the finalized code of a function with exactly the signature `Entry` (declared
    // above), built by `emit::body`.
    let entry = unsafe { std::mem::transmute::<*const u8, Entry>(raw) };
    let (reg_rows, pred_rows) = rows(insts);
    Ok(Segment(Arc::new(Code { entry, len: insts.len(), reg_rows, pred_rows, module: Some(module) })))
}

/// Whether the host's vector unit has fused multiply-add (Cranelift then compiles `fma` on vectors).
fn host_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        cfg!(target_arch = "aarch64")
    }
}

/// One more than the highest value register and predicate the instructions name.
fn rows(insts: &[DInst]) -> (u32, u32) {
    let (mut r, mut p) = (0u32, 0u32);
    for i in insts {
        if let Some((g, _)) = i.guard {
            p = p.max(g + 1);
        }
        emit::operands(&i.op, &mut |o| match o {
            emit::Operand::Reg(x) => r = r.max(x + 1),
            emit::Operand::Pred(x) => p = p.max(x + 1),
        });
    }
    (r, p)
}

/// A register or predicate an instruction names (for [`rows`]).
pub(crate) fn src_operand(s: &Src, f: &mut dyn FnMut(emit::Operand)) {
    match *s {
        Src::Reg(r) => f(emit::Operand::Reg(r as Reg)),
        Src::Pred(p) => f(emit::Operand::Pred(p as Pred)),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
