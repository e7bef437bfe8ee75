// atomic_hist -- a 256-bin histogram with global atomics (contended at the L2), grid-stride.
extern "C" __global__ void atomic_hist(const unsigned *in, unsigned *bins, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[in[i] & 255], 1u);
}
