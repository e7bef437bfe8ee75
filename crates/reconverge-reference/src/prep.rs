//! Preparation of a module for interpretation: where every variable lives and where every block starts.
//!
//! Nothing here is decoded: instructions stay [`reconverge_ir::Inst`]s and are interpreted as they are. This
//! module only answers the name-resolution questions the interpreter asks on every instruction: the flat
//! instruction position of a branch target, the byte offset of a variable in its state space, the width of
//! a register, and the initial contents of module variables.

use crate::error::ModuleError;
use reconverge_ir::{
    BlockId, EntityRef, FuncId, FuncKind, Function, GlobalId, Imm, InitValue, Initializer, InstId, LocalId, Module,
    ScalarType, StateSpace, Symbol, Variable,
};
use reconverge_program::layout::{
    align_up, place_allocation, CONST_WINDOW, FUNC_ADDR_BASE, GLOBAL_BASE, SHARED_WINDOW,
};

/// Where a variable declared in a function body lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum VarPlace {
    /// In the thread's local memory, at this offset from the frame's local base.
    Local(u64),
    /// In the frame's parameter area (call staging `.param` variables), at this offset.
    FrameParam(u64),
    /// In the CTA's shared memory, at this offset.
    Shared(u64),
    /// In the constant bank, at this offset.
    Const(u64),
    /// Not addressable (registers-only declarations, textures, ...).
    None,
}

/// Where a module-level variable lives.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum GlobalPlace {
    /// A device (global) address.
    Global(u64),
    /// An offset in every CTA's shared memory (dynamic shared memory included).
    Shared(u64),
    /// An offset in the constant bank.
    Const(u64),
    /// Not addressable.
    None,
}

/// A function body laid out for interpretation.
pub(crate) struct FuncCode {
    /// Every instruction, blocks concatenated in layout order (a flat position is a "pc").
    pub insts: Vec<InstId>,
    /// The flat position of each block's first instruction, by block index.
    pub block_start: Vec<usize>,
    /// The width in bits of each register, by register index (1 for predicates).
    pub reg_bits: Vec<u32>,
    /// Bytes of `.local` variables in one frame.
    pub local_size: u64,
    /// Placement of each body variable, by local index.
    pub vars: Vec<VarPlace>,
    /// Offsets of the function's input parameters in the frame's parameter area (device functions).
    pub param_off: Vec<u64>,
    /// Offsets of the function's return parameters in the frame's parameter area.
    pub ret_off: Vec<u64>,
    /// Size of the frame's parameter area.
    pub param_area: u64,
}

/// A kernel parameter in the kernel parameter buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct KernelParam {
    /// Offset in the parameter buffer.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
}

/// A module prepared for one kernel launch.
pub(crate) struct Prepared<'m> {
    /// The module.
    pub module: &'m Module,
    /// The kernel.
    pub kernel: FuncId,
    /// The body of every function with one, by function index.
    pub funcs: Vec<Option<FuncCode>>,
    /// Placement of module variables, by global index.
    pub globals: Vec<GlobalPlace>,
    /// Initial contents of the module's `.global` variables: (address, bytes, name).
    pub global_data: Vec<(u64, Vec<u8>, String)>,
    /// First free device address after the module variables.
    pub global_end: u64,
    /// Initial constant bank.
    pub consts: Vec<u8>,
    /// Static shared memory size (= the start of dynamic shared memory).
    pub static_shared: u64,
    /// Kernel parameters.
    pub params: Vec<KernelParam>,
    /// Size of the kernel parameter buffer.
    pub param_size: u64,
}

fn var_align(v: &Variable) -> u64 {
    v.alignment().max(1)
}

/// Largest variable (and state space) the reference lays out, in bytes.
const MAX_BYTES: u64 = 1 << 30;

