// graphs.cu -- CUDA graphs, captured from a stream and built node by node.
//
// Part 1 (stream capture): on a created stream, cudaMemsetAsync, three
//         kernels, cudaMemcpyAsync back to pinned memory and cudaLaunchHostFunc
//         are captured (cudaStreamIsCapturing and cudaStreamGetCaptureInfo
//         checked meanwhile: nothing runs during the capture), instantiated and
//         launched 3 times. Each launch's copy and host function see that
//         launch's result; a buffer the graph accumulates into shows it ran 3
//         times.
// Part 2 (explicit nodes): a diamond -- a 1-D memcpy node (host to device)
//         feeds two kernel nodes whose results an empty node joins before a
//         third kernel, then a cudaMemcpy3DParms memcpy node copies back; a
//         memset node of 2-byte elements stands alone. Dependencies are given
//         at creation and with cudaGraphAddDependencies (CUDA 13's form, with
//         edge data). The graph is launched twice with different input, then
//         once more after cudaGraphExecKernelNodeSetParams changed a kernel
//         node's argument in the executable graph only.
// Part 3: a graph whose only node is a child graph node holding Part 1's graph.
// Part 4 (fork and join): a capture reaches a second stream through an event
//         the second stream waits for, and comes back through an event the
//         first waits for; the graph's kernels on both streams feed one result.
// Part 5 (misuse, CUDA's codes): cudaMalloc in a global-mode capture (900,
//         cudaErrorStreamCaptureUnsupported), which invalidates it: the status
//         is 2 and cudaStreamEndCapture returns 901
//         (cudaErrorStreamCaptureInvalidated) and a NULL graph; a synchronous
//         cudaMemcpy during a capture (906, cudaErrorStreamCaptureImplicit);
//         cudaStreamSynchronize of a capturing stream (900); cudaMalloc in a
//         relaxed capture (allowed); cudaGraphCreate flags 1, a memset node of
//         3-byte elements, a kernel node with both kernelParams and extra, an
//         edge that exists, and a graph with a cycle at instantiation (1).
// Every result is compared with a host computation. The program counts the
// kernel nodes its graph launches run and prints the number (each is one
// launch in reconverge exec's statistics), then PASS or FAIL.
#include "common.h"
#include <cstring>

#define N 1024
#define BLOCK 128

__global__ void ramp(int *v, int n, int a, int b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += a * i + b;
}

// A divergent update: odd and even values take different branches.
__global__ void collatz(int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = v[i];
    v[i] = (x & 1) ? 3 * x + 1 : x / 2;
}

__global__ void accumulate(int *acc, const int *v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] += v[i];
}

__global__ void scale(const int *x, int *y, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] & 1) ? k * x[i] : -x[i];
}

__global__ void square_mod(const int *x, int *z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = (x[i] * x[i]) % 13;
}

__global__ void combine(const int *y, const int *z, int *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = y[i] + 2 * z[i];
}

static int failures = 0;

static void expect(bool ok, const char *what) {
    if (!ok && failures++ < 20) printf("wrong: %s\n", what);
}

static void expect_code(cudaError_t want, cudaError_t got, const char *call) {
    printf("%d %s\n", (int)got, call);
    expect(got == want, call);
    cudaGetLastError();
}

// What the host function of Part 1 saw: the sum of the pinned copy, per launch.
struct Log {
    const int *h;
    int calls;
    long long sums[8];
};

static void CUDART_CB host_sum(void *p) {
    Log *log = (Log *)p;
    long long s = 0;
    for (int i = 0; i < N; i++) s += log->h[i];
    if (log->calls < 8) log->sums[log->calls] = s;
    log->calls++;
}

static int collatz_step(int x) { return (x & 1) ? 3 * x + 1 : x / 2; }

// Part 1's value of element i after one launch: memset 0, ramp, collatz.
static int part1_value(int i) { return collatz_step(5 * i - 2000); }

static int kernel_nodes_run = 0;

