// int_mix -- integer hashing: shifts, xors, multiplies, a data-dependent branch per round (integer
// pipeline, divergence on hashed bits).
extern "C" __global__ void int_mix(const unsigned *in, unsigned *out, int rounds)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned h = in[i] ^ 0x9e3779b9u;
    for (int r = 0; r < rounds; r++) {
        h ^= h >> 13;
        h *= 0x5bd1e995u;
        if (h & 1)
            h ^= h << 7;
        else
            h += 0x7f4a7c15u;
    }
    out[i] = h;
}