/// Checks that `v`'s size and alignment are sane, so that `size_bytes` and `align_up` cannot overflow.
fn check_var(v: &Variable) -> Result<(), ModuleError> {
    let mut n: u64 = 1;
    for d in &v.dims {
        n = n.checked_mul(d.unwrap_or(0)).ok_or_else(|| ModuleError::TooLarge(v.name.clone()))?;
    }
    let elem = v.ty.bytes() as u64 * v.vector.unwrap_or(1) as u64;
    let size = n.checked_mul(elem).ok_or_else(|| ModuleError::TooLarge(v.name.clone()))?;
    if size > MAX_BYTES {
        return Err(ModuleError::VariableTooLarge { name: v.name.clone(), size, max: MAX_BYTES });
    }
    if v.alignment() > 1 << 16 {
        return Err(ModuleError::Alignment { name: v.name.clone(), alignment: v.alignment() });
    }
    Ok(())
}

fn check_module(module: &Module) -> Result<(), ModuleError> {
    for (_, v) in module.globals.iter() {
        check_var(v)?;
    }
    for (_, f) in module.functions.iter() {
        for v in f.params.iter().chain(&f.rets).chain(f.locals.values()) {
            check_var(v)?;
        }
    }
    Ok(())
}

fn check_total(what: &str, size: u64) -> Result<(), ModuleError> {
    if size > MAX_BYTES {
        return Err(ModuleError::LayoutTooLarge { what: what.to_string(), size, max: MAX_BYTES });
    }
    Ok(())
}

fn is_unsized(v: &Variable) -> bool {
    v.dims.iter().any(|d| d.is_none())
}

fn lay_out(f: &Function) -> Result<FuncCode, ModuleError> {
    let mut insts = Vec::new();
    let mut block_start = vec![usize::MAX; f.blocks.len()];
    for &b in &f.layout {
        block_start[b.index()] = insts.len();
        insts.extend(f.blocks[b].insts.iter().copied());
    }
    let reg_bits = f.regs.values().map(|r| if r.ty == ScalarType::Pred { 1 } else { r.ty.bits().min(64) }).collect();
    let mut local_size = 0u64;
    let mut param_area = 0u64;
    let place_param = |v: &Variable, area: &mut u64| {
        let off = align_up(*area, var_align(v));
        *area = off + v.size_bytes();
        off
    };
    let param_off = f.params.iter().map(|v| place_param(v, &mut param_area)).collect();
    let ret_off = f.rets.iter().map(|v| place_param(v, &mut param_area)).collect();
    let mut vars = Vec::with_capacity(f.locals.len());
    for (_, v) in f.locals.iter() {
        vars.push(match v.space {
            StateSpace::Local => {
                let off = align_up(local_size, var_align(v));
                local_size = off + v.size_bytes();
                VarPlace::Local(off)
            }
            StateSpace::Param => VarPlace::FrameParam(place_param(v, &mut param_area)),
            // Shared and constant body variables are placed module-wide below.
            _ => VarPlace::None,
        });
    }
    check_total(&format!("the frame of `{}`", f.name), local_size.max(param_area))?;
    Ok(FuncCode { insts, block_start, reg_bits, local_size, vars, param_off, ret_off, param_area })
}

/// The bytes of an initializer for `v`, given how to resolve symbol addresses.
fn init_bytes(
    v: &Variable,
    init: &Initializer,
    addr_of: &dyn Fn(Symbol, bool) -> Result<u64, ModuleError>,
) -> Result<Vec<u8>, ModuleError> {
    fn flatten<'a>(i: &'a Initializer, out: &mut Vec<&'a InitValue>) {
        match i {
            Initializer::Value(v) => out.push(v),
            Initializer::List(items) => items.iter().for_each(|x| flatten(x, out)),
        }
    }
    let mut vals = Vec::new();
    flatten(init, &mut vals);
    let elem = v.ty.bytes() as usize;
    let mut out = Vec::with_capacity(vals.len() * elem);
    for val in vals {
        let bits = match val {
            InitValue::Imm(imm) => imm_bits(*imm, v.ty),
            InitValue::Addr { sym, generic, offset } => addr_of(*sym, *generic)?.wrapping_add(*offset as u64),
        };
        out.extend_from_slice(&bits.to_le_bytes()[..elem.min(8)]);
        out.resize(out.len() + elem.saturating_sub(8), 0);
    }
    Ok(out)
}

