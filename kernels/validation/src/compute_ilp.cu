// compute_ilp -- four independent float chains per thread (instruction-level parallelism: throughput-bound).
extern "C" __global__ void compute_ilp(const float *in, float *out, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float a = x, b = x + 1.0f, c = x + 2.0f, d = x + 3.0f;
    for (int k = 0; k < iters; k++) {
        a = a * 0.999f + 0.5f;
        b = b * 0.998f + 0.25f;
        c = c * 0.997f + 0.125f;
        d = d * 0.996f + 0.0625f;
    }
    out[i] = a + b + c + d;
}
