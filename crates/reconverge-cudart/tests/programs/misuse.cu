// misuse.cu -- runtime calls a program gets wrong must return CUDA's error code, never crash.
//
// Each EXPECT line makes one bad call and prints the code it returned; the
// program compares it with the code CUDA documents and ends with PASS when
// every call returned its code and the good work in between still worked
// (a refused launch runs nothing, a configuration error is not sticky).
// Calls marked [shim] would crash the program on NVIDIA's runtime (it
// dereferences a bad host pointer); reconverge's returns cudaErrorInvalidValue.
// Expected output (one line per call: the code, then the call):
//   1 cudaMemcpyToSymbol(sym, NULL, 16)
//   1 cudaMemcpyFromSymbol(NULL, sym, 16)
//   1 cudaMemcpyToSymbol(sym, short8, 16, 0, cudaMemcpyDefault)
//   1 cudaMemcpyFromSymbol(short8, sym, 16, 0, cudaMemcpyDefault)
//   1 cudaMemset(managed, 0, SIZE_MAX)
//   1 cudaMemcpy(host, managed, 256 << 10, cudaMemcpyDeviceToHost)
//   1 cudaMemcpy(freed, host, 4096, cudaMemcpyDefault)
//   1 cudaMemcpy(dev, host, SIZE_MAX, cudaMemcpyHostToDevice)
//   1 cudaMemcpy(dev, (void *)16, 16, cudaMemcpyHostToDevice)
//   1 cudaMemcpy((void *)literal, dev, 4, cudaMemcpyDeviceToHost)
//   21 cudaMemcpy(dev, host, 16, (cudaMemcpyKind)7)
//   9 launch(dim3(1), dim3(1025), 0, flag)
//   9 launch(dim3(1), dim3(1024, 2), 0, flag)
//   9 launch(dim3(1), dim3(1, 1, 128), 0, flag)
//   9 launch(dim3(1, 65536), dim3(1), 0, flag)
//   9 launch(dim3(1, 1, 65536), dim3(1), 0, flag)
//   1 launch(dim3(1), dim3(32), 1 << 20, flag)
//   1 launch(dim3(1), dim3(32), 1ull << 33, flag)
//   1 cudaFuncSetAttribute(mark, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20)
//   1 cudaLaunchKernel((void *)mark, dim3(1), dim3(32), NULL, 0, 0)
//   1 cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0)
//   1 cudaMalloc(NULL, 16)
//   1 cudaGetDeviceProperties(NULL, 0)
//   1 cudaMemGetInfo(NULL, NULL)
//   1 cudaGetSymbolAddress(NULL, sym)
//   1 cudaEventElapsedTime(NULL, ev, ev)
//   400 cudaEventRecord(ev, bogus)
//   400 cudaStreamSynchronize(bogus)
//   400 cudaStreamWaitEvent(0, (cudaEvent_t)bogus, 0)
//   400 cudaMemcpyAsync(dev, host, 16, cudaMemcpyHostToDevice, bogus)
//   400 cudaGetLastError()
//   flag 7
//   PASS
#include <cstdint>
#include <cstring>
#include "common.h"

__device__ int sym[4];

// Thread 0 writes `v` to `*flag`: whether a launch ran at all.
__global__ void mark(int *flag, int v) {
    if (threadIdx.x == 0) *flag = v;
}

static int failures = 0;

