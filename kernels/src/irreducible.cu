// irreducible -- an irreducible loop built with goto: a two-block cycle {L_a, L_b} entered
// at L_a by threads with an even input and at L_b by threads with an odd input.
// ptx-variants: sm_80 sm_70
//
// Divergence: the entry test (x & 1) diverges, so one warp enters the same cycle through two
// different blocks; the cycle's exit tests depend on the data and on the trip count n
// (bounded: at most 12 steps). Neither entry dominates the other, so the cycle has no
// header -- post-dominator based reconvergence is still defined, but loop-based analyses
// (natural loops, structurizers) see no loop.
//
// Launch: grid (1,1,1), block (64,1,1).
// Arguments: in: u32[64]; out: u32[128] (zero-filled output: out[2t] = acc, out[2t+1] = n).

extern "C" __global__ void irreducible(const unsigned int *in, unsigned int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x = in[t];
    unsigned int acc = t;
    unsigned int n = 0;

    if (x & 1)
        goto L_b;          // second entry into the cycle

L_a:
    acc = acc * 5u + x;
    n++;
    if (n >= 12u)
        goto done;
L_b:
    acc = acc ^ (acc >> 3);
    n++;
    if ((acc & 3u) != 0u && n < 12u)
        goto L_a;

done:
    out[2 * t] = acc;
    out[2 * t + 1] = n;
}
