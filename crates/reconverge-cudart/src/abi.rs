//! The C ABI a build of these sources serves: CUDA 13's or CUDA 12's.
//!
//! The same sources are compiled twice. `reconverge-cudart` builds `libreconverge_cudart.so`, loaded as
//! `libcudart.so.13` by programs built with CUDA 13; `reconverge-cudart12` (a manifest whose library is
//! this crate's `src/lib.rs`) builds `libreconverge_cudart12.so`, loaded as `libcudart.so.12` by programs
//! built with CUDA 12, with `--cfg cuda12` (set by `build.rs`, which also gives each library its soname,
//! version node and stubs). Every entry point whose C signature and structures are the same in the two
//! header sets is one definition that both libraries export. For the exports whose CUDA 12 ABI differs
//! (`abi12.txt` lists every such export of NVIDIA's `libcudart.so.12`, derived from the two header sets by
//! `tests/cuda12_abi.rs`), the list says how CUDA 12's library serves each:
//!
//! - `shared`: one definition is right for both, because it reads nothing whose layout differs (the
//!   arguments of `cudaMemAdvise`, the `cudaDeviceProp` of `cudaChooseDevice`) or adapts through [`ABI`]
//!   (the size of `cudaPointerAttributes` and `cudaResourceDesc`, the attribute codes of
//!   `cudaDeviceGetAttribute`);
//! - `cuda12`: a definition for CUDA 12's library only (`#[cfg(cuda12)]`, in `src/api/cuda12.rs`) calling
//!   the shared logic with CUDA 12's layout, beside CUDA 13's (`#[cfg(not(cuda12))]`);
//! - `stub`: CUDA 12's library has the unsupported stub (CUDA 13's definition is `#[cfg(not(cuda12))]`).
//!
//! `build.rs` refuses to build CUDA 12's library when the sources disagree with the list, so an entry
//! point added for CUDA 13 whose CUDA 12 signature differs never reaches CUDA 12 programs silently wrong.

use crate::api::device::DEVICE_PROP_SIZE;
use crate::api::pointer::POINTER_ATTRIBUTES_SIZE;
use crate::api::texture::CudaResourceDesc;

/// A CUDA runtime ABI: the headers a program was compiled with and the library it loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abi {
    /// CUDA 12's headers (12.9), `libcudart.so.12`.
    Cuda12,
    /// CUDA 13's headers, `libcudart.so.13`.
    Cuda13,
}

/// The ABI of this build: CUDA 12's in `reconverge-cudart12`, CUDA 13's in `reconverge-cudart`.
pub const ABI: Abi = if cfg!(cuda12) { Abi::Cuda12 } else { Abi::Cuda13 };

impl Abi {
    /// The library's soname, which programs name in `DT_NEEDED` and their imports' version.
    pub const fn soname(self) -> &'static str {
        match self {
            Abi::Cuda12 => "libcudart.so.12",
            Abi::Cuda13 => "libcudart.so.13",
        }
    }

    /// What `cudaRuntimeGetVersion` answers: the runtime whose exports the library has (NVIDIA's 12.9
    /// for CUDA 12, 13.0 for CUDA 13).
    pub const fn runtime_version(self) -> i32 {
        match self {
            Abi::Cuda12 => 12090,
            Abi::Cuda13 => 13000,
        }
    }

    /// Bytes of `cudaDeviceProp`.
    pub const fn device_prop_size(self) -> usize {
        match self {
            Abi::Cuda12 => cuda12::DEVICE_PROP_SIZE,
            Abi::Cuda13 => DEVICE_PROP_SIZE,
        }
    }

    /// Bytes of `cudaPointerAttributes`.
    pub const fn pointer_attributes_size(self) -> usize {
        match self {
            Abi::Cuda12 => cuda12::POINTER_ATTRIBUTES_SIZE,
            Abi::Cuda13 => POINTER_ATTRIBUTES_SIZE,
        }
    }

    /// Bytes of `cudaResourceDesc`.
    pub const fn resource_desc_size(self) -> usize {
        match self {
            Abi::Cuda12 => cuda12::RESOURCE_DESC_SIZE,
            Abi::Cuda13 => std::mem::size_of::<CudaResourceDesc>(),
        }
    }
}

