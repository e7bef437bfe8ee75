// sfu_heavy -- special functions (sin, exp, rsqrt through the fast intrinsics) in a loop: SFU-bound.
extern "C" __global__ void sfu_heavy(const float *in, float *out, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float acc = 0.0f;
    for (int k = 0; k < iters; k++) {
        acc += __sinf(x) + __expf(-x) + rsqrtf(x + 1.0f);
        x += 0.01f;
    }
    out[i] = acc;
}
