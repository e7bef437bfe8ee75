// Indirect calls (.callprototype) and function-pointer tables (generic() initializers).
typedef int (*op_t)(int, int);
__device__ __noinline__ int addf(int a, int b) { return a + b; }
__device__ __noinline__ int mulf(int a, int b) { return a * b; }
__device__ op_t ops[2] = {addf, mulf};
__device__ int gval = 5;
__device__ int *gptr = &gval;
extern "C" __global__ void fnptr(int *out) {
  int t = threadIdx.x;
  op_t f = ops[t & 1];
  out[t] = f(t, 3) + *gptr;
}