// Makes a call, prints its code and the call, and counts a code other than
// the expected one.
#define EXPECT(code, call)                                                    \
    do {                                                                      \
        cudaError_t got_ = (call);                                            \
        printf("%d %s\n", (int)got_, #call);                                  \
        if (got_ != (code)) {                                                 \
            fprintf(stderr, "expected %d (%s), got %d (%s): %s\n", (int)(code), \
                    cudaGetErrorName(code), (int)got_, cudaGetErrorName(got_), #call); \
            failures++;                                                       \
        }                                                                     \
    } while (0)

// A <<<>>> launch whose error is read back with cudaGetLastError.
static cudaError_t launch(dim3 grid, dim3 block, size_t shared, int *flag) {
    mark<<<grid, block, shared>>>(flag, 1);
    return cudaGetLastError();
}

int main() {
    static char host[256 << 10];
    static const char literal[] = "read-only";
    int *dev, *short8, *freed, *flag;
    void *managed;
    CHECK(cudaMalloc((void **)&dev, 4096));
    CHECK(cudaMalloc((void **)&short8, 8));
    CHECK(cudaMalloc((void **)&freed, 4096));
    CHECK(cudaFree(freed));
    CHECK(cudaMalloc((void **)&flag, sizeof(int)));
    CHECK(cudaMemset(flag, 0, sizeof(int)));
    CHECK(cudaMallocManaged(&managed, 4096));

    // Copies: NULL, short, overrunning, freed and bad host pointers.
    EXPECT(cudaErrorInvalidValue, cudaMemcpyToSymbol(sym, NULL, 16));
    EXPECT(cudaErrorInvalidValue, cudaMemcpyFromSymbol(NULL, sym, 16));
    EXPECT(cudaErrorInvalidValue, cudaMemcpyToSymbol(sym, short8, 16, 0, cudaMemcpyDefault));
    EXPECT(cudaErrorInvalidValue, cudaMemcpyFromSymbol(short8, sym, 16, 0, cudaMemcpyDefault));
    EXPECT(cudaErrorInvalidValue, cudaMemset(managed, 0, SIZE_MAX));
    EXPECT(cudaErrorInvalidValue, cudaMemcpy(host, managed, 256 << 10, cudaMemcpyDeviceToHost));
    EXPECT(cudaErrorInvalidValue, cudaMemcpy(freed, host, 4096, cudaMemcpyDefault));
    EXPECT(cudaErrorInvalidValue, cudaMemcpy(dev, host, SIZE_MAX, cudaMemcpyHostToDevice));
    EXPECT(cudaErrorInvalidValue, cudaMemcpy(dev, (void *)16, 16, cudaMemcpyHostToDevice));       // [shim]
    EXPECT(cudaErrorInvalidValue, cudaMemcpy((void *)literal, dev, 4, cudaMemcpyDeviceToHost)); // [shim]
    EXPECT(cudaErrorInvalidMemcpyDirection, cudaMemcpy(dev, host, 16, (cudaMemcpyKind)7));

    // Launches CUDA refuses: none may run (the flag stays 0).
    EXPECT(cudaErrorInvalidConfiguration, launch(dim3(1), dim3(1025), 0, flag));
    EXPECT(cudaErrorInvalidConfiguration, launch(dim3(1), dim3(1024, 2), 0, flag));
    EXPECT(cudaErrorInvalidConfiguration, launch(dim3(1), dim3(1, 1, 128), 0, flag));
    EXPECT(cudaErrorInvalidConfiguration, launch(dim3(1, 65536), dim3(1), 0, flag));
    EXPECT(cudaErrorInvalidConfiguration, launch(dim3(1, 1, 65536), dim3(1), 0, flag));
    EXPECT(cudaErrorInvalidValue, launch(dim3(1), dim3(32), 1 << 20, flag));
    EXPECT(cudaErrorInvalidValue, launch(dim3(1), dim3(32), 1ull << 33, flag));
    EXPECT(cudaErrorInvalidValue,
           cudaFuncSetAttribute(mark, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20));
    EXPECT(cudaErrorInvalidValue, cudaLaunchKernel((void *)mark, dim3(1), dim3(32), NULL, 0, 0)); // [shim]
    int ran = -1;
    CHECK(cudaMemcpy(&ran, flag, sizeof(int), cudaMemcpyDeviceToHost));
    if (ran != 0) {
        fprintf(stderr, "a refused launch ran (flag %d)\n", ran);
        failures++;
    }

    // Output parameters that are NULL.
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaEventRecord(ev, 0));
    EXPECT(cudaErrorInvalidValue, cudaDeviceGetAttribute(NULL, cudaDevAttrWarpSize, 0));
    EXPECT(cudaErrorInvalidValue, cudaMalloc(NULL, 16));
    EXPECT(cudaErrorInvalidValue, cudaGetDeviceProperties(NULL, 0));
    EXPECT(cudaErrorInvalidValue, cudaMemGetInfo(NULL, NULL));
    EXPECT(cudaErrorInvalidValue, cudaGetSymbolAddress(NULL, sym));
    EXPECT(cudaErrorInvalidValue, cudaEventElapsedTime(NULL, ev, ev));

    // Streams and events that do not exist.
    cudaStream_t bogus = (cudaStream_t)(uintptr_t)0x5eed0;
    EXPECT(cudaErrorInvalidResourceHandle, cudaEventRecord(ev, bogus));
    EXPECT(cudaErrorInvalidResourceHandle, cudaStreamSynchronize(bogus));
    EXPECT(cudaErrorInvalidResourceHandle, cudaStreamWaitEvent(0, (cudaEvent_t)bogus, 0));
    EXPECT(cudaErrorInvalidResourceHandle, cudaMemcpyAsync(dev, host, 16, cudaMemcpyHostToDevice, bogus));

    // None of this is sticky: once the last error is read (and so cleared), a good launch and copy work.
    EXPECT(cudaErrorInvalidResourceHandle, cudaGetLastError());
    CHECK(cudaGetLastError());
    mark<<<1, 32>>>(flag, 7);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(&ran, flag, sizeof(int), cudaMemcpyDeviceToHost));
    printf("flag %d\n", ran);
    if (ran != 7) failures++;
    CHECK(cudaFree(managed));
    CHECK(cudaFree(dev));
    CHECK(cudaFree(short8));
    CHECK(cudaFree(flag));
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures == 0 ? 0 : 1;
}
