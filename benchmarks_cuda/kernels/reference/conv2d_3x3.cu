// reference-16: valid 3x3 convolution at (x, y), x < W-2, y < H-2; filter in global memory.
extern "C" __global__ void conv2d_3x3(const float* in, const float* filt, float* out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols - 2 && y < rows - 2) {
        float s = 0.0f;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) s += in[(y + i) * cols + x + j] * filt[i * 3 + j];
        out[y * cols + x] = s;
    }
}
