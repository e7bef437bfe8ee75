// struct_arg.cu -- kernel parameters beyond plain scalars.
//
// scale_job takes an int and then a struct by value holding two device
// pointers, a count and a scale (the struct's 8-byte alignment puts it at
// parameter offset 8). add_bias takes a pointer into the middle of a buffer.
// Each kernel is launched once with <<<>>> and once through the explicit
// cudaLaunchKernel API with an array of argument pointers.
#include <cmath>
#include "common.h"

#define N 512
#define BLOCK 128
#define OFFSET 100

struct Job {
    const float *in;
    float *out;
    int n;
    float scale;
};

// out[i] = in[i] * scale, negatives clamped to zero in mode 1, mirrored in mode 0.
__global__ void scale_job(int mode, Job job) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= job.n) return;
    float v = job.in[i];
    if (v < 0.0f) v = (mode == 1) ? 0.0f : -v;
    job.out[i] = v * job.scale;
}

// p[i] += bias for i < n; p points into the middle of an allocation.
__global__ void add_bias(float *p, int n, float bias) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += bias;
}

static float scale_host(int mode, float v, float scale) {
    if (v < 0.0f) v = (mode == 1) ? 0.0f : -v;
    return v * scale;
}

int main() {
    static float h_in[N], h_out[N], want[N];
    unsigned seed = 31u;
    for (int i = 0; i < N; i++) h_in[i] = lcg_float(&seed) * 2.0f - 1.0f;

    float *d_in, *d_out;
    CHECK(cudaMalloc((void **)&d_in, N * sizeof(float)));
    CHECK(cudaMalloc((void **)&d_out, N * sizeof(float)));
    CHECK(cudaMemcpy(d_in, h_in, N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0, N * sizeof(float)));
    dim3 grid((N + BLOCK - 1) / BLOCK), block(BLOCK);

    // 1. <<<>>> launch, mode 0, on the first 400 elements only.
    Job job = {d_in, d_out, 400, 3.0f};
    scale_job<<<grid, block>>>(0, job);
    CHECK(cudaGetLastError());

    // 2. cudaLaunchKernel, mode 1, on the last 112 elements (pointers offset).
    Job tail = {d_in + 400, d_out + 400, N - 400, 0.5f};
    int mode = 1;
    void *args1[] = {&mode, &tail};
    CHECK(cudaLaunchKernel((void *)scale_job, grid, block, args1, 0, 0));

    // 3. add_bias on d_out + OFFSET with <<<>>>, then again on d_out + 2*OFFSET
    //    with cudaLaunchKernel.
    add_bias<<<grid, block>>>(d_out + OFFSET, 50, 10.0f);
    CHECK(cudaGetLastError());
    float *mid = d_out + 2 * OFFSET;
    int count = 60;
    float bias = -1.0f;
    void *args2[] = {&mid, &count, &bias};
    CHECK(cudaLaunchKernel((void *)add_bias, grid, block, args2, 0, 0));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(h_out, d_out, N * sizeof(float), cudaMemcpyDeviceToHost));

    // Host reference.
    for (int i = 0; i < N; i++)
        want[i] = (i < 400) ? scale_host(0, h_in[i], 3.0f) : scale_host(1, h_in[i], 0.5f);
    for (int i = OFFSET; i < OFFSET + 50; i++) want[i] += 10.0f;
    for (int i = 2 * OFFSET; i < 2 * OFFSET + 60; i++) want[i] += -1.0f;

    int errors = 0, clamped = 0;
    for (int i = 0; i < N; i++) {
        if (i >= 400 && h_in[i] < 0.0f) clamped++;
        if (fabsf(h_out[i] - want[i]) > 1e-5f && errors++ < 10)
            printf("out[%d] = %f, expected %f\n", i, h_out[i], want[i]);
    }
    printf("sizeof(Job) %d elements %d clamped %d\n", (int)sizeof(Job), N, clamped);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    if (errors) { printf("%d elements differ\nFAIL\n", errors); return 1; }
    printf("PASS\n");
    return 0;
}
