extern "C" __device__ int printf(const char *, ...);
extern "C" __global__ void hello(const int *v, int n) {
  int i = threadIdx.x;
  if (i < n && v[i] > 3) printf("thread %d has %d (%f)\n", i, v[i], 1.5 * v[i]);
  if (i == 0) printf("done\n");
}
