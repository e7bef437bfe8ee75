// mandelbrot -- escape-time fractal: each thread iterates z = z^2 + c for its pixel until
// |z|^2 > 4 or max_iter iterations, and stores the iteration count.
// ptx-variants: sm_80 sm_70 sm_80-nofma
//
// Divergence: a loop whose trip count is data-dependent per pixel (1 .. max_iter): threads
// leave the loop at different iterations (the classic loop-exit divergence), plus an
// out-of-image early return (the CTAs cover 40x24 threads for a 38x23 image).
//
// Launch: grid (2,2,1), block (20,12,1) -- 240 threads per CTA (not a multiple of 32).
// Arguments: iters: int[width*height] (zero-filled output); width = 38; height = 23;
//            x0, y0, dx, dy: float scalars (pixel (px,py) is c = (x0 + px*dx, y0 + py*dy));
//            max_iter = 64.
// Exactness: the suite runs the --fmad=false PTX, where every operation is one correctly
// rounded mul.rn/add.rn/sub.rn, so the float32 reference reproduces the counts exactly.

extern "C" __global__ void mandelbrot(int *iters, int width, int height,
                                      float x0, float y0, float dx, float dy, int max_iter)
{
    int px = blockIdx.x * blockDim.x + threadIdx.x;
    int py = blockIdx.y * blockDim.y + threadIdx.y;
    if (px >= width || py >= height)
        return;

    float cx = x0 + px * dx;
    float cy = y0 + py * dy;
    float zr = 0.0f;
    float zi = 0.0f;
    int n = 0;
    while (n < max_iter && zr * zr + zi * zi <= 4.0f) {
        float t = zr * zr - zi * zi + cx;
        zi = 2.0f * zr * zi + cy;
        zr = t;
        n++;
    }
    iters[py * width + px] = n;
}
