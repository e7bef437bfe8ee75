// launches.cu -- many tiny launches, for exec's summary and its memory.
//
// Usage: launches [N]  (default 100). Launches `tick` (one block of 32
// threads; thread t loops t % 4 + 1 times, so the warp diverges) N times on
// one counter buffer, copies it back and checks that every thread counted
// its launches: thread t adds t % 4 + 1 per launch. Prints
// "pid P" on stderr first (so a test can tell the process is running and
// find it), then "launches N" and PASS. With N = 0 it launches until it is
// killed (a long-running program for the signal tests).
#include <unistd.h>
#include "common.h"

#define THREADS 32

__global__ void tick(volatile unsigned *count) {
    int t = threadIdx.x;
    for (int k = 0; k <= t % 4; ++k) count[t] += 1;  // volatile: one add per trip
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100;
    fprintf(stderr, "pid %d\n", (int)getpid());
    fflush(stderr);
    unsigned *d;
    CHECK(cudaMalloc((void **)&d, THREADS * sizeof(unsigned)));
    CHECK(cudaMemset(d, 0, THREADS * sizeof(unsigned)));
    for (long i = 0; n == 0 || i < n; ++i) {
        tick<<<1, THREADS>>>(d);
        CHECK(cudaGetLastError());
    }
    unsigned h[THREADS];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (int t = 0; t < THREADS; ++t) {
        unsigned want = (unsigned)(n * (t % 4 + 1));
        if (h[t] != want) {
            printf("thread %d counted %u, expected %u\nFAIL\n", t, h[t], want);
            return 1;
        }
    }
    CHECK(cudaFree(d));
    printf("launches %ld\n", n);
    printf("PASS\n");
    return 0;
}
