// badfatbin.cu -- a damaged fat binary is refused with exit status 2, never a crash.
//
// Registers a fat binary of its own whose header lies, as a damaged program
// file would: `badfatbin 1` claims 0x0fff0000 bytes of entries (about 256 MiB)
// where 64 are stored, with a first entry whose payload claims 8 MiB;
// `badfatbin 2` claims the 64 bytes that are there, but the entry still claims
// 8 MiB. The runtime must name the problem and end the process with status 2
// before `main` goes on (on NVIDIA's runtime the call fails too). Prints
// "registering" first; reaching the end prints FAIL.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" void **__cudaRegisterFatBinary(void *fat_cubin);

// `__fatBinC_Wrapper_t`: what nvcc passes to __cudaRegisterFatBinary.
struct Wrapper {
    int magic;
    int version;
    const void *data;
    void *filename_or_fatbins;
};

// A fat binary header (16 bytes) and one PTX entry header (64 bytes).
alignas(8) static unsigned char fatbin[16 + 64];

static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

int main(int argc, char **argv) {
    int which = argc > 1 ? atoi(argv[1]) : 1;
    put32(fatbin, 0xBA55ED50u);                        // magic
    put16(fatbin + 4, 1);                              // version
    put16(fatbin + 6, 16);                             // header size
    put64(fatbin + 8, which == 1 ? 0x0fff0000u : 64);  // entries' size
    unsigned char *e = fatbin + 16;
    put16(e, 1);                                       // kind: PTX
    put32(e + 4, 64);                                  // entry header size
    put64(e + 8, 8u << 20);                            // payload size: 8 MiB
    put32(e + 28, 80);                                 // arch
    static Wrapper w = {0x466243b1, 1, fatbin, NULL};
    printf("registering\n");
    fflush(stdout);
    __cudaRegisterFatBinary(&w);
    printf("FAIL\n");
    return 1;
}
