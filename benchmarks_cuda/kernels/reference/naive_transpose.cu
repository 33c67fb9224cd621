// reference-16: out[c*rows + r] = in[r*cols + c]; 2-D block 16x16 (x = column).
extern "C" __global__ void naive_transpose(const float* in, float* out, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