// Part 1: a captured graph launched 3 times; its executable graph (and graph) for Part 3.
static cudaGraph_t part1(cudaStream_t s, int *d, int *acc, int *h, Log *log, cudaGraphExec_t *exec) {
    const size_t bytes = N * sizeof(int);
    const int grid = (N + BLOCK - 1) / BLOCK;
    CHECK(cudaMemset(acc, 0, bytes));
    CHECK(cudaMemset(d, 0x7f, bytes));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    CHECK(cudaStreamIsCapturing(s, &st));
    expect(st == cudaStreamCaptureStatusActive, "capturing");
    CHECK(cudaMemsetAsync(d, 0, bytes, s));
    ramp<<<grid, BLOCK, 0, s>>>(d, N, 5, -2000);
    CHECK(cudaGetLastError());
    unsigned long long id = 0;
    cudaGraph_t building = nullptr;
    const cudaGraphNode_t *deps = nullptr;
    const cudaGraphEdgeData *edges = nullptr;
    size_t ndeps = 0;
    CHECK(cudaStreamGetCaptureInfo(s, &st, &id, &building, &deps, &edges, &ndeps));
    expect(st == cudaStreamCaptureStatusActive && id != 0 && building != nullptr && ndeps == 1 && deps != nullptr,
           "cudaStreamGetCaptureInfo");
    size_t nodes = 0;
    CHECK(cudaGraphGetNodes(building, nullptr, &nodes));
    expect(nodes == 2, "two nodes captured so far");
    collatz<<<grid, BLOCK, 0, s>>>(d, N);
    accumulate<<<grid, BLOCK, 0, s>>>(acc, d, N);
    CHECK(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaLaunchHostFunc(s, host_sum, log));
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(s, &graph));
    CHECK(cudaStreamIsCapturing(s, &st));
    expect(st == cudaStreamCaptureStatusNone && graph != nullptr, "capture ended with a graph");
    int probe = 0;
    CHECK(cudaMemcpy(&probe, d, sizeof probe, cudaMemcpyDeviceToHost));
    expect(probe == 0x7f7f7f7f && log->calls == 0, "nothing ran during the capture");
    CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
    expect(nodes == 6, "6 nodes captured");

    CHECK(cudaGraphInstantiate(exec, graph, 0));
    for (int launch = 0; launch < 3; launch++) {
        memset(h, 0, bytes);
        CHECK(cudaGraphLaunch(*exec, s));
        kernel_nodes_run += 3;
        CHECK(cudaStreamSynchronize(s));
        int bad = 0;
        long long want = 0;
        for (int i = 0; i < N; i++) {
            want += part1_value(i);
            if (h[i] != part1_value(i) && bad++ < 5) printf("launch %d: h[%d] = %d\n", launch, i, h[i]);
        }
        expect(bad == 0, "each launch's copy");
        expect(log->calls == launch + 1 && log->sums[launch] == want, "each launch's host function");
    }
    CHECK(cudaMemcpy(h, acc, bytes, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (h[i] != 3 * part1_value(i) && bad++ < 5) printf("acc[%d] = %d\n", i, h[i]);
    expect(bad == 0, "the accumulator shows 3 launches");
    printf("part 1: captured graph of 6 nodes launched 3 times: %s\n", failures ? "no" : "yes");
    return graph;
}

// Part 2's expected output for input x and scale k.
static int part2_value(int x, int k) {
    int y = (x & 1) ? k * x : -x;
    int z = (x * x) % 13;
    return y + 2 * z;
}

// Part 2: the diamond, built node by node.
static void part2(cudaStream_t s) {
    const size_t bytes = N * sizeof(int);
    int *hin, *hout, *x, *y, *z, *out;
    unsigned short *w;
    CHECK(cudaMallocHost((void **)&hin, bytes));
    CHECK(cudaMallocHost((void **)&hout, bytes));
    CHECK(cudaMalloc((void **)&x, bytes));
    CHECK(cudaMalloc((void **)&y, bytes));
    CHECK(cudaMalloc((void **)&z, bytes));
    CHECK(cudaMalloc((void **)&out, bytes));
    CHECK(cudaMalloc((void **)&w, N * sizeof(unsigned short)));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    int n = N, k = 3;

    cudaGraphNode_t copy_in, k_scale, k_square, join, k_combine, copy_out, set_w;
    CHECK(cudaGraphAddMemcpyNode1D(&copy_in, g, nullptr, 0, x, hin, bytes, cudaMemcpyHostToDevice));
    cudaKernelNodeParams kp = {};
    void *scale_args[] = {&x, &y, &n, &k};
    kp.func = (void *)scale;
    kp.gridDim = dim3((N + BLOCK - 1) / BLOCK);
    kp.blockDim = dim3(BLOCK);
    kp.kernelParams = scale_args;
    CHECK(cudaGraphAddKernelNode(&k_scale, g, &copy_in, 1, &kp));
    k = 1000;  // the node copied the arguments: this changes nothing
    void *square_args[] = {&x, &z, &n};
    kp.func = (void *)square_mod;
    kp.kernelParams = square_args;
    CHECK(cudaGraphAddKernelNode(&k_square, g, nullptr, 0, &kp));
    CHECK(cudaGraphAddDependencies(g, &copy_in, &k_square, nullptr, 1));
    cudaGraphNode_t both[] = {k_scale, k_square};
    CHECK(cudaGraphAddEmptyNode(&join, g, both, 2));
    void *combine_args[] = {&y, &z, &out, &n};
    kp.func = (void *)combine;
    kp.kernelParams = combine_args;
    CHECK(cudaGraphAddKernelNode(&k_combine, g, nullptr, 0, &kp));
    cudaGraphEdgeData edge;
    memset(&edge, 0, sizeof edge);
    CHECK(cudaGraphAddDependencies(g, &join, &k_combine, &edge, 1));
    cudaMemcpy3DParms cp = {};
    cp.srcPtr = make_cudaPitchedPtr(out, bytes, N, 1);
    cp.dstPtr = make_cudaPitchedPtr(hout, bytes, N, 1);
    cp.extent = make_cudaExtent(bytes, 1, 1);
    cp.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaGraphAddMemcpyNode(&copy_out, g, &k_combine, 1, &cp));
    cudaMemsetParams mp = {};
    mp.dst = w;
    mp.value = 0xbeef;
    mp.elementSize = 2;
    mp.width = N;
    mp.height = 1;
    CHECK(cudaGraphAddMemsetNode(&set_w, g, nullptr, 0, &mp));

    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    expect(count == 7, "7 nodes");
    cudaGraphNode_t roots[4] = {};
    count = 4;
    CHECK(cudaGraphGetRootNodes(g, roots, &count));
    expect(count == 2 && roots[0] == copy_in && roots[1] == set_w, "roots: the copy in and the memset");
    cudaGraphNodeType type;
    CHECK(cudaGraphNodeGetType(join, &type));
    expect(type == cudaGraphNodeTypeEmpty, "the join is an empty node");
    cudaKernelNodeParams got = {};
    CHECK(cudaGraphKernelNodeGetParams(k_scale, &got));
    expect(got.func == (void *)scale && got.gridDim.x == (N + BLOCK - 1) / BLOCK && got.blockDim.x == BLOCK &&
               *(int *)got.kernelParams[3] == 3,
           "cudaGraphKernelNodeGetParams");

    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiateWithFlags(&exec, g, 0));
    for (int launch = 0; launch < 3; launch++) {
        int scale_k = launch == 2 ? 5 : 3;
        if (launch == 2) {
            k = 5;
            kp.func = (void *)scale;
            kp.kernelParams = scale_args;
            CHECK(cudaGraphExecKernelNodeSetParams(exec, k_scale, &kp));
        }
        for (int i = 0; i < N; i++) hin[i] = (i * (launch + 7)) % 301 - 150;
        memset(hout, 0, bytes);
        CHECK(cudaGraphLaunch(exec, s));
        kernel_nodes_run += 3;
        CHECK(cudaStreamSynchronize(s));
        int bad = 0;
        for (int i = 0; i < N; i++)
            if (hout[i] != part2_value(hin[i], scale_k) && bad++ < 5)
                printf("launch %d: out[%d] = %d, expected %d\n", launch, i, hout[i], part2_value(hin[i], scale_k));
        expect(bad == 0, "the diamond's result");
    }
    unsigned short hw[N];
    CHECK(cudaMemcpy(hw, w, sizeof hw, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += hw[i] != 0xbeef;
    expect(bad == 0, "the memset node of 2-byte elements");
    printf("part 2: explicit diamond launched 3 times: %s\n", failures ? "no" : "yes");

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFreeHost(hin));
    CHECK(cudaFreeHost(hout));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(z));
    CHECK(cudaFree(out));
    CHECK(cudaFree(w));
}

