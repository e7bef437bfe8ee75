// graph_topk -- capped neighbour search on the 16384-vertex R-MAT graph: each vertex counts its
// in-neighbours of higher priority and stops at the first K = 4 (the capped scan of Luby-style
// independent-set and k-core peeling steps, and of fixed-size neighbour lists in particle codes):
// one thread per vertex, 64 CTAs of 256 threads.
// ptx-variants: sm_80
//
// The scan loop holds a branch whose one side can leave the loop (`if (higher) { count++;
// if (count == K) break; }`): its immediate post-dominator lies after the loop, so under PDOM and
// TBC the lanes that found a higher neighbour and those that did not run the rest of the loop in
// separate stack entries, and meet again only when all have left it. Its likely-convergence point
// is the loop's increment, where both meet again every iteration (`tbc:lpc`, `capri:lpc`).
//
// Divergence: the data-dependent loop length (in-degrees from 0 to ~1900 within one warp), the
// priority test per neighbour, and the early exit.
//
// Launch: grid (64,1,1), block (256,1,1).
// Arguments: in_row_ptr: int[n+1]; in_col_idx: int[m] (transposed CSR); priority: int[n]
// (distinct, 0..n-1); count: int[n] (output: higher-priority in-neighbours, at most K); n.

#define K 4

extern "C" __global__ void graph_topk(const int *in_row_ptr, const int *in_col_idx, const int *priority,
                                      int *count, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        int mine = priority[v];
        int c = 0;
        for (int e = in_row_ptr[v]; e < in_row_ptr[v + 1]; e++) {
            int u = in_col_idx[e];
            if (priority[u] > mine) {
                c++;
                if (c == K)
                    break;
            }
        }
        count[v] = c;
    }
}
