// uninit.cu -- the runtime leaves the program's malloc heap as it found it.
//
// Programs that read malloc'ed memory they never wrote (PolyBench's ATAX and
// GESUMMV) get, on a fresh heap, zero pages from the system. The runtime
// registers the program's device code before main, parsing its PTX; if it
// did that on the program's heap, the chunks it freed would come back from
// the program's first mallocs holding the runtime's bytes (and glibc's
// randomised pointers), different on every run. First thing in main, this
// program mallocs one block of each of a range of sizes, never writes them,
// and counts their nonzero bytes. Prints the count and PASS when it is 0.
// (It reads uninitialised memory on purpose; NVIDIA's own runtime may leave
// its freed chunks on the heap, so on a GPU this may print FAIL.)
#include <cstdio>
#include <cstdlib>

__global__ void touch(int *p) { p[threadIdx.x] = threadIdx.x; }

int main() {
    static const size_t sizes[] = {16, 24, 32, 48, 64, 96, 128, 200, 256, 512, 1000, 1024, 2048, 4096, 10000, 16384, 65536};
    size_t nonzero = 0;
    for (size_t n : sizes) {
        volatile unsigned char *p = (volatile unsigned char *)malloc(n);
        for (size_t i = 0; i < n; i++) nonzero += p[i] != 0;
    }
    printf("nonzero bytes in fresh mallocs: %zu\n", nonzero);
    printf(nonzero == 0 ? "PASS\n" : "FAIL\n");
    return nonzero == 0 ? 0 : 1;
}
