//! Texture and surface objects ([`crate::texture`]): `cudaCreateTextureObject`, `cudaDestroyTextureObject`,
//! `cudaGetTextureObjectResourceDesc`, `cudaGetTextureObjectTextureDesc`,
//! `cudaGetTextureObjectResourceViewDesc`, `cudaCreateSurfaceObject`, `cudaDestroySurfaceObject`,
//! `cudaGetSurfaceObjectResourceDesc`. A handle is the device address of the object's descriptor.

use super::{call, put, put_bytes};
use crate::abi::ABI;
use crate::array::ChannelDesc;
use crate::error::{self as cuda, CudaError};
use crate::hostmem::{self, Plain};
use crate::texture::{ResourceSpec, TextureDesc};
use reconverge_semantics::texture::ObjectKind;
use std::ffi::c_void;

/// `cudaResourceDesc` as C lays it out (144 bytes): `resType`, padding, the 128-byte union, `flags` and
/// the structure's padding to its 8-byte alignment.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaResourceDesc {
    /// `cudaResourceType`.
    pub res_type: i32,
    /// Padding before the union.
    pub pad: u32,
    /// The union `res`, as bytes.
    pub res: [u8; 128],
    /// Flags (must be zero).
    pub flags: u32,
    /// Padding after `flags`.
    pub pad_end: u32,
}

// SAFETY: integers and bytes, no implicit padding (it is spelled out); every bit pattern is valid.
unsafe impl Plain for CudaResourceDesc {}

/// Where the fields of `cudaResourceDesc`'s union lie, from the union's start (CUDA 13's
/// `driver_types.h`; `tests/texture_layout.rs` checks them with the C compiler): the array or pointer,
/// the channel descriptor, and the linear size or the pitched width, height and pitch.
pub mod union_at {
    /// `res.array.array`, `res.mipmap.mipmap`, `res.linear.devPtr`, `res.pitch2D.devPtr`.
    pub const HANDLE: usize = 0;
    /// `res.linear.desc`, `res.pitch2D.desc`.
    pub const DESC: usize = 8;
    /// `res.linear.sizeInBytes`, `res.pitch2D.width`.
    pub const SIZE: usize = 32;
    /// `res.pitch2D.height`.
    pub const HEIGHT: usize = 40;
    /// `res.pitch2D.pitchInBytes`.
    pub const PITCH: usize = 48;
}

/// Bytes of CUDA 13's `cudaResourceDesc`.
const RESOURCE_DESC_BYTES: usize = std::mem::size_of::<CudaResourceDesc>();

impl CudaResourceDesc {
    /// The descriptor as C lays it out.
    pub fn to_bytes(&self) -> [u8; RESOURCE_DESC_BYTES] {
        let mut b = [0u8; RESOURCE_DESC_BYTES];
        b[0..4].copy_from_slice(&self.res_type.to_le_bytes());
        b[4..8].copy_from_slice(&self.pad.to_le_bytes());
        b[8..136].copy_from_slice(&self.res);
        b[136..140].copy_from_slice(&self.flags.to_le_bytes());
        b[140..144].copy_from_slice(&self.pad_end.to_le_bytes());
        b
    }

    /// The descriptor C's bytes `b` lay out.
    pub fn from_bytes(b: &[u8; RESOURCE_DESC_BYTES]) -> CudaResourceDesc {
        let word = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let mut res = [0u8; 128];
        res.copy_from_slice(&b[8..136]);
        CudaResourceDesc { res_type: word(0) as i32, pad: word(4), res, flags: word(136), pad_end: word(140) }
    }

    /// A zeroed descriptor of `res_type`.
    fn of_type(res_type: i32) -> CudaResourceDesc {
        CudaResourceDesc { res_type, pad: 0, res: [0; 128], flags: 0, pad_end: 0 }
    }

