// transpose_tiled -- the same transpose through a padded 16x17 shared tile: coalesced both ways, one
// barrier per CTA.
extern "C" __global__ void transpose_tiled(const float *in, float *out, int w, int h)
{
    __shared__ float tile[16][17];
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    if (x < w && y < h)
        tile[threadIdx.y][threadIdx.x] = in[y * w + x];
    __syncthreads();
    x = blockIdx.y * 16 + threadIdx.x;
    y = blockIdx.x * 16 + threadIdx.y;
    if (x < h && y < w)
        out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
