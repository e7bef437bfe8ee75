// reduce_shared -- per-CTA sum in shared memory by halving strides: log2(B) barriers, the active threads
// halve at every step (divergence below the warp size).
extern "C" __global__ void reduce_shared(const int *in, int *out, int n)
{
    extern __shared__ int s[];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x * 2 + t;
    int v = 0;
    if (i < n) v = in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
