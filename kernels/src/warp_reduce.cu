// warp_reduce -- warp-level intrinsics: __shfl_down_sync / __shfl_xor_sync / __shfl_sync
// reductions and exchanges, __ballot_sync + __popc, and __activemask inside a divergent
// branch (warp-aggregated atomics).
// ptx-variants: sm_80 sm_70
//
// Warp size: this kernel is about warp intrinsics, so it uses `warpSize` (the PTX run-time
// constant WARP_SZ, not a literal 32) for lane numbers and loop bounds, and builds the full
// member mask from it: warpSize >= 32 ? 0xffffffff : (1 << warpSize) - 1. PTX member masks
// and ballots are 32 bits wide, so the results below are defined for power-of-two warp sizes
// 4..32; at 64 the simulator has to define how .b32 masks name lanes 32..63. blockDim.x must
// be a multiple of the warp size (full warps) because the shuffles name the full mask.
//
// Every output is independent of the warp size and of how threads are grouped:
//   stats[0] = sum of in[]         (shfl_down tree per warp, lane 0 atomically adds)
//   stats[1] = max of in[]         (shfl_xor butterfly per warp, lane 0 atomicMax)
//   stats[2] = #odd in[]           (__ballot_sync + __popc per warp)
//   stats[3] = #in[] % 3 == 0      (inside `if (v % 3 == 0)`: the leader of __activemask()
//                                   adds __popc(__activemask()) -- a warp-aggregated atomic,
//                                   correct for any partition of the taken threads into groups)
//   stats[4] = #(in[] % 3 == 0 and in[] & 4)  (__ballot_sync(__activemask(), ...) inside it)
//   pairs[2t] = in[t ^ 1]          (__shfl_xor_sync lane ^ 1)
//   pairs[2t+1] = in of the next lane within t's group of 4 (__shfl_sync, rotate in quads)
// The shfl_down reduction guards each add with `lane + off < warpSize`, so it is also correct
// for warp sizes that are not powers of two.
//
// Launch: grid (2,1,1), block (128,1,1).
// Arguments: in: int[256] (values 0..999); pairs: int[512] (zero-filled); stats: int[5]
//            (zero-filled).

__device__ __forceinline__ unsigned full_mask()
{
    return warpSize >= 32 ? 0xffffffffu : ((1u << warpSize) - 1u);
}

extern "C" __global__ void warp_reduce(const int *in, int *pairs, int *stats)
{
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    unsigned full = full_mask();
    int v = in[gtid];

    // 1. tree reduction with shfl_down: after the step with offset `off`, lane l holds the
    //    sum of lanes [l, l + 2*off) that exist.
    int s = v;
    for (int off = 1; off < warpSize; off <<= 1) {
        int o = __shfl_down_sync(full, s, off);
        if (lane + off < warpSize)
            s += o;
    }
    if (lane == 0)
        atomicAdd(&stats[0], s);

    // 2. butterfly all-reduce (max) with shfl_xor
    int m = v;
    for (int off = 1; off < warpSize; off <<= 1)
        m = max(m, __shfl_xor_sync(full, m, off));
    if (lane == 0)
        atomicMax(&stats[1], m);

    // 3. vote
    unsigned odd = __ballot_sync(full, v & 1);
    if (lane == 0)
        atomicAdd(&stats[2], __popc(odd));

    // 4. __activemask inside a divergent branch: warp-aggregated atomics
    if (v % 3 == 0) {
        unsigned am = __activemask();
        int leader = __ffs(am) - 1;
        unsigned b4 = __ballot_sync(am, v & 4);
        if (lane == leader) {
            atomicAdd(&stats[3], __popc(am));
            atomicAdd(&stats[4], __popc(b4));
        }
    }

    // 5. exchanges that do not cross groups of 4 lanes
    int sw = __shfl_xor_sync(full, v, 1);
    int rot = __shfl_sync(full, v, (lane & ~3) | ((lane + 1) & 3));
    pairs[2 * gtid] = sw;
    pairs[2 * gtid + 1] = rot;
}
