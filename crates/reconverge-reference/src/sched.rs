//! The launch: device memory and parameters, CTAs, and the one-thread-at-a-time scheduler with CTA
//! barriers, warp-synchronous rendezvous, and deadlock detection.
//!
//! Scheduling: within a CTA, threads take turns in thread order; each runs alone until it exits, blocks
//! (barrier, warp-synchronous instruction, `activemask`) or has used a time slice (so that a thread spinning
//! on a flag another thread sets cannot starve it). A CTA keeps the machine while a round of turns makes
//! progress (some thread exited, blocked or was released); a round in which every runnable thread only
//! spun hands over to the next resident CTA, which is what cross-CTA spin locks need.

use crate::error::{LaunchError, RefError};
use crate::memory::GlobalMem;
use crate::prep::{GlobalPlace, Prepared};
use crate::thread::{
    describe, new_thread, position, resolve_collective, run_slice, write_red, Arrival, Env, RedKind, State, Stop,
    Thread,
};
use crate::{RefOptions, RefResult};
use reconverge_ir::{RegId, ScalarType};
use reconverge_program::layout::place_allocation;
use reconverge_program::{Arg, Buffer, LaunchConfig};

/// One named CTA barrier.
struct BarState {
    arrived: u32,
    waiters: Vec<(usize, Option<(RedKind, RegId)>)>,
    count: Option<u32>,
    popc: u32,
    all: bool,
    any: bool,
}

impl Default for BarState {
    fn default() -> Self {
        BarState { arrived: 0, waiters: Vec::new(), count: None, popc: 0, all: true, any: false }
    }
}

/// A resident CTA.
struct Cta {
    id: [u32; 3],
    threads: Vec<Thread>,
    shared: Vec<u8>,
    bars: Vec<BarState>,
    nwarps: u32,
}

enum Round {
    /// Every thread exited.
    Done,
    /// Something happened; keep running this CTA.
    Progress,
    /// Runnable threads only spun; let another CTA run.
    Spinning,
}

/// The whole launch.
struct Machine<'a, 'm> {
    prep: &'a Prepared<'m>,
    cfg: &'a LaunchConfig,
    opts: &'a RefOptions,
    global: GlobalMem,
    kparams: Vec<u8>,
    /// The constant bank (the module's, with `LaunchConfig::globals` applied).
    consts: Vec<u8>,
}

/// Builds an [`Env`] for `cta` (a macro so that the CTA's threads stay separately borrowable).
macro_rules! env {
    ($m:expr, $shared:expr, $id:expr, $nwarps:expr) => {
        Env {
            prep: $m.prep,
            global: &mut $m.global,
            shared: $shared,
            kparams: &$m.kparams,
            consts: &$m.consts,
            cta: $id,
            grid: $m.cfg.grid,
            block: $m.cfg.block,
            warp_size: $m.cfg.warp_size,
            nwarps: $nwarps,
            dynamic_shared: $m.cfg.dynamic_shared,
            local_limit: $m.cfg.local_bytes as u64,
            max_instructions: $m.opts.max_thread_instructions,
        }
    };
}

impl Machine<'_, '_> {
    fn new_cta(&self, linear: u64) -> Result<Cta, RefError> {
        let g = self.cfg.grid;
        let id = [
            (linear % g[0] as u64) as u32,
            ((linear / g[0] as u64) % g[1] as u64) as u32,
            (linear / (g[0] as u64 * g[1] as u64)) as u32,
        ];
        let b = self.cfg.block;
        let w = self.cfg.warp_size;
        let mut threads = Vec::with_capacity(self.cfg.threads_per_cta() as usize);
        for z in 0..b[2] {
            for y in 0..b[1] {
                for x in 0..b[0] {
                    let linear = x + y * b[0] + z * b[0] * b[1];
                    threads.push(new_thread(self.prep, [x, y, z], linear, w)?);
                }
            }
        }
        let nwarps = (threads.len() as u32).div_ceil(w);
        let shared = vec![0u8; (self.prep.static_shared + self.cfg.dynamic_shared as u64) as usize];
        Ok(Cta { id, threads, shared, bars: (0..16).map(|_| BarState::default()).collect(), nwarps })
    }

