//! Texture and surface accesses: PTX `tex`, `tld4`, `txq`, `suld.b`, `sust.b` on CUDA texture and
//! surface objects.
//!
//! A texture or surface object is, on the simulated GPU, the device address of a [`Descriptor`] of
//! [`DESCRIPTOR_BYTES`] bytes in global memory (the runtime writes it in `cudaCreateTextureObject`), as a
//! hardware texture header is a record in memory that the handle indexes. The functions here read the
//! texels through a caller's memory closure, so a bad handle or a texel outside every allocation is the
//! caller's memory fault, named with its thread, pc and address.
//!
//! # What a fetch computes (CUDA C++ Programming Guide, appendix "Texture Fetching")
//! - **Coordinates.** A float coordinate `x` of a texture with normalized coordinates is first mapped by
//!   the address mode (wrap: `frac(x)`; mirror: `frac(x)` when `floor(x)` is even, else `1 - frac(x)`),
//!   then scaled by the extent `N`. Without normalized coordinates, wrap and mirror act as clamp (the guide:
//!   they are "only supported for normalized texture coordinates").
//! - **Point sampling** reads texel `floor(x)`; clamp clamps the index to `[0, N-1]`; border returns the
//!   border color for an index outside it.
//! - **Linear filtering** (float results only) reads texels `i = floor(x - 0.5)` and `i + 1` with weight
//!   `α = frac(x - 0.5)` "stored in 9-bit fixed point format with 8 bits of fractional value"; here `α` is
//!   rounded to the nearest multiple of 1/256 (the guide does not say how the fraction is rounded). The
//!   texel indices then follow the address mode: clamp to the edge, border texels are the border color,
//!   wrap takes the index modulo `N`, mirror reflects it (`-1 → 0`, `N → N-1`). The weighted sum is
//!   evaluated in binary64 in a fixed order and rounded once to binary32: 1-D `(1-α)T0 + αT1`; 2-D
//!   `(1-α)(1-β)T00 + α(1-β)T10 + (1-α)βT01 + αβT11`; 3-D the eight terms with x fastest, then y, then z.
//!   The weights are products of multiples of 1/256, exact in binary64, so only the sum rounds.
//! - **Integer coordinates** (`tex.*.s32`) are unnormalized texel indices, point sampled with the address
//!   mode (clamp or border). On linear memory (`tex1Dfetch`), an index outside `[0, width)` returns zeros.
//! - **Read modes.** Element type: float channels as float, integer channels as integers (sign-extended to
//!   32 bits). Normalized float: 8- and 16-bit unsigned channels `v / (2^n - 1)`, signed
//!   `max(v / (2^(n-1) - 1), -1)`. A float result of an integer channel in element mode is its value
//!   converted to float.
//! - **Missing channels** of a one- or two-channel format read as 0, and alpha as 1 (1.0 for float
//!   results), as Direct3D and OpenGL define it.
//! - **Layers** (`a1d`, `a2d`): the layer index is clamped to `[0, layers-1]`.
//! - **Levels** (`tex.level`, `tex.grad`): objects are not mipmapped here, so every fetch reads level 0.
//!
//! `tld4` (gather) returns one channel of the four texels of the bilinear footprint, in the PTX ISA's
//! order: `(i, j+1)`, `(i+1, j+1)`, `(i+1, j)`, `(i, j)` — counter-clockwise from the lower left.
//!
//! Surfaces (`suld.b`, `sust.b`) address the x coordinate in bytes and y, z (and the layer) in elements;
//! out-of-range coordinates trap, clamp to the nearest element, or read zero and drop the store, as the
//! instruction's `.trap`, `.clamp` or `.zero` says.

/// The size in bytes of a texture or surface descriptor in device memory.
pub const DESCRIPTOR_BYTES: usize = 64;
/// The first word of a texture descriptor ("RTEX").
pub const TEXTURE_MAGIC: u32 = u32::from_le_bytes(*b"RTEX");
/// The first word of a surface descriptor ("RSUR").
pub const SURFACE_MAGIC: u32 = u32::from_le_bytes(*b"RSUR");

/// What an object is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ObjectKind {
    /// A texture object (`cudaCreateTextureObject`): read by `tex`, `tld4`, `txq`.
    Texture,
    /// A surface object (`cudaCreateSurfaceObject`): read and written by `suld`, `sust`.
    Surface,
}

