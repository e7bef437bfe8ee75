// legacy_units.cu -- a program written for CUDA before 12 in two translation units, legacy_units.cu and
// legacy_units_b.cu, each with its own __device__, __constant__ and texture-reference variables (as
// Rodinia hybridsort's three .cu files have). Built unmodified with
// `nvcc -include "$(reconverge cuda-include)/reconverge_compat.h" legacy_units.cu legacy_units_b.cu`
// and linked against `reconverge cuda-lib`.
//
// Part 1: each unit's variables have addresses of their own (each unit is a module of its own, whose
//         variables the runtime places apart), and each unit's kernel reads its own.
// Part 2: variables named by a string, as CUDA before 5.0 took them (Rodinia kmeans:
//         `cudaMemcpyToSymbol("c_clusters", ...)`): to and from the symbol, the Async forms, at an
//         offset, `cudaGetSymbolAddress`, `cudaGetSymbolSize`, another unit's variable by name; an unknown
//         name is cudaErrorInvalidSymbol.
// Part 3: cudaBindTexture with CUDA's default size (no size: UINT_MAX), which runs past the buffer.
// Part 4: the cudaDeviceProp fields CUDA 13 removed (clockRate, computeMode, ...), as older programs
//         read them; only facts true of every GPU are checked.
#include "common.h"
#include <cmath>

#define N 256

__device__ int scale_a;
__constant__ float bias_a[4];
texture<float, 1, cudaReadModeElementType> tex_a;

// legacy_units_b.cu's host side.
void *address_b(void);
void run_b(const float *d_in, float *d_out, int n);

__global__ void kernel_a(float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch(tex_a, i) * scale_a + bias_a[i & 3];
}

int main() {
    int failures = 0;
    float h_in[N], h_out[N], h_bias[4] = {0.5f, -1.0f, 2.0f, 0.25f};
    for (int i = 0; i < N; ++i) h_in[i] = (float)(i % 17) - 3.0f;
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof h_in));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice));

    // Part 2 first: set this unit's variables by name.
    int three = 3, back = 0;
    CHECK(cudaMemcpyToSymbol("scale_a", &three, sizeof three));
    CHECK(cudaMemcpyToSymbol("bias_a", h_bias, 2 * sizeof(float)));
    CHECK(cudaMemcpyToSymbolAsync("bias_a", h_bias + 2, 2 * sizeof(float), 2 * sizeof(float),
                                  cudaMemcpyHostToDevice, 0));
    CHECK(cudaMemcpyFromSymbol(&back, "scale_a", sizeof back));
    if (back != 3 && failures++ < 5) printf("scale_a read back by name: %d\n", back);
    float bias_back[4] = {0, 0, 0, 0};
    CHECK(cudaMemcpyFromSymbolAsync(bias_back, "bias_a", sizeof bias_back, 0, cudaMemcpyDeviceToHost, 0));
    CHECK(cudaDeviceSynchronize());
    for (int k = 0; k < 4; ++k)
        if (bias_back[k] != h_bias[k] && failures++ < 5) printf("bias_a[%d] = %g\n", k, bias_back[k]);
    void *by_name = 0, *by_symbol = 0;
    size_t size = 0;
    CHECK(cudaGetSymbolAddress(&by_name, "scale_a"));
    CHECK(cudaGetSymbolAddress(&by_symbol, scale_a));
    CHECK(cudaGetSymbolSize(&size, "bias_a"));
    if ((by_name != by_symbol || size != sizeof h_bias) && failures++ < 5)
        printf("by name: %p (%p), %zu bytes\n", by_name, by_symbol, size);
    // Another unit's variable, by name.
    int seven = 7;
    CHECK(cudaMemcpyToSymbol("scale_b", &seven, sizeof seven));
    cudaError_t unknown = cudaMemcpyToSymbol("no_such_variable", &seven, sizeof seven);
    printf("unknown name: %s\n", cudaGetErrorName(unknown));
    if (unknown != cudaErrorInvalidSymbol) failures++;
    if (cudaGetLastError() != cudaErrorInvalidSymbol) failures++;

    // Part 1: the units' variables apart.
    void *b = address_b();
    bool apart = b != 0 && b != by_symbol;
    printf("units' variables apart: %s\n", apart ? "yes" : "no");
    if (!apart) failures++;

    // Part 3: the default size.
    CHECK(cudaBindTexture(0, tex_a, d_in));
    kernel_a<<<(N + 63) / 64, 64>>>(d_out, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) {
        float want = h_in[i] * 3 + h_bias[i & 3];
        if (h_out[i] != want && failures++ < 5) printf("a: out[%d] = %g, want %g\n", i, h_out[i], want);
    }
    run_b(d_in, d_out, N);
    CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) {
        float want = h_in[i] * 7 - (float)(i % 5);
        if (h_out[i] != want && failures++ < 5) printf("b: out[%d] = %g, want %g\n", i, h_out[i], want);
    }
    CHECK(cudaUnbindTexture(tex_a));

    // Part 4.
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    bool facts = prop.clockRate > 0 && prop.memoryClockRate > 0 && prop.deviceOverlap == 1 &&
                 prop.computeMode != cudaComputeModeProhibited && prop.maxTexture1DLinear >= (1 << 27) &&
                 prop.singleToDoublePrecisionPerfRatio > 0 && prop.warpSize > 0;
    printf("removed properties filled: %s\n", facts ? "yes" : "no");
    if (!facts) failures++;

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaThreadExit());
    if (failures) {
        printf("FAIL: %d mismatches\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