    /// One round of turns over the CTA's runnable threads.
    fn round(&mut self, cta: &mut Cta) -> Result<Round, RefError> {
        let quantum = self.opts.quantum.max(1);
        let mut any_ready = false;
        let mut progress = false;
        for t in 0..cta.threads.len() {
            if cta.threads[t].state != State::Ready {
                continue;
            }
            any_ready = true;
            let stop = {
                let mut env = env!(self, &mut cta.shared, cta.id, cta.nwarps);
                run_slice(&mut cta.threads[t], &mut env, quantum)?
            };
            cta.threads[t].preempted = matches!(stop, Stop::Preempted);
            let warp = cta.threads[t].warp;
            match stop {
                Stop::Exited => {
                    cta.threads[t].state = State::Exited;
                    progress = true;
                    self.release_barriers(cta)?;
                    self.resolve_warp(cta, warp)?;
                }
                Stop::Barrier(arr) => {
                    progress = true;
                    self.arrive(cta, t, arr)?;
                }
                Stop::Collective(mask) => {
                    cta.threads[t].state = State::Collective(mask);
                    progress = true;
                    self.resolve_warp(cta, warp)?;
                }
                Stop::Activemask => {
                    cta.threads[t].state = State::Activemask;
                    progress = true;
                }
                Stop::Preempted => {}
            }
        }
        // `activemask`: once no thread of the warp can still arrive (every runnable one only spun), the
        // threads waiting at the same instruction are the active ones.
        for w in 0..cta.nwarps {
            let range = self.warp_range(cta, w);
            let ws = &cta.threads[range.clone()];
            let waiting = ws.iter().any(|t| t.state == State::Activemask);
            let can_arrive = ws.iter().any(|t| t.state == State::Ready && !t.preempted);
            if waiting && !can_arrive {
                let mut positions: Vec<_> = ws.iter().filter(|t| t.state == State::Activemask).map(position).collect();
                positions.dedup();
                for pos in positions {
                    let group: Vec<usize> = range
                        .clone()
                        .filter(|&i| cta.threads[i].state == State::Activemask && position(&cta.threads[i]) == pos)
                        .collect();
                    if group.is_empty() {
                        continue;
                    }
                    let mut env = env!(self, &mut cta.shared, cta.id, cta.nwarps);
                    resolve_collective(&mut cta.threads, &group, &mut env)?;
                    progress = true;
                }
            }
        }
        if cta.threads.iter().all(|t| t.state == State::Exited) {
            return Ok(Round::Done);
        }
        if progress {
            return Ok(Round::Progress);
        }
        if any_ready {
            return Ok(Round::Spinning);
        }
        Err(self.deadlock_report(cta))
    }

    fn warp_range(&self, cta: &Cta, w: u32) -> std::ops::Range<usize> {
        let ws = self.cfg.warp_size as usize;
        let start = w as usize * ws;
        start.min(cta.threads.len())..((w as usize + 1) * ws).min(cta.threads.len())
    }

    fn arrive(&mut self, cta: &mut Cta, t: usize, arr: Arrival) -> Result<(), RefError> {
        let b = &mut cta.bars[arr.id as usize];
        if arr.count.is_some() {
            b.count = arr.count;
        }
        b.arrived += 1;
        let mut red = None;
        if let Some((kind, v, dest)) = arr.red {
            b.popc += v as u32;
            b.all &= v;
            b.any |= v;
            red = Some((kind, dest));
        }
        if arr.waits {
            cta.threads[t].state = State::Barrier(arr.id);
            b.waiters.push((t, red));
        } else {
            cta.threads[t].pass();
        }
        self.release_barriers(cta)
    }

