// host_register.cu -- registered and mapped (zero-copy) host memory.
//
// Part 1: a malloc'd buffer registered with cudaHostRegisterMapped; a kernel
//         updates it through the pointer cudaHostGetDevicePointer gives (with
//         unified addressing: the host pointer itself) and the host sees the
//         result without a copy. The registered buffer is also the source and
//         destination of ordinary cudaMemcpy calls, and cudaPointerGetAttributes
//         reports it as host memory with its device pointer.
// Part 2: cudaHostAlloc(cudaHostAllocMapped | cudaHostAllocPortable) memory
//         written by a kernel through its device pointer; cudaHostGetFlags.
// Part 3: cudaMallocHost memory used by a kernel through the host pointer, and
//         a buffer registered read-only (cudaHostRegisterReadOnly) that a
//         kernel reads.
// Misuse, with the codes CUDA documents: registering an overlapping range
// (712, cudaErrorHostMemoryAlreadyRegistered), NULL, a size of 0 and unknown
// flags (1), unregistering a pointer that is not the start of a registration
// (713, cudaErrorHostMemoryNotRegistered), cudaHostGetDevicePointer of
// unregistered memory and with flags (1), cudaHostGetFlags of registered
// memory (1: it only answers for cudaHostAlloc memory).
// Prints one line per part and per misuse, then PASS or FAIL.
#include "common.h"
#include <cstdint>
#include <cstdlib>
#include <cstring>

#define N 1000
#define BLOCK 128

// A divergent update: odd and even values take different branches.
__global__ void update(int *v, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = v[i];
    v[i] = (x & 1) ? k * x + i : x / 2 - i;
}

__global__ void saxpy(float *y, const float *x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

// out[0] = the sum of in[0..n) (one thread: the result is exact).
__global__ void total(const int *in, int n, long long *out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        long long s = 0;
        for (int i = 0; i < n; i++) s += in[i];
        *out = s;
    }
}

static int failures = 0;

static void expect(bool ok, const char *what) {
    if (!ok && failures++ < 20) printf("wrong: %s\n", what);
}

static void expect_code(cudaError_t want, cudaError_t got, const char *call) {
    printf("%d %s\n", (int)got, call);
    expect(got == want, call);
    cudaGetLastError();
}

static int updated(int x, int i, int k) { return (x & 1) ? k * x + i : x / 2 - i; }

