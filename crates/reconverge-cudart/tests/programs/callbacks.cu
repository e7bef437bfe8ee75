// callbacks.cu -- host work in stream order.
//
// A kernel, then cudaLaunchHostFunc on the same stream: the host function
// must see the kernel's result (it reads it with a copy made before it runs,
// through the pinned buffer the copy filled), then cudaStreamAddCallback on a
// created stream after a second kernel and copy. Each host function appends
// its number to an order log. cudaChooseDevice picks device 0. Misuse: a
// callback on a destroyed stream (cudaErrorInvalidResourceHandle, not run),
// nonzero cudaStreamAddCallback flags and a NULL host function
// (cudaErrorInvalidValue, not run).
#include "common.h"

#define N 256

__global__ void square(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = (v[i] & 1) ? v[i] * v[i] : -v[i];
}

struct Log {
    int order[8];
    int count;
    const int *host;  // the pinned copy of the kernel's result
    long long seen;   // its sum when the host function ran
};

static void CUDART_CB host_func(void *p) {
    Log *log = (Log *)p;
    long long s = 0;
    for (int i = 0; i < N; i++) s += log->host[i];
    log->seen = s;
    log->order[log->count++] = 1;
}

static void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void *p) {
    Log *log = (Log *)p;
    log->order[log->count++] = status == cudaSuccess ? 2 : -2;
}

static void CUDART_CB never(void *p) { ((Log *)p)->order[((Log *)p)->count++] = 99; }

int main() {
    int errors = 0;
    int *d, *h;
    CHECK(cudaMalloc((void **)&d, N * sizeof(int)));
    CHECK(cudaMallocHost((void **)&h, N * sizeof(int)));
    long long want = 0;
    for (int i = 0; i < N; i++) {
        h[i] = i;
        want += (i & 1) ? (long long)i * i : -i;
    }
    Log log = {{0}, 0, h, 0};

    CHECK(cudaMemcpyAsync(d, h, N * sizeof(int), cudaMemcpyHostToDevice, 0));
    square<<<(N + 63) / 64, 64>>>(d, N);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h, d, N * sizeof(int), cudaMemcpyDeviceToHost, 0));
    CHECK(cudaLaunchHostFunc(0, host_func, &log));

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    square<<<(N + 63) / 64, 64, 0, s>>>(d, N);
    CHECK(cudaStreamAddCallback(s, stream_callback, &log, 0));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaStreamDestroy(s));

    printf("host function saw the kernel's result: %s\n", log.seen == want ? "yes" : "no");
    if (log.seen != want) errors++;
    printf("order:");
    for (int i = 0; i < log.count; i++) printf(" %d", log.order[i]);
    printf("\n");
    if (log.count != 2 || log.order[0] != 1 || log.order[1] != 2) errors++;

    int dev = -1;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    CHECK(cudaChooseDevice(&dev, &prop));
    printf("chosen device %d\n", dev);
    if (dev != 0) errors++;

    cudaError_t e = cudaLaunchHostFunc(s, never, &log);
    printf("destroyed stream: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorInvalidResourceHandle) errors++;
    e = cudaStreamAddCallback(0, stream_callback, &log, 1);
    printf("flags 1: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorInvalidValue) errors++;
    e = cudaLaunchHostFunc(0, NULL, &log);
    printf("no function: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorInvalidValue) errors++;
    if (log.count != 2) { printf("a refused host function ran\n"); errors++; }

    CHECK(cudaFree(d));
    CHECK(cudaFreeHost(h));
    if (errors) { printf("FAIL\n"); return 1; }
    printf("PASS\n");
    return 0;
}
