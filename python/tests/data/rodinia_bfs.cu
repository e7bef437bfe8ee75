// Breadth-first search in the style of Rodinia's bfs: the host launches Kernel then Kernel2 until no
// node is updated. Kernel expands every node of the current frontier (mask) to its unvisited neighbours;
// Kernel2 moves the updated nodes into the next frontier and raises `over`.
struct Node {
    int starting;
    int no_of_edges;
};

extern "C" __global__ void Kernel(const Node *nodes, const int *edges, bool *mask, bool *updating,
                                  const bool *visited, int *cost, int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes && mask[tid]) {
        mask[tid] = false;
        for (int i = nodes[tid].starting; i < nodes[tid].starting + nodes[tid].no_of_edges; i++) {
            int id = edges[i];
            if (!visited[id]) {
                cost[id] = cost[tid] + 1;
                updating[id] = true;
            }
        }
    }
}

extern "C" __global__ void Kernel2(bool *mask, bool *updating, bool *visited, bool *over, int no_of_nodes) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes && updating[tid]) {
        mask[tid] = true;
        visited[tid] = true;
        *over = true;
        updating[tid] = false;
    }
}