/// The memory an object reads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Resource {
    /// Linear memory (`cudaResourceTypeLinear`): `width` elements, read by `tex1Dfetch`.
    Linear,
    /// Pitched 2-D memory (`cudaResourceTypePitch2D`): `height` rows of `pitch` bytes.
    Pitch2d,
    /// A CUDA array (`cudaResourceTypeArray`): rows of `pitch` bytes, `height` rows per slice, `depth`
    /// slices per layer, `layers` layers, stored row-major without padding.
    Array,
}

/// The kind of a channel, numbered as CUDA's `cudaChannelFormatKind`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ChannelKind {
    /// Two's-complement integers (`cudaChannelFormatKindSigned` = 0).
    Signed,
    /// Unsigned integers (`cudaChannelFormatKindUnsigned` = 1).
    Unsigned,
    /// IEEE floats, 16 or 32 bits (`cudaChannelFormatKindFloat` = 2).
    Float,
}

/// The format of an element: `channels` channels of `bits` bits each.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Format {
    /// The channels' kind.
    pub kind: ChannelKind,
    /// 1, 2 or 4.
    pub channels: u8,
    /// 8, 16 or 32 (16 or 32 for floats).
    pub bits: u8,
}

impl Format {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        u64::from(self.channels) * u64::from(self.bits / 8)
    }

    /// Whether the format is one the hardware has.
    pub fn is_valid(self) -> bool {
        matches!(self.channels, 1 | 2 | 4)
            && match self.kind {
                ChannelKind::Float => matches!(self.bits, 16 | 32),
                ChannelKind::Signed | ChannelKind::Unsigned => matches!(self.bits, 8 | 16 | 32),
            }
    }
}

/// An address mode, numbered as CUDA's `cudaTextureAddressMode`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AddressMode {
    /// `cudaAddressModeWrap` = 0.
    Wrap,
    /// `cudaAddressModeClamp` = 1.
    Clamp,
    /// `cudaAddressModeMirror` = 2.
    Mirror,
    /// `cudaAddressModeBorder` = 3.
    Border,
}

impl AddressMode {
    /// The mode of CUDA's enum value.
    pub fn from_cuda(v: u32) -> Option<AddressMode> {
        Some(match v {
            0 => AddressMode::Wrap,
            1 => AddressMode::Clamp,
            2 => AddressMode::Mirror,
            3 => AddressMode::Border,
            _ => return None,
        })
    }
}

/// A texture object's sampling state.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Sampler {
    /// Per dimension (x, y, z).
    pub address: [AddressMode; 3],
    /// Linear filtering (`cudaFilterModeLinear`) instead of point sampling.
    pub linear: bool,
    /// `cudaReadModeNormalizedFloat`: 8- and 16-bit integer channels read as floats in [0, 1] or [-1, 1].
    pub normalized_float: bool,
    /// Normalized coordinates (`[0, 1)` spans the extent).
    pub normalized_coords: bool,
    /// The border color (`cudaAddressModeBorder`), per channel, for float results.
    pub border: [f32; 4],
}

impl Default for Sampler {
    fn default() -> Self {
        Sampler {
            address: [AddressMode::Wrap; 3],
            linear: false,
            normalized_float: false,
            normalized_coords: false,
            border: [0.0; 4],
        }
    }
}

/// A texture or surface descriptor, as it lies in device memory ([`Descriptor::encode`]).
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Descriptor {
    /// Texture or surface.
    pub object: ObjectKind,
    /// The memory it reads.
    pub resource: Resource,
    /// The element format.
    pub format: Format,
    /// The device address of element (0, 0, 0) of layer 0.
    pub base: u64,
    /// Elements per row.
    pub width: u64,
    /// Bytes from one row to the next.
    pub pitch: u64,
    /// Rows per slice (1 for 1-D).
    pub height: u32,
    /// Slices per layer (1 for 1-D and 2-D).
    pub depth: u32,
    /// Layers (1 unless layered).
    pub layers: u32,
    /// The sampling state (textures).
    pub sampler: Sampler,
}

