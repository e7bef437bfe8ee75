// texture.cu -- CUDA arrays, texture objects and surface objects.
//
// Part 1: tex1Dfetch on linear memory: float4, int and uchar4 elements; indices
//         past either end read zeros. The object's resource and texture
//         descriptors read back.
// Part 2: tex2D<float> on pitched memory (point sampling, clamp).
// Part 3: tex2D<float> on a 2-D array filled by cudaMemcpy2DToArray: point and
//         linear filtering, unnormalized coordinates with clamp and border,
//         normalized coordinates with wrap and mirror.
// Part 4: cudaReadModeNormalizedFloat on an unsigned char array, point and
//         linear.
// Part 5: tex3D on a 3-D array filled by cudaMemcpy3D; cudaArrayGetInfo,
//         cudaGetChannelDesc, cudaMemGetInfo counting the array.
// Part 6: tex2DLayered on a layered array.
// Part 7: tex2Dgather (tld4) on a float4 array, components 0 and 2.
// Part 8: surf2Dread/surf2Dwrite on a surface object (a kernel doubles every
//         element), with the Async 2-D array copies on a stream.
// Part 9: copies between arrays (cudaMemcpy2DArrayToArray, the deprecated
//         cudaMemcpyToArray, cudaMemcpyFromArray, cudaMemcpyArrayToArray) and
//         cudaMemcpy3D from an array at a position.
// Part 10: misuse answered with error codes (one line each: the code, the call).
//
// Every fetch is compared exactly with the host's evaluation of the rules of
// the CUDA Programming Guide (appendix "Texture Fetching"). Linear filtering
// follows reconverge's reading of its 9-bit weights with 8 fractional bits:
// alpha rounded to the nearest multiple of 1/256, the weighted sum in double,
// rounded once to float (crates/reconverge-semantics/src/texture.rs); a GPU's
// filtering unit may round the last bit of a filtered value differently.
#include <cmath>
#include <cstring>
#include "common.h"

// cudaMemcpyToArray and its kin are deprecated, and still exported. (nvcc
// includes cuda_runtime.h before this file, so CUDA_ENABLE_DEPRECATED would
// come too late.)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#define NS 64 // coordinates per 2-D or 3-D sampling launch
#define W 16
#define H 8

static int errors = 0;

// ---------------------------------------------------------------- device code

__global__ void fetch_f4(cudaTextureObject_t t, float4 *out, int n, int first) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float4>(t, first + i);
}

__global__ void fetch_int(cudaTextureObject_t t, int *out, int n, int first) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<int>(t, first + i);
}

__global__ void fetch_uc4(cudaTextureObject_t t, uchar4 *out, int n, int first) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<uchar4>(t, first + i);
}

__global__ void sample2d(cudaTextureObject_t t, const float4 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float>(t, c[i].x, c[i].y);
}

__global__ void sample3d(cudaTextureObject_t t, const float4 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, c[i].x, c[i].y, c[i].z);
}

__global__ void sample_layered(cudaTextureObject_t t, const float4 *c, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, c[i].x, c[i].y, (int)c[i].w);
}

template <int COMP>
__global__ void gather(cudaTextureObject_t t, const float4 *c, float4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2Dgather<float4>(t, c[i].x, c[i].y, COMP);
}

__global__ void double_surface(cudaSurfaceObject_t s, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float v;
    surf2Dread(&v, s, x * (int)sizeof(float), y);
    surf2Dwrite(2.0f * v, s, x * (int)sizeof(float), y);
}

// ------------------------------------------------- the host's texture unit

// A host copy of a texture: layers of d slices of h rows of w elements of c
// float channels (integer texels already converted as the read mode says).
struct Image {
    const float *v;
    int w, h, d, c;
};

// How a texture samples (one address mode for every dimension).
struct Mode {
    int linear, norm, addr;
    float border;
};