// Part 3: Part 1's graph as a child graph node, launched once.
static void part3(cudaStream_t s, cudaGraph_t child, int *h, Log *log) {
    cudaGraph_t parent;
    cudaGraphNode_t node;
    CHECK(cudaGraphCreate(&parent, 0));
    CHECK(cudaGraphAddChildGraphNode(&node, parent, nullptr, 0, child));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, parent, 0));
    memset(h, 0, N * sizeof(int));
    int calls = log->calls;
    CHECK(cudaGraphLaunch(exec, s));
    kernel_nodes_run += 3;
    CHECK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != part1_value(i);
    expect(bad == 0 && log->calls == calls + 1, "the child graph ran");
    printf("part 3: child graph node: %s\n", bad == 0 ? "yes" : "no");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(parent));
}

// Part 4: a capture forked to a second stream and joined back, through events.
static void part4(cudaStream_t s, int *h) {
    const size_t bytes = N * sizeof(int);
    const int grid = (N + BLOCK - 1) / BLOCK;
    cudaStream_t s2;
    cudaEvent_t fork, join;
    int *a, *b;
    CHECK(cudaStreamCreate(&s2));
    CHECK(cudaEventCreate(&fork));
    CHECK(cudaEventCreate(&join));
    CHECK(cudaMalloc((void **)&a, bytes));
    CHECK(cudaMalloc((void **)&b, bytes));
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(a, 0, bytes, s));
    CHECK(cudaEventRecord(fork, s));
    CHECK(cudaStreamWaitEvent(s2, fork, 0));
    ramp<<<grid, BLOCK, 0, s2>>>(a, N, 2, 1);
    CHECK(cudaMemsetAsync(b, 0, bytes, s));
    ramp<<<grid, BLOCK, 0, s>>>(b, N, -1, 7);
    CHECK(cudaEventRecord(join, s2));
    CHECK(cudaStreamWaitEvent(s, join, 0));
    accumulate<<<grid, BLOCK, 0, s>>>(a, b, N);
    CHECK(cudaMemcpyAsync(h, a, bytes, cudaMemcpyDeviceToHost, s));
    cudaGraph_t g;
    CHECK(cudaStreamEndCapture(s, &g));
    cudaStreamCaptureStatus st;
    CHECK(cudaStreamIsCapturing(s2, &st));
    expect(st == cudaStreamCaptureStatusNone, "the forked stream's capture ended with the origin's");
    size_t count = 0;
    CHECK(cudaGraphGetNodes(g, nullptr, &count));
    expect(count == 6, "6 nodes from two streams");
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    memset(h, 0, bytes);
    CHECK(cudaGraphLaunch(exec, s));
    kernel_nodes_run += 3;
    CHECK(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != (2 * i + 1) + (7 - i);
    expect(bad == 0, "the joined result");
    printf("part 4: capture forked and joined across 2 streams: %s\n", bad == 0 ? "yes" : "no");
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(join));
    CHECK(cudaStreamDestroy(s2));
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
}

