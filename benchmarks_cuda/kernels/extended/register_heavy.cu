// extended: register-heavy kernel: 64 live floats per thread, fully unrolled
// dependent FMA sweeps (values stay in [-0.5, 0.5]).
extern "C" __global__ void register_heavy(const float* a, float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float r[64];
    float x = a[i] * 0.25f;
#pragma unroll
    for (int j = 0; j < 64; ++j) r[j] = x + (float)j * (1.0f / 256.0f);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < 64; ++j) r[j] = fmaf(r[j], r[(j + 1) & 63], 0.25f) - 0.5f;
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < 64; ++j) s += r[j];
    out[i] = s;
}
