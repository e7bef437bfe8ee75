// histogram -- shared-memory histogram: per-CTA __shared__ bins filled with shared atomicAdd
// over a grid-stride loop, then merged into the global histogram with global atomicAdd.
// ptx-variants: sm_80 sm_70
//
// Divergence: grid-stride loop whose trip count differs between threads (n is not a multiple
// of the grid size), a data-dependent skip of zero bytes (`continue`), a data-dependent
// weight (bytes >= 192 count twice), strided bin loops where only the first NBINS threads
// work, and a skip of empty bins in the merge. Barriers separate the three phases.
// Integer atomics only, so the result is independent of the interleaving.
//
// Launch: grid (4,1,1), block (100,1,1) (not a multiple of 32).
// Arguments: data: u8[n]; n = 3000; bins: u32[64] (zero-filled output).

#define NBINS 64

extern "C" __global__ void histogram(const unsigned char *data, int n, unsigned int *bins)
{
    __shared__ unsigned int s_bins[NBINS];

    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        s_bins[b] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned int v = data[i];
        if (v == 0)
            continue;
        atomicAdd(&s_bins[v & (NBINS - 1)], v >= 192 ? 2u : 1u);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) {
        unsigned int c = s_bins[b];
        if (c != 0)
            atomicAdd(&bins[b], c);
    }
}