// A float coordinate after the normalized-coordinate address mode, in texels.
static float scaled(float x, int n, const Mode &m) {
    if (!m.norm) return x;
    if (m.addr == cudaAddressModeWrap) {
        x = x - floorf(x);
    } else if (m.addr == cudaAddressModeMirror) {
        float f = floorf(x), frac = x - f;
        x = fmodf(f, 2.0f) == 0.0f ? frac : 1.0f - frac;
    }
    return x * (float)n;
}

// A texel index under the address mode; -1 for a border texel. Wrap and
// mirror act as clamp with unnormalized coordinates.
static long index_of(long i, long n, const Mode &m) {
    int addr = m.addr;
    if (!m.norm && addr != cudaAddressModeBorder) addr = cudaAddressModeClamp;
    switch (addr) {
    case cudaAddressModeClamp: return i < 0 ? 0 : i >= n ? n - 1 : i;
    case cudaAddressModeBorder: return i < 0 || i >= n ? -1 : i;
    case cudaAddressModeWrap: return ((i % n) + n) % n;
    default: {
        long p = ((i % (2 * n)) + 2 * n) % (2 * n);
        return p < n ? p : 2 * n - 1 - p;
    }
    }
}

// Channel ch of the texel at signed indices idx (the first dims of them).
static float texel(const Image &im, const Mode &m, int dims, const long *idx, int layer, int ch) {
    long ext[3] = {im.w, im.h, im.d}, at[3] = {0, 0, 0};
    for (int k = 0; k < dims; k++) {
        at[k] = index_of(idx[k], ext[k], m);
        if (at[k] < 0) return ch == 0 ? m.border : 0.0f;
    }
    return im.v[(((layer * im.d + at[2]) * im.h + at[1]) * im.w + at[0]) * im.c + ch];
}

// The linear filter's first texel and its weight along one dimension.
static long footprint(float x, int n, const Mode &m, double *alpha) {
    float xb = scaled(x, n, m) - 0.5f;
    float fl = floorf(xb);
    float frac = xb - fl;
    *alpha = (double)roundf(frac * 256.0f) / 256.0;
    return (long)fl;
}

// What texNd<float> returns at x (channel 0).
static float sample(const Image &im, const Mode &m, int dims, const float *x, int layer) {
    int ext[3] = {im.w, im.h, im.d};
    long idx[3] = {0, 0, 0}, lo[3] = {0, 0, 0};
    double a[3] = {0, 0, 0};
    if (!m.linear) {
        for (int k = 0; k < dims; k++) idx[k] = (long)floorf(scaled(x[k], ext[k], m));
        return texel(im, m, dims, idx, layer, 0);
    }
    for (int k = 0; k < dims; k++) lo[k] = footprint(x[k], ext[k], m, &a[k]);
    double acc = 0.0;
    for (int corner = 0; corner < (1 << dims); corner++) {
        double w = 1.0;
        for (int k = 0; k < dims; k++) {
            int hi = corner >> k & 1;
            idx[k] = lo[k] + hi;
            w *= hi ? a[k] : 1.0 - a[k];
        }
        acc += w * (double)texel(im, m, dims, idx, layer, 0);
    }
    return (float)acc;
}

// ------------------------------------------------------------------ helpers

static float4 *d_coords;
static float *d_out;

// Counts and prints (the first three) results that differ from the host's.
static void compare(const char *what, const float *got, const float *want, int n) {
    int bad = 0;
    for (int i = 0; i < n; i++)
        if (got[i] != want[i] && bad++ < 3) printf("%s: result %d is %.9g, expected %.9g\n", what, i, got[i], want[i]);
    errors += bad;
}

static cudaResourceDesc array_resource(cudaArray_t a) {
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    return r;
}

static cudaTextureObject_t make_texture(const cudaResourceDesc &r, const Mode &m,
                                        cudaTextureReadMode read = cudaReadModeElementType) {
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    for (int k = 0; k < 3; k++) td.addressMode[k] = (cudaTextureAddressMode)m.addr;
    td.filterMode = m.linear ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = read;
    td.normalizedCoords = m.norm;
    td.borderColor[0] = m.border;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &r, &td, NULL));
    return t;
}

