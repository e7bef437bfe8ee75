// cuda12.cu -- the calls whose structures or signatures CUDA 13 changed, built with CUDA 12's headers
// (CUDART_VERSION 12xxx) against libcudart.so.12.
//
// cudaGetDeviceProperties (cudaGetDeviceProperties_v2 in CUDA 12's headers) fills CUDA 12's layout:
// every field printed is checked against cudaDeviceGetAttribute, including the fields CUDA 13 removed
// (clockRate, memoryClockRate, deviceOverlap, kernelExecTimeoutEnabled, computeMode,
// maxTexture1DLinear, singleToDoublePrecisionPerfRatio, cooperativeMultiDeviceLaunch) and those that
// moved behind them. Structures CUDA 13 grew (cudaPointerAttributes, cudaResourceDesc) sit in front of
// guard bytes that must stay untouched, and a resource descriptor is read from CUDA 12's 64 bytes only.
// CUDA 12's cudaMemPrefetchAsync and cudaMemAdvise take a device number, cudaStreamGetCaptureInfo
// (_v2) and cudaGraphAddDependencies no edge data, and the runtime reports version 12.x.
#include <cstring>
#include "common.h"

#if CUDART_VERSION >= 13000
#error "build with CUDA 12's headers"
#endif

__global__ void scale(float *v, float by, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        v[i] = (i & 1) ? v[i] * by : v[i] + by;
    }
}

static int failures = 0;

static void expect(const char *what, long long got, long long want) {
    printf("%s %lld\n", what, got);
    if (got != want) {
        printf("  expected %lld\n", want);
        failures++;
    }
}

static int attribute(cudaDeviceAttr a) {
    int v = -1;
    CHECK(cudaDeviceGetAttribute(&v, a, 0));
    return v;
}

// Whether the `n` guard bytes at `g` still hold `fill`.
static bool intact(const unsigned char *g, size_t n, unsigned char fill) {
    for (size_t i = 0; i < n; i++) {
        if (g[i] != fill) {
            return false;
        }
    }
    return true;
}

static void properties() {
    struct {
        cudaDeviceProp p;
        unsigned char guard[64];
    } s;
    memset(&s, 0xab, sizeof s);
    CHECK(cudaGetDeviceProperties(&s.p, 0));
    const cudaDeviceProp &p = s.p;
    expect("sizeof(cudaDeviceProp)", sizeof(cudaDeviceProp), 1032);
    expect("guard after cudaDeviceProp intact", intact(s.guard, sizeof s.guard, 0xab), 1);
    expect("clockRate", p.clockRate, attribute(cudaDevAttrClockRate));
    expect("memoryClockRate", p.memoryClockRate, attribute(cudaDevAttrMemoryClockRate));
    expect("deviceOverlap", p.deviceOverlap, attribute(cudaDevAttrGpuOverlap));
    expect("kernelExecTimeoutEnabled", p.kernelExecTimeoutEnabled, attribute(cudaDevAttrKernelExecTimeout));
    expect("computeMode", p.computeMode, attribute(cudaDevAttrComputeMode));
    expect("maxTexture1DLinear", p.maxTexture1DLinear, attribute(cudaDevAttrMaxTexture1DLinearWidth));
    expect("singleToDoublePrecisionPerfRatio", p.singleToDoublePrecisionPerfRatio,
           attribute(cudaDevAttrSingleToDoublePrecisionPerfRatio));
    expect("cooperativeMultiDeviceLaunch", p.cooperativeMultiDeviceLaunch,
           attribute(cudaDevAttrCooperativeMultiDeviceLaunch));
    expect("multiProcessorCount", p.multiProcessorCount, attribute(cudaDevAttrMultiProcessorCount));
    expect("totalConstMem", (long long)p.totalConstMem, attribute(cudaDevAttrTotalConstantMemory));
    expect("major", p.major, attribute(cudaDevAttrComputeCapabilityMajor));
    expect("minor", p.minor, attribute(cudaDevAttrComputeCapabilityMinor));
    expect("warpSize", p.warpSize, attribute(cudaDevAttrWarpSize));
    expect("l2CacheSize", p.l2CacheSize, attribute(cudaDevAttrL2CacheSize));
    expect("maxThreadsPerMultiProcessor", p.maxThreadsPerMultiProcessor,
           attribute(cudaDevAttrMaxThreadsPerMultiProcessor));
    expect("regsPerMultiprocessor", p.regsPerMultiprocessor, attribute(cudaDevAttrMaxRegistersPerMultiprocessor));
    expect("managedMemory", p.managedMemory, attribute(cudaDevAttrManagedMemory));
    expect("sharedMemPerBlockOptin", (long long)p.sharedMemPerBlockOptin,
           attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin));
    expect("maxBlocksPerMultiProcessor", p.maxBlocksPerMultiProcessor,
           attribute(cudaDevAttrMaxBlocksPerMultiprocessor));
    expect("name starts with reconverge", strncmp(p.name, "reconverge", 10) == 0, 1);
}

