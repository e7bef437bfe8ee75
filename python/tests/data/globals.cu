// Module variables from Python: a __constant__ table and a __device__ counter that persists across
// launches.
__constant__ int table[4];
__device__ int launches;

extern "C" __global__ void lookup(const int *idx, int *out, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) out[tid] = table[idx[tid] & 3];
    if (tid == 0) atomicAdd(&launches, 1);
}
