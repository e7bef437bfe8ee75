// tensor.cu -- tensor-core instructions (sm_80 PTX), checked against the host.
//
// Part 1: a 32x32x32 GEMM with the wmma API (wmma.load.a/b, wmma.mma,
//         wmma.store.d; f16 inputs, f32 accumulation): one warp per 16x16 tile
//         of C, four k steps, C preloaded with a bias (wmma.load.c).
// Part 2: a 16x8x16 tile through inline PTX: A and B staged in shared memory
//         and loaded with ldmatrix (.x4 for A, .x2.trans for B, whose shared
//         copy is k-major), then mma.sync.m16n8k16.row.col.f32.f16.f16.f32;
//         each lane's four results checked at the positions the PTX ISA gives.
// Part 3: mma.sync.m16n8k32 on s8 inputs with s32 accumulation (fragments
//         built by each lane from the ISA's layout), and movmatrix.
// Inputs are small integers, so every product and sum is exact and the
// comparisons are exact.
#include "common.h"
#include <cuda_fp16.h>
#include <mma.h>
using namespace nvcuda;

#define M 32
#define N 32
#define K 32

__global__ void wmma_gemm(const half *a, const half *b, const float *bias, float *c) {
    int tile = threadIdx.x / 32;                      // 4 warps, one 16x16 tile of C each
    int tm = (tile / 2) * 16, tn = (tile % 2) * 16;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::load_matrix_sync(fc, bias + tm * N + tn, N, wmma::mem_row_major);
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(fa, a + tm * K + k, K);  // A row-major M x K
        wmma::load_matrix_sync(fb, b + tn * K + k, K);  // B column-major: column j at b + j * K
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + tm * N + tn, fc, N, wmma::mem_row_major);
}

// A: 16x16 row-major, B: 16x8 stored k-major (B[k][n] at b[k * 8 + n]); D: 16x8 row-major.
__global__ void ldmatrix_mma(const half *a, const half *b, float *d) {
    __shared__ __align__(16) half sa[16 * 16];
    __shared__ __align__(16) half sb[16 * 8];
    int l = threadIdx.x;
    for (int i = l; i < 256; i += 32) sa[i] = a[i];
    for (int i = l; i < 128; i += 32) sb[i] = b[i];
    __syncwarp();
    // ldmatrix.x4: lanes 0-15 give rows 0-15 at column 0 (matrices 0, 1), lanes 16-31 rows 0-15 at column 8.
    unsigned pa = (unsigned)__cvta_generic_to_shared(&sa[(l % 16) * 16 + (l / 16) * 8]);
    unsigned a0, a1, a2, a3, b0, b1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(pa));
    // B is k-major in shared memory: row k of sb holds B[k][0..8]; .trans gives the column-major fragment.
    unsigned pb = (unsigned)__cvta_generic_to_shared(&sb[(l % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(pb));
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.f), "f"(0.f), "f"(0.f), "f"(0.f));
    // C/D fragment: rows groupID and groupID + 8, columns 2 * (lane % 4) and + 1.
    int g = l / 4, c = 2 * (l % 4);
    d[g * 8 + c] = d0;
    d[g * 8 + c + 1] = d1;
    d[(g + 8) * 8 + c] = d2;
    d[(g + 8) * 8 + c + 1] = d3;
}

// s8 16x32 (row-major) times s8 32x8 (B[k][n] at b[k * 8 + n]), plus C = 1000 * n, into s32 16x8.
__global__ void int8_mma(const signed char *a, const signed char *b, int *d, unsigned *moved) {
    int l = threadIdx.x, g = l / 4, t = l % 4;
    unsigned ra[4], rb[2];
    // A fragment (m16n8k32, .s8): a_i for i in 0..16: row g (+8 for i in 4..8 and 12..16), column 4t + i % 4
    // (+16 for i >= 8); four per register.
    for (int r = 0; r < 4; ++r) {
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            int i = 4 * r + k;
            int row = g + ((i / 4) % 2) * 8, col = 4 * t + i % 4 + (i >= 8 ? 16 : 0);
            v |= (unsigned)(unsigned char)a[row * 32 + col] << (8 * k);
        }
        ra[r] = v;
    }
    // B fragment: b_i for i in 0..8: row (k) 4t + i % 4 (+16 for i >= 4), column g.
    for (int r = 0; r < 2; ++r) {
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            int i = 4 * r + k;
            int row = 4 * t + i % 4 + (i >= 4 ? 16 : 0);
            v |= (unsigned)(unsigned char)b[row * 8 + g] << (8 * k);
        }
        rb[r] = v;
    }
    int c0 = 1000 * (2 * t), c1 = 1000 * (2 * t + 1);
    int d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                 : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "r"(c0), "r"(c1), "r"(c0),
                   "r"(c1));
    d[g * 8 + 2 * t] = d0;
    d[g * 8 + 2 * t + 1] = d1;
    d[(g + 8) * 8 + 2 * t] = d2;
    d[(g + 8) * 8 + 2 * t + 1] = d3;
    // movmatrix: lane l holds elements (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of an 8x8 .b16 matrix
    // whose element (r, c) is 8 r + c; afterwards it holds those of the transpose.
    unsigned x = (unsigned)(8 * g + 2 * t) | (unsigned)(8 * g + 2 * t + 1) << 16, y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(y) : "r"(x));
    moved[l] = y;
}

