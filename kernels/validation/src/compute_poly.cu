// compute_poly -- a long dependent chain of float multiply-adds per thread on one loaded value
// (compute- and latency-bound: one load, iters x 4 arithmetic instructions, one store).
extern "C" __global__ void compute_poly(const float *in, float *out, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = in[i];
    float y = 0.5f;
    for (int k = 0; k < iters; k++) {
        y = y * x + 0.25f;
        y = y * 0.75f - x;
    }
    out[i] = y;
}
