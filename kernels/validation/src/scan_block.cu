// scan_block -- an inclusive prefix sum per CTA (Hillis-Steele in shared memory): log2(B) steps with two
// barriers each and the active threads shrinking from the front.
extern "C" __global__ void scan_block(const int *in, int *out)
{
    __shared__ int s[256];
    unsigned t = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + t;
    s[t] = in[i];
    __syncthreads();
    for (unsigned d = 1; d < blockDim.x; d <<= 1) {
        int v = t >= d ? s[t - d] : 0;
        __syncthreads();
        s[t] += v;
        __syncthreads();
    }
    out[i] = s[t];
}
