// extended: fp64 FMA throughput, 4 independent chains of `iters` FMAs per thread.
extern "C" __global__ void fp64_fma_loop(const double* a, double* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i];
    double c0 = x, c1 = x + 0.1, c2 = x + 0.2, c3 = x + 0.3;
    for (int it = 0; it < iters; ++it) {
        c0 = fma(c0, 0.999, 0.001); c1 = fma(c1, 0.999, 0.001);
        c2 = fma(c2, 0.999, 0.001); c3 = fma(c3, 0.999, 0.001);
    }
    out[i] = (c0 + c1) + (c2 + c3);
}