// Which texture function a sampling launch calls.
enum Fetch { FETCH_2D, FETCH_3D, FETCH_LAYERED };

// Samples t at the n coordinates c and compares with the host's results.
static void check_samples(const char *what, Fetch fetch, cudaTextureObject_t t, const Image &im, const Mode &m,
                          const float4 *c, int n) {
    float got[NS], want[NS];
    CHECK(cudaMemcpy(d_coords, c, n * sizeof(float4), cudaMemcpyHostToDevice));
    if (fetch == FETCH_2D) sample2d<<<(n + 31) / 32, 32>>>(t, d_coords, d_out, n);
    if (fetch == FETCH_3D) sample3d<<<(n + 31) / 32, 32>>>(t, d_coords, d_out, n);
    if (fetch == FETCH_LAYERED) sample_layered<<<(n + 31) / 32, 32>>>(t, d_coords, d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got, d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        float x[3] = {c[i].x, c[i].y, c[i].z};
        want[i] = sample(im, m, fetch == FETCH_3D ? 3 : 2, x, (int)c[i].w);
    }
    compare(what, got, want, n);
}

// n coordinates: six fixed ones times `scale` (centres, edges, a weight of
// exactly 0.5/256 past a multiple of 1/256), then uniform in [lo, hi) per
// dimension.
static void coordinates(float4 *c, int n, const float *lo, const float *hi, float scale, unsigned *seed) {
    const float fixed[6][3] = {{0, 0, 0},           {0.5f, 0.5f, 0.5f},         {-0.5f, -0.5f, -0.5f},
                               {3.25f, 2.75f, 1.5f}, {8.501953125f, 2.5f, 1.0f}, {15.5f, 7.5f, 3.5f}};
    for (int i = 0; i < n; i++) {
        float v[3];
        for (int k = 0; k < 3; k++) v[k] = i < 6 ? fixed[i][k] * scale : lo[k] + (hi[k] - lo[k]) * lcg_float(seed);
        c[i] = make_float4(v[0], v[1], v[2], 0.0f);
    }
}

// ------------------------------------------------------------------- parts

