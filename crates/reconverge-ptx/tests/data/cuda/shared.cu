extern "C" __global__ void reduce(const float *in, float *out, int n) {
  __shared__ float buf[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  buf[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) buf[t] += buf[t + s];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = buf[0];
}
extern "C" __global__ void dyn_smem(const int *in, int *out) {
  extern __shared__ int sm[];
  int t = threadIdx.x;
  sm[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = sm[blockDim.x - 1 - t];
}
