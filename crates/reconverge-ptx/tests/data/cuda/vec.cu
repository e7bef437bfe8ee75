extern "C" __global__ void vec4(const float4 *__restrict__ a, float4 *__restrict__ b, const double2 *c, double2 *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 v = a[i];
    b[i] = make_float4(v.w, v.z * 2.0f, v.y + 1.0f, v.x);
    double2 q = c[i];
    d[i] = make_double2(q.y, q.x);
  }
}
extern "C" __global__ void grid2d(float *m, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) m[y * w + x] = m[y * w + x] * 0.5f + (float)(gridDim.x * gridDim.y + threadIdx.z);
}
