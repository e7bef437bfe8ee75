__constant__ float coeffs[4] = {0.25f, 0.5f, 0.125f, 2.0f};
__device__ int counter;
__device__ float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
extern "C" __global__ void __launch_bounds__(256, 2) bounded(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < n; ++k) acc += coeffs[k & 3] * x[k] + table[k & 7];
    x[i] = acc;
    atomicAdd(&counter, 1);
  }
}
