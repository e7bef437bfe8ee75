// transpose_naive -- out[x][y] = in[y][x] with 16x16 threads per CTA: coalesced reads, scattered writes.
extern "C" __global__ void transpose_naive(const float *in, float *out, int w, int h)
{
    int x = blockIdx.x * 16 + threadIdx.x;
    int y = blockIdx.y * 16 + threadIdx.y;
    if (x < w && y < h)
        out[x * h + y] = in[y * w + x];
}
