__global__ void add(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += i; }
int main() { int *d = 0; add<<<1, 32>>>(d, 16); return 0; }