/// CUDA 12's structures where they differ from CUDA 13's (`driver_types.h` of CUDA 12.9;
/// `tests/cuda12_abi.rs` checks every number with the C compiler against the CUDA 12 headers).
pub mod cuda12 {
    /// Size of CUDA 12's `cudaDeviceProp`.
    pub const DEVICE_PROP_SIZE: usize = 1032;

    /// Size of CUDA 12's `cudaPointerAttributes`: type, device, the device and the host pointer (CUDA 13
    /// added a union and reserved words after them).
    pub const POINTER_ATTRIBUTES_SIZE: usize = 24;

    /// Size of CUDA 12's `cudaResourceDesc`: `resType` and a 56-byte union whose members lie where CUDA
    /// 13's do (CUDA 13 widened the union with reserved words and added `flags` after it).
    pub const RESOURCE_DESC_SIZE: usize = 64;

    /// The `cudaDeviceProp` fields CUDA 13 removed, with the `cudaDeviceAttr` whose value each held
    /// (`cudaDevAttrCooperativeMultiDeviceLaunch`, 96, is reserved in CUDA 13).
    pub const REMOVED_PROP_FIELDS: [(&str, i32); 8] = [
        ("clockRate", 13),
        ("deviceOverlap", 15),
        ("kernelExecTimeoutEnabled", 17),
        ("computeMode", 20),
        ("maxTexture1DLinear", 69),
        ("memoryClockRate", 36),
        ("singleToDoublePrecisionPerfRatio", 87),
        ("cooperativeMultiDeviceLaunch", 96),
    ];

    /// The offset of every field of CUDA 12's `cudaDeviceProp` (an array's first element).
    pub const DEVICE_PROP_FIELDS: [(&str, usize); 94] = [
        ("name", 0),
        ("uuid", 256),
        ("luid", 272),
        ("luidDeviceNodeMask", 280),
        ("totalGlobalMem", 288),
        ("sharedMemPerBlock", 296),
        ("regsPerBlock", 304),
        ("warpSize", 308),
        ("memPitch", 312),
        ("maxThreadsPerBlock", 320),
        ("maxThreadsDim", 324),
        ("maxGridSize", 336),
        ("clockRate", 348),
        ("totalConstMem", 352),
        ("major", 360),
        ("minor", 364),
        ("textureAlignment", 368),
        ("texturePitchAlignment", 376),
        ("deviceOverlap", 384),
        ("multiProcessorCount", 388),
        ("kernelExecTimeoutEnabled", 392),
        ("integrated", 396),
        ("canMapHostMemory", 400),
        ("computeMode", 404),
        ("maxTexture1D", 408),
        ("maxTexture1DMipmap", 412),
        ("maxTexture1DLinear", 416),
        ("maxTexture2D", 420),
        ("maxTexture2DMipmap", 428),
        ("maxTexture2DLinear", 436),
        ("maxTexture2DGather", 448),
        ("maxTexture3D", 456),
        ("maxTexture3DAlt", 468),
        ("maxTextureCubemap", 480),
        ("maxTexture1DLayered", 484),
        ("maxTexture2DLayered", 492),
        ("maxTextureCubemapLayered", 504),
        ("maxSurface1D", 512),
        ("maxSurface2D", 516),
        ("maxSurface3D", 524),
        ("maxSurface1DLayered", 536),
        ("maxSurface2DLayered", 544),
        ("maxSurfaceCubemap", 556),
        ("maxSurfaceCubemapLayered", 560),
        ("surfaceAlignment", 568),
        ("concurrentKernels", 576),
        ("ECCEnabled", 580),
        ("pciBusID", 584),
        ("pciDeviceID", 588),
        ("pciDomainID", 592),
        ("tccDriver", 596),
        ("asyncEngineCount", 600),
        ("unifiedAddressing", 604),
        ("memoryClockRate", 608),
        ("memoryBusWidth", 612),
        ("l2CacheSize", 616),
        ("persistingL2CacheMaxSize", 620),
        ("maxThreadsPerMultiProcessor", 624),
        ("streamPrioritiesSupported", 628),
        ("globalL1CacheSupported", 632),
        ("localL1CacheSupported", 636),
        ("sharedMemPerMultiprocessor", 640),
        ("regsPerMultiprocessor", 648),
        ("managedMemory", 652),
        ("isMultiGpuBoard", 656),
        ("multiGpuBoardGroupID", 660),
        ("hostNativeAtomicSupported", 664),
        ("singleToDoublePrecisionPerfRatio", 668),
        ("pageableMemoryAccess", 672),
        ("concurrentManagedAccess", 676),
        ("computePreemptionSupported", 680),
        ("canUseHostPointerForRegisteredMem", 684),
        ("cooperativeLaunch", 688),
        ("cooperativeMultiDeviceLaunch", 692),
        ("sharedMemPerBlockOptin", 696),
        ("pageableMemoryAccessUsesHostPageTables", 704),
        ("directManagedMemAccessFromHost", 708),
        ("maxBlocksPerMultiProcessor", 712),
        ("accessPolicyMaxWindowSize", 716),
        ("reservedSharedMemPerBlock", 720),
        ("hostRegisterSupported", 728),
        ("sparseCudaArraySupported", 732),
        ("hostRegisterReadOnlySupported", 736),
        ("timelineSemaphoreInteropSupported", 740),
        ("memoryPoolsSupported", 744),
        ("gpuDirectRDMASupported", 748),
        ("gpuDirectRDMAFlushWritesOptions", 752),
        ("gpuDirectRDMAWritesOrdering", 756),
        ("memoryPoolSupportedHandleTypes", 760),
        ("deferredMappingCudaArraySupported", 764),
        ("ipcEventSupported", 768),
        ("clusterLaunch", 772),
        ("unifiedFunctionPointers", 776),
        ("reserved", 780),
    ];

