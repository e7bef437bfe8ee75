// strided -- out[i] = in[i * stride]: every lane of a warp touches its own 128-byte line (uncoalesced).
extern "C" __global__ void strided(const int *in, int *out, int stride, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[(i * stride) % (n * stride)] + 1;
}
