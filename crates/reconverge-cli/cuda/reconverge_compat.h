// reconverge_compat.h -- compiles CUDA programs written for the runtime before CUDA 12 with CUDA 13's
// headers, unmodified. It adds back what those headers no longer declare:
//
// - the thread-management calls CUDA 12 removed (`cudaThreadSynchronize`, `cudaThreadExit`, ...), as the
//   `cudaDevice` calls that replaced them;
// - texture references, as texture objects. `texture<T, dim, mode> name;` declares a __device__ variable
//   holding the object's handle and the reference's sampling state (`normalized`, `filterMode`,
//   `addressMode[3]`, `channelDesc`, ...); `cudaBindTexture`, `cudaBindTexture2D` and
//   `cudaBindTextureToArray` create a texture object from that state and write its handle into the
//   device variable (`cudaMemcpyToSymbol`); `tex1Dfetch`, `tex1D`, `tex2D`, `tex3D`, `tex1DLayered`,
//   `tex2DLayered` on a reference fetch through its object. Set the sampling state before binding, as
//   CUDA documented it. The C forms of the binding calls, which took `const textureReference *`
//   (`cudaBindTexture(NULL, &tex, ptr, &desc, size)`), take a pointer to the reference. A bind of CUDA's
//   default size (UINT_MAX) covers the most a 1-D linear texture may (`maxTexture1DLinear` elements), as
//   on CUDA 11: a fetch past the allocation reads what is there;
// - the fields CUDA 13 removed from `cudaDeviceProp` (`clockRate`, `computeMode`, ...; see below).
//
// Use:  nvcc -cudart shared -include "$(reconverge cuda-include)/reconverge_compat.h" \
//            -L "$(reconverge cuda-lib)" -o app app.cu
//
// Variables named by a string (`cudaMemcpyToSymbol("c_clusters", ...)`, CUDA before 5.0) need nothing
// here: reconverge's runtime looks the name up among the registered variables itself.
//
// Limits: a reference must be declared at namespace scope (the `texture` macro adds __device__), and it
// must not appear as a function parameter type; string-named references (`cudaBindTexture(.., "name",
// ..)`) and `cudaGetTextureReference` are not provided.
#ifndef RECONVERGE_COMPAT_H
#define RECONVERGE_COMPAT_H

#include <cuda_runtime.h>

// ---- thread management, removed in CUDA 12 ---------------------------------------------------------
static inline __host__ cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
static inline __host__ cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
static inline __host__ cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value) {
    return cudaDeviceSetLimit(limit, value);
}
static inline __host__ cudaError_t cudaThreadGetLimit(size_t *value, enum cudaLimit limit) {
    return cudaDeviceGetLimit(value, limit);
}
static inline __host__ cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *config) {
    return cudaDeviceGetCacheConfig(config);
}
static inline __host__ cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache config) {
    return cudaDeviceSetCacheConfig(config);
}

#ifdef __cplusplus
#include <climits>

namespace reconverge {

// A texture reference: the object's handle (read by the device) and the sampling state of CUDA's
// `textureReference` (set by the host before binding). Constant-initialized, as a __device__ variable
// must be: addressing defaults to clamp, filtering to point, as CUDA's `texture<>` constructor set them.
template <class T, int Dim = 1, enum cudaTextureReadMode Mode = cudaReadModeElementType>
struct texture_ref {
    cudaTextureObject_t object;
    int normalized;
    enum cudaTextureFilterMode filterMode;
    enum cudaTextureAddressMode addressMode[3];
    struct cudaChannelFormatDesc channelDesc;
    int sRGB;
    unsigned int maxAnisotropy;
    enum cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;

