// nbody_lite -- each thread sums the inverse-square pull of n bodies on its own (all bodies read from
// global memory: cached, compute- and SFU-bound).
extern "C" __global__ void nbody_lite(const float4 *pos, float4 *acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = pos[i];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
        float d2 = dx * dx + dy * dy + dz * dz + 0.01f;
        float inv = rsqrtf(d2);
        float s = q.w * inv * inv * inv;
        ax += dx * s;
        ay += dy * s;
        az += dz * s;
    }
    acc[i] = make_float4(ax, ay, az, 0.0f);
}
