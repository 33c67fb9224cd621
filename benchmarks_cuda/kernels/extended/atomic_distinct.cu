// extended: atomics on distinct addresses: thread i adds 1.0 to out[i], iters times.
extern "C" __global__ void atomic_distinct(float* out, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int k = 0; k < iters; ++k) atomicAdd(&out[i], 1.0f);
}
