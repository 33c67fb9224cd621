// reference-16: even i run a 128-step float accumulation loop first; odd i do not.
extern "C" __global__ void vector_add_divergent(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if ((i & 1) == 0) {
        float s = 0.0f;
        float x = a[i];
        for (int k = 0; k < 128; ++k) s = s * 0.5f + x;
        c[i] = a[i] + b[i] + s;
    } else {
        c[i] = a[i] + b[i];
    }
}