    __host__ __device__ constexpr texture_ref(int norm = 0, enum cudaTextureFilterMode filter = cudaFilterModePoint,
                                              enum cudaTextureAddressMode address = cudaAddressModeClamp)
        : object(0), normalized(norm), filterMode(filter), addressMode{address, address, address},
          channelDesc{0, 0, 0, 0, cudaChannelFormatKindNone}, sRGB(0), maxAnisotropy(0),
          mipmapFilterMode(cudaFilterModePoint), mipmapLevelBias(0.0f), minMipmapLevelClamp(0.0f),
          maxMipmapLevelClamp(0.0f), disableTrilinearOptimization(0) {}
};

// What a fetch returns: the element type, or floats of its shape under cudaReadModeNormalizedFloat.
template <class T> struct normalized_of { typedef T type; };
template <> struct normalized_of<char> { typedef float type; };
template <> struct normalized_of<signed char> { typedef float type; };
template <> struct normalized_of<unsigned char> { typedef float type; };
template <> struct normalized_of<short> { typedef float type; };
template <> struct normalized_of<unsigned short> { typedef float type; };
template <> struct normalized_of<char1> { typedef float1 type; };
template <> struct normalized_of<uchar1> { typedef float1 type; };
template <> struct normalized_of<short1> { typedef float1 type; };
template <> struct normalized_of<ushort1> { typedef float1 type; };
template <> struct normalized_of<char2> { typedef float2 type; };
template <> struct normalized_of<uchar2> { typedef float2 type; };
template <> struct normalized_of<short2> { typedef float2 type; };
template <> struct normalized_of<ushort2> { typedef float2 type; };
template <> struct normalized_of<char4> { typedef float4 type; };
template <> struct normalized_of<uchar4> { typedef float4 type; };
template <> struct normalized_of<short4> { typedef float4 type; };
template <> struct normalized_of<ushort4> { typedef float4 type; };

template <class T, enum cudaTextureReadMode Mode> struct fetch_of { typedef T type; };
template <class T> struct fetch_of<T, cudaReadModeNormalizedFloat> { typedef typename normalized_of<T>::type type; };

// Creates the reference's texture object over `res` and publishes its handle to the device.
template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t bind(const texture_ref<T, Dim, Mode> &ref, const struct cudaResourceDesc &res) {
    texture_ref<T, Dim, Mode> &t = const_cast<texture_ref<T, Dim, Mode> &>(ref);
    if (t.object != 0) {
        cudaDestroyTextureObject(t.object);
        t.object = 0;
    }
    struct cudaTextureDesc desc = {};
    for (int k = 0; k < 3; ++k) desc.addressMode[k] = t.addressMode[k];
    desc.filterMode = t.filterMode;
    desc.readMode = Mode;
    desc.normalizedCoords = t.normalized;
    desc.sRGB = t.sRGB;
    desc.maxAnisotropy = t.maxAnisotropy;
    desc.mipmapFilterMode = t.mipmapFilterMode;
    desc.mipmapLevelBias = t.mipmapLevelBias;
    desc.minMipmapLevelClamp = t.minMipmapLevelClamp;
    desc.maxMipmapLevelClamp = t.maxMipmapLevelClamp;
    desc.disableTrilinearOptimization = t.disableTrilinearOptimization;
    cudaError_t e = cudaCreateTextureObject(&t.object, &res, &desc, nullptr);
    if (e != cudaSuccess) {
        t.object = 0;
        cudaMemcpyToSymbol(ref, &t, sizeof t);  // unbound: a fetch reads through handle 0 and faults
        return e;
    }
    return cudaMemcpyToSymbol(ref, &t, sizeof t);
}

// The bytes a linear bind covers: CUDA's default `size` (UINT_MAX) meant "as much as the hardware
// takes", so a size past the device's 1-D linear texture limit is clamped to it.
static inline __host__ size_t linear_bytes(size_t size, const struct cudaChannelFormatDesc &d) {
    size_t elem = (size_t)(d.x + d.y + d.z + d.w) / 8;
    int dev = 0, max = 0;
    if (elem == 0 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&max, cudaDevAttrMaxTexture1DLinearWidth, dev) != cudaSuccess) {
        return size;
    }
    return size / elem > (size_t)max ? (size_t)max * elem : size;
}

}  // namespace reconverge

