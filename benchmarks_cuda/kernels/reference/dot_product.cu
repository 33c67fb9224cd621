// reference-16: like reduce_sum on a[i]*b[i]; block 256, grid ceil(N/512), smem 1 KiB.
extern "C" __global__ void dot_product(const float* a, const float* b, float* partial, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x * 2 + tid;
    float v = 0.0f;
    if (i < n) v = a[i] * b[i];
    if (i + blockDim.x < n) v += a[i + blockDim.x] * b[i + blockDim.x];
    sdata[tid] = v;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = sdata[0];
}