    /// The little-endian `N` bytes of the union at `at`.
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0u8; N];
        if let Some(s) = self.res.get(at..at + N) {
            b.copy_from_slice(s);
        }
        b
    }

    fn word(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.bytes(at))
    }

    fn set(&mut self, at: usize, bytes: &[u8]) {
        if let Some(s) = self.res.get_mut(at..at + bytes.len()) {
            s.copy_from_slice(bytes);
        }
    }

    /// The channel descriptor of a linear or pitched resource.
    fn channel(&self) -> ChannelDesc {
        let int = |k: usize| i32::from_le_bytes(self.bytes(union_at::DESC + 4 * k));
        ChannelDesc { x: int(0), y: int(1), z: int(2), w: int(3), f: int(4) }
    }

    /// What the descriptor describes; nonzero flags and an unknown type are `cudaErrorInvalidValue`.
    pub fn spec(&self) -> Result<ResourceSpec, CudaError> {
        if self.flags != 0 {
            return Err(cuda::INVALID_VALUE);
        }
        let ptr = self.word(union_at::HANDLE);
        Ok(match self.res_type {
            0 => ResourceSpec::Array(ptr),
            1 => ResourceSpec::Mipmapped(ptr),
            2 => ResourceSpec::Linear { ptr, desc: self.channel(), size: self.word(union_at::SIZE) },
            3 => ResourceSpec::Pitch2d {
                ptr,
                desc: self.channel(),
                width: self.word(union_at::SIZE),
                height: self.word(union_at::HEIGHT),
                pitch: self.word(union_at::PITCH),
            },
            _ => return Err(cuda::INVALID_VALUE),
        })
    }

    /// The descriptor of `spec`, as the `cudaGet...ResourceDesc` calls return it.
    pub fn of(spec: ResourceSpec) -> CudaResourceDesc {
        let with_desc = |t: i32, ptr: u64, d: ChannelDesc| {
            let mut r = CudaResourceDesc::of_type(t);
            r.set(union_at::HANDLE, &ptr.to_le_bytes());
            for (k, v) in [d.x, d.y, d.z, d.w, d.f].into_iter().enumerate() {
                r.set(union_at::DESC + 4 * k, &v.to_le_bytes());
            }
            r
        };
        match spec {
            ResourceSpec::Array(h) | ResourceSpec::Mipmapped(h) => {
                let res_type = if matches!(spec, ResourceSpec::Array(_)) { 0 } else { 1 };
                let mut r = CudaResourceDesc::of_type(res_type);
                r.set(union_at::HANDLE, &h.to_le_bytes());
                r
            }
            ResourceSpec::Linear { ptr, desc, size } => {
                let mut r = with_desc(2, ptr, desc);
                r.set(union_at::SIZE, &size.to_le_bytes());
                r
            }
            ResourceSpec::Pitch2d { ptr, desc, width, height, pitch } => {
                let mut r = with_desc(3, ptr, desc);
                for (at, v) in [(union_at::SIZE, width), (union_at::HEIGHT, height), (union_at::PITCH, pitch)] {
                    r.set(at, &v.to_le_bytes());
                }
                r
            }
        }
    }
}

/// The program's `cudaResourceDesc` at `res`, of this library's ABI: CUDA 12's 64 bytes are CUDA 13's first
/// 64 (its union's members lie where CUDA 13's do), and what CUDA 13 added after them (the union's
/// reserved words, `flags`) reads as zero. NULL or unreadable: `cudaErrorInvalidValue`.
fn read_resource_desc(res: *const CudaResourceDesc) -> Result<CudaResourceDesc, CudaError> {
    let mut b = [0u8; RESOURCE_DESC_BYTES];
    if res.is_null() || hostmem::read(res as u64, &mut b[..ABI.resource_desc_size()]).is_err() {
        return Err(cuda::INVALID_VALUE);
    }
    Ok(CudaResourceDesc::from_bytes(&b))
}

/// Creates an object into the program's handle `out` (checked writable first) with `create`, from the
/// resource descriptor at `res` (NULL or unreadable: `cudaErrorInvalidValue`).
///
/// # Safety
/// `out` and `res` are the parameters the program passed.
unsafe fn create_into(
    out: *mut u64,
    res: *const CudaResourceDesc,
    create: impl FnOnce(ResourceSpec) -> Result<u64, CudaError>,
) -> CudaError {
    // SAFETY: the caller's contract; a bad pointer is an error.
    let checked = unsafe { put(out, 0) };
    if checked != cuda::SUCCESS {
        return checked;
    }
    let spec = match read_resource_desc(res).and_then(|r| r.spec()) {
        Ok(s) => s,
        Err(c) => return c,
    };
    match create(spec) {
        // SAFETY: as above.
        Ok(handle) => unsafe { put(out, handle) },
        Err(c) => c,
    }
}

