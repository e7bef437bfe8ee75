// gather -- out[i] = table[idx[i]]: random reads (memory divergence, poor locality).
extern "C" __global__ void gather(const int *idx, const float *table, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = table[idx[i]] * 2.0f;
}
