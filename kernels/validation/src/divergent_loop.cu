// divergent_loop -- each thread loops (tid % 32) + 1 times: loop-exit divergence inside every warp.
extern "C" __global__ void divergent_loop(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    int trips = (threadIdx.x % 32) + 1;
    for (int k = 0; k < trips; k++)
        x = x * 1.0001f + 0.5f;
    out[i] = x;
}
