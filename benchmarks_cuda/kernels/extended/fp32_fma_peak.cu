// extended: fp32 FMA throughput, 8 independent chains of `iters` FMAs per thread.
extern "C" __global__ void fp32_fma_peak(const float* a, float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    float c0 = x, c1 = x + 0.1f, c2 = x + 0.2f, c3 = x + 0.3f, c4 = x + 0.4f, c5 = x + 0.5f, c6 = x + 0.6f, c7 = x + 0.7f;
    for (int it = 0; it < iters; ++it) {
        c0 = fmaf(c0, 0.999f, 0.001f); c1 = fmaf(c1, 0.999f, 0.001f);
        c2 = fmaf(c2, 0.999f, 0.001f); c3 = fmaf(c3, 0.999f, 0.001f);
        c4 = fmaf(c4, 0.999f, 0.001f); c5 = fmaf(c5, 0.999f, 0.001f);
        c6 = fmaf(c6, 0.999f, 0.001f); c7 = fmaf(c7, 0.999f, 0.001f);
    }
    out[i] = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
}
