// capped_scan -- the shape likely-convergence points are for (docs/mechanism-reference.md, `tbc:lpc`):
// a loop whose body holds a branch with a `break` on one side. 64 threads (two warps, one CTA); thread t
// scans n values (6 in the tests) and stops at its second "hit". Its PTX (capped_scan.ptx beside this file) is NVRTC
// 12.9's for compute_80 with -lineinfo; the golden traces are tests/golden/trace_capped_scan_*.txt.
extern "C" __global__ void capped_scan(const int *data, int *out, int n)
{
    int t = threadIdx.x;
    int c = 0;
    for (int i = 0; i < n; i++) {
        if (data[(t + i) % 64] > 0) {
            c++;
            if (c == 2)
                break;
        }
    }
    out[t] = c;
}
