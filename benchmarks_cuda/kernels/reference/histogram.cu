// reference-16: 256-bin histogram of data[i] & 255 in shared memory (shared atomics,
// grid-stride loop), then one global atomicAdd per bin per block. block 256.
extern "C" __global__ void histogram(const unsigned int* data, unsigned int* bins, int n) {
    __shared__ unsigned int h[256];
    for (int b = threadIdx.x; b < 256; b += blockDim.x) h[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&h[data[i] & 255u], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < 256; b += blockDim.x)
        if (h[b]) atomicAdd(&bins[b], h[b]);
}
