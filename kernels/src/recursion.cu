// recursion -- recursive __noinline__ device functions with data-dependent recursion depth:
// naive Fibonacci and the height of a binary-tree node.
// ptx-variants: sm_80 sm_70
//
// Divergence: call/return inside divergent control flow. Each thread calls fib(fib_n[t])
// with its own n (0..9), so the recursion trees of the lanes have different shapes and the
// `n < 2` base-case test diverges at every level; depth() walks the subtree of node t of a
// random binary search tree (leaf nodes stop at once, the root recurses over the whole tree).
// Both functions stay real PTX `.func`s, each with its two recursive `call.uni`s (checked:
// NVVM neither inlines them nor turns a call into a loop).
//
// Launch: grid (1,1,1), block (48,1,1) -- one thread per tree node.
// Arguments: fib_n: int[48] (values 0..9); left, right: int[48] (child node index or -1);
//            fib_out: int[48], depth_out: int[48] (zero-filled outputs).

extern "C" __device__ __noinline__ int fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

extern "C" __device__ __noinline__ int depth(const int *left, const int *right, int node)
{
    if (node < 0)
        return 0;
    int dl = depth(left, right, left[node]);
    int dr = depth(left, right, right[node]);
    return 1 + (dl > dr ? dl : dr);
}

extern "C" __global__ void recursion(const int *fib_n, const int *left, const int *right,
                                     int *fib_out, int *depth_out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    fib_out[t] = fib(fib_n[t]);
    depth_out[t] = depth(left, right, t);
}
