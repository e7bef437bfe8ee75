//! Instruction family: texture fetches (`tex`, `tld4`), their queries (`txq`, `suq`) and surface loads and
//! stores (`suld.b`, `sust.b`) on objects whose descriptors lie in device memory
//! ([`reconverge_semantics::texture`]).

use super::*;
use reconverge_semantics::texture::{self as tx, Coords, Descriptor, ObjectKind, SurfaceAddr, DESCRIPTOR_BYTES};

/// The last descriptor read by an instruction, reused while the lanes name the same object.
struct Objects {
    last: Option<(u64, Descriptor)>,
}

impl Objects {
    /// The descriptor of object `h` for the thread in `slot` (of the kind `want`), or the error that names
    /// it.
    fn get<G: GlobalMemory>(
        &mut self,
        env: &Env<G>,
        cta: &Cta,
        (pc, slot): (Pc, usize),
        h: u64,
        want: Option<ObjectKind>,
    ) -> Result<Descriptor, SimError> {
        if let Some((lh, d)) = self.last {
            if lh == h {
                return Ok(d);
            }
        }
        let mut bytes = [0u8; DESCRIPTOR_BYTES];
        for (k, chunk) in bytes.chunks_exact_mut(8).enumerate() {
            let v = env.mem.read(h.wrapping_add(8 * k as u64), 8).map_err(|mut f| {
                f.addr = h;
                f.size = DESCRIPTOR_BYTES as u32;
                mem_err(env, cta, pc, slot, f)
            })?;
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        let trap = |what: String| SimError::Trap { what, at: Box::new(location(env.prog, cta, pc, Some(slot))) };
        let d = Descriptor::decode(&bytes).map_err(|e| trap(format!("the object {h:#x} is {e}")))?;
        if let Some(want) = want.filter(|w| *w != d.object) {
            let name = if want == ObjectKind::Texture { "texture" } else { "surface" };
            return Err(trap(format!("the object {h:#x} is not a {name} object")));
        }
        self.last = Some((h, d));
        Ok(d)
    }
}

/// The layer and the spatial coordinates (as 32-bit patterns) of lane `l`.
fn lane_coords<G: GlobalMemory, L: Lanes>(
    cta: &Cta,
    env: &Env<G>,
    g: L,
    l: usize,
    geom: Geometry,
    coords: &[Src],
) -> (i32, [u32; 3]) {
    let value = |k: usize| coords.get(k).map_or(0, |s| lane_value(cta, env, g, *s, l) as u32);
    let (layer, first) = if geom.layered() { (value(0) as i32, 1) } else { (0, 0) };
    (layer, [value(first), value(first + 1), value(first + 2)])
}

/// One surface instruction's access.
struct Surface<'a> {
    geom: Geometry,
    oob: OutOfRange,
    handle: Src,
    coords: &'a [Src],
    /// Bytes of all its elements.
    bytes: u32,
}

/// The address lane `l`'s surface access goes to, `None` when `.zero` drops it, or the error of
/// `.trap`.
fn surface_lane<G: GlobalMemory, L: Lanes>(
    env: &Env<G>,
    cta: &Cta,
    (pc, slot): (Pc, usize),
    objects: &mut Objects,
    (g, l): (L, usize),
    s: &Surface<'_>,
) -> Result<Option<u64>, SimError> {
    let h = lane_value(cta, env, g, s.handle, l);
    let desc = objects.get(env, cta, (pc, slot), h, Some(ObjectKind::Surface))?;
    let (layer, c) = lane_coords(cta, env, g, l, s.geom, s.coords);
    let c = c.map(|v| v as i32);
    match tx::surface_addr(&desc, s.geom, c, layer, u64::from(s.bytes), s.oob) {
        SurfaceAddr::At(a) => Ok(Some(a)),
        SurfaceAddr::Dropped => Ok(None),
        SurfaceAddr::Trap => Err(SimError::Trap {
            what: format!(
                "surface access out of range: {} bytes at x = {} bytes, y = {}, z = {}, layer {layer} of a {}x{}x{} \
                 surface of {}-byte elements",
                s.bytes,
                c[0],
                c[1],
                c[2],
                desc.width,
                desc.height,
                desc.depth,
                desc.format.bytes()
            ),
            at: Box::new(location(env.prog, cta, pc, Some(slot))),
        }),
    }
}

