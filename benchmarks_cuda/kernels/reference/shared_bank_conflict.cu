// reference-16 (quirk kept): one block of 1024 threads fills 1024 floats of shared
// memory, then makes 1024 reads at index (it*33) & 1023 (the same address for all
// threads of a warp: a broadcast). See extended/shared_bank_conflict_32way.cu.
extern "C" __global__ void shared_bank_conflict(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    float acc = 0.0f;
#pragma unroll 16
    for (int it = 0; it < 1024; ++it) acc += s[(it * 33) & 1023];
    out[t] = acc;
}
