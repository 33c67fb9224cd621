// reference-16: c[i] = alpha * a[i] + b[i]; 1-D, block 256, grid ceil(N/256).
extern "C" __global__ void saxpy(float alpha, const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = alpha * a[i] + b[i];
}
