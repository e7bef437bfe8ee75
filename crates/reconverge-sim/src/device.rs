//! The device state of a launch before it runs and what comes back after: device memory (argument buffers
//! and module `.global` variables), the constant bank, the parameter buffer; module variables set from
//! the launch (`LaunchConfig::globals`) and read back (`LaunchConfig::dump_globals`); the memory limit.
//!
//! Both drivers (the functional machine and the timing model) build a [`DeviceState`] and collect
//! [`Outputs`] from it, so setup and read-back are written once.

use crate::error::{try_copy, try_zeros, LaunchError, SimError};
use crate::launch::{Arg, Buffer, Dtype, LaunchArgs, LaunchConfig};
use crate::memory::DeviceMemory;
use crate::program::Program;
use reconverge_ir::ScalarType;
use reconverge_program::{FieldBuffer, StructArg, VariableUse};
use std::borrow::Cow;

/// Device memory, the constant bank and the parameter buffer of a launch, plus where its buffers are.
pub struct DeviceState {
    /// Device (global) memory.
    pub mem: DeviceMemory,
    /// The constant bank.
    pub consts: Vec<u8>,
    /// The kernel parameter buffer.
    pub params: Vec<u8>,
    /// Address and dtype of each buffer argument (`None` for scalars).
    arg_addrs: Vec<Option<(u64, Dtype)>>,
    /// Argument, field, address and dtype of each buffer a struct argument's pointer field points into.
    field_addrs: Vec<(usize, usize, u64, Dtype)>,
    /// For pointer variables set from a buffer: the variable and the address of the buffer allocated for it.
    global_allocs: Vec<(String, u64, Dtype)>,
}

/// What a run leaves behind for the caller.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outputs {
    /// Final contents of every buffer argument (`None` for scalars), in argument order.
    pub buffers: Vec<Option<Buffer>>,
    /// Final contents of each variable named in [`LaunchConfig::dump_globals`], in that order.
    pub globals: Vec<(String, Buffer)>,
    /// Final contents of the buffers that struct arguments' pointer fields point into.
    pub fields: Vec<FieldBuffer>,
}

/// The dtype a variable's contents are written back as.
fn dtype_of(ty: ScalarType) -> Dtype {
    use ScalarType as T;
    match ty {
        T::S8 => Dtype::I8,
        T::S16 => Dtype::I16,
        T::S32 => Dtype::I32,
        T::S64 => Dtype::I64,
        T::U16 | T::B16 | T::F16 | T::Bf16 => Dtype::U16,
        T::U32 | T::B32 => Dtype::U32,
        T::U64 | T::B64 => Dtype::U64,
        T::F32 => Dtype::F32,
        T::F64 => Dtype::F64,
        _ => Dtype::U8,
    }
}

impl DeviceState {
    /// Builds the device state of a launch: places module variables, applies `cfg.globals`, allocates
    /// argument buffers (taking them over when `args` is owned, copying them when borrowed) and fills the
    /// parameter buffer. Checks the memory limit first (with `model_bytes`, what the timing model's own
    /// structures take, 0 for functional runs); a host allocation that fails is
    /// [`SimError::OutOfMemory`], never an abort.
    pub fn new(
        prog: &Program,
        args: LaunchArgs<'_>,
        cfg: &LaunchConfig,
        resident_ctas: u64,
        model_bytes: u64,
    ) -> Result<DeviceState, SimError> {
        check_memory(prog, &args, cfg, resident_ctas, model_bytes)?;
        let mut mem = DeviceMemory::new();
        for g in &prog.globals {
            let mut data = try_zeros(g.size as usize, || format!("module variable `{}`", g.name))?;
            data[..g.init.len().min(g.size as usize)].copy_from_slice(&g.init[..g.init.len().min(g.size as usize)]);
            mem.place(g.addr, data, g.name.clone());
        }
        let mut consts = try_zeros(prog.const_size as usize, || "the constant bank".into())?;
        for c in &prog.consts {
            let a = c.addr as usize;
            if !c.init.is_empty() {
                consts[a..a + c.init.len()].copy_from_slice(&c.init);
            }
        }
        let global_allocs = set_globals(prog, cfg, &mut mem, &mut consts)?;
        let Params { bytes: params, arg_addrs, field_addrs } = fill_params(prog, args, &mut mem)?;
        Ok(DeviceState { mem, consts, params, arg_addrs, field_addrs, global_allocs })
    }