static void part1_linear(unsigned *seed) {
    const int N = 40;
    float4 h4[N];
    int hi[N];
    uchar4 hu[N];
    for (int i = 0; i < N; i++) {
        h4[i] = make_float4(i, -2.5f * i, lcg_float(seed), 1000.0f + i);
        hi[i] = (int)(lcg_next(seed) % 2001) - 1000;
        hu[i] = make_uchar4(i, 2 * i, 255 - i, lcg_next(seed) & 255);
    }
    float4 *d4;
    int *di;
    uchar4 *du;
    CHECK(cudaMalloc((void **)&d4, sizeof h4));
    CHECK(cudaMalloc((void **)&di, sizeof hi));
    CHECK(cudaMalloc((void **)&du, sizeof hu));
    CHECK(cudaMemcpy(d4, h4, sizeof h4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(di, hi, sizeof hi, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(du, hu, sizeof hu, cudaMemcpyHostToDevice));
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypeLinear;
    r.res.linear.devPtr = d4;
    r.res.linear.desc = cudaCreateChannelDesc<float4>();
    r.res.linear.sizeInBytes = sizeof h4;
    Mode point = {0, 0, cudaAddressModeClamp, 0};
    cudaTextureObject_t t4 = make_texture(r, point);
    r.res.linear.devPtr = di, r.res.linear.desc = cudaCreateChannelDesc<int>(), r.res.linear.sizeInBytes = sizeof hi;
    cudaTextureObject_t ti = make_texture(r, point);
    r.res.linear.devPtr = du, r.res.linear.desc = cudaCreateChannelDesc<uchar4>(), r.res.linear.sizeInBytes = sizeof hu;
    cudaTextureObject_t tu = make_texture(r, point);

    // Indices -4 .. N+3: the first and last four read zeros.
    const int M = N + 8;
    float4 g4[M], *o4;
    int gi[M], *oi;
    uchar4 gu[M], *ou;
    CHECK(cudaMalloc((void **)&o4, sizeof g4));
    CHECK(cudaMalloc((void **)&oi, sizeof gi));
    CHECK(cudaMalloc((void **)&ou, sizeof gu));
    fetch_f4<<<2, 32>>>(t4, o4, M, -4);
    fetch_int<<<2, 32>>>(ti, oi, M, -4);
    fetch_uc4<<<2, 32>>>(tu, ou, M, -4);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(g4, o4, sizeof g4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(gi, oi, sizeof gi, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(gu, ou, sizeof gu, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int k = 0; k < M; k++) {
        int i = k - 4;
        bool in = i >= 0 && i < N;
        float4 w4 = in ? h4[i] : make_float4(0, 0, 0, 0);
        int wi = in ? hi[i] : 0;
        uchar4 wu = in ? hu[i] : make_uchar4(0, 0, 0, 0);
        bool ok = g4[k].x == w4.x && g4[k].y == w4.y && g4[k].z == w4.z && g4[k].w == w4.w && gi[k] == wi &&
                  gu[k].x == wu.x && gu[k].y == wu.y && gu[k].z == wu.z && gu[k].w == wu.w;
        if (!ok && bad++ < 3) printf("tex1Dfetch index %d: (%g %g %g %g) %d (%d %d %d %d)\n", i, g4[k].x, g4[k].y,
                                     g4[k].z, g4[k].w, gi[k], gu[k].x, gu[k].y, gu[k].z, gu[k].w);
    }
    errors += bad;

    cudaResourceDesc back;
    cudaTextureDesc tback;
    CHECK(cudaGetTextureObjectResourceDesc(&back, tu));
    CHECK(cudaGetTextureObjectTextureDesc(&tback, tu));
    bool same = back.resType == cudaResourceTypeLinear && back.res.linear.devPtr == du &&
                back.res.linear.sizeInBytes == sizeof hu && back.res.linear.desc.w == 8 &&
                tback.addressMode[1] == cudaAddressModeClamp && tback.filterMode == cudaFilterModePoint;
    printf("linear: %d fetches, descriptors read back: %s\n", 3 * M, same ? "yes" : "no");
    if (!same) errors++;
    CHECK(cudaDestroyTextureObject(t4));
    CHECK(cudaDestroyTextureObject(ti));
    CHECK(cudaDestroyTextureObject(tu));
    CHECK(cudaFree(d4));
    CHECK(cudaFree(di));
    CHECK(cudaFree(du));
    CHECK(cudaFree(o4));
    CHECK(cudaFree(oi));
    CHECK(cudaFree(ou));
}

// Parts 2 and 3: one W x H image in pitched memory and in a 2-D array.
static cudaArray_t part23_2d(const float *img, unsigned *seed) {
    Image im = {img, W, H, 1, 1};
    float lo[3] = {-3, -3, 0}, hi[3] = {W + 3, H + 3, 0}, nlo[3] = {-1.5f, -1.5f, 0}, nhi[3] = {2.5f, 2.5f, 0};
    float4 c[NS], cn[NS];
    coordinates(c, NS, lo, hi, 1.0f, seed);
    coordinates(cn, NS, nlo, nhi, 1.0f / 16, seed);

    float *d_img;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&d_img, &pitch, W * sizeof(float), H));
    CHECK(cudaMemcpy2D(d_img, pitch, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    cudaResourceDesc r;
    memset(&r, 0, sizeof r);
    r.resType = cudaResourceTypePitch2D;
    r.res.pitch2D.devPtr = d_img;
    r.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    r.res.pitch2D.width = W;
    r.res.pitch2D.height = H;
    r.res.pitch2D.pitchInBytes = pitch;
    Mode clamp = {0, 0, cudaAddressModeClamp, 0};
    cudaTextureObject_t t = make_texture(r, clamp);
    check_samples("pitch2D point clamp", FETCH_2D, t, im, clamp, c, NS);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(d_img));

    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&a, &f, W, H));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    const struct {
        const char *what;
        Mode m;
    } modes[] = {
        {"array point clamp", {0, 0, cudaAddressModeClamp, 0}},
        {"array point border", {0, 0, cudaAddressModeBorder, -7.25f}},
        {"array linear clamp", {1, 0, cudaAddressModeClamp, 0}},
        {"array linear border", {1, 0, cudaAddressModeBorder, 100.0f}},
        {"array point normalized wrap", {0, 1, cudaAddressModeWrap, 0}},
        {"array linear normalized wrap", {1, 1, cudaAddressModeWrap, 0}},
        {"array point normalized mirror", {0, 1, cudaAddressModeMirror, 0}},
        {"array linear normalized mirror", {1, 1, cudaAddressModeMirror, 0}},
    };
    cudaResourceDesc ar = array_resource(a);
    for (const auto &mode : modes) {
        cudaTextureObject_t tm = make_texture(ar, mode.m);
        check_samples(mode.what, FETCH_2D, tm, im, mode.m, mode.m.norm ? cn : c, NS);
        CHECK(cudaDestroyTextureObject(tm));
    }
    printf("2-D: %d samples in 9 modes\n", 9 * NS);
    return a;
}

static void part4_normalized_float(unsigned *seed) {
    const int w = 8, h = 4;
    unsigned char u[h][w];
    float v[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            u[y][x] = (unsigned char)(x == 0 ? 255 * (y & 1) : lcg_next(seed) & 255);
            v[y][x] = (float)((double)u[y][x] / 255.0);
        }
    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<unsigned char>();
    CHECK(cudaMallocArray(&a, &f, w, h));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, u, w, w, h, cudaMemcpyHostToDevice));
    Image im = {&v[0][0], w, h, 1, 1};
    float lo[3] = {-1, -1, 0}, hi[3] = {w + 1, h + 1, 0};
    float4 c[NS];
    coordinates(c, NS, lo, hi, 1.0f, seed);
    cudaResourceDesc r = array_resource(a);
    for (int linear = 0; linear < 2; linear++) {
        Mode m = {linear, 0, cudaAddressModeClamp, 0};
        cudaTextureObject_t t = make_texture(r, m, cudaReadModeNormalizedFloat);
        check_samples(linear ? "uchar normalized float linear" : "uchar normalized float point", FETCH_2D, t, im, m,
                      c, NS);
        CHECK(cudaDestroyTextureObject(t));
    }
    printf("normalized float: %d samples\n", 2 * NS);
    CHECK(cudaFreeArray(a));
}

