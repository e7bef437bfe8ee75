// legacy_texture.cu -- a program written for CUDA 11 and earlier: texture
// references, which CUDA 12 removed. It is built unmodified with
// `nvcc -include "$(reconverge cuda-include)/reconverge_compat.h"`, which maps
// references onto texture objects, and linked against `reconverge cuda-lib`.
//
// Part 1: tex1Dfetch through a reference bound to linear memory with
//         cudaBindTexture (float and int2 elements), then rebound to another
//         buffer: the second launch must see the new one.
// Part 2: tex2D through a reference bound to a cudaArray with
//         cudaBindTextureToArray, linear filtering and normalized
//         coordinates set on the reference before binding.
// Part 3: tex2D with cudaReadModeNormalizedFloat on unsigned char texels
//         bound to pitched memory with cudaBindTexture2D.
// Part 4: cudaUnbindTexture, cudaThreadSynchronize and cudaThreadExit.
#include "common.h"
#include <cmath>

#define N 200
#define W 8
#define H 4

texture<float, 1, cudaReadModeElementType> lin;
texture<int2> pairs;
texture<float, 2> image;
texture<unsigned char, 2, cudaReadModeNormalizedFloat> bytes;

__global__ void fetch_linear(float *out, int *sum) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        out[i] = tex1Dfetch(lin, i);
        int2 p = tex1Dfetch(pairs, i);
        sum[i] = p.x + p.y;
    }
}

__global__ void sample(float *out, float *norm) {
    int x = threadIdx.x, y = threadIdx.y;
    // Texel centres in normalized coordinates, shifted a quarter texel in x: halfway weights of 1/4.
    out[y * W + x] = tex2D(image, (x + 0.75f) / W, (y + 0.5f) / H);
    norm[y * W + x] = tex2D(bytes, x + 0.5f, y + 0.5f);
}

int main() {
    int failures = 0;
    // Part 1.
    float h_a[N], h_b[N], h_out[N];
    int2 h_p[N];
    int h_sum[N];
    for (int i = 0; i < N; ++i) {
        h_a[i] = 0.5f * i;
        h_b[i] = 1000.0f - i;
        h_p[i] = make_int2(i, 3 * i);
    }
    float *d_a, *d_b, *d_out;
    int2 *d_p;
    int *d_sum;
    CHECK(cudaMalloc(&d_a, sizeof h_a));
    CHECK(cudaMalloc(&d_b, sizeof h_b));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMalloc(&d_p, sizeof h_p));
    CHECK(cudaMalloc(&d_sum, sizeof h_sum));
    CHECK(cudaMemcpy(d_a, h_a, sizeof h_a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, h_b, sizeof h_b, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_p, h_p, sizeof h_p, cudaMemcpyHostToDevice));
    size_t offset = 1;
    CHECK(cudaBindTexture(&offset, lin, d_a, sizeof h_a));
    if (offset != 0 && failures++ < 5) printf("offset %zu\n", offset);
    CHECK(cudaBindTexture(0, pairs, d_p, cudaCreateChannelDesc<int2>(), sizeof h_p));
    for (int round = 0; round < 2; ++round) {
        fetch_linear<<<(N + 63) / 64, 64>>>(d_out, d_sum);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(h_sum, d_sum, sizeof h_sum, cudaMemcpyDeviceToHost));
        const float *want = round == 0 ? h_a : h_b;
        for (int i = 0; i < N; ++i) {
            if (h_out[i] != want[i] && failures++ < 5) printf("round %d: lin[%d] = %g, want %g\n", round, i, h_out[i], want[i]);
            if (h_sum[i] != 4 * i && failures++ < 5) printf("pairs[%d] = %d, want %d\n", i, h_sum[i], 4 * i);
        }
        CHECK(cudaBindTexture(0, lin, d_b, sizeof h_b));  // rebinding replaces the first binding
    }
    // Part 2 and 3.
    float h_img[H][W];
    unsigned char h_bytes[H][W];
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            h_img[y][x] = (float)(x * x + 10 * y);
            h_bytes[y][x] = (unsigned char)(x * 30 + y);
        }
    cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
    cudaArray *arr;
    CHECK(cudaMallocArray(&arr, &fd, W, H));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, h_img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    image.normalized = true;
    image.filterMode = cudaFilterModeLinear;
    image.addressMode[0] = cudaAddressModeClamp;
    image.addressMode[1] = cudaAddressModeClamp;
    CHECK(cudaBindTextureToArray(image, arr));
    unsigned char *d_bytes;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&d_bytes, &pitch, W, H));
    CHECK(cudaMemcpy2D(d_bytes, pitch, h_bytes, W, W, H, cudaMemcpyHostToDevice));
    CHECK(cudaBindTexture2D(0, bytes, d_bytes, cudaCreateChannelDesc<unsigned char>(), W, H, pitch));
    float *d_s, *d_n, h_s[H * W], h_n[H * W];
    CHECK(cudaMalloc(&d_s, sizeof h_s));
    CHECK(cudaMalloc(&d_n, sizeof h_n));
    sample<<<1, dim3(W, H)>>>(d_s, d_n);
    CHECK(cudaGetLastError());
    CHECK(cudaThreadSynchronize());
    CHECK(cudaMemcpy(h_s, d_s, sizeof h_s, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h_n, d_n, sizeof h_n, cudaMemcpyDeviceToHost));
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            // x + 0.75 texels: a quarter of the way from texel x to x + 1 (clamped at the edge).
            int x1 = x + 1 < W ? x + 1 : W - 1;
            float want = (float)(0.75 * h_img[y][x] + 0.25 * h_img[y][x1]);
            if (h_s[y * W + x] != want && failures++ < 5) printf("image(%d,%d) = %g, want %g\n", x, y, h_s[y * W + x], want);
            float wn = (float)(h_bytes[y][x] / 255.0);
            if (h_n[y * W + x] != wn && failures++ < 5) printf("bytes(%d,%d) = %g, want %g\n", x, y, h_n[y * W + x], wn);
        }
    // Part 4.
    CHECK(cudaUnbindTexture(lin));
    CHECK(cudaUnbindTexture(lin));  // unbinding twice is harmless
    CHECK(cudaUnbindTexture(image));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaThreadExit());
    if (failures) {
        printf("FAIL: %d mismatches\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