    /// A device state the caller keeps between launches: `mem` (module variables and every allocation,
    /// at the addresses the caller chose), the constant bank `consts` and the launch's parameter buffer
    /// `params`, laid out as the kernel's parameters are. No buffers are allocated; after the run the
    /// caller takes its memory back ([`DeviceState::into_parts`]).
    pub fn resident(mem: DeviceMemory, consts: Vec<u8>, params: Vec<u8>) -> DeviceState {
        DeviceState { mem, consts, params, arg_addrs: Vec::new(), field_addrs: Vec::new(), global_allocs: Vec::new() }
    }

    /// Device memory and the constant bank, taken back after a run.
    pub fn into_parts(self) -> (DeviceMemory, Vec<u8>) {
        (self.mem, self.consts)
    }

    /// Checks a resident state against the launch: the parameter buffer's size, the constant bank's, and
    /// the memory limit (its allocations plus the resident CTAs' state, plus `model_bytes` for the timing
    /// model's own structures).
    pub fn check_resident(
        &self,
        prog: &Program,
        cfg: &LaunchConfig,
        resident_ctas: u64,
        model_bytes: u64,
    ) -> Result<(), SimError> {
        if self.params.len() < prog.param_size as usize || self.consts.len() < prog.const_size as usize {
            return Err(LaunchError::Machine(format!(
                "resident state of {} parameter and {} constant bytes for a kernel with {} and {}",
                self.params.len(),
                self.consts.len(),
                prog.param_size,
                prog.const_size
            ))
            .into());
        }
        let [_, _, ctas] = memory_estimate(prog, &LaunchArgs::Borrowed(&[]), cfg, resident_ctas);
        let held = self.mem.allocations().iter().map(|a| a.data.len() as u64).fold(0u64, u64::saturating_add);
        let total = held.saturating_add(ctas.1).saturating_add(model_bytes);
        if total > cfg.limits.max_memory {
            let mut parts = vec![("device memory", held), ctas];
            if model_bytes > 0 {
                parts.push(("timing model", model_bytes));
            }
            return Err(LaunchError::MemoryLimit { total, parts, limit: cfg.limits.max_memory }.into());
        }
        Ok(())
    }

    /// The final buffer arguments and the variables named in `cfg.dump_globals`. The buffers move out of
    /// device memory (no copy); the state is consumed.
    pub fn into_outputs(mut self, prog: &Program, cfg: &LaunchConfig) -> Outputs {
        let buffers = self
            .arg_addrs
            .iter()
            .map(|a| {
                let (addr, dtype) = (*a)?;
                let al = self.mem.allocation_mut(addr)?;
                Some(Buffer { dtype, bytes: std::mem::take(&mut al.data) })
            })
            .collect();
        let fields = self
            .field_addrs
            .iter()
            .filter_map(|&(arg, field, addr, dtype)| {
                let al = self.mem.allocation_mut(addr)?;
                Some(FieldBuffer { arg, field, buffer: Buffer { dtype, bytes: std::mem::take(&mut al.data) } })
            })
            .collect();
        let globals = cfg
            .dump_globals
            .iter()
            .filter_map(|name| {
                let (is_const, v) = prog.find_variable(name, VariableUse::Dump).ok()?;
                // A pointer set from a buffer: the buffer; otherwise the variable itself.
                if let Some((_, addr, dtype)) = self.global_allocs.iter().find(|(n, ..)| *n == v.name) {
                    let al = self.mem.allocation(*addr)?;
                    return Some((name.clone(), Buffer { dtype: *dtype, bytes: al.data.clone() }));
                }
                let bytes = if is_const {
                    self.consts.get(v.addr as usize..(v.addr + v.size) as usize)?.to_vec()
                } else {
                    self.mem.allocation(v.addr)?.data.clone()
                };
                let dtype = dtype_of(v.ty);
                let dtype = if bytes.len() % dtype.size() == 0 { dtype } else { Dtype::U8 };
                Some((name.clone(), Buffer { dtype, bytes }))
            })
            .collect();
        Outputs { buffers, globals, fields }
    }
}

