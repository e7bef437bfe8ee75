// kmeans -- Rodinia kmeans' kmeansPoint kernel (the membership step): every thread takes one
// point, computes its squared distance to every cluster centre and records the nearest.
// ptx-variants: sm_80-nofma sm_80 sm_70
//
// As in Rodinia, the point features are read feature-major (features[f * npoints + p]) and the
// cluster centres come from a __constant__ table; Rodinia reads the features through a 1-D
// texture, which PTX from NVRTC cannot be simulated with, so here they are behind a
// __device__ pointer `t_features` that the host sets (reconverge: --global t_features=@FILE,
// the suite manifest's `globals`). `c_clusters` is set the same way (--global c_clusters=@FILE).
//
// Divergence: the nearest-centre test `if (dist < min_dist)` is data-dependent; points beyond
// npoints (the last CTA) skip the work; the loops are uniform. A __device__ counter of
// membership changes (atomicAdd) is read back as a module variable too.
//
// Launch: grid (3,1,1), block (64,1,1) (npoints = 180 < 192 threads).
// Arguments: nfeatures = 8, npoints = 180, nclusters = 5, membership: int[180] (holds the
//            previous membership, updated in place).
// Module variables: t_features (float*, 8 x 180 features), c_clusters (float[5 x 8] of a
//            32 x 34 table), g_delta (int, changes counted).
// Exactness: the suite runs the --fmad=false PTX; the reference does the same float32
// operations in the same order.

#define ASSUMED_NR_CLUSTERS 32

__constant__ float c_clusters[ASSUMED_NR_CLUSTERS * 34];
__device__ float *t_features;
__device__ int g_delta;

extern "C" __global__ void kmeans(int nfeatures, int npoints, int nclusters, int *membership)
{
    unsigned int point_id = blockIdx.x * blockDim.x + threadIdx.x;
    int index = -1;
    if (point_id < npoints) {
        float min_dist = 3.402823466e+38f;
        for (int i = 0; i < nclusters; i++) {
            int cluster_base_index = i * nfeatures;
            float ans = 0.0f;
            for (int j = 0; j < nfeatures; j++) {
                int addr = point_id + j * npoints;
                float diff = t_features[addr] - c_clusters[cluster_base_index + j];
                ans += diff * diff;
            }
            float dist = ans;
            if (dist < min_dist) {
                min_dist = dist;
                index = i;
            }
        }
        if (membership[point_id] != index) {
            atomicAdd(&g_delta, 1);
        }
        membership[point_id] = index;
    }
}