// ---- device properties CUDA 13 removed from cudaDeviceProp ------------------------------------------
// `cudaDeviceProp` names a struct that adds back CUDA 12's fields `clockRate`, `memoryClockRate`,
// `deviceOverlap`, `kernelExecTimeoutEnabled`, `computeMode`, `maxTexture1DLinear`,
// `singleToDoublePrecisionPerfRatio` and `cooperativeMultiDeviceLaunch` (Rodinia's helper_cuda.h reads
// `clockRate` and `computeMode`); `cudaGetDeviceProperties` on it fills them from the
// `cudaDeviceGetAttribute` attributes CUDA 13 kept for them, and `cooperativeMultiDeviceLaunch`, whose
// attribute it removed too, with 0.
struct reconverge_device_prop : public ::cudaDeviceProp {
    int clockRate, memoryClockRate, deviceOverlap, kernelExecTimeoutEnabled, computeMode, maxTexture1DLinear,
        singleToDoublePrecisionPerfRatio, cooperativeMultiDeviceLaunch;
};

static inline __host__ cudaError_t cudaGetDeviceProperties(struct reconverge_device_prop *prop, int device) {
    if (!prop) return cudaErrorInvalidValue;
    cudaError_t e = ::cudaGetDeviceProperties(static_cast<::cudaDeviceProp *>(prop), device);
    struct { int *field; enum cudaDeviceAttr attr; } fill[] = {
        {&prop->clockRate, cudaDevAttrClockRate},
        {&prop->memoryClockRate, cudaDevAttrMemoryClockRate},
        {&prop->deviceOverlap, cudaDevAttrGpuOverlap},
        {&prop->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout},
        {&prop->computeMode, cudaDevAttrComputeMode},
        {&prop->maxTexture1DLinear, cudaDevAttrMaxTexture1DLinearWidth},
        {&prop->singleToDoublePrecisionPerfRatio, cudaDevAttrSingleToDoublePrecisionPerfRatio},
    };
    for (auto &f : fill) {
        if (e == cudaSuccess) e = cudaDeviceGetAttribute(f.field, f.attr, device);
    }
    prop->cooperativeMultiDeviceLaunch = 0;
    return e;
}
#define cudaDeviceProp reconverge_device_prop

// Host code sets a reference's sampling state in the host copy of the __device__ variable, as it did with
// CUDA's textureReference; the binding calls publish it. nvcc warns about such writes (20092): not here.
#pragma nv_diag_suppress 20092
template <class T, int Dim = 1, enum cudaTextureReadMode Mode = cudaReadModeElementType>
using reconverge_texture = ::reconverge::texture_ref<T, Dim, Mode>;
// An unqualified name, so that a later header that names a parameter `texture` (GL/gl.h, which
// cuda_gl_interop.h includes) still parses: a parameter `reconverge_texture` with an attribute that nvcc
// warns "does not apply here" (#1835, silenced here: that is the only way this header meets it).
#pragma nv_diag_suppress 1835
#define texture __device__ reconverge_texture