/// An argument as the device receives it: its buffers borrowed (the device copies them) or owned (the
/// device takes them over).
enum Item<'b> {
    Scalar(u64),
    Buffer(Cow<'b, Buffer>, u64),
    Struct(Cow<'b, StructArg>),
}

/// A buffer's bytes for device memory: a copy of a borrowed buffer, an owned buffer's own bytes.
fn device_bytes(b: &mut Cow<'_, Buffer>, name: &str) -> Result<Vec<u8>, SimError> {
    Ok(match b {
        Cow::Borrowed(b) => try_copy(&b.bytes, || name.to_string())?,
        Cow::Owned(b) => std::mem::take(&mut b.bytes),
    })
}

/// The parameter buffer of a launch and where its buffers went.
struct Params {
    /// The parameter buffer.
    bytes: Vec<u8>,
    /// Address and dtype of each argument's buffer (`None` for scalars and structs).
    arg_addrs: Vec<Option<(u64, Dtype)>>,
    /// Argument, field, address and dtype of each buffer a struct argument points into.
    field_addrs: Vec<(usize, usize, u64, Dtype)>,
}

/// Allocates the buffers a struct argument (argument `i`, parameter `param`) points into and returns its
/// bytes with their addresses.
fn place_struct(
    mem: &mut DeviceMemory,
    mut s: Cow<'_, StructArg>,
    i: usize,
    param: &str,
    field_addrs: &mut Vec<(usize, usize, u64, Dtype)>,
) -> Result<Vec<u8>, SimError> {
    let mut addrs = Vec::with_capacity(s.pointers.len());
    for k in 0..s.pointers.len() {
        let (field, dtype) = (s.pointers[k].field, s.pointers[k].buffer.dtype);
        let name = format!("argument {i} ({param}) field {field}");
        let data = match &mut s {
            Cow::Borrowed(s) => try_copy(&s.pointers[k].buffer.bytes, || name.clone())?,
            Cow::Owned(s) => std::mem::take(&mut s.pointers[k].buffer.bytes),
        };
        let addr = mem.alloc(data, name);
        addrs.push(addr);
        field_addrs.push((i, field, addr, dtype));
    }
    Ok(s.bytes_with(&addrs))
}

/// The parameter buffer of a launch: allocates every argument buffer (and every buffer a struct
/// argument points into) and writes each argument into its parameter.
fn fill_params(prog: &Program, args: LaunchArgs<'_>, mem: &mut DeviceMemory) -> Result<Params, SimError> {
    let n = args.as_slice().len();
    if n != prog.params.len() {
        let params = prog.params.iter().map(|p| format!("{} (.{})", p.name, p.ty.as_str())).collect();
        return Err(LaunchError::ArgumentCount { kernel: prog.kernel_name().to_string(), params, given: n }.into());
    }
    for (i, (a, p)) in args.as_slice().iter().zip(&prog.params).enumerate() {
        reconverge_program::check_arg(i, &p.name, p.size, p.align, a).map_err(LaunchError::from)?;
    }
    let mut out = Params { bytes: vec![0u8; prog.param_size as usize], arg_addrs: Vec::new(), field_addrs: Vec::new() };
    let items: Vec<Item<'_>> = match args {
        LaunchArgs::Borrowed(a) => a
            .iter()
            .map(|a| match a {
                Arg::Scalar(v) => Item::Scalar(*v),
                Arg::Buffer(b) => Item::Buffer(Cow::Borrowed(b), 0),
                Arg::BufferAt { buffer, offset } => Item::Buffer(Cow::Borrowed(buffer), *offset),
                Arg::Struct(s) => Item::Struct(Cow::Borrowed(s)),
            })
            .collect(),
        LaunchArgs::Owned(a) => a
            .into_iter()
            .map(|a| match a {
                Arg::Scalar(v) => Item::Scalar(v),
                Arg::Buffer(b) => Item::Buffer(Cow::Owned(b), 0),
                Arg::BufferAt { buffer, offset } => Item::Buffer(Cow::Owned(buffer), offset),
                Arg::Struct(s) => Item::Struct(Cow::Owned(s)),
            })
            .collect(),
    };
    for (i, (a, p)) in items.into_iter().zip(&prog.params).enumerate() {
        let o = p.offset as usize;
        let value = match a {
            Item::Scalar(v) => {
                out.arg_addrs.push(None);
                v
            }
            Item::Buffer(..) if p.size != 8 => {
                let (param, ty, size) = (p.name.clone(), p.ty.as_str(), p.size);
                return Err(LaunchError::BufferForScalar { index: i, param, ty, size }.into());
            }
            Item::Buffer(mut b, offset) => {
                let name = format!("argument {i} ({})", p.name);
                let addr = mem.alloc(device_bytes(&mut b, &name)?, name);
                out.arg_addrs.push(Some((addr, b.dtype)));
                addr.wrapping_add(offset)
            }
            Item::Struct(s) => {
                out.arg_addrs.push(None);
                let bytes = place_struct(mem, s, i, &p.name, &mut out.field_addrs)?;
                out.bytes[o..o + bytes.len()].copy_from_slice(&bytes);
                continue;
            }
        };
        let n = (p.size as usize).min(8);
        out.bytes[o..o + n].copy_from_slice(&value.to_le_bytes()[..n]);
    }
    Ok(out)
}

