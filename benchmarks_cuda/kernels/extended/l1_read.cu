// extended: L1 / read-only cache bandwidth. Each block re-reads its own 8 KiB
// window `iters` times through the read-only path (__ldg).
extern "C" __global__ void l1_read(const float* a, float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* win = a + (size_t)blockIdx.x * 2048;
    float acc = 0.0f;
    for (int it = 0; it < iters; ++it) acc += __ldg(&win[(threadIdx.x + it * 256) & 2047]);
    if (i < n) out[i] = acc;
}
