// reference-16 (quirk kept): every thread does `iters` atomicAdd(counter, 1) on one
// single global counter.
extern "C" __global__ void atomic_hotspot(unsigned int* counter, int n, int iters) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int k = 0; k < iters; ++k) atomicAdd(counter, 1u);
}
