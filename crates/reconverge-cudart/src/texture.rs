//! Texture and surface objects: `cudaCreateTextureObject` and `cudaCreateSurfaceObject` check what the
//! program describes as CUDA does, then write a [`Descriptor`] of [`DESCRIPTOR_BYTES`] bytes into device
//! memory (an allocation of its own, counted as `cudaMalloc`'s are). The object's handle
//! (`cudaTextureObject_t`, `cudaSurfaceObject_t`) is the descriptor's address, which PTX `tex`, `tld4`,
//! `txq`, `suld.b` and `sust.b` read ([`reconverge_semantics::texture`] defines the descriptor and what a
//! fetch computes). The runtime keeps what the program passed by handle ([`Runtime::objects`]) for the
//! `cudaGet...Desc` calls and to know what to free.
//!
//! What CUDA refuses, with the codes returned here:
//! - a resource or texture field outside its enum, resource flags, a resource view (none is supported;
//!   CUDA allows one only for arrays), a pitched range that is not wholly device or managed memory, a
//!   linear one that does not start in device or managed memory, either starting off a multiple of
//!   `textureAlignment` (512) into its allocation, a pitch not a
//!   multiple of `texturePitchAlignment` (32) or below the row, an extent past the device's limits, a
//!   surface over an array without `cudaArraySurfaceLoadStore`: `cudaErrorInvalidValue` (what CUDA
//!   documents for these calls);
//! - a channel descriptor that is not a format ([`crate::array::ChannelDesc::format`]):
//!   `cudaErrorInvalidChannelDescriptor`;
//! - linear filtering of integer texels read as integers: `cudaErrorInvalidFilterSetting` (CUDA's code for
//!   "linear filtering not supported for non-float type");
//! - an array handle the runtime does not hold: `cudaErrorInvalidResourceHandle` (as
//!   `cudaCreateSurfaceObject` documents);
//! - what the simulator does not model: mipmapped arrays and sRGB conversion: `cudaErrorNotSupported`.
//!
//! Normalized-float reads apply to 8- and 16-bit integer channels only: CUDA's documentation says 32-bit
//! integers "would not be promoted", so they read as integers (and float channels as floats). For linear
//! memory the filter and address modes are ignored, as documented, and `sizeInBytes` may run past the
//! allocation: CUDA does not know allocation sizes and bounds it only by `maxTexture1DLinear` (programs
//! written for texture references bind CUDA's default size, `UINT_MAX`, which the compatibility header
//! clamps to that); a fetch past the allocation reads whatever device memory is there, and one that
//! touches no allocation faults as any access does (naming the thread, pc and address). A NULL texture descriptor reads as an
//! all-zero one (point sampling, wrap, element type, unnormalized coordinates): NVIDIA's runtime accepts
//! it (ROCm's hip-tests, `hipCreateTextureObject_ArgValidation.cc`, skips that check on NVIDIA because
//! the call succeeds there).

use crate::array::{ChannelDesc, SURFACE_LOAD_STORE};
use crate::error::{self as cuda, CudaError};
use crate::hostmem::Plain;
use crate::runtime::Runtime;
use crate::span::Span;
use reconverge_semantics::texture::{
    AddressMode, ChannelKind, Descriptor, Format, ObjectKind, Resource, Sampler, DESCRIPTOR_BYTES,
};

/// `cudaDeviceProp::textureAlignment`: where linear and pitched texture memory may start, counted from
/// the start of its allocation.
pub const TEXTURE_ALIGNMENT: u64 = crate::pitched::PITCH_ALIGNMENT;
/// `cudaDeviceProp::texturePitchAlignment` of compute capability 8.0 devices.
pub const TEXTURE_PITCH_ALIGNMENT: u64 = 32;
/// `cudaDeviceProp::maxTexture1DLinear` of compute capability 8.0 devices (2^27 elements).
pub const MAX_LINEAR_WIDTH: u64 = 1 << 27;
/// `cudaDeviceProp::maxTexture2DLinear` of compute capability 8.0 devices: width and height in elements,
/// pitch in bytes.
pub const MAX_PITCH_2D: [u64; 3] = [131_072, 65_000, 2_097_120];