/// Why 64 bytes are not a descriptor.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DescriptorError {
    /// The first word is neither magic: the handle is not an object the runtime created.
    NotAnObject(u32),
    /// A field holds a value no runtime writes.
    Corrupt(&'static str),
}

impl std::fmt::Display for DescriptorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DescriptorError::NotAnObject(m) => {
                write!(f, "not a texture or surface object (its first word is {m:#010x})")
            }
            DescriptorError::Corrupt(what) => write!(f, "a damaged texture or surface descriptor ({what})"),
        }
    }
}

impl std::error::Error for DescriptorError {}

fn u32_at(b: &[u8; DESCRIPTOR_BYTES], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8; DESCRIPTOR_BYTES], at: usize) -> u64 {
    u64::from(u32_at(b, at)) | u64::from(u32_at(b, at + 4)) << 32
}

impl Descriptor {
    /// The bytes of the descriptor, little-endian: magic (0), resource, channel kind, channels, bits (4..8),
    /// base (8), width (16), pitch (24), height (32), depth (36), layers (40), the three address modes
    /// (44..47), flags (47: bit 0 linear, bit 1 normalized float, bit 2 normalized coordinates), border
    /// color (48..64, four `f32`).
    pub fn encode(&self) -> [u8; DESCRIPTOR_BYTES] {
        let mut b = [0u8; DESCRIPTOR_BYTES];
        let magic = match self.object {
            ObjectKind::Texture => TEXTURE_MAGIC,
            ObjectKind::Surface => SURFACE_MAGIC,
        };
        b[0..4].copy_from_slice(&magic.to_le_bytes());
        b[4] = self.resource as u8;
        b[5] = self.format.kind as u8;
        b[6] = self.format.channels;
        b[7] = self.format.bits;
        b[8..16].copy_from_slice(&self.base.to_le_bytes());
        b[16..24].copy_from_slice(&self.width.to_le_bytes());
        b[24..32].copy_from_slice(&self.pitch.to_le_bytes());
        b[32..36].copy_from_slice(&self.height.to_le_bytes());
        b[36..40].copy_from_slice(&self.depth.to_le_bytes());
        b[40..44].copy_from_slice(&self.layers.to_le_bytes());
        let s = &self.sampler;
        for (k, m) in s.address.iter().enumerate() {
            b[44 + k] = *m as u8;
        }
        b[47] = u8::from(s.linear) | u8::from(s.normalized_float) << 1 | u8::from(s.normalized_coords) << 2;
        for (k, c) in s.border.iter().enumerate() {
            b[48 + 4 * k..52 + 4 * k].copy_from_slice(&c.to_bits().to_le_bytes());
        }
        b
    }

    /// Reads a descriptor back from its bytes.
    pub fn decode(b: &[u8; DESCRIPTOR_BYTES]) -> Result<Descriptor, DescriptorError> {
        let object = match u32_at(b, 0) {
            TEXTURE_MAGIC => ObjectKind::Texture,
            SURFACE_MAGIC => ObjectKind::Surface,
            m => return Err(DescriptorError::NotAnObject(m)),
        };
        let resource = match b[4] {
            0 => Resource::Linear,
            1 => Resource::Pitch2d,
            2 => Resource::Array,
            _ => return Err(DescriptorError::Corrupt("resource")),
        };
        let kind = match b[5] {
            0 => ChannelKind::Signed,
            1 => ChannelKind::Unsigned,
            2 => ChannelKind::Float,
            _ => return Err(DescriptorError::Corrupt("channel kind")),
        };
        let format = Format { kind, channels: b[6], bits: b[7] };
        if !format.is_valid() {
            return Err(DescriptorError::Corrupt("format"));
        }
        let mode =
            |k: usize| AddressMode::from_cuda(u32::from(b[44 + k])).ok_or(DescriptorError::Corrupt("address mode"));
        let border = [0, 1, 2, 3].map(|k| f32::from_bits(u32_at(b, 48 + 4 * k)));
        let d = Descriptor {
            object,
            resource,
            format,
            base: u64_at(b, 8),
            width: u64_at(b, 16),
            pitch: u64_at(b, 24),
            height: u32_at(b, 32),
            depth: u32_at(b, 36),
            layers: u32_at(b, 40),
            sampler: Sampler {
                address: [mode(0)?, mode(1)?, mode(2)?],
                linear: b[47] & 1 != 0,
                normalized_float: b[47] & 2 != 0,
                normalized_coords: b[47] & 4 != 0,
                border,
            },
        };
        if d.width == 0 || d.height == 0 || d.depth == 0 || d.layers == 0 {
            return Err(DescriptorError::Corrupt("an extent of zero"));
        }
        if d.pitch < d.width.saturating_mul(format.bytes()) && resource != Resource::Linear {
            return Err(DescriptorError::Corrupt("a pitch below the row's bytes"));
        }
        Ok(d)
    }

