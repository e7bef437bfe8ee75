// lud -- in-place LU decomposition (Doolittle, no pivoting) of a small dense matrix in
// shared memory, one thread per row, in the spirit of Rodinia lud.
// ptx-variants: sm_80 sm_70 sm_80-nofma
//
// Divergence: triangular loops -- at step k only the threads of rows below the pivot
// (tid > k) compute their L entry and update their row, so one more lane drops out at every
// step; barriers separate the steps.
//
// Launch: grid (1,1,1), block (n,1,1) with n <= 32 (the suite: n = 24, not a multiple of 32).
// Arguments: m: float[n*n] (in/out: A on entry, L (unit diagonal, below) and U (on and above
//            the diagonal) on exit); n = 24.
// Exactness: the suite runs the --fmad=false PTX: div.rn, mul.rn and sub.rn are correctly
// rounded, so the float32 reference reproduces the factors bit for bit.

#define MAXN 32

extern "C" __global__ void lud(float *m, int n)
{
    __shared__ float a[MAXN][MAXN + 1];
    int tid = threadIdx.x;

    for (int j = 0; j < n; j++)
        a[tid][j] = m[tid * n + j];
    __syncthreads();

    for (int k = 0; k < n - 1; k++) {
        if (tid > k)
            a[tid][k] = a[tid][k] / a[k][k];
        __syncthreads();
        if (tid > k) {
            for (int j = k + 1; j < n; j++)
                a[tid][j] = a[tid][j] - a[tid][k] * a[k][j];
        }
        __syncthreads();
    }

    for (int j = 0; j < n; j++)
        m[tid * n + j] = a[tid][j];
}