    fn release_barriers(&mut self, cta: &mut Cta) -> Result<(), RefError> {
        let live = cta.threads.iter().filter(|t| t.state != State::Exited).count() as u32;
        for id in 0..cta.bars.len() {
            let b = &cta.bars[id];
            if b.arrived == 0 || b.arrived < b.count.unwrap_or(live) {
                continue;
            }
            let b = std::mem::take(&mut cta.bars[id]);
            for (t, red) in b.waiters {
                if let Some((kind, dest)) = red {
                    let v = match kind {
                        RedKind::Popc => b.popc as u64,
                        RedKind::And => b.all as u64,
                        RedKind::Or => b.any as u64,
                    };
                    let mut env = env!(self, &mut cta.shared, cta.id, cta.nwarps);
                    write_red(&mut cta.threads[t], &mut env, dest, kind, v)?;
                }
                let th = &mut cta.threads[t];
                th.pass();
                th.state = State::Ready;
                th.preempted = false;
            }
        }
        Ok(())
    }

    /// Runs every warp-synchronous instruction of warp `w` whose members have all arrived.
    fn resolve_warp(&mut self, cta: &mut Cta, w: u32) -> Result<(), RefError> {
        let range = self.warp_range(cta, w);
        let live: u64 =
            cta.threads[range.clone()].iter().filter(|t| t.state != State::Exited).fold(0, |m, t| m | 1u64 << t.lane);
        let mut positions: Vec<_> = cta.threads[range.clone()]
            .iter()
            .filter(|t| matches!(t.state, State::Collective(_)))
            .map(position)
            .collect();
        positions.sort();
        positions.dedup();
        for pos in positions {
            let mut group: Vec<usize> = range
                .clone()
                .filter(|&i| matches!(cta.threads[i].state, State::Collective(_)) && position(&cta.threads[i]) == pos)
                .collect();
            // Keep the threads whose live members are all in the group (to a fixed point).
            loop {
                let lanes = group.iter().fold(0u64, |m, &i| m | 1u64 << cta.threads[i].lane);
                let before = group.len();
                group.retain(|&i| match cta.threads[i].state {
                    State::Collective(mask) => mask & live & !lanes == 0,
                    _ => false,
                });
                if group.len() == before {
                    break;
                }
            }
            if !group.is_empty() {
                let mut env = env!(self, &mut cta.shared, cta.id, cta.nwarps);
                resolve_collective(&mut cta.threads, &group, &mut env)?;
            }
        }
        Ok(())
    }

    /// Names every waiting thread, grouped by what it waits for and where.
    fn deadlock_report(&self, cta: &Cta) -> RefError {
        let mut groups: Vec<(String, Vec<[u32; 3]>)> = Vec::new();
        for t in cta.threads.iter().filter(|t| t.state != State::Exited) {
            let what = match t.state {
                State::Barrier(id) => format!("wait at barrier {id}"),
                State::Collective(m) => format!("wait at a warp-synchronous instruction (member mask {m:#x})"),
                State::Activemask => "wait at activemask".to_string(),
                _ => "are runnable".to_string(),
            };
            // The place, without the thread's own coordinates.
            let place = describe(self.prep, t, cta.id);
            let place = place.split_once(" in ").map(|(_, p)| p.to_string()).unwrap_or_default();
            let key = format!("{what} in {place}");
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(t.tid),
                None => groups.push((key, vec![t.tid])),
            }
        }
        let lines: Vec<String> = groups
            .iter()
            .take(16)
            .map(|(k, tids)| {
                let shown: Vec<String> = tids.iter().take(8).map(|t| format!("({},{},{})", t[0], t[1], t[2])).collect();
                let more = if tids.len() > 8 { format!(" and {} more", tids.len() - 8) } else { String::new() };
                format!("  {} thread(s) {}{more} {k}", tids.len(), shown.join(" "))
            })
            .collect();
        RefError::Deadlock { block: cta.id, report: lines.join("\n") }
    }
}

