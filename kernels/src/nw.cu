// nw -- Needleman-Wunsch global alignment, Rodinia-style: the score matrix is processed in
// BxB tiles in anti-diagonal (wavefront) order; inside a tile the CTA sweeps the cell
// anti-diagonals in shared memory, growing then shrinking (Rodinia's needle_cuda_shared_1/2).
// ptx-variants: sm_80 sm_70
//
// Divergence: the tid-dependent triangular tests `tx <= m` of the two diagonal loops (one
// more thread joins / leaves each step), a __syncthreads() after every diagonal, and a
// uniform skip of tiles that are not on the current tile diagonal. All tiles run inside ONE
// launch of ONE CTA (Rodinia launches one kernel per tile diagonal; the simulator runs single
// launches, and barriers order the global score writes between tiles).
// `#pragma unroll 1` keeps the two diagonal loops loops (NVVM otherwise unrolls all 31
// diagonals into straight-line code with 31 barriers).
//
// Launch: grid (1,1,1), block (16,1,1): blockDim.x must equal the tile size B = 16.
// Arguments: reference: int[cols*cols] (substitution scores, row 0 / column 0 unused);
//            score: int[cols*cols], row 0 and column 0 preset to -i*penalty, rest 0 (in/out);
//            cols = L + 1 with L a multiple of 16 (the suite: L = 32, cols = 33); penalty.

#define B 16

__device__ __forceinline__ int maximum(int a, int b, int c)
{
    int k = a <= b ? b : a;
    return k <= c ? c : k;
}

extern "C" __global__ void nw(const int *reference, int *score, int cols, int penalty)
{
    __shared__ int temp[B + 1][B + 1];
    __shared__ int ref[B][B];

    int tx = threadIdx.x;
    int nb = (cols - 1) / B;

    for (int d = 0; d < 2 * nb - 1; d++) {          // tile anti-diagonal
        for (int bx = 0; bx < nb; bx++) {
            int by = d - bx;
            if (by < 0 || by >= nb)                  // uniform: tile not on this diagonal
                continue;
            int base = cols * B * by + B * bx;       // top-left halo cell of the tile

            for (int ty = 0; ty < B; ty++)
                ref[ty][tx] = reference[base + cols * (ty + 1) + tx + 1];
            if (tx == 0)
                temp[0][0] = score[base];
            temp[tx + 1][0] = score[base + cols * (tx + 1)];
            temp[0][tx + 1] = score[base + tx + 1];
            __syncthreads();

            // growing diagonals: thread tx computes cell (y = m - tx + 1, x = tx + 1)
#pragma unroll 1
            for (int m = 0; m < B; m++) {
                if (tx <= m) {
                    int x = tx + 1;
                    int y = m - tx + 1;
                    temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1],
                                         temp[y][x - 1] - penalty,
                                         temp[y - 1][x] - penalty);
                }
                __syncthreads();
            }
            // shrinking diagonals
#pragma unroll 1
            for (int m = B - 2; m >= 0; m--) {
                if (tx <= m) {
                    int x = tx + B - m;
                    int y = B - tx;
                    temp[y][x] = maximum(temp[y - 1][x - 1] + ref[y - 1][x - 1],
                                         temp[y][x - 1] - penalty,
                                         temp[y - 1][x] - penalty);
                }
                __syncthreads();
            }

            for (int ty = 0; ty < B; ty++)
                score[base + cols * (ty + 1) + tx + 1] = temp[ty + 1][tx + 1];
            __syncthreads();
        }
    }
}
