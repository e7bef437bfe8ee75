// capri -- seed 002 Fig. 9: the CAPRI report's two-loop test case for PDOM vs TBC vs CAPRI.
// ptx-variants: sm_80 sm_70
//
// Divergence: two loops of DATA_LENGTH iterations, each with a tid-dependent if/else in the
// body (a divergent branch executed DATA_LENGTH times per warp).
//   loop 1: `tid < 16 || tid > 47` -- with 32-wide warps the first half of warp 0 and the
//           second half of warp 1 take the then-arm: the then-arm lanes of the two warps are
//           disjoint (and so are the else-arm lanes), so thread block compaction can pack
//           each arm into one warp (compaction-adequate branch).
//   loop 2: `threadIdx.x % 2 == 0` -- even/odd lanes: every warp has both halves in the same
//           lanes, so compaction cannot reduce the warp count (compaction-inadequate branch).
//
// Changes from the seed (documented so the kernel is race-free and the arms distinguishable):
//  * the seed writes `out[i]` from every thread (all threads race on out[0..31]); here thread
//    tid writes `out1[tid*DATA_LENGTH + i]` (loop 1) and `out2[tid*DATA_LENGTH + i]` (loop 2),
//    so both loops' results stay visible;
//  * the seed's two arms are identical (`in1[i]+in2[i]`), which a compiler merges into
//    straight-line code; here the else-arms compute different arithmetic on different loads
//    (loads cannot be speculated, so the branch survives as a real branch in the PTX);
//  * `#pragma unroll 1` keeps each loop a loop, as in the figure (otherwise NVVM fully
//    unrolls the 32 iterations).
//
// Launch: grid (1,1,1), block (64,1,1) -- 64 threads, one thread block, as in the report.
// Arguments: in1, in2: int[32]; out1, out2: int[64*32] (zero-filled).

#define DATA_LENGTH 32

extern "C" __global__ void capri(const int *in1, const int *in2, int *out1, int *out2)
{
    int tid = threadIdx.x;
    int i;

#pragma unroll 1
    for (i = 0; i < DATA_LENGTH; i++) {
        // first half of first warp
        // and second half of 2nd warp
        if (tid < 16 || tid > 47)
            out1[tid * DATA_LENGTH + i] = in1[i] + in2[i];
        else
            out1[tid * DATA_LENGTH + i] = in1[i] * 3 - in2[DATA_LENGTH - 1 - i];
    }

#pragma unroll 1
    for (i = 0; i < DATA_LENGTH; i++) {
        // even threads not compactable
        if (threadIdx.x % 2 == 0)
            out2[tid * DATA_LENGTH + i] = in1[i] + in2[i];
        else
            out2[tid * DATA_LENGTH + i] = (in1[DATA_LENGTH - 1 - i] ^ in2[i]) - i;
    }
}
