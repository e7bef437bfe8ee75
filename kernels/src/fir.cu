// fir -- seed 004 (Lee et al., CGO'13) Figure 1(a): the FIR filter used to motivate
// scalarization. Each thread convolves flen samples with the flen coefficients.
// ptx-variants: sm_80 sm_70 sm_80-nofma
//
// Divergence: none by design -- the loop trip count is the uniform parameter flen, every
// branch is uniform, the coefficient loads and the loop bookkeeping are thread-invariant
// (the scalarization candidates of the paper); only idx and the sample/result addresses vary
// (affine in the thread index).
//
// Changes from the seed: idx = blockIdx.x * blockDim.x + threadIdx.x (the seed uses
// threadIdx.x alone, which would make CTAs race on results[]); `#pragma unroll 1` keeps the
// loop a single loop, the shape of Figure 1(b) (otherwise NVVM unrolls it by 4 with a
// remainder loop).
//
// Launch: grid (2,1,1), block (64,1,1).
// Arguments: samples: float[128 + flen - 1]; coeffs: float[flen]; flen = 16;
//            results: float[128] (zero-filled).
// Exactness: the suite runs the --fmad=false PTX (mul.rn + add.rn), which the reference
// reproduces bit for bit in float32 (same order: result += coeffs[i] * samples[idx+i]).

extern "C" __global__ void fir(float *samples,
                               float *coeffs,
                               int flen,
                               float *results)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    float result = 0;
#pragma unroll 1
    for (int i = 0; i < flen; i++)
        result += (coeffs[i] *
                   samples[idx + i]);
    results[idx] = result;
}
