// extended: 2-D 5-point Jacobi step on the interior; block 16x16.
extern "C" __global__ void stencil_5pt(const float* in, float* out, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x > 0 && y > 0 && x < cols - 1 && y < rows - 1) {
        int c = y * cols + x;
        out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - cols] + in[c + cols]);
    }
}