// Part 5: what CUDA refuses.
static void part5(cudaStream_t s, int *d) {
    void *p = nullptr;
    cudaGraph_t g = (cudaGraph_t)0x1;
    cudaStreamCaptureStatus st;
    int host[4];
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_code(cudaErrorStreamCaptureUnsupported, cudaMalloc(&p, 64), "cudaMalloc(&p, 64) [global capture]");
    CHECK(cudaStreamIsCapturing(s, &st));
    expect(st == cudaStreamCaptureStatusInvalidated, "the capture is invalidated");
    expect_code(cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &g), "cudaStreamEndCapture(s, &g)");
    expect(g == nullptr, "an invalidated capture ends with a NULL graph");

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_code(cudaErrorStreamCaptureImplicit, cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost),
                "cudaMemcpy(host, d, 16, cudaMemcpyDeviceToHost) [capture]");
    expect_code(cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &g), "cudaStreamEndCapture(s, &g)");

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    expect_code(cudaErrorStreamCaptureUnsupported, cudaStreamSynchronize(s), "cudaStreamSynchronize(s) [capture]");
    expect_code(cudaErrorStreamCaptureInvalidated, cudaStreamEndCapture(s, &g), "cudaStreamEndCapture(s, &g)");

    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    expect_code(cudaSuccess, cudaMalloc(&p, 64), "cudaMalloc(&p, 64) [relaxed capture]");
    CHECK(cudaStreamEndCapture(s, &g));
    expect(g != nullptr, "a relaxed capture survives cudaMalloc");
    CHECK(cudaGraphDestroy(g));
    CHECK(cudaFree(p));

    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
    expect(mode == cudaStreamCaptureModeGlobal, "the thread's mode was global");
    CHECK(cudaThreadExchangeStreamCaptureMode(&mode));

    expect_code(cudaErrorInvalidValue, cudaGraphCreate(&g, 1), "cudaGraphCreate(&g, 1)");
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemsetParams mp = {};
    mp.dst = d;
    mp.elementSize = 3;
    mp.width = 4;
    mp.height = 1;
    cudaGraphNode_t a, b;
    expect_code(cudaErrorInvalidValue, cudaGraphAddMemsetNode(&a, g, nullptr, 0, &mp),
                "cudaGraphAddMemsetNode(elementSize 3)");
    int n = 4;
    void *args[] = {&d, &n};
    void *extra[] = {nullptr};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)collatz;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(32);
    kp.kernelParams = args;
    kp.extra = extra;
    expect_code(cudaErrorInvalidValue, cudaGraphAddKernelNode(&a, g, nullptr, 0, &kp),
                "cudaGraphAddKernelNode(kernelParams and extra)");
    CHECK(cudaGraphAddEmptyNode(&a, g, nullptr, 0));
    CHECK(cudaGraphAddEmptyNode(&b, g, &a, 1));
    expect_code(cudaErrorInvalidValue, cudaGraphAddDependencies(g, &a, &b, nullptr, 1),
                "cudaGraphAddDependencies(an edge that exists)");
    CHECK(cudaGraphAddDependencies(g, &b, &a, nullptr, 1));
    cudaGraphExec_t exec;
    expect_code(cudaErrorInvalidValue, cudaGraphInstantiate(&exec, g, 0), "cudaGraphInstantiate(a cycle)");
    CHECK(cudaGraphDestroy(g));
}

int main() {
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    int *d, *acc, *h;
    CHECK(cudaMalloc((void **)&d, N * sizeof(int)));
    CHECK(cudaMalloc((void **)&acc, N * sizeof(int)));
    CHECK(cudaMallocHost((void **)&h, N * sizeof(int)));
    Log log = {h, 0, {0}};

    cudaGraphExec_t exec;
    cudaGraph_t graph = part1(s, d, acc, h, &log, &exec);
    part2(s);
    part3(s, graph, h, &log);
    part4(s, h);
    part5(s, d);
    printf("kernel nodes run: %d\n", kernel_nodes_run);

    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d));
    CHECK(cudaFree(acc));
    CHECK(cudaFreeHost(h));
    if (failures) {
        printf("FAIL\n");
        return 1;
    }
    printf("PASS\n");
    return 0;
}