static void part5_3d(unsigned *seed) {
    const int w = 6, h = 5, d = 4;
    float v[d][h][w];
    for (int z = 0; z < d; z++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) v[z][y][x] = (float)(x + 10 * y + 100 * z) + lcg_float(seed);
    size_t free0, free1, total;
    CHECK(cudaMemGetInfo(&free0, &total));
    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    CHECK(cudaMalloc3DArray(&a, &f, make_cudaExtent(w, h, d)));
    CHECK(cudaMemGetInfo(&free1, &total));
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(v, w * sizeof(float), w, h);
    p.dstArray = a;
    p.extent = make_cudaExtent(w, h, d);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));

    cudaChannelFormatDesc got;
    cudaExtent e;
    unsigned flags = 99;
    CHECK(cudaGetChannelDesc(&got, a));
    CHECK(cudaArrayGetInfo(NULL, &e, &flags, a));
    bool info = got.x == 32 && got.y == 0 && got.f == cudaChannelFormatKindFloat && e.width == w && e.height == h &&
                e.depth == d && flags == 0 && free0 - free1 >= sizeof v;
    printf("3-D array info and memory counted: %s\n", info ? "yes" : "no");
    if (!info) errors++;

    Image im = {&v[0][0][0], w, h, d, 1};
    float lo[3] = {-1, -1, -1}, hi[3] = {w + 1, h + 1, d + 1};
    float4 c[NS];
    coordinates(c, NS, lo, hi, 1.0f, seed);
    cudaResourceDesc r = array_resource(a);
    for (int linear = 0; linear < 2; linear++) {
        Mode m = {linear, 0, cudaAddressModeClamp, 0};
        cudaTextureObject_t t = make_texture(r, m);
        check_samples(linear ? "tex3D linear" : "tex3D point", FETCH_3D, t, im, m, c, NS);
        CHECK(cudaDestroyTextureObject(t));
    }
    printf("3-D: %d samples\n", 2 * NS);
    CHECK(cudaFreeArray(a));
}

