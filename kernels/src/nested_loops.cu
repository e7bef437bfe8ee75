// nested_loops -- nested loops with break, continue and early return on tid- and
// data-dependent conditions.
// ptx-variants: sm_80 sm_70
//
// Divergence:
//  * early return before the loops for threads past n (partial last CTA);
//  * outer loop (8 iterations): tid-dependent `continue` when (tid + i) % 3 == 0;
//  * inner loop: data-dependent trip count limit + i (limit = data[tid] & 15);
//    data-dependent `break` (v % 11 == 0) and `continue` (odd v);
//  * early return from inside both loops when the accumulator passes `thresh`
//    (NVRTC merges the returns into one exit block; the divergence is the loop exits).
// `#pragma unroll 1` on the outer loop keeps the nest a nest (NVVM otherwise unrolls the 8
// outer iterations into 8 copies of the inner loop).
//
// Launch: grid (2,1,1), block (100,1,1) -- 200 threads for n = 190 (not a multiple of 32).
// Arguments: data: int[n] (values 0..255); n = 190; thresh; out: int[n] (zero-filled output:
//            the accumulator, negated when the thread returned early).

extern "C" __global__ void nested_loops(const int *data, int n, int thresh, int *out)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid >= n)
        return;

    int limit = data[tid] & 15;
    int acc = 0;
#pragma unroll 1
    for (int i = 0; i < 8; i++) {
        if ((tid + i) % 3 == 0)
            continue;
        for (int j = 0; j < limit + i; j++) {
            int v = data[(tid * 7 + i * 13 + j) % n];
            if (v % 11 == 0)
                break;
            if (v & 1)
                continue;
            acc += v >> 3;
            if (acc > thresh) {
                out[tid] = -acc;
                return;
            }
        }
        acc += i;
    }
    out[tid] = acc;
}
