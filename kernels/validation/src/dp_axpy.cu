// dp_axpy -- double-precision multiply-adds in a loop (the double-precision unit).
extern "C" __global__ void dp_axpy(const double *x, double *y, int iters)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    double v = x[i], acc = y[i];
    for (int k = 0; k < iters; k++)
        acc = acc * 0.5 + v;
    y[i] = acc;
}
