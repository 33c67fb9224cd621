// reference-16: one C element per thread, n-long dot product; block 16x16.
extern "C" __global__ void matmul_naive(const float* A, const float* B, float* C, int n) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < n && col < n) {
        float s = 0.0f;
        for (int k = 0; k < n; ++k) s += A[row * n + k] * B[k * n + col];
        C[row * n + col] = s;
    }
}
