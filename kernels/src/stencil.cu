// stencil -- one step of a 2-D 5-point thermal stencil in the style of Rodinia hotspot
// (single_iteration of the OpenMP version): interior cells use all four neighbours, edge and
// corner cells have their own formulas (missing neighbours are dropped).
// ptx-variants: sm_80 sm_70 sm_80-nofma
//
// Divergence: an out-of-grid early return (the CTAs cover 32x24 threads for a 30x22 grid),
// then a 9-way if/else-if chain on the cell position (4 corners, 4 edges, interior): threads
// on the grid border of each CTA take different arms from the interior ones.
//
// Launch: grid (2,2,1), block (16,12,1) -- 192 threads per CTA.
// Arguments: temp: float[rows*cols]; power: float[rows*cols]; out: float[rows*cols]
//            (zero-filled); cols = 30; rows = 22; step, rx, ry, rz, amb: float scalars.
// Exactness: the suite runs the --fmad=false PTX; the reference repeats the exact float32
// operation order of each arm (one rounding per + - *).

extern "C" __global__ void stencil(const float *temp, const float *power, float *out,
                                   int cols, int rows,
                                   float step, float rx, float ry, float rz, float amb)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= cols || r >= rows)
        return;

    int i = r * cols + c;
    float t = temp[i];
    float p = power[i];
    float delta;

    if (r == 0 && c == 0) {                              // corner: north-west
        delta = step * (p + (temp[i + 1] - t) * rx
                          + (temp[i + cols] - t) * ry
                          + (amb - t) * rz);
    } else if (r == 0 && c == cols - 1) {                // corner: north-east
        delta = step * (p + (temp[i - 1] - t) * rx
                          + (temp[i + cols] - t) * ry
                          + (amb - t) * rz);
    } else if (r == rows - 1 && c == cols - 1) {         // corner: south-east
        delta = step * (p + (temp[i - 1] - t) * rx
                          + (temp[i - cols] - t) * ry
                          + (amb - t) * rz);
    } else if (r == rows - 1 && c == 0) {                // corner: south-west
        delta = step * (p + (temp[i + 1] - t) * rx
                          + (temp[i - cols] - t) * ry
                          + (amb - t) * rz);
    } else if (r == 0) {                                 // edge: north
        delta = step * (p + (temp[i + 1] + temp[i - 1] - 2.0f * t) * rx
                          + (temp[i + cols] - t) * ry
                          + (amb - t) * rz);
    } else if (c == cols - 1) {                          // edge: east
        delta = step * (p + (temp[i + cols] + temp[i - cols] - 2.0f * t) * ry
                          + (temp[i - 1] - t) * rx
                          + (amb - t) * rz);
    } else if (r == rows - 1) {                          // edge: south
        delta = step * (p + (temp[i + 1] + temp[i - 1] - 2.0f * t) * rx
                          + (temp[i - cols] - t) * ry
                          + (amb - t) * rz);
    } else if (c == 0) {                                 // edge: west
        delta = step * (p + (temp[i + cols] + temp[i - cols] - 2.0f * t) * ry
                          + (temp[i + 1] - t) * rx
                          + (amb - t) * rz);
    } else {                                             // interior
        delta = step * (p + (temp[i + cols] + temp[i - cols] - 2.0f * t) * ry
                          + (temp[i + 1] + temp[i - 1] - 2.0f * t) * rx
                          + (amb - t) * rz);
    }
    out[i] = t + delta;
}
