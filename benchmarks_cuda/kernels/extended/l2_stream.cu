// extended: L2-resident stream. N threads each make `iters` coalesced reads of an
// M-float buffer (M a power of two, small enough for L2), bypassing L1 (ld.global.cg).
extern "C" __global__ void l2_stream(const float* a, float* out, int n, int m, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int it = 0; it < iters; ++it) {
        const float* p = a + ((i + it * 4096) & (m - 1));
        float v;
        asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
        acc += v;
    }
    out[i] = acc;
}
