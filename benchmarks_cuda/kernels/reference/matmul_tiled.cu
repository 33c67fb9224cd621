// reference-16: one C element per thread, 32x32 tiles of A and B in shared memory.
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[32][32];
    __shared__ float Bs[32][32];
    int tx = threadIdx.x, ty = threadIdx.y;
    int col = blockIdx.x * 32 + tx;
    int row = blockIdx.y * 32 + ty;
    float s = 0.0f;
    for (int t = 0; t < n; t += 32) {
        As[ty][tx] = (row < n && t + tx < n) ? A[row * n + t + tx] : 0.0f;
        Bs[ty][tx] = (col < n && t + ty < n) ? B[(t + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < 32; ++k) s += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = s;
}
