// extended: shared-memory tiled 1-D stencil, radius 8 (17 points); block 256 with
// a halo of 8 on each side staged in shared memory.
extern "C" __global__ void stencil_1d_smem(const float* in, float* out, int n) {
    __shared__ float tile[256 + 16];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + 8;
    tile[l] = (i < n) ? in[i] : 0.0f;
    if (threadIdx.x < 8) {
        tile[threadIdx.x] = (i >= 8) ? in[i - 8] : 0.0f;
        int j = i + blockDim.x;
        tile[l + blockDim.x] = (j < n) ? in[j] : 0.0f;
    }
    __syncthreads();
    if (i >= 8 && i < n - 8) {
        float s = 0.0f;
#pragma unroll
        for (int k = -8; k <= 8; ++k) s += tile[l + k];
        out[i] = s * (1.0f / 17.0f);
    }
}