    /// The extent in dimension `dim` (0: x, 1: y, 2: z).
    pub fn extent(&self, dim: usize) -> u64 {
        match dim {
            0 => self.width,
            1 => u64::from(self.height),
            _ => u64::from(self.depth),
        }
    }

    /// The address of element `(x, y, z)` of `layer` (indices already in range).
    pub fn element_addr(&self, x: u64, y: u64, z: u64, layer: u64) -> u64 {
        let row = (layer * u64::from(self.depth) + z) * u64::from(self.height) + y;
        self.base.wrapping_add(row.wrapping_mul(self.pitch)).wrapping_add(x.wrapping_mul(self.format.bytes()))
    }
}

/// The shape of a fetch: its dimensions and whether the first coordinate is a layer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Geometry {
    /// `.1d`
    D1,
    /// `.2d`
    D2,
    /// `.3d`
    D3,
    /// `.a1d`: a layer of a 1-D layered array.
    A1,
    /// `.a2d`: a layer of a 2-D layered array.
    A2,
}

impl Geometry {
    /// The spatial dimensions (1, 2 or 3).
    pub fn dims(self) -> usize {
        match self {
            Geometry::D1 | Geometry::A1 => 1,
            Geometry::D2 | Geometry::A2 => 2,
            Geometry::D3 => 3,
        }
    }

    /// Whether the coordinate vector starts with a layer index.
    pub fn layered(self) -> bool {
        matches!(self, Geometry::A1 | Geometry::A2)
    }
}

/// A fetch's spatial coordinates (unused dimensions ignored).
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Coords {
    /// `.s32` coordinates: texel indices.
    Int([i32; 3]),
    /// `.f32` coordinates.
    Float([f32; 3]),
}

/// The type of a fetch's four results.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ResultType {
    /// `.f32`
    F32,
    /// `.s32`
    S32,
    /// `.u32`
    U32,
}

/// One texel's channels, before conversion to the result type.
#[derive(Clone, Copy, Debug)]
enum Texel {
    /// Read from memory: raw channel bits (zero-extended), `n` channels.
    Raw([u32; 4]),
    /// Outside the texture with border addressing.
    Border,
    /// Outside linear memory: all zeros.
    Zero,
}

/// Reads `size` bytes at a device address; the error is the caller's.
pub trait TexelMemory {
    /// The caller's fault.
    type Error;
    /// The `size`-byte little-endian value at `addr` (1, 2 or 4 bytes).
    fn read(&mut self, addr: u64, size: u32) -> Result<u64, Self::Error>;
}

impl<E, F: FnMut(u64, u32) -> Result<u64, E>> TexelMemory for F {
    type Error = E;
    fn read(&mut self, addr: u64, size: u32) -> Result<u64, E> {
        self(addr, size)
    }
}

fn read_texel<M: TexelMemory>(d: &Descriptor, at: [u64; 3], layer: u64, mem: &mut M) -> Result<Texel, M::Error> {
    let a = d.element_addr(at[0], at[1], at[2], layer);
    let size = u32::from(d.format.bits / 8);
    let mut raw = [0u32; 4];
    for (c, r) in raw.iter_mut().enumerate().take(usize::from(d.format.channels)) {
        *r = mem.read(a.wrapping_add(c as u64 * u64::from(size)), size)? as u32;
    }
    Ok(Texel::Raw(raw))
}

fn sign_extend(v: u32, bits: u8) -> i32 {
    let s = 32 - u32::from(bits);
    ((v << s) as i32) >> s
}

