// Recursion and non-inlined device calls.
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ void store2(float *p, float a, float b) { p[0] = a; p[1] = b; }
__device__ __noinline__ double scale(double x, double y) { return x * y + 1.0; }
extern "C" __global__ void calls(int *out, float *f, double *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = fib(i % 12);
    store2(f + 2 * i, (float)i, 2.0f * i);
    d[i] = scale(d[i], 3.5);
  }
}
