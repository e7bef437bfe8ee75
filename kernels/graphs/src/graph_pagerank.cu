// graph_pagerank -- one PageRank iteration, pull style, on the 16384-vertex R-MAT graph: one
// thread per vertex, 64 CTAs of 256 threads.
// ptx-variants: sm_80-nofma
//
// Each vertex v sums rank_in[u] / out_degree[u] over its in-neighbours u (the transposed CSR)
// and sets rank_out[v] = base + damping * sum, with base = (1 - damping) / n (both rounded to
// float32 by the host). Pannotia's pagerank pushes rank[u] / outdeg[u] to the out-neighbours
// with float atomicAdd (order-dependent rounding); pulling over the in-edges gives the same sum
// without atomics, in a fixed order. The inputs come from kernels/graphs/gen.py: rank_in is the
// result of iterations 0 and 1 from the uniform 1/n; this launch is iteration 2.
//
// Divergence: the data-dependent in-edge loop only (in-degrees from 0 to ~1900 within one
// warp): the irregular-loop case with no branch inside the body.
//
// Race-freedom: each thread writes only rank_out[v] and reads only inputs.
//
// Exactness: the suite runs the --fmad=false PTX (sm_80-nofma), where every operation is one
// correctly rounded div.rn/add.rn/mul.rn; gen.py performs the same float32 operations in the same
// order (the in-edges in CSR order, then the multiply, then the add), so rank_out is bit-exact.
// Every in-neighbour has out_degree >= 1 (it has the edge u -> v).
//
// Launch: grid (64,1,1), block (256,1,1).
// Arguments: in_row_ptr: int[n+1]; in_col_idx: int[m] (in-neighbours); out_degree: int[n];
// rank_in: float[n]; rank_out: float[n] (output); base; damping; n.

extern "C" __global__ void graph_pagerank(const int *in_row_ptr, const int *in_col_idx, const int *out_degree,
                                          const float *rank_in, float *rank_out, float base, float damping,
                                          int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < n) {
        float sum = 0.0f;
        for (int e = in_row_ptr[v]; e < in_row_ptr[v + 1]; e++) {
            int u = in_col_idx[e];
            sum += rank_in[u] / (float)out_degree[u];
        }
        rank_out[v] = base + damping * sum;
    }
}