/// `cudaCreateTextureObject`: a texture over an array, linear or pitched memory. A NULL texture
/// descriptor is an all-zero one; a resource view is `cudaErrorNotSupported` for arrays and
/// `cudaErrorInvalidValue` for memory (CUDA allows views of arrays only).
#[no_mangle]
pub unsafe extern "C" fn cudaCreateTextureObject(
    tex_object: *mut u64,
    res_desc: *const CudaResourceDesc,
    tex_desc: *const TextureDesc,
    view_desc: *const c_void,
) -> CudaError {
    call("cudaCreateTextureObject", |rt| {
        let tex = if tex_desc.is_null() { Ok(TextureDesc::default()) } else { hostmem::read_value(tex_desc) };
        let Ok(tex) = tex else { return cuda::INVALID_VALUE };
        let create = |spec| {
            if !view_desc.is_null() {
                let on_array = matches!(spec, ResourceSpec::Array(_) | ResourceSpec::Mipmapped(_));
                return Err(if on_array { cuda::NOT_SUPPORTED } else { cuda::INVALID_VALUE });
            }
            rt.create_texture(spec, tex)
        };
        // SAFETY: the program's parameters.
        unsafe { create_into(tex_object, res_desc, create) }
    })
}

/// `cudaCreateSurfaceObject`: a surface over an array allocated with `cudaArraySurfaceLoadStore`.
#[no_mangle]
pub unsafe extern "C" fn cudaCreateSurfaceObject(
    surf_object: *mut u64,
    res_desc: *const CudaResourceDesc,
) -> CudaError {
    // SAFETY: the program's parameters.
    call("cudaCreateSurfaceObject", |rt| unsafe { create_into(surf_object, res_desc, |spec| rt.create_surface(spec)) })
}

/// `cudaDestroyTextureObject` (0 does nothing; an unknown or destroyed handle is `cudaErrorInvalidValue`).
#[no_mangle]
pub unsafe extern "C" fn cudaDestroyTextureObject(tex_object: u64) -> CudaError {
    call("cudaDestroyTextureObject", |rt| rt.destroy_object(tex_object, ObjectKind::Texture))
}

/// `cudaDestroySurfaceObject` (as `cudaDestroyTextureObject`).
#[no_mangle]
pub unsafe extern "C" fn cudaDestroySurfaceObject(surf_object: u64) -> CudaError {
    call("cudaDestroySurfaceObject", |rt| rt.destroy_object(surf_object, ObjectKind::Surface))
}

/// The resource descriptor of the object of `kind` at `handle`, written through `out` in this library's
/// ABI (CUDA 12's is the first 64 bytes of CUDA 13's, [`read_resource_desc`]).
fn resource_desc(name: &str, out: *mut CudaResourceDesc, handle: u64, kind: ObjectKind) -> CudaError {
    call(name, |rt| match rt.object(handle, kind) {
        Ok(o) => {
            let bytes = CudaResourceDesc::of(o.resource).to_bytes();
            // SAFETY: the program's output parameter; a bad one is an error.
            unsafe { put_bytes(out.cast(), &bytes[..ABI.resource_desc_size()]) }
        }
        Err(c) => c,
    })
}

/// `cudaGetTextureObjectResourceDesc`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetTextureObjectResourceDesc(out: *mut CudaResourceDesc, tex_object: u64) -> CudaError {
    resource_desc("cudaGetTextureObjectResourceDesc", out, tex_object, ObjectKind::Texture)
}

/// `cudaGetSurfaceObjectResourceDesc`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetSurfaceObjectResourceDesc(out: *mut CudaResourceDesc, surf_object: u64) -> CudaError {
    resource_desc("cudaGetSurfaceObjectResourceDesc", out, surf_object, ObjectKind::Surface)
}

/// `cudaGetTextureObjectTextureDesc`: the texture descriptor as the program passed it.
#[no_mangle]
pub unsafe extern "C" fn cudaGetTextureObjectTextureDesc(out: *mut TextureDesc, tex_object: u64) -> CudaError {
    call("cudaGetTextureObjectTextureDesc", |rt| match rt.object(tex_object, ObjectKind::Texture) {
        // SAFETY: the program's output parameter; a bad one is an error.
        Ok(o) => unsafe { put(out, o.texture) },
        Err(c) => c,
    })
}

