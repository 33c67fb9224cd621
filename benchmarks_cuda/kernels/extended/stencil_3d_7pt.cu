// extended: 3-D 7-point stencil on a D^3 grid; 2-D thread grid (32x8) marching in z.
extern "C" __global__ void stencil_3d_7pt(const float* in, float* out, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x >= d - 1 || y >= d - 1) return;
    size_t plane = (size_t)d * d;
    for (int z = 1; z < d - 1; ++z) {
        size_t c = z * plane + (size_t)y * d + x;
        float s = in[c - 1] + in[c + 1] + in[c - d] + in[c + d] + in[c - plane] + in[c + plane];
        out[c] = 0.5f * in[c] + (1.0f / 12.0f) * s;
    }
}