/// Texture and surface instructions.
pub(super) fn texture<G: GlobalMemory, L: Lanes>(
    env: &mut Env<G>,
    cta: &mut Cta,
    At { g, pc, eff, .. }: At<L>,
    op: &Op,
) -> Result<Effects, SimError> {
    let mut objects = Objects { last: None };
    match op {
        Op::Tex { fetch, d, handle, coords, .. } => {
            env.access.begin(AccessKind::Texture, 16);
            for l in lanes(eff) {
                let slot = g.slot(l);
                let h = lane_value(cta, env, g, *handle, l);
                let desc = objects.get(env, cta, (pc, slot), h, Some(ObjectKind::Texture))?;
                let (layer, c) = lane_coords(cta, env, g, l, fetch.geom, coords);
                let (mem, access) = (&*env.mem, &mut *env.access);
                let mut first = None;
                let mut read = |a: u64, size: u32| {
                    first.get_or_insert(a);
                    access.record_texel(a);
                    mem.read(a, size)
                };
                let out = match fetch.gather {
                    Some(comp) => {
                        let x = [f32::from_bits(c[0]), f32::from_bits(c[1])];
                        tx::gather(&desc, usize::from(comp), x, fetch.ty, &mut read)
                    }
                    None => {
                        let coords = if fetch.int_coords {
                            Coords::Int(c.map(|v| v as i32))
                        } else {
                            Coords::Float(c.map(f32::from_bits))
                        };
                        tx::sample(&desc, fetch.geom, coords, layer, fetch.ty, &mut read)
                    }
                };
                let out = out.map_err(|f| mem_err(env, cta, pc, slot, f))?;
                if let Some(a) = first {
                    env.access.record(l, Space::Global, a);
                }
                for (r, v) in d.iter().zip(out) {
                    if let Some(r) = r {
                        write_lane(cta, env, g, *r, l, u64::from(v));
                    }
                }
            }
        }
        Op::Txq { query, d, handle } => {
            for l in lanes(eff) {
                let h = lane_value(cta, env, g, *handle, l);
                let b = objects.get(env, cta, (pc, g.slot(l)), h, None)?;
                write_lane(cta, env, g, *d, l, u64::from(tx::query(&b, *query)));
            }
        }
        Op::Suld { geom, size, oob, d, handle, coords } => {
            env.access.begin(AccessKind::Load, size * d.len() as u32);
            for l in lanes(eff) {
                let slot = g.slot(l);
                let access = Surface { geom: *geom, oob: *oob, handle: *handle, coords, bytes: *size * d.len() as u32 };
                let Some(a) = surface_lane(env, cta, (pc, slot), &mut objects, (g, l), &access)? else {
                    for r in d.iter().flatten() {
                        write_lane(cta, env, g, *r, l, 0);
                    }
                    continue;
                };
                env.access.record(l, Space::Global, a);
                for (k, r) in d.iter().enumerate() {
                    let v = env
                        .mem
                        .read(a + k as u64 * u64::from(*size), *size)
                        .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                    if let Some(r) = r {
                        write_lane(cta, env, g, *r, l, v);
                    }
                }
            }
        }
        Op::Sust { geom, size, oob, s, handle, coords } => {
            env.access.begin(AccessKind::Store, size * s.len() as u32);
            for l in lanes(eff) {
                let slot = g.slot(l);
                let access = Surface { geom: *geom, oob: *oob, handle: *handle, coords, bytes: *size * s.len() as u32 };
                let Some(a) = surface_lane(env, cta, (pc, slot), &mut objects, (g, l), &access)? else {
                    continue;
                };
                env.access.record(l, Space::Global, a);
                for (k, src) in s.iter().enumerate() {
                    let v = lane_value(cta, env, g, *src, l);
                    mem_write(env, cta, slot, Space::Global, a + k as u64 * u64::from(*size), *size, v)
                        .map_err(|f| mem_err(env, cta, pc, slot, f))?;
                }
            }
        }
        _ => return Err(SimError::Internal("texture() called for another family")),
    }
    Ok(Effects::next())
}
