// bfs -- Rodinia-style breadth-first search over a CSR graph: one thread per node, frontier
// ("mask"), "updating" and "visited" flags, and a cost (level) array.
// ptx-variants: sm_80 sm_70
//
// Divergence: `tid < n` guard (idle threads when blockDim > n), frontier test (only frontier
// nodes expand), data-dependent inner loop over each node's out-edges (degree varies), and a
// `!visited[id]` test per edge. The level loop runs inside ONE launch of ONE CTA:
// __syncthreads() separates Rodinia's kernel 1 (expand) and kernel 2 (update), and a shared
// `changed` flag decides, uniformly after a barrier, whether another level is needed.
//
// Race-freedom (changed from Rodinia, where several frontier threads store the same values):
//  * cost[id] is set with atomicCAS(&cost[id], -1, level + 1): the first writer wins and every
//    contender writes the same level, so the result does not depend on the interleaving;
//  * updating[id] and `changed` are set with atomicOr;
//  * a frontier node is always visited, so no thread CASes the cost[tid] that another reads.
//
// Launch: grid (1,1,1), block (B,1,1) with n <= B <= 256 (the suite: n = 190, B = 200, i.e.
// a block that is not a multiple of 32).
// Arguments: row_ptr: int[n+1]; col_idx: int[m]; n; source; cost: int[n] (output; -1 =
// unreachable); levels: int[1] (output: number of BFS levels expanded).

#define MAX_NODES 256

extern "C" __global__ void bfs(const int *row_ptr, const int *col_idx, int n, int source,
                               int *cost, int *levels)
{
    __shared__ int mask[MAX_NODES];      // frontier of the current level
    __shared__ int updating[MAX_NODES];  // reached during this level
    __shared__ int visited[MAX_NODES];
    __shared__ int changed;

    int tid = threadIdx.x;

    if (tid < n) {
        int is_src = (tid == source);
        mask[tid] = is_src;
        visited[tid] = is_src;
        updating[tid] = 0;
        cost[tid] = is_src ? 0 : -1;
    }

    int level = 0;
    for (;;) {
        if (tid == 0)
            changed = 0;
        __syncthreads();

        // Rodinia kernel 1: expand the frontier.
        if (tid < n && mask[tid]) {
            mask[tid] = 0;
            int my_cost = cost[tid];
            for (int e = row_ptr[tid]; e < row_ptr[tid + 1]; e++) {
                int id = col_idx[e];
                if (!visited[id]) {
                    atomicCAS(&cost[id], -1, my_cost + 1);
                    atomicOr(&updating[id], 1);
                }
            }
        }
        __syncthreads();

        // Rodinia kernel 2: nodes reached in this level form the next frontier.
        if (tid < n && updating[tid]) {
            mask[tid] = 1;
            visited[tid] = 1;
            updating[tid] = 0;
            atomicOr(&changed, 1);
        }
        __syncthreads();

        int again = changed;   // uniform: read by every thread after the barrier
        level++;
        if (!again)
            break;
        __syncthreads();       // everybody has read `changed` before thread 0 clears it
    }

    if (tid == 0)
        levels[0] = level;
}
