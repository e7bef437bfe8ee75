// gaussian.cu -- Rodinia-style Gaussian elimination without pivoting.
//
// For each step t the host launches Fan1 (one thread per row below t computes
// the row's multiplier) and Fan2 (a 2D grid subtracts the scaled pivot row from
// every row below t, and the right-hand side with it). Back substitution runs
// on the host. The system is diagonally dominant, so no pivoting is needed;
// the solution is compared with a host elimination and with the known x.
#include <cmath>
#include "common.h"

#define SIZE 16
#define BLOCK_1D 8
#define BLOCK_XY 4

// m[row][t] = a[row][t] / a[t][t] for every row below t.
__global__ void Fan1(float *m_cuda, const float *a_cuda, int Size, int t) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= Size - 1 - t) return;
    m_cuda[Size * (row + t + 1) + t] = a_cuda[Size * (row + t + 1) + t] / a_cuda[Size * t + t];
}

// a[row][col] -= m[row][t] * a[t][col] for rows below t and columns from t;
// the first column of threads also updates b.
__global__ void Fan2(const float *m_cuda, float *a_cuda, float *b_cuda, int Size, int t) {
    int xidx = blockIdx.x * blockDim.x + threadIdx.x;
    int yidx = blockIdx.y * blockDim.y + threadIdx.y;
    if (xidx >= Size - 1 - t) return;
    if (yidx >= Size - t) return;
    a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -=
        m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
    if (yidx == 0)
        b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + t] * b_cuda[t];
}

// Solve the upper-triangular system left by the elimination.
static void back_sub(const float *a, const float *b, float *x, int n) {
    for (int i = n - 1; i >= 0; i--) {
        float s = b[i];
        for (int j = i + 1; j < n; j++) s -= a[i * n + j] * x[j];
        x[i] = s / a[i * n + i];
    }
}

int main() {
    const int n = SIZE;
    float a[SIZE * SIZE], b[SIZE], x_true[SIZE];
    float ha[SIZE * SIZE], hb[SIZE], m[SIZE * SIZE] = {0};

    // Diagonally dominant A, known solution x_true, b = A x_true.
    unsigned seed = 2024u;
    for (int i = 0; i < n; i++) {
        float rowsum = 0.0f;
        for (int j = 0; j < n; j++) {
            a[i * n + j] = lcg_float(&seed) * 2.0f - 1.0f;
            rowsum += fabsf(a[i * n + j]);
        }
        a[i * n + i] = rowsum + 1.0f;
        x_true[i] = (float)(i % 5) - 2.0f;
    }
    for (int i = 0; i < n; i++) {
        b[i] = 0.0f;
        for (int j = 0; j < n; j++) b[i] += a[i * n + j] * x_true[j];
    }

    float *d_a, *d_b, *d_m;
    CHECK(cudaMalloc((void **)&d_a, sizeof(a)));
    CHECK(cudaMalloc((void **)&d_b, sizeof(b)));
    CHECK(cudaMalloc((void **)&d_m, sizeof(m)));
    CHECK(cudaMemcpy(d_a, a, sizeof(a), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b, sizeof(b), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_m, m, sizeof(m), cudaMemcpyHostToDevice));

    dim3 block1(BLOCK_1D), grid1((n + BLOCK_1D - 1) / BLOCK_1D);
    dim3 block2(BLOCK_XY, BLOCK_XY), grid2((n + BLOCK_XY - 1) / BLOCK_XY, (n + BLOCK_XY - 1) / BLOCK_XY);
    for (int t = 0; t < n - 1; t++) {
        Fan1<<<grid1, block1>>>(d_m, d_a, n, t);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        Fan2<<<grid2, block2>>>(d_m, d_a, d_b, n, t);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
    }

    float ga[SIZE * SIZE], gb[SIZE], gx[SIZE], hx[SIZE];
    CHECK(cudaMemcpy(ga, d_a, sizeof(ga), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(gb, d_b, sizeof(gb), cudaMemcpyDeviceToHost));
    back_sub(ga, gb, gx, n);

    // Host elimination, same order of operations.
    for (int i = 0; i < n * n; i++) ha[i] = a[i];
    for (int i = 0; i < n; i++) hb[i] = b[i];
    for (int t = 0; t < n - 1; t++)
        for (int r = t + 1; r < n; r++) {
            float mult = ha[r * n + t] / ha[t * n + t];
            for (int c = t; c < n; c++) ha[r * n + c] -= mult * ha[t * n + c];
            hb[r] -= mult * hb[t];
        }
    back_sub(ha, hb, hx, n);

    int errors = 0;
    for (int i = 0; i < n; i++) {
        bool ok = fabsf(gx[i] - hx[i]) <= 1e-4f && fabsf(gx[i] - x_true[i]) <= 1e-3f;
        if (!ok && errors++ < 10)
            printf("x[%d] = %f, host %f, exact %f\n", i, gx[i], hx[i], x_true[i]);
    }
    printf("size %d steps %d x[0] %.3f x[%d] %.3f\n", n, n - 1, hx[0], n - 1, hx[n - 1]);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_m));
    if (errors) { printf("%d unknowns differ\nFAIL\n", errors); return 1; }
    printf("PASS\n");
    return 0;
}
