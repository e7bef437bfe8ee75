// conv1d -- a 1-D convolution with a 17-tap filter: a shared-memory tile with halo, one barrier.
#define R 8
extern "C" __global__ void conv1d(const float *in, const float *w, float *out, int n)
{
    __shared__ float tile[256 + 2 * R];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int t = threadIdx.x + R;
    tile[t] = i < n ? in[i] : 0.0f;
    if (threadIdx.x < R) {
        int l = i - R, r = i + blockDim.x;
        tile[threadIdx.x] = l >= 0 ? in[l] : 0.0f;
        tile[t + blockDim.x] = r < n ? in[r] : 0.0f;
    }
    __syncthreads();
    if (i < n) {
        float acc = 0.0f;
        for (int k = -R; k <= R; k++)
            acc += w[k + R] * tile[t + k];
        out[i] = acc;
    }
}
