// vecadd -- c[i] = a[i] + b[i], one element per thread: streaming, memory-bound, fully coalesced.
extern "C" __global__ void vecadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
