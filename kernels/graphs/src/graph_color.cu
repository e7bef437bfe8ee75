// graph_color -- one step of Jones-Plassmann graph colouring as in Pannotia's `color_max`
// (kernels color1 + color2, fused) on the undirected (symmetrised) 16384-vertex R-MAT graph: one
// thread per vertex, 64 CTAs of 256 threads.
// ptx-variants: sm_80
//
// Every vertex has a distinct random value. In step `color`, each uncoloured vertex scans its
// neighbours and takes the largest value among the UNCOLOURED ones (Pannotia's color1); if its own
// value is larger, it is a local maximum and gets colour `color` (color2). Coloured vertices keep
// their colour. The inputs come from kernels/graphs/gen.py, which runs steps 0 and 1 on the host;
// this launch is step 2.
//
// Divergence: the uncoloured test (a scattered, shrinking subset of the vertices), the
// data-dependent neighbour loop (degrees from 0 to ~2900 within one warp), the
// short-circuit test per neighbour (uncoloured && larger), and the local-maximum test.
//
// Changes from Pannotia, for race-freedom and determinism: Pannotia's color1 raises a shared
// `stop` flag from every thread that sees an uncoloured neighbour (a same-value race) and stores
// the maximum in max_d[], then color2 writes color_array[] in place. Here the two kernels are one,
// the colours are read from color_in and written to color_out (one entry per thread; the host
// derives the stop condition from color_out), so the kernel only reads inputs and writes its own
// output. Pannotia's `start != end - 1` test (a vertex with one neighbour ignores it) is dropped,
// and the values are distinct (a permutation of 0..n-1), so `>` and Pannotia's `>=` agree.
//
// Launch: grid (64,1,1), block (256,1,1).
// Arguments: row_ptr: int[n+1]; col_idx: int[m2] (symmetric CSR, no self-loops); node_value:
// int[n] (distinct, 0..n-1); color_in: int[n] (-1 = uncoloured); color_out: int[n] (output);
// color (this step's colour); n.

extern "C" __global__ void graph_color(const int *row_ptr, const int *col_idx, const int *node_value,
                                       const int *color_in, int *color_out, int color, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        int c = color_in[tid];
        if (c == -1) {
            int maximum = -1;
            for (int e = row_ptr[tid]; e < row_ptr[tid + 1]; e++) {
                int u = col_idx[e];
                if (color_in[u] == -1 && node_value[u] > maximum)
                    maximum = node_value[u];
            }
            if (node_value[tid] > maximum)
                c = color;
        }
        color_out[tid] = c;
    }
}
