// saxpy_loop -- a grid-stride SAXPY: each thread handles n / (grid * block) elements (memory-bound, with
// a uniform loop).
extern "C" __global__ void saxpy_loop(float a, const float *x, float *y, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