// ---- binding ---------------------------------------------------------------------------------------
template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                   const void *devPtr, const struct cudaChannelFormatDesc &desc,
                                                   size_t size = UINT_MAX) {
    if (offset) *offset = 0;
    const_cast<::reconverge::texture_ref<T, Dim, Mode> &>(tex).channelDesc = desc;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = const_cast<void *>(devPtr);
    res.res.linear.desc = desc;
    res.res.linear.sizeInBytes = ::reconverge::linear_bytes(size, desc);
    return ::reconverge::bind(tex, res);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                   const void *devPtr, size_t size = UINT_MAX) {
    return cudaBindTexture(offset, tex, devPtr, cudaCreateChannelDesc<T>(), size);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture2D(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                     const void *devPtr, const struct cudaChannelFormatDesc &desc,
                                                     size_t width, size_t height, size_t pitch) {
    if (offset) *offset = 0;
    const_cast<::reconverge::texture_ref<T, Dim, Mode> &>(tex).channelDesc = desc;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = const_cast<void *>(devPtr);
    res.res.pitch2D.desc = desc;
    res.res.pitch2D.width = width;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch;
    return ::reconverge::bind(tex, res);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture2D(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                     const void *devPtr, size_t width, size_t height, size_t pitch) {
    return cudaBindTexture2D(offset, tex, devPtr, cudaCreateChannelDesc<T>(), width, height, pitch);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTextureToArray(const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                          cudaArray_const_t array,
                                                          const struct cudaChannelFormatDesc &desc) {
    const_cast<::reconverge::texture_ref<T, Dim, Mode> &>(tex).channelDesc = desc;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = const_cast<cudaArray_t>(array);
    return ::reconverge::bind(tex, res);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTextureToArray(const ::reconverge::texture_ref<T, Dim, Mode> &tex,
                                                          cudaArray_const_t array) {
    struct cudaChannelFormatDesc desc;
    cudaError_t e = cudaGetChannelDesc(&desc, array);
    return e != cudaSuccess ? e : cudaBindTextureToArray(tex, array, desc);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaUnbindTexture(const ::reconverge::texture_ref<T, Dim, Mode> &tex) {
    ::reconverge::texture_ref<T, Dim, Mode> &t = const_cast<::reconverge::texture_ref<T, Dim, Mode> &>(tex);
    if (t.object == 0) return cudaSuccess;
    cudaError_t e = cudaDestroyTextureObject(t.object);
    t.object = 0;
    return e;
}

// The C forms, which took a `const struct textureReference *` (the reference converted to its base class)
// and a `const struct cudaChannelFormatDesc *`: `cudaBindTexture(NULL, &tex, ptr, &desc, size)`.
template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> *tex,
                                                   const void *devPtr, const struct cudaChannelFormatDesc *desc,
                                                   size_t size = UINT_MAX) {
    if (!tex || !desc) return cudaErrorInvalidValue;
    return cudaBindTexture(offset, *tex, devPtr, *desc, size);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTexture2D(size_t *offset, const ::reconverge::texture_ref<T, Dim, Mode> *tex,
                                                     const void *devPtr, const struct cudaChannelFormatDesc *desc,
                                                     size_t width, size_t height, size_t pitch) {
    if (!tex || !desc) return cudaErrorInvalidValue;
    return cudaBindTexture2D(offset, *tex, devPtr, *desc, width, height, pitch);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaBindTextureToArray(const ::reconverge::texture_ref<T, Dim, Mode> *tex,
                                                          cudaArray_const_t array,
                                                          const struct cudaChannelFormatDesc *desc) {
    if (!tex || !desc) return cudaErrorInvalidValue;
    return cudaBindTextureToArray(*tex, array, *desc);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaUnbindTexture(const ::reconverge::texture_ref<T, Dim, Mode> *tex) {
    if (!tex) return cudaErrorInvalidValue;
    return cudaUnbindTexture(*tex);
}

// A bind never offsets the reference (the object starts at the pointer given), so the offset is 0.
template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaGetTextureAlignmentOffset(size_t *offset,
                                                                 const ::reconverge::texture_ref<T, Dim, Mode> &) {
    if (!offset) return cudaErrorInvalidValue;
    *offset = 0;
    return cudaSuccess;
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static inline __host__ cudaError_t cudaGetTextureAlignmentOffset(size_t *offset,
                                                                 const ::reconverge::texture_ref<T, Dim, Mode> *tex) {
    if (!tex) return cudaErrorInvalidValue;
    return cudaGetTextureAlignmentOffset(offset, *tex);
}

// ---- fetching --------------------------------------------------------------------------------------
template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex1Dfetch(const ::reconverge::texture_ref<T, Dim, Mode> &t, int x) {
    return tex1Dfetch<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex1D(const ::reconverge::texture_ref<T, Dim, Mode> &t, float x) {
    return tex1D<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex2D(const ::reconverge::texture_ref<T, Dim, Mode> &t, float x, float y) {
    return tex2D<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x, y);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex3D(const ::reconverge::texture_ref<T, Dim, Mode> &t, float x, float y, float z) {
    return tex3D<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x, y, z);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex1DLayered(const ::reconverge::texture_ref<T, Dim, Mode> &t, float x, int layer) {
    return tex1DLayered<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x, layer);
}

template <class T, int Dim, enum cudaTextureReadMode Mode>
static __device__ __forceinline__ typename ::reconverge::fetch_of<T, Mode>::type
tex2DLayered(const ::reconverge::texture_ref<T, Dim, Mode> &t, float x, float y, int layer) {
    return tex2DLayered<typename ::reconverge::fetch_of<T, Mode>::type>(t.object, x, y, layer);
}

#endif  // __cplusplus
#endif  // RECONVERGE_COMPAT_H
