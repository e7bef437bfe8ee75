__device__ __noinline__ int pick(const int *a, int k) { return a[k]; }
extern "C" __global__ void local_arr(const int *idx, int *out) {
  int a[16];
  int t = threadIdx.x;
  for (int k = 0; k < 16; ++k) a[k] = k * t + idx[k];
  out[t] = a[idx[t] & 15] + pick(a, (t + 3) & 15);
}
