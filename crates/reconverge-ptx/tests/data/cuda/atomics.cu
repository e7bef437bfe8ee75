extern "C" __global__ void histo(const int *in, int *bins, float *sum, unsigned long long *cnt, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(&bins[in[i] & 63], 1);
  atomicAdd(sum, (float)in[i]);
  atomicMax(&bins[64], in[i]);
  atomicCAS(&bins[65], 0, i);
  atomicExch(&bins[66], i);
  atomicAdd(cnt, 1ull);
  atomicInc((unsigned *)&bins[67], 100u);
  __threadfence();
}
