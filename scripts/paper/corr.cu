// The loop structure of PolyBench/GPU CORR's fourth kernel (the correlation matrix), written here for
// docs/paper-reproduction.md (scripts/paper_ablation.py runs it): thread j1 loops over j2 > j1, so
// trip counts differ per thread, and the sum lives in global memory as the benchmark keeps it.
extern "C" __global__ void corr(const float *data, float *symmat, int m, int n)
{
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < m - 1) {
        symmat[j1 * m + j1] = 1.0f;
        for (int j2 = j1 + 1; j2 < m; j2++) {
            symmat[j1 * m + j2] = 0.0f;
            for (int i = 0; i < n; i++)
                symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
}
