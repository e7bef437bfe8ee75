// bfs_large -- one level of Rodinia's BFS (kernel 1, "expand") on a graph big enough to fill the
// GPU: 24576 nodes, one thread each, 96 CTAs of 256 threads, irregular (heavy-tailed) degrees.
// ptx-variants: sm_80 sm_70
//
// The graph and the level come from kernels/reference.py: a random graph whose out-degrees follow
// a Pareto distribution (most nodes have 1-6 edges, a few hubs up to 128), a BFS from node 0 run
// on the host, and the level with the largest frontier. This launch expands that frontier.
//
// Divergence (the pattern the DWF, TBC and CAPRI papers study on BFS): the frontier test (only
// frontier nodes work; the frontier is scattered over the node ids), the data-dependent loop over
// each node's edges (trip counts from 1 to 128 within one warp), and the `!visited` test per edge.
//
// Race-freedom (as in the suite's bfs kernel): cost[id] is set with atomicCAS(-1 -> level + 1),
// so every contender writes the same value; updating[id] with atomicOr. A frontier node is
// visited, so no thread CASes a cost[tid] another thread reads.
//
// Launch: grid (96,1,1), block (256,1,1).
// Arguments: row_ptr: int[n+1]; col_idx: int[m]; mask: int[n] (the frontier; cleared);
// updating: int[n] (output: nodes reached); visited: int[n]; cost: int[n] (-1 = not reached;
// output: level + 1 for the nodes reached); n.

extern "C" __global__ void bfs_large(const int *row_ptr, const int *col_idx, int *mask, int *updating,
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