static void part6_layered(unsigned *seed) {
    const int w = 8, h = 4, layers = 3;
    float v[layers][h][w];
    for (int l = 0; l < layers; l++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) v[l][y][x] = (float)(1000 * l + 10 * y + x);
    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    CHECK(cudaMalloc3DArray(&a, &f, make_cudaExtent(w, h, layers), cudaArrayLayered));
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(v, w * sizeof(float), w, h);
    p.dstArray = a;
    p.extent = make_cudaExtent(w, h, layers);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    Image im = {&v[0][0][0], w, h, 1, 1};
    float lo[3] = {-1, -1, 0}, hi[3] = {w + 1, h + 1, 0};
    float4 c[NS];
    coordinates(c, NS, lo, hi, 1.0f, seed);
    for (int i = 0; i < NS; i++) c[i].w = (float)(i % layers);
    cudaResourceDesc r = array_resource(a);
    for (int linear = 0; linear < 2; linear++) {
        Mode m = {linear, 0, cudaAddressModeBorder, -1.0f};
        cudaTextureObject_t t = make_texture(r, m);
        check_samples(linear ? "tex2DLayered linear" : "tex2DLayered point", FETCH_LAYERED, t, im, m, c, NS);
        CHECK(cudaDestroyTextureObject(t));
    }
    printf("layered: %d samples\n", 2 * NS);
    CHECK(cudaFreeArray(a));
}

static void part7_gather(unsigned *seed) {
    const int w = 8, h = 8;
    float4 v[h][w];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) v[y][x] = make_float4(x + 10 * y, -x, 0.5f * y, 1000 + x);
    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float4>();
    CHECK(cudaMallocArray(&a, &f, w, h, cudaArrayTextureGather));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, v, w * sizeof(float4), w * sizeof(float4), h, cudaMemcpyHostToDevice));
    Mode m = {0, 0, cudaAddressModeClamp, 0};
    cudaTextureObject_t t = make_texture(array_resource(a), m);
    float lo[3] = {-1, -1, 0}, hi[3] = {w + 1, h + 1, 0};
    float4 c[NS], got[NS], *d_got;
    coordinates(c, NS, lo, hi, 1.0f, seed);
    CHECK(cudaMalloc((void **)&d_got, sizeof got));
    CHECK(cudaMemcpy(d_coords, c, sizeof c, cudaMemcpyHostToDevice));
    Image im = {&v[0][0].x, w, h, 1, 4};
    for (int comp = 0; comp <= 2; comp += 2) {
        if (comp == 0) gather<0><<<NS / 32, 32>>>(t, d_coords, d_got, NS);
        else gather<2><<<NS / 32, 32>>>(t, d_coords, d_got, NS);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(got, d_got, sizeof got, cudaMemcpyDeviceToHost));
        float g[4 * NS], want[4 * NS];
        for (int i = 0; i < NS; i++) {
            double alpha;
            long lo_x = footprint(c[i].x, w, m, &alpha), lo_y = footprint(c[i].y, h, m, &alpha);
            const long corner[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
            for (int k = 0; k < 4; k++) {
                long idx[2] = {lo_x + corner[k][0], lo_y + corner[k][1]};
                long at[3] = {index_of(idx[0], w, m), index_of(idx[1], h, m), 0};
                want[4 * i + k] = im.v[(at[1] * w + at[0]) * 4 + comp];
            }
            memcpy(&g[4 * i], &got[i], sizeof(float4));
        }
        compare(comp ? "tex2Dgather component 2" : "tex2Dgather component 0", g, want, 4 * NS);
    }
    printf("gather: %d samples\n", 2 * NS);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFree(d_got));
}

