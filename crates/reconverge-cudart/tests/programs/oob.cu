// oob.cu -- an out-of-bounds store must surface as cudaErrorIllegalAddress.
//
// 64 threads write a 4 KiB buffer; one of them (thread 37, in a divergent
// branch) instead stores 2 MiB past the end. The launch itself succeeds; the
// error is reported by the next synchronizing call, cudaDeviceSynchronize.
// The program prints "got cudaErrorIllegalAddress" and PASS when that is the
// error it gets, and FAIL otherwise.
#include "common.h"

#define N 1024
#define THREADS 64
#define BAD_THREAD 37

__global__ void fill(int *p, int n, size_t oob_elems) {
    int t = threadIdx.x;
    if (t == BAD_THREAD) {
        p[n + oob_elems] = t;  // 2 MiB past the end of the allocation
    } else {
        for (int i = t; i < n; i += blockDim.x) p[i] = i;
    }
}

int main() {
    int *d;
    CHECK(cudaMalloc((void **)&d, N * sizeof(int)));
    fill<<<1, THREADS>>>(d, N, (2u << 20) / sizeof(int));
    CHECK(cudaGetLastError());  // the launch is valid; the fault comes later

    cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaErrorIllegalAddress) {
        printf("expected cudaErrorIllegalAddress (%d), got %s (%d)\nFAIL\n",
               (int)cudaErrorIllegalAddress, cudaGetErrorName(err), (int)err);
        return 1;
    }
    // The context is unusable after the fault: no cleanup calls.
    printf("got %s\n", cudaGetErrorName(err));
    printf("PASS\n");
    return 0;
}
