// extended: honest variant of shared_bank_conflict. One block of 1024 threads;
// each read hits index (t*32 + it) & 1023, so the 32 lanes of a warp hit the same
// bank: a 32-way conflict on every read.
extern "C" __global__ void shared_bank_conflict_32way(float* out) {
    __shared__ float s[1024];
    int t = threadIdx.x;
    s[t] = (float)t;
    __syncthreads();
    float acc = 0.0f;
#pragma unroll 16
    for (int it = 0; it < 1024; ++it) acc += s[(t * 32 + it) & 1023];
    out[t] = acc;
}
