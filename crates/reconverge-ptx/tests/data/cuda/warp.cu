extern "C" __global__ void warp_ops(const int *in, int *out, unsigned *masks) {
  int t = threadIdx.x;
  int v = in[t];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  unsigned b = __ballot_sync(0xffffffff, in[t] > 0);
  unsigned am = __activemask();
  if (t & 1) {
    unsigned m = __match_any_sync(__activemask(), in[t]);
    masks[t] = m;
  }
  int r = __reduce_add_sync(0xffffffff, in[t]);
  int x = __shfl_xor_sync(0xffffffff, v, 1);
  int u = __shfl_up_sync(0xffffffff, v, 2);
  int w = __shfl_sync(0xffffffff, v, 0);
  if (__all_sync(0xffffffff, v > 0)) out[t] = v + r;
  else if (__any_sync(0xffffffff, v < 0)) out[t] = x + u + w;
  masks[t + 32] = b ^ am;
  __syncwarp();
}