static void part8_surface(const float *img) {
    cudaArray_t a;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&a, &f, W, H, cudaArraySurfaceLoadStore));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpy2DToArrayAsync(a, 0, 0, img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice, s));
    cudaResourceDesc r = array_resource(a), back;
    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &r));
    CHECK(cudaGetSurfaceObjectResourceDesc(&back, surf));
    double_surface<<<dim3(1, 2), dim3(W, 4), 0, s>>>(surf, W, H);
    CHECK(cudaGetLastError());
    float out[H][W];
    CHECK(cudaMemcpy2DFromArrayAsync(out, W * sizeof(float), a, 0, 0, W * sizeof(float), H, cudaMemcpyDeviceToHost,
                                     s));
    CHECK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        if (out[i / W][i % W] != 2.0f * img[i] && bad++ < 3) printf("surface %d: %g\n", i, out[i / W][i % W]);
    errors += bad;
    bool same = back.resType == cudaResourceTypeArray && back.res.array.array == a;
    printf("surface: %d elements doubled, resource read back: %s\n", W * H - bad, same ? "yes" : "no");
    if (!same) errors++;
    CHECK(cudaDestroySurfaceObject(surf));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeArray(a));
}

// The image array a (W x H floats holding img) copied around.
static void part9_copies(cudaArray_t a, const float *img) {
    cudaArray_t b, c;
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
    CHECK(cudaMallocArray(&b, &f, W, H));
    CHECK(cudaMallocArray(&c, &f, W, H));
    float zero[W * H] = {0}, out[W * H], want[W * H];
    CHECK(cudaMemcpyToArray(b, 0, 0, zero, sizeof zero, cudaMemcpyHostToDevice));
    // A 5 x 3 box from (x 2, y 1) of a to (x 9, y 4) of b.
    CHECK(cudaMemcpy2DArrayToArray(b, 9 * sizeof(float), 4, a, 2 * sizeof(float), 1, 5 * sizeof(float), 3,
                                   cudaMemcpyDeviceToDevice));
    // All of b into c, then c's rows 2.. from the middle of row 2 back to the host.
    CHECK(cudaMemcpyArrayToArray(c, 0, 0, b, 0, 0, sizeof zero, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpyFromArray(out, c, 3 * sizeof(float), 2, (W * H - 2 * W - 3) * sizeof(float),
                              cudaMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++) {
        int x = i % W, y = i / W;
        want[i] = x >= 9 && x < 14 && y >= 4 && y < 7 ? img[(y - 3) * W + x - 7] : 0.0f;
    }
    compare("array to array copies", out, want + 2 * W + 3, W * H - 2 * W - 3);
    // A 3 x 2 x 1 box of a from element (x 4, y 5) to the host, through cudaMemcpy3D.
    float box[2][3];
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcArray = a;
    p.srcPos = make_cudaPos(4, 5, 0);
    p.dstPtr = make_cudaPitchedPtr(box, 3 * sizeof(float), 3, 2);
    p.extent = make_cudaExtent(3, 2, 1);
    p.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p));
    for (int i = 0; i < 6; i++) want[i] = img[(5 + i / 3) * W + 4 + i % 3];
    compare("cudaMemcpy3D from an array", &box[0][0], want, 6);
    printf("copies between arrays: checked\n");
    CHECK(cudaFreeArray(b));
    CHECK(cudaFreeArray(c));
}

