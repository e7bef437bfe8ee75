// printf.cu -- device printf from divergent branches.
//
// Two blocks of 8 threads. Threads whose index is a multiple of 3 print from
// one call site, threads with odd (thread + block) from another, the rest stay
// silent. The device output is the test's expectation; the shim prints each
// launch's lines in (block, thread) order when the launch ends, so the
// program's complete output is:
//
//   block 0 thread 0 value 0 -5.00 three
//   block 0 thread 1 value 10 -2.50 odd
//   block 0 thread 3 value 30  2.50 three
//   block 0 thread 5 value 50  7.50 odd
//   block 0 thread 6 value 60 10.00 three
//   block 0 thread 7 value 70 12.50 odd
//   block 1 thread 0 value 1  5.00 three
//   block 1 thread 2 value 21 10.00 odd
//   block 1 thread 3 value 31 12.50 three
//   block 1 thread 4 value 41 15.00 odd
//   block 1 thread 6 value 61 20.00 three
//   PASS
//
// (Real hardware prints the same lines, in an unspecified order.) The host
// prints nothing before the kernel's output has been flushed.
#include "common.h"

__global__ void talk() {
    int t = threadIdx.x, b = blockIdx.x;
    int value = t * 10 + b;
    float f = t * 2.5f - 5.0f + b * 10.0f;
    if (t % 3 == 0) {
        printf("block %d thread %d value %d %5.2f %s\n", b, t, value, f, "three");
    } else if ((t + b) & 1) {
        printf("block %d thread %d value %d %5.2f %s\n", b, t, value, f, "odd");
    }
}

int main() {
    talk<<<2, 8>>>();
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    printf("PASS\n");
    return 0;
}
