// common.h -- helpers shared by the reconverge-cudart test programs.
//
// Every runtime call is wrapped in CHECK(): on failure it prints the call,
// where it was made and the runtime's name and description of the error,
// then exits with status 1 so the test harness sees a failure.
#ifndef RECONVERGE_TEST_COMMON_H
#define RECONVERGE_TEST_COMMON_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        cudaError_t err_ = (call);                                           \
        if (err_ != cudaSuccess) {                                           \
            fprintf(stderr, "CUDA error: %s at %s:%d: %s (%s)\n", #call,     \
                    __FILE__, __LINE__, cudaGetErrorName(err_),              \
                    cudaGetErrorString(err_));                               \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

// Deterministic 32-bit linear congruential generator (Numerical Recipes
// constants), so inputs are identical on every host and every run.
static inline unsigned lcg_next(unsigned *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state;
}

// Uniform float in [0, 1) from the generator's high bits.
static inline float lcg_float(unsigned *state) {
    return (lcg_next(state) >> 8) * (1.0f / 16777216.0f);
}

#endif // RECONVERGE_TEST_COMMON_H