/// The bits an immediate has as an operand of type `ty` (float literals convert between widths).
pub(crate) fn imm_bits(imm: Imm, ty: ScalarType) -> u64 {
    use reconverge_semantics::{cvt, FloatMode, FloatTy};
    match imm {
        Imm::Int(v) => v as u64,
        Imm::F32(b) => match ty {
            ScalarType::F64 => (f32::from_bits(b) as f64).to_bits(),
            ScalarType::F16 => cvt::float_to_float(FloatTy::F16, FloatTy::F32, FloatMode::RN, b as u64),
            ScalarType::Bf16 => cvt::float_to_float(FloatTy::Bf16, FloatTy::F32, FloatMode::RN, b as u64),
            _ => b as u64,
        },
        Imm::F64(b) => match ty {
            ScalarType::F32 => (f64::from_bits(b) as f32).to_bits() as u64,
            ScalarType::F16 => cvt::float_to_float(FloatTy::F16, FloatTy::F64, FloatMode::RN, b),
            ScalarType::Bf16 => cvt::float_to_float(FloatTy::Bf16, FloatTy::F64, FloatMode::RN, b),
            _ => b,
        },
    }
}

impl<'m> Prepared<'m> {
    /// Lays out `module` for running `kernel`.
    pub(crate) fn new(module: &'m Module, kernel: FuncId) -> Result<Prepared<'m>, ModuleError> {
        let kf = module.functions.get(kernel).ok_or(ModuleError::NoFunction(kernel))?;
        if kf.kind != FuncKind::Entry || !kf.has_body {
            return Err(ModuleError::NotAKernel(kf.name.clone()));
        }
        check_module(module)?;
        let mut funcs = Vec::with_capacity(module.functions.len());
        for (_, f) in module.functions.iter() {
            funcs.push(if f.has_body { Some(lay_out(f)?) } else { None });
        }
        // Module variables.
        let mut globals = vec![GlobalPlace::None; module.globals.len()];
        let mut next_global = GLOBAL_BASE;
        let mut global_bytes = 0u64;
        let mut const_size = 0u64;
        let mut shared_size = 0u64;
        let mut dynamic = Vec::new();
        for (gid, v) in module.globals.iter() {
            match v.space {
                StateSpace::Global => {
                    let addr;
                    (addr, next_global) = place_allocation(next_global, v.size_bytes(), var_align(v));
                    global_bytes = global_bytes.saturating_add(v.size_bytes());
                    globals[gid.index()] = GlobalPlace::Global(addr);
                }
                StateSpace::Const => {
                    let off = align_up(const_size, var_align(v));
                    const_size = off + v.size_bytes();
                    globals[gid.index()] = GlobalPlace::Const(off);
                }
                StateSpace::Shared if is_unsized(v) => dynamic.push(gid),
                StateSpace::Shared => {
                    let off = align_up(shared_size, var_align(v));
                    shared_size = off + v.size_bytes();
                    globals[gid.index()] = GlobalPlace::Shared(off);
                }
                _ => {}
            }
        }
        // Body-scope shared and constant variables are one instance per CTA / launch.
        for (fid, f) in module.functions.iter() {
            let Some(code) = funcs[fid.index()].as_mut() else { continue };
            for (lid, v) in f.locals.iter() {
                match v.space {
                    StateSpace::Shared if !is_unsized(v) => {
                        let off = align_up(shared_size, var_align(v));
                        shared_size = off + v.size_bytes();
                        code.vars[lid.index()] = VarPlace::Shared(off);
                    }
                    StateSpace::Const => {
                        let off = align_up(const_size, var_align(v));
                        const_size = off + v.size_bytes();
                        code.vars[lid.index()] = VarPlace::Const(off);
                    }
                    _ => {}
                }
            }
        }
        check_total("static shared memory", shared_size)?;
        check_total("the constant bank", const_size)?;
        check_total("module .global variables", global_bytes)?;
        let static_shared = align_up(shared_size, 16);
        for gid in dynamic {
            globals[gid.index()] = GlobalPlace::Shared(static_shared);
        }
        for (fid, f) in module.functions.iter() {
            let Some(code) = funcs[fid.index()].as_mut() else { continue };
            for (lid, v) in f.locals.iter() {
                if v.space == StateSpace::Shared && is_unsized(v) {
                    code.vars[lid.index()] = VarPlace::Shared(static_shared);
                }
            }
        }
        // Kernel parameters.
        let mut params = Vec::with_capacity(kf.params.len());
        let mut param_size = 0u64;
        for p in &kf.params {
            let offset = align_up(param_size, var_align(p));
            let size = p.size_bytes();
            param_size = offset + size;
            params.push(KernelParam { offset, size });
        }
        let mut prep = Prepared {
            module,
            kernel,
            funcs,
            globals,
            global_data: Vec::new(),
            global_end: align_up(next_global, 256),
            consts: vec![0; const_size as usize],
            static_shared,
            params,
            param_size,
        };
        prep.initialize()?;
        Ok(prep)
    }

    /// Fills module `.global` and `.const` variables from their initializers.
    fn initialize(&mut self) -> Result<(), ModuleError> {
        let module = self.module;
        let globals = self.globals.clone();
        let addr_of = |sym: Symbol, generic: bool| -> Result<u64, ModuleError> {
            match sym {
                Symbol::Global(g) => match globals.get(g.index()).copied().unwrap_or(GlobalPlace::None) {
                    GlobalPlace::Global(a) => Ok(a),
                    GlobalPlace::Shared(o) => Ok(if generic { SHARED_WINDOW + o } else { o }),
                    GlobalPlace::Const(o) => Ok(if generic { CONST_WINDOW + o } else { o }),
                    GlobalPlace::None => Err(ModuleError::InitializerAddress(module.globals[g].name.clone())),
                },
                Symbol::Func(f) => Ok(FUNC_ADDR_BASE + f.index() as u64),
                other => Err(ModuleError::InitializerSymbol(format!("{other:?}"))),
            }
        };
        for (gid, v) in module.globals.iter() {
            match globals[gid.index()] {
                GlobalPlace::Global(addr) => {
                    let mut data = match &v.init {
                        Some(init) => init_bytes(v, init, &addr_of)?,
                        None => Vec::new(),
                    };
                    data.resize(v.size_bytes() as usize, 0);
                    self.global_data.push((addr, data, v.name.clone()));
                }
                GlobalPlace::Const(off) => {
                    if let Some(init) = &v.init {
                        let data = init_bytes(v, init, &addr_of)?;
                        let n = data.len().min(v.size_bytes() as usize);
                        let o = off as usize;
                        self.consts[o..o + n].copy_from_slice(&data[..n]);
                    }
                }
                _ => {}
            }
        }
        for (fid, f) in module.functions.iter() {
            let Some(code) = self.funcs[fid.index()].as_ref() else { continue };
            for (lid, v) in f.locals.iter() {
                if let (VarPlace::Const(off), Some(init)) = (code.vars[lid.index()], &v.init) {
                    let data = init_bytes(v, init, &addr_of)?;
                    let n = data.len().min(v.size_bytes() as usize);
                    let o = off as usize;
                    self.consts[o..o + n].copy_from_slice(&data[..n]);
                }
            }
        }
        Ok(())
    }

    /// The code of function `f` (which must have a body).
    pub(crate) fn code(&self, f: FuncId) -> Option<&FuncCode> {
        self.funcs.get(f.index()).and_then(|c| c.as_ref())
    }

    /// The flat position of `block` in `f`.
    pub(crate) fn block_pc(&self, f: FuncId, block: BlockId) -> Option<usize> {
        self.code(f).and_then(|c| c.block_start.get(block.index()).copied()).filter(|&p| p != usize::MAX)
    }

    /// Placement of body variable `l` of `f`.
    pub(crate) fn var(&self, f: FuncId, l: LocalId) -> VarPlace {
        self.code(f).and_then(|c| c.vars.get(l.index()).copied()).unwrap_or(VarPlace::None)
    }

    /// Placement of module variable `g`.
    pub(crate) fn global(&self, g: GlobalId) -> GlobalPlace {
        self.globals.get(g.index()).copied().unwrap_or(GlobalPlace::None)
    }
}