/// `cudaTextureDesc` as C lays it out (72 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TextureDesc {
    /// `cudaTextureAddressMode` per dimension.
    pub address_mode: [i32; 3],
    /// `cudaTextureFilterMode`.
    pub filter_mode: i32,
    /// `cudaTextureReadMode`.
    pub read_mode: i32,
    /// sRGB to linear conversion (not supported).
    pub srgb: i32,
    /// The border color.
    pub border_color: [f32; 4],
    /// Normalized coordinates.
    pub normalized_coords: i32,
    /// The anisotropy limit (no effect: objects are not mipmapped).
    pub max_anisotropy: u32,
    /// The mipmap filter mode (no effect).
    pub mipmap_filter_mode: i32,
    /// The mipmap level bias (no effect).
    pub mipmap_level_bias: f32,
    /// The lowest mipmap level (no effect).
    pub min_mipmap_level_clamp: f32,
    /// The highest mipmap level (no effect).
    pub max_mipmap_level_clamp: f32,
    /// Trilinear optimisation off (no effect).
    pub disable_trilinear_optimization: i32,
    /// Seamless cubemap filtering (cubemaps are not supported).
    pub seamless_cubemap: i32,
}

// SAFETY: 4-byte integers and floats, no padding; every bit pattern is a valid value.
unsafe impl Plain for TextureDesc {}

impl TextureDesc {
    /// The sampling state of a texture of `format`, or CUDA's error for a field it refuses.
    pub fn sampler(&self, format: Format) -> Result<Sampler, CudaError> {
        let mode = |m: i32| u32::try_from(m).ok().and_then(AddressMode::from_cuda).ok_or(cuda::INVALID_VALUE);
        let address = [mode(self.address_mode[0])?, mode(self.address_mode[1])?, mode(self.address_mode[2])?];
        let flag = |v: i32| match v {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(cuda::INVALID_VALUE),
        };
        let (linear, normalized_read) = (flag(self.filter_mode)?, flag(self.read_mode)?);
        if self.srgb != 0 {
            return Err(cuda::NOT_SUPPORTED);
        }
        if self.seamless_cubemap != 0 {
            return Err(cuda::INVALID_VALUE);
        }
        let integer = format.kind != ChannelKind::Float;
        let normalized_float = normalized_read && integer && format.bits < 32;
        if linear && integer && !normalized_float {
            return Err(cuda::INVALID_FILTER_SETTING);
        }
        let normalized_coords = self.normalized_coords != 0;
        Ok(Sampler { address, linear, normalized_float, normalized_coords, border: self.border_color })
    }
}

/// What an object reads: `cudaResourceDesc`, its union resolved by `resType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceSpec {
    /// `cudaResourceTypeArray`: a CUDA array's handle.
    Array(u64),
    /// `cudaResourceTypeMipmappedArray` (not supported).
    Mipmapped(u64),
    /// `cudaResourceTypeLinear`.
    Linear {
        /// The device address.
        ptr: u64,
        /// The element format.
        desc: ChannelDesc,
        /// Bytes (the width is `size` over the element's bytes, rounded down).
        size: u64,
    },
    /// `cudaResourceTypePitch2D`.
    Pitch2d {
        /// The device address of element (0, 0).
        ptr: u64,
        /// The element format.
        desc: ChannelDesc,
        /// Elements per row.
        width: u64,
        /// Rows.
        height: u64,
        /// Bytes from one row to the next.
        pitch: u64,
    },
}

/// A texture or surface object the runtime holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Object {
    /// Texture or surface.
    pub kind: ObjectKind,
    /// What the program described it over.
    pub resource: ResourceSpec,
    /// Its texture descriptor as the program passed it (all zeros for a surface).
    pub texture: TextureDesc,
}

impl Runtime {
    /// `cudaCreateTextureObject`: checks `res` and `tex` and writes the object's descriptor; its handle.
    pub fn create_texture(&mut self, res: ResourceSpec, tex: TextureDesc) -> Result<u64, CudaError> {
        let d = self.texture_descriptor(res, &tex)?;
        self.place(d, Object { kind: ObjectKind::Texture, resource: res, texture: tex })
    }

    /// `cudaCreateSurfaceObject`: a surface over a whole array allocated with `cudaArraySurfaceLoadStore`.
    pub fn create_surface(&mut self, res: ResourceSpec) -> Result<u64, CudaError> {
        let ResourceSpec::Array(handle) = res else { return Err(cuda::INVALID_VALUE) };
        let a = self.array(handle)?;
        if a.flags & SURFACE_LOAD_STORE == 0 {
            return Err(cuda::INVALID_VALUE);
        }
        let d = a.descriptor(ObjectKind::Surface, Sampler::default());
        self.place(d, Object { kind: ObjectKind::Surface, resource: res, texture: TextureDesc::default() })
    }

    /// The object of `kind` at `handle`; `cudaErrorInvalidValue` for any other handle (what CUDA
    /// documents for the calls that take one).
    pub fn object(&self, handle: u64, kind: ObjectKind) -> Result<&Object, CudaError> {
        self.objects.get(&handle).filter(|o| o.kind == kind).ok_or(cuda::INVALID_VALUE)
    }

