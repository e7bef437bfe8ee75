// switch_kernel -- a `switch` on a tid- and data-dependent key with several cases,
// fallthrough chains and a default.
// ptx-variants: sm_80 sm_70
//
// Divergence: a multi-way branch; the lanes of a warp scatter over up to 9 arms and join
// after the switch. NVRTC 12.9 lowers the switch to a binary tree of setp/bra compares (it
// does not emit brx.idx for it), so the PTX contains a tree of two-way divergent branches and
// fallthrough arms that are entered both from the compare tree and from the previous arm.
//
// Launch: grid (1,1,1), block (96,1,1) (not a multiple of 64).
// Arguments: in: int[96] (values 0..999); out: int[96] (zero-filled output).

extern "C" __global__ void switch_kernel(const int *in, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = in[t];
    int key = (v + t) % 11;
    int r = 0;

    switch (key) {
    case 0:
        r = v * 2;
        break;
    case 1:
        r = v + 100;
        /* fallthrough */
    case 2:
        r = r * 3 + 1;
        break;
    case 3:
        r = v - 7;
        /* fallthrough */
    case 4:
        r ^= 0x55;
        /* fallthrough */
    case 5:
        r += t;
        break;
    case 7:
        r = -v;
        break;
    case 8:
        r = v / 3;
        break;
    case 9:
        r = (v << 4) | t;
        break;
    default:   // 6, 10
        r = 12345 + key;
        break;
    }
    out[t] = r;
}
