// reconverge_native.h -- runs a CUDA C kernel natively, one thread after another, for `reconverge bench
// --native`. It is a shim, not a CUDA implementation: `threadIdx`, `blockIdx`, `blockDim`, `gridDim` are
// globals the driver sets before calling the kernel for each thread in turn (block by block, x fastest);
// `__global__`, `__device__` and `__constant__` vanish; atomics are plain read-modify-writes (threads
// never overlap); fences do nothing. Kernels whose threads must run together (barriers, warp shuffles,
// votes, reductions, match) cannot be expressed this way; `bench` lists them as skipped.
//
// The driver (RECONVERGE_NATIVE_MAIN) reads the launch from the file named by its first argument:
//   u32 nargs; per argument: u8 kind (0 scalar, 1 buffer), u64 length, bytes (a scalar: 8 bytes, the
//   parameter's bits, little-endian); then u32 grid[3], u32 block[3], u32 repeats.
// It runs the launch `repeats` times, each on fresh copies of the buffers, prints `ns N` per run, and
// writes the buffers after the first run to the file named by its second argument (u64 length, bytes,
// per buffer argument).
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
namespace reconverge_native {
inline dim3 thread_idx, block_idx, block_dim, grid_dim;
}
#define threadIdx (reconverge_native::thread_idx)
#define blockIdx (reconverge_native::block_idx)
#define blockDim (reconverge_native::block_dim)
#define gridDim (reconverge_native::grid_dim)
#define warpSize 32
#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict

using std::max;
using std::min;

inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
template <class T> inline T __ldg(const T *p) { return *p; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float f) { int x; std::memcpy(&x, &f, 4); return x; }

template <class T, class U> inline T atomicAdd(T *p, U v) { T o = *p; *p = o + T(v); return o; }
template <class T, class U> inline T atomicSub(T *p, U v) { T o = *p; *p = o - T(v); return o; }
template <class T, class U> inline T atomicExch(T *p, U v) { T o = *p; *p = T(v); return o; }
template <class T, class U> inline T atomicMin(T *p, U v) { T o = *p; *p = o < T(v) ? o : T(v); return o; }
template <class T, class U> inline T atomicMax(T *p, U v) { T o = *p; *p = o > T(v) ? o : T(v); return o; }
template <class T, class U> inline T atomicAnd(T *p, U v) { T o = *p; *p = o & T(v); return o; }
template <class T, class U> inline T atomicOr(T *p, U v) { T o = *p; *p = o | T(v); return o; }
template <class T, class U> inline T atomicXor(T *p, U v) { T o = *p; *p = o ^ T(v); return o; }
template <class T, class U, class V> inline T atomicCAS(T *p, U c, V v) {
    T o = *p;
    if (o == T(c)) *p = T(v);
    return o;
}
inline unsigned atomicInc(unsigned *p, unsigned m) { unsigned o = *p; *p = o >= m ? 0 : o + 1; return o; }
inline unsigned atomicDec(unsigned *p, unsigned m) { unsigned o = *p; *p = (o == 0 || o > m) ? m : o - 1; return o; }

namespace reconverge_native {

struct Slot {
    bool buffer = false;
    std::vector<unsigned char> bytes;
};

template <class A> A arg(std::vector<unsigned char> &bytes, bool buffer) {
    if constexpr (std::is_pointer_v<A>) {
        return (A)(buffer ? (void *)bytes.data() : nullptr);
    } else {
        A v{};
        std::memcpy(&v, bytes.data(), std::min(sizeof(A), bytes.size()));
        return v;
    }
}

template <class... A, std::size_t... I>
void call(void (*k)(A...), std::vector<Slot> &s, std::index_sequence<I...>) {
    k(arg<A>(s[I].bytes, s[I].buffer)...);
}

template <class T> bool get(FILE *f, T &v) { return std::fread(&v, sizeof(T), 1, f) == 1; }

template <class... A> int run(void (*k)(A...), int argc, char **argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s LAUNCH OUTPUT\n", argv[0]);
        return 2;
    }
    FILE *f = std::fopen(argv[1], "rb");
    if (!f) return 2;
    unsigned n = 0;
    if (!get(f, n) || n != sizeof...(A)) {
        std::fprintf(stderr, "the kernel takes %zu parameters, the launch gives %u\n", sizeof...(A), n);
        return 2;
    }
    std::vector<Slot> pristine(n);
    for (auto &s : pristine) {
        unsigned char kind = 0;
        unsigned long long len = 0;
        if (!get(f, kind) || !get(f, len)) return 2;
        s.buffer = kind == 1;
        s.bytes.resize(len);
        if (len && std::fread(s.bytes.data(), 1, len, f) != len) return 2;
    }
    unsigned g[3], b[3], reps = 1;
    for (auto &x : g) if (!get(f, x)) return 2;
    for (auto &x : b) if (!get(f, x)) return 2;
    if (!get(f, reps)) return 2;
    std::fclose(f);
    for (unsigned r = 0; r < reps; r++) {
        std::vector<Slot> s = pristine;
        grid_dim = {g[0], g[1], g[2]};
        block_dim = {b[0], b[1], b[2]};
        auto t0 = std::chrono::steady_clock::now();
        for (block_idx.z = 0; block_idx.z < g[2]; block_idx.z++)
            for (block_idx.y = 0; block_idx.y < g[1]; block_idx.y++)
                for (block_idx.x = 0; block_idx.x < g[0]; block_idx.x++)
                    for (thread_idx.z = 0; thread_idx.z < b[2]; thread_idx.z++)
                        for (thread_idx.y = 0; thread_idx.y < b[1]; thread_idx.y++)
                            for (thread_idx.x = 0; thread_idx.x < b[0]; thread_idx.x++)
                                call(k, s, std::index_sequence_for<A...>{});
        auto t1 = std::chrono::steady_clock::now();
        std::printf("ns %lld\n", (long long)std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        if (r == 0) {
            FILE *o = std::fopen(argv[2], "wb");
            if (!o) return 2;
            for (auto &x : s) {
                if (!x.buffer) continue;
                unsigned long long len = x.bytes.size();
                std::fwrite(&len, sizeof len, 1, o);
                std::fwrite(x.bytes.data(), 1, len, o);
            }
            std::fclose(o);
        }
    }
    return 0;
}

} // namespace reconverge_native

#define RECONVERGE_NATIVE_MAIN(kernel) \
    int main(int argc, char **argv) { return reconverge_native::run(kernel, argc, argv); }