    /// `cudaDestroyTextureObject`, `cudaDestroySurfaceObject`: frees the descriptor. Handle 0 does nothing
    /// (NVIDIA's runtime returns success, per ROCm's hip-tests); any other handle the runtime does not hold
    /// (destroyed already, or an object of the other kind) is `cudaErrorInvalidValue`.
    pub fn destroy_object(&mut self, handle: u64, kind: ObjectKind) -> CudaError {
        if handle == 0 {
            return cuda::SUCCESS;
        }
        if let Err(c) = self.object(handle, kind) {
            return c;
        }
        self.objects.remove(&handle);
        self.mem.free(handle);
        cuda::SUCCESS
    }

    /// Allocates and writes the descriptor of `object`; its address, the handle.
    fn place(&mut self, d: Descriptor, object: Object) -> Result<u64, CudaError> {
        let name = match object.kind {
            ObjectKind::Texture => "texture object",
            ObjectKind::Surface => "surface object",
        };
        let handle = self.malloc_named(DESCRIPTOR_BYTES as u64, name.into())?;
        self.span_bytes_mut(Span::Device(handle), DESCRIPTOR_BYTES as u64)?.copy_from_slice(&d.encode());
        self.objects.insert(handle, object);
        Ok(handle)
    }

    /// The descriptor of a texture over `res` sampled as `tex` says.
    fn texture_descriptor(&self, res: ResourceSpec, tex: &TextureDesc) -> Result<Descriptor, CudaError> {
        let texture = |resource, format: Format, sampler, (base, width, pitch, height)| Descriptor {
            object: ObjectKind::Texture,
            resource,
            format,
            base,
            width,
            pitch,
            height,
            depth: 1,
            layers: 1,
            sampler,
        };
        match res {
            ResourceSpec::Array(handle) => {
                let a = self.array(handle)?;
                Ok(a.descriptor(ObjectKind::Texture, tex.sampler(a.format)?))
            }
            ResourceSpec::Mipmapped(_) => Err(cuda::NOT_SUPPORTED),
            ResourceSpec::Linear { ptr, desc, size } => {
                let format = desc.format()?;
                let width = size / format.bytes();
                if width == 0 || width > MAX_LINEAR_WIDTH {
                    return Err(cuda::INVALID_VALUE);
                }
                // Only the start: the range may run past the allocation, as on a GPU.
                self.texel_memory(ptr, 1)?;
                // The filter and address modes are ignored for linear memory.
                let sampler = TextureDesc { filter_mode: 0, address_mode: [1; 3], ..*tex }.sampler(format)?;
                Ok(texture(Resource::Linear, format, sampler, (ptr, width, width * format.bytes(), 1)))
            }
            ResourceSpec::Pitch2d { ptr, desc, width, height, pitch } => {
                let format = desc.format()?;
                let row = width.saturating_mul(format.bytes());
                let [most_w, most_h, most_pitch] = MAX_PITCH_2D;
                let fits = (1..=most_w).contains(&width) && (1..=most_h).contains(&height) && pitch <= most_pitch;
                if !fits || row > pitch || !pitch.is_multiple_of(TEXTURE_PITCH_ALIGNMENT) {
                    return Err(cuda::INVALID_VALUE);
                }
                self.texel_memory(ptr, pitch * (height - 1) + row)?;
                let sampler = tex.sampler(format)?;
                Ok(texture(Resource::Pitch2d, format, sampler, (ptr, width, pitch, height as u32)))
            }
        }
    }

