// graph_bfs -- one level of Rodinia's BFS (Kernel, the "expand" step) on a 16384-vertex R-MAT
// graph: one thread per vertex, 64 CTAs of 256 threads.
// ptx-variants: sm_80
//
// The graph and the level come from kernels/graphs/gen.py: a directed R-MAT graph (a = 0.57,
// b = c = 0.19, d = 0.05, vertex ids randomly permuted, self-loops and duplicate edges removed;
// heavy-tailed out-degrees, hubs with up to ~1900 edges), a BFS from the source run on the host,
// and the frontier of level 2 (the vertices at distance 2 from the source). This launch expands
// that frontier; the host loop would then run Rodinia's Kernel2 (updating -> mask, visited).
//
// Divergence: the frontier test (a few percent of the vertices, scattered over the ids, so most
// threads of most warps idle), the data-dependent loop over each frontier vertex's out-edges (1 to
// ~1900 iterations within one warp: hubs are reached early), and the `!visited` test
// per edge.
//
// Race-freedom (as in kernels/src/bfs_large.cu): Rodinia writes g_cost[id] = g_cost[tid] + 1 and
// g_updating_graph_mask[id] = true from every frontier vertex that reaches id (same-value races).
// Here cost[id] is set with atomicCAS(-1 -> level + 1), so every contender writes the same value,
// and updating[id] with atomicOr. A frontier vertex is visited, so no thread CASes a cost[tid]
// another thread reads.
//
// Launch: grid (64,1,1), block (256,1,1).
// Arguments: row_ptr: int[n+1]; col_idx: int[m] (out-edges, CSR); mask: int[n] (the frontier;
// cleared); updating: int[n] (output: the next frontier); visited: int[n]; cost: int[n] (-1 = not
// reached; output: level + 1 for the vertices reached); n.

extern "C" __global__ void graph_bfs(const int *row_ptr, const int *col_idx, int *mask, int *updating,
                                     const int *visited, int *cost, int n)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n && mask[tid]) {
        mask[tid] = 0;
        int next = cost[tid] + 1;
        for (int i = row_ptr[tid]; i < row_ptr[tid + 1]; i++) {
            int id = col_idx[i];
            if (!visited[id]) {
                atomicCAS(&cost[id], -1, next);
                atomicOr(&updating[id], 1);
            }
        }
    }
}
