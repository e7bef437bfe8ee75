// sync_nest -- the shape of the CUDA samples' bitonicSortShared, written anew: a bitonic sort of
// 2 * blockDim.x keys in shared memory, two per thread, where every step of the inner loop starts
// with __syncthreads() and ends with a data-dependent compare-exchange (an `if` inside the loop,
// so the threads of a warp leave each step at different points). Before the fix of its
// convergence barriers (a thread that a yield had counted early joined the next outer iteration's
// barrier), `its` deadlocked on it at every warp size.
//
// Launch: grid (G,1,1), block (B,1,1) with B a power of two; dynamic shared memory none
// (at most 512 threads). Arguments: keys: u32[2*B*G] (in/out, each CTA sorts its 2*B keys
// ascending); n = 2*B.
// PTX: NVRTC 12.9, -arch=compute_80 -default-device (scripts in the repository regenerate it:
// scripts/gen_ptx.py handles kernels/src; this file is compiled the same way by hand).

extern "C" __global__ void sync_nest(unsigned *keys, unsigned n)
{
    __shared__ unsigned s[1024];
    unsigned t = threadIdx.x;
    unsigned half = n / 2;
    unsigned *seg = keys + blockIdx.x * n;
    s[t] = seg[t];
    s[t + half] = seg[t + half];
    for (unsigned size = 2; size <= n; size <<= 1) {
        unsigned up = ((t & (size / 2)) == 0) || size == n;
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned pos = 2 * t - (t & (stride - 1));
            unsigned a = s[pos], b = s[pos + stride];
            if ((a > b) == up) {
                s[pos] = b;
                s[pos + stride] = a;
            }
        }
    }
    __syncthreads();
    seg[t] = s[t];
    seg[t + half] = s[t + half];
}