/// Channel `c` of a texel as a float (the float result path).
fn channel_f32(d: &Descriptor, t: Texel, c: usize) -> f32 {
    let raw = match t {
        Texel::Raw(raw) => raw,
        Texel::Border => return d.sampler.border[c],
        Texel::Zero => return 0.0,
    };
    if c >= usize::from(d.format.channels) {
        return if c == 3 { 1.0 } else { 0.0 };
    }
    let v = raw[c];
    let bits = d.format.bits;
    match d.format.kind {
        ChannelKind::Float if bits == 16 => {
            let m = crate::FloatMode::RN;
            f32::from_bits(crate::cvt::float_to_float(crate::FloatTy::F32, crate::FloatTy::F16, m, u64::from(v)) as u32)
        }
        ChannelKind::Float => f32::from_bits(v),
        ChannelKind::Unsigned if d.sampler.normalized_float && bits < 32 => {
            (f64::from(v) / f64::from((1u32 << bits) - 1)) as f32
        }
        ChannelKind::Signed if d.sampler.normalized_float && bits < 32 => {
            let max = f64::from((1u32 << (bits - 1)) - 1);
            ((f64::from(sign_extend(v, bits)) / max).max(-1.0)) as f32
        }
        ChannelKind::Unsigned => v as f32,
        ChannelKind::Signed => sign_extend(v, bits) as f32,
    }
}

/// Channel `c` of a texel as integer bits (the `.s32`/`.u32` result path).
fn channel_bits(d: &Descriptor, t: Texel, c: usize) -> u32 {
    let raw = match t {
        Texel::Raw(raw) => raw,
        Texel::Border | Texel::Zero => return 0,
    };
    if c >= usize::from(d.format.channels) {
        return u32::from(c == 3);
    }
    match d.format.kind {
        ChannelKind::Signed => sign_extend(raw[c], d.format.bits) as u32,
        ChannelKind::Unsigned => raw[c],
        ChannelKind::Float if d.format.bits == 16 => channel_f32(d, t, c).to_bits(),
        ChannelKind::Float => raw[c],
    }
}

/// The four result registers of one texel.
fn texel_result(d: &Descriptor, t: Texel, ty: ResultType) -> [u32; 4] {
    match ty {
        ResultType::F32 => [0, 1, 2, 3].map(|c| channel_f32(d, t, c).to_bits()),
        ResultType::S32 | ResultType::U32 => [0, 1, 2, 3].map(|c| channel_bits(d, t, c)),
    }
}

/// A float coordinate after the normalized-coordinate address mode, in texel units.
fn scaled(x: f32, n: u64, mode: AddressMode, normalized: bool) -> f32 {
    if !normalized {
        return x;
    }
    let x = match mode {
        AddressMode::Wrap => x - x.floor(),
        AddressMode::Mirror => {
            let f = x.floor();
            let frac = x - f;
            if (f.rem_euclid(2.0)) == 0.0 {
                frac
            } else {
                1.0 - frac
            }
        }
        AddressMode::Clamp | AddressMode::Border => x,
    };
    x * n as f32
}

/// `floor(x)` as an index, saturated (NaN → 0).
fn floor_index(x: f32) -> i64 {
    if x.is_nan() {
        0
    } else {
        x.floor() as i64
    }
}

/// A texel index under the address mode: `None` for a border texel.
fn index(i: i64, n: u64, mode: AddressMode, normalized: bool) -> Option<u64> {
    let n = n as i64;
    let mode = if normalized {
        mode
    } else {
        match mode {
            AddressMode::Border => AddressMode::Border,
            _ => AddressMode::Clamp,
        }
    };
    Some(match mode {
        AddressMode::Clamp => i.clamp(0, n - 1),
        AddressMode::Border if i < 0 || i >= n => return None,
        AddressMode::Border => i,
        AddressMode::Wrap => i.rem_euclid(n),
        AddressMode::Mirror => {
            let p = i.rem_euclid(2 * n);
            if p < n {
                p
            } else {
                2 * n - 1 - p
            }
        }
    } as u64)
}

/// The linear filter's first texel index and its weight `α` (a multiple of 1/256) along one dimension.
fn linear_footprint(x: f32, n: u64, mode: AddressMode, normalized: bool) -> (i64, f64) {
    let xb = scaled(x, n, mode, normalized) - 0.5;
    let i = floor_index(xb);
    let frac = if xb.is_finite() { xb - xb.floor() } else { 0.0 };
    let alpha = f64::from((frac * 256.0).round()) / 256.0;
    (i, alpha)
}

