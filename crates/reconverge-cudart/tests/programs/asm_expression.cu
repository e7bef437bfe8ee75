// asm_expression.cu -- device code reconverge cannot parse: a constant
// expression as an instruction operand.
//
// The kernel shifts with inline PTX whose shift count is the expression
// `(32 - 27)` (an "n" constraint pasted into it, as hand-written inline
// assembly often composes immediates). PTX allows constant expressions, but
// reconverge's PTX front end takes only plain numbers as operands, so the shim
// must refuse the program when it registers its fat binary (before main),
// with exit status 2 and the parser's message: the PTX's name, line and
// column, and the line with the expression marked. (On a GPU the program
// prints PASS.)
#include "common.h"

#define N 64

template <int BITS>
__global__ void shift(const unsigned *in, unsigned *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v;
    asm("shl.b32 %0, %1, (32 - %2);" : "=r"(v) : "r"(in[i]), "n"(BITS));
    out[i] = v;
}

int main() {
    unsigned h[N], back[N];
    for (int i = 0; i < N; i++) h[i] = 3u * i + 1u;
    unsigned *d_in, *d_out;
    CHECK(cudaMalloc((void **)&d_in, sizeof h));
    CHECK(cudaMalloc((void **)&d_out, sizeof back));
    CHECK(cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice));
    shift<27><<<N / 32, 32>>>(d_in, d_out);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(back, d_out, sizeof back, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
        if (back[i] != h[i] << 5) {
            printf("element %d is %u, expected %u\nFAIL\n", i, back[i], h[i] << 5);
            return 1;
        }
    }
    printf("PASS\n");
    return 0;
}
