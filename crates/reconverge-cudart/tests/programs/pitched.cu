// pitched.cu -- pitched 2-D and 3-D memory.
//
// Part 1: a 37x23 float image in cudaMallocPitch memory (the pitch must be a
//         multiple of 512 bytes and at least the row), copied in and out with
//         cudaMemcpy2D from a tightly packed host array; a kernel that walks
//         rows by the pitch and takes a data-dependent branch per pixel.
// Part 2: cudaMemset2D of a sub-rectangle, seen through a device-to-device
//         cudaMemcpy2D into a second pitched image and back to the host.
// Part 3: a 19x7x5 int volume from cudaMalloc3D: cudaMemset3D, then a 3-D
//         copy of a host block into a box at an offset (cudaMemcpy3D with
//         dstPos), a kernel over the whole volume, cudaMemcpy3D back.
// Part 4: misuse answered with CUDA's codes: a source pitch below the width
//         (cudaErrorInvalidPitchValue), a copy kind of 7.
#include "common.h"

#define W 37
#define H 23
#define NX 19
#define NY 7
#define NZ 5

// Odd pixels triple and add one, even ones halve: a branch per pixel.
__global__ void collatz_rows(float *img, size_t pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float *row = (float *)((char *)img + y * pitch);
    int v = (int)row[x];
    row[x] = (float)((v & 1) ? 3 * v + 1 : v / 2);
}

// Each cell adds its coordinates' weighted sum.
__global__ void add_coords(cudaPitchedPtr p, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    for (int z = 0; z < nz; z++) {
        int *row = (int *)((char *)p.ptr + (z * p.ysize + y) * p.pitch);
        if (row[x] < 0) row[x] = -row[x];
        else row[x] += x + 100 * y + 10000 * z;
    }
}

static int collatz(int v) { return (v & 1) ? 3 * v + 1 : v / 2; }

int main() {
    int errors = 0;
    unsigned seed = 7;

    // Part 1: pitched 2-D image.
    float h_img[H][W], h_out[H][W];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) h_img[y][x] = (float)(lcg_next(&seed) % 1000);
    float *d_img;
    size_t pitch;
    CHECK(cudaMallocPitch((void **)&d_img, &pitch, W * sizeof(float), H));
    printf("pitch is a multiple of 512 holding a row: %s\n",
           (pitch % 512 == 0 && pitch >= W * sizeof(float)) ? "yes" : "no");
    CHECK(cudaMemcpy2D(d_img, pitch, h_img, W * sizeof(float), W * sizeof(float), H, cudaMemcpyHostToDevice));
    dim3 block(16, 8), grid((W + 15) / 16, (H + 7) / 8);
    collatz_rows<<<grid, block>>>(d_img, pitch, W, H);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2D(h_out, W * sizeof(float), d_img, pitch, W * sizeof(float), H, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            if (h_out[y][x] != (float)collatz((int)h_img[y][x]) && bad++ < 5)
                printf("img[%d][%d] = %g, expected %d\n", y, x, h_out[y][x], collatz((int)h_img[y][x]));
    errors += bad;

    // Part 2: cudaMemset2D of rows 3..9, bytes 8..47 (floats 2..11), then device to device.
    CHECK(cudaMemset2D((char *)d_img + 3 * pitch + 8, pitch, 0, 40, 7));
    float *d_copy;
    size_t pitch2;
    CHECK(cudaMallocPitch((void **)&d_copy, &pitch2, W * sizeof(float), H));
    CHECK(cudaMemcpy2D(d_copy, pitch2, d_img, pitch, W * sizeof(float), H, cudaMemcpyDeviceToDevice));
    CHECK(cudaMemcpy2DAsync(h_img, W * sizeof(float), d_copy, pitch2, W * sizeof(float), H,
                            cudaMemcpyDeviceToHost, 0));
    CHECK(cudaDeviceSynchronize());
    bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float want = (y >= 3 && y < 10 && x >= 2 && x < 12) ? 0.0f : h_out[y][x];
            if (h_img[y][x] != want && bad++ < 5) printf("set[%d][%d] = %g, expected %g\n", y, x, h_img[y][x], want);
        }
    errors += bad;

    // Part 3: a 3-D volume.
    cudaExtent ext = make_cudaExtent(NX * sizeof(int), NY, NZ);
    cudaPitchedPtr vol;
    CHECK(cudaMalloc3D(&vol, ext));
    printf("3-D pitch is a multiple of 512: %s, xsize %zu, ysize %zu\n", vol.pitch % 512 == 0 ? "yes" : "no",
           vol.xsize, vol.ysize);
    CHECK(cudaMemset3D(vol, 0, ext));
    // A 4x3x2 block of negative values into the box at (x 5, y 2, z 1).
    int h_box[2][3][4];
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 4; x++) h_box[z][y][x] = -(1 + x + 10 * y + 100 * z);
    cudaMemcpy3DParms in = {0};
    in.srcPtr = make_cudaPitchedPtr(h_box, 4 * sizeof(int), 4, 3);
    in.dstPtr = vol;
    in.dstPos = make_cudaPos(5 * sizeof(int), 2, 1);
    in.extent = make_cudaExtent(4 * sizeof(int), 3, 2);
    in.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&in));
    add_coords<<<dim3(1, 1), dim3(32, 8)>>>(vol, NX, NY, NZ);
    CHECK(cudaGetLastError());
    int h_vol[NZ][NY][NX];
    cudaMemcpy3DParms out = {0};
    out.srcPtr = vol;
    out.dstPtr = make_cudaPitchedPtr(h_vol, NX * sizeof(int), NX, NY);
    out.extent = ext;
    out.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&out));
    bad = 0;
    long long total = 0;
    for (int z = 0; z < NZ; z++)
        for (int y = 0; y < NY; y++)
            for (int x = 0; x < NX; x++) {
                bool in_box = x >= 5 && x < 9 && y >= 2 && y < 5 && z >= 1 && z < 3;
                int want = in_box ? 1 + (x - 5) + 10 * (y - 2) + 100 * (z - 1) : x + 100 * y + 10000 * z;
                total += h_vol[z][y][x];
                if (h_vol[z][y][x] != want && bad++ < 5) printf("vol[%d][%d][%d] = %d, expected %d\n", z, y, x,
                                                                 h_vol[z][y][x], want);
            }
    errors += bad;
    printf("volume sum %lld\n", total);

    // Part 4: misuse.
    cudaError_t e = cudaMemcpy2D(d_img, pitch, h_img, 8, W * sizeof(float), H, cudaMemcpyHostToDevice);
    printf("source pitch below the width: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorInvalidPitchValue) errors++;
    e = cudaMemcpy2D(d_img, pitch, h_img, W * sizeof(float), W * sizeof(float), H, (cudaMemcpyKind)7);
    printf("copy kind 7: %s\n", cudaGetErrorName(e));
    if (e != cudaErrorInvalidMemcpyDirection) errors++;

    CHECK(cudaFree(d_img));
    CHECK(cudaFree(d_copy));
    CHECK(cudaFree(vol.ptr));
    if (errors) { printf("FAIL\n"); return 1; }
    printf("PASS\n");
    return 0;
}
