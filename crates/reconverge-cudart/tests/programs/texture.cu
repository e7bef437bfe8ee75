// texture.cu -- device code reconverge cannot run: a texture fetch.
//
// `tex1Dfetch` through a texture object compiles to `tex.1d.v4.f32.s32`, an
// instruction reconverge's PTX front end does not accept. The shim must refuse
// the program when it registers its fat binary (before main), with exit status
// 2 and the parser's message: the PTX's name, line and column, and the
// instruction. (On a GPU the program copies 256 floats through the texture and
// prints PASS.)
#include "common.h"

#define N 256

__global__ void fetch(cudaTextureObject_t tex, float4 *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = tex1Dfetch<float4>(tex, i);
}

int main() {
    float4 h[N], back[N];
    for (int i = 0; i < N; ++i) h[i] = make_float4(i, 2 * i, 3 * i, 4 * i);
    float4 *d_in, *d_out;
    CHECK(cudaMalloc((void **)&d_in, sizeof h));
    CHECK(cudaMalloc((void **)&d_out, sizeof h));
    CHECK(cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d_in;
    res.res.linear.desc = cudaCreateChannelDesc<float4>();
    res.res.linear.sizeInBytes = sizeof h;
    cudaTextureDesc desc = {};
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &desc, NULL));
    fetch<<<N / 64, 64>>>(tex, d_out);
    CHECK(cudaMemcpy(back, d_out, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) {
        if (back[i].x != h[i].x || back[i].w != h[i].w) {
            printf("element %d differs\nFAIL\n", i);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
