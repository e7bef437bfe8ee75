// async_copy.cu -- asynchronous copies and barrier objects (sm_80 PTX: cp.async, mbarrier).
//
// Part 1: a 1-D 5-point stencil whose tiles stream through shared memory with
//         cuda::pipeline and cuda::memcpy_async (cp.async.ca/cg, commit_group,
//         wait_group): two stages in flight, each thread consuming the tile its
//         block's neighbours copied. Checked against the host.
// Part 2: a producer/consumer exchange through a cuda::barrier
//         (mbarrier.init/arrive/test_wait): every thread writes its value to
//         shared memory, arrives, waits, and reads the mirror thread's value;
//         three rounds reuse the barrier (its phase flips each time).
// Part 3: __pipeline_memcpy_async with zero fill (cp.async's source size below
//         the copy size).
#include "common.h"
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_pipeline.h>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define TILE 128
#define TILES 6
#define N (TILE * TILES)

__global__ void stencil(const float *in, float *out) {
    __shared__ float s[2][TILE + 4];
    auto block = cg::this_thread_block();
    cuda::pipeline<cuda::thread_scope_thread> p = cuda::make_pipeline();
    int t = threadIdx.x;
    auto fetch = [&](int tile, int stage) {
        p.producer_acquire();
        int base = tile * TILE - 2;
        cuda::memcpy_async(&s[stage][t + 2], &in[base + t + 2], sizeof(float), p);
        if (t < 2) {
            int lo = base + t, hi = base + TILE + 2 + t;
            cuda::memcpy_async(&s[stage][t], &in[lo < 0 ? 0 : lo], sizeof(float), p);
            cuda::memcpy_async(&s[stage][TILE + 2 + t], &in[hi >= N ? N - 1 : hi], sizeof(float), p);
        }
        p.producer_commit();
    };
    fetch(0, 0);
    for (int tile = 0; tile < TILES; ++tile) {
        if (tile + 1 < TILES) fetch(tile + 1, (tile + 1) & 1);
        cuda::pipeline_consumer_wait_prior<1>(p);
        block.sync();
        const float *w = s[tile & 1];
        out[tile * TILE + t] = w[t] + 2 * w[t + 1] + 4 * w[t + 2] + 2 * w[t + 3] + w[t + 4];
        block.sync();
        p.consumer_release();
    }
}

__global__ void exchange(const int *in, int *out, int rounds) {
    __shared__ int buf[64];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    int v = in[threadIdx.x];
    for (int r = 0; r < rounds; ++r) {
        buf[threadIdx.x] = v;
        bar.arrive_and_wait();
        v = buf[63 - threadIdx.x] + r;
        bar.arrive_and_wait();
    }
    out[threadIdx.x] = v;
}

__global__ void zero_fill(const int *in, int *out) {
    __shared__ int4 s[32];
    // Each thread copies 16 bytes, the last 4 * (threadIdx.x % 5) of them zero-filled.
    __pipeline_memcpy_async(&s[threadIdx.x], &in[4 * threadIdx.x], 16, 4 * (threadIdx.x % 5));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    int4 v = s[threadIdx.x];
    out[4 * threadIdx.x] = v.x;
    out[4 * threadIdx.x + 1] = v.y;
    out[4 * threadIdx.x + 2] = v.z;
    out[4 * threadIdx.x + 3] = v.w;
}

int main() {
    int failures = 0;
    // Part 1.
    static float h_in[N], h_out[N];
    unsigned seed = 7;
    for (int i = 0; i < N; ++i) h_in[i] = (float)(lcg_next(&seed) % 100);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof h_in));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice));
    stencil<<<1, TILE>>>(d_in, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) {
        auto at = [&](int k) { return h_in[k < 0 ? 0 : (k >= N ? N - 1 : k)]; };
        float want = at(i - 2) + 2 * at(i - 1) + 4 * at(i) + 2 * at(i + 1) + at(i + 2);
        if (h_out[i] != want && failures++ < 5) printf("stencil[%d] = %g, want %g\n", i, h_out[i], want);
    }
    // Part 2.
    int h_v[64], h_r[64];
    for (int i = 0; i < 64; ++i) h_v[i] = 1000 * i;
    int *d_v, *d_r;
    CHECK(cudaMalloc(&d_v, sizeof h_v));
    CHECK(cudaMalloc(&d_r, sizeof h_r));
    CHECK(cudaMemcpy(d_v, h_v, sizeof h_v, cudaMemcpyHostToDevice));
    exchange<<<1, 64>>>(d_v, d_r, 3);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_r, d_r, sizeof h_r, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64; ++i) {
        int v = h_v[i];
        int cur[64];
        for (int k = 0; k < 64; ++k) cur[k] = h_v[k];
        for (int r = 0; r < 3; ++r) {
            int next[64];
            for (int k = 0; k < 64; ++k) next[k] = cur[63 - k] + r;
            for (int k = 0; k < 64; ++k) cur[k] = next[k];
        }
        v = cur[i];
        if (h_r[i] != v && failures++ < 5) printf("exchange[%d] = %d, want %d\n", i, h_r[i], v);
    }
    // Part 3.
    int h_z[128], h_zo[128];
    for (int i = 0; i < 128; ++i) h_z[i] = i + 1;
    int *d_z, *d_zo;
    CHECK(cudaMalloc(&d_z, sizeof h_z));
    CHECK(cudaMalloc(&d_zo, sizeof h_zo));
    CHECK(cudaMemcpy(d_z, h_z, sizeof h_z, cudaMemcpyHostToDevice));
    zero_fill<<<1, 32>>>(d_z, d_zo);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_zo, d_zo, sizeof h_zo, cudaMemcpyDeviceToHost));
    for (int t = 0; t < 32; ++t) {
        int kept = 4 - t % 5;  // words that come from memory
        if (kept < 0) kept = 0;
        for (int k = 0; k < 4; ++k) {
            int want = k < kept ? h_z[4 * t + k] : 0;
            if (h_zo[4 * t + k] != want && failures++ < 5) printf("zero_fill[%d] = %d, want %d\n", 4 * t + k, h_zo[4 * t + k], want);
        }
    }
    if (failures) {
        printf("FAIL: %d mismatches\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
