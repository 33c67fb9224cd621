// extended: b[i] = a[i] (STREAM copy).
extern "C" __global__ void stream_copy(const float* a, float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = a[i];
}
