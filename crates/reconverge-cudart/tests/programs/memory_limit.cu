// memory_limit.cu -- managed memory counts against the device's memory, and
// copies need no second buffer of their size.
//
// Run it under `reconverge exec --max-memory 64M` (any limit from 48 MiB to
// 1 GiB works): the device then has 64 MiB. A managed allocation larger than
// what is free fails with cudaErrorMemoryAllocation, and one that fits leaves
// less for cudaMalloc (device and managed memory share the limit, as
// cudaMemGetInfo shows). Then it copies 16 MiB host to device, device to
// device and device to host and checks, from the process's peak resident
// memory (getrusage), that the copies added less than 8 MiB to it: a copy
// staged through a temporary buffer of its size would add 16 MiB. Prints
// yes/no facts and PASS.
#include <sys/resource.h>
#include <cstring>
#include "common.h"

#define COPY (16u << 20)

static long peak_kib() {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static int failures = 0;

static void fact(const char *what, bool yes) {
    printf("%s: %s\n", what, yes ? "yes" : "no");
    if (!yes) failures++;
}

int main() {
    size_t free0, total;
    CHECK(cudaMemGetInfo(&free0, &total));
    if (total < (48u << 20) || total > (1u << 30)) {
        printf("run with --max-memory 64M (the device has %zu bytes)\nFAIL\n", total);
        return 1;
    }
    void *big = NULL, *managed = NULL, *dev = NULL;
    fact("managed memory beyond the limit is refused",
         cudaMallocManaged(&big, total + 1) == cudaErrorMemoryAllocation && big == NULL);
    (void)cudaGetLastError();  // clears the expected error
    size_t half = total / 2 + (1u << 20);
    CHECK(cudaMallocManaged(&managed, half));
    size_t free1;
    CHECK(cudaMemGetInfo(&free1, &total));
    fact("managed memory is counted as used", free1 + half <= free0);
    fact("cudaMalloc shares the limit with it", cudaMalloc(&dev, half) == cudaErrorMemoryAllocation);
    (void)cudaGetLastError();
    CHECK(cudaFree(managed));
    CHECK(cudaMalloc(&dev, half));
    CHECK(cudaFree(dev));

    // Copies: the host buffer and both device buffers are resident before
    // the peak is read, so only a temporary buffer could raise it.
    char *host = (char *)malloc(COPY);
    char *back = (char *)malloc(COPY);
    // Both written (non-zero: a compiler may turn malloc and a zero fill into calloc, whose pages are
    // not resident until written).
    for (unsigned i = 0; i < COPY; i++) host[i] = (char)(i * 7 + 1);
    memset(back, 0xa5, COPY);
    char *a, *b;
    CHECK(cudaMalloc((void **)&a, COPY));
    CHECK(cudaMalloc((void **)&b, COPY));
    CHECK(cudaMemset(a, 1, COPY));
    CHECK(cudaMemset(b, 2, COPY));
    long before = peak_kib();
    CHECK(cudaMemcpy(a, host, COPY, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, a, COPY, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy(back, b, COPY, cudaMemcpyDeviceToHost));
    long grown = peak_kib() - before;
    fact("the copies round-trip", memcmp(host, back, COPY) == 0);
    fact("the copies added less than 8 MiB to the peak", grown < 8 * 1024);
    fprintf(stderr, "peak grew by %ld KiB\n", grown);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    free(host);
    free(back);
    printf(failures == 0 ? "PASS\n" : "FAIL\n");
    return failures == 0 ? 0 : 1;
}
