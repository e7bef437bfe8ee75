// pointer_chase -- one warp follows a linked list through memory: every load depends on the last
// (latency-bound; measures the load round trip).
extern "C" __global__ void pointer_chase(const int *next, int *out, int steps)
{
    int p = threadIdx.x;
    for (int s = 0; s < steps; s++)
        p = next[p];
    out[threadIdx.x] = p;
}
