// reference-16: valid 7x7 convolution, loops not unrolled; filter in global memory.
extern "C" __global__ void conv2d_7x7(const float* in, const float* filt, float* out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols - 6 && y < rows - 6) {
        float s = 0.0f;
#pragma unroll 1
        for (int i = 0; i < 7; ++i)
#pragma unroll 1
            for (int j = 0; j < 7; ++j) s += in[(y + i) * cols + x + j] * filt[i * 7 + j];
        out[y * cols + x] = s;
    }
}
