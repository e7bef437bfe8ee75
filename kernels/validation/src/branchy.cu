// branchy -- a four-way data-dependent branch per element (if/else chains on loaded data).
extern "C" __global__ void branchy(const int *in, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    int v = in[i];
    int r;
    switch (v & 3) {
    case 0: r = v * 3 + 1; break;
    case 1: r = (v >> 2) ^ 0x55; break;
    case 2: r = v * v - 7; break;
    default: r = -v; break;
    }
    out[i] = r;
}
