// unsupported.cu -- a runtime call the shim does not implement.
//
// One ordinary kernel launch succeeds and is checked; then the program calls
// cudaLaunchCooperativeKernel. reconverge-cudart must report the call by name
// and exit with status 2 (it never returns to the program). On a real CUDA
// runtime the cooperative launch runs and the program prints PASS.
#include "common.h"

#define N 256

__global__ void iota(int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (i & 1) ? -i : i;
}

int main() {
    int h[N], *d;
    CHECK(cudaMalloc((void **)&d, N * sizeof(int)));
    iota<<<N / 64, 64>>>(d, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        if (h[i] != ((i & 1) ? -i : i)) { printf("out[%d] = %d\nFAIL\n", i, h[i]); return 1; }
    printf("kernel ok\n");
    fflush(stdout);  // the shim exits inside the next call

    int n = N;
    void *args[] = {&d, &n};
    CHECK(cudaLaunchCooperativeKernel((void *)iota, dim3(N / 64), dim3(64), args, 0, 0));
    printf("cudaLaunchCooperativeKernel returned\n");
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(d));
    printf("PASS\n");
    return 0;
}
