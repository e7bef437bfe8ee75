// matmul_tiled -- C = A x B with 16x16 shared-memory tiles: two barriers per tile (barrier- and
// shared-memory-heavy, compute-bound).
extern "C" __global__ void matmul_tiled(const float *a, const float *b, float *c, int n)
{
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y;
    int col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < n; t += 16) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; k++)
            acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}