    /// The offset in CUDA 12's `cudaDeviceProp` of `field` (`name`, or `name[i]` for an array's element of
    /// `size` bytes); `None` for a field CUDA 12 does not have.
    pub fn prop_offset(field: &str, size: usize) -> Option<usize> {
        let (base, index) = match field.split_once('[') {
            Some((b, i)) => (b, i.trim_end_matches(']').parse::<usize>().ok()?),
            None => (field, 0),
        };
        DEVICE_PROP_FIELDS.iter().find(|f| f.0 == base).map(|f| f.1 + index * size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_follow_the_abi() {
        assert_eq!(Abi::Cuda13.device_prop_size(), 1008);
        assert_eq!(Abi::Cuda13.pointer_attributes_size(), 88);
        assert_eq!(Abi::Cuda13.resource_desc_size(), 144);
        assert_eq!((Abi::Cuda12.soname(), Abi::Cuda13.soname()), ("libcudart.so.12", "libcudart.so.13"));
        assert_eq!(ABI, if cfg!(cuda12) { Abi::Cuda12 } else { Abi::Cuda13 });
    }

    #[test]
    fn cuda_12_prop_offsets_resolve_array_elements() {
        assert_eq!(cuda12::prop_offset("maxThreadsDim[2]", 4), Some(324 + 8));
        assert_eq!(cuda12::prop_offset("clockRate", 4), Some(348));
        assert_eq!(cuda12::prop_offset("hostNumaId", 4), None, "a field CUDA 13 added");
        let fields: Vec<&str> = cuda12::DEVICE_PROP_FIELDS.iter().map(|f| f.0).collect();
        assert!(cuda12::REMOVED_PROP_FIELDS.iter().all(|(f, _)| fields.contains(f)));
        assert!(cuda12::DEVICE_PROP_FIELDS.windows(2).all(|w| w[0].1 < w[1].1), "in declaration order");
    }
}