    /// Checks that `[ptr, ptr + len)` is device or managed memory (one allocation or block) that starts a
    /// multiple of [`TEXTURE_ALIGNMENT`] bytes into its allocation (`cudaErrorInvalidValue` otherwise):
    /// every `cudaMalloc` pointer passes, as on a GPU, whose allocations are aligned that far. (A linear
    /// texture checks its first byte only.)
    fn texel_memory(&self, ptr: u64, len: u64) -> Result<(), CudaError> {
        let start = match self.classify(ptr, len)? {
            Span::Device(_) => {
                self.mem.allocations().iter().find(|a| a.base <= ptr && ptr - a.base < a.data.len() as u64)
            }
            Span::Managed(_) => None,
            Span::Host(_) | Span::Constant { .. } => return Err(cuda::INVALID_VALUE),
        }
        .map_or(0, |a| a.base);
        if !(ptr - start).is_multiple_of(TEXTURE_ALIGNMENT) {
            return Err(cuda::INVALID_VALUE);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::LAYERED;
    use crate::settings::Settings;

    fn runtime() -> Runtime {
        Runtime::new(Settings::from_vars(|_| None).expect("default settings"))
    }

    const FLOAT: ChannelDesc = ChannelDesc { x: 32, y: 0, z: 0, w: 0, f: 2 };
    const UCHAR4: ChannelDesc = ChannelDesc { x: 8, y: 8, z: 8, w: 8, f: 1 };
    const INT: ChannelDesc = ChannelDesc { x: 32, y: 0, z: 0, w: 0, f: 0 };

    /// The descriptor an object's handle points at, read back from device memory.
    fn descriptor(rt: &Runtime, handle: u64) -> Descriptor {
        let bytes = rt.span_bytes(Span::Device(handle), DESCRIPTOR_BYTES as u64).expect("the descriptor");
        Descriptor::decode(bytes.try_into().expect("64 bytes")).expect("decodes")
    }

    #[test]
    fn texture_descriptors_describe_arrays_pitched_and_linear_memory() {
        let mut rt = runtime();
        let array = rt.malloc_array(UCHAR4, [6, 4, 3], LAYERED).unwrap();
        let tex = TextureDesc {
            address_mode: [3, 1, 0],
            filter_mode: 1,
            read_mode: 1,
            border_color: [0.5, 0.0, 0.0, 1.0],
            normalized_coords: 1,
            ..TextureDesc::default()
        };
        let h = rt.create_texture(ResourceSpec::Array(array), tex).unwrap();
        let d = descriptor(&rt, h);
        assert_eq!((d.base, d.width, d.pitch, d.height, d.depth, d.layers), (array, 6, 24, 4, 1, 3));
        assert_eq!(d.sampler.address, [AddressMode::Border, AddressMode::Clamp, AddressMode::Wrap]);
        assert!(d.sampler.linear && d.sampler.normalized_float && d.sampler.normalized_coords);
        assert_eq!(rt.object(h, ObjectKind::Texture).unwrap().texture, tex);

        let (p, pitch) = rt.malloc_pitched(crate::pitched::Extent { width: 40, height: 5, depth: 1 }).unwrap();
        let pitched = ResourceSpec::Pitch2d { ptr: p, desc: FLOAT, width: 10, height: 5, pitch };
        let h = rt.create_texture(pitched, TextureDesc::default()).unwrap();
        let d = descriptor(&rt, h);
        assert_eq!((d.resource, d.width, d.pitch, d.height), (Resource::Pitch2d, 10, 512, 5));

        let buf = rt.malloc(4096).unwrap();
        let linear = ResourceSpec::Linear { ptr: buf, desc: UCHAR4, size: 4095 };
        let h = rt.create_texture(linear, TextureDesc { filter_mode: 1, ..tex }).unwrap();
        let d = descriptor(&rt, h);
        assert_eq!((d.resource, d.width, d.height), (Resource::Linear, 1023, 1), "the size rounds down");
        assert!(!d.sampler.linear, "linear memory ignores the filter mode");
    }

    /// CUDA bounds a linear texture by `maxTexture1DLinear` only (it does not know allocation sizes):
    /// programs written for texture references bind CUDA's default size, `UINT_MAX` clamped to that, over
    /// a small buffer. The shim refused a range past the allocation; it takes it, as the GPU does.
    #[test]
    fn a_linear_texture_may_run_past_its_allocation() {
        let mut rt = runtime();
        let buf = rt.malloc(4096).unwrap();
        let linear = |size| ResourceSpec::Linear { ptr: buf, desc: FLOAT, size };
        for size in [4100, 1 << 20, MAX_LINEAR_WIDTH * 4, MAX_LINEAR_WIDTH * 4 + 3] {
            let h = rt.create_texture(linear(size), TextureDesc::default()).unwrap_or_else(|e| panic!("{size}: {e}"));
            assert_eq!(descriptor(&rt, h).width, size / 4, "{size}");
            assert_eq!(rt.destroy_object(h, ObjectKind::Texture), cuda::SUCCESS);
        }
        let too_wide = linear((MAX_LINEAR_WIDTH + 1) * 4);
        assert_eq!(rt.create_texture(too_wide, TextureDesc::default()), Err(cuda::INVALID_VALUE));
        let managed = rt.malloc_managed(4096, "m".into()).unwrap();
        let past = ResourceSpec::Linear { ptr: managed, desc: FLOAT, size: 1 << 16 };
        assert!(rt.create_texture(past, TextureDesc::default()).is_ok(), "managed memory too");
    }

    #[test]
    fn textures_cuda_refuses_are_refused_with_its_codes() {
        let mut rt = runtime();
        let array = rt.malloc_array(INT, [8, 8, 0], 0).unwrap();
        let buf = rt.malloc(4096).unwrap();
        let ok = TextureDesc::default();
        let linear = |ptr, size| ResourceSpec::Linear { ptr, desc: FLOAT, size };
        let filtered = TextureDesc { filter_mode: 1, ..ok };
        let cases = [
            (ResourceSpec::Array(array), filtered, cuda::INVALID_FILTER_SETTING),
            (ResourceSpec::Array(array), TextureDesc { read_mode: 1, ..filtered }, cuda::INVALID_FILTER_SETTING),
            (ResourceSpec::Array(array + 256), ok, cuda::INVALID_RESOURCE_HANDLE),
            (ResourceSpec::Array(0), ok, cuda::INVALID_VALUE),
            (ResourceSpec::Array(array), TextureDesc { address_mode: [4, 0, 0], ..ok }, cuda::INVALID_VALUE),
            (ResourceSpec::Array(array), TextureDesc { srgb: 1, ..ok }, cuda::NOT_SUPPORTED),
            (ResourceSpec::Mipmapped(array), ok, cuda::NOT_SUPPORTED),
            (linear(buf, (MAX_LINEAR_WIDTH + 1) * 4), ok, cuda::INVALID_VALUE),
            (linear(buf - 512, 64), ok, cuda::INVALID_VALUE),
            (linear(buf + 4096, 64), ok, cuda::INVALID_VALUE),
            (linear(buf + 4, 64), ok, cuda::INVALID_VALUE),
            (linear(buf, 3), ok, cuda::INVALID_VALUE),
            (ResourceSpec::Linear { ptr: buf, desc: ChannelDesc { z: 32, ..UCHAR4 }, size: 64 }, ok, 20),
            (ResourceSpec::Pitch2d { ptr: buf, desc: FLOAT, width: 16, height: 8, pitch: 48 }, ok, cuda::INVALID_VALUE),
            (
                ResourceSpec::Pitch2d { ptr: buf, desc: FLOAT, width: 16, height: 9, pitch: 512 },
                ok,
                cuda::INVALID_VALUE,
            ),
        ];
        let held = rt.held();
        for (res, tex, code) in cases {
            assert_eq!(rt.create_texture(res, tex), Err(code), "{res:?} {tex:?}");
        }
        assert_eq!(rt.held(), held, "a refused object allocates nothing");
        let good = ResourceSpec::Pitch2d { ptr: buf, desc: FLOAT, width: 16, height: 8, pitch: 512 };
        let h = rt.create_texture(good, ok).unwrap();
        assert_eq!(rt.destroy_object(h, ObjectKind::Surface), cuda::INVALID_VALUE, "not a surface");
        assert_eq!(rt.destroy_object(h, ObjectKind::Texture), cuda::SUCCESS);
        assert_eq!(rt.destroy_object(h, ObjectKind::Texture), cuda::INVALID_VALUE, "destroyed twice");
        assert_eq!(rt.destroy_object(0, ObjectKind::Texture), cuda::SUCCESS);
        assert_eq!(rt.held(), held);
    }

    #[test]
    fn surfaces_need_an_array_with_load_store() {
        let mut rt = runtime();
        let plain = rt.malloc_array(FLOAT, [8, 4, 0], 0).unwrap();
        let surf = rt.malloc_array(FLOAT, [8, 4, 0], SURFACE_LOAD_STORE).unwrap();
        assert_eq!(rt.create_surface(ResourceSpec::Array(plain)), Err(cuda::INVALID_VALUE));
        let buf = rt.malloc(256).unwrap();
        assert_eq!(
            rt.create_surface(ResourceSpec::Linear { ptr: buf, desc: FLOAT, size: 256 }),
            Err(cuda::INVALID_VALUE)
        );
        let h = rt.create_surface(ResourceSpec::Array(surf)).unwrap();
        let d = descriptor(&rt, h);
        assert_eq!((d.object, d.base, d.width, d.pitch, d.height), (ObjectKind::Surface, surf, 8, 32, 4));
        assert_eq!(rt.object(h, ObjectKind::Texture), Err(cuda::INVALID_VALUE));
        rt.free_arrays_and_objects();
        assert!(rt.objects.is_empty() && rt.mem.allocations().iter().all(|a| a.base != h));
    }

    #[test]
    fn the_texture_desc_has_cudas_size() {
        assert_eq!(std::mem::size_of::<TextureDesc>(), 72);
        assert_eq!(std::mem::size_of::<ChannelDesc>(), 20);
    }
}
