// bitonic_sort -- bitonic sort of each CTA's segment in shared memory (one element per
// thread; the classic CUDA SDK formulation).
// ptx-variants: sm_80 sm_70
//
// Divergence: at every step only the threads whose partner index tid ^ j is larger do the
// compare-exchange (half the lanes idle, in a pattern that changes with j: with warp size W
// the whole warp idles when j >= W); the sort direction depends on tid & k (ascending or
// descending subsequences), and the swap itself is data-dependent. A __syncthreads() follows
// every step.
//
// Launch: grid (2,1,1), block (128,1,1); dynamic shared memory = blockDim.x * 4 bytes (512);
// blockDim.x must be a power of two.
// Arguments: data: int[256] (in/out: CTA b sorts data[128*b .. 128*b + 127] ascending).

extern "C" __global__ void bitonic_sort(int *data)
{
    extern __shared__ int s[];
    unsigned int tid = threadIdx.x;
    unsigned int n = blockDim.x;
    int *seg = data + blockIdx.x * n;

    s[tid] = seg[tid];
    __syncthreads();

    for (unsigned int k = 2; k <= n; k <<= 1) {
        for (unsigned int j = k >> 1; j > 0; j >>= 1) {
            unsigned int ixj = tid ^ j;
            if (ixj > tid) {
                int a = s[tid];
                int b = s[ixj];
                if ((tid & k) == 0) {
                    if (a > b) {          // ascending subsequence
                        s[tid] = b;
                        s[ixj] = a;
                    }
                } else {
                    if (a < b) {          // descending subsequence
                        s[tid] = b;
                        s[ixj] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
    seg[tid] = s[tid];
}
