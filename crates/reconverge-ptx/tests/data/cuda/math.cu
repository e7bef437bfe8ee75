extern "C" __global__ void fmath(const float *a, float *b, double *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    float y = sqrtf(fabsf(x)) + __expf(x) + __fdividef(x, 3.0f) + rsqrtf(x + 1.0f) + sinf(x) * logf(x + 2.0f);
    b[i] = fminf(y, 1e30f) / (x + 0.5f);
    double d = (double)x;
    c[i] = sqrt(d) / (d + 1e-3) + exp(d) * 0.25 + (double)(i % 7);
  }
}