int main() {
    int failures = 0;
    // Part 1.
    static half ha[M * K], hb[N * K];
    static float fa[M * K], fb[N * K], hbias[M * N], hc[M * N];
    unsigned seed = 11;
    for (int i = 0; i < M * K; ++i) fa[i] = (float)((int)(lcg_next(&seed) % 7) - 3), ha[i] = __float2half(fa[i]);
    for (int i = 0; i < N * K; ++i) fb[i] = (float)((int)(lcg_next(&seed) % 5) - 2), hb[i] = __float2half(fb[i]);
    for (int i = 0; i < M * N; ++i) hbias[i] = (float)(i % 13);
    half *da, *db;
    float *dbias, *dc;
    CHECK(cudaMalloc(&da, sizeof ha));
    CHECK(cudaMalloc(&db, sizeof hb));
    CHECK(cudaMalloc(&dbias, sizeof hbias));
    CHECK(cudaMalloc(&dc, sizeof hc));
    CHECK(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dbias, hbias, sizeof hbias, cudaMemcpyHostToDevice));
    wmma_gemm<<<1, 128>>>(da, db, dbias, dc);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hc, dc, sizeof hc, cudaMemcpyDeviceToHost));
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float want = hbias[i * N + j];
            for (int k = 0; k < K; ++k) want += fa[i * K + k] * fb[j * K + k];
            if (hc[i * N + j] != want && failures++ < 5) printf("gemm[%d][%d] = %g, want %g\n", i, j, hc[i * N + j], want);
        }
    // Part 2.
    static half sa[256], sb[128];
    static float xa[256], xb[128], hd[128];
    for (int i = 0; i < 256; ++i) xa[i] = (float)((i * 7) % 9 - 4), sa[i] = __float2half(xa[i]);
    for (int i = 0; i < 128; ++i) xb[i] = (float)((i * 5) % 7 - 3), sb[i] = __float2half(xb[i]);
    half *pa, *pb;
    float *pd;
    CHECK(cudaMalloc(&pa, sizeof sa));
    CHECK(cudaMalloc(&pb, sizeof sb));
    CHECK(cudaMalloc(&pd, sizeof hd));
    CHECK(cudaMemcpy(pa, sa, sizeof sa, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(pb, sb, sizeof sb, cudaMemcpyHostToDevice));
    ldmatrix_mma<<<1, 32>>>(pa, pb, pd);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hd, pd, sizeof hd, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) {
            float want = 0;
            for (int k = 0; k < 16; ++k) want += xa[i * 16 + k] * xb[k * 8 + j];
            if (hd[i * 8 + j] != want && failures++ < 5) printf("tile[%d][%d] = %g, want %g\n", i, j, hd[i * 8 + j], want);
        }
    // Part 3.
    static signed char ia[16 * 32], ib[32 * 8];
    static int id[128];
    static unsigned hm[32];
    for (int i = 0; i < 16 * 32; ++i) ia[i] = (signed char)((int)(lcg_next(&seed) % 255) - 127);
    for (int i = 0; i < 32 * 8; ++i) ib[i] = (signed char)((int)(lcg_next(&seed) % 255) - 127);
    signed char *qa, *qb;
    int *qd;
    unsigned *qm;
    CHECK(cudaMalloc(&qa, sizeof ia));
    CHECK(cudaMalloc(&qb, sizeof ib));
    CHECK(cudaMalloc(&qd, sizeof id));
    CHECK(cudaMalloc(&qm, sizeof hm));
    CHECK(cudaMemcpy(qa, ia, sizeof ia, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(qb, ib, sizeof ib, cudaMemcpyHostToDevice));
    int8_mma<<<1, 32>>>(qa, qb, qd, qm);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(id, qd, sizeof id, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hm, qm, sizeof hm, cudaMemcpyDeviceToHost));
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j) {
            int want = 1000 * j;
            for (int k = 0; k < 32; ++k) want += ia[i * 32 + k] * ib[k * 8 + j];
            if (id[i * 8 + j] != want && failures++ < 5) printf("int8[%d][%d] = %d, want %d\n", i, j, id[i * 8 + j], want);
        }
    for (int l = 0; l < 32; ++l) {
        int r = l / 4, c = 2 * (l % 4);
        unsigned want = (unsigned)(8 * c + r) | (unsigned)(8 * (c + 1) + r) << 16;
        if (hm[l] != want && failures++ < 5) printf("movmatrix lane %d = %#x, want %#x\n", l, hm[l], want);
    }
    if (failures) {
        printf("FAIL: %d mismatches\n", failures);
        return 1;
    }
    printf("PASS\n");
    return 0;
}
