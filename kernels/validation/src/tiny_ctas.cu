// tiny_ctas -- many one-warp CTAs that each do a few instructions (CTA dispatch and launch costs).
extern "C" __global__ void tiny_ctas(int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = i * 3 + 1;
}