/// `cudaGetTextureObjectResourceViewDesc`: no object has a resource view here, and CUDA returns
/// `cudaErrorInvalidValue` for one created without.
#[no_mangle]
pub unsafe extern "C" fn cudaGetTextureObjectResourceViewDesc(_out: *mut c_void, _tex_object: u64) -> CudaError {
    call("cudaGetTextureObjectResourceViewDesc", |_| cuda::INVALID_VALUE)
}

/// The layout of the structures these entry points read and write, as `(C struct, member, offset, size)`
/// (CUDA 13's headers; `tests/texture_layout.rs` checks each with the C compiler).
pub const LAYOUT: [(&str, &str, usize, usize); 12] = [
    ("cudaChannelFormatDesc", "f", 16, 4),
    ("cudaResourceDesc", "res", 8, 128),
    ("cudaResourceDesc", "res.array.array", 8 + union_at::HANDLE, 8),
    ("cudaResourceDesc", "res.linear.desc", 8 + union_at::DESC, 20),
    ("cudaResourceDesc", "res.linear.sizeInBytes", 8 + union_at::SIZE, 8),
    ("cudaResourceDesc", "res.pitch2D.width", 8 + union_at::SIZE, 8),
    ("cudaResourceDesc", "res.pitch2D.height", 8 + union_at::HEIGHT, 8),
    ("cudaResourceDesc", "res.pitch2D.pitchInBytes", 8 + union_at::PITCH, 8),
    ("cudaResourceDesc", "flags", 136, 4),
    ("cudaTextureDesc", "borderColor", 24, 16),
    ("cudaTextureDesc", "normalizedCoords", 40, 4),
    ("cudaTextureDesc", "seamlessCubemap", 68, 4),
];

/// The sizes of the structures, `(C struct, bytes)`, checked with [`LAYOUT`].
pub const SIZES: [(&str, usize); 4] = [
    ("cudaChannelFormatDesc", std::mem::size_of::<ChannelDesc>()),
    ("cudaResourceDesc", std::mem::size_of::<CudaResourceDesc>()),
    ("cudaTextureDesc", std::mem::size_of::<TextureDesc>()),
    ("cudaMemcpy3DParms", std::mem::size_of::<super::pitched::CudaMemcpy3DParms>()),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_descriptors_round_trip() {
        let desc = ChannelDesc { x: 8, y: 8, z: 8, w: 8, f: 1 };
        let specs = [
            ResourceSpec::Array(0x1234),
            ResourceSpec::Mipmapped(0x99),
            ResourceSpec::Linear { ptr: 0x7000, desc, size: 4096 },
            ResourceSpec::Pitch2d { ptr: 0x8000, desc, width: 10, height: 3, pitch: 512 },
        ];
        for s in specs {
            assert_eq!(CudaResourceDesc::of(s).spec(), Ok(s));
        }
        let mut flagged = CudaResourceDesc::of(specs[0]);
        flagged.flags = 1;
        assert_eq!(flagged.spec(), Err(cuda::INVALID_VALUE));
        assert_eq!(CudaResourceDesc::of_type(4).spec(), Err(cuda::INVALID_VALUE));
        assert_eq!(std::mem::size_of::<CudaResourceDesc>(), 144);
        for s in specs {
            let mut d = CudaResourceDesc::of(s);
            d.flags = 7;
            assert_eq!(CudaResourceDesc::from_bytes(&d.to_bytes()), d);
        }
    }

    /// CUDA 12's descriptor (64 bytes) reads as CUDA 13's with the words CUDA 13 added zero: every kind of
    /// resource survives the cut, and the union's members CUDA 12 has end before it.
    #[test]
    fn cuda_12_descriptors_are_cuda_13_prefixes() {
        let cut = crate::abi::cuda12::RESOURCE_DESC_SIZE;
        assert!(8 + union_at::PITCH + 8 <= cut);
        let desc = ChannelDesc { x: 32, y: 0, z: 0, w: 0, f: 2 };
        for s in
            [ResourceSpec::Array(0x1234), ResourceSpec::Pitch2d { ptr: 0x8000, desc, width: 10, height: 3, pitch: 512 }]
        {
            let mut b = [0u8; RESOURCE_DESC_BYTES];
            b[..cut].copy_from_slice(&CudaResourceDesc::of(s).to_bytes()[..cut]);
            assert_eq!(CudaResourceDesc::from_bytes(&b).spec(), Ok(s));
        }
    }
}
