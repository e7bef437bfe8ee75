// kern -- seed 001 ("stack reconvergence an example"): the lecture's `kern`, the canonical
// if/else whose reconvergence point is the immediate post-dominator `a[6] = 99`.
// ptx-variants: sm_80 sm_70
//
// Changes from the seed: the seed uses `__managed__ int *a, *b, *c` globals; here they are
// pointer parameters so the kernel is runnable from a plain launch. The body is unchanged.
// The pointers are `volatile`: with plain `int *` NVVM if-converts the two arms into
// `selp` + one set of stores (no branch at all -- checked with NVRTC 12.9); volatile stores
// cannot be merged, so the PTX keeps the seed's if/else (`@p bra`, then-arm, else-arm, join).
//
// Divergence: one tid-dependent if/else (t < 5) inside a warp; both arms store, then all
// threads reconverge and store a[6] = 99.
//
// Launch: grid (1,1,1), block (32,1,1) -- one warp at warp size 32, several at smaller sizes.
// Arguments: a, b, c: int[38] each, zero-filled (38 = 32 + 6 covers the highest index t+6 = 37).
//
// Races (checked): threads t < 5 write a[0..4], b[0..4], c[0..4]; threads t >= 5 write
// a[11..37], b[11..37], c[11..37]. No arm writes index 6 (t = 0 writes a[0], not a[6]), so the
// only shared location is a[6], written by every thread after reconvergence with the same value
// 99: a benign same-value race, present in the seed by design. Indices 5..10 (except a[6])
// stay 0.
// Expected: a = 1 x5, 0, 99, 0 x4, 5 x27; b = 2 x5, 0 x6, 7 x27; c = 3 x5, 0 x6, 9 x27.

extern "C" __global__ void kern(volatile int *a, volatile int *b, volatile int *c)
{
    int t = threadIdx.x;

    if (t < 5) {
        a[t] = 1;
        b[t] = 2;
        c[t] = 3;
    } else {
        a[t + 6] = 5;
        b[t + 6] = 7;
        c[t + 6] = 9;
    }
    a[6] = 99;
}
