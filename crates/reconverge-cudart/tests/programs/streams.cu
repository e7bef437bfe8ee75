// streams.cu -- streams, events and device queries.
//
// The device is queried (count, properties, attributes, memory) and a kernel's
// attributes are read; only properties of the values are printed, never the
// values. Then two streams each copy half of an array to the device, run a
// kernel on it and copy it back, all asynchronously; an event recorded on the
// second stream is waited for, both streams are synchronized and destroyed.
#include "common.h"

#define N 2048
#define HALF (N / 2)
#define BLOCK 128

// Sum of the decimal digits of each element, times a per-stream factor.
__global__ void digits(const int *in, int *out, int n, int factor) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = in[i], s = 0;
    while (v > 0) { s += v % 10; v /= 10; }  // trip count varies per thread
    out[i] = s * factor;
}

static const char *yes(bool b) { return b ? "yes" : "no"; }

int main() {
    int errors = 0;

    // Device queries.
    int count = 0, dev = -1, max_threads = 0;
    CHECK(cudaGetDeviceCount(&count));
    CHECK(cudaSetDevice(0));
    CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, 0));
    int ws = prop.warpSize;
    bool warp_ok = ws >= 4 && ws <= 64 && (ws & (ws - 1)) == 0;
    printf("device count >= 1: %s\n", yes(count >= 1));
    printf("current device 0: %s\n", yes(dev == 0));
    printf("warpSize power of two in [4, 64]: %s\n", yes(warp_ok));
    printf("multiProcessorCount > 0: %s\n", yes(prop.multiProcessorCount > 0));
    printf("max threads per block >= %d: %s\n", BLOCK, yes(max_threads >= BLOCK));
    errors += !(count >= 1) + !(dev == 0) + !warp_ok + !(prop.multiProcessorCount > 0) +
              !(max_threads >= BLOCK);

    CHECK(cudaFuncSetCacheConfig(digits, cudaFuncCachePreferL1));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, digits));
    bool attr_ok = attr.numRegs >= 0 && attr.maxThreadsPerBlock > 0;
    printf("function attributes sane: %s\n", yes(attr_ok));
    // Occupancy: at least one CTA of the largest block the kernel allows fits an SM, and halving the
    // block never lowers the CTAs that fit.
    int full = 0, half = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&full, digits, attr.maxThreadsPerBlock, 0));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&half, digits, attr.maxThreadsPerBlock / 2, 0));
    printf("occupancy sane: %s\n", yes(full >= 1 && half >= full));
    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    printf("free <= total: %s\n", yes(free_b <= total_b && total_b > 0));
    errors += !attr_ok + !(free_b <= total_b && total_b > 0);

    // Two streams, each handling half of the array.
    int *h_in, *h_out, *d_in, *d_out;
    CHECK(cudaMallocHost((void **)&h_in, N * sizeof(int)));
    CHECK(cudaMallocHost((void **)&h_out, N * sizeof(int)));
    CHECK(cudaMalloc((void **)&d_in, N * sizeof(int)));
    CHECK(cudaMalloc((void **)&d_out, N * sizeof(int)));
    unsigned seed = 5u;
    for (int i = 0; i < N; i++) { h_in[i] = (int)(lcg_next(&seed) >> 12); h_out[i] = -1; }

    cudaStream_t s[2];
    cudaEvent_t done;
    CHECK(cudaStreamCreate(&s[0]));
    CHECK(cudaStreamCreate(&s[1]));
    CHECK(cudaEventCreate(&done));
    for (int k = 0; k < 2; k++) {
        int off = k * HALF;
        CHECK(cudaMemcpyAsync(d_in + off, h_in + off, HALF * sizeof(int), cudaMemcpyHostToDevice, s[k]));
        digits<<<(HALF + BLOCK - 1) / BLOCK, BLOCK, 0, s[k]>>>(d_in + off, d_out + off, HALF, k + 1);
        CHECK(cudaPeekAtLastError());
        CHECK(cudaMemcpyAsync(h_out + off, d_out + off, HALF * sizeof(int), cudaMemcpyDeviceToHost, s[k]));
    }
    CHECK(cudaEventRecord(done, s[1]));
    CHECK(cudaEventSynchronize(done));
    CHECK(cudaStreamSynchronize(s[0]));
    CHECK(cudaStreamSynchronize(s[1]));
    CHECK(cudaGetLastError());

    long long total = 0;
    for (int i = 0; i < N; i++) {
        int v = h_in[i], d = 0;
        while (v > 0) { d += v % 10; v /= 10; }
        int want = d * (i < HALF ? 1 : 2);
        total += h_out[i];
        if (h_out[i] != want && errors++ < 10) printf("out[%d] = %d, expected %d\n", i, h_out[i], want);
    }
    printf("streams 2 elements %d checksum %lld\n", N, total);

    CHECK(cudaEventDestroy(done));
    CHECK(cudaStreamDestroy(s[0]));
    CHECK(cudaStreamDestroy(s[1]));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaDeviceReset());

    if (errors) { printf("FAIL\n"); return 1; }
    printf("PASS\n");
    return 0;
}