fn validate(cfg: &LaunchConfig) -> Result<(), LaunchError> {
    if !(1..=64).contains(&cfg.warp_size) || !cfg.warp_size.is_power_of_two() {
        return Err(LaunchError::WarpSize(cfg.warp_size));
    }
    if cfg.grid.contains(&0) || cfg.block.contains(&0) {
        return Err(LaunchError::EmptyGeometry);
    }
    if cfg.threads_per_cta() > 1024 {
        return Err(LaunchError::TooManyThreads(cfg.threads_per_cta()));
    }
    Ok(())
}

/// Runs the launch; returns the result (errors included).
pub(crate) fn launch(prep: &Prepared<'_>, cfg: &LaunchConfig, args: &[Arg], opts: &RefOptions) -> RefResult {
    let mut result = RefResult {
        buffers: args.iter().map(|_| None).collect(),
        error: None,
        thread_instructions: 0,
        globals: Vec::new(),
        fields: Vec::new(),
    };
    if let Err(e) = validate(cfg) {
        result.error = Some(e.into());
        return result;
    }
    let kernel = &prep.module.functions[prep.kernel];
    if prep.code(prep.kernel).is_some_and(|c| c.local_size > cfg.local_bytes as u64) {
        result.error = Some(LaunchError::LocalMemory(cfg.local_bytes).into());
        return result;
    }
    if args.len() != kernel.params.len() {
        let (kernel, expected, given) = (kernel.name.clone(), kernel.params.len(), args.len());
        result.error = Some(LaunchError::ArgumentCount { kernel, expected, given }.into());
        return result;
    }
    // Device memory: module variables, then one allocation per buffer argument.
    let mut global = GlobalMem::default();
    for (addr, data, name) in &prep.global_data {
        global.add(*addr, data.clone(), name.clone());
    }
    let mut next = prep.global_end;
    let placed = match place_args(prep, args, &mut global, &mut next) {
        Ok(p) => p,
        Err(e) => {
            result.error = Some(e.into());
            return result;
        }
    };
    let PlacedArgs { kparams, addrs, fields } = placed;
    let mut consts = prep.consts.clone();
    let mut pointed: Vec<(String, u64, reconverge_program::Dtype)> = Vec::new();
    for gi in &cfg.globals {
        if let Err(e) = set_global(prep, &mut global, &mut consts, &mut next, &mut pointed, gi) {
            result.error = Some(e.into());
            return result;
        }
    }
    let mut m = Machine { prep, cfg, opts, global, kparams, consts };
    let total = cfg.num_ctas();
    let max_resident = opts.max_resident_ctas.max(1);
    let mut next_cta = 0u64;
    let mut resident: Vec<Cta> = Vec::new();
    let mut cur = 0usize;
    let mut executed = 0u64;
    let error = 'run: loop {
        while resident.len() < max_resident && next_cta < total {
            match m.new_cta(next_cta) {
                Ok(c) => resident.push(c),
                Err(e) => break 'run Some(e),
            }
            next_cta += 1;
        }
        if resident.is_empty() {
            break None;
        }
        if cur >= resident.len() {
            cur = 0;
        }
        match m.round(&mut resident[cur]) {
            Ok(Round::Done) => {
                executed += resident[cur].threads.iter().map(|t| t.executed).sum::<u64>();
                resident.remove(cur);
            }
            Ok(Round::Progress) => {}
            Ok(Round::Spinning) => cur += 1,
            Err(e) => break Some(e),
        }
    };
    executed += resident.iter().flat_map(|c| c.threads.iter()).map(|t| t.executed).sum::<u64>();
    result.thread_instructions = executed;
    result.error = error;
    result.buffers = args
        .iter()
        .zip(&addrs)
        .map(|(a, addr)| match (a.buffer(), addr) {
            (Some(b), Some(addr)) => m.global.get(*addr).map(|al| Buffer { dtype: b.dtype, bytes: al.data.clone() }),
            _ => None,
        })
        .collect();
    result.fields = fields
        .into_iter()
        .filter_map(|(arg, field, addr, dtype)| {
            let bytes = m.global.get(addr)?.data.clone();
            Some(reconverge_program::FieldBuffer { arg, field, buffer: Buffer { dtype, bytes } })
        })
        .collect();
    result.globals = cfg
        .dump_globals
        .iter()
        .filter_map(|name| {
            let (gid, v) = find_global(prep, name).ok()?;
            if let Some((_, addr, dtype)) = pointed.iter().find(|(n, ..)| *n == v.name) {
                return m.global.get(*addr).map(|a| (name.clone(), Buffer { dtype: *dtype, bytes: a.data.clone() }));
            }
            let bytes = match prep.global(gid) {
                GlobalPlace::Global(addr) => m.global.get(addr)?.data.clone(),
                GlobalPlace::Const(off) => m.consts.get(off as usize..(off + v.size_bytes()) as usize)?.to_vec(),
                _ => return None,
            };
            Some((name.clone(), Buffer { dtype: dtype_of(v.ty, bytes.len()), bytes }))
        })
        .collect();
    result
}

