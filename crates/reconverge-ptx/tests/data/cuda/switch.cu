extern "C" __global__ void sw(const int *in, int *out) {
  int t = threadIdx.x;
  int r;
  switch (in[t] & 15) {
    case 0: r = 7; break;
    case 1: r = in[t + 1] * 3; break;
    case 2: r = in[t + 2] - 4; break;
    case 3: r = t * t; break;
    case 4: r = -t; break;
    case 5: r = in[0]; break;
    case 6: r = 99; break;
    case 7: r = t ^ 5; break;
    case 8: r = t << 3; break;
    case 9: r = in[t] / 3; break;
    case 10: r = in[t] % 5; break;
    default: r = 0;
  }
  int k = 0;
  while (r > 1) { r = (r & 1) ? 3 * r + 1 : r / 2; if (++k > 100) break; }
  out[t] = r + k;
}