#define EXPECT(code, call)                                                                   \
    do {                                                                                     \
        cudaError_t got_ = (call);                                                           \
        printf("%d %s\n", (int)got_, #call);                                                 \
        if (got_ != (code)) {                                                                \
            printf("  expected %d (%s), got %s\n", (int)(code), #code, cudaGetErrorName(got_)); \
            errors++;                                                                        \
        }                                                                                    \
        cudaGetLastError();                                                                  \
    } while (0)

static void part10_misuse() {
    cudaChannelFormatDesc f = cudaCreateChannelDesc<float>(), i32 = cudaCreateChannelDesc<int>();
    cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
    cudaArray_t a, ints, gone, spare;
    CHECK(cudaMallocArray(&a, &f, 8, 8));
    CHECK(cudaMallocArray(&ints, &i32, 8, 8));
    CHECK(cudaMallocArray(&gone, &f, 8, 8));
    CHECK(cudaFreeArray(gone));
    cudaResourceDesc r = array_resource(a), ri = array_resource(ints), rg = array_resource(gone);
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    cudaTextureObject_t t;
    cudaSurfaceObject_t s;
    float host[64] = {0};
    EXPECT(cudaErrorInvalidValue, cudaCreateTextureObject(&t, NULL, &td, NULL));
    EXPECT(cudaErrorInvalidValue, cudaCreateTextureObject(NULL, &r, &td, NULL));
    CHECK(cudaCreateTextureObject(&t, &r, &td, NULL));
    CHECK(cudaDestroyTextureObject(t));
    EXPECT(cudaErrorInvalidValue, cudaDestroyTextureObject(t));
    EXPECT(cudaErrorInvalidChannelDescriptor, cudaMallocArray(&spare, &three, 8, 8));
    td.filterMode = cudaFilterModeLinear;
    EXPECT(cudaErrorInvalidFilterSetting, cudaCreateTextureObject(&t, &ri, &td, NULL));
    EXPECT(cudaErrorInvalidResourceHandle, cudaCreateTextureObject(&t, &rg, &td, NULL));
    EXPECT(cudaErrorInvalidValue, cudaCreateSurfaceObject(&s, &r));
    EXPECT(cudaErrorInvalidResourceHandle, cudaFreeArray(gone));
    EXPECT(cudaErrorInvalidValue, cudaMemcpy2DToArray(a, 4, 0, host, 32, 32, 8, cudaMemcpyHostToDevice));
    EXPECT(cudaErrorInvalidValue, cudaMemcpyToArray(a, 0, 4, host, sizeof host, cudaMemcpyHostToDevice));
    EXPECT(cudaErrorInvalidValue, cudaMallocArray(&spare, &f, 8, 8, cudaArrayLayered));
    EXPECT(cudaErrorNotSupported, cudaMalloc3DArray(&spare, &f, make_cudaExtent(8, 8, 6), cudaArrayCubemap));
    EXPECT(cudaErrorInvalidValue, cudaFree(a));
    CHECK(cudaFreeArray(a));
    CHECK(cudaFreeArray(ints));
}

int main() {
    unsigned seed = 11;
    float img[W * H];
    for (int i = 0; i < W * H; i++) img[i] = (float)(lcg_next(&seed) % 1000) / 8.0f - 40.0f;
    CHECK(cudaMalloc((void **)&d_coords, NS * sizeof(float4)));
    CHECK(cudaMalloc((void **)&d_out, NS * sizeof(float)));

    part1_linear(&seed);
    cudaArray_t a = part23_2d(img, &seed);
    part4_normalized_float(&seed);
    part5_3d(&seed);
    part6_layered(&seed);
    part7_gather(&seed);
    part8_surface(img);
    part9_copies(a, img);
    part10_misuse();

    CHECK(cudaFreeArray(a));
    CHECK(cudaFree(d_coords));
    CHECK(cudaFree(d_out));
    if (errors) {
        printf("%d errors\nFAIL\n", errors);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