/// The kernel parameter buffer, each argument's buffer address, and (argument, field, address, dtype) of
/// each buffer a struct argument points into.
struct PlacedArgs {
    kparams: Vec<u8>,
    addrs: Vec<Option<u64>>,
    fields: Vec<(usize, usize, u64, reconverge_program::Dtype)>,
}

/// Places every argument buffer (and every buffer a struct argument points into) in device memory after
/// `next` and fills the kernel parameter buffer.
fn place_args(
    prep: &Prepared<'_>,
    args: &[Arg],
    global: &mut GlobalMem,
    next: &mut u64,
) -> Result<PlacedArgs, LaunchError> {
    let kernel = &prep.module.functions[prep.kernel];
    let mut out = PlacedArgs { kparams: vec![0u8; prep.param_size as usize], addrs: Vec::new(), fields: Vec::new() };
    for (i, (a, p)) in args.iter().zip(&kernel.params).enumerate() {
        let slot = prep.params[i];
        let (o, n) = (slot.offset as usize, (slot.size as usize).min(8));
        let align = p.alignment().clamp(1, u32::MAX as u64) as u32;
        reconverge_program::check_arg(i, &p.name, slot.size as u32, align, a)?;
        let mut alloc = |b: &Buffer, name: String| {
            let addr;
            (addr, *next) = place_allocation(*next, b.bytes.len() as u64, 256);
            global.add(addr, b.bytes.clone(), name);
            addr
        };
        let value = match a {
            Arg::Scalar(v) => {
                out.addrs.push(None);
                *v
            }
            Arg::Buffer(_) | Arg::BufferAt { .. } if slot.size != 8 || p.ty == ScalarType::F64 => {
                return Err(LaunchError::NotAPointer { index: i, param: p.name.clone(), ty: p.ty });
            }
            Arg::Buffer(b) | Arg::BufferAt { buffer: b, .. } => {
                let offset = if let Arg::BufferAt { offset, .. } = a { *offset } else { 0 };
                let addr = alloc(b, format!("argument {i} ({})", p.name));
                out.addrs.push(Some(addr));
                addr.wrapping_add(offset)
            }
            Arg::Struct(s) => {
                out.addrs.push(None);
                let mut addrs = Vec::with_capacity(s.pointers.len());
                for ptr in &s.pointers {
                    let addr = alloc(&ptr.buffer, format!("argument {i} ({}) field {}", p.name, ptr.field));
                    addrs.push(addr);
                    out.fields.push((i, ptr.field, addr, ptr.buffer.dtype));
                }
                let bytes = s.bytes_with(&addrs);
                out.kparams[o..o + bytes.len()].copy_from_slice(&bytes);
                continue;
            }
        };
        out.kparams[o..o + n].copy_from_slice(&value.to_le_bytes()[..n]);
    }
    Ok(out)
}

