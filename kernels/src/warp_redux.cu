// warp_redux -- sm_80 warp intrinsics: __reduce_add_sync, __reduce_max_sync (PTX redux.sync,
// sm_80+ only) and __match_any_sync (match.any.sync), including a redux over the
// __activemask() of a divergent branch.
// ptx-variants: sm_80
// (No sm_70 variant: redux.sync needs sm_80; the NVRTC option is -arch=compute_80.)
//
// Warp size: built on `warpSize` (PTX WARP_SZ) with the full member mask
// warpSize >= 32 ? 0xffffffff : (1 << warpSize) - 1; defined for power-of-two warp sizes
// 4..32 (PTX masks are 32 bits); blockDim.x must be a multiple of the warp size.
//
// Outputs, independent of the warp size and of the grouping of threads:
//   stats[0] = sum of in[]            (__reduce_add_sync, lane 0 atomically adds)
//   stats[1] = max of in[]            (__reduce_max_sync, lane 0 atomicMax)
//   stats[2] = sum of the odd in[]    (inside `if (v & 1)`: __reduce_add_sync over
//                                      __activemask(), the group leader adds)
//   key_hist[k] = #in[] with (in & 7) == k  (__match_any_sync groups by key; the lowest lane
//                                      of each group adds the group size)
//
// Launch: grid (2,1,1), block (64,1,1).
// Arguments: in: int[128] (values 0..999); key_hist: int[8] (zero-filled); stats: int[3]
//            (zero-filled).

__device__ __forceinline__ unsigned full_mask()
{
    return warpSize >= 32 ? 0xffffffffu : ((1u << warpSize) - 1u);
}

extern "C" __global__ void warp_redux(const int *in, int *key_hist, int *stats)
{
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    unsigned full = full_mask();
    int v = in[gtid];

    unsigned s = __reduce_add_sync(full, (unsigned)v);
    int mx = __reduce_max_sync(full, v);
    if (lane == 0) {
        atomicAdd(&stats[0], (int)s);
        atomicMax(&stats[1], mx);
    }

    int key = v & 7;
    unsigned group = __match_any_sync(full, key);
    if (lane == __ffs(group) - 1)
        atomicAdd(&key_hist[key], __popc(group));

    if (v & 1) {
        unsigned am = __activemask();
        unsigned os = __reduce_add_sync(am, (unsigned)v);
        if (lane == __ffs(am) - 1)
            atomicAdd(&stats[2], (int)os);
    }
}
