// legacy_units_b.cu -- the second translation unit of legacy_units.cu: a __device__ variable, a
// __device__ table, a __constant__ and a texture reference of its own, and a kernel that reads them.
#include "common.h"

__device__ int scale_b;
__device__ float table_b[5];
__constant__ int offset_b;
texture<float, 1, cudaReadModeElementType> tex_b;

__global__ void kernel_b(float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch(tex_b, i) * scale_b - table_b[(i + offset_b) % 5];
}

// The device address of this unit's variable.
void *address_b(void) {
    void *p = 0;
    CHECK(cudaGetSymbolAddress(&p, scale_b));
    return p;
}

// out[i] = in[i] * scale_b - (i % 5), scale_b set by the caller (by name).
void run_b(const float *d_in, float *d_out, int n) {
    float table[5] = {4.0f, 0.0f, 1.0f, 2.0f, 3.0f};
    int one = 1;
    CHECK(cudaMemcpyToSymbol(table_b, table, sizeof table));
    CHECK(cudaMemcpyToSymbol(offset_b, &one, sizeof one));
    CHECK(cudaBindTexture(0, tex_b, d_in, n * sizeof(float)));
    kernel_b<<<(n + 63) / 64, 64>>>(d_out, n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaUnbindTexture(tex_b));
}
