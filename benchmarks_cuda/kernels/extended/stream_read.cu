// extended: read-only stream; the store happens only for a sentinel value that the
// inputs never hold, so the loads cannot be removed.
extern "C" __global__ void stream_read(const float* a, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = a[i];
        if (v == -12345.0f) out[0] = v;
    }
}
