// bfs.cu -- Rodinia-style breadth-first search.
//
// The graph is a deterministic CSR graph (LCG-generated, mostly local edges
// plus a few long jumps, some nodes unreachable). The host drives the search
// level by level: reset the "changed" flag, run the expand and update kernels,
// copy the flag back, and repeat until no frontier node changed anything.
// Levels are checked against a sequential host BFS.
#include <vector>
#include "common.h"
#include "cuda_compat.h"

#define NUM_NODES 2000
#define MAX_DEGREE 4
#define BLOCK 256

// Expand the current frontier: every frontier node labels its unvisited
// neighbours with its own level + 1 and marks them for the update pass.
__global__ void bfs_expand(const int *row, const int *col, bool *mask,
                           bool *updating, const bool *visited, int *cost,
                           int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n && mask[tid]) {
        mask[tid] = false;
        for (int e = row[tid]; e < row[tid + 1]; e++) {
            int id = col[e];
            if (!visited[id]) {
                cost[id] = cost[tid] + 1;
                updating[id] = true;
            }
        }
    }
}

// Turn the marked nodes into the next frontier and raise the flag.
__global__ void bfs_update(bool *mask, bool *updating, bool *visited,
                           bool *d_over, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n && updating[tid]) {
        mask[tid] = true;
        visited[tid] = true;
        *d_over = true;
        updating[tid] = false;
    }
}

int main() {
    // Build the graph: node i gets 0..MAX_DEGREE edges, 3 in 4 to a node
    // within +-8 of i, the rest anywhere.
    unsigned seed = 12345u;
    std::vector<int> row(NUM_NODES + 1), col;
    for (int i = 0; i < NUM_NODES; i++) {
        row[i] = (int)col.size();
        int degree = lcg_next(&seed) % (MAX_DEGREE + 1);
        for (int k = 0; k < degree; k++) {
            unsigned r = lcg_next(&seed);
            int target = (r & 3) ? (i + (int)((r >> 8) % 17) - 8 + NUM_NODES) % NUM_NODES
                                 : (int)((r >> 8) % NUM_NODES);
            col.push_back(target);
        }
    }
    row[NUM_NODES] = (int)col.size();
    int num_edges = (int)col.size();

    // Host reference BFS from node 0.
    std::vector<int> ref(NUM_NODES, -1), queue(1, 0);
    ref[0] = 0;
    for (size_t q = 0; q < queue.size(); q++) {
        int u = queue[q];
        for (int e = row[u]; e < row[u + 1]; e++)
            if (ref[col[e]] < 0) { ref[col[e]] = ref[u] + 1; queue.push_back(col[e]); }
    }

    // Initial state: only the source is in the frontier and visited.
    bool *h_mask = new bool[NUM_NODES](), *h_visited = new bool[NUM_NODES]();
    int *h_cost = new int[NUM_NODES];
    for (int i = 0; i < NUM_NODES; i++) h_cost[i] = -1;
    h_mask[0] = h_visited[0] = true;
    h_cost[0] = 0;

    int *d_row, *d_col, *d_cost;
    bool *d_mask, *d_updating, *d_visited, *d_over;
    CHECK(cudaMalloc((void **)&d_row, sizeof(int) * (NUM_NODES + 1)));
    CHECK(cudaMalloc((void **)&d_col, sizeof(int) * num_edges));
    CHECK(cudaMalloc((void **)&d_cost, sizeof(int) * NUM_NODES));
    CHECK(cudaMalloc((void **)&d_mask, sizeof(bool) * NUM_NODES));
    CHECK(cudaMalloc((void **)&d_updating, sizeof(bool) * NUM_NODES));
    CHECK(cudaMalloc((void **)&d_visited, sizeof(bool) * NUM_NODES));
    CHECK(cudaMalloc((void **)&d_over, sizeof(bool)));
    CHECK(cudaMemcpy(d_row, row.data(), sizeof(int) * (NUM_NODES + 1), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_col, col.data(), sizeof(int) * num_edges, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_cost, h_cost, sizeof(int) * NUM_NODES, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_mask, h_mask, sizeof(bool) * NUM_NODES, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_visited, h_visited, sizeof(bool) * NUM_NODES, cudaMemcpyHostToDevice));
    bool *h_updating = new bool[NUM_NODES]();
    CHECK(cudaMemcpy(d_updating, h_updating, sizeof(bool) * NUM_NODES, cudaMemcpyHostToDevice));

    dim3 grid((NUM_NODES + BLOCK - 1) / BLOCK), threads(BLOCK);
    int iterations = 0;
    bool stop;
    do {
        stop = false;
        CHECK(cudaMemcpy(d_over, &stop, sizeof(bool), cudaMemcpyHostToDevice));
        bfs_expand<<<grid, threads>>>(d_row, d_col, d_mask, d_updating, d_visited, d_cost, NUM_NODES);
        CHECK(cudaGetLastError());
        bfs_update<<<grid, threads>>>(d_mask, d_updating, d_visited, d_over, NUM_NODES);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(&stop, d_over, sizeof(bool), cudaMemcpyDeviceToHost));
        iterations++;
    } while (stop);
    CHECK(cudaThreadSynchronize());

    CHECK(cudaMemcpy(h_cost, d_cost, sizeof(int) * NUM_NODES, cudaMemcpyDeviceToHost));
    int errors = 0, reached = 0, depth = 0;
    for (int i = 0; i < NUM_NODES; i++) {
        if (ref[i] >= 0) reached++;
        if (ref[i] > depth) depth = ref[i];
        if (h_cost[i] != ref[i] && errors++ < 10)
            printf("node %d: level %d, expected %d\n", i, h_cost[i], ref[i]);
    }
    printf("nodes %d edges %d reached %d depth %d iterations %d\n",
           NUM_NODES, num_edges, reached, depth, iterations);

    CHECK(cudaFree(d_row)); CHECK(cudaFree(d_col)); CHECK(cudaFree(d_cost));
    CHECK(cudaFree(d_mask)); CHECK(cudaFree(d_updating)); CHECK(cudaFree(d_visited));
    CHECK(cudaFree(d_over));
    delete[] h_mask; delete[] h_visited; delete[] h_updating; delete[] h_cost;
    CHECK(cudaThreadExit());  // old name of cudaDeviceReset (cuda_compat.h)

    if (errors) { printf("%d levels differ\nFAIL\n", errors); return 1; }
    printf("PASS\n");
    return 0;
}