/// The clamped layer of a layered fetch.
fn layer_index(d: &Descriptor, geom: Geometry, layer: i32) -> u64 {
    if geom.layered() {
        (i64::from(layer).clamp(0, i64::from(d.layers) - 1)) as u64
    } else {
        0
    }
}

/// Reads the texel at signed indices `idx` (per dimension, address mode applied).
fn texel_at<M: TexelMemory>(
    d: &Descriptor,
    dims: usize,
    idx: [i64; 3],
    layer: u64,
    mem: &mut M,
) -> Result<Texel, M::Error> {
    let mut at = [0u64; 3];
    for k in 0..dims {
        match index(idx[k], d.extent(k), d.sampler.address[k], d.sampler.normalized_coords) {
            Some(i) => at[k] = i,
            None => return Ok(Texel::Border),
        }
    }
    read_texel(d, at, layer, mem)
}

/// `tex.geom.v4.dtype.ctype`: the four results of a fetch at `coords` (and `layer` for layered geometries).
pub fn sample<M: TexelMemory>(
    d: &Descriptor,
    geom: Geometry,
    coords: Coords,
    layer: i32,
    ty: ResultType,
    mem: &mut M,
) -> Result<[u32; 4], M::Error> {
    let dims = geom.dims();
    let layer = layer_index(d, geom, layer);
    let x = match coords {
        Coords::Int(c) => {
            if d.resource == Resource::Linear {
                let i = i64::from(c[0]);
                if i < 0 || i as u64 >= d.width {
                    return Ok(texel_result(d, Texel::Zero, ty));
                }
                let t = read_texel(d, [i as u64, 0, 0], 0, mem)?;
                return Ok(texel_result(d, t, ty));
            }
            let idx = [0, 1, 2].map(|k| if k < dims { i64::from(c[k]) } else { 0 });
            let mut plain = *d;
            plain.sampler.normalized_coords = false;
            let t = texel_at(&plain, dims, idx, layer, mem)?;
            return Ok(texel_result(d, t, ty));
        }
        Coords::Float(x) => x,
    };
    let s = &d.sampler;
    if !s.linear || ty != ResultType::F32 {
        let idx = [0, 1, 2].map(|k| {
            if k < dims {
                floor_index(scaled(x[k], d.extent(k), s.address[k], s.normalized_coords))
            } else {
                0
            }
        });
        let t = texel_at(d, dims, idx, layer, mem)?;
        return Ok(texel_result(d, t, ty));
    }
    let foot = [0, 1, 2].map(|k| {
        if k < dims {
            linear_footprint(x[k], d.extent(k), s.address[k], s.normalized_coords)
        } else {
            (0, 0.0)
        }
    });
    // -0.0 is the sum's identity (an accumulator of +0.0 would turn a sum of -0.0 terms into +0.0), so the
    // sum is the doc's `(1-α)T0 + αT1 + …` exactly.
    let mut acc = [-0.0f64; 4];
    let corners = 1usize << dims;
    for corner in 0..corners {
        let mut idx = [0i64; 3];
        let mut w = 1f64;
        for k in 0..dims {
            let (i, a) = foot[k];
            let hi = corner >> k & 1 == 1;
            idx[k] = i.saturating_add(i64::from(hi));
            w *= if hi { a } else { 1.0 - a };
        }
        let t = texel_at(d, dims, idx, layer, mem)?;
        for (c, v) in acc.iter_mut().enumerate() {
            *v += w * f64::from(channel_f32(d, t, c));
        }
    }
    Ok(acc.map(|v| (v as f32).to_bits()))
}

