// Bit intrinsics, special registers, barriers with reductions, clocks.
extern "C" __global__ void intrin(const unsigned *in, unsigned *out, long long *clk) {
  unsigned t = threadIdx.x;
  unsigned x = in[t];
  unsigned lane, smid, warp;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(warp));
  long long c0 = clock64();
  unsigned r = __brev(x) ^ __popc(x) ^ __clz(x) ^ __byte_perm(x, t, 0x3210) ^ __funnelshift_l(x, t, 5) ^ __ffs(x);
  int cnt = __syncthreads_count(x & 1);
  int any = __syncthreads_or(x > 100);
  int all = __syncthreads_and(x > 1);
  r += __umulhi(x, t) + __sad(x, t, 1) + __usad(x, t, 2) + (unsigned)__mul24(x, t);
  __nanosleep(100);
  out[t] = r + cnt + any + all + lane + smid + warp;
  clk[t] = clock64() - c0 + clock();
}