/// Applies `cfg.globals`: returns the buffers allocated for pointer variables.
fn set_globals(
    prog: &Program,
    cfg: &LaunchConfig,
    mem: &mut DeviceMemory,
    consts: &mut [u8],
) -> Result<Vec<(String, u64, Dtype)>, SimError> {
    let mut global_allocs = Vec::new();
    for gi in &cfg.globals {
        let (is_const, v) = prog.find_variable(&gi.name, VariableUse::Set)?;
        let bytes: Vec<u8> = match &gi.value {
            Arg::Scalar(bits) => {
                if v.size > 8 {
                    return Err(LaunchError::NumberForLargeVariable { name: gi.name.clone(), size: v.size }.into());
                }
                bits.to_le_bytes()[..v.size as usize].to_vec()
            }
            Arg::Buffer(b) | Arg::BufferAt { buffer: b, .. } if v.scalar && v.size == 8 => {
                let offset = if let Arg::BufferAt { offset, .. } = &gi.value { *offset } else { 0 };
                let what = format!("module variable `{}`", gi.name);
                let addr = mem.alloc(try_copy(&b.bytes, || what.clone())?, what);
                global_allocs.push((v.name.clone(), addr, b.dtype));
                addr.wrapping_add(offset).to_le_bytes().to_vec()
            }
            Arg::BufferAt { .. } | Arg::Struct(_) => {
                return Err(LaunchError::from(reconverge_program::ArgShapeError::NotForVariable(gi.name.clone())).into())
            }
            Arg::Buffer(b) => {
                if b.bytes.len() as u64 > v.size {
                    let (name, bytes, size) = (gi.name.clone(), b.bytes.len(), v.size);
                    return Err(LaunchError::BufferTooLargeForVariable { name, bytes, size }.into());
                }
                b.bytes.clone()
            }
        };
        if is_const {
            let a = v.addr as usize;
            consts[a..a + bytes.len()].copy_from_slice(&bytes);
        } else if let Some(al) = mem.allocation_mut(v.addr) {
            al.data[..bytes.len()].copy_from_slice(&bytes);
        }
    }
    Ok(global_allocs)
}

/// The memory a launch needs at least, by part: argument buffers (twice when the device copies them: the
/// caller's and the device's), module variables, and the state of the CTAs resident at once (registers,
/// predicates, shared memory, kernel frames).
pub fn memory_estimate(
    prog: &Program,
    args: &LaunchArgs<'_>,
    cfg: &LaunchConfig,
    resident_ctas: u64,
) -> [(&'static str, u64); 3] {
    let buffers: u64 = args
        .as_slice()
        .iter()
        .map(Arg::buffer_bytes)
        .fold(0u64, u64::saturating_add)
        .saturating_mul(if args.copies() { 2 } else { 1 });
    let globals = prog
        .globals
        .iter()
        .map(|g| g.size)
        .fold(prog.const_size.saturating_add(prog.param_size as u64), u64::saturating_add);
    let threads = cfg.threads_per_cta_u64();
    let w = cfg.warp_size.max(1) as u64;
    let slots = threads.div_ceil(w).saturating_mul(w);
    let per_cta = (prog.nregs as u64)
        .saturating_mul(8)
        .saturating_add(prog.functions[0].frame_size as u64 + 64)
        .saturating_mul(slots)
        .saturating_add(prog.static_shared as u64 + cfg.dynamic_shared as u64);
    let ctas = resident_ctas.min(cfg.num_ctas()).max(1);
    [("argument buffers", buffers), ("module variables", globals), ("resident CTAs", per_cta.saturating_mul(ctas))]
}

fn check_memory(
    prog: &Program,
    args: &LaunchArgs<'_>,
    cfg: &LaunchConfig,
    resident_ctas: u64,
    model_bytes: u64,
) -> Result<(), SimError> {
    let parts = memory_estimate(prog, args, cfg, resident_ctas);
    let total = parts.iter().map(|p| p.1).fold(0u64, u64::saturating_add).saturating_add(model_bytes);
    if total > cfg.limits.max_memory {
        let mut parts = parts.to_vec();
        if model_bytes > 0 {
            parts.push(("timing model", model_bytes));
        }
        return Err(LaunchError::MemoryLimit { total, parts, limit: cfg.limits.max_memory }.into());
    }
    Ok(())
}
