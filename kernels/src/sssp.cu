// sssp -- single-source shortest paths by Bellman-Ford (Jacobi-style relaxation rounds) over
// a weighted CSR graph, all rounds inside ONE launch of ONE CTA.
// ptx-variants: sm_80 sm_70
//
// Divergence: a node loop `for (u = tid; u < n; u += blockDim.x)` (n > blockDim, so some
// threads own two nodes and others one), a skip of unreached nodes (data-dependent, changes
// every round), a data-dependent inner loop over each node's out-edges, and a data-dependent
// relaxation test. The round loop exits uniformly on a shared `changed` flag read after a
// barrier.
//
// Determinism: each round first snapshots dist into shared `prev`; relaxations read only
// `prev` and lower dist with atomicMin, and `changed` is set with atomicOr iff some candidate
// beats prev -- so every round's result, and the number of rounds, are independent of the
// interleaving.
//
// Launch: grid (1,1,1), block (96,1,1) (n = 150 nodes, n <= 256).
// Arguments: row_ptr: int[n+1]; col_idx: int[m]; weight: int[m] (1..20); n; source;
//            dist: int[n] (output; unreachable = 0x3fffffff); rounds: int[1] (output).

#define MAX_NODES 256
#define INF 0x3fffffff

extern "C" __global__ void sssp(const int *row_ptr, const int *col_idx, const int *weight,
                                int n, int source, int *dist, int *rounds)
{
    __shared__ int prev[MAX_NODES];
    __shared__ int changed;

    int tid = threadIdx.x;
    for (int u = tid; u < n; u += blockDim.x)
        dist[u] = (u == source) ? 0 : INF;

    int round = 0;
    for (;;) {
        __syncthreads();
        for (int u = tid; u < n; u += blockDim.x)
            prev[u] = dist[u];
        if (tid == 0)
            changed = 0;
        __syncthreads();

        for (int u = tid; u < n; u += blockDim.x) {
            int du = prev[u];
            if (du == INF)
                continue;
            for (int e = row_ptr[u]; e < row_ptr[u + 1]; e++) {
                int v = col_idx[e];
                int nd = du + weight[e];
                if (nd < prev[v]) {
                    atomicMin(&dist[v], nd);
                    atomicOr(&changed, 1);
                }
            }
        }
        __syncthreads();

        round++;
        if (!changed || round >= n)   // uniform: `changed` is read after the barrier
            break;
    }
    if (tid == 0)
        rounds[0] = round;
}
