// extended: shared-memory bandwidth; conflict-free reads of a 2048-float array.
extern "C" __global__ void smem_bandwidth(float* out, int n, int iters) {
    __shared__ float s[2048];
    for (int j = threadIdx.x; j < 2048; j += blockDim.x) s[j] = (float)(j & 7);
    __syncthreads();
    float acc = 0.0f;
    for (int it = 0; it < iters; ++it) acc += s[(threadIdx.x + it * 32) & 2047];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = acc;
}