/// The module variable `name` (its PTX name, or else its demangled name).
fn find_global<'m>(
    prep: &Prepared<'m>,
    name: &str,
) -> Result<(reconverge_ir::GlobalId, &'m reconverge_ir::Variable), LaunchError> {
    let m = prep.module;
    let exact = m.globals.iter().find(|(_, v)| v.name == name);
    let found = exact.or_else(|| m.globals.iter().find(|(_, v)| reconverge_ir::names::matches(name, &v.name)));
    found.ok_or_else(|| LaunchError::UnknownGlobal(name.to_string()))
}

/// A dtype for reading a variable back.
fn dtype_of(ty: ScalarType, len: usize) -> reconverge_program::Dtype {
    use reconverge_program::Dtype as D;
    let d = match ty {
        ScalarType::S8 => D::I8,
        ScalarType::S16 => D::I16,
        ScalarType::S32 => D::I32,
        ScalarType::S64 => D::I64,
        ScalarType::U16 | ScalarType::B16 | ScalarType::F16 | ScalarType::Bf16 => D::U16,
        ScalarType::U32 | ScalarType::B32 => D::U32,
        ScalarType::U64 | ScalarType::B64 => D::U64,
        ScalarType::F32 => D::F32,
        ScalarType::F64 => D::F64,
        _ => D::U8,
    };
    if len.is_multiple_of(d.size()) {
        d
    } else {
        D::U8
    }
}

/// Applies `--global NAME=VALUE`: a number is written into the variable, a buffer fills it, or (for a
/// 64-bit scalar variable) is allocated in device memory and its address written.
fn set_global(
    prep: &Prepared<'_>,
    global: &mut GlobalMem,
    consts: &mut [u8],
    next: &mut u64,
    pointed: &mut Vec<(String, u64, reconverge_program::Dtype)>,
    gi: &reconverge_program::GlobalInit,
) -> Result<(), LaunchError> {
    let (gid, v) = find_global(prep, &gi.name)?;
    let size = v.size_bytes();
    let bytes: Vec<u8> = match &gi.value {
        Arg::Scalar(x) if size <= 8 => x.to_le_bytes()[..size as usize].to_vec(),
        Arg::Scalar(_) => return Err(LaunchError::NumberDoesNotFill { name: gi.name.clone(), size }),
        Arg::Buffer(b) | Arg::BufferAt { buffer: b, .. } if v.dims.is_empty() && v.vector.is_none() && size == 8 => {
            let offset = if let Arg::BufferAt { offset, .. } = &gi.value { *offset } else { 0 };
            let addr;
            (addr, *next) = place_allocation(*next, b.bytes.len() as u64, 256);
            global.add(addr, b.bytes.clone(), format!("global {}", gi.name));
            pointed.push((v.name.clone(), addr, b.dtype));
            addr.wrapping_add(offset).to_le_bytes().to_vec()
        }
        Arg::BufferAt { .. } | Arg::Struct(_) => {
            return Err(reconverge_program::ArgShapeError::NotForVariable(gi.name.clone()).into());
        }
        Arg::Buffer(b) if b.bytes.len() as u64 <= size => b.bytes.clone(),
        Arg::Buffer(b) => {
            return Err(LaunchError::BufferDoesNotFit { name: gi.name.clone(), len: b.bytes.len(), size });
        }
    };
    match prep.global(gid) {
        GlobalPlace::Global(addr) => {
            for (k, byte) in bytes.iter().enumerate() {
                global.write(addr + k as u64, 1, *byte as u64).ok_or(LaunchError::NotInDeviceMemory)?;
            }
            Ok(())
        }
        GlobalPlace::Const(off) => {
            consts[off as usize..off as usize + bytes.len()].copy_from_slice(&bytes);
            Ok(())
        }
        _ => Err(LaunchError::NotGlobalOrConst(gi.name.clone())),
    }
}