/// `tld4.comp.2d.v4.dtype.f32`: channel `comp` (0 r, 1 g, 2 b, 3 a) of the four texels of the bilinear
/// footprint at `(x, y)`, in the order `(i, j+1)`, `(i+1, j+1)`, `(i+1, j)`, `(i, j)`.
pub fn gather<M: TexelMemory>(
    d: &Descriptor,
    comp: usize,
    x: [f32; 2],
    ty: ResultType,
    mem: &mut M,
) -> Result<[u32; 4], M::Error> {
    let s = &d.sampler;
    let (i, _) = linear_footprint(x[0], d.extent(0), s.address[0], s.normalized_coords);
    let (j, _) = linear_footprint(x[1], d.extent(1), s.address[1], s.normalized_coords);
    let mut out = [0u32; 4];
    for (o, (di, dj)) in out.iter_mut().zip([(0, 1), (1, 1), (1, 0), (0, 0)]) {
        let t = texel_at(d, 2, [i.saturating_add(di), j.saturating_add(dj), 0], 0, mem)?;
        *o = texel_result(d, t, ty)[comp.min(3)];
    }
    Ok(out)
}

/// What `txq` asks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Query {
    /// `.width`
    Width,
    /// `.height`
    Height,
    /// `.depth`
    Depth,
    /// `.array_size`
    ArraySize,
    /// `.normalized_coords`
    NormalizedCoords,
    /// `.filter_mode` (0 point, 1 linear)
    FilterMode,
    /// `.addr_mode_0`, `_1`, `_2` (CUDA's enum values)
    AddrMode(u8),
    /// `.num_mipmap_levels`
    MipmapLevels,
    /// `.num_samples`
    Samples,
}

/// `txq.query.b32` (and `suq`): the queried attribute.
pub fn query(d: &Descriptor, q: Query) -> u32 {
    let clamp = |v: u64| v.min(u64::from(u32::MAX)) as u32;
    match q {
        Query::Width => clamp(d.width),
        Query::Height => d.height,
        Query::Depth => d.depth,
        Query::ArraySize => d.layers,
        Query::NormalizedCoords => u32::from(d.sampler.normalized_coords),
        Query::FilterMode => u32::from(d.sampler.linear),
        Query::AddrMode(k) => d.sampler.address[usize::from(k.min(2))] as u32,
        Query::MipmapLevels => 1,
        Query::Samples => 0,
    }
}

/// A surface instruction's out-of-range rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OutOfRange {
    /// `.trap`: an error.
    Trap,
    /// `.clamp`: the nearest element.
    Clamp,
    /// `.zero`: loads read zero, stores are dropped.
    Zero,
}

/// Where a surface access of `size` bytes goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SurfaceAddr {
    /// The device address.
    At(u64),
    /// Out of range under `.zero`: read zero, drop the store.
    Dropped,
    /// Out of range under `.trap`.
    Trap,
}

/// The address of a `suld.b`/`sust.b` access of `size` bytes at byte `x`, element row `y`, slice `z` and
/// `layer`.
pub fn surface_addr(
    d: &Descriptor,
    geom: Geometry,
    c: [i32; 3],
    layer: i32,
    size: u64,
    oob: OutOfRange,
) -> SurfaceAddr {
    let row_bytes = d.width.saturating_mul(d.format.bytes());
    let dims = geom.dims();
    let limits = [row_bytes.saturating_sub(size), u64::from(d.height) - 1, u64::from(d.depth) - 1];
    let mut at = [0u64; 3];
    for k in 0..dims {
        let v = i64::from(c[k]);
        let inside = v >= 0 && (v as u64) <= limits[k] && (k > 0 || size <= row_bytes);
        at[k] = if inside {
            v as u64
        } else {
            match oob {
                OutOfRange::Trap => return SurfaceAddr::Trap,
                OutOfRange::Zero => return SurfaceAddr::Dropped,
                OutOfRange::Clamp => v.clamp(0, limits[k] as i64) as u64,
            }
        };
    }
    let layer = if geom.layered() {
        let l = i64::from(layer);
        if l < 0 || l >= i64::from(d.layers) {
            match oob {
                OutOfRange::Trap => return SurfaceAddr::Trap,
                OutOfRange::Zero => return SurfaceAddr::Dropped,
                OutOfRange::Clamp => l.clamp(0, i64::from(d.layers) - 1) as u64,
            }
        } else {
            l as u64
        }
    } else {
        0
    };
    let row = (layer * u64::from(d.depth) + at[2]) * u64::from(d.height) + at[1];
    SurfaceAddr::At(d.base.wrapping_add(row.wrapping_mul(d.pitch)).wrapping_add(at[0]))
}