int main() {
    CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
    const int grid = (N + BLOCK - 1) / BLOCK;

    // Part 1: malloc'd memory, registered and mapped.
    int *h = (int *)malloc(N * sizeof(int));
    int *want = (int *)malloc(N * sizeof(int));
    for (int i = 0; i < N; i++) h[i] = 3 * i - 700;
    CHECK(cudaHostRegister(h, N * sizeof(int), cudaHostRegisterMapped));
    int *d = nullptr;
    CHECK(cudaHostGetDevicePointer((void **)&d, h, 0));
    printf("device pointer is the host pointer: %s\n", d == h ? "yes" : "no");
    int *d_mid = nullptr;
    CHECK(cudaHostGetDevicePointer((void **)&d_mid, h + 10, 0));
    expect(d_mid == d + 10, "the device pointer of an address inside the registration");
    update<<<grid, BLOCK>>>(d, N, 3);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < N; i++) {
        want[i] = updated(3 * i - 700, i, 3);
        if (h[i] != want[i] && bad++ < 5) printf("h[%d] = %d, expected %d\n", i, h[i], want[i]);
    }
    expect(bad == 0, "a kernel writes registered memory through its device pointer");
    cudaPointerAttributes a;
    memset(&a, 0x5a, sizeof a);
    CHECK(cudaPointerGetAttributes(&a, h + 5));
    expect(a.type == cudaMemoryTypeHost && a.device == 0 && a.devicePointer == d + 5 && a.hostPointer == h + 5,
           "pointer attributes of registered memory");

    // Ordinary copies from and to the registered buffer.
    int *dev;
    CHECK(cudaMalloc((void **)&dev, N * sizeof(int)));
    CHECK(cudaMemcpy(dev, h, N * sizeof(int), cudaMemcpyHostToDevice));
    update<<<grid, BLOCK>>>(dev, N, 5);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, dev, N * sizeof(int), cudaMemcpyDeviceToHost));
    bad = 0;
    for (int i = 0; i < N; i++)
        if (h[i] != updated(want[i], i, 5) && bad++ < 5) printf("copied h[%d] = %d\n", i, h[i]);
    expect(bad == 0, "cudaMemcpy to and from registered memory");
    printf("part 1: registered memory updated by 2 kernels: %s\n", failures ? "no" : "yes");

    // Misuse of registration.
    int other[16];
    void *p = nullptr;
    unsigned flags = 0;
    expect_code(cudaErrorHostMemoryAlreadyRegistered, cudaHostRegister(h + 100, 64, 0),
                "cudaHostRegister(h + 100, 64, 0) [overlap]");
    expect_code(cudaErrorInvalidValue, cudaHostRegister(NULL, 64, 0), "cudaHostRegister(NULL, 64, 0)");
    expect_code(cudaErrorInvalidValue, cudaHostRegister(other, 0, 0), "cudaHostRegister(other, 0, 0)");
    expect_code(cudaErrorInvalidValue, cudaHostRegister(other, sizeof other, 0x100),
                "cudaHostRegister(other, 64, 0x100)");
    expect_code(cudaErrorInvalidValue, cudaHostGetFlags(&flags, h), "cudaHostGetFlags(&flags, registered)");
    expect_code(cudaErrorInvalidValue, cudaHostGetDevicePointer(&p, other, 0),
                "cudaHostGetDevicePointer(&p, unregistered, 0)");
    expect_code(cudaErrorInvalidValue, cudaHostGetDevicePointer(&p, h, 1), "cudaHostGetDevicePointer(&p, h, 1)");
    expect_code(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(h + 1), "cudaHostUnregister(h + 1)");
    expect_code(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(other), "cudaHostUnregister(other)");
    CHECK(cudaHostUnregister(h));
    expect_code(cudaErrorHostMemoryNotRegistered, cudaHostUnregister(h), "cudaHostUnregister(h) [twice]");
    CHECK(cudaPointerGetAttributes(&a, h));
    expect(a.type == cudaMemoryTypeUnregistered, "unregistered again");

    // Part 2: mapped page-locked memory from cudaHostAlloc.
    float *x, *y, *dy;
    CHECK(cudaHostAlloc((void **)&x, N * sizeof(float), cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&y, N * sizeof(float), cudaHostAllocMapped | cudaHostAllocPortable));
    CHECK(cudaHostGetFlags(&flags, y));
    expect(flags == (cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostGetFlags");
    for (int i = 0; i < N; i++) {
        x[i] = 0.5f * i;
        y[i] = (float)(i % 7);
    }
    float *dx;
    CHECK(cudaHostGetDevicePointer((void **)&dx, x, 0));
    CHECK(cudaHostGetDevicePointer((void **)&dy, y, 0));
    saxpy<<<grid, BLOCK>>>(dy, dx, 2.0f, N);
    CHECK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < N; i++)
        if (y[i] != 2.0f * (0.5f * i) + (float)(i % 7) && bad++ < 5) printf("y[%d] = %g\n", i, y[i]);
    expect(bad == 0, "a kernel writes cudaHostAlloc'd mapped memory");
    expect_code(cudaErrorHostMemoryAlreadyRegistered, cudaHostRegister(y, 64, 0),
                "cudaHostRegister(cudaHostAlloc'd, 64, 0)");
    printf("part 2: mapped cudaHostAlloc memory: %s\n", bad ? "no" : "yes");
    CHECK(cudaFreeHost(x));
    CHECK(cudaFreeHost(y));

    // Part 3: cudaMallocHost memory through the host pointer; a read-only registration.
    int *pinned;
    CHECK(cudaMallocHost((void **)&pinned, N * sizeof(int)));
    for (int i = 0; i < N; i++) pinned[i] = i;
    update<<<grid, BLOCK>>>(pinned, N, 7);
    CHECK(cudaDeviceSynchronize());
    bad = 0;
    for (int i = 0; i < N; i++)
        if (pinned[i] != updated(i, i, 7) && bad++ < 5) printf("pinned[%d] = %d\n", i, pinned[i]);
    expect(bad == 0, "a kernel writes cudaMallocHost memory through the host pointer");
    int *ro = (int *)malloc(N * sizeof(int));
    long long sum = 0, *d_sum;
    for (int i = 0; i < N; i++) {
        ro[i] = (i * 37) % 101 - 50;
        sum += ro[i];
    }
    CHECK(cudaHostRegister(ro, N * sizeof(int), cudaHostRegisterReadOnly | cudaHostRegisterMapped));
    CHECK(cudaMalloc((void **)&d_sum, sizeof(long long)));
    total<<<1, 32>>>(ro, N, d_sum);
    long long got = 0;
    CHECK(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost));
    expect(got == sum, "a kernel reads read-only registered memory");
    printf("part 3: page-locked memory through host pointers: %s\n", bad == 0 && got == sum ? "yes" : "no");
    CHECK(cudaHostUnregister(ro));
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(dev));
    CHECK(cudaFree(d_sum));
    free(ro);
    free(h);
    free(want);

    if (failures) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