static void pointers_and_textures() {
    const int n = 1000;
    float *d = NULL;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    struct {
        cudaPointerAttributes a;
        unsigned char guard[64];
    } pa;
    memset(&pa, 0xab, sizeof pa);
    CHECK(cudaPointerGetAttributes(&pa.a, d + 10));
    expect("sizeof(cudaPointerAttributes)", sizeof(cudaPointerAttributes), 24);
    expect("pointer type device", pa.a.type, cudaMemoryTypeDevice);
    expect("pointer devicePointer", pa.a.devicePointer == (void *)(d + 10), 1);
    expect("guard after cudaPointerAttributes intact", intact(pa.guard, sizeof pa.guard, 0xab), 1);

    // The bytes after CUDA 12's descriptor are garbage: CUDA 13's `flags` would lie there.
    struct {
        cudaResourceDesc r;
        unsigned char guard[96];
    } rd;
    memset(&rd, 0xab, sizeof rd);
    memset(&rd.r, 0, sizeof rd.r);
    rd.r.resType = cudaResourceTypeLinear;
    rd.r.res.linear.devPtr = d;
    rd.r.res.linear.desc = cudaCreateChannelDesc<float>();
    rd.r.res.linear.sizeInBytes = n * sizeof(float);
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    CHECK(cudaCreateTextureObject(&t, &rd.r, &td, NULL));
    expect("sizeof(cudaResourceDesc)", sizeof(cudaResourceDesc), 64);
    struct {
        cudaResourceDesc r;
        unsigned char guard[96];
    } back;
    memset(&back, 0xcd, sizeof back);
    CHECK(cudaGetTextureObjectResourceDesc(&back.r, t));
    expect("resource desc type linear", back.r.resType, cudaResourceTypeLinear);
    expect("resource desc sizeInBytes", (long long)back.r.res.linear.sizeInBytes, n * sizeof(float));
    expect("resource desc devPtr", back.r.res.linear.devPtr == (void *)d, 1);
    expect("guard after cudaResourceDesc intact", intact(back.guard, sizeof back.guard, 0xcd), 1);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(d));
}

static void managed_and_streams() {
    const int n = 4096;
    float *m = NULL;
    CHECK(cudaMallocManaged(&m, n * sizeof(float)));
    for (int i = 0; i < n; i++) {
        m[i] = (float)i;
    }
    // CUDA 12's signatures: a device number, not a cudaMemLocation.
    CHECK(cudaMemAdvise(m, n * sizeof(float), cudaMemAdviseSetReadMostly, 0));
    CHECK(cudaMemPrefetchAsync(m, n * sizeof(float), 0, 0));
    scale<<<(n + 255) / 256, 256>>>(m, 2.0f, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int wrong = 0;
    for (int i = 0; i < n; i++) {
        float want = (i & 1) ? (float)i * 2.0f : (float)i + 2.0f;
        wrong += m[i] != want;
    }
    expect("managed results wrong", wrong, 0);
    CHECK(cudaFree(m));

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
    unsigned long long id = 77;
    CHECK(cudaStreamGetCaptureInfo(s, &status, &id));
    expect("capture status of an idle stream", status, cudaStreamCaptureStatusNone);
    CHECK(cudaStreamDestroy(s));

    // CUDA 12's cudaGraphAddDependencies: no edge data.
    cudaGraph_t g;
    cudaGraphNode_t a, b;
    CHECK(cudaGraphCreate(&g, 0));
    CHECK(cudaGraphAddEmptyNode(&a, g, NULL, 0));
    CHECK(cudaGraphAddEmptyNode(&b, g, NULL, 0));
    size_t roots = 0;
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    expect("graph roots before the edge", (long long)roots, 2);
    CHECK(cudaGraphAddDependencies(g, &a, &b, 1));
    CHECK(cudaGraphGetRootNodes(g, NULL, &roots));
    expect("graph roots after the edge", (long long)roots, 1);
    CHECK(cudaGraphDestroy(g));
}

int main() {
    int runtime = 0;
    CHECK(cudaRuntimeGetVersion(&runtime));
    expect("runtime major", runtime / 1000, CUDART_VERSION / 1000);
    properties();
    pointers_and_textures();
    managed_and_streams();
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures == 0 ? 0 : 1;
}
