// constant.cu -- module variables: __constant__ tables and a __device__ counter.
//
// A 16-tap filter's coefficients and a 256-entry lookup table live in constant
// memory and are uploaded with cudaMemcpyToSymbol, partly at nonzero offsets,
// then read back with cudaMemcpyFromSymbol. The kernel filters an input,
// adds a table entry, and counts the odd table entries it saw in a
// __device__ counter with atomicAdd; the host reads and resets the counter
// through the symbol API and runs the kernel a second time.
#include <cmath>
#include "common.h"

#define TAPS 16
#define LUT_SIZE 256
#define N 1024
#define BLOCK 128

__constant__ float coef[TAPS];
__constant__ int lut[LUT_SIZE];
__device__ int counter;

__global__ void filter(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < TAPS; k++) acc += coef[k] * in[(i + k) % n];
    int entry = lut[(i * 7) & (LUT_SIZE - 1)];
    if (entry & 1) {  // odd entries are counted and subtracted
        atomicAdd(&counter, 1);
        acc -= (float)entry;
    } else {
        acc += (float)entry;
    }
    out[i] = acc;
}

// Host reference of one run; returns the number of odd entries seen.
static int filter_host(const float *in, float *out, const float *c, const int *t, int n) {
    int odd = 0;
    for (int i = 0; i < n; i++) {
        float acc = 0.0f;
        for (int k = 0; k < TAPS; k++) acc += c[k] * in[(i + k) % n];
        int entry = t[(i * 7) & (LUT_SIZE - 1)];
        if (entry & 1) { odd++; acc -= (float)entry; } else acc += (float)entry;
        out[i] = acc;
    }
    return odd;
}

// Run the kernel and compare its output and counter with the host's.
static int run_and_check(const char *label, const float *d_in, float *d_out, const float *h_in,
                         const float *h_coef, const int *h_lut) {
    static float got[N], want[N];
    filter<<<(N + BLOCK - 1) / BLOCK, BLOCK>>>(d_in, d_out, N);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got, d_out, sizeof(got), cudaMemcpyDeviceToHost));
    int count = -1;
    CHECK(cudaMemcpyFromSymbol(&count, counter, sizeof(int)));
    int odd = filter_host(h_in, want, h_coef, h_lut, N);
    int errors = 0;
    for (int i = 0; i < N; i++)
        if (fabsf(got[i] - want[i]) > 1e-3f && errors++ < 5)
            printf("%s: out[%d] = %f, expected %f\n", label, i, got[i], want[i]);
    if (count != odd) { printf("%s: counter %d, expected %d\n", label, count, odd); errors++; }
    printf("%s: counter %d\n", label, count);
    return errors;
}

int main() {
    static float h_in[N];
    float h_coef[TAPS], back_coef[TAPS];
    int h_lut[LUT_SIZE], back_lut[LUT_SIZE];
    unsigned seed = 99u;
    for (int i = 0; i < N; i++) h_in[i] = lcg_float(&seed);
    for (int k = 0; k < TAPS; k++) h_coef[k] = 1.0f / (float)(k + 1);
    for (int i = 0; i < LUT_SIZE; i++) h_lut[i] = (int)(lcg_next(&seed) % 100);

    // Coefficients in two halves: the second at a byte offset of 8 floats.
    CHECK(cudaMemcpyToSymbol(coef, h_coef, (TAPS / 2) * sizeof(float)));
    CHECK(cudaMemcpyToSymbol(coef, h_coef + TAPS / 2, (TAPS / 2) * sizeof(float),
                             (TAPS / 2) * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyToSymbol(lut, h_lut, sizeof(h_lut)));
    int zero = 0;
    CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof(int)));

    // Read the tables back: coef whole, lut in two pieces (second at an offset).
    CHECK(cudaMemcpyFromSymbol(back_coef, coef, sizeof(back_coef)));
    CHECK(cudaMemcpyFromSymbol(back_lut, lut, 100 * sizeof(int)));
    CHECK(cudaMemcpyFromSymbol(back_lut + 100, lut, (LUT_SIZE - 100) * sizeof(int),
                               100 * sizeof(int), cudaMemcpyDeviceToHost));
    int errors = 0;
    for (int k = 0; k < TAPS; k++) errors += back_coef[k] != h_coef[k];
    for (int i = 0; i < LUT_SIZE; i++) errors += back_lut[i] != h_lut[i];
    if (errors) printf("%d table entries read back wrong\n", errors);

    float *d_in, *d_out;
    CHECK(cudaMalloc((void **)&d_in, sizeof(h_in)));
    CHECK(cudaMalloc((void **)&d_out, sizeof(h_in)));
    CHECK(cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice));
    errors += run_and_check("run 1", d_in, d_out, h_in, h_coef, h_lut);

    // Reset the counter and patch 64 table entries in the middle (offset 128).
    CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof(int)));
    for (int i = 128; i < 192; i++) h_lut[i] = 2 * i;  // all even: fewer counted
    CHECK(cudaMemcpyToSymbol(lut, h_lut + 128, 64 * sizeof(int), 128 * sizeof(int)));
    errors += run_and_check("run 2", d_in, d_out, h_in, h_coef, h_lut);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    if (errors) { printf("FAIL\n"); return 1; }
    printf("PASS\n");
    return 0;
}
