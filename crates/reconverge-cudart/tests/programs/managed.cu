// managed.cu -- unified memory and pinned host memory.
//
// Part 1: __managed__ variables. The host fills `data` directly, a kernel adds
//         the entries above a threshold into `sum` with atomics, and the host
//         reads `sum` after cudaDeviceSynchronize.
// Part 2: a cudaMallocManaged buffer written by the host, updated in place by
//         a kernel, read by the host.
// Part 3: page-locked staging buffers from cudaMallocHost and cudaHostAlloc
//         used for plain cudaMemcpy to and from a device buffer.
#include "common.h"

#define DATA_N 256
#define BUF_N 1000
#define BLOCK 64

__managed__ int sum;
__managed__ float data[DATA_N];

__global__ void sum_above(int threshold) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < DATA_N && data[i] > (float)threshold)
        atomicAdd(&sum, (int)data[i]);
}

// Collatz-style update: the branch taken depends on the value.
__global__ void step(int *buf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = buf[i];
    buf[i] = (v & 1) ? 3 * v + 1 : v / 2;
}

int main() {
    int errors = 0;

    // Part 1: __managed__ variables, accessed from the host without copies.
    int want_sum = 0;
    for (int i = 0; i < DATA_N; i++) {
        data[i] = (float)((i * 37) % 101);
        if (data[i] > 50.0f) want_sum += (int)data[i];
    }
    sum = 0;
    sum_above<<<(DATA_N + BLOCK - 1) / BLOCK, BLOCK>>>(50);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("managed sum %d\n", sum);
    if (sum != want_sum) { printf("sum %d, expected %d\n", sum, want_sum); errors++; }

    // Part 2: cudaMallocManaged buffer, two kernel steps.
    int *buf;
    CHECK(cudaMallocManaged((void **)&buf, BUF_N * sizeof(int)));
    for (int i = 0; i < BUF_N; i++) buf[i] = i + 1;
    step<<<(BUF_N + BLOCK - 1) / BLOCK, BLOCK>>>(buf, BUF_N);
    CHECK(cudaGetLastError());
    step<<<(BUF_N + BLOCK - 1) / BLOCK, BLOCK>>>(buf, BUF_N);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    long long buf_sum = 0;
    for (int i = 0; i < BUF_N; i++) {
        int v = i + 1;
        for (int s = 0; s < 2; s++) v = (v & 1) ? 3 * v + 1 : v / 2;
        buf_sum += buf[i];
        if (buf[i] != v && errors++ < 10) printf("buf[%d] = %d, expected %d\n", i, buf[i], v);
    }
    printf("managed buffer sum %lld\n", buf_sum);
    CHECK(cudaFree(buf));

    // Part 3: pinned staging buffers through a device buffer.
    int *h_src, *h_dst, *d_buf;
    CHECK(cudaMallocHost((void **)&h_src, BUF_N * sizeof(int)));
    CHECK(cudaHostAlloc((void **)&h_dst, BUF_N * sizeof(int), cudaHostAllocDefault));
    CHECK(cudaMalloc((void **)&d_buf, BUF_N * sizeof(int)));
    for (int i = 0; i < BUF_N; i++) { h_src[i] = 7 * i + 3; h_dst[i] = -1; }
    CHECK(cudaMemcpy(d_buf, h_src, BUF_N * sizeof(int), cudaMemcpyHostToDevice));
    step<<<(BUF_N + BLOCK - 1) / BLOCK, BLOCK>>>(d_buf, BUF_N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_dst, d_buf, BUF_N * sizeof(int), cudaMemcpyDeviceToHost));
    int pinned_bad = 0;
    for (int i = 0; i < BUF_N; i++) {
        int v = h_src[i];
        int want = (v & 1) ? 3 * v + 1 : v / 2;
        if (h_dst[i] != want && pinned_bad++ < 10)
            printf("pinned[%d] = %d, expected %d\n", i, h_dst[i], want);
    }
    errors += pinned_bad;
    printf("pinned round trip %d elements\n", BUF_N);
    CHECK(cudaFree(d_buf));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));

    if (errors) { printf("FAIL\n"); return 1; }
    printf("PASS\n");
    return 0;
}
