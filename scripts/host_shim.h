// host_shim.h -- run the suite's CUDA kernels as plain C++ on the host (scripts/host_check.py).
//
// Every CUDA thread is a POSIX thread; the CTAs of a launch run one after another. This is a
// MIMD execution with real concurrency: __syncthreads() is a pthread barrier over the CTA,
// atomics are GCC __atomic builtins, __shared__ variables are function statics (one copy,
// reused by consecutive CTAs), float arithmetic is IEEE single precision with
// -ffp-contract=off (one rounding per operation, like the --fmad=false PTX).
//
// Warp intrinsics use a warp size of 32 and assume full, convergent warps for full-mask
// calls (the kernels that use them launch multiples of 32 threads). __activemask() returns
// only the calling thread's own bit: in a MIMD run a divergent branch is entered by each
// thread on its own, which is one legal grouping -- the kernels' outputs are written to be
// independent of the grouping, and this checks that claim for the extreme case.
#pragma once
#include <pthread.h>
#include <stdint.h>
#include <string.h>

struct uint3 { unsigned x, y, z; };
typedef uint3 dim3;

static thread_local uint3 threadIdx;
static thread_local uint3 blockIdx;
static dim3 blockDim;
static dim3 gridDim;

#define warpSize 32
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __shared__ static

static pthread_barrier_t host_block_barrier;

struct HostWarp {
    pthread_barrier_t bar;
    uint32_t slot[32];
};
static HostWarp host_warps[64];
static thread_local int host_lane;
static thread_local int host_warp;

static inline void __syncthreads() { pthread_barrier_wait(&host_block_barrier); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static inline int max(int a, int b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }

template <class T> static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <class T> static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T> static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
template <class T> static inline T atomicCAS(T *p, T cmp, T val)
{
    __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;   // the old value
}
template <class T> static inline T atomicMin(T *p, T v)
{
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}
template <class T> static inline T atomicMax(T *p, T v)
{
    T old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {}
    return old;
}

static inline bool host_singleton(unsigned mask) { return mask == (1u << host_lane); }

// All lanes of the warp publish a value; returns the published array (valid until the next
// call's first barrier, which every lane reaches only after reading).
static inline const uint32_t *host_publish(uint32_t v)
{
    HostWarp &w = host_warps[host_warp];
    w.slot[host_lane] = v;
    pthread_barrier_wait(&w.bar);
    return w.slot;
}
static inline void host_done() { pthread_barrier_wait(&host_warps[host_warp].bar); }

static inline int host_shfl(unsigned mask, int v, int src)
{
    if (host_singleton(mask)) return v;
    const uint32_t *s = host_publish((uint32_t)v);
    int r = (int)s[src];
    host_done();
    return r;
}
static inline int __shfl_sync(unsigned mask, int v, int src) { return host_shfl(mask, v, src & 31); }
static inline int __shfl_down_sync(unsigned mask, int v, unsigned d)
{
    int src = host_lane + (int)d;
    return host_shfl(mask, v, src < 32 ? src : host_lane);
}
static inline int __shfl_xor_sync(unsigned mask, int v, int d)
{
    int src = host_lane ^ d;
    return host_shfl(mask, v, src < 32 ? src : host_lane);
}
static inline unsigned __ballot_sync(unsigned mask, int pred)
{
    if (host_singleton(mask)) return pred ? mask : 0u;
    const uint32_t *s = host_publish(pred ? 1u : 0u);
    unsigned r = 0;
    for (int l = 0; l < 32; l++)
        if (((mask >> l) & 1u) && s[l]) r |= 1u << l;
    host_done();
    return r;
}
static inline unsigned __activemask() { return 1u << host_lane; }
static inline unsigned __match_any_sync(unsigned mask, int key)
{
    if (host_singleton(mask)) return mask;
    const uint32_t *s = host_publish((uint32_t)key);
    unsigned r = 0;
    for (int l = 0; l < 32; l++)
        if (((mask >> l) & 1u) && s[l] == (uint32_t)key) r |= 1u << l;
    host_done();
    return r;
}
static inline unsigned __reduce_add_sync(unsigned mask, unsigned v)
{
    if (host_singleton(mask)) return v;
    const uint32_t *s = host_publish(v);
    unsigned r = 0;
    for (int l = 0; l < 32; l++)
        if ((mask >> l) & 1u) r += s[l];
    host_done();
    return r;
}
static inline int __reduce_max_sync(unsigned mask, int v)
{
    if (host_singleton(mask)) return v;
    const uint32_t *s = host_publish((uint32_t)v);
    int r = v;
    for (int l = 0; l < 32; l++)
        if (((mask >> l) & 1u) && (int)s[l] > r) r = (int)s[l];
    host_done();
    return r;
}
