// short_circuit -- seed 003 Figure 1: `if (A && B) C; else D; E;`, the test case for the
// path-list traversal orders (depth-first, min-PC, fork/join, breadth-first, ...).
// ptx-variants: sm_80 sm_70
//
// Divergence: block A ends in a divergent branch (A's test) to B or D; block B ends in a
// divergent branch (B's test) to C or D; C and D join at E. D has two predecessors (A and B),
// which is what distinguishes the traversal orders of the figure. The PTX has exactly this
// CFG: A -> {B, D}, B -> {C, D}, C -> E, D -> E (NVRTC lays the blocks out as A B D C E).
// Per 4 consecutive threads the pattern is the figure's: thread 4k goes A B C E,
// thread 4k+1 goes A D E, threads 4k+2 and 4k+3 go A B D E (test A = (t & 3) != 1,
// test B = (t & 3) == 0). With warp size 4 each warp is exactly the figure's warp.
//
// Side effects: every block stores its code in its own slot of the thread's trace:
// trace[t*8 + 0] = 0xA, [1] = 0xB, [2] = 0xC, [3] = 0xD, [4] = 0xE; slots of blocks the thread
// did not execute (and slots 5..7) stay 0, so the executed path of every thread is checkable
// (the set of visited blocks determines the path). A variant that appends codes with a
// running index (trace[t*8 + k++]) was tried first: the index differs between the paths into
// D, and NVVM then merges C and D into one store of a selected value behind an extra join
// block, which destroys the figure's CFG.
//
// Launch: grid (1,1,1), block (32,1,1). Arguments: trace: int[32*8] (zero-filled).

#define SLOTS 8

extern "C" __global__ void short_circuit(int *trace)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int *tr = trace + t * SLOTS;

    tr[0] = 0xA;                                          // block A
    if ((t & 3) != 1 && (tr[1] = 0xB, (t & 3) == 0)) {    // A's test; block B and B's test
        tr[2] = 0xC;                                      // block C
    } else {
        tr[3] = 0xD;                                      // block D
    }
    tr[4] = 0xE;                                          // block E
}
