// pointers.cu -- pointer attributes and the peer calls of a one-device machine.
//
// cudaPointerGetAttributes on cudaMalloc'd memory (and a pointer into it), a
// __device__ variable's address, managed memory, cudaMallocHost memory (and a
// pointer into it: mapped, so its device pointer is the host pointer, as with
// unified addressing) and a stack variable: type, device and the two pointers
// as CUDA 11+ report them. cudaDeviceCanAccessPeer(0, 0) is 0; enabling peer
// access to the only device is cudaErrorInvalidDevice, disabling it
// cudaErrorPeerAccessNotEnabled, device 1 is invalid; cudaMemcpyPeer and
// cudaMemcpyPeerAsync between device 0 and itself copy as device-to-device
// copies (checked after a kernel reads the copy).
#include "common.h"
#include <cstring>

__device__ int dev_var[4];

__global__ void twice(const int *in, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2 * in[i];
}

static int failures = 0;

static void expect(bool ok, const char *what) {
    if (!ok && failures++ < 10) printf("wrong: %s\n", what);
}

static void attrs(const void *p, int type, int device, const void *dptr, const void *hptr, const char *what) {
    cudaPointerAttributes a;
    memset(&a, 0x5a, sizeof a);
    CHECK(cudaPointerGetAttributes(&a, p));
    bool ok = a.type == type && a.device == device && a.devicePointer == dptr && a.hostPointer == hptr;
    if (!ok && failures++ < 10)
        printf("wrong: %s: type %d device %d dptr %p hptr %p\n", what, (int)a.type, a.device, a.devicePointer,
               a.hostPointer);
}

int main() {
    const int n = 256;
    int *d, *m, *h, stack = 0;
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMallocManaged(&m, n * sizeof(int)));
    CHECK(cudaMallocHost(&h, n * sizeof(int)));
    void *var;
    CHECK(cudaGetSymbolAddress(&var, dev_var));
    attrs(d, cudaMemoryTypeDevice, 0, d, nullptr, "cudaMalloc");
    attrs(d + 17, cudaMemoryTypeDevice, 0, d + 17, nullptr, "inside cudaMalloc");
    attrs(var, cudaMemoryTypeDevice, 0, var, nullptr, "__device__ variable");
    attrs(m, cudaMemoryTypeManaged, 0, m, m, "managed");
    attrs(h, cudaMemoryTypeHost, 0, h, h, "cudaMallocHost");
    attrs(h + 100, cudaMemoryTypeHost, 0, h + 100, h + 100, "inside cudaMallocHost");
    attrs(&stack, cudaMemoryTypeUnregistered, -2, nullptr, nullptr, "stack");
    expect(cudaPointerGetAttributes(nullptr, d) == cudaErrorInvalidValue, "NULL attributes");
    cudaGetLastError();

    int can = 7;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 0));
    expect(can == 0, "a device is not its own peer");
    expect(cudaDeviceCanAccessPeer(&can, 0, 1) == cudaErrorInvalidDevice, "device 1 does not exist");
    expect(cudaDeviceEnablePeerAccess(0, 0) == cudaErrorInvalidDevice, "enable peer access to itself");
    expect(cudaDeviceEnablePeerAccess(0, 1) == cudaErrorInvalidValue, "flags must be 0");
    expect(cudaDeviceDisablePeerAccess(0) == cudaErrorPeerAccessNotEnabled, "disable never enabled");
    cudaGetLastError();

    for (int i = 0; i < n; ++i) h[i] = i * 3 - 100;
    int *d2;
    CHECK(cudaMalloc(&d2, n * sizeof(int)));
    CHECK(cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpyPeer(d2, 0, d, 0, n * sizeof(int)));
    twice<<<(n + 127) / 128, 128>>>(d2, m, n);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < n; ++i) expect(m[i] == 2 * h[i], "cudaMemcpyPeer's copy");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpyPeerAsync(d, 0, m, 0, n * sizeof(int), s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) expect(h[i] == m[i], "cudaMemcpyPeerAsync's copy");
    expect(cudaMemcpyPeer(d2, 1, d, 0, 4) == cudaErrorInvalidDevice, "a peer copy to device 1");
    cudaGetLastError();

    CHECK(cudaFreeHost(h));
    if (failures) {
        printf("FAIL: %d\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
